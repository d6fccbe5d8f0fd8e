//! The device lays out each pair-table slot's pair of the step (`pair_assemble.wgsl`,
//! `pair_layout.wgsl`) from the bodies' world poses, the 5 flag bits a slot and the boxes its kind
//! keeps: on seeded random pairs of varied meshes (a closed blob, a torus, a cuboid, a 1 cm plate,
//! low-poly boxes at 1 cm and 1 km, open level chunks, whose region takes the solid reach), close,
//! touching and far apart, given by their relative pose or as pairs of bodies with world poses
//! (bodies shared between pairs, 300 m from the origin), new in their slots or not, read back as the
//! device assembled them:
//! - the relative pose is the host's (`rtcd::Pose::inv_mul`), and so are the inverse pose and the
//!   vertex candidate regions (`rtcd::detect::vertex_candidate_region`);
//! - the flags say what the host decided (standard, new, separated); the entries are the meshes'
//!   vertex counts for a standard step, none for a separated pair or a slot not in the step;
//! - each slot's first entry is the sum of the earlier slots' entries;
//! - all of this still holds after the pair table grows under pairs that keep their slots (their
//!   links and kinds are kept on the device, not uploaded again).
//!
//! Tolerance: poses and bounds within 1e-5 of the pair's scale (the larger of the two meshes' box
//! sizes, the distance between them, and their distance from the origin), rotations within 1e-6.

mod common;

use glam::{Quat, Vec3};
use rand::Rng;
use rtcd::{
    LevelMesh, PairInput, PairKey, Pose, RtcdMesh, RtcdParams, StepMode, StepOptions, aabb::Aabb,
    detect::vertex_candidate_region, shapes,
};
use rtcd_wgpu::{
    GpuNarrowPhase, GpuOptions,
    gpu_types::{GpuPair, PAIR_NEW, PAIR_PRESENT, PAIR_SEPARATED, PAIR_STANDARD},
};

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

/// The inputs of step `step`: `relative` pairs given by their relative pose (drawn again, with new
/// keys, every other step), and 77 pairs of bodies given by world poses (40 bodies near each other, the
/// same at every step but for a drift of 0.1 mm a step, so that their pairs go on iteratively;
/// bodies shared between pairs); shape 2 near shape 1's box: overlapping, touching or a little
/// apart.
fn inputs<'a>(
    meshes: &'a [RtcdMesh],
    r: &mut rand_pcg::Pcg64,
    step: u64,
    relative: u64,
) -> Vec<PairInput<'a>> {
    let keys = 1000 * (step / 2);
    let near = |r: &mut rand_pcg::Pcg64, m1: &RtcdMesh, m2: &RtcdMesh| {
        let (b1, b2) = (m1.aabb(), m2.aabb());
        let reach = 0.5 * (b1.extents().length() + b2.extents().length());
        let dir = Vec3::new(r.random_range(-1.0..1.0), r.random_range(-1.0..1.0), r.random_range(-1.0..1.0));
        b1.center() - b2.center() + dir.normalize_or_zero() * reach * r.random_range(0.0..1.3)
    };
    let mut out = Vec::new();
    for k in 0..relative {
        let (a, b) = (r.random_range(0..meshes.len()), r.random_range(0..meshes.len()));
        let t = near(r, &meshes[a], &meshes[b]);
        let pos12 = Pose::new(t, common::random_rotation(r));
        out.push(PairInput::new(PairKey::new(keys + k, keys + k + 100_000), &meshes[a], &meshes[b], pos12));
    }
    // Bodies 1 000 000 + i, each with its mesh (none of the 6 m terrain's chunks), its world pose
    // near the last one's.
    let n = 40;
    let body_mesh: Vec<usize> = (0..n).map(|i| (i * 7) % 6).collect();
    let mut w = common::rng(9);
    let drift = Vec3::new(1e-4, -0.5e-4, 0.0) * step as f32;
    let mut poses = vec![Pose::new(Vec3::new(300.0, -20.0, 5.0), common::random_rotation(&mut w))];
    for i in 1..n {
        let t = near(&mut w, &meshes[body_mesh[i - 1]], &meshes[body_mesh[i]]);
        let rel = Pose::new(t, common::random_rotation(&mut w));
        poses.push(poses[i - 1].mul(&rel));
    }
    for p in &mut poses {
        p.translation += drift;
    }
    for i in 0..n {
        for j in [i + 1, i + 2] {
            if j < n {
                let (mi, mj) = (&meshes[body_mesh[i]], &meshes[body_mesh[j]]);
                let key = PairKey::new(1_000_000 + i as u64, 1_000_000 + j as u64);
                out.push(PairInput::from_world(key, mi, poses[i], mj, poses[j]));
            }
        }
    }
    out
}

#[test]
fn device_regions_and_inverse_poses_are_the_hosts() {
    device_layout_is_the_hosts(GpuOptions::default(), |_| 100);
}

/// The same from a pair table of 4 slots, with 12 more pairs given by their relative pose at each
/// step: the table grows while the pairs of bodies keep their slots, and the links and kinds the
/// device keeps for them survive the growth.
#[test]
fn device_layout_survives_the_table_growing() {
    device_layout_is_the_hosts(GpuOptions { initial_pair_capacity: 4, ..GpuOptions::default() }, |step| {
        12 * (step + 1)
    });
}

