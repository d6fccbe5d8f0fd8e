//! Contact reduction for Rapier's solver: at most four points per normal direction reach it, so
//! they must describe the support of a resting contact, not the vertices that merely lie within the
//! prediction distance.
//!
//! rtcd reduces each normal group to its deepest point and the extremes of the patch (Bullet's and
//! Rapier's reduction). With a prediction distance, every vertex within it is a speculative
//! candidate, and on curved or tessellated surfaces the extremes are then speculative vertices up to
//! the prediction distance away, while the touching points are left out: the body rocks on its
//! deepest point and never sleeps. Rapier's contact clustering merges groups within ~5° and reduces
//! again the same way, so keeping them in a separate manifold would not help either.
//!
//! Two tiers instead: the *support* candidates (within `support_slop` of touching, penetrating ones
//! included) are reduced first; the *speculative* ones are reduced separately and kept only for
//! normal directions the support does not already cover (a region closing in before it touches).
//! With rtcd's single-tier reduction the bodies of a pile such as `tests/pile_in_box.rs`'s keep
//! rocking at a few cm/s and never sleep; with two tiers they come to rest and sleep.

use rtcd::{
    ContactManifold, PairOutput,
    contact::{ContactCandidate, ReduceScratch, reduce_subset_with},
};

/// Reusable buffers.
#[derive(Default)]
pub(crate) struct Reducer {
    scratch: ReduceScratch,
    /// Indices of the support and of the speculative candidates.
    support: Vec<u32>,
    speculative: Vec<u32>,
    manifolds: Vec<ContactManifold>,
}

thread_local! {
    static LOCAL: std::cell::RefCell<Reducer> = std::cell::RefCell::new(Reducer::default());
}

impl Reducer {
    /// Runs `f` on this thread's reducer (its buffers are kept from call to call). `f` must not
    /// call `with_local` again.
    pub(crate) fn with_local<R>(f: impl FnOnce(&mut Reducer) -> R) -> R {
        LOCAL.with_borrow_mut(f)
    }

    /// The manifolds of one backend output: the two-tier reduction of its candidates
    /// ([`rtcd::StepOptions::keep_contacts`]) within `reach` (at least `prediction`: farther for
    /// results used late, whose contacts are refreshed as the pair closes in), the support tier
    /// being the candidates within `support_fraction × min(prediction, scale)` of touching, `scale` being the
    /// pair's length ([`rtcd::RtcdMesh::length_scale`], the smaller of the two): a body small for
    /// the world's units (a 1 cm prop under a 2 cm prediction) would otherwise count a fifth of its
    /// height as support, and its four points would be extremes of that band rather than where it
    /// touches. A backend that returned no candidates but manifolds keeps its own manifolds.
    #[expect(clippy::too_many_arguments, reason = "one pair's reduction, with the cache's settings")]
    pub(crate) fn reduce_output(
        &mut self,
        out: &mut PairOutput,
        pos12: &rtcd::Pose,
        max_angle: f32,
        speculative_angle: f32,
        prediction: f32,
        reach: f32,
        support_fraction: f32,
        scale: f32,
    ) -> Vec<ContactManifold> {
        if out.contacts.is_empty() {
            return std::mem::take(&mut out.manifolds);
        }
        self.reduce(
            &out.contacts,
            pos12,
            max_angle,
            speculative_angle,
            reach.max(prediction),
            support_fraction * prediction.min(scale),
            out.moving,
        )
    }

