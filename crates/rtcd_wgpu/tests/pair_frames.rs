//! The device derives each pair's inverse pose and vertex candidate regions (Hermann 2008 §3.2 with
//! the 2014 extension) from the uploaded relative pose and the boxes the pair keeps
//! (`pair_assemble.wgsl`): on seeded random pairs of varied meshes (a closed blob, a torus, a
//! cuboid, a 1 cm plate, low-poly boxes at 1 cm and 1 km, open level chunks, whose region takes the
//! solid reach), close, touching and far apart, the device's regions and inverse pose are the
//! host's (`rtcd::detect::vertex_candidate_region`, `rtcd::Pose::inverse`), read back as the device
//! assembled them.
//!
//! Tolerance: each bound within 1e-5 of the pair's scale (the larger of the two meshes' box sizes
//! and the distance between them); a region empty on one side is empty on the other, unless it is
//! within that tolerance of not being empty.

mod common;

use glam::{Quat, Vec3};
use rand::Rng;
use rtcd::{
    LevelMesh, PairInput, PairKey, Pose, RtcdMesh, RtcdParams, StepOptions, aabb::Aabb,
    detect::vertex_candidate_region, shapes,
};
use rtcd_wgpu::{GpuNarrowPhase, gpu_types::GpuPair};

fn scaled(name: &str, (v, i): shapes::MeshData, s: f32) -> RtcdMesh {
    let v: Vec<Vec3> = v.iter().map(|p| *p * s).collect();
    RtcdMesh::new(name, &v, &i).unwrap()
}

fn terrain_chunks() -> Vec<RtcdMesh> {
    let n = 12;
    let mut p = Vec::new();
    for j in 0..=n {
        for i in 0..=n {
            let (x, z) = (6.0 * (i as f32 / n as f32 - 0.5), 6.0 * (j as f32 / n as f32 - 0.5));
            p.push(Vec3::new(x, 0.3 * (0.8 * x).sin() * (0.6 * z).cos(), z));
        }
    }
    let at = |i: u32, j: u32| j * (n + 1) + i;
    let mut idx = Vec::new();
    for j in 0..n {
        for i in 0..n {
            idx.extend([at(i, j), at(i, j + 1), at(i + 1, j), at(i + 1, j), at(i, j + 1), at(i + 1, j + 1)]);
        }
    }
    let level = LevelMesh::with_chunk_triangles("terrain", &p, &idx, 64).unwrap();
    level.chunks().iter().map(|c| (**c).clone()).collect()
}

fn region_of(pair: &GpuPair, dir: usize) -> Aabb {
    let f = &pair.frame;
    let (lo, hi) = if dir == 0 { (f.region_a_min, f.region_a_max) } else { (f.region_b_min, f.region_b_max) };
    Aabb::new(Vec3::from_slice(&lo[..3]), Vec3::from_slice(&hi[..3]))
}

/// Whether `got` is `want` within `tol` on every bound; an empty box (on either side) counts as
/// equal to one that is within `tol` of being empty too.
fn close(got: Aabb, want: Aabb, tol: f32) -> bool {
    let bounds = (got.min - want.min).abs().max_element().max((got.max - want.max).abs().max_element());
    bounds <= tol
}

#[test]
fn device_regions_and_inverse_poses_are_the_hosts() {
    let d = common::device();
    let mut meshes = vec![
        common::asset("blob_900"),
        common::asset("torus_900"),
        RtcdMesh::cuboid("ground", Vec3::new(5.0, 0.5, 5.0)).unwrap(),
        scaled("plate", shapes::cuboid(Vec3::new(0.5, 0.005, 0.5)), 1.0),
        scaled("box_1cm", shapes::cuboid(Vec3::new(1.0, 0.6, 0.3)), 0.005),
        scaled("box_1km", shapes::cuboid(Vec3::new(1.0, 0.6, 0.3)), 350.0),
    ];
    meshes.extend(terrain_chunks());
    let refs: Vec<&RtcdMesh> = meshes.iter().collect();
    let params = RtcdParams::from_meshes(&refs);
    let mut gpu = GpuNarrowPhase::new(&d.device, &d.queue, params).unwrap();
    assert_eq!(gpu.adapter_name(), d.info.name, "the GPU backend runs on the device");
    let opts = StepOptions { prediction_distance: 0.02, ..Default::default() };
    let mut r = common::rng(5);
    let (mut checked, mut empty, mut level) = (0, 0, 0);
    let mut keys = 0u32;
    for step in 0..6 {
        // A fresh set of keys every other step: pairs new in their slots and pairs that keep theirs.
        if step % 2 == 0 {
            keys += 200;
        }
        let inputs: Vec<PairInput> = (0..200u32)
            .map(|k| {
                let (a, b) = (r.random_range(0..meshes.len()), r.random_range(0..meshes.len()));
                let (m1, m2) = (&meshes[a], &meshes[b]);
                // Shape 2 near shape 1's box: overlapping, touching or a little apart.
                let (b1, b2) = (m1.aabb(), m2.aabb());
                let reach = 0.5 * (b1.extents().length() + b2.extents().length());
                let dir = Vec3::new(
                    r.random_range(-1.0..1.0),
                    r.random_range(-1.0..1.0),
                    r.random_range(-1.0..1.0),
                );
                let t = b1.center() - Quat::IDENTITY * b2.center()
                    + dir.normalize_or_zero() * reach * r.random_range(0.0..1.3);
                let pos12 = Pose::new(t, common::random_rotation(&mut r));
                PairInput::new(
                    PairKey::new((keys - 200 + k) as u64, (keys - 200 + k + 100_000) as u64),
                    m1,
                    m2,
                    pos12,
                )
            })
            .collect();
        gpu.step(&inputs, &opts).unwrap();
        let pairs = gpu.read_step_pairs().unwrap();
        assert_eq!(pairs.len(), inputs.len(), "one assembled pair per input");
        for (p, g) in inputs.iter().zip(&pairs) {
            let pair_params = params.for_pair(p.mesh1, p.mesh2);
            let pos21 = p.pos12.inverse();
            let want = [
                vertex_candidate_region(p.mesh1, p.mesh2, &pos21, &pair_params),
                vertex_candidate_region(p.mesh2, p.mesh1, &p.pos12, &pair_params),
            ];
            let scale = p.mesh1.aabb().extents().length().max(p.mesh2.aabb().extents().length())
                + p.pos12.translation.length();
            let tol = 1e-5 * scale;
            for (dir, &want) in want.iter().enumerate() {
                let got = region_of(g, dir);
                assert!(
                    close(got, want, tol),
                    "step {step}, {} / {}, direction {dir}: device {got:?}, host {:?}",
                    p.mesh1.name(),
                    p.mesh2.name(),
                    want
                );
                empty += usize::from(want.is_empty());
            }
            level += usize::from(p.mesh1.solid_behind() || p.mesh2.solid_behind());
            let (q, t) = (g.frame.pose21_q, g.frame.pose21_t);
            let q = Quat::from_array(q);
            assert!(q.abs_diff_eq(pos21.rotation, 1e-6), "{q:?} vs {:?}", pos21.rotation);
            assert!(
                (Vec3::from_slice(&t[..3]) - pos21.translation).length() <= tol,
                "{t:?} vs {:?}",
                pos21.translation
            );
            checked += 1;
        }
    }
    // The draw covers what it is meant to: empty and non-empty regions, level chunks.
    assert_eq!(checked, 1200);
    assert!(empty > 100 && empty < 2200, "{empty} empty regions of 2400");
    assert!(level > 100, "{level} pairs with a level chunk");
}
