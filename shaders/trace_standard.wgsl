// Kernel, one thread per entry of the flattened ray list (pair direction × vertex) of the pairs traced
// with the standard tracer this step: candidate test, a standard trace of both sides of the line
// (brute force, or the stackless BVH with the TRACER_BVH shader def), Hermann validity and
// prediction culling; against a box, the exact contact of one of its faces instead of a ray. Writes one
// EntryHit per entry. Mirror of standard_direction in crates/rtcd/src/detect/pair.rs.
#import rtcd::types::{EntryHit, NONE, PAIR_STANDARD, OUTCOME_NONE, OUTCOME_CONTACT, OUTCOME_PREDICTION, OUTCOME_REJECTED, RAY_STANDARD, COUNT_STANDARD_RAYS, REACH_CLOSED, COUNTERS}
#import rtcd::math::{quat_rotate, transform_point, linear_index}
#import rtcd::geometry::{vertex_of, triangle_of, bvh_nodes}
#import rtcd::types::MeshRef
#import rtcd::pairs::{pairs, params, entry_ref, from_mesh, to_mesh, from_to_q, from_to_t, reach_flags}
#import rtcd::candidates::is_candidate
#import rtcd::trace_brute::{trace_brute, LineHits}
#import rtcd::trace_bvh::trace_bvh
#import rtcd::hermann::{contact_valid, prediction_valid, ray_limit}
#import rtcd::cuboid::{box_half_extents, box_vertex_face, box_outcome}

@group(0) @binding(7) var<storage, read_write> entries: array<EntryHit>;
@group(0) @binding(8) var<storage, read_write> counters: array<atomic<u32>, COUNTERS>;

var<workgroup> traced: atomic<u32>;

fn triangle_normal(m: MeshRef, tri: u32) -> vec3<f32> {
    return triangle_of(m, tri).n.xyz;
}

// The standard tracer of this kernel (brute force, or the BVH with TRACER_BVH).
fn trace_line(to: MeshRef, o: vec3<f32>, d: vec3<f32>, back: f32, fwd: f32) -> LineHits {
#ifdef TRACER_BVH
    return trace_bvh(to, o, d, back, fwd);
#else
    return trace_brute(to, o, d, back, fwd);
#endif
}

// Whether p lies in the mesh's box (its hierarchy's root box), bounds included.
fn in_mesh_box(to: MeshRef, p: vec3<f32>) -> bool {
    let root = bvh_nodes[to.bvh_offset];
    return all(p >= vec3<f32>(root.min_x, root.min_y, root.min_z)) && all(p <= vec3<f32>(root.max_x, root.max_y, root.max_z));
}

// rtcd::detect::pair::closed_trace: into a closed mesh with the closed reach (REACH_CLOSED), the line
// within `back` behind the vertex and its exit distance in front; then, when `limit` is longer, nothing
// was met in front, nothing behind says the vertex is outside (a triangle faced from outside), and the
// vertex and its exit point are in the mesh's box, the ray on to `limit`. Any other mesh: one trace of
// the line to `limit`.
fn standard_trace(to: MeshRef, o: vec3<f32>, d: vec3<f32>, back: f32, exit_dist: f32, limit: f32) -> LineHits {
    if ((to.solid_behind & REACH_CLOSED) == 0u) {
        return trace_line(to, o, d, back, limit);
    }
    var hits = trace_line(to, o, d, back, exit_dist);
    let outside = hits.back_tri != NONE && dot(d, triangle_normal(to, hits.back_tri)) > 0.0;
    if (limit > exit_dist && hits.fwd_tri == NONE && !outside
        && in_mesh_box(to, o) && in_mesh_box(to, o + d * exit_dist)) {
        let further = trace_line(to, o, d, 0.0, limit);
        hits.fwd_tri = further.fwd_tri;
        hits.fwd_t = further.fwd_t;
    }
    return hits;
}

