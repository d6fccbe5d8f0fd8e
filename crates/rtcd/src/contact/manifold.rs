//! Contact reduction: candidates grouped by normal into manifolds of at most four points, the
//! deepest point plus the extremes of the contact patch (the usual reduction of Bullet and
//! Rapier; the 2014 paper's "contact-points reduction").

use glam::Vec3;

use super::{ContactCandidate, ContactManifold, ContactPoint, MAX_MANIFOLD_POINTS};
use crate::pose::Pose;

/// Groups `candidates` (shape 1's frame) by normal: a candidate joins the first manifold whose normal
/// is within `max_angle` of its own, else starts one. Each manifold keeps its deepest point, the point
/// farthest from it, the point farthest from the line through those two, and the point farthest on
/// the other side of that line. Manifolds come deepest first; points deepest first.
pub fn reduce_manifolds(mut candidates: Vec<ContactCandidate>, pos12: &Pose, max_angle: f32) -> Vec<ContactManifold> {
    let cos_max = max_angle.cos();
    candidates.sort_by(|a, b| a.dist.total_cmp(&b.dist));
    let mut groups: Vec<(Vec3, Vec<ContactCandidate>)> = Vec::new();
    for c in candidates {
        match groups.iter_mut().find(|(n, _)| n.dot(c.n1) >= cos_max) {
            Some((_, g)) => g.push(c),
            None => groups.push((c.n1, vec![c])),
        }
    }
    let inv12 = pos12.inverse();
    groups
        .into_iter()
        .map(|(n1, g)| {
            let chosen = select_points(&g, n1);
            ContactManifold {
                local_n1: n1,
                local_n2: inv12.transform_vector(-n1),
                points: chosen
                    .into_iter()
                    .map(|c| ContactPoint {
                        local_p1: c.p1,
                        local_p2: inv12.transform_point(c.p2),
                        dist: c.dist,
                        fid1: c.fid1,
                        fid2: c.fid2,
                    })
                    .collect(),
            }
        })
        .collect()
}

/// `g` sorted deepest first. Returns at most four of them, deepest first.
fn select_points(g: &[ContactCandidate], n: Vec3) -> Vec<ContactCandidate> {
    if g.len() <= MAX_MANIFOLD_POINTS {
        return g.to_vec();
    }
    // Work in the tangent plane.
    let flat = |p: Vec3| p - n * p.dot(n);
    let pts: Vec<Vec3> = g.iter().map(|c| flat(c.p1)).collect();
    let a = 0;
    let b = argmax(&pts, |p| p.distance_squared(pts[a]), &[a]);
    let ab = pts[b] - pts[a];
    let side = |p: Vec3| (p - pts[a]).cross(ab).dot(n);
    let c = argmax(&pts, |p| side(p).abs(), &[a, b]);
    let sc = side(pts[c]).signum();
    let d = argmax(&pts, |p| -sc * side(p), &[a, b, c]);
    let mut idx = vec![a, b, c, d];
    idx.sort_unstable();
    idx.dedup();
    idx.into_iter().map(|i| g[i]).collect()
}

fn argmax(pts: &[Vec3], score: impl Fn(Vec3) -> f32, exclude: &[usize]) -> usize {
    let mut best = (f32::NEG_INFINITY, exclude[0]);
    for (i, p) in pts.iter().enumerate() {
        if exclude.contains(&i) {
            continue;
        }
        let s = score(*p);
        if s > best.0 {
            best = (s, i);
        }
    }
    best.1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::FeatureId;

    fn cand(p: Vec3, n: Vec3, dist: f32, id: u32) -> ContactCandidate {
        ContactCandidate { p1: p, p2: p + n * dist, n1: n, dist, fid1: FeatureId::Vertex(id), fid2: FeatureId::Face(0) }
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
        let m = reduce_manifolds(c, &Pose::IDENTITY, 5f32.to_radians());
        assert_eq!(m.len(), 1);
        assert!(m[0].points.len() <= 4);
        assert_eq!(m[0].points[0].dist, -0.2);
        // The other three are patch corners.
        for p in &m[0].points[1..] {
            assert!((p.local_p1.x == 0.0 || p.local_p1.x == 4.0) && (p.local_p1.z == 0.0 || p.local_p1.z == 4.0));
        }
    }

    #[test]
    fn normals_apart_make_separate_manifolds() {
        let c = vec![
            cand(Vec3::ZERO, Vec3::NEG_Y, -0.1, 0),
            cand(Vec3::X, Vec3::new(0.0, -1.0, 0.01).normalize(), -0.1, 1),
            cand(Vec3::Z, Vec3::X, -0.05, 2),
        ];
        let m = reduce_manifolds(c, &Pose::IDENTITY, 5f32.to_radians());
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].points.len(), 2);
        assert_eq!(m[1].local_n1, Vec3::X);
        assert_eq!(m[1].local_n2, Vec3::NEG_X);
    }
}