/// Checks the layout over 8 steps with `relative(step)` pairs given by their relative pose.
fn device_layout_is_the_hosts(options: GpuOptions, relative: fn(u64) -> u64) {
    let grows = options.initial_pair_capacity < 100;
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
    let mut gpu = GpuNarrowPhase::with_options(&d.device, &d.queue, params, options).unwrap();
    assert_eq!(gpu.adapter_name(), d.info.name, "the GPU backend runs on the device");
    let opts = StepOptions { prediction_distance: 0.02, ..Default::default() };
    let mut r = common::rng(5);
    let (mut checked, mut empty, mut level, mut world, mut new, mut standard, mut iterative) =
        (0, 0, 0, 0, 0, 0, 0);
    let mut grew = 0;
    for step in 0..8u64 {
        // A fresh set of keys every other step: pairs new in their slots and pairs that keep theirs
        // (their records then give the iterative steps' entries).
        let capacity = gpu.pair_capacity();
        let inputs = inputs(&meshes, &mut r, step, relative(step));
        let out = gpu.step(&inputs, &opts).unwrap();
        let pairs = gpu.read_step_pairs().unwrap();
        assert_eq!(pairs.len() as u32, gpu.pair_capacity(), "one assembled pair per slot");
        grew += usize::from(step > 0 && gpu.pair_capacity() > capacity);
        // The layout: each slot's first entry is the sum of the earlier slots' entries (vertex rays,
        // then edge rays); slots whose pair is not in the step have none.
        let mut offset = 0;
        for (slot, g) in pairs.iter().enumerate() {
            assert_eq!(g.step.slot as usize, slot);
            assert_eq!(g.step.entry_offset, offset, "slot {slot}");
            if g.step.flags & PAIR_PRESENT == 0 {
                assert_eq!((g.step.entries_a, g.step.entries_b), (0, 0), "slot {slot}");
                assert_eq!((g.step.edges_a, g.step.edges_b), (0, 0), "slot {slot}");
            }
            offset += g.step.entries_a + g.step.entries_b + g.step.edges_a + g.step.edges_b;
        }
        let present = pairs.iter().filter(|g| g.step.flags & PAIR_PRESENT != 0).count();
        assert_eq!(present, inputs.len(), "step {step}: one present slot per input");
        for (p, o) in inputs.iter().zip(&out.pairs) {
            let g = &pairs[gpu.pair_slot(&p.key).unwrap() as usize];
            let f = g.step.flags;
            // Flags and entries: a standard step traces every vertex, an iterative one its records.
            let is_standard = o.mode == StepMode::Standard;
            assert_eq!(f & PAIR_STANDARD != 0, is_standard, "step {step}, {}", p.key);
            new += usize::from(f & PAIR_NEW != 0);
            if f & PAIR_SEPARATED == 0 && is_standard {
                assert_eq!(
                    (g.step.entries_a, g.step.entries_b),
                    (p.mesh1.positions().len() as u32, p.mesh2.positions().len() as u32)
                );
                // A standard step's edge rays: every edge of each mesh (the region is tested in the
                // thread).
                assert_eq!(
                    (g.step.edges_a, g.step.edges_b),
                    (p.mesh1.edges().len() as u32, p.mesh2.edges().len() as u32)
                );
                standard += 1;
            } else if f & PAIR_SEPARATED == 0 {
                iterative += 1;
            } else {
                assert_eq!((g.step.entries_a, g.step.entries_b), (0, 0));
                assert_eq!((g.step.edges_a, g.step.edges_b), (0, 0));
            }
            // The relative pose: the uploaded one, or made of the bodies' world poses.
            let scale = p.mesh1.aabb().extents().length().max(p.mesh2.aabb().extents().length())
                + p.pos12.translation.length()
                + p.world.map_or(0.0, |w| w[0].translation.length());
            let tol = 1e-5 * scale;
            let q12 = Quat::from_array(g.step.pose12_q);
            assert!(q12.abs_diff_eq(p.pos12.rotation, 1e-6), "{q12:?} vs {:?}", p.pos12.rotation);
            assert!((Vec3::from_slice(&g.step.pose12_t[..3]) - p.pos12.translation).length() <= tol);
            world += usize::from(p.world.is_some());
            let pair_params = params.for_pair(p.mesh1, p.mesh2);
            let pos21 = p.pos12.inverse();
            let want = [
                vertex_candidate_region(p.mesh1, p.mesh2, &pos21, &pair_params),
                vertex_candidate_region(p.mesh2, p.mesh1, &p.pos12, &pair_params),
            ];
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
    // The draw covers what it is meant to: empty and non-empty regions, level chunks, world poses,
    // pairs new in their slots, standard and iterative steps.
    println!(
        "{checked} pairs: {empty} empty regions, {level} with a level chunk, {world} from world poses, \
         {new} new, {standard} standard, {iterative} iterative; the table grew at {grew} later steps"
    );
    assert_eq!(checked, (0..8).map(|s| 77 + relative(s) as usize).sum::<usize>());
    assert!(empty > 100 && empty < 2 * checked - 200, "{empty} empty regions");
    assert!(level > 50, "{level} pairs with a level chunk");
    assert_eq!(world, 8 * 77);
    assert!(new >= 77 && standard > 100 && iterative > 100, "{new} {standard} {iterative}");
    if grows {
        assert!(grew > 0, "the table never grew after the first step");
    }
}
