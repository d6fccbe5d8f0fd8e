//! Headless test apps: no window, no renderer (unless asked), one fixed tick of 1/60 s per update.
#![allow(dead_code, reason = "shared by several test binaries, each using a part")]

use std::time::Duration;

use bevy::{prelude::*, time::TimeUpdateStrategy};
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
