//! The figures of a run: derived summaries (per-phase means, speedups, erroneous rays, cumulative
//! ray length, the side-by-side table, the performance targets), printed as a table, written as
//! CSV, and gathered into one JSON object.

use std::{fmt::Write as _, ops::Range};

use rtcd::TracerKind;
use serde_json::{Value, json};

use crate::{
    bench::{ReplayRow, SceneResult, SimRow, mean},
    replay::Variant,
};

/// Machine and run facts printed with every result.
pub struct RunInfo {
    /// CPU model.
    pub cpu: String,
    /// Rayon threads.
    pub threads: usize,
    /// GPU adapter or why none.
    pub gpu: String,
    /// Whether that adapter is a software one (`None` without one).
    pub gpu_software: Option<bool>,
    /// UTC date.
    pub date: String,
    /// `quick` or `full`.
    pub mode: String,
    /// The command line.
    pub args: String,
}

/// `(window, standard ms, iterative ms, speedup)`.
pub type WindowSpeedup = (String, Option<f64>, Option<f64>, Option<f64>);

/// Iterative vs standard speedup of one tracer and prediction setting, per window.
pub struct Speedup {
    /// Tracer.
    pub tracer: TracerKind,
    /// Prediction on in both.
    pub prediction: bool,
    /// Per window.
    pub per_window: Vec<WindowSpeedup>,
}

/// The speedups available in a result.
pub fn speedups(r: &SceneResult) -> Vec<Speedup> {
    let mut out = Vec::new();
    for tracer in [TracerKind::BruteForce, TracerKind::Bvh] {
        for prediction in [false, true] {
            let s = Variant::new(tracer, false, prediction).key();
            let i = Variant::new(tracer, true, prediction).key();
            let (Some(s), Some(i)) = (r.replay(&s), r.replay(&i)) else { continue };
            let per_window = r
                .windows
                .iter()
                .map(|(name, w)| {
                    let (a, b) = (s.mean_ms(w), i.mean_ms(w));
                    let ratio = match (a, b) {
                        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
                        _ => None,
                    };
                    (name.clone(), a, b, ratio)
                })
                .collect();
            out.push(Speedup { tracer, prediction, per_window });
        }
    }
    out
}

/// Erroneous-ray figures of one run with `measure_errors` (2014 §5.2, 2013 §4.3).
pub struct ErrorSummary {
    /// Prediction on.
    pub prediction: bool,
    /// Erroneous rays / compared rays over the run (%).
    pub rays_pct: f64,
    /// Worst step (%).
    pub worst_step_rays_pct: f64,
    /// Contacts detected late (in the standard trace, not in ours), over the run.
    pub late_contacts: u64,
    /// Wrongly detected pairs / pairs over the run (%).
    pub pairs_pct: f64,
    /// Worst step (%).
    pub worst_step_pairs_pct: f64,
    /// Sum of erroneous rays.
    pub erroneous_rays: u64,
    /// Sum of compared rays.
    pub compared_rays: u64,
}

/// Summaries of the error rows.
pub fn error_summaries(r: &SceneResult) -> Vec<ErrorSummary> {
    r.errors
        .iter()
        .map(|row| {
            let (mut er, mut cr, mut late, mut ep, mut pairs, mut worst_r, mut worst_p) =
                (0, 0, 0, 0, 0usize, 0.0f64, 0.0f64);
            for s in &row.steps {
                let Some(e) = s.metrics.errors else { continue };
                er += e.erroneous_rays;
                cr += e.compared_rays;
                late += e.late_contacts;
                ep += e.erroneous_pairs;
                pairs += s.metrics.pairs;
                worst_r = worst_r.max(100.0 * e.erroneous_share());
                if s.metrics.pairs > 0 {
                    worst_p = worst_p.max(100.0 * e.erroneous_pairs as f64 / s.metrics.pairs as f64);
                }
            }
            ErrorSummary {
                prediction: row.variant.is_some_and(|v| v.prediction),
                rays_pct: pct(er as f64, cr as f64),
                worst_step_rays_pct: worst_r,
                late_contacts: late,
                pairs_pct: pct(ep as f64, pairs as f64),
                worst_step_pairs_pct: worst_p,
                erroneous_rays: er,
                compared_rays: cr,
            }
        })
        .collect()
}

fn pct(a: f64, b: f64) -> f64 {
    if b > 0.0 { 100.0 * a / b } else { 0.0 }
}

/// `1 - a / b` in %: how much smaller `a` is than `b`.
fn decrease(a: f64, b: f64) -> Option<f64> {
    (b > 0.0).then(|| 100.0 * (1.0 - a / b))
}

