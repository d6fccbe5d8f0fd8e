//! Concave meshes dropped on level geometry (Rapier's own triangle-mesh and heightfield colliders
//! on a fixed body: flat, wavy, sloped) rest as they rest on a cuboid ground, and their contacts
//! come from the ray-traced narrow phase (every point in Rapier's contact graph is one the batch
//! handed over), on the CPU backend and on the GPU one (lavapipe here).
//!
//! Penetration is measured without rtcd: each body vertex's height under the surface's own
//! triangles (the grid's, or parry's heightfield triangles) along the vertical, times the
//! triangle's normal's vertical part (the depth along the normal), and the surface vertices inside
//! the body by ray parity (`rtcd_scenes::measure`).

mod common;

use std::sync::Arc;

use common::{World, asset, rtcd_shape, size};
use glam::Vec3;
use rapier3d::{parry::utils::Array2, prelude::*};
use rtcd::{RtcdMesh, RtcdParams, shapes};
use rtcd_scenes::measure::{PlacedMesh, Surface, distance_to_surface, inside};

const TICKS: usize = 420;
/// Ticks at the end over which the resting penetration is taken.
const REST_TICKS: usize = 60;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Ground {
    Cuboid,
    /// A `TriMesh` grid; `wavy` adds hills, `slope` tilts it (rise over run along x).
    TriMesh {
        wavy: bool,
        slope: f32,
    },
    /// A `HeightField` of the same grid.
    HeightField {
        wavy: bool,
    },
}

const CELLS: usize = 48;
const SIZE: f32 = 24.0;

fn height(wavy: bool, slope: f32, x: f32, z: f32) -> f32 {
    let hills = if wavy { 0.35 * (0.6 * x).sin() * (0.45 * z + 0.3).cos() } else { 0.0 };
    hills + slope * x
}

/// The grid's vertices and triangles, counter-clockwise seen from above.
fn grid(wavy: bool, slope: f32) -> (Vec<Vec3>, Vec<[u32; 3]>) {
    let n = CELLS as u32;
    let at = |i: u32, j: u32| j * (n + 1) + i;
    let mut p = Vec::new();
    for j in 0..=n {
        for i in 0..=n {
            let (x, z) = (SIZE * (i as f32 / n as f32 - 0.5), SIZE * (j as f32 / n as f32 - 0.5));
            p.push(Vec3::new(x, height(wavy, slope, x, z), z));
        }
    }
    let mut t = Vec::new();
    for j in 0..n {
        for i in 0..n {
            t.push([at(i, j), at(i, j + 1), at(i + 1, j)]);
            t.push([at(i + 1, j), at(i, j + 1), at(i + 1, j + 1)]);
        }
    }
    (p, t)
}

/// The ground's collider, and its surface triangles in the world (`None` for the cuboid, whose
/// top face is y = 0).
fn ground(ground: Ground) -> (ColliderBuilder, Option<Vec<[Vec3; 3]>>) {
    match ground {
        Ground::Cuboid => (
            ColliderBuilder::cuboid(SIZE / 2.0, 0.5, SIZE / 2.0).translation(Vector::new(0.0, -0.5, 0.0)),
            None,
        ),
        Ground::TriMesh { wavy, slope } => {
            let (p, t) = grid(wavy, slope);
            let tris = t.iter().map(|t| t.map(|i| p[i as usize])).collect();
            (ColliderBuilder::trimesh(p, t).unwrap(), Some(tris))
        }
        Ground::HeightField { wavy } => {
            // Rows along z, columns along x, centred, `SIZE` wide: the grid's heights.
            let n = CELLS + 1;
            let heights = Array2::new(
                n,
                n,
                (0..n * n)
                    .map(|k| {
                        let (row, col) = (k % n, k / n);
                        let x = SIZE * (col as f32 / CELLS as f32 - 0.5);
                        let z = SIZE * (row as f32 / CELLS as f32 - 0.5);
                        height(wavy, 0.0, x, z)
                    })
                    .collect(),
            );
            let field = HeightField::new(heights, Vector::new(SIZE, 1.0, SIZE));
            let tris = field.triangles().map(|t| [t.a, t.b, t.c]).collect();
            (ColliderBuilder::new(SharedShape::new(field)), Some(tris))
        }
    }
}

