//! Headless test apps: no window, no renderer (unless asked), one fixed tick of 1/60 s per update;
//! and the check that the backend a test names is the one that ran.
#![allow(dead_code, reason = "shared by several test binaries, each using a part")]

use std::time::Duration;

use bevy::{
    log::LogPlugin,
    prelude::*,
    render::{
        RenderPlugin,
        pipelined_rendering::PipelinedRenderingPlugin,
        settings::{Backends, WgpuSettings},
    },
    time::TimeUpdateStrategy,
    window::ExitCondition,
    winit::WinitPlugin,
};
use bevy_rapier3d::prelude::*;
use bevy_rtcd::prelude::*;

pub const DT: f32 = 1.0 / 60.0;

/// Path of an asset mesh.
pub fn asset(name: &str) -> String {
    format!("{}/assets/meshes/{name}.obj", env!("CARGO_MANIFEST_DIR"))
}

/// A headless app with Rapier in the fixed schedule and, when `backend` is given, our plugin.
pub fn app(backend: Option<RtcdBackend>) -> App {
    app_with(backend, |_| {})
}

/// [`app`] with more plugins or resources added by `extra` before the app is finished.
pub fn app_with(backend: Option<RtcdBackend>, extra: impl FnOnce(&mut App)) -> App {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, TransformPlugin))
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f32(DT)))
        .insert_resource(Time::<Fixed>::from_seconds(DT as f64))
        .insert_resource(TimestepMode::Fixed { dt: DT, substeps: 1 })
        .add_plugins(RapierPhysicsPlugin::<NoUserData>::default().in_fixed_schedule());
    if let Some(b) = backend {
        app.add_plugins(RtcdPlugin::new(RtcdSettings::with_backend(b)));
    }
    extra(&mut app);
    app.finish();
    app.cleanup();
    // The first update only starts the clock: no fixed tick yet.
    app.update();
    app
}

/// The Vulkan renderer's default settings (lavapipe in CI).
pub fn vulkan() -> WgpuSettings {
    WgpuSettings { backends: Some(Backends::VULKAN), ..default() }
}

/// A headless app with Bevy's `DefaultPlugins` (windowing off: no window, no winit), the renderer
/// `wgpu`, Rapier in the fixed schedule and our plugin with `settings`. `as_users_have_it`: Bevy's
/// `PipelinedRenderingPlugin` (the render world runs beside the next update) and `LogPlugin` stay
/// on, as in `DefaultPlugins`; off, both are off and the render world runs right after the main
/// world each update (deterministic ticks).
pub fn render_app(settings: RtcdSettings, wgpu: WgpuSettings, as_users_have_it: bool) -> App {
    let mut app = App::new();
    let plugins = DefaultPlugins
        .set(WindowPlugin { primary_window: None, exit_condition: ExitCondition::DontExit, ..default() })
        .set(RenderPlugin { render_creation: wgpu.into(), ..default() })
        .disable::<WinitPlugin>();
    if as_users_have_it {
        app.add_plugins(plugins);
    } else {
        app.add_plugins(plugins.disable::<LogPlugin>().disable::<PipelinedRenderingPlugin>());
    }
    app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f32(DT)))
        .insert_resource(Time::<Fixed>::from_seconds(DT as f64))
        .insert_resource(TimestepMode::Fixed { dt: DT, substeps: 1 })
        .add_plugins(RapierPhysicsPlugin::<NoUserData>::default().in_fixed_schedule())
        .add_plugins(RtcdPlugin::new(settings));
    app.finish();
    app.cleanup();
    app.update();
    app
}

/// Runs `n` fixed ticks.
pub fn ticks(app: &mut App, n: usize) {
    for _ in 0..n {
        app.update();
    }
}

