//! Low-poly bodies whose edges cross with no vertex inside the other body come to rest without
//! crossing edges, on both backends (the GPU one on whatever adapter the machine has: lavapipe in
//! CI). Vertex rays cannot see such crossings (Hermann et al. 2008 §4, Fig. 9); the edge rays
//! (Mochi 2024 §3.4) give them contacts.
//!
//! The cases: two box meshes crossed edge on edge at 90° (a box dropped on the ridge of a fixed
//! box turned 45°), a beam dropped edge first across a fixed slab, a low-poly ring hanging from a
//! fixed one through its hole, and a small pile of low-poly furniture and boxes from
//! `rtcd_scenes::everyday`. Every body is a mesh traced by rtcd; the ground is a Rapier cuboid.
//! The crossing edges are counted by `rtcd_scenes::measure` (ray parity and segment tests, no rtcd
//! code) at the end, between every two bodies and between each body and the ground, beyond the
//! bench's tolerance: 1 % of the smaller body's bounding diagonal or Rapier's allowed linear error,
//! whichever is larger; and the end is at rest: no point of a body moves faster than 5 cm/s.

mod common;

use std::sync::Arc;

use common::{World, rtcd_shape};
use glam::{Quat, Vec3};
use rapier3d::prelude::*;
use rtcd::{RtcdMesh, RtcdParams, shapes};
use rtcd_scenes::{
    Everyday,
    measure::{PlacedMesh, measure_pair},
};

/// Ticks simulated: 4 s at 60 Hz.
const TICKS: usize = 240;
/// At rest: no point of a dynamic body faster than this at the end (m/s).
const AT_REST: f32 = 0.05;
/// The ground cuboid's half extents (its top face at y = 0).
const GROUND: Vec3 = Vec3::new(10.0, 0.5, 10.0);

fn mesh(name: &str, (v, i): shapes::MeshData) -> Arc<RtcdMesh> {
    Arc::new(RtcdMesh::new(name, &v, &i).unwrap())
}

/// A body of a case: its mesh, its start pose, fixed or dynamic.
struct Part {
    mesh: Arc<RtcdMesh>,
    pose: Pose,
    fixed: bool,
}

fn part(mesh: &Arc<RtcdMesh>, translation: Vec3, rotation: Quat, fixed: bool) -> Part {
    Part { mesh: mesh.clone(), pose: Pose::from_parts(translation, rotation), fixed }
}

fn crossed_boxes() -> Vec<Part> {
    let cube = mesh("box", shapes::cuboid(Vec3::splat(0.5)));
    let h = 0.5 * 2f32.sqrt();
    vec![
        part(&cube, Vec3::new(0.0, h, 0.0), Quat::from_rotation_z(std::f32::consts::FRAC_PI_4), true),
        part(
            &cube,
            Vec3::new(0.0, 3.0 * h + 0.2, 0.0),
            Quat::from_rotation_x(std::f32::consts::FRAC_PI_4),
            false,
        ),
    ]
}

fn beam_across_a_slab() -> Vec<Part> {
    let slab = mesh("slab", shapes::cuboid(Vec3::new(1.0, 0.05, 1.0)));
    let beam = mesh("beam", shapes::cuboid(Vec3::new(1.5, 0.1, 0.1)));
    let turn = Quat::from_rotation_y(0.5) * Quat::from_rotation_x(std::f32::consts::FRAC_PI_4);
    vec![
        part(&slab, Vec3::new(0.0, 1.0, 0.0), Quat::IDENTITY, true),
        part(&beam, Vec3::new(0.3, 1.4, 0.2), turn, false),
    ]
}

