// Möller–Trumbore on the line through a ray, and IRTCD 2013 Alg. 2's closest-edge choice.
// Mirror of crates/rtcd/src/ray/ray_triangle.rs.
#define_import_path rtcd::ray_triangle

#import rtcd::types::{BARYCENTRIC_EPS, PARALLEL_EPS}

struct LineHit {
    t: f32,
    u: f32,
    v: f32,
    // false when the line is parallel to the plane.
    ok: bool,
}

// Alg. 2 results: 0, 1, 2 = cross that edge; LOC_HIT; LOC_BEHIND.
const LOC_HIT: u32 = 3u;
const LOC_BEHIND: u32 = 4u;

fn ray_triangle(o: vec3<f32>, d: vec3<f32>, va: vec3<f32>, vb: vec3<f32>, vc: vec3<f32>) -> LineHit {
    let edge_a = vb - va;
    let edge_b = vc - va;
    let p = cross(d, edge_b);
    let det = dot(edge_a, p);
    if (abs(det) <= PARALLEL_EPS * length(cross(edge_a, edge_b))) {
        return LineHit(0.0, 0.0, 0.0, false);
    }
    let inv = 1.0 / det;
    let s = o - va;
    let u = dot(s, p) * inv;
    let q = cross(s, edge_a);
    let v = dot(d, q) * inv;
    let t = dot(edge_b, q) * inv;
    return LineHit(t, u, v, true);
}

fn locate(h: LineHit) -> u32 {
    if (h.u < -BARYCENTRIC_EPS) {
        return 2u;
    }
    if (h.v < -BARYCENTRIC_EPS) {
        return 0u;
    }
    if (h.u + h.v > 1.0 + BARYCENTRIC_EPS) {
        return 1u;
    }
    if (h.t >= 0.0) {
        return LOC_HIT;
    }
    return LOC_BEHIND;
}
