// Shared GPU types of the rtcd narrow phase. Every struct here has a `#[repr(C)]` Pod mirror in
// crates/rtcd_wgpu/src/gpu_types.rs whose size a test pins to this file's layout. No vec3 in storage
// structs: vec4 or scalars only. Padding fields are `padN` here and `_padN` in Rust (naga_oil
// rejects identifiers that start with an underscore).
#define_import_path rtcd::types

// "No triangle / no neighbour / no record".
const NONE: u32 = 0xffffffffu;
// Barycentric tolerance and parallel-ray threshold: the same values as rtcd::ray.
const BARYCENTRIC_EPS: f32 = 1e-5;
const PARALLEL_EPS: f32 = 1e-7;
// BvhNode.leaf: first triangle << LEAF_COUNT_BITS | count (0 for an internal node).
const LEAF_COUNT_BITS: u32 = 4u;
// Triangles per face of a box mesh (rtcd::detect::TRIANGLES_PER_BOX_FACE): face f's first triangle is
// TRIANGLES_PER_BOX_FACE * f.
const TRIANGLES_PER_BOX_FACE: u32 = 2u;

// Outcome of one ray (EntryHit.kind bits 0-1).
const OUTCOME_NONE: u32 = 0u;
const OUTCOME_CONTACT: u32 = 1u;
const OUTCOME_PREDICTION: u32 = 2u;
const OUTCOME_REJECTED: u32 = 3u;
// How it was traced (bits 2-3).
const RAY_STANDARD: u32 = 0u;
const RAY_ITERATIVE: u32 = 1u;
const RAY_PREDICTIVE: u32 = 2u;
// An edge ray (Mochi 2024 §3.4; edge_step.wgsl): EntryHit.vertex is the edge, a contact is a crossing
// (the host traces the edge again to make it), a record-only prediction an edge kept between steps.
const RAY_EDGE: u32 = 3u;
// Direction (bit 4): 0 = shape 1's vertex against shape 2, 1 = the reverse.
// Bit 5: a prediction kept as a record that makes no speculative contact (a vertex whose opposite ray
// does not meet a box's face within culling_dist, shaders/cuboid.wgsl).
const ENTRY_RECORD_ONLY: u32 = 32u;

// Pair.flags (the PAIR_FLAG_BITS bits uploaded for each pair-table slot, 32 / PAIR_FLAG_BITS slots a word)
const PAIR_STANDARD: u32 = 1u;
const PAIR_NEW: u32 = 2u;
// In this step's pairs (a slot without it is free or its pair is not in the step: no entries).
const PAIR_PRESENT: u32 = 4u;
// Separated before tracing (rtcd::detect::separation_before_trace): no entries.
const PAIR_SEPARATED: u32 = 8u;
// Its motion rays' paths are traced on the device (motion_paths.wgsl): the pair was in its slot at
// the last step, at the pose its input gives as the previous one (Slot.last_q, last_t).
const PAIR_MOTION: u32 = 16u;
const PAIR_FLAG_BITS: u32 = 5u;

// Record.triangle: bit 31 set for a prediction.
const RECORD_PREDICTION: u32 = 0x80000000u;

// Counters (indices into the counters array).
const COUNT_STANDARD_RAYS: u32 = 0u;
const COUNT_ITERATIVE_RAYS: u32 = 1u;
const COUNT_PREDICTIVE_RAYS: u32 = 2u;
const COUNT_ITERATIVE_HITS: u32 = 3u;
const COUNT_WALK_STEPS: u32 = 4u;
const COUNT_EDGE_RAYS: u32 = 5u;
// Vertex rays' prediction records kept for the next step (compact.wgsl; read back or not).
const COUNT_PREDICTION_RECORDS: u32 = 6u;
// Per-slot counts pair_end.wgsl reports to the host (vertex records, edge records and the edges at
// prediction records, each per direction).
const SLOT_COUNTS: u32 = 6u;
// Motion hits appended to motion_hits (motion_paths.wgsl), also those beyond its length.
const COUNT_MOTION_HITS: u32 = 7u;
// Motion paths traced (motion_paths.wgsl).
const COUNT_MOTION_PATHS: u32 = 8u;
const COUNTERS: u32 = 10u;


// A mesh vertex: position and exit distance (w), outward normal and the mesh's bounding-box diagonal
// (w: with the pair's culling_dist, how far its rays reach into a solid-behind mesh, or a closed one
// with the closed reach, rtcd::detect::solid_reach).
struct Vertex {
    p: vec4<f32>,
    n: vec4<f32>,
}

