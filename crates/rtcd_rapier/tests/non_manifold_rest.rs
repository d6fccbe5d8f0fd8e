//! Non-manifold meshes (small solids glued edge to edge onto a box: 1, 5 and 20 edges shared by
//! four or six triangles) are split into manifold sheets, traced, and rest on a cuboid ground as
//! deep as their manifold counterparts (the same solids moved 1 cm apart, no shared edge), on both
//! backends (the GPU one on whatever adapter the machine has: lavapipe in CI).
//!
//! The penetration is measured by `rtcd_scenes::measure` (ray parity, closest points and segment
//! tests, no rtcd code): the deepest vertex of either body inside the other, or the deepest point of
//! an edge crossing the other with both ends outside, over the last second of the run.

mod common;

use std::sync::Arc;

use common::World;
use glam::{Quat, Vec3};
use rapier3d::prelude::*;
use rtcd::{RtcdMesh, RtcdParams, shapes};
use rtcd_scenes::measure::{PlacedMesh, measure_pair};

/// Ticks simulated: 8 s at 60 Hz; the rest is judged over the last second.
const TICKS: usize = 480;
const REST_FROM: usize = 420;
/// A vertex this close to the ground touches it (m).
const TOUCH: f32 = 0.002;
const GROUND: Vec3 = Vec3::new(5.0, 0.5, 5.0);
/// Half the base box's edge (m); its faces are 10 × 10 grids of 0.1 m squares.
const HALF: f32 = 0.5;
const CELL: f32 = 0.1;

/// The base box with `k` small solids glued onto unit edges of its bottom and top rims (cubes of
/// one cell, tetrahedra, pairs of tetrahedra side by side in the wedge beyond the edge), each
/// moved `gap` away from the edge along the wedge's bisector (the two of a pair also `gap` apart):
/// 0 glues them (a non-manifold edge each), a positive gap leaves separate closed solids.
fn glued(k: usize, gap: f32) -> shapes::MeshData {
    let rims: Vec<(Vec3, Vec3)> = [Vec3::NEG_Y, Vec3::Y]
        .into_iter()
        .flat_map(|n1| [Vec3::X, Vec3::NEG_X, Vec3::Z, Vec3::NEG_Z].map(|n2| (n1, n2)))
        .collect();
    // Slots 1, 3, 5, 7 of each rim, in a fixed scrambled order (a multiplicative walk mod 16),
    // alternately of the bottom rims (the body lands on them) and the top ones.
    let slots: Vec<(usize, u32)> = (0..32u32)
        .map(|n| n % 2 * 16 + (n / 2 * 5 + 3) % 16)
        .map(|s| ((s / 4) as usize, 2 * (s % 4) + 1))
        .collect();
    let mut parts = vec![shapes::subdivided_cuboid(Vec3::splat(HALF), 10)];
    for (n, &(r, s)) in slots[..k].iter().enumerate() {
        let (n1, n2) = rims[r];
        let along = n1.cross(n2);
        let away = gap * (n1 + n2).normalize();
        let p = HALF * (n1 + n2) + (s as f32 * CELL - HALF) * along + away;
        let q = p + CELL * along;
        let m = p + 0.5 * CELL * along;
        let dir = |a: f32| a.cos() * n2 + a.sin() * n1;
        let at = |a: f32, r: f32| m + CELL * r * dir(a);
        // A tetrahedron on the edge, moved by `o` (a pair side by side is moved apart too).
        let tet = |c: Vec3, d: Vec3, o: Vec3| -> shapes::MeshData {
            let mut t = [p, q, c, d].map(|x| x + o);
            if (t[1] - t[0]).dot((t[2] - t[0]).cross(t[3] - t[0])) < 0.0 {
                t.swap(2, 3);
            }
            (t.to_vec(), vec![0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3])
        };
        match n % 3 {
            0 => {
                let cube = shapes::cuboid(Vec3::splat(0.5 * CELL));
                parts.push(shapes::transformed(cube, Quat::IDENTITY, m + 0.5 * CELL * (n1 + n2)));
            }
            1 => parts.push(tet(at(0.2, 0.9), at(1.3, 0.8), Vec3::ZERO)),
            _ => {
                parts.push(tet(at(0.15, 0.8), at(0.6, 0.9), gap * dir(0.375)));
                parts.push(tet(at(0.9, 0.9), at(1.4, 0.8), gap * dir(1.15)));
            }
        }
    }
    let (mut v, mut i) = (Vec::new(), Vec::new());
    for (pv, pi) in parts {
        let base = v.len() as u32;
        v.extend(pv);
        i.extend(pi.iter().map(|x| x + base));
    }
    (v, i)
}

