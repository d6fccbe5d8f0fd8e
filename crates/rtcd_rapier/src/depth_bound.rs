//! Gentle separation of deep overlaps: a deep overlap's manifolds are merged into one, and the
//! depth of the contacts handed to Rapier's solver may be bounded.
//!
//! **Why.** rtcd reports true penetration depths (ray re-projection, Lehericey et al. 2014 §3.2): a
//! vertex deep inside the other body gets its whole depth, where Rapier's own trimesh contacts (pairs
//! of surface triangles) only see how far the two surfaces cross. Rapier's solver is a soft step with
//! relaxation: in each substep a biased pass drives every contact's normal velocity to a bias
//! `min(depth · erp / h, max_corrective_velocity)`, positions are integrated, and an unbiased relax
//! pass takes that velocity back. The clamp holds per contact, but a deep overlap hands the solver
//! many contacts at once, in several manifolds of different normals (each vertex inside the other
//! body with the way out its ray found), most of them saturated at `max_corrective_velocity`; the
//! relax pass runs one Gauss–Seidel sweep per substep by default and can only take back what each
//! contact pushed (a contact's accumulated impulse stays non-negative). What it leaves is real
//! velocity: points that were lifted by their neighbours' push separate without having pushed, and
//! no contact can pull them back. It grows with the biases and adds up for as long as the overlap
//! lasts, so bodies come apart launched.
//!
//! **Merging** (on by default,
//! [`CacheSettings::merge_deep_overlaps`](crate::CacheSettings::merge_deep_overlaps);
//! `merge_deep_overlap`). Where at least two of a pair's manifolds hold a point deeper than a
//! depth `D`, the manifolds pushing along their depth-weighted mean normal become one manifold of
//! that normal with four points spread across it, and those pushing against it are dropped: the
//! overlap is one push, which the relax pass takes back whole. Two blobs started 30-60 % into each
//! other, or two tori interlocked, then come apart with next to no kinetic energy
//! (`docs/benchmarks.md`). A pair with one deep manifold (a body sunk into a cuboid ground, a body
//! that landed hard on one corner) is left as it is. `D` is the bound below when one is set, else
//! [`corrective_depth`].
//!
//! **Bounding** ([`DepthBound`], off by default). Every point deeper than `D` is handed over `D`
//! deep: `dist' = max(dist, -D)`. With [`DepthBound::Corrective`], `D` is [`corrective_depth`]: the
//! depth Rapier's corrective velocity removes in two steps, `2 × max_corrective_velocity() × dt`,
//! which follows the world's `length_unit` and step. Its bias, `D · erp / h`, is a fraction of
//! `max_corrective_velocity`, so a deep overlap is pushed out by a share of `D` per step, step
//! after step for as long as rtcd finds the bodies overlapping (pairs that Rapier's hollow trimesh
//! contacts never free, a body deep inside another or interlocked rings, still separate), and what
//! the relax pass leaves behind stays small. While Rapier's contact recycling is followed, `D` is at
//! least [`RECYCLING_MARGIN`] recycling distances: a recycled pair keeps its contacts and the solver
//! tracks their depths from the bodies' motion, so a shallower handed depth would be used up before
//! the pair drifts far enough to be updated, and it would stall. Points at most `D` deep pass
//! unchanged: resting contacts (a fraction of a millimetre deep) keep their depths. The bound is
//! off by default because it applies to impacts too: a body that lands `D` deep or more is pushed
//! back out at the bounded rate, and in a pile of falling props the bodies stay deeper for longer
//! (`docs/benchmarks.md`, scene 3).
//!
//! Both apply to every pair the dispatcher answers, meshes against meshes and against cuboids.
//! Rapier's contact pairs (contact events, `ContactPair::manifolds`) see the merged manifolds and
//! the bounded distances; [`RtcdDispatcher::resolve`](crate::RtcdDispatcher::resolve) and the
//! driver's debug geometry keep rtcd's own.

use glam::Vec3;
use parry3d::{
    math::Pose,
    query::{ContactManifold, TrackedContact},
};
use rapier3d::dynamics::IntegrationParameters;

