//! The papers' avalanche (Lehericey, Gouranton and Arnaldi 2013, IRTCD §4.1, scene 1) defined once,
//! without an engine: which meshes fall, where every body starts, and the static boxes it falls
//! into. The falling-objects example spawns it in Bevy, the benchmarks in a plain Rapier world, so
//! both run exactly the same scene.
//!
//! Concave meshes of ~900 triangles (`torus_900`, `blob_900`, `bent_tube_896` in turn; 512 in the
//! paper) start on a grid of columns, layer above layer, with seeded uniformly random orientations
//! and small seeded sideways offsets, at rest. They fall on a static ground box whose top face is
//! y = [`GROUND_TOP`], closed by four walls high enough and close enough that the settling pile stays
//! on the floor between them.
//!
//! Everything is deterministic: the same count and seed give the same poses on every machine
//! ([`Rng`] is a fixed xorshift generator, not a library's generator of unspecified algorithm).
//!
//! Besides the papers' scene: [`everyday`], a pile of everyday game content (boxes, planks, thin
//! plates, furniture, rings, balls, from 5 cm to 5 m), and [`measure`], an interpenetration measure
//! that shares no code with rtcd's narrow phase (vertex depths and crossing edges, by ray parity).

use std::{
    path::{Path, PathBuf},
    sync::Arc,
};

use glam::{Quat, Vec3};
use rtcd::RtcdMesh;

pub mod everyday;
pub mod measure;

pub use everyday::{Everyday, EverydayBody, Prop};

/// Height of the ground's top face (y); the ground box lies below it.
pub const GROUND_TOP: f32 = 0.0;

/// The meshes of the avalanche (files `{name}.obj` in the assets' mesh folder), used in turn.
pub const AVALANCHE_MESHES: [&str; 3] = ["torus_900", "blob_900", "bent_tube_896"];

/// The environment variable that names the mesh folder for [`assets_dir`], for binaries run away
/// from the checkout they were built in.
pub const ASSETS_DIR_VAR: &str = "RTCD_ASSETS_DIR";

/// The mesh folder: [`ASSETS_DIR_VAR`] where it is set and not empty, else the repository's
/// `assets/meshes` folder (absolute, so any working directory works).
pub fn assets_dir() -> PathBuf {
    assets_dir_from(std::env::var_os(ASSETS_DIR_VAR))
}

/// [`assets_dir`] with `var` as the value of [`ASSETS_DIR_VAR`] (`None`: not set).
pub fn assets_dir_from(var: Option<std::ffi::OsString>) -> PathBuf {
    match var {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/meshes"),
    }
}

/// Loads `dir/{name}.obj`; the error names the file.
pub fn load_mesh(dir: &Path, name: &str) -> Result<Arc<RtcdMesh>, String> {
    let path = dir.join(format!("{name}.obj"));
    RtcdMesh::from_obj(&path).map(Arc::new).map_err(|e| format!("{}: {e}", path.display()))
}

/// An axis-aligned static box.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cuboid {
    /// Centre.
    pub center: Vec3,
    /// Half extents along x, y and z.
    pub half_extents: Vec3,
}

/// One body of the avalanche, at rest at the start.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Body {
    /// Index into [`Avalanche::meshes`] (and [`AVALANCHE_MESHES`]).
    pub mesh: usize,
    /// Initial position of the mesh's frame.
    pub translation: Vec3,
    /// Initial orientation.
    pub rotation: Quat,
}

/// The avalanche: meshes, bodies, the ground and its walls.
#[derive(Clone, Debug)]
pub struct Avalanche {
    /// The meshes of [`AVALANCHE_MESHES`], loaded, in that order.
    pub meshes: Vec<Arc<RtcdMesh>>,
    /// Every body, bottom layer first.
    pub bodies: Vec<Body>,
    /// The static ground: its top face at [`GROUND_TOP`], reaching [`Avalanche::SLAB_MARGIN`] beyond
    /// the walls' outer faces.
    pub ground: Cuboid,
    /// The four static walls standing on the ground (+x, -x, +z, -z).
    pub walls: [Cuboid; 4],
    /// Half width of the floor between the walls (the same in x and z).
    pub floor_half_width: f32,
}

