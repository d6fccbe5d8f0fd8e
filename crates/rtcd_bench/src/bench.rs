//! Running one scene: the rtcd simulation whose poses every replay uses, the narrow-phase variants
//! replayed on the CPU (and GPU), the erroneous-ray runs, the simulated comparisons (Rapier trimesh,
//! V-HACD, rtcd without prediction or re-projection) and the penetration measure on each simulation
//! (on scene 3 also the independent measure of its end, [`crate::independent`]).

use std::{ops::Range, time::Instant};

use rtcd::{NarrowPhase, NarrowPhaseBackend, RtcdParams, StepOptions, TracerKind};
use rtcd_rapier::DepthBound;

use crate::world::DeepOverlaps;

use crate::{
    cli::Options,
    host_cost::HostCost,
    independent::EndState,
    replay::{Frames, ReplayStep, Variant},
    scene::{Scene, SceneId},
    sim::{Phases, SimRun, simulate},
    world::Setup,
};

/// The speculative grouping angle of the `widespec` comparison (degrees; the default is the
/// parameters' 5° `manifold_angle`).
const WIDE_SPECULATIVE_ANGLE_DEG: f32 = 30.0;

/// A replayed row: one variant on one backend.
pub struct ReplayRow {
    /// Variant key (`iterative-bvh/pred`) or measure name.
    pub key: String,
    /// The variant, if any.
    pub variant: Option<Variant>,
    /// `cpu` or the GPU adapter.
    pub backend: String,
    /// Every `stride`-th step was run (1 for windowed rows).
    pub stride: usize,
    /// Timed in short windows (see [`Sampling::Windows`]) rather than over the whole run.
    pub windowed: bool,
    /// How the steps were sampled, in words.
    pub sampling: String,
    /// Which steps were run (a prefix of the scene for limited GPU rows).
    pub range: Range<usize>,
    /// Per run step.
    pub steps: Vec<ReplayStep>,
    /// Wall time of the whole row.
    pub wall_s: f64,
}

impl ReplayRow {
    /// Mean backend time over the run steps inside `window` (ms); `None` when none ran there.
    pub fn mean_ms(&self, window: &Range<usize>) -> Option<f64> {
        // A windowed row's mean over the whole run would weigh its windows, not the run's steps.
        if self.windowed && window.start == 0 && window.end >= self.range.end {
            return None;
        }
        mean(self.steps.iter().filter(|s| window.contains(&s.step)).map(|s| s.ms))
    }

    /// Largest step time (ms).
    pub fn max_ms(&self) -> f64 {
        self.steps.iter().map(|s| s.ms).fold(0.0, f64::max)
    }
}

/// Mean of an iterator, `None` when empty.
pub fn mean(it: impl Iterator<Item = f64>) -> Option<f64> {
    let (s, n) = it.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    (n > 0).then(|| s / n as f64)
}

/// Median of some values, `None` when empty (the mean of the middle two for an even count).
pub fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_unstable_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 { v[n / 2] } else { 0.5 * (v[n / 2 - 1] + v[n / 2]) })
}

/// Which steps a replayed row runs.
#[derive(Clone, Debug, PartialEq)]
pub enum Sampling {
    /// Every `stride`-th step of a range (stride > 1 only for standard tracing, which keeps no
    /// state between steps).
    Every(usize),
    /// Short windows, each on a fresh backend: `warmup` untimed steps (the first step of a pair is
    /// always standard; records and predictions build up), then the window's steps, timed. For
    /// variants too slow to run every step (brute force at scale).
    Windows {
        /// Timed steps.
        windows: Vec<Range<usize>>,
        /// Untimed steps before each window.
        warmup: usize,
    },
}

/// Windows of `len` steps in the middle of each named window but `all`.
pub fn middle_windows(windows: &[(String, Range<usize>)], len: usize) -> Vec<Range<usize>> {
    windows
        .iter()
        .filter(|(k, w)| k != "all" && !w.is_empty())
        .map(|(_, w)| {
            let l = len.min(w.len());
            let a = w.start + (w.len() - l) / 2;
            a..a + l
        })
        .collect()
}

