//! `#[repr(C)]` Pod mirrors of the WGSL structs in `shaders/types.wgsl`. A test pins each size to the
//! shader's layout (computed by naga from the WGSL source).

use bytemuck::{Pod, Zeroable};
use glam::{Quat, Vec3};

pub use rtcd::{bvh::BvhNode as GpuBvhNode, detect::TRIANGLES_PER_BOX_FACE};

/// `Vertex`: position with the exit distance in `w`, outward normal with the mesh's size in `w`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuVertex {
    /// xyz position, w exit distance.
    pub p: [f32; 4],
    /// xyz outward normal, w the mesh's bounding-box diagonal (with the pair's `culling_dist`, the
    /// reach of its rays into a solid-behind mesh, or a closed one with the closed reach:
    /// [`rtcd::detect::solid_reach`]).
    pub n: [f32; 4],
}

/// `Triangle`: mesh-local corner indices, neighbours, outward normal.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuTriangle {
    /// Corners (w unused).
    pub v: [u32; 4],
    /// Neighbours across edges 0, 1, 2 (w unused), `u32::MAX` for none.
    pub adj: [u32; 4],
    /// Outward unit normal (w unused).
    pub n: [f32; 4],
}

/// `MeshRef`: where a mesh lives in the shared geometry buffers.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct GpuMeshRef {
    /// First vertex.
    pub vertex_offset: u32,
    /// Vertex count.
    pub vertex_count: u32,
    /// First triangle.
    pub triangle_offset: u32,
    /// Triangle count.
    pub triangle_count: u32,
    /// First BVH node.
    pub bvh_offset: u32,
    /// BVH node count.
    pub bvh_count: u32,
    /// 1 for a box ([`rtcd::RtcdMesh::cuboid`]), whose other mesh's vertices get exact contacts
    /// (`shaders/cuboid.wgsl`); 0 otherwise.
    pub cuboid: u32,
    /// How far the other mesh's vertex rays count back-face hits in this one
    /// ([`rtcd::detect::ray_limit`]): [`MESH_REACH_SOLID_BEHIND`] for a surface that is solid behind
    /// its back side ([`rtcd::RtcdMesh::solid_behind`]: a level chunk), set with the mesh;
    /// [`MESH_REACH_CLOSED`] for a closed mesh whose pair takes the closed reach
    /// ([`rtcd::detect::closed_reach_into`]), set in each pair's copy; 0 otherwise.
    pub solid_behind: u32,
    /// First of the mesh's edges ([`rtcd::RtcdMesh::edges`]) in the edges buffer.
    pub edge_offset: u32,
    /// Its edge count.
    pub edge_count: u32,
    /// How many of its edges, the first ones, are long and sharp
    /// ([`rtcd::RtcdMesh::predicting_edges`]).
    pub strong_edges: u32,
    /// Where its vertices' edge lists start in the vertex-edge offsets (`vertex_count + 1` of them,
    /// indices into the vertex-edge list).
    pub vertex_edge_offset: u32,
}

/// `MeshRef.solid_behind`: a level chunk, solid behind its surface.
pub const MESH_REACH_SOLID_BEHIND: u32 = 1;
/// `MeshRef.solid_behind`: a closed mesh whose pair takes the closed reach
/// ([`rtcd::RtcdParams::closed_reach`]); beyond the exit distance only the nearer way out counts
/// ([`rtcd::detect::nearer_way_out`]).
pub const MESH_REACH_CLOSED: u32 = 2;

/// `Body`: a body's world pose, uploaded every step by body slot; the pairs' relative poses are
/// made of them on the device (`pair_assemble.wgsl`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuBody {
    /// Rotation (xyzw).
    pub q: [f32; 4],
    /// Translation (w unused).
    pub t: [f32; 4],
}

