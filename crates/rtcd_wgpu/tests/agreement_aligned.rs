//! Boxes stacked with their grids aligned, as box stacks and level chunks lie: every vertex ray of
//! a face runs along the faces of the other mesh's hierarchy boxes (its origin on their bounds, its
//! direction parallel to them). The GPU's BVH tracer finds what the CPU's brute-force tracer
//! finds, contact for contact: a box's slab test that ends such a line at its origin would lose
//! the hits of whole rows of vertices.
//!
//! Tolerances: the same contacts (features) on both, depths within 1e-5 relative
//! (1e-5 · max(depth, 0.01)); the GPU step must have read its results back from the device.

mod common;

use glam::Vec3;
use rtcd::{NarrowPhase, PairInput, PairKey, Pose, RtcdMesh, RtcdParams, StepOptions, TracerKind, shapes};
use rtcd_wgpu::GpuNarrowPhase;

#[test]
fn aligned_grids_get_the_brute_force_contacts() {
    let d = common::device();
    let mesh = |name: &str, half: Vec3, n: u32| {
        let (v, i) = shapes::subdivided_cuboid(half, n);
        RtcdMesh::new(name, &v, &i).unwrap()
    };
    let lower = mesh("lower", Vec3::new(1.0, 0.25, 1.0), 8);
    let upper = mesh("upper", Vec3::new(0.5, 0.25, 0.5), 4);
    let params = RtcdParams { edge_rays: false, ..RtcdParams::from_meshes(&[&lower, &upper]) };
    let reference = RtcdParams { tracer: TracerKind::BruteForce, ..params };
    let mut cpu = NarrowPhase::new(reference).unwrap();
    let mut gpu = GpuNarrowPhase::new(&d.device, &d.queue, params).unwrap();
    let opts = StepOptions { keep_contacts: true, prediction_distance: 0.02, ..Default::default() };
    let mut compared = 0;
    // Sunk 2 and 5 cm, shifted by whole cells of both grids (0.25 m), so the grids stay aligned.
    for (k, (sink, shift)) in [(0.02, 0.0), (0.05, 0.25), (0.05, -0.5)].into_iter().enumerate() {
        let pos12 = Pose::from_translation(Vec3::new(shift, 0.5 - sink, 0.25));
        let pair = PairInput::new(PairKey::new(2 * k as u64, 2 * k as u64 + 1), &lower, &upper, pos12);
        let (c, g) = (cpu.step(&[pair], &opts), gpu.step(&[pair], &opts).unwrap());
        assert!(
            g.metrics.readback_bytes > 0 && g.metrics.device_wait.is_some(),
            "no readback from {}",
            d.info.name
        );
        let key = |c: &rtcd::ContactCandidate| (format!("{:?} {:?}", c.fid1, c.fid2), c.dist);
        let mut cs: Vec<_> = c.pairs[0].contacts.iter().map(key).collect();
        let mut gs: Vec<_> = g.pairs[0].contacts.iter().map(key).collect();
        cs.sort_by(|a, b| a.0.cmp(&b.0));
        gs.sort_by(|a, b| a.0.cmp(&b.0));
        // The upper box's bottom face: (4 + 1)² vertices, every one inside the lower box.
        assert!(cs.len() >= 25, "sunk {sink}: the reference found {} contacts", cs.len());
        assert_eq!(
            cs.iter().map(|c| &c.0).collect::<Vec<_>>(),
            gs.iter().map(|c| &c.0).collect::<Vec<_>>(),
            "sunk {sink}, shifted {shift}: the features"
        );
        for (a, b) in cs.iter().zip(&gs) {
            assert!((a.1 - b.1).abs() <= 1e-5 * a.1.abs().max(0.01), "{}: depth {} vs {}", a.0, a.1, b.1);
        }
        compared += cs.len();
    }
    println!("{compared} contacts compared");
}
