// Kernel, one thread per pair link uploaded this step, first of the step: the bodies and kind of each
// pair new in its slot, or whose bodies' slots changed, stored at its slot, where they stay for as long
// as the pair holds it.
#import rtcd::types::{PairLink, Params}
#import rtcd::math::linear_index

@group(0) @binding(4) var<uniform> params: Params;
@group(0) @binding(14) var<storage, read_write> links: array<PairLink>;
@group(0) @binding(16) var<storage, read> changes: array<PairLink>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = linear_index(wg, nwg, li);
    if (i >= params.link_count) {
        return;
    }
    let c = changes[i];
    links[c.slot] = c;
}
