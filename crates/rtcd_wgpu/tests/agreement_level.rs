//! Both backends agree on pairs of bodies with the chunks of a level surface
//! ([`rtcd::LevelMesh`]: an open, wavy terrain grid cut into chunks): seeded random bodies (a torus,
//! a blob, low-poly boxes) sunk a random depth into the terrain at random places and orientations,
//! each paired with the chunks its box overlaps, 40 ticks of small random motion; and thin plates and
//! pebbles sunk deeper than their thickness, whose contacts come from the chunks' solid reach; and
//! bodies under steep hills cut into small chunks, where many vertex rays start outside a chunk's
//! solid-behind box and would meet it from behind beyond their exit distance
//! (`rtcd::detect::solid_behind_box`: they keep their exit distance).
//!
//! Tolerances: every contact (vertex rays both ways, edge contacts) of either backend is found by
//! the other on ≥ 99.9 % of the pair-ticks' features, with the same depth within 1e-5 relative
//! (1e-5 · max(depth, 0.01)); the GPU step must have run on the device (the backend's name is the
//! adapter's).

mod common;

use glam::{Quat, Vec3};
use rand::Rng;
use rtcd::{
    FeatureId, LevelMesh, NarrowPhase, PairInput, PairKey, Pose, RtcdMesh, RtcdParams, StepOptions,
    detect::{solid_behind_box, solid_reach},
    ray::Ray,
    shapes,
    trace::NO_SKIP,
};
use rtcd_wgpu::GpuNarrowPhase;

fn height(x: f32, z: f32) -> f32 {
    0.3 * (0.8 * x).sin() * (0.6 * z + 0.4).cos() + 0.05 * x
}

/// Steep hills: slopes up to about 50°.
fn steep(x: f32, z: f32) -> f32 {
    1.2 * (1.1 * x).sin() * (0.9 * z + 0.4).cos()
}

/// A `n x n` cell grid over `[-size/2, size/2]^2` of heights `height`, counter-clockwise from above.
fn terrain(n: u32, size: f32, height: fn(f32, f32) -> f32) -> (Vec<Vec3>, Vec<u32>) {
    let mut p = Vec::new();
    for j in 0..=n {
        for i in 0..=n {
            let (x, z) = (size * (i as f32 / n as f32 - 0.5), size * (j as f32 / n as f32 - 0.5));
            p.push(Vec3::new(x, height(x, z), z));
        }
    }
    let at = |i: u32, j: u32| j * (n + 1) + i;
    let mut idx = Vec::new();
    for j in 0..n {
        for i in 0..n {
            idx.extend([at(i, j), at(i, j + 1), at(i + 1, j), at(i + 1, j), at(i, j + 1), at(i + 1, j + 1)]);
        }
    }
    (p, idx)
}

/// What [`agree`] counted.
struct Counts {
    agreement: common::FeatureAgreement,
    pairs: usize,
    /// CPU contacts of a body vertex deeper than the vertex's exit distance (found through the
    /// chunk's solid reach, `rtcd::detect::solid_reach`).
    deep: usize,
    /// Vertex rays of the first tick that start outside their chunk's solid-behind box and would meet
    /// it from behind first beyond their exit distance, within the solid reach: the rays whose
    /// contact the solid-behind box withholds.
    outside_behind: usize,
}

/// The rays of `inputs` (body as shape 1, chunk as shape 2) that [`Counts::outside_behind`] counts.
fn outside_behind(inputs: &[PairInput], params: &RtcdParams) -> usize {
    let mut n = 0;
    for p in inputs {
        let (body, chunk) = (p.mesh1, p.mesh2);
        let (Some(reach), Some(behind)) =
            (solid_reach(body, chunk, params), solid_behind_box(body, chunk, params))
        else {
            continue;
        };
        let body_to_chunk = p.pos12.inverse();
        for (v, (q, nrm)) in body.positions().iter().zip(body.normals()).enumerate() {
            let ray = Ray::new(body_to_chunk.transform_point(*q), body_to_chunk.transform_vector(-*nrm));
            if behind.contains(ray.origin) {
                continue;
            }
            let hit = params.tracer.trace_line(chunk, &ray, 0.0, reach, NO_SKIP).forward;
            n += usize::from(hit.is_some_and(|h| h.from_inside && h.t > body.exit_distances()[v]));
        }
    }
    n
}

