//! Building colliders from user input: Bevy mesh assets, OBJ files, scaled entities, and bad input
//! (non-manifold meshes fall back to Rapier's trimesh collider, unreadable files give no collider),
//! none of which panics.

mod common;

use bevy::{asset::RenderAssetUsages, mesh::Indices, prelude::*, render::render_resource::PrimitiveTopology};
use bevy_rapier3d::prelude::*;
use bevy_rtcd::{prelude::*, rtcd::shapes};

fn mesh_asset(positions: Vec<Vec3>, indices: Vec<u32>) -> Mesh {
    Mesh::new(PrimitiveTopology::TriangleList, RenderAssetUsages::default())
        .with_inserted_attribute(
            Mesh::ATTRIBUTE_POSITION,
            positions.iter().map(|p| p.to_array()).collect::<Vec<_>>(),
        )
        .with_inserted_indices(Indices::U32(indices))
}

fn app_with_assets() -> App {
    common::app_with(Some(RtcdBackend::Cpu), |app| {
        app.add_plugins(AssetPlugin::default()).init_asset::<Mesh>();
    })
}

#[test]
fn from_a_bevy_mesh_asset() {
    let mut app = app_with_assets();
    common::ground(&mut app);
    let (v, i) = shapes::torus(0.35, 0.15, 24, 12);
    let handle = app.world_mut().resource_mut::<Assets<Mesh>>().add(mesh_asset(v, i));
    let e = app
        .world_mut()
        .spawn((RigidBody::Dynamic, RtcdCollider::from_mesh(handle), Transform::from_xyz(0.0, 1.0, 0.0)))
        .id();
    common::ticks(&mut app, 120);
    assert!(matches!(app.world().get::<RtcdColliderState>(e), Some(RtcdColliderState::Ready { .. })));
    assert!(app.world().get::<Collider>(e).is_some());
    let y = app.world().get::<Transform>(e).unwrap().translation.y;
    assert!(y > 0.1 && y < 0.2, "the torus lies on the ground: y = {y}");
}

#[test]
fn scaled_entities_get_a_scaled_collider() {
    let mut app = common::app(Some(RtcdBackend::Cpu));
    common::ground(&mut app);
    let e = app
        .world_mut()
        .spawn((
            RigidBody::Dynamic,
            RtcdCollider::from_obj(common::asset("torus_900")),
            Transform::from_xyz(0.0, 1.0, 0.0).with_scale(Vec3::splat(2.0)),
        ))
        .id();
    common::ticks(&mut app, 180);
    let Some(RtcdColliderState::Ready { mesh }) = app.world().get::<RtcdColliderState>(e) else { panic!() };
    // Minor radius 0.15 scaled by 2: resting with its centre 0.3 above the ground.
    assert!((mesh.aabb().extents().y - 0.6).abs() < 0.01);
    let y = app.world().get::<Transform>(e).unwrap().translation.y;
    assert!((y - 0.3).abs() < 0.02, "y = {y}");
}

#[test]
fn bad_input_falls_back_or_fails_without_panicking() {
    let mut app = app_with_assets();
    common::ground(&mut app);
    // Two cubes sharing an edge: non-manifold, rejected by rtcd, handled by Rapier's trimesh.
    let (mut v, mut i) = shapes::cuboid(Vec3::splat(0.5));
    let (v2, i2) =
        shapes::transformed(shapes::cuboid(Vec3::splat(0.5)), Quat::IDENTITY, Vec3::new(1.0, 1.0, 0.0));
    let base = v.len() as u32;
    v.extend(v2);
    i.extend(i2.iter().map(|k| k + base));
    let bad_mesh = app.world_mut().resource_mut::<Assets<Mesh>>().add(mesh_asset(v, i));
    let points = app
        .world_mut()
        .resource_mut::<Assets<Mesh>>()
        .add(Mesh::new(PrimitiveTopology::PointList, RenderAssetUsages::default()));
    let a = app
        .world_mut()
        .spawn((RigidBody::Fixed, RtcdCollider::from_mesh(bad_mesh), Transform::from_xyz(3.0, 0.5, 0.0)))
        .id();
    let b = app
        .world_mut()
        .spawn((
            RigidBody::Dynamic,
            RtcdCollider::from_obj("/no/such/file.obj"),
            Transform::from_xyz(-3.0, 1.0, 0.0),
        ))
        .id();
    let c = app
        .world_mut()
        .spawn((RigidBody::Dynamic, RtcdCollider::from_mesh(points), Transform::from_xyz(0.0, 1.0, 3.0)))
        .id();
    let d = app
        .world_mut()
        .spawn((
            RigidBody::Dynamic,
            RtcdCollider::from_obj(common::asset("blob_900")),
            Transform::from_xyz(0.0, 1.0, 0.0),
        ))
        .id();
    common::ticks(&mut app, 60);
    let w = app.world();
    assert!(
        matches!(w.get::<RtcdColliderState>(a), Some(RtcdColliderState::Fallback { reason }) if reason.contains("non-manifold"))
    );
    assert!(w.get::<Collider>(a).is_some(), "Rapier's trimesh collider stands in");
    assert!(
        matches!(w.get::<RtcdColliderState>(b), Some(RtcdColliderState::Failed { reason }) if reason.contains("/no/such/file.obj"))
    );
    assert!(w.get::<Collider>(b).is_none());
    assert!(
        matches!(w.get::<RtcdColliderState>(c), Some(RtcdColliderState::Failed { reason }) if reason.contains("topology"))
    );
    assert!(matches!(w.get::<RtcdColliderState>(d), Some(RtcdColliderState::Ready { .. })));
    assert_eq!(common::active(&app), "cpu");
}
