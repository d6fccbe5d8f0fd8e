//! Contact reduction: candidates grouped by normal into manifolds of at most four points, the
//! deepest point plus the extremes of the contact patch (the usual reduction of Bullet and
//! Rapier; the 2014 paper's "contact-points reduction").

use arrayvec::ArrayVec;
use glam::Vec3;

use super::{ContactCandidate, ContactManifold, ContactPoint, MAX_MANIFOLD_POINTS};
use crate::pose::Pose;

/// Reusable buffers for [`reduce_manifolds_with`]: no allocation per call once warm.
#[derive(Clone, Debug, Default)]
pub struct ReduceScratch {
    subset: Vec<u32>,
    members: Vec<u32>,
    flat: Vec<Vec3>,
}

/// Groups `candidates` (shape 1's frame) by normal and keeps at most four points per group.
///
/// Candidates are taken deepest first (their indices are sorted; the slice is not reordered); the deepest unassigned one seeds a manifold, and every
/// unassigned candidate whose normal is within `max_angle` of the seed's joins it. Each manifold keeps
/// its deepest point, the point farthest from it, the point farthest from the line through those two,
/// and the point farthest on the other side of that line. Manifolds come deepest first; points deepest
/// first. The manifold normal is its deepest point's.
pub fn reduce_manifolds(
    candidates: &[ContactCandidate],
    pos12: &Pose,
    max_angle: f32,
) -> Vec<ContactManifold> {
    let mut out = Vec::new();
    reduce_manifolds_with(candidates, pos12, max_angle, &mut ReduceScratch::default(), &mut out);
    out
}

/// [`reduce_manifolds`] with caller-owned buffers, appending to `out`.
pub fn reduce_manifolds_with(
    candidates: &[ContactCandidate],
    pos12: &Pose,
    max_angle: f32,
    scratch: &mut ReduceScratch,
    out: &mut Vec<ContactManifold>,
) {
    let mut subset = std::mem::take(&mut scratch.subset);
    subset.clear();
    subset.extend(0..candidates.len() as u32);
    reduce_subset_with(candidates, &mut subset, pos12, max_angle, scratch, out);
    scratch.subset = subset;
}

/// [`reduce_manifolds_with`] over the candidates whose indices `subset` holds (in any order; it is
/// left empty), without copying them.
pub fn reduce_subset_with(
    candidates: &[ContactCandidate],
    subset: &mut Vec<u32>,
    pos12: &Pose,
    max_angle: f32,
    scratch: &mut ReduceScratch,
    out: &mut Vec<ContactManifold>,
) {
    if subset.is_empty() {
        return;
    }
    let cos_max = max_angle.cos();
    // Deepest first; features break ties, so the order is total (a pair's candidates have distinct
    // features) and the same whatever the sort moves.
    subset.sort_unstable_by(|&a, &b| {
        let (a, b) = (&candidates[a as usize], &candidates[b as usize]);
        a.dist.total_cmp(&b.dist).then_with(|| fid_key(a).cmp(&fid_key(b)))
    });
    // `subset` holds the unassigned candidates, in order; each group takes its members out, so later
    // seeds scan only what is left.
    let rest = subset;
    let inv12 = pos12.inverse();
    while let Some(&seed) = rest.first() {
        let n1 = candidates[seed as usize].n1;
        // The seed always joins (its own dot product may round below a `max_angle` of 0).
        scratch.members.clear();
        scratch.members.push(seed);
        let mut left = 0;
        for k in 1..rest.len() {
            let i = rest[k];
            if n1.dot(candidates[i as usize].n1) >= cos_max {
                scratch.members.push(i);
            } else {
                rest[left] = i;
                left += 1;
            }
        }
        rest.truncate(left);
        let chosen = select_points(candidates, &scratch.members, n1, &mut scratch.flat);
        out.push(ContactManifold {
            local_n1: n1,
            local_n2: inv12.transform_vector(-n1),
            points: chosen
                .iter()
                .map(|&i| {
                    let c = &candidates[i as usize];
                    ContactPoint {
                        local_p1: c.p1,
                        local_p2: inv12.transform_point(c.p2),
                        dist: c.dist,
                        fid1: c.fid1,
                        fid2: c.fid2,
                    }
                })
                .collect(),
        });
    }
}

/// A total order on features, so equal depths sort the same way on every run and backend.
fn fid_key(c: &ContactCandidate) -> (u64, u64) {
    (c.fid1.packed(), c.fid2.packed())
}