/// How deep the contacts handed to Rapier's solver may be
/// ([`CacheSettings::depth_bound`](crate::CacheSettings::depth_bound); see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum DepthBound {
    /// Every depth handed over as rtcd measures it (the default).
    #[default]
    Off,
    /// [`corrective_depth`] of the world's parameters: from the `IntegrationParameters` given to
    /// [`RtcdDriver::detect_recycling`](crate::RtcdDriver::detect_recycling) or
    /// [`RtcdDriver::set_integration_parameters`](crate::RtcdDriver::set_integration_parameters), with
    /// the `dt` of [`DriverSettings::dt`](crate::DriverSettings::dt) when that is changed later;
    /// Rapier's default parameters until then.
    Corrective,
    /// This length, in world units. A length that is not finite and positive turns the bound off.
    Length(f32),
}

impl DepthBound {
    /// The bound's length, given the corrective depth in use (`None`: off).
    pub fn length(&self, corrective_depth: f32) -> Option<f32> {
        let d = match *self {
            DepthBound::Corrective => corrective_depth,
            DepthBound::Length(d) => d,
            DepthBound::Off => return None,
        };
        (d.is_finite() && d > 0.0).then_some(d)
    }
}

/// The default bound ([`DepthBound::Corrective`]) for these parameters: the depth Rapier's
/// corrective velocity removes in [`CORRECTIVE_STEPS`] steps, `2 × max_corrective_velocity() × dt`
/// (so it follows `length_unit` and the step), and, with `contact_recycling` on, at least
/// [`RECYCLING_MARGIN`] × `contact_recycle_distance()`. Infinite (no bound) when Rapier's
/// corrective velocity is unbounded.
pub fn corrective_depth(params: &IntegrationParameters) -> f32 {
    let recycle = if params.contact_recycling { params.contact_recycle_distance() } else { 0.0 };
    corrective_depth_of(params.max_corrective_velocity(), params.dt, recycle)
}

/// While Rapier recycles a pair's contacts (its relative pose drifted less than
/// `contact_recycle_distance()` since they were computed), the solver tracks their depths from the
/// bodies' motion: a handed depth shallower than that distance would be used up before the pair
/// drifts far enough to be updated, and the pair would stall. The bound is at least this many
/// recycling distances.
pub const RECYCLING_MARGIN: f32 = 1.25;

/// Steps of Rapier's corrective velocity in the default bound.
///
/// Two rather than one: the bound also meets impacts, bodies landing deeper than the prediction
/// distance covers, and those are pushed back out at the rate of two steps' worth of correction,
/// close to the rate of rtcd's true depths, while a deep overlap's points still each ask for a
/// fraction of the corrective velocity.
pub const CORRECTIVE_STEPS: f32 = 2.0;

/// [`corrective_depth`] from its parts: `recycle_distance` is 0 without contact recycling.
pub(crate) fn corrective_depth_of(max_corrective_velocity: f32, dt: f32, recycle_distance: f32) -> f32 {
    let d = (CORRECTIVE_STEPS * max_corrective_velocity * dt).max(RECYCLING_MARGIN * recycle_distance);
    if max_corrective_velocity == f32::MAX || !(d.is_finite() && d > 0.0) { f32::INFINITY } else { d }
}

/// Hands every point of one manifold deeper than `bound` over at `bound` (see the module docs).
///
/// A point's two witnesses are brought together along the normal by as much as its depth shrinks:
/// the casting vertex's witness moves (the side whose feature is a vertex), the other stays on the
/// surface the vertex's ray left through; with no vertex side, or vertices on both, each moves half
/// way. Rapier builds a solver contact's lever arm halfway between shape 2's witness and the point
/// `dist` before it along the normal, so a bounded contact acts near the surface it pushes out of,
/// whichever order Rapier gives the shapes.
pub(crate) fn bound_depths<M, T>(manifold: &mut ContactManifold<M, T>, bound: f32) {
    if !(bound.is_finite() && bound > 0.0) {
        return;
    }
    let (n1, n2) = (manifold.local_n1, manifold.local_n2);
    for p in manifold.points.iter_mut().filter(|p| p.dist < -bound) {
        // `dist = (p2 - p1)·n` grows by `lift` when p2 moves by `lift` along the normal
        // (`-local_n2` in shape 2's frame) or p1 by `lift` against it (`-local_n1` in shape 1's).
        let lift = -bound - p.dist;
        let share1 = witness_share1(p);
        p.local_p1 -= n1 * (share1 * lift);
        p.local_p2 -= n2 * ((1.0 - share1) * lift);
        p.dist = -bound;
    }
}

