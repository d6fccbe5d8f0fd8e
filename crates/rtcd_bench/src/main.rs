//! # rtcd_bench: the papers' scene benchmarks
//!
//! Runs IRTCD 2013 §4.1's two scenes (2014 §5.1) and a third of everyday game content, headless,
//! and measures in one run:
//!
//! - rtcd's narrow phase in its eight variants (standard / iterative × brute force / BVH × with /
//!   without prediction) on the CPU backend, and on the GPU backend where an adapter exists. These
//!   rows are **replayed**: the scene is simulated once with rtcd's default configuration and every
//!   variant runs on the recorded poses (narrow-phase timing needs no physics);
//! - side by side, **simulated** each with its own physics: rtcd (default), rtcd without prediction,
//!   rtcd without re-projection, plain Rapier with trimesh colliders (`FIX_INTERNAL_EDGES`) and
//!   V-HACD convex decomposition: narrow-phase and whole-step time, penetration, tunnelling, set-up
//!   time;
//! - on scene 3, at the end of each simulation, an independent measure of interpenetration that
//!   shares no code with rtcd (`rtcd_scenes::measure`): vertex depths, crossing edges, tunnelled
//!   bodies, beside the targets of 0 tunnelled, 0 crossing edges at rest, no deeper than Rapier
//!   trimesh and a narrow phase 10x faster.
//!
//! - with `--ground terrain,heightfield`, instead: scenes 1 and 3 on level geometry (a wavy terrain as
//!   a Rapier triangle mesh or heightfield) beside the ground box, and Rapier's own path on it: cost
//!   per body-ground pair, penetration, tunnelling ([`level`]); with `--big-level`, the build of
//!   100k- and 1M-triangle levels and the narrow phase on them ([`big_level`]).
//!
//! Writes CSV and SVG plots to `target/rtcd_bench/`, prints a summary table; `--json` prints the same
//! figures as one JSON object. See `docs/benchmarks.md` and `--help`.

mod bench;
mod big_level;
mod cli;
mod host_cost;
mod independent;
mod level;
mod output;
mod plot;
mod replay;
mod report;
mod scene;
mod sim;
mod terrain;
mod world;

use std::{io::Write, time::Instant};

use bench::{Gpu, note};
use cli::Options;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let opts = match Options::parse(args.clone()) {
        Ok(o) => o,
        Err(msg) => {
            let help = args.iter().any(|a| a == "-h" || a == "--help");
            if help {
                print!("{msg}");
                return;
            }
            eprintln!("{msg}");
            std::process::exit(2);
        }
    };
    if let Err(e) = run(&opts, &args) {
        eprintln!("rtcd_bench: {e}");
        std::process::exit(1);
    }
}

/// rayon's global pool: `threads` threads (else `RAYON_NUM_THREADS`, else one per core), the
/// calling thread being one of them when there are two or more (rayon's `use_current_thread`).
/// The replays call the backends from this thread: a resting pile's iterative step is short, and
/// a caller that sleeps while the pool works and is woken at the end would pay a noticeable share
/// of it. With one thread the pool's own thread works and the caller waits, as rayon's default
/// pool does (the caller alone would never run the jobs that `rtcd_rapier` spawns).
fn build_pool(threads: Option<usize>) -> Result<(), String> {
    let from_env = || std::env::var("RAYON_NUM_THREADS").ok().and_then(|v| v.parse().ok()).filter(|&n| n > 0);
    let n = threads
        .or_else(from_env)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, std::num::NonZero::get));
    let builder = rayon::ThreadPoolBuilder::new().num_threads(n);
    let builder = if n >= 2 { builder.use_current_thread() } else { builder };
    builder.build_global().map_err(|e| e.to_string())
}

fn run(opts: &Options, args: &[String]) -> Result<(), String> {
    let start = Instant::now();
    build_pool(opts.threads)?;
    let levels = !opts.ground.is_empty() || opts.big_level;
    // The level figures run on the CPU backend only.
    let gpu = if levels { None } else { open_gpu(opts) };
    if opts.gpu == "on" && gpu.is_none() && !levels {
        return Err("--gpu on: no usable GPU adapter (see above)".into());
    }
    let info = report::RunInfo {
        cpu: cpu_name(),
        threads: rayon::current_num_threads(),
        gpu: gpu.as_ref().map_or_else(|| "none".to_string(), |g| g.name.clone()),
        gpu_software: gpu.as_ref().map(|g| g.software),
        date: utc_date(),
        mode: if opts.quick { "quick".into() } else { "full".into() },
        args: args.join(" "),
    };
    note(format!(
        "{} run on {} ({} rayon threads), GPU: {}, {}",
        info.mode, info.cpu, info.threads, info.gpu, info.date
    ));
    std::fs::create_dir_all(&opts.out).map_err(|e| format!("{}: {e}", opts.out.display()))?;
    let opts = &Options {
        out: std::fs::canonicalize(&opts.out).unwrap_or_else(|_| opts.out.clone()),
        ..opts.clone()
    };
    if levels {
        return run_levels(opts, &info, start);
    }
    let mut results = Vec::new();
    let mut files = Vec::new();
    for &k in &opts.scenes {
        let scene = make_scene(opts, k)?;
        let r = bench::run_scene(scene, opts, gpu.as_ref())?;
        files.extend(output::write_scene(&opts.out, &r)?);
        // Print each scene as soon as it is done: full runs are long.
        emit(opts, &report::table(&r));
        results.push(r);
    }
    let wall = start.elapsed().as_secs_f64();
    let mut t = String::from("\ntargets:\n");
    for (what, ok, measured) in report::targets(&results) {
        t.push_str(&format!("  [{}] {what}: {measured}\n", report::verdict(ok)));
    }
    t.push_str(&format!(
        "\n{} run, {:.0} s in all, on {} ({} threads), GPU: {}, {}. Files in {}\n",
        info.mode,
        wall,
        info.cpu,
        info.threads,
        info.gpu,
        info.date,
        opts.out.display()
    ));
    emit(opts, &t);
    let json = report::run_json(&info, &results, wall, &files);
    // One file per kind of run, so a one-scene run does not overwrite a two-scene one.
    let scenes = if opts.scenes.len() == 1 { format!("_scene{}", opts.scenes[0]) } else { String::new() };
    let path = opts.out.join(format!("results{}{scenes}.json", if opts.quick { "_quick" } else { "" }));
    std::fs::write(&path, serde_json::to_string_pretty(&json).unwrap_or_default())
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if opts.json {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{}", serde_json::to_string(&json).unwrap_or_default());
    }
    Ok(())
}

