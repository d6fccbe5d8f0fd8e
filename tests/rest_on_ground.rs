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
            let body = common::drop_tilted(&mut app, mesh, 1.2);
            app.world_mut().entity_mut(body).insert(ReadMassProperties::default());
            common::ticks(&mut app, 1);
            let size = common::size(&app, body);
            let mut worst = 0.0f32;
            for _ in 0..600 {
                common::ticks(&mut app, 1);
                common::assert_backend_ran(&app, backend);
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

/// The ground as level geometry: a bevy_rapier heightfield and a trimesh floor (both flat, top at
/// y = 0, on no body), on both backends. The mesh rests as on the cuboid, and its pair with the
/// ground is ray traced (the narrow phase traces pairs, and the ground is the only other collider).
#[test]
fn concave_mesh_rests_on_a_heightfield_and_a_trimesh_floor() {
    type MakeGround = fn() -> Collider;
    let grounds: [(&str, MakeGround); 2] = [
        ("heightfield", || Collider::heightfield(vec![0.0; 21 * 21], 21, 21, Vec3::new(40.0, 1.0, 40.0))),
        ("trimesh", || {
            let n = 20u32;
            let vertices: Vec<Vec3> = (0..=n)
                .flat_map(|j| {
                    (0..=n).map(move |i| Vec3::new(2.0 * i as f32 - 20.0, 0.0, 2.0 * j as f32 - 20.0))
                })
                .collect();
            let at = |i: u32, j: u32| j * (n + 1) + i;
            let indices = (0..n)
                .flat_map(|j| {
                    (0..n).flat_map(move |i| {
                        [
                            [at(i, j), at(i, j + 1), at(i + 1, j)],
                            [at(i + 1, j), at(i, j + 1), at(i + 1, j + 1)],
                        ]
                    })
                })
                .collect();
            Collider::trimesh(vertices, indices).unwrap()
        }),
    ];
    for (name, backend) in common::backends() {
        for (ground, collider) in grounds {
            let mut app = common::app(Some(backend));
            app.world_mut().spawn((collider(), Transform::IDENTITY));
            let body = common::drop_tilted(&mut app, "torus_900", 1.2);
            common::ticks(&mut app, 1);
            let size = common::size(&app, body);
            let (mut worst, mut traced) = (0.0f32, 0usize);
            for _ in 0..400 {
                common::ticks(&mut app, 1);
                common::assert_backend_ran(&app, backend);
                let low = common::lowest_y(&mut app, body);
                assert!(low > -0.5 * size, "{name} {ground}: fell through (lowest point {low})");
                worst = worst.max(-low);
                traced += app.world().resource::<RtcdDiagnostics>().pairs;
            }
            let rest = -common::lowest_y(&mut app, body);
            let v = app.world().get::<Velocity>(body).unwrap().linear.length();
            println!(
                "{name} ({}) on a {ground}: worst penetration {:.3} % of its size, at rest {:.4} %, speed {v:.2e} m/s, \
                 {traced} pairs traced",
                common::active(&app),
                100.0 * worst / size,
                100.0 * rest / size
            );
            assert!(traced > 0, "{name} {ground}: the pair with the ground was not ray traced");
            assert!(worst < 0.02 * size, "{name} {ground}: penetration {worst} of size {size}");
            assert!(v < 0.05, "{name} {ground}: still moving at {v} m/s");
        }
    }
}
