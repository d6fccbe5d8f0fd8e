//! Helpers shared by the GPU tests: one headless device per test binary (lavapipe in CI), assets,
//! seeded scenes.
#![allow(dead_code, reason = "shared by several test binaries, each using a part")]

use std::{collections::HashMap, path::PathBuf, sync::OnceLock};

use glam::{Quat, Vec3};
use rand::{Rng, SeedableRng};
use rtcd::{
    Pose, RtcdMesh,
    narrow_phase::{RayDebug, RayOutcome},
};
use rtcd_wgpu::{DeviceOptions, GpuDevice, create_device};

/// The shared device. Panics with the reason when none can be created: GPU tests must not skip.
pub fn device() -> &'static GpuDevice {
    static DEVICE: OnceLock<GpuDevice> = OnceLock::new();
    DEVICE.get_or_init(|| {
        let d = create_device(&DeviceOptions::default()).unwrap_or_else(|e| {
            panic!("no GPU device (install Mesa's lavapipe: scripts/install-deps.sh): {e}")
        });
        eprintln!("GPU tests on: {} ({:?}, {:?})", d.info.name, d.info.device_type, d.info.backend);
        d
    })
}

pub fn asset(name: &str) -> RtcdMesh {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../../assets/meshes/{name}.obj"));
    RtcdMesh::from_obj(&path).unwrap_or_else(|e| panic!("{e}"))
}

pub fn rng(seed: u64) -> rand_pcg::Pcg64 {
    rand_pcg::Pcg64::seed_from_u64(seed)
}

pub fn random_rotation(rng: &mut impl Rng) -> Quat {
    let (u1, u2, u3): (f32, f32, f32) = (rng.random(), rng.random(), rng.random());
    let (s1, s2) = ((1.0 - u1).sqrt(), u1.sqrt());
    let (a, b) = (std::f32::consts::TAU * u2, std::f32::consts::TAU * u3);
    Quat::from_xyzw(s1 * a.sin(), s1 * a.cos(), s2 * b.sin(), s2 * b.cos()).normalize()
}

/// A seeded scene of `pairs` pairs of concave meshes, each pair placed apart from the others, its two
/// bodies overlapping by a random amount.
pub struct Scene {
    pub meshes: Vec<RtcdMesh>,
    /// (mesh index of shape 1, mesh index of shape 2, pos12)
    pub pairs: Vec<(usize, usize, Pose)>,
}

impl Scene {
    pub fn random(pairs: usize, seed: u64) -> Self {
        let meshes = vec![asset("blob_900"), asset("torus_900"), asset("bent_tube_896")];
        let mut r = rng(seed);
        let pairs = (0..pairs)
            .map(|_| {
                let a = r.random_range(0..meshes.len());
                let b = r.random_range(0..meshes.len());
                let dir = Vec3::new(
                    r.random_range(-1.0..1.0),
                    r.random_range(-1.0..1.0),
                    r.random_range(-1.0..1.0),
                )
                .normalize_or(Vec3::Y);
                let dist = r.random_range(0.35..0.8);
                (a, b, Pose::new(dir * dist, random_rotation(&mut r)))
            })
            .collect();
        Self { meshes, pairs }
    }

    /// The relative pose of pair `k` at `tick`: a small random walk around the start.
    pub fn pose_at(&self, k: usize, tick: usize, seed: u64) -> Pose {
        let base = self.pairs[k].2;
        let mut r = rng(seed ^ (k as u64).wrapping_mul(0x9E37_79B9));
        let (f1, f2, f3): (f32, f32, f32) = (
            r.random_range(0.02..0.1),
            r.random_range(0.02..0.1),
            r.random_range(0.0..std::f32::consts::TAU),
        );
        let t = tick as f32;
        let d = Vec3::new((t * f1 + f3).sin(), (t * f2).cos() - 1.0, (t * f1 * 0.7).sin()) * 0.01;
        let q = Quat::from_rotation_y(0.004 * t) * Quat::from_rotation_x(0.02 * (t * f2).sin());
        Pose::new(base.translation + d, base.rotation * q)
    }
}

/// A ray's key in a step's recorded rays: (from shape 2, vertex).
pub type RayKey = (bool, u32);

/// A step's recorded rays that were not rejected, by key: outcome, triangle and distance.
pub fn kept_rays(rays: &[RayDebug]) -> HashMap<RayKey, (RayOutcome, u32, f32)> {
    rays.iter()
        .filter(|r| r.outcome != RayOutcome::Rejected)
        .map(|r| ((r.from_shape2, r.vertex), (r.outcome, r.triangle, r.t)))
        .collect()
}

/// The keys of either map, sorted, each once.
pub fn union_keys<'a, V>(a: &'a HashMap<RayKey, V>, b: &'a HashMap<RayKey, V>) -> Vec<&'a RayKey> {
    let mut keys: Vec<&RayKey> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    keys
}

/// The largest relative difference between the depths of the penetrating contacts both steps found
/// on the same features (relative to the CPU's depth, at least 1 cm).
pub fn worst_relative_depth(cpu: &[rtcd::ContactCandidate], gpu: &[rtcd::ContactCandidate]) -> f64 {
    let depths = |cs: &[rtcd::ContactCandidate]| -> HashMap<(u64, u64), f32> {
        cs.iter().filter(|c| c.dist < 0.0).map(|c| ((c.fid1.packed(), c.fid2.packed()), c.dist)).collect()
    };
    let gd = depths(gpu);
    depths(cpu)
        .into_iter()
        .filter_map(|(k, dc)| gd.get(&k).map(|dg| (dc - dg).abs() as f64 / dc.abs().max(1e-2) as f64))
        .fold(0.0, f64::max)
}

/// Contact features of both backends compared one by one: each feature pair either backend found
/// counts once, and agrees when both found it with depths within 1e-5 relative
/// (1e-5 · max(|depth|, 0.01)).
#[derive(Default)]
pub struct FeatureAgreement {
    pub features: u64,
    pub agree: u64,
    pub worst: f64,
}

impl FeatureAgreement {
    /// Adds one pair-step's contacts, those that `keep` selects.
    pub fn add(
        &mut self,
        cpu: &[rtcd::ContactCandidate],
        gpu: &[rtcd::ContactCandidate],
        keep: impl Fn(&rtcd::ContactCandidate) -> bool,
    ) {
        let depths = |cs: &[rtcd::ContactCandidate]| -> HashMap<(u64, u64), f32> {
            cs.iter().filter(|c| keep(c)).map(|c| ((c.fid1.packed(), c.fid2.packed()), -c.dist)).collect()
        };
        let (c, g) = (depths(cpu), depths(gpu));
        let mut keys: Vec<_> = c.keys().chain(g.keys()).collect();
        keys.sort();
        keys.dedup();
        for k in keys {
            self.features += 1;
            if let (Some(x), Some(y)) = (c.get(k), g.get(k)) {
                let rel = ((x - y).abs() / x.abs().max(0.01)) as f64;
                self.worst = self.worst.max(rel);
                if rel <= 1e-5 {
                    self.agree += 1;
                }
            }
        }
    }

    /// The share of features that agree.
    pub fn share(&self) -> f64 {
        self.agree as f64 / self.features.max(1) as f64
    }
}
