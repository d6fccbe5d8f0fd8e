// Kernel, one thread per edge job of the step (edge_select.wgsl chose them; the threads past their
// count pass): traces the edge's line against the other mesh (Mochi 2024 §3.4, rtcd::edges) and
// writes the outcome into the edge's entry. Brute force, or the stackless BVH with the TRACER_BVH
// shader def. As edge_direction in crates/rtcd/src/detect/pair.rs:
// a crossing is written as a contact (the edge in `vertex`, the entry triangle, the depth): the host
// traces the edge again to make its contact. An edge that does not cross is kept as a record only
// (ENTRY_RECORD_ONLY) when prediction is on, it lies within the rays' reach of the other mesh's box,
// and it is long and sharp (rtcd::RtcdMesh::predicting_edges) or the direction kept no vertex record.
#import rtcd::types::{EntryHit, Slot, EdgeJob, OUTCOME_CONTACT, OUTCOME_PREDICTION, RAY_EDGE, ENTRY_RECORD_ONLY, COUNT_EDGE_RAYS, EDGE_CROSSING, COUNTERS}
#import rtcd::math::{transform_point, linear_index, Box}
#import rtcd::geometry::corner
#import rtcd::edge_geometry::edge_of
#import rtcd::pairs::{pairs, params, from_mesh, to_mesh, from_to_q, from_to_t}
#import rtcd::edges::edge_crossing

@group(0) @binding(5) var<storage, read> slots: array<Slot>;
@group(0) @binding(7) var<storage, read_write> entries: array<EntryHit>;
@group(0) @binding(8) var<storage, read_write> counters: array<atomic<u32>, COUNTERS>;
@group(0) @binding(23) var<storage, read> jobs: array<EdgeJob>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let j = linear_index(wg, nwg, li);
    if (j >= atomicLoad(&counters[COUNT_EDGE_RAYS]) || j >= arrayLength(&jobs)) {
        return;
    }
    let job = jobs[j];
    let pair = pairs[job.pair];
    let dir = job.dir;
    let src = from_mesh(pair, dir);
    let to = to_mesh(pair, dir);
    let k = job.edge;
    let ends = edge_of(src, k);
    let q = from_to_q(pair, dir);
    let t = from_to_t(pair, dir);
    let c = edge_crossing(src, to, q, t, ends.x, ends.y);
    if (c.kind == EDGE_CROSSING) {
        entries[job.entry] = EntryHit(c.triangle, c.depth, OUTCOME_CONTACT | (RAY_EDGE << 2u) | (dir << 4u), k);
        return;
    }
    // Near: the edge's box (in the other mesh's frame) meets the other mesh's box grown by the rays'
    // reach (rtcd::detect::ray_reach).
    var to_box = Box(pair.statics.box_b_min.xyz, pair.statics.box_b_max.xyz);
    if (dir == 1u) {
        to_box = Box(pair.statics.box_a_min.xyz, pair.statics.box_a_max.xyz);
    }
    let reach = vec3<f32>(select(0.0, pair.statics.culling_dist, params.prediction != 0u));
    let p0 = transform_point(q, t, corner(src, ends.x));
    let p1 = transform_point(q, t, corner(src, ends.y));
    let near = all(min(p0, p1) <= to_box.hi + reach) && all(max(p0, p1) >= to_box.lo - reach);
    let slot = slots[pair.step.slot];
    let rec_count = select(slot.rec_count_b, slot.rec_count_a, dir == 0u);
    if (params.prediction != 0u && (rec_count == 0u || k < src.strong_edges) && near) {
        entries[job.entry] = EntryHit(0u, 0.0, OUTCOME_PREDICTION | ENTRY_RECORD_ONLY | (RAY_EDGE << 2u) | (dir << 4u), k);
    }
}
