//! The many-pair narrow phase: state kept, freed and reset; parallel results equal sequential ones.

mod common;

use glam::{Quat, Vec3};
use rand::Rng;
use rtcd::{NarrowPhase, PairInput, PairKey, Pose, RtcdMesh, RtcdParams, StepMode, StepOptions};

fn pile(meshes: &[RtcdMesh], n: usize, seed: u64) -> Vec<(usize, Pose)> {
    let mut rng = common::rng(seed);
    (0..n)
        .map(|k| {
            let x = (k % 4) as f32 * 0.8;
            let z = ((k / 4) % 4) as f32 * 0.8;
            let y = (k / 16) as f32 * 0.8;
            let jitter = Vec3::new(
                rng.random_range(-0.05..0.05),
                rng.random_range(-0.05..0.05),
                rng.random_range(-0.05..0.05),
            );
            (k % meshes.len(), Pose::new(Vec3::new(x, y, z) + jitter, common::random_rotation(&mut rng)))
        })
        .collect()
}

fn pairs_of<'a>(meshes: &'a [RtcdMesh], bodies: &[(usize, Pose)]) -> Vec<PairInput<'a>> {
    let mut out = Vec::new();
    for i in 0..bodies.len() {
        for j in i + 1..bodies.len() {
            let (mi, pi) = bodies[i];
            let (mj, pj) = bodies[j];
            let (a, b) = (&meshes[mi], &meshes[mj]);
            if a.aabb().transformed(&pi).intersection(b.aabb().transformed(&pj)).is_empty() {
                continue;
            }
            out.push(PairInput::from_world(PairKey::new(i as u64, j as u64), a, pi, b, pj));
        }
    }
    out
}

#[test]
fn parallel_step_equals_pair_by_pair() {
    let meshes = vec![common::asset("blob_900"), common::asset("torus_900"), common::asset("bent_tube_896")];
    let refs: Vec<&RtcdMesh> = meshes.iter().collect();
    let params = RtcdParams::from_meshes(&refs);
    let bodies = pile(&meshes, 32, 3);
    let pairs = pairs_of(&meshes, &bodies);
    assert!(pairs.len() > 30, "{} pairs", pairs.len());
    let mut all = NarrowPhase::new(params).unwrap();
    let mut one = NarrowPhase::new(params).unwrap();
    let opts = StepOptions::default();
    for step in 0..3 {
        let together = all.step(&pairs, &opts);
        for (k, p) in pairs.iter().enumerate() {
            let alone = one.step(std::slice::from_ref(p), &opts);
            assert_eq!(together.pairs[k].manifolds, alone.pairs[0].manifolds, "step {step} pair {k}");
        }
        assert!(together.metrics.contact_rays > 0);
    }
}

/// A blob and a torus, a narrow phase for them and a pose where they touch.
fn touching() -> (RtcdMesh, RtcdMesh, NarrowPhase, Pose) {
    let a = common::asset("blob_900");
    let b = common::asset("torus_900");
    let np = NarrowPhase::new(RtcdParams::from_meshes(&[&a, &b])).unwrap();
    let pose = Pose::new(Vec3::new(0.05, a.aabb().max.y + 0.1, 0.0), Quat::from_rotation_x(0.3));
    (a, b, np, pose)
}

#[test]
fn pairs_enter_persist_leave_and_reenter() {
    let (a, b, mut np, pose) = touching();
    let p12 = PairInput::new(PairKey::new(1, 2), &a, &b, pose);
    let p34 = PairInput::new(PairKey::new(3, 4), &a, &b, pose);
    let opts = StepOptions::default();

    let out = np.step(&[p12, p34], &opts);
    assert_eq!(out.metrics.new_pairs, 2);
    assert_eq!(np.pair_count(), 2);
    let records = np.pair_state(&PairKey::new(1, 2)).unwrap().records.clone();
    assert!(!records[0].is_empty() || !records[1].is_empty());

    // Persisting pairs go iterative and keep their records.
    let out = np.step(&[p12, p34], &opts);
    assert_eq!(out.metrics.new_pairs, 0);
    assert!(out.pairs.iter().all(|p| p.mode == StepMode::Iterative));
    assert_eq!(np.pair_state(&PairKey::new(1, 2)).unwrap().records, records);

    // (3, 4) leaves: its state is freed.
    let out = np.step(&[p12], &opts);
    assert_eq!(out.metrics.freed_pairs, 1);
    assert_eq!(np.pair_count(), 1);
    assert!(np.pair_state(&PairKey::new(3, 4)).is_none());
    assert_eq!(np.pair_state(&PairKey::new(1, 2)).unwrap().steps_since_standard, 2);

    // It re-enters as a new pair with a standard step.
    let out = np.step(&[p12, p34], &opts);
    assert_eq!(out.metrics.new_pairs, 1);
    assert_eq!(out.pairs[1].mode, StepMode::Standard);
    assert_eq!(out.pairs[0].mode, StepMode::Iterative);
}

