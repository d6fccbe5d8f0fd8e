// Kernel, one thread per pair-table slot (and one more), after pair_links: the step's Pair of each slot
// from what the device keeps and the host uploaded this step. The relative pose is made of the two
// bodies' world poses (rtcd::Pose::inv_mul); the inverse pose and the vertex candidate regions
// (Hermann 2008 §3.2 with the 2014 extension, rtcd::detect::vertex_candidate_region) are derived from
// it and the boxes of the pair's kind, with the host's operations; the flags come from the 5 bits the
// host uploads for each slot (the tracer it decided by IRTCD 2013 Eq. 2, the separation test); the
// entries from the flags, the kind's meshes and the slot's record counts. Writes each slot's entry
// count for the scan that lays the pairs out (the extra last element is 0, so the scan ends with the
// total). A slot whose pair is not in the step gets no entries.
//
// A slot with PAIR_MOTION also gets its motion rays' plan (rtcd::detect::pair_motion_contacts, with
// the host's operations): its pose one step earlier is its slot's last one, the pair's displacement
// bound since then (IRTCD 2013 Eq. 2's, rtcd::detect::max_displacement), and each direction that
// moved more than its vertices' least motion lays out all its vertices in its region; the counts are
// scanned like the entries, and motion_paths.wgsl traces them.
//
// After the vertex rays come the pair's edge rays (Mochi 2024 §3.4, edge_select.wgsl), per direction:
// a standard step's are every edge of the casting mesh (the thread tests the candidate region); an
// iterative step's are the edges at its vertex records that are predictions (not in contact), then its
// edge records. compact.wgsl wrote each record's edges at prediction records (0 for the others), and
// their exclusive scan over all records (rec_edges) gives a direction's sum as a difference, with no
// loop over its records.
#import rtcd::types::{Pair, PairFrame, PairStep, PairStatic, PairLink, Body, Slot, Params, MotionPlan, PAIR_STANDARD, PAIR_PRESENT, PAIR_SEPARATED, PAIR_MOTION, PAIR_FLAG_BITS}
#import rtcd::math::{linear_index, inverse_q, inverse_t, quat_mul, quat_rotate, Box, box_transformed}

@group(0) @binding(3) var<storage, read_write> pairs: array<Pair>;
@group(0) @binding(4) var<uniform> params: Params;
@group(0) @binding(5) var<storage, read> slots: array<Slot>;
@group(0) @binding(9) var<storage, read_write> counts: array<u32>;
@group(0) @binding(12) var<storage, read> slot_flags: array<u32>;
@group(0) @binding(13) var<storage, read> bodies: array<Body>;
@group(0) @binding(14) var<storage, read> links: array<PairLink>;
@group(0) @binding(15) var<storage, read> kinds: array<PairStatic>;
@group(0) @binding(22) var<storage, read> rec_edges: array<u32>;
// 1 for a slot with entries (its counts come back, pair_end.wgsl), else 0; scanned after.
@group(0) @binding(29) var<storage, read_write> reporting: array<u32>;
// Each slot's motion paths (0 without), then (scanned) its first; one more element holds the total.
@group(0) @binding(31) var<storage, read_write> motion_counts: array<u32>;
@group(0) @binding(32) var<storage, read_write> motion_plans: array<MotionPlan>;
// 1 for each slot that traced a motion path this step (motion_paths.wgsl), cleared here.
@group(0) @binding(33) var<storage, read_write> motion_traced: array<u32>;

// The edges at the prediction records among `count` records from `first`.
fn record_edges(first: u32, count: u32) -> u32 {
    return rec_edges[first + count] - rec_edges[first];
}

// The candidate region of the vertices of a mesh whose box is `own` (its frame): the overlap with
// `clip` (the other mesh's box, in that mesh's frame, brought over by the transform q, t) grown by
// `extension` (rtcd::Aabb::intersection, then extended).
fn region(own: Box, clip: Box, q: vec4<f32>, t: vec4<f32>, extension: f32) -> Box {
    let c = box_transformed(clip, q, t);
    let lo = max(own.lo, c.lo) - vec3<f32>(extension);
    let hi = min(own.hi, c.hi) + vec3<f32>(extension);
    return Box(lo, hi);
}

// rtcd::detect::max_displacement between a reference pose and the current one (shape 2 in shape
// 1's frame), with the radii of shape 1's and shape 2's meshes.
fn max_displacement(rq: vec4<f32>, rt: vec4<f32>, cq: vec4<f32>, ct: vec4<f32>, r1: f32, r2: f32) -> f32 {
    let q = quat_mul(inverse_q(rq), cq);
    let angle = 2.0 * atan2(length(q.xyz), abs(q.w));
    let in_frame1 = length(rt.xyz - ct.xyz) + angle * r2;
    let in_frame2 = length(inverse_t(rq, rt).xyz - inverse_t(cq, ct).xyz) + angle * r1;
    return min(in_frame1, in_frame2);
}

