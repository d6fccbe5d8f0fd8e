//! The papers' two scenes (IRTCD 2013 §4.1, 2014 §5.1) as spawn schedules: which mesh appears at
//! which step, where, and how fast. Everything is seeded, so every set-up (rtcd, Rapier trimesh,
//! V-HACD) gets exactly the same scene.
//!
//! - Scene 1, the avalanche, as `rtcd_scenes` defines it for the example too: 512 concave meshes of
//!   ~450 vertices / ~900 triangles (`torus_900`, `blob_900`, `bent_tube_896` in turn) on an
//!   8 × 8 × 8 grid with random orientations fall onto a ground box closed by four walls; 60 Hz,
//!   10 s. Neighbours' boxes overlap while they fall (phase A: pairs in the narrow phase, no
//!   contact), then they hit the ground (B) and come to rest (C).
//! - Scene 2, the spawner: one object every 0.1 s from a source moving on a circle, the four meshes of
//!   ~900 / 2,130 / 3,456 / 3,458 triangles in equal quantity, up to 500 objects; 60 Hz, 50 s.
//!
//! - Scene 3, everyday content (not the papers'): `rtcd_scenes::Everyday`, 60 props of 12 to 2,000
//!   triangles from 5 cm to 5 m (boxes, planks, a 1 cm plate, a 5 m beam, furniture, rings, balls, a
//!   rock, a spring...) dropped as a pile on a ground box closed by four walls; 60 Hz, 10 s.
//!
//! `--quick` versions: scene 1 with 4 × 4 × 4 bodies for 3 s, scene 2 for 5 s (50 objects), scene 3
//! with 20 bodies (every kind once) for 4 s.

use std::{path::Path, sync::Arc};

use glam::{Quat, Vec3};
use rtcd::RtcdMesh;
use rtcd_scenes::{Avalanche, Everyday, Rng, load_mesh};

use crate::terrain::Level;
pub use rtcd_scenes::{Cuboid, GROUND_TOP};

/// 60 Hz, both scenes.
pub const DT: f32 = 1.0 / 60.0;

/// Which scene.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SceneId {
    /// The 512-object avalanche.
    Avalanche,
    /// The circular spawner.
    Spawner,
    /// The pile of everyday content.
    Everyday,
}

impl SceneId {
    /// `1` or `2`, as in the papers; `3` for the everyday pile.
    pub fn number(self) -> u32 {
        match self {
            SceneId::Avalanche => 1,
            SceneId::Spawner => 2,
            SceneId::Everyday => 3,
        }
    }
}

/// One object entering the scene.
#[derive(Clone, Copy, Debug)]
pub struct Spawn {
    /// Step at the start of which it appears.
    pub step: usize,
    /// Index into [`Scene::meshes`].
    pub mesh: usize,
    /// Initial pose.
    pub translation: Vec3,
    /// Initial orientation.
    pub rotation: Quat,
    /// Initial linear velocity.
    pub linvel: Vec3,
    /// Initial angular velocity.
    pub angvel: Vec3,
}

/// A scene: meshes, a ground box and a spawn schedule.
#[derive(Clone, Debug)]
pub struct Scene {
    /// Which scene.
    pub id: SceneId,
    /// Human-readable name with its size.
    pub name: String,
    /// Whether this is the `--quick` version.
    pub quick: bool,
    /// The meshes bodies use.
    pub meshes: Vec<Arc<RtcdMesh>>,
    /// Half extents of the static ground cuboid (its top face at [`GROUND_TOP`]).
    pub ground_half_extents: Vec3,
    /// Static walls standing on the ground (scene 1's and 3's four; none in scene 2).
    pub walls: Vec<Cuboid>,
    /// Half width of the floor between the walls (x and z), when there are walls.
    pub floor_half_width: Option<f32>,
    /// Steps simulated.
    pub steps: usize,
    /// Spawns, sorted by step.
    pub spawns: Vec<Spawn>,
    /// A level ground (terrain) in place of the ground box, if any.
    pub level: Option<Level>,
}

impl Scene {
    /// Number of bodies once every spawn happened.
    pub fn bodies(&self) -> usize {
        self.spawns.len()
    }

    /// Total triangles of every body.
    pub fn triangles(&self) -> usize {
        self.spawns.iter().map(|s| self.meshes[s.mesh].triangles().len()).sum()
    }

    /// Centre of the ground cuboid.
    pub fn ground_center(&self) -> Vec3 {
        Vec3::new(0.0, GROUND_TOP - self.ground_half_extents.y, 0.0)
    }

    /// Whether a point is above the ground's footprint (so below its top means through it).
    pub fn over_ground(&self, p: Vec3) -> bool {
        p.x.abs() <= self.ground_half_extents.x && p.z.abs() <= self.ground_half_extents.z
    }
}

