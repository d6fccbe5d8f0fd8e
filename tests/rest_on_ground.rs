//! A concave mesh dropped on the ground comes to rest with its penetration under 2 % of its size and
//! never falls through, in 600 ticks, on the CPU and on the GPU (immediate mode, lavapipe in CI).

mod common;

use bevy::prelude::*;
use bevy_rapier3d::prelude::*;
use bevy_rtcd::prelude::*;

#[test]
fn concave_mesh_rests_on_the_ground() {
    for (name, backend) in common::backends() {
        for mesh in ["blob_900", "torus_900"] {
            let mut app = common::app(Some(backend));
            common::ground(&mut app);
            let body = app
                .world_mut()
                .spawn((
                    RigidBody::Dynamic,
                    RtcdCollider::from_obj(common::asset(mesh)),
                    Transform::from_xyz(0.0, 1.2, 0.0).with_rotation(Quat::from_euler(
                        EulerRot::XYZ,
                        0.4,
                        0.2,
                        0.9,
                    )),
                    Velocity::default(),
                    ReadMassProperties::default(),
                ))
                .id();
            common::ticks(&mut app, 1);
            let size = match app.world().get::<RtcdColliderState>(body) {
                Some(RtcdColliderState::Ready { mesh }) => mesh.aabb().extents().max_element(),
                other => panic!("{other:?}"),
            };
            let mut worst = 0.0f32;
            for _ in 0..600 {
                common::ticks(&mut app, 1);
                let low = common::lowest_y(&mut app, body);
                assert!(low > -0.5 * size, "{name} {mesh}: fell through (lowest point {low})");
                worst = worst.max(-low);
            }
            let rest = -common::lowest_y(&mut app, body);
            let v = app.world().get::<Velocity>(body).unwrap().linear.length();
            println!(
                "{name} ({}) {mesh}: worst penetration {:.3} % of its size, at rest {:.4} %, speed {v:.2e} m/s",
                common::active(&app),
                100.0 * worst / size,
                100.0 * rest / size
            );
            assert!(worst < 0.02 * size, "{name} {mesh}: penetration {worst} of size {size}");
            assert!(v < 0.05, "{name} {mesh}: still moving at {v} m/s");
        }
    }
}
