//! Tracers: the two standard ray-tracing algorithms of IRTCD 2013 §4.2 (brute force over all
//! triangles, stackless BVH traversal) and the iterative walk over triangle adjacency (2013 Alg. 1,
//! with the prediction lines 6-7 of the 2014 paper).
//!
//! Standard tracers work on a *segment of the line* through the ray: the first hit in front of the
//! origin up to `fwd`, and, in the same pass, the first hit behind it up to `back` (the opposite,
//! predictive ray of the 2014 paper, which shares the origin and the line, so brute force gets it for
//! free and the BVH shares one traversal).

mod trace_brute;
mod trace_bvh;
mod walk_iterative;

pub use trace_brute::trace_brute;
pub use trace_bvh::{safe_recip, trace_bvh, trace_bvh_stackless};
pub use walk_iterative::{Walk, WalkOutcome, walk};

use glam::Vec3;

use crate::{mesh::RtcdMesh, params::TracerKind, ray::Ray};

/// Vertex index meaning "skip no triangle".
pub const NO_SKIP: u32 = u32::MAX;

/// A ray/mesh hit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hit {
    /// Triangle index in the mesh.
    pub triangle: u32,
    /// Ray parameter: a distance along the ray, negative for hits behind the origin.
    pub t: f32,
    /// Outward unit normal of the triangle, in the mesh's frame.
    pub normal: Vec3,
    /// `dir · normal > 0`: the line leaves the mesh through this triangle when followed along `dir`.
    /// For a forward hit, the ray hits the triangle from inside (Hermann's validity test); for a
    /// backward hit, the opposite ray hits the triangle's outside (a prediction candidate).
    pub from_inside: bool,
}

impl Hit {
    pub(crate) fn new(mesh: &RtcdMesh, triangle: u32, t: f32, dir: Vec3) -> Self {
        let normal = mesh.triangle_normals()[triangle as usize];
        Self { triangle, t, normal, from_inside: dir.dot(normal) > 0.0 }
    }
}

/// Result of a standard trace along a line.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LineHits {
    /// Nearest hit with `0 <= t <= fwd`.
    pub forward: Option<Hit>,
    /// Nearest hit with `-back <= t < 0`.
    pub backward: Option<Hit>,
}

impl TracerKind {
    /// Traces the line through `ray` against `mesh` (in the mesh's frame): the first hit in front up to
    /// `fwd`, the first behind up to `back` (0 for none). Triangles that use vertex `skip_vertex` are
    /// ignored ([`NO_SKIP`] for none); a mesh tracing its own vertex rays uses it.
    pub fn trace_line(self, mesh: &RtcdMesh, ray: &Ray, back: f32, fwd: f32, skip_vertex: u32) -> LineHits {
        match self {
            TracerKind::BruteForce => trace_brute(mesh, ray, back, fwd, skip_vertex),
            TracerKind::Bvh => trace_bvh(mesh, ray, back, fwd, skip_vertex),
        }
    }
}

/// Shared per-triangle step of both standard tracers: tests one triangle and keeps the nearest hit on
/// each side. Returns nothing; updates the best distances and triangle indices in place.
#[inline]
pub(crate) fn test_triangle(
    mesh: &RtcdMesh,
    ray: &Ray,
    tri: u32,
    skip_vertex: u32,
    best_fwd: &mut (f32, u32),
    best_back: &mut (f32, u32),
) {
    if skip_vertex != NO_SKIP && mesh.triangles()[tri as usize].contains(&skip_vertex) {
        return;
    }
    let Some(h) =
        crate::ray::ray_triangle_prepared(ray.origin, ray.dir, &mesh.prepared_triangles()[tri as usize])
    else {
        return;
    };
    // Among hits at the same distance (a line through a shared edge or vertex) the lowest triangle
    // index wins, whatever order the tracer visits them in; the limits themselves count as reached
    // (`NO_SKIP` is above every index).
    match crate::ray::locate(&h) {
        crate::ray::Location::Hit => {
            if h.t < best_fwd.0 || (h.t == best_fwd.0 && tri < best_fwd.1) {
                *best_fwd = (h.t, tri);
            }
        }
        crate::ray::Location::Behind => {
            if -h.t < best_back.0 || (-h.t == best_back.0 && tri < best_back.1) {
                *best_back = (-h.t, tri);
            }
        }
        crate::ray::Location::Edge(_) => {}
    }
}

pub(crate) fn finish(mesh: &RtcdMesh, ray: &Ray, best_fwd: (f32, u32), best_back: (f32, u32)) -> LineHits {
    LineHits {
        forward: (best_fwd.1 != NO_SKIP).then(|| Hit::new(mesh, best_fwd.1, best_fwd.0, ray.dir)),
        backward: (best_back.1 != NO_SKIP).then(|| Hit::new(mesh, best_back.1, -best_back.0, ray.dir)),
    }
}