struct Body {
    mesh: Arc<RtcdMesh>,
    handle: RigidBodyHandle,
}

struct Outcome {
    /// Per body: deepest penetration over the run and at rest, as a share of its size.
    impact: Vec<f32>,
    rest: Vec<f32>,
    backend: String,
    /// Narrow-phase pairs traced over the run.
    pairs: usize,
}

fn meshes() -> Vec<Arc<RtcdMesh>> {
    let (v, i) = shapes::cuboid(Vec3::new(0.4, 0.15, 0.3));
    vec![
        asset("torus_900"),
        asset("blob_900"),
        asset("u_bracket"),
        asset("bent_tube_896"),
        Arc::new(RtcdMesh::new("low-poly box", &v, &i).unwrap()),
    ]
}

/// A body to drop: its mesh, orientation, where over the ground (x, z), and its speed downward.
struct Spec {
    mesh: Arc<RtcdMesh>,
    rotation: Rotation,
    x: f32,
    z: f32,
    speed: f32,
}

/// [`meshes`] side by side, turned each its own way, at rest.
fn specs() -> Vec<Spec> {
    meshes()
        .into_iter()
        .enumerate()
        .map(|(k, mesh)| Spec {
            mesh,
            rotation: Rotation::from_euler(glam::EulerRot::XYZ, 0.4 + k as f32, 0.3, 0.7 * k as f32),
            x: -6.0 + 3.0 * k as f32,
            z: 1.5 * (k % 2) as f32 - 0.5,
            speed: 0.0,
        })
        .collect()
}

fn run(kind: Ground, gpu: bool, levels: bool) -> Outcome {
    run_specs(kind, gpu, levels, &specs(), 0.5)
}