/// `placed` bodies (mesh index, pose) paired with the chunks of a wavy terrain near them, 40 ticks
/// of small random motion, on both backends.
fn agree(
    name: &str,
    bodies: &[RtcdMesh],
    surface: fn(f32, f32) -> f32,
    chunk_triangles: usize,
    place: impl Fn(&mut rand_pcg::Pcg64, usize) -> Pose,
) -> Counts {
    let d = common::device();
    let (p, i) = terrain(36, 18.0, surface);
    let level = LevelMesh::with_chunk_triangles("terrain", &p, &i, chunk_triangles).unwrap();
    let mut refs: Vec<&RtcdMesh> = bodies.iter().collect();
    refs.extend(level.chunks().iter().map(|c| &**c));
    let params = RtcdParams::from_meshes(&refs);
    let mut r = common::rng(11);
    let placed: Vec<(usize, Pose)> = (0..30)
        .map(|_| {
            let m = r.random_range(0..bodies.len());
            (m, place(&mut r, m))
        })
        .collect();
    let mut cpu = NarrowPhase::new(params).unwrap();
    let mut gpu = GpuNarrowPhase::new(&d.device, &d.queue, params).unwrap();
    let opts = StepOptions { keep_contacts: true, prediction_distance: 0.02, ..Default::default() };
    let mut counts =
        Counts { agreement: common::FeatureAgreement::default(), pairs: 0, deep: 0, outside_behind: 0 };
    let mut chunks = Vec::new();
    for tick in 0..40 {
        let t = tick as f32;
        let mut inputs: Vec<PairInput> = Vec::new();
        let mut owners = Vec::new();
        for (k, &(m, pose)) in placed.iter().enumerate() {
            let wobble =
                Vec3::new((0.1 * t + k as f32).sin(), (0.07 * t).cos() - 1.0, (0.05 * t).sin()) * 0.005;
            let turn = Quat::from_rotation_y(0.002 * t) * Quat::from_rotation_x(0.005 * (0.09 * t).sin());
            let body = Pose::new(pose.translation + wobble, pose.rotation * turn);
            chunks.clear();
            level.chunks_overlapping(&bodies[m].aabb().transformed(&body).extended(0.05), &mut chunks);
            for &c in &chunks {
                // Shape 1 the body, shape 2 the chunk (the level's frame is the world).
                inputs.push(PairInput::new(
                    PairKey::new(k as u64, 1000 + c as u64),
                    &bodies[m],
                    &level.chunks()[c as usize],
                    body.inverse(),
                ));
                owners.push(m);
            }
        }
        counts.pairs += inputs.len();
        if tick == 0 {
            counts.outside_behind = outside_behind(&inputs, &params);
        }
        let c = cpu.step(&inputs, &opts);
        let g = gpu.step(&inputs, &opts).unwrap();
        // The results came back from the device: its counts and rays were mapped back.
        assert!(
            g.metrics.readback_bytes > 0 && g.metrics.device_wait.is_some(),
            "no readback from {}",
            d.info.name
        );
        for ((cp, gp), &m) in c.pairs.iter().zip(&g.pairs).zip(&owners) {
            counts.agreement.add(&cp.contacts, &gp.contacts, |_| true);
            let exits = bodies[m].exit_distances();
            counts.deep += cp
                .contacts
                .iter()
                .filter(|c| matches!(c.fid1, FeatureId::Vertex(v) if -c.dist > exits[v as usize]))
                .count();
        }
    }
    let common::FeatureAgreement { features, worst, .. } = counts.agreement;
    println!(
        "{name}: {} pair-ticks, {features} contact features ({} deeper than their exit distance), {} rays outside the solid-behind boxes, {:.3} % agree, worst depth {worst:.2e}",
        counts.pairs,
        counts.deep,
        counts.outside_behind,
        100.0 * counts.agreement.share()
    );
    counts
}

/// A torus, a blob and a low-poly box.
fn concave_bodies() -> [RtcdMesh; 3] {
    let (bv, bi) = shapes::cuboid(Vec3::new(0.5, 0.2, 0.35));
    [common::asset("torus_900"), common::asset("blob_900"), RtcdMesh::new("box", &bv, &bi).unwrap()]
}