/// The backends every integration test runs with: the CPU one, and the GPU one in immediate mode
/// (on lavapipe in CI).
pub fn backends() -> [(&'static str, RtcdBackend); 2] {
    [("cpu", RtcdBackend::Cpu), ("gpu immediate", RtcdBackend::Gpu { mode: GpuMode::Immediate })]
}

/// Spawns a static ground slab whose top is y = 0.
pub fn ground(app: &mut App) -> Entity {
    app.world_mut().spawn((Collider::cuboid(20.0, 0.5, 20.0), Transform::from_xyz(0.0, -0.5, 0.0))).id()
}

/// Spawns the mesh `name` (an asset) as a dynamic `RtcdCollider` at `height` above the origin,
/// tilted by 0.4, 0.2 and 0.9 rad about x, y and z, with a `Velocity` to read.
pub fn drop_tilted(app: &mut App, name: &str, height: f32) -> Entity {
    app.world_mut()
        .spawn((
            RigidBody::Dynamic,
            RtcdCollider::from_obj(asset(name)),
            Transform::from_xyz(0.0, height, 0.0).with_rotation(Quat::from_euler(
                EulerRot::XYZ,
                0.4,
                0.2,
                0.9,
            )),
            Velocity::default(),
        ))
        .id()
}

/// The size of a built collider: the largest extent of its mesh's box.
pub fn size(app: &App, e: Entity) -> f32 {
    match app.world().get::<RtcdColliderState>(e) {
        Some(RtcdColliderState::Ready { mesh }) => mesh.aabb().extents().max_element(),
        other => panic!("collider not ready: {other:?}"),
    }
}

/// The lowest world y of a mesh body, from its collider's mesh.
pub fn lowest_y(app: &mut App, e: Entity) -> f32 {
    let w = app.world();
    let t = w.get::<GlobalTransform>(e).unwrap().compute_transform();
    match w.get::<RtcdColliderState>(e) {
        Some(RtcdColliderState::Ready { mesh }) => {
            mesh.positions().iter().map(|p| (t.rotation * *p + t.translation).y).fold(f32::INFINITY, f32::min)
        }
        other => panic!("collider not ready: {other:?}"),
    }
}

/// The most ticks late the pipelined GPU mode's results may be (`RtcdDiagnostics::latency_ticks`):
/// 1 when the GPU is done with a batch (submitted by the render world without waiting) before the
/// next tick's narrow phase, 2 when it is done a frame later, one more for an update that runs two
/// fixed ticks. Measured on lavapipe (2 cores): 1 on nearly every tick, at most 2.
pub const MAX_PIPELINED_LATENCY: u32 = 3;

/// Whether the last tick's contacts came from `expected`, by the public diagnostic
/// (`RtcdDiagnostics`): a backend of that kind (`cpu`, `gpu immediate (adapter)`, `gpu pipelined
/// (adapter)`) ran, the CPU backend did not take over from the GPU one (`fell_back`), and the results
/// are on time (in the tick, or at most [`MAX_PIPELINED_LATENCY`] ticks late in pipelined mode).
pub fn backend_ran(app: &App, expected: RtcdBackend) -> Result<(), String> {
    let d = app.world().resource::<RtcdDiagnostics>();
    let (prefix, max_latency) = match expected {
        RtcdBackend::Cpu => ("cpu", 0),
        RtcdBackend::Gpu { mode: GpuMode::Immediate } => ("gpu immediate (", 0),
        RtcdBackend::Gpu { mode: GpuMode::Pipelined } => ("gpu pipelined (", MAX_PIPELINED_LATENCY),
        RtcdBackend::Auto => panic!("name the backend Auto is expected to pick"),
    };
    if d.backend.is_empty() {
        return Err("no backend has run yet".into());
    }
    if d.fell_back {
        return Err(format!("{expected:?} fell back to {:?}: {}", d.backend, d.backend_reason));
    }
    if !d.backend.starts_with(prefix) {
        return Err(format!("{expected:?} expected, {:?} ran ({})", d.backend, d.backend_reason));
    }
    if d.latency_ticks > max_latency {
        return Err(format!(
            "{:?}: results {} ticks late (at most {max_latency})",
            d.backend, d.latency_ticks
        ));
    }
    Ok(())
}

/// Asserts [`backend_ran`]: every test that names a backend calls it after each tick, so that a
/// silent fallback to the CPU fails the test.
#[track_caller]
pub fn assert_backend_ran(app: &App, expected: RtcdBackend) {
    if let Err(e) = backend_ran(app, expected) {
        panic!("{e}");
    }
}

/// The active backend's name (panics if none started).
pub fn active(app: &App) -> String {
    app.world()
        .resource::<RtcdNarrowPhase>()
        .active_backend()
        .map(|b| b.to_string())
        .expect("backend started")
}

/// Kinetic energy of every dynamic body.
pub fn kinetic_energy(app: &mut App) -> f32 {
    let mut q = app.world_mut().query::<(&Velocity, &ReadMassProperties)>();
    q.iter(app.world())
        .map(|(v, m)| {
            let m = m.get();
            0.5 * m.mass * v.linear.length_squared()
                + 0.5 * (m.principal_inertia * v.angular * v.angular).element_sum()
        })
        .sum()
}