// rtcd::detect::nearer_way_out: into a closed mesh with the closed reach (REACH_CLOSED), a back-face hit
// at t beyond the vertex's exit distance counts only when no triangle of the mesh lies within t along
// the opposite ray (the hit is the nearer way out of the mesh along the line).
fn nearer_way_out(to: MeshRef, o: vec3<f32>, d: vec3<f32>, t: f32, exit_dist: f32) -> bool {
    if ((to.solid_behind & REACH_CLOSED) == 0u || t <= exit_dist) {
        return true;
    }
    return trace_line(to, o, -d, 0.0, t).fwd_tri == NONE;
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    if (li == 0u) {
        atomicStore(&traced, 0u);
    }
    workgroupBarrier();
    let i = linear_index(wg, nwg, li);
    if (i < params.entry_count) {
        let e = entry_ref(i);
        let pair = pairs[e.pair];
        if ((pair.step.flags & PAIR_STANDARD) != 0u && !e.edge) {
            let src = from_mesh(pair, e.dir);
            let v = vertex_of(src, e.index);
            var region_min = pair.frame.region_a_min;
            var region_max = pair.frame.region_a_max;
            if (e.dir == 1u) {
                region_min = pair.frame.region_b_min;
                region_max = pair.frame.region_b_max;
            }
            var out = EntryHit(NONE, 0.0, OUTCOME_NONE | (RAY_STANDARD << 2u) | (e.dir << 4u), e.index);
            if (is_candidate(v.p.xyz, region_min, region_max)) {
                let q = from_to_q(pair, e.dir);
                let o = transform_point(q, from_to_t(pair, e.dir), v.p.xyz);
                // The reach box of the hit mesh (rtcd::detect::reach_box): outside it a ray leaves
                // no record, and is not traced.
                var reach_min = pair.statics.reach_b_min;
                var reach_max = pair.statics.reach_b_max;
                if (e.dir == 1u) {
                    reach_min = pair.statics.reach_a_min;
                    reach_max = pair.statics.reach_a_max;
                }
                let to = to_mesh(pair, e.dir);
                if (is_candidate(o, reach_min, reach_max) && to.cuboid != 0u) {
                    // A box: the exact contact of one of its faces (rtcd::detect::box_vertex_face), no ray.
                    atomicAdd(&traced, 1u);
                    let d = quat_rotate(q, -v.n.xyz);
                    let f = box_vertex_face(box_half_extents(to), o, d, v.p.w);
                    let outcome = box_outcome(f.distance, dot(d, f.normal), params.prediction != 0u, pair.statics.culling_dist);
                    out = EntryHit(f.triangle, -f.distance, outcome | (RAY_STANDARD << 2u) | (e.dir << 4u), e.index);
                } else if (is_candidate(o, reach_min, reach_max)) {
                    atomicAdd(&traced, 1u);
                    let d = quat_rotate(q, -v.n.xyz);
                    let back = select(0.0, pair.statics.culling_dist, params.prediction != 0u);
                    let limit = ray_limit(v.p.w, v.n.w, pair.statics.culling_dist, reach_flags(pair, e.dir, to, o));
                    let hits = standard_trace(to, o, d, back, v.p.w, limit);
                    var outcome = OUTCOME_REJECTED;
                    var tri = hits.fwd_tri;
                    var t = select(0.0, hits.fwd_t, hits.fwd_tri != NONE);
                    if (hits.fwd_tri != NONE && contact_valid(d, triangle_normal(to, hits.fwd_tri), hits.fwd_t, limit)
                        && nearer_way_out(to, o, d, hits.fwd_t, v.p.w)) {
                        outcome = OUTCOME_CONTACT;
                    } else if (hits.back_tri != NONE && prediction_valid(d, triangle_normal(to, hits.back_tri), -hits.back_t, pair.statics.culling_dist)) {
                        outcome = OUTCOME_PREDICTION;
                        tri = hits.back_tri;
                        t = -hits.back_t;
                    }
                    out = EntryHit(tri, t, outcome | (RAY_STANDARD << 2u) | (e.dir << 4u), e.index);
                }
            }
            entries[i] = out;
        }
    }
    workgroupBarrier();
    if (li == 0u) {
        let n = atomicLoad(&traced);
        if (n > 0u) {
            atomicAdd(&counters[COUNT_STANDARD_RAYS], n);
        }
    }
}
