//! Closed plates 1 m x 1 cm x 1 m and 1 m x 1 mm x 1 m dropped tilted at 1 to 10 m/s onto a fixed
//! ground given as an ordinary closed mesh (a 12-triangle box, not a Rapier cuboid), farther in a
//! step than the plate is thick. Between two meshes Hermann's rule drops a vertex ray that leaves its own body before
//! it meets the other's surface (Hermann 2008, Alg. 1): the plate's corners, deeper in the ground
//! than the plate is thick, got no contact and the plate sank through. With
//! `RtcdParams::closed_reach` (on by default) a back-face hit in a closed mesh counts as far as the
//! plate's size reaches, the nearer way out, and the plate comes to rest on the ground. Flat
//! tetrahedra 1 mm and 1 µm high, whose base corners' normals lie along their base, are dropped the
//! same way.
//! Penetration is measured without rtcd: the lowest world vertex below the ground's top face.

mod common;

use std::sync::Arc;

use common::{World, lowest_vertex, rtcd_shape, size};
use glam::Vec3;
use rapier3d::prelude::*;
use rtcd::{RtcdMesh, RtcdParams, shapes};

/// Ticks simulated: 4 s at 60 Hz; the last 30 are "at rest".
const TICKS: usize = 240;
const REST_TICKS: usize = 30;
/// The ground's half extents: 20 x 1 x 20, its top at y = 0.
const GROUND: Vec3 = Vec3::new(10.0, 0.5, 10.0);

struct Drop {
    /// Deepest penetration over the last [`REST_TICKS`] ticks and over the run, m.
    rest_pen: f32,
    max_pen: f32,
    speed: f32,
}

/// Drops the plate tilted by `tilt` degrees (about x, then z, after a turn of 0.5 rad about the
/// vertical), its lowest vertex 0.2 m above the ground, moving down at `speed`; 4 s.
fn drop_plate(plate: &Arc<RtcdMesh>, params: RtcdParams, gpu: bool, tilt: f32, speed: f32) -> Drop {
    drop_scaled(plate, params, gpu, tilt, speed, 1.0)
}

/// [`drop_plate`] in a world scaled by `s`: the ground, the lift and the speed scaled by it, and
/// Rapier told so (`length_unit`, gravity scaled alike), so that the motion is the same seen at its
/// own scale.
fn drop_scaled(plate: &Arc<RtcdMesh>, params: RtcdParams, gpu: bool, tilt: f32, speed: f32, s: f32) -> Drop {
    let (v, i) = shapes::cuboid(GROUND * s);
    let ground = Arc::new(RtcdMesh::new("box-mesh ground", &v, &i).unwrap());
    assert!(ground.cuboid_half_extents().is_none() && ground.is_closed());
    let mut w = World::ours(common::driver(params, gpu));
    w.params.length_unit = s;
    w.gravity *= s;
    w.colliders.insert(ColliderBuilder::new(rtcd_shape(&ground)).translation(Vector::new(
        0.0,
        -GROUND.y * s,
        0.0,
    )));
    let a = tilt.to_radians();
    let rotation = Rotation::from_euler(glam::EulerRot::YXZ, 0.5, a, 0.8 * a);
    let lift = 0.2 * s - lowest_vertex(plate, &Pose::from_parts(Vector::ZERO, rotation));
    let (body, _) = w.add_body(rtcd_shape(plate), Pose::from_parts(Vector::new(0.0, lift, 0.0), rotation));
    w.bodies[body].set_linvel(Vector::new(0.0, -speed, 0.0), true);
    let (mut rest_pen, mut max_pen, mut backend) = (0.0f32, 0.0f32, String::new());
    for tick in 0..TICKS {
        w.step();
        let m = w.driver.as_ref().unwrap().metrics();
        assert!(!m.fell_back, "the backend fell back at tick {tick}");
        backend = m.backend.clone();
        if gpu {
            assert!(backend.starts_with("gpu"), "tick {tick} ran on {backend}");
        }
        let pen = (-lowest_vertex(plate, &w.pose(body))).max(0.0);
        assert!(
            pen < 2.0 * GROUND.y * s,
            "{backend}: {} went through the ground at tick {tick}",
            plate.name()
        );
        max_pen = max_pen.max(pen);
        if tick >= TICKS - REST_TICKS {
            rest_pen = rest_pen.max(pen);
        }
    }
    let d = Drop { rest_pen, max_pen, speed: w.bodies[body].linvel().length() };
    println!(
        "{backend}: {} tilted {tilt}° at {speed} m/s: penetration at rest {:.4} % of size, at most {:.3} % \
         over the run, final speed {:.2e} m/s",
        plate.name(),
        100.0 * d.rest_pen / size(plate),
        100.0 * d.max_pen / size(plate),
        d.speed,
    );
    d
}

