//! The measuring side of the examples, kept out of their way: the command line, a plugin that
//! measures every fixed tick from the running simulation, the headless runner, and the windowed
//! run's control (screenshot, end of `--steps`).
//!
//! Measured every tick: the narrow phase's time, pairs and contacts (from [`RtcdDiagnostics`]), the
//! whole physics tick's time, the penetration of bodies into the ground (how far each body's lowest
//! vertex over the ground's footprint is below its top), the bodies below the ground (centre below
//! its top), off it (centre beyond its footprint) or outside the walls, and the kinetic energy
//! (Rapier's, summed over the bodies). Printed every [`PRINT_EVERY`] ticks and summed up at the end;
//! a run that ends with a body below or off the ground or outside the walls, or a body that is not
//! ray traced, exits with a failure.

use std::{
    path::PathBuf,
    process::ExitCode,
    time::{Duration, Instant},
};

use bevy::{
    app::PluginsState,
    log::LogPlugin,
    prelude::*,
    render::{
        RenderPlugin,
        settings::{Backends, RenderCreation, WgpuSettings},
        view::screenshot::{Screenshot, ScreenshotCaptured, save_to_disk},
    },
    time::TimeUpdateStrategy,
    window::ExitCondition,
    winit::WinitPlugin,
};
use bevy_rapier3d::prelude::*;
use bevy_rtcd::prelude::*;
use rtcd_scenes::Cuboid;

use super::PanelLines;

/// The fixed tick (60 Hz, as in the papers).
pub const TICK: Duration = Duration::from_nanos(16_666_667);
/// Figures are printed every this many ticks.
pub const PRINT_EVERY: u64 = 60;

/// The flags, for `--help`.
pub const USAGE: &str = "\
usage: falling_objects [--headless] [--steps N] [--count N] [--seed N] [--backend cpu|gpu|gpu-pipelined|auto]
                       [--no-contact-recycling] [--no-overlay] [--window WxH]
                       [--screenshot PATH] [--frames N] [--ticks-per-frame K]

  --headless          no window: run --steps ticks as fast as possible, print figures, exit (non-zero
                      when a body ends below or off the ground or outside the walls, or is not
                      ray traced)
  --steps N           fixed ticks to simulate (default 600 headless; a window runs until closed)
  --count N           number of falling meshes, 1 to 100000 (default 512)
  --seed N            seed of the initial offsets and orientations (default 1)
  --backend B         narrow-phase backend: cpu, gpu (immediate), gpu-pipelined, auto (default)
  --no-contact-recycling
                      trace every pair every tick (RtcdSettings::contact_recycling = false); by default
                      the plugin follows Rapier's contact recycling: pairs that barely moved keep their
                      contacts and are not traced
  --contact-recycling follow Rapier's contact recycling (the default)
  --no-overlay        (window) start with the ray overlay off (F1 toggles it)
  --window WxH        (window) window size in pixels (default 1280x720)
  --screenshot PATH   (window) save a PNG of the window, then exit: after --frames N rendered frames,
                      else at the end of --steps, else after 240 ticks
  --frames N          see --screenshot
  --ticks-per-frame K (with --screenshot) fixed ticks per rendered frame, 1 to 14 (default 1), so the
                      picture shows the same tick whatever the machine's speed";

/// The command line.
#[derive(Clone, Debug)]
pub struct Args {
    /// `--headless`.
    pub headless: bool,
    /// `--steps`.
    pub steps: Option<u64>,
    /// `--count`.
    pub count: usize,
    /// `--seed`.
    pub seed: u64,
    /// `--backend`.
    pub backend: RtcdBackend,
    /// Not `--no-contact-recycling`.
    pub contact_recycling: bool,
    /// `--no-overlay`.
    pub no_overlay: bool,
    /// `--window`.
    pub window: (u32, u32),
    /// `--screenshot`.
    pub screenshot: Option<PathBuf>,
    /// `--frames`.
    pub frames: Option<u64>,
    /// `--ticks-per-frame`.
    pub ticks_per_frame: Option<u32>,
    /// When the arguments were parsed: the set-up (loading the scene, building the app) runs from
    /// here to the first tick.
    pub started: Instant,
}

impl Args {
    /// The process's arguments; `Err` with the exit code once usage or an error is printed.
    pub fn from_env() -> Result<Self, ExitCode> {
        match Self::parse(std::env::args().skip(1)) {
            Ok(Some(a)) => Ok(a),
            Ok(None) => {
                println!("{USAGE}");
                Err(ExitCode::SUCCESS)
            }
            Err(e) => {
                eprintln!("error: {e}\n\n{USAGE}");
                Err(ExitCode::from(2))
            }
        }
    }

