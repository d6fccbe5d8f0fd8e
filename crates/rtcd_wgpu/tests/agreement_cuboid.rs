//! The GPU kernels' exact box contacts agree with the CPU backend's, on seeded random poses of
//! concave meshes and a thin plate against boxes ([`RtcdMesh::cuboid`]), through standard steps
//! (brute force and BVH) and iterative ones, with prediction.
//!
//! Tolerances: the vertices of the mesh against the box give the same outcome (contact or
//! prediction) on the same face on both backends, every one of them, except a vertex within 1e-5 m
//! of a decision (the face's plane, `culling_dist`, a tie between two faces, its inward ray's exit
//! from the box against its exit distance, or a tie between two faces that ray may leave through),
//! where f32 rounding of its transformed position may decide either way; their re-projected depths
//! match within 1e-4 relative, |Δdepth| ≤ 1e-4 · max(depth, 0.01); the speculative contacts
//! (predictions whose opposite ray meets the box within `culling_dist`, within the prediction
//! distance) are the same features on both, but for at most 0.1 % of them (where rounding decides
//! whether that ray gets there). The box's corners cast rays into the mesh as any mesh's vertices,
//! compared as in `agreement.rs` (≥ 99.9 % of rays agree). The GPU ran each step: its counters come
//! back from the device.

mod common;

use glam::Vec3;
use rand::Rng;
use rtcd::{
    NarrowPhase, PairInput, PairKey, Pose, RtcdMesh, RtcdParams, StepMode, StepOptions, TracerKind,
    detect::{box_exit_face, nearest_box_face},
    narrow_phase::RayOutcome,
    shapes,
};
use rtcd_wgpu::GpuNarrowPhase;

/// Within this distance of a decision, rounding may decide either way.
const DECISION_MARGIN: f32 = 1e-5;

struct Scene {
    meshes: Vec<RtcdMesh>,
    boxes: Vec<RtcdMesh>,
    /// (mesh, box, pose of the box in the mesh's frame, mesh is shape 1)
    pairs: Vec<(usize, usize, Pose, bool)>,
}

fn scene(pairs: usize, seed: u64) -> Scene {
    let (v, i) = shapes::cuboid(Vec3::new(0.5, 0.004, 0.4));
    let meshes = vec![
        common::asset("blob_900"),
        common::asset("torus_900"),
        common::asset("bent_tube_896"),
        RtcdMesh::new("plate", &v, &i).unwrap(),
    ];
    let boxes = [Vec3::new(2.0, 0.5, 2.0), Vec3::new(0.3, 0.25, 0.35), Vec3::new(1.0, 0.05, 0.7)]
        .iter()
        .map(|&h| RtcdMesh::cuboid(format!("box {h}"), h).unwrap())
        .collect();
    let mut r = common::rng(seed);
    let pairs = (0..pairs)
        .map(|k| {
            let (m, b) = (r.random_range(0..4), r.random_range(0..3));
            let boxes: &Vec<RtcdMesh> = &boxes;
            let half = boxes[b].cuboid_half_extents().unwrap();
            // The mesh's centre near a random point of the box's surface, the box turned at random.
            let dir =
                Vec3::new(r.random_range(-1.0..1.0), r.random_range(-1.0..1.0), r.random_range(-1.0..1.0));
            let on_surface = dir / (dir / half).abs().max_element();
            let centre = on_surface + dir.normalize_or(Vec3::Y) * r.random_range(-0.3..0.2);
            // Box in the mesh's frame: the inverse of the mesh in the box's frame.
            let mesh_in_box = Pose::new(centre, common::random_rotation(&mut r));
            (m, b, mesh_in_box.inverse(), k % 2 == 0)
        })
        .collect();
    Scene { meshes, boxes, pairs }
}

