//! Pairs the plugin does not own behave exactly as without it: a ball dropped on a cuboid follows
//! the same trajectory, bit for bit, with and without the plugin (and with a ray-traced mesh in the
//! scene, far away).

mod common;

use bevy::prelude::*;
use bevy_rapier3d::prelude::*;
use bevy_rtcd::prelude::*;

fn trajectory(plugin: Option<RtcdBackend>) -> Vec<Vec3> {
    let mut app = common::app(plugin);
    common::ground(&mut app);
    // A ray-traced mesh resting far from the ball, so the plugin's narrow phase is active.
    app.world_mut().spawn((
        RigidBody::Dynamic,
        RtcdCollider::from_obj(common::asset("blob_900")),
        Transform::from_xyz(8.0, 0.6, 0.0),
    ));
    let ball = app
        .world_mut()
        .spawn((
            RigidBody::Dynamic,
            Collider::ball(0.3),
            Restitution::coefficient(0.5),
            Transform::from_xyz(0.1, 2.0, -0.2),
            Velocity::linear(Vec3::new(0.5, 0.0, 0.2)),
        ))
        .id();
    (0..300)
        .map(|_| {
            common::ticks(&mut app, 1);
            if let Some(b) = plugin {
                common::assert_backend_ran(&app, b);
            }
            app.world().get::<Transform>(ball).unwrap().translation
        })
        .collect()
}

#[test]
fn ball_on_cuboid_same_trajectory_with_and_without_the_plugin() {
    let without = trajectory(None);
    assert!(without.iter().any(|p| p.y < 0.31), "the ball must reach the ground");
    for (name, backend) in common::backends() {
        let with = trajectory(Some(backend));
        assert_eq!(with, without, "{name}");
        println!("ball ({name}): {} ticks identical, final position {}", with.len(), with.last().unwrap());
    }
}
