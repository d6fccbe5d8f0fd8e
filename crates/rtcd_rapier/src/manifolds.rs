//! Writing rtcd manifolds into Rapier's (`parry::query::ContactManifold<ContactManifoldData,
//! ContactData>`), carrying the solver's warm-start data from the previous step's points.

use parry3d::{
    math::Pose,
    query::{ContactManifold, TrackedContact},
    shape::PackedFeatureId,
};
use rapier3d::geometry::{ContactData, ContactManifoldData};
use rustc_hash::FxHashMap;

use crate::{
    convert::packed,
    depth_bound::{HandedDepths, bound_depths, merge_deep_overlap},
};

/// Rapier's manifold type.
pub(crate) type RapierManifold = ContactManifold<ContactManifoldData, ContactData>;

/// Replaces `out` with the points of `src` whose `dist` is within `prediction`, one Rapier manifold
/// per rtcd manifold (normal group), empty groups dropped. `swapped`: `src` has shapes 1 and 2 the
/// other way round (it is flipped on the fly). A deep overlap's manifolds are merged into one, and
/// depths are bounded, as `depths` says (see the `depth_bound` module).
///
/// Existing manifolds are reused in place (their `data` is left for Rapier to refill) and surplus
/// ones removed; the caller sets a workspace so Rapier rebuilds its solver graph for the pair.
/// Warm-start data (`TrackedContact::data`: accumulated impulses) is carried over from the previous
/// points of the pair, each at most once (as Rapier's carry from its contact clusters does; parry's
/// `match_contacts` may give one point's to several): first by exact feature ids (same vertex ray,
/// same hit triangle) for every point of the pair, then, for the points left unmatched, by the same
/// vertex ray alone (its hit triangle changes as it slides over the other mesh, the contact is the
/// same).
pub(crate) fn write_manifolds(
    src: &[rtcd::ContactManifold],
    swapped: bool,
    pos12: &Pose,
    prediction: f32,
    depths: HandedDepths,
    out: &mut Vec<RapierManifold>,
) {
    let keep = |p: &&rtcd::ContactPoint| handed_over(p, prediction);
    if out.is_empty() && !src.iter().any(|m| m.points.iter().any(|p| keep(&p))) {
        return;
    }
    CARRY.with_borrow_mut(|carry| {
        carry.set_old(out);
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
        }
        out.truncate(n);
        merge_deep_overlap(out, pos12, depths.merge_from);
        for dst in out.iter_mut() {
            bound_depths(dst, depths.bound);
        }
        carry.apply(out);
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
    /// The previous points of the pair being written and their lookup tables (reused from call to
    /// call).
    static CARRY: std::cell::RefCell<Carry> = std::cell::RefCell::new(Carry::default());
}

/// From this many previous points on, [`Carry`] looks them up in hash maps instead of scanning them
/// for every new point (the scan is quadratic; a resting pair on a large mesh holds dozens of points).
const CARRY_INDEX_FROM: usize = 12;

/// The warm-start carry of one pair: its previous points, and, when there are many, where to find
/// them by feature.
#[derive(Default)]
struct Carry {
    old: Vec<OldPoint>,
    /// Old points whose data a new point took (each goes to one new point at most).
    taken: Vec<bool>,
    /// New points that got data (by the pair's points in order; reused from pair to pair).
    filled: Vec<bool>,
    /// Whether the maps below index `old`.
    indexed: bool,
    /// `(fid1, fid2)` → the last old point with these features.
    exact: FxHashMap<(u32, u32), u32>,
    /// Vertex `fid1` → the first old point with it; the same for `fid2`.
    vertex1: FxHashMap<u32, u32>,
    vertex2: FxHashMap<u32, u32>,
}

impl Carry {
    /// Takes the points of `manifolds` (the pair's previous ones) as the old points.
    fn set_old(&mut self, manifolds: &[RapierManifold]) {
        self.old.clear();
        for m in manifolds {
            self.old.extend(m.points.iter().map(|p| OldPoint { fid1: p.fid1, fid2: p.fid2, data: p.data }));
        }
        self.taken.clear();
        self.taken.resize(self.old.len(), false);
        self.indexed = self.old.len() >= CARRY_INDEX_FROM;
        if self.indexed {
            self.exact.clear();
            self.vertex1.clear();
            self.vertex2.clear();
            for (i, o) in self.old.iter().enumerate() {
                let i = i as u32;
                self.exact.insert((o.fid1.0, o.fid2.0), i);
                if o.fid1.is_vertex() {
                    self.vertex1.entry(o.fid1.0).or_insert(i);
                }
                if o.fid2.is_vertex() {
                    self.vertex2.entry(o.fid2.0).or_insert(i);
                }
            }
        }
    }

    /// Sets the solver data of the points of `out` (the pair's new manifolds) from the old points,
    /// each old point going to one new point at most: first every exact match (the same feature
    /// ids: the last such old point, as parry's `match_contacts`), then, for the points still
    /// without, the same casting vertex (the first such old point). Looks the old points up when
    /// they are many, scans them otherwise ([`Carry::apply_with`]), with the same result.
    fn apply(&mut self, out: &mut [RapierManifold]) {
        self.apply_with(out, self.indexed);
    }

    fn apply_with(&mut self, out: &mut [RapierManifold], indexed: bool) {
        let mut filled = std::mem::take(&mut self.filled);
        filled.clear();
        for exact_pass in [true, false] {
            for (k, c) in out.iter_mut().flat_map(|m| m.points.iter_mut()).enumerate() {
                if exact_pass {
                    filled.push(false);
                }
                if !filled[k] {
                    let found =
                        if exact_pass { self.exact_of(c, indexed) } else { self.same_ray_of(c, indexed) };
                    if let Some(i) = found.filter(|&i| !self.taken[i]) {
                        c.data = self.old[i].data;
                        self.taken[i] = true;
                        filled[k] = true;
                    }
                }
            }
        }
        self.filled = filled;
    }

    /// The last old point with `c`'s feature ids.
    fn exact_of(&self, c: &TrackedContact<ContactData>, indexed: bool) -> Option<usize> {
        if indexed {
            return self.exact.get(&(c.fid1.0, c.fid2.0)).map(|&i| i as usize);
        }
        self.old.iter().rposition(|o| o.fid1 == c.fid1 && o.fid2 == c.fid2)
    }

    /// The first old point cast from `c`'s vertex (of either shape).
    fn same_ray_of(&self, c: &TrackedContact<ContactData>, indexed: bool) -> Option<usize> {
        if indexed {
            let v1 = c.fid1.is_vertex().then(|| self.vertex1.get(&c.fid1.0)).flatten();
            let v2 = c.fid2.is_vertex().then(|| self.vertex2.get(&c.fid2.0)).flatten();
            return v1.into_iter().chain(v2).min().map(|&i| i as usize);
        }
        self.old.iter().position(|o| {
            (c.fid1.is_vertex() && o.fid1 == c.fid1) || (c.fid2.is_vertex() && o.fid2 == c.fid2)
        })
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
        write_manifolds(
            &[a.clone(), b.clone()],
            false,
            &Pose::IDENTITY,
            0.02,
            HandedDepths::AS_MEASURED,
            &mut out,
        );
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].points.len(), 1);
        write_manifolds(&[a, b], false, &Pose::IDENTITY, 1.0, HandedDepths::AS_MEASURED, &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!(out[1].local_n2, Vec3::NEG_X);
        write_manifolds(&[], false, &Pose::IDENTITY, 1.0, HandedDepths::AS_MEASURED, &mut out);
        assert!(out.is_empty());
    }

    /// Points deeper than the bound are handed over at the bound, the others as they are.
    #[test]
    fn depth_bound_clamps_deep_points() {
        let mut out = Vec::new();
        let deep = src(&[(0, 0, -0.4), (1, 0, -0.02)], Vec3::NEG_Y);
        let shallow = src(&[(2, 0, -0.03), (3, 0, 0.01)], Vec3::X);
        write_manifolds(
            &[deep, shallow],
            false,
            &Pose::IDENTITY,
            0.02,
            HandedDepths { bound: 0.05, merge_from: 0.05 },
            &mut out,
        );
        let dists: Vec<Vec<f32>> = out.iter().map(|m| m.points.iter().map(|p| p.dist).collect()).collect();
        assert_eq!(dists, vec![vec![-0.05, -0.02], vec![-0.03, 0.01]]);
    }

    #[test]
    fn swapped_source_is_written_as_its_flip() {
        let pos12 = Pose::from_parts(Vec3::new(0.1, -0.8, 0.2), glam::Quat::from_rotation_x(0.4));
        let mut m = src(&[(0, 5, -0.1), (1, 6, 0.01), (2, 7, 0.5)], Vec3::NEG_Y);
        m.local_n2 = Vec3::new(0.0, 0.6, 0.8);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        write_manifolds(std::slice::from_ref(&m), true, &pos12, 0.02, HandedDepths::AS_MEASURED, &mut a);
        write_manifolds(
            &[crate::convert::flipped(&m)],
            false,
            &pos12,
            0.02,
            HandedDepths::AS_MEASURED,
            &mut b,
        );
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].points.len(), 2);
        assert_eq!((a[0].local_n1, a[0].local_n2), (b[0].local_n1, b[0].local_n2));
        for (p, q) in a[0].points.iter().zip(&b[0].points) {
            assert_eq!(
                (p.local_p1, p.local_p2, p.fid1, p.fid2, p.dist),
                (q.local_p1, q.local_p2, q.fid1, q.fid2, q.dist)
            );
        }
    }

    /// The looked-up carry gives what the scan gives, on seeded random features drawn from a few
    /// vertices, edges and faces (so repeats, exact and same-vertex matches all occur).
    #[test]
    fn indexed_carry_matches_scan() {
        let mut s = 0x2545_F491_4F6C_DD1Du64;
        let mut next = |n: u32| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s % n as u64) as u32
        };
        let feature = |next: &mut dyn FnMut(u32) -> u32| match next(3) {
            0 => PackedFeatureId::vertex(next(6)),
            1 => PackedFeatureId::edge(next(6)),
            _ => PackedFeatureId::face(next(6)),
        };
        let mut lookups = 0;
        for round in 0..200 {
            let old_n = CARRY_INDEX_FROM + (round % 30);
            let mut prev = RapierManifold::with_data(0, 0, ContactManifoldData::default());
            for k in 0..old_n {
                let mut c: TrackedContact<ContactData> =
                    TrackedContact::new(Vec3::ZERO, Vec3::ZERO, feature(&mut next), feature(&mut next), 0.0);
                c.data.impulse = k as f32 + 1.0;
                prev.points.push(c);
            }
            let (mut carry, mut scan) = (Carry::default(), Carry::default());
            carry.set_old(std::slice::from_ref(&prev));
            scan.set_old(std::slice::from_ref(&prev));
            assert!(carry.indexed);
            let mut a = RapierManifold::with_data(0, 0, ContactManifoldData::default());
            for _ in 0..20 {
                a.points.push(TrackedContact::new(
                    Vec3::ZERO,
                    Vec3::ZERO,
                    feature(&mut next),
                    feature(&mut next),
                    0.0,
                ));
            }
            let mut b = a.clone();
            carry.apply_with(std::slice::from_mut(&mut a), true);
            scan.apply_with(std::slice::from_mut(&mut b), false);
            let (ia, ib): (Vec<f32>, Vec<f32>) =
                a.points.iter().zip(&b.points).map(|(p, q)| (p.data.impulse, q.data.impulse)).unzip();
            assert_eq!(ia, ib, "round {round}");
            lookups += ia.iter().filter(|i| **i > 0.0).count();
        }
        // Both kinds of match happen (not a comparison of two empty results).
        assert!(lookups > 500, "{lookups}");
    }

    #[test]
    fn warm_start_follows_features_then_vertex() {
        let mut out = Vec::new();
        write_manifolds(
            &[src(&[(0, 5, -0.1), (1, 5, -0.1), (2, 5, -0.1)], Vec3::NEG_Y)],
            false,
            &Pose::IDENTITY,
            0.0,
            HandedDepths::AS_MEASURED,
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
            HandedDepths::AS_MEASURED,
            &mut out,
        );
        let impulses: Vec<f32> = out[0].points.iter().map(|p| p.data.impulse).collect();
        assert_eq!(impulses, vec![1.0, 2.0, 0.0]);
    }

    /// Each previous point's impulse goes to one new point at most, an exact match before a point of
    /// the same vertex ray: vertex 0 cast against triangle 5 and then against 5 and 9 (in either
    /// order) gives its impulse to the exact match alone.
    #[test]
    fn warm_start_is_carried_once() {
        let mut out = Vec::new();
        let write = |m: rtcd::ContactManifold, out: &mut Vec<RapierManifold>| {
            write_manifolds(&[m], false, &Pose::IDENTITY, 0.0, HandedDepths::AS_MEASURED, out)
        };
        write(src(&[(0, 5, -0.1)], Vec3::NEG_Y), &mut out);
        out[0].points[0].data.impulse = 1.0;
        write(src(&[(0, 5, -0.1), (0, 9, -0.1)], Vec3::NEG_Y), &mut out);
        let impulses: Vec<f32> = out[0].points.iter().map(|p| p.data.impulse).collect();
        assert_eq!(impulses, vec![1.0, 0.0], "not duplicated");
        // The exact match first, wherever it comes: listed after a point of the same vertex ray.
        write(src(&[(0, 5, -0.1)], Vec3::NEG_Y), &mut out);
        out[0].points[0].data.impulse = 4.0;
        write(src(&[(0, 9, -0.1), (0, 5, -0.1)], Vec3::NEG_Y), &mut out);
        let impulses: Vec<f32> = out[0].points.iter().map(|p| p.data.impulse).collect();
        assert_eq!(impulses, vec![0.0, 4.0], "the exact match first");
    }
}
