//! Level geometry: a scene on a terrain (a Rapier triangle-mesh or heightfield collider, cut into
//! chunks by `rtcd_rapier`) beside the same scene on the ground box, in the plugin's default set-up
//! (rtcd following Rapier's contact recycling), and with Rapier's own path on the terrain
//! (`CacheSettings::levels` off).
//!
//! **Cost per body-ground pair.** A simulation's narrow phase mixes body-body and body-ground
//! pairs, and rtcd's batch traces them all in one backend step. So each simulation is recorded
//! (poses and sleep states before every step) and replayed through a second world that holds the
//! ground alone and bodies that meet it but not each other ([`World::ground_only`]), their poses
//! and velocities set from the recording: its narrow phase (batch plus dispatcher calls, timed as
//! the simulation's) is the body-ground pairs' alone. Divided by Rapier's body-ground pairs with an
//! awake body (its broad phase's pairs, which its narrow phase handles each step), it is a cost per
//! pair that means the same for the ground box, the terrain and Rapier's own path. The first step
//! is left out of every time (the level is cut into chunks then).
//!
//! **Penetration** is measured without rtcd: each body vertex's height under the surface's own
//! triangles along the vertical, times the triangle's normal's vertical part ([`Surface`]).

use std::time::{Duration, Instant};

use glam::Vec3;
use rtcd::{Pose, RtcdParams};

use rtcd_scenes::measure::Surface;

use crate::{
    bench::{median, note},
    scene::{DT, GROUND_TOP, Scene},
    terrain::{Level, LevelKind, Terrain},
    world::{Setup, Shapes, World},
};

/// A body tunnelled when its box's centre is below the surface by more than its bounding
/// diagonal, or off the floor between the walls.
fn lost(scene: &Scene, surface: &Ground, mesh: &rtcd::RtcdMesh, centre: Vec3) -> bool {
    let f = scene.floor_half_width.unwrap_or(scene.ground_half_extents.x);
    let h = surface.at(centre.x, centre.z).map_or(GROUND_TOP, |(h, _)| h);
    !centre.is_finite()
        || centre.x.abs() > f
        || centre.z.abs() > f
        || centre.y < h - mesh.aabb().extents().length()
}

/// The ground's surface for the measure: the box's top face, or a level's triangles.
pub enum Ground {
    /// The box's top at [`GROUND_TOP`] over this half width.
    Plane(f32),
    /// A level's triangles.
    Level(Surface),
}

impl Ground {
    /// The ground of `scene`.
    pub fn of(scene: &Scene) -> Result<Self, String> {
        Ok(match &scene.level {
            None => Ground::Plane(scene.ground_half_extents.x),
            Some(l) => {
                let (_, tris) = l.terrain.collider(l.kind)?;
                Ground::Level(Surface::new(tris, l.terrain.cells, l.terrain.half_width))
            }
        })
    }

    /// Height and up part of the normal at `(x, z)`.
    fn at(&self, x: f32, z: f32) -> Option<(f32, f32)> {
        match self {
            Ground::Plane(h) => (x.abs() <= *h && z.abs() <= *h).then_some((GROUND_TOP, 1.0)),
            Ground::Level(s) => s.at(x, z),
        }
    }

    /// Per body, its deepest vertex under the surface (m, 0 when none is): the deepest and the sum.
    fn depths(&self, scene: &Scene, mesh_of: &[usize], poses: &[Pose]) -> (f32, f64) {
        let (mut max, mut sum) = (0.0f32, 0.0f64);
        for (p, &m) in poses.iter().zip(mesh_of) {
            let mesh = &scene.meshes[m];
            // The terrain's top is the box's: a body whose box is above it touches nothing.
            if mesh.aabb().transformed(p).min.y > GROUND_TOP + 0.05 {
                continue;
            }
            let mut deepest = 0.0f32;
            for v in mesh.positions() {
                let q = p.transform_point(*v);
                if let Some((h, up)) = self.at(q.x, q.z) {
                    deepest = deepest.max((h - q.y) * up);
                }
            }
            max = max.max(deepest);
            sum += f64::from(deepest);
        }
        (max, sum)
    }
}

