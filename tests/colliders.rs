//! Building colliders from user input: Bevy mesh assets, OBJ files, `RtcdMesh`es, scaled entities, and
//! bad input, which every source handles alike: rejected but well-formed geometry falls back to
//! Rapier's trimesh collider, unusable input gives no collider, an open mesh is accepted with a
//! warning and weighs as its convex hull; none of it panics.

mod common;

use std::{
    f32::consts::{FRAC_PI_2, FRAC_PI_6},
    path::PathBuf,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
};

use bevy::{
    asset::{AssetLoader, LoadContext, RenderAssetUsages, io::Reader},
    mesh::Indices,
    prelude::*,
    reflect::TypePath,
    render::render_resource::PrimitiveTopology,
};
use bevy_rapier3d::prelude::*;
use bevy_rtcd::{
    prelude::*,
    rtcd::{RtcdMesh, shapes},
};

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

/// A collider on a child of a scaled body spawned in the same frame (no transform propagated yet)
/// takes the scales of the hierarchy: its parent's, its grandparent's, and its own.
#[test]
fn a_child_of_a_scaled_parent_spawned_with_it_is_scaled() {
    let mut app = common::app(Some(RtcdBackend::Cpu));
    let root = app.world_mut().spawn(Transform::from_scale(Vec3::new(1.0, 2.0, 1.0))).id();
    let parent = app
        .world_mut()
        .spawn((
            RigidBody::Dynamic,
            Transform::from_xyz(0.0, 3.0, 0.0).with_scale(Vec3::splat(2.0)),
            ChildOf(root),
        ))
        .id();
    let child = app
        .world_mut()
        .spawn((
            RtcdCollider::from_obj(common::asset("torus_900")),
            Transform::from_scale(Vec3::new(1.0, 1.5, 1.0)),
            ChildOf(parent),
        ))
        .id();
    common::ticks(&mut app, 1);
    let RtcdColliderState::Ready { mesh } = state(&app, child) else { panic!() };
    // The file's own height, scaled 1.5 × 2 × 2.
    let obj = bevy_rtcd::rtcd::mesh::read_obj(common::asset("torus_900")).unwrap();
    let ys = obj.positions.iter().map(|p| p.y);
    let own = ys.clone().fold(f32::NEG_INFINITY, f32::max) - ys.fold(f32::INFINITY, f32::min);
    let height = mesh.aabb().extents().y;
    assert!((height - own * 6.0).abs() < 1e-4 * height, "height {height}, the file's {own} scaled by 6");
}

/// An exact box (`RtcdMesh::cuboid`) on a scaled entity is the exact box of the scaled extents, and
/// a mirrored open mesh keeps its triangles facing out.
#[test]
fn scaled_boxes_stay_boxes_and_mirrored_meshes_face_out() {
    let mut app = common::app(Some(RtcdBackend::Cpu));
    let b = Arc::new(RtcdMesh::cuboid("box", Vec3::new(0.5, 0.1, 0.2)).unwrap());
    let e = app
        .world_mut()
        .spawn((
            RtcdCollider::from_rtcd_mesh(b),
            Transform::from_xyz(0.0, 1.0, 0.0).with_scale(Vec3::new(2.0, -3.0, 1.0)),
        ))
        .id();
    let (v, i) = open_pyramid();
    let open = Arc::new(RtcdMesh::new("open pyramid", &v, &i).unwrap());
    let mirrored = app
        .world_mut()
        .spawn((
            RtcdCollider::from_rtcd_mesh(open.clone()),
            Transform::from_xyz(3.0, 1.0, 0.0).with_scale(Vec3::new(-1.0, 1.0, 1.0)),
        ))
        .id();
    common::ticks(&mut app, 2);
    let RtcdColliderState::Ready { mesh } = state(&app, e) else { panic!("{:?}", state(&app, e)) };
    assert_eq!(mesh.cuboid_half_extents(), Some(Vec3::new(1.0, 0.3, 0.2)));
    let RtcdColliderState::Ready { mesh } = state(&app, mirrored) else { panic!() };
    // Each triangle's normal is the original's mirrored: the same side faces out.
    assert_eq!(mesh.triangle_normals().len(), open.triangle_normals().len());
    for n in open.triangle_normals() {
        let m = *n * Vec3::new(-1.0, 1.0, 1.0);
        assert!(
            mesh.triangle_normals().iter().any(|k| (*k - m).length() < 1e-5),
            "{m} not among {:?}",
            mesh.triangle_normals()
        );
    }
}