fn f(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".into(), |v| format!("{v:.digits$}"))
}

fn sim<'a>(r: &'a SceneResult, label: &str) -> Option<&'a SimRow> {
    r.sims.iter().find(|s| s.run.label == label)
}

/// The paper's speedups for a window and tracer (IRTCD 2013 §4.3).
fn paper_speedup(scene: u32, tracer: TracerKind, window: &str) -> Option<f64> {
    let brute = tracer == TracerKind::BruteForce;
    match (scene, window) {
        (1, "A") => Some(if brute { 3.7 } else { 1.0 }),
        (1, "B") => Some(if brute { 1.3 } else { 2.1 }),
        (1, "C") => Some(if brute { 19.3 } else { 6.9 }),
        (2, "peak") => Some(if brute { 29.1 } else { 18.8 }),
        _ => None,
    }
}

/// The human-readable report of one scene.
pub fn table(r: &SceneResult) -> String {
    let mut t = String::new();
    let n = r.scene.steps;
    let _ = writeln!(t, "\n== {} ==", r.scene.name);
    let _ = writeln!(
        t,
        "{} bodies, {} triangles in all; {:.0} s of work. Params: displacement_threshold {:.4}, max_it {}, distance_extension {:.4}, culling_dist {:.4}",
        r.scene.bodies(),
        r.scene.triangles(),
        r.wall_s,
        r.params.displacement_threshold,
        r.params.max_it,
        r.params.distance_extension,
        r.params.culling_dist
    );
    let win = |w: &Range<usize>| {
        format!("{:.2}-{:.2} s (steps {}-{})", w.start as f64 / 60.0, w.end as f64 / 60.0, w.start, w.end)
    };
    if let Some(p) = &r.phases {
        let _ = writeln!(
            t,
            "phases (from the rtcd simulation): A falling {}, B impact {}, C rest {}",
            win(&p.falling),
            win(&p.impact),
            win(&p.rest)
        );
    }
    if let Some(w) = r.window("peak") {
        let bodies = r.sims.first().and_then(|s| s.run.steps.get(w.start)).map_or(0, |s| s.bodies);
        let _ = writeln!(
            t,
            "peak window: the last {} steps ({} to {} bodies)",
            w.len(),
            bodies,
            r.scene.bodies()
        );
    }
    let names: Vec<&str> = r.windows.iter().map(|w| w.0.as_str()).collect();

    // Replays.
    if !r.replays.is_empty() || !r.gpu.is_empty() {
        let _ = writeln!(
            t,
            "\nnarrow phase, REPLAYED on the poses of the rtcd simulation (ms per step, mean per window; every pair of the broad phase, sleeping bodies included):"
        );
        let _ = write!(t, "  {:<24} {:<4} {:<32}", "variant", "on", "steps timed");
        for nm in &names {
            let _ = write!(t, " {:>9}", nm);
        }
        let _ = writeln!(
            t,
            " {:>9} {:>7} {:>11} {:>11} {:>11} {:>10} {:>10} {:>11}",
            "max", "pairs", "std rays", "iter rays", "pred rays", "contacts", "edge rays", "motion rays"
        );
        for row in r.replays.iter().chain(&r.gpu) {
            let backend = if row.backend == "cpu" { "cpu" } else { "gpu" };
            let _ = write!(t, "  {:<24} {:<4} {:<32}", row.key, backend, row.sampling);
            for (_, w) in &r.windows {
                let _ = write!(t, " {:>9}", f(row.mean_ms(w), 2));
            }
            let sum = |g: fn(&rtcd::StepMetrics) -> u64| row.steps.iter().map(|s| g(&s.metrics)).sum::<u64>();
            let pairs = mean(row.steps.iter().map(|s| s.metrics.pairs as f64)).unwrap_or(0.0);
            let _ = writeln!(
                t,
                " {:>9.2} {:>7.0} {:>11} {:>11} {:>11} {:>10} {:>10} {:>11}",
                row.max_ms(),
                pairs,
                sum(|m| m.standard_rays),
                sum(|m| m.iterative_rays),
                sum(|m| m.predictive_rays),
                sum(|m| m.contact_rays),
                sum(|m| m.edge_rays),
                sum(|m| m.motion_rays)
            );
        }
        let _ = writeln!(
            t,
            "  (standard tracing keeps no state, so a standard variant may be timed on every k-th step; windows: short runs on a fresh backend, no mean over the whole run; ray counts are sums over the steps timed)"
        );
    }
    let _ = writeln!(t, "  {}", r.gpu_note);
    if let Some(h) = &r.host_cost {
        t.push_str(&h.table(&host_cost_label(r)));
    }

    let sp = speedups(r);
    if !sp.is_empty() {
        let _ = writeln!(
            t,
            "\niterative vs standard speedup (same prediction setting on both sides; paper in brackets):"
        );
        for s in &sp {
            let _ = write!(
                t,
                "  {:<6} {:<14}",
                if s.tracer == TracerKind::Bvh { "BVH" } else { "brute" },
                if s.prediction { "prediction" } else { "no prediction" }
            );
            for (name, _, _, x) in &s.per_window {
                let paper = paper_speedup(r.scene.id.number(), s.tracer, name)
                    .map_or(String::new(), |p| format!(" [{p}]"));
                let _ = write!(t, "  {name} {}x{paper}", f(*x, 1));
            }
            let _ = writeln!(t);
        }
    }

    let es = error_summaries(r);
    if !es.is_empty() {
        let _ = writeln!(
            t,
            "\nerroneous rays vs a full standard trace (iterative BVH, replayed; paper: wrongly detected pairs ≤ 1.7 % scene 1, 2.9 % scene 2; prediction cuts erroneous rays by up to 91 %):"
        );
        for e in &es {
            let _ = writeln!(
                t,
                "  {:<14} erroneous rays {:.3} % of {} compared (worst step {:.2} %), late contacts {}, wrongly detected pairs {:.3} % (worst step {:.2} %)",
                if e.prediction { "prediction" } else { "no prediction" },
                e.rays_pct,
                e.compared_rays,
                e.worst_step_rays_pct,
                e.late_contacts,
                e.pairs_pct,
                e.worst_step_pairs_pct
            );
        }
        if let (Some(a), Some(b)) = (es.iter().find(|e| !e.prediction), es.iter().find(|e| e.prediction)) {
            let _ = writeln!(
                t,
                "  prediction cuts erroneous rays by {} %",
                f(decrease(b.erroneous_rays as f64, a.erroneous_rays as f64), 1)
            );
        }
    }

    // Simulations.
    if !r.sims.is_empty() {
        let _ = writeln!(
            t,
            "\nside by side, each SIMULATED with its own physics (same scene, same Rapier, 60 Hz). Narrow phase = contact generation (rtcd: batch + dispatcher; Rapier: its dispatcher calls, one thread):"
        );
        let _ = write!(t, "  {:<24} {:>9}", "set-up", "setup ms");
        for nm in &names {
            let _ = write!(t, " {:>8}", format!("np {nm}"));
        }
        let _ = writeln!(
            t,
            " {:>9} {:>10} {:>10} {:>9} {:>9} {:>9} {:>7}",
            "step ms", "pen mean", "pen cum", "deepest", "ground", "tunnel", "sleep"
        );
        for s in &r.sims {
            let _ = write!(t, "  {:<24} {:>9.1}", s.run.label, s.run.setup_time.as_secs_f64() * 1e3);
            for (_, w) in &r.windows {
                let _ = write!(t, " {:>8}", f(s.narrow_ms(w), 2));
            }
            let _ = writeln!(
                t,
                " {:>9.2} {:>10.3} {:>10.1} {:>9.4} {:>9.4} {:>9} {:>7}",
                s.step_ms(&(0..n)).unwrap_or(0.0),
                s.mean_depth(),
                s.cumulative_depth(),
                s.max_depth(),
                s.ground_penetration(),
                s.tunnelled(),
                s.run.steps.last().map_or(0, |x| x.sleeping)
            );
        }
        let _ = writeln!(
            t,
            "  np: narrow-phase ms per step; pen mean: total penetration depth per step (sum of the depths of all penetrating vertices, m, standard trace every {} step(s)); pen cum: estimated over the run (the sampled steps' sum times the sampling stride); deepest: deepest vertex (m); ground: deepest vertex below the ground (m); tunnel: bodies whose centre went below the ground, or that were lost (not finite, off the floor)",
            r.sims[0].measure_stride
        );
        for s in &r.sims {
            if !s.run.setup_notes.is_empty() {
                let _ = writeln!(t, "  set-up of {}: {}", s.run.label, s.run.setup_notes.join("; "));
            }
        }
        let main = &r.sims[0];
        let _ = writeln!(
            t,
            "\ncumulative ray length (standard trace over each simulation; paper: −45 % / −56 % with prediction, −59 % / −42 % with re-projection):"
        );
        for s in &r.sims {
            let _ = writeln!(t, "  {:<24} {:>12.1} m", s.run.label, s.cumulative_ray_length());
        }
        for (label, what) in
            [("rtcd, no prediction", "prediction"), ("rtcd, no re-projection", "re-projection")]
        {
            if let Some(o) = sim(r, label) {
                let _ = writeln!(
                    t,
                    "  {what} changes it by {} % (−: less interpenetration)",
                    f(decrease(main.cumulative_ray_length(), o.cumulative_ray_length()).map(|d| -d), 1)
                );
            }
        }
    }
    if r.sims.iter().any(|s| s.end.is_some()) {
        everyday_table(r, &mut t);
    }
    t
}

