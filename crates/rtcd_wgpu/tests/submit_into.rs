//! A step encoded into the caller's command encoder (`GpuNarrowPhase::submit_into`, what the
//! pipelined mode does with the encoder of Bevy's render graph), submitted by the caller and
//! collected without ever waiting (`GpuNarrowPhase::try_collect`, polled until it answers) gives the
//! same results as a step the backend submits and collects itself: a seeded scene of 160 concave
//! pairs, 20 ticks of small motion, two backends on one device; equal ray counts, and equal
//! manifolds (same feature ids, points, normals and distances, bit for bit: the same kernels on the
//! same inputs). The first tick finds more contacts than the first read's guess (1,024), so its
//! second read goes through `try_collect` too; the collecting thread never waits on the device.
//! Collecting before the caller submits is an error after the backend's timeout, not a hang.

mod common;

use std::time::{Duration, Instant};

use rtcd::{PairInput, PairKey, RtcdParams, StepOptions};
use rtcd_wgpu::{GpuNarrowPhase, GpuOptions};

#[test]
fn a_step_in_the_callers_encoder_matches_one_the_backend_submits() {
    let d = common::device();
    let scene = common::Scene::random(160, 31);
    let refs: Vec<&rtcd::RtcdMesh> = scene.meshes.iter().collect();
    let params = RtcdParams::from_meshes(&refs);
    let mut own = GpuNarrowPhase::new(&d.device, &d.queue, params).unwrap();
    let mut into = GpuNarrowPhase::new(&d.device, &d.queue, params).unwrap();
    let opts = StepOptions { prediction_distance: 0.01, ..Default::default() };
    let mut points = 0;
    for tick in 0..20 {
        let inputs: Vec<PairInput> = scene
            .pairs
            .iter()
            .enumerate()
            .map(|(k, &(a, b, _))| {
                PairInput::new(
                    PairKey::new(k as u64, 1000 + k as u64),
                    &scene.meshes[a],
                    &scene.meshes[b],
                    scene.pose_at(k, tick, 31),
                )
            })
            .collect();
        let o = own.step(&inputs, &opts).unwrap();
        let mut encoder = d.device.create_command_encoder(&Default::default());
        into.submit_into(&mut encoder, &inputs, &opts).unwrap();
        d.queue.submit([encoder.finish()]);
        let t = Instant::now();
        let i = loop {
            if let Some(r) = into.try_collect() {
                break r.unwrap();
            }
            assert!(t.elapsed() < Duration::from_secs(30), "tick {tick}: no results after 30 s");
            std::thread::sleep(Duration::from_millis(1));
        };
        assert_eq!(i.metrics.device_wait, Some(Duration::ZERO), "tick {tick}: try_collect waited");
        if tick == 0 {
            let contact_bytes = std::mem::size_of::<rtcd_wgpu::gpu_types::GpuContactOut>() as u64;
            assert!(
                i.metrics.readback_bytes > 512 + 1024 * contact_bytes,
                "the first tick needed no second read ({} bytes back)",
                i.metrics.readback_bytes
            );
        }
        assert_eq!(o.metrics.standard_rays, i.metrics.standard_rays, "tick {tick}");
        assert_eq!(o.metrics.iterative_rays, i.metrics.iterative_rays, "tick {tick}");
        assert_eq!(o.metrics.contact_rays, i.metrics.contact_rays, "tick {tick}");
        for (a, b) in o.pairs.iter().zip(&i.pairs) {
            assert_eq!(a.manifolds.len(), b.manifolds.len(), "tick {tick} pair {}", a.key);
            for (ma, mb) in a.manifolds.iter().zip(&b.manifolds) {
                assert_eq!(ma.local_n1, mb.local_n1, "tick {tick} pair {}", a.key);
                assert_eq!(ma.points.len(), mb.points.len(), "tick {tick} pair {}", a.key);
                for (pa, pb) in ma.points.iter().zip(&mb.points) {
                    assert_eq!((pa.fid1, pa.fid2, pa.dist), (pb.fid1, pb.fid2, pb.dist));
                    assert_eq!((pa.local_p1, pa.local_p2), (pb.local_p1, pb.local_p2));
                    points += 1;
                }
            }
        }
    }
    assert!(points > 500, "too few manifold points to compare: {points}");
}

