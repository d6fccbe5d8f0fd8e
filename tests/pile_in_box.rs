//! 50 concave meshes dropped into a box all come to rest (total kinetic energy under 0.05 J, i.e.
//! under 1 mJ a body on average) with none below the ground, on the CPU and on the GPU (immediate
//! mode, lavapipe in CI), in 600 ticks: with the plugin's default settings (following Rapier's
//! contact recycling) and with recycling off.

mod common;

use bevy::prelude::*;
use bevy_rapier3d::prelude::*;
use bevy_rtcd::prelude::*;

const KE_BOUND: f32 = 0.05;

/// The default settings: the batch holds the pairs Rapier recycles, none of them reaches the
/// dispatcher uncomputed, and the pile comes to rest.
#[test]
fn fifty_meshes_in_a_box_come_to_rest() {
    for (name, backend) in common::backends() {
        let settings = RtcdSettings::with_backend(backend);
        assert!(settings.contact_recycling, "recycling is followed by default");
        let (held, misses) = pile(name, settings);
        assert!(held > 600, "{name}: only {held} pairs held in 600 ticks");
        assert_eq!(misses, 0, "{name}");
    }
}

/// Recycling off ([`RtcdSettings::contact_recycling`]): every pair is traced every tick, and the
/// pile comes to rest as well.
#[test]
fn fifty_meshes_in_a_box_come_to_rest_with_contact_recycling_off() {
    let (held, misses) = pile(
        "cpu, recycling off",
        RtcdSettings { contact_recycling: false, ..RtcdSettings::with_backend(RtcdBackend::Cpu) },
    );
    assert_eq!(held, 0, "nothing is held with recycling off");
    assert_eq!(misses, 0);
}

/// Drops the box of fifty, runs 600 ticks, checks that no body sank below the ground and that the
/// pile is at rest; returns the pairs held and the cache misses over the run.
fn pile(name: &str, settings: RtcdSettings) -> (usize, u64) {
    let backend = settings.backend;
    let mut app = common::app_with(None, |app| {
        app.add_plugins(RtcdPlugin::new(settings));
    });
    let bodies = box_of_fifty(&mut app);
    let (mut held, mut misses) = (0, 0);
    // The deepest any body went under the floor's top, over the run and at the end, in metres and
    // relative to the body's size.
    let (mut max_pen, mut max_rel, mut end_rel) = (0.0f32, 0.0f32, 0.0f32);
    let mut sizes = Vec::new();
    for tick in 0..600 {
        common::ticks(&mut app, 1);
        common::assert_backend_ran(&app, backend);
        if sizes.is_empty() {
            // The colliders are built in the first tick.
            sizes = bodies.iter().map(|&b| common::size(&app, b)).collect();
        }
        let d = app.world().resource::<RtcdDiagnostics>();
        held += d.held_pairs;
        misses += d.cache_misses;
        for (&b, &size) in bodies.iter().zip(&sizes) {
            let pen = (-common::lowest_y(&mut app, b)).max(0.0);
            max_pen = max_pen.max(pen);
            max_rel = max_rel.max(pen / size);
            if tick == 599 {
                end_rel = end_rel.max(pen / size);
            }
        }
    }
    let below = bodies
        .iter()
        .filter(|&&b| app.world().get::<GlobalTransform>(b).unwrap().translation().y < 0.0)
        .count();
    let ke = common::kinetic_energy(&mut app);
    let d = app.world().resource::<RtcdDiagnostics>().clone();
    println!(
        "{name} ({}): kinetic energy after 600 ticks {ke:.2e} J (bound {KE_BOUND}), {below} bodies below the ground, \
         deepest floor penetration {max_pen:.4} m ({:.2} % of a body's size; {:.3} % at the end), {held} pairs held in all, {misses} cache misses; last tick: {} pairs, \
         {} held, {} contacts, {:.2} ms narrow phase",
        common::active(&app),
        100.0 * max_rel,
        100.0 * end_rel,
        d.pairs,
        d.held_pairs,
        d.contacts,
        d.narrow_phase_time.as_secs_f64() * 1e3
    );
    assert_eq!(below, 0, "{name}");
    // Landings sink in for a tick or two (the README's limits); at rest the pile lies within
    // Rapier's slop.
    assert!(max_rel < 0.10, "{name}: a body sank {:.1} % of its size under the floor", 100.0 * max_rel);
    assert!(end_rel < 0.01, "{name}: a body rests {:.2} % of its size under the floor", 100.0 * end_rel);
    assert!(ke < KE_BOUND, "{name}: kinetic energy {ke}");
    (held, misses)
}

/// The ground, a 3 m × 3 m box of walls and 50 concave meshes above it, in layers.
fn box_of_fifty(app: &mut App) -> Vec<Entity> {
    common::ground(app);
    for (x, z, hx, hz) in
        [(1.6, 0.0, 0.1, 1.7), (-1.6, 0.0, 0.1, 1.7), (0.0, 1.6, 1.7, 0.1), (0.0, -1.6, 1.7, 0.1)]
    {
        app.world_mut().spawn((Collider::cuboid(hx, 1.0, hz), Transform::from_xyz(x, 1.0, z)));
    }
    let meshes = ["blob_900", "torus_900", "bent_tube_896"];
    (0..50)
        .map(|k| {
            let (x, z, y) = ((k % 4) as f32, ((k / 4) % 4) as f32, (k / 16) as f32);
            let t = Transform::from_xyz((x - 1.5) * 0.75, 0.6 + y * 0.8, (z - 1.5) * 0.75).with_rotation(
                Quat::from_euler(EulerRot::XYZ, k as f32 * 0.7, k as f32 * 1.3, k as f32 * 0.4),
            );
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
        .collect()
}
