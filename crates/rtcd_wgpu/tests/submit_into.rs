//! A step encoded into the caller's command encoder (`GpuNarrowPhase::submit_into`, what the
//! pipelined mode does with the encoder of Bevy's render graph), submitted by the caller and
//! collected without ever waiting (`GpuNarrowPhase::try_collect`, polled until it answers) gives the
//! same results as a step the backend submits and collects itself: a seeded scene of 160 concave
//! pairs, 20 ticks of small motion, two backends on one device; equal ray counts, and equal
//! manifolds (same feature ids, points, normals and distances, bit for bit: the same kernels on the
//! same inputs). The first tick finds more contacts than the first read's guess (1,024), so its
//! second read goes through `try_collect` too; the collecting thread never waits on the device.
//! A step that outgrows the outputs is compacted again either way, with the CPU backend's rays.
//! Collecting before the caller submits is an error after the backend's timeout, not a hang.

mod common;

use std::time::{Duration, Instant};

use rtcd::{PairInput, PairKey, RtcdParams, StepOptions, StepOutput};
use rtcd_wgpu::{FIRST_READ_CONTACTS, GpuNarrowPhase, GpuOptions, gpu_types::GpuContactOut};

/// The scene's pairs at `tick` of the walk seeded `seed` (`None`: their starting poses), keyed from
/// `key_base`.
fn inputs(scene: &common::Scene, key_base: u64, tick: Option<(usize, u64)>) -> Vec<PairInput<'_>> {
    scene
        .pairs
        .iter()
        .enumerate()
        .map(|(k, &(a, b, pose))| {
            let pose = tick.map_or(pose, |(t, seed)| scene.pose_at(k, t, seed));
            let key = PairKey::new(k as u64, key_base + k as u64);
            PairInput::new(key, &scene.meshes[a], &scene.meshes[b], pose)
        })
        .collect()
}

