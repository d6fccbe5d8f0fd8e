//! Edge rays (Mandarapu, James, Kulkarni, *Mochi: Fast & Exact Collision Detection*, 2024, §3.4,
//! reduction 4): a ray along each edge of one mesh, as long as the edge, against the other mesh.
//! Vertex rays cannot see two meshes whose edges cross with no vertex inside the other body
//! (Hermann et al. 2008 §4, Fig. 9: a leg through a table top, a ring through a ring, two boxes
//! crossed edge on edge); an edge ray sees the crossing as an entry into the other body followed by
//! an exit, both between the edge's ends.
//!
//! Mochi only answers whether triangles intersect. Here a crossing becomes a contact: the edge
//! enters through a face of normal `n_in` and leaves through one of normal `n_out`, whose planes meet
//! in a ridge of direction `r = n_in × n_out`. The separating direction of an edge against a ridge
//! is perpendicular to both (the edge-edge axis of the separating axis test): `n = e × r`, turned
//! outward of the other body (`n · (n_in + n_out) > 0`), and the depth is how far the ridge lies
//! beyond the edge's line along `n`. The contact joins the vertex rays' candidates before the
//! manifold reduction. Mochi's auxiliary triangles, which catch an edge lying in a triangle's plane,
//! are not needed: such an edge either stays on the surface (no crossing) or crosses a neighbouring
//! triangle, which the ray meets.
//!
//! An edge that passes right through the other body (in through a face, out through the opposite
//! one: a beam through a slab) has no ridge: its contact is a way out from the middle of its
//! stretch inside, perpendicular to the edge ([`edge_crossing`]): the nearest, or the one the
//! pair's ridge contacts agree with (a plank sunk into a beam: the beam's edges through the plank
//! leave through its bottom, as the plank's edges over the beam's ridges say). An edge with an end inside the
//! other body is left to that end's vertex ray.

use glam::Vec3;

use crate::{mesh::RtcdMesh, params::TracerKind, pose::Pose, ray::Ray, trace::NO_SKIP};

/// An edge crossing the other mesh's surface, in the other mesh's frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EdgeCrossing {
    /// The edge ([`RtcdMesh::edges`] of the casting mesh).
    pub edge: u32,
    /// The triangle of the other mesh the edge enters through.
    pub triangle: u32,
    /// The point of the edge nearest the ridge (on the casting mesh).
    pub point: Vec3,
    /// The direction the casting mesh must move to separate: outward of the other mesh.
    pub normal: Vec3,
    /// How far along `normal` (positive).
    pub depth: f32,
    /// The edge passes right through the other body (no ridge): `normal` is the nearest way out,
    /// and these are the others (triangle, normal, depth), nearest first. The pair picks among them
    /// the way its ridge contacts agree with ([`crate::detect::pair_edge_contacts`]).
    pub through: Option<[Option<(u32, Vec3, f32)>; 3]>,
}

/// What an edge ray found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum EdgeTest {
    /// The edge meets nothing.
    Apart,
    /// The edge meets the other mesh's surface, but not as a crossing with both ends outside (an
    /// end inside, which its vertex ray covers; a pass through a thin part; grazing).
    Touching,
    /// Both ends outside, the edge crosses the other body.
    Crossing(EdgeCrossing),
}

/// Edge `edge` of `from` against `to`; `from_to` maps `from`'s frame into `to`'s. Two traces along
/// the edge's line: from its first end toward the second, the first hit must be an entry (its
/// face's outside); from the second end back, the first hit must be the exit seen from outside. The
/// first entry and the last exit give the ridge.
pub fn edge_crossing(
    from: &RtcdMesh,
    to: &RtcdMesh,
    from_to: &Pose,
    edge: u32,
    tracer: TracerKind,
) -> EdgeTest {
    let [a, b] = from.edges()[edge as usize];
    let (p0, p1) = (
        from_to.transform_point(from.positions()[a as usize]),
        from_to.transform_point(from.positions()[b as usize]),
    );
    if beside_box(to, p0, p1) {
        return EdgeTest::Apart;
    }
    traced_crossing(to, tracer, edge, p0, p1)
}