/// `PairLink`: the bodies and kind of the pair in a pair-table slot, uploaded when the pair is new
/// in its slot or its bodies' slots changed, kept on the device by slot (`pair_links.wgsl`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct GpuPairLink {
    /// Pair-table slot.
    pub slot: u32,
    /// Shape 1's body slot.
    pub body_a: u32,
    /// Shape 2's body slot.
    pub body_b: u32,
    /// The pair's [`GpuPairStatic`] among the kinds (one per pair of meshes).
    pub kind: u32,
}

/// `PairStep`: a pair's step, made on the device for each pair-table slot (`pair_assemble.wgsl`,
/// `pair_layout.wgsl`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuPairStep {
    /// Shape 2's rotation in shape 1's frame (xyzw), from the bodies' poses.
    pub pose12_q: [f32; 4],
    /// Shape 2's translation in shape 1's frame.
    pub pose12_t: [f32; 4],
    /// Pair-table slot (the pair's index in the step).
    pub slot: u32,
    /// `PAIR_PRESENT | PAIR_STANDARD | PAIR_NEW | PAIR_SEPARATED`.
    pub flags: u32,
    /// First entry in the flattened ray list.
    pub entry_offset: u32,
    /// Entries of direction 0.
    pub entries_a: u32,
    /// Entries of direction 1.
    pub entries_b: u32,
    /// Edge rays of direction 0, after the vertex rays.
    pub edges_a: u32,
    /// Edge rays of direction 1.
    pub edges_b: u32,
    /// Padding.
    pub _pad_c: u32,
}

/// `PairFrame`: what `pair_assemble.wgsl` derives of a pair each step from its [`GpuPairStep`] and
/// [`GpuPairStatic`], with the host's operations.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuPairFrame {
    /// Shape 1's rotation in shape 2's frame (`rtcd::Pose::inverse` of the step's pose).
    pub pose21_q: [f32; 4],
    /// Shape 1's translation in shape 2's frame.
    pub pose21_t: [f32; 4],
    /// Candidate region of shape 1's vertices (shape 1's frame;
    /// `rtcd::detect::vertex_candidate_region`).
    pub region_a_min: [f32; 4],
    /// See `region_a_min`.
    pub region_a_max: [f32; 4],
    /// Candidate region of shape 2's vertices (shape 2's frame).
    pub region_b_min: [f32; 4],
    /// See `region_b_min`.
    pub region_b_max: [f32; 4],
}