// The motion rays' plan of slot p at pose12 (q, t); returns its paths (motion_plans[p] written when
// there are any).
fn plan_motion(p: u32, st: PairStatic, q: vec4<f32>, t: vec4<f32>, q21: vec4<f32>, t21: vec4<f32>) -> u32 {
    let last = slots[p];
    let bound = max_displacement(last.last_q, last.last_t, q, t, st.radius_a, st.radius_b);
    // Not finite (NaN included): no path.
    if (!(abs(bound) <= 3.402823e38)) {
        return 0u;
    }
    let ext = 2.0 * bound;
    // Direction 0: shape 1's box against shape 2's brought into shape 1's frame (through
    // pos21.inverse(), as the host inverts its direction's map); direction 1: the reverse.
    let ra = region(Box(st.box_a_min.xyz, st.box_a_max.xyz), Box(st.box_b_min.xyz, st.box_b_max.xyz),
        inverse_q(q21), inverse_t(q21, t21), ext);
    let rb = region(Box(st.box_b_min.xyz, st.box_b_max.xyz), Box(st.box_a_min.xyz, st.box_a_max.xyz), q21, t21, ext);
    var paths_a = 0u;
    var paths_b = 0u;
    if (bound > st.least_a && all(ra.lo <= ra.hi)) {
        paths_a = st.mesh_a.vertex_count;
    }
    if (bound > st.least_b && all(rb.lo <= rb.hi)) {
        paths_b = st.mesh_b.vertex_count;
    }
    if (paths_a + paths_b > 0u) {
        motion_plans[p] = MotionPlan(
            inverse_q(last.last_q),
            inverse_t(last.last_q, last.last_t),
            last.last_q,
            vec4<f32>(last.last_t.xyz, 0.0),
            vec4<f32>(ra.lo, 0.0),
            vec4<f32>(ra.hi, 0.0),
            vec4<f32>(rb.lo, 0.0),
            vec4<f32>(rb.hi, 0.0),
            paths_a,
            paths_b,
            0u,
            0u,
        );
    }
    return paths_a + paths_b;
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let p = linear_index(wg, nwg, li);
    if (p >= params.pair_count) {
        if (p == params.pair_count) {
            counts[p] = 0u;
            reporting[p] = 0u;
            motion_counts[p] = 0u;
        }
        return;
    }
    motion_traced[p] = 0u;
    motion_counts[p] = 0u;
    let per_word = 32u / PAIR_FLAG_BITS;
    let flags = (slot_flags[p / per_word] >> ((p % per_word) * PAIR_FLAG_BITS)) & ((1u << PAIR_FLAG_BITS) - 1u);
    var step = PairStep(vec4<f32>(0.0, 0.0, 0.0, 1.0), vec4<f32>(0.0), p, flags, 0u, 0u, 0u, 0u, 0u, 0u);
    if ((flags & PAIR_PRESENT) == 0u) {
        pairs[p].step = step;
        counts[p] = 0u;
        reporting[p] = 0u;
        return;
    }
    let link = links[p];
    let st = kinds[link.kind];
    // pos12 = pose1.inverse() * pose2.
    let a = bodies[link.body_a];
    let b = bodies[link.body_b];
    let qa = inverse_q(a.q);
    let ta = inverse_t(a.q, a.t);
    step.pose12_q = quat_mul(qa, b.q);
    step.pose12_t = vec4<f32>(quat_rotate(qa, b.t.xyz) + ta.xyz, 0.0);
    if ((flags & PAIR_SEPARATED) == 0u) {
        if ((flags & PAIR_STANDARD) != 0u) {
            step.entries_a = st.mesh_a.vertex_count;
            step.entries_b = st.mesh_b.vertex_count;
        } else {
            step.entries_a = slots[p].rec_count_a;
            step.entries_b = slots[p].rec_count_b;
        }
        if (params.edge_rays != 0u) {
            if ((flags & PAIR_STANDARD) != 0u) {
                step.edges_a = st.mesh_a.edge_count;
                step.edges_b = st.mesh_b.edge_count;
            } else {
                let slot = slots[p];
                step.edges_a = record_edges(slot.rec_offset_a, slot.rec_count_a) + slot.edge_count_a;
                step.edges_b = record_edges(slot.rec_offset_b, slot.rec_count_b) + slot.edge_count_b;
            }
        }
    }
    counts[p] = step.entries_a + step.entries_b + step.edges_a + step.edges_b;
    reporting[p] = select(0u, 1u, counts[p] > 0u);
    // pos21 = pos12.inverse(); shape 1's region takes shape 2's clip box through pos21.inverse(), and
    // shape 2's takes shape 1's through pos12.inverse(), as the host computes them.
    let q21 = inverse_q(step.pose12_q);
    let t21 = inverse_t(step.pose12_q, step.pose12_t);
    let e = st.candidate_extension;
    let ra = region(
        Box(st.box_a_min.xyz, st.box_a_max.xyz),
        Box(st.clip_b_min.xyz, st.clip_b_max.xyz),
        inverse_q(q21),
        inverse_t(q21, t21),
        e,
    );
    let rb = region(Box(st.box_b_min.xyz, st.box_b_max.xyz), Box(st.clip_a_min.xyz, st.clip_a_max.xyz), q21, t21, e);
    if ((flags & PAIR_MOTION) != 0u) {
        motion_counts[p] = plan_motion(p, st, step.pose12_q, step.pose12_t, q21, t21);
    }
    let frame = PairFrame(
        q21,
        t21,
        vec4<f32>(ra.lo, 0.0),
        vec4<f32>(ra.hi, 0.0),
        vec4<f32>(rb.lo, 0.0),
        vec4<f32>(rb.hi, 0.0),
    );
    pairs[p] = Pair(step, frame, st);
}
