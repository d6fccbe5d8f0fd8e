// Kernel, one thread per entry: the records (contacts and predictions) are packed densely at their
// kept offsets as the next step's records (the pair state that stays on the GPU), and those
// flag_entries.wgsl marked to read back at their read offsets, as the rays that found them (16 bytes
// each; the host makes the contacts), so readback grows with the contacts, not the rays nor the
// records. Each record also gets the edges its next step's edge rays test from it (Mochi 2024 §3.4):
// the casting vertex's edges for a vertex ray's prediction, else 0 (rec_edges, scanned by the next
// step). And each slot sums those edges per direction (edge_sums, two a slot; pair_end.wgsl reports
// them with its record counts), and the step counts its prediction records: the host no longer sees
// the records it does not read back. They are counted before the outputs' bounds, so a step whose
// outputs overflow counts them all (a second compaction's counts are not read).
#import rtcd::types::{EntryHit, Record, ContactOut, RECORD_PREDICTION, OUTCOME_CONTACT, OUTCOME_PREDICTION, CONTACT_KIND_BITS, ENTRY_RECORD_ONLY, RAY_EDGE, COUNT_PREDICTION_RECORDS, COUNTERS}
#import rtcd::edge_geometry::vertex_degree
#import rtcd::math::linear_index
#import rtcd::pairs::{pairs, params, find_pair, from_mesh}

@group(0) @binding(7) var<storage, read> entries: array<EntryHit>;
@group(0) @binding(8) var<storage, read_write> counters: array<atomic<u32>, COUNTERS>;
@group(0) @binding(9) var<storage, read> offsets: array<u32>;
@group(0) @binding(10) var<storage, read_write> next_records: array<Record>;
@group(0) @binding(11) var<storage, read_write> contacts: array<ContactOut>;
@group(0) @binding(22) var<storage, read_write> rec_edges: array<u32>;
@group(0) @binding(27) var<storage, read> read_offsets: array<u32>;
@group(0) @binding(28) var<storage, read_write> edge_sums: array<atomic<u32>>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = linear_index(wg, nwg, li);
    if (i >= params.entry_count) {
        return;
    }
    let hit = entries[i];
    let outcome = hit.kind & 3u;
    if (outcome != OUTCOME_CONTACT && outcome != OUTCOME_PREDICTION) {
        return;
    }
    let prediction = outcome == OUTCOME_PREDICTION;
    let kind = hit.kind & ((1u << CONTACT_KIND_BITS) - 1u);
    let dir = (kind >> 4u) & 1u;
    let p = find_pair(i);
    var edges = 0u;
    if (prediction && ((kind >> 2u) & 3u) != RAY_EDGE) {
        edges = vertex_degree(from_mesh(pairs[p], dir), hit.vertex);
        atomicAdd(&edge_sums[2u * p + dir], edges);
        atomicAdd(&counters[COUNT_PREDICTION_RECORDS], 1u);
    }
    // The outputs are sized from an estimate; past it, nothing is written and the host grows the
    // buffers and runs this pass again (the scans and the entries are still valid).
    let o = offsets[i];
    if (o < arrayLength(&next_records) && o < arrayLength(&rec_edges)) {
        next_records[o] = Record(hit.vertex, hit.triangle | select(0u, RECORD_PREDICTION, prediction));
        rec_edges[o] = edges;
    }
    let back = params.read_all != 0u || outcome == OUTCOME_CONTACT || (kind & ENTRY_RECORD_ONLY) == 0u;
    let r = read_offsets[i];
    if (back && r < arrayLength(&contacts)) {
        contacts[r] = ContactOut(p << CONTACT_KIND_BITS | kind, hit.vertex, hit.triangle, hit.t);
    }
}
