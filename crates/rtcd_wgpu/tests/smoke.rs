//! First light: the GPU backend gives the CPU backend's contacts on the analytic cases.

mod common;

use glam::Vec3;
use rtcd::{NarrowPhase, PairInput, PairKey, Pose, RtcdMesh, RtcdParams, StepOptions, TracerKind, shapes};
use rtcd_wgpu::GpuNarrowPhase;

#[test]
fn cube_on_ground_same_as_cpu() {
    let d = common::device();
    let (v, i) = shapes::cuboid(Vec3::splat(0.5));
    let cube = RtcdMesh::new("cube", &v, &i).unwrap();
    let (v, i) = shapes::subdivided_cuboid(Vec3::new(4.0, 1.0, 4.0), 8);
    let ground = RtcdMesh::new("ground", &v, &i).unwrap();
    for tracer in [TracerKind::BruteForce, TracerKind::Bvh] {
        let params = RtcdParams { tracer, ..RtcdParams::from_meshes(&[&cube, &ground]) };
        let mut gpu = GpuNarrowPhase::new(&d.device, &d.queue, params).unwrap();
        let mut cpu = NarrowPhase::new(params).unwrap();
        for step in 0..4 {
            let pose = Pose::from_translation(Vec3::new(0.3, 0.4 - 0.001 * step as f32, -0.2));
            let pair = PairInput::from_world(
                PairKey::new(1, 2),
                &cube,
                pose,
                &ground,
                Pose::from_translation(Vec3::NEG_Y),
            );
            let g = gpu.step(&[pair], &StepOptions::default()).unwrap();
            let c = cpu.step(&[pair], &StepOptions::default());
            assert_eq!(g.pairs[0].mode, c.pairs[0].mode, "{tracer:?} step {step}");
            let (gm, cm) = (&g.pairs[0].manifolds, &c.pairs[0].manifolds);
            assert_eq!(gm.len(), 1, "{tracer:?} step {step}: {gm:?}");
            assert_eq!(gm[0].points.len(), cm[0].points.len());
            for (a, b) in gm[0].points.iter().zip(&cm[0].points) {
                assert!((a.dist - b.dist).abs() < 1e-5, "{a:?} vs {b:?}");
                assert_eq!((a.fid1, a.fid2), (b.fid1, b.fid2));
            }
            assert!((gm[0].local_n1 - Vec3::NEG_Y).length() < 1e-5);
            assert_eq!(g.metrics.contact_rays, c.metrics.contact_rays);
            assert_eq!(g.metrics.standard_rays, c.metrics.standard_rays, "{tracer:?} step {step}");
            assert_eq!(g.metrics.iterative_rays, c.metrics.iterative_rays);
            assert_eq!(g.metrics.predictive_rays, c.metrics.predictive_rays);
            assert_eq!(g.metrics.prediction_records, c.metrics.prediction_records);
        }
    }
}
