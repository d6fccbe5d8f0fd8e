//! The same bodies at any scale: with per-pair parameters (`RtcdParams::for_pair`) each pair takes
//! its lengths from its own meshes, so
//! - a pile scaled by 0.01, 1 and 100 (with Rapier told the scale: `length_unit`, and gravity
//!   scaled alike, so the motion is the same seen at its own scale) rests with the same penetration
//!   relative to size, and comes to rest alike, on the CPU backend and on the GPU one (on lavapipe
//!   in CI);
//! - in one world of metre units, a 1 cm, a 1 m and a 10 m copy of each body rest side by side:
//!   the metre and larger ones with a penetration of at most 1 % of their size above what Rapier's
//!   own trimesh leaves on the same body in the same world, and at rest where it is.
//!
//! Known limit, printed by the second test and not asserted beyond the solver's tolerance: the
//! centimetre bodies are small for a world of metres. They rest within Rapier's
//! `allowed_linear_error` (its geometric slop, 5 mm at `length_unit` 1, half their size), but
//! deeper than on Rapier's trimesh (1-4 % of their size against 0.1-1.2 %: the trimesh
//! keeps hundreds of contact points per pair where rtcd hands over four per normal), and the blob
//! keeps rocking at about a size per second. A world of centimetre props sets `length_unit`, as
//! the first test does, and then rests as a world of metres does.
//!
//! The bodies: an irregular blob, a torus, a coarse closed plate of 12 triangles (10 % thick, which
//! is not a Rapier cuboid and so gets ray-traced rather than exact contacts on both sides) and a
//! bent tube, dropped tilted on a static cuboid ground. Penetration is measured without rtcd: the
//! lowest world vertex below the ground's top face.

mod common;

use std::sync::Arc;

use common::{World, lowest_vertex, rapier_trimesh, rtcd_shape, size};
use glam::Vec3;
use rapier3d::prelude::*;
use rtcd::{RtcdMesh, RtcdParams, shapes};

/// Ticks simulated: 4 s at 60 Hz (8 s with 10 m bodies, which take longer to settle).
const TICKS: usize = 240;
/// Ticks at the end over which a body must be at rest.
const REST_TICKS: usize = 30;

/// The bodies at about a metre, each scaled by `s`.
fn bodies(s: f32) -> Vec<Arc<RtcdMesh>> {
    let scaled = |name: &str, (v, i): shapes::MeshData| {
        let v: Vec<Vec3> = v.iter().map(|p| *p * s).collect();
        Arc::new(RtcdMesh::new(format!("{name} x{s}"), &v, &i).unwrap())
    };
    vec![
        scaled("blob", shapes::star_blob(0.5, 24, 14, 5, 0.3, 7)),
        scaled("torus", shapes::torus(0.4, 0.12, 24, 10)),
        scaled("coarse plate", shapes::cuboid(Vec3::new(0.5, 0.05, 0.5))),
        scaled("bent tube", shapes::bent_tube(0.4, 0.1, 2.5, 16, 8)),
    ]
}

/// One body's figures, relative to its size.
#[derive(Clone, Copy, Debug)]
struct Rest {
    size: f32,
    /// Largest penetration over the last [`REST_TICKS`], over the size.
    pen: f32,
    /// Largest speed over the last [`REST_TICKS`], in sizes per second.
    speed: f32,
    sleeping: bool,
}

