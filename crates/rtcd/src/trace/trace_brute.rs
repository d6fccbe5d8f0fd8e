//! Brute-force standard tracer (IRTCD 2013 §4.2 "basic traversal"): every triangle is tested.

use super::{LineHits, NO_SKIP, finish, test_triangle};
use crate::{mesh::RtcdMesh, ray::Ray};

/// Traces the line through `ray` against every triangle of `mesh`. See
/// [`TracerKind::trace_line`](crate::TracerKind::trace_line).
pub fn trace_brute(mesh: &RtcdMesh, ray: &Ray, back: f32, fwd: f32, skip_vertex: u32) -> LineHits {
    let mut best_fwd = (fwd, NO_SKIP);
    let mut best_back = (back, NO_SKIP);
    for tri in 0..mesh.triangles().len() as u32 {
        test_triangle(mesh, ray, tri, skip_vertex, &mut best_fwd, &mut best_back);
    }
    finish(mesh, ray, best_fwd, best_back)
}
