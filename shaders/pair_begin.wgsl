// Kernel, one thread per pair-table slot (those whose pair is not in the step are passed over): resets
// the slot of a new pair and records the reference relative pose (t_ni, q_ni) of a pair traced with the
// standard tracer this step (IRTCD 2013 Eq. 2).
#import rtcd::types::{Slot, PAIR_STANDARD, PAIR_NEW, PAIR_PRESENT}
#import rtcd::math::linear_index
#import rtcd::pairs::{pairs, params}

@group(0) @binding(5) var<storage, read_write> slots: array<Slot>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let p = linear_index(wg, nwg, li);
    if (p >= params.pair_count) {
        return;
    }
    let pair = pairs[p];
    if ((pair.step.flags & PAIR_PRESENT) == 0u) {
        return;
    }
    var slot = slots[pair.step.slot];
    if ((pair.step.flags & PAIR_NEW) != 0u) {
        slot = Slot(vec4<f32>(0.0, 0.0, 0.0, 1.0), vec4<f32>(0.0), 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, vec4<f32>(0.0, 0.0, 0.0, 1.0), vec4<f32>(0.0));
    }
    if ((pair.step.flags & PAIR_STANDARD) != 0u) {
        slot.ref_q = pair.step.pose12_q;
        slot.ref_t = vec4<f32>(pair.step.pose12_t.xyz, 1.0);
    }
    slots[pair.step.slot] = slot;
}