impl Avalanche {
    /// The paper's number of bodies (8 × 8 × 8).
    pub const COUNT: usize = 512;
    /// The seed every user takes by default, so the example and the benchmarks show the same pile.
    pub const DEFAULT_SEED: u64 = 1;
    /// Gap between the bounding spheres of grid neighbours (m).
    pub const GAP: f32 = 0.06;
    /// Height of the bottom layer's bounding spheres above the ground (m).
    pub const DROP: f32 = 1.0;
    /// Floor between the grid's outer columns and the walls (m): the pile spreads a little as it
    /// lands, and a close wall keeps it deep rather than wide.
    pub const FLOOR_MARGIN: f32 = 1.0;
    /// Height of the walls above the ground (m): well above the settled pile, so that a body thrown
    /// up against a wall as the upper layers land cannot roll over it.
    pub const WALL_HEIGHT: f32 = 3.0;
    /// Wall thickness (m): thick against the speed of a body thrown sideways.
    pub const WALL_THICKNESS: f32 = 0.5;
    /// Half thickness of the ground box (m).
    pub const SLAB_HALF_THICKNESS: f32 = 0.5;
    /// How far the ground reaches beyond the walls' outer faces (m).
    pub const SLAB_MARGIN: f32 = 1.0;

    /// `count` bodies with the meshes in `assets` (see [`assets_dir`]) and orientations from `seed`.
    ///
    /// The grid has `side × side` columns (side = ⌈∛count⌉, 8 for 512) and as many layers as needed;
    /// bounding spheres of neighbours never overlap at the start (their grown boxes do, so neighbours
    /// are narrow-phase pairs while the grid falls, the paper's first phase).
    pub fn new(assets: &Path, count: usize, seed: u64) -> Result<Self, String> {
        let meshes = AVALANCHE_MESHES.iter().map(|n| load_mesh(assets, n)).collect::<Result<Vec<_>, _>>()?;
        let radius = meshes.iter().map(|m| m.max_radius()).fold(0.0, f32::max);
        let spacing = 2.0 * radius + Self::GAP;
        let side = (1..).find(|s| s * s * s >= count).unwrap_or(1);
        let half = (side as f32 - 1.0) * 0.5;
        let mut rng = Rng::new(seed);
        let bodies = (0..count)
            .map(|k| {
                let (x, z, y) = (k % side, (k / side) % side, k / (side * side));
                let jitter = Vec3::new(rng.signed(0.03), 0.0, rng.signed(0.03));
                let translation = Vec3::new(
                    (x as f32 - half) * spacing,
                    GROUND_TOP + Self::DROP + radius + y as f32 * spacing,
                    (z as f32 - half) * spacing,
                ) + jitter;
                Body { mesh: k % meshes.len(), translation, rotation: rng.rotation() }
            })
            .collect();
        let floor_half_width = side as f32 * spacing * 0.5 + Self::FLOOR_MARGIN;
        let (f, t, h) = (floor_half_width, Self::WALL_THICKNESS, Self::WALL_HEIGHT);
        let outer = f + t + Self::SLAB_MARGIN;
        let ground = Cuboid {
            center: Vec3::new(0.0, GROUND_TOP - Self::SLAB_HALF_THICKNESS, 0.0),
            half_extents: Vec3::new(outer, Self::SLAB_HALF_THICKNESS, outer),
        };
        // The x walls run the whole length, corners included; the z walls fit between them.
        let y = GROUND_TOP + 0.5 * h;
        let x_wall = |sign: f32| Cuboid {
            center: Vec3::new(sign * (f + 0.5 * t), y, 0.0),
            half_extents: Vec3::new(0.5 * t, 0.5 * h, f + t),
        };
        let z_wall = |sign: f32| Cuboid {
            center: Vec3::new(0.0, y, sign * (f + 0.5 * t)),
            half_extents: Vec3::new(f, 0.5 * h, 0.5 * t),
        };
        let walls = [x_wall(1.0), x_wall(-1.0), z_wall(1.0), z_wall(-1.0)];
        Ok(Self { meshes, bodies, ground, walls, floor_half_width })
    }

    /// The name of mesh `i` (of [`AVALANCHE_MESHES`]).
    pub fn mesh_name(&self, i: usize) -> &'static str {
        AVALANCHE_MESHES[i]
    }

    /// Total triangles of every body.
    pub fn triangles(&self) -> usize {
        self.bodies.iter().map(|b| self.meshes[b.mesh].triangles().len()).sum()
    }

    /// Whether a point is over the ground's footprint (so below [`GROUND_TOP`] means through it).
    pub fn over_ground(&self, p: Vec3) -> bool {
        let h = self.ground.half_extents;
        (p.x - self.ground.center.x).abs() <= h.x && (p.z - self.ground.center.z).abs() <= h.z
    }

    /// Whether a point is over the floor between the walls.
    pub fn inside_walls(&self, p: Vec3) -> bool {
        p.x.abs() <= self.floor_half_width && p.z.abs() <= self.floor_half_width
    }

    /// Height of the top of the initial grid (the highest bounding sphere's top).
    pub fn top(&self) -> f32 {
        let radius = self.meshes.iter().map(|m| m.max_radius()).fold(0.0, f32::max);
        self.bodies.iter().map(|b| b.translation.y).fold(GROUND_TOP, f32::max) + radius
    }

    /// The ground, then the walls.
    pub fn statics(&self) -> impl Iterator<Item = Cuboid> + '_ {
        std::iter::once(self.ground).chain(self.walls)
    }
}