    /// Reduces `candidates` (shape 1's frame, `pos12` shape 2's pose in it) into manifolds, support
    /// tier first: support groups within `max_angle`, speculative groups within `speculative_angle`
    /// (kept where no support group is within `max_angle` of their normal, or all of them with
    /// `keep_covered`). Candidates beyond `prediction` are dropped.
    #[expect(clippy::too_many_arguments, reason = "one pair's reduction, with the cache's settings")]
    pub(crate) fn reduce(
        &mut self,
        candidates: &[ContactCandidate],
        pos12: &rtcd::Pose,
        max_angle: f32,
        speculative_angle: f32,
        prediction: f32,
        support_slop: f32,
        keep_covered: bool,
    ) -> Vec<ContactManifold> {
        self.support.clear();
        self.speculative.clear();
        for (k, c) in candidates.iter().enumerate() {
            if c.dist.is_finite() && c.dist <= prediction {
                if c.dist <= support_slop {
                    self.support.push(k as u32)
                } else {
                    self.speculative.push(k as u32)
                }
            }
        }
        // Built in a reused buffer, then copied once into a vector of the right size (growing the
        // result manifold by manifold moved every manifold two or three times).
        let out = &mut self.manifolds;
        out.clear();
        reduce_subset_with(candidates, &mut self.support, pos12, max_angle, &mut self.scratch, out);
        let supported = out.len();
        reduce_subset_with(
            candidates,
            &mut self.speculative,
            pos12,
            speculative_angle,
            &mut self.scratch,
            out,
        );
        // Speculative groups stay only where no support group has their normal, but all of a moving
        // pair's; kept in order.
        let cos_max = max_angle.cos();
        let mut kept = supported;
        for k in supported..out.len() {
            let n = out[k].local_n1;
            if keep_covered || !out[..supported].iter().any(|s| s.local_n1.dot(n) >= cos_max) {
                out.swap(kept, k);
                kept += 1;
            }
        }
        out.truncate(kept);
        out.to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;
    use rtcd::FeatureId;

    fn cand(x: f32, z: f32, dist: f32, n: Vec3, id: u32) -> ContactCandidate {
        let p = Vec3::new(x, 0.0, z);
        ContactCandidate {
            p1: p,
            p2: p + n * dist,
            n1: n,
            dist,
            fid1: FeatureId::Vertex(id),
            fid2: FeatureId::Face(0),
        }
    }

    #[test]
    fn support_points_win_over_speculative_extremes() {
        // A resting patch of four touching vertices in a 0.2 square, and a ring of vertices up to
        // 1.5 cm above the ground farther out, all with the same normal.
        let mut c = vec![];
        for (k, (x, z)) in [(-0.1, -0.1), (0.1, -0.1), (0.1, 0.1), (-0.1, 0.1)].into_iter().enumerate() {
            c.push(cand(x, z, -0.001 * k as f32, Vec3::NEG_Y, k as u32));
        }
        for k in 0..16 {
            let a = k as f32 * std::f32::consts::TAU / 16.0;
            c.push(cand(0.5 * a.cos(), 0.5 * a.sin(), 0.015, Vec3::NEG_Y, 100 + k));
        }
        let mut r = Reducer::default();
        let m = r.reduce(&c, &rtcd::Pose::IDENTITY, 5f32.to_radians(), 5f32.to_radians(), 0.02, 0.002, false);
        assert_eq!(m.len(), 1);
        let ids: Vec<_> = m[0].points.iter().map(|p| p.fid1).collect();
        assert!(ids.iter().all(|f| matches!(f, FeatureId::Vertex(v) if *v < 4)), "{ids:?}");
        assert_eq!(m[0].points.len(), 4);
        // rtcd's own reduction keeps speculative extremes instead.
        let plain = rtcd::contact::reduce_manifolds(&c, &rtcd::Pose::IDENTITY, 5f32.to_radians());
        assert!(plain[0].points.iter().any(|p| p.dist > 0.01));
    }

    #[test]
    fn a_moving_pair_keeps_its_covered_speculative_points_beside_the_support() {
        // A plate touching at one corner, its other corners 1-3 mm above, all with one normal.
        let mut c = vec![cand(-0.5, -0.5, -0.002, Vec3::NEG_Y, 0), cand(-0.4, -0.5, -0.001, Vec3::NEG_Y, 1)];
        for (k, (x, z, d)) in
            [(0.5, -0.5, 0.001), (0.5, 0.5, 0.003), (-0.5, 0.5, 0.001)].into_iter().enumerate()
        {
            c.push(cand(x, z, d, Vec3::NEG_Y, 2 + k as u32));
        }
        let mut r = Reducer::default();
        let reduce = |r: &mut Reducer, moving| {
            r.reduce(&c, &rtcd::Pose::IDENTITY, 5f32.to_radians(), 5f32.to_radians(), 0.02, 0.0005, moving)
        };
        let at_rest = reduce(&mut r, false);
        assert_eq!(at_rest.len(), 1);
        assert!(at_rest[0].points.iter().all(|p| p.dist <= 0.0));
        let moving = reduce(&mut r, true);
        assert_eq!(moving.len(), 2);
        assert_eq!(moving[0].points, at_rest[0].points, "the support is the same");
        assert_eq!(moving[1].points.len(), 3, "the three other corners, speculative");
        assert!(moving[1].points.iter().all(|p| p.dist > 0.0));
    }

    #[test]
    fn speculative_points_kept_where_nothing_touches() {
        let c = vec![
            cand(0.0, 0.0, -0.001, Vec3::NEG_Y, 0),
            cand(0.3, 0.0, 0.01, Vec3::NEG_Y, 1),
            cand(0.0, 0.3, 0.01, Vec3::X, 2),
            cand(0.0, 0.4, 0.03, Vec3::X, 3),
        ];
        let mut r = Reducer::default();
        let m = r.reduce(&c, &rtcd::Pose::IDENTITY, 5f32.to_radians(), 5f32.to_radians(), 0.02, 0.002, false);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].local_n1, Vec3::NEG_Y);
        assert_eq!(m[0].points.len(), 1);
        assert_eq!(m[1].local_n1, Vec3::X);
        assert_eq!(m[1].points.len(), 1, "beyond the prediction is dropped");
    }

    #[test]
    fn speculative_angle_merges_speculative_groups_only() {
        let tilted = |deg: f32| Vec3::new(deg.to_radians().sin(), -deg.to_radians().cos(), 0.0);
        let c = vec![
            // Support: two touching points whose normals are 20° apart.
            cand(0.0, 0.0, -0.001, tilted(0.0), 0),
            cand(0.1, 0.0, -0.001, tilted(20.0), 1),
            // Speculative: two points 20° apart, away from both support normals.
            cand(0.0, 0.3, 0.01, tilted(90.0), 2),
            cand(0.0, 0.4, 0.012, tilted(110.0), 3),
        ];
        let mut r = Reducer::default();
        let [narrow, wide] = [5f32, 30.0].map(|a| {
            let m =
                r.reduce(&c, &rtcd::Pose::IDENTITY, 5f32.to_radians(), a.to_radians(), 0.02, 0.002, false);
            m.iter().map(|m| m.points.len()).collect::<Vec<_>>()
        });
        assert_eq!(narrow, [1, 1, 1, 1]);
        assert_eq!(wide, [1, 1, 2], "support groups stay apart, speculative ones merge");
        let s = crate::CacheSettings {
            speculative_angle: Some(f32::NAN),
            ..crate::ContactCache::new(
                rtcd::RtcdParams::from_triangle_size(0.1),
                crate::ground::GroundMeshes::new(),
            )
            .unwrap()
            .settings()
        };
        assert_eq!(s.speculative_angle_or(0.1), 0.1);
        assert_eq!(crate::CacheSettings { speculative_angle: Some(0.5), ..s }.speculative_angle_or(0.1), 0.5);
    }
}