/// `PairStatic`: what a pair keeps on the device for as long as it holds its slot (its meshes and
/// lengths decide it), uploaded once, when it is new in its slot.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuPairStatic {
    /// Reach box of shape 1's mesh (its frame; `rtcd::detect::reach_box`): direction 1's rays start
    /// in it or are skipped. ±`f32::MAX` (no skip) where it has none (an open mesh that is not
    /// solid behind).
    pub reach_a_min: [f32; 4],
    /// See `reach_a_min`.
    pub reach_a_max: [f32; 4],
    /// Reach box of shape 2's mesh (its frame): direction 0's rays start in it or are skipped.
    pub reach_b_min: [f32; 4],
    /// See `reach_b_min`.
    pub reach_b_max: [f32; 4],
    /// Solid-behind box of shape 1's mesh (its frame; `rtcd::detect::solid_behind_box`): direction
    /// 1's rays from in it take the solid reach. ±`f32::MAX` where the mesh is not solid behind.
    pub behind_a_min: [f32; 4],
    /// See `behind_a_min`.
    pub behind_a_max: [f32; 4],
    /// Solid-behind box of shape 2's mesh (its frame): direction 0's rays from in it take the solid
    /// reach.
    pub behind_b_min: [f32; 4],
    /// See `behind_b_min`.
    pub behind_b_max: [f32; 4],
    /// Shape 1's mesh's bounding box (its frame): its vertices' candidate region is within it
    /// (`rtcd::detect::vertex_candidate_region`).
    pub box_a_min: [f32; 4],
    /// See `box_a_min`.
    pub box_a_max: [f32; 4],
    /// Shape 2's mesh's bounding box (its frame).
    pub box_b_min: [f32; 4],
    /// See `box_b_min`.
    pub box_b_max: [f32; 4],
    /// The box direction 1's candidate region is clipped to, in shape 1's frame: shape 1's
    /// bounding box, or its solid-behind box at the pair's solid reach (`rtcd::RtcdMesh::behind_box`).
    pub clip_a_min: [f32; 4],
    /// See `clip_a_min`.
    pub clip_a_max: [f32; 4],
    /// The box direction 0's candidate region is clipped to, in shape 2's frame.
    pub clip_b_min: [f32; 4],
    /// See `clip_b_min`.
    pub clip_b_max: [f32; 4],
    /// Shape 1's mesh.
    pub mesh_a: GpuMeshRef,
    /// Shape 2's mesh.
    pub mesh_b: GpuMeshRef,
    /// The pair's `culling_dist` (2014 Eq. 1; [`rtcd::RtcdParams::for_pair`]).
    pub culling_dist: f32,
    /// The pair's `max_it` (2013 Eq. 1).
    pub max_it: u32,
    /// The pair's candidate extension (`rtcd::RtcdParams::candidate_extension`).
    pub candidate_extension: f32,
    /// Shape 2's vertices' floor (`rtcd::detect::MotionLengths::floor`): no shorter motion path is
    /// traced, a rim vertex's aside.
    pub motion_floor_b: f32,
    /// Shape 1's mesh's `rtcd::RtcdMesh::max_radius` (the motion rays' displacement bound).
    pub radius_a: f32,
    /// Shape 2's mesh's `rtcd::RtcdMesh::max_radius`.
    pub radius_b: f32,
    /// Shape 1's vertices' floor (`rtcd::detect::MotionLengths::floor`).
    pub motion_floor: f32,
    /// Bit 0: shape 1's vertices' paths count their own body's thickness; bit 1: shape 2's
    /// (`rtcd::detect::MotionLengths`).
    pub motion_own: u32,
    /// The least motion of shape 1's vertices that needs a path.
    pub least_a: f32,
    /// The least motion of shape 2's vertices that needs a path.
    pub least_b: f32,
    /// Shape 2's half thickness, against which shape 1's vertices' motion is measured.
    pub other_a: f32,
    /// Shape 1's half thickness, against which shape 2's vertices' motion is measured.
    pub other_b: f32,
}

/// `Pair`: one pair of one step, its step record, what is derived of it and its statics, put
/// together on the device (`pair_assemble.wgsl`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuPair {
    /// What the host uploaded this step.
    pub step: GpuPairStep,
    /// What the device derived of it.
    pub frame: GpuPairFrame,
    /// What the pair keeps while it holds its slot.
    pub statics: GpuPairStatic,
}

/// `Pair.flags`: traced with the standard tracer this step.
pub const PAIR_STANDARD: u32 = 1;
/// `Pair.flags`: first step of the pair in its slot (reset the slot).
pub const PAIR_NEW: u32 = 2;
/// `Pair.flags`: the slot's pair is in this step (a slot without it has no entries).
pub const PAIR_PRESENT: u32 = 4;
/// `Pair.flags`: separated before tracing (`rtcd::detect::separation_before_trace`): no entries.
pub const PAIR_SEPARATED: u32 = 8;
/// `Pair.flags`: its motion rays' paths are traced on the device (`motion_paths.wgsl`), from its
/// slot's last pose, which its input's previous pose is.
pub const PAIR_MOTION: u32 = 16;
/// Bits of `Pair.flags` uploaded for each pair-table slot, packed 6 slots a `u32` (slot `s` in word
/// `s / 6`, at bit `5 * (s % 6)`).
pub const PAIR_FLAG_BITS: u32 = 5;

