//! Writing rtcd manifolds into Rapier's (`parry::query::ContactManifold<ContactManifoldData,
//! ContactData>`), carrying the solver's warm-start data from the previous step's points.

use parry3d::{
    math::Pose,
    query::{ContactManifold, TrackedContact},
    shape::PackedFeatureId,
};
use rapier3d::geometry::{ContactData, ContactManifoldData};

use crate::convert::packed;

/// Rapier's manifold type.
pub(crate) type RapierManifold = ContactManifold<ContactManifoldData, ContactData>;

/// Replaces `out` with the points of `src` whose `dist` is within `prediction`, one Rapier manifold
/// per rtcd manifold (normal group), empty groups dropped. `swapped`: `src` has shapes 1 and 2 the
/// other way round (it is flipped on the fly).
///
/// Existing manifolds are reused in place (their `data` is left for Rapier to refill) and surplus
/// ones removed; the caller sets a workspace so Rapier rebuilds its solver graph for the pair.
/// Warm-start data (`TrackedContact::data`: accumulated impulses) is carried over from every previous
/// point of the pair, first by exact feature ids (`match_contacts`: same vertex ray, same hit
/// triangle), then, for points left unmatched, by the same vertex ray alone (its hit triangle
/// changes as it slides over the other mesh, the contact is the same).
pub(crate) fn write_manifolds(
    src: &[rtcd::ContactManifold],
    swapped: bool,
    pos12: &Pose,
    prediction: f32,
    out: &mut Vec<RapierManifold>,
) {
    let keep = |p: &&rtcd::ContactPoint| handed_over(p, prediction);
    if out.is_empty() && !src.iter().any(|m| m.points.iter().any(|p| keep(&p))) {
        return;
    }
    OLD_POINTS.with_borrow_mut(|old| {
        old.clear();
        for m in out.iter() {
            old.extend(m.points.iter().map(|p| OldPoint { fid1: p.fid1, fid2: p.fid2, data: p.data }));
        }
        let mut n = 0;
        for m in src {
            if !m.points.iter().any(|p| keep(&p)) {
                continue;
            }
            if n == out.len() {
                out.push(ContactManifold::with_data(0, 0, ContactManifoldData::default()));
            }
            let dst = &mut out[n];
            n += 1;
            dst.points.clear();
            dst.local_n1 = if swapped { m.local_n2 } else { m.local_n1 };
            dst.local_n2 = pos12.rotation.inverse() * -dst.local_n1;
            dst.subshape1 = 0;
            dst.subshape2 = 0;
            dst.subshape_poses = None;
            dst.points.extend(m.points.iter().filter(keep).map(|p| {
                if swapped {
                    TrackedContact::new(p.local_p2, p.local_p1, packed(p.fid2), packed(p.fid1), p.dist)
                } else {
                    TrackedContact::new(p.local_p1, p.local_p2, packed(p.fid1), packed(p.fid2), p.dist)
                }
            }));
            carry_contact_data(dst, old);
        }
        out.truncate(n);
    });
}

/// Whether a point reaches Rapier: a finite distance within the prediction.
pub(crate) fn handed_over(p: &rtcd::ContactPoint, prediction: f32) -> bool {
    p.dist <= prediction && p.dist.is_finite()
}

/// What the carry needs of a previous point: its features and its solver data.
#[derive(Clone, Copy)]
struct OldPoint {
    fid1: PackedFeatureId,
    fid2: PackedFeatureId,
    data: ContactData,
}