/// `members` index `all`, deepest first. Returns at most four of them, deepest first.
fn select_points(
    all: &[ContactCandidate],
    members: &[u32],
    n: Vec3,
    flat: &mut Vec<Vec3>,
) -> ArrayVec<u32, MAX_MANIFOLD_POINTS> {
    if members.len() <= MAX_MANIFOLD_POINTS {
        return members.iter().copied().collect();
    }
    // Work in the tangent plane; `flat[k]` is member k's projected point.
    flat.clear();
    flat.extend(members.iter().map(|&i| {
        let p = all[i as usize].p1;
        p - n * p.dot(n)
    }));
    let a = 0;
    let pa = flat[a];
    let b = argmax(flat, |p| p.distance_squared(pa), &[a]);
    let ab = flat[b] - pa;
    let side = |p: Vec3| (p - pa).cross(ab).dot(n);
    let c = argmax(flat, |p| side(p).abs(), &[a, b]);
    let sc = side(flat[c]).signum();
    let d = argmax(flat, |p| -sc * side(p), &[a, b, c]);
    let mut idx: ArrayVec<usize, MAX_MANIFOLD_POINTS> = [a, b, c, d].into_iter().collect();
    // Deepest first: members are sorted by depth.
    idx.sort_unstable();
    let mut out = ArrayVec::new();
    for k in idx {
        if out.last() != Some(&members[k]) {
            out.push(members[k]);
        }
    }
    out
}

fn argmax(points: &[Vec3], score: impl Fn(Vec3) -> f32, exclude: &[usize]) -> usize {
    let mut best = (f32::NEG_INFINITY, exclude[0]);
    for (k, p) in points.iter().enumerate() {
        let s = score(*p);
        if s > best.0 && !exclude.contains(&k) {
            best = (s, k);
        }
    }
    best.1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::FeatureId;

    fn cand(p: Vec3, n: Vec3, dist: f32, id: u32) -> ContactCandidate {
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
    fn square_patch_keeps_corners_and_deepest() {
        let mut c = Vec::new();
        let mut id = 0;
        for i in 0..5 {
            for j in 0..5 {
                let d = if (i, j) == (2, 2) { -0.2 } else { -0.1 };
                c.push(cand(Vec3::new(i as f32, 0.0, j as f32), Vec3::NEG_Y, d, id));
                id += 1;
            }
        }
        let m = reduce_manifolds(&c, &Pose::IDENTITY, 5f32.to_radians());
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].points.len(), 4);
        assert_eq!(m[0].points[0].dist, -0.2);
        // The other three are patch corners.
        for p in &m[0].points[1..] {
            assert!(
                (p.local_p1.x == 0.0 || p.local_p1.x == 4.0) && (p.local_p1.z == 0.0 || p.local_p1.z == 4.0)
            );
        }
    }

    #[test]
    fn normals_apart_make_separate_manifolds() {
        let c = vec![
            cand(Vec3::ZERO, Vec3::NEG_Y, -0.1, 0),
            cand(Vec3::X, Vec3::new(0.0, -1.0, 0.01).normalize(), -0.1, 1),
            cand(Vec3::Z, Vec3::X, -0.05, 2),
        ];
        let m = reduce_manifolds(&c, &Pose::IDENTITY, 5f32.to_radians());
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].points.len(), 2);
        assert_eq!(m[1].local_n1, Vec3::X);
        assert_eq!(m[1].local_n2, Vec3::NEG_X);
    }

    /// The index-based reduction of a subset gives what the copy-and-sort reduction of the same
    /// candidates gives, on seeded random candidates (a few normal directions, ties in depth, a
    /// shuffled subset), and leaves the candidates untouched.
    #[test]
    fn subset_reduction_matches_reduction_of_a_copy() {
        use rand::{Rng, SeedableRng, seq::SliceRandom};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
        let mut groups = 0;
        for _ in 0..300 {
            let n = rng.random_range(1..60);
            let dirs = [
                Vec3::NEG_Y,
                Vec3::X,
                Vec3::new(0.0, -1.0, 0.05).normalize(),
                Vec3::new(1.0, 1.0, 0.0).normalize(),
            ];
            let c: Vec<ContactCandidate> = (0..n)
                .map(|id| {
                    let p = Vec3::new(
                        rng.random_range(-1.0..1.0),
                        rng.random_range(-1.0..1.0),
                        rng.random_range(-1.0..1.0),
                    );
                    // Depths on a coarse grid, so ties (broken by features) are common.
                    let d = rng.random_range(-4..3) as f32 * 0.01;
                    let mut c = cand(p, dirs[rng.random_range(0..dirs.len())], d, id);
                    if rng.random_bool(0.5) {
                        std::mem::swap(&mut c.fid1, &mut c.fid2);
                    }
                    c
                })
                .collect();
            let mut subset: Vec<u32> = (0..n).filter(|_| rng.random_bool(0.7)).collect();
            subset.shuffle(&mut rng);
            let copy: Vec<ContactCandidate> = subset.iter().map(|&i| c[i as usize]).collect();
            let pose = Pose::new(Vec3::new(0.1, 0.2, 0.3), glam::Quat::from_rotation_z(0.3));
            let expected = reduce_manifolds(&copy, &pose, 5f32.to_radians());
            let before = c.clone();
            let (mut got, mut scratch) = (Vec::new(), ReduceScratch::default());
            reduce_subset_with(&c, &mut subset, &pose, 5f32.to_radians(), &mut scratch, &mut got);
            assert_eq!(got, expected);
            assert_eq!(c, before);
            assert!(subset.is_empty());
            groups += got.len();
        }
        assert!(groups > 600, "{groups}");
    }
}
