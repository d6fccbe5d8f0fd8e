//! Big levels: the time to cut a 100k- and a 1M-triangle terrain into chunks ([`LevelMesh::new`]:
//! validation, repair, chunking, each chunk's BVH and adjacency), beside Rapier's own build of the
//! same triangle-mesh collider, and scene 1's narrow phase on them beside the scene's own terrain.
//! The big terrains have the same cells and heights as the scene's near its bodies, so the bodies
//! meet the same surface; only the chunks near each body are paired, so the time per step should
//! not grow with the level.

use std::{sync::Arc, time::Instant};

use rtcd::{LevelMesh, RtcdParams};
use rtcd_rapier::rapier3d::prelude::SharedShape;

use crate::{
    bench::{mean, median, note},
    scene::Scene,
    sim::simulate,
    terrain::{Level, LevelKind, Terrain},
    world::Setup,
};

/// Cells of the 100k-triangle terrain's side (100,352 triangles).
pub const CELLS_100K: usize = 224;
/// Cells of the 1M-triangle terrain's side (1,002,528 triangles).
pub const CELLS_1M: usize = 708;

/// One terrain's figures.
#[derive(Clone, Debug)]
pub struct Row {
    /// `scene's terrain`, `100k`, `1M`.
    pub name: String,
    /// Triangles.
    pub triangles: usize,
    /// Chunks of its level mesh.
    pub chunks: usize,
    /// [`LevelMesh::new`] (ms).
    pub level_ms: f64,
    /// Rapier's triangle-mesh shape of the same grid (`SharedShape::trimesh`, ms).
    pub rapier_ms: f64,
    /// The scene's narrow phase per step on it, median and mean over the steps but the first (ms).
    pub np_median_ms: f64,
    /// See [`Self::np_median_ms`].
    pub np_mean_ms: f64,
    /// The first step (the driver cuts the level then, ms).
    pub first_ms: f64,
    /// Pairs of the batch per step (mean).
    pub batch_pairs: f64,
}

/// Builds the three terrains and runs `scene` (scene 1) on each.
pub fn run(scene: &Scene, params: RtcdParams) -> Result<Vec<Row>, String> {
    let floor = scene.floor_half_width.unwrap_or(scene.ground_half_extents.x);
    let terrains = [
        ("scene's terrain", Terrain::covering(scene.ground_half_extents.x, floor)),
        ("100k", Terrain::with_cells(CELLS_100K, floor)),
        ("1M", Terrain::with_cells(CELLS_1M, floor)),
    ];
    let recycle =
        rtcd_rapier::rapier3d::dynamics::IntegrationParameters::default().normalized_contact_recycle_distance;
    let setup = Setup::Rtcd(params, None, Some(recycle), crate::world::DeepOverlaps::default());
    let mut rows = Vec::new();
    for (name, terrain) in terrains {
        let (positions, triangles) = terrain.trimesh();
        let flat: Vec<u32> = triangles.iter().flatten().copied().collect();
        let start = Instant::now();
        let level = LevelMesh::new(name, &positions, &flat).map_err(|e| format!("{name}: {e}"))?;
        let level_ms = start.elapsed().as_secs_f64() * 1e3;
        let start = Instant::now();
        let shape = SharedShape::trimesh(positions, triangles).map_err(|e| format!("{name}: {e}"))?;
        let rapier_ms = start.elapsed().as_secs_f64() * 1e3;
        drop(shape);
        let (count, chunks) = (level.triangle_count(), level.chunks().len());
        drop(level);
        let scene = Scene {
            level: Some(Level { kind: LevelKind::TriMesh, terrain: Arc::new(terrain), ours: true }),
            ..scene.clone()
        };
        let run = simulate(&scene, name, setup, |_| {})?;
        let later: Vec<f64> = run.steps.iter().skip(1).map(|s| s.narrow_ms).collect();
        let row = Row {
            name: name.to_string(),
            triangles: count,
            chunks,
            level_ms,
            rapier_ms,
            np_median_ms: median(later.clone()).unwrap_or(0.0),
            np_mean_ms: mean(later.into_iter()).unwrap_or(0.0),
            first_ms: run.steps.first().map_or(0.0, |s| s.narrow_ms),
            batch_pairs: mean(run.steps.iter().skip(1).map(|s| s.batch_pairs as f64)).unwrap_or(0.0),
        };
        note(format!(
            "  big level {name}: {} triangles, level mesh {:.0} ms, scene {:.1} s",
            row.triangles,
            row.level_ms,
            run.wall.as_secs_f64()
        ));
        rows.push(row);
    }
    Ok(rows)
}

/// The big-level table.
pub fn table(scene: &Scene, rows: &[Row]) -> String {
    let mut t = format!(
        "\nBIG LEVEL — {} on trimesh terrains of the same cells and heights near the bodies, ours (plugin's default set-up)\n\n",
        scene.name
    );
    t.push_str(&format!(
        "  {:<16} {:>10} {:>7} {:>11} {:>11} {:>11} {:>10} {:>11} {:>9}\n",
        "terrain",
        "triangles",
        "chunks",
        "level ms",
        "Rapier ms",
        "np med ms",
        "np mean",
        "1st step",
        "batch"
    ));
    for r in rows {
        t.push_str(&format!(
            "  {:<16} {:>10} {:>7} {:>11.1} {:>11.1} {:>11.3} {:>10.3} {:>11.1} {:>9.1}\n",
            r.name,
            r.triangles,
            r.chunks,
            r.level_ms,
            r.rapier_ms,
            r.np_median_ms,
            r.np_mean_ms,
            r.first_ms,
            r.batch_pairs
        ));
    }
    t.push_str(
        "  level ms: LevelMesh::new (validation, repair, chunks of at most 1,024 triangles with their BVHs and adjacency); Rapier ms: SharedShape::trimesh of the same grid; np med / mean: the scene's narrow phase per step (every pair), median / mean over the steps but the first; 1st step: the first step's, in which the driver cuts the level; batch: pairs of rtcd's batch per step (mean)\n",
    );
    t
}

/// The big-level figures as JSON.
pub fn json(rows: &[Row]) -> serde_json::Value {
    serde_json::Value::Array(
        rows.iter()
            .map(|r| {
                serde_json::json!({
                    "terrain": r.name,
                    "triangles": r.triangles,
                    "chunks": r.chunks,
                    "level_mesh_build_ms": r.level_ms,
                    "rapier_trimesh_build_ms": r.rapier_ms,
                    "narrow_phase_median_ms_per_step": r.np_median_ms,
                    "narrow_phase_mean_ms_per_step": r.np_mean_ms,
                    "first_step_ms": r.first_ms,
                    "batch_pairs_per_step": r.batch_pairs,
                })
            })
            .collect(),
    )
}