/// Scene 3's end, measured independently, and its targets, per set-up.
fn everyday_table(r: &SceneResult, t: &mut String) {
    let rest = r.window("C").cloned().unwrap_or(0..r.scene.steps);
    let _ = writeln!(
        t,
        "
at the end ({:.1} s), INDEPENDENT measure (rtcd_scenes::measure: ray parity by majority of 3 rays, closest points, no rtcd code), every pair whose bounding boxes overlap, body-body and body-ground/wall, both ways:",
        r.scene.steps as f64 / 60.0
    );
    let _ = writeln!(
        t,
        "  {:<36} {:>9} {:>9} {:>10} {:>9} {:>10} {:>7} {:>8} {:>8} {:>7} {:>7} {:>7}",
        "set-up",
        "np med",
        "np med C",
        "pen max m",
        "pen max%",
        "pen sum m",
        "pairs",
        "vtx in",
        "x-edges",
        "shallow",
        "tunnel",
        "asleep"
    );
    for s in &r.sims {
        let Some(e) = &s.end else { continue };
        let _ = writeln!(
            t,
            "  {:<36} {:>9} {:>9} {:>10.4} {:>9.2} {:>10.4} {:>7} {:>8} {:>8} {:>7} {:>7} {:>7}",
            s.run.label,
            f(s.median_narrow_ms(&(0..r.scene.steps)), 3),
            f(s.median_narrow_ms(&rest), 3),
            e.max_depth(),
            100.0 * e.max_relative_depth(),
            e.sum_depth(),
            e.pairs.iter().filter(|p| p.touches()).count(),
            e.vertices_inside(),
            e.crossing_edges(),
            e.shallow_edges(),
            e.tunnelled.len(),
            format!("{}/{}", s.run.steps.last().map_or(0, |x| x.sleeping), e.bodies)
        );
    }
    let _ = writeln!(
        t,
        "  np med: median narrow-phase ms per step over the run, and over the rest phase C ({:.2}-{:.2} s); pen max: the deepest point of one body inside another (or the ground, a wall: a vertex, or a point of a crossing edge), m and % of the smaller body's bounding diagonal (the largest ratio of any pair); pen sum: every interpenetrating pair's depth, summed; pairs: pairs with a vertex inside or an edge through; vtx in: vertices inside another body; x-edges: crossing edges deeper than the pair's tolerance (both endpoints outside the other body and the segment through it, or right through a part of it thinner than twice the tolerance; or one endpoint inside and the edge deeper than it by more than the tolerance); shallow: crossing edges within it; tunnel: bodies whose bounding box's centre went below the ground's top by more than their bounding diagonal, or off the floor between the walls, at any step (the side-by-side table's tunnel column above counts a centre below the ground's top at all, which a 1 cm plate resting 5 mm deep does)",
        rest.start as f64 / 60.0,
        rest.end as f64 / 60.0
    );
    let _ = writeln!(
        t,
        "  crossing-edge tolerance of a pair: {:.0} % of the smaller body's bounding diagonal, or Rapier's allowed linear error where that is larger:",
        100.0 * crate::independent::TOL_SHARE
    );
    for s in &r.sims {
        let Some(e) = &s.end else { continue };
        let (share, allowed) = e.rule_counts();
        let _ = writeln!(
            t,
            "    {:<36} {share} pairs by 1 % of the diagonal, {allowed} by Rapier's allowed linear error ({:.4} m)",
            s.run.label, e.allowed_linear_error
        );
    }
    for s in &r.sims {
        let Some(e) = &s.end else { continue };
        let failing: Vec<String> = e
            .pairs
            .iter()
            .filter(|p| p.measure.crossing_edges() > 0)
            .map(|p| {
                format!(
                    "{} / {}: {} edges deeper than {:.4} m or right through (deepest {:.4} m), deepest vertex {:.4} m",
                    crate::independent::body_name(&r.scene, p.body),
                    crate::independent::partner_name(&r.scene, p.partner),
                    p.measure.crossing_edges(),
                    p.tol,
                    p.measure.deepest_edge(),
                    p.measure.a_in_b.max_depth.max(p.measure.b_in_a.max_depth)
                )
            })
            .collect();
        let mut deepest: Vec<&crate::independent::PairRecord> =
            e.pairs.iter().filter(|p| p.touches()).collect();
        deepest.sort_by(|a, b| b.measure.depth().total_cmp(&a.measure.depth()));
        let _ = writeln!(t, "  {}:", s.run.label);
        if !e.tunnelled.is_empty() {
            let names: Vec<String> =
                e.tunnelled.iter().map(|&i| crate::independent::body_name(&r.scene, i)).collect();
            let _ = writeln!(t, "    tunnelled: {}", names.join(", "));
        }
        for line in &failing {
            let _ = writeln!(t, "    crossing: {line}");
        }
        for p in deepest.iter().take(3) {
            let _ = writeln!(
                t,
                "    deep: {} / {}: {:.4} m ({:.2} % of {:.3} m), {} vertices inside",
                crate::independent::body_name(&r.scene, p.body),
                crate::independent::partner_name(&r.scene, p.partner),
                p.measure.depth(),
                100.0 * p.relative_depth(),
                p.smaller_diagonal,
                p.measure.vertices_inside()
            );
        }
    }
    let _ = writeln!(
        t,
        "
  scene 3 targets (not met is reported, not a failure):"
    );
    for (what, ok, measured) in everyday_targets(r) {
        let _ = writeln!(t, "    [{}] {what}: {measured}", verdict(ok));
    }
}

