//! Writing rtcd manifolds into Rapier's (`parry::query::ContactManifold<ContactManifoldData,
//! ContactData>`), carrying the solver's warm-start data from the previous step's points.

use parry3d::{
    math::Pose,
    query::{ContactManifold, TrackedContact},
};
use rapier3d::geometry::{ContactData, ContactManifoldData};

use crate::convert::packed;

/// Rapier's manifold type.
pub(crate) type RapierManifold = ContactManifold<ContactManifoldData, ContactData>;

/// Replaces `out` with the points of `src` whose `dist` is within `prediction`, one Rapier manifold
/// per rtcd manifold (normal group), empty groups dropped.
///
/// Existing manifolds are reused in place (their `data` is left for Rapier to refill) and surplus
/// ones removed; the caller sets a workspace so Rapier rebuilds its solver graph for the pair.
/// Warm-start data (`TrackedContact::data`: accumulated impulses) is carried over from every previous
/// point of the pair, first by exact feature ids (`match_contacts`: same vertex ray, same hit
/// triangle), then, for points left unmatched, by the same vertex ray alone (its hit triangle
/// changes as it slides over the other mesh, the contact is the same).
pub(crate) fn write_manifolds(
    src: &[rtcd::ContactManifold],
    pos12: &Pose,
    prediction: f32,
    out: &mut Vec<RapierManifold>,
) {
    let old: Vec<TrackedContact<ContactData>> = out.iter().flat_map(|m| m.points.iter().copied()).collect();
    let mut n = 0;
    for m in src {
        let keep = |p: &&rtcd::ContactPoint| p.dist <= prediction && p.dist.is_finite();
        if !m.points.iter().any(|p| keep(&p)) {
            continue;
        }
        if n == out.len() {
            out.push(ContactManifold::with_data(0, 0, ContactManifoldData::default()));
        }
        let dst = &mut out[n];
        n += 1;
        dst.points.clear();
        dst.local_n1 = m.local_n1;
        dst.local_n2 = pos12.rotation.inverse() * -m.local_n1;
        dst.subshape1 = 0;
        dst.subshape2 = 0;
        dst.subshape_poses = None;
        dst.points.extend(
            m.points
                .iter()
                .filter(keep)
                .map(|p| TrackedContact::new(p.local_p1, p.local_p2, packed(p.fid1), packed(p.fid2), p.dist)),
        );
        carry_contact_data(dst, &old);
    }
    out.truncate(n);
}

/// `match_contacts` (exact feature ids), then the same casting vertex for the points it left alone.
fn carry_contact_data(dst: &mut RapierManifold, old: &[TrackedContact<ContactData>]) {
    dst.match_contacts(old);
    for c in &mut dst.points {
        if old.iter().any(|o| o.fid1 == c.fid1 && o.fid2 == c.fid2) {
            continue;
        }
        let same_ray = |o: &&TrackedContact<ContactData>| {
            (c.fid1.is_vertex() && o.fid1 == c.fid1) || (c.fid2.is_vertex() && o.fid2 == c.fid2)
        };
        if let Some(o) = old.iter().find(same_ray) {
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
        write_manifolds(&[a.clone(), b.clone()], &Pose::IDENTITY, 0.02, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].points.len(), 1);
        write_manifolds(&[a, b], &Pose::IDENTITY, 1.0, &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!(out[1].local_n2, Vec3::NEG_X);
        write_manifolds(&[], &Pose::IDENTITY, 1.0, &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn warm_start_follows_features_then_vertex() {
        let mut out = Vec::new();
        write_manifolds(
            &[src(&[(0, 5, -0.1), (1, 5, -0.1), (2, 5, -0.1)], Vec3::NEG_Y)],
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
            &Pose::IDENTITY,
            0.0,
            &mut out,
        );
        let impulses: Vec<f32> = out[0].points.iter().map(|p| p.data.impulse).collect();
        assert_eq!(impulses, vec![1.0, 2.0, 0.0]);
    }
}
