//! What the GPU backend costs the host, beside the CPU backend on the same steps.
//!
//! The GPU backend and the CPU backend of the same variant (the default: iterative BVH with
//! prediction and edge rays) are replayed together, step by step, on the same pairs
//! ([`Frames::pairs`]) with the options of `rtcd_rapier`'s batch, in an order that turns from step
//! to step. Per step, from the GPU backend's [`rtcd::StepMetrics`]: its host time without the waits
//! for the device (`host_time`: planning each pair, encoding, uploads, the motion rays it traces on
//! the host, turning what it read back into contacts), the waits (`device_wait`), the bytes
//! uploaded and read back, and the kernels' time (timestamp queries, where the adapter has them);
//! from the CPU backend, the wall time of its step (its narrow phase). The manifold points the
//! readback budget counts are the GPU step's contacts reduced as the backend's own reduction does
//! (`rtcd::contact::reduce_manifolds_with`, untimed).
//!
//! Targets, on the medians over the steps run (printed MET or NOT MET; the bench does not fail on
//! them): the host time at most [`HOST_SHARE`] of the CPU backend's narrow phase; at most
//! [`UPLOAD_PER_BODY`] bytes uploaded per body plus [`UPLOAD_PER_NEW_PAIR`] per new pair, and at
//! most [`READBACK_PER_POINT`] bytes read back per manifold point plus [`READBACK_FIXED`], each
//! step (the median of each step's bytes over its own budget at most 1).

use std::{fmt::Write as _, ops::Range, time::Instant};

use rayon::prelude::*;
use rtcd::{
    NarrowPhase, NarrowPhaseBackend, StepOutput,
    contact::{ReduceScratch, reduce_manifolds_with},
    detect::{EdgeTest, candidate_region, edge_crossing},
};
use rtcd_wgpu::{GpuNarrowPhase, edge_rays::EdgeRay};
use serde_json::{Value, json};

use crate::{
    bench::median,
    replay::{Frames, ReplayStep},
    report::verdict,
};

/// The GPU backend's host time may be at most this share of the CPU backend's narrow phase.
pub const HOST_SHARE: f64 = 0.10;
/// Upload budget per body present, per step (bytes).
pub const UPLOAD_PER_BODY: u64 = 64;
/// Upload budget per new pair, per step (bytes).
pub const UPLOAD_PER_NEW_PAIR: u64 = 16;
/// Readback budget per manifold point, per step (bytes).
pub const READBACK_PER_POINT: u64 = 64;
/// Readback budget per step, besides the points (bytes).
pub const READBACK_FIXED: u64 = 4096;

/// One step of both backends.
#[derive(Clone, Debug, Default)]
pub struct HostCostStep {
    /// Step index in the scene.
    pub step: usize,
    /// Bodies present.
    pub bodies: usize,
    /// Pairs of the broad phase.
    pub pairs: usize,
    /// Pairs the GPU backend saw for the first time.
    pub new_pairs: usize,
    /// Manifold points of the GPU step's contacts.
    pub manifold_points: u64,
    /// Wall time of the GPU backend's step (ms).
    pub gpu_ms: f64,
    /// Its host time, waits excluded (ms).
    pub host_ms: f64,
    /// Its waits for the device (ms).
    pub wait_ms: f64,
    /// Its host time by phase (ms): planning and encoding, of it the pairs' decisions, motion
    /// rays, collecting ([`rtcd_wgpu::HostPhases`]).
    pub host_phases_ms: [f64; 4],
    /// Record-less pairs whose separation bound the GPU backend's host made before their standard
    /// step ([`rtcd_wgpu::HostPhases::bounds`]).
    pub bounds: u32,
    /// Its kernels' time (timestamp queries; ms).
    pub kernel_ms: Option<f64>,
    /// Each kernel's time (timestamp queries; ms), summed over its passes, in submission order.
    pub kernels: Vec<(&'static str, f64)>,
    /// Bytes it uploaded.
    pub upload: u64,
    /// Bytes it read back.
    pub readback: u64,
    /// Wall time of the CPU backend's step (ms).
    pub cpu_ms: f64,
}

impl HostCostStep {
    /// This step's upload budget (bytes).
    pub fn upload_budget(&self) -> u64 {
        UPLOAD_PER_BODY * self.bodies as u64 + UPLOAD_PER_NEW_PAIR * self.new_pairs as u64
    }

