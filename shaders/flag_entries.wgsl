// Kernel, one thread per element of the scans' inputs (entry count + 1; the extra last element is 0,
// so each exclusive scan ends with its total): `keep_flags` is 1 where the entry is a contact or a
// prediction (a record for the next step), `read_flags` where it is also read back: a contact, or a
// prediction the host makes a contact of. A prediction whose re-projected distance (2014 §3.2,
// rtcd::contact::ray_depth) is surely beyond the step's prediction distance is marked
// ENTRY_RECORD_ONLY here: the host would drop its contact, so it is not read back (its record stays
// on the device, and pair_end.wgsl counts it for its slot). Kept edges are record-only already.
// With params.read_all (the debug rays) every record is read back.
#import rtcd::types::{EntryHit, OUTCOME_CONTACT, OUTCOME_PREDICTION, ENTRY_RECORD_ONLY}
#import rtcd::math::{linear_index, quat_rotate}
#import rtcd::geometry::{vertex_of, triangle_of}
#import rtcd::pairs::{pairs, params, find_pair, from_mesh, to_mesh, from_to_q}

@group(0) @binding(7) var<storage, read_write> entries: array<EntryHit>;
@group(0) @binding(9) var<storage, read_write> keep_flags: array<u32>;
@group(0) @binding(27) var<storage, read_write> read_flags: array<u32>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = linear_index(wg, nwg, li);
    if (i > params.entry_count) {
        return;
    }
    var kept = 0u;
    var back = 0u;
    if (i < params.entry_count) {
        let hit = entries[i];
        let outcome = hit.kind & 3u;
        if (outcome == OUTCOME_CONTACT || outcome == OUTCOME_PREDICTION) {
            kept = 1u;
            var kind = hit.kind;
            if (outcome == OUTCOME_PREDICTION && (kind & ENTRY_RECORD_ONLY) == 0u) {
                // The host's depth: |t| (dir · n) with re-projection, against a box or without it
                // |t|; "surely beyond" leaves room for the two sides' rounding.
                let pair = pairs[find_pair(i)];
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
                    entries[i].kind = kind;
                }
            }
            back = select(0u, 1u, params.read_all != 0u || outcome == OUTCOME_CONTACT || (kind & ENTRY_RECORD_ONLY) == 0u);
        }
    }
    keep_flags[i] = kept;
    read_flags[i] = back;
}