    /// Parses flags; `Ok(None)` for `--help`.
    pub fn parse(mut it: impl Iterator<Item = String>) -> Result<Option<Self>, String> {
        let mut a = Args {
            headless: false,
            steps: None,
            count: 512,
            seed: 1,
            backend: RtcdBackend::Auto,
            contact_recycling: RtcdSettings::default().contact_recycling,
            no_overlay: false,
            window: (1280, 720),
            screenshot: None,
            frames: None,
            ticks_per_frame: None,
            started: Instant::now(),
        };
        fn value(flag: &str, v: Option<String>) -> Result<String, String> {
            v.filter(|v| !v.starts_with("--")).ok_or_else(|| format!("{flag} needs a value"))
        }
        fn number<T: std::str::FromStr>(flag: &str, v: Option<String>) -> Result<T, String> {
            let v = value(flag, v)?;
            v.parse().map_err(|_| format!("{flag}: `{v}` is not a non-negative integer"))
        }
        while let Some(flag) = it.next() {
            match flag.as_str() {
                "--headless" => a.headless = true,
                "--no-overlay" => a.no_overlay = true,
                "--contact-recycling" => a.contact_recycling = true,
                "--no-contact-recycling" => a.contact_recycling = false,
                "--steps" => a.steps = Some(number(&flag, it.next())?),
                "--count" => a.count = number(&flag, it.next())?,
                "--seed" => a.seed = number(&flag, it.next())?,
                "--frames" => a.frames = Some(number(&flag, it.next())?),
                "--ticks-per-frame" => a.ticks_per_frame = Some(number(&flag, it.next())?),
                "--screenshot" => a.screenshot = Some(PathBuf::from(value(&flag, it.next())?)),
                "--window" => {
                    let v = value(&flag, it.next())?;
                    a.window = v
                        .split_once('x')
                        .and_then(|(w, h)| Some((w.parse().ok()?, h.parse().ok()?)))
                        .filter(|&(w, h)| w >= 64 && h >= 64)
                        .ok_or_else(|| format!("--window: `{v}` is not WIDTHxHEIGHT (at least 64x64)"))?;
                }
                "--backend" => {
                    a.backend = match value(&flag, it.next())?.as_str() {
                        "auto" => RtcdBackend::Auto,
                        "cpu" => RtcdBackend::Cpu,
                        "gpu" | "gpu-immediate" => RtcdBackend::Gpu { mode: GpuMode::Immediate },
                        "gpu-pipelined" => RtcdBackend::Gpu { mode: GpuMode::Pipelined },
                        other => return Err(format!("--backend: unknown backend `{other}`")),
                    }
                }
                "-h" | "--help" => return Ok(None),
                other => return Err(format!("unknown argument `{other}`")),
            }
        }
        if !(1..=MAX_COUNT).contains(&a.count) {
            return Err(format!("--count must be from 1 to {MAX_COUNT} (got {})", a.count));
        }
        if a.headless && (a.screenshot.is_some() || a.frames.is_some()) {
            return Err("--screenshot and --frames need a window: drop --headless".into());
        }
        if let Some(k) = a.ticks_per_frame {
            if a.screenshot.is_none() {
                return Err("--ticks-per-frame only applies with --screenshot".into());
            }
            // Bevy's virtual clock advances at most 250 ms per frame: 15 ticks of 1/60 s are a
            // hair more.
            if !(1..=14).contains(&k) {
                return Err(format!("--ticks-per-frame must be between 1 and 14 (got {k})"));
            }
        }
        if let Some(dir) =
            a.screenshot.as_ref().and_then(|p| p.parent()).filter(|d| !d.as_os_str().is_empty())
        {
            std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        Ok(Some(a))
    }

    /// Whether the GPU backend's pipelined mode is asked for (it runs in the render world).
    pub fn pipelined(&self) -> bool {
        self.backend == RtcdBackend::Gpu { mode: GpuMode::Pipelined }
    }
}

/// Figures of one tick.
#[derive(Clone, Copy, Debug, Default)]
pub struct TickFigures {
    /// Narrow phase (ms), from [`RtcdDiagnostics`].
    pub narrow_phase_ms: f64,
    /// The whole fixed tick: Rapier's step and the narrow phase (ms).
    pub tick_ms: f64,
    /// Pairs the narrow phase handled.
    pub pairs: usize,
    /// Contact points it handed to Rapier.
    pub contacts: u64,
    /// Deepest penetration of a body's vertex into the ground (m).
    pub max_penetration: f32,
    /// Mean over the bodies touching the ground (lowest vertex below its top).
    pub mean_penetration: f32,
    /// Bodies touching the ground.
    pub on_ground: usize,
    /// Bodies whose centre is below the ground's top (through it) over its footprint.
    pub below_ground: usize,
    /// Bodies whose centre left the ground's footprint.
    pub off_ground: usize,
    /// Bodies over the ground but outside the floor between the walls (they went over a wall).
    pub outside_walls: usize,
    /// Kinetic energy of the dynamic bodies (J).
    pub kinetic_energy: f32,
}

/// Figures of the run so far (a resource).
#[derive(Resource, Default)]
pub struct Stats {
    /// Fixed ticks run.
    pub ticks: u64,
    /// The last tick's figures.
    pub last: TickFigures,
    tick_start: Option<Instant>,
    narrow_phase_ms: Vec<f64>,
    tick_ms: Vec<f64>,
    /// Deepest ground penetration seen, with its tick.
    max_penetration: (f32, u64),
    /// Most bodies below the ground, off it or outside the walls at once.
    max_lost: usize,
    /// Bodies whose collider is not ray traced (fallback or failed), at the last tick.
    not_ray_traced: usize,
    /// Pipelined mode: what the main world got from the render world.
    pipe: PipeFigures,
}

/// Pipelined mode, summed over the run (and over the last [`PRINT_EVERY`] ticks): how late the
/// results were, and how the dispatcher served the pairs from them.
#[derive(Clone, Copy, Debug, Default)]
struct PipeFigures {
    ticks: u64,
    latency_sum: u64,
    latency_max: u32,
    refreshed: u64,
    misses: u64,
    miss_ms: f64,
    dropped: u64,
}

impl PipeFigures {
    fn add(&mut self, latency: u32, refreshed: u64, misses: u64, miss_ms: f64, dropped: u64) {
        self.ticks += 1;
        self.latency_sum += u64::from(latency);
        self.latency_max = self.latency_max.max(latency);
        self.refreshed += refreshed;
        self.misses += misses;
        self.miss_ms += miss_ms;
        self.dropped = dropped;
    }

