//! The GPU pair table: pairs enter, persist, leave and re-enter with their state kept or freed, and a
//! table started at 4 slots grows past 10x without losing a pair or its state. Every step is compared
//! with the CPU backend running the same sequence (the backends agree bit for bit on lavapipe, so
//! contact sets are compared exactly, depths within 1e-6).

mod common;

use std::collections::BTreeMap;

use rtcd::{NarrowPhase, PairInput, PairKey, RtcdParams, StepMode, StepOptions};
use rtcd_wgpu::{GpuNarrowPhase, GpuOptions};

fn key(k: usize) -> PairKey {
    PairKey::new(2 * k as u64, 2 * k as u64 + 1)
}

/// Steps both backends over the pairs `ids` of the scene at `tick` and checks they agree.
fn step(
    scene: &common::Scene,
    cpu: &mut NarrowPhase,
    gpu: &mut GpuNarrowPhase,
    ids: &[usize],
    tick: usize,
) -> (rtcd::StepOutput, rtcd::StepOutput) {
    let pairs: Vec<PairInput> = ids
        .iter()
        .map(|&k| {
            let (m1, m2, _) = scene.pairs[k];
            PairInput::new(key(k), &scene.meshes[m1], &scene.meshes[m2], scene.pose_at(k, tick, 5))
        })
        .collect();
    let opts = StepOptions { keep_contacts: true, ..Default::default() };
    let c = cpu.step(&pairs, &opts);
    let g = gpu.step(&pairs, &opts).unwrap();
    for (cp, gp) in c.pairs.iter().zip(&g.pairs) {
        assert_eq!(cp.mode, gp.mode, "tick {tick} pair {:?}", cp.key);
        let set = |cs: &[rtcd::ContactCandidate]| -> BTreeMap<(u64, u64), f32> {
            cs.iter().map(|c| ((c.fid1.packed(), c.fid2.packed()), c.dist)).collect()
        };
        let (cs, gs) = (set(&cp.contacts), set(&gp.contacts));
        assert_eq!(
            cs.keys().collect::<Vec<_>>(),
            gs.keys().collect::<Vec<_>>(),
            "tick {tick} pair {:?}",
            cp.key
        );
        for (k, d) in &cs {
            assert!((d - gs[k]).abs() <= 1e-6, "tick {tick} pair {:?}: {d} vs {}", cp.key, gs[k]);
        }
    }
    assert_eq!(c.metrics.contact_rays, g.metrics.contact_rays);
    (c, g)
}

/// The GPU slot of every live pair holds the host mirror's reference pose and record counts.
fn check_table(gpu: &GpuNarrowPhase, ids: &[usize]) {
    let table = gpu.read_pair_table().unwrap();
    for &k in ids {
        let slot = gpu.pair_slot(&key(k)).unwrap_or_else(|| panic!("pair {k} has no slot"));
        let mirror = gpu.slot_mirror(slot).unwrap();
        let s = table[slot as usize];
        assert_eq!([s.rec_count_a, s.rec_count_b], mirror.rec_counts, "pair {k}");
        let r = mirror.reference.unwrap();
        assert_eq!(s.ref_t[3], 1.0);
        assert!((glam::Vec3::new(s.ref_t[0], s.ref_t[1], s.ref_t[2]) - r.translation).length() < 1e-6);
        assert!(glam::Quat::from_array(s.ref_q).dot(r.rotation).abs() > 1.0 - 1e-6);
    }
}