struct Rest {
    /// Deepest penetration over the rest window (m).
    depth: f64,
    /// Whether a glued solid (a vertex outside the base box) touches the ground at the end.
    on_glued: bool,
    backend: String,
}

fn drop_on_ground(mesh: &Arc<RtcdMesh>, gpu: bool) -> Rest {
    let params = RtcdParams::from_meshes(&[mesh]);
    let driver = common::driver(params, gpu);
    let mut w = World::ours(driver);
    w.add_ground(GROUND, 0.0);
    // Bottom down, tilted: it lands on the solids glued below.
    let rotation = Rotation::from_euler(glam::EulerRot::XYZ, 0.05, 0.3, 0.05);
    let lift = 0.2 - common::lowest_vertex(mesh, &Pose::from_parts(Vector::ZERO, rotation));
    let (body, _) =
        w.add_body(common::rtcd_shape(mesh), Pose::from_parts(Vector::new(0.0, lift, 0.0), rotation));
    let ground = PlacedMesh::cuboid(GROUND, rtcd::Pose::from_translation(Vec3::new(0.0, -GROUND.y, 0.0)));
    let (mut depth, mut backend) = (0.0f64, String::new());
    for tick in 0..TICKS {
        w.step();
        let m = w.driver.as_ref().unwrap().metrics();
        assert!(!m.fell_back, "the {} backend fell back", if gpu { "GPU" } else { "CPU" });
        backend = m.backend.clone();
        assert!(w.pose(body).translation.y > 0.0, "{}: fell through at tick {tick}", mesh.name());
        if tick >= REST_FROM {
            let pose = w.pose(body);
            let placed = PlacedMesh::from_mesh(mesh, rtcd::Pose::new(pose.translation, pose.rotation));
            let pair = measure_pair(&placed, &ground, 0.0);
            depth = depth.max(pair.depth()).max(pair.deepest_edge());
        }
    }
    let speed = w.bodies[body].linvel().length();
    assert!(speed < 0.05, "{}: not at rest, speed {speed}", mesh.name());
    let pose = w.pose(body);
    let glued_low = mesh
        .positions()
        .iter()
        .filter(|p| p.abs().max_element() > HALF + 1e-4)
        .map(|p| pose.transform_point(*p).y)
        .fold(f32::INFINITY, f32::min);
    let on_glued = glued_low < TOUCH;
    Rest { depth, on_glued, backend }
}

fn compare(k: usize) {
    let build = |name: String, gap: f32| {
        let (v, i) = glued(k, gap);
        Arc::new(RtcdMesh::new(name, &v, &i).unwrap())
    };
    let glued_mesh = build(format!("{k} glued edges"), 0.0);
    let apart = build(format!("{k} solids 1 cm apart"), 0.01);
    let r = glued_mesh.report();
    assert_eq!(r.split_edges, k, "{r:?}");
    assert!(r.closed && apart.report().split_edges == 0 && apart.is_closed(), "{r:?} / {:?}", apart.report());
    let size = glued_mesh.aabb().extents().max_element() as f64;
    for gpu in [false, true] {
        let manifold = drop_on_ground(&apart, gpu);
        let split = drop_on_ground(&glued_mesh, gpu);
        println!(
            "{k} glued edges ({}): resting penetration {:.5} m ({:.3} % of size {size:.3} m), a \
             glued solid touching the ground: {}; manifold counterpart {:.5} m ({:.3} %)",
            split.backend,
            split.depth,
            100.0 * split.depth / size,
            split.on_glued,
            manifold.depth,
            100.0 * manifold.depth / size,
        );
        if gpu {
            assert!(
                split.backend.starts_with("gpu") && manifold.backend.starts_with("gpu"),
                "{}",
                split.backend
            );
        }
        assert!(split.on_glued, "{k} glued edges ({}): no glued solid touches the ground", split.backend);
        let allowed = (1.5 * manifold.depth).max(0.01 * size);
        assert!(split.depth <= allowed, "{k} glued edges ({}): {} > {allowed}", split.backend, split.depth);
    }
}

#[test]
fn one_glued_edge_rests_like_its_manifold_counterpart() {
    compare(1);
}

#[test]
fn five_glued_edges_rest_like_their_manifold_counterpart() {
    compare(5);
}

#[test]
fn twenty_glued_edges_rest_like_their_manifold_counterpart() {
    compare(20);
}
