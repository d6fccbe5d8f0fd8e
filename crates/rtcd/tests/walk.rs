//! The iterative walk on concave meshes: it stops within `max_it` and never loops (IRTCD 2013 §3.1,
//! Fig. 3), and what it reports is a real intersection.

mod common;

use glam::Vec3;
use proptest::prelude::*;
use rtcd::{
    RtcdMesh,
    ray::{Location, Ray, locate, ray_triangle},
    trace::{WalkOutcome, walk},
};

fn check_walk(mesh: &RtcdMesh, ray: &Ray, start: u32, max_it: u32) -> WalkOutcome {
    let w = walk(mesh, ray, start, max_it);
    assert!(w.steps >= 1 && w.steps <= max_it, "{} steps with max_it {max_it}", w.steps);
    if let WalkOutcome::Hit(h) | WalkOutcome::Prediction(h) = w.outcome {
        let t = mesh.triangles()[h.triangle as usize];
        let p = mesh.positions();
        let x =
            ray_triangle(ray.origin, ray.dir, p[t[0] as usize], p[t[1] as usize], p[t[2] as usize]).unwrap();
        let expected =
            if matches!(w.outcome, WalkOutcome::Hit(_)) { Location::Hit } else { Location::Behind };
        assert_eq!(locate(&x), expected);
        assert!((x.t - h.t).abs() < 1e-6);
    }
    w.outcome
}

#[test]
fn trapped_ray_in_a_u_cavity_stops() {
    let u = common::asset("u_bracket");
    // A ray across the U's gap at mid-height, from inside the left arm toward the right arm: the walk
    // started on the left arm's outer wall has to cross the cavity, which adjacency cannot do.
    let ray = Ray::new(Vec3::new(-0.4, 0.5, 0.0), Vec3::X);
    for max_it in [1, 2, 5, 50, 10_000] {
        for start in 0..u.triangles().len() as u32 {
            check_walk(&u, &ray, start, max_it);
        }
    }
}

#[test]
fn walk_from_the_hit_triangle_finds_it_at_once() {
    let m = common::asset("torus_900");
    for (tri, t) in m.triangles().iter().enumerate() {
        let p = m.positions();
        let c = (p[t[0] as usize] + p[t[1] as usize] + p[t[2] as usize]) / 3.0;
        let n = m.triangle_normals()[tri];
        let ray = Ray::new(c - n * 0.01, n);
        let w = walk(&m, &ray, tri as u32, 4);
        assert_eq!(w.steps, 1);
        assert!(matches!(w.outcome, WalkOutcome::Hit(h) if h.triangle == tri as u32 && h.from_inside));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, .. ProptestConfig::default() })]

    #[test]
    fn walks_on_concave_meshes_terminate(
        which in 0usize..3,
        ox in -1.0f32..1.0, oy in -1.0f32..1.0, oz in -1.0f32..1.0,
        dx in -1.0f32..1.0, dy in -1.0f32..1.0, dz in -1.0f32..1.0,
        start_frac in 0.0f64..1.0,
        max_it in 1u32..64,
    ) {
        thread_local! {
            static MESHES: Vec<RtcdMesh> = ["u_bracket", "bent_tube_896", "blob_900"].iter().map(|n| common::asset(n)).collect();
        }
        let dir = Vec3::new(dx, dy, dz);
        prop_assume!(dir.length() > 1e-3);
        MESHES.with(|meshes| {
            let m = &meshes[which];
            let start = ((m.triangles().len() as f64) * start_frac) as u32;
            let start = start.min(m.triangles().len() as u32 - 1);
            check_walk(m, &Ray::new(Vec3::new(ox, oy, oz), dir.normalize()), start, max_it);
        });
    }
}
