//! Analytic cases: a cube sunk into a ground box, a sphere pushed into a larger one, and separated
//! bodies. Every tracer and mode must give the exact answer.

mod common;

use glam::{Quat, Vec3};
use rtcd::{
    FeatureId, NarrowPhase, PairInput, PairKey, Pose, RtcdMesh, RtcdParams, StepOptions, TracerKind, shapes,
};

fn variants(base: RtcdParams) -> Vec<(String, RtcdParams)> {
    let mut v = Vec::new();
    for tracer in [TracerKind::BruteForce, TracerKind::Bvh] {
        for iterative in [false, true] {
            for prediction in [false, true] {
                let p = RtcdParams { tracer, iterative, prediction, ..base };
                v.push((format!("{tracer:?} iterative={iterative} prediction={prediction}"), p));
            }
        }
    }
    v
}

#[test]
fn cube_sunk_into_ground_box() {
    let cube = common::cuboid("cube", Vec3::splat(0.5));
    // A finely subdivided ground, so the contact is found on many small triangles too.
    let (v, i) = shapes::subdivided_cuboid(Vec3::new(4.0, 1.0, 4.0), 8);
    let ground = RtcdMesh::new("ground", &v, &i).unwrap();
    let depth = 0.1;
    for (name, params) in variants(RtcdParams::from_meshes(&[&cube, &ground])) {
        let mut np = NarrowPhase::new(params).unwrap();
        // A few steps, so iterative variants run their walk too (the pose does not move).
        for step in 0..3 {
            let cube_pose = Pose::from_translation(Vec3::new(0.3, 0.5 - depth, -0.2));
            let pair =
                PairInput::from_world(PairKey::new(1, 2), &cube, cube_pose, &ground, common::ground_pose());
            let out = np.step(&[pair], &StepOptions::default());
            let m = &out.pairs[0].manifolds;
            assert_eq!(m.len(), 1, "{name} step {step}: {m:?}");
            let m = &m[0];
            assert_eq!(m.points.len(), 4, "{name}: the four bottom corners");
            // Shape 1 (the cube) is pushed up: its outward normal toward the ground is -y.
            assert!((m.local_n1 - Vec3::NEG_Y).length() < 1e-5, "{name}: n1 = {}", m.local_n1);
            for p in &m.points {
                assert!((p.dist + depth).abs() < 1e-5, "{name}: dist {}", p.dist);
                assert!((p.local_p1.y + 0.5).abs() < 1e-6, "{name}: point on the bottom face");
                assert!(matches!(p.fid1, FeatureId::Vertex(_)) && matches!(p.fid2, FeatureId::Face(_)));
                // The point on the ground lies on its top face (y = 1 in the ground's frame).
                assert!((p.local_p2.y - 1.0).abs() < 1e-5, "{name}: p2 = {}", p.local_p2);
            }
            assert!((out.metrics.max_depth - depth).abs() < 1e-5);
        }
    }
}

#[test]
fn cube_rotated_about_the_vertical_still_gets_the_ground_normal() {
    let cube = common::cuboid("cube", Vec3::splat(0.5));
    let ground = common::cuboid("ground", Vec3::new(5.0, 1.0, 5.0));
    let mut np = NarrowPhase::new(RtcdParams::from_meshes(&[&cube, &ground])).unwrap();
    let pose = Pose::new(Vec3::new(0.0, 0.4, 0.0), Quat::from_rotation_y(0.7));
    let out = np.step(
        &[PairInput::from_world(PairKey::new(1, 2), &cube, pose, &ground, common::ground_pose())],
        &StepOptions::default(),
    );
    let m = &out.pairs[0].manifolds[0];
    // In world terms the cube's normal toward the ground is straight down.
    assert!((pose.transform_vector(m.local_n1) - Vec3::NEG_Y).length() < 1e-5);
    assert!(m.points.iter().all(|p| (p.dist + 0.1).abs() < 1e-5));
}

