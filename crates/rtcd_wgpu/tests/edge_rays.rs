//! The device's edge rays (`shaders/edge_rays.wgsl`, Mochi 2024 §3.4) against the host's
//! `rtcd::detect::edge_crossing`, ray by ray: every edge of one mesh traced against another at
//! seeded random poses where they overlap, on content of every kind (boxes, an exact box, a plate
//! 1 % thick, low-poly rings, a bracket, a flat tetrahedron, blobs; at 1 cm, 1 m and 1 km), with
//! both tracers.
//!
//! Tolerances: the kind (apart, touching, crossing) and, for a crossing, the triangle and whether
//! the edge passes right through agree on at least 99.9 % of the rays (the two sides round a
//! relative pose's products differently, so a line through a triangle's edge may take either
//! triangle); where both cross with the same triangle, the point agrees within 1e-4 of the meshes'
//! size, the normal within 1e-4, the depth within 1e-4 of the size. The sample must hold at least
//! 1,500 crossings, 150 of them right through.

mod common;

use glam::{Quat, Vec3};
use rand::Rng;
use rtcd::{
    BackendError, Pose, RtcdMesh, RtcdParams, TracerKind,
    detect::{EdgeTest, edge_crossing},
    shapes,
};
use rtcd_wgpu::{GpuNarrowPhase, edge_rays::EdgeRay};

fn mesh(name: &str, (v, i): shapes::MeshData) -> RtcdMesh {
    RtcdMesh::new(name, &v, &i).unwrap()
}

fn scaled(name: &str, (v, i): shapes::MeshData, s: f32) -> RtcdMesh {
    let v: Vec<Vec3> = v.iter().map(|p| *p * s).collect();
    RtcdMesh::new(name, &v, &i).unwrap()
}

fn backend(meshes: &[&RtcdMesh], tracer: TracerKind) -> GpuNarrowPhase {
    let d = common::device();
    let params = RtcdParams { tracer, ..RtcdParams::from_meshes(meshes) };
    GpuNarrowPhase::new(&d.device, &d.queue, params).unwrap()
}

/// Two unit cubes crossed edge on edge at 90° (`rtcd::detect::edge`'s analytic case): the upper
/// cube's bottom edge `delta` below the lower one's ridge gives one crossing, normal +y in the
/// world, depth `delta`, on the device as on the host.
#[test]
fn crossed_cubes_give_the_edge_contact_on_the_device() {
    let cube = mesh("cube", shapes::cuboid(Vec3::splat(0.5)));
    let mut gpu = backend(&[&cube], TracerKind::Bvh);
    let h = 0.5 * 2f32.sqrt();
    for delta in [0.01f32, 0.05, 0.2] {
        let lower = Pose::new(Vec3::ZERO, Quat::from_rotation_z(std::f32::consts::FRAC_PI_4));
        let upper = Pose::new(
            Vec3::new(0.0, 2.0 * h - delta, 0.0),
            Quat::from_rotation_x(std::f32::consts::FRAC_PI_4),
        );
        let from_to = lower.inv_mul(&upper);
        let rays: Vec<EdgeRay> = (0..cube.edges().len() as u32)
            .map(|edge| EdgeRay { from: &cube, to: &cube, from_to, edge })
            .collect();
        let found: Vec<_> = gpu
            .edge_crossings(&rays)
            .unwrap()
            .into_iter()
            .filter_map(|t| match t {
                EdgeTest::Crossing(c) => Some(c),
                _ => None,
            })
            .collect();
        assert_eq!(found.len(), 1, "delta {delta}: {found:?}");
        let n = lower.rotation * found[0].normal;
        assert!((n - Vec3::Y).length() < 1e-5, "{n:?}");
        assert!((found[0].depth - delta).abs() < 1e-5, "{} vs {delta}", found[0].depth);
    }
}

