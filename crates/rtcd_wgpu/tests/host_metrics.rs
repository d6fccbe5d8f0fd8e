//! What a step costs the host, in the step's metrics: host time without the waits, the wait, bytes
//! uploaded and bytes read back.

mod common;

use std::time::Duration;

use glam::Vec3;
use rtcd::{NarrowPhase, PairInput, PairKey, Pose, RtcdMesh, RtcdParams, StepOptions, shapes};
use rtcd_wgpu::{
    GpuNarrowPhase,
    gpu_types::{GpuContactOut, GpuPairStatic, GpuPairStep, GpuTriangle, GpuVertex},
};

/// `blob_900` and a tessellated ground box, with a GPU and a CPU backend of their parameters.
fn blob_and_ground() -> (RtcdMesh, RtcdMesh, GpuNarrowPhase, NarrowPhase) {
    let d = common::device();
    let blob = common::asset("blob_900");
    let (v, i) = shapes::subdivided_cuboid(Vec3::new(4.0, 1.0, 4.0), 8);
    let ground = RtcdMesh::new("ground", &v, &i).unwrap();
    let params = RtcdParams::from_meshes(&[&blob, &ground]);
    let gpu = GpuNarrowPhase::new(&d.device, &d.queue, params).unwrap();
    let cpu = NarrowPhase::new(params).unwrap();
    (blob, ground, gpu, cpu)
}

#[test]
fn steps_report_host_time_wait_and_bytes() {
    let (blob, ground, mut gpu, mut cpu) = blob_and_ground();
    let mesh_bytes = |m: &RtcdMesh| {
        (m.positions().len() * size_of::<GpuVertex>() + m.triangles().len() * size_of::<GpuTriangle>()) as u64
    };
    let mut uploads = Vec::new();
    for step in 0..4 {
        let pose = Pose::from_translation(Vec3::new(0.1, 0.3 - 0.002 * step as f32, 0.0));
        let pair = PairInput::from_world(
            PairKey::new(1, 2),
            &blob,
            pose,
            &ground,
            Pose::from_translation(Vec3::NEG_Y),
        );
        let m = gpu.step(&[pair], &StepOptions::default()).unwrap().metrics;
        assert!(m.contact_rays > 0, "step {step}: the blob sits in the ground");
        let (host, wait) = (m.host_time.unwrap(), m.device_wait.unwrap());
        assert!(host > Duration::ZERO, "step {step}");
        // The host time by phase adds up to it.
        let h = gpu.last_host_phases();
        assert_eq!(h.plan + h.edges + h.collect, host, "step {step}: {h:?}");
        assert!(h.plan > Duration::ZERO && h.collect > Duration::ZERO, "step {step}: {h:?}");
        // The pair's decisions are part of planning; its first step, new and without records,
        // makes its separation bound before the trace, the iterative ones none.
        assert!(h.decide > Duration::ZERO && h.decide <= h.plan, "step {step}: {h:?}");
        assert_eq!(h.bounds, u32::from(step == 0), "step {step}: {h:?}");
        // Both lie within the step's wall time (the host's clock starts a little before it).
        assert!(
            host + wait <= m.time + Duration::from_millis(2),
            "step {step}: {host:?} + {wait:?} vs {:?}",
            m.time
        );
        // At least the pair's step record, and on the first step both meshes and its statics.
        assert!(m.upload_bytes >= size_of::<GpuPairStep>() as u64, "step {step}: {}", m.upload_bytes);
        if step == 0 {
            let first = mesh_bytes(&blob) + mesh_bytes(&ground) + size_of::<GpuPairStatic>() as u64;
            assert!(m.upload_bytes >= first, "{}", m.upload_bytes);
        }
        uploads.push(m.upload_bytes);
        // The contacts come back, and more (the counters; a first guess of the contacts' count).
        assert!(
            m.readback_bytes >= m.contact_rays * size_of::<GpuContactOut>() as u64 + 16,
            "step {step}: {} bytes for {} contacts",
            m.readback_bytes,
            m.contact_rays
        );
        // Every pass of the step is timed, to the last.
        if gpu.has_timestamps() {
            let t = gpu.last_kernel_timings();
            assert_eq!(t.last().map(|k| k.0), Some("rtcd:kernel:pair_end"), "step {step}: {t:?}");
        }
        let c = cpu.step(&[pair], &StepOptions::default()).metrics;
        assert_eq!((c.host_time, c.device_wait, c.upload_bytes, c.readback_bytes), (None, None, 0, 0));
    }
    // The meshes and the pair's statics are uploaded once: later steps send the pair's step record
    // and the step's constants only.
    assert!(uploads[1..].iter().all(|&u| u == uploads[1] && u < uploads[0]), "{uploads:?}");
}

/// The step's bind groups are kept from step to step: a pair at rest, stepped with the same pose,
/// makes them on its first steps (while its buffers find their sizes) and none afterwards; a step
/// with a new pair makes those it lacks (the new pair's links, its standard trace: kernels the
/// steady steps did not run). The manifolds are the CPU backend's throughout.
#[test]
fn steady_steps_make_no_bind_groups() {
    let (blob, ground, mut gpu, mut cpu) = blob_and_ground();
    let ground_pose = Pose::from_translation(Vec3::NEG_Y);
    let pair = |key: u64, x: f32| {
        PairInput::from_world(
            PairKey::new(key, 0),
            &blob,
            Pose::from_translation(Vec3::new(x, 0.28, 0.0)),
            &ground,
            ground_pose,
        )
    };
    let mut made = Vec::new();
    for step in 0..12 {
        let pairs = if step < 10 { vec![pair(1, 0.1)] } else { vec![pair(1, 0.1), pair(2, -2.0)] };
        let g = gpu.step(&pairs, &StepOptions::default()).unwrap();
        let c = cpu.step(&pairs, &StepOptions::default());
        for (g, c) in g.pairs.iter().zip(&c.pairs) {
            assert_eq!(g.manifolds.len(), c.manifolds.len(), "step {step}");
        }
        made.push(gpu.last_host_phases().bind_groups);
    }
    assert!(made[0] > 0, "{made:?}");
    assert!(made[4..10].iter().all(|&n| n == 0), "steady steps made bind groups: {made:?}");
    assert!(made[10] > 0, "a step with a new pair made none: {made:?}");
}