#[test]
fn sphere_pushed_into_a_larger_sphere() {
    let (v, i) = shapes::icosphere(0.5, 6);
    let small = RtcdMesh::new("small", &v, &i).unwrap();
    let (v, i) = shapes::icosphere(1.0, 8);
    let big = RtcdMesh::new("big", &v, &i).unwrap();
    let push = 0.2;
    // The centre line runs through the icosahedron vertex direction (0, 1, phi), a vertex of both
    // tessellations: the small sphere's deepest vertex is 0.2 inside, and its inward ray runs along
    // the centre line to the big sphere's vertex, exactly 0.2 away.
    let axis = Vec3::new(0.0, 1.0, (1.0 + 5f32.sqrt()) / 2.0).normalize();
    let pose_small = Pose::from_translation(axis * (1.0 + 0.5 - push));
    for (name, params) in variants(RtcdParams::from_meshes(&[&small, &big])) {
        for reprojection in [false, true] {
            let params = RtcdParams { reprojection, ..params };
            let mut np = NarrowPhase::new(params).unwrap();
            let out = np.step(
                &[PairInput::from_world(PairKey::new(1, 2), &small, pose_small, &big, Pose::IDENTITY)],
                &StepOptions::default(),
            );
            let m = &out.pairs[0].manifolds;
            let deepest = m.iter().min_by(|a, b| a.min_dist().total_cmp(&b.min_dist())).unwrap();
            let d = deepest.min_dist();
            if reprojection {
                // Re-projected onto the normal of a facet around that vertex, tilted from the centre
                // line by less than one edge angle (1.107 / 8 rad): a bit less than 0.2.
                let tilt = (1.1071487f32 / 8.0).cos();
                assert!(d >= -push - 1e-5 && d <= -push * tilt + 1e-5, "{name}: deepest {d}");
                assert!(deepest.local_n1.dot(-axis) >= tilt - 1e-5, "{name}: n1 {}", deepest.local_n1);
            } else {
                // The raw ray length: exactly the depth along the centre line.
                assert!((d + push).abs() < 1e-5, "{name} raw: deepest {d}");
                assert!(deepest.local_n1.dot(-axis) > 1.0 - 1e-5, "{name} raw: n1 {}", deepest.local_n1);
            }
        }
    }
}

#[test]
fn no_contacts_beyond_the_prediction_distance() {
    let cube = common::cuboid("cube", Vec3::splat(0.5));
    let ground = common::cuboid("ground", Vec3::new(5.0, 1.0, 5.0));
    let params = RtcdParams::from_meshes(&[&cube, &ground]);
    let prediction_distance = 0.02;
    for (name, params) in variants(params) {
        let mut np = NarrowPhase::new(params).unwrap();
        let opts = StepOptions { prediction_distance, ..Default::default() };
        for gap in [0.021f32, 0.05, 0.1, 0.5, 2.0] {
            let pose = Pose::from_translation(Vec3::new(0.0, 0.5 + gap, 0.0));
            let out = np.step(
                &[PairInput::from_world(PairKey::new(1, 2), &cube, pose, &ground, common::ground_pose())],
                &opts,
            );
            assert!(out.pairs[0].manifolds.is_empty(), "{name}: gap {gap} gave {:?}", out.pairs[0].manifolds);
        }
        // Within the prediction distance, a prediction becomes a speculative contact (positive dist)
        // when predictive rays are on.
        let pose = Pose::from_translation(Vec3::new(0.0, 0.51, 0.0));
        let out = np.step(
            &[PairInput::from_world(PairKey::new(1, 2), &cube, pose, &ground, common::ground_pose())],
            &StepOptions { force_standard: true, ..opts },
        );
        if params.prediction {
            let m = &out.pairs[0].manifolds;
            assert_eq!(m.len(), 1, "{name}");
            assert!(m[0].points.iter().all(|p| (p.dist - 0.01).abs() < 1e-5), "{name}: {m:?}");
        } else {
            assert!(out.pairs[0].manifolds.is_empty(), "{name}");
        }
    }
}

#[test]
fn both_directions_report_from_shape_1() {
    // Swap the roles: the ground is shape 1, the cube shape 2. The cube's vertices are still the
    // penetrating ones, now reported as shape 2's features with the ground's +y normal as n1.
    let cube = common::cuboid("cube", Vec3::splat(0.5));
    let ground = common::cuboid("ground", Vec3::new(5.0, 1.0, 5.0));
    let mut np = NarrowPhase::new(RtcdParams::from_meshes(&[&cube, &ground])).unwrap();
    let cube_pose = Pose::from_translation(Vec3::new(0.0, 0.4, 0.0));
    let out = np.step(
        &[PairInput::from_world(PairKey::new(2, 1), &ground, common::ground_pose(), &cube, cube_pose)],
        &StepOptions::default(),
    );
    let m = &out.pairs[0].manifolds[0];
    assert!((m.local_n1 - Vec3::Y).length() < 1e-5);
    for p in &m.points {
        assert!((p.dist + 0.1).abs() < 1e-5);
        assert!(matches!(p.fid1, FeatureId::Face(_)) && matches!(p.fid2, FeatureId::Vertex(_)));
        // p1 on the ground's top face (y = 1 in its frame), p2 a cube corner.
        assert!((p.local_p1.y - 1.0).abs() < 1e-5);
        assert!((p.local_p2.y + 0.5).abs() < 1e-6);
    }
}