/// The pose of pair `k` at `tick` (box in the mesh's frame): a small random drift.
fn pose_at(scene: &Scene, k: usize, tick: usize) -> Pose {
    let base = scene.pairs[k].2;
    let t = tick as f32;
    let f = 0.03 + 0.01 * (k % 5) as f32;
    let d = Vec3::new((t * f).sin(), (t * f * 0.7).cos() - 1.0, (t * f * 1.3).sin()) * 0.01;
    Pose::new(base.translation + d, base.rotation * glam::Quat::from_rotation_y(0.003 * t))
}

#[derive(Default, Debug)]
struct Counts {
    box_vertices: u64,
    box_agree: u64,
    near_decision: u64,
    box_contacts: u64,
    rays: u64,
    rays_agree: u64,
    worst_rel_depth: f64,
    iterative: u64,
    speculative: u64,
    speculative_mismatch: u64,
}

fn compare(tracer: TracerKind, force_standard: bool, seed: u64) -> Counts {
    let d = common::device();
    let s = scene(40, seed);
    let refs: Vec<&RtcdMesh> = s.meshes.iter().collect();
    let params = RtcdParams { tracer, ..RtcdParams::from_meshes(&refs) };
    let mut cpu = NarrowPhase::new(params).unwrap();
    let mut gpu = GpuNarrowPhase::new(&d.device, &d.queue, params).unwrap();
    let opts = StepOptions {
        record_rays: true,
        keep_contacts: true,
        force_standard,
        prediction_distance: 0.02,
        ..Default::default()
    };
    let mut c = Counts::default();
    for tick in 0..60 {
        let pairs: Vec<PairInput> = s
            .pairs
            .iter()
            .enumerate()
            .map(|(k, &(m, b, _, mesh_first))| {
                let key = PairKey::new(2 * k as u64, 2 * k as u64 + 1);
                let pose = pose_at(&s, k, tick);
                if mesh_first {
                    PairInput::new(key, &s.meshes[m], &s.boxes[b], pose)
                } else {
                    PairInput::new(key, &s.boxes[b], &s.meshes[m], pose.inverse())
                }
            })
            .collect();
        let co = cpu.step(&pairs, &opts);
        let go = gpu.step(&pairs, &opts).unwrap();
        // The device ran the step: its ray counters are read back from it.
        assert!(go.metrics.standard_rays + go.metrics.iterative_rays + go.metrics.predictive_rays > 0);
        assert_eq!(go.metrics.standard_rays, co.metrics.standard_rays, "tick {tick}");
        for (k, ((cp, gp), input)) in co.pairs.iter().zip(&go.pairs).zip(&pairs).enumerate() {
            assert_eq!(cp.mode, gp.mode, "tick {tick} pair {k}");
            c.iterative += u64::from(cp.mode == StepMode::Iterative);
            let mesh_first = s.pairs[k].3;
            // The direction whose vertices are the mesh's: 0 when the mesh is shape 1.
            let box_dir_from_shape2 = !mesh_first;
            let (mesh, bx) = if mesh_first { (input.mesh1, input.mesh2) } else { (input.mesh2, input.mesh1) };
            let half = bx.cuboid_half_extents().unwrap();
            // The mesh in the box's frame.
            let mesh_to_box = if mesh_first { input.pos12.inverse() } else { input.pos12 };
            let (cr, gr) = (common::kept_rays(&cp.rays), common::kept_rays(&gp.rays));
            for key in common::union_keys(&cr, &gr) {
                let same =
                    matches!((cr.get(key), gr.get(key)), (Some(x), Some(y)) if x.0 == y.0 && x.1 == y.1);
                if key.0 == box_dir_from_shape2 {
                    c.box_vertices += 1;
                    if same {
                        c.box_agree += 1;
                        continue;
                    }
                    // Which decisions the CPU's position is near.
                    let p = mesh_to_box.transform_point(mesh.positions()[key.1 as usize]);
                    let s = p.abs() - half;
                    let f = nearest_box_face(half, p);
                    let mut sorted = s.to_array();
                    sorted.sort_by(f32::total_cmp);
                    // The inward ray's exit from the box against the vertex's exit distance, and
                    // ties between the axes it may leave through.
                    let dir = mesh_to_box.transform_vector(-mesh.normals()[key.1 as usize]);
                    let exit = mesh.exit_distances()[key.1 as usize];
                    let mut ts: Vec<f32> = (0..3)
                        .filter(|&a| dir[a] != 0.0)
                        .map(|a| (half[a].copysign(dir[a]) - p[a]) / dir[a])
                        .collect();
                    ts.sort_by(f32::total_cmp);
                    let ray_near = box_exit_face(half, p, dir).is_some_and(|(_, t)| {
                        (t - exit).abs() <= DECISION_MARGIN * t.max(1.0)
                            || ts.get(1).is_some_and(|&t1| t1 - ts[0] <= DECISION_MARGIN * t.max(1.0))
                    });
                    let near = f.distance.abs() <= DECISION_MARGIN
                        || (f.distance - params.culling_dist).abs() <= DECISION_MARGIN
                        || sorted[2] - sorted[1] <= DECISION_MARGIN
                        || p.abs().min_element() <= DECISION_MARGIN
                        || ray_near;
                    assert!(
                        near,
                        "tick {tick} pair {k} vertex {}: cpu {:?} gpu {:?} (signed distances {s:?})",
                        key.1,
                        cr.get(key),
                        gr.get(key)
                    );
                    c.near_decision += 1;
                } else {
                    c.rays += 1;
                    c.rays_agree += u64::from(same);
                }
            }
            // Speculative contacts (predictions that face the box, within the prediction distance).
            let speculative = |cs: &[rtcd::ContactCandidate]| -> std::collections::BTreeSet<(u64, u64)> {
                cs.iter().filter(|c| c.dist > 0.0).map(|c| (c.fid1.packed(), c.fid2.packed())).collect()
            };
            let (cs, gs) = (speculative(&cp.contacts), speculative(&gp.contacts));
            c.speculative += cs.len() as u64;
            c.speculative_mismatch += cs.symmetric_difference(&gs).count() as u64;
            // Re-projected depths of the contacts both found on the same features.
            c.worst_rel_depth =
                c.worst_rel_depth.max(common::worst_relative_depth(&cp.contacts, &gp.contacts));
            c.box_contacts += cr
                .iter()
                .filter(|(key, v)| key.0 == box_dir_from_shape2 && v.0 == RayOutcome::Contact)
                .count() as u64;
        }
    }
    c
}

