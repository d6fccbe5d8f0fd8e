//! Per-step figures of the narrow phase: the measures the papers report (rays by kind, iterative hit
//! rate, cumulative ray length as an interpenetration measure, erroneous rays against a standard
//! trace; IRTCD 2013 §4.3, 2014 §5.2).

use std::time::Duration;

/// Figures of one step (summed over pairs).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepMetrics {
    /// Pairs processed.
    pub pairs: usize,
    /// Pairs traced with the standard tracer this step.
    pub standard_pairs: usize,
    /// Of [`Self::standard_pairs`], those without ray records whose separation bound put them out of
    /// the rays' reach: no ray cast ([`crate::detect::ray_reach`]).
    pub separated_pairs: usize,
    /// Pairs traced iteratively this step.
    pub iterative_pairs: usize,
    /// Pairs skipped with an error.
    pub failed_pairs: usize,
    /// Pairs seen for the first time (state created).
    pub new_pairs: usize,
    /// Pairs whose state was freed because they were not in this step's input.
    pub freed_pairs: usize,
    /// Pairs held ([`crate::PairInput::hold`]): state kept, nothing traced, not in
    /// [`Self::pairs`].
    pub held_pairs: usize,
    /// Rays traced by the standard tracer (one per candidate vertex; each also looks behind the
    /// vertex for a prediction when prediction is on). A vertex tested against a box
    /// ([`RtcdMesh::cuboid`](crate::RtcdMesh::cuboid)) counts as one, as in the next three.
    pub standard_rays: u64,
    /// Walks from vertices in contact last step.
    pub iterative_rays: u64,
    /// Walks from prediction records.
    pub predictive_rays: u64,
    /// Walks (iterative or predictive) that ended in a valid contact.
    pub iterative_hits: u64,
    /// Triangles tested by all walks.
    pub walk_steps: u64,
    /// Vertex rays in contact (valid by Hermann's tests).
    pub contact_rays: u64,
    /// Prediction records kept for the next step.
    pub prediction_records: u64,
    /// Edges traced along (Mochi 2024 §3.4's edge rays).
    pub edge_rays: u64,
    /// Edges crossing the other mesh with both ends outside it: edge contacts.
    pub edge_contacts: u64,
    /// Vertices traced along their motion ([`crate::detect::pair_motion_contacts`]).
    pub motion_rays: u64,
    /// Contacts those paths gave (speculative, and tunnel contacts), and the contacts of the
    /// tunnels kept from earlier steps.
    pub motion_contacts: u64,
    /// Manifolds produced.
    pub manifolds: u64,
    /// Points in those manifolds.
    pub manifold_points: u64,
    /// Sum of the lengths of rays in contact (the 2014 paper's interpenetration measure).
    pub cumulative_ray_length: f64,
    /// Sum of the re-projected depths of rays in contact.
    pub cumulative_depth: f64,
    /// Deepest re-projected depth.
    pub max_depth: f32,
    /// Comparison with a full standard trace, when asked for.
    pub errors: Option<ErrorMetrics>,
    /// Wall time of the step.
    pub time: Duration,
    /// Time the step's kernels took on the GPU (timestamp queries), for GPU backends on adapters that
    /// have them.
    pub gpu_time: Option<Duration>,
    /// GPU backends: the host's time in the step's calls (planning the pairs, encoding, uploads,
    /// the host's own share of the work such as edge rays, and turning the results read back into
    /// contacts), without [`Self::device_wait`]. With `submit` and `collect` called apart
    /// (pipelined), the time between them is not counted. `None` for CPU backends.
    pub host_time: Option<Duration>,
    /// GPU backends: the host's time blocked waiting for the device in the step's calls (polls and
    /// buffer mappings). `None` for CPU backends.
    pub device_wait: Option<Duration>,
    /// GPU backends: bytes sent to the device this step (queue writes: pairs, parameters, and meshes
    /// uploaded on first use).
    pub upload_bytes: u64,
    /// GPU backends: bytes mapped back from the device this step (counters, timestamps, contacts).
    pub readback_bytes: u64,
}

/// Our rays against a full standard trace of the same step (2014 §5.2: a ray is erroneous when the
/// two results differ).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ErrorMetrics {
    /// Vertex rays in contact in either result.
    pub compared_rays: u64,
    /// Of those, rays where the results differ (contact in one only, or depths apart by more than
    /// [`ERROR_DEPTH_TOLERANCE`] on different triangles).
    pub erroneous_rays: u64,
    /// Rays in contact in the standard trace but not in ours: contacts detected late.
    pub late_contacts: u64,
    /// Pairs in contact in the standard trace and not in ours, or the reverse.
    pub erroneous_pairs: u64,
}

/// Depth difference under which two results on different triangles still agree (a ray through a
/// shared edge hits either triangle).
pub const ERROR_DEPTH_TOLERANCE: f32 = 1e-4;

impl ErrorMetrics {
    /// Share of erroneous rays among compared rays (0 when nothing was compared).
    pub fn erroneous_share(&self) -> f64 {
        if self.compared_rays == 0 { 0.0 } else { self.erroneous_rays as f64 / self.compared_rays as f64 }
    }

    pub(crate) fn add(&mut self, o: &ErrorMetrics) {
        self.compared_rays += o.compared_rays;
        self.erroneous_rays += o.erroneous_rays;
        self.late_contacts += o.late_contacts;
        self.erroneous_pairs += o.erroneous_pairs;
    }
}

impl StepMetrics {
    /// Share of walks that ended in contact (IRTCD's iterative hit rate); 0 without walks.
    pub fn iterative_hit_rate(&self) -> f64 {
        let walks = self.iterative_rays + self.predictive_rays;
        if walks == 0 { 0.0 } else { self.iterative_hits as f64 / walks as f64 }
    }

    /// All rays traced, of every kind.
    pub fn total_rays(&self) -> u64 {
        self.standard_rays + self.iterative_rays + self.predictive_rays
    }

    /// Adds another pair's (or step's) counts; the times (`time`, `gpu_time`, `host_time`,
    /// `device_wait`) are left alone.
    pub fn add(&mut self, o: &StepMetrics) {
        self.pairs += o.pairs;
        self.standard_pairs += o.standard_pairs;
        self.separated_pairs += o.separated_pairs;
        self.iterative_pairs += o.iterative_pairs;
        self.failed_pairs += o.failed_pairs;
        self.new_pairs += o.new_pairs;
        self.freed_pairs += o.freed_pairs;
        self.held_pairs += o.held_pairs;
        self.standard_rays += o.standard_rays;
        self.iterative_rays += o.iterative_rays;
        self.predictive_rays += o.predictive_rays;
        self.iterative_hits += o.iterative_hits;
        self.walk_steps += o.walk_steps;
        self.contact_rays += o.contact_rays;
        self.prediction_records += o.prediction_records;
        self.edge_rays += o.edge_rays;
        self.edge_contacts += o.edge_contacts;
        self.motion_rays += o.motion_rays;
        self.motion_contacts += o.motion_contacts;
        self.manifolds += o.manifolds;
        self.manifold_points += o.manifold_points;
        self.cumulative_ray_length += o.cumulative_ray_length;
        self.cumulative_depth += o.cumulative_depth;
        self.max_depth = self.max_depth.max(o.max_depth);
        self.upload_bytes += o.upload_bytes;
        self.readback_bytes += o.readback_bytes;
        match (&mut self.errors, &o.errors) {
            (Some(a), Some(b)) => a.add(b),
            (None, Some(b)) => self.errors = Some(*b),
            _ => {}
        }
    }
}