#[test]
fn held_pairs_keep_their_state_untraced() {
    let (a, b, mut np, pose) = touching();
    let p12 = PairInput::new(PairKey::new(1, 2), &a, &b, pose);
    let p34 = PairInput::new(PairKey::new(3, 4), &a, &b, pose);
    let opts = StepOptions::default();
    let first = np.step(&[p12, p34], &opts);
    assert!(!first.pairs[0].manifolds.is_empty());
    let state = np.pair_state(&PairKey::new(1, 2)).unwrap().clone();

    // Held at another pose: nothing traced, nothing returned, the state as it was.
    let moved = Pose::new(pose.translation - Vec3::new(0.0, 0.02, 0.0), pose.rotation);
    let out = np.step(&[PairInput::new(PairKey::new(1, 2), &a, &b, moved).with_hold(true), p34], &opts);
    assert_eq!(out.metrics.held_pairs, 1);
    assert_eq!(out.metrics.pairs, 1);
    assert_eq!(out.metrics.freed_pairs, 0);
    assert!(out.pairs[0].manifolds.is_empty() && out.pairs[0].error.is_none());
    assert!(!out.pairs[1].manifolds.is_empty());
    let held = np.pair_state(&PairKey::new(1, 2)).unwrap();
    assert_eq!(held.records, state.records);
    assert_eq!(held.steps_since_standard, state.steps_since_standard);

    // Released, it goes on from the kept state as if the held step had not been: same result as
    // a narrow phase that never saw that step.
    let mut never_held = NarrowPhase::new(*np.params()).unwrap();
    never_held.step(&[p12], &opts);
    let a_out = np.step(&[PairInput::new(PairKey::new(1, 2), &a, &b, moved)], &opts);
    let b_out = never_held.step(&[PairInput::new(PairKey::new(1, 2), &a, &b, moved)], &opts);
    assert_eq!(a_out.pairs[0].mode, StepMode::Iterative);
    assert_eq!(a_out.pairs[0].manifolds, b_out.pairs[0].manifolds);
}

#[test]
fn metrics_count_rays_by_kind() {
    let a = common::asset("blob_900");
    let b = common::asset("torus_900");
    let params = RtcdParams::from_meshes(&[&a, &b]);
    let mut np = NarrowPhase::new(params).unwrap();
    let pose = Pose::new(Vec3::new(0.05, a.aabb().max.y + 0.1, 0.0), Quat::from_rotation_x(0.3));
    let pair = PairInput::new(PairKey::new(1, 2), &a, &b, pose);
    let s = np.step(&[pair], &StepOptions::default()).metrics;
    assert!(s.standard_rays > 0 && s.iterative_rays == 0 && s.predictive_rays == 0);
    assert!(s.contact_rays > 0 && s.prediction_records > 0);
    assert!(s.cumulative_ray_length > 0.0 && s.max_depth > 0.0);
    let i = np.step(&[pair], &StepOptions::default()).metrics;
    assert_eq!(i.standard_rays, 0);
    assert_eq!(i.iterative_rays, s.contact_rays);
    assert_eq!(i.predictive_rays, s.prediction_records);
    // Nothing moved: every walk ends where it started, in contact.
    assert_eq!(i.iterative_hits, s.contact_rays);
    assert_eq!(i.walk_steps, i.iterative_rays + i.predictive_rays);
    assert!(
        (i.iterative_hit_rate() - s.contact_rays as f64 / (s.contact_rays + s.prediction_records) as f64)
            .abs()
            < 1e-9
    );
    assert_eq!(i.contact_rays, s.contact_rays);
}