fn check(name: &str, tracer: TracerKind, force_standard: bool, seed: u64) -> Counts {
    let c = compare(tracer, force_standard, seed);
    println!("{name}: {c:?}");
    assert!(c.box_contacts > 2_000, "{name}: the meshes must be in the boxes ({} contacts)", c.box_contacts);
    assert_eq!(c.box_agree + c.near_decision, c.box_vertices, "{name}");
    assert!(c.near_decision * 10_000 <= c.box_vertices, "{name}: {} near a decision", c.near_decision);
    assert!(c.rays_agree as f64 >= 0.999 * c.rays as f64, "{name}: {} of {} rays", c.rays_agree, c.rays);
    assert!(c.worst_rel_depth <= 1e-4, "{name}: worst relative Δdepth {}", c.worst_rel_depth);
    assert!(c.speculative > 1_000, "{name}: {} speculative contacts", c.speculative);
    assert!(c.speculative_mismatch * 1_000 <= c.speculative, "{name}: {c:?}");
    c
}

#[test]
fn standard_kernels_agree_on_boxes() {
    check("trace_standard (brute force)", TracerKind::BruteForce, true, 3);
    check("trace_standard (BVH)", TracerKind::Bvh, true, 4);
}

#[test]
fn iterative_kernel_agrees_on_boxes() {
    let c = check("walk_iterative (+ BVH standard steps)", TracerKind::Bvh, false, 5);
    assert!(c.iterative > 1_000, "most pair-ticks must be iterative: {}", c.iterative);
}