/// One way to run a scene: its ground and which path handles it.
#[derive(Clone, Debug)]
pub struct Case {
    /// `cuboid, ours`, `trimesh terrain, Rapier's path`, ...
    pub label: String,
    /// The level ground, `None` for the box.
    pub level: Option<Level>,
}

/// The cases for `kinds`: the box, then each level ground with ours and with Rapier's path.
pub fn cases(kinds: &[LevelKind], terrain: &std::sync::Arc<Terrain>) -> Vec<Case> {
    let mut v = vec![Case { label: "cuboid, ours".into(), level: None }];
    for &kind in kinds {
        for ours in [true, false] {
            let path = if ours { "ours" } else { "Rapier's path" };
            v.push(Case {
                label: format!("{}, {path}", kind.name()),
                level: Some(Level { kind, terrain: terrain.clone(), ours }),
            });
        }
    }
    v
}

/// What one run of a case gave.
#[derive(Clone, Debug, Default)]
pub struct Figures {
    /// Narrow phase of the simulation per step (all pairs, ms).
    pub np_ms: f64,
    /// Narrow phase of the body-ground pairs per step (the replay, ms).
    pub ground_ms: f64,
    /// Rapier's body-ground pairs with an awake body, per step.
    pub ground_pairs: f64,
    /// `ground_ms` per pair (µs).
    pub cost_us: f64,
    /// Pairs of the batch per step in the replay (body-chunk pairs on a level, body-box pairs on the
    /// box; none on Rapier's path).
    pub batch_pairs: f64,
    /// Of those, traced per step (the rest held: Rapier recycles them).
    pub traced_pairs: f64,
    /// Deepest vertex under the ground over the run (m).
    pub pen_max: f32,
    /// Sum over the bodies of each one's deepest vertex under the ground, mean over the steps (m).
    pub pen_sum_mean: f64,
    /// Same after the last step (m).
    pub pen_sum_end: f64,
    /// Bodies that tunnelled (see [`lost`]).
    pub tunnelled: usize,
    /// Their meshes and the step each was first lost at.
    pub lost: Vec<String>,
    /// Bodies asleep at the end.
    pub asleep: usize,
    /// Wall time of the simulation and its replay (s).
    pub wall_s: f64,
}

/// Poses and sleep states before each step.
struct Recording {
    mesh_of: Vec<usize>,
    poses: Vec<Vec<Pose>>,
    asleep: Vec<Vec<bool>>,
}

