//! A minimal headless app: `MinimalPlugins`, Rapier and `RtcdPlugin` on the CPU backend, with
//! `bevy_rtcd`'s default features off and no windowing, rendering, UI or image-format feature of
//! Bevy. A ray-traced torus falls on a static cuboid; the app exits with an error unless it comes to
//! rest on it. Built and run by the test script, which also checks that no windowing crate is in its
//! dependency tree.

use std::{process::ExitCode, sync::Arc, time::Duration};

use bevy::{prelude::*, time::TimeUpdateStrategy};
use bevy_rapier3d::prelude::*;
use bevy_rtcd::{
    prelude::*,
    rtcd::{RtcdMesh, shapes},
};

const DT: f32 = 1.0 / 60.0;

fn main() -> ExitCode {
    let (positions, indices) = shapes::torus(0.35, 0.15, 24, 12);
    let mesh = match RtcdMesh::new("torus", &positions, &indices) {
        Ok(m) => Arc::new(m),
        Err(e) => {
            eprintln!("rtcd_headless_app: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, TransformPlugin))
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f32(DT)))
        .insert_resource(Time::<Fixed>::from_seconds(f64::from(DT)))
        .add_plugins(RapierPhysicsPlugin::<NoUserData>::default().in_fixed_schedule())
        .add_plugins(RtcdPlugin::new(RtcdSettings::with_backend(RtcdBackend::Cpu)));
    app.world_mut().spawn((Collider::cuboid(5.0, 0.5, 5.0), Transform::from_xyz(0.0, -0.5, 0.0)));
    let body = app
        .world_mut()
        .spawn((RigidBody::Dynamic, RtcdCollider::from_rtcd_mesh(mesh), Transform::from_xyz(0.0, 1.0, 0.0)))
        .id();
    app.finish();
    app.cleanup();
    // The most ray-traced contacts of one tick: once at rest the body sleeps and its pair is not
    // traced any more.
    let mut contacts = 0;
    for _ in 0..180 {
        app.update();
        contacts = contacts.max(app.world().resource::<RtcdDiagnostics>().contacts);
    }
    let Some(t) = app.world().get::<Transform>(body) else {
        eprintln!("rtcd_headless_app: the body has no transform");
        return ExitCode::FAILURE;
    };
    let y = t.translation.y;
    println!(
        "rtcd_headless_app: torus at y = {y:.3} m after 3 s, at most {contacts} ray-traced contacts a tick"
    );
    // The torus (minor radius 0.15) lies flat on the ground: its centre rests 0.15 m above it.
    if (y - 0.15).abs() > 0.03 || contacts == 0 {
        eprintln!("rtcd_headless_app: the torus did not come to rest on the ground");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