/// `Slot`: a pair-table slot.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuSlot {
    /// Reference rotation (t_ni, q_ni of IRTCD Eq. 2).
    pub ref_q: [f32; 4],
    /// Reference translation; `w = 1` when set.
    pub ref_t: [f32; 4],
    /// First record of direction 0.
    pub rec_offset_a: u32,
    /// Records of direction 0.
    pub rec_count_a: u32,
    /// First record of direction 1.
    pub rec_offset_b: u32,
    /// Records of direction 1.
    pub rec_count_b: u32,
    /// First edge record (an edge kept between steps) of direction 0, in the records buffer.
    pub edge_offset_a: u32,
    /// Edge records of direction 0.
    pub edge_count_a: u32,
    /// First edge record of direction 1.
    pub edge_offset_b: u32,
    /// Edge records of direction 1.
    pub edge_count_b: u32,
    /// The pair's rotation at the last step it was in (its motion paths start there).
    pub last_q: [f32; 4],
    /// The pair's translation at the last step it was in; `w = 1` once set.
    pub last_t: [f32; 4],
}

/// `MotionPlan`: a pair's motion rays this step (`pair_assemble.wgsl`), written and read on the
/// device only.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuMotionPlan {
    /// Direction 0's map into shape 2's frame one step earlier (rotation).
    pub was_a_q: [f32; 4],
    /// Its translation.
    pub was_a_t: [f32; 4],
    /// Direction 1's map into shape 1's frame one step earlier (rotation).
    pub was_b_q: [f32; 4],
    /// Its translation.
    pub was_b_t: [f32; 4],
    /// Where direction 0's paths start (shape 1's frame).
    pub region_a_min: [f32; 4],
    /// See `region_a_min`.
    pub region_a_max: [f32; 4],
    /// Where direction 1's paths start (shape 2's frame).
    pub region_b_min: [f32; 4],
    /// See `region_b_min`.
    pub region_b_max: [f32; 4],
    /// Direction 0's laid-out paths (shape 1's vertex count, or 0).
    pub paths_a: u32,
    /// Direction 1's laid-out paths.
    pub paths_b: u32,
    /// Padding.
    pub _pad_a: u32,
    /// Padding.
    pub _pad_b: u32,
}

/// `MotionHit`: a vertex's path that met a front face first (`motion_paths.wgsl`), read back.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuMotionHit {
    /// The slot `<< 1 |` the direction.
    pub slot_dir: u32,
    /// The casting mesh's vertex.
    pub vertex: u32,
    /// The face met in the other mesh.
    pub triangle: u32,
    /// How far along the path from where the vertex was.
    pub t: f32,
}

/// `Record`: what a ray remembers between steps.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct GpuRecord {
    /// Casting vertex.
    pub vertex: u32,
    /// Triangle, with bit 31 set for a prediction.
    pub triangle: u32,
}

/// `EntryHit`: one traced ray.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuEntryHit {
    /// Triangle hit (`u32::MAX` for none).
    pub triangle: u32,
    /// Ray parameter.
    pub t: f32,
    /// `outcome | ray kind << 2 | direction << 4`, with [`ENTRY_RECORD_ONLY`].
    pub kind: u32,
    /// Casting vertex.
    pub vertex: u32,
}

/// `ContactOut`: one compacted contact or prediction as it is read back, the ray that found it; the
/// host makes the contact (the CPU backend's re-projection of the same ray).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuContactOut {
    /// The step's pair index `<<` [`CONTACT_KIND_BITS`] `|` the ray's kind (`EntryHit.kind`:
    /// outcome, ray kind `<< 2`, direction `<< 4`, [`ENTRY_RECORD_ONLY`]).
    pub pair_kind: u32,
    /// The casting mesh's vertex.
    pub vertex: u32,
    /// The hit mesh's triangle.
    pub triangle: u32,
    /// The ray parameter of the hit.
    pub t: f32,
}