/// A collider follows its input: replacing the `RtcdCollider` builds it again from the new mesh, a
/// change to its mesh asset's geometry too (not one of its colours), and removing it removes the
/// Rapier collider and the state.
#[test]
fn colliders_follow_a_replaced_component_or_a_modified_asset() {
    let mut app = app_with_assets();
    let (v, i) = shapes::cuboid(Vec3::splat(0.5));
    let cube = Arc::new(RtcdMesh::new("cube", &v, &i).unwrap());
    let (v, i) = shapes::torus(0.35, 0.15, 24, 12);
    let torus = Arc::new(RtcdMesh::new("torus", &v, &i).unwrap());
    let e = spawn(&mut app, RtcdCollider::from_rtcd_mesh(cube.clone()), None, Vec3::ZERO);
    common::ticks(&mut app, 2);
    let RtcdColliderState::Ready { mesh } = state(&app, e) else { panic!() };
    assert_eq!(mesh.positions().len(), 8);
    app.world_mut().entity_mut(e).insert(RtcdCollider::from_rtcd_mesh(torus.clone()));
    common::ticks(&mut app, 2);
    let RtcdColliderState::Ready { mesh } = state(&app, e) else { panic!() };
    assert_eq!(mesh.positions().len(), torus.positions().len(), "built again from the new mesh");
    // Removed and inserted again between two frames: built again from the new one.
    app.world_mut().entity_mut(e).remove::<RtcdCollider>().insert(RtcdCollider::from_rtcd_mesh(cube.clone()));
    common::ticks(&mut app, 2);
    let RtcdColliderState::Ready { mesh } = state(&app, e) else { panic!() };
    assert_eq!(mesh.positions().len(), 8, "built again after removal and insertion in one frame");
    app.world_mut().entity_mut(e).remove::<RtcdCollider>();
    common::ticks(&mut app, 2);
    assert!(app.world().get::<RtcdColliderState>(e).is_none());
    assert!(app.world().get::<Collider>(e).is_none(), "the plugin's Rapier collider goes with it");

    // A mesh asset changed in place.
    let handle = add_mesh(&mut app, mesh_asset(v.clone(), i.clone()));
    let a = spawn(&mut app, RtcdCollider::from_mesh(handle.clone()), None, Vec3::new(3.0, 0.0, 0.0));
    common::ticks(&mut app, 2);
    let RtcdColliderState::Ready { mesh } = state(&app, a) else { panic!() };
    assert_eq!(mesh.positions().len(), torus.positions().len());
    let (cv, ci) = shapes::cuboid(Vec3::splat(0.5));
    *app.world_mut().resource_mut::<Assets<Mesh>>().get_mut(&handle).unwrap() = mesh_asset(cv, ci);
    // The asset's event is read the frame after the change, the collider built at the next tick.
    common::ticks(&mut app, 4);
    let RtcdColliderState::Ready { mesh } = state(&app, a) else { panic!() };
    assert_eq!(mesh.positions().len(), 8, "built again from the modified asset");
    // A change the renderer's alone (vertex colours): the collider stays as it was built.
    let built = mesh.id();
    app.world_mut()
        .resource_mut::<Assets<Mesh>>()
        .get_mut(&handle)
        .unwrap()
        .insert_attribute(Mesh::ATTRIBUTE_COLOR, vec![[1.0f32, 0.0, 0.0, 1.0]; 8]);
    common::ticks(&mut app, 4);
    let RtcdColliderState::Ready { mesh } = state(&app, a) else { panic!() };
    assert_eq!(mesh.id(), built, "not built again for new colours");
}

/// A dynamic body gets soft CCD with its collider's prediction whether the `RtcdCollider` is on
/// the body's entity or on a child of it; a fixed body gets none. The prediction follows the
/// body's colliders as they come and go; the user's own soft CCD is left alone.
#[test]
fn soft_ccd_reaches_the_body_of_a_child_collider() {
    let mut app = common::app(Some(RtcdBackend::Cpu));
    common::ground(&mut app);
    let own = app
        .world_mut()
        .spawn((
            RigidBody::Dynamic,
            RtcdCollider::from_obj(common::asset("torus_900")),
            Transform::from_xyz(0.0, 2.0, 0.0),
        ))
        .id();
    let parent = app.world_mut().spawn((RigidBody::Dynamic, Transform::from_xyz(3.0, 2.0, 0.0))).id();
    app.world_mut().spawn((
        RtcdCollider::from_obj(common::asset("torus_900")),
        Transform::from_xyz(0.0, 0.3, 0.0),
        ChildOf(parent),
    ));
    let fixed = app
        .world_mut()
        .spawn((
            RigidBody::Fixed,
            RtcdCollider::from_obj(common::asset("blob_900")),
            Transform::from_xyz(-3.0, 1.0, 0.0),
        ))
        .id();
    common::ticks(&mut app, 3);
    let ccd = |app: &App, e: Entity| app.world().get::<SoftCcd>(e).map(|c| c.prediction);
    let a = ccd(&app, own).expect("the body with its own collider");
    let b = ccd(&app, parent).expect("the body of a child collider");
    assert!(a > 0.0 && (a - b).abs() < 1e-6, "{a} vs {b}");
    assert!(ccd(&app, fixed).is_none());

    // A larger collider built on the body later raises its prediction; removed, it lowers it
    // again; the last one removed takes the soft CCD with it.
    let big = app
        .world_mut()
        .spawn((
            RtcdCollider::from_obj(common::asset("torus_900")),
            Transform::from_xyz(0.0, -0.3, 0.0).with_scale(Vec3::splat(3.0)),
            ChildOf(parent),
        ))
        .id();
    common::ticks(&mut app, 3);
    let raised = ccd(&app, parent).unwrap();
    assert!(raised > 2.0 * b, "raised by the larger collider: {b} -> {raised}");
    app.world_mut().entity_mut(big).remove::<RtcdCollider>();
    common::ticks(&mut app, 3);
    assert_eq!(ccd(&app, parent), Some(b), "lowered again");
    app.world_mut().entity_mut(own).remove::<RtcdCollider>();
    common::ticks(&mut app, 3);
    assert_eq!(ccd(&app, own), None, "no collider left: no soft CCD");
    // A soft CCD of the user's own stays as it is.
    let user = app
        .world_mut()
        .spawn((
            RigidBody::Dynamic,
            SoftCcd { prediction: 7.0 },
            RtcdCollider::from_obj(common::asset("torus_900")),
            Transform::from_xyz(6.0, 2.0, 0.0),
        ))
        .id();
    common::ticks(&mut app, 3);
    assert_eq!(ccd(&app, user), Some(7.0));
    // Turned off: the plugin's goes, the user's stays.
    app.world_mut().resource_mut::<RtcdSettings>().soft_ccd = false;
    common::ticks(&mut app, 2);
    assert_eq!((ccd(&app, parent), ccd(&app, user)), (None, Some(7.0)));
    // On again: given back; removed by the user: left without.
    app.world_mut().resource_mut::<RtcdSettings>().soft_ccd = true;
    common::ticks(&mut app, 2);
    assert_eq!(ccd(&app, parent), Some(b));
    app.world_mut().entity_mut(parent).remove::<SoftCcd>();
    common::ticks(&mut app, 3);
    assert_eq!(ccd(&app, parent), None, "the user's removal stands");
}