/// One step of the penetration measure on a simulation.
#[derive(Clone, Copy, Debug, Default)]
pub struct MeasureStep {
    /// Step.
    pub step: usize,
    /// Sum of the re-projected depths of every penetrating vertex (m).
    pub depth: f64,
    /// Sum of the lengths of the rays in contact (m): the 2014 paper's measure.
    pub ray_length: f64,
    /// Deepest vertex (m).
    pub max_depth: f32,
    /// Penetrating vertices.
    pub contact_rays: u64,
}

/// A simulated row with its penetration measure.
pub struct SimRow {
    /// The simulation.
    pub run: SimRun,
    /// Every `stride`-th step measured.
    pub measure_stride: usize,
    /// The measure.
    pub measure: Vec<MeasureStep>,
    /// Scene 3: the independent measure of the poses after the last step.
    pub end: Option<EndState>,
}

impl SimRow {
    /// Median narrow-phase ms per step over a window.
    pub fn median_narrow_ms(&self, w: &Range<usize>) -> Option<f64> {
        let steps = &self.run.steps[w.start.min(self.run.steps.len())..w.end.min(self.run.steps.len())];
        median(steps.iter().map(|s| s.narrow_ms).collect())
    }

    /// Mean of the per-step total penetration depth over the measured steps (m).
    pub fn mean_depth(&self) -> f64 {
        mean(self.measure.iter().map(|m| m.depth)).unwrap_or(0.0)
    }

    /// The measure summed over the run, scaled to every step (`stride` × the sampled sum): the
    /// paper's cumulative ray length over the simulation.
    pub fn cumulative_ray_length(&self) -> f64 {
        self.measure.iter().map(|m| m.ray_length).sum::<f64>() * self.measure_stride as f64
    }

    /// Same for depths.
    pub fn cumulative_depth(&self) -> f64 {
        self.measure.iter().map(|m| m.depth).sum::<f64>() * self.measure_stride as f64
    }

    /// Deepest vertex over the run (m).
    pub fn max_depth(&self) -> f32 {
        self.measure.iter().map(|m| m.max_depth).fold(0.0, f32::max)
    }

    /// Mean narrow-phase ms per step over a window.
    pub fn narrow_ms(&self, w: &Range<usize>) -> Option<f64> {
        mean(
            self.run.steps[w.start.min(self.run.steps.len())..w.end.min(self.run.steps.len())]
                .iter()
                .map(|s| s.narrow_ms),
        )
    }

    /// Mean whole-step ms over a window.
    pub fn step_ms(&self, w: &Range<usize>) -> Option<f64> {
        mean(
            self.run.steps[w.start.min(self.run.steps.len())..w.end.min(self.run.steps.len())]
                .iter()
                .map(|s| s.step_ms),
        )
    }

    /// Bodies tunnelled by the end.
    pub fn tunnelled(&self) -> usize {
        self.run.steps.last().map_or(0, |s| s.tunnelled)
    }

    /// Lowest vertex below the ground over the run (m, ≥ 0).
    pub fn ground_penetration(&self) -> f32 {
        self.run.steps.iter().map(|s| (-s.lowest).max(0.0)).fold(0.0, f32::max)
    }
}

/// Everything measured on one scene.
pub struct SceneResult {
    /// The scene.
    pub scene: Scene,
    /// Base parameters (from the meshes).
    pub params: RtcdParams,
    /// Scene 1's phases.
    pub phases: Option<Phases>,
    /// Named windows summaries are given for: `all`, then A/B/C (scene 1) or `peak` (scene 2).
    pub windows: Vec<(String, Range<usize>)>,
    /// CPU replays.
    pub replays: Vec<ReplayRow>,
    /// Erroneous-ray runs (iterative BVH with `measure_errors`, untimed).
    pub errors: Vec<ReplayRow>,
    /// GPU replays.
    pub gpu: Vec<ReplayRow>,
    /// What happened to the GPU rows.
    pub gpu_note: String,
    /// The GPU backend's cost to the host beside the CPU backend ([`crate::host_cost`]).
    pub host_cost: Option<HostCost>,
    /// Simulations: rtcd first.
    pub sims: Vec<SimRow>,
    /// Wall time of the scene.
    pub wall_s: f64,
}

