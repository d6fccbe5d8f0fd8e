//! Which backend runs, as the public diagnostic (`RtcdDiagnostics`) reports it:
//!
//! - `RtcdBackend::Auto` on a software adapter (lavapipe in CI) picks the CPU and says why, and with
//!   `RtcdSettings::allow_software_adapter` takes the GPU (immediate mode without a renderer,
//!   pipelined with one: `tests/pipelined.rs`);
//! - a GPU backend that cannot start is reported as a fallback (`fell_back`, `backend`, the reason),
//!   and the check every GPU test makes after each tick (`common::assert_backend_ran`) rejects it.

mod common;

use bevy::{
    prelude::*,
    render::settings::{WgpuLimits, WgpuSettings},
};
use bevy_rtcd::prelude::*;

/// Drops a torus on the ground and runs `n` ticks, calling `check` after each; returns its lowest
/// point (negative: below the ground's top) and the ticks whose batch traced pairs.
fn drop_torus(app: &mut App, n: usize, mut check: impl FnMut(&App)) -> (f32, usize) {
    common::ground(app);
    let body = common::drop_tilted(app, "torus_900", 0.8);
    let mut traced = 0;
    for _ in 0..n {
        common::ticks(app, 1);
        check(app);
        traced += usize::from(app.world().resource::<RtcdDiagnostics>().pairs > 0);
    }
    (common::lowest_y(app, body), traced)
}

/// The adapter `Auto` looks at when there is no renderer: the one the plugin's own device gets.
fn adapter() -> Result<wgpu::AdapterInfo, String> {
    rtcd_wgpu::create_device(&rtcd_wgpu::DeviceOptions::default()).map(|d| d.info).map_err(|e| e.to_string())
}

/// An `RtcdSettings` resource inserted before the plugin is the one used (the plugin's own
/// settings are left out, with a warning when they are not the defaults).
#[test]
fn settings_inserted_before_the_plugin_are_kept() {
    let mut app = common::app_with(None, |app| {
        app.insert_resource(RtcdSettings {
            record_rays: true,
            ..RtcdSettings::with_backend(RtcdBackend::Cpu)
        })
        .add_plugins(RtcdPlugin::default());
    });
    let (_, traced) = drop_torus(&mut app, 30, |app| common::assert_backend_ran(app, RtcdBackend::Cpu));
    assert!(traced > 0);
    let s = app.world().resource::<RtcdSettings>();
    assert_eq!(s.backend, RtcdBackend::Cpu);
    assert!(s.record_rays);
    assert!(app.world().resource::<RtcdDiagnostics>().backend.starts_with("cpu"));
}

/// Default settings (`Auto`, software adapters not allowed): on a software adapter, or none, the
/// CPU backend runs; that is no fallback, and the reason names the setting that would change it.
/// On a hardware adapter `Auto` takes it. Headless and with the render plugins.
#[test]
fn auto_picks_the_cpu_on_a_software_adapter_and_says_why() {
    let settings = RtcdSettings::default();
    assert_eq!(settings.backend, RtcdBackend::Auto);
    assert!(!settings.allow_software_adapter, "software adapters are not taken by default");
    let info = adapter();
    let software = info.as_ref().map_or(true, |i| i.device_type == wgpu::DeviceType::Cpu);
    for (renderer, mut app) in [
        (
            "headless",
            common::app_with(None, |app| {
                app.add_plugins(RtcdPlugin::new(settings.clone()));
            }),
        ),
        ("render plugins", common::render_app(settings.clone(), common::vulkan(), false)),
    ] {
        let (expected, name) = match (software, renderer) {
            (true, _) => (RtcdBackend::Cpu, "cpu"),
            (false, "headless") => (RtcdBackend::Gpu { mode: GpuMode::Immediate }, "gpu immediate"),
            (false, _) => (RtcdBackend::Gpu { mode: GpuMode::Pipelined }, "gpu pipelined"),
        };
        let (low, traced) = drop_torus(&mut app, 90, |app| common::assert_backend_ran(app, expected));
        let d = app.world().resource::<RtcdDiagnostics>();
        println!(
            "Auto, {renderer}, adapter {:?}: {} (fell back: {}), reason: {}; {traced} ticks traced, lowest point {low:.4} m",
            info.as_ref().map(|i| (&i.name, i.device_type)),
            d.backend,
            d.fell_back,
            d.backend_reason
        );
        assert!(d.backend.starts_with(name), "{renderer}: {}", d.backend);
        assert!(!d.fell_back, "{renderer}: Auto's choice is no fallback");
        if software {
            assert!(
                d.backend_reason.contains("allow_software_adapter")
                    || d.backend_reason.contains("no usable GPU"),
                "{renderer}: {}",
                d.backend_reason
            );
            // The check of the GPU tests would reject this run.
            assert!(common::backend_ran(&app, RtcdBackend::Gpu { mode: GpuMode::Immediate }).is_err());
        }
        assert!(traced > 0 && low > -0.05, "{renderer}: the torus must land on the ground ({traced}, {low})");
    }
}