thread_local! {
    /// The previous points of the pair being written (reused from call to call).
    static OLD_POINTS: std::cell::RefCell<Vec<OldPoint>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// `match_contacts` (exact feature ids: the last such old point, as parry's), then the same casting
/// vertex (the first such old point) for the points it left alone; one pass over the old points per
/// new point.
fn carry_contact_data(dst: &mut RapierManifold, old: &[OldPoint]) {
    for c in &mut dst.points {
        let (mut exact, mut same_ray) = (None, None);
        for o in old {
            if o.fid1 == c.fid1 && o.fid2 == c.fid2 {
                exact = Some(o);
            } else if same_ray.is_none()
                && ((c.fid1.is_vertex() && o.fid1 == c.fid1) || (c.fid2.is_vertex() && o.fid2 == c.fid2))
            {
                same_ray = Some(o);
            }
        }
        if let Some(o) = exact.or(same_ray) {
            c.data = o.data;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;
    use rtcd::{ContactPoint, FeatureId};

    fn src(points: &[(u32, u32, f32)], n1: Vec3) -> rtcd::ContactManifold {
        rtcd::ContactManifold {
            local_n1: n1,
            local_n2: -n1,
            points: points
                .iter()
                .map(|&(v, t, d)| ContactPoint {
                    local_p1: Vec3::new(v as f32, 0.0, 0.0),
                    local_p2: Vec3::new(v as f32, d, 0.0),
                    dist: d,
                    fid1: FeatureId::Vertex(v),
                    fid2: FeatureId::Face(t),
                })
                .collect(),
        }
    }

    #[test]
    fn prediction_filter_and_manifold_count() {
        let mut out = Vec::new();
        let a = src(&[(0, 0, -0.1), (1, 0, 0.05)], Vec3::NEG_Y);
        let b = src(&[(2, 0, 0.5)], Vec3::X);
        write_manifolds(&[a.clone(), b.clone()], false, &Pose::IDENTITY, 0.02, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].points.len(), 1);
        write_manifolds(&[a, b], false, &Pose::IDENTITY, 1.0, &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!(out[1].local_n2, Vec3::NEG_X);
        write_manifolds(&[], false, &Pose::IDENTITY, 1.0, &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn swapped_source_is_written_as_its_flip() {
        let pos12 = Pose::from_parts(Vec3::new(0.1, -0.8, 0.2), glam::Quat::from_rotation_x(0.4));
        let mut m = src(&[(0, 5, -0.1), (1, 6, 0.01), (2, 7, 0.5)], Vec3::NEG_Y);
        m.local_n2 = Vec3::new(0.0, 0.6, 0.8);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        write_manifolds(std::slice::from_ref(&m), true, &pos12, 0.02, &mut a);
        write_manifolds(&[crate::convert::flipped(&m)], false, &pos12, 0.02, &mut b);
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].points.len(), 2);
        assert_eq!((a[0].local_n1, a[0].local_n2), (b[0].local_n1, b[0].local_n2));
        for (p, q) in a[0].points.iter().zip(&b[0].points) {
            assert_eq!((p.local_p1, p.local_p2, p.fid1, p.fid2, p.dist), (q.local_p1, q.local_p2, q.fid1, q.fid2, q.dist));
        }
    }

    #[test]
    fn warm_start_follows_features_then_vertex() {
        let mut out = Vec::new();
        write_manifolds(
            &[src(&[(0, 5, -0.1), (1, 5, -0.1), (2, 5, -0.1)], Vec3::NEG_Y)],
            false,
            &Pose::IDENTITY,
            0.0,
            &mut out,
        );
        for (k, p) in out[0].points.iter_mut().enumerate() {
            p.data.impulse = 1.0 + k as f32;
        }
        // Vertex 0 keeps its triangle, vertex 1 slid onto triangle 6, vertex 2 left, vertex 3 is new.
        write_manifolds(
            &[src(&[(0, 5, -0.1), (1, 6, -0.1), (3, 5, -0.1)], Vec3::NEG_Y)],
            false,
            &Pose::IDENTITY,
            0.0,
            &mut out,
        );
        let impulses: Vec<f32> = out[0].points.iter().map(|p| p.data.impulse).collect();
        assert_eq!(impulses, vec![1.0, 2.0, 0.0]);
    }
}
