// Kernel, one thread per pair-table slot, after the exclusive scan of the slots' entry counts: each
// pair's first entry in the flattened ray list (IRTCD 2013 §3.5's pair × vertex layout, laid out on the
// device: the host uploads no per-pair offsets).
#import rtcd::types::{Pair, Params}
#import rtcd::math::linear_index

@group(0) @binding(3) var<storage, read_write> pairs: array<Pair>;
@group(0) @binding(4) var<uniform> params: Params;
@group(0) @binding(9) var<storage, read> offsets: array<u32>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let p = linear_index(wg, nwg, li);
    if (p >= params.pair_count) {
        return;
    }
    pairs[p].step.entry_offset = offsets[p];
}