/// Scene `k` (1, 2 or 3) at the options' scale.
fn make_scene(opts: &Options, k: u32) -> Result<scene::Scene, String> {
    match (k, opts.quick) {
        (1, q) => scene::avalanche(
            &opts.assets,
            if q { 4 } else { 8 },
            opts.seconds.unwrap_or(if q { 3.0 } else { 10.0 }),
            q,
        ),
        (2, q) => scene::spawner(&opts.assets, opts.seconds.unwrap_or(if q { 5.0 } else { 50.0 }), q),
        (_, q) => scene::everyday(
            opts.bodies.unwrap_or(if q { 20 } else { rtcd_scenes::Everyday::COUNT }),
            opts.seconds.unwrap_or(if q { 4.0 } else { 10.0 }),
            q,
        ),
    }
}

/// `--ground` and `--big-level`: the level comparison on scenes 1 and 3, then the big levels.
fn run_levels(opts: &Options, info: &report::RunInfo, start: Instant) -> Result<(), String> {
    let kinds: Vec<terrain::LevelKind> =
        opts.ground
            .iter()
            .map(|g| {
                if g == "heightfield" { terrain::LevelKind::HeightField } else { terrain::LevelKind::TriMesh }
            })
            .collect();
    let mut json = serde_json::Map::new();
    for &k in opts.scenes.iter().filter(|_| !kinds.is_empty()) {
        if k == 2 {
            note("level ground: scene 2 has no walls and is left out (scenes 1 and 3)");
            continue;
        }
        let scene = make_scene(opts, k)?;
        let refs: Vec<&rtcd::RtcdMesh> = scene.meshes.iter().map(|m| &**m).collect();
        let params = rtcd::RtcdParams::from_meshes(&refs);
        let floor = scene.floor_half_width.unwrap_or(scene.ground_half_extents.x);
        let terrain = std::sync::Arc::new(terrain::Terrain::covering(scene.ground_half_extents.x, floor));
        note(format!("{} — level comparison, {} run(s) of each case", scene.name, opts.repeat));
        let results = level::compare(&scene, params, &level::cases(&kinds, &terrain), opts.repeat)?;
        emit(opts, &level::table(&scene, &terrain, &results, opts.repeat));
        json.insert(format!("scene{k}"), level::json(&scene, &results));
    }
    if opts.big_level {
        let scene = make_scene(opts, 1)?;
        let refs: Vec<&rtcd::RtcdMesh> = scene.meshes.iter().map(|m| &**m).collect();
        note(format!("{} — big levels", scene.name));
        let rows = big_level::run(&scene, rtcd::RtcdParams::from_meshes(&refs))?;
        emit(opts, &big_level::table(&scene, &rows));
        json.insert("big_level".into(), big_level::json(&rows));
    }
    let wall = start.elapsed().as_secs_f64();
    emit(
        opts,
        &format!(
            "\n{} run, {:.0} s in all, on {} ({} threads), GPU: not used, {}\n",
            info.mode, wall, info.cpu, info.threads, info.date
        ),
    );
    json.insert("cpu".into(), info.cpu.clone().into());
    json.insert("threads".into(), info.threads.into());
    json.insert("date".into(), info.date.clone().into());
    json.insert("args".into(), info.args.clone().into());
    json.insert("wall_s".into(), wall.into());
    let json = serde_json::Value::Object(json);
    let path = opts.out.join(format!("level_results{}.json", if opts.quick { "_quick" } else { "" }));
    std::fs::write(&path, serde_json::to_string_pretty(&json).unwrap_or_default())
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if opts.json {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{}", serde_json::to_string(&json).unwrap_or_default());
    }
    Ok(())
}

/// The human-readable report: stdout, or stderr when stdout carries the JSON.
fn emit(opts: &Options, text: &str) {
    if opts.json {
        eprint!("{text}");
    } else {
        print!("{text}");
        let _ = std::io::stdout().flush();
    }
}

fn open_gpu(opts: &Options) -> Option<Gpu> {
    if opts.gpu == "off" {
        return None;
    }
    match rtcd_wgpu::create_device(&rtcd_wgpu::DeviceOptions::default()) {
        Ok(device) => {
            let info = &device.info;
            // `wgpu::DeviceType::Cpu` (lavapipe, llvmpipe, WARP), named through Debug so this crate
            // needs no wgpu dependency of its own.
            let software = format!("{:?}", info.device_type) == "Cpu";
            let name = format!("{} ({:?}, {:?})", info.name, info.device_type, info.backend);
            Some(Gpu { device, software, name })
        }
        Err(e) => {
            note(format!("no GPU rows: {e}"));
            None
        }
    }
}

fn cpu_name() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}

/// Today's UTC date, `YYYY-MM-DD` (days-from-civil inverse, no date crate).
fn utc_date() -> String {
    let secs =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()) as i64;
    let z = secs.div_euclid(86_400) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}
