//! Thin closed meshes dropped tilted onto a static cuboid ground come to rest on it: closed plates
//! 1 x t x 1 (t from 0.5 down to 0.001) and flat tetrahedra, thinner than the depth they reach in a
//! step. A vertex ray is dropped when it leaves its own body before it meets the other's surface
//! (Hermann 2008, Alg. 1), so such bodies got no contact from their own vertices; against a cuboid,
//! which rtcd treats as the exact box it is, every vertex inside it gets an exact contact with one
//! of its faces. Penetration is measured without rtcd: the lowest world vertex below the ground's top face.
//! Each drop runs on the CPU backend and on the GPU one (on lavapipe in CI; each tick checked to have
//! run on it).

mod common;

use std::sync::Arc;

use common::{World, flat_tetrahedron, lowest_vertex, rtcd_shape, size};
use glam::Vec3;
use rapier3d::prelude::*;
use rtcd::{RtcdMesh, RtcdParams, shapes};

/// Ticks simulated: 5 s at 60 Hz.
const TICKS: usize = 300;

/// A closed box 1 x `t` x 1 scaled to a diagonal of `diagonal` metres.
fn plate(t: f32, diagonal: f32) -> Arc<RtcdMesh> {
    let scale = diagonal / (2.0 + t * t).sqrt();
    let (v, i) = shapes::cuboid(Vec3::new(0.5, 0.5 * t, 0.5) * scale);
    Arc::new(RtcdMesh::new(format!("plate t={t} diag={diagonal}"), &v, &i).unwrap())
}

struct Drop {
    /// Penetration over the last half second.
    rest_pen: f32,
    /// Largest penetration over the run.
    max_pen: f32,
    speed: f32,
    size: f32,
}

/// Drops `mesh` tilted by `tilt` degrees (about x, then z), its lowest vertex 1 m above the top of
/// a static cuboid ground `ground` (half extents) in size, moving down at `speed`, and steps 5 s,
/// with Rapier's `length_unit` set to `length_unit` (a centimetre-sized scene sets it to its scale,
/// as Rapier asks), on the GPU backend when `gpu`. With `shape`, plain Rapier with that collider
/// instead of ours (`mesh` still measures the penetration).
fn drop_on_cuboid_with(
    gpu: bool,
    mesh: &Arc<RtcdMesh>,
    shape: Option<SharedShape>,
    tilt: f32,
    speed: f32,
    ground: Vector,
    length_unit: f32,
) -> Drop {
    let mut w = match shape {
        None => World::ours(common::driver(RtcdParams::from_meshes(&[mesh]), gpu)),
        Some(_) => World::plain(rtcd_rapier::integration_parameters()),
    };
    let shape = shape.unwrap_or_else(|| rtcd_shape(mesh));
    w.params.length_unit = length_unit;
    w.add_ground(ground, 0.0);
    let a = tilt.to_radians();
    let rotation = Rotation::from_euler(glam::EulerRot::XYZ, a, 0.0, 0.8 * a);
    let lift = 1.0 - lowest_vertex(mesh, &Pose::from_parts(Vector::ZERO, rotation));
    let (body, _) = w.add_body(shape, Pose::from_parts(Vector::new(0.0, lift, 0.0), rotation));
    w.bodies[body].set_linvel(Vector::new(0.0, -speed, 0.0), true);
    let size = size(mesh);
    let (mut max_pen, mut rest_pen, mut traced) = (0.0f32, 0.0f32, 0);
    for tick in 0..TICKS {
        w.step();
        if let Some(d) = &w.driver {
            // Each tick on the backend named, and every contact from its batch (no pair computed on
            // the spot by the dispatcher).
            let m = d.metrics();
            assert!(
                !m.fell_back && m.backend.starts_with(if gpu { "gpu" } else { "cpu" }),
                "tick {tick}: {}",
                m.backend
            );
            assert_eq!(m.cache.misses, 0, "tick {tick}: pairs computed outside the batch");
            traced += m.narrow_phase.pairs;
        }
        let pen = (-lowest_vertex(mesh, &w.pose(body))).max(0.0);
        max_pen = max_pen.max(pen);
        if tick >= TICKS - 30 {
            rest_pen = rest_pen.max(pen);
        }
        assert!(
            pen < 2.0 * ground.y,
            "{}: fell through the ground at tick {tick} (lowest vertex {pen} m under its top)",
            mesh.name()
        );
    }
    assert!(w.driver.is_none() || traced > 0, "{}: the backend traced no pair", mesh.name());
    let d = Drop { rest_pen, max_pen, speed: w.bodies[body].linvel().length(), size };
    println!(
        "{}{} tilted {tilt}° at {speed} m/s: size {size:.4} m, penetration at rest {:.4} % of size, \
         at most {:.3} % over the run, final speed {:.2e} m/s",
        if gpu { "(GPU) " } else { "" },
        mesh.name(),
        100.0 * d.rest_pen / size,
        100.0 * d.max_pen / size,
        d.speed,
    );
    d
}

