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
//! Writes CSV and SVG plots to `target/rtcd_bench/`, prints a summary table; `--json` prints the same
//! figures as one JSON object. See `docs/benchmarks.md` and `--help`.

mod bench;
mod cli;
mod independent;
mod output;
mod plot;
mod replay;
mod report;
mod scene;
mod sim;
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
    let gpu = open_gpu(opts);
    let info = report::RunInfo {
        cpu: cpu_name(),
        threads: rayon::current_num_threads(),
        gpu: gpu.as_ref().map_or_else(|| "none".to_string(), |g| g.name.clone()),
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
    let mut results = Vec::new();
    let mut files = Vec::new();
    for &k in &opts.scenes {
        let scene = match (k, opts.quick) {
            (1, q) => scene::avalanche(
                &opts.assets,
                if q { 4 } else { 8 },
                opts.seconds.unwrap_or(if q { 3.0 } else { 10.0 }),
                q,
            )?,
            (2, q) => scene::spawner(&opts.assets, opts.seconds.unwrap_or(if q { 5.0 } else { 50.0 }), q)?,
            (_, q) => scene::everyday(
                opts.bodies.unwrap_or(if q { 20 } else { rtcd_scenes::Everyday::COUNT }),
                opts.seconds.unwrap_or(if q { 4.0 } else { 10.0 }),
                q,
            )?,
        };
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