/// Whether the segment `p0`-`p1` (in `to`'s frame) lies wholly beside `to`'s bounding box, so that it
/// meets none of its triangles: most edges tested do (an edge above the ground, along a wall), and
/// this spares them the traces. The margin covers the ray-triangle test's barycentric tolerance.
#[inline]
fn beside_box(to: &RtcdMesh, p0: Vec3, p1: Vec3) -> bool {
    let b = to.aabb();
    let margin = Vec3::splat(1e-5 * (b.max - b.min).max_element());
    p0.min(p1).cmpgt(b.max + margin).any() || p0.max(p1).cmplt(b.min - margin).any()
}

/// [`edge_crossing`] of the segment `p0`-`p1` (edge `edge`, in `to`'s frame), by its traces.
fn traced_crossing(to: &RtcdMesh, tracer: TracerKind, edge: u32, p0: Vec3, p1: Vec3) -> EdgeTest {
    let d = p1 - p0;
    let len = d.length();
    if !(len > 0.0 && len.is_finite()) {
        return EdgeTest::Apart;
    }
    let e = d / len;
    let Some(h_in) = tracer.trace_line(to, &Ray::new(p0, e), 0.0, len, NO_SKIP).forward else {
        return EdgeTest::Apart;
    };
    if h_in.from_inside {
        // The first end is inside.
        return EdgeTest::Touching;
    }
    let Some(h_out) = tracer.trace_line(to, &Ray::new(p1, -e), 0.0, len, NO_SKIP).forward else {
        return EdgeTest::Touching;
    };
    let t_out = len - h_out.t;
    if h_out.from_inside || t_out <= h_in.t {
        // The second end is inside, or the two hits are one grazing touch.
        return EdgeTest::Touching;
    }
    // A line through a body that is not convex (a plank across a tyre, through its tube on both
    // sides of the hole) can be inside it in several stretches: the first entry and the last exit
    // then bound a stretch that is partly outside, whose middle is outside. Seen from that middle,
    // the nearest face ahead is an entry and the nearest behind an exit: the first stretch ends
    // there and the last begins there, and each is a crossing of its own; the deeper is the
    // edge's. Otherwise (the middle inside) the whole stretch is one crossing.
    let (t_mid, half) = (0.5 * (h_in.t + t_out), 0.5 * (t_out - h_in.t));
    let around = tracer.trace_line(to, &Ray::new(p0 + e * t_mid, e), half, half, NO_SKIP);
    let stretch = |entry: (f32, u32, Vec3), exit: (f32, Vec3)| {
        stretch_crossing(to, tracer, edge, (p0, e, len), entry, exit)
    };
    match (around.backward, around.forward) {
        (Some(b), Some(f)) if b.from_inside && !f.from_inside => deeper(
            stretch((h_in.t, h_in.triangle, h_in.normal), (t_mid + b.t, b.normal)),
            stretch((t_mid + f.t, f.triangle, f.normal), (t_out, h_out.normal)),
        ),
        _ => stretch((h_in.t, h_in.triangle, h_in.normal), (t_out, h_out.normal)),
    }
}

/// Of two tests of one edge, the crossing, or the deeper of two (the first where equally deep).
fn deeper(x: EdgeTest, y: EdgeTest) -> EdgeTest {
    match (x, y) {
        (EdgeTest::Crossing(a), EdgeTest::Crossing(b)) => {
            if b.depth > a.depth {
                y
            } else {
                x
            }
        }
        (EdgeTest::Crossing(_), _) => x,
        (_, EdgeTest::Crossing(_)) => y,
        _ => EdgeTest::Touching,
    }
}

