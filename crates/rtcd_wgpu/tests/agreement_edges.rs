//! The edge contacts (Mochi 2024 §3.4's edge rays, `rtcd::detect::pair_edge_contacts`) of both
//! backends agree, on seeded random scenes of low-poly meshes whose edges cross: boxes, an 8 × 4
//! ring and an extruded bracket, 40 pairs overlapping by a random amount, 60 ticks of small random
//! motion. The GPU backend traces the edges on the host from the vertex records it reads back, so
//! the two can differ only where those records do.
//!
//! Tolerances: every edge contact of either backend is found by the other on ≥ 99 % of the
//! pair-ticks' edge features, with the same depth within 1e-5 relative (1e-5 · max(depth, 0.01)),
//! and the GPU step must have run on the device (the backend's name is the adapter's).

mod common;

use glam::{Quat, Vec3};
use rand::Rng;
use rtcd::{FeatureId, NarrowPhase, PairInput, PairKey, Pose, RtcdMesh, RtcdParams, StepOptions, shapes};
use rtcd_wgpu::GpuNarrowPhase;

fn mesh(name: &str, (v, i): shapes::MeshData) -> RtcdMesh {
    RtcdMesh::new(name, &v, &i).unwrap()
}

#[test]
fn edge_contacts_agree_with_the_cpu() {
    let d = common::device();
    let meshes = [
        mesh("box", shapes::cuboid(Vec3::new(0.5, 0.3, 0.4))),
        mesh("beam", shapes::cuboid(Vec3::new(0.8, 0.1, 0.1))),
        mesh("ring", shapes::torus(0.4, 0.1, 8, 4)),
        mesh("bracket", shapes::u_bracket(0.8, 0.6, 0.12, 0.5)),
    ];
    let refs: Vec<&RtcdMesh> = meshes.iter().collect();
    let params = RtcdParams::from_meshes(&refs);
    let mut r = common::rng(7);
    let pairs: Vec<(usize, usize, Pose)> = (0..40)
        .map(|_| {
            let (a, b) = (r.random_range(0..meshes.len()), r.random_range(0..meshes.len()));
            let dir =
                Vec3::new(r.random_range(-1.0..1.0), r.random_range(-1.0..1.0), r.random_range(-1.0..1.0))
                    .normalize_or(Vec3::Y);
            (a, b, Pose::new(dir * r.random_range(0.3..0.7), common::random_rotation(&mut r)))
        })
        .collect();
    let mut cpu = NarrowPhase::new(params).unwrap();
    let mut gpu = GpuNarrowPhase::new(&d.device, &d.queue, params).unwrap();
    let opts = StepOptions { keep_contacts: true, prediction_distance: 0.02, ..Default::default() };
    let mut agreement = common::FeatureAgreement::default();
    for tick in 0..60 {
        let t = tick as f32;
        let inputs: Vec<PairInput> = pairs
            .iter()
            .enumerate()
            .map(|(k, &(a, b, pose))| {
                let wobble =
                    Vec3::new((0.1 * t + k as f32).sin(), (0.07 * t).cos() - 1.0, (0.05 * t).sin()) * 0.01;
                let turn = Quat::from_rotation_y(0.003 * t) * Quat::from_rotation_x(0.01 * (0.09 * t).sin());
                PairInput::new(
                    PairKey::new(2 * k as u64, 2 * k as u64 + 1),
                    &meshes[a],
                    &meshes[b],
                    Pose::new(pose.translation + wobble, pose.rotation * turn),
                )
            })
            .collect();
        let c = cpu.step(&inputs, &opts);
        let g = gpu.step(&inputs, &opts).unwrap();
        // The results came back from the device: its counts and rays were mapped back.
        assert!(
            g.metrics.readback_bytes > 0 && g.metrics.device_wait.is_some(),
            "no readback from {}",
            d.info.name
        );
        assert_eq!(c.metrics.edge_contacts > 0, g.metrics.edge_contacts > 0, "tick {tick}");
        for (cp, gp) in c.pairs.iter().zip(&g.pairs) {
            agreement.add(&cp.contacts, &gp.contacts, |c| {
                matches!(c.fid1, FeatureId::Edge(_)) || matches!(c.fid2, FeatureId::Edge(_))
            });
        }
    }
    let common::FeatureAgreement { features, worst, .. } = agreement;
    let share = agreement.share();
    println!(
        "edge contacts: {features} features over 60 ticks, {:.3} % agree, worst depth {worst:.2e}",
        100.0 * share
    );
    assert!(features > 500, "too few edge contacts to compare: {features}");
    assert!(share >= 0.99, "{:.3} % of edge contacts agree", 100.0 * share);
}