/// What the dispatcher does with deep points ([`crate::ContactCache::handed_depths`]): the bound
/// on the depths handed over ([`bound_depths`]) and the depth from which a pair's manifolds are
/// merged ([`merge_deep_overlap`]); infinite: never.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct HandedDepths {
    pub bound: f32,
    pub merge_from: f32,
}

impl HandedDepths {
    /// Depths as rtcd measures them, nothing merged.
    #[cfg(test)]
    pub const AS_MEASURED: Self = Self { bound: f32::INFINITY, merge_from: f32::INFINITY };
}

/// The share of agreement below which a deep overlap's normals are not merged: the length of their
/// depth-weighted sum over the sum of the weights.
/// Under it the overlap pushes about as much one way as the opposite (a shaft deep in a tube, its
/// contacts all around it) and no one direction speaks for it.
pub const MERGE_AGREEMENT: f32 = 0.5;

/// Merges a deep overlap's manifolds into one (see the module docs): when at least two of a pair's
/// manifolds hold a point deeper than `depth`, the manifolds that push along their depth-weighted
/// mean normal become one manifold of that normal and at most four points; the others are dropped.
///
/// A deep overlap hands the solver several manifolds of different normals (the vertices of one
/// body inside the other, each with the way out its ray found). Each normal group is pushed on its
/// own, and what the relax pass leaves is the lift the groups give each other: real velocity, which
/// launches the bodies. One normal makes the push one push, which the relax pass takes back whole.
///
/// - The normal is the sum of every manifold's normal weighted by its penetrating points' depths,
///   kept when its length is at least [`MERGE_AGREEMENT`] of the weights' sum (otherwise nothing
///   changes).
/// - The manifolds whose normal is at right angles to it or against it are dropped: they ask for a
///   way out that the overlap as a whole does not take (as the edge contacts of a pair agree on
///   one, `rtcd::detect::pair_edge_contacts`).
/// - Each point of the others is measured again along the merged normal, its two witnesses brought
///   onto one line along it: the witness on the surface the vertex's ray left through stays where it
///   is and the casting vertex's moves, as in [`bound_depths`] (halfway each without one vertex).
/// - Four are kept: the deepest, the farthest from it across the normal, the one spanning the
///   largest triangle with those two, and the one adding the most area to that triangle (none when
///   every other point lies within it).
///
/// A single deep manifold is left as it is: one deep point (a vertex's ray that went far, a body
/// landing hard on one corner) is not an overlap that many contacts push apart, and the pair's
/// other contacts (an edge's, holding it off another face) keep their own normals. `pos12` is
/// shape 2's pose in shape 1's frame.
pub(crate) fn merge_deep_overlap<M: Clone, T: Copy + Default>(
    manifolds: &mut Vec<ContactManifold<M, T>>,
    pos12: &Pose,
    depth: f32,
) {
    if !(depth.is_finite() && depth > 0.0) {
        return;
    }
    let deep = |m: &ContactManifold<M, T>| m.points.iter().any(|p| p.dist < -depth);
    if manifolds.iter().filter(|m| deep(m)).count() < 2 {
        return;
    }
    let (mut sum, mut weights) = (Vec3::ZERO, 0.0f32);
    for m in manifolds.iter() {
        for p in m.points.iter().filter(|p| p.dist < 0.0) {
            sum += m.local_n1 * -p.dist;
            weights += -p.dist;
        }
    }
    if !(weights > 0.0 && sum.length() >= MERGE_AGREEMENT * weights) {
        return;
    }
    let n1 = sum.normalize();
    let along = |m: &ContactManifold<M, T>| m.local_n1.dot(n1) > 0.0;
    let Some(first) = manifolds.iter().position(along) else { return };
    let mut points = Vec::new();
    for m in manifolds.iter().filter(|m| along(m)) {
        for p in &m.points {
            let p2 = *pos12 * p.local_p2;
            let dist = (p2 - p.local_p1).dot(n1);
            let share1 = witness_share1(p);
            let fixed = p.local_p1 + (p2 - p.local_p1) * share1;
            let mut q = *p;
            q.local_p1 = fixed - n1 * (share1 * dist);
            q.local_p2 = pos12.inverse_transform_point(fixed + n1 * ((1.0 - share1) * dist));
            q.dist = dist;
            q.data = T::default();
            points.push(q);
        }
    }
    let mut merged = manifolds[first].clone();
    merged.local_n1 = n1;
    merged.local_n2 = pos12.rotation.inverse() * -n1;
    merged.points = spread_points(&points, n1);
    manifolds.clear();
    manifolds.push(merged);
}