/// The crossing of the stretch of the line `p0 + s e` (unit `e`, the edge `len` long) inside `to`
/// from `s = t_in`, where it enters through triangle `tri_in` of outward normal `n_in`, to `t_out`,
/// where it leaves through a face of normal `n_out`: the ridge of the two faces, or the ways out
/// as through a slab.
fn stretch_crossing(
    to: &RtcdMesh,
    tracer: TracerKind,
    edge: u32,
    (p0, e, len): (Vec3, Vec3, f32),
    (t_in, tri_in, n_in): (f32, u32, Vec3),
    (t_out, n_out): (f32, Vec3),
) -> EdgeTest {
    // The ridge of the entry and exit faces is the way out only where those faces meet there: from
    // the point below the ridge, along its normal, the edge leaves the body at the ridge. Faces that
    // do not meet (nearly opposite faces of a twisted prism, faces far apart on a fine mesh) give a
    // line elsewhere, and the way out is then sought as through a slab.
    let ridge = ridge_contact(p0, e, (t_in, n_in), (t_out, n_out)).filter(|&(point, n, depth)| {
        tracer
            .trace_line(to, &Ray::new(point, n), 0.0, 2.0 * depth + len, NO_SKIP)
            .forward
            .is_some_and(|h| h.from_inside && (h.t - depth).abs() <= 0.1 * depth + 1e-6 * len)
    });
    match ridge {
        Some((point, normal, depth)) => {
            EdgeTest::Crossing(EdgeCrossing { edge, triangle: tri_in, point, normal, depth, through: None })
        }
        None => {
            let (p_in, p_out) = (p0 + e * t_in, p0 + e * t_out);
            let exits = through_exits(to, (p_in, p_out), e, n_in, tracer);
            match exits[0] {
                Some((triangle, normal, depth)) => EdgeTest::Crossing(EdgeCrossing {
                    edge,
                    triangle,
                    point: 0.5 * (p_in + p_out),
                    normal,
                    depth,
                    through: Some([exits[1], exits[2], exits[3]]),
                }),
                None => EdgeTest::Touching,
            }
        }
    }
}

