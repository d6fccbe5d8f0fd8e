//! One pair, one step: the displacement criterion (IRTCD 2013 Eq. 2) picks standard or iterative
//! tracing, rays are cast from both meshes' vertices, validated (Hermann 2008 Alg. 1), re-projected
//! (2014 §3.2) and reduced to manifolds.

use std::collections::HashMap;

use glam::Vec3;

use super::{PairState, RayKind, RayRecord};
use crate::{
    aabb::Aabb,
    contact::{ContactCandidate, ContactManifold, RayContact, ReduceScratch, reduce_manifolds_with, reproject},
    mesh::RtcdMesh,
    metrics::{ERROR_DEPTH_TOLERANCE, ErrorMetrics, StepMetrics},
    narrow_phase::{PairInput, RayDebug, RayOutcome, StepMode, StepOptions},
    params::RtcdParams,
    pose::Pose,
    ray::Ray,
    trace::{NO_SKIP, WalkOutcome, walk},
};

pub(crate) struct PairResult {
    pub state: PairState,
    pub mode: StepMode,
    pub manifolds: Vec<ContactManifold>,
    pub rays: Vec<RayDebug>,
    pub contacts: Vec<ContactCandidate>,
    pub metrics: StepMetrics,
}

/// Per-thread buffers reused from pair to pair, so a step allocates little beyond its output.
#[derive(Default)]
pub(crate) struct Scratch {
    contacts: Vec<RayContact>,
    candidates: Vec<ContactCandidate>,
    reduce: ReduceScratch,
}

/// One direction of a pair: rays from `from`'s vertices traced against `to`, in `to`'s frame.
pub(crate) struct Direction<'a> {
    pub from: &'a RtcdMesh,
    pub to: &'a RtcdMesh,
    /// Maps `from`'s frame into `to`'s frame.
    pub from_to: Pose,
    /// `false`: shape 1's vertices against shape 2; `true`: shape 2's against shape 1.
    pub from_shape2: bool,
}

impl Direction<'_> {
    /// The two directions of a pair.
    pub fn both<'a>(input: &PairInput<'a>) -> [Direction<'a>; 2] {
        [
            Direction { from: input.mesh1, to: input.mesh2, from_to: input.pos12.inverse(), from_shape2: false },
            Direction { from: input.mesh2, to: input.mesh1, from_to: input.pos12, from_shape2: true },
        ]
    }

    /// See [`candidate_region`].
    pub fn candidate_region(&self, distance_extension: f32) -> Aabb {
        candidate_region(self.from, self.to, &self.from_to, distance_extension)
    }

    /// The inward ray of vertex `v`, in `to`'s frame.
    #[inline]
    pub fn ray(&self, v: u32) -> Ray {
        let p = self.from.positions()[v as usize];
        let n = self.from.normals()[v as usize];
        Ray::new(self.from_to.transform_point(p), self.from_to.transform_vector(-n))
    }
}

/// Hermann 2008 §3.2 with the 2014 extension: where candidate vertices of `from` lie, in `from`'s
/// frame: the overlap of the two bounding boxes grown by `distance_extension`. `from_to` maps `from`'s
/// frame into `to`'s. Empty when the boxes are farther apart than twice the extension.
pub fn candidate_region(from: &RtcdMesh, to: &RtcdMesh, from_to: &Pose, distance_extension: f32) -> Aabb {
    let to_in_from = to.aabb().transformed(&from_to.inverse());
    from.aabb().intersection(to_in_from).extended(distance_extension)
}

/// IRTCD 2013 Eq. 2: an upper bound on how far any point of either body moved relative to the other
/// since the reference pose.
pub fn max_displacement(reference: &Pose, current: &Pose, max_radius: f32) -> f32 {
    (reference.translation - current.translation).length() + reference.rotation_angle_to(current) * max_radius
}

/// Depth of the hierarchy cut [`separation_bound`] compares: up to 8 boxes per mesh.
const SEPARATION_CUT_DEPTH: u32 = 3;

type Cut = arrayvec::ArrayVec<Aabb, { 1 << SEPARATION_CUT_DEPTH }>;

/// A lower bound on the distance between two meshes, shape 2 at `pos12` in shape 1's frame: the
/// smallest gap between the boxes of a cut through each mesh's BVH (the nodes 3 levels down), one
/// mesh's boxes moved into the other's frame; the larger of the two frames' bounds (0 when boxes
/// overlap in both).
pub fn separation_bound(mesh1: &RtcdMesh, mesh2: &RtcdMesh, pos12: &Pose) -> f32 {
    let (cut1, cut2) = (bvh_cut(mesh1), bvh_cut(mesh2));
    let bound = |own: &Cut, other: &Cut, pose: &Pose| {
        let mut best = f32::INFINITY;
        for o in other {
            let o = o.transformed(pose);
            for a in own {
                best = best.min((a.min - o.max).max(o.min - a.max).max(Vec3::ZERO).length());
            }
        }
        best
    };
    let g = bound(&cut1, &cut2, pos12).max(bound(&cut2, &cut1, &pos12.inverse()));
    // An empty mesh has no cut: no bound.
    if g.is_finite() { g } else { 0.0 }
}

