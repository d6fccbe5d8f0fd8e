//! Per-kernel agreement with the CPU backend (`rtcd`) on seeded random scenes: 60 pairs of concave
//! meshes (~900 triangles each) at random poses, 100 ticks of small random motion.
//!
//! Tolerances: a ray agrees when both backends give it the same outcome (contact or prediction) on
//! the same triangle (≥ 99.9 % of rays); the re-projected depth of a contact found by both matches
//! within 1e-4 relative, |Δdepth| ≤ 1e-4 · max(depth, 0.01), i.e. at most 1 µm on contacts shallower
//! than 1 cm (f32 positions of half a metre carry ~6e-8 m of rounding per operation, and the GPU may
//! fuse multiply-adds); contact rays per pair match within ±1 % (at least ±1 ray) on every pair and
//! tick. The ray parameter t itself is printed: on grazing rays it amplifies rounding by 1/cos.

mod common;

use rtcd::{NarrowPhase, PairInput, PairKey, RtcdParams, StepOptions, TracerKind, narrow_phase::RayOutcome};
use rtcd_wgpu::GpuNarrowPhase;

#[derive(Default, Debug)]
struct Agreement {
    rays: u64,
    agree: u64,
    worst_rel_t: f64,
    worst_rel_depth: f64,
    pair_ticks: u64,
    count_mismatch: u64,
    contacts: u64,
    iterative_ticks: u64,
}

fn compare(tracer: TracerKind, force_standard: bool, seed: u64) -> Agreement {
    let d = common::device();
    let scene = common::Scene::random(60, seed);
    let refs: Vec<&rtcd::RtcdMesh> = scene.meshes.iter().collect();
    let params = RtcdParams { tracer, ..RtcdParams::from_meshes(&refs) };
    let mut cpu = NarrowPhase::new(params).unwrap();
    let mut gpu = GpuNarrowPhase::new(&d.device, &d.queue, params).unwrap();
    let opts = StepOptions { record_rays: true, keep_contacts: true, force_standard, ..Default::default() };
    let mut a = Agreement::default();
    for tick in 0..100 {
        let pairs: Vec<PairInput> = scene
            .pairs
            .iter()
            .enumerate()
            .map(|(k, &(m1, m2, _))| {
                PairInput::new(
                    PairKey::new(2 * k as u64, 2 * k as u64 + 1),
                    &scene.meshes[m1],
                    &scene.meshes[m2],
                    scene.pose_at(k, tick, seed),
                )
            })
            .collect();
        let c = cpu.step(&pairs, &opts);
        let g = gpu.step(&pairs, &opts).unwrap();
        a.iterative_ticks += c.metrics.iterative_pairs as u64;
        for (cp, gp) in c.pairs.iter().zip(&g.pairs) {
            assert_eq!(cp.mode, gp.mode, "tick {tick}: the tracer decision is the host's, it must match");
            let (cr, gr) = (common::kept_rays(&cp.rays), common::kept_rays(&gp.rays));
            for k in common::union_keys(&cr, &gr) {
                a.rays += 1;
                if let (Some(x), Some(y)) = (cr.get(k), gr.get(k))
                    && x.0 == y.0
                    && x.1 == y.1
                {
                    a.agree += 1;
                    let rel = (x.2 - y.2).abs() as f64 / (x.2.abs().max(0.01)) as f64;
                    if rel > a.worst_rel_t && std::env::var("RTCD_DEBUG").is_ok() {
                        eprintln!("worst so far: tick {tick} key {k:?} cpu {x:?} gpu {y:?}");
                    }
                    a.worst_rel_t = a.worst_rel_t.max(rel);
                }
            }
            // Re-projected depths of the contacts both backends found on the same features.
            a.worst_rel_depth =
                a.worst_rel_depth.max(common::worst_relative_depth(&cp.contacts, &gp.contacts));
            let count = |rays: &[rtcd::narrow_phase::RayDebug]| {
                rays.iter().filter(|r| r.outcome == RayOutcome::Contact).count() as i64
            };
            let (nc, ng) = (count(&cp.rays), count(&gp.rays));
            a.contacts += nc as u64;
            a.pair_ticks += 1;
            if (nc - ng).abs() > (nc / 100).max(1) {
                a.count_mismatch += 1;
            }
        }
    }
    a
}

fn check(name: &str, tracer: TracerKind, force_standard: bool) -> Agreement {
    let a = compare(tracer, force_standard, 42);
    let share = a.agree as f64 / a.rays.max(1) as f64;
    println!(
        "{name}: {} rays compared, {:.4} % agree, worst relative Δdepth {:.2e} (Δt along the ray {:.2e}), {} contact rays, {} of {} pair-ticks off by more than ±1 %, {} iterative pair-ticks",
        a.rays,
        100.0 * share,
        a.worst_rel_depth,
        a.worst_rel_t,
        a.contacts,
        a.count_mismatch,
        a.pair_ticks,
        a.iterative_ticks
    );
    assert!(a.contacts > 5_000, "{name}: the scene must be in contact ({} contact rays)", a.contacts);
    assert!(share >= 0.999, "{name}: {share}");
    assert!(a.worst_rel_depth <= 1e-4, "{name}: worst relative Δdepth {}", a.worst_rel_depth);
    assert_eq!(a.count_mismatch, 0, "{name}");
    a
}

#[test]
fn standard_brute_force_kernel_agrees() {
    check("trace_standard (brute force)", TracerKind::BruteForce, true);
}

#[test]
fn standard_bvh_kernel_agrees() {
    check("trace_standard (BVH)", TracerKind::Bvh, true);
}

#[test]
fn iterative_walk_kernel_agrees() {
    // The same run agrees and is mostly iterative.
    let a = check("walk_iterative (+ BVH standard steps)", TracerKind::Bvh, false);
    assert!(a.iterative_ticks > 3_000, "most pair-ticks must be iterative: {}", a.iterative_ticks);
}
