//! The iterative algorithm against a full standard trace (IRTCD 2013 §3.3-3.4, 2014 §3.1, §5.2).

mod common;

use glam::{Quat, Vec3};
use rtcd::{NarrowPhase, PairInput, PairKey, Pose, RtcdMesh, RtcdParams, StepMode, StepOptions, TracerKind};

struct Run {
    compared: u64,
    erroneous: u64,
    late: u64,
    iterative_steps: usize,
    standard_steps: usize,
}

/// Runs `steps` steps of a scripted relative motion `pose_at(step)` (shape 2 in shape 1's frame) and
/// compares every step with a full standard trace.
fn run(
    m1: &RtcdMesh,
    m2: &RtcdMesh,
    params: RtcdParams,
    steps: usize,
    pose_at: impl Fn(usize) -> Pose,
) -> Run {
    let mut np = NarrowPhase::new(params).unwrap();
    let mut r = Run { compared: 0, erroneous: 0, late: 0, iterative_steps: 0, standard_steps: 0 };
    for s in 0..steps {
        let pair = PairInput::new(PairKey::new(1, 2), m1, m2, pose_at(s));
        let out = np.step(&[pair], &StepOptions { measure_errors: true, ..Default::default() });
        let e = out.metrics.errors.unwrap();
        r.compared += e.compared_rays;
        r.erroneous += e.erroneous_rays;
        r.late += e.late_contacts;
        match out.pairs[0].mode {
            StepMode::Iterative => r.iterative_steps += 1,
            StepMode::Standard => r.standard_steps += 1,
        }
    }
    r
}

/// Two concave meshes overlapping a little, wobbling and drifting slowly: displacement per step is a
/// few percent of the threshold, so most steps are iterative.
fn wobble(threshold: f32, height: f32) -> impl Fn(usize) -> Pose {
    move |s| {
        let t = s as f32;
        let base = Vec3::new(0.05, height, 0.1);
        let drift = Vec3::new(
            0.4 * threshold * (t * 0.05).sin(),
            0.3 * threshold * (t * 0.031).sin(),
            0.01 * threshold * t,
        );
        let rot = Quat::from_rotation_y(0.002 * t) * Quat::from_rotation_x(0.05 * (t * 0.04).sin());
        Pose::new(base + drift, rot)
    }
}

#[test]
fn iterative_agrees_with_standard_under_the_threshold() {
    let a = common::asset("blob_900");
    let b = common::asset("torus_900");
    for tracer in [TracerKind::BruteForce, TracerKind::Bvh] {
        for prediction in [true, false] {
            let params = RtcdParams { tracer, prediction, ..RtcdParams::from_meshes(&[&a, &b]) };
            // The torus (tube radius 0.15) rests 4 cm deep on the blob's top.
            let height = a.aabb().max.y + 0.15 - 0.04;
            let r = run(&a, &b, params, 200, wobble(params.displacement_threshold, height));
            let agreement = 1.0 - r.erroneous as f64 / r.compared.max(1) as f64;
            println!(
                "{tracer:?} prediction={prediction}: {} iterative / {} standard steps, {} rays compared, agreement {:.2} %, {} late",
                r.iterative_steps,
                r.standard_steps,
                r.compared,
                100.0 * agreement,
                r.late
            );
            assert!(r.iterative_steps > 150, "the motion should stay mostly under the threshold");
            assert!(r.compared > 2000, "the meshes should be in contact: {} rays", r.compared);
            if prediction {
                assert!(agreement >= 0.98, "{tracer:?}: agreement {agreement}");
            }
        }
    }
}

#[test]
fn prediction_detects_fewer_contacts_late() {
    let a = common::asset("blob_900");
    let b = common::asset("bent_tube_896");
    // Shape 2 approaches from above at 1/25 of the threshold per step, then stays.
    let base = RtcdParams::from_meshes(&[&a, &b]);
    let speed = base.displacement_threshold / 25.0;
    let approach = move |s: usize| {
        let y = 0.75 - speed * (s.min(120) as f32);
        Pose::new(Vec3::new(0.02, y, 0.0), Quat::from_rotation_z(0.3))
    };
    let with = run(&a, &b, RtcdParams { prediction: true, ..base }, 200, approach);
    let without = run(&a, &b, RtcdParams { prediction: false, ..base }, 200, approach);
    println!(
        "late-detected contacts over 200 steps: with prediction {} (of {} compared), without {} (of {})",
        with.late, with.compared, without.late, without.compared
    );
    assert!(with.compared > 500 && without.compared > 500, "the meshes must meet");
    assert!(with.late < without.late, "prediction: {} late, without: {}", with.late, without.late);
}

#[test]
fn changing_a_pairs_mesh_resets_its_state() {
    let a = common::asset("blob_900");
    let b = common::asset("torus_900");
    let c = common::asset("bent_tube_896");
    let params = RtcdParams::from_meshes(&[&a, &b]);
    let mut np = NarrowPhase::new(params).unwrap();
    let pose = Pose::from_translation(Vec3::new(0.05, a.aabb().max.y + 0.1, 0.0));
    let key = PairKey::new(1, 2);
    assert_eq!(
        np.step(&[PairInput::new(key, &a, &b, pose)], &StepOptions::default()).pairs[0].mode,
        StepMode::Standard
    );
    assert_eq!(
        np.step(&[PairInput::new(key, &a, &b, pose)], &StepOptions::default()).pairs[0].mode,
        StepMode::Iterative
    );
    // Same key, other mesh: old triangle records would be meaningless.
    let out = np.step(&[PairInput::new(key, &a, &c, pose)], &StepOptions::default());
    assert_eq!(out.pairs[0].mode, StepMode::Standard);
    assert_eq!(out.metrics.new_pairs, 1);
}
