//! The IRTCD avalanche (Hermann et al. 2013 §4.1, scene 1): N concave meshes of ~900 triangles
//! (`torus_900`, `blob_900`, `bent_tube_896` in turn; 512 by default) start in a tall grid with seeded
//! random orientations and small offsets, and fall onto a static ground walled by four low boxes.
//! Every mesh–mesh and mesh–ground contact comes from [`RtcdPlugin`]'s ray-traced narrow phase;
//! Rapier solves them at a fixed 60 Hz tick.
//!
//! ```sh
//! cargo run --release --example falling_objects                       # window (F1: ray overlay)
//! cargo run --release --example falling_objects -- --headless          # 600 ticks, prints figures
//! cargo run --release --example falling_objects -- --screenshot out/falling_objects.png
//! ```
//!
//! Headless, it prints every 60 ticks and at the end: the narrow phase's time (from
//! [`RtcdDiagnostics`]), contacts, the penetration of bodies into the ground (how far each body's
//! lowest vertex over the ground's footprint is below y = 0), the bodies below the ground (centre below y = 0, or off the
//! ground's footprint: the summary tells those that spilled over the walls apart), and the kinetic
//! energy (Rapier's, summed over the bodies). All are computed from the
//! simulation as it runs. Run with `--help` for the flags.

mod common;

use std::{
    collections::HashMap,
    path::PathBuf,
    process::ExitCode,
    sync::Arc,
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
    window::{ExitCondition, WindowResolution},
    winit::WinitPlugin,
};
use bevy_rapier3d::prelude::*;
use bevy_rtcd::{prelude::*, rtcd::RtcdMesh};
use common::{DiagnosticsPanelPlugin, Ground, PanelLines};
use rand::{Rng, SeedableRng, rngs::StdRng};

/// The meshes bodies use, in turn.
const MESHES: [&str; 3] = ["torus_900", "blob_900", "bent_tube_896"];
/// The fixed tick (60 Hz, as in the papers).
const TICK: Duration = Duration::from_nanos(16_666_667);
/// Figures are printed every this many ticks.
const PRINT_EVERY: u64 = 60;

const USAGE: &str = "\
usage: falling_objects [--headless] [--steps N] [--count N] [--backend cpu|gpu|gpu-pipelined|auto]
                       [--screenshot PATH] [--frames N] [--ticks-per-frame K] [--no-overlay] [--seed N]

  --headless          no window: run --steps ticks as fast as possible, print figures, exit
  --steps N           fixed ticks to simulate (default 600 headless; a window runs until closed)
  --count N           number of falling meshes (default 512)
  --backend B         narrow-phase backend: cpu, gpu (immediate), gpu-pipelined, auto (default)
  --screenshot PATH   (window) save a PNG of the window once the pile has settled a little, then exit:
                      after --frames N rendered frames, else at the end of --steps, else after 240
                      ticks; the ray overlay starts on. Every frame runs exactly --ticks-per-frame
                      ticks (default 1), so the picture does not depend on the machine's speed.
  --frames N          see --screenshot
  --ticks-per-frame K (with --screenshot) fixed ticks per rendered frame, 1 to 15 (default 1)
  --no-overlay        (window) start with the ray overlay off, also for --screenshot (F1 toggles it)
  --seed N            seed of the initial offsets and orientations (default 1)
  --no-contact-recycling
                      turn Rapier's contact recycling off and trace every pair every tick
                      (RtcdSettings::contact_recycling = false); by default the plugin follows it:
                      pairs that barely moved keep their contacts and are not traced
  --contact-recycling follow Rapier's contact recycling (the default)";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BackendArg {
    Auto,
    Cpu,
    Gpu,
    GpuPipelined,
}

impl BackendArg {
    fn backend(self) -> RtcdBackend {
        match self {
            BackendArg::Auto => RtcdBackend::Auto,
            BackendArg::Cpu => RtcdBackend::Cpu,
            BackendArg::Gpu => RtcdBackend::Gpu { mode: GpuMode::Immediate },
            BackendArg::GpuPipelined => RtcdBackend::Gpu { mode: GpuMode::Pipelined },
        }
    }
}

