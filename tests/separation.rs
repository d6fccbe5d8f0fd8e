//! Hermann 2008 Fig. 10: two concave meshes started 30 % interpenetrated (no gravity) separate
//! within 120 ticks and stay apart. The same scene with plain Rapier trimesh colliders runs in the
//! same test and its figures are printed beside ours. Penetration is measured without either narrow
//! phase (`rtcd_scenes::measure`: ray parity and closest points in f64): the pair's deepest vertex
//! inside the other mesh, or deepest point of an edge through it, in % of the meshes' size.

mod common;

use std::sync::Arc;

use bevy::prelude::*;
use bevy_rapier3d::{prelude::*, rapier::geometry::TriMeshFlags};
use bevy_rtcd::{
    prelude::*,
    rtcd::{Pose, RtcdMesh, RtcdParams},
    rtcd_rapier,
};
use rtcd_scenes::measure::{PlacedMesh, measure_pair};

fn depth(a: &RtcdMesh, pa: &Transform, b: &RtcdMesh, pb: &Transform, tol: f64) -> f32 {
    let placed = |m: &RtcdMesh, t: &Transform| {
        PlacedMesh::new(m.positions(), m.triangles(), Pose::new(t.translation, t.rotation))
    };
    measure_pair(&placed(a, pa), &placed(b, pb), tol).depth() as f32
}

/// The tick from which the meshes stay separated (deepest point under 1 % of the size) to the end,
/// or None; the depth at the start and at the end.
fn run(ours: Option<RtcdBackend>, m1: &str, m2: &str) -> (Option<usize>, f32, f32) {
    let mut app = common::app(ours);
    let backend = ours;
    let ours = ours.is_some();
    let mut contexts = app.world_mut().query::<&mut RapierConfiguration>();
    for mut c in contexts.iter_mut(app.world_mut()) {
        c.gravity = Vec3::ZERO;
    }
    let a = Arc::new(RtcdMesh::from_obj(common::asset(m1)).unwrap());
    let b = Arc::new(RtcdMesh::from_obj(common::asset(m2)).unwrap());
    let size = a.aabb().extents().max_element().max(b.aabb().extents().max_element());
    // Centres 70 % of the half-sizes' sum apart: pushed 30 % of the way through.
    let offset = 0.7 * 0.5 * (a.aabb().extents().x + b.aabb().extents().x);
    let ta = Transform::from_xyz(-offset * 0.5, 0.0, 0.0);
    let tb = Transform::from_xyz(offset * 0.5, 0.0, 0.0).with_rotation(Quat::from_rotation_z(0.4));
    let collider = |m: &Arc<RtcdMesh>| {
        if ours {
            None
        } else {
            let tris = m.triangles().to_vec();
            Some(
                Collider::trimesh_with_flags(m.positions().to_vec(), tris, TriMeshFlags::FIX_INTERNAL_EDGES)
                    .unwrap(),
            )
        }
    };
    let mut spawn = |m: &Arc<RtcdMesh>, t: Transform| {
        let mut e = app.world_mut().spawn((RigidBody::Dynamic, t));
        match collider(m) {
            Some(c) => e.insert(c),
            None => e.insert(RtcdCollider::from_rtcd_mesh(m.clone())),
        };
        e.id()
    };
    let (ea, eb) = (spawn(&a, ta), spawn(&b, tb));
    // Crossing edges count from 1 % of the size, as separation does.
    let tol = 0.01 * size as f64;
    let initial = depth(&a, &ta, &b, &tb, tol) / size;
    let mut separated = None;
    let mut last = initial;
    for tick in 1..=120 {
        common::ticks(&mut app, 1);
        if let Some(b) = backend {
            common::assert_backend_ran(&app, b);
        }
        let (pa, pb) =
            (*app.world().get::<Transform>(ea).unwrap(), *app.world().get::<Transform>(eb).unwrap());
        last = depth(&a, &pa, &b, &pb, tol) / size;
        if last >= 0.01 {
            separated = None;
        } else {
            separated.get_or_insert(tick);
        }
    }
    (separated, initial, last)
}

