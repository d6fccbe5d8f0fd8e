//! The ground-deviation test of the 2014 paper (§5.4, Table 1, after Hermann 2008 Fig. 7-8): a mesh
//! pressed into the ground at 400 orientations × 20 depths. The net reaction should be vertical; the
//! deviation is the ratio of its tangential to its normal component, averaged over the cases.
//! Penalty forces are proportional to depth along each contact's direction (Hermann 2008 §4).

mod common;

use glam::{Quat, Vec3};
use rtcd::{NarrowPhase, PairInput, PairKey, Pose, RtcdMesh, RtcdParams, StepOptions, shapes};

/// Mean tangential/normal ratio over `orientations × depths` cases, in percent, with or without
/// re-projection, and the number of cases with contacts.
fn mean_deviation(mesh: &RtcdMesh, reprojection: bool, orientations: usize, depths: usize) -> (f64, usize) {
    let ground = common::cuboid("ground", Vec3::new(20.0, 1.0, 20.0));
    let ground_pose = common::ground_pose();
    let params = RtcdParams { reprojection, iterative: false, ..RtcdParams::from_meshes(&[mesh]) };
    let mut np = NarrowPhase::new(params).unwrap();
    let mut rng = common::rng(2014);
    let mut sum = 0.0f64;
    let mut cases = 0usize;
    for _ in 0..orientations {
        let q: Quat = common::random_rotation(&mut rng);
        let lowest = mesh.positions().iter().map(|p| (q * *p).y).fold(f32::INFINITY, f32::min);
        let height = mesh.positions().iter().map(|p| (q * *p).y).fold(f32::NEG_INFINITY, f32::max) - lowest;
        for k in 1..=depths {
            // Depths from 1 % to 20 % of the mesh's height.
            let depth = height * 0.2 * k as f32 / depths as f32;
            let pose = Pose::new(Vec3::new(0.0, -lowest - depth, 0.0), q);
            let pair = PairInput::from_world(PairKey::new(1, 2), mesh, pose, &ground, ground_pose);
            let out = np.step(&[pair], &StepOptions { keep_contacts: true, ..Default::default() });
            // Every contact pushes the mesh (shape 1) along -n1 with a force proportional to its depth.
            let force: Vec3 = out.pairs[0]
                .contacts
                .iter()
                .filter(|c| c.dist < 0.0)
                .map(|c| pose.transform_vector(-c.n1) * -c.dist)
                .sum();
            let normal = force.dot(Vec3::Y);
            if normal <= 0.0 {
                continue;
            }
            let tangential = (force - Vec3::Y * normal).length();
            sum += (tangential / normal) as f64;
            cases += 1;
        }
    }
    (100.0 * sum / cases.max(1) as f64, cases)
}

fn check(name: &str, mesh: &RtcdMesh) {
    let (with, cases) = mean_deviation(mesh, true, 400, 20);
    let (without, _) = mean_deviation(mesh, false, 400, 20);
    println!(
        "ground deviation, {name} ({} vertices): re-projection {with:.5} %, raw rays {without:.2} % over {cases} cases",
        mesh.positions().len()
    );
    assert!(cases >= 400 * 20 * 9 / 10, "{name}: only {cases} cases had contacts");
    assert!(with <= 0.01, "{name}: deviation with re-projection {with} % > 0.01 %");
    assert!(without > with, "{name}: raw rays should deviate more");
}

#[test]
fn icosphere_ground_deviation() {
    // Frequency 3: 92 vertices, the nearest icosphere to the paper's 70-vertex sphere.
    let (v, i) = shapes::icosphere(0.5, 3);
    let sphere = RtcdMesh::new("icosphere", &v, &i).unwrap();
    check("icosphere", &sphere);
}

#[test]
fn irregular_blob_ground_deviation() {
    check("blob_900", &common::asset("blob_900"));
}
