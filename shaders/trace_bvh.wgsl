// Stackless BVH standard tracer (IRTCD 2013 §4.2): one loop over the pre-order node array following
// miss links. Mirror of crates/rtcd/src/trace/trace_bvh.rs.
#define_import_path rtcd::trace_bvh

#import rtcd::types::{NONE, LEAF_COUNT_BITS, MeshRef}
#import rtcd::geometry::bvh_nodes
#import rtcd::trace_brute::{LineHits, test_triangle}

// 1 / d with zero components replaced by a tiny positive number (rtcd::aabb::safe_recip).
fn safe_recip(d: vec3<f32>) -> vec3<f32> {
    let tiny = vec3<f32>(1e-20);
    return 1.0 / select(d, tiny, abs(d) < tiny);
}

fn trace_bvh(m: MeshRef, o: vec3<f32>, d: vec3<f32>, back: f32, fwd: f32) -> LineHits {
    var best = LineHits(NONE, fwd, NONE, back);
    let inv = safe_recip(d);
    // The axes the line runs parallel to: there it meets all of a box's slab (the origin within it,
    // bounds included) or none of it (trace_bvh.rs's `slab`).
    let parallel = abs(d) < vec3<f32>(1e-20);
    let all = vec3<f32>(3.0e38);
    var i = 0u;
    while (i < m.bvh_count) {
        let node = bvh_nodes[m.bvh_offset + i];
        let lo = vec3<f32>(node.min_x, node.min_y, node.min_z);
        let hi = vec3<f32>(node.max_x, node.max_y, node.max_z);
        let ta = (lo - o) * inv;
        let tb = (hi - o) * inv;
        let inside = (lo <= o) & (o <= hi);
        let tmin = select(min(ta, tb), select(all, -all, inside), parallel);
        let tmax = select(max(ta, tb), select(-all, all, inside), parallel);
        let near = max(max(tmin.x, tmin.y), tmin.z);
        let far = min(min(tmax.x, tmax.y), tmax.z);
        let visit = near <= far && near <= best.fwd_t && far >= -best.back_t;
        if (!visit) {
            i = node.miss;
            continue;
        }
        if (node.leaf != 0u) {
            let first = node.leaf >> LEAF_COUNT_BITS;
            let count = node.leaf & ((1u << LEAF_COUNT_BITS) - 1u);
            for (var tri = first; tri < first + count; tri++) {
                test_triangle(m, o, d, tri, &best);
            }
            i = node.miss;
        } else {
            i = i + 1u;
        }
    }
    return best;
}
