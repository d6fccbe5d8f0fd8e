//! A step encoded into the caller's command encoder (`GpuNarrowPhase::submit_into`, what the
//! pipelined mode does with the encoder of Bevy's render graph) and submitted by the caller gives
//! the same results as a step the backend submits itself: a seeded scene of 24 concave pairs, 30
//! ticks of small motion, two backends on one device; equal ray counts, and equal manifolds (same
//! feature ids, points, normals and distances, bit for bit: the same kernels on the same inputs).
//! Collecting before the caller submits is an error after the backend's timeout, not a hang.

mod common;

use std::time::{Duration, Instant};

use rtcd::{PairInput, PairKey, RtcdParams, StepOptions};
use rtcd_wgpu::{GpuNarrowPhase, GpuOptions};

#[test]
fn a_step_in_the_callers_encoder_matches_one_the_backend_submits() {
    let d = common::device();
    let scene = common::Scene::random(24, 31);
    let refs: Vec<&rtcd::RtcdMesh> = scene.meshes.iter().collect();
    let params = RtcdParams::from_meshes(&refs);
    let mut own = GpuNarrowPhase::new(&d.device, &d.queue, params).unwrap();
    let mut into = GpuNarrowPhase::new(&d.device, &d.queue, params).unwrap();
    let opts = StepOptions { prediction_distance: 0.01, ..Default::default() };
    let mut points = 0;
    for tick in 0..30 {
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
        let i = into.collect().unwrap();
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
