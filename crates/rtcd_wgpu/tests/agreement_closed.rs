//! Both backends agree on thin and small bodies pressed deeper than their thickness into closed
//! meshes with [`rtcd::RtcdParams::closed_reach`]: 1 cm plates (1 m and 0.5 m, tilted), thin rods
//! and 3 cm pebbles, their centres 2-8 cm under the top of a closed slab (the 12-triangle box mesh,
//! with both standard tracers, and a closed slab whose top is a wavy grid), 40 ticks of small random
//! motion. The plates' and rods' deepest vertices' rays leave them before they reach the slab's top
//! face: those contacts come from the closed reach (`rtcd::detect::solid_reach`), and the vertices
//! on the far side of a sunk body, whose rays go on down to the slab's bottom face within the
//! reach, are left out as not the nearer way out (`rtcd::detect::nearer_way_out`), on both backends
//! alike; the pebbles, thicker than the pair's culling distance, keep Hermann's exit distance
//! (`rtcd::detect::vertex_reach`).
//!
//! Tolerances: every contact (vertex rays both ways, edge contacts) of either backend is found by
//! the other on ≥ 99.9 % of the pair-ticks' features, with the same depth within 1e-5 relative
//! (1e-5 · max(depth, 0.01)); the GPU step must have run on the device (the backend's name is the
//! adapter's).

mod common;

use glam::{Quat, Vec3};
use rand::Rng;
use rtcd::{
    FeatureId, NarrowPhase, PairInput, PairKey, Pose, RtcdMesh, RtcdParams, StepOptions, TracerKind, shapes,
};
use rtcd_wgpu::GpuNarrowPhase;

/// Half width of both slabs.
const HALF: f32 = 5.0;

fn height(x: f32, z: f32) -> f32 {
    0.15 * (0.8 * x).sin() * (0.6 * z + 0.4).cos() + 0.02 * x
}

/// A closed slab over `[-HALF, HALF]^2`: a wavy top grid of `n x n` cells ([`height`]), a flat
/// bottom at `y = bottom` and four side walls, each face wound outward.
fn wavy_slab(n: u32, bottom: f32) -> RtcdMesh {
    let coord = |i: u32| 2.0 * HALF * (i as f32 / n as f32 - 0.5);
    let mut p: Vec<Vec3> = Vec::new();
    let mut idx: Vec<u32> = Vec::new();
    // Top and bottom grids: (n + 1)^2 vertices each.
    for y in [None, Some(bottom)] {
        for j in 0..=n {
            for i in 0..=n {
                let (x, z) = (coord(i), coord(j));
                p.push(Vec3::new(x, y.unwrap_or_else(|| height(x, z)), z));
            }
        }
    }
    let row = n + 1;
    let top = |i: u32, j: u32| j * row + i;
    let low = |i: u32, j: u32| row * row + j * row + i;
    for j in 0..n {
        for i in 0..n {
            // Counter-clockwise from above on top, from below on the bottom.
            idx.extend([
                top(i, j),
                top(i, j + 1),
                top(i + 1, j),
                top(i + 1, j),
                top(i, j + 1),
                top(i + 1, j + 1),
            ]);
            idx.extend([
                low(i, j),
                low(i + 1, j),
                low(i, j + 1),
                low(i + 1, j),
                low(i + 1, j + 1),
                low(i, j + 1),
            ]);
        }
    }
    // Walls along the boundary, walked clockwise seen from above, the outside on the left.
    let mut boundary: Vec<(u32, u32)> = Vec::new();
    boundary.extend((0..n).map(|i| (i, 0)));
    boundary.extend((0..n).map(|j| (n, j)));
    boundary.extend((0..n).map(|i| (n - i, n)));
    boundary.extend((0..n).map(|j| (0, n - j)));
    for k in 0..boundary.len() {
        let (a, b) = (boundary[k], boundary[(k + 1) % boundary.len()]);
        let (ta, tb, la, lb) = (top(a.0, a.1), top(b.0, b.1), low(a.0, a.1), low(b.0, b.1));
        idx.extend([ta, tb, la, tb, lb, la]);
    }
    let mesh = RtcdMesh::new("closed wavy slab", &p, &idx).unwrap();
    assert!(mesh.is_closed(), "{:?}", mesh.report());
    assert!(mesh.report().notes().is_empty(), "{:?}", mesh.report().notes());
    mesh
}