    fn describe(&self) -> String {
        let n = self.ticks.max(1) as f64;
        format!(
            "results {:.1} ticks late on average (at most {}); a tick: {:.0} pairs refreshed from older \
             results, {:.1} computed on the spot on the CPU ({:.2} ms); {} batches dropped since the start",
            self.latency_sum as f64 / n,
            self.latency_max,
            self.refreshed as f64 / n,
            self.misses as f64 / n,
            self.miss_ms / n,
            self.dropped,
        )
    }
}

/// The most falling meshes `--count` takes (a pile far beyond it does not fit in memory).
const MAX_COUNT: usize = 100_000;

/// Measures every fixed tick.
#[derive(Resource, Clone, Copy)]
pub struct MeasurePlugin {
    /// The static box the bodies fall on (its top face is the ground).
    pub ground: Cuboid,
    /// Half extents (x, z) of the floor between the walls, centred on the ground, if walled.
    pub floor: Option<Vec2>,
}

impl MeasurePlugin {
    fn top(&self) -> f32 {
        self.ground.center.y + self.ground.half_extents.y
    }
    fn within(&self, p: Vec3, half: Vec2) -> bool {
        let d = (p - self.ground.center).abs();
        d.x <= half.x && d.z <= half.y
    }
    fn over(&self, p: Vec3) -> bool {
        self.within(p, self.ground.half_extents.xz())
    }
}

impl Plugin for MeasurePlugin {
    fn build(&self, app: &mut App) {
        app.insert_resource(*self)
            .init_resource::<Stats>()
            .add_systems(FixedFirst, |mut s: ResMut<Stats>| s.tick_start = Some(Instant::now()))
            .add_systems(FixedLast, measure_tick);
    }
}

/// End of every fixed tick (after Rapier's writeback and the narrow phase's diagnostics).
fn measure_tick(
    mut stats: ResMut<Stats>,
    ground: Res<MeasurePlugin>,
    diagnostics: Res<RtcdDiagnostics>,
    narrow: Res<RtcdNarrowPhase>,
    bodies: Query<(&Transform, Option<&RtcdColliderState>), With<RigidBody>>,
    rapier: Query<&RapierRigidBodySet, With<DefaultRapierContext>>,
    mut window: Local<PipeFigures>,
) {
    let pipelined = diagnostics.backend.starts_with("gpu pipelined");
    if pipelined {
        let cache = narrow.metrics().cache;
        let miss_ms = cache.miss_time.as_secs_f64() * 1e3;
        let d = &diagnostics;
        stats.pipe.add(d.latency_ticks, cache.refreshed, cache.misses, miss_ms, d.dropped_batches);
        window.add(d.latency_ticks, cache.refreshed, cache.misses, miss_ms, d.dropped_batches);
    }
    let mut f = TickFigures {
        narrow_phase_ms: diagnostics.narrow_phase_time.as_secs_f64() * 1e3,
        tick_ms: stats.tick_start.take().map_or(0.0, |t| t.elapsed().as_secs_f64() * 1e3),
        pairs: diagnostics.pairs,
        contacts: diagnostics.contacts,
        ..default()
    };
    let (top, mut sum) = (ground.top(), 0.0f32);
    stats.not_ray_traced = 0;
    for (t, state) in &bodies {
        let p = t.translation;
        let mesh = match state {
            Some(RtcdColliderState::Ready { mesh }) => Some(mesh),
            _ => None,
        };
        stats.not_ray_traced += usize::from(mesh.is_none());
        if !ground.over(p) {
            f.off_ground += 1;
            continue;
        }
        f.below_ground += usize::from(p.y < top);
        f.outside_walls += usize::from(ground.floor.is_some_and(|h| !ground.within(p, h)));
        let Some(mesh) = mesh.filter(|m| p.y - top <= m.max_radius()) else {
            continue; // not ray traced, or cannot reach the ground
        };
        // Only vertices over the ground: a body tipping over its edge hangs beside it, not in it.
        let lowest = mesh
            .positions()
            .iter()
            .map(|v| t.rotation * *v + p)
            .filter(|w| ground.over(*w))
            .fold(f32::INFINITY, |m, w| m.min(w.y - top));
        if lowest < 0.0 {
            f.on_ground += 1;
            sum -= lowest;
            f.max_penetration = f.max_penetration.max(-lowest);
        }
    }
    f.mean_penetration = if f.on_ground > 0 { sum / f.on_ground as f32 } else { 0.0 };
    f.kinetic_energy = rapier.single().map_or(0.0, |r| {
        r.bodies.iter().filter(|(_, b)| b.is_dynamic()).map(|(_, b)| b.kinetic_energy()).sum()
    });
    stats.ticks += 1;
    let tick = stats.ticks;
    if f.max_penetration > stats.max_penetration.0 {
        stats.max_penetration = (f.max_penetration, tick);
    }
    stats.max_lost = stats.max_lost.max(f.below_ground + f.off_ground + f.outside_walls);
    stats.narrow_phase_ms.push(f.narrow_phase_ms);
    stats.tick_ms.push(f.tick_ms);
    stats.last = f;
    if tick.is_multiple_of(PRINT_EVERY) {
        let mean = |v: &[f64]| {
            v[v.len().saturating_sub(PRINT_EVERY as usize)..].iter().sum::<f64>() / PRINT_EVERY as f64
        };
        println!(
            "tick {tick:>5} t={:>5.2}s | narrow phase {:>7.2} ms (mean of last {PRINT_EVERY}: {:>7.2} ms; whole tick {:>7.2} ms) \
             | pairs {:>5} | contacts {:>5} | ground penetration max {:>6.2} mm, mean {:>6.2} mm over {:>3} bodies \
             | below ground {} | off ground {} | outside walls {} | kinetic energy {:>9.3} J",
            tick as f64 * TICK.as_secs_f64(),
            f.narrow_phase_ms,
            mean(&stats.narrow_phase_ms),
            mean(&stats.tick_ms),
            f.pairs,
            f.contacts,
            1e3 * f.max_penetration,
            1e3 * f.mean_penetration,
            f.on_ground,
            f.below_ground,
            f.off_ground,
            f.outside_walls,
            f.kinetic_energy,
        );
        if pipelined {
            println!("           pipelined: {}", window.describe());
        }
        *window = PipeFigures::default();
    }
}

impl Stats {
    /// What went wrong in the run, if anything: a body below the ground, off it or outside the
    /// walls at the end, a body not ray traced, a non-finite energy.
    pub fn failures(&self) -> Vec<String> {
        let l = &self.last;
        let mut out = Vec::new();
        if l.below_ground + l.off_ground + l.outside_walls > 0 {
            out.push(format!(
                "{} bodies below the ground, {} off it, {} outside the walls",
                l.below_ground, l.off_ground, l.outside_walls
            ));
        }
        if self.not_ray_traced > 0 {
            out.push(format!("{} bodies are not ray traced (see the log)", self.not_ray_traced));
        }
        if !l.kinetic_energy.is_finite() {
            out.push("the kinetic energy is not finite".into());
        }
        out
    }