/// At most four of `points` (see [`merge_deep_overlap`]), spread across the plane of normal `n`
/// (measured at shape 1's witnesses).
fn spread_points<T: Copy>(points: &[TrackedContact<T>], n: Vec3) -> Vec<TrackedContact<T>> {
    if points.len() <= 4 {
        return points.to_vec();
    }
    let flat: Vec<Vec3> = points.iter().map(|p| p.local_p1 - n * p.local_p1.dot(n)).collect();
    // The highest-scoring point (there are more than four).
    let best = |score: &dyn Fn(usize) -> f32| {
        (0..points.len()).max_by(|&i, &j| score(i).total_cmp(&score(j))).unwrap_or(0)
    };
    let a = best(&|i| -points[i].dist);
    let b = best(&|i| (flat[i] - flat[a]).length_squared());
    let area = |u: Vec3, v: Vec3, w: Vec3| (v - u).cross(w - u).dot(n);
    let c = best(&|i| area(flat[a], flat[b], flat[i]).abs());
    let mut kept = vec![a];
    for k in [b, c] {
        if !kept.contains(&k) {
            kept.push(k);
        }
    }
    if kept.len() == 3 {
        // The area a fourth point adds: what lies outside each of the triangle's edges.
        let turn = area(flat[a], flat[b], flat[c]).signum();
        let edges = [(a, b), (b, c), (c, a)];
        let added = |i: usize| -> f32 {
            edges.iter().map(|&(u, v)| (-turn * area(flat[u], flat[v], flat[i])).max(0.0)).sum()
        };
        let d = best(&|i| if kept.contains(&i) { f32::MIN } else { added(i) });
        if added(d) > 0.0 {
            kept.push(d);
        }
    }
    kept.iter().map(|&i| points[i]).collect()
}