/// What [`agree`] counted.
struct Counts {
    agreement: common::FeatureAgreement,
    pairs: usize,
    /// CPU contacts of a body vertex deeper than the vertex's exit distance (found through the
    /// closed reach).
    deep: usize,
    /// Body vertices under the slab's top whose outward normal points up: those whose rays run on
    /// down through the slab, left out as not the nearer way out.
    far_side: usize,
}

/// 30 bodies placed by `place` (mesh index, pose) in `slab` (world frame; `surface` its top
/// height), 40 ticks of small random motion, on both backends; every other pair has the slab as
/// shape 1.
fn agree(
    name: &str,
    tracer: TracerKind,
    slab: &RtcdMesh,
    surface: impl Fn(f32, f32) -> f32,
    bodies: &[RtcdMesh],
    place: impl Fn(&mut rand_pcg::Pcg64, usize) -> Pose,
) -> Counts {
    let d = common::device();
    let mut refs: Vec<&RtcdMesh> = bodies.iter().collect();
    refs.push(slab);
    let params = RtcdParams { closed_reach: true, tracer, ..RtcdParams::from_meshes(&refs) };
    let mut r = common::rng(12);
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
        Counts { agreement: common::FeatureAgreement::default(), pairs: 0, deep: 0, far_side: 0 };
    for tick in 0..40 {
        let t = tick as f32;
        let mut inputs: Vec<PairInput> = Vec::new();
        for (k, &(m, pose)) in placed.iter().enumerate() {
            let wobble =
                Vec3::new((0.1 * t + k as f32).sin(), (0.07 * t).cos() - 1.0, (0.05 * t).sin()) * 0.005;
            let turn = Quat::from_rotation_y(0.002 * t) * Quat::from_rotation_x(0.005 * (0.09 * t).sin());
            let body = Pose::new(pose.translation + wobble, pose.rotation * turn);
            counts.far_side += bodies[m]
                .positions()
                .iter()
                .zip(bodies[m].normals())
                .filter(|&(p, n)| {
                    let (p, n) = (body.transform_point(*p), body.transform_vector(*n));
                    p.y < surface(p.x, p.z) && n.y > 0.5
                })
                .count();
            // The slab's frame is the world.
            let key = PairKey::new(k as u64, 1000);
            inputs.push(if k % 2 == 0 {
                PairInput::new(key, &bodies[m], slab, body.inverse())
            } else {
                PairInput::new(key, slab, &bodies[m], body)
            });
        }
        counts.pairs += inputs.len();
        let c = cpu.step(&inputs, &opts);
        let g = gpu.step(&inputs, &opts).unwrap();
        // The results came back from the device: its counts and rays were mapped back.
        assert!(
            g.metrics.readback_bytes > 0 && g.metrics.device_wait.is_some(),
            "no readback from {}",
            d.info.name
        );
        for (k, (cp, gp)) in c.pairs.iter().zip(&g.pairs).enumerate() {
            counts.agreement.add(&cp.contacts, &gp.contacts, |_| true);
            let exits = bodies[placed[k].0].exit_distances();
            counts.deep += cp
                .contacts
                .iter()
                .filter(|c| {
                    let (own, other) = if k % 2 == 0 { (c.fid1, c.fid2) } else { (c.fid2, c.fid1) };
                    matches!((own, other), (FeatureId::Vertex(v), FeatureId::Face(_)) if -c.dist > exits[v as usize])
                })
                .count();
        }
    }
    let common::FeatureAgreement { features, worst, .. } = counts.agreement;
    println!(
        "{name}: {} pair-ticks, {features} contact features ({} deeper than their exit distance), \
         {} far-side vertices under the top, {:.3} % agree, worst depth {worst:.2e}",
        counts.pairs,
        counts.deep,
        counts.far_side,
        100.0 * counts.agreement.share()
    );
    counts
}