/// Simulates `scene` in `setup`, measuring it, then replays its body-ground pairs.
pub fn run_case(scene: &Scene, setup: Setup) -> Result<Figures, String> {
    let start = Instant::now();
    let ground = Ground::of(scene)?;
    let mut world = World::new(scene, setup, Shapes::build(setup, &scene.meshes)?)?;
    let mesh_of: Vec<usize> = scene.spawns.iter().map(|s| s.mesh).collect();
    let mut rec = Recording { mesh_of, poses: Vec::new(), asleep: Vec::new() };
    let mut f = Figures::default();
    let mut lost_bodies = vec![false; scene.bodies()];
    let (mut np, mut next_spawn) = (Duration::ZERO, 0);
    for step in 0..scene.steps {
        while next_spawn < scene.spawns.len() && scene.spawns[next_spawn].step <= step {
            world.spawn(&scene.spawns[next_spawn]);
            next_spawn += 1;
        }
        let n = world.handles.len();
        let poses: Vec<Pose> = (0..n).map(|i| world.pose(i)).collect();
        let (max, sum) = ground.depths(scene, &rec.mesh_of, &poses);
        f.pen_max = f.pen_max.max(max);
        f.pen_sum_mean += sum;
        for (i, p) in poses.iter().enumerate() {
            let mesh = &scene.meshes[rec.mesh_of[i]];
            if !lost_bodies[i] && lost(scene, &ground, mesh, p.transform_point(mesh.aabb().center())) {
                lost_bodies[i] = true;
                f.lost.push(format!("{} at step {step}", mesh.name()));
            }
        }
        rec.asleep.push((0..n).map(|i| world.sleeping(i)).collect());
        rec.poses.push(poses);
        let t = world.step();
        if step > 0 {
            np += t.narrow_phase;
        }
    }
    let n = world.handles.len();
    let end: Vec<Pose> = (0..n).map(|i| world.pose(i)).collect();
    let (max, sum) = ground.depths(scene, &rec.mesh_of, &end);
    f.pen_max = f.pen_max.max(max);
    f.pen_sum_end = sum;
    f.pen_sum_mean /= scene.steps.max(1) as f64;
    f.asleep = (0..n).filter(|&i| world.sleeping(i)).count();
    f.tunnelled = lost_bodies.iter().filter(|l| **l).count();
    let timed = scene.steps.saturating_sub(1).max(1) as f64;
    f.np_ms = np.as_secs_f64() * 1e3 / timed;
    replay_ground(scene, setup, &rec, &mut f)?;
    f.wall_s = start.elapsed().as_secs_f64();
    Ok(f)
}

/// The recording's body-ground pairs alone, through a [`World::ground_only`].
fn replay_ground(scene: &Scene, setup: Setup, rec: &Recording, f: &mut Figures) -> Result<(), String> {
    let mut world = World::ground_only(scene, setup, Shapes::build(setup, &scene.meshes)?)?;
    let (mut time, mut pairs, mut batch, mut traced, mut next_spawn) = (Duration::ZERO, 0, 0, 0, 0);
    for (step, poses) in rec.poses.iter().enumerate() {
        while next_spawn < scene.spawns.len() && scene.spawns[next_spawn].step <= step {
            world.spawn(&scene.spawns[next_spawn]);
            next_spawn += 1;
        }
        for (i, p) in poses.iter().enumerate() {
            let next = rec.poses.get(step + 1).and_then(|n| n.get(i)).unwrap_or(p);
            let linvel = (next.translation - p.translation) / DT;
            let mut turn = next.rotation * p.rotation.inverse();
            if turn.w < 0.0 {
                turn = -turn;
            }
            world.set_state(i, p, linvel, turn.to_scaled_axis() / DT, rec.asleep[step][i]);
        }
        let t = world.step();
        if step > 0 {
            time += t.narrow_phase;
            pairs += world.ground_pairs();
            batch += t.batch_pairs;
            traced += t.traced_pairs;
        }
    }
    let timed = rec.poses.len().saturating_sub(1).max(1) as f64;
    f.ground_ms = time.as_secs_f64() * 1e3 / timed;
    f.ground_pairs = pairs as f64 / timed;
    f.cost_us = if pairs == 0 { 0.0 } else { time.as_secs_f64() * 1e6 / pairs as f64 };
    f.batch_pairs = batch as f64 / timed;
    f.traced_pairs = traced as f64 / timed;
    debug_assert_eq!(rec.mesh_of.len(), scene.bodies());
    Ok(())
}

/// A case's figures over its runs: times are the medians, the rest the first run's.
#[derive(Clone, Debug)]
pub struct CaseResult {
    /// The case.
    pub label: String,
    /// Whether the ground is the box.
    pub cuboid: bool,
    /// Whether a level ground is left to Rapier.
    pub rapier: bool,
    /// Median figures.
    pub figures: Figures,
    /// Deepest vertex of each run, when the runs differ (they should not: the same scene, seeded).
    pub spread: Option<Vec<f32>>,
}