/// `MET`, `NOT MET` or `n/a`, padded.
pub fn verdict(ok: Option<bool>) -> &'static str {
    match ok {
        Some(true) => "MET    ",
        Some(false) => "NOT MET",
        None => "n/a    ",
    }
}

/// Scene 3's targets for each rtcd set-up: 0 tunnelled, 0 crossing edges at rest, max penetration
/// at most Rapier trimesh's, narrow phase (median ms a step over the run) at least 10x faster than
/// Rapier trimesh's.
pub fn everyday_targets(r: &SceneResult) -> Vec<(String, Option<bool>, String)> {
    let mut out = Vec::new();
    let scale = if r.scene.quick { " (quick scale)" } else { "" };
    let all = 0..r.scene.steps;
    let tm = sim(r, "Rapier trimesh");
    let tm_end = tm.and_then(|s| s.end.as_ref());
    for s in r.sims.iter().filter(|s| s.run.label.starts_with("rtcd")) {
        let Some(e) = &s.end else { continue };
        let label = &s.run.label;
        let names: Vec<String> =
            e.tunnelled.iter().map(|&i| crate::independent::body_name(&r.scene, i)).collect();
        out.push((
            format!("scene 3, {label}: 0 tunnelled{scale}"),
            Some(e.tunnelled.is_empty()),
            format!(
                "{} of {}{}",
                e.tunnelled.len(),
                e.bodies,
                if names.is_empty() { String::new() } else { format!(" ({})", names.join(", ")) }
            ),
        ));
        out.push((
            format!("scene 3, {label}: 0 crossing edges at rest{scale}"),
            Some(e.crossing_edges() == 0),
            format!(
                "{} edges in {} pairs ({} more within the tolerance){}",
                e.crossing_edges(),
                e.crossing_pairs(),
                e.shallow_edges(),
                tm_end.map_or(String::new(), |t| format!("; Rapier trimesh {}", t.crossing_edges()))
            ),
        ));
        out.push((
            format!("scene 3, {label}: max penetration at most Rapier trimesh's{scale}"),
            tm_end.map(|t| e.max_depth() <= t.max_depth()),
            match tm_end {
                Some(t) => format!(
                    "{:.4} vs {:.4} m ({:.2} vs {:.2} % of the smaller body)",
                    e.max_depth(),
                    t.max_depth(),
                    100.0 * e.max_relative_depth(),
                    100.0 * t.max_relative_depth()
                ),
                None => format!("{:.4} m; Rapier trimesh not simulated", e.max_depth()),
            },
        ));
        let (a, b) = (s.median_narrow_ms(&all), tm.and_then(|t| t.median_narrow_ms(&all)));
        let ratio = match (a, b) {
            (Some(a), Some(b)) if a > 0.0 => Some(b / a),
            _ => None,
        };
        out.push((
            format!(
                "scene 3, {label}: narrow phase ≥ 10x faster than Rapier trimesh (median ms a step){scale}"
            ),
            ratio.map(|x| x >= 10.0),
            format!("{}x ({} vs {} ms/step)", f(ratio, 1), f(a, 3), f(b, 3)),
        ));
    }
    out
}