/// A plank across a ring (`rtcd::detect::edge`'s analytic case): its four long edges pass through
/// the ring's tube on both sides of the hole, so each line is inside the body in two stretches
/// with the hole between. Each is one crossing, up out of the tube, on the device as on the host.
#[test]
fn a_plank_across_a_ring_crosses_its_tube_on_the_device() {
    let ring = mesh("ring", shapes::torus(1.0, 0.3, 48, 24));
    let plank = mesh("plank", shapes::cuboid(Vec3::new(2.0, 0.01, 0.05)));
    for tracer in [TracerKind::Bvh, TracerKind::BruteForce] {
        let mut gpu = backend(&[&ring, &plank], tracer);
        let from_to = Pose::from_translation(Vec3::new(0.02, 0.26, 0.03));
        let rays: Vec<EdgeRay> = (0..plank.edges().len() as u32)
            .map(|edge| EdgeRay { from: &plank, to: &ring, from_to, edge })
            .collect();
        let device = gpu.edge_crossings(&rays).unwrap();
        let mut crossings = 0;
        for (k, d) in device.iter().enumerate() {
            let host = edge_crossing(&plank, &ring, &from_to, k as u32, tracer);
            match (d, host) {
                (EdgeTest::Crossing(d), EdgeTest::Crossing(h)) => {
                    crossings += 1;
                    assert!(d.normal.y > 0.7, "{tracer:?}: edge {k} leaves by {}", d.normal);
                    assert!((d.depth - h.depth).abs() < 1e-4, "{tracer:?}: edge {k}: {d:?} vs {h:?}");
                    assert!((d.normal - h.normal).length() < 1e-4, "{tracer:?}: edge {k}: {d:?} vs {h:?}");
                }
                (d, h) => assert_eq!(
                    std::mem::discriminant(d),
                    std::mem::discriminant(&h),
                    "{tracer:?}: edge {k}: device {d:?}, host {h:?}"
                ),
            }
        }
        assert_eq!(crossings, 4, "{tracer:?}: {device:?}");
    }
}

#[derive(Default)]
struct Tally {
    rays: usize,
    agree: usize,
    crossings: usize,
    through: usize,
    worst: [f32; 3],
}

fn compare(
    gpu: &mut GpuNarrowPhase,
    from: &RtcdMesh,
    to: &RtcdMesh,
    poses: &[Pose],
    tracer: TracerKind,
    t: &mut Tally,
) {
    let size = from.aabb().extents().max_element().max(to.aabb().extents().max_element());
    let rays: Vec<EdgeRay> = poses
        .iter()
        .flat_map(|&from_to| {
            (0..from.edges().len() as u32).map(move |edge| EdgeRay { from, to, from_to, edge })
        })
        .collect();
    let device = gpu.edge_crossings(&rays).unwrap();
    assert_eq!(device.len(), rays.len());
    for (r, g) in rays.iter().zip(device) {
        let h = edge_crossing(r.from, r.to, &r.from_to, r.edge, tracer);
        t.rays += 1;
        match (&h, &g) {
            (EdgeTest::Crossing(a), EdgeTest::Crossing(b)) => {
                t.crossings += 1;
                t.through += usize::from(a.through.is_some());
                if a.triangle != b.triangle || a.through.is_some() != b.through.is_some() {
                    continue;
                }
                let errs = [
                    (a.point - b.point).length() / size,
                    (a.normal - b.normal).length(),
                    (a.depth - b.depth).abs() / size,
                ];
                for (w, e) in t.worst.iter_mut().zip(errs) {
                    *w = w.max(e);
                }
                if errs.iter().all(|&e| e <= 1e-4) {
                    t.agree += 1;
                }
            }
            _ if std::mem::discriminant(&h) == std::mem::discriminant(&g) => t.agree += 1,
            _ => {}
        }
    }
}