// A triangle: mesh-local vertex indices, neighbours across edges (v0 v1), (v1 v2), (v2 v0), and its
// outward unit normal.
struct Triangle {
    v: vec4<u32>,
    adj: vec4<u32>,
    n: vec4<f32>,
}

// rtcd::bvh::BvhNode, 32 bytes.
struct BvhNode {
    min_x: f32,
    min_y: f32,
    min_z: f32,
    miss: u32,
    max_x: f32,
    max_y: f32,
    max_z: f32,
    leaf: u32,
}

// Where a mesh lives in the shared geometry buffers.
struct MeshRef {
    vertex_offset: u32,
    vertex_count: u32,
    triangle_offset: u32,
    triangle_count: u32,
    bvh_offset: u32,
    bvh_count: u32,
    // 1 for a box (rtcd::RtcdMesh::cuboid, centred on its frame's origin): vertices of the other mesh
    // get exact contacts against it (shaders/cuboid.wgsl), not rays. 0 otherwise.
    cuboid: u32,
    // How far the other mesh's vertex rays into this mesh count a back-face hit: REACH_SOLID_BEHIND for
    // a surface that is solid behind its back side (a level chunk, rtcd::RtcdMesh::solid_behind), set
    // with the mesh; REACH_CLOSED for a closed mesh whose pair takes the closed reach
    // (rtcd::detect::closed_reach_into, rtcd::RtcdParams::closed_reach), set in each Pair's copy. Either:
    // within the larger of the vertex's exit distance and the solid reach (shaders/hermann.wgsl
    // ray_limit); REACH_CLOSED: beyond the exit distance, only the nearer way out (trace_standard.wgsl
    // nearer_way_out). 0: the exit distance (Hermann 2008 Alg. 1).
    solid_behind: u32,
    // The mesh's edges (rtcd::RtcdMesh::edges) in the edges buffer (edge_geometry.wgsl): first, count;
    // how many of them, the first ones, are long and sharp (rtcd::RtcdMesh::predicting_edges).
    edge_offset: u32,
    edge_count: u32,
    strong_edges: u32,
    // Where its vertices' edge lists start in the vertex-edge offsets (vertex_count + 1 of them, each
    // an index into the vertex-edge list).
    vertex_edge_offset: u32,
}

// MeshRef.solid_behind bits.
const REACH_SOLID_BEHIND: u32 = 1u;
const REACH_CLOSED: u32 = 2u;

// A body's world pose (quaternion xyzw, translation xyz), uploaded every step by body slot: the
// pairs' relative poses are made of them on the device (pair_assemble.wgsl).
struct Body {
    q: vec4<f32>,
    t: vec4<f32>,
}

// The bodies and kind of the pair in a pair-table slot: uploaded when the pair is new in its slot or
// its bodies' slots changed, kept on the device by slot (pair_links.wgsl).
struct PairLink {
    slot: u32,
    // Shape 1's body and shape 2's (Body slots).
    body_a: u32,
    body_b: u32,
    // The pair's PairStatic among the kinds (one per pair of meshes).
    kind: u32,
}

// A pair's step, made on the device for each pair-table slot (pair_assemble.wgsl): its relative pose
// from its bodies' poses, its flags (uploaded, 4 bits a slot), its entries (standard: the meshes' vertex
// counts; iterative: the slot's record counts; none when separated or absent) and, after the scan of the
// entries over the slots (pair_layout.wgsl), its first entry.
struct PairStep {
    // Shape 2's pose in shape 1's frame (quaternion xyzw, translation xyz).
    pose12_q: vec4<f32>,
    pose12_t: vec4<f32>,
    // The pair-table slot (the pair's index in the step).
    slot: u32,
    // PAIR_PRESENT, PAIR_STANDARD, PAIR_NEW, PAIR_SEPARATED.
    flags: u32,
    // First entry of this pair in the flattened ray list, and entries per direction.
    entry_offset: u32,
    entries_a: u32,
    entries_b: u32,
    // Edge rays per direction, after the vertex rays (edge_step.wgsl).
    edges_a: u32,
    edges_b: u32,
    pad_c: u32,
}

// What pair_assemble.wgsl derives of a pair each step from its PairStep and PairStatic, with the
// host's operations (rtcd::Pose::inverse, rtcd::detect::vertex_candidate_region).
struct PairFrame {
    // Shape 1's pose in shape 2's frame: the inverse of PairStep's pose12.
    pose21_q: vec4<f32>,
    pose21_t: vec4<f32>,
    // Candidate regions: shape 1's vertices (shape 1's frame), shape 2's vertices (shape 2's frame).
    region_a_min: vec4<f32>,
    region_a_max: vec4<f32>,
    region_b_min: vec4<f32>,
    region_b_max: vec4<f32>,
}

