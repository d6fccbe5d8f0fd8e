//! The avalanche of Lehericey, Gouranton and Arnaldi 2013 (IRTCD) §4.1, scene 1: 512 concave meshes
//! of ~900 triangles (`torus_900`, `blob_900`, `bent_tube_896` in turn) start on a grid with seeded
//! random orientations and fall onto a ground walled in on four sides. Every mesh–mesh and
//! mesh–ground contact comes from [`RtcdPlugin`]'s ray-traced narrow phase; Rapier solves them at a
//! fixed 60 Hz tick. The scene itself (meshes, poses, ground and walls) is `rtcd_scenes`'s, the same
//! the benchmarks run.
//!
//! ```sh
//! cargo run --release --example falling_objects                  # window; F1 toggles the ray overlay
//! cargo run --release --example falling_objects -- --headless     # 600 ticks, prints figures
//! cargo run --release --example falling_objects -- --help
//! ```
//!
//! This file is the example: the scene, the plugins, the camera, the overlay and the diagnostics
//! panel. The command line and the figures printed (narrow-phase time, contacts, penetration into
//! the ground, bodies lost, kinetic energy) are in `common/measure.rs`.

mod common;

use std::process::ExitCode;

use bevy::{prelude::*, window::WindowResolution};
use bevy_rapier3d::prelude::*;
use bevy_rtcd::prelude::*;
use common::{
    DiagnosticsPanelPlugin,
    measure::{self, Args, MeasurePlugin, TICK},
};
use rtcd_scenes::Avalanche;

fn main() -> ExitCode {
    let args = match Args::from_env() {
        Ok(args) => args,
        Err(code) => return code,
    };
    let scene = match Avalanche::new(&rtcd_scenes::assets_dir(), args.count, args.seed) {
        Ok(scene) => scene,
        Err(e) => {
            eprintln!("cannot load the meshes: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!(
        "falling_objects: {} bodies ({}), seed {}, backend {:?}, contact recycling {}",
        scene.bodies.len(),
        rtcd_scenes::AVALANCHE_MESHES.join(", "),
        args.seed,
        args.backend,
        match (args.contact_recycling, args.pipelined(), args.backend) {
            (true, false, RtcdBackend::Auto) => {
                "followed, unless the backend is the pipelined GPU mode (its results are a tick old)"
            }
            (true, false, _) => "followed",
            (true, true, _) => "off (the pipelined mode's results are a tick old: it cannot follow it)",
            (false, _, _) => "off",
        },
    );

    let mut app = App::new();
    if args.headless {
        measure::add_headless_plugins(&mut app, &args);
    } else {
        let (width, height) = args.window;
        app.add_plugins(DefaultPlugins.set(WindowPlugin {
            primary_window: Some(Window {
                title: format!("bevy_rtcd: falling objects ({} concave meshes)", args.count),
                resolution: WindowResolution::new(width, height),
                ..default()
            }),
            ..default()
        }))
        // The ray overlay: every traced ray, coloured by kind, and the contacts; F1 toggles it.
        .add_plugins(RtcdDebugPlugin {
            settings: RtcdDebugSettings { enabled: !args.no_overlay, ..default() },
        })
        // The narrow phase's figures of the last tick, top left, sized to the window.
        .add_plugins(DiagnosticsPanelPlugin { font_size: (height as f32 / 32.0).clamp(10.0, 14.0) })
        .add_systems(Startup, camera_and_lights);
    }

    // Rapier at a fixed 60 Hz tick (as in the paper), its narrow phase replaced by ours for the
    // meshes. `RtcdSettings` picks the backend (CPU, GPU or whichever is available).
    app.insert_resource(Time::<Fixed>::from_duration(TICK))
        .insert_resource(TimestepMode::Fixed { dt: TICK.as_secs_f32(), substeps: 1 })
        .add_plugins(RapierPhysicsPlugin::<NoUserData>::default().in_fixed_schedule())
        .add_plugins(RtcdPlugin::new(RtcdSettings {
            contact_recycling: args.contact_recycling,
            ..RtcdSettings::with_backend(args.backend)
        }))
        .add_plugins(MeasurePlugin { ground: scene.ground, floor: Some(Vec2::splat(scene.floor_half_width)) })
        .insert_resource(Scene(scene))
        .add_systems(Startup, spawn_scene);
    measure::run(app, &args)
}

/// The avalanche to spawn (a resource).
#[derive(Resource)]
struct Scene(Avalanche);

/// The ground, the walls and the bodies. A body is a dynamic rigid body with an [`RtcdCollider`]
/// made from its OBJ file: the plugin loads it and ray-traces it. The render meshes and materials
/// are optional so that the same system runs headless.
fn spawn_scene(
    mut commands: Commands,
    scene: Res<Scene>,
    mut meshes: Option<ResMut<Assets<Mesh>>>,
    mut materials: Option<ResMut<Assets<StandardMaterial>>>,
) {
    let scene = &scene.0;
    let mut render = meshes.as_deref_mut().zip(materials.as_deref_mut());
    common::spawn_static_boxes(
        &mut commands,
        scene.ground,
        &scene.walls,
        render.as_mut().map(|(m, s)| (&mut **m, &mut **s)),
    );
    // One render mesh and one colour per mesh kind, shared by its bodies.
    let colours = [Color::srgb(0.85, 0.45, 0.2), Color::srgb(0.3, 0.6, 0.85), Color::srgb(0.55, 0.8, 0.35)];
    let looks: Option<Vec<_>> = render.map(|(m, s)| {
        let looks = scene.meshes.iter().zip(colours);
        let material = |c| StandardMaterial { base_color: c, perceptual_roughness: 0.6, ..default() };
        looks.map(|(mesh, c)| (m.add(common::render_mesh(mesh)), s.add(material(c)))).collect()
    });
    for (k, body) in scene.bodies.iter().enumerate() {
        let name = scene.mesh_name(body.mesh);
        let mut e = commands.spawn((
            Name::new(format!("{name} #{k}")),
            RigidBody::Dynamic,
            RtcdCollider::from_obj(common::mesh_path(name)),
            Transform::from_translation(body.translation).with_rotation(body.rotation),
        ));
        if let Some(looks) = &looks {
            let (mesh, material) = &looks[body.mesh];
            e.insert((Mesh3d(mesh.clone()), MeshMaterial3d(material.clone())));
        }
    }
}

/// A camera high above one corner of the walls, framing the whole floor (the overlay draws its rays
/// wide and in front of the bodies, so they show at this distance), and a sun.
fn camera_and_lights(mut commands: Commands, scene: Res<Scene>) {
    let f = scene.0.floor_half_width;
    common::spawn_camera(&mut commands, Vec3::new(0.8 * f, 1.7 * f, 1.65 * f), Vec3::new(0.0, -0.1 * f, 0.0));
    common::spawn_lights(&mut commands, 2.0 * f.max(scene.0.top()));
}