    /// This step's readback budget (bytes).
    pub fn readback_budget(&self) -> u64 {
        READBACK_PER_POINT * self.manifold_points + READBACK_FIXED
    }
}

/// The run of both backends on one scene.
pub struct HostCost {
    /// The variant's key.
    pub key: String,
    /// The GPU adapter.
    pub adapter: String,
    /// The steps run.
    pub range: Range<usize>,
    /// Per step.
    pub steps: Vec<HostCostStep>,
    /// Wall time of the run (both backends).
    pub wall_s: f64,
    /// The edge rays of the last step's pairs on the host and on the device ([`edge_ray_cost`]).
    pub edge_rays: Option<EdgeRayCost>,
}

/// The edge rays a standard step of every pair of one step tests (each direction's edges in its
/// candidate region, Mochi 2024 §3.4), traced on the host (`rtcd::detect::edge_crossing`, in
/// parallel over the rays, as the backends' pairs are) and on the device (`shaders/edge_rays.wgsl`
/// through [`GpuNarrowPhase::edge_crossings`]: one dispatch, its upload, wait and readback
/// included), three times each, alternating; medians.
#[derive(Clone, Debug)]
pub struct EdgeRayCost {
    /// The step whose pairs were used.
    pub step: usize,
    /// Edge rays traced.
    pub rays: usize,
    /// Crossings the host found.
    pub crossings: usize,
    /// Host time, ms (median of three).
    pub host_ms: f64,
    /// Device time, ms, wall (median of three).
    pub device_ms: f64,
    /// Share of the rays whose result is the same on both sides (kind; for a crossing, triangle).
    pub agree: f64,
}

/// [`EdgeRayCost`] of `step`'s pairs.
pub fn edge_ray_cost(frames: &Frames, gpu: &mut GpuNarrowPhase, step: usize) -> Result<EdgeRayCost, String> {
    let pairs = frames.pairs(step);
    let base = *gpu.params();
    let mut rays = Vec::new();
    let mut edges = Vec::new();
    for p in &pairs {
        let ext = base.for_pair(p.mesh1, p.mesh2).candidate_extension();
        for (from, to, from_to) in [(p.mesh1, p.mesh2, p.pos12.inverse()), (p.mesh2, p.mesh1, p.pos12)] {
            edges.clear();
            from.edges_in(&candidate_region(from, to, &from_to, ext), &mut edges);
            rays.extend(edges.iter().map(|&edge| EdgeRay { from, to, from_to, edge }));
        }
    }
    let tracer = base.tracer;
    let (mut host_ms, mut device_ms) = (Vec::new(), Vec::new());
    let (mut host, mut device) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        let t = Instant::now();
        host = rays
            .par_iter()
            .map(|r| edge_crossing(r.from, r.to, &r.from_to, r.edge, tracer))
            .collect::<Vec<_>>();
        host_ms.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        device = gpu.edge_crossings(&rays).map_err(|e| format!("edge rays on the device: {e}"))?;
        device_ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let same = |a: &EdgeTest, b: &EdgeTest| match (a, b) {
        (EdgeTest::Crossing(x), EdgeTest::Crossing(y)) => x.triangle == y.triangle,
        _ => std::mem::discriminant(a) == std::mem::discriminant(b),
    };
    let agreeing = host.iter().zip(&device).filter(|(a, b)| same(a, b)).count();
    Ok(EdgeRayCost {
        step,
        rays: rays.len(),
        crossings: host.iter().filter(|t| matches!(t, EdgeTest::Crossing(_))).count(),
        host_ms: median(host_ms).unwrap_or(f64::NAN),
        device_ms: median(device_ms).unwrap_or(f64::NAN),
        agree: if rays.is_empty() { 1.0 } else { agreeing as f64 / rays.len() as f64 },
    })
}

/// Per-step medians of a run.
#[derive(Clone, Debug, Default)]
pub struct Medians {
    /// GPU step, wall time (ms).
    pub gpu_step_ms: Option<f64>,
    /// GPU host time, waits excluded (ms).
    pub gpu_host_ms: Option<f64>,
    /// GPU waits (ms).
    pub gpu_wait_ms: Option<f64>,
    /// GPU host time by phase (ms): plan, of it decide, edges, collect.
    pub gpu_host_phases_ms: [Option<f64>; 4],
    /// Separation bounds the host made before standard steps.
    pub gpu_host_bounds: Option<f64>,
    /// GPU kernels (ms), where timed.
    pub gpu_kernel_ms: Option<f64>,
    /// Bytes uploaded.
    pub upload: Option<f64>,
    /// Bytes read back.
    pub readback: Option<f64>,
    /// CPU narrow phase (ms).
    pub cpu_narrow_ms: Option<f64>,
    /// Upload budget (bytes).
    pub upload_budget: Option<f64>,
    /// Readback budget (bytes).
    pub readback_budget: Option<f64>,
    /// Each step's upload over its budget.
    pub upload_ratio: Option<f64>,
    /// Each step's readback over its budget.
    pub readback_ratio: Option<f64>,
    /// Bodies.
    pub bodies: Option<f64>,
    /// Pairs.
    pub pairs: Option<f64>,
    /// New pairs.
    pub new_pairs: Option<f64>,
    /// Manifold points.
    pub manifold_points: Option<f64>,
}

/// Replays `gpu` and `cpu` (the same variant) together over `range`; returns the run and the GPU
/// backend's steps (for the GPU row of the replay table). `progress` is called with each step done.
pub fn run(
    frames: &Frames,
    gpu: &mut GpuNarrowPhase,
    cpu: &mut NarrowPhase,
    key: &str,
    range: Range<usize>,
    mut progress: impl FnMut(usize),
) -> Result<(HostCost, Vec<ReplayStep>), String> {
    let start = Instant::now();
    let opts = frames.options();
    let base = *gpu.params();
    let adapter = gpu.adapter_name().to_string();
    let mut steps = Vec::with_capacity(range.len());
    let mut replay = Vec::with_capacity(range.len());
    let (mut scratch, mut manifolds) = (ReduceScratch::default(), Vec::new());
    for step in range.clone() {
        let pairs = frames.pairs(step);
        let mut gpu_out: Option<(StepOutput, f64)> = None;
        let (mut phases, mut bounds) = ([0.0; 4], 0);
        let mut cpu_ms = 0.0;
        // Which backend goes first turns from step to step.
        for turn in 0..2 {
            let t = Instant::now();
            if (step + turn) % 2 == 0 {
                let o = gpu.step(&pairs, &opts).map_err(|e| format!("{key} on the GPU ({adapter}): {e}"))?;
                gpu_out = Some((o, t.elapsed().as_secs_f64() * 1e3));
                let h = gpu.last_host_phases();
                phases = [h.plan, h.decide, h.edges, h.collect].map(|d| d.as_secs_f64() * 1e3);
                bounds = h.bounds;
            } else {
                let o = cpu.step(&pairs, &opts);
                cpu_ms = t.elapsed().as_secs_f64() * 1e3;
                drop(o);
            }
        }
        let Some((out, gpu_ms)) = gpu_out else { unreachable!("the GPU runs on one of the two turns") };
        let mut kernels: Vec<(&'static str, f64)> = Vec::new();
        for &(label, d) in gpu.last_kernel_timings() {
            let ms = d.as_secs_f64() * 1e3;
            match kernels.iter_mut().find(|(l, _)| *l == label) {
                Some((_, sum)) => *sum += ms,
                None => kernels.push((label, ms)),
            }
        }
        let mut points = 0;
        for (o, p) in out.pairs.iter().zip(&pairs) {
            let params = base.for_pair(p.mesh1, p.mesh2);
            manifolds.clear();
            reduce_manifolds_with(&o.contacts, &p.pos12, params.manifold_angle, &mut scratch, &mut manifolds);
            points += manifolds.iter().map(|m| m.points.len() as u64).sum::<u64>();
        }
        let m = out.metrics;
        let ms = |d: Option<std::time::Duration>| d.map(|d| d.as_secs_f64() * 1e3);
        let bodies = frames.bodies(step);
        steps.push(HostCostStep {
            step,
            bodies,
            pairs: m.pairs,
            new_pairs: m.new_pairs,
            manifold_points: points,
            gpu_ms,
            host_ms: ms(m.host_time).unwrap_or(f64::NAN),
            wait_ms: ms(m.device_wait).unwrap_or(f64::NAN),
            host_phases_ms: phases,
            bounds,
            kernel_ms: ms(m.gpu_time),
            kernels,
            upload: m.upload_bytes,
            readback: m.readback_bytes,
            cpu_ms,
        });
        replay.push(ReplayStep { step, bodies, ms: gpu_ms, gpu_ms: ms(m.gpu_time), metrics: m });
        progress(step);
    }
    let last = range.end.saturating_sub(1);
    let edge_rays = Some(edge_ray_cost(frames, gpu, last)?);
    let cost = HostCost {
        key: key.to_string(),
        adapter,
        range,
        steps,
        wall_s: start.elapsed().as_secs_f64(),
        edge_rays,
    };
    Ok((cost, replay))
}

impl HostCost {
    /// The per-step medians.
    pub fn medians(&self) -> Medians {
        let m = |f: &dyn Fn(&HostCostStep) -> Option<f64>| median(self.steps.iter().filter_map(f).collect());
        let ratio = |a: u64, b: u64| (b > 0).then(|| a as f64 / b as f64);
        Medians {
            gpu_step_ms: m(&|s| Some(s.gpu_ms)),
            gpu_host_ms: m(&|s| Some(s.host_ms).filter(|v| v.is_finite())),
            gpu_wait_ms: m(&|s| Some(s.wait_ms).filter(|v| v.is_finite())),
            gpu_host_phases_ms: [0, 1, 2, 3].map(|k| m(&|s| Some(s.host_phases_ms[k]))),
            gpu_host_bounds: m(&|s| Some(s.bounds as f64)),
            gpu_kernel_ms: m(&|s| s.kernel_ms),
            upload: m(&|s| Some(s.upload as f64)),
            readback: m(&|s| Some(s.readback as f64)),
            cpu_narrow_ms: m(&|s| Some(s.cpu_ms)),
            upload_budget: m(&|s| Some(s.upload_budget() as f64)),
            readback_budget: m(&|s| Some(s.readback_budget() as f64)),
            upload_ratio: m(&|s| ratio(s.upload, s.upload_budget())),
            readback_ratio: m(&|s| ratio(s.readback, s.readback_budget())),
            bodies: m(&|s| Some(s.bodies as f64)),
            pairs: m(&|s| Some(s.pairs as f64)),
            new_pairs: m(&|s| Some(s.new_pairs as f64)),
            manifold_points: m(&|s| Some(s.manifold_points as f64)),
        }
    }

    /// Each kernel's median time a step (ms) over the steps that ran it, and how many did, in the order
    /// kernels first ran.
    pub fn kernel_medians(&self) -> Vec<(&'static str, f64, usize)> {
        let mut labels: Vec<&'static str> = Vec::new();
        for s in &self.steps {
            for (l, _) in &s.kernels {
                if !labels.contains(l) {
                    labels.push(l);
                }
            }
        }
        labels
            .into_iter()
            .filter_map(|l| {
                let times: Vec<f64> = self
                    .steps
                    .iter()
                    .filter_map(|s| s.kernels.iter().find(|(k, _)| *k == l).map(|k| k.1))
                    .collect();
                let n = times.len();
                median(times).map(|m| (l, m, n))
            })
            .collect()
    }

    /// The GPU backend's host time over the CPU backend's narrow phase (medians).
    pub fn host_ratio(&self) -> Option<f64> {
        let m = self.medians();
        match (m.gpu_host_ms, m.cpu_narrow_ms) {
            (Some(h), Some(c)) if c > 0.0 => Some(h / c),
            _ => None,
        }
    }

    /// The three targets: `(what, met, measured)`; `label` names the scene.
    pub fn targets(&self, label: &str) -> Vec<(String, Option<bool>, String)> {
        let m = self.medians();
        let f = |v: Option<f64>, d: usize| v.map_or("-".to_string(), |v| format!("{v:.d$}"));
        let n = self.steps.len();
        let within = |over: &dyn Fn(&HostCostStep) -> bool| self.steps.iter().filter(|s| !over(s)).count();
        let worst = |bytes: &dyn Fn(&HostCostStep) -> u64, budget: &dyn Fn(&HostCostStep) -> u64| {
            self.steps
                .iter()
                .max_by(|a, b| {
                    (bytes(a) as f64 / budget(a).max(1) as f64)
                        .total_cmp(&(bytes(b) as f64 / budget(b).max(1) as f64))
                })
                .map_or(String::new(), |s| {
                    format!(
                        "; worst step {}: {} B, {:.1}x its budget",
                        s.step,
                        bytes(s),
                        bytes(s) as f64 / budget(s).max(1) as f64
                    )
                })
        };
        let per_pair = |bytes: Option<f64>| match (bytes, m.pairs) {
            (Some(b), Some(p)) if p > 0.0 => format!(", {:.0} B per pair", b / p),
            _ => String::new(),
        };
        let ratio = self.host_ratio();
        vec![
            (
                format!(
                    "{label}: GPU backend's host time ≤ {:.0} % of the CPU backend's narrow phase",
                    100.0 * HOST_SHARE
                ),
                ratio.map(|r| r <= HOST_SHARE),
                format!(
                    "{} % (median {} vs {} ms a step; waiting for the device {} ms besides; kernels {} ms)",
                    f(ratio.map(|r| 100.0 * r), 1),
                    f(m.gpu_host_ms, 3),
                    f(m.cpu_narrow_ms, 3),
                    f(m.gpu_wait_ms, 3),
                    f(m.gpu_kernel_ms, 3)
                ),
            ),
            (
                format!(
                    "{label}: GPU upload ≤ {UPLOAD_PER_BODY} B per body + {UPLOAD_PER_NEW_PAIR} B per new pair a step"
                ),
                m.upload_ratio.map(|r| r <= 1.0),
                format!(
                    "median {} B vs a budget of {} B ({} bodies, {} new pairs, {} pairs){}; {} of {n} steps within{}",
                    f(m.upload, 0),
                    f(m.upload_budget, 0),
                    f(m.bodies, 0),
                    f(m.new_pairs, 0),
                    f(m.pairs, 0),
                    per_pair(m.upload),
                    within(&|s| s.upload > s.upload_budget()),
                    worst(&|s| s.upload, &|s| s.upload_budget())
                ),
            ),
            (
                format!(
                    "{label}: GPU readback ≤ {READBACK_PER_POINT} B per manifold point + {} KiB a step",
                    READBACK_FIXED / 1024
                ),
                m.readback_ratio.map(|r| r <= 1.0),
                format!(
                    "median {} B vs a budget of {} B ({} manifold points){}; {} of {n} steps within{}",
                    f(m.readback, 0),
                    f(m.readback_budget, 0),
                    f(m.manifold_points, 0),
                    per_pair(m.readback),
                    within(&|s| s.readback > s.readback_budget()),
                    worst(&|s| s.readback, &|s| s.readback_budget())
                ),
            ),
        ]
    }

    /// The section of the scene's table.
    pub fn table(&self, label: &str) -> String {
        let m = self.medians();
        let f = |v: Option<f64>, d: usize| v.map_or("-".to_string(), |v| format!("{v:.d$}"));
        let mut t = String::new();
        let _ = writeln!(
            t,
            "\nGPU backend: host cost ({}, on {}; steps {}-{}, {} run, each beside the CPU backend on the same pairs, in turn; medians a step):",
            self.key,
            self.adapter,
            self.range.start,
            self.range.end,
            self.steps.len()
        );
        let rows = [
            (
                "gpu_host_ms",
                f(m.gpu_host_ms, 3),
                "the GPU backend's host time, waits for the device excluded",
            ),
            ("  plan", f(m.gpu_host_phases_ms[0], 3), "of it: slots, plans, records, encoding, queue writes"),
            (
                "    decide",
                f(m.gpu_host_phases_ms[1], 3),
                "of plan: each pair's decisions (IRTCD 2013 Eq. 2, separation descents), in parallel",
            ),
            (
                "    bounds",
                f(m.gpu_host_bounds, 0),
                "record-less pairs' separation bounds made before their standard steps",
            ),
            (
                "  edges",
                f(m.gpu_host_phases_ms[2], 3),
                "of it: the motion rays (host, in parallel; edge rays on the device)",
            ),
            (
                "  collect",
                f(m.gpu_host_phases_ms[3], 3),
                "of it: contacts made of the rays read back, reduced; record-less references' bounds",
            ),
            ("gpu_wait_ms", f(m.gpu_wait_ms, 3), "the host blocked on the device (polls, mappings)"),
            ("gpu_step_ms", f(m.gpu_step_ms, 3), "the GPU backend's step, wall time"),
            ("gpu_kernel_ms", f(m.gpu_kernel_ms, 3), "its kernels (timestamp queries; - without them)"),
            ("gpu_upload_bytes", f(m.upload, 0), "bytes written to the device"),
            ("gpu_readback_bytes", f(m.readback, 0), "bytes mapped back"),
            ("cpu_narrow_ms", f(m.cpu_narrow_ms, 3), "the CPU backend's step on the same pairs"),
            ("gpu_host / cpu_narrow", f(self.host_ratio(), 3), "ratio of the medians"),
        ];
        for (k, v, what) in rows {
            let _ = writeln!(t, "  {k:<22} {v:>12}   {what}");
        }
        let _ = writeln!(
            t,
            "  per step: {} bodies, {} pairs, {} new pairs, {} manifold points (medians)",
            f(m.bodies, 0),
            f(m.pairs, 0),
            f(m.new_pairs, 0),
            f(m.manifold_points, 0)
        );
        let kernels = self.kernel_medians();
        if !kernels.is_empty() {
            let _ =
                writeln!(t, "  kernels (timestamp queries; median ms a step over the steps that ran each):");
            for (l, ms, n) in &kernels {
                let _ = writeln!(t, "    {:<28} {ms:>8.3}   {n} steps", l.trim_start_matches("rtcd:kernel:"));
            }
        }
        if let Some(e) = &self.edge_rays {
            let _ = writeln!(
                t,
                "  edge rays of step {}'s pairs (a standard step's: every edge in the candidate regions), {} rays, {} crossings: host {:.3} ms, device {:.3} ms (one dispatch, upload and readback included; medians of 3), {:.3} % agree",
                e.step,
                e.rays,
                e.crossings,
                e.host_ms,
                e.device_ms,
                100.0 * e.agree
            );
        }
        for (what, ok, measured) in self.targets(label) {
            let _ = writeln!(t, "  [{}] {what}: {measured}", verdict(ok));
        }
        t
    }

    /// The JSON of the run (medians, ratio, targets).
    pub fn json(&self, label: &str) -> Value {
        let m = self.medians();
        json!({
            "variant": self.key,
            "adapter": self.adapter,
            "step_range": [self.range.start, self.range.end],
            "steps_run": self.steps.len(),
            "how": "replayed, the GPU and the CPU backend on the same pairs, in turn each step",
            "median": {
                "gpu_host_ms": m.gpu_host_ms,
                "gpu_host_plan_ms": m.gpu_host_phases_ms[0],
                "gpu_host_decide_ms": m.gpu_host_phases_ms[1],
                "gpu_host_bounds": m.gpu_host_bounds,
                "gpu_host_edges_ms": m.gpu_host_phases_ms[2],
                "gpu_host_collect_ms": m.gpu_host_phases_ms[3],
                "gpu_wait_ms": m.gpu_wait_ms,
                "gpu_step_ms": m.gpu_step_ms,
                "gpu_kernel_ms": m.gpu_kernel_ms,
                "gpu_upload_bytes": m.upload,
                "gpu_readback_bytes": m.readback,
                "cpu_narrow_ms": m.cpu_narrow_ms,
                "upload_budget_bytes": m.upload_budget,
                "readback_budget_bytes": m.readback_budget,
                "upload_over_budget": m.upload_ratio,
                "readback_over_budget": m.readback_ratio,
                "bodies": m.bodies,
                "pairs": m.pairs,
                "new_pairs": m.new_pairs,
                "manifold_points": m.manifold_points,
            },
            "gpu_host_over_cpu_narrow": self.host_ratio(),
            "gpu_kernels_ms": self.kernel_medians().iter().map(|(l, ms, n)| json!({
                "kernel": l.trim_start_matches("rtcd:kernel:"),
                "median_ms": ms,
                "steps": n,
            })).collect::<Vec<_>>(),
            "edge_rays": self.edge_rays.as_ref().map(|e| json!({
                "step": e.step,
                "rays": e.rays,
                "crossings": e.crossings,
                "host_ms": e.host_ms,
                "device_ms": e.device_ms,
                "agree": e.agree,
                "how": "a standard step's edge rays of every pair of the step (every edge in the candidate regions), on the host in parallel and on the device in one dispatch with its upload and readback; medians of 3",
            })),
            "targets": self.targets(label).iter().map(|(k, ok, v)| json!({"target": k, "met": ok, "measured": v})).collect::<Vec<_>>(),
            "wall_s": self.wall_s,
        })
    }

    /// One CSV line per step.
    pub fn csv(&self) -> String {
        let mut csv = String::from(
            "step,bodies,pairs,new_pairs,manifold_points,gpu_step_ms,gpu_host_ms,gpu_host_plan_ms,gpu_host_decide_ms,gpu_host_bounds,gpu_host_edges_ms,gpu_host_collect_ms,gpu_wait_ms,gpu_kernel_ms,gpu_upload_bytes,gpu_readback_bytes,upload_budget_bytes,readback_budget_bytes,cpu_narrow_ms\n",
        );
        for s in &self.steps {
            let _ = writeln!(
                csv,
                "{},{},{},{},{},{:.4},{:.4},{:.4},{:.4},{},{:.4},{:.4},{:.4},{},{},{},{},{},{:.4}",
                s.step,
                s.bodies,
                s.pairs,
                s.new_pairs,
                s.manifold_points,
                s.gpu_ms,
                s.host_ms,
                s.host_phases_ms[0],
                s.host_phases_ms[1],
                s.bounds,
                s.host_phases_ms[2],
                s.host_phases_ms[3],
                s.wait_ms,
                s.kernel_ms.map_or(String::new(), |k| format!("{k:.4}")),
                s.upload,
                s.readback,
                s.upload_budget(),
                s.readback_budget(),
                s.cpu_ms
            );
        }
        csv
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(upload: u64, readback: u64, host_ms: f64, cpu_ms: f64) -> HostCostStep {
        HostCostStep {
            bodies: 10,
            new_pairs: 2,
            manifold_points: 8,
            upload,
            readback,
            host_ms,
            wait_ms: 0.0,
            cpu_ms,
            ..Default::default()
        }
    }

    #[test]
    fn budgets_and_verdicts() {
        let s = step(0, 0, 0.0, 0.0);
        assert_eq!(s.upload_budget(), 10 * 64 + 2 * 16);
        assert_eq!(s.readback_budget(), 8 * 64 + 4096);
        // Two of three steps within the upload budget (672 B), one within the readback's (4,608 B);
        // host time 5 % of the CPU's.
        let run = HostCost {
            key: "k".into(),
            adapter: "a".into(),
            range: 0..3,
            steps: vec![step(600, 5000, 0.05, 1.0), step(700, 6000, 0.05, 1.0), step(100, 100, 0.05, 1.0)],
            wall_s: 0.0,
            edge_rays: None,
        };
        let t = run.targets("scene");
        assert_eq!(t.iter().map(|x| x.1).collect::<Vec<_>>(), [Some(true), Some(true), Some(false)]);
        assert!(t[1].2.contains("2 of 3 steps within"), "{}", t[1].2);
        assert!(t[2].2.contains("1 of 3 steps within"), "{}", t[2].2);
        assert!((run.host_ratio().unwrap() - 0.05).abs() < 1e-12);
        let slow = HostCost { steps: vec![step(0, 0, 0.2, 1.0)], ..run };
        assert_eq!(slow.targets("scene")[0].1, Some(false));
    }

    /// Each kernel's median is over the steps that ran it, in the order kernels first ran, and the
    /// table and the JSON carry them.
    #[test]
    fn kernel_medians_over_the_steps_that_ran_each() {
        let with = |kernels: Vec<(&'static str, f64)>| HostCostStep { kernels, ..step(0, 0, 0.0, 1.0) };
        let run = HostCost {
            key: "k".into(),
            adapter: "a".into(),
            range: 0..3,
            steps: vec![
                with(vec![("rtcd:kernel:a", 1.0), ("rtcd:kernel:b", 4.0)]),
                with(vec![("rtcd:kernel:a", 3.0)]),
                with(vec![("rtcd:kernel:c", 0.5), ("rtcd:kernel:a", 2.0), ("rtcd:kernel:b", 6.0)]),
            ],
            wall_s: 0.0,
            edge_rays: None,
        };
        assert_eq!(
            run.kernel_medians(),
            [("rtcd:kernel:a", 2.0, 3), ("rtcd:kernel:b", 5.0, 2), ("rtcd:kernel:c", 0.5, 1)]
        );
        let table = run.table("scene");
        assert!(table.contains("    b                               5.000   2 steps"), "{table}");
        let json = run.json("scene");
        assert_eq!(json["gpu_kernels_ms"][1]["kernel"], "b");
        assert_eq!(json["gpu_kernels_ms"][1]["median_ms"], 5.0);
        assert_eq!(json["gpu_kernels_ms"][1]["steps"], 2);
    }
}