#[test]
fn pairs_enter_persist_leave_reenter_and_the_table_grows() {
    let d = common::device();
    let scene = common::Scene::random(48, 11);
    let refs: Vec<&rtcd::RtcdMesh> = scene.meshes.iter().collect();
    let params = RtcdParams::from_meshes(&refs);
    let mut cpu = NarrowPhase::new(params).unwrap();
    let options = GpuOptions { initial_pair_capacity: 4, ..Default::default() };
    let mut gpu = GpuNarrowPhase::with_options(&d.device, &d.queue, params, options).unwrap();
    assert_eq!(gpu.pair_capacity(), 4);

    // Enter: 10 pairs (the table doubles from 4 to 16).
    let first: Vec<usize> = (0..10).collect();
    let (_, g) = step(&scene, &mut cpu, &mut gpu, &first, 0);
    assert_eq!(g.metrics.new_pairs, 10);
    assert!(g.pairs.iter().all(|p| p.mode == StepMode::Standard));
    assert_eq!(gpu.pair_capacity(), 16);
    let slots: Vec<u32> = first.iter().map(|&k| gpu.pair_slot(&key(k)).unwrap()).collect();
    check_table(&gpu, &first);

    // Persist: iterative from the records kept on the GPU; same slots.
    for tick in 1..4 {
        let (_, g) = step(&scene, &mut cpu, &mut gpu, &first, tick);
        assert!(g.pairs.iter().all(|p| p.mode == StepMode::Iterative), "tick {tick}");
        assert!(g.metrics.iterative_rays > 0);
    }
    assert_eq!(first.iter().map(|&k| gpu.pair_slot(&key(k)).unwrap()).collect::<Vec<_>>(), slots);
    check_table(&gpu, &first);

    // Leave and enter: pairs 0..5 leave, 10..48 enter; the table grows to 64 (16x its start) while
    // pairs 5..10 keep their slots and their state (they stay iterative and agree with the CPU).
    let second: Vec<usize> = (5..48).collect();
    let (_, g) = step(&scene, &mut cpu, &mut gpu, &second, 4);
    assert_eq!(g.metrics.freed_pairs, 5);
    assert_eq!(g.metrics.new_pairs, 38);
    assert_eq!(gpu.pair_capacity(), 64);
    assert_eq!(gpu.pair_count(), 43);
    for (i, &k) in first.iter().enumerate() {
        if k < 5 {
            assert!(gpu.pair_slot(&key(k)).is_none(), "pair {k} left: its slot is freed");
        } else {
            assert_eq!(gpu.pair_slot(&key(k)), Some(slots[i]), "pair {k} keeps its slot");
            assert_eq!(g.pairs[k - 5].mode, StepMode::Iterative, "pair {k} keeps its state");
        }
    }
    for tick in 5..8 {
        step(&scene, &mut cpu, &mut gpu, &second, tick);
    }
    check_table(&gpu, &second);

    // Re-enter: pairs 0..5 come back as new pairs (standard step), in free slots.
    let all: Vec<usize> = (0..48).collect();
    let (_, g) = step(&scene, &mut cpu, &mut gpu, &all, 8);
    assert_eq!(g.metrics.new_pairs, 5);
    for k in 0..5 {
        assert_eq!(g.pairs[k].mode, StepMode::Standard);
    }
    for tick in 9..12 {
        step(&scene, &mut cpu, &mut gpu, &all, tick);
    }
    check_table(&gpu, &all);
    let mut used: Vec<u32> = all.iter().map(|&k| gpu.pair_slot(&key(k)).unwrap()).collect();
    used.sort_unstable();
    used.dedup();
    assert_eq!(used.len(), 48, "every pair has its own slot");
}

/// An app that keeps making meshes (each step a pair with a mesh never seen before, gone the next
/// step) does not grow the device's mesh store without bound: past twice the meshes in use plus a
/// slack, the backend starts its device state again. Through those restarts its results stay the
/// CPU backend's (both traced with the standard tracer, which keeps no state between steps).
#[test]
fn meshes_made_step_after_step_do_not_pile_up_on_the_device() {
    let d = common::device();
    let scene = common::Scene::random(4, 5);
    let refs: Vec<&rtcd::RtcdMesh> = scene.meshes.iter().collect();
    let params = RtcdParams::from_meshes(&refs);
    let mut cpu = NarrowPhase::new(params).unwrap();
    let mut gpu = GpuNarrowPhase::new(&d.device, &d.queue, params).unwrap();
    let (v, i) = rtcd::shapes::icosphere(0.3, 1);
    let opts = StepOptions { force_standard: true, ..Default::default() };
    let (mut most, mut restarts, mut last) = (0, 0, 0);
    for tick in 0..300 {
        let fresh = rtcd::RtcdMesh::new(format!("fresh {tick}"), &v, &i).unwrap();
        let mut pairs: Vec<PairInput> = (0..4)
            .map(|k| {
                let (m1, m2, _) = scene.pairs[k];
                PairInput::new(key(k), &scene.meshes[m1], &scene.meshes[m2], scene.pose_at(k, tick, 5))
            })
            .collect();
        let near = rtcd::Pose::new(glam::Vec3::new(0.0, 0.35, 0.0), glam::Quat::IDENTITY);
        pairs.push(PairInput::new(key(100 + tick), &scene.meshes[0], &fresh, near));
        let c = cpu.step(&pairs, &opts);
        let g = gpu.step(&pairs, &opts).unwrap();
        for (cp, gp) in c.pairs.iter().zip(&g.pairs) {
            assert_eq!(cp.manifolds, gp.manifolds, "tick {tick} pair {:?}", cp.key);
        }
        assert!(c.pairs.iter().any(|p| !p.manifolds.is_empty()), "tick {tick}: the scene has contacts");
        let n = gpu.mesh_count();
        restarts += usize::from(n < last);
        (most, last) = (most.max(n), n);
    }
    println!("meshes on the device: at most {most}; {restarts} restarts in 300 steps");
    // Four meshes at most in use (the scene's three and the fresh one): 2 x 4 + 64 + the step's own.
    assert!(most <= 2 * 4 + 64 + 4, "{most} meshes held");
    assert!(restarts >= 3, "{restarts}");
}