/// The boxes of the BVH nodes [`SEPARATION_CUT_DEPTH`] levels down (or of leaves above that depth).
fn bvh_cut(mesh: &RtcdMesh) -> Cut {
    fn visit(nodes: &[crate::bvh::BvhNode], i: usize, depth: u32, out: &mut Cut) {
        let Some(node) = nodes.get(i) else { return };
        if depth == SEPARATION_CUT_DEPTH || node.leaf_range().is_some() || i + 1 >= nodes.len() {
            out.push(node.aabb());
            return;
        }
        // Pre-order: the left child follows its parent; the right child is where the left child's
        // miss link points.
        visit(nodes, i + 1, depth + 1, out);
        visit(nodes, nodes[i + 1].miss as usize, depth + 1, out);
    }
    let mut out = Cut::new();
    visit(mesh.bvh(), 0, 0, &mut out);
    out
}

/// What a pair kept from its last standard trace, for [`needs_standard_trace`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TraceReference {
    /// The relative pose `(t_ni, q_ni)` of that step.
    pub pose: Pose,
    /// [`separation_bound`] at that pose.
    pub separation: f32,
    /// Whether the pair kept any ray record (contact or prediction) since.
    pub has_records: bool,
}

/// Whether a pair must be traced with the standard tracer this step (both backends decide with it).
///
/// IRTCD 2013 Eq. 2: yes once [`max_displacement`] since the reference exceeds
/// `displacement_threshold` (the walks from the records are only valid below it), or when there is
/// no reference. One exception, which changes no result: a pair that kept no record and whose
/// meshes were at least `separation` apart at the reference cannot have come within reach of a
/// ray — penetration, or `culling_dist` with prediction — while the displacement stays under
/// `separation - reach` (the distance between two rigid bodies shrinks by at most the relative
/// displacement of their points), so the trace, which would find nothing, is put off until then.
pub fn needs_standard_trace(reference: Option<&TraceReference>, pos12: &Pose, max_radius: f32, params: &RtcdParams) -> bool {
    let Some(r) = reference else { return true };
    let d = max_displacement(&r.pose, pos12, max_radius);
    if d <= params.displacement_threshold {
        return false;
    }
    let reach = if params.prediction { params.culling_dist } else { 0.0 };
    r.has_records || d.is_nan() || d >= r.separation - reach
}

pub(crate) fn detect_pair(
    input: &PairInput,
    state: Option<PairState>,
    params: &RtcdParams,
    opts: &StepOptions,
    scratch: &mut Scratch,
) -> PairResult {
    let ids = (input.mesh1.id(), input.mesh2.id());
    let mut metrics = StepMetrics { pairs: 1, ..Default::default() };
    let mut state = match state {
        Some(s) if s.mesh_ids == ids => s,
        _ => {
            metrics.new_pairs = 1;
            PairState { mesh_ids: ids, ..Default::default() }
        }
    };
    let radius = input.mesh1.max_radius().max(input.mesh2.max_radius());
    let standard = !params.iterative
        || opts.force_standard
        || needs_standard_trace(state.trace_reference().as_ref(), &input.pos12, radius, params);
    let mode = if standard { StepMode::Standard } else { StepMode::Iterative };
    let dirs = Direction::both(input);
    let mut rays = Vec::new();
    scratch.contacts.clear();
    let mut standard_in_contact = false;
    for (d, dir) in dirs.iter().enumerate() {
        let first = scratch.contacts.len();
        let records = &mut state.records[d];
        if standard {
            standard_direction(dir, params, &mut metrics, opts.record_rays.then_some(&mut rays), &mut scratch.contacts, records);
        } else {
            iterative_direction(dir, records, params, &mut metrics, opts.record_rays.then_some(&mut rays), &mut scratch.contacts);
        }
        if opts.measure_errors {
            let (e, theirs) = compare_with_standard(dir, params, &scratch.contacts[first..]);
            standard_in_contact |= theirs;
            match &mut metrics.errors {
                Some(m) => m.add(&e),
                None => metrics.errors = Some(e),
            }
        }
    }
    if let Some(e) = &mut metrics.errors {
        // Pair-level error: in contact in one result only (2013 §4.3's "wrongly detected pairs").
        let ours = scratch.contacts.iter().any(|c| c.t >= 0.0);
        e.erroneous_pairs = u64::from(ours != standard_in_contact);
    }
    if standard {
        state.reference = Some(input.pos12);
        // Only read for record-less pairs of the iterative algorithm (see `needs_standard_trace`).
        state.separation = if params.iterative && state.records.iter().all(Vec::is_empty) {
            separation_bound(input.mesh1, input.mesh2, &input.pos12)
        } else {
            0.0
        };
        state.steps_since_standard = 0;
        metrics.standard_pairs = 1;
    } else {
        state.steps_since_standard += 1;
        metrics.iterative_pairs = 1;
    }

    // Re-projection and reduction. Penetrating rays always; predictions within the prediction
    // distance become speculative contacts (positive distance).
    scratch.candidates.clear();
    for c in &scratch.contacts {
        let cand = reproject(c, &input.pos12, params.reprojection);
        if c.t >= 0.0 {
            metrics.contact_rays += 1;
            metrics.cumulative_ray_length += c.t as f64;
            metrics.cumulative_depth += (-cand.dist) as f64;
            metrics.max_depth = metrics.max_depth.max(-cand.dist);
            scratch.candidates.push(cand);
        } else if cand.dist <= opts.prediction_distance {
            scratch.candidates.push(cand);
        }
    }
    let kept = if opts.keep_contacts { scratch.candidates.clone() } else { Vec::new() };
    let mut manifolds = Vec::new();
    if !opts.skip_manifolds {
        reduce_manifolds_with(&mut scratch.candidates, &input.pos12, params.manifold_angle, &mut scratch.reduce, &mut manifolds);
    }
    metrics.manifolds = manifolds.len() as u64;
    metrics.manifold_points = manifolds.iter().map(|m| m.points.len() as u64).sum();
    metrics.prediction_records = state.records.iter().flatten().filter(|r| !r.in_contact).count() as u64;
    PairResult { state, mode, manifolds, rays, contacts: kept, metrics }
}

