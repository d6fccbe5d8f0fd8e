// Kernel, one thread per pair-table slot (those whose pair is not in the step are passed over): after
// compaction, each direction's records form one contiguous range of the new records buffer; store it in
// the pair's slot for the next step's iterative walk.
#import rtcd::types::{Slot, PAIR_PRESENT}
#import rtcd::math::linear_index
#import rtcd::pairs::{pairs, params}

@group(0) @binding(5) var<storage, read_write> slots: array<Slot>;
@group(0) @binding(9) var<storage, read> offsets: array<u32>;

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
    let a = offsets[pair.step.entry_offset];
    let b = offsets[pair.step.entry_offset + pair.step.entries_a];
    let c = offsets[pair.step.entry_offset + pair.step.entries_a + pair.step.entries_b];
    slots[pair.step.slot].rec_offset_a = a;
    slots[pair.step.slot].rec_count_a = b - a;
    slots[pair.step.slot].rec_offset_b = b;
    slots[pair.step.slot].rec_count_b = c - b;
}