/// A standard step's new reference keeps the separation bound the CPU backend keeps: for a pair the
/// trace left without records, its distance bound (what IRTCD 2013 Eq. 2's exception reads at the
/// next steps), made by the host after the step; zero for a pair that keeps records. Pairs at
/// seeded distances from overlapping to three radii apart slide to and fro along their line, so
/// that standard steps come with and without records; every step's mirror is compared with the
/// CPU backend's state.
#[test]
fn standard_steps_keep_the_cpu_backends_separation() {
    let d = common::device();
    let scene = common::Scene::random(24, 23);
    let refs: Vec<&rtcd::RtcdMesh> = scene.meshes.iter().collect();
    let params = RtcdParams::from_meshes(&refs);
    let mut cpu = NarrowPhase::new(params).unwrap();
    let mut gpu = GpuNarrowPhase::new(&d.device, &d.queue, params).unwrap();
    let apart = [-0.1f32, 0.0, 0.1, 0.4, 1.0, 3.0];
    let pose = |k: usize, tick: usize| {
        let (m1, m2, base) = scene.pairs[k];
        let r = scene.meshes[m1].max_radius().max(scene.meshes[m2].max_radius());
        let dir = base.translation.normalize_or(glam::Vec3::Y);
        let shift = (apart[k % apart.len()] + 0.3 * (0.2 * tick as f32 + k as f32).sin()) * r;
        rtcd::Pose::new(base.translation + dir * shift, base.rotation)
    };
    let opts = StepOptions { keep_contacts: true, ..Default::default() };
    let (mut kept_apart, mut with_records, mut near) = (0, 0, 0);
    for tick in 0..40 {
        let pairs: Vec<PairInput> = (0..scene.pairs.len())
            .map(|k| {
                let (m1, m2, _) = scene.pairs[k];
                PairInput::new(key(k), &scene.meshes[m1], &scene.meshes[m2], pose(k, tick))
            })
            .collect();
        // Each pair's witness before the step, where its descents start.
        let witnesses: Vec<[u32; 2]> = (0..pairs.len())
            .map(|k| gpu.pair_slot(&key(k)).and_then(|s| gpu.slot_mirror(s)).map_or([0, 0], |m| m.witness))
            .collect();
        let c = cpu.step(&pairs, &opts);
        let g = gpu.step(&pairs, &opts).unwrap();
        for (k, (cp, gp)) in c.pairs.iter().zip(&g.pairs).enumerate() {
            assert_eq!(cp.mode, gp.mode, "tick {tick} pair {k}");
            let state = cpu.pair_state(&key(k)).unwrap();
            let mirror = gpu.slot_mirror(gpu.pair_slot(&key(k)).unwrap()).unwrap();
            assert_eq!(state.reference, mirror.reference, "tick {tick} pair {k}");
            let tol = 1e-6 * (1.0 + state.separation.abs());
            assert!(
                (state.separation - mirror.separation).abs() <= tol,
                "tick {tick} pair {k}: separation {} on the CPU, {} on the GPU",
                state.separation,
                mirror.separation
            );
            if cp.mode == StepMode::Standard {
                if state.has_records() {
                    with_records += 1;
                    // Where the descent from the pair's witness gives a bound above zero, which
                    // neither backend keeps for a pair with records.
                    let (m1, m2, _) = scene.pairs[k];
                    let (m1, m2) = (&scene.meshes[m1], &scene.meshes[m2]);
                    let own = params.for_pair(m1, m2);
                    let mut w = witnesses[k];
                    let b = rtcd::detect::separation_for_reach_from(m1, m2, &pose(k, tick), &own, &mut w);
                    near += usize::from(b > 0.0);
                } else if state.separation > 0.0 {
                    kept_apart += 1;
                }
            }
        }
    }
    println!(
        "standard steps: {with_records} with records ({near} of them with a bound above zero from \
         their witness), {kept_apart} without, their bound kept"
    );
    assert!(
        with_records >= 20 && near >= 5 && kept_apart >= 20,
        "{with_records} with records ({near} apart), {kept_apart} without"
    );
}