impl SceneResult {
    /// A CPU replay row by key.
    pub fn replay(&self, key: &str) -> Option<&ReplayRow> {
        self.replays.iter().find(|r| r.key == key)
    }

    /// A window by name.
    pub fn window(&self, name: &str) -> Option<&Range<usize>> {
        self.windows.iter().find(|w| w.0 == name).map(|w| &w.1)
    }
}

/// The GPU device, created once.
pub struct Gpu {
    /// The device.
    pub device: rtcd_wgpu::GpuDevice,
    /// Whether the adapter is a software one (lavapipe, llvmpipe, WARP).
    pub software: bool,
    /// `name (type, backend)`.
    pub name: String,
}

/// Progress on stderr.
pub fn note(msg: impl AsRef<str>) {
    eprintln!("[rtcd_bench] {}", msg.as_ref());
}

fn progress(label: &str, total: usize) -> impl FnMut(usize) {
    let label = label.to_string();
    let start = Instant::now();
    let mut last = Instant::now();
    move |step| {
        if last.elapsed().as_secs_f64() > 15.0 {
            last = Instant::now();
            note(format!("  {label}: step {}/{total} ({:.0} s)", step + 1, start.elapsed().as_secs_f64()));
        }
    }
}

/// Runs everything selected on `scene`.
pub fn run_scene(scene: Scene, opts: &Options, gpu: Option<&Gpu>) -> Result<SceneResult, String> {
    let start = Instant::now();
    let refs: Vec<&rtcd::RtcdMesh> = scene.meshes.iter().map(|m| &**m).collect();
    let params = RtcdParams::from_meshes(&refs);
    note(format!(
        "{} — {} bodies, {} triangles, {} steps",
        scene.name,
        scene.bodies(),
        scene.triangles(),
        scene.steps
    ));

    // 1. The rtcd simulation (default parameters: iterative BVH, prediction, re-projection).
    let mut sims = Vec::new();
    let sim = |label: &str, setup: Setup| -> Result<SimRun, String> {
        note(format!("simulating {label} ..."));
        // Set-ups with an rtcd batch: the pairs Rapier asked for that the batch had no result for.
        let batched = matches!(setup, Setup::Rtcd(..));
        let run = simulate(&scene, label, setup, progress(label, scene.steps))?;
        let misses: u64 = run.steps.iter().map(|s| s.cache_misses).sum();
        let misses = if batched { format!(", {misses} cache misses") } else { String::new() };
        note(format!(
            "  {label}: {:.1} s (set-up {:.1} ms){misses}",
            run.wall.as_secs_f64(),
            run.setup_time.as_secs_f64() * 1e3
        ));
        Ok(run)
    };
    let main = sim(crate::report::MAIN_LABEL, Setup::Rtcd(params, None, None, DeepOverlaps::default()))?;
    let n = main.steps.len();
    let phases =
        matches!(scene.id, SceneId::Avalanche | SceneId::Everyday).then(|| Phases::detect(&main.steps));
    let mut windows = vec![("all".to_string(), 0..n)];
    match &phases {
        Some(p) => windows.extend(p.named().into_iter().map(|(k, r)| (k.to_string(), r))),
        None => windows.push(("peak".into(), n.saturating_sub(60)..n)),
    }
    let mut comparisons = Vec::new();
    // Rapier's own recycle distance unless `--recycle-distance` sets one.
    let recycle_distance = opts.recycle_distance.unwrap_or(
        rtcd_rapier::rapier3d::dynamics::IntegrationParameters::default().normalized_contact_recycle_distance,
    );
    for (name, label, setup) in [
        (
            "nopred",
            "rtcd, no prediction",
            Setup::Rtcd(RtcdParams { prediction: false, ..params }, None, None, DeepOverlaps::default()),
        ),
        (
            "noreproj",
            "rtcd, no re-projection",
            Setup::Rtcd(RtcdParams { reprojection: false, ..params }, None, None, DeepOverlaps::default()),
        ),
        (
            "recycle",
            crate::report::RECYCLE_LABEL,
            Setup::Rtcd(params, None, Some(recycle_distance), DeepOverlaps::default()),
        ),
        (
            "nomerge",
            "rtcd, following recycling, deep overlaps not merged",
            Setup::Rtcd(
                params,
                None,
                Some(recycle_distance),
                DeepOverlaps { merge: false, ..DeepOverlaps::default() },
            ),
        ),
        (
            "bound",
            "rtcd, following recycling, depth bound on",
            Setup::Rtcd(
                params,
                None,
                Some(recycle_distance),
                DeepOverlaps { bound: DepthBound::Corrective, ..DeepOverlaps::default() },
            ),
        ),
        (
            "widespec",
            "rtcd, speculative groups within 30°",
            Setup::Rtcd(params, Some(WIDE_SPECULATIVE_ANGLE_DEG.to_radians()), None, DeepOverlaps::default()),
        ),
        ("trimesh", "Rapier trimesh", Setup::TriMesh),
        ("vhacd", "V-HACD", Setup::Vhacd),
    ] {
        if opts.compares(name) {
            comparisons.push(sim(label, setup)?);
        }
    }

    // 2. Replays of the rtcd simulation's poses.
    let frames = Frames::new(&scene, &main.trajectory, &params, main.prediction)?;
    let brute_windows =
        |warmup| Sampling::Windows { windows: middle_windows(&windows, opts.brute_window), warmup };
    let mut replays = Vec::new();
    // With `--interleave`, the variants run every `stride`-th step are replayed together,
    // interleaved step by step (`Frames::replay_interleaved`); the windowed ones (brute force at
    // scale) always each on their own.
    let mut together: Vec<(Variant, usize)> = Vec::new();
    // The variants replayed each on their own, with their sampling.
    let mut alone: Vec<(Variant, Sampling)> = Vec::new();
    for v in Variant::all() {
        if !opts.variant_selected(&v.key()) {
            continue;
        }
        let sampling = match (v.iterative, v.tracer) {
            // Standard tracing needs no warm-up: it keeps no state.
            (true, TracerKind::BruteForce) if !opts.brute_every_step => brute_windows(opts.brute_warmup),
            (false, TracerKind::BruteForce) if !opts.brute_every_step => brute_windows(0),
            (true, _) => Sampling::Every(1),
            (false, TracerKind::BruteForce) => Sampling::Every(opts.brute_stride),
            (false, TracerKind::Bvh) => Sampling::Every(opts.bvh_stride),
        };
        if let Sampling::Every(stride) = sampling
            && opts.interleave
        {
            together.push((v, stride));
            continue;
        }
        alone.push((v, sampling));
    }
    // With `--repeat`, in rounds: every variant once, then every variant again, so a drift of the
    // machine's speed over the minutes of the replays weighs on every variant alike.
    let replay = |(v, sampling): &(Variant, Sampling)| {
        replay_row(
            &frames,
            cpu_backend(v.params(&params)),
            &v.key(),
            Some(*v),
            "cpu".into(),
            &frames.options(),
            sampling,
            0..n,
        )
    };
    let mut rows = alone.iter().map(replay).collect::<Result<Vec<_>, _>>()?;
    for _ in 1..opts.repeat {
        for (row, variant) in rows.iter_mut().zip(&alone) {
            let again = replay(variant)?;
            keep_fastest(&mut row.steps, &again.steps);
            row.wall_s += again.wall_s;
        }
    }
    for mut row in rows {
        if opts.repeat > 1 {
            row.sampling = format!("{}, fastest of {}", row.sampling, opts.repeat);
        }
        note(format!("  replayed {} (cpu, {}): {:.1} s", row.key, row.sampling, row.wall_s));
        replays.push(row);
    }
    replays.extend(replay_together(&frames, &params, &together, opts.repeat, n)?);
    // Back in `Variant::all`'s order (the rows replayed together came last).
    let order = |key: &str| Variant::all().iter().position(|v| v.key() == key).unwrap_or(usize::MAX);
    replays.sort_by_key(|r| order(&r.key));
    let mut errors = Vec::new();
    if opts.errors {
        for prediction in [false, true] {
            let v = Variant::new(TracerKind::Bvh, true, prediction);
            let backend = cpu_backend(v.params(&params));
            let o = StepOptions { measure_errors: true, ..frames.options() };
            let row = replay_row(
                &frames,
                backend,
                &format!("errors {}", v.key()),
                Some(v),
                "cpu".into(),
                &o,
                &Sampling::Every(1),
                0..n,
            )?;
            note(format!("  erroneous rays of {}: {:.1} s", v.key(), row.wall_s));
            errors.push(row);
        }
    }

    // 3. GPU rows: first the default variant beside the CPU backend (what the GPU backend costs the
    // host), then the other variants.
    let mut gpu_rows = Vec::new();
    let mut host_cost = None;
    // With `--gpu on` a GPU row that fails fails the run.
    let required = opts.gpu == "on";
    let gpu_note = match gpu {
        None => "no GPU rows (no adapter, or --gpu off)".to_string(),
        Some(g) => {
            let limit = match (opts.gpu_steps, g.software && !scene.quick) {
                (Some(0), _) => n,
                (Some(k), _) => k.min(n),
                (None, true) => 0,
                (None, false) => n,
            };
            if limit == 0 {
                format!(
                    "GPU rows skipped at this scale: {} is a software rasteriser (run --quick, or pass --gpu-steps N)",
                    g.name
                )
            } else {
                let default = Variant::new(TracerKind::Bvh, true, true);
                let key = default.key();
                let run = rtcd_wgpu::GpuNarrowPhase::new(
                    &g.device.device,
                    &g.device.queue,
                    default.params(&params),
                )
                .map_err(|e| format!("GPU backend: {e}"))
                .and_then(|mut gpu| {
                    let mut cpu = NarrowPhase::new(default.params(&params)).map_err(|e| e.to_string())?;
                    let label = format!("host cost of {key}");
                    crate::host_cost::run(
                        &frames,
                        &mut gpu,
                        &mut cpu,
                        &key,
                        0..limit,
                        progress(&label, limit),
                    )
                });
                match run {
                    Ok((cost, steps)) => {
                        note(format!(
                            "  {key} on the GPU beside the CPU backend (host cost): {:.1} s",
                            cost.wall_s
                        ));
                        if opts.variant_selected(&key) {
                            gpu_rows.push(ReplayRow {
                                key: key.clone(),
                                variant: Some(default),
                                backend: g.name.clone(),
                                stride: 1,
                                windowed: false,
                                sampling: "every step, beside the CPU backend".into(),
                                range: 0..limit,
                                steps,
                                wall_s: cost.wall_s,
                            });
                        }
                        host_cost = Some(cost);
                    }
                    Err(e) if required => return Err(e),
                    Err(e) => note(format!("  the host-cost run of {key} on the GPU failed: {e}")),
                }
                for v in Variant::all() {
                    // On a software adapter only the BVH variants with prediction (brute force on lavapipe
                    // is minutes per step at scale).
                    if v == default
                        || !opts.variant_selected(&v.key())
                        || (g.software && (v.tracer != TracerKind::Bvh || !v.prediction))
                    {
                        continue;
                    }
                    let backend = || {
                        rtcd_wgpu::GpuNarrowPhase::new(&g.device.device, &g.device.queue, v.params(&params))
                            .map(|b| Box::new(b) as Box<dyn NarrowPhaseBackend>)
                            .map_err(|e| format!("GPU backend: {e}"))
                    };
                    match replay_row(
                        &frames,
                        backend,
                        &v.key(),
                        Some(v),
                        g.name.clone(),
                        &frames.options(),
                        &Sampling::Every(1),
                        0..limit,
                    ) {
                        Ok(row) => {
                            note(format!("  replayed {} on the GPU: {:.1} s", v.key(), row.wall_s));
                            gpu_rows.push(row);
                        }
                        Err(e) if required => return Err(e),
                        Err(e) => note(format!("  GPU replay of {} failed: {e}", v.key())),
                    }
                }
                let scope = if limit == n {
                    "every step".to_string()
                } else {
                    format!("the first {limit} steps only")
                };
                let soft = if g.software {
                    " — a software rasteriser on the CPU: its times say nothing about a GPU; BVH variants with prediction only"
                } else {
                    ""
                };
                format!("GPU rows: {}, {scope}{soft}", g.name)
            }
        }
    };

    // 4. The penetration measure on every simulation (a standard BVH trace of the recorded poses).
    for run in std::iter::once(main).chain(comparisons) {
        let f = Frames::new(&scene, &run.trajectory, &params, run.prediction)?;
        let mut np = NarrowPhase::new(RtcdParams {
            tracer: TracerKind::Bvh,
            iterative: false,
            prediction: false,
            ..params
        })
        .map_err(|e| e.to_string())?;
        let o = StepOptions { force_standard: true, ..Default::default() };
        let steps = f
            .replay(&mut np, &o, opts.measure_stride, 0..f.len(), |_| {})
            .map_err(|e| e.to_string())?
            .into_iter()
            .map(|s| MeasureStep {
                step: s.step,
                depth: s.metrics.cumulative_depth,
                ray_length: s.metrics.cumulative_ray_length,
                max_depth: s.metrics.max_depth,
                contact_rays: s.metrics.contact_rays,
            })
            .collect();
        // Scene 3: the independent measure of the end (no rtcd code), every pair kept.
        let end = (scene.id == SceneId::Everyday)
            .then(|| EndState::measure(&scene, &run.final_poses, run.allowed_linear_error, &run.lost));
        if let Some(e) = &end {
            note(format!(
                "  {}: at the end {} crossing edges, deepest {:.4} m, {} tunnelled",
                run.label,
                e.crossing_edges(),
                e.max_depth(),
                e.tunnelled.len()
            ));
        }
        sims.push(SimRow { run, measure_stride: opts.measure_stride, measure: steps, end });
    }
    Ok(SceneResult {
        scene,
        params,
        phases,
        windows,
        replays,
        errors,
        gpu: gpu_rows,
        gpu_note,
        host_cost,
        sims,
        wall_s: start.elapsed().as_secs_f64(),
    })
}