/// Scene 1, the avalanche ([`rtcd_scenes::Avalanche`] with its default seed): `side`³ bodies
/// (8 → 512) for `seconds`.
pub fn avalanche(assets: &Path, side: usize, seconds: f32, quick: bool) -> Result<Scene, String> {
    let a = Avalanche::new(assets, side * side * side, Avalanche::DEFAULT_SEED)?;
    debug_assert_eq!(a.ground.center, Vec3::new(0.0, GROUND_TOP - a.ground.half_extents.y, 0.0));
    let spawns: Vec<Spawn> = a
        .bodies
        .iter()
        .map(|b| Spawn {
            step: 0,
            mesh: b.mesh,
            translation: b.translation,
            rotation: b.rotation,
            linvel: Vec3::ZERO,
            angvel: Vec3::ZERO,
        })
        .collect();
    let n = spawns.len();
    Ok(Scene {
        id: SceneId::Avalanche,
        name: format!("scene 1: avalanche of {n} concave meshes (~900 triangles), {seconds} s at 60 Hz"),
        quick,
        meshes: a.meshes,
        ground_half_extents: a.ground.half_extents,
        walls: a.walls.to_vec(),
        floor_half_width: Some(a.floor_half_width),
        steps: (seconds / DT).round() as usize,
        spawns,
        level: None,
    })
}

/// Scene 2, the circular spawner: one object every 0.1 s (every 6 steps) for `seconds`.
pub fn spawner(assets: &Path, seconds: f32, quick: bool) -> Result<Scene, String> {
    let meshes = ["blob_900", "blob_2130", "knot_3456", "coil_3458"]
        .iter()
        .map(|n| load_mesh(assets, n))
        .collect::<Result<Vec<_>, _>>()?;
    let mut rng = Rng::new(0x0005_CE4E_0002);
    let steps = (seconds / DT).round() as usize;
    // The source runs round a circle of radius 5 m, 8 m up, one turn every 3 s (10.5 m/s): two
    // consecutive objects start ~1.05 m apart sideways and ~0.55 m apart vertically (they leave at
    // 5 m/s downwards), so they never start interpenetrating.
    let (radius, height, period, down) = (5.0f32, 8.0f32, 3.0f32, 5.0f32);
    let spawns = (0..steps)
        .step_by(6)
        .enumerate()
        .map(|(k, step)| {
            let t = step as f32 * DT;
            let a = std::f32::consts::TAU * t / period;
            Spawn {
                step,
                mesh: k % meshes.len(),
                translation: Vec3::new(radius * a.cos(), GROUND_TOP + height, radius * a.sin()),
                rotation: rng.rotation(),
                linvel: Vec3::new(0.0, -down, 0.0),
                angvel: Vec3::new(rng.signed(1.0), rng.signed(1.0), rng.signed(1.0)),
            }
        })
        .collect::<Vec<_>>();
    let n = spawns.len();
    Ok(Scene {
        id: SceneId::Spawner,
        name: format!(
            "scene 2: circular spawner at 10 Hz, 4 concave meshes (900-3,458 triangles), {n} objects, {seconds} s at 60 Hz"
        ),
        quick,
        meshes,
        ground_half_extents: Vec3::new(20.0, 0.5, 20.0),
        walls: Vec::new(),
        floor_half_width: None,
        steps,
        spawns,
        level: None,
    })
}

/// Scene 3, the everyday pile ([`rtcd_scenes::Everyday`] with its default seed): `count` bodies for
/// `seconds`.
pub fn everyday(count: usize, seconds: f32, quick: bool) -> Result<Scene, String> {
    let e = Everyday::new(count, Everyday::DEFAULT_SEED)?;
    debug_assert_eq!(e.ground.center, Vec3::new(0.0, GROUND_TOP - e.ground.half_extents.y, 0.0));
    // Only the kinds some body uses (a small pile has fewer): no set-up time for the others.
    let used: Vec<usize> = (0..e.meshes.len()).filter(|&k| e.bodies.iter().any(|b| b.mesh == k)).collect();
    let meshes: Vec<Arc<RtcdMesh>> = used.iter().map(|&k| e.meshes[k].clone()).collect();
    let spawns: Vec<Spawn> = e
        .bodies
        .iter()
        .map(|b| Spawn {
            step: 0,
            mesh: used.iter().position(|&k| k == b.mesh).unwrap_or(0),
            translation: b.translation,
            rotation: b.rotation,
            linvel: Vec3::ZERO,
            angvel: Vec3::ZERO,
        })
        .collect();
    let n = spawns.len();
    let kinds = meshes.len();
    Ok(Scene {
        id: SceneId::Everyday,
        name: format!(
            "scene 3: everyday pile of {n} bodies ({kinds} kinds, 12-2,000 triangles, 5 cm-5 m), {seconds} s at 60 Hz"
        ),
        quick,
        meshes,
        ground_half_extents: e.ground.half_extents,
        walls: e.walls.to_vec(),
        floor_half_width: Some(e.floor_half_width),
        steps: (seconds / DT).round() as usize,
        spawns,
        level: None,
    })
}