/// A pose of body `m` at a random place and orientation, its lowest point sunk a random depth in
/// `sink` under `surface`.
fn sunk(
    bodies: &[RtcdMesh],
    surface: fn(f32, f32) -> f32,
    sink: std::ops::Range<f32>,
) -> impl Fn(&mut rand_pcg::Pcg64, usize) -> Pose + '_ {
    move |r, m| {
        let rot = common::random_rotation(r);
        let (x, z) = (r.random_range(-7.0..7.0), r.random_range(-7.0..7.0));
        let lowest = bodies[m].positions().iter().map(|q| (rot * *q).y).fold(f32::INFINITY, f32::min);
        let y = surface(x, z) - lowest - r.random_range(sink.clone());
        Pose::new(Vec3::new(x, y, z), rot)
    }
}

#[test]
fn body_chunk_pairs_agree_with_the_cpu() {
    let bodies = concave_bodies();
    // Each body: its lowest point sunk 0-8 cm under the terrain.
    let counts = agree("body-chunk pairs", &bodies, height, 128, sunk(&bodies, height, 0.0..0.08));
    let features = counts.agreement.features;
    assert!(features > 2000, "too few contacts to compare: {features}");
    assert!(counts.agreement.share() >= 0.999, "{:.3} % of contacts agree", 100.0 * counts.agreement.share());
}

/// Thin and small bodies sunk deeper than their thickness under the terrain (1 cm plates of 1 m and
/// 0.5 m, tilted; 3 cm pebbles), whose vertices' rays leave them before they reach the surface:
/// their contacts come from the chunks' solid reach, on both backends alike.
#[test]
fn deep_thin_bodies_agree_with_the_cpu() {
    let plate = |side: f32| {
        let (v, i) = shapes::cuboid(Vec3::new(0.5 * side, 0.005, 0.5 * side));
        RtcdMesh::new(format!("plate {side} m x 1 cm"), &v, &i).unwrap()
    };
    let (pv, pi) = shapes::icosphere(0.03, 1);
    let bodies = [plate(1.0), plate(0.5), RtcdMesh::new("pebble", &pv, &pi).unwrap()];
    // Each body: tilted by up to 0.3 rad (plates) or turned at random (pebbles), its centre 2-8 cm
    // under the terrain.
    let counts = agree("deep thin bodies", &bodies, height, 128, |r, m| {
        let rot = if m < 2 {
            Quat::from_rotation_y(r.random_range(0.0..6.3))
                * Quat::from_rotation_x(r.random_range(-0.3..0.3))
                * Quat::from_rotation_z(r.random_range(-0.3..0.3))
        } else {
            common::random_rotation(r)
        };
        let (x, z) = (r.random_range(-7.0..7.0), r.random_range(-7.0..7.0));
        Pose::new(Vec3::new(x, height(x, z) - r.random_range(0.02..0.08), z), rot)
    });
    let features = counts.agreement.features;
    assert!(features > 2000, "too few contacts to compare: {features}");
    assert!(counts.deep > 1000, "too few deep contacts: {}", counts.deep);
    assert!(counts.agreement.share() >= 0.999, "{:.3} % of contacts agree", 100.0 * counts.agreement.share());
}

/// Bodies sunk 0-40 cm under steep hills cut into 32-triangle chunks: many of their vertices lie
/// beside or above a chunk they are paired with, outside its solid-behind box, and their rays would
/// meet it from behind beyond their exit distance; both backends withhold those contacts alike.
#[test]
fn bodies_under_steep_hills_agree_with_the_cpu() {
    let bodies = concave_bodies();
    let counts = agree("bodies under steep hills", &bodies, steep, 32, sunk(&bodies, steep, 0.0..0.4));
    let features = counts.agreement.features;
    assert!(features > 2000, "too few contacts to compare: {features}");
    assert!(
        counts.outside_behind > 20,
        "too few rays outside the solid-behind boxes: {}",
        counts.outside_behind
    );
    assert!(counts.agreement.share() >= 0.999, "{:.3} % of contacts agree", 100.0 * counts.agreement.share());
}
