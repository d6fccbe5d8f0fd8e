//! IRTCD 2013 Eq. 2's displacement bound (`rtcd::detect::max_displacement`): never below how far a
//! point of either mesh really moved relative to the other, never above the paper's form (the larger
//! radius times the angle), and for a small body rocking on a large one, the small body's radius.

mod common;

use glam::{Quat, Vec3};
use rand::Rng;
use rtcd::{Pose, RtcdMesh, detect::max_displacement, shapes};

fn mesh(half: Vec3) -> RtcdMesh {
    let (v, i) = shapes::subdivided_cuboid(half, 2);
    RtcdMesh::new("box", &v, &i).unwrap()
}

/// The largest distance any vertex of `moving` travels, seen from the other mesh's frame, when the
/// relative pose (moving in fixed's frame) goes from `a` to `b`.
fn true_displacement(moving: &RtcdMesh, a: &Pose, b: &Pose) -> f32 {
    moving
        .positions()
        .iter()
        .map(|p| (a.transform_point(*p) - b.transform_point(*p)).length())
        .fold(0.0, f32::max)
}

#[test]
fn bounds_the_relative_motion_of_both_meshes_and_never_exceeds_the_papers_form() {
    let (small, large) = (mesh(Vec3::new(0.3, 0.2, 0.4)), mesh(Vec3::new(20.0, 0.5, 20.0)));
    let (r1, r2) = (large.max_radius(), small.max_radius());
    let mut rng = common::rng(0x2545);
    let mut rnd = || rng.random::<f32>();
    let mut tighter = 0;
    for _ in 0..500 {
        let axis =
            |r: &mut dyn FnMut() -> f32| Vec3::new(r() - 0.5, r() - 0.5, r() - 0.5).normalize_or(Vec3::Y);
        let a = Pose::new(
            Vec3::new(30.0 * (rnd() - 0.5), 2.0 * rnd(), 30.0 * (rnd() - 0.5)),
            Quat::from_axis_angle(axis(&mut rnd), 6.3 * rnd()),
        );
        // A small step: up to 0.2 m and 0.2 rad.
        let b = Pose::new(
            a.translation + 0.2 * rnd() * axis(&mut rnd),
            Quat::from_axis_angle(axis(&mut rnd), 0.2 * rnd()) * a.rotation,
        );
        let bound = max_displacement(&a, &b, r1, r2);
        // Mesh 2 (small) seen from mesh 1 (large), and mesh 1 seen from mesh 2.
        let moved2 = true_displacement(&small, &a, &b);
        let moved1 = true_displacement(&large, &a.inverse(), &b.inverse());
        assert!(bound + 1e-4 >= moved2.min(moved1), "bound {bound} below the motion {moved2} / {moved1}");
        let paper = (a.translation - b.translation).length() + a.rotation_angle_to(&b) * r1.max(r2);
        assert!(bound <= paper + 1e-5, "bound {bound} above the paper's {paper}");
        tighter += (bound < 0.5 * paper) as u32;
    }
    assert!(tighter > 250, "the bound is rarely tighter than the paper's ({tighter} of 500)");
}

#[test]
fn a_small_body_rocking_on_a_large_one_moves_by_its_own_radius_times_the_angle() {
    let (ground, body) = (mesh(Vec3::new(20.0, 0.5, 20.0)), mesh(Vec3::new(0.3, 0.3, 0.3)));
    let at = Pose::from_translation(Vec3::new(12.0, 0.8, -7.0));
    let rocked = Pose::new(at.translation, Quat::from_rotation_z(1e-3));
    let expected = 1e-3 * body.max_radius();
    // Either order of the pair.
    let d12 = max_displacement(&at, &rocked, ground.max_radius(), body.max_radius());
    let d21 = max_displacement(&at.inverse(), &rocked.inverse(), body.max_radius(), ground.max_radius());
    for d in [d12, d21] {
        assert!((d - expected).abs() < 1e-5, "displacement {d}, expected {expected}");
    }
    assert!(1e-3 * ground.max_radius() > 50.0 * expected, "the paper's form would be far larger");
}