/// `allow_software_adapter` on: `Auto` takes lavapipe as it would a hardware GPU (immediate mode
/// without a renderer; the pipelined mode with one is `tests/pipelined.rs`'s users' app).
#[test]
fn auto_takes_a_software_adapter_when_allowed() {
    let info = adapter().expect("a GPU adapter (lavapipe in CI)");
    let settings = RtcdSettings { allow_software_adapter: true, ..default() };
    let mut app = common::app_with(None, |app| {
        app.add_plugins(RtcdPlugin::new(settings));
    });
    let expected = RtcdBackend::Gpu { mode: GpuMode::Immediate };
    let (low, traced) = drop_torus(&mut app, 90, |app| common::assert_backend_ran(app, expected));
    let d = app.world().resource::<RtcdDiagnostics>();
    println!(
        "Auto with allow_software_adapter, headless, adapter {:?} ({:?}): {}, reason: {}; {traced} ticks traced, \
         lowest point {low:.4} m",
        info.name, info.device_type, d.backend, d.backend_reason
    );
    assert!(d.backend_reason.starts_with("auto: "), "{}", d.backend_reason);
    assert!(traced > 0 && low > -0.05, "the torus must land on the ground ({traced}, {low})");
}

/// A renderer that asks wgpu for less workgroup memory than the kernels need: the GPU backend, which
/// runs on Bevy's `RenderDevice`, cannot start there.
fn renderer_the_gpu_backend_cannot_use() -> WgpuSettings {
    let needed = rtcd_wgpu::device::required_limits().max_compute_workgroup_storage_size;
    WgpuSettings {
        constrained_limits: Some(WgpuLimits { max_compute_workgroup_storage_size: needed / 2, ..default() }),
        ..common::vulkan()
    }
}

/// A GPU backend configured so that it cannot start (in both modes): the CPU backend takes over,
/// the diagnostic says so (`backend` "cpu", `fell_back`, the reason), and the check every GPU test
/// makes after each tick rejects the run; the torus still lands, on the CPU's contacts.
#[test]
fn a_gpu_backend_that_cannot_start_is_reported_as_a_fallback() {
    for mode in [GpuMode::Pipelined, GpuMode::Immediate] {
        let expected = RtcdBackend::Gpu { mode };
        let settings = RtcdSettings::with_backend(expected);
        let mut app = common::render_app(settings, renderer_the_gpu_backend_cannot_use(), false);
        let (low, traced) = drop_torus(&mut app, 90, |_| {});
        let d = app.world().resource::<RtcdDiagnostics>().clone();
        let check = common::backend_ran(&app, expected);
        println!(
            "{expected:?} on a renderer it cannot use: {} (fell back: {}), reason: {}; the check says {check:?}; \
             {traced} ticks traced, lowest point {low:.4} m",
            d.backend, d.fell_back, d.backend_reason
        );
        assert_eq!(d.backend, "cpu", "{mode:?}");
        assert!(d.fell_back, "{mode:?}");
        assert!(d.backend_reason.contains("cannot start"), "{mode:?}: {}", d.backend_reason);
        assert!(check.is_err_and(|e| e.contains("fell back")), "{mode:?}");
        assert!(traced > 0 && low > -0.05, "{mode:?}: the torus must land on the ground ({traced}, {low})");
    }
}

/// A GPU test whose GPU backend silently gave way to the CPU fails: the same scene, checked after
/// each tick as every GPU test checks it, panics with the fallback.
#[test]
#[should_panic(expected = "fell back to \"cpu\": the pipelined GPU backend cannot start")]
fn a_gpu_test_fails_when_the_cpu_ran_instead() {
    let expected = RtcdBackend::Gpu { mode: GpuMode::Pipelined };
    let settings = RtcdSettings::with_backend(expected);
    let mut app = common::render_app(settings, renderer_the_gpu_backend_cannot_use(), false);
    drop_torus(&mut app, 90, |app| common::assert_backend_ran(app, expected));
}

/// Rapier in another schedule than the plugin (its default `PostUpdate`, without
/// `.in_fixed_schedule()`, beside the plugin's fixed ticks) is reported: Rapier does not step
/// between the plugin's narrow phase and its diagnostics, and `rapier_out_of_step` says so. Set up
/// as the docs ask, it stays false; so it does with the physics paused.
#[test]
fn rapier_in_another_schedule_is_reported() {
    use std::time::Duration;

    use bevy::time::TimeUpdateStrategy;
    use bevy_rapier3d::prelude::*;

    let mut wrong = App::new();
    wrong
        .add_plugins((MinimalPlugins, TransformPlugin))
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f32(common::DT)))
        .insert_resource(Time::<Fixed>::from_seconds(common::DT as f64))
        .add_plugins(RapierPhysicsPlugin::<NoUserData>::default())
        .add_plugins(RtcdPlugin::new(RtcdSettings::with_backend(RtcdBackend::Cpu)));
    wrong.finish();
    wrong.cleanup();
    wrong.update();
    drop_torus(&mut wrong, 20, |_| {});
    assert!(wrong.world().resource::<RtcdDiagnostics>().rapier_out_of_step, "not reported");

    let mut right = common::app(Some(RtcdBackend::Cpu));
    drop_torus(&mut right, 20, |app| {
        assert!(!app.world().resource::<RtcdDiagnostics>().rapier_out_of_step, "reported wrongly");
    });
    // Paused: no step, and nothing to report.
    let mut q = right.world_mut().query::<&mut RapierConfiguration>();
    q.single_mut(right.world_mut()).unwrap().physics_pipeline_active = false;
    common::ticks(&mut right, 10);
    assert!(!right.world().resource::<RtcdDiagnostics>().rapier_out_of_step, "reported while paused");
}