/// How the host-cost targets name their scene: `scene 1`, `scene 2 (quick scale, steps 0-60)`.
fn host_cost_label(r: &SceneResult) -> String {
    let mut how = Vec::new();
    if r.scene.quick {
        how.push("quick scale".to_string());
    }
    if let Some(h) = &r.host_cost
        && h.range.end < r.scene.steps
    {
        how.push(format!("steps {}-{}", h.range.start, h.range.end));
    }
    let how = if how.is_empty() { String::new() } else { format!(" ({})", how.join(", ")) };
    format!("scene {}{how}", r.scene.id.number())
}

/// The label of the `recycle` comparison: rtcd following Rapier's contact recycling, the plugin's
/// default (`RtcdSettings::contact_recycling`).
pub const RECYCLE_LABEL: &str = "rtcd, following recycling (default)";
/// The label of the main simulation: rtcd with Rapier's contact recycling off (every pair traced
/// every step; the replays trace its poses).
pub const MAIN_LABEL: &str = "rtcd, recycling off";

/// The project's performance targets (the speedups and time budgets in `docs/benchmarks.md`),
/// checked on the results.
pub fn targets(results: &[SceneResult]) -> Vec<(String, Option<bool>, String)> {
    let mut out = Vec::new();
    let s1 = results.iter().find(|r| r.scene.id.number() == 1);
    let s2 = results.iter().find(|r| r.scene.id.number() == 2);
    let scale = |r: &SceneResult| if r.scene.quick { " (quick scale)" } else { "" };
    if let Some(r) = s1 {
        let sp = speedups(r);
        for (tracer, goal) in [(TracerKind::Bvh, 25.0), (TracerKind::BruteForce, 35.0)] {
            let c: Vec<String> = sp
                .iter()
                .filter(|s| s.tracer == tracer)
                .filter_map(|s| {
                    let x = s.per_window.iter().find(|w| w.0 == "C")?.3?;
                    Some(format!("{:.1}x {}", x, if s.prediction { "with prediction" } else { "without" }))
                })
                .collect();
            let best = sp
                .iter()
                .filter(|s| s.tracer == tracer)
                .filter_map(|s| s.per_window.iter().find(|w| w.0 == "C")?.3)
                .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))));
            out.push((
                format!(
                    "resting-phase iterative speedup ≥ {goal}x, {}{}",
                    if tracer == TracerKind::Bvh { "BVH" } else { "brute force" },
                    scale(r)
                ),
                best.map(|b| b >= goal),
                if c.is_empty() { "not measured".into() } else { c.join(", ") },
            ));
        }
        // Both rtcd set-ups, each against Rapier's trimesh (which has Rapier's contact recycling on):
        // the plugin's default first.
        let ours = [
            (sim(r, RECYCLE_LABEL), " (the plugin's default, following Rapier's contact recycling)"),
            (r.sims.first(), ", Rapier's contact recycling off"),
        ];
        for (ours, how) in ours {
            let (Some(ours), Some(tm)) = (ours, sim(r, "Rapier trimesh")) else { continue };
            let all = 0..r.scene.steps;
            let (a, b) = (ours.narrow_ms(&all).unwrap_or(0.0), tm.narrow_ms(&all).unwrap_or(0.0));
            let ratio = if a > 0.0 { b / a } else { 0.0 };
            let ok = ratio >= 10.0 && ours.mean_depth() < tm.mean_depth() && ours.tunnelled() == 0;
            out.push((
                format!(
                    "rtcd CPU narrow phase{how} ≥ 10x faster than Rapier trimesh on scene 1, less penetration, 0 tunnelled{}",
                    scale(r)
                ),
                Some(ok),
                format!(
                    "{ratio:.1}x ({a:.2} vs {b:.2} ms/step); penetration {:.3} vs {:.3} m per step (measured by \
                     rtcd's own standard trace of every simulation: scene 3's end state has the independent \
                     measure); tunnelled {} vs {}",
                    ours.mean_depth(),
                    tm.mean_depth(),
                    ours.tunnelled(),
                    tm.tunnelled()
                ),
            ));
        }
    }
    if let Some(r) = results.iter().find(|r| r.scene.id.number() == 3) {
        out.extend(everyday_targets(r));
    }
    for r in results {
        if let Some(h) = &r.host_cost {
            out.extend(h.targets(&host_cost_label(r)));
        }
    }
    if let Some(r) = s2
        && let Some(w) = r.window("peak")
    {
        let key = Variant::new(TracerKind::Bvh, true, true).key();
        let replayed = r.replay(&key).and_then(|row| row.mean_ms(w));
        // The plugin's default set-up when simulated, else the main one (recycling off).
        let off = r.sims.first().and_then(|s| s.narrow_ms(w));
        let (simulated, how) = match sim(r, RECYCLE_LABEL).and_then(|s| s.narrow_ms(w)) {
            Some(v) => (Some(v), "following recycling (default)"),
            None => (off, "recycling off"),
        };
        let best = r
            .replays
            .iter()
            .filter_map(|row| Some((row.key.clone(), row.mean_ms(w)?)))
            .min_by(|a, b| a.1.total_cmp(&b.1));
        let bodies = r.sims.first().and_then(|s| s.run.steps.get(w.start)).map_or(0, |s| s.bodies);
        let value = simulated.or(replayed);
        out.push((
            format!("scene 2 at its peak ≤ 16.7 ms narrow phase per step, CPU backend{}", scale(r)),
            value.map(|v| v <= 16.7),
            format!(
                "{bodies}-{} bodies: simulated batch+dispatch {} ms ({how}; recycling off {} ms), replayed {key} {} ms{}",
                r.scene.bodies(),
                f(simulated, 2),
                f(off, 2),
                f(replayed, 2),
                best.map_or(String::new(), |(k, v)| format!(", fastest replayed variant {k} {v:.2} ms"))
            ),
        ));
    }
    out
}