fn assert_rests(gpu: bool, mesh: &Arc<RtcdMesh>, tilt: f32, speed: f32, ground: Vector) {
    assert_rests_at(gpu, mesh, tilt, speed, ground, 1.0, 0.0);
}

/// Rests within 5 s with at most `floor` plus 1 % of its size of penetration.
fn assert_rests_at(
    gpu: bool,
    mesh: &Arc<RtcdMesh>,
    tilt: f32,
    speed: f32,
    ground: Vector,
    length_unit: f32,
    floor: f32,
) {
    let d = drop_on_cuboid_with(gpu, mesh, None, tilt, speed, ground, length_unit);
    let name = mesh.name();
    assert!(
        d.rest_pen <= floor + 0.01 * d.size,
        "{name} at {speed} m/s: resting penetration {} m ({floor} m allowed for the solver)",
        d.rest_pen
    );
    assert!(d.speed < 0.05, "{name} at {speed} m/s: not at rest after 5 s, speed {}", d.speed);
}

const GROUND: Vector = Vector::new(20.0, 0.5, 20.0);

fn plates_with_a_10_m_diagonal_rest(gpu: bool) {
    for t in [0.5, 0.1, 0.01, 0.001] {
        let mesh = plate(t, 10.0);
        assert_rests(gpu, &mesh, 25.0, 1.0, GROUND);
        assert_rests(gpu, &mesh, 20.0, 10.0, GROUND);
    }
}

#[test]
fn plates_with_a_10_m_diagonal_rest_on_a_cuboid() {
    plates_with_a_10_m_diagonal_rest(false);
}

#[test]
fn plates_with_a_10_m_diagonal_rest_on_a_cuboid_gpu() {
    plates_with_a_10_m_diagonal_rest(true);
}

fn flat_tetrahedra_rest(gpu: bool) {
    for h in [1e-6, 1e-3] {
        let mesh = flat_tetrahedron(h);
        assert_rests(gpu, &mesh, 30.0, 1.0, GROUND);
        assert_rests(gpu, &mesh, 20.0, 10.0, GROUND);
    }
}

#[test]
fn flat_tetrahedra_rest_on_a_cuboid() {
    flat_tetrahedra_rest(false);
}

#[test]
fn flat_tetrahedra_rest_on_a_cuboid_gpu() {
    flat_tetrahedra_rest(true);
}

/// The same plate at 1 cm and at 100 m (the parameters follow the mesh's size; the centimetre
/// scene tells Rapier its length unit). Rapier's soft contacts leave a resting penetration of about
/// 0.1 mm whatever the body's size, over 1 % of a centimetre: there the bound is 1 % of the size
/// above what plain Rapier leaves for a cuboid collider of the plate's extents, dropped alike.
fn plates_of_1_cm_and_100_m_rest(gpu: bool) {
    let small = plate(0.1, 0.01);
    let h = small.aabb().max;
    let cuboid = SharedShape::cuboid(h.x, h.y, h.z);
    let floor = drop_on_cuboid_with(gpu, &small, Some(cuboid), 25.0, 3.0, GROUND, 0.01).rest_pen;
    assert_rests_at(gpu, &small, 25.0, 3.0, GROUND, 0.01, floor);
    assert_rests(gpu, &plate(0.1, 100.0), 25.0, 3.0, Vector::new(200.0, 0.5, 200.0));
}

#[test]
fn plates_of_1_cm_and_100_m_rest_on_a_cuboid() {
    plates_of_1_cm_and_100_m_rest(false);
}

#[test]
fn plates_of_1_cm_and_100_m_rest_on_a_cuboid_gpu() {
    plates_of_1_cm_and_100_m_rest(true);
}
