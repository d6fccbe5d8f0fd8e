//! The two standard tracers (IRTCD 2013 §4.2) return the same first hits, on seeded random rays.

mod common;

use glam::Vec3;
use rand::Rng;
use rtcd::{TracerKind, ray::Ray, trace::NO_SKIP};

#[test]
fn brute_force_and_bvh_agree() {
    let mut rng = common::rng(7);
    for name in ["torus_900", "blob_900", "bent_tube_896", "knot_3456", "u_bracket"] {
        let m = common::asset(name);
        let mut hits = 0;
        for _ in 0..3000 {
            let o = Vec3::new(
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
            );
            // Aim at a random point of the mesh's box so most lines cross the surface.
            let b = m.aabb();
            let target = Vec3::new(
                rng.random_range(b.min.x..b.max.x),
                rng.random_range(b.min.y..b.max.y),
                rng.random_range(b.min.z..b.max.z),
            );
            let d = (target - o).normalize_or(Vec3::X);
            let ray = Ray::new(o, d);
            let back = rng.random_range(0.0..0.5);
            let fwd = if rng.random_bool(0.5) { f32::INFINITY } else { rng.random_range(0.0..1.5) };
            let a = TracerKind::BruteForce.trace_line(&m, &ray, back, fwd, NO_SKIP);
            let b = TracerKind::Bvh.trace_line(&m, &ray, back, fwd, NO_SKIP);
            for (x, y) in [(a.forward, b.forward), (a.backward, b.backward)] {
                match (x, y) {
                    (None, None) => {}
                    (Some(x), Some(y)) => {
                        hits += 1;
                        assert!((x.t - y.t).abs() < 1e-5, "{name}: t {} vs {}", x.t, y.t);
                        if x.triangle != y.triangle {
                            // A tie on a shared edge: same distance, either triangle.
                            let shared = m.triangles()[x.triangle as usize]
                                .iter()
                                .filter(|v| m.triangles()[y.triangle as usize].contains(v))
                                .count();
                            assert!(
                                shared >= 1,
                                "{name}: different triangles {} and {}",
                                x.triangle,
                                y.triangle
                            );
                        }
                    }
                    (x, y) => panic!("{name}: brute {x:?} vs bvh {y:?} for {ray:?} back {back} fwd {fwd}"),
                }
            }
        }
        assert!(hits > 500, "{name}: too few hits to compare ({hits})");
    }
}

#[test]
fn exit_distances_match_a_brute_force_self_trace() {
    for name in ["torus_900", "blob_900"] {
        let m = common::asset(name);
        for v in 0..m.positions().len() {
            let ray = Ray::new(m.positions()[v], -m.normals()[v]);
            let h =
                TracerKind::BruteForce.trace_line(&m, &ray, 0.0, f32::INFINITY, v as u32).forward.unwrap();
            assert!((h.t - m.exit_distances()[v]).abs() < 1e-5);
            assert!(h.from_inside, "{name}: vertex {v}'s inward ray leaves through a back face");
        }
    }
}

/// The CPU's ordered BVH traversal returns exactly the hits of the stackless pre-order one (the GPU
/// tracer's order): same triangles, same distances, on random lines and on vertex rays of a second
/// mesh (the rays of the narrow phase, which start on a surface where lines often graze edges).
#[test]
fn ordered_and_stackless_bvh_traversals_agree() {
    use rtcd::trace::{trace_bvh, trace_bvh_stackless};
    let mut rng = common::rng(11);
    let other = common::asset("blob_900");
    for name in ["torus_900", "blob_900", "bent_tube_896", "knot_3456", "u_bracket"] {
        let m = common::asset(name);
        let b = m.aabb();
        let mut hits = 0;
        for k in 0..4000 {
            let ray = if k % 2 == 0 {
                let o = Vec3::new(
                    rng.random_range(-1.0..1.0),
                    rng.random_range(-1.0..1.0),
                    rng.random_range(-1.0..1.0),
                );
                let target = Vec3::new(
                    rng.random_range(b.min.x..b.max.x),
                    rng.random_range(b.min.y..b.max.y),
                    rng.random_range(b.min.z..b.max.z),
                );
                Ray::new(o, (target - o).normalize_or(Vec3::X))
            } else {
                // A vertex of the other mesh, moved to a random spot of this mesh's box, along its
                // inward normal.
                let v = rng.random_range(0..other.positions().len());
                let shift = Vec3::new(
                    rng.random_range(b.min.x..b.max.x),
                    rng.random_range(b.min.y..b.max.y),
                    rng.random_range(b.min.z..b.max.z),
                );
                Ray::new(other.positions()[v] * 0.5 + shift, -other.normals()[v])
            };
            let back = rng.random_range(0.0..0.5);
            let fwd = if rng.random_bool(0.5) { f32::INFINITY } else { rng.random_range(0.0..1.5) };
            let skip = if k % 7 == 0 { rng.random_range(0..m.positions().len() as u32) } else { NO_SKIP };
            let ordered = trace_bvh(&m, &ray, back, fwd, skip);
            assert_eq!(ordered, trace_bvh_stackless(&m, &ray, back, fwd, skip), "{name}: ray {k}");
            hits += usize::from(ordered.forward.is_some()) + usize::from(ordered.backward.is_some());
        }
        assert!(hits > 1000, "{name}: too few hits to compare ({hits})");
    }
}