fn hanging_rings() -> Vec<Part> {
    let ring = mesh("ring", shapes::torus(0.4, 0.08, 8, 4));
    // The fixed ring stands upright in the xy plane (centre at 2 m, its lower tube at 1.6 m); the
    // other, in the yz plane, passes through its hole without touching it (its upper tube at
    // 1.95 m, its lower one at 1.15 m) and falls 0.19 m onto the fixed ring's lower tube.
    // Each turned about its own axis by half a segment, so that the two meet edge on edge, the
    // middles of two segments crossing, rather than at a vertex.
    let half_segment = Quat::from_rotation_y(std::f32::consts::PI / 8.0);
    let upright = Quat::from_rotation_x(std::f32::consts::FRAC_PI_2) * half_segment;
    let across = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2) * half_segment;
    vec![
        part(&ring, Vec3::new(0.0, 2.0, 0.0), upright, true),
        part(&ring, Vec3::new(0.0, 1.55, 0.0), across, false),
    ]
}

/// The first `count` bodies of the everyday pile placed from `seed` that are boxes or furniture
/// (12-500 triangles).
fn furniture_pile(count: usize, seed: u64) -> Vec<Part> {
    let e = Everyday::new(Everyday::COUNT, seed).unwrap();
    e.bodies
        .iter()
        .filter(|b| {
            let m = &e.meshes[b.mesh];
            m.triangles().len() <= 500 && m.edges().len() * 2 >= m.positions().len()
        })
        .take(count)
        .map(|b| part(&e.meshes[b.mesh], b.translation, b.rotation, false))
        .collect()
}

/// What a run ends with.
struct End {
    /// Crossing edges beyond the tolerance, over every pair of bodies.
    crossing: usize,
    /// The most crossing edges beyond the tolerance at any step of the run.
    most_crossing: usize,
    /// Pairs with such edges, as text.
    pairs: Vec<String>,
    /// The deepest crossing edge anywhere (m), within the tolerance or not.
    deepest: f64,
    /// Edge contacts the narrow phase made over the run.
    edge_contacts: u64,
    backend: String,
    /// The fastest vertex of a dynamic body at the end (m/s).
    speed: f32,
}

fn run(parts: &[Part], gpu: bool, edge_rays: bool) -> End {
    let refs: Vec<&RtcdMesh> = parts.iter().map(|p| &*p.mesh).collect();
    let params = RtcdParams { edge_rays, ..RtcdParams::from_meshes(&refs) };
    let driver = common::driver(params, gpu);
    let mut w = World::ours(driver);
    w.add_ground(GROUND, 0.0);
    let handles: Vec<RigidBodyHandle> = parts
        .iter()
        .map(|p| {
            let builder = if p.fixed { RigidBodyBuilder::fixed() } else { RigidBodyBuilder::dynamic() };
            let body = w.bodies.insert(builder.pose(p.pose));
            w.colliders.insert_with_parent(ColliderBuilder::new(rtcd_shape(&p.mesh)), body, &mut w.bodies);
            body
        })
        .collect();
    let mut edge_contacts = 0;
    let mut backend = String::new();
    let mut most_crossing = 0;
    let allowed = w.params.allowed_linear_error() as f64;
    let mut end = crossings(parts, &handles, &w, allowed);
    for _ in 0..TICKS {
        w.step();
        let driver = w.driver.as_ref().unwrap();
        let m = driver.metrics();
        assert!(!m.fell_back, "the {} backend fell back", if gpu { "GPU" } else { "CPU" });
        edge_contacts += m.narrow_phase.edge_contacts;
        backend = m.backend.clone();
        end = crossings(parts, &handles, &w, allowed);
        most_crossing = most_crossing.max(end.crossing);
    }
    // The fastest vertex of a dynamic body.
    let speed = parts
        .iter()
        .zip(&handles)
        .filter(|(p, _)| !p.fixed)
        .flat_map(|(p, h)| {
            let b = &w.bodies[*h];
            let pose = *b.position();
            p.mesh.positions().iter().map(move |v| b.velocity_at_point(pose * *v).length())
        })
        .fold(0.0f32, f32::max);
    End { most_crossing, edge_contacts, backend, speed, ..end }
}