// What a pair keeps for as long as it holds its slot (its meshes and lengths decide it): uploaded
// once, when the pair is new in its slot, and kept on the device by slot.
struct PairStatic {
    // Reach boxes (rtcd::detect::reach_box): shape 1's in its frame (direction 1's rays start in it or
    // are skipped), shape 2's in its frame (direction 0's); ±f32::MAX for an open mesh.
    reach_a_min: vec4<f32>,
    reach_a_max: vec4<f32>,
    reach_b_min: vec4<f32>,
    reach_b_max: vec4<f32>,
    // Solid-behind boxes (rtcd::detect::solid_behind_box): into a solid-behind shape 1 (direction 1's
    // rays) or shape 2 (direction 0's), in its frame, where a vertex is behind the surface and its ray
    // takes the solid reach (pairs.wgsl reach_flags); ±f32::MAX where the mesh is not solid behind.
    behind_a_min: vec4<f32>,
    behind_a_max: vec4<f32>,
    behind_b_min: vec4<f32>,
    behind_b_max: vec4<f32>,
    // What the candidate regions are made of (rtcd::detect::vertex_candidate_region): each mesh's
    // bounding box in its frame, and the box each direction's region is clipped to, in the hit mesh's
    // frame (its bounding box, or its solid-behind box at the solid reach): clip_b for direction 0
    // (shape 2's frame), clip_a for direction 1 (shape 1's frame).
    box_a_min: vec4<f32>,
    box_a_max: vec4<f32>,
    box_b_min: vec4<f32>,
    box_b_max: vec4<f32>,
    clip_a_min: vec4<f32>,
    clip_a_max: vec4<f32>,
    clip_b_min: vec4<f32>,
    clip_b_max: vec4<f32>,
    mesh_a: MeshRef,
    mesh_b: MeshRef,
    // The pair's culling_dist (2014 Eq. 1) and max_it (2013 Eq. 1): each pair has its own lengths.
    culling_dist: f32,
    max_it: u32,
    // The pair's candidate extension (rtcd::RtcdParams::candidate_extension).
    candidate_extension: f32,
    // The motion rays (rtcd::detect::pair_motion_contacts, motion_paths.wgsl): each direction's
    // floor (rtcd::detect::MotionLengths::floor: no shorter path is traced, a rim vertex's aside;
    // motion_floor_b for direction 1, motion_floor for direction 0), each mesh's
    // rtcd::RtcdMesh::max_radius (IRTCD 2013 Eq. 2's radii), whether each direction's vertices count
    // their own body's thickness (bit 0: shape 1's vertices, bit 1: shape 2's;
    // rtcd::detect::motion_lengths), the least motion of each direction's vertices that needs a
    // path, and the other body's half thickness.
    motion_floor_b: f32,
    radius_a: f32,
    radius_b: f32,
    motion_floor: f32,
    motion_own: u32,
    least_a: f32,
    least_b: f32,
    other_a: f32,
    other_b: f32,
}

// One pair of one step: its step record, what is derived of it, and its statics, put together on the
// device (pair_assemble.wgsl).
struct Pair {
    step: PairStep,
    frame: PairFrame,
    statics: PairStatic,
}

// A pair-table slot: the state kept between steps.
struct Slot {
    // Reference relative pose (t_ni, q_ni) of the last standard step; ref_t.w = 1 when set.
    ref_q: vec4<f32>,
    ref_t: vec4<f32>,
    // Records of each direction in the records buffer.
    rec_offset_a: u32,
    rec_count_a: u32,
    rec_offset_b: u32,
    rec_count_b: u32,
    // Edge records (the edges kept between steps, edge_step.wgsl) of each direction in the records
    // buffer.
    edge_offset_a: u32,
    edge_count_a: u32,
    edge_offset_b: u32,
    edge_count_b: u32,
    // The pair's relative pose at the last step it was in (pair_end.wgsl), the start of its vertices'
    // paths this step (motion_paths.wgsl); last_t.w = 1 once set.
    last_q: vec4<f32>,
    last_t: vec4<f32>,
}

