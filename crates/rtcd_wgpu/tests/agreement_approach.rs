//! A body falling from far onto a box, as a simulation brings it: the pair starts out of reach, is
//! traced again on the displacement criterion (IRTCD 2013 Eq. 2) with its own per-pair lengths, and
//! comes into contact. Both backends take the same standard and iterative steps and find the same
//! contacts, step by step (the agreement tests of `agreement*.rs` start from overlapping pairs).

mod common;

use glam::{Quat, Vec3};
use rtcd::{NarrowPhase, PairInput, PairKey, Pose, RtcdMesh, RtcdParams, StepMode, StepOptions};
use rtcd_wgpu::GpuNarrowPhase;

#[test]
fn a_falling_pair_is_traced_alike() {
    let d = common::device();
    let ground = RtcdMesh::cuboid("ground", Vec3::new(20.0, 0.5, 20.0)).unwrap();
    let ground_pose = Pose::from_translation(Vec3::new(0.0, -0.5, 0.0));
    let (mut standard, mut contacts) = (0, 0);
    for name in ["torus_900", "blob_900"] {
        let body = common::asset(name);
        // The parameters of the body alone, as the plugin derives them from the first ready mesh.
        let params = RtcdParams::from_meshes(&[&body]);
        let mut cpu = NarrowPhase::new(params).unwrap();
        let mut gpu = GpuNarrowPhase::new(&d.device, &d.queue, params).unwrap();
        let q = Quat::from_euler(glam::EulerRot::XYZ, 0.4, 0.2, 0.9);
        let opts = StepOptions { keep_contacts: true, prediction_distance: 0.02, ..Default::default() };
        for t in 0..36 {
            // Free fall from 1.2 m, on through the ground (the pair is not pushed back here).
            let y = 1.2 - 0.5 * 9.81 * (t as f32 / 60.0).powi(2);
            let pair = PairInput::from_world(
                PairKey::new(1, 2),
                &body,
                Pose::new(Vec3::new(0.0, y, 0.0), q),
                &ground,
                ground_pose,
            );
            let (c, g) = (cpu.step(&[pair], &opts), gpu.step(&[pair], &opts).unwrap());
            let (c, g) = (&c.pairs[0], &g.pairs[0]);
            assert_eq!(c.mode, g.mode, "{name}, step {t}");
            assert_eq!(c.contacts.len(), g.contacts.len(), "{name}, step {t}");
            standard += usize::from(c.mode == StepMode::Standard);
            contacts += c.contacts.len();
        }
    }
    assert!(standard > 10 && contacts > 1000, "{standard} standard steps, {contacts} contacts");
}
