//! Per-pair detection: Hermann's vertex rays, IRTCD's iterative walk with its displacement criterion,
//! and the 2014 paper's predictive rays, and exact vertex contacts against boxes
//! ([`box_vertex_face`]); into a surface that is solid behind (a level chunk), and with
//! [`crate::RtcdParams::closed_reach`] into a closed mesh, vertex rays reach as far as their body's
//! size ([`solid_reach`]). `pair::detect_pair` runs one pair for one step.

mod cuboid;
mod edge;
pub(crate) mod pair;

pub use edge::{EdgeCrossing, EdgeTest, edge_crossing, ridge_contact};

pub use cuboid::{
    BoxFace, TRIANGLES_PER_BOX_FACE, box_exit_face, box_face_normal, box_vertex_face, nearest_box_face,
};

pub use pair::{
    MotionFrames, MotionHit, MotionLengths, MotionStep, TraceReference, candidate_region, closed_reach_into,
    edge_crossing_contacts, is_quiet, max_displacement, merge_motion_contacts, motion_lengths,
    motion_path_contact, motion_tunnel_contacts, nearer_way_out, needs_standard_trace, pair_edge_contacts,
    pair_motion_contacts, pair_solid_reach, ray_limit, ray_reach, reach_box, rim_paths_due,
    separation_before_trace, separation_bound, separation_bound_beyond, separation_for_reach,
    separation_for_reach_from, solid_at, solid_behind_box, solid_reach, trace_motion_paths,
    vertex_candidate_region, vertex_clip_box, vertex_reach,
};

use crate::pose::Pose;

/// How a ray was traced this step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RayKind {
    /// By the standard tracer (brute force or BVH), from every candidate vertex.
    Standard,
    /// By the iterative walk, from a vertex that was in contact last step.
    Iterative,
    /// By the iterative walk, from a vertex kept as a prediction (2014 §3.1).
    Predictive,
}

/// What a pair remembers for one vertex ray between steps (IRTCD 2013 §3.1: "record for each ray the
/// reference of the impacted triangle").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RayRecord {
    /// Vertex of the casting mesh.
    pub vertex: u32,
    /// Triangle of the other mesh where the next walk starts.
    pub triangle: u32,
    /// `true`: the vertex was in contact (the ray hit `triangle`); `false`: a prediction (the
    /// opposite ray hit it).
    pub in_contact: bool,
}

/// Iterative state of one pair, kept between steps (on the GPU backend, in GPU buffers).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PairState {
    /// `(mesh1.id(), mesh2.id())` the records refer to; a change resets the state.
    pub(crate) mesh_ids: (u64, u64),
    /// Relative pose `(t_ni, q_ni)` at the last standard step; `None` before the first.
    pub reference: Option<Pose>,
    /// Records of rays from shape 1's vertices (index 0) and shape 2's vertices (index 1), sorted by
    /// vertex.
    pub records: [Vec<RayRecord>; 2],
    /// Steps since the last standard trace.
    pub steps_since_standard: u32,
    /// [`separation_for_reach`] at the reference pose (where the meshes are within the rays' reach,
    /// any value up to the reach, which decides the same).
    pub separation: f32,
    /// The BVH leaf pair (shape 1's node, shape 2's) at which the last separation descent found the
    /// meshes within the rays' reach; checked first by the next one ([`separation_for_reach_from`]).
    pub(crate) witness: [u32; 2],
    /// Edges of shape 1 (index 0) and shape 2 (index 1) that crossed the other mesh at the last
    /// step ([`edge_crossing`]), or came within the rays' reach of its box where the direction
    /// kept no vertex record, tested again at the next, sorted.
    pub edge_records: [Vec<u32>; 2],
    /// Vertices of shape 1 (index 0) and shape 2 (index 1) that went into the other mesh through a
    /// face and are not back out: `[vertex, triangle]` ([`pair_motion_contacts`]).
    pub tunnels: [Vec<[u32; 2]>; 2],
}

impl PairState {
    /// What [`needs_standard_trace`] reads; `None` before the first standard trace.
    pub fn trace_reference(&self) -> Option<TraceReference> {
        self.reference.map(|pose| TraceReference {
            pose,
            separation: self.separation,
            has_records: self.has_records(),
        })
    }

    /// Whether the pair keeps any ray record, crossing edge or tunnel.
    pub fn has_records(&self) -> bool {
        self.records.iter().any(|r| !r.is_empty())
            || self.edge_records.iter().any(|r| !r.is_empty())
            || self.tunnels.iter().any(|r| !r.is_empty())
    }
}
