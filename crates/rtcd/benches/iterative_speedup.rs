//! Iterative vs standard tracing on a resting pile of concave meshes (IRTCD 2013 §4.3, phase C).
//!
//! 64 concave meshes of ~900 triangles (blob, torus, bent tube from `assets/meshes`) are stacked on a
//! 4 × 4 × 4 grid with random orientations, close enough that neighbours interpenetrate a little, on a
//! ground slab. In the resting phase every body trembles by less than a millimetre per step (what a
//! solver leaves of a pile at rest), so the displacement criterion keeps pairs iterative. Each variant
//! runs the same 150 steps; the first 30 are warm-up (the first step of a pair is always standard).
//!
//! `cargo bench -p rtcd --bench iterative_speedup` prints per-step times and the speedups.

use std::time::{Duration, Instant};

use glam::{Quat, Vec3};
use rtcd::{NarrowPhase, PairInput, PairKey, Pose, RtcdMesh, RtcdParams, StepOptions, TracerKind, shapes};

const WARMUP: usize = 30;
const STEPS: usize = 150;

struct Body {
    mesh: usize,
    pose: Pose,
}

fn xorshift(s: &mut u64) -> f32 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    (*s >> 40) as f32 / (1u64 << 24) as f32
}

fn random_rotation(s: &mut u64) -> Quat {
    let (u1, u2, u3) = (xorshift(s), xorshift(s), xorshift(s));
    let (a, b) = (std::f32::consts::TAU * u2, std::f32::consts::TAU * u3);
    let (s1, s2) = ((1.0 - u1).sqrt(), u1.sqrt());
    Quat::from_xyzw(s1 * a.sin(), s1 * a.cos(), s2 * b.sin(), s2 * b.cos()).normalize()
}

fn main() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../assets/meshes");
    let load =
        |n: &str| RtcdMesh::from_obj(dir.join(format!("{n}.obj"))).expect("assets/meshes is committed");
    let (gv, gi) = shapes::subdivided_cuboid(Vec3::new(2.2, 0.5, 2.2), 12);
    let meshes = [
        load("blob_900"),
        load("torus_900"),
        load("bent_tube_896"),
        RtcdMesh::new("ground", &gv, &gi).unwrap(),
    ];
    let ground = meshes.len() - 1;
    let mut seed = 0x5EED_u64;
    let spacing = 0.78;
    let mut bodies = vec![Body { mesh: ground, pose: Pose::from_translation(Vec3::new(0.0, -0.5, 0.0)) }];
    for k in 0..64 {
        let (x, z, y) = ((k % 4) as f32, ((k / 4) % 4) as f32, (k / 16) as f32);
        let p = Vec3::new((x - 1.5) * spacing, 0.36 + y * spacing * 0.9, (z - 1.5) * spacing);
        bodies.push(Body { mesh: k % 3, pose: Pose::new(p, random_rotation(&mut seed)) });
    }
    // Trembling: each body oscillates with its own phase, 0.5 mm and 0.05° amplitude.
    let phases: Vec<(Vec3, f32)> = bodies
        .iter()
        .map(|_| {
            (
                Vec3::new(xorshift(&mut seed), xorshift(&mut seed), xorshift(&mut seed))
                    * std::f32::consts::TAU,
                xorshift(&mut seed) * std::f32::consts::TAU,
            )
        })
        .collect();
    let pose_at = |b: usize, step: usize| -> Pose {
        if b == 0 {
            return bodies[0].pose;
        }
        let t = step as f32 * 0.3;
        let (ph, pr) = phases[b];
        let d = Vec3::new((t + ph.x).sin(), (t + ph.y).sin(), (t + ph.z).sin()) * 5e-4;
        let r = Quat::from_rotation_y(0.05f32.to_radians() * (t + pr).sin());
        Pose::new(bodies[b].pose.translation + d, bodies[b].pose.rotation * r)
    };
    // Broad phase once: boxes extended by 2 mm (the trembling never changes the pair set).
    let mut pair_ids = Vec::new();
    for i in 0..bodies.len() {
        for j in i + 1..bodies.len() {
            let a = meshes[bodies[i].mesh].aabb().transformed(&bodies[i].pose).extended(0.002);
            let b = meshes[bodies[j].mesh].aabb().transformed(&bodies[j].pose).extended(0.002);
            if !a.intersection(b).is_empty() {
                pair_ids.push((i, j));
            }
        }
    }
    let refs: Vec<&RtcdMesh> = meshes.iter().take(3).collect();
    let base = RtcdParams::from_meshes(&refs);
    println!(
        "resting pile: {} bodies ({} concave meshes of 896-900 triangles + ground of {} triangles), {} pairs, {} rayon threads",
        bodies.len(),
        bodies.len() - 1,
        meshes[ground].triangles().len(),
        pair_ids.len(),
        rayon::current_num_threads()
    );
    println!(
        "params: displacement_threshold {:.4}, max_it {}, distance_extension {:.4}, culling_dist {:.4}",
        base.displacement_threshold, base.max_it, base.distance_extension, base.culling_dist
    );

    // An optional argument keeps only the variants whose label contains it (for profiling), e.g.
    // `cargo bench -p rtcd --bench iterative_speedup -- "Bvh iterative=true"`.
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with("--"));
    let mut rows = Vec::new();
    for tracer in [TracerKind::BruteForce, TracerKind::Bvh] {
        let mut per = Vec::new();
        for (iterative, prediction) in [(false, false), (true, false), (true, true)] {
            let label = format!("{tracer:?} iterative={iterative} prediction={prediction}");
            if filter.as_ref().is_some_and(|f| !label.contains(f.as_str())) {
                per.push(f64::NAN);
                continue;
            }
            let params = RtcdParams { tracer, iterative, prediction, ..base };
            let mut np = NarrowPhase::new(params).unwrap();
            let mut time = Duration::ZERO;
            let mut last = None;
            for step in 0..STEPS {
                let poses: Vec<Pose> = (0..bodies.len()).map(|b| pose_at(b, step)).collect();
                let pairs: Vec<PairInput> = pair_ids
                    .iter()
                    .map(|&(i, j)| {
                        PairInput::from_world(
                            PairKey::new(i as u64, j as u64),
                            &meshes[bodies[i].mesh],
                            poses[i],
                            &meshes[bodies[j].mesh],
                            poses[j],
                        )
                    })
                    .collect();
                let start = Instant::now();
                let out = np.step(&pairs, &StepOptions::default());
                if step >= WARMUP {
                    time += start.elapsed();
                }
                last = Some(out.metrics);
            }
            let per_step = time / (STEPS - WARMUP) as u32;
            let m = last.unwrap();
            println!(
                "{:<10} iterative={:<5} prediction={:<5} {:>9.3} ms/step  pairs in contact rays: {:>6}  standard rays {:>6}  iterative {:>6}  predictive {:>6}  hit rate {:.3}",
                format!("{tracer:?}"),
                iterative,
                prediction,
                per_step.as_secs_f64() * 1e3,
                m.contact_rays,
                m.standard_rays,
                m.iterative_rays,
                m.predictive_rays,
                m.iterative_hit_rate()
            );
            per.push(per_step.as_secs_f64());
        }
        rows.push((tracer, per));
    }
    println!();
    println!("resting-phase speedup, iterative vs standard (paper, scene 1 phase C: 19.3x brute, 6.9x BVH):");
    for (tracer, per) in rows {
        println!(
            "  {:<10} without prediction {:>7.1}x   with prediction {:>7.1}x",
            format!("{tracer:?}"),
            per[0] / per[1],
            per[0] / per[2]
        );
    }
}