/// The work the iterative narrow phase skips changes no result: a standard step of a pair without
/// records that the separation bound settles without rays equals a full standard trace (no contact),
/// and the record-less iterative steps the step loop skips (not skipped while measuring errors)
/// give the same outputs as when they run. A creeping pile, where pairs come into contact and part.
#[test]
fn skipped_work_changes_no_result() {
    let meshes = vec![common::asset("blob_900"), common::asset("torus_900"), common::asset("bent_tube_896")];
    let refs: Vec<&RtcdMesh> = meshes.iter().collect();
    for prediction in [false, true] {
        let params = RtcdParams { prediction, ..RtcdParams::from_meshes(&refs) };
        let mut bodies = pile(&meshes, 24, 11);
        let mut rng = common::rng(12);
        let velocities: Vec<(Vec3, Vec3)> = (0..bodies.len())
            .map(|_| {
                let v = Vec3::new(
                    rng.random_range(-1.0..1.0),
                    rng.random_range(-1.0..1.0),
                    rng.random_range(-1.0..1.0),
                );
                let w = Vec3::new(
                    rng.random_range(-1.0..1.0),
                    rng.random_range(-1.0..1.0),
                    rng.random_range(-1.0..1.0),
                );
                (0.012 * v, 0.03 * w)
            })
            .collect();
        let (mut np, mut measured, mut standard) = (
            NarrowPhase::new(params).unwrap(),
            NarrowPhase::new(params).unwrap(),
            NarrowPhase::new(params).unwrap(),
        );
        let (mut separated, mut quiet, mut standard_steps) = (0, 0, 0);
        for step in 0..60 {
            let pairs = pairs_of(&meshes, &bodies);
            // Speculative contacts out to the predictive rays' reach, as the Rapier driver asks.
            let opts = StepOptions { prediction_distance: params.culling_dist, ..Default::default() };
            let out = np.step(&pairs, &opts);
            let reference = measured.step(&pairs, &StepOptions { measure_errors: true, ..opts });
            let full = standard.step(&pairs, &StepOptions { force_standard: true, ..opts });
            separated += out.metrics.separated_pairs;
            for (k, o) in out.pairs.iter().enumerate() {
                assert_eq!(o.mode, reference.pairs[k].mode, "prediction {prediction}, step {step}, pair {k}");
                assert_eq!(
                    o.manifolds, reference.pairs[k].manifolds,
                    "prediction {prediction}, step {step}, pair {k}"
                );
                if o.mode == StepMode::Standard {
                    standard_steps += 1;
                    assert_eq!(
                        o.manifolds, full.pairs[k].manifolds,
                        "prediction {prediction}, step {step}, pair {k}"
                    );
                    let records = |n: &NarrowPhase| n.pair_state(&o.key).map(|s| s.records.clone());
                    assert_eq!(
                        records(&np),
                        records(&standard),
                        "prediction {prediction}, step {step}, pair {k}"
                    );
                } else if o.manifolds.is_empty()
                    && np.pair_state(&o.key).is_some_and(|s| s.records.iter().all(Vec::is_empty))
                {
                    quiet += 1;
                }
            }
            for ((_, pose), (v, w)) in bodies.iter_mut().zip(&velocities) {
                // Drift towards the pile's middle, and tumble.
                let inward = (Vec3::new(1.2, 0.4, 1.2) - pose.translation) * 0.004;
                *pose = Pose::new(pose.translation + *v + inward, Quat::from_scaled_axis(*w) * pose.rotation);
            }
        }
        assert!(
            separated > 50 && quiet > 200 && standard_steps > 100,
            "{separated} separated, {quiet} quiet, {standard_steps} standard"
        );
    }
}

/// Pairs given in any order, with repeats, self pairs and invalid poses among them, keep exactly
/// their own state from step to step (each pair has its own pose, which its state's reference must
/// be), and get the errors `check_pairs` gives.
#[test]
fn state_follows_pairs_in_any_order() {
    let a = common::cuboid("a", Vec3::splat(0.5));
    let mut np = NarrowPhase::new(RtcdParams::from_meshes(&[&a])).unwrap();
    let mut rng = common::rng(17);
    let pose_of = |k: PairKey| Pose::from_translation(Vec3::new(0.01 * k.a as f32, 0.99, 0.0));
    let bad = Pose::from_translation(Vec3::NAN);
    let keys: Vec<PairKey> = (0..12u64).map(|k| PairKey::new(k, k + 100)).collect();
    let mut had_state: std::collections::HashSet<PairKey> = Default::default();
    let opts = StepOptions::default();
    let mut traced = 0;
    for step in 0..200 {
        // Mostly the same pairs in the same order (as a batch gives them), sometimes shuffled.
        let mut input: Vec<(PairKey, Pose)> =
            keys.iter().filter(|_| rng.random_range(0..10) > 1).map(|&k| (k, pose_of(k))).collect();
        if step % 7 == 0 {
            for i in (1..input.len()).rev() {
                input.swap(i, rng.random_range(0..=i));
            }
        }
        if !input.is_empty() && rng.random_range(0..4) == 0 {
            let k = input[rng.random_range(0..input.len())].0;
            input.insert(rng.random_range(0..=input.len()), (k, pose_of(k)));
        }
        if !input.is_empty() && rng.random_range(0..4) == 0 {
            let i = rng.random_range(0..input.len());
            input[i].1 = bad;
        }
        if rng.random_range(0..6) == 0 {
            input.push((PairKey::new(5, 5), pose_of(PairKey::new(5, 5))));
        }
        let pairs: Vec<PairInput> = input
            .iter()
            .map(|&(k, p)| PairInput::new(k, &a, &a, p).with_hold(rng.random_range(0..3) == 0))
            .collect();
        let (want, valid) = rtcd::narrow_phase::check_pairs(&pairs);
        let out = np.step(&pairs, &opts);
        for (k, (got, want)) in out.pairs.iter().zip(&want).enumerate() {
            assert_eq!(
                std::mem::discriminant(&got.error),
                std::mem::discriminant(&want.error),
                "step {step} pair {k}: {:?} vs {:?}",
                got.error,
                want.error
            );
            assert_eq!(got.error.as_ref().map(|e| e.to_string()), want.error.as_ref().map(|e| e.to_string()));
        }
        let now: std::collections::HashSet<PairKey> = valid.iter().map(|&i| pairs[i].key).collect();
        assert_eq!(out.metrics.freed_pairs, had_state.difference(&now).count(), "step {step}");
        assert_eq!(out.metrics.failed_pairs, pairs.len() - valid.len());
        for k in keys.iter().chain([&PairKey::new(5, 5)]) {
            assert_eq!(np.pair_state(k).is_some(), now.contains(k), "step {step} key {k:?}");
            if let Some(reference) = np.pair_state(k).and_then(|s| s.reference) {
                assert_eq!(reference, pose_of(*k), "step {step}: {k:?} has another pair's state");
                traced += 1;
            }
        }
        assert_eq!(np.pair_count(), now.len());
        had_state = now;
    }
    assert!(traced > 500, "{traced} states with a reference");
}