#[test]
fn bad_input_falls_back_or_fails_without_panicking() {
    let mut app = app_with_assets();
    common::ground(&mut app);
    // A box with two zero-area triangles more: too many degenerate triangles, rejected by rtcd,
    // handled by Rapier's trimesh.
    let (v, i) = degenerate_box();
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
        matches!(w.get::<RtcdColliderState>(a), Some(RtcdColliderState::Fallback { reason }) if reason.contains("degenerate"))
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

// ---- Every source alike: fallback, failure, open meshes ----

/// A closed unit box (half extent 0.5) with two more triangles of zero area: 2 of 14 triangles
/// degenerate, past the 10 % that validation accepts.
fn degenerate_box() -> (Vec<Vec3>, Vec<u32>) {
    let (v, mut i) = shapes::cuboid(Vec3::splat(0.5));
    i.extend([2, 3, 3, 0, 1, 1]);
    (v, i)
}

/// The four sides of a square pyramid (base 2 x 2 at y = -1, apex at y = 2), open at its base: its
/// convex hull, the pyramid, has volume 4; its bounding box 12.
fn open_pyramid() -> (Vec<Vec3>, Vec<u32>) {
    let v = vec![
        Vec3::new(-1.0, -1.0, -1.0),
        Vec3::new(1.0, -1.0, -1.0),
        Vec3::new(1.0, -1.0, 1.0),
        Vec3::new(-1.0, -1.0, 1.0),
        Vec3::new(0.0, 2.0, 0.0),
    ];
    (v, vec![0, 4, 1, 1, 4, 2, 2, 4, 3, 3, 4, 0])
}

const PYRAMID_HULL_VOLUME: f32 = 4.0;

fn obj_text(v: &[Vec3], i: &[u32]) -> String {
    let mut s = String::new();
    for p in v {
        s += &format!("v {} {} {}\n", p.x, p.y, p.z);
    }
    for t in i.chunks_exact(3) {
        s += &format!("f {} {} {}\n", t[0] + 1, t[1] + 1, t[2] + 1);
    }
    s
}

/// Writes `text` to a new file in the system's temporary directory.
fn temp_obj(name: &str, text: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let path =
        std::env::temp_dir().join(format!("bevy_rtcd_colliders_{}_{n}_{name}.obj", std::process::id()));
    std::fs::write(&path, text).unwrap();
    path
}

fn state(app: &App, e: Entity) -> RtcdColliderState {
    app.world().get::<RtcdColliderState>(e).cloned().unwrap_or_else(|| panic!("{e} has no collider state"))
}

fn y(app: &App, e: Entity) -> f32 {
    app.world().get::<Transform>(e).unwrap().translation.y
}

/// Asserts `Fallback` with a reason containing `why`, and Rapier's collider in place.
fn assert_fallback(app: &App, e: Entity, why: &str) {
    match state(app, e) {
        RtcdColliderState::Fallback { reason } => assert!(reason.contains(why), "{reason}"),
        other => panic!("expected Fallback ({why}), got {other:?}"),
    }
    let collider = app.world().get::<Collider>(e).expect("Rapier's trimesh collider stands in");
    assert!(collider.as_trimesh().is_some(), "a plain trimesh collider");
}

/// Asserts `Failed` with a reason containing `why`, and no collider.
fn assert_failed(app: &App, e: Entity, why: &str) {
    match state(app, e) {
        RtcdColliderState::Failed { reason } => {
            assert!(reason.contains(why), "expected {why:?} in: {reason}")
        }
        other => panic!("expected Failed ({why}), got {other:?}"),
    }
    assert!(app.world().get::<Collider>(e).is_none(), "no collider");
}

/// Asserts `Ready` with the open-mesh warning, and a mass of `mass` (Rapier's, at density 1).
fn assert_open_and_weighs(app: &App, e: Entity, mass: f32) {
    let s = state(app, e);
    let RtcdColliderState::Ready { mesh } = &s else { panic!("expected Ready, got {s:?}") };
    assert!(!mesh.is_closed());
    let warning = s.warning().expect("an open mesh's warning");
    assert!(warning.contains("is open") && warning.contains("convex hull"), "{warning}");
    assert!(warning.contains("4 boundary edges"), "the validation notes: {warning}");
    let m = app.world().get::<ReadMassProperties>(e).unwrap().get();
    assert!((m.mass - mass).abs() < 1e-3 * mass, "mass {} (expected {mass}, the hull's)", m.mass);
}

fn add_mesh(app: &mut App, mesh: Mesh) -> Handle<Mesh> {
    app.world_mut().resource_mut::<Assets<Mesh>>().add(mesh)
}

fn spawn(app: &mut App, collider: RtcdCollider, body: Option<RigidBody>, at: Vec3) -> Entity {
    let mut e = app.world_mut().spawn((collider, Transform::from_translation(at)));
    if let Some(b) = body {
        e.insert((b, ReadMassProperties::default()));
    }
    e.id()
}

#[test]
fn closed_mesh_has_no_warning() {
    let mut app = common::app(Some(RtcdBackend::Cpu));
    let (v, i) = shapes::cuboid(Vec3::splat(0.5));
    let mesh = Arc::new(RtcdMesh::new("box", &v, &i).unwrap());
    let e = spawn(&mut app, RtcdCollider::from_rtcd_mesh(mesh.clone()), None, Vec3::ZERO);
    common::ticks(&mut app, 2);
    let s = state(&app, e);
    let RtcdColliderState::Ready { mesh: built } = &s else { panic!("{s:?}") };
    assert!(Arc::ptr_eq(built, &mesh), "an unscaled RtcdMesh is used as given");
    assert_eq!(s.warning(), None);
}

#[test]
fn bevy_mesh_source_falls_back_fails_or_warns() {
    let mut app = app_with_assets();
    common::ground(&mut app);
    let (v, i) = degenerate_box();
    let degenerate = add_mesh(&mut app, mesh_asset(v, i));
    let (mut v, i) = shapes::cuboid(Vec3::splat(0.5));
    v[5].y = f32::NAN;
    let nan = add_mesh(&mut app, mesh_asset(v, i));
    let lines = add_mesh(
        &mut app,
        Mesh::new(PrimitiveTopology::LineList, RenderAssetUsages::default())
            .with_inserted_attribute(Mesh::ATTRIBUTE_POSITION, vec![[0.0f32, 0.0, 0.0], [1.0, 0.0, 0.0]]),
    );
    let (v, i) = open_pyramid();
    let open = add_mesh(&mut app, mesh_asset(v, i));
    let a = spawn(
        &mut app,
        RtcdCollider::from_mesh(degenerate),
        Some(RigidBody::Dynamic),
        Vec3::new(-3.0, 1.0, 0.0),
    );
    let b = spawn(&mut app, RtcdCollider::from_mesh(nan), Some(RigidBody::Dynamic), Vec3::new(0.0, 1.0, 3.0));
    let c =
        spawn(&mut app, RtcdCollider::from_mesh(lines), Some(RigidBody::Dynamic), Vec3::new(0.0, 1.0, -3.0));
    let d =
        spawn(&mut app, RtcdCollider::from_mesh(open), Some(RigidBody::Dynamic), Vec3::new(3.0, 1.5, 0.0));
    common::ticks(&mut app, 120);
    assert_fallback(&app, a, "degenerate");
    assert!((y(&app, a) - 0.5).abs() < 0.05, "the box rests on the ground: y = {}", y(&app, a));
    assert_failed(&app, b, "non-finite");
    assert_failed(&app, c, "not a triangle list");
    assert_open_and_weighs(&app, d, PYRAMID_HULL_VOLUME);
}

#[test]
fn obj_source_falls_back_fails_or_warns() {
    let mut app = common::app(Some(RtcdBackend::Cpu));
    common::ground(&mut app);
    let (v, i) = degenerate_box();
    let degenerate = temp_obj("degenerate", &obj_text(&v, &i));
    let bad_text = temp_obj("bad_text", "v 0 0 0\nv 1 zero 0\nv 0 1 0\nf 1 2 3\n");
    let (mut v, i) = shapes::cuboid(Vec3::splat(0.5));
    v[5].x = f32::NAN;
    let nan = temp_obj("nan", &obj_text(&v, &i));
    let (v, i) = open_pyramid();
    let open = temp_obj("open", &obj_text(&v, &i));
    let missing = std::env::temp_dir().join("bevy_rtcd_colliders_no_such_file.obj");
    let a = spawn(
        &mut app,
        RtcdCollider::from_obj(&degenerate),
        Some(RigidBody::Dynamic),
        Vec3::new(-3.0, 1.0, 0.0),
    );
    let b = spawn(
        &mut app,
        RtcdCollider::from_obj(&bad_text),
        Some(RigidBody::Dynamic),
        Vec3::new(0.0, 1.0, 3.0),
    );
    let c =
        spawn(&mut app, RtcdCollider::from_obj(&nan), Some(RigidBody::Dynamic), Vec3::new(0.0, 1.0, -3.0));
    let d =
        spawn(&mut app, RtcdCollider::from_obj(&open), Some(RigidBody::Dynamic), Vec3::new(3.0, 1.5, 0.0));
    let e = spawn(&mut app, RtcdCollider::from_obj(&missing), None, Vec3::new(6.0, 1.0, 0.0));
    // A second collider of the same bad file shares its state.
    let f = spawn(&mut app, RtcdCollider::from_obj(&bad_text), None, Vec3::new(0.0, 1.0, 6.0));
    common::ticks(&mut app, 120);
    assert_fallback(&app, a, "degenerate");
    assert!((y(&app, a) - 0.5).abs() < 0.05, "the box rests on the ground: y = {}", y(&app, a));
    assert_failed(&app, b, "position parse error");
    assert_failed(&app, f, "position parse error");
    assert_failed(&app, c, "non-finite");
    assert_open_and_weighs(&app, d, PYRAMID_HULL_VOLUME);
    assert_failed(&app, e, "bevy_rtcd_colliders_no_such_file.obj");
    for p in [degenerate, bad_text, nan, open] {
        let _ = std::fs::remove_file(p);
    }
}

#[test]
fn rtcd_mesh_source_falls_back_fails_or_warns() {
    let mut app = common::app(Some(RtcdBackend::Cpu));
    common::ground(&mut app);
    let (v, i) = shapes::cuboid(Vec3::splat(0.5));
    let cube = Arc::new(RtcdMesh::new("cube", &v, &i).unwrap());
    let (v, i) = open_pyramid();
    let open = Arc::new(RtcdMesh::new("open pyramid", &v, &i).unwrap());
    let spawn_scaled = |app: &mut App, mesh: &Arc<RtcdMesh>, scale: Vec3, at: Vec3| {
        app.world_mut()
            .spawn((
                RtcdCollider::from_rtcd_mesh(mesh.clone()),
                Transform::from_translation(at).with_scale(scale),
            ))
            .id()
    };
    // A scale axis of 1e-7 flattens the cube to a 2 x 2 plate (its top and bottom faces weld): too
    // many degenerate triangles for rtcd, Rapier's trimesh stands in and a ball lands on it.
    let plate = spawn_scaled(&mut app, &cube, Vec3::new(2.0, 1e-7, 2.0), Vec3::new(-3.0, 0.5, 0.0));
    let ball = app
        .world_mut()
        .spawn((RigidBody::Dynamic, Collider::ball(0.2), Transform::from_xyz(-3.0, 1.5, 0.0)))
        .id();
    // The same with an exact zero (bevy_rapier cannot place an entity whose scale has a zero axis, so
    // only the collider is checked).
    let flat = spawn_scaled(&mut app, &cube, Vec3::new(2.0, 0.0, 2.0), Vec3::new(-6.0, 0.5, 0.0));
    // Every axis zero: no triangle keeps an area, so Rapier cannot build a trimesh either.
    let point = spawn_scaled(&mut app, &cube, Vec3::ZERO, Vec3::new(0.0, 1.0, 3.0));
    let nan = spawn_scaled(&mut app, &cube, Vec3::new(1.0, f32::NAN, 1.0), Vec3::new(0.0, 1.0, -3.0));
    let d = app
        .world_mut()
        .spawn((
            RigidBody::Dynamic,
            ReadMassProperties::default(),
            RtcdCollider::from_rtcd_mesh(open),
            Transform::from_xyz(3.0, 1.5, 0.0),
        ))
        .id();
    common::ticks(&mut app, 120);
    assert_fallback(&app, plate, "degenerate");
    assert_fallback(&app, flat, "degenerate");
    assert!((y(&app, ball) - 0.7).abs() < 0.05, "the ball rests on the plate: y = {}", y(&app, ball));
    assert_failed(&app, point, "no triangle has a non-zero area");
    assert_failed(&app, nan, "non-finite");
    assert_open_and_weighs(&app, d, PYRAMID_HULL_VOLUME);
}

/// A mesh loader that is never reached: the files it is asked for do not exist.
#[derive(Default, TypePath)]
struct UnreachedLoader;

impl AssetLoader for UnreachedLoader {
    type Asset = Mesh;
    type Settings = ();
    type Error = std::io::Error;

    async fn load(
        &self,
        _reader: &mut dyn Reader,
        _settings: &(),
        _context: &mut LoadContext<'_>,
    ) -> Result<Mesh, std::io::Error> {
        Err(std::io::Error::other("not expected to be reached"))
    }

    fn extensions(&self) -> &[&str] {
        &["rtcdtest"]
    }
}

#[test]
fn mesh_asset_that_fails_to_load_fails_and_one_still_loading_waits() {
    let mut app = common::app_with(Some(RtcdBackend::Cpu), |app| {
        app.add_plugins(AssetPlugin::default()).init_asset::<Mesh>().register_asset_loader(UnreachedLoader);
    });
    let missing: Handle<Mesh> = app.world().resource::<AssetServer>().load("meshes/no_such_mesh.rtcdtest");
    let reserved = app.world().resource::<Assets<Mesh>>().reserve_handle();
    let a = spawn(&mut app, RtcdCollider::from_mesh(missing), Some(RigidBody::Dynamic), Vec3::Y);
    let b = spawn(&mut app, RtcdCollider::from_mesh(reserved.clone()), None, Vec3::new(3.0, 0.0, 0.0));
    for _ in 0..500 {
        common::ticks(&mut app, 1);
        if app.world().get::<RtcdColliderState>(a).is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    assert_failed(&app, a, "failed to load");
    assert_failed(&app, a, "no_such_mesh.rtcdtest");
    // A handle whose asset is not there yet waits without a state, then is built.
    assert!(app.world().get::<RtcdColliderState>(b).is_none());
    let (v, i) = shapes::cuboid(Vec3::splat(0.5));
    app.world_mut()
        .resource_mut::<Assets<Mesh>>()
        .insert(&reserved, mesh_asset(v.clone(), i.clone()))
        .unwrap();
    common::ticks(&mut app, 2);
    assert!(matches!(state(&app, b), RtcdColliderState::Ready { .. }));
    // The asset that failed to load arrives after all (inserted by hand, as a reload would): the
    // collider that failed for want of it is built, and so is a new one.
    let missing = app.world().get::<RtcdCollider>(a).cloned().unwrap();
    let handle = app.world().resource::<AssetServer>().get_id_handle::<Mesh>(
        app.world().resource::<AssetServer>().get_path_id("meshes/no_such_mesh.rtcdtest").unwrap().typed(),
    );
    let handle = handle.expect("the asset server still knows the failed asset");
    app.world_mut().resource_mut::<Assets<Mesh>>().insert(&handle, mesh_asset(v, i)).unwrap();
    let c = spawn(&mut app, missing, None, Vec3::new(6.0, 0.0, 0.0));
    common::ticks(&mut app, 3);
    assert!(matches!(state(&app, a), RtcdColliderState::Ready { .. }), "{:?}", state(&app, a));
    assert!(matches!(state(&app, c), RtcdColliderState::Ready { .. }), "{:?}", state(&app, c));
}

/// An OBJ file that could not be read is read again once it is written: a collider spawned before
/// the file exists fails, one spawned after it is ready (the failure is not kept for the path).
#[test]
fn an_obj_file_written_after_a_failure_is_read() {
    let mut app = common::app(Some(RtcdBackend::Cpu));
    let path = std::env::temp_dir().join(format!("bevy_rtcd_later_{}.obj", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let early = spawn(&mut app, RtcdCollider::from_obj(&path), None, Vec3::ZERO);
    common::ticks(&mut app, 2);
    assert_failed(&app, early, "");
    let (v, i) = shapes::cuboid(Vec3::splat(0.5));
    std::fs::write(&path, obj_text(&v, &i)).unwrap();
    let late = spawn(&mut app, RtcdCollider::from_obj(&path), None, Vec3::X * 3.0);
    common::ticks(&mut app, 2);
    let RtcdColliderState::Ready { mesh } = state(&app, late) else { panic!("{:?}", state(&app, late)) };
    assert_eq!(mesh.positions().len(), 8);
    std::fs::remove_file(&path).unwrap();
}

/// Two unit cubes sharing one edge (four faces on it): from every source the mesh is repaired
/// (the edge split into two manifold sheets), ray traced, closed, without a warning, and weighs its
/// volume, 2.
#[test]
fn non_manifold_mesh_is_repaired_from_every_source() {
    let (mut v, mut i) = shapes::cuboid(Vec3::splat(0.5));
    let (v2, i2) = shapes::cuboid(Vec3::splat(0.5));
    let base = v.len() as u32;
    v.extend(v2.iter().map(|p| *p + Vec3::new(1.0, 1.0, 0.0)));
    i.extend(i2.iter().map(|k| k + base));
    let mut app = app_with_assets();
    let handle = add_mesh(&mut app, mesh_asset(v.clone(), i.clone()));
    let obj = temp_obj("edge_glued_cubes", &obj_text(&v, &i));
    let rtcd = Arc::new(RtcdMesh::new("edge-glued cubes", &v, &i).unwrap());
    let sources =
        [RtcdCollider::from_mesh(handle), RtcdCollider::from_obj(&obj), RtcdCollider::from_rtcd_mesh(rtcd)];
    let entities: Vec<Entity> = sources
        .into_iter()
        .enumerate()
        .map(|(k, c)| spawn(&mut app, c, Some(RigidBody::Dynamic), Vec3::new(4.0 * k as f32, 3.0, 0.0)))
        .collect();
    common::ticks(&mut app, 2);
    for e in entities {
        let s = state(&app, e);
        let RtcdColliderState::Ready { mesh } = &s else { panic!("expected Ready, got {s:?}") };
        assert!(mesh.is_closed(), "{:?}", mesh.report());
        assert_eq!(mesh.report().split_edges, 1, "{:?}", mesh.report());
        assert_eq!(s.warning(), None);
        let mass = app.world().get::<ReadMassProperties>(e).unwrap().get().mass;
        assert!((mass - 2.0).abs() < 1e-3, "mass {mass}");
    }
}

/// A tetrahedron with one corner at the origin, its three edges from there along +x, +y and +z:
/// every mirror and every quarter turn of it is told apart by where its corners are.
fn corner_tetrahedron() -> (Vec<Vec3>, Vec<u32>) {
    let v = vec![Vec3::ZERO, Vec3::X, Vec3::Y, 0.5 * Vec3::Z];
    (v, vec![0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3])
}

/// The collider has the shape the mesh is drawn with: its corners in the world (the Rapier
/// collider's pose applied to the prepared mesh's vertices) are the drawn mesh's (the entity's
/// `GlobalTransform` applied to the mesh's own vertices), whatever mirrors, rotations and
/// non-uniform scales the hierarchy holds: a static collider mirrored on one, two and three axes, a
/// scaled and rotated one, a fixed body's collider mirrored, and children of non-uniformly scaled
/// bodies turned a quarter turn (a stretch along another axis) and 30° (a shear), from a Bevy mesh
/// asset and from an `RtcdMesh`.
#[test]
fn colliders_have_the_shape_they_are_drawn_with() {
    let mut app = app_with_assets();
    let (v, i) = corner_tetrahedron();
    let handle = add_mesh(&mut app, mesh_asset(v.clone(), i.clone()));
    let rtcd_mesh = Arc::new(RtcdMesh::new("corner tetrahedron", &v, &i).unwrap());
    let sources = [RtcdCollider::from_mesh(handle.clone()), RtcdCollider::from_rtcd_mesh(rtcd_mesh.clone())];
    let turned = Quat::from_euler(EulerRot::YXZ, 0.4, -0.7, 0.2);
    let mut cases: Vec<(String, Entity)> = Vec::new();
    for (k, source) in sources.iter().enumerate() {
        let x = 4.0 * k as f32;
        for (n, scale) in [
            Vec3::new(1.0, 1.0, -1.0),
            Vec3::new(1.0, -1.0, -1.0),
            Vec3::new(-1.0, -1.0, -1.0),
            Vec3::new(-2.0, 0.5, 3.0),
        ]
        .into_iter()
        .enumerate()
        {
            let at = Vec3::new(x, 2.0 * n as f32, 0.0);
            let rotation = if n == 3 { turned } else { Quat::IDENTITY };
            let e = app
                .world_mut()
                .spawn((
                    source.clone(),
                    Transform::from_translation(at).with_rotation(rotation).with_scale(scale),
                ))
                .id();
            cases.push((format!("static, scale {scale}"), e));
        }
        let e = app
            .world_mut()
            .spawn((
                source.clone(),
                RigidBody::Fixed,
                Transform::from_xyz(x, 8.0, 0.0).with_rotation(turned).with_scale(Vec3::new(1.0, -1.5, 1.0)),
            ))
            .id();
        cases.push(("a fixed body mirrored on y".into(), e));
        // A fixed body under a turned, mirrored parent that is no body (bevy_rapier writes the body's
        // rotation back relative to the parent's inverse map).
        let holder = app
            .world_mut()
            .spawn(
                Transform::from_xyz(x, 10.0, 0.0)
                    .with_rotation(Quat::from_rotation_z(FRAC_PI_2))
                    .with_scale(Vec3::new(1.0, -1.0, 1.0)),
            )
            .id();
        let e = app
            .world_mut()
            .spawn((source.clone(), RigidBody::Fixed, Transform::from_xyz(0.5, 0.0, 0.0), ChildOf(holder)))
            .id();
        cases.push(("a fixed body under a turned, mirrored parent that is no body".into(), e));
        for (n, (angle, what)) in [(FRAC_PI_2, "a quarter turn"), (FRAC_PI_6, "30°")].into_iter().enumerate()
        {
            let body = app
                .world_mut()
                .spawn((
                    RigidBody::Fixed,
                    Transform::from_xyz(x, 12.0 + 3.0 * n as f32, 0.0).with_scale(Vec3::new(2.0, 1.0, 1.0)),
                ))
                .id();
            let child = app
                .world_mut()
                .spawn((
                    source.clone(),
                    Transform::from_xyz(0.3, 0.0, 0.0).with_rotation(Quat::from_rotation_z(angle)),
                    ChildOf(body),
                ))
                .id();
            cases.push((format!("a child turned {what} under a body scaled (2, 1, 1)"), child));
        }
    }
    common::ticks(&mut app, 3);
    let mut contexts = app.world_mut().query::<&RapierContextColliders>();
    let colliders = contexts.single(app.world()).unwrap();
    for (what, e) in &cases {
        let RtcdColliderState::Ready { mesh } = state(&app, *e) else {
            panic!("{what}: {:?}", state(&app, *e))
        };
        let handle =
            app.world().get::<RapierColliderHandle>(*e).unwrap_or_else(|| panic!("{what}: no handle"));
        let pose = *colliders.colliders.get(handle.0).unwrap().position();
        let mut drawn: Vec<Vec3> =
            v.iter().map(|p| app.world().get::<GlobalTransform>(*e).unwrap().transform_point(*p)).collect();
        let mut built: Vec<Vec3> = mesh.positions().iter().map(|p| pose.transform_point(*p)).collect();
        if what.contains("parent that is no body") {
            // bevy_rapier's writeback places such a body's translation apart from Rapier's (its
            // own inverse of a turned, mirrored map): the shapes are compared about their origins.
            let (d0, b0) = (drawn[0], pose.translation);
            drawn.iter_mut().for_each(|d| *d -= d0);
            built.iter_mut().for_each(|b| *b -= b0);
        }
        assert_eq!(built.len(), drawn.len(), "{what}");
        for d in &drawn {
            let nearest = built.iter().map(|b| (*b - *d).length()).fold(f32::INFINITY, f32::min);
            assert!(
                nearest < 1e-4,
                "{what}: the drawn corner {d} is {nearest} m from the collider's {built:?}"
            );
        }
        // Still a solid facing out.
        assert!(mesh.is_closed() && mesh.volume() > 0.0, "{what}: volume {}", mesh.volume());
    }
}

/// Removing an `RtcdCollider` takes away only what the plugin built: a `Collider` the user inserted
/// in its place in the same frame stays (and follows the entity's scale), and so does one inserted
/// while the mesh was still loading.
#[test]
fn removing_the_component_keeps_a_collider_the_user_put_in_its_place() {
    let mut app = app_with_assets();
    let (v, i) = shapes::cuboid(Vec3::splat(0.5));
    let cube = Arc::new(RtcdMesh::new("cube", &v, &i).unwrap());
    let e = spawn(&mut app, RtcdCollider::from_rtcd_mesh(cube), Some(RigidBody::Dynamic), Vec3::ZERO);
    app.world_mut().entity_mut(e).insert(Transform::from_scale(Vec3::splat(2.0)));
    common::ticks(&mut app, 2);
    assert!(matches!(state(&app, e), RtcdColliderState::Ready { .. }));
    app.world_mut().entity_mut(e).remove::<RtcdCollider>().insert(Collider::ball(0.5));
    common::ticks(&mut app, 2);
    assert!(app.world().get::<RtcdColliderState>(e).is_none(), "the plugin's state goes");
    let c = app.world().get::<Collider>(e).expect("the user's collider stays");
    assert!(c.as_ball().is_some(), "the user's ball, not the plugin's mesh");
    // It follows the entity's scale as any bevy_rapier collider does: the plugin's fixed scale went.
    assert_eq!(app.world().get::<ColliderScale>(e), None);
    let radius = c.as_ball().unwrap().radius();
    assert!((radius - 1.0).abs() < 1e-5, "the ball scaled by the entity's 2: radius {radius}");

    // Never built (its mesh asset not loaded yet), replaced by the user's own collider.
    let pending: Handle<Mesh> = Handle::default();
    let w = spawn(&mut app, RtcdCollider::from_mesh(pending), Some(RigidBody::Dynamic), Vec3::X * 3.0);
    common::ticks(&mut app, 2);
    assert!(app.world().get::<RtcdColliderState>(w).is_none(), "still waiting for its mesh");
    app.world_mut().entity_mut(w).remove::<RtcdCollider>().insert(Collider::cuboid(0.5, 0.5, 0.5));
    common::ticks(&mut app, 2);
    assert!(app.world().get::<Collider>(w).and_then(|c| c.as_cuboid()).is_some(), "the user's cuboid stays");
}

/// An `RtcdCollider` replaced in the frame it was spawned and built in (a spawner in the fixed
/// tick, a system in `Update` that swaps in the real mesh as soon as the first is ready) is built
/// again from the new one, as a replacement in any later frame is.
#[test]
fn a_collider_replaced_in_the_frame_it_was_built_is_built_again() {
    #[derive(Resource)]
    struct Meshes(Arc<RtcdMesh>, Arc<RtcdMesh>, bool);
    fn spawn_cube(mut commands: Commands, mut meshes: ResMut<Meshes>) {
        if !meshes.2 {
            meshes.2 = true;
            commands.spawn((RtcdCollider::from_rtcd_mesh(meshes.0.clone()), Transform::default()));
        }
    }
    fn swap_in_torus(
        mut commands: Commands,
        meshes: Res<Meshes>,
        ready: Query<(Entity, &RtcdColliderState), Added<RtcdColliderState>>,
    ) {
        for (e, s) in &ready {
            if let RtcdColliderState::Ready { mesh } = s
                && mesh.positions().len() == 8
            {
                commands.entity(e).insert(RtcdCollider::from_rtcd_mesh(meshes.1.clone()));
            }
        }
    }
    let (v, i) = shapes::cuboid(Vec3::splat(0.5));
    let cube = Arc::new(RtcdMesh::new("cube", &v, &i).unwrap());
    let (v, i) = shapes::torus(0.35, 0.15, 24, 12);
    let torus = Arc::new(RtcdMesh::new("torus", &v, &i).unwrap());
    let mut app = common::app_with(Some(RtcdBackend::Cpu), |app| {
        app.insert_resource(Meshes(cube, torus.clone(), false))
            .add_systems(FixedUpdate, spawn_cube.before(RtcdSystems::Prepare))
            .add_systems(Update, swap_in_torus);
    });
    common::ticks(&mut app, 4);
    let mut q = app.world_mut().query::<(Entity, &RtcdColliderState)>();
    let states: Vec<(Entity, RtcdColliderState)> = q.iter(app.world()).map(|(e, s)| (e, s.clone())).collect();
    assert_eq!(states.len(), 1);
    let RtcdColliderState::Ready { mesh } = &states[0].1 else { panic!("{:?}", states[0].1) };
    assert_eq!(mesh.positions().len(), torus.positions().len(), "built again from the torus");
}

/// A `ColliderScale` set on the plugin's collider (which bevy_rapier would honour by rebuilding it
/// as a plain triangle mesh, without ray tracing) is set back: the collider stays ray traced at
/// the scale it was built with.
#[test]
fn a_collider_scale_set_later_is_set_back() {
    let mut app = common::app(Some(RtcdBackend::Cpu));
    let (v, i) = shapes::cuboid(Vec3::splat(0.5));
    let cube = Arc::new(RtcdMesh::new("cube", &v, &i).unwrap());
    let e = spawn(&mut app, RtcdCollider::from_rtcd_mesh(cube), Some(RigidBody::Dynamic), Vec3::Y);
    common::ticks(&mut app, 2);
    app.world_mut().entity_mut(e).insert(ColliderScale::Absolute(Vec3::splat(2.0)));
    common::ticks(&mut app, 3);
    assert_eq!(app.world().get::<ColliderScale>(e), Some(&ColliderScale::Absolute(Vec3::ONE)));
    let c = app.world().get::<Collider>(e).unwrap();
    assert!(c.raw.as_shape::<bevy_rtcd::rtcd_rapier::RtcdShape>().is_some(), "still ray traced");
}

// ---- Joints ----

#[test]
fn joined_bodies_follow_the_joints_contact_rule() {
    let mut app = common::app(Some(RtcdBackend::Cpu));
    let blob = || RtcdCollider::from_obj(common::asset("blob_900"));
    // Two blobs overlapping by half their size (a ragdoll's limbs at a joint), high above nothing.
    let a = app.world_mut().spawn((RigidBody::Dynamic, blob(), Transform::from_xyz(0.0, 50.0, 0.0))).id();
    let mut joint = SphericalJointBuilder::new().build();
    joint.set_contacts_enabled(false);
    let b = app
        .world_mut()
        .spawn((RigidBody::Dynamic, blob(), Transform::from_xyz(0.5, 50.0, 0.0), ImpulseJoint::new(a, joint)))
        .id();
    // Traced or held (Rapier's contact recycling is on by default): in the batch either way.
    let pairs = |app: &App| {
        let d = app.world().resource::<RtcdDiagnostics>();
        d.pairs + d.held_pairs
    };
    common::ticks(&mut app, 1);
    for e in [a, b] {
        assert!(matches!(app.world().get::<RtcdColliderState>(e), Some(RtcdColliderState::Ready { .. })));
    }
    for _ in 0..10 {
        common::ticks(&mut app, 1);
        assert_eq!(pairs(&app), 0, "a pair Rapier leaves out for its joint was traced");
    }
    // Contacts enabled on the joint: the pair is traced from the next tick on.
    let mut j = app.world_mut().get_mut::<ImpulseJoint>(b).unwrap();
    j.data.as_mut().set_contacts_enabled(true);
    common::ticks(&mut app, 2);
    assert_eq!(pairs(&app), 1, "the pair of a joint with contacts enabled must be traced");
    assert_eq!(common::active(&app), "cpu");
}