/// Runs every case `repeat` times, in rounds (every case once, then again), so that the machine's
/// drift weighs on each alike, and keeps the medians.
pub fn compare(
    scene: &Scene,
    params: RtcdParams,
    cases: &[Case],
    repeat: usize,
) -> Result<Vec<CaseResult>, String> {
    let recycle =
        rtcd_rapier::rapier3d::dynamics::IntegrationParameters::default().normalized_contact_recycle_distance;
    let setup = Setup::Rtcd(params, None, Some(recycle), crate::world::DeepOverlaps::default());
    let mut runs: Vec<Vec<Figures>> = vec![Vec::new(); cases.len()];
    for round in 0..repeat.max(1) {
        for (case, out) in cases.iter().zip(&mut runs) {
            let scene = Scene { level: case.level.clone(), ..scene.clone() };
            let f = run_case(&scene, setup)?;
            note(format!(
                "  {} (run {}): {:.1} s, {:.3} ms/step, body-ground {:.2} µs/pair",
                case.label,
                round + 1,
                f.wall_s,
                f.np_ms,
                f.cost_us
            ));
            out.push(f);
        }
    }
    Ok(cases
        .iter()
        .zip(runs)
        .map(|(case, runs)| {
            let med = |g: fn(&Figures) -> f64| median(runs.iter().map(g).collect()).unwrap_or(0.0);
            let figures = Figures {
                np_ms: med(|f| f.np_ms),
                ground_ms: med(|f| f.ground_ms),
                cost_us: med(|f| f.cost_us),
                wall_s: med(|f| f.wall_s),
                ..runs[0].clone()
            };
            let deepest: Vec<f32> = runs.iter().map(|f| f.pen_max).collect();
            let spread = deepest.iter().any(|d| *d != deepest[0]).then_some(deepest);
            CaseResult {
                label: case.label.clone(),
                cuboid: case.level.is_none(),
                rapier: case.level.as_ref().is_some_and(|l| !l.ours),
                figures,
                spread,
            }
        })
        .collect())
}

/// The target: body-terrain pairs cost at most this many times body-box pairs, per pair.
pub const COST_RATIO_TARGET: f64 = 2.0;

