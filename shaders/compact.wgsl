// Kernel, one thread per entry: contacts and predictions are packed densely at their scanned offsets,
// both as the next step's records (the pair state that stays on the GPU) and as the rays that found
// them (what is read back, 16 bytes each; the host makes the contacts), so readback grows with
// contacts, not rays. A prediction whose re-projected distance (2014 §3.2, rtcd::contact::ray_depth)
// is surely beyond the step's prediction distance is marked ENTRY_RECORD_ONLY: the host keeps its
// record and makes no contact of it (it would drop the contact), so it does not re-project it.
// Each record also gets the edges its next step's edge rays test from it (Mochi 2024 §3.4): the
// casting vertex's edges for a vertex ray's prediction, else 0 (rec_edges, scanned by the next step).
#import rtcd::types::{EntryHit, Record, ContactOut, RECORD_PREDICTION, OUTCOME_CONTACT, OUTCOME_PREDICTION, CONTACT_KIND_BITS, ENTRY_RECORD_ONLY, RAY_EDGE}
#import rtcd::edge_geometry::vertex_degree
#import rtcd::math::{linear_index, quat_rotate}
#import rtcd::geometry::{vertex_of, triangle_of}
#import rtcd::pairs::{pairs, params, find_pair, from_mesh, to_mesh, from_to_q}

@group(0) @binding(7) var<storage, read> entries: array<EntryHit>;
@group(0) @binding(9) var<storage, read> offsets: array<u32>;
@group(0) @binding(10) var<storage, read_write> next_records: array<Record>;
@group(0) @binding(11) var<storage, read_write> contacts: array<ContactOut>;
@group(0) @binding(22) var<storage, read_write> rec_edges: array<u32>;

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
    if (o >= arrayLength(&next_records) || o >= arrayLength(&contacts) || o >= arrayLength(&rec_edges)) {
        return;
    }
    let prediction = outcome == OUTCOME_PREDICTION;
    next_records[o] = Record(hit.vertex, hit.triangle | select(0u, RECORD_PREDICTION, prediction));
    var kind = hit.kind & ((1u << CONTACT_KIND_BITS) - 1u);
    let p = find_pair(i);
    var edges = 0u;
    if (prediction && ((kind >> 2u) & 3u) != RAY_EDGE) {
        edges = vertex_degree(from_mesh(pairs[p], (kind >> 4u) & 1u), hit.vertex);
    }
    rec_edges[o] = edges;
    if (prediction && (kind & ENTRY_RECORD_ONLY) == 0u) {
        // The host's depth: |t| (dir · n) with re-projection, against a box or without it |t|;
        // "surely beyond" leaves room for the two sides' rounding.
        let pair = pairs[p];
        let dir = (kind >> 4u) & 1u;
        let to = to_mesh(pair, dir);
        var depth = abs(hit.t);
        if (params.reprojection != 0u && to.cuboid == 0u) {
            let n = vertex_of(from_mesh(pair, dir), hit.vertex).n.xyz;
            let d = quat_rotate(from_to_q(pair, dir), -n);
            depth = abs(hit.t) * dot(d, triangle_of(to, hit.triangle).n.xyz);
        }
        let pd = params.prediction_distance;
        if (depth > pd + 1e-4 * (pd + abs(hit.t)) + 1e-30) {
            kind = kind | ENTRY_RECORD_ONLY;
        }
    }
    contacts[o] = ContactOut(p << CONTACT_KIND_BITS | kind, hit.vertex, hit.triangle, hit.t);
}
