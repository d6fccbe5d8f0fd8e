//! Helpers shared by the integration tests.
#![allow(dead_code, reason = "shared by several test binaries, each using a part")]

pub mod plate;

use std::path::PathBuf;

use glam::{Quat, Vec3};
use rand::Rng;
use rtcd::{RtcdMesh, shapes};

/// The workspace's `assets/meshes` folder.
pub fn assets_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../assets/meshes")
}

/// Loads `assets/meshes/{name}.obj`.
pub fn asset(name: &str) -> RtcdMesh {
    let path = assets_dir().join(format!("{name}.obj"));
    RtcdMesh::from_obj(&path).unwrap_or_else(|e| panic!("{e}"))
}

/// A box mesh.
pub fn cuboid(name: &str, half: Vec3) -> RtcdMesh {
    let (v, i) = shapes::cuboid(half);
    RtcdMesh::new(name, &v, &i).unwrap()
}

/// A ground slab whose top face is y = 0, `half` wide.
pub fn ground_pose() -> rtcd::Pose {
    rtcd::Pose::from_translation(Vec3::new(0.0, -1.0, 0.0))
}

/// A uniformly distributed random rotation.
pub fn random_rotation(rng: &mut impl Rng) -> Quat {
    // Shoemake's method.
    let (u1, u2, u3): (f32, f32, f32) = (rng.random(), rng.random(), rng.random());
    let (s1, s2) = ((1.0 - u1).sqrt(), u1.sqrt());
    let (a, b) = (std::f32::consts::TAU * u2, std::f32::consts::TAU * u3);
    Quat::from_xyzw(s1 * a.sin(), s1 * a.cos(), s2 * b.sin(), s2 * b.cos()).normalize()
}

/// Seeded RNG.
pub fn rng(seed: u64) -> rand_pcg::Pcg64 {
    use rand::SeedableRng;
    rand_pcg::Pcg64::seed_from_u64(seed)
}