/// The ways out of an edge that passes right through `to` without a ridge (in through one face,
/// out through the opposite one: a beam through a slab), whose stretch inside runs from `p_in` to
/// `p_out`: rays from the stretch's middle in four directions perpendicular to the edge (`e`), two
/// of them in the plane of the edge and the entry normal `n_in`, meet `to`'s surface from inside;
/// each exit face is a way out, along its outward normal `n`, as far as it takes to bring the whole
/// stretch past the face's plane (`max n · (q - p)` over the stretch's ends and middle, `q` the
/// exit point), so that a face met at a grazing angle is not taken for a short way. Returns them
/// (exit triangle, outward normal, depth), shortest first.
fn through_exits(
    to: &RtcdMesh,
    (p_in, p_out): (Vec3, Vec3),
    e: Vec3,
    n_in: Vec3,
    tracer: TracerKind,
) -> [Option<(u32, Vec3, f32)>; 4] {
    let mid = 0.5 * (p_in + p_out);
    let a = n_in - e * n_in.dot(e);
    let a = if a.length_squared() > 1e-8 { a.normalize() } else { e.any_orthonormal_vector() };
    let b = e.cross(a);
    let reach = to.aabb().extents().length();
    let mut exits = [a, -a, b, -b].map(|d| {
        let h = tracer.trace_line(to, &Ray::new(mid, d), 0.0, reach, NO_SKIP).forward?;
        let q = mid + d * h.t;
        let depth = [p_in, p_out, mid].into_iter().map(|p| h.normal.dot(q - p)).fold(f32::MIN, f32::max);
        (h.from_inside && depth > 0.0).then_some((h.triangle, h.normal, depth))
    });
    exits.sort_by(|x, y| match (x, y) {
        (Some(x), Some(y)) => x.2.total_cmp(&y.2),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
    exits
}

/// The contact of the line `p0 + s e` (unit `e`), which enters a body at `s = t_in` through a face
/// of outward normal `n_in` and leaves it at `t_out` through one of normal `n_out`: the point of the
/// line nearest the ridge where the two faces' planes meet (within `[t_in, t_out]`), the separating
/// direction `e × (n_in × n_out)` turned outward, and the depth of the ridge beyond the line along
/// it. `None` without a ridge (faces parallel or opposite, or the edge along the ridge).
pub fn ridge_contact(
    p0: Vec3,
    e: Vec3,
    (t_in, n_in): (f32, Vec3),
    (t_out, n_out): (f32, Vec3),
) -> Option<(Vec3, Vec3, f32)> {
    let r = n_in.cross(n_out);
    let c = n_in.dot(n_out);
    // Opposite faces (a pass through a slab) or parallel ones: no ridge.
    if r.length_squared() < 1e-6 || c < -0.98 {
        return None;
    }
    let n = e.cross(r);
    let n_len = n.length();
    if n_len < 1e-3 * r.length() {
        // The edge runs along the ridge.
        return None;
    }
    let mut n = n / n_len;
    if n.dot(n_in + n_out) < 0.0 {
        n = -n;
    }
    let (p_in, p_out) = (p0 + e * t_in, p0 + e * t_out);
    // A point of the ridge, p_in + x with x = α n_in + β n_out on both planes (n_in · x = 0 since
    // p_in is on the entry plane, n_out · x = n_out · (p_out - p_in)), taken from p_in so that
    // coordinates far from the origin lose nothing; its height beyond the line along n (n is
    // perpendicular to the ridge, so any of its points gives the same).
    let d_out = n_out.dot(p_out - p_in);
    let det = 1.0 - c * c;
    let x = n_in * (-c * d_out / det) + n_out * (d_out / det);
    let q0 = p_in + x;
    let depth = n.dot(x);
    if !(depth > 0.0 && depth.is_finite()) {
        return None;
    }
    // The point of the line nearest the ridge line q0 + w r_unit.
    let r_unit = r / r.length();
    let er = e.dot(r_unit);
    let w0 = p_in - q0;
    let denom = 1.0 - er * er;
    let s = if denom > 1e-9 { (er * r_unit.dot(w0) - e.dot(w0)) / denom } else { 0.0 };
    let s = (t_in + s).clamp(t_in, t_out);
    Some((p0 + e * s, n, depth))
}

#[cfg(test)]
mod tests {
    use glam::Quat;

    use super::*;
    use crate::shapes;

    fn mesh((v, i): shapes::MeshData) -> RtcdMesh {
        RtcdMesh::new("m", &v, &i).unwrap()
    }

    /// Two unit cubes crossed edge on edge at 90°: the lower one turned 45° about z (a ridge along
    /// z at height √2/2), the upper one turned 45° about x (an edge along x at the bottom), its
    /// bottom edge `delta` below the ridge. No vertex is inside the other cube; the edge rays find
    /// the crossing with normal +y and depth `delta`, at the point above the ridge.
    #[test]
    fn crossed_cubes_give_the_edge_contact() {
        let cube = mesh(shapes::cuboid(Vec3::splat(0.5)));
        let h = 0.5 * 2f32.sqrt();
        for delta in [0.01f32, 0.05, 0.2] {
            let lower = Pose::new(Vec3::ZERO, Quat::from_rotation_z(std::f32::consts::FRAC_PI_4));
            let upper = Pose::new(
                Vec3::new(0.0, 2.0 * h - delta, 0.0),
                Quat::from_rotation_x(std::f32::consts::FRAC_PI_4),
            );
            // The upper cube's edges against the lower cube, in the lower cube's frame.
            let from_to = lower.inv_mul(&upper);
            let crossings: Vec<EdgeCrossing> = (0..cube.edges().len() as u32)
                .filter_map(|k| match edge_crossing(&cube, &cube, &from_to, k, TracerKind::Bvh) {
                    EdgeTest::Crossing(c) => Some(c),
                    _ => None,
                })
                .collect();
            assert_eq!(crossings.len(), 1, "delta {delta}: {crossings:?}");
            let c = crossings[0];
            // Back in the world: normal +y, depth delta, the point on the ridge's vertical.
            let n = lower.rotation * c.normal;
            let p = lower.transform_point(c.point);
            assert!((n - Vec3::Y).length() < 1e-5, "{n:?}");
            assert!((c.depth - delta).abs() < 1e-5, "{} vs {delta}", c.depth);
            assert!(p.x.abs() < 1e-5 && p.z.abs() < 1e-5 && (p.y - (h - delta)).abs() < 1e-5, "{p:?}");
        }
    }

    /// The box test never hides a hit: random segments near and across meshes (a box, a thin plate,
    /// a star blob) that it sets aside meet nothing when traced, and it sets most of the far ones aside.
    #[test]
    fn segments_beside_the_box_meet_nothing() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(11);
        let meshes = [
            mesh(shapes::cuboid(Vec3::new(1.0, 0.5, 0.25))),
            mesh(shapes::cuboid(Vec3::new(1.0, 0.005, 1.0))),
            mesh(shapes::star_blob(0.5, 16, 8, 5, 0.3, 4)),
        ];
        for to in &meshes {
            let b = to.aabb();
            let (mut beside, mut hit) = (0, 0);
            for _ in 0..4000 {
                // Ends within 1.5 box sizes of the box: many segments graze or cross a face plane.
                let mut end = || {
                    let u = Vec3::new(rng.random(), rng.random(), rng.random());
                    b.min + (b.max - b.min) * (u * 2.0 - Vec3::splat(0.5))
                };
                let (p0, p1) = (end(), end());
                for tracer in [TracerKind::Bvh, TracerKind::BruteForce] {
                    let traced = traced_crossing(to, tracer, 0, p0, p1);
                    hit += usize::from(traced != EdgeTest::Apart);
                    if beside_box(to, p0, p1) {
                        beside += 1;
                        assert_eq!(traced, EdgeTest::Apart, "{p0} {p1}");
                    }
                }
            }
            assert!(beside > 1000 && hit > 100, "{beside} set aside, {hit} hits");
        }
    }

    /// A ridge between faces of unequal slopes, on random lines across it: the depth is the
    /// distance from the line to the ridge line along the common perpendicular, measured directly.
    #[test]
    fn ridge_depth_is_the_distance_between_the_lines() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(3);
        for _ in 0..500 {
            // Faces meeting at the ridge x = 0, y = 1 (along z): y = 1 + k1 x (x < 0), y = 1 - k2 x.
            let (k1, k2) = (rng.random_range(0.2..3.0f32), rng.random_range(0.2..3.0f32));
            let n_in = Vec3::new(-k1, 1.0, 0.0).normalize();
            let n_out = Vec3::new(k2, 1.0, 0.0).normalize();
            // A line below the ridge, mostly along x, tilted in z and y a little.
            let depth = rng.random_range(0.01..0.3f32);
            let e = Vec3::new(1.0, rng.random_range(-0.05..0.05), rng.random_range(-0.5..0.5)).normalize();
            let mid = Vec3::new(0.0, 1.0 - depth, rng.random_range(-1.0..1.0));
            let p0 = mid - e * 2.0;
            // Entry and exit: where the line meets each plane.
            let t_of = |n: Vec3| n.dot(Vec3::new(0.0, 1.0, 0.0) - p0) / n.dot(e);
            let (t_in, t_out) = (t_of(n_in), t_of(n_out));
            if t_in >= t_out {
                continue;
            }
            let (point, n, d) = ridge_contact(p0, e, (t_in, n_in), (t_out, n_out)).unwrap();
            // The common perpendicular of the line and the ridge (along z through (0, 1)).
            let axis = e.cross(Vec3::Z).normalize();
            let expected = (Vec3::new(0.0, 1.0, 0.0) - p0).dot(axis).abs();
            assert!((d - expected).abs() < 1e-4, "{d} vs {expected}");
            assert!((n.dot(axis).abs() - 1.0).abs() < 1e-5 && n.y > 0.0);
            // The point is on the line, and the ridge is `d` beyond it along n.
            let q = point + n * d;
            assert!((q.y - 1.0).abs() < 1e-3 && q.x.abs() < 1e-3, "{q:?}");
        }
    }

    /// A beam through a slab (entry and exit faces opposite) has no ridge; its edge's contact is
    /// the nearest way out of the slab perpendicular to the edge: here sideways through the slab's
    /// near side face, not through its 2 m wide top.
    #[test]
    fn a_pass_through_a_slab_leaves_by_the_nearest_side() {
        assert!(
            ridge_contact(Vec3::new(0.0, -1.0, 0.0), Vec3::Y, (0.9, Vec3::NEG_Y), (1.1, Vec3::Y)).is_none()
        );
        // A slab 2 x 0.2 x 2 at the origin; a vertical beam 0.1 x 2 x 0.1 near its +x side.
        let slab = mesh(shapes::cuboid(Vec3::new(1.0, 0.1, 1.0)));
        let beam = mesh(shapes::cuboid(Vec3::new(0.05, 1.0, 0.05)));
        let pose = Pose::from_translation(Vec3::new(0.85, 0.0, 0.3));
        let found: Vec<EdgeCrossing> = (0..beam.edges().len() as u32)
            .filter_map(|k| match edge_crossing(&beam, &slab, &pose, k, TracerKind::Bvh) {
                EdgeTest::Crossing(c) => Some(c),
                _ => None,
            })
            .collect();
        // The beam's four vertical edges cross, each leaving by the +x side (0.1 or 0.2 m away).
        assert_eq!(found.len(), 4, "{found:?}");
        for c in &found {
            assert!((c.normal - Vec3::X).length() < 1e-5, "{c:?}");
            let expected = 1.0 - c.point.x;
            assert!((c.depth - expected).abs() < 1e-5, "{} vs {expected}", c.depth);
        }
    }

    /// A segment across a torus lying in the xz plane (major radius 1, tube radius 0.3), 5 cm under
    /// the top of its tube: in through the tube on one side of the hole, out, and in again on the
    /// other. The middle of its first entry and last exit is in the hole, outside the body; each
    /// stretch is a crossing of its own, about 5 cm deep, whose way out is up (the side nearer the
    /// top of the tube). A segment through one side alone is the same crossing as before.
    #[test]
    fn a_segment_across_a_ring_crosses_its_tube() {
        let ring = mesh(shapes::torus(1.0, 0.3, 48, 24));
        for tracer in [TracerKind::Bvh, TracerKind::BruteForce] {
            for (from, to, z) in [(-2.0, 2.0, 0.0), (2.0, -2.0, 0.1), (-2.0, 2.0, -0.2), (0.0, 2.0, 0.0)] {
                let (p0, p1) = (Vec3::new(from, 0.25, z), Vec3::new(to, 0.25, z));
                let EdgeTest::Crossing(c) = traced_crossing(&ring, tracer, 0, p0, p1) else {
                    panic!("{tracer:?}: no crossing from {p0} to {p1}");
                };
                // Independently: the tube's top over the crossing's point, less the segment's height.
                let centre = Vec3::new(c.point.x, 0.0, c.point.z).normalize();
                let radial = Vec3::new(c.point.x, 0.0, c.point.z).length() - 1.0;
                let top = (0.3f32 * 0.3 - radial * radial).sqrt();
                assert!(radial.abs() < 0.3, "{tracer:?}: the crossing is not in the tube: {c:?}");
                assert!(c.normal.y > 0.7, "{tracer:?}: a way out that is not up: {c:?} ({centre})");
                assert!(
                    c.depth > 0.0 && c.depth < 1.5 * (top - 0.25) + 0.01,
                    "{tracer:?}: depth {} against {} under the top",
                    c.depth,
                    top - 0.25
                );
            }
        }
    }
}
