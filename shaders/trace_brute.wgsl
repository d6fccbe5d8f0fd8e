// Brute-force standard tracer (IRTCD 2013 §4.2): every triangle of the mesh, both sides of the line
// in one pass. Mirror of crates/rtcd/src/trace/trace_brute.rs.
#define_import_path rtcd::trace_brute

#import rtcd::types::{NONE, MeshRef}
#import rtcd::geometry::{triangle_of, corner}
#import rtcd::ray_triangle::{ray_triangle, locate, LOC_HIT, LOC_BEHIND}

// Nearest hit in front (0 <= t <= fwd) and behind (distance <= back), NONE when absent.
struct LineHits {
    fwd_tri: u32,
    fwd_t: f32,
    back_tri: u32,
    // Distance behind the origin (positive); the hit's t is -back_t.
    back_t: f32,
}

// The per-triangle step shared by both tracers (rtcd::trace::test_triangle).
fn test_triangle(m: MeshRef, o: vec3<f32>, d: vec3<f32>, tri: u32, best: ptr<function, LineHits>) {
    let tr = triangle_of(m, tri);
    let h = ray_triangle(o, d, corner(m, tr.v.x), corner(m, tr.v.y), corner(m, tr.v.z));
    if (!h.ok) {
        return;
    }
    let loc = locate(h);
    if (loc == LOC_HIT) {
        if (h.t < (*best).fwd_t || ((*best).fwd_tri == NONE && h.t <= (*best).fwd_t)) {
            (*best).fwd_t = h.t;
            (*best).fwd_tri = tri;
        }
    } else if (loc == LOC_BEHIND) {
        if (-h.t < (*best).back_t || ((*best).back_tri == NONE && -h.t <= (*best).back_t)) {
            (*best).back_t = -h.t;
            (*best).back_tri = tri;
        }
    }
}

fn trace_brute(m: MeshRef, o: vec3<f32>, d: vec3<f32>, back: f32, fwd: f32) -> LineHits {
    var best = LineHits(NONE, fwd, NONE, back);
    for (var tri = 0u; tri < m.triangle_count; tri++) {
        test_triangle(m, o, d, tri, &best);
    }
    return best;
}