/// Drops each of `specs` with its lowest vertex 0.2 m over the ground and steps [`TICKS`] ticks,
/// measuring every body's penetration (and failing any that leaves the ground's footprint or sinks
/// `sink` times its size at any tick: with `sink` at 1 or more, a body that tunnelled through).
fn run_specs(kind: Ground, gpu: bool, levels: bool, specs: &[Spec], sink: f32) -> Outcome {
    let meshes: Vec<Arc<RtcdMesh>> = specs.iter().map(|s| s.mesh.clone()).collect();
    let refs: Vec<&RtcdMesh> = meshes.iter().map(|m| &**m).collect();
    let params = RtcdParams::from_meshes(&refs);
    let driver = common::driver(params, gpu);
    driver.cache().set_settings(rtcd_rapier::CacheSettings { levels, ..driver.cache().settings() });
    let mut w = World::ours(driver);
    let (collider, tris) = ground(kind);
    let level = w.colliders.insert(collider);
    let surface = tris.map(|t| Surface::new(t, CELLS, SIZE / 2.0));
    let surface_height = |x: f32, z: f32| surface.as_ref().map_or(Some((0.0, 1.0)), |s| s.at(x, z));
    let surface_mesh: Option<Vec<Vec3>> =
        surface.as_ref().map(|s| s.triangles().iter().flatten().copied().collect());

    let bodies: Vec<Body> = specs
        .iter()
        .map(|&Spec { ref mesh, rotation, x, z, speed }| {
            let at = Pose::from_parts(Vector::ZERO, rotation);
            let lowest =
                mesh.positions().iter().map(|p| at.transform_point(*p).y).fold(f32::INFINITY, f32::min);
            let top = surface_height(x, z).unwrap().0 + 0.2;
            let pose = Pose::from_parts(Vector::new(x, top - lowest, z), rotation);
            let (handle, _) = w.add_body(rtcd_shape(mesh), pose);
            if speed != 0.0 {
                w.bodies[handle].set_linvel(Vector::new(0.0, -speed, 0.0), true);
            }
            Body { mesh: mesh.clone(), handle }
        })
        .collect();

    let mut impact = vec![0.0f32; bodies.len()];
    let mut rest = vec![0.0f32; bodies.len()];
    let (mut backend, mut pairs) = (String::new(), 0);
    for tick in 0..TICKS {
        w.step();
        let m = w.driver.as_ref().unwrap().metrics();
        assert!(!m.fell_back, "{kind:?}: the backend fell back");
        backend = m.backend.clone();
        pairs += m.narrow_phase.pairs;
        // Every point Rapier holds for a pair with the ground is one the batch handed over (this
        // step, or earlier for a pair Rapier recycles).
        let held: usize = w
            .narrow_phase
            .contact_pairs()
            .filter(|p| p.collider1 == level || p.collider2 == level)
            // A sleeping body's pairs keep their points untraced.
            .filter(|p| {
                let body = if p.collider1 == level { p.collider2 } else { p.collider1 };
                w.colliders[body].parent().is_some_and(|b| !w.bodies[b].is_sleeping())
            })
            .flat_map(|p| &p.manifolds)
            .map(|m| m.points.len())
            .sum();
        assert!(
            !levels || held <= m.manifold_points + m.held_points,
            "{kind:?} tick {tick}: Rapier holds {held} points, the batch gave {} and holds {} ({:?})",
            m.manifold_points,
            m.held_points,
            m.cache
        );
        for (k, b) in bodies.iter().enumerate() {
            let pose = w.pose(b.handle);
            let size = size(&b.mesh);
            let (mut pen, mut measured) = (0.0f32, 0);
            for p in b.mesh.positions() {
                let q = pose.transform_point(*p);
                if let Some((h, up)) = surface_height(q.x, q.z) {
                    pen = pen.max((h - q.y) * up);
                    measured += 1;
                }
            }
            // A body that left the ground's footprint could no longer be measured: a failure, not
            // a case to leave out.
            assert_eq!(
                measured,
                b.mesh.positions().len(),
                "{kind:?} ({backend}): {} left the ground at tick {tick}",
                b.mesh.name()
            );
            assert!(pen < sink * size, "{kind:?} ({backend}): {} sank {pen} at tick {tick}", b.mesh.name());
            if tick >= TICKS - REST_TICKS
                && tick % 20 == 0
                && let Some(sp) = &surface_mesh
            {
                // Surface vertices inside the body (a hill's top), measured by ray parity.
                let placed_pose = rtcd::Pose::new(pose.translation, pose.rotation);
                let placed = PlacedMesh::from_mesh(&b.mesh, placed_pose);
                let bounds = b.mesh.aabb().transformed(&placed_pose);
                for v in sp {
                    if bounds.contains(*v) {
                        let d = v.as_dvec3();
                        if inside(d, &placed) {
                            pen = pen.max(distance_to_surface(d, &placed) as f32);
                        }
                    }
                }
            }
            impact[k] = impact[k].max(pen / size);
            if tick >= TICKS - REST_TICKS {
                rest[k] = rest[k].max(pen / size);
            }
        }
    }
    // Rapier's chained dispatcher asks ours first: an answer for each body's pair with the ground
    // means these contacts are the ray-traced ones, not Rapier's own.
    let dispatcher = w.driver.as_ref().unwrap().dispatcher();
    let level_shape = w.colliders[level].shape();
    for b in bodies.iter().filter(|_| levels) {
        let body_collider = w.bodies[b.handle].colliders()[0];
        let co = &w.colliders[body_collider];
        let pos12 = co.position().inv_mul(w.colliders[level].position());
        assert!(
            dispatcher.resolve(&pos12, co.shape(), level_shape, w.params.prediction_distance()).is_some(),
            "{kind:?}: {} against the ground is not ours",
            b.mesh.name()
        );
    }
    Outcome { impact, rest, backend, pairs }
}

fn report(kind: Ground, o: &Outcome) {
    report_specs(kind, o, &specs());
}

fn report_specs(kind: Ground, o: &Outcome, specs: &[Spec]) {
    let names: Vec<String> = specs.iter().map(|s| s.mesh.name().to_owned()).collect();
    let rows: Vec<String> = names
        .iter()
        .zip(o.impact.iter().zip(&o.rest))
        .map(|(n, (i, r))| format!("{n} {:.3} % / {:.3} %", 100.0 * i, 100.0 * r))
        .collect();
    println!(
        "{kind:?} ({}, {} pairs traced): impact / rest penetration: {}",
        o.backend,
        o.pairs,
        rows.join(", ")
    );
}