/// Drops `meshes` side by side (each tilted, its lowest vertex half its size above the ground),
/// with ours (`params`) or, with `params: None`, Rapier's trimesh; `unit` is Rapier's
/// `length_unit`, gravity is scaled by `gravity_scale`; ours on the GPU backend when `gpu` (each
/// tick checked to have run on it). Returns each body's rest figures.
fn drop_side_by_side(
    gpu: bool,
    meshes: &[Arc<RtcdMesh>],
    params: Option<RtcdParams>,
    unit: f32,
    gravity_scale: f32,
    ticks: usize,
) -> Vec<Rest> {
    let mut w = match params {
        Some(p) => World::ours(common::driver(p, gpu)),
        None => World::plain(rtcd_rapier::integration_parameters()),
    };
    w.params.length_unit = unit;
    w.gravity *= gravity_scale;
    let sizes: Vec<f32> = meshes.iter().map(|m| size(m)).collect();
    let span: f32 = sizes.iter().map(|s| 2.0 * s).sum();
    w.add_ground(Vector::new(span + 10.0 * unit, 0.5 * unit.max(sizes[0]), span + 10.0 * unit), 0.0);
    let mut x = -0.5 * span;
    let mut handles = Vec::new();
    for (k, (mesh, &s)) in meshes.iter().zip(&sizes).enumerate() {
        let a = (20.0 + 7.0 * k as f32).to_radians();
        let rotation = Rotation::from_euler(glam::EulerRot::XYZ, a, 0.3 * k as f32, 0.8 * a);
        let lift = 0.5 * s - lowest_vertex(mesh, &Pose::from_parts(Vector::ZERO, rotation));
        let shape = if params.is_some() { rtcd_shape(mesh) } else { rapier_trimesh(mesh) };
        let (body, _) = w.add_body(shape, Pose::from_parts(Vector::new(x + s, lift, 0.0), rotation));
        handles.push(body);
        x += 2.0 * s;
    }
    let mut rest: Vec<Rest> =
        sizes.iter().map(|&size| Rest { size, pen: 0.0, speed: 0.0, sleeping: false }).collect();
    let mut traced = 0;
    for tick in 0..ticks {
        w.step();
        if let Some(d) = &w.driver {
            // Each tick on the backend named; on the GPU, every contact from its batch (no pair
            // computed on the spot by the dispatcher, on the CPU).
            let m = d.metrics();
            let expected = if gpu { "gpu" } else { "cpu" };
            assert!(!m.fell_back && m.backend.starts_with(expected), "tick {tick}: {}", m.backend);
            assert!(!gpu || m.cache.misses == 0, "tick {tick}: pairs computed outside the GPU batch");
            traced += m.narrow_phase.pairs;
        }
        for ((mesh, &h), r) in meshes.iter().zip(&handles).zip(&mut rest) {
            let pen = (-lowest_vertex(mesh, &w.pose(h))).max(0.0) / r.size;
            assert!(pen < 1.0, "{}: fell through the ground at tick {tick}", mesh.name());
            if tick >= ticks - REST_TICKS {
                r.pen = r.pen.max(pen);
                r.speed = r.speed.max(w.bodies[h].linvel().length() / r.size);
            }
        }
    }
    assert!(w.driver.is_none() || traced > 0, "the backend traced no pair");
    for (&h, r) in handles.iter().zip(&mut rest) {
        r.sleeping = w.bodies[h].is_sleeping();
    }
    rest
}

/// A speed under which a body counts as at rest: 2 % of its size per second.
const AT_REST: f32 = 0.02;

#[test]
fn a_pile_scaled_by_0_01_1_and_100_rests_alike() {
    pile_scaled_by_0_01_1_and_100_rests_alike(false);
}

#[test]
fn a_pile_scaled_by_0_01_1_and_100_rests_alike_gpu() {
    pile_scaled_by_0_01_1_and_100_rests_alike(true);
}

