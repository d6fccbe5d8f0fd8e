//! Stackless BVH standard tracer (IRTCD 2013 §4.2): one loop over the pre-order node array following
//! miss links (see [`crate::bvh`]). Both sides of the line are traced in one traversal: a node is
//! visited when its box interval overlaps `[-best_back, best_fwd]`, which shrinks as hits are found.

use glam::Vec3A;

use super::{LineHits, NO_SKIP, finish, test_triangle};
use crate::{bvh::BvhNode, mesh::RtcdMesh, ray::Ray};

/// `1 / d` with components smaller than 1e-20 in magnitude replaced by 1e-20, so the slab test never
/// meets `0 × ∞`. The WGSL tracer uses the same function.
#[inline]
pub fn safe_recip(d: glam::Vec3) -> glam::Vec3 {
    let tiny = glam::Vec3::splat(1e-20);
    glam::Vec3::select(d.abs().cmplt(tiny), tiny, d).recip()
}

/// What the slab test needs of a line: its origin, [`safe_recip`] of its direction, and the axes
/// it runs parallel to (the components `safe_recip` replaced), where there are any.
#[derive(Clone, Copy)]
struct Line {
    origin: Vec3A,
    inv_dir: Vec3A,
    parallel: Option<glam::BVec3A>,
}

impl Line {
    fn new(ray: &Ray) -> Self {
        let parallel = Vec3A::from(ray.dir).abs().cmplt(Vec3A::splat(1e-20));
        Self {
            origin: Vec3A::from(ray.origin),
            inv_dir: Vec3A::from(safe_recip(ray.dir)),
            parallel: parallel.any().then_some(parallel),
        }
    }
}

/// [`Aabb::line_interval`](crate::aabb::Aabb::line_interval) of a node's box, `(near, far)` (empty
/// when `near > far`), in SIMD lanes: the hot loop of the traversal. `inv_dir` comes from
/// [`safe_recip`], so every product is finite for finite boxes and origins and no lane meets a NaN
/// (the lane-wise `min`/`max` do not order NaNs as `f32::min`/`max` do). A line parallel to an
/// axis meets all of that axis's slab or none of it: its lane is left out of the interval when the
/// origin lies within the slab, bounds included (a line along a box's face: the product of a zero
/// offset and the stand-in reciprocal would end it at the origin), and empties it otherwise.
#[inline(always)]
fn slab(node: &BvhNode, line: &Line) -> (f32, f32) {
    let (min, max) = (Vec3A::from_array(node.min), Vec3A::from_array(node.max));
    let t1 = (min - line.origin) * line.inv_dir;
    let t2 = (max - line.origin) * line.inv_dir;
    let (mut lo, mut hi) = (t1.min(t2), t1.max(t2));
    if let Some(parallel) = line.parallel {
        let inside = min.cmple(line.origin) & line.origin.cmple(max);
        let (all, none) = (Vec3A::splat(f32::INFINITY), Vec3A::splat(f32::NEG_INFINITY));
        lo = Vec3A::select(parallel, Vec3A::select(inside, none, all), lo);
        hi = Vec3A::select(parallel, Vec3A::select(inside, all, none), hi);
    }
    (lo.max_element(), hi.min_element())
}

/// Node boxes one ordered traversal keeps pending; a deeper hierarchy (a degenerate build) is
/// traced with [`trace_bvh_stackless`] instead.
const STACK: usize = 64;

/// Traces the line through `ray` against `mesh` with its BVH. See
/// [`TracerKind::trace_line`](crate::TracerKind::trace_line).
///
/// The CPU traversal is ordered: of an internal node's two children, the one whose interval on the
/// line lies nearer the origin is opened first and the other is kept on a small stack, so the
/// nearest hits on both sides tend to come first and shrink the interval that later boxes must
/// meet. The hits are those of [`trace_bvh_stackless`] (the GPU's order): among hits at the same
/// distance, the lowest triangle index wins, which is the first one a pre-order traversal meets.
pub fn trace_bvh(mesh: &RtcdMesh, ray: &Ray, back: f32, fwd: f32, skip_vertex: u32) -> LineHits {
    let mut best_fwd = (fwd, NO_SKIP);
    let mut best_back = (back, NO_SKIP);
    let nodes = mesh.bvh();
    let line = Line::new(ray);
    let Some(root) = nodes.first() else { return finish(mesh, ray, best_fwd, best_back) };
    // Whether an interval still meets `[-best_back, best_fwd]`, and how far it lies from the origin.
    let open = |(near, far): (f32, f32), best_fwd: f32, best_back: f32| {
        near <= far && near <= best_fwd && far >= -best_back
    };
    let from_origin = |(near, far): (f32, f32)| near.max(-far).max(0.0);
    let mut stack = arrayvec::ArrayVec::<(u32, (f32, f32)), STACK>::new();
    let mut current = open(slab(root, &line), fwd, back).then_some(0u32);
    loop {
        let i = match current {
            Some(i) => i,
            // The nearest pending node that the hits found since it was pushed have not ruled out.
            None => match stack.pop() {
                Some((j, interval)) => {
                    if open(interval, best_fwd.0, best_back.0) {
                        current = Some(j);
                    }
                    continue;
                }
                None => break,
            },
        };
        let node = &nodes[i as usize];
        match node.leaf_range() {
            Some((first, count)) => {
                for tri in first..first + count {
                    test_triangle(mesh, ray, tri, skip_vertex, &mut best_fwd, &mut best_back);
                }
                current = None;
            }
            None => {
                let (a, b) = (i + 1, nodes[i as usize + 1].miss);
                let (ia, ib) = (slab(&nodes[a as usize], &line), slab(&nodes[b as usize], &line));
                current = match (open(ia, best_fwd.0, best_back.0), open(ib, best_fwd.0, best_back.0)) {
                    (true, true) => {
                        let (near, far) = if from_origin(ia) <= from_origin(ib) {
                            ((a, ia), (b, ib))
                        } else {
                            ((b, ib), (a, ia))
                        };
                        if stack.try_push(far).is_err() {
                            return trace_bvh_stackless(mesh, ray, back, fwd, skip_vertex);
                        }
                        Some(near.0)
                    }
                    (true, false) => Some(a),
                    (false, true) => Some(b),
                    (false, false) => None,
                };
            }
        }
    }
    finish(mesh, ray, best_fwd, best_back)
}

