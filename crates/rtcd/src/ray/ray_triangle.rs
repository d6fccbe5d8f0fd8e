//! Möller–Trumbore ray/triangle intersection (Möller & Trumbore 1997) and the closest-edge choice of
//! IRTCD 2013 Alg. 2.
//!
//! The test works on the *line* through the ray: it returns `(t, u, v)` for any `t`, negative too, so
//! the same call answers the standard ray, the opposite (predictive) ray of the 2014 paper, and, when
//! the point lies outside the triangle, which edge the iterative walk crosses next.
//!
//! Barycentric convention: the hit point is `(1 - u - v) * v0 + u * v1 + v * v2`. Edges are numbered
//! `0 = (v0, v1)`, `1 = (v1, v2)`, `2 = (v2, v0)`, the same numbering as the mesh adjacency.

use glam::{Vec3, Vec3A};

/// Tolerance on barycentric coordinates: a point within this margin of an edge counts as inside, so a
/// ray through a shared edge hits one of the two triangles instead of falling between them.
/// The WGSL kernels use the same value.
pub const BARYCENTRIC_EPS: f32 = 1e-5;

/// Rays closer to parallel with the triangle plane than this (sine of the angle, roughly) are
/// discarded (IRTCD 2013 §3.2: "the ray is parallel to the plane, this is a degenerate case").
pub const PARALLEL_EPS: f32 = 1e-7;

/// Where the line through a ray meets a triangle's plane.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TriangleLineHit {
    /// Ray parameter of the plane crossing (a distance for a unit direction); negative behind the origin.
    pub t: f32,
    /// Barycentric weight of `v1`.
    pub u: f32,
    /// Barycentric weight of `v2`.
    pub v: f32,
}

/// A triangle as Möller–Trumbore reads it: a corner, the two edges leaving it, and the threshold of
/// the parallel test. Meshes keep one per triangle ([`RtcdMesh::prepared_triangles`](crate::RtcdMesh::prepared_triangles)),
/// so the tracers' hot loops read one record instead of three indexed vertices and skip a cross
/// product and a square root per test; [`ray_triangle`] and [`ray_triangle_prepared`] give the same
/// bits. The vectors are kept as `Vec3A` so the test runs in SIMD lanes; each of its dot and cross
/// products adds the same products in the same order as `Vec3`'s, so the bits do not change.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PreparedTriangle {
    /// `v0`.
    pub v0: Vec3A,
    /// `v1 - v0`.
    pub e1: Vec3A,
    /// `v2 - v0`.
    pub e2: Vec3A,
    /// `PARALLEL_EPS * |e1 × e2|`: lines with `|det|` at or under it count as parallel.
    pub parallel_limit: f32,
}

impl PreparedTriangle {
    /// The record of triangle `(v0, v1, v2)`.
    #[inline]
    pub fn new(v0: Vec3, v1: Vec3, v2: Vec3) -> Self {
        let e1 = v1 - v0;
        let e2 = v2 - v0;
        Self {
            v0: v0.into(),
            e1: e1.into(),
            e2: e2.into(),
            parallel_limit: PARALLEL_EPS * e1.cross(e2).length(),
        }
    }
}

/// Möller–Trumbore on the line `origin + t * dir`. `None` when the line is parallel to the plane.
#[inline]
pub fn ray_triangle(origin: Vec3, dir: Vec3, v0: Vec3, v1: Vec3, v2: Vec3) -> Option<TriangleLineHit> {
    ray_triangle_prepared(origin, dir, &PreparedTriangle::new(v0, v1, v2))
}

/// [`ray_triangle`] on a [`PreparedTriangle`].
#[inline]
pub fn ray_triangle_prepared(origin: Vec3, dir: Vec3, tri: &PreparedTriangle) -> Option<TriangleLineHit> {
    let PreparedTriangle { v0, e1, e2, parallel_limit } = *tri;
    let (origin, dir) = (Vec3A::from(origin), Vec3A::from(dir));
    let p = dir.cross(e2);
    let det = e1.dot(p);
    // Relative test: det = |dir| |e1 x e2| cos(angle between dir and the normal).
    if det.abs() <= parallel_limit {
        return None;
    }
    let inv = 1.0 / det;
    let s = origin - v0;
    let u = s.dot(p) * inv;
    let q = s.cross(e1);
    let v = dir.dot(q) * inv;
    let t = e2.dot(q) * inv;
    Some(TriangleLineHit { t, u, v })
}

