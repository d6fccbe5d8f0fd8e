// Kernel, one thread per entry: contacts and predictions are packed densely at their scanned offsets,
// both as the next step's records (the pair state that stays on the GPU) and as the rays that found
// them (what is read back, 16 bytes each; the host makes the contacts), so readback grows with
// contacts, not rays.
#import rtcd::types::{EntryHit, Record, ContactOut, RECORD_PREDICTION, OUTCOME_CONTACT, OUTCOME_PREDICTION, CONTACT_KIND_BITS}
#import rtcd::math::linear_index
#import rtcd::pairs::{params, find_pair}

@group(0) @binding(7) var<storage, read> entries: array<EntryHit>;
@group(0) @binding(9) var<storage, read> offsets: array<u32>;
@group(0) @binding(10) var<storage, read_write> next_records: array<Record>;
@group(0) @binding(11) var<storage, read_write> contacts: array<ContactOut>;

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
    let o = offsets[i];
    // The outputs are sized from an estimate; past it, nothing is written and the host grows the
    // buffers and runs this pass again (the scan and the entries are still valid).
    if (o >= arrayLength(&next_records) || o >= arrayLength(&contacts)) {
        return;
    }
    let prediction = outcome == OUTCOME_PREDICTION;
    next_records[o] = Record(hit.vertex, hit.triangle | select(0u, RECORD_PREDICTION, prediction));
    let kind = hit.kind & ((1u << CONTACT_KIND_BITS) - 1u);
    contacts[o] = ContactOut(find_pair(i) << CONTACT_KIND_BITS | kind, hit.vertex, hit.triangle, hit.t);
}
