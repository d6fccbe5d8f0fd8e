//! A 1 m x 1 cm x 1 m plate sunk under a surface, and its vertex contacts: shared by the tests of
//! the level chunks' solid reach and of the closed reach.

use glam::{Quat, Vec3};
use rtcd::{
    ContactCandidate, FeatureId, NarrowPhase, PairInput, PairKey, Pose, RtcdMesh, RtcdParams, StepMode,
    StepOptions, TracerKind, shapes,
};

/// Plate thickness (1 cm) and half width (0.5 m).
pub const THICKNESS: f32 = 0.01;
pub const HALF: f32 = 0.5;

pub fn plate() -> RtcdMesh {
    let (v, i) = shapes::cuboid(Vec3::new(HALF, 0.5 * THICKNESS, HALF));
    RtcdMesh::new("plate 1 x 0.01 x 1", &v, &i).unwrap()
}

/// `base` with each tracer, with and without prediction and re-projection.
pub fn variants(base: RtcdParams) -> Vec<RtcdParams> {
    let mut v = Vec::new();
    for tracer in [TracerKind::BruteForce, TracerKind::Bvh] {
        for prediction in [false, true] {
            for reprojection in [true, false] {
                v.push(RtcdParams { tracer, prediction, reprojection, ..base });
            }
        }
    }
    v
}

/// The plate's pose with its top face `depth` under y = 0, turned by `yaw` about the vertical.
pub fn plate_pose(depth: f32, yaw: f32) -> Pose {
    Pose::new(Vec3::new(0.1, -depth - 0.5 * THICKNESS, -0.2), Quat::from_rotation_y(yaw))
}

/// One step of `body` against `other` (in the world frame), in the given shape order; the
/// contacts of the body's vertices with the world direction in which the body must move to
/// separate, and the step's mode.
pub fn contacts(
    np: &mut NarrowPhase,
    body: &RtcdMesh,
    other: &RtcdMesh,
    pose: Pose,
    body_first: bool,
) -> (Vec<(ContactCandidate, Vec3)>, StepMode) {
    let opts = StepOptions { keep_contacts: true, ..Default::default() };
    let input = if body_first {
        PairInput::new(PairKey::new(1, 2), body, other, pose.inverse())
    } else {
        PairInput::new(PairKey::new(2, 1), other, body, pose)
    };
    let out = np.step(&[input], &opts);
    let p = &out.pairs[0];
    assert!(p.error.is_none(), "{:?}", p.error);
    let body_vertex = |c: &&ContactCandidate| {
        let (own, other) = if body_first { (c.fid1, c.fid2) } else { (c.fid2, c.fid1) };
        matches!((own, other), (FeatureId::Vertex(_), FeatureId::Face(_)))
    };
    let found = p
        .contacts
        .iter()
        .filter(|c| c.dist < 0.0)
        .filter(body_vertex)
        .map(|c| {
            // Shape 1 moves along -n1, shape 2 along n1 (both in shape 1's frame).
            let away = if body_first { pose.transform_vector(-c.n1) } else { c.n1 };
            (*c, away)
        })
        .collect();
    (found, p.mode)
}

/// The plate's vertex contacts: 4 (its bottom corners, whose inward rays go up through its 1 cm
/// and on to the other mesh's top face), each pushing the plate up along the face normal
/// (re-projected) or back along the ray (raw), as deep as the corner is under the top
/// (re-projected: the distance to the plane; raw: the ray's length to it), within 1e-4 relative.
/// None from the top corners.
pub fn assert_pushed_up(found: &[(ContactCandidate, Vec3)], params: &RtcdParams, bottom: f32, what: &str) {
    assert_eq!(found.len(), 4, "{what}: {found:?}");
    // A corner's inward normal is (±1, ±1, ±1)/√3 (its three faces' angles are equal).
    let (depth, up) =
        if params.reprojection { (bottom, 1.0) } else { (bottom * 3f32.sqrt(), 3f32.sqrt().recip()) };
    for (c, away) in found {
        assert!(((-c.dist) - depth).abs() <= 1e-4 * depth, "{what}: depth {} for {depth}", -c.dist);
        assert!((away.y - up).abs() < 1e-4 && away.length() > 0.9999, "{what}: pushed along {away}");
    }
}