/// How much deeper than the reference a body may rest (m): a fifth of Rapier's geometric slop
/// (`allowed_linear_error`, 5 mm at the default length unit).
const ALLOWED: f32 = 0.001;

/// Each case rests like the baseline: per body, penetration at rest at most the baseline's plus
/// Rapier's allowed error (as a share of the body's size), and the impact below 10 % of its size.
/// On a flat ground the baseline is the cuboid ground; on hills and slopes, where bodies may still
/// roll at the end, the worse of the cuboid and Rapier's own triangle-mesh path on the same ground.
fn compare(kind: Ground, gpu: bool, cuboid: &Outcome) {
    let o = run(kind, gpu, true);
    report(kind, &o);
    let flat =
        matches!(kind, Ground::TriMesh { wavy: false, slope: 0.0 } | Ground::HeightField { wavy: false });
    let baseline = if flat {
        None
    } else {
        let r = run(kind, false, false);
        println!("  Rapier's own path on the same ground:");
        report(kind, &r);
        Some(r)
    };
    if gpu {
        assert!(o.backend.starts_with("gpu"), "{kind:?}: ran on {}", o.backend);
    }
    assert!(o.pairs > 0, "{kind:?}: no pair traced");
    for (k, m) in meshes().iter().enumerate() {
        let s = size(m);
        let base = baseline.as_ref().map_or(cuboid.rest[k], |b| b.rest[k].max(cuboid.rest[k]));
        assert!(
            o.rest[k] <= base + ALLOWED / s,
            "{kind:?}: {} rests {:.3} % deep, {:.3} % on the baseline",
            m.name(),
            100.0 * o.rest[k],
            100.0 * base
        );
        assert!(o.impact[k] < 0.1, "{kind:?}: {} impact {:.3} %", m.name(), 100.0 * o.impact[k]);
    }
}

#[test]
fn meshes_rest_on_trimesh_and_heightfield_grounds_as_on_a_cuboid_cpu() {
    let cuboid = run(Ground::Cuboid, false, true);
    report(Ground::Cuboid, &cuboid);
    for kind in [
        Ground::TriMesh { wavy: false, slope: 0.0 },
        Ground::TriMesh { wavy: true, slope: 0.0 },
        Ground::TriMesh { wavy: false, slope: 0.1 },
        Ground::HeightField { wavy: false },
        Ground::HeightField { wavy: true },
    ] {
        compare(kind, false, &cuboid);
    }
}

#[test]
fn meshes_rest_on_trimesh_and_heightfield_grounds_as_on_a_cuboid_gpu() {
    let cuboid = run(Ground::Cuboid, true, true);
    report(Ground::Cuboid, &cuboid);
    for kind in [Ground::TriMesh { wavy: true, slope: 0.0 }, Ground::HeightField { wavy: true }] {
        compare(kind, true, &cuboid);
    }
}

/// A closed box `side x thickness x side` (a 1 x 0.01 x 1 plate scaled, or a thinner one).
fn plate(side: f32, thickness: f32) -> Arc<RtcdMesh> {
    let (v, i) = shapes::cuboid(Vec3::new(0.5 * side, 0.5 * thickness, 0.5 * side));
    Arc::new(RtcdMesh::new(format!("plate {side} x {thickness} m"), &v, &i).unwrap())
}