/// A wedge 1 m long and 0.5 m wide whose sharp edge has an angle of `degrees`: a knife edge.
fn wedge(degrees: f32) -> Arc<RtcdMesh> {
    let h = (0.5 * degrees).to_radians().tan();
    let (v, i) = shapes::extrude(&[(0.0, -h), (1.0, 0.0), (0.0, h)], 0.5);
    Arc::new(RtcdMesh::new(format!("wedge of {degrees}°"), &v, &i).unwrap())
}

/// A 16-sided disc 1 m across and `thickness` thick: its rim's normals are diagonal, as a plate's.
fn disc(thickness: f32) -> Arc<RtcdMesh> {
    let (v, i) = shapes::extrude(&ring(16).collect::<Vec<_>>(), thickness);
    Arc::new(RtcdMesh::new(format!("disc {thickness} m thick"), &v, &i).unwrap())
}

/// A 16-sided lens 1 m across and `thickness` thick (two flat cones base to base): its rim's normals
/// lie along it, as a flat tetrahedron's corners'.
fn lens(thickness: f32) -> Arc<RtcdMesh> {
    let n = 16u32;
    let mut v: Vec<Vec3> = ring(n).map(|(x, z)| Vec3::new(x, 0.0, z)).collect();
    v.extend([Vec3::new(0.0, 0.5 * thickness, 0.0), Vec3::new(0.0, -0.5 * thickness, 0.0)]);
    let i: Vec<u32> = (0..n).flat_map(|k| [k, n, (k + 1) % n, k, (k + 1) % n, n + 1]).collect();
    Arc::new(RtcdMesh::new(format!("lens {thickness} m thick"), &v, &i).unwrap())
}

/// `n` points on a circle 1 m across, counter-clockwise.
fn ring(n: u32) -> impl Iterator<Item = (f32, f32)> {
    (0..n).map(move |k| {
        let a = k as f32 * std::f32::consts::TAU / n as f32;
        (0.5 * a.cos(), 0.5 * a.sin())
    })
}