/// The thin bodies: 1 cm plates of 1 m and 0.5 m, a 60 x 2 x 2 cm rod, a 3 cm pebble.
fn thin_bodies() -> Vec<RtcdMesh> {
    let cuboid = |name: &str, half: Vec3| {
        let (v, i) = shapes::cuboid(half);
        RtcdMesh::new(name, &v, &i).unwrap()
    };
    let (pv, pi) = shapes::icosphere(0.03, 1);
    vec![
        cuboid("plate 1 m x 1 cm", Vec3::new(0.5, 0.005, 0.5)),
        cuboid("plate 0.5 m x 1 cm", Vec3::new(0.25, 0.005, 0.25)),
        cuboid("rod 60 x 2 x 2 cm", Vec3::new(0.3, 0.01, 0.01)),
        RtcdMesh::new("pebble", &pv, &pi).unwrap(),
    ]
}

/// Each body: plates and rods tilted by up to 0.3 rad about a random heading, pebbles turned at
/// random, at a random place, its centre 2-8 cm under the top.
fn sunk(surface: impl Fn(f32, f32) -> f32) -> impl Fn(&mut rand_pcg::Pcg64, usize) -> Pose {
    move |r, m| {
        let rot = if m < 3 {
            Quat::from_rotation_y(r.random_range(0.0..6.3))
                * Quat::from_rotation_x(r.random_range(-0.3..0.3))
                * Quat::from_rotation_z(r.random_range(-0.3..0.3))
        } else {
            common::random_rotation(r)
        };
        let (x, z) = (r.random_range(-3.5..3.5), r.random_range(-3.5..3.5));
        Pose::new(Vec3::new(x, surface(x, z) - r.random_range(0.02..0.08), z), rot)
    }
}

fn assert_agree(counts: &Counts) {
    let features = counts.agreement.features;
    assert!(features > 2000, "too few contacts to compare: {features}");
    assert!(counts.deep > 1000, "too few deep contacts: {}", counts.deep);
    assert!(counts.far_side > 1000, "too few far-side vertices under the top: {}", counts.far_side);
    assert!(counts.agreement.share() >= 0.999, "{:.3} % of contacts agree", 100.0 * counts.agreement.share());
}

/// The slab as the 12-triangle box mesh, 10 x 0.5 x 10, its top at y = 0: the far face is within
/// the plates' reach. Both standard tracers (the BVH and brute force).
#[test]
fn deep_thin_bodies_in_a_box_mesh_agree_with_the_cpu() {
    let (v, i) = shapes::cuboid(Vec3::new(HALF, 0.25, HALF));
    let shifted: Vec<Vec3> = v.iter().map(|p| *p - Vec3::Y * 0.25).collect();
    let slab = RtcdMesh::new("box-mesh slab", &shifted, &i).unwrap();
    assert!(slab.cuboid_half_extents().is_none() && slab.is_closed());
    let flat = |_: f32, _: f32| 0.0;
    for tracer in [TracerKind::Bvh, TracerKind::BruteForce] {
        let name = format!("box-mesh slab, {tracer:?}");
        assert_agree(&agree(&name, tracer, &slab, flat, &thin_bodies(), sunk(flat)));
    }
}

/// The slab as a closed mesh of a wavy 40 x 40 grid over a flat bottom at y = -0.6.
#[test]
fn deep_thin_bodies_in_a_closed_wavy_slab_agree_with_the_cpu() {
    let slab = wavy_slab(40, -0.6);
    assert_agree(&agree("closed wavy slab", TracerKind::Bvh, &slab, height, &thin_bodies(), sunk(height)));
}
