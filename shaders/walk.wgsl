// The iterative ray/triangle-mesh intersection of IRTCD 2013 Alg. 1 with the 2014 paper's prediction
// lines 6-7. Mirror of crates/rtcd/src/trace/walk_iterative.rs.
#define_import_path rtcd::walk

#import rtcd::types::{NONE, MeshRef}
#import rtcd::geometry::{triangle_of, corner}
#import rtcd::ray_triangle::{ray_triangle, locate, LOC_HIT, LOC_BEHIND}

const WALK_MISS: u32 = 0u;
const WALK_HIT: u32 = 1u;
const WALK_BEHIND: u32 = 2u;

struct WalkResult {
    outcome: u32,
    triangle: u32,
    t: f32,
    steps: u32,
}

fn walk(m: MeshRef, o: vec3<f32>, d: vec3<f32>, start: u32, max_it: u32) -> WalkResult {
    var tri = start;
    let it = max(max_it, 1u);
    for (var step = 1u; step <= it; step++) {
        if (tri >= m.triangle_count) {
            return WalkResult(WALK_MISS, NONE, 0.0, step);
        }
        let tr = triangle_of(m, tri);
        let h = ray_triangle(o, d, corner(m, tr.v.x), corner(m, tr.v.y), corner(m, tr.v.z));
        if (!h.ok) {
            return WalkResult(WALK_MISS, NONE, 0.0, step);
        }
        let loc = locate(h);
        if (loc == LOC_HIT) {
            return WalkResult(WALK_HIT, tri, h.t, step);
        }
        if (loc == LOC_BEHIND) {
            return WalkResult(WALK_BEHIND, tri, h.t, step);
        }
        tri = tr.adj[loc];
        if (tri == NONE) {
            return WalkResult(WALK_MISS, NONE, 0.0, step);
        }
    }
    return WalkResult(WALK_MISS, NONE, 0.0, it);
}