/// Every edge of each mesh against each other mesh, at random poses where their boxes overlap.
#[test]
fn device_edge_rays_agree_with_the_host_on_generated_content() {
    let meshes = vec![
        mesh("box", shapes::cuboid(Vec3::new(0.5, 0.3, 0.4))),
        RtcdMesh::cuboid("exact box", Vec3::new(0.6, 0.2, 0.3)).unwrap(),
        mesh("plate 1 %", shapes::cuboid(Vec3::new(0.5, 0.005, 0.5))),
        mesh("ring 8 x 4", shapes::torus(0.4, 0.1, 8, 4)),
        mesh("bracket", shapes::u_bracket(0.8, 0.6, 0.12, 0.5)),
        mesh("blob", shapes::star_blob(0.5, 12, 6, 3, 0.3, 5)),
        {
            let (v, i) = (
                vec![
                    Vec3::new(0.6, 0.0, 0.0),
                    Vec3::new(-0.3, 0.0, 0.52),
                    Vec3::new(-0.3, 0.0, -0.52),
                    Vec3::new(0.0, 0.01, 0.0),
                ],
                vec![0, 1, 2, 0, 3, 1, 1, 3, 2, 2, 3, 0],
            );
            RtcdMesh::new("flat tetrahedron", &v, &i).unwrap()
        },
    ];
    let mut r = common::rng(23);
    for tracer in [TracerKind::Bvh, TracerKind::BruteForce] {
        let refs: Vec<&RtcdMesh> = meshes.iter().collect();
        let mut gpu = backend(&refs, tracer);
        let mut t = Tally::default();
        for from in &meshes {
            for to in &meshes {
                let reach = 0.5 * (from.aabb().extents().length() + to.aabb().extents().length());
                let poses: Vec<Pose> = (0..20)
                    .map(|_| {
                        let dir = Vec3::new(
                            r.random_range(-1.0..1.0),
                            r.random_range(-1.0..1.0),
                            r.random_range(-1.0..1.0),
                        )
                        .normalize_or(Vec3::Y);
                        Pose::new(dir * reach * r.random_range(0.0..0.6), common::random_rotation(&mut r))
                    })
                    .collect();
                compare(&mut gpu, from, to, &poses, tracer, &mut t);
            }
        }
        // The same content at 1 cm and 1 km.
        for s in [0.01f32, 1000.0] {
            let ring = scaled("ring", shapes::torus(0.4, 0.1, 8, 4), s);
            let bracket = scaled("bracket", shapes::u_bracket(0.8, 0.6, 0.12, 0.5), s);
            let poses: Vec<Pose> = (0..12)
                .map(|_| {
                    Pose::new(
                        Vec3::new(r.random_range(-0.4..0.4), r.random_range(-0.3..0.3), 0.0) * s,
                        common::random_rotation(&mut r),
                    )
                })
                .collect();
            compare(&mut gpu, &ring, &bracket, &poses, tracer, &mut t);
            compare(&mut gpu, &bracket, &ring, &poses, tracer, &mut t);
        }
        let share = t.agree as f64 / t.rays as f64;
        println!(
            "{tracer:?}: {} rays, {} crossings ({} right through), {:.4} % agree; worst point {:.2e}, normal {:.2e}, depth {:.2e} (of the size)",
            t.rays,
            t.crossings,
            t.through,
            100.0 * share,
            t.worst[0],
            t.worst[1],
            t.worst[2]
        );
        assert!(
            t.crossings >= 1500 && t.through >= 150,
            "too few crossings in the sample: {} ({} through)",
            t.crossings,
            t.through
        );
        assert!(share >= 0.999, "{tracer:?}: {:.4} % of the rays agree", 100.0 * share);
    }
}

/// An edge index past the mesh's edges is refused, and nothing runs.
#[test]
fn an_edge_out_of_its_mesh_is_an_error() {
    let cube = mesh("cube", shapes::cuboid(Vec3::splat(0.5)));
    let mut gpu = backend(&[&cube], TracerKind::Bvh);
    let ray = EdgeRay { from: &cube, to: &cube, from_to: Pose::IDENTITY, edge: cube.edges().len() as u32 };
    match gpu.edge_crossings(&[ray]) {
        Err(BackendError::InvalidInput(m)) => assert!(m.contains("edge"), "{m}"),
        other => panic!("{other:?}"),
    }
    assert!(gpu.edge_crossings(&[]).unwrap().is_empty());
}

/// A call refused for its last ray places no mesh: meshes already on the device keep their
/// geometry when the store would have grown for a new, larger one (a step on them still agrees
/// with the CPU backend).
#[test]
fn a_refused_call_leaves_the_meshes_on_the_device_intact() {
    use rtcd::{NarrowPhase, NarrowPhaseBackend, PairInput, PairKey, StepOptions};
    let small = mesh("small", shapes::icosphere(0.5, 2));
    let big = mesh("big", shapes::icosphere(0.5, 5));
    let params = RtcdParams::from_meshes(&[&small]);
    let d = common::device();
    let mut gpu = GpuNarrowPhase::new(&d.device, &d.queue, params).unwrap();
    let mut cpu = NarrowPhase::new(params).unwrap();
    let pose = Pose::new(Vec3::new(0.0, 0.9, 0.0), Quat::from_rotation_x(0.3));
    let pairs = [PairInput::new(PairKey::new(1, 2), &small, &small, pose)];
    let opts = StepOptions::default();
    gpu.step(&pairs, &opts).unwrap();
    let rays = [
        EdgeRay { from: &big, to: &small, from_to: Pose::IDENTITY, edge: 0 },
        EdgeRay { from: &big, to: &small, from_to: Pose::IDENTITY, edge: u32::MAX },
    ];
    assert!(matches!(gpu.edge_crossings(&rays), Err(BackendError::InvalidInput(_))));
    assert_eq!(gpu.mesh_count(), 1, "the refused call placed no mesh");
    let opts = StepOptions { force_standard: true, ..opts };
    let g = NarrowPhaseBackend::step(&mut gpu, &pairs, &opts).unwrap();
    let c = NarrowPhaseBackend::step(&mut cpu, &pairs, &opts).unwrap();
    assert!(!c.pairs[0].manifolds.is_empty());
    assert_eq!(g.pairs[0].manifolds, c.pairs[0].manifolds);
}