#[allow(clippy::too_many_arguments)]
fn push_debug(
    rays: &mut Option<&mut Vec<RayDebug>>,
    dir: &Direction,
    vertex: u32,
    ray: &Ray,
    hit: Option<(u32, f32)>,
    kind: RayKind,
    outcome: RayOutcome,
) {
    if let Some(rays) = rays {
        // Shape 1's frame: identity for shape-1 rays' `from`, `from_to` maps shape 2 → shape 1.
        let to_shape1 = if dir.from_shape2 { Pose::IDENTITY } else { dir.from_to.inverse() };
        let (triangle, t) = hit.unwrap_or((u32::MAX, 0.0));
        rays.push(RayDebug {
            origin: to_shape1.transform_point(ray.origin),
            end: to_shape1.transform_point(ray.at(t)),
            kind,
            outcome,
            from_shape2: dir.from_shape2,
            vertex,
            triangle,
            t,
        });
    }
}

fn contact_of(dir: &Direction, v: u32, ray: &Ray, triangle: u32, t: f32, normal: Vec3) -> RayContact {
    RayContact { from_shape2: dir.from_shape2, vertex: v, triangle, origin: ray.origin, dir: ray.dir, t, normal }
}

/// Standard tracing of one direction: every candidate vertex, both sides of the line at once.
/// Replaces `records`; appends contacts (and predictions, `t < 0`) to `contacts`.
fn standard_direction(
    dir: &Direction,
    params: &RtcdParams,
    metrics: &mut StepMetrics,
    mut rays: Option<&mut Vec<RayDebug>>,
    contacts: &mut Vec<RayContact>,
    records: &mut Vec<RayRecord>,
) {
    records.clear();
    let region = dir.candidate_region(params.distance_extension);
    if region.is_empty() {
        return;
    }
    let back = if params.prediction { params.culling_dist } else { 0.0 };
    let exits = dir.from.exit_distances();
    for (v, p) in dir.from.positions().iter().enumerate() {
        if !region.contains(*p) {
            continue;
        }
        let v = v as u32;
        let ray = dir.ray(v);
        let hits = params.tracer.trace_line(dir.to, &ray, back, exits[v as usize], NO_SKIP);
        metrics.standard_rays += 1;
        match (hits.forward, hits.backward) {
            // Hermann Alg. 1: the first hit faces away from the ray (hit from inside the other body)
            // and comes before the ray leaves its own body (`fwd` = exit distance).
            (Some(h), _) if h.from_inside => {
                contacts.push(contact_of(dir, v, &ray, h.triangle, h.t, h.normal));
                records.push(RayRecord { vertex: v, triangle: h.triangle, in_contact: true });
                push_debug(&mut rays, dir, v, &ray, Some((h.triangle, h.t)), RayKind::Standard, RayOutcome::Contact);
            }
            // Not in collision: the opposite ray's hit on the other body's outside, within
            // `culling_dist`, is kept as a prediction (2014 §3.1).
            (_, Some(b)) if b.from_inside => {
                contacts.push(contact_of(dir, v, &ray, b.triangle, b.t, b.normal));
                records.push(RayRecord { vertex: v, triangle: b.triangle, in_contact: false });
                push_debug(&mut rays, dir, v, &ray, Some((b.triangle, b.t)), RayKind::Standard, RayOutcome::Prediction);
            }
            (f, _) => {
                push_debug(&mut rays, dir, v, &ray, f.map(|h| (h.triangle, h.t)), RayKind::Standard, RayOutcome::Rejected);
            }
        }
    }
}