/// The CPU rows of `variants`, each with its stride, replayed together over steps `0..n`
/// ([`Frames::replay_interleaved`]), `repeat` times on fresh backends, keeping each step's
/// fastest time.
fn replay_together(
    frames: &Frames,
    params: &RtcdParams,
    variants: &[(Variant, usize)],
    repeat: usize,
    n: usize,
) -> Result<Vec<ReplayRow>, String> {
    if variants.is_empty() {
        return Ok(Vec::new());
    }
    let start = Instant::now();
    let keys: Vec<String> = variants.iter().map(|(v, _)| v.key()).collect();
    let mut runs: Option<Vec<Vec<ReplayStep>>> = None;
    for _ in 0..repeat.max(1) {
        let mut backends = Vec::with_capacity(variants.len());
        for (v, stride) in variants {
            backends.push((cpu_backend(v.params(params))()?, *stride));
        }
        let mut refs: Vec<_> = backends.iter_mut().map(|(b, s)| (b.as_mut(), *s)).collect();
        let run = frames
            .replay_interleaved(&mut refs, &frames.options(), 0..n, progress("interleaved replay", n))
            .map_err(|(b, e)| format!("{} on cpu: {e}", keys[b]))?;
        runs = Some(match runs {
            None => run,
            Some(mut best) => {
                for (row, again) in best.iter_mut().zip(&run) {
                    keep_fastest(row, again);
                }
                best
            }
        });
    }
    let wall_s = start.elapsed().as_secs_f64();
    let rows: Vec<ReplayRow> = variants
        .iter()
        .zip(runs.unwrap_or_default())
        .map(|(&(v, stride), steps)| {
            let every = if stride == 1 { "every step".to_string() } else { format!("every {stride}th step") };
            let mut sampling = if variants.len() > 1 { format!("{every}, interleaved") } else { every };
            if repeat > 1 {
                sampling = format!("{sampling}, fastest of {repeat}");
            }
            ReplayRow {
                key: v.key(),
                variant: Some(v),
                backend: "cpu".into(),
                stride,
                windowed: false,
                sampling,
                range: 0..n,
                steps,
                wall_s,
            }
        })
        .collect();
    note(format!(
        "  replayed {} together (cpu, interleaved step by step, {repeat} run(s)): {wall_s:.1} s",
        keys.join(", ")
    ));
    Ok(rows)
}

