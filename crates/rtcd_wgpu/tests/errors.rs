//! Typed errors instead of panics or hangs: a device without the needed limits, a readback that
//! times out, a destroyed device.

mod common;

use std::time::Duration;

use rtcd::{NarrowPhaseBackend, PairInput, PairKey, RtcdParams, StepOptions, TracerKind};
use rtcd_wgpu::{
    GpuError, GpuNarrowPhase, GpuOptions,
    device::{missing_requirements, required_limits},
};

#[test]
fn missing_limits_are_listed() {
    let limits = wgpu::Limits { max_storage_buffers_per_shader_stage: 4, ..wgpu::Limits::default() };
    let missing = missing_requirements(&limits, None);
    assert_eq!(missing.len(), 1);
    // As many as the kernel that binds the most (the compaction binds 12).
    let need = required_limits().max_storage_buffers_per_shader_stage;
    assert!(need >= 12, "{need}");
    assert!(
        missing[0].contains(&format!("max_storage_buffers_per_shader_stage >= {need} (has 4)")),
        "{missing:?}"
    );
}

#[test]
fn a_device_with_downlevel_limits_is_refused_with_the_reason() {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle());
    let adapter = futures_lite::future::block_on(instance.request_adapter(&Default::default())).unwrap();
    let (device, queue) = futures_lite::future::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        required_limits: wgpu::Limits::downlevel_defaults(),
        ..Default::default()
    }))
    .unwrap();
    match GpuNarrowPhase::new(&device, &queue, RtcdParams::from_triangle_size(0.1)) {
        Err(GpuError::Unsupported { missing, adapter }) => {
            assert!(
                missing.iter().any(|m| m.contains("max_storage_buffers_per_shader_stage")),
                "{missing:?}"
            );
            let msg = GpuError::Unsupported { missing, adapter }.to_string();
            assert!(msg.contains("cannot run rtcd: missing"), "{msg}");
        }
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("a device with 4 storage buffers per stage cannot run the kernels"),
    }
}

fn pairs(scene: &common::Scene) -> Vec<PairInput<'_>> {
    scene
        .pairs
        .iter()
        .enumerate()
        .map(|(k, &(a, b, p))| {
            PairInput::new(
                PairKey::new(2 * k as u64, 2 * k as u64 + 1),
                &scene.meshes[a],
                &scene.meshes[b],
                p,
            )
        })
        .collect()
}

#[test]
fn a_readback_timeout_is_an_error_not_a_hang() {
    let d = common::device();
    let scene = common::Scene::random(300, 1);
    let params = RtcdParams { tracer: TracerKind::BruteForce, ..RtcdParams::from_triangle_size(0.08) };
    let options = GpuOptions { timeout: Duration::from_nanos(1), ..Default::default() };
    let mut gpu = GpuNarrowPhase::with_options(&d.device, &d.queue, params, options).unwrap();
    let start = std::time::Instant::now();
    let e = gpu.step(&pairs(&scene), &StepOptions::default()).unwrap_err();
    assert!(matches!(e, rtcd::BackendError::Readback(_)), "{e}");
    // The backend stays disabled, so a caller falls back instead of reading stale state.
    let again = NarrowPhaseBackend::step(&mut gpu, &pairs(&scene), &StepOptions::default()).unwrap_err();
    assert_eq!(again, e);
    assert!(start.elapsed() < Duration::from_secs(30));
    // Let the abandoned work finish before the shared device is used by other tests.
    let _ = d.device.poll(wgpu::PollType::wait_indefinitely());
}

/// A pair table asked for up front larger than the device can hold (or than a contact's slot bits
/// can name) is refused with the sizes, not a device error.
#[test]
fn an_oversized_initial_pair_table_is_refused() {
    let d = common::device();
    let options = GpuOptions { initial_pair_capacity: u32::MAX, ..Default::default() };
    match GpuNarrowPhase::with_options(&d.device, &d.queue, RtcdParams::from_triangle_size(0.1), options) {
        Err(GpuError::TooLarge { buffer, .. }) => assert!(buffer.contains("pair_table"), "{buffer}"),
        other => panic!("{:?}", other.err()),
    }
}

/// `Duration::MAX` (wait for ever) is a timeout like any other: the step waits and succeeds.
#[test]
fn an_endless_timeout_waits() {
    let d = common::device();
    let scene = common::Scene::random(8, 3);
    let params = RtcdParams::from_triangle_size(0.08);
    let endless = GpuOptions { timeout: Duration::MAX, ..Default::default() };
    let mut gpu = GpuNarrowPhase::with_options(&d.device, &d.queue, params, endless).unwrap();
    let mut usual = GpuNarrowPhase::new(&d.device, &d.queue, params).unwrap();
    let a = gpu.step(&pairs(&scene), &StepOptions::default()).unwrap();
    let b = usual.step(&pairs(&scene), &StepOptions::default()).unwrap();
    assert_eq!(a.pairs.len(), b.pairs.len());
    assert!(a.pairs.iter().any(|p| !p.manifolds.is_empty()), "the scene has contacts");
    for (x, y) in a.pairs.iter().zip(&b.pairs) {
        assert_eq!(x.manifolds, y.manifolds);
    }
}

#[test]
fn a_destroyed_device_is_an_error() {
    let own = rtcd_wgpu::create_device(&Default::default()).unwrap();
    let scene = common::Scene::random(8, 2);
    let mut gpu = GpuNarrowPhase::new(&own.device, &own.queue, RtcdParams::from_triangle_size(0.08)).unwrap();
    gpu.watch_device_lost(own.lost.clone());
    gpu.step(&pairs(&scene), &StepOptions::default()).unwrap();
    own.device.destroy();
    let e = gpu.step(&pairs(&scene), &StepOptions::default()).unwrap_err();
    println!("after destroy: {e}");
    assert!(matches!(
        e,
        rtcd::BackendError::DeviceLost(_) | rtcd::BackendError::Device(_) | rtcd::BackendError::Readback(_)
    ));
}