/// The comparison's table.
pub fn table(scene: &Scene, terrain: &Terrain, results: &[CaseResult], repeat: usize) -> String {
    let mut t = format!(
        "\nLEVEL GEOMETRY — {}\n{} bodies, {} steps; the plugin's default set-up (rtcd following Rapier's contact recycling); terrain: {}; times: median of {} run(s), first step left out\n\n",
        scene.name,
        scene.bodies(),
        scene.steps,
        terrain_text(terrain),
        repeat.max(1)
    );
    t.push_str(&format!(
        "  {:<32} {:>9} {:>10} {:>9} {:>9} {:>7} {:>9} {:>9} {:>10} {:>9} {:>9} {:>9} {:>6} {:>6}\n",
        "ground, path",
        "np ms",
        "ground ms",
        "pairs",
        "µs/pair",
        "×box",
        "batch",
        "traced",
        "µs/traced",
        "pen max",
        "sum mean",
        "sum end",
        "tunnel",
        "asleep"
    ));
    let base = results.iter().find(|r| r.cuboid).map_or(0.0, |r| r.figures.cost_us);
    for r in results {
        let f = &r.figures;
        let ratio = if base > 0.0 { f.cost_us / base } else { 0.0 };
        let per_traced = if f.traced_pairs > 0.0 {
            format!("{:.2}", 1e3 * f.ground_ms / f.traced_pairs)
        } else {
            "-".to_string()
        };
        t.push_str(&format!(
            "  {:<32} {:>9.3} {:>10.3} {:>9.1} {:>9.2} {:>7.2} {:>9.1} {:>9.1} {:>10} {:>9.4} {:>9.4} {:>9.4} {:>6} {:>6}\n",
            r.label,
            f.np_ms,
            f.ground_ms,
            f.ground_pairs,
            f.cost_us,
            ratio,
            f.batch_pairs,
            f.traced_pairs,
            per_traced,
            f.pen_max,
            f.pen_sum_mean,
            f.pen_sum_end,
            f.tunnelled,
            f.asleep
        ));
        if !f.lost.is_empty() {
            t.push_str(&format!("    tunnelled: {}\n", f.lost.join(", ")));
        }
        if let Some(s) = &r.spread {
            t.push_str(&format!("    (the runs differ: deepest vertex {s:?})\n"));
        }
    }
    t.push_str(
        "  np ms: the simulation's narrow phase per step (every pair: rtcd's batch plus Rapier's dispatcher calls); ground ms: the body-ground pairs' alone, per step (the recorded poses replayed in a world of the ground and bodies that meet it only); pairs: Rapier's body-ground pairs with an awake body per step; µs/pair: ground ms per pair; ×box: µs/pair over the ground box's; batch: pairs of rtcd's batch per step in that replay (body-chunk pairs on a level), traced: those traced (the others held while Rapier recycles them); µs/traced: ground ms per traced batch pair; pen max: deepest body vertex under the ground's own triangles over the run (m, vertical distance times the normal's vertical part); sum mean / end: per body its deepest vertex, summed over the bodies, mean over the steps / after the last (m); tunnel: bodies whose box centre went below the surface by more than their bounding diagonal or off the floor; asleep: at the end\n",
    );
    for r in results.iter().filter(|r| !r.cuboid && !r.rapier) {
        let ratio = if base > 0.0 { r.figures.cost_us / base } else { f64::INFINITY };
        let rapier =
            results.iter().find(|o| o.rapier && o.label.split(',').next() == r.label.split(',').next());
        let vs = rapier.map_or(String::new(), |o| {
            format!(
                "; Rapier's own path {:.2} µs/pair ({:.1}x ours)",
                o.figures.cost_us,
                o.figures.cost_us / r.figures.cost_us.max(1e-9)
            )
        });
        t.push_str(&format!(
            "  [{}] body-{} pairs cost per pair at most {COST_RATIO_TARGET}x body-cuboid pairs: {:.2} µs vs {:.2} µs, {ratio:.2}x{vs}\n",
            crate::report::verdict((base > 0.0).then_some(ratio <= COST_RATIO_TARGET)),
            r.label.split(',').next().unwrap_or_default(),
            r.figures.cost_us,
            base
        ));
    }
    t
}

/// The terrain in words.
pub fn terrain_text(t: &Terrain) -> String {
    format!(
        "{}x{} cells of {:.2} m ({} triangles), hills {} m about their mean, {} m apart, top at the box's",
        t.cells,
        t.cells,
        2.0 * t.half_width / t.cells as f32,
        t.triangle_count(),
        crate::terrain::AMPLITUDE,
        crate::terrain::WAVELENGTH
    )
}

/// The comparison as JSON.
pub fn json(scene: &Scene, results: &[CaseResult]) -> serde_json::Value {
    let rows: Vec<serde_json::Value> = results
        .iter()
        .map(|r| {
            let f = &r.figures;
            serde_json::json!({
                "case": r.label,
                "narrow_phase_ms_per_step": f.np_ms,
                "ground_narrow_phase_ms_per_step": f.ground_ms,
                "ground_pairs_per_step": f.ground_pairs,
                "cost_us_per_ground_pair": f.cost_us,
                "batch_pairs_per_step": f.batch_pairs,
                "traced_pairs_per_step": f.traced_pairs,
                "penetration_max_m": f.pen_max,
                "penetration_sum_mean_m": f.pen_sum_mean,
                "penetration_sum_end_m": f.pen_sum_end,
                "tunnelled": f.tunnelled,
                "asleep": f.asleep,
            })
        })
        .collect();
    serde_json::json!({ "scene": scene.name, "bodies": scene.bodies(), "steps": scene.steps, "cases": rows })
}
