// Kernel, one thread per entry: contacts and predictions are packed densely at their scanned offsets,
// both as the next step's records (the pair state that stays on the GPU) and as re-projected contacts
// in shape 1's frame (what is read back), so readback grows with contacts, not rays.
#import rtcd::types::{EntryHit, Record, ContactOut, RECORD_PREDICTION, OUTCOME_CONTACT, OUTCOME_PREDICTION}
#import rtcd::math::{quat_rotate, transform_point, linear_index}
#import rtcd::geometry::{vertex_of, triangle_of}
#import rtcd::pairs::{pairs, params, find_pair, from_mesh, to_mesh, from_to_q, from_to_t}
#import rtcd::reproject::reproject
#import rtcd::cuboid::box_face_normal

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
    let p = find_pair(i);
    let pair = pairs[p];
    let dir = (hit.kind >> 4u) & 1u;
    let src = from_mesh(pair, dir);
    let to = to_mesh(pair, dir);
    let v = vertex_of(src, hit.vertex);
    let q = from_to_q(pair, dir);
    let origin = transform_point(q, from_to_t(pair, dir), v.p.xyz);
    var d = quat_rotate(q, -v.n.xyz);
    var n_tri = triangle_of(to, hit.triangle).n.xyz;
    if (to.cuboid != 0u) {
        // An exact box contact: the face normal is both the direction and the hit normal.
        n_tri = box_face_normal(hit.triangle);
        d = n_tri;
    }
    let r = reproject(origin, d, hit.t, n_tri, pair.pose12_q, pair.pose12_t, dir == 1u, params.reprojection != 0u);
    // The ray in shape 1's frame: direction 0 casts from shape 1 (rotate back by pose12_q).
    let ray_a = select(quat_rotate(pair.pose12_q, d), d, dir == 1u);
    contacts[o] = ContactOut(vec4<f32>(r.point_a, r.dist), vec4<f32>(r.point_b, hit.t), vec4<f32>(r.normal_a, 0.0), vec4<f32>(ray_a, 0.0), vec4<u32>(p, hit.vertex, hit.triangle, hit.kind));
}