    /// The end-of-run summary.
    pub fn summary(&self, count: usize, backend: &str, setup: Duration, run: Duration) -> String {
        let n = self.narrow_phase_ms.len().max(1) as f64;
        let max = |v: &[f64]| {
            v.iter().enumerate().fold((0.0, 0), |m, (i, &x)| if x > m.0 { (x, i + 1) } else { m })
        };
        let ((np_max, np_at), (tick_max, tick_at)) = (max(&self.narrow_phase_ms), max(&self.tick_ms));
        let l = &self.last;
        let mut s = format!(
            "== falling_objects: {count} bodies, {} ticks of {:.2} ms, backend {backend}\n\
             narrow phase per tick: mean {:.2} ms, max {np_max:.2} ms (tick {np_at})\n\
             whole physics tick per tick: mean {:.2} ms, max {tick_max:.2} ms (tick {tick_at})\n\
             worst ground penetration: {:.2} mm at tick {}\n\
             at the end: ground penetration max {:.2} mm, mean {:.2} mm over {} bodies; {} pairs, {} contacts\n\
             bodies below the ground: {} at the end; off the ground: {}; outside the walls: {} (at most {} together during the run)\n\
             final kinetic energy: {:.4} J\n\
             wall time: {:.2} s (set-up {:.2} s, simulation {:.2} s)",
            self.ticks,
            TICK.as_secs_f64() * 1e3,
            self.narrow_phase_ms.iter().sum::<f64>() / n,
            self.tick_ms.iter().sum::<f64>() / n,
            1e3 * self.max_penetration.0,
            self.max_penetration.1,
            1e3 * l.max_penetration,
            1e3 * l.mean_penetration,
            l.on_ground,
            l.pairs,
            l.contacts,
            l.below_ground,
            l.off_ground,
            l.outside_walls,
            self.max_lost,
            l.kinetic_energy,
            (setup + run).as_secs_f64(),
            setup.as_secs_f64(),
            run.as_secs_f64(),
        );
        if backend.starts_with("gpu pipelined") {
            s.push_str(&format!("\npipelined: {}", self.pipe.describe()));
            s.push_str("\nnote: pipelined, the narrow-phase time is the GPU step's (a tick or more ahead) plus the main world's work");
        }
        for f in self.failures() {
            s.push_str(&format!("\nFAILED: {f}"));
        }
        s
    }
}

fn backend_name(world: &World) -> String {
    let state = world.resource::<RtcdNarrowPhase>();
    state.active_backend().map_or_else(|| "(not started)".into(), |b| b.to_string())
}

/// Headless plugins: no window; the render plugins (without a window) only for the pipelined GPU
/// mode, which runs in the render world. Every `update()` then runs one fixed tick.
pub fn add_headless_plugins(app: &mut App, args: &Args) {
    // Bevy panics at start-up without an adapter: check first, else let the plugin fall back.
    let pipelined = args.pipelined() && {
        let options = rtcd_wgpu::DeviceOptions { backends: wgpu::Backends::VULKAN, ..default() };
        rtcd_wgpu::create_device(&options)
            .inspect_err(|e| {
                eprintln!("no Vulkan adapter for the render plugins ({e}); running without them")
            })
            .is_ok()
    };
    if pipelined {
        let render = RenderPlugin {
            render_creation: RenderCreation::Automatic(Box::new(WgpuSettings {
                backends: Some(Backends::VULKAN),
                ..default()
            })),
            ..default()
        };
        let window =
            WindowPlugin { primary_window: None, exit_condition: ExitCondition::DontExit, ..default() };
        app.add_plugins(DefaultPlugins.set(window).set(render).disable::<WinitPlugin>());
    } else {
        app.add_plugins((MinimalPlugins, TransformPlugin, LogPlugin::default()));
    }
    app.insert_resource(TimeUpdateStrategy::ManualDuration(TICK));
}

/// Runs the app: headless, `--steps` ticks (default 600) then the summary; with a window, until it
/// is closed, the screenshot is saved or `--steps` ran.
pub fn run(mut app: App, args: &Args) -> ExitCode {
    if !args.headless {
        if args.screenshot.is_some() {
            // Every frame runs the same number of ticks, however slow the renderer.
            let per_frame = TICK * args.ticks_per_frame.unwrap_or(1);
            app.insert_resource(TimeUpdateStrategy::ManualDuration(per_frame));
        }
        app.insert_resource(Windowed {
            args: args.clone(),
            first_tick: None,
            frames: 0,
            shot: false,
            done: false,
        })
        .add_systems(Update, windowed_control);
        return match app.run() {
            AppExit::Success => ExitCode::SUCCESS,
            AppExit::Error(c) => ExitCode::from(c.get()),
        };
    }
    let steps = args.steps.unwrap_or(600);
    // What `App::run` does before its loop: wait for the renderer (when there is one), finish.
    while app.plugins_state() == PluginsState::Adding {
        bevy::tasks::tick_global_task_pools_on_main_thread();
    }
    app.finish();
    app.cleanup();
    let sim_start = Instant::now();
    let mut updates = 0u64;
    // The first update starts the clock; after it every update runs exactly one fixed tick.
    while app.world().resource::<Stats>().ticks < steps {
        app.update();
        updates += 1;
        if updates > steps.saturating_mul(2).saturating_add(10) {
            eprintln!("the fixed schedule does not run once per update; giving up");
            return ExitCode::FAILURE;
        }
    }
    let stats = app.world().resource::<Stats>();
    let backend = backend_name(app.world());
    println!("{}", stats.summary(args.count, &backend, sim_start - args.started, sim_start.elapsed()));
    if stats.failures().is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}

/// Windowed-run state.
#[derive(Resource)]
struct Windowed {
    args: Args,
    /// When the first tick ran.
    first_tick: Option<Instant>,
    frames: u64,
    shot: bool,
    done: bool,
}

/// Every frame: the panel's lines; the screenshot when due; the summary and exit after `--steps`.
fn windowed_control(world: &mut World) {
    let stats = world.resource::<Stats>();
    let (ticks, l) = (stats.ticks, stats.last);
    let overlay = world.get_resource::<RtcdDebugSettings>().is_some_and(|d| d.enabled);
    if let Some(mut panel) = world.get_resource_mut::<PanelLines>() {
        panel.0 = vec![
            format!(
                "tick {ticks} ({:.2} s): whole tick {:.1} ms, kinetic energy {:.2} J",
                ticks as f64 * TICK.as_secs_f64(),
                l.tick_ms,
                l.kinetic_energy
            ),
            format!(
                "ground penetration: max {:.2} mm, mean {:.2} mm ({} bodies)",
                1e3 * l.max_penetration,
                1e3 * l.mean_penetration,
                l.on_ground
            ),
            format!(
                "lost: {} below the ground, {} off it, {} outside the walls",
                l.below_ground, l.off_ground, l.outside_walls
            ),
            format!("F1: ray overlay {}", if overlay { "on; contacts red, rays:" } else { "off" }),
        ];
        if overlay {
            panel.0.push("  standard magenta, iterative yellow, predictive white".into());
        }
    }
    let mut w = world.resource_mut::<Windowed>();
    w.frames += 1;
    if ticks > 0 && w.first_tick.is_none() {
        w.first_tick = Some(Instant::now());
    }
    if w.done || w.shot {
        return;
    }
    let steps_done = w.args.steps.is_some_and(|s| ticks >= s);
    if let Some(path) = w.args.screenshot.clone() {
        let due = match (w.args.frames, w.args.steps) {
            (Some(f), _) => w.frames >= f,
            (None, Some(_)) => steps_done,
            (None, None) => ticks >= 240,
        };
        if due {
            w.shot = true;
            info!("screenshot at frame {}, tick {ticks}", w.frames);
            world.spawn(Screenshot::primary_window()).observe(save_to_disk(path)).observe(
                |_: On<ScreenshotCaptured>, mut exit: MessageWriter<AppExit>| {
                    exit.write(AppExit::Success);
                },
            );
        }
    } else if steps_done {
        w.done = true;
        let (count, started) = (w.args.count, w.args.started);
        let first_tick = w.first_tick.unwrap_or(started);
        let stats = world.resource::<Stats>();
        let summary = stats.summary(count, &backend_name(world), first_tick - started, first_tick.elapsed());
        println!("{summary}");
        let ok = stats.failures().is_empty();
        world.write_message(if ok { AppExit::Success } else { AppExit::from_code(1) });
    }
}
