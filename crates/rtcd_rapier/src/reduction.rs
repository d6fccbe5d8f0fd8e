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

use rtcd::{
    ContactManifold, PairOutput,
    contact::{ContactCandidate, ReduceScratch, reduce_manifolds_with},
};

/// Reusable buffers.
#[derive(Default)]
pub(crate) struct Reducer {
    scratch: ReduceScratch,
    support: Vec<ContactCandidate>,
    speculative: Vec<ContactCandidate>,
    speculative_manifolds: Vec<ContactManifold>,
}

impl Reducer {
    /// The manifolds of one backend output: the two-tier reduction of its candidates
    /// ([`rtcd::StepOptions::keep_contacts`]) within `prediction`, the support tier being the
    /// candidates within `support_fraction × prediction` of touching. A backend that returned no
    /// candidates but manifolds keeps its own manifolds.
    pub(crate) fn reduce_output(
        &mut self,
        out: PairOutput,
        pos12: &rtcd::Pose,
        max_angle: f32,
        prediction: f32,
        support_fraction: f32,
    ) -> Vec<ContactManifold> {
        if out.contacts.is_empty() {
            return out.manifolds;
        }
        self.reduce(&out.contacts, pos12, max_angle, prediction, support_fraction * prediction)
    }

    /// Reduces `candidates` (shape 1's frame, `pos12` shape 2's pose in it) into manifolds grouped
    /// within `max_angle`, support tier first. Candidates beyond `prediction` are dropped.
    pub(crate) fn reduce(
        &mut self,
        candidates: &[ContactCandidate],
        pos12: &rtcd::Pose,
        max_angle: f32,
        prediction: f32,
        support_slop: f32,
    ) -> Vec<ContactManifold> {
        self.support.clear();
        self.speculative.clear();
        for c in candidates.iter().filter(|c| c.dist.is_finite() && c.dist <= prediction) {
            if c.dist <= support_slop { self.support.push(*c) } else { self.speculative.push(*c) }
        }
        let mut out = Vec::new();
        reduce_manifolds_with(&mut self.support, pos12, max_angle, &mut self.scratch, &mut out);
        self.speculative_manifolds.clear();
        reduce_manifolds_with(
            &mut self.speculative,
            pos12,
            max_angle,
            &mut self.scratch,
            &mut self.speculative_manifolds,
        );
        let cos_max = max_angle.cos();
        let supported = out.len();
        for m in self.speculative_manifolds.drain(..) {
            if !out[..supported].iter().any(|s| s.local_n1.dot(m.local_n1) >= cos_max) {
                out.push(m);
            }
        }
        out
    }
}