/// Encodes a step into an encoder of the caller's, submits it, and polls `try_collect` until it
/// answers (at most `limit`); the answer must not have waited on the device.
fn step_into(
    gpu: &mut GpuNarrowPhase,
    inputs: &[PairInput],
    opts: &StepOptions,
    limit: Duration,
) -> StepOutput {
    let d = common::device();
    let mut encoder = d.device.create_command_encoder(&Default::default());
    gpu.submit_into(&mut encoder, inputs, opts).unwrap();
    d.queue.submit([encoder.finish()]);
    let t = Instant::now();
    loop {
        if let Some(r) = gpu.try_collect() {
            let out = r.unwrap();
            assert_eq!(out.metrics.device_wait, Some(Duration::ZERO), "try_collect waited");
            return out;
        }
        assert!(t.elapsed() < limit, "no results after {limit:?}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Asserts the same manifolds, point for point, bit for bit; returns the points compared.
fn assert_same_manifolds(a: &StepOutput, b: &StepOutput, what: &str) -> usize {
    let mut points = 0;
    for (pa, pb) in a.pairs.iter().zip(&b.pairs) {
        assert_eq!(pa.manifolds.len(), pb.manifolds.len(), "{what}, pair {}", pa.key);
        for (ma, mb) in pa.manifolds.iter().zip(&pb.manifolds) {
            assert_eq!(ma.local_n1, mb.local_n1, "{what}, pair {}", pa.key);
            assert_eq!(ma.points.len(), mb.points.len(), "{what}, pair {}", pa.key);
            for (x, y) in ma.points.iter().zip(&mb.points) {
                assert_eq!((x.fid1, x.fid2, x.dist), (y.fid1, y.fid2, y.dist), "{what}, pair {}", pa.key);
                assert_eq!((x.local_p1, x.local_p2), (y.local_p1, y.local_p2), "{what}, pair {}", pa.key);
                points += 1;
            }
        }
    }
    points
}

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
        let inputs = inputs(&scene, 1000, Some((tick, 31)));
        let o = own.step(&inputs, &opts).unwrap();
        let i = step_into(&mut into, &inputs, &opts, Duration::from_secs(30));
        if tick == 0 {
            let first_read = 512 + FIRST_READ_CONTACTS * std::mem::size_of::<GpuContactOut>() as u64;
            assert!(
                i.metrics.readback_bytes > first_read,
                "the first tick needed no second read ({} bytes back)",
                i.metrics.readback_bytes
            );
        }
        assert_eq!(o.metrics.standard_rays, i.metrics.standard_rays, "tick {tick}");
        assert_eq!(o.metrics.iterative_rays, i.metrics.iterative_rays, "tick {tick}");
        assert_eq!(o.metrics.contact_rays, i.metrics.contact_rays, "tick {tick}");
        points += assert_same_manifolds(&o, &i, &format!("tick {tick}"));
    }
    assert!(points > 500, "too few manifold points to compare: {points}");
}

/// `collect` right after a `try_collect` that started the second read (the contacts outgrew the
/// first read's guess) waits for that read instead of taking it for mapped, and gives the results
/// of a step the backend collects on its own.
#[test]
fn collect_after_try_collect_started_the_second_read() {
    let d = common::device();
    let scene = common::Scene::random(160, 9);
    let params = RtcdParams::from_meshes(&scene.meshes.iter().collect::<Vec<_>>());
    let opts = StepOptions { prediction_distance: 0.02, ..Default::default() };
    let input = inputs(&scene, 1000, None);
    let mut reference = GpuNarrowPhase::new(&d.device, &d.queue, params).unwrap();
    let expected = reference.step(&input, &opts).unwrap();
    let mut gpu = GpuNarrowPhase::new(&d.device, &d.queue, params).unwrap();
    gpu.submit(&input, &opts).unwrap();
    // The first read mapped: `try_collect` sees more contacts than it held and starts the second.
    d.device.poll(wgpu::PollType::Wait { submission_index: None, timeout: None }).unwrap();
    assert!(gpu.try_collect().is_none(), "the first read held every contact");
    let out = gpu.collect().unwrap();
    assert!(out.metrics.readback_bytes > FIRST_READ_CONTACTS * std::mem::size_of::<GpuContactOut>() as u64);
    assert_same_manifolds(&expected, &out, "collect after try_collect");
}

/// A first step with more contact and prediction records than the outputs start with (65,536): the
/// backend grows them and compacts again, in `collect` (waiting) and in `try_collect` (a second
/// submission, collected later), with the same results as each other and the same rays and
/// contacts as the CPU backend; the next step, iterative, lays out the same edge rays as the CPU
/// backend's from the records compacted again.
#[test]
fn a_step_that_outgrows_the_outputs_is_compacted_again() {
    let d = common::device();
    let scene = common::Scene::random(2_400, 33);
    let refs: Vec<&rtcd::RtcdMesh> = scene.meshes.iter().collect();
    let params = RtcdParams::from_meshes(&refs);
    let mut cpu = rtcd::NarrowPhase::new(params).unwrap();
    let mut own = GpuNarrowPhase::new(&d.device, &d.queue, params).unwrap();
    let mut into = GpuNarrowPhase::new(&d.device, &d.queue, params).unwrap();
    let inputs = inputs(&scene, 10_000, None);
    let opts = StepOptions { prediction_distance: 0.01, ..Default::default() };
    let c = cpu.step(&inputs, &opts);
    let o = own.step(&inputs, &opts).unwrap();
    let i = step_into(&mut into, &inputs, &opts, Duration::from_secs(60));
    let records = o.metrics.contact_rays + o.metrics.prediction_records;
    assert!(records > 65_536, "only {records} records: the outputs did not overflow");
    for m in [&o.metrics, &i.metrics] {
        assert_eq!(m.standard_rays, c.metrics.standard_rays);
        assert_eq!(m.contact_rays, c.metrics.contact_rays);
        assert_eq!(m.prediction_records, c.metrics.prediction_records);
    }
    assert!(assert_same_manifolds(&o, &i, "the step that outgrew the outputs") > 0);
    // The next step walks the records compacted again, and lays its edge rays out from them.
    let c = cpu.step(&inputs, &opts);
    assert!(c.metrics.iterative_pairs > 0 && c.metrics.edge_rays > 0, "{:?}", c.metrics);
    let o = own.step(&inputs, &opts).unwrap();
    let i = step_into(&mut into, &inputs, &opts, Duration::from_secs(60));
    for m in [&o.metrics, &i.metrics] {
        assert_eq!(m.iterative_pairs, c.metrics.iterative_pairs);
        assert_eq!(
            m.iterative_rays + m.predictive_rays,
            c.metrics.iterative_rays + c.metrics.predictive_rays
        );
        assert_eq!(m.edge_rays, c.metrics.edge_rays, "the edge rays laid out after the outputs grew");
    }
    assert!(assert_same_manifolds(&o, &i, "the step after") > 0);
}

#[test]
fn collecting_a_step_nobody_submitted_fails_after_the_timeout() {
    let d = common::device();
    let scene = common::Scene::random(4, 32);
    let refs: Vec<&rtcd::RtcdMesh> = scene.meshes.iter().collect();
    let params = RtcdParams::from_meshes(&refs);
    let options = GpuOptions { timeout: Duration::from_millis(300), ..Default::default() };
    let mut gpu = GpuNarrowPhase::with_options(&d.device, &d.queue, params, options).unwrap();
    let inputs = inputs(&scene, 100, None);
    let mut encoder = d.device.create_command_encoder(&Default::default());
    gpu.submit_into(&mut encoder, &inputs, &StepOptions::default()).unwrap();
    let t = Instant::now();
    let r = gpu.collect();
    assert!(r.is_err(), "results came back from commands never submitted");
    assert!(t.elapsed() < Duration::from_secs(5), "collect waited {:?}", t.elapsed());
    drop(encoder);
}
