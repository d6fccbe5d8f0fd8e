//! Hermann et al. 2008, Fig. 10: two concave bodies started deeply interpenetrated (one pushed 30 %
//! of their size past first contact, no gravity) are pushed apart within 120 ticks. With ray-traced
//! contacts every penetrating vertex has a depth and a direction out of the other body, so they
//! separate; plain Rapier's trimesh-trimesh contacts (surface triangle pairs, no interior) are run on
//! the same scene and printed beside ours (no assertion on Rapier's figures).

mod common;

use std::sync::Arc;

use common::{World, asset, interpenetration, rapier_trimesh, rtcd_shape, size};
use rapier3d::prelude::*;
use rtcd::{RtcdMesh, RtcdParams};
use rtcd_rapier::RtcdDriver;

const TICKS: usize = 120;

struct Run {
    /// First tick after which the pair stays under 1 % of the size deep.
    separated_at: Option<usize>,
    /// How far past first contact B starts, over the size.
    overlap: f32,
    initial: f32,
    final_depth: f32,
    distance: f32,
}

fn run(
    mut w: World,
    a: &Arc<RtcdMesh>,
    b: &Arc<RtcdMesh>,
    shape_a: SharedShape,
    shape_b: SharedShape,
) -> Run {
    w.gravity = Vector::ZERO;
    let size = size(a).max(size(b));
    // B approaches A along x: find where they first touch (coming from far away), then push B a
    // further 30 % of the size into A.
    let pose_a = Pose::from_parts(Vector::ZERO, Rotation::from_rotation_y(0.3));
    let rot_b = Rotation::from_euler(glam::EulerRot::XYZ, 0.5, 1.1, -0.2);
    let at = |x: f32| Pose::from_parts(Vector::new(x, 0.05, 0.0), rot_b);
    let apart = |x: f32| interpenetration(a, &pose_a, b, &at(x)) == 0.0;
    let (mut hi, mut lo) = (2.0 * size, 2.0 * size);
    while lo > 0.0 && apart(lo) {
        (hi, lo) = (lo, lo - size / 20.0);
    }
    for _ in 0..12 {
        let mid = 0.5 * (lo + hi);
        if apart(mid) { hi = mid } else { lo = mid }
    }
    let touch = hi;
    let pose_b = at(touch - 0.3 * size);
    let (ha, _) = w.add_body(shape_a, pose_a);
    let (hb, _) = w.add_body(shape_b, pose_b);
    let initial = interpenetration(a, &pose_a, b, &pose_b);
    let overlap = (touch - pose_b.translation.x) / size;
    let mut separated_at = None;
    let mut depth = initial;
    for tick in 0..TICKS {
        w.step();
        depth = interpenetration(a, &w.pose(ha), b, &w.pose(hb));
        if depth < 0.01 * size {
            separated_at.get_or_insert(tick + 1);
        } else {
            separated_at = None;
        }
    }
    let distance = (w.pose(ha).translation - w.pose(hb).translation).length();
    Run { separated_at, overlap, initial, final_depth: depth, distance }
}

#[test]
fn interpenetrated_concave_meshes_separate() {
    for (na, nb) in [("blob_900", "torus_900"), ("blob_900", "blob_2130"), ("torus_900", "bent_tube_896")] {
        scene(na, nb);
    }
}

fn scene(na: &str, nb: &str) {
    let (a, b) = (asset(na), asset(nb));
    let size = size(&a).max(size(&b));
    let driver = RtcdDriver::new(RtcdParams::from_meshes(&[&a, &b])).unwrap();
    let ours = run(World::ours(driver), &a, &b, rtcd_shape(&a), rtcd_shape(&b));
    let plain =
        run(World::plain(IntegrationParameters::default()), &a, &b, rapier_trimesh(&a), rapier_trimesh(&b));
    let fmt = |r: &Run| {
        format!(
            "start: {:.0} % of size past first contact, deepest vertex {:.1} % of size; separated at tick {}, \
             deepest vertex after {TICKS} ticks {:.2} % of size, centres {:.3} apart",
            100.0 * r.overlap,
            100.0 * r.initial / size,
            r.separated_at.map_or("never".into(), |t| t.to_string()),
            100.0 * r.final_depth / size,
            r.distance,
        )
    };
    println!("{na} vs {nb}, started 30 % of size past first contact, no gravity");
    println!("  rtcd:         {}", fmt(&ours));
    println!("  plain Rapier: {}", fmt(&plain));
    assert!(ours.initial > 0.05 * size, "the scene must start deeply interpenetrated: {}", fmt(&ours));
    assert!(
        ours.separated_at.is_some(),
        "rtcd {na} vs {nb} did not separate within {TICKS} ticks: {}",
        fmt(&ours)
    );
}