// A pair's motion rays this step, made by pair_assemble.wgsl for a slot with PAIR_MOTION: each
// direction's map into the other mesh's frame one step earlier (direction 0: shape 1's vertices into
// shape 2's frame), the region its vertices' paths start in (rtcd::detect::candidate_region grown
// by twice the pair's displacement bound, in the casting mesh's frame), and how many vertices each
// direction lays out (its mesh's, or 0 when no vertex moved far enough).
struct MotionPlan {
    was_a_q: vec4<f32>,
    was_a_t: vec4<f32>,
    was_b_q: vec4<f32>,
    was_b_t: vec4<f32>,
    region_a_min: vec4<f32>,
    region_a_max: vec4<f32>,
    region_b_min: vec4<f32>,
    region_b_max: vec4<f32>,
    paths_a: u32,
    paths_b: u32,
    pad_a: u32,
    pad_b: u32,
}

// A vertex's path that met a front face first (motion_paths.wgsl): the slot << 1 | direction, the
// vertex, the face met and how far along the path from where the vertex was (rtcd::detect::MotionHit).
// The slots that traced paths are marked in a bitmap (pair_end.wgsl): those pairs are moving.
struct MotionHit {
    slot_dir: u32,
    vertex: u32,
    triangle: u32,
    t: f32,
}

// What a ray remembers between steps.
struct Record {
    vertex: u32,
    // Triangle | RECORD_PREDICTION.
    triangle: u32,
}

// One traced ray (one entry of the flattened list).
struct EntryHit {
    triangle: u32,
    t: f32,
    // outcome | ray kind << 2 | direction << 4
    kind: u32,
    vertex: u32,
}

// One compacted contact or prediction, as it is read back: the ray that found it. The host makes the
// contact from it and the meshes it keeps (the vertex, its normal, the triangle's normal, the pair's
// pose), with the CPU backend's re-projection (crates/rtcd_wgpu/src/narrow_phase.rs, candidate_of).
struct ContactOut {
    // pair index << CONTACT_KIND_BITS | kind (EntryHit.kind)
    pair_kind: u32,
    vertex: u32,
    triangle: u32,
    // Ray parameter of the hit (EntryHit.t).
    t: f32,
}

// ContactOut.pair_kind: the low bits hold EntryHit.kind (outcome, ray kind, direction, ENTRY_RECORD_ONLY).
const CONTACT_KIND_BITS: u32 = 6u;

// Step constants.
struct Params {
    // Pair links uploaded this step (pair_links.wgsl); the pairs carry their lengths
    // (Pair.statics.culling_dist, max_it).
    link_count: u32,
    // The step's prediction distance (StepOptions::prediction_distance): flag_entries.wgsl marks
    // the predictions surely beyond it.
    prediction_distance: f32,
    prediction: u32,
    reprojection: u32,
    // Pair-table slots this step (the pairs are indexed by slot).
    pair_count: u32,
    entry_count: u32,
    // Edge rays on (rtcd::RtcdParams::edge_rays).
    edge_rays: u32,
    // Every record read back, record-only predictions too (the debug rays); else those that make
    // contacts.
    read_all: u32,
}

// Scan constants.
struct ScanParams {
    n: u32,
    pad_a: u32,
    pad_b: u32,
    pad_c: u32,
}

// What an edge ray found (EdgeOut.kind; rtcd::detect::EdgeTest).
const EDGE_APART: u32 = 0u;
const EDGE_TOUCHING: u32 = 1u;
const EDGE_CROSSING: u32 = 2u;

// An edge ray of the step to trace (edge_select.wgsl, edge_step.wgsl): its entry, the edge in the
// casting mesh, the pair and direction.
struct EdgeJob {
    entry: u32,
    edge: u32,
    pair: u32,
    dir: u32,
}

// One edge ray (Mochi 2024 §3.4): the edge of `from` between its vertices a and b, against `to`;
// (q, t) maps `from`'s frame into `to`'s.
struct EdgeTask {
    q: vec4<f32>,
    t: vec4<f32>,
    from_mesh: MeshRef,
    to_mesh: MeshRef,
    a: u32,
    b: u32,
    pad_a: u32,
    pad_b: u32,
}

// What an edge ray found (rtcd::detect::EdgeCrossing), in `to`'s frame: the kind, the entry
// triangle, the depth along the normal, whether the edge passes right through (no ridge), the point
// (xyz) and the normal (xyz); for a pass through, the other ways out, nearest first: their triangles
// (NONE for none) and their normals (xyz) with depths (w).
struct EdgeOut {
    kind: u32,
    triangle: u32,
    depth: f32,
    through: u32,
    point: vec4<f32>,
    normal: vec4<f32>,
    exit_triangles: vec4<u32>,
    exit_a: vec4<f32>,
    exit_b: vec4<f32>,
    exit_c: vec4<f32>,
}