/// `EdgeJob`: an edge ray of a step to trace (`edge_select.wgsl` appends it, `edge_step.wgsl`
/// traces it), written and read on the device only.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuEdgeJob {
    /// Its entry in the step's ray list.
    pub entry: u32,
    /// The edge, of the casting mesh.
    pub edge: u32,
    /// The pair (its slot in the step's pair list).
    pub pair: u32,
    /// The direction: 0 for the first mesh's edges against the second, 1 for the reverse.
    pub dir: u32,
}

/// `EdgeTask`: one edge ray (Mochi 2024 §3.4), the edge of `from_mesh` between its vertices `a`
/// and `b` against `to_mesh`; `q`, `t` map `from_mesh`'s frame into `to_mesh`'s
/// ([`rtcd::detect::edge_crossing`]'s arguments).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuEdgeTask {
    /// Rotation, xyzw.
    pub q: [f32; 4],
    /// Translation (w unused).
    pub t: [f32; 4],
    /// The casting mesh.
    pub from_mesh: GpuMeshRef,
    /// The mesh the edge's line is traced against.
    pub to_mesh: GpuMeshRef,
    /// The edge's first vertex (of `from_mesh`).
    pub a: u32,
    /// Its second vertex.
    pub b: u32,
    /// Padding.
    pub _pad_a: u32,
    /// Padding.
    pub _pad_b: u32,
}

/// `EdgeOut.kind`: the edge meets nothing ([`rtcd::detect::EdgeTest::Apart`]).
pub const EDGE_APART: u32 = 0;
/// `EdgeOut.kind`: the edge meets the surface without crossing the body with both ends outside.
pub const EDGE_TOUCHING: u32 = 1;
/// `EdgeOut.kind`: the edge crosses the body ([`rtcd::detect::EdgeTest::Crossing`]).
pub const EDGE_CROSSING: u32 = 2;

/// `EdgeOut`: what an edge ray found ([`rtcd::detect::EdgeCrossing`]), in the hit mesh's frame.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuEdgeOut {
    /// [`EDGE_APART`], [`EDGE_TOUCHING`] or [`EDGE_CROSSING`].
    pub kind: u32,
    /// The triangle the edge enters through (a crossing's way out for a pass through).
    pub triangle: u32,
    /// How far along `normal`.
    pub depth: f32,
    /// 1 when the edge passes right through the body (no ridge).
    pub through: u32,
    /// The contact point on the edge (w unused).
    pub point: [f32; 4],
    /// The direction the casting mesh must move to separate (w unused).
    pub normal: [f32; 4],
    /// A pass through's other ways out, nearest first: their triangles (`u32::MAX` for none; w
    /// unused).
    pub exit_triangles: [u32; 4],
    /// The first other way out: normal (xyz), depth (w).
    pub exit_a: [f32; 4],
    /// The second.
    pub exit_b: [f32; 4],
    /// The third.
    pub exit_c: [f32; 4],
}

/// Low bits of [`GpuContactOut::pair_kind`] that hold the ray's kind (`CONTACT_KIND_BITS`).
pub const CONTACT_KIND_BITS: u32 = 6;

// The kind fits its bits: the highest flag is below them.
const _: () = assert!(ENTRY_RECORD_ONLY < 1 << CONTACT_KIND_BITS);

/// `Params`: step constants (uniform).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuParams {
    /// Pair links uploaded this step (`pair_links.wgsl`); the pairs carry their lengths
    /// ([`GpuPairStatic::culling_dist`], [`GpuPairStatic::max_it`]).
    pub link_count: u32,
    /// The step's prediction distance ([`rtcd::StepOptions::prediction_distance`]):
    /// `flag_entries.wgsl` marks the predictions surely beyond it [`ENTRY_RECORD_ONLY`].
    pub prediction_distance: f32,
    /// Predictive rays on.
    pub prediction: u32,
    /// Re-projection on.
    pub reprojection: u32,
    /// Pair-table slots this step (the pairs are indexed by slot).
    pub pair_count: u32,
    /// Entries this step.
    pub entry_count: u32,
    /// Edge rays on ([`rtcd::RtcdParams::edge_rays`]).
    pub edge_rays: u32,
    /// Every record read back, record-only predictions too (the debug rays,
    /// [`rtcd::StepOptions::record_rays`]); otherwise only those that make contacts.
    pub read_all: u32,
}

