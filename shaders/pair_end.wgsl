// Kernel, one thread per pair-table slot (those whose pair is not in the step are passed over): after
// compaction, each direction's vertex records, then each direction's edge records, form contiguous
// ranges of the new records buffer; store them in the pair's slot for the next step's iterative walk
// and edge rays. A slot with entries also reports, at its place among the step's slots with entries
// (the scan of pair_assemble.wgsl's flags), what its mirror on the host keeps: its vertex and edge
// records of each direction (those ranges' lengths) and the edges at each direction's prediction
// records (compact.wgsl's sums), SLOT_COUNTS numbers. A slot without entries has none. Each slot
// keeps the step's relative pose, where its vertices' paths start at the next step, and a slot that
// traced motion paths (motion_paths.wgsl) sets its bit in the moving slots' bitmap, read back.
#import rtcd::types::{Slot, PAIR_PRESENT, SLOT_COUNTS}
#import rtcd::math::linear_index
#import rtcd::pairs::{pairs, params}

@group(0) @binding(5) var<storage, read_write> slots: array<Slot>;
@group(0) @binding(9) var<storage, read> offsets: array<u32>;
@group(0) @binding(28) var<storage, read> edge_sums: array<u32>;
@group(0) @binding(29) var<storage, read> reporting: array<u32>;
@group(0) @binding(30) var<storage, read_write> reported: array<u32>;
@group(0) @binding(33) var<storage, read> motion_traced: array<u32>;
@group(0) @binding(36) var<storage, read_write> motion_moving: array<atomic<u32>>;

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
    slots[st.slot].last_q = st.pose12_q;
    slots[st.slot].last_t = vec4<f32>(st.pose12_t.xyz, 1.0);
    if (motion_traced[p] != 0u && p / 32u < arrayLength(&motion_moving)) {
        atomicOr(&motion_moving[p / 32u], 1u << (p % 32u));
    }
    if (st.entries_a + st.entries_b + st.edges_a + st.edges_b > 0u) {
        let at = SLOT_COUNTS * reporting[p];
        // The host sized the reports from its plan; a disagreement is reported by the laid-out
        // count, and nothing is written past the end.
        if (at + SLOT_COUNTS > arrayLength(&reported)) {
            return;
        }
        reported[at] = b - a;
        reported[at + 1u] = c - b;
        reported[at + 2u] = d - c;
        reported[at + 3u] = e - d;
        reported[at + 4u] = edge_sums[2u * p];
        reported[at + 5u] = edge_sums[2u * p + 1u];
    }
}