/// The share of a depth change taken by shape 1's witness: all of it when shape 1's feature is the
/// casting vertex, none when shape 2's is, half otherwise.
fn witness_share1<T>(p: &TrackedContact<T>) -> f32 {
    match (p.fid1.is_vertex(), p.fid2.is_vertex()) {
        (true, false) => 1.0,
        (false, true) => 0.0,
        _ => 0.5,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;
    use parry3d::shape::PackedFeatureId;

    /// A manifold with normal -y (shape 1 above shape 2, same frames): shape 1's vertices at
    /// x = 0, 1, ... cast into shape 2, whose surface is y = 0; points at `dists`.
    fn manifold(dists: &[f32]) -> ContactManifold<(), ()> {
        let mut m = ContactManifold::with_data(0, 0, ());
        m.local_n1 = Vec3::NEG_Y;
        m.local_n2 = Vec3::Y;
        m.points = dists
            .iter()
            .enumerate()
            .map(|(k, &d)| {
                // dist = (p2 - p1)·n1: the vertex is -d below the surface point.
                TrackedContact::new(
                    Vec3::new(k as f32, d, 0.0),
                    Vec3::new(k as f32, 0.0, 0.0),
                    PackedFeatureId::vertex(k as u32),
                    PackedFeatureId::face(0),
                    d,
                )
            })
            .collect();
        m
    }

    fn bounded(dists: &[f32], bound: f32) -> Vec<f32> {
        let mut m = manifold(dists);
        bound_depths(&mut m, bound);
        m.points.iter().map(|p| p.dist).collect()
    }

    #[test]
    fn shallow_points_pass_unchanged() {
        let d = [-0.0004, -0.05, 0.01, 0.0];
        assert_eq!(bounded(&d, 0.05), d);
        assert_eq!(bounded(&[0.3, 0.2], 0.05), [0.3, 0.2]);
        assert_eq!(bounded(&[-0.3, 0.2], f32::INFINITY), [-0.3, 0.2]);
        assert_eq!(bounded(&[-0.3, 0.2], 0.0), [-0.3, 0.2]);
    }

    #[test]
    fn deep_points_are_clamped_at_the_bound() {
        assert_eq!(bounded(&[-0.46, -0.2, -0.01, 0.01], 0.05), [-0.05, -0.05, -0.01, 0.01]);
    }

    /// The vertex's witness moves, the surface's stays; the distance between them along the
    /// normal is the bounded `dist`, whichever side the vertex is on.
    #[test]
    fn witnesses_follow_the_bounded_depth() {
        let mut m = manifold(&[-0.3, -0.01]);
        bound_depths(&mut m, 0.05);
        for p in &m.points {
            assert_eq!(p.local_p2.y, 0.0);
            assert!(((p.local_p2 - p.local_p1).dot(m.local_n1) - p.dist).abs() < 1e-6);
        }
        // The same contacts with the shapes swapped: the vertex is shape 2's.
        let mut s = manifold(&[-0.3, -0.01]);
        std::mem::swap(&mut s.local_n1, &mut s.local_n2);
        for p in &mut s.points {
            std::mem::swap(&mut p.local_p1, &mut p.local_p2);
            std::mem::swap(&mut p.fid1, &mut p.fid2);
        }
        bound_depths(&mut s, 0.05);
        for p in &s.points {
            assert_eq!(p.local_p1.y, 0.0);
            assert!(((p.local_p2 - p.local_p1).dot(s.local_n1) - p.dist).abs() < 1e-6);
        }
        let vertices = |m: &ContactManifold<(), ()>, first: bool| -> Vec<Vec3> {
            m.points.iter().map(|p| if first { p.local_p1 } else { p.local_p2 }).collect()
        };
        assert_eq!(vertices(&m, true), vertices(&s, false));
    }

    /// A manifold of normal `n` (shape 1 toward shape 2, both shapes in one frame) whose points
    /// are shape 1's vertices at `at`, each `-d` inside shape 2 along `n`.
    fn toward(n: Vec3, points: &[(Vec3, f32)], first_vertex: u32) -> ContactManifold<(), ()> {
        let mut m = ContactManifold::with_data(0, 0, ());
        m.local_n1 = n;
        m.local_n2 = -n;
        m.points = points
            .iter()
            .enumerate()
            .map(|(k, &(at, d))| {
                TrackedContact::new(
                    at,
                    at + n * d,
                    PackedFeatureId::vertex(first_vertex + k as u32),
                    PackedFeatureId::face(k as u32),
                    d,
                )
            })
            .collect();
        m
    }

    /// Two deep manifolds 60° apart and a shallow one against them become one manifold: the
    /// depth-weighted normal, the points measured along it with their witnesses on one line along
    /// it (the vertex's witness moved, the surface's kept), at most four, the deepest among them.
    #[test]
    fn a_deep_overlap_becomes_one_manifold() {
        let a = Vec3::Y;
        let b = Vec3::new(0.75f32.sqrt(), 0.5, 0.0);
        let pts = |y: f32, d: f32| {
            (0..3).map(|k| (Vec3::new(k as f32 * 0.3, y, 0.1 * k as f32), d)).collect::<Vec<_>>()
        };
        let mut ms = vec![
            toward(a, &pts(0.0, -0.3), 0),
            toward(b, &pts(0.5, -0.1), 10),
            toward(-Vec3::Y, &[(Vec3::new(0.0, 1.0, 0.0), -0.01)], 20),
        ];
        let weighted = (a * 0.9 + b * 0.3 - Vec3::Y * 0.01).normalize();
        merge_deep_overlap(&mut ms, &Pose::IDENTITY, 0.05);
        assert_eq!(ms.len(), 1);
        let m = &ms[0];
        assert!((m.local_n1 - weighted).length() < 1e-6);
        assert_eq!(m.local_n2, -m.local_n1);
        assert_eq!(m.points.len(), 4);
        assert!(m.points.iter().all(|p| p.fid1.0 < PackedFeatureId::vertex(20).0));
        let deepest = m.points.iter().map(|p| p.dist).fold(f32::INFINITY, f32::min);
        assert!((deepest - (-0.3 * a.dot(weighted))).abs() < 1e-6);
        for p in &m.points {
            let gap = p.local_p2 - p.local_p1;
            assert!((gap.dot(m.local_n1) - p.dist).abs() < 1e-6);
            assert!((gap - m.local_n1 * p.dist).length() < 1e-6, "witnesses off the normal: {gap}");
        }
        // The surface's witnesses are where they were: shape 2's points of the first two.
        let surfaces: Vec<Vec3> = pts(0.0, -0.3)
            .iter()
            .map(|(at, d)| *at + a * *d)
            .chain(pts(0.5, -0.1).iter().map(|(at, d)| *at + b * *d))
            .collect();
        for p in &m.points {
            assert!(surfaces.iter().any(|s| (*s - p.local_p2).length() < 1e-6));
        }
    }

    /// Nothing changes without two deep manifolds, or when their normals do not agree.
    #[test]
    fn what_a_merge_leaves_alone() {
        let check = |ms: Vec<ContactManifold<(), ()>>, bound: f32| {
            let mut merged = ms.clone();
            merge_deep_overlap(&mut merged, &Pose::IDENTITY, bound);
            assert_eq!(merged.len(), ms.len());
            for (x, y) in merged.iter().zip(&ms) {
                assert_eq!(x.local_n1, y.local_n1);
                assert_eq!(x.points.len(), y.points.len());
                assert!(
                    x.points.iter().zip(&y.points).all(|(p, q)| p.dist == q.dist && p.local_p1 == q.local_p1)
                );
            }
        };
        let one = |n: Vec3, d: f32, v: u32| toward(n, &[(Vec3::ZERO, d), (Vec3::X, d)], v);
        // One deep manifold beside a shallow one.
        check(vec![one(Vec3::Y, -0.3, 0), one(Vec3::X, -0.01, 10)], 0.05);
        // Two deep ones, under a bound deeper than both, or none.
        check(vec![one(Vec3::Y, -0.3, 0), one(Vec3::X, -0.3, 10)], 0.5);
        check(vec![one(Vec3::Y, -0.3, 0), one(Vec3::X, -0.3, 10)], f32::INFINITY);
        // Two deep ones pushing opposite ways (a shaft deep in a tube): no agreed way out.
        check(vec![one(Vec3::Y, -0.3, 0), one(Vec3::NEG_Y, -0.3, 10)], 0.05);
    }

    #[test]
    fn lengths() {
        assert_eq!(DepthBound::Corrective.length(0.05), Some(0.05));
        assert_eq!(DepthBound::Corrective.length(f32::INFINITY), None);
        assert_eq!(DepthBound::Length(0.2).length(0.05), Some(0.2));
        assert_eq!(DepthBound::Length(0.0).length(0.05), None);
        assert_eq!(DepthBound::Off.length(0.05), None);
        let mut params = IntegrationParameters { contact_recycling: false, ..Default::default() };
        let metre = corrective_depth(&params);
        assert!((metre - CORRECTIVE_STEPS * params.max_corrective_velocity() * params.dt).abs() < 1e-9);
        params.length_unit = 100.0;
        assert!((corrective_depth(&params) - 100.0 * metre).abs() < 1e-4);
        // Following recycling: at least the margin times the recycling distance.
        params.contact_recycling = true;
        params.dt = 1.0 / 240.0;
        let recycle = RECYCLING_MARGIN * params.contact_recycle_distance();
        assert!((corrective_depth(&params) - recycle).abs() < 1e-4);
        params.normalized_max_corrective_velocity = f32::MAX;
        assert_eq!(corrective_depth(&params), f32::INFINITY);
    }
}