/// `ScanParams` (uniform).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuScanParams {
    /// Elements to scan.
    pub n: u32,
    /// Padding.
    pub _pad_a: u32,
    /// Padding.
    pub _pad_b: u32,
    /// Padding.
    pub _pad_c: u32,
}

/// Outcome bits of `EntryHit.kind`.
pub const OUTCOME_CONTACT: u32 = 1;
/// See [`OUTCOME_CONTACT`].
pub const OUTCOME_PREDICTION: u32 = 2;
/// See [`OUTCOME_CONTACT`].
pub const OUTCOME_REJECTED: u32 = 3;
/// Ray kinds (bits 2-3).
pub const RAY_STANDARD: u32 = 0;
/// See [`RAY_STANDARD`].
pub const RAY_ITERATIVE: u32 = 1;
/// See [`RAY_STANDARD`].
pub const RAY_PREDICTIVE: u32 = 2;
/// An edge ray (`edge_step.wgsl`): `EntryHit.vertex` is the edge; a contact is a crossing, a
/// record-only prediction an edge kept between steps.
pub const RAY_EDGE: u32 = 3;
/// `EntryHit.kind` bit of a prediction that is kept as a record but makes no speculative contact
/// (a vertex whose opposite ray does not meet a box's face within `culling_dist`).
pub const ENTRY_RECORD_ONLY: u32 = 32;
/// `Record.triangle` bit of a prediction.
pub const RECORD_PREDICTION: u32 = 0x8000_0000;
/// Counter of the standard rays traced (`COUNT_STANDARD_RAYS`).
pub const COUNT_STANDARD_RAYS: usize = 0;
/// Counter of the iterative rays walked (`COUNT_ITERATIVE_RAYS`).
pub const COUNT_ITERATIVE_RAYS: usize = 1;
/// Counter of the predictive rays (`COUNT_PREDICTIVE_RAYS`).
pub const COUNT_PREDICTIVE_RAYS: usize = 2;
/// Counter of the iterative rays' hits (`COUNT_ITERATIVE_HITS`).
pub const COUNT_ITERATIVE_HITS: usize = 3;
/// Counter of the walks' steps (`COUNT_WALK_STEPS`).
pub const COUNT_WALK_STEPS: usize = 4;
/// Counter of the edge rays traced (`COUNT_EDGE_RAYS`).
pub const COUNT_EDGE_RAYS: usize = 5;
/// Counter of the vertex rays' prediction records kept for the next step
/// (`COUNT_PREDICTION_RECORDS`), whether read back or not.
pub const COUNT_PREDICTION_RECORDS: usize = 6;
/// Per-slot counts `pair_end.wgsl` reports for the host's mirror of each slot (`SLOT_COUNTS`):
/// vertex records of each direction, edge records of each direction, and the edges at each
/// direction's prediction records.
pub const SLOT_COUNTS: usize = 6;
/// Counter of the motion hits appended (`motion_paths.wgsl`).
pub const COUNT_MOTION_HITS: usize = 7;
/// Counter of the motion paths traced (`motion_paths.wgsl`).
pub const COUNT_MOTION_PATHS: usize = 8;
/// Number of counters.
pub const COUNTERS: usize = 10;

/// A quaternion as WGSL's `vec4` (xyzw).
pub fn quat4(q: Quat) -> [f32; 4] {
    q.to_array()
}

/// A point as WGSL's `vec4` (w = `w`).
pub fn vec4(v: Vec3, w: f32) -> [f32; 4] {
    [v.x, v.y, v.z, w]
}
