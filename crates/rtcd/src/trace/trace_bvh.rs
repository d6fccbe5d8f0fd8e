//! Stackless BVH standard tracer (IRTCD 2013 §4.2): one loop over the pre-order node array following
//! miss links (see [`crate::bvh`]). Both sides of the line are traced in one traversal: a node is
//! visited when its box interval overlaps `[-best_back, best_fwd]`, which shrinks as hits are found.

use super::{LineHits, NO_SKIP, finish, test_triangle};
use crate::{mesh::RtcdMesh, ray::Ray};

/// `1 / d` with components smaller than 1e-20 in magnitude replaced by 1e-20, so the slab test never
/// meets `0 × ∞`. The WGSL tracer uses the same function.
#[inline]
pub fn safe_recip(d: glam::Vec3) -> glam::Vec3 {
    let tiny = glam::Vec3::splat(1e-20);
    glam::Vec3::select(d.abs().cmplt(tiny), tiny, d).recip()
}

/// Traces the line through `ray` against `mesh` with its BVH. See
/// [`TracerKind::trace_line`](crate::TracerKind::trace_line).
pub fn trace_bvh(mesh: &RtcdMesh, ray: &Ray, back: f32, fwd: f32, skip_vertex: u32) -> LineHits {
    let mut best_fwd = (fwd, NO_SKIP);
    let mut best_back = (back, NO_SKIP);
    let nodes = mesh.bvh();
    let inv_dir = safe_recip(ray.dir);
    let mut i = 0usize;
    while i < nodes.len() {
        let node = &nodes[i];
        let visit = match node.aabb().line_interval(ray.origin, inv_dir) {
            Some((near, far)) => near <= best_fwd.0 && far >= -best_back.0,
            None => false,
        };
        if !visit {
            i = node.miss as usize;
            continue;
        }
        match node.leaf_range() {
            Some((first, count)) => {
                for tri in first..first + count {
                    test_triangle(mesh, ray, tri, skip_vertex, &mut best_fwd, &mut best_back);
                }
                i = node.miss as usize;
            }
            None => i += 1,
        }
    }
    finish(mesh, ray, best_fwd, best_back)
}