fn replay_json(r: &SceneResult, row: &ReplayRow) -> Value {
    let windows: serde_json::Map<String, Value> =
        r.windows.iter().map(|(k, w)| (k.clone(), json!(row.mean_ms(w)))).collect();
    let sum = |g: fn(&rtcd::StepMetrics) -> u64| row.steps.iter().map(|s| g(&s.metrics)).sum::<u64>();
    json!({
        "key": row.key,
        "backend": row.backend,
        "how": "replayed",
        "stride": row.stride,
        "sampling": row.sampling,
        "steps_run": row.steps.len(),
        "step_range": [row.range.start, row.range.end],
        "mean_ms": windows,
        "max_ms": row.max_ms(),
        "mean_pairs": mean(row.steps.iter().map(|s| s.metrics.pairs as f64)),
        "standard_rays": sum(|m| m.standard_rays),
        "iterative_rays": sum(|m| m.iterative_rays),
        "predictive_rays": sum(|m| m.predictive_rays),
        "contact_rays": sum(|m| m.contact_rays),
        "edge_rays": sum(|m| m.edge_rays),
        "motion_rays": sum(|m| m.motion_rays),
        "motion_contacts": sum(|m| m.motion_contacts),
        "cumulative_ray_length": row.steps.iter().map(|s| s.metrics.cumulative_ray_length).sum::<f64>(),
        "mean_gpu_kernel_ms": mean(row.steps.iter().filter_map(|s| s.gpu_ms)),
        "wall_s": row.wall_s,
    })
}

