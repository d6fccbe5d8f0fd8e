// Kernel, one thread per pair-table slot (those whose pair is not in the step are passed over): after
// compaction, each direction's vertex records, then each direction's edge records, form contiguous
// ranges of the new records buffer; store them in the pair's slot for the next step's iterative walk
// and edge rays.
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
    let st = pair.step;
    let a = offsets[st.entry_offset];
    let b = offsets[st.entry_offset + st.entries_a];
    let c = offsets[st.entry_offset + st.entries_a + st.entries_b];
    let d = offsets[st.entry_offset + st.entries_a + st.entries_b + st.edges_a];
    let e = offsets[st.entry_offset + st.entries_a + st.entries_b + st.edges_a + st.edges_b];
    slots[st.slot].rec_offset_a = a;
    slots[st.slot].rec_count_a = b - a;
    slots[st.slot].rec_offset_b = b;
    slots[st.slot].rec_count_b = c - b;
    slots[st.slot].edge_offset_a = c;
    slots[st.slot].edge_count_a = d - c;
    slots[st.slot].edge_offset_b = d;
    slots[st.slot].edge_count_b = e - d;
}