/// The command line.
#[derive(Clone, Debug)]
struct Args {
    headless: bool,
    steps: Option<u64>,
    count: usize,
    backend: BackendArg,
    screenshot: Option<PathBuf>,
    frames: Option<u64>,
    no_overlay: bool,
    ticks_per_frame: Option<u32>,
    seed: u64,
    contact_recycling: bool,
}

fn parse_args(mut it: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
    let mut a = Args {
        headless: false,
        steps: None,
        count: 512,
        backend: BackendArg::Auto,
        screenshot: None,
        frames: None,
        no_overlay: false,
        ticks_per_frame: None,
        seed: 1,
        contact_recycling: RtcdSettings::default().contact_recycling,
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
            "--steps" => a.steps = Some(number("--steps", it.next())?),
            "--count" => a.count = number("--count", it.next())?,
            "--frames" => a.frames = Some(number("--frames", it.next())?),
            "--seed" => a.seed = number("--seed", it.next())?,
            "--ticks-per-frame" => a.ticks_per_frame = Some(number("--ticks-per-frame", it.next())?),
            "--screenshot" => a.screenshot = Some(PathBuf::from(value("--screenshot", it.next())?)),
            "--backend" => {
                a.backend = match value("--backend", it.next())?.as_str() {
                    "auto" => BackendArg::Auto,
                    "cpu" => BackendArg::Cpu,
                    "gpu" | "gpu-immediate" => BackendArg::Gpu,
                    "gpu-pipelined" => BackendArg::GpuPipelined,
                    other => {
                        return Err(format!(
                            "--backend: unknown backend `{other}` (expected cpu, gpu, gpu-pipelined or auto)"
                        ));
                    }
                }
            }
            "-h" | "--help" => return Ok(None),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    if a.count == 0 {
        return Err("--count must be at least 1".into());
    }
    if a.headless && a.screenshot.is_some() {
        return Err("--screenshot needs a window: drop --headless (use xvfb-run without a display)".into());
    }
    if a.headless && a.frames.is_some() {
        return Err("--frames only applies to windowed runs; use --steps headless".into());
    }
    if let Some(k) = a.ticks_per_frame {
        if a.screenshot.is_none() {
            return Err("--ticks-per-frame only applies with --screenshot".into());
        }
        // Bevy's virtual clock advances at most 250 ms per frame.
        if !(1..=15).contains(&k) {
            return Err(format!("--ticks-per-frame must be between 1 and 15 (got {k})"));
        }
    }
    Ok(Some(a))
}

/// The scene: meshes, ground and where every body starts.
#[derive(Resource, Clone)]
struct Scene {
    meshes: Vec<Arc<RtcdMesh>>,
    ground: Ground,
    /// (mesh index, pose) of every body.
    bodies: Vec<(usize, Transform)>,
}

impl Scene {
    /// `count` bodies on a grid of `side × side` columns (side = ⌈∛count⌉), as many layers as needed.
    /// Bounding spheres never overlap at the start.
    fn avalanche(count: usize, seed: u64) -> Result<Self, String> {
        let meshes = MESHES
            .iter()
            .map(|n| {
                let p = common::mesh_path(n);
                RtcdMesh::from_obj(&p).map(Arc::new).map_err(|e| format!("{}: {e}", p.display()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let radius = meshes.iter().map(|m| m.max_radius()).fold(0.0, f32::max);
        let spacing = 2.0 * radius + 0.06;
        let side = (1..).find(|s| s * s * s >= count).unwrap_or(1);
        let half = (side as f32 - 1.0) * 0.5;
        let mut rng = StdRng::seed_from_u64(seed);
        let bodies = (0..count)
            .map(|k| {
                let (x, z, y) = (k % side, (k / side) % side, k / (side * side));
                let jitter = Vec3::new(rng.random_range(-0.03..0.03), 0.0, rng.random_range(-0.03..0.03));
                let translation = Vec3::new(
                    (x as f32 - half) * spacing,
                    1.0 + radius + y as f32 * spacing,
                    (z as f32 - half) * spacing,
                );
                // A uniformly random orientation (Shoemake).
                let (u1, u2, u3): (f32, f32, f32) = (rng.random(), rng.random(), rng.random());
                let (a, b) = (std::f32::consts::TAU * u2, std::f32::consts::TAU * u3);
                let (s1, s2) = ((1.0 - u1).sqrt(), u1.sqrt());
                let rotation =
                    Quat::from_xyzw(s1 * a.sin(), s1 * a.cos(), s2 * b.sin(), s2 * b.cos()).normalize();
                (k % meshes.len(), Transform::from_translation(translation + jitter).with_rotation(rotation))
            })
            .collect();
        let inner = side as f32 * spacing * 0.5 + 1.5;
        Ok(Self { meshes, ground: Ground { half_size: Vec2::splat(inner), wall_height: Some(1.0) }, bodies })
    }

    /// Height of the top of the initial grid.
    fn top(&self) -> f32 {
        self.bodies.iter().map(|(_, t)| t.translation.y).fold(0.0, f32::max) + 0.6
    }
}

fn spawn_scene(
    mut commands: Commands,
    scene: Res<Scene>,
    mut meshes: Option<ResMut<Assets<Mesh>>>,
    mut materials: Option<ResMut<Assets<StandardMaterial>>>,
) {
    let mut render = match (meshes.as_deref_mut(), materials.as_deref_mut()) {
        (Some(m), Some(s)) => Some((m, s)),
        _ => None,
    };
    scene.ground.spawn(&mut commands, render.as_mut().map(|(m, s)| (&mut **m, &mut **s)));
    let looks = render.as_mut().map(|(m, s)| {
        let colours =
            [Color::srgb(0.85, 0.45, 0.2), Color::srgb(0.3, 0.6, 0.85), Color::srgb(0.55, 0.8, 0.35)];
        scene
            .meshes
            .iter()
            .zip(colours)
            .map(|(mesh, c)| {
                (
                    m.add(common::render_mesh(mesh)),
                    s.add(StandardMaterial { base_color: c, perceptual_roughness: 0.6, ..default() }),
                )
            })
            .collect::<Vec<_>>()
    });
    for (k, (mesh, pose)) in scene.bodies.iter().enumerate() {
        let mut e = commands.spawn((
            Name::new(format!("{} #{k}", MESHES[*mesh])),
            RigidBody::Dynamic,
            RtcdCollider::from_obj(common::mesh_path(MESHES[*mesh])),
            *pose,
        ));
        if let Some(looks) = &looks {
            e.insert((Mesh3d(looks[*mesh].0.clone()), MeshMaterial3d(looks[*mesh].1.clone())));
        }
    }
}

/// Figures of one tick, computed from the simulation.
#[derive(Clone, Copy, Debug, Default)]
struct TickFigures {
    narrow_phase_ms: f64,
    tick_ms: f64,
    pairs: usize,
    contacts: u64,
    /// Deepest penetration of a body into the ground (m): how far its lowest vertex over the ground's
    /// footprint is below y = 0.
    max_penetration: f32,
    /// Mean over the bodies whose lowest vertex is below y = 0.
    mean_penetration: f32,
    /// Bodies whose lowest vertex is below y = 0 (those touching the ground).
    on_ground: usize,
    /// Bodies whose centre is below y = 0 or that left the ground's footprint.
    below_ground: usize,
    /// Of those, the bodies that left the footprint (over the walls) rather than sank through it.
    off_ground: usize,
    kinetic_energy: f32,
}

/// Figures of the run so far.
#[derive(Resource, Default)]
struct Stats {
    ticks: u64,
    tick_start: Option<Instant>,
    last: TickFigures,
    narrow_phase_ms: Vec<f64>,
    tick_ms: Vec<f64>,
    /// Deepest ground penetration seen, with the tick.
    max_penetration: (f32, u64),
    max_below_ground: usize,
    /// Bodies whose collider is not ray traced (fallback or failed), at the last tick.
    not_ray_traced: usize,
    /// Largest extent of each mesh (by `RtcdMesh::id`), for penetrations in % of size.
    sizes: HashMap<u64, f32>,
    print: bool,
}

fn tick_start(mut stats: ResMut<Stats>) {
    stats.tick_start = Some(Instant::now());
}

/// End of every fixed tick (after Rapier's writeback and our diagnostics): measure.
fn tick_end(
    mut stats: ResMut<Stats>,
    scene: Res<Scene>,
    diagnostics: Res<RtcdDiagnostics>,
    bodies: Query<(&Transform, Option<&RtcdColliderState>), With<RigidBody>>,
    rapier: Query<&RapierRigidBodySet, With<DefaultRapierContext>>,
) {
    let tick_ms = stats.tick_start.take().map_or(0.0, |t| t.elapsed().as_secs_f64() * 1e3);
    stats.ticks += 1;
    let mut f = TickFigures {
        narrow_phase_ms: diagnostics.narrow_phase_time.as_secs_f64() * 1e3,
        tick_ms,
        pairs: diagnostics.pairs,
        contacts: diagnostics.contacts,
        ..default()
    };
    let (mut sum, mut not_ray_traced) = (0.0f32, 0);
    for (t, state) in &bodies {
        let p = t.translation;
        if p.y < 0.0 || !scene.ground.over_slab(p) {
            f.below_ground += 1;
            f.off_ground += usize::from(!scene.ground.over_slab(p));
        }
        let Some(RtcdColliderState::Ready { mesh }) = state else {
            not_ray_traced += 1;
            continue;
        };
        stats.sizes.entry(mesh.id()).or_insert_with(|| mesh.aabb().extents().max_element());
        if p.y > mesh.max_radius() || !scene.ground.over_slab(p) {
            continue; // cannot reach y = 0 (or is not over the ground)
        }
        // Only vertices over the slab: a body tipping over its edge (after spilling over a wall) hangs
        // below y = 0 beside the ground, not in it.
        let lowest = mesh
            .positions()
            .iter()
            .map(|v| t.rotation * *v + p)
            .filter(|w| scene.ground.over_slab(*w))
            .fold(f32::INFINITY, |m, w| m.min(w.y));
        if lowest < 0.0 {
            f.on_ground += 1;
            sum += -lowest;
            f.max_penetration = f.max_penetration.max(-lowest);
        }
    }
    f.mean_penetration = if f.on_ground > 0 { sum / f.on_ground as f32 } else { 0.0 };
    f.kinetic_energy = rapier.single().map_or(0.0, |r| {
        r.bodies.iter().filter(|(_, b)| b.is_dynamic()).map(|(_, b)| b.kinetic_energy()).sum()
    });
    let tick = stats.ticks;
    if f.max_penetration > stats.max_penetration.0 {
        stats.max_penetration = (f.max_penetration, tick);
    }
    stats.max_below_ground = stats.max_below_ground.max(f.below_ground);
    stats.not_ray_traced = not_ray_traced;
    stats.narrow_phase_ms.push(f.narrow_phase_ms);
    stats.tick_ms.push(f.tick_ms);
    stats.last = f;
    if stats.print && tick.is_multiple_of(PRINT_EVERY) {
        let n = stats.narrow_phase_ms.len();
        let window = &stats.narrow_phase_ms[n.saturating_sub(PRINT_EVERY as usize)..];
        let np_mean = window.iter().sum::<f64>() / window.len() as f64;
        let tk = &stats.tick_ms[n.saturating_sub(PRINT_EVERY as usize)..];
        let tick_mean = tk.iter().sum::<f64>() / tk.len() as f64;
        println!(
            "step {tick:>5} t={:>5.2}s | narrow phase {:>7.2} ms (mean of last {}: {np_mean:>7.2} ms; whole tick {tick_mean:>7.2} ms) \
             | pairs {:>5} | contacts {:>5} | ground penetration max {:>6.2} mm, mean {:>6.2} mm over {:>3} bodies \
             | below ground {} | kinetic energy {:>9.3} J",
            tick as f64 * TICK.as_secs_f64(),
            f.narrow_phase_ms,
            window.len(),
            f.pairs,
            f.contacts,
            1e3 * f.max_penetration,
            1e3 * f.mean_penetration,
            f.on_ground,
            f.below_ground,
            f.kinetic_energy,
        );
    }
}

impl Stats {
    fn summary(&self, args: &Args, backend: &str, setup: Duration, run: Duration, total: Duration) -> String {
        let n = self.narrow_phase_ms.len().max(1) as f64;
        let (np_mean, tick_mean) =
            (self.narrow_phase_ms.iter().sum::<f64>() / n, self.tick_ms.iter().sum::<f64>() / n);
        let argmax = |v: &[f64]| {
            v.iter().enumerate().fold((0.0f64, 0usize), |m, (i, &x)| if x > m.0 { (x, i + 1) } else { m })
        };
        let (np_max, np_at) = argmax(&self.narrow_phase_ms);
        let (tick_max, tick_at) = argmax(&self.tick_ms);
        let size = self.sizes.values().copied().fold(f32::INFINITY, f32::min);
        let pct = |d: f32| {
            if size.is_finite() && size > 0.0 {
                format!(" ({:.2} % of the smallest body size, {size:.2} m)", 100.0 * d / size)
            } else {
                String::new()
            }
        };
        let l = &self.last;
        let mut s = format!(
            "== falling_objects: {} bodies, {} ticks of {:.2} ms, backend {backend} (asked: {:?})\n\
             narrow phase per tick: mean {np_mean:.2} ms, max {np_max:.2} ms (tick {np_at})\n\
             whole physics tick (Rapier step + narrow phase) per tick: mean {tick_mean:.2} ms, max {tick_max:.2} ms (tick {tick_at})\n\
             max ground penetration over the run: {:.2} mm{} at tick {}\n\
             at the end: ground penetration max {:.2} mm, mean {:.2} mm over {} bodies touching the ground; {} pairs, {} contacts\n\
             bodies below the ground: {} at the end ({} of them off the ground's footprint, over the walls), at most {} during the run\n\
             final kinetic energy: {:.4} J\n\
             wall time: {:.2} s (set-up {:.2} s, simulation {:.2} s)",
            args.count,
            self.ticks,
            TICK.as_secs_f64() * 1e3,
            args.backend,
            1e3 * self.max_penetration.0,
            pct(self.max_penetration.0),
            self.max_penetration.1,
            1e3 * l.max_penetration,
            1e3 * l.mean_penetration,
            l.on_ground,
            l.pairs,
            l.contacts,
            l.below_ground,
            l.off_ground,
            self.max_below_ground,
            l.kinetic_energy,
            total.as_secs_f64(),
            setup.as_secs_f64(),
            run.as_secs_f64(),
        );
        if backend.starts_with("gpu pipelined") {
            s.push_str(
                "\nnote: in pipelined mode the narrow-phase time is the GPU step's (run in the render world, one tick or more \
                 ahead) plus the main world's work; the whole physics tick does not include the GPU work",
            );
        }
        if self.not_ray_traced > 0 {
            s.push_str(&format!(
                "\nWARNING: {} bodies are not ray traced (collider fell back or failed; see the log)",
                self.not_ray_traced
            ));
        }
        s
    }
}

/// Rapier at a fixed 60 Hz tick, our narrow phase, the scene and the measurements.
fn add_simulation(app: &mut App, args: &Args, scene: Scene) {
    app.insert_resource(Time::<Fixed>::from_duration(TICK))
        .insert_resource(TimestepMode::Fixed { dt: TICK.as_secs_f32(), substeps: 1 })
        .add_plugins(RapierPhysicsPlugin::<NoUserData>::default().in_fixed_schedule())
        .add_plugins(RtcdPlugin::new(RtcdSettings {
            contact_recycling: args.contact_recycling,
            ..RtcdSettings::with_backend(args.backend.backend())
        }))
        .insert_resource(scene)
        .insert_resource(Stats { print: true, ..default() })
        .add_systems(Startup, spawn_scene)
        .add_systems(FixedFirst, tick_start)
        .add_systems(FixedLast, tick_end);
}

fn backend_name(app: &App) -> String {
    app.world()
        .resource::<RtcdNarrowPhase>()
        .active_backend()
        .map_or_else(|| "(not started)".into(), |b| b.to_string())
}

/// Headless: no window; the render plugins only for the pipelined GPU mode (it runs in the render
/// world). Every `update()` is one fixed tick.
fn run_headless(args: Args, scene: Scene, start: Instant) -> ExitCode {
    let steps = args.steps.unwrap_or(600);
    let mut app = App::new();
    let mut pipelined = args.backend == BackendArg::GpuPipelined;
    if pipelined {
        // Bevy panics at start-up without an adapter ("Unable to find a GPU!"): check first.
        let options = rtcd_wgpu::DeviceOptions { backends: wgpu::Backends::VULKAN, ..default() };
        if let Err(e) = rtcd_wgpu::create_device(&options) {
            eprintln!(
                "falling_objects: no Vulkan adapter for the render plugins ({e}); running without them (the plugin falls back)"
            );
            pipelined = false;
        }
    }
    if pipelined {
        app.add_plugins(
            DefaultPlugins
                .set(WindowPlugin {
                    primary_window: None,
                    exit_condition: ExitCondition::DontExit,
                    ..default()
                })
                .set(RenderPlugin {
                    render_creation: RenderCreation::Automatic(Box::new(WgpuSettings {
                        backends: Some(Backends::VULKAN),
                        ..default()
                    })),
                    ..default()
                })
                .disable::<WinitPlugin>(),
        );
    } else {
        app.add_plugins((MinimalPlugins, TransformPlugin, LogPlugin::default()));
    }
    app.insert_resource(TimeUpdateStrategy::ManualDuration(TICK));
    add_simulation(&mut app, &args, scene);
    // What `App::run` does before its loop: wait for the renderer (when there is one), finish.
    while app.plugins_state() == PluginsState::Adding {
        bevy::tasks::tick_global_task_pools_on_main_thread();
    }
    app.finish();
    app.cleanup();
    println!(
        "falling_objects: {} bodies ({}), {steps} ticks at 60 Hz, backend {:?}{}{}",
        args.count,
        MESHES.join(", "),
        args.backend,
        if pipelined { " (render plugins, no window)" } else { "" },
        match (args.contact_recycling, pipelined) {
            (true, false) => ", following Rapier's contact recycling",
            (true, true) =>
                ", contact recycling off (the pipelined mode's results are a tick old: it cannot follow it)",
            (false, _) => ", contact recycling off",
        }
    );
    let sim_start = Instant::now();
    // The first update starts the clock; after it every update runs exactly one fixed tick.
    let mut updates = 0u64;
    while app.world().resource::<Stats>().ticks < steps {
        app.update();
        updates += 1;
        if updates > 2 * steps + 10 {
            eprintln!("falling_objects: the fixed schedule does not run once per update; giving up");
            return ExitCode::FAILURE;
        }
    }
    let run = sim_start.elapsed();
    let backend = backend_name(&app);
    let stats = app.world().resource::<Stats>();
    println!("{}", stats.summary(&args, &backend, sim_start - start, run, start.elapsed()));
    ExitCode::SUCCESS
}

/// Windowed-run state: frames rendered, when to take the screenshot and when to stop.
#[derive(Resource)]
struct Windowed {
    args: Args,
    start: Instant,
    sim_start: Option<Instant>,
    frames: u64,
    shot_requested: bool,
    done: bool,
}

fn windowed_control(
    mut commands: Commands,
    mut w: ResMut<Windowed>,
    stats: Res<Stats>,
    state: Res<RtcdNarrowPhase>,
    debug: Res<RtcdDebugSettings>,
    mut panel: ResMut<PanelLines>,
    mut exit: MessageWriter<AppExit>,
) {
    w.frames += 1;
    if w.sim_start.is_none() && stats.ticks > 0 {
        w.sim_start = Some(Instant::now());
    }
    let l = &stats.last;
    panel.0 = vec![
        format!(
            "{} bodies, tick {} ({:.2} s), whole tick {:.1} ms",
            w.args.count,
            stats.ticks,
            stats.ticks as f64 * TICK.as_secs_f64(),
            l.tick_ms
        ),
        format!(
            "ground penetration: max {:.2} mm, mean {:.2} mm ({} bodies); below ground {}",
            1e3 * l.max_penetration,
            1e3 * l.mean_penetration,
            l.on_ground,
            l.below_ground
        ),
        format!("kinetic energy {:.2} J", l.kinetic_energy),
        format!("F1: ray overlay ({})", if debug.enabled { "on" } else { "off" }),
    ];
    if w.done {
        return;
    }
    let steps_done = w.args.steps.is_some_and(|s| stats.ticks >= s);
    if let Some(path) = w.args.screenshot.clone() {
        let due = match (w.args.frames, w.args.steps) {
            (Some(f), _) => w.frames >= f,
            (None, Some(_)) => steps_done,
            (None, None) => stats.ticks >= 240,
        };
        if due && !w.shot_requested {
            w.shot_requested = true;
            let per_frame = w.start.elapsed().as_secs_f64() / w.frames as f64;
            info!(
                "falling_objects: screenshot at frame {}, tick {} ({per_frame:.2} s per frame so far)",
                w.frames, stats.ticks
            );
            commands.spawn(Screenshot::primary_window()).observe(save_to_disk(path)).observe(
                |_: On<ScreenshotCaptured>, mut exit: MessageWriter<AppExit>| {
                    exit.write(AppExit::Success);
                },
            );
        }
        if w.shot_requested {
            return; // exit once it is saved
        }
    }
    if steps_done {
        w.done = true;
        let backend = state.active_backend().map_or_else(|| "(not started)".into(), |b| b.to_string());
        let sim_start = w.sim_start.unwrap_or(w.start);
        println!(
            "{}",
            stats.summary(&w.args, &backend, sim_start - w.start, sim_start.elapsed(), w.start.elapsed())
        );
        exit.write(AppExit::Success);
    }
}

/// With a window: PBR meshes, a camera on the pile, the ray overlay and the diagnostics panel.
fn run_windowed(args: Args, scene: Scene, start: Instant) -> ExitCode {
    let mut app = App::new();
    app.add_plugins(DefaultPlugins.set(WindowPlugin {
        primary_window: Some(Window {
            title: format!("bevy_rtcd: falling objects ({} concave meshes)", args.count),
            resolution: WindowResolution::new(1280, 720),
            ..default()
        }),
        ..default()
    }));
    if args.screenshot.is_some() {
        // Deterministic: every frame runs exactly the same number of ticks, however slow the renderer.
        app.insert_resource(TimeUpdateStrategy::ManualDuration(TICK * args.ticks_per_frame.unwrap_or(1)));
    }
    let extent = 2.0 * scene.ground.half_size.x.max(scene.top());
    let (half, top) = (scene.ground.half_size.x, scene.top());
    add_simulation(&mut app, &args, scene);
    app.add_plugins(RtcdDebugPlugin {
        settings: RtcdDebugSettings { enabled: args.screenshot.is_some() && !args.no_overlay, ..default() },
    })
    .add_plugins(DiagnosticsPanelPlugin)
    .insert_resource(Windowed { args, start, sim_start: None, frames: 0, shot_requested: false, done: false })
    .add_systems(Startup, move |mut commands: Commands| {
        common::spawn_camera(
            &mut commands,
            Vec3::new(1.25 * half, 0.45 * top + 2.0, 2.1 * half),
            Vec3::new(0.0, 0.8, 0.0),
        );
        common::spawn_lights(&mut commands, extent);
    })
    .add_systems(Update, windowed_control);
    match app.run() {
        AppExit::Success => ExitCode::SUCCESS,
        AppExit::Error(c) => ExitCode::from(c.get()),
    }
}

fn main() -> ExitCode {
    let start = Instant::now();
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(Some(a)) => a,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("falling_objects: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let scene = match Scene::avalanche(args.count, args.seed) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("falling_objects: cannot load the meshes: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(dir) = args.screenshot.as_ref().and_then(|p| p.parent()).filter(|d| !d.as_os_str().is_empty())
        && let Err(e) = std::fs::create_dir_all(dir)
    {
        eprintln!("falling_objects: cannot create {}: {e}", dir.display());
        return ExitCode::FAILURE;
    }
    if args.headless { run_headless(args, scene, start) } else { run_windowed(args, scene, start) }
}