/// A small deterministic generator (xorshift64*, its state seeded through splitmix64), so scenes are
/// identical on every machine and every seed, small ones included, starts well mixed.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from any seed.
    pub fn new(seed: u64) -> Self {
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Self((z ^ (z >> 31)).max(1))
    }

    /// Uniform in [0, 1).
    pub fn next_f32(&mut self) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        (x >> 40) as f32 / (1u64 << 24) as f32
    }

    /// Uniform in [-a, a).
    pub fn signed(&mut self, a: f32) -> f32 {
        (2.0 * self.next_f32() - 1.0) * a
    }

    /// A uniformly random rotation (Shoemake 1992).
    pub fn rotation(&mut self) -> Quat {
        let (u1, u2, u3) = (self.next_f32(), self.next_f32(), self.next_f32());
        let (a, b) = (std::f32::consts::TAU * u2, std::f32::consts::TAU * u3);
        let (s1, s2) = ((1.0 - u1).sqrt(), u1.sqrt());
        Quat::from_xyzw(s1 * a.sin(), s1 * a.cos(), s2 * b.sin(), s2 * b.cos()).normalize()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scene(count: usize, seed: u64) -> Avalanche {
        Avalanche::new(&assets_dir(), count, seed).unwrap()
    }

    #[test]
    fn same_seed_same_scene_other_seed_other_orientations() {
        let (a, b, c) = (scene(64, 1), scene(64, 1), scene(64, 2));
        assert_eq!(a.bodies, b.bodies);
        assert!(a.bodies.iter().zip(&c.bodies).all(|(x, y)| x.rotation != y.rotation));
    }

    #[test]
    fn bodies_start_apart_above_the_ground_and_inside_the_walls() {
        let s = scene(Avalanche::COUNT, Avalanche::DEFAULT_SEED);
        assert_eq!(s.bodies.len(), 512);
        let r: Vec<f32> = s.bodies.iter().map(|b| s.meshes[b.mesh].max_radius()).collect();
        for (i, a) in s.bodies.iter().enumerate() {
            assert!(a.translation.y - r[i] > GROUND_TOP);
            let reach = s.floor_half_width - r[i];
            assert!(a.translation.x.abs() < reach && a.translation.z.abs() < reach);
            for (j, b) in s.bodies.iter().enumerate().skip(i + 1) {
                assert!(a.translation.distance(b.translation) > r[i] + r[j], "{i} and {j} overlap");
            }
        }
        assert_eq!([s.bodies[0].mesh, s.bodies[1].mesh, s.bodies[2].mesh, s.bodies[3].mesh], [0, 1, 2, 0]);
    }

    #[test]
    fn walls_close_the_floor_and_stand_on_the_ground() {
        let s = scene(27, 3);
        let f = s.floor_half_width;
        for w in s.walls {
            let (lo, hi) = (w.center - w.half_extents, w.center + w.half_extents);
            assert!((lo.y - GROUND_TOP).abs() < 1e-6 && (hi.y - Avalanche::WALL_HEIGHT).abs() < 1e-5);
            // Inner face on the floor's edge, outer face on the ground.
            let inner = if w.center.x.abs() > w.center.z.abs() {
                lo.x.abs().min(hi.x.abs())
            } else {
                lo.z.abs().min(hi.z.abs())
            };
            assert!((inner - f).abs() < 1e-5);
            assert!(s.over_ground(lo) && s.over_ground(hi));
        }
        // The four walls together cover the floor's boundary, corners included.
        for k in 0..=40 {
            let u = -f - 0.1 + (2.0 * f + 0.2) * k as f32 / 40.0;
            for p in [
                Vec3::new(f + 0.1, 1.0, u),
                Vec3::new(-f - 0.1, 1.0, u),
                Vec3::new(u, 1.0, f + 0.1),
                Vec3::new(u, 1.0, -f - 0.1),
            ] {
                let inside = |c: &Cuboid| ((p - c.center).abs() - c.half_extents).max_element() <= 0.0;
                assert!(s.walls.iter().any(inside), "gap at {p}");
            }
        }
        let top = s.ground.center.y + s.ground.half_extents.y;
        assert!((top - GROUND_TOP).abs() < 1e-6);
    }
}