/// Scene 3's independent measure of a simulation's end: totals, and every pair that
/// interpenetrates (a vertex inside, or an edge through however shallow).
fn end_json(r: &SceneResult, e: &crate::independent::EndState) -> Value {
    let (share, allowed) = e.rule_counts();
    let pairs: Vec<Value> = e
        .pairs
        .iter()
        .filter(|p| p.touches())
        .map(|p| {
            let m = &p.measure;
            json!({
                "body": crate::independent::body_name(&r.scene, p.body),
                "partner": crate::independent::partner_name(&r.scene, p.partner),
                "depth_m": m.depth(),
                "relative_depth": p.relative_depth(),
                "vertices_inside": m.vertices_inside(),
                "crossing_edges": m.crossing_edges(),
                "shallow_edges": m.shallow_edges(),
                "deepest_edge_m": m.deepest_edge(),
                "tolerance_m": p.tol,
                "tolerance_rule": match p.rule {
                    crate::independent::TolRule::Share => "1 % of the smaller diagonal",
                    crate::independent::TolRule::AllowedError => "Rapier's allowed linear error",
                },
            })
        })
        .collect();
    json!({
        "bodies": e.bodies,
        "pairs_measured": e.pairs.len(),
        "max_penetration_m": e.max_depth(),
        "max_relative_penetration": e.max_relative_depth(),
        "sum_penetration_m": e.sum_depth(),
        "vertices_inside": e.vertices_inside(),
        "crossing_edges": e.crossing_edges(),
        "crossing_pairs": e.crossing_pairs(),
        "shallow_edges": e.shallow_edges(),
        "tolerance": {
            "share_of_smaller_diagonal": crate::independent::TOL_SHARE,
            "allowed_linear_error_m": e.allowed_linear_error,
            "pairs_by_share": share,
            "pairs_by_allowed_error": allowed,
        },
        "all_finite": e.finite(),
        "tunnelled": e.tunnelled.len(),
        "tunnelled_bodies": e.tunnelled.iter().map(|&i| crate::independent::body_name(&r.scene, i)).collect::<Vec<_>>(),
        "interpenetrating_pairs": pairs,
    })
}

