// Kernel, one thread per laid-out motion path (pair_assemble.wgsl planned them, their scan over the
// slots lays them out; launched indirectly, motion_args.wgsl): the motion rays of
// rtcd::detect::pair_motion_contacts (Mochi 2024's rays along the motion, IRTCD 2013 Eq. 2's bound
// choosing the pairs). A vertex of the casting mesh in its direction's region whose path since the
// last step (where the pair's last pose put it, to where it is) is longer than its least motion (a
// rim vertex's is its rim motion, rtcd::RtcdMesh::rim_motions) is
// traced along that path, from where it was, 3 times the path's length: the first face met, when
// it is a front face behind the vertex or within the prediction distance ahead of it, is appended to
// motion_hits for the host, which makes the contact
// (rtcd::detect::motion_path_contact, its tunnels kept on the host). The paths traced are counted,
// and each slot marks whether it traced one. Brute force, or the stackless BVH with the TRACER_BVH shader def.
#import rtcd::types::{NONE, MotionPlan, MotionHit, COUNT_MOTION_HITS, COUNT_MOTION_PATHS, COUNTERS}
#import rtcd::math::{transform_point, linear_index}
#import rtcd::geometry::vertex_of
#import rtcd::pairs::{pairs, params, from_mesh, to_mesh, from_to_q, from_to_t}
#import rtcd::edges::forward

@group(0) @binding(8) var<storage, read_write> counters: array<atomic<u32>, COUNTERS>;
// Each slot's first path (the exclusive scan of pair_assemble.wgsl's counts); the last element
// (at pair_count) holds the total.
@group(0) @binding(31) var<storage, read> motion_scan: array<u32>;
@group(0) @binding(32) var<storage, read> motion_plans: array<MotionPlan>;
@group(0) @binding(33) var<storage, read_write> motion_traced: array<atomic<u32>>;
@group(0) @binding(35) var<storage, read_write> motion_hits: array<MotionHit>;
// Each vertex's rim motion (rtcd::RtcdMesh::rim_motions), by vertex like the vertices; the largest
// finite f32 for a vertex that is no rim vertex.
@group(0) @binding(37) var<storage, read> rim_motions: array<f32>;

// The slot whose paths hold path `j`: the last slot starting at or before it (a slot without paths
// starts where the next one does).
fn find_slot(j: u32) -> u32 {
    var lo = 0u;
    var hi = params.pair_count - 1u;
    while (lo < hi) {
        let mid = (lo + hi + 1u) / 2u;
        if (motion_scan[mid] <= j) {
            lo = mid;
        } else {
            hi = mid - 1u;
        }
    }
    return lo;
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let j = linear_index(wg, nwg, li);
    if (j >= motion_scan[params.pair_count]) {
        return;
    }
    let slot = find_slot(j);
    let plan = motion_plans[slot];
    let pair = pairs[slot];
    var v = j - motion_scan[slot];
    var dir = 0u;
    var was_q = plan.was_a_q;
    var was_t = plan.was_a_t;
    var lo = plan.region_a_min.xyz;
    var hi = plan.region_a_max.xyz;
    var other = pair.statics.other_a;
    var least_floor = pair.statics.motion_floor;
    if (v >= plan.paths_a) {
        v = v - plan.paths_a;
        dir = 1u;
        was_q = plan.was_b_q;
        was_t = plan.was_b_t;
        lo = plan.region_b_min.xyz;
        hi = plan.region_b_max.xyz;
        other = pair.statics.other_b;
        least_floor = pair.statics.motion_floor_b;
    }
    let src = from_mesh(pair, dir);
    let vertex = vertex_of(src, v);
    let p = vertex.p.xyz;
    if (!(all(p >= lo) && all(p <= hi))) {
        return;
    }
    let now = transform_point(from_to_q(pair, dir), from_to_t(pair, dir), p);
    let then = transform_point(was_q, was_t, p);
    let len = length(now - then);
    // Into a cuboid, a level chunk or (with the closed reach) a closed mesh only the other body's
    // thickness counts; else also half the vertex's exit distance (vertex.p.w).
    var least = other;
    if (((pair.statics.motion_own >> dir) & 1u) != 0u) {
        least = min(0.5 * vertex.p.w, other);
    }
    least = max(least, least_floor);
    // A rim vertex, whose rays run along its body, whenever it moves at all.
    least = min(least, rim_motions[src.vertex_offset + v]);
    if (!(len > least)) {
        return;
    }
    atomicAdd(&counters[COUNT_MOTION_PATHS], 1u);
    atomicStore(&motion_traced[slot], 1u);
    let h = forward(to_mesh(pair, dir), then, (now - then) / len, 3.0 * len);
    if (h.tri == NONE || h.from_inside) {
        return;
    }
    // A face ahead of the vertex is a prediction; beyond the step's prediction distance the host
    // would drop it (rtcd::contact::reproject's distance: along the face's normal, or the path with
    // re-projection off). Those clearly beyond are not sent: by more than 1e-4 of the distance and
    // the path, against rounding (the host measures from its own poses).
    let ahead = len - h.t;
    if (ahead < 0.0) {
        var gap = -ahead;
        if (params.reprojection != 0u) {
            gap = -ahead * dot(-(now - then) / len, h.n);
        }
        if (gap > params.prediction_distance + 1e-4 * (params.prediction_distance + len)) {
            return;
        }
    }
    let k = atomicAdd(&counters[COUNT_MOTION_HITS], 1u);
    if (k < arrayLength(&motion_hits)) {
        motion_hits[k] = MotionHit((slot << 1u) | dir, v, h.tri, h.t);
    }
}