/// Iterative tracing of one direction: walks from last step's records only (2013 §3.4: vertices
/// entering contact between standard steps are found by predictions, or at the next standard step).
/// Updates `records` in place (lost rays are removed); appends to `contacts`.
fn iterative_direction(
    dir: &Direction,
    records: &mut Vec<RayRecord>,
    params: &RtcdParams,
    metrics: &mut StepMetrics,
    mut rays: Option<&mut Vec<RayDebug>>,
    contacts: &mut Vec<RayContact>,
) {
    let exits = dir.from.exit_distances();
    let mut kept = 0;
    for k in 0..records.len() {
        let r = records[k];
        let ray = dir.ray(r.vertex);
        let kind = if r.in_contact { RayKind::Iterative } else { RayKind::Predictive };
        match kind {
            RayKind::Predictive => metrics.predictive_rays += 1,
            _ => metrics.iterative_rays += 1,
        }
        let w = walk(dir.to, &ray, r.triangle, params.max_it);
        metrics.walk_steps += w.steps as u64;
        match w.outcome {
            WalkOutcome::Hit(h) if h.from_inside && h.t <= exits[r.vertex as usize] => {
                metrics.iterative_hits += 1;
                contacts.push(contact_of(dir, r.vertex, &ray, h.triangle, h.t, h.normal));
                records[kept] = RayRecord { vertex: r.vertex, triangle: h.triangle, in_contact: true };
                kept += 1;
                push_debug(&mut rays, dir, r.vertex, &ray, Some((h.triangle, h.t)), kind, RayOutcome::Contact);
            }
            WalkOutcome::Prediction(h) if params.prediction && h.from_inside && -h.t <= params.culling_dist => {
                contacts.push(contact_of(dir, r.vertex, &ray, h.triangle, h.t, h.normal));
                records[kept] = RayRecord { vertex: r.vertex, triangle: h.triangle, in_contact: false };
                kept += 1;
                push_debug(&mut rays, dir, r.vertex, &ray, Some((h.triangle, h.t)), kind, RayOutcome::Prediction);
            }
            WalkOutcome::Hit(h) | WalkOutcome::Prediction(h) => {
                push_debug(&mut rays, dir, r.vertex, &ray, Some((h.triangle, h.t)), kind, RayOutcome::Rejected);
            }
            WalkOutcome::Miss => push_debug(&mut rays, dir, r.vertex, &ray, None, kind, RayOutcome::Rejected),
        }
    }
    records.truncate(kept);
}

/// Compares this step's contacts of one direction with a full standard trace (no prediction).
/// Also says whether the standard trace found any contact.
fn compare_with_standard(dir: &Direction, params: &RtcdParams, ours: &[RayContact]) -> (ErrorMetrics, bool) {
    let mut reference = RtcdParams { prediction: false, ..*params };
    reference.iterative = false;
    let mut scratch = StepMetrics::default();
    let (mut theirs, mut records) = (Vec::new(), Vec::new());
    standard_direction(dir, &reference, &mut scratch, None, &mut theirs, &mut records);
    let depth = |c: &RayContact| c.t * c.dir.dot(c.normal);
    let theirs: HashMap<u32, &RayContact> = theirs.iter().filter(|c| c.t >= 0.0).map(|c| (c.vertex, c)).collect();
    let ours: HashMap<u32, &RayContact> = ours.iter().filter(|c| c.t >= 0.0).map(|c| (c.vertex, c)).collect();
    let mut e = ErrorMetrics::default();
    for (v, s) in &theirs {
        e.compared_rays += 1;
        match ours.get(v) {
            None => {
                e.erroneous_rays += 1;
                e.late_contacts += 1;
            }
            Some(o) => {
                if o.triangle != s.triangle && (depth(o) - depth(s)).abs() > ERROR_DEPTH_TOLERANCE {
                    e.erroneous_rays += 1;
                }
            }
        }
    }
    for v in ours.keys() {
        if !theirs.contains_key(v) {
            e.compared_rays += 1;
            e.erroneous_rays += 1;
        }
    }
    (e, !theirs.is_empty())
}