#[test]
fn collecting_a_step_nobody_submitted_fails_after_the_timeout() {
    let d = common::device();
    let scene = common::Scene::random(4, 32);
    let refs: Vec<&rtcd::RtcdMesh> = scene.meshes.iter().collect();
    let params = RtcdParams::from_meshes(&refs);
    let options = GpuOptions { timeout: Duration::from_millis(300), ..Default::default() };
    let mut gpu = GpuNarrowPhase::with_options(&d.device, &d.queue, params, options).unwrap();
    let inputs: Vec<PairInput> = scene
        .pairs
        .iter()
        .enumerate()
        .map(|(k, &(a, b, pose))| {
            PairInput::new(PairKey::new(k as u64, 100 + k as u64), &scene.meshes[a], &scene.meshes[b], pose)
        })
        .collect();
    let mut encoder = d.device.create_command_encoder(&Default::default());
    gpu.submit_into(&mut encoder, &inputs, &StepOptions::default()).unwrap();
    let t = Instant::now();
    let r = gpu.collect();
    assert!(r.is_err(), "results came back from commands never submitted");
    assert!(t.elapsed() < Duration::from_secs(5), "collect waited {:?}", t.elapsed());
    drop(encoder);
}

/// A first step with more contact and prediction records than the outputs start with (65,536): the
/// backend grows them and compacts again, in `collect` (waiting) and in `try_collect` (a second
/// submission, collected later), with the same results as each other and the same rays and
/// contacts as the CPU backend.
#[test]
fn a_step_that_outgrows_the_outputs_is_compacted_again() {
    let d = common::device();
    let scene = common::Scene::random(2_400, 33);
    let refs: Vec<&rtcd::RtcdMesh> = scene.meshes.iter().collect();
    let params = RtcdParams::from_meshes(&refs);
    let mut cpu = rtcd::NarrowPhase::new(params).unwrap();
    let mut own = GpuNarrowPhase::new(&d.device, &d.queue, params).unwrap();
    let mut into = GpuNarrowPhase::new(&d.device, &d.queue, params).unwrap();
    let inputs: Vec<PairInput> = scene
        .pairs
        .iter()
        .enumerate()
        .map(|(k, &(a, b, pose))| {
            PairInput::new(
                PairKey::new(k as u64, 10_000 + k as u64),
                &scene.meshes[a],
                &scene.meshes[b],
                pose,
            )
        })
        .collect();
    let opts = StepOptions { prediction_distance: 0.01, ..Default::default() };
    let c = cpu.step(&inputs, &opts);
    let o = own.step(&inputs, &opts).unwrap();
    let mut encoder = d.device.create_command_encoder(&Default::default());
    into.submit_into(&mut encoder, &inputs, &opts).unwrap();
    d.queue.submit([encoder.finish()]);
    let t = Instant::now();
    let i = loop {
        if let Some(r) = into.try_collect() {
            break r.unwrap();
        }
        assert!(t.elapsed() < Duration::from_secs(60), "no results after 60 s");
        std::thread::sleep(Duration::from_millis(1));
    };
    let records = o.metrics.contact_rays + o.metrics.prediction_records;
    assert!(records > 65_536, "only {records} records: the outputs did not overflow");
    assert_eq!(i.metrics.device_wait, Some(Duration::ZERO), "try_collect waited");
    for m in [&o.metrics, &i.metrics] {
        assert_eq!(m.standard_rays, c.metrics.standard_rays);
        assert_eq!(m.contact_rays, c.metrics.contact_rays);
        assert_eq!(m.prediction_records, c.metrics.prediction_records);
    }
    for (a, b) in o.pairs.iter().zip(&i.pairs) {
        assert_eq!(a.manifolds.len(), b.manifolds.len(), "pair {}", a.key);
        for (ma, mb) in a.manifolds.iter().zip(&b.manifolds) {
            assert_eq!(ma.points.len(), mb.points.len(), "pair {}", a.key);
            for (pa, pb) in ma.points.iter().zip(&mb.points) {
                assert_eq!((pa.fid1, pa.fid2, pa.dist), (pb.fid1, pb.fid2, pb.dist), "pair {}", a.key);
            }
        }
    }
}
