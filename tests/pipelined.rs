//! Pipelined GPU mode end to end, with the render plugins, headless (no window), on lavapipe in CI:
//! the GPU dispatch runs in the render world's `RenderGraph` schedule and the next tick uses its
//! results. Its deepest penetration stays within 1.5x of immediate mode on the same scene (both
//! with Rapier's contact recycling off, which the pipelined mode cannot follow).

mod common;

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

fn render_app(mode: GpuMode) -> App {
    let mut app = App::new();
    app.add_plugins(
        DefaultPlugins
            .set(WindowPlugin { primary_window: None, exit_condition: ExitCondition::DontExit, ..default() })
            .set(RenderPlugin {
                render_creation: WgpuSettings { backends: Some(Backends::VULKAN), ..default() }.into(),
                ..default()
            })
            .disable::<WinitPlugin>()
            .disable::<LogPlugin>()
            // The render world runs right after the main world each update: deterministic ticks.
            .disable::<PipelinedRenderingPlugin>(),
    )
    .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f32(common::DT)))
    .insert_resource(Time::<Fixed>::from_seconds(common::DT as f64))
    .insert_resource(TimestepMode::Fixed { dt: common::DT, substeps: 1 })
    .add_plugins(RapierPhysicsPlugin::<NoUserData>::default().in_fixed_schedule())
    // Recycling off in both modes (the pipelined one cannot follow it): the comparison measures
    // what the tick-old results cost, nothing else.
    .add_plugins(RtcdPlugin::new(RtcdSettings {
        contact_recycling: false,
        ..RtcdSettings::with_backend(RtcdBackend::Gpu { mode })
    }));
    app.finish();
    app.cleanup();
    app.update();
    app
}

fn run(mode: GpuMode) -> (String, f32, f32, (u64, u64, u64)) {
    let mut app = render_app(mode);
    common::ground(&mut app);
    let meshes = ["blob_900", "torus_900", "bent_tube_896"];
    let bodies: Vec<Entity> = (0..8)
        .map(|k| {
            let t =
                Transform::from_xyz((k % 4) as f32 * 0.9 - 1.35, 0.7 + (k / 4) as f32 * 0.9, 0.1 * k as f32)
                    .with_rotation(Quat::from_euler(EulerRot::XYZ, k as f32 * 0.7, k as f32 * 1.1, 0.3));
            app.world_mut()
                .spawn((
                    RigidBody::Dynamic,
                    RtcdCollider::from_obj(common::asset(meshes[k % 3])),
                    t,
                    Velocity::default(),
                    ReadMassProperties::default(),
                ))
                .id()
        })
        .collect();
    let mut worst = 0.0f32;
    let mut served = (0u64, 0u64, 0u64);
    for _ in 0..300 {
        common::ticks(&mut app, 1);
        let c = app.world().resource::<RtcdNarrowPhase>().metrics().cache;
        served = (served.0 + c.hits, served.1 + c.refreshed, served.2 + c.misses);
        for &b in &bodies {
            worst = worst.max(-common::lowest_y(&mut app, b));
        }
    }
    let ke = common::kinetic_energy(&mut app);
    (common::active(&app), worst, ke, served)
}

#[test]
fn pipelined_mode_runs_and_matches_immediate() {
    let (p_name, p_pen, p_ke, p_served) = run(GpuMode::Pipelined);
    let (i_name, i_pen, i_ke, i_served) = run(GpuMode::Immediate);
    println!(
        "pipelined ({p_name}): deepest floor penetration {p_pen:.4} m, final kinetic energy {p_ke:.2e} J, \
         pair lookups served from GPU results / refreshed / computed on the CPU: {p_served:?}"
    );
    println!(
        "immediate ({i_name}): deepest floor penetration {i_pen:.4} m, final kinetic energy {i_ke:.2e} J, \
         served / refreshed / computed: {i_served:?}"
    );
    // Most pair lookups must come from the GPU's results, not from the CPU.
    assert!(p_served.0 + p_served.1 > 4 * p_served.2, "{p_served:?}");
    assert!(p_name.starts_with("gpu pipelined"), "{p_name}");
    assert!(i_name.starts_with("gpu immediate"), "{i_name}");
    assert!(p_pen <= 1.5 * i_pen, "pipelined {p_pen} vs immediate {i_pen}");
    assert!(p_ke < 0.05 && i_ke < 0.05);
}