/// One scene as JSON.
pub fn scene_json(r: &SceneResult) -> Value {
    let n = r.scene.steps;
    let sims: Vec<Value> = r
        .sims
        .iter()
        .map(|s| {
            let windows: serde_json::Map<String, Value> =
                r.windows.iter().map(|(k, w)| (k.clone(), json!(s.narrow_ms(w)))).collect();
            let medians: serde_json::Map<String, Value> =
                r.windows.iter().map(|(k, w)| (k.clone(), json!(s.median_narrow_ms(w)))).collect();
            json!({
                "setup": s.run.label,
                "how": "simulated",
                "setup_ms": s.run.setup_time.as_secs_f64() * 1e3,
                "setup_notes": s.run.setup_notes,
                "narrow_phase_ms": windows,
                "narrow_phase_median_ms": medians,
                "end_state": s.end.as_ref().map(|e| end_json(r, e)),
                "step_ms": s.step_ms(&(0..n)),
                "penetration_mean_m": s.mean_depth(),
                "penetration_cumulative_m": s.cumulative_depth(),
                "cumulative_ray_length_m": s.cumulative_ray_length(),
                "deepest_vertex_m": s.max_depth(),
                "ground_penetration_m": s.ground_penetration(),
                "tunnelled": s.tunnelled(),
                "sleeping_at_end": s.run.steps.last().map_or(0, |x| x.sleeping),
                "measure_stride": s.measure_stride,
                "wall_s": s.run.wall.as_secs_f64(),
            })
        })
        .collect();
    let speedups: Vec<Value> = speedups(r)
        .iter()
        .map(|s| {
            json!({
                "tracer": if s.tracer == TracerKind::Bvh { "bvh" } else { "brute" },
                "prediction": s.prediction,
                "windows": s.per_window.iter().map(|(k, a, b, x)| json!({"window": k, "standard_ms": a, "iterative_ms": b, "speedup": x, "paper": paper_speedup(r.scene.id.number(), s.tracer, k)})).collect::<Vec<_>>(),
            })
        })
        .collect();
    let errors: Vec<Value> = error_summaries(r)
        .iter()
        .map(|e| {
            json!({
                "prediction": e.prediction,
                "erroneous_rays_pct": e.rays_pct,
                "worst_step_erroneous_rays_pct": e.worst_step_rays_pct,
                "erroneous_rays": e.erroneous_rays,
                "compared_rays": e.compared_rays,
                "late_contacts": e.late_contacts,
                "wrong_pairs_pct": e.pairs_pct,
                "worst_step_wrong_pairs_pct": e.worst_step_pairs_pct,
            })
        })
        .collect();
    json!({
        "scene": r.scene.id.number(),
        "name": r.scene.name,
        "quick": r.scene.quick,
        "bodies": r.scene.bodies(),
        "triangles": r.scene.triangles(),
        "steps": n,
        "wall_s": r.wall_s,
        "windows": r.windows.iter().map(|(k, w)| json!({"name": k, "start": w.start, "end": w.end})).collect::<Vec<_>>(),
        "params": {
            "displacement_threshold": r.params.displacement_threshold,
            "max_it": r.params.max_it,
            "distance_extension": r.params.distance_extension,
            "culling_dist": r.params.culling_dist,
        },
        "replayed": r.replays.iter().chain(&r.gpu).map(|row| replay_json(r, row)).collect::<Vec<_>>(),
        "gpu_note": r.gpu_note,
        "gpu_host_cost": r.host_cost.as_ref().map(|h| h.json(&host_cost_label(r))),
        "speedups": speedups,
        "erroneous_rays": errors,
        "simulated": sims,
    })
}

/// The whole run as one JSON object.
pub fn run_json(info: &RunInfo, results: &[SceneResult], wall_s: f64, files: &[String]) -> Value {
    json!({
        "machine": {"cpu": info.cpu, "threads": info.threads, "gpu": info.gpu, "gpu_software": info.gpu_software},
        "date": info.date,
        "mode": info.mode,
        "args": info.args,
        "wall_s": wall_s,
        "scenes": results.iter().map(scene_json).collect::<Vec<_>>(),
        "targets": targets(results).iter().map(|(k, ok, v)| json!({"target": k, "met": ok, "measured": v})).collect::<Vec<_>>(),
        "files": files,
    })
}