/// The crossing edges of every pair of bodies at the world's current poses.
fn crossings(parts: &[Part], handles: &[RigidBodyHandle], w: &World, allowed: f64) -> End {
    let placed: Vec<PlacedMesh> = parts
        .iter()
        .zip(handles)
        .map(|(p, h)| {
            let pose = w.pose(*h);
            PlacedMesh::from_mesh(&p.mesh, rtcd::Pose::new(pose.translation, pose.rotation))
        })
        .collect();
    let mut end = End {
        crossing: 0,
        most_crossing: 0,
        pairs: Vec::new(),
        deepest: 0.0,
        edge_contacts: 0,
        backend: String::new(),
        speed: 0.0,
    };
    // Each body against the ground cuboid too (its top face at y = 0).
    let ground = PlacedMesh::cuboid(GROUND, rtcd::Pose::from_translation(Vec3::new(0.0, -GROUND.y, 0.0)));
    for (i, body) in placed.iter().enumerate() {
        let tol = (0.01 * body.diagonal().min(ground.diagonal())).max(allowed);
        let m = measure_pair(body, &ground, tol);
        end.deepest = end.deepest.max(m.deepest_edge());
        if m.crossing_edges() > 0 {
            end.crossing += m.crossing_edges();
            end.pairs.push(format!(
                "{} #{i} / ground: {} edges, {:.4} m deep",
                parts[i].mesh.name(),
                m.crossing_edges(),
                m.deepest_edge()
            ));
        }
    }
    for i in 0..placed.len() {
        for j in i + 1..placed.len() {
            let tol = (0.01 * placed[i].diagonal().min(placed[j].diagonal())).max(allowed);
            let m = measure_pair(&placed[i], &placed[j], tol);
            end.deepest = end.deepest.max(m.deepest_edge());
            if m.crossing_edges() > 0 {
                end.crossing += m.crossing_edges();
                end.pairs.push(format!(
                    "{} #{i} / {} #{j}: {} edges, {:.4} m deep",
                    parts[i].mesh.name(),
                    parts[j].mesh.name(),
                    m.crossing_edges(),
                    m.deepest_edge()
                ));
            }
        }
    }
    end
}

/// Runs the case on both backends with edge rays, which must leave no crossing edge at rest, and on
/// the CPU without them, which shows what they changed (with `crossed: true`, edges must then cross
/// at some step of the run: the test can tell).
fn check(name: &str, parts: Vec<Part>, crossed: bool) {
    let without = run(&parts, false, false);
    println!(
        "{name} without edge rays: {} crossing edges at rest (at most {} during the run), deepest \
         crossing {:.4} m {:?}",
        without.crossing, without.most_crossing, without.deepest, without.pairs
    );
    if crossed {
        assert!(without.most_crossing > 0, "{name}: no crossing edge even without edge rays");
    }
    for gpu in [false, true] {
        let end = run(&parts, gpu, true);
        println!(
            "{name} ({}): {} crossing edges at rest (at most {} during the run), deepest crossing {:.4} m, \
             {} edge contacts over the run, fastest point at the end {:.4} m/s",
            end.backend, end.crossing, end.most_crossing, end.deepest, end.edge_contacts, end.speed
        );
        if gpu {
            assert!(end.backend.starts_with("gpu"), "{name}: ran on {}", end.backend);
        }
        assert_eq!(end.crossing, 0, "{name} ({}): {:?}", end.backend, end.pairs);
        assert!(
            end.speed < AT_REST,
            "{name} ({}): not at rest, a point moving at {} m/s",
            end.backend,
            end.speed
        );
        if crossed {
            assert!(end.edge_contacts > 0, "{name} ({}): no edge contact", end.backend);
        }
    }
}

#[test]
fn crossed_boxes_rest_without_crossing_edges() {
    check("crossed boxes", crossed_boxes(), true);
}

#[test]
fn a_beam_across_a_slab_rests_without_crossing_edges() {
    check("beam across a slab", beam_across_a_slab(), true);
}

#[test]
fn hanging_rings_rest_without_crossing_edges() {
    check("hanging rings", hanging_rings(), true);
}

#[test]
fn a_furniture_pile_rests_without_crossing_edges() {
    check("furniture pile", furniture_pile(12, Everyday::DEFAULT_SEED), false);
}
