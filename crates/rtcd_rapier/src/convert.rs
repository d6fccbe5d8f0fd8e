//! Small conversions between rtcd's and parry's conventions (both: shape-1 frame, `local_n1` from 1
//! toward 2, negative `dist` when penetrating), and the manifold operations the cache needs: swapping
//! the two shapes and refreshing distances for a new relative pose.

use parry3d::{math::Pose, shape::PackedFeatureId};
use rtcd::{ContactManifold, FeatureId};

/// parry's pose as rtcd's (same rotation and translation; glam types are shared).
pub(crate) fn to_rtcd(pose: &Pose) -> rtcd::Pose {
    rtcd::Pose::new(pose.translation, pose.rotation)
}

/// Largest code `PackedFeatureId` accepts (it asserts on more).
const MAX_FEATURE_CODE: u32 = (1 << 30) - 1;

/// A stable parry feature id: the vertex a ray came from, the edge an edge ray ran along, or the
/// triangle it hit. Ids too large for
/// parry's packing (over 2³⁰) become `UNKNOWN` rather than panic; such points then lose warm-starting.
pub(crate) fn packed(fid: FeatureId) -> PackedFeatureId {
    match fid {
        FeatureId::Vertex(v) if v <= MAX_FEATURE_CODE => PackedFeatureId::vertex(v),
        FeatureId::Face(f) if f <= MAX_FEATURE_CODE => PackedFeatureId::face(f),
        FeatureId::Edge(e) if e <= MAX_FEATURE_CODE => PackedFeatureId::edge(e),
        _ => PackedFeatureId::UNKNOWN,
    }
}

/// The same contacts seen with shapes 1 and 2 swapped.
pub(crate) fn flipped(m: &ContactManifold) -> ContactManifold {
    ContactManifold {
        local_n1: m.local_n2,
        local_n2: m.local_n1,
        points: m
            .points
            .iter()
            .map(|p| rtcd::ContactPoint {
                local_p1: p.local_p2,
                local_p2: p.local_p1,
                dist: p.dist,
                fid1: p.fid2,
                fid2: p.fid1,
            })
            .collect(),
    }
}

/// Re-evaluates each point's signed distance for a new relative pose `pos12`, keeping points and
/// normal in their body frames (the pipelined mode's depth refresh): `dist = (pos12·p2 - p1)·n1`.
pub(crate) fn refresh_depths(m: &mut ContactManifold, pos12: &Pose) {
    m.local_n2 = pos12.rotation.inverse() * -m.local_n1;
    for p in &mut m.points {
        p.dist = (pos12.transform_point(p.local_p2) - p.local_p1).dot(m.local_n1);
    }
}

/// IRTCD 2013 Eq. 2's bound on how far any point of either mesh moved relative to the other between
/// two relative poses ([`rtcd::detect::max_displacement`]); `radii`: each mesh's largest vertex
/// distance from its origin.
pub(crate) fn displacement(a: &Pose, b: &Pose, radii: [f32; 2]) -> f32 {
    rtcd::detect::max_displacement(&to_rtcd(a), &to_rtcd(b), radii[0], radii[1])
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{Quat, Vec3};
    use rtcd::ContactPoint;

    fn manifold(pos12: &Pose) -> ContactManifold {
        let n1 = Vec3::NEG_Y;
        let p1 = Vec3::new(0.1, -0.2, 0.3);
        let p2_in_1 = p1 + n1 * -0.05;
        ContactManifold {
            local_n1: n1,
            local_n2: pos12.rotation.inverse() * -n1,
            points: [ContactPoint {
                local_p1: p1,
                local_p2: pos12.inverse_transform_point(p2_in_1),
                dist: -0.05,
                fid1: FeatureId::Vertex(3),
                fid2: FeatureId::Face(7),
            }]
            .into_iter()
            .collect(),
        }
    }

    #[test]
    fn flip_twice_is_identity_and_refresh_agrees() {
        let pos12 = Pose::from_parts(Vec3::new(0.2, -0.9, 0.1), Quat::from_rotation_z(0.3));
        let m = manifold(&pos12);
        assert_eq!(flipped(&flipped(&m)), m);
        let mut r = m.clone();
        refresh_depths(&mut r, &pos12);
        assert!((r.points[0].dist - m.points[0].dist).abs() < 1e-6);
        // Seen from shape 2 with the inverse pose, the refreshed distance is the same.
        let mut f = flipped(&m);
        refresh_depths(&mut f, &pos12.inverse());
        assert!((f.points[0].dist - m.points[0].dist).abs() < 1e-6);
        // Moving shape 2 by 0.05 along n1 (away from shape 1) brings it to touching.
        let moved = Pose::from_translation(Vec3::new(0.0, -0.05, 0.0)) * pos12;
        refresh_depths(&mut r, &moved);
        assert!(r.points[0].dist.abs() < 1e-6, "{}", r.points[0].dist);
    }

    #[test]
    fn feature_ids_never_panic() {
        assert_eq!(packed(FeatureId::Vertex(5)), PackedFeatureId::vertex(5));
        assert_eq!(packed(FeatureId::Face(5)), PackedFeatureId::face(5));
        assert_eq!(packed(FeatureId::Edge(5)), PackedFeatureId::edge(5));
        assert_eq!(packed(FeatureId::Face(u32::MAX)), PackedFeatureId::UNKNOWN);
    }
}