/// IRTCD 2013 Alg. 2 (`locateIntersection`): what the walk does with a [`TriangleLineHit`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    /// Inside the triangle, in front of the origin (`t >= 0`): the ray hits the triangle.
    Hit,
    /// Inside the triangle, behind the origin (`t < 0`): the opposite ray hits it. Alg. 2 discards
    /// the ray; the 2014 paper (Alg. 1 lines 6-7) keeps the triangle as a prediction.
    Behind,
    /// Outside the triangle, closest to this edge (0, 1 or 2; see the module docs).
    Edge(u8),
}

/// Alg. 2: the first failing barycentric condition names the closest edge (the paper's arbitrary but
/// consistent choice in the corner regions C of its Fig. 4).
#[inline]
pub fn locate(h: &TriangleLineHit) -> Location {
    if h.u < -BARYCENTRIC_EPS {
        // Weight of v1 negative: beyond the edge opposite v1, (v2, v0).
        Location::Edge(2)
    } else if h.v < -BARYCENTRIC_EPS {
        // Weight of v2 negative: beyond (v0, v1).
        Location::Edge(0)
    } else if h.u + h.v > 1.0 + BARYCENTRIC_EPS {
        // Weight of v0 negative: beyond (v1, v2).
        Location::Edge(1)
    } else if h.t >= 0.0 {
        Location::Hit
    } else {
        Location::Behind
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const V0: Vec3 = Vec3::new(0.0, 0.0, 0.0);
    const V1: Vec3 = Vec3::new(1.0, 0.0, 0.0);
    const V2: Vec3 = Vec3::new(0.0, 0.0, 1.0);

    fn hit_at(x: f32, z: f32, y0: f32) -> TriangleLineHit {
        ray_triangle(Vec3::new(x, y0, z), Vec3::NEG_Y, V0, V1, V2).unwrap()
    }

    #[test]
    fn inside_in_front_and_behind() {
        let h = hit_at(0.25, 0.25, 2.0);
        assert!((h.t - 2.0).abs() < 1e-6 && (h.u - 0.25).abs() < 1e-6 && (h.v - 0.25).abs() < 1e-6);
        assert_eq!(locate(&h), Location::Hit);
        let h = hit_at(0.25, 0.25, -0.5);
        assert!((h.t + 0.5).abs() < 1e-6);
        assert_eq!(locate(&h), Location::Behind);
    }

    #[test]
    fn closest_edge_regions() {
        // Beyond (v0, v1): z < 0.
        assert_eq!(locate(&hit_at(0.5, -0.3, 1.0)), Location::Edge(0));
        // Beyond (v1, v2): x + z > 1.
        assert_eq!(locate(&hit_at(0.7, 0.7, 1.0)), Location::Edge(1));
        // Beyond (v2, v0): x < 0.
        assert_eq!(locate(&hit_at(-0.3, 0.5, 1.0)), Location::Edge(2));
    }

    #[test]
    fn parallel_rays_are_discarded() {
        assert!(ray_triangle(Vec3::new(0.2, 0.0, 0.2), Vec3::X, V0, V1, V2).is_none());
        assert!(ray_triangle(Vec3::new(0.2, 1.0, 0.2), Vec3::X, V0, V1, V2).is_none());
    }

    #[test]
    fn shared_edge_hits_at_least_one_side() {
        // Two triangles sharing the diagonal (v1, v2); a ray exactly on it must hit one of them.
        let v3 = Vec3::new(1.0, 0.0, 1.0);
        for i in 0..=100 {
            let s = i as f32 / 100.0;
            let p = V1.lerp(V2, s);
            let o = Vec3::new(p.x, 1.0, p.z);
            let a = locate(&ray_triangle(o, Vec3::NEG_Y, V0, V1, V2).unwrap());
            let b = locate(&ray_triangle(o, Vec3::NEG_Y, V1, v3, V2).unwrap());
            assert!(a == Location::Hit || b == Location::Hit, "gap at s = {s}");
        }
    }
}