/// Thin plates (1 cm or 5 mm thick, 0.5-1 m wide, tilted or flat) and 3 cm pebbles (an icosahedron
/// and a low-poly blob), dropped at 1-5 m/s: bodies thinner than a step's motion at that speed,
/// whose vertices' rays leave them before they reach a surface they sank under.
fn thin_specs() -> Vec<Spec> {
    let turned = |a: f32, b: f32, c: f32| Rotation::from_euler(glam::EulerRot::XYZ, a, b, c);
    let (iv, ii) = shapes::icosphere(0.03, 1);
    let (bv, bi) = shapes::star_blob(0.03, 8, 6, 3, 0.25, 5);
    let pebble = Arc::new(RtcdMesh::new("pebble (icosahedron, 3 cm)", &iv, &ii).unwrap());
    let blob = Arc::new(RtcdMesh::new("pebble (low-poly blob, 3 cm)", &bv, &bi).unwrap());
    let spec =
        |mesh: &Arc<RtcdMesh>, rotation, x, z, speed| Spec { mesh: mesh.clone(), rotation, x, z, speed };
    vec![
        spec(&plate(1.0, 0.01), turned(0.3, 0.4, 0.2), -8.0, -4.0, 1.0),
        spec(&plate(0.5, 0.005), turned(-0.4, 1.1, 0.25), -5.0, 3.0, 3.0),
        spec(&plate(0.7, 0.01), turned(0.0, 0.3, 0.0), -2.0, -3.0, 5.0),
        spec(&plate(1.0, 0.01), turned(0.05, 2.0, -0.1), 1.0, 4.0, 5.0),
        spec(&pebble, turned(0.4, 0.3, 1.2), 3.0, -2.0, 2.0),
        spec(&pebble, turned(1.3, 0.1, 0.5), 5.0, 5.0, 5.0),
        spec(&blob, turned(0.2, 0.9, 0.4), 7.0, -5.0, 1.0),
        spec(&blob, turned(2.1, 0.5, 1.7), 8.0, 2.0, 4.0),
    ]
}

/// How deep, as a share of its size, a thin body may sink at impact: a step at 5 m/s (8 cm) takes a
/// 3 cm pebble under the cuboid's top too before it is pushed back; a body that tunnelled keeps
/// sinking.
const THIN_SINK: f32 = 2.0;

/// The thin bodies rest on `kind` as on the cuboid ground: no body leaves the ground's footprint or
/// sinks [`THIN_SINK`] times its size at any tick ([`run_specs`]), and at rest each is at most 1 % of its size
/// under the surface, and at most Rapier's allowed error deeper than on the cuboid.
fn thin_bodies_rest(kind: Ground, gpu: bool, cuboid: &Outcome) {
    let specs = thin_specs();
    let o = run_specs(kind, gpu, true, &specs, THIN_SINK);
    report_specs(kind, &o, &specs);
    if gpu {
        assert!(o.backend.starts_with("gpu"), "{kind:?}: ran on {}", o.backend);
    }
    assert!(o.pairs > 0, "{kind:?}: no pair traced");
    for (k, s) in specs.iter().enumerate() {
        let (name, size) = (s.mesh.name(), size(&s.mesh));
        assert!(o.rest[k] <= 0.01, "{kind:?}: {name} rests {:.3} % of its size deep", 100.0 * o.rest[k]);
        assert!(
            o.rest[k] <= cuboid.rest[k] + ALLOWED / size,
            "{kind:?}: {name} rests {:.3} % deep, {:.3} % on the cuboid",
            100.0 * o.rest[k],
            100.0 * cuboid.rest[k]
        );
    }
}

#[test]
fn thin_plates_and_pebbles_rest_on_trimesh_and_heightfield_grounds_cpu() {
    let specs = thin_specs();
    let cuboid = run_specs(Ground::Cuboid, false, true, &specs, THIN_SINK);
    report_specs(Ground::Cuboid, &cuboid, &specs);
    for kind in [
        Ground::TriMesh { wavy: false, slope: 0.0 },
        Ground::TriMesh { wavy: true, slope: 0.0 },
        Ground::HeightField { wavy: true },
    ] {
        thin_bodies_rest(kind, false, &cuboid);
    }
}

#[test]
fn thin_plates_and_pebbles_rest_on_trimesh_and_heightfield_grounds_gpu() {
    let specs = thin_specs();
    let cuboid = run_specs(Ground::Cuboid, true, true, &specs, THIN_SINK);
    report_specs(Ground::Cuboid, &cuboid, &specs);
    assert!(cuboid.backend.starts_with("gpu"), "ran on {}", cuboid.backend);
    for kind in [Ground::TriMesh { wavy: true, slope: 0.0 }, Ground::HeightField { wavy: true }] {
        thin_bodies_rest(kind, true, &cuboid);
    }
}
