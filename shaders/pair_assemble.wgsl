// Kernel, one thread per pair, first of the step: the step's Pair from what the host uploaded of it
// this step (PairStep) and what it keeps by slot (PairStatic), stored at the slot when the pair is
// new in it. The host uploads a pair's reach boxes, meshes and lengths once, not every step.
#import rtcd::types::{Pair, PairStep, PairStatic, Params, PAIR_NEW}
#import rtcd::math::linear_index

@group(0) @binding(3) var<storage, read_write> pairs: array<Pair>;
@group(0) @binding(4) var<uniform> params: Params;
@group(0) @binding(12) var<storage, read> steps: array<PairStep>;
@group(0) @binding(13) var<storage, read> new_statics: array<PairStatic>;
@group(0) @binding(14) var<storage, read_write> statics: array<PairStatic>;

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
    pairs[p] = Pair(s, st);
}
