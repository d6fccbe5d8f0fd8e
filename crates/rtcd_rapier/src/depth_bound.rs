//! Gentle separation of deep overlaps: the depth of the contacts handed to Rapier's solver is
//! bounded.
//!
//! **Why.** rtcd reports true penetration depths (ray re-projection, Lehericey et al. 2014 §3.2): a
//! vertex deep inside the other body gets its whole depth, where Rapier's own trimesh contacts (pairs
//! of surface triangles) only see how far the two surfaces cross. Rapier's solver is a soft step with
//! relaxation: in each substep a biased pass drives every contact's normal velocity to a bias
//! `min(depth · erp / h, max_corrective_velocity)`, positions are integrated, and an unbiased relax
//! pass takes that velocity back. The clamp holds per contact, but a deep overlap hands the solver
//! many contacts at once, in several manifolds of different normals, most of them saturated at
//! `max_corrective_velocity`; the relax pass runs one Gauss–Seidel sweep per substep by default and
//! can only take back what each contact pushed (a contact's accumulated impulse stays
//! non-negative). What it leaves is real velocity: points that were lifted by their neighbours'
//! push separate without having pushed, and no contact can pull them back. It grows with the biases
//! and adds up for as long as the overlap lasts, so bodies come apart launched.
//!
//! **What.** Every point deeper than a depth `D` ([`DepthBound`]) is handed over `D` deep:
//! `dist' = max(dist, -D)`. By default `D` is [`corrective_depth`]: the depth Rapier's corrective
//! velocity removes in two steps, `2 × max_corrective_velocity() × dt`, which follows the world's
//! `length_unit` and step. Its bias, `D · erp / h`, is a fraction of `max_corrective_velocity`, so a
//! deep overlap is pushed out by a share of `D` per step, step after step for as long as rtcd finds
//! the bodies overlapping (pairs that Rapier's hollow trimesh contacts never free, a body deep inside
//! another or interlocked rings, still separate), and what the relax pass leaves behind stays small.
//! While Rapier's contact recycling is followed, `D` is at least [`RECYCLING_MARGIN`] recycling
//! distances: a recycled pair keeps its contacts and the solver tracks their depths from the
//! bodies' motion, so a shallower handed depth would be used up before the pair drifts far enough
//! to be updated, and it would stall. Points at most `D` deep pass unchanged: resting contacts (a
//! fraction of a millimetre deep) keep their depths.
//!
//! The bound is off by default ([`DepthBound::Off`]); scenes where bodies are spawned into each
//! other or pushed deep into one another turn it on with [`DepthBound::Corrective`]
//! ([`CacheSettings::depth_bound`](crate::CacheSettings::depth_bound)). It applies to every pair the
//! dispatcher answers, meshes against meshes and against cuboids, impacts included: a body that
//! lands `D` deep or more is pushed back out at the bounded rate too, which changes how a pile of
//! falling bodies settles. Rapier's contact pairs (contact events, `ContactPair::manifolds`) see the bounded
//! distances; [`RtcdDispatcher::resolve`](crate::RtcdDispatcher::resolve) and the driver's debug
//! geometry keep rtcd's true depths.

use parry3d::query::{ContactManifold, TrackedContact};
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
