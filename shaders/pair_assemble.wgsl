// Kernel, one thread per pair, first of the step: the step's Pair from what the host uploaded of it
// this step (PairStep: its relative pose and layout) and what it keeps by slot (PairStatic), stored
// at the slot when the pair is new in it. The host uploads a pair's boxes, meshes and lengths once,
// not every step; the inverse pose and the vertex candidate regions (Hermann 2008 §3.2 with the
// 2014 extension, rtcd::detect::vertex_candidate_region) are derived here, with the host's
// operations, from the pose and those boxes.
#import rtcd::types::{Pair, PairFrame, PairStep, PairStatic, Params, PAIR_NEW}
#import rtcd::math::{linear_index, inverse_q, inverse_t, Box, box_transformed}

@group(0) @binding(3) var<storage, read_write> pairs: array<Pair>;
@group(0) @binding(4) var<uniform> params: Params;
@group(0) @binding(12) var<storage, read> steps: array<PairStep>;
@group(0) @binding(13) var<storage, read> new_statics: array<PairStatic>;
@group(0) @binding(14) var<storage, read_write> statics: array<PairStatic>;

// The candidate region of the vertices of a mesh whose box is `own` (its frame): the overlap with
// `clip` (the other mesh's box, in that mesh's frame, brought over by the transform q, t) grown by
// `extension` (rtcd::Aabb::intersection, then extended).
fn region(own: Box, clip: Box, q: vec4<f32>, t: vec4<f32>, extension: f32) -> Box {
    let c = box_transformed(clip, q, t);
    let lo = max(own.lo, c.lo) - vec3<f32>(extension);
    let hi = min(own.hi, c.hi) + vec3<f32>(extension);
    return Box(lo, hi);
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let p = linear_index(wg, nwg, li);
    if (p >= params.pair_count) {
        return;
    }
    let s = steps[p];
    var st: PairStatic;
    if ((s.flags & PAIR_NEW) != 0u) {
        st = new_statics[s.static_index];
        statics[s.slot] = st;
    } else {
        st = statics[s.slot];
    }
    // pos21 = pos12.inverse(); shape 1's region takes shape 2's clip box through pos21.inverse(), and
    // shape 2's takes shape 1's through pos12.inverse(), as the host computes them.
    let q21 = inverse_q(s.pose12_q);
    let t21 = inverse_t(s.pose12_q, s.pose12_t);
    let e = st.candidate_extension;
    let a = region(
        Box(st.box_a_min.xyz, st.box_a_max.xyz),
        Box(st.clip_b_min.xyz, st.clip_b_max.xyz),
        inverse_q(q21),
        inverse_t(q21, t21),
        e,
    );
    let b = region(Box(st.box_b_min.xyz, st.box_b_max.xyz), Box(st.clip_a_min.xyz, st.clip_a_max.xyz), q21, t21, e);
    let frame = PairFrame(
        q21,
        t21,
        vec4<f32>(a.lo, 0.0),
        vec4<f32>(a.hi, 0.0),
        vec4<f32>(b.lo, 0.0),
        vec4<f32>(b.hi, 0.0),
    );
    pairs[p] = Pair(s, frame, st);
}