fn pile_scaled_by_0_01_1_and_100_rests_alike(gpu: bool) {
    let mut figures = Vec::new();
    for s in [0.01f32, 1.0, 100.0] {
        let meshes = bodies(s);
        let refs: Vec<&RtcdMesh> = meshes.iter().map(|m| &**m).collect();
        let rest = drop_side_by_side(gpu, &meshes, Some(RtcdParams::from_meshes(&refs)), s, s, TICKS);
        for (m, r) in meshes.iter().zip(&rest) {
            println!(
                "{:>18}: penetration at rest {:.3} % of size, speed {:.2e} sizes/s, sleeping {}",
                m.name(),
                100.0 * r.pen,
                r.speed,
                r.sleeping
            );
        }
        figures.push(rest);
    }
    let names: Vec<String> = bodies(1.0).iter().map(|m| m.name().to_owned()).collect();
    for (k, name) in names.iter().enumerate() {
        for (scale, f) in [0.01, 1.0, 100.0].iter().zip(&figures) {
            let r = f[k];
            assert!(r.pen <= 0.01, "{name} at x{scale}: penetration {:.3} % of size", 100.0 * r.pen);
            // The same rest behaviour: asleep at every scale or at none, and moving (a round body
            // may still roll) at the same speed relative to size, within 20 %.
            let one = figures[1][k];
            assert_eq!(r.sleeping, one.sleeping, "{name} at x{scale}: sleeping {}", r.sleeping);
            assert!(
                (r.speed < AT_REST && one.speed < AT_REST) || (r.speed - one.speed).abs() <= 0.2 * one.speed,
                "{name} at x{scale}: {} sizes/s, at x1 {} sizes/s",
                r.speed,
                one.speed
            );
        }
        // The same penetration relative to size at every scale, within 0.2 % of the size.
        let (lo, hi) = figures
            .iter()
            .map(|f| f[k].pen)
            .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), p| (lo.min(p), hi.max(p)));
        assert!(
            hi - lo <= 0.002,
            "{name}: penetration from {:.3} % to {:.3} % of size across scales",
            100.0 * lo,
            100.0 * hi
        );
    }
}

#[test]
fn a_centimetre_a_metre_and_ten_metres_in_one_world() {
    let meshes: Vec<Arc<RtcdMesh>> = [0.01f32, 1.0, 10.0].iter().flat_map(|&s| bodies(s)).collect();
    let refs: Vec<&RtcdMesh> = meshes.iter().map(|m| &**m).collect();
    let base = RtcdParams::from_meshes(&refs);
    let ours = drop_side_by_side(false, &meshes, Some(base), 1.0, 1.0, 2 * TICKS);
    let global =
        drop_side_by_side(false, &meshes, Some(RtcdParams { per_pair: false, ..base }), 1.0, 1.0, 2 * TICKS);
    let rapier = drop_side_by_side(false, &meshes, None, 1.0, 1.0, 2 * TICKS);
    println!(
        "penetration at rest in % of size, speed in sizes/s (ours / one parameter set / Rapier trimesh)"
    );
    for (((m, o), g), r) in meshes.iter().zip(&ours).zip(&global).zip(&rapier) {
        println!(
            "{:>20}: {:>7.3} / {:>7.3} / {:>7.3} %   speed {:.1e} / {:.1e} / {:.1e}",
            m.name(),
            100.0 * o.pen,
            100.0 * g.pen,
            100.0 * r.pen,
            o.speed,
            g.speed,
            r.speed
        );
    }
    let allowed = rtcd_rapier::integration_parameters().allowed_linear_error();
    for ((m, o), r) in meshes.iter().zip(&ours).zip(&rapier) {
        if allowed > 0.1 * o.size {
            // The solver's tolerance is over a tenth of the body: within the tolerance (the known
            // limit above; its figures are in the table).
            if o.pen > 0.01 + r.pen || (r.speed < AT_REST && o.speed >= AT_REST) {
                println!(
                    "known limit: {} rests {:.3} % deep (Rapier's trimesh {:.3} %), {:.2} sizes/s",
                    m.name(),
                    100.0 * o.pen,
                    100.0 * r.pen,
                    o.speed
                );
            }
            assert!(
                o.pen * o.size <= allowed,
                "{}: penetration {} m, beyond the solver's tolerance {allowed} m",
                m.name(),
                o.pen * o.size
            );
            continue;
        }
        assert!(
            o.pen <= 0.01 + r.pen,
            "{}: penetration {:.3} % of size, Rapier's trimesh {:.3} %",
            m.name(),
            100.0 * o.pen,
            100.0 * r.pen
        );
        // At rest where Rapier's trimesh is (a round body may roll on with either).
        assert!(
            r.speed >= AT_REST || o.speed < AT_REST,
            "{}: not at rest, {} sizes/s (Rapier's trimesh {})",
            m.name(),
            o.speed,
            r.speed
        );
    }
}