/// Another run of the same replay: same poses, same results, only the times differ; each step of
/// `best` keeps the faster of its time and `again`'s.
fn keep_fastest(best: &mut [ReplayStep], again: &[ReplayStep]) {
    for (s, a) in best.iter_mut().zip(again) {
        s.ms = s.ms.min(a.ms);
    }
}

/// A factory of fresh CPU backends for [`replay_row`].
fn cpu_backend(params: RtcdParams) -> impl FnMut() -> Result<Box<dyn NarrowPhaseBackend>, String> {
    move || {
        NarrowPhase::new(params)
            .map(|b| Box::new(b) as Box<dyn NarrowPhaseBackend>)
            .map_err(|e| e.to_string())
    }
}

#[expect(clippy::too_many_arguments, reason = "the per-pair inputs of one step, passed as they are used")]
fn replay_row(
    frames: &Frames,
    mut backend: impl FnMut() -> Result<Box<dyn NarrowPhaseBackend>, String>,
    key: &str,
    variant: Option<Variant>,
    backend_name: String,
    opts: &StepOptions,
    sampling: &Sampling,
    range: Range<usize>,
) -> Result<ReplayRow, String> {
    let start = Instant::now();
    let err = |e: rtcd::BackendError| format!("{key} on {backend_name}: {e}");
    let (steps, stride, windowed, text) = match sampling {
        Sampling::Every(stride) => {
            let mut b = backend()?;
            let steps = frames
                .replay(&mut *b, opts, *stride, range.clone(), progress(key, range.end))
                .map_err(err)?;
            let text = if *stride == 1 { "every step".to_string() } else { format!("every {stride}th step") };
            (steps, *stride, false, text)
        }
        Sampling::Windows { windows, warmup } => {
            let mut steps = Vec::new();
            for w in windows.iter().filter(|w| w.start < range.end) {
                let mut b = backend()?;
                let from = w.start.saturating_sub(*warmup);
                let run = frames
                    .replay(&mut *b, opts, 1, from..w.end.min(range.end), progress(key, range.end))
                    .map_err(err)?;
                steps.extend(run.into_iter().filter(|s| s.step >= w.start));
            }
            let text = format!(
                "{} windows of {} steps, {warmup} warm-up",
                windows.len(),
                windows.iter().map(|w| w.len()).max().unwrap_or(0)
            );
            (steps, 1, true, text)
        }
    };
    Ok(ReplayRow {
        key: key.to_string(),
        variant,
        backend: backend_name,
        stride,
        windowed,
        sampling: text,
        range,
        steps,
        wall_s: start.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_sit_in_the_middle_of_each_phase() {
        let w = vec![
            ("all".to_string(), 0..100),
            ("A".into(), 0..10),
            ("B".into(), 10..14),
            ("C".into(), 14..100),
        ];
        assert_eq!(middle_windows(&w, 6), vec![2..8, 10..14, 54..60]);
    }

    #[test]
    fn repeated_runs_keep_each_steps_fastest_time() {
        let run = |ms: [f64; 3]| -> Vec<ReplayStep> {
            ms.iter().enumerate().map(|(step, &ms)| ReplayStep { step, ms, ..Default::default() }).collect()
        };
        let mut best = run([3.0, 1.0, 2.0]);
        keep_fastest(&mut best, &run([2.0, 4.0, 2.5]));
        keep_fastest(&mut best, &run([5.0, 0.5, 3.0]));
        let got: Vec<(usize, f64)> = best.iter().map(|s| (s.step, s.ms)).collect();
        assert_eq!(got, vec![(0, 2.0), (1, 0.5), (2, 2.0)]);
    }
}