/// [`trace_bvh`] in the stackless pre-order of the hierarchy (one loop following miss links), the
/// order of the WGSL tracer.
pub fn trace_bvh_stackless(mesh: &RtcdMesh, ray: &Ray, back: f32, fwd: f32, skip_vertex: u32) -> LineHits {
    let mut best_fwd = (fwd, NO_SKIP);
    let mut best_back = (back, NO_SKIP);
    let nodes = mesh.bvh();
    let line = Line::new(ray);
    let mut i = 0usize;
    while i < nodes.len() {
        let node = &nodes[i];
        let (near, far) = slab(node, &line);
        if !(near <= far && near <= best_fwd.0 && far >= -best_back.0) {
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

#[cfg(test)]
mod tests {
    use glam::Vec3;
    use proptest::prelude::*;

    use super::*;
    use crate::aabb::Aabb;

    fn vec3(r: f32) -> impl Strategy<Value = Vec3> {
        (-r..r, -r..r, -r..r).prop_map(|(x, y, z)| Vec3::new(x, y, z))
    }

    proptest! {
        /// The SIMD slab test gives `Aabb::line_interval`'s interval (and the same emptiness), also
        /// for axis-parallel directions (zero components, which `safe_recip` replaces).
        #[test]
        fn slab_matches_line_interval(
            corner in vec3(2.0),
            size in vec3(1.0),
            origin in vec3(3.0),
            dir in vec3(1.0),
            zero_axes in 0u8..8,
        ) {
            let mut d = dir;
            for k in 0..3 {
                if zero_axes & (1 << k) != 0 {
                    d[k] = 0.0;
                }
            }
            prop_assume!(d.length() > 1e-3);
            let b = Aabb::new(corner, corner + size.abs());
            let node = BvhNode { min: b.min.to_array(), miss: 0, max: b.max.to_array(), leaf: 0 };
            let inv = safe_recip(d);
            let (near, far) = slab(&node, &Line::new(&Ray::new(origin, d)));
            match b.line_interval(origin, inv) {
                Some((n, f)) => prop_assert_eq!((near, far), (n, f)),
                None => prop_assert!(near > far, "{near} {far}"),
            }
        }
    }

    /// A line along a face of the hierarchy's boxes (its origin on a box's bound, its direction
    /// parallel to that face) finds what brute force finds, on both sides: vertex rays of aligned
    /// box stacks and level chunks run so. Before, the box's interval ended at the origin and the
    /// hit 1.5 ahead was lost.
    #[test]
    fn lines_along_box_faces_find_the_brute_force_hits() {
        use crate::{TracerKind, shapes};
        let cube = {
            let (v, i) = shapes::cuboid(Vec3::splat(0.5));
            RtcdMesh::new("cube", &v, &i).unwrap()
        };
        let (v, i) = shapes::subdivided_cuboid(Vec3::new(1.0, 0.5, 1.0), 4);
        let grid = RtcdMesh::new("subdivided box", &v, &i).unwrap();
        let mut lines = 0;
        for mesh in [&cube, &grid] {
            let (lo, hi) = (mesh.aabb().min, mesh.aabb().max);
            // Origins on the planes of every box of the hierarchy and on the mesh's vertices'
            // coordinates, outside the mesh along y, lines along y, z and x.
            let mut planes: Vec<f32> = mesh.bvh().iter().flat_map(|n| [n.min[0], n.max[0]]).collect();
            planes.extend(mesh.positions().iter().map(|p| p.x));
            planes.sort_by(f32::total_cmp);
            planes.dedup();
            for &x in &planes {
                for &z in &[lo.z, 0.0, 0.5 * hi.z, hi.z] {
                    for (origin, dir) in [
                        (Vec3::new(x, lo.y - 2.0, z), Vec3::Y),
                        (Vec3::new(x, hi.y + 2.0, z), -Vec3::Y),
                        (Vec3::new(x, 0.1, lo.z - 2.0), Vec3::Z),
                    ] {
                        let ray = Ray::new(origin, dir);
                        let b = TracerKind::BruteForce.trace_line(mesh, &ray, 10.0, 10.0, NO_SKIP);
                        for (what, h) in [
                            ("ordered", trace_bvh(mesh, &ray, 10.0, 10.0, NO_SKIP)),
                            ("stackless", trace_bvh_stackless(mesh, &ray, 10.0, 10.0, NO_SKIP)),
                        ] {
                            let t = |l: &LineHits| (l.forward.map(|h| h.t), l.backward.map(|h| h.t));
                            assert_eq!(t(&h), t(&b), "{} {what}: {origin} along {dir}", mesh.name());
                        }
                        lines += 1;
                    }
                }
            }
        }
        assert!(lines > 50, "{lines} lines");
    }
}