#[test]
fn interpenetrated_meshes_separate() {
    for (m1, m2) in [("blob_900", "torus_900"), ("torus_900", "bent_tube_896"), ("blob_900", "blob_2130")] {
        let (rapier, _, rapier_left) = run(None, m1, m2);
        let show = |s: Option<usize>| s.map_or("never".to_string(), |t| format!("tick {t}"));
        for (name, backend) in common::backends() {
            let (ours, initial, ours_left) = run(Some(backend), m1, m2);
            println!(
                "{m1} vs {m2}: deepest vertex {:.1} % of size at start; rtcd ({name}) separates at {} ({:.2} % left at 120), \
                 plain Rapier trimesh: {} ({:.2} % left at 120)",
                100.0 * initial,
                show(ours),
                100.0 * ours_left,
                show(rapier),
                100.0 * rapier_left
            );
            assert!(initial > 0.05, "{m1} vs {m2}: the start must be deeply interpenetrated");
            assert!(
                ours.is_some() && ours_left < 0.01,
                "{m1} vs {m2} ({name}): not separated by tick 120 ({:.2} % left)",
                100.0 * ours_left
            );
        }
    }
}

/// The plugin's settings for deep overlaps reach the contact cache Rapier's dispatcher reads: the
/// defaults (merged, not bounded, as `rtcd_rapier`'s own), and the other way round when set.
#[test]
fn deep_overlap_settings_reach_the_contact_cache() {
    let own = rtcd_rapier::ContactCache::new(RtcdParams::from_triangle_size(0.1), Default::default())
        .unwrap()
        .settings();
    let plugin = RtcdSettings::default();
    assert_eq!((plugin.merge_deep_overlaps, plugin.depth_bound), (own.merge_deep_overlaps, own.depth_bound));
    for (merge, bound) in [(None, None), (Some(false), Some(rtcd_rapier::DepthBound::Corrective))] {
        let mut settings = RtcdSettings::with_backend(RtcdBackend::Cpu);
        if let (Some(m), Some(b)) = (merge, bound) {
            settings.merge_deep_overlaps = m;
            settings.depth_bound = b;
        }
        let mut app = common::app_with(None, |app| {
            app.add_plugins(RtcdPlugin::new(settings.clone()));
        });
        common::ground(&mut app);
        common::drop_tilted(&mut app, "torus_900", 1.0);
        common::ticks(&mut app, 5);
        let np = app.world().resource::<RtcdNarrowPhase>();
        assert!(np.active_backend().is_some(), "the backend did not start");
        let cache = np.contact_cache().settings();
        assert_eq!(cache.merge_deep_overlaps, merge.unwrap_or(true));
        assert_eq!(cache.depth_bound, bound.unwrap_or(rtcd_rapier::DepthBound::Off));
    }
}

/// Rapier's parameters reach the driver on every path, with contact recycling followed or not:
/// the corrective depth bound is the one of the world's `length_unit` and corrective velocity (it
/// followed Rapier's defaults when recycling was off).
#[test]
fn rapiers_parameters_reach_the_driver_with_or_without_recycling() {
    for recycling in [true, false] {
        let settings = RtcdSettings {
            contact_recycling: recycling,
            depth_bound: rtcd_rapier::DepthBound::Corrective,
            ..RtcdSettings::with_backend(RtcdBackend::Cpu)
        };
        let mut app = common::app_with(None, |app| {
            app.add_plugins(RtcdPlugin::new(settings));
        });
        let mut sims =
            app.world_mut().query_filtered::<&mut RapierContextSimulation, With<DefaultRapierContext>>();
        {
            let mut sim = sims.single_mut(app.world_mut()).unwrap();
            sim.integration_parameters.length_unit = 100.0;
            sim.integration_parameters.normalized_max_corrective_velocity = 2.0;
        }
        common::ground(&mut app);
        common::drop_tilted(&mut app, "torus_900", 1.0);
        common::ticks(&mut app, 3);
        let params = sims.single(app.world()).unwrap().integration_parameters;
        assert_eq!(params.contact_recycling, recycling);
        let expected = rtcd_rapier::corrective_depth(&params);
        let np = app.world().resource::<RtcdNarrowPhase>();
        let bound = np.contact_cache().depth_bound();
        assert!(
            (bound - expected).abs() <= 1e-6 * expected,
            "recycling {recycling}: bound {bound}, the world's parameters give {expected}"
        );
        // Rapier's defaults (length unit 1) would give a hundredth of it, or less.
        assert!(expected > 1.0, "{expected}");
    }
}