/// Every drop (tilted 0°, 10° and 20°, at 1, 3, 5 and 10 m/s) of a 1 cm and a 1 mm plate (1 % and
/// 0.1 % of their size), of flat tetrahedra 1 mm and 1 µm high on a 1 m base, of a 5° wedge and of
/// a disc and a lens 1 mm thick rests within 4 s with at most 1 % of the body's size of
/// penetration. The tetrahedra's base corners, the wedge's knife edge and the lens's rim are rim
/// vertices (`RtcdMesh::rim_motions`): their normals run along their bodies, so no ray of theirs
/// looks at the ground, and they are traced along their paths whenever they move: the ground's own
/// vertices are far away, so those paths give the tetrahedron its only contacts.
fn plates_rest_on_a_box_mesh(gpu: bool) {
    let plate = |t: f32, name: &str| {
        let (v, i) = shapes::cuboid(Vec3::new(0.5, 0.5 * t, 0.5));
        Arc::new(RtcdMesh::new(name, &v, &i).unwrap())
    };
    let bodies = [
        plate(0.01, "plate 1 x 0.01 x 1"),
        plate(0.001, "plate 1 x 0.001 x 1"),
        common::flat_tetrahedron(0.001),
        common::flat_tetrahedron(1e-6),
        wedge(5.0),
        disc(0.001),
        lens(0.001),
    ];
    // Which bodies have rim vertices, and how many.
    let rims: Vec<usize> =
        bodies.iter().map(|b| b.rim_motions().iter().filter(|r| r.is_finite()).count()).collect();
    assert_eq!(rims, [0, 0, 3, 3, 2, 0, 16]);
    let mut failures = Vec::new();
    for body in &bodies {
        let params = RtcdParams::from_meshes(&[body]);
        assert!(params.closed_reach);
        for tilt in [0.0, 10.0, 20.0] {
            for speed in [1.0, 3.0, 5.0, 10.0] {
                let d = drop_plate(body, params, gpu, tilt, speed);
                if d.rest_pen > 0.01 * size(body) || d.speed >= 0.05 {
                    failures.push(format!(
                        "{} tilted {tilt}° at {speed} m/s: resting penetration {} m, final speed {}",
                        body.name(),
                        d.rest_pen,
                        d.speed
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn thin_plates_rest_on_a_box_mesh() {
    plates_rest_on_a_box_mesh(false);
}

#[test]
fn thin_plates_rest_on_a_box_mesh_gpu() {
    plates_rest_on_a_box_mesh(true);
}

/// The flat tetrahedron (1 mm high on a 1 m base) scaled by 0.01, 1 and 100 on a box-mesh floor
/// scaled alike, in a world told the scale: every drop (tilted 0°, 10° and 20°, at 1 and 5 sizes a
/// second) rests within 1 % of its size, still, with the same penetration relative to size at
/// every scale within 0.2 % of the size. Its rim vertices' least motion is a share of its own size
/// (`rtcd::mesh::RIM_LEAST_MOTION`).
fn flat_tetrahedra_rest_alike_at_any_scale(gpu: bool) {
    let mut failures = Vec::new();
    let mut figures: Vec<Vec<f32>> = Vec::new();
    for s in [0.01f32, 1.0, 100.0] {
        let one = common::flat_tetrahedron(0.001);
        let v: Vec<Vec3> = one.positions().iter().map(|p| *p * s).collect();
        let i: Vec<u32> = one.triangles().iter().flatten().copied().collect();
        let body = Arc::new(RtcdMesh::new(format!("tetrahedron x{s}"), &v, &i).unwrap());
        let params = RtcdParams::from_meshes(&[&body]);
        let mut row = Vec::new();
        for tilt in [0.0, 10.0, 20.0] {
            for speed in [1.0, 5.0] {
                let d = drop_scaled(&body, params, gpu, tilt, speed * s, s);
                let pen = d.rest_pen / size(&body);
                if pen > 0.01 || d.speed >= 0.05 * s {
                    failures.push(format!(
                        "x{s} tilted {tilt}° at {speed} sizes/s: resting penetration {:.3} % of size, final speed {} sizes/s",
                        100.0 * pen,
                        d.speed / s
                    ));
                }
                row.push(pen);
            }
        }
        figures.push(row);
    }
    for k in 0..figures[0].len() {
        let (lo, hi) = figures
            .iter()
            .map(|f| f[k])
            .fold((f32::INFINITY, f32::NEG_INFINITY), |(l, h), p| (l.min(p), h.max(p)));
        if hi - lo > 0.002 {
            failures.push(format!(
                "drop {k}: penetration from {:.3} % to {:.3} % of size across scales",
                100.0 * lo,
                100.0 * hi
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn flat_tetrahedra_rest_alike_at_0_01_1_and_100() {
    flat_tetrahedra_rest_alike_at_any_scale(false);
}

#[test]
fn flat_tetrahedra_rest_alike_at_0_01_1_and_100_gpu() {
    flat_tetrahedra_rest_alike_at_any_scale(true);
}