/// Pairs held by key (`step_with_held`) keep the same state as pairs held as inputs, and the
/// others get the same results; held keys without state, or also given as inputs, change nothing.
#[test]
fn held_by_key_equals_held_inputs() {
    let a = common::asset("blob_900");
    let b = common::asset("torus_900");
    let params = RtcdParams::from_meshes(&[&a, &b]);
    let (mut by_input, mut by_key) = (NarrowPhase::new(params).unwrap(), NarrowPhase::new(params).unwrap());
    let mut rng = common::rng(23);
    let keys: Vec<PairKey> = (0..8u64).map(|k| PairKey::new(k, k + 100)).collect();
    let base = Pose::new(Vec3::new(0.05, a.aabb().max.y + 0.1, 0.0), Quat::from_rotation_x(0.3));
    let opts = StepOptions::default();
    let mut held_total = 0;
    let mut before: Vec<PairKey> = Vec::new();
    for step in 0..60 {
        let t = step as f32 * 0.004;
        let pose_of =
            |k: PairKey| Pose::new(base.translation + Vec3::new(0.01 * k.a as f32, -t, 0.0), base.rotation);
        let present: Vec<PairKey> =
            keys.iter().copied().filter(|_| step < 3 || rng.random_range(0..10) > 0).collect();
        // Only pairs with state are held (as a caller following Rapier's recycling holds them).
        let hold: Vec<bool> =
            present.iter().map(|k| before.contains(k) && rng.random_range(0..3) > 0).collect();
        let inputs: Vec<PairInput> = present
            .iter()
            .zip(&hold)
            .map(|(&k, &h)| PairInput::new(k, &a, &b, pose_of(k)).with_hold(h))
            .collect();
        let traced: Vec<PairInput> = inputs.iter().filter(|p| !p.hold).copied().collect();
        let mut held: Vec<PairKey> = inputs.iter().filter(|p| p.hold).map(|p| p.key).collect();
        // Noise the backend must pass over: a key with no state, and a traced key held too.
        held.push(PairKey::new(77, 78));
        if let Some(p) = traced.first() {
            held.push(p.key);
        }
        let x = by_input.step(&inputs, &opts);
        let y = by_key.step_with_held(&traced, &held, &opts);
        // The held key without state counts; the traced one held too does not.
        assert_eq!(x.metrics.held_pairs + 1, y.metrics.held_pairs, "step {step}");
        assert_eq!(x.metrics.freed_pairs, y.metrics.freed_pairs, "step {step}");
        assert_eq!(
            (x.metrics.pairs, x.metrics.iterative_pairs),
            (y.metrics.pairs, y.metrics.iterative_pairs),
            "step {step}"
        );
        held_total += y.metrics.held_pairs;
        let xs: Vec<_> = x
            .pairs
            .iter()
            .zip(&inputs)
            .filter(|(_, p)| !p.hold)
            .map(|(o, _)| (o.key, o.mode, &o.manifolds))
            .collect();
        let ys: Vec<_> = y.pairs.iter().map(|o| (o.key, o.mode, &o.manifolds)).collect();
        assert_eq!(xs, ys, "step {step}");
        for k in keys.iter().chain([&PairKey::new(77, 78)]) {
            let (sx, sy) = (by_input.pair_state(k), by_key.pair_state(k));
            assert_eq!(
                sx.map(|s| (&s.records, s.reference, s.steps_since_standard)),
                sy.map(|s| (&s.records, s.reference, s.steps_since_standard)),
                "step {step} {k:?}"
            );
        }
        before = present;
    }
    assert!(held_total > 100, "{held_total} held");
}
