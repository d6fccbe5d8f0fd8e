//! GPU vs CPU backend on an avalanche-like pile (IRTCD 2013 §4.1): 256 concave meshes of ~900
//! triangles heaped with random orientations, ≥ 2,000 pairs from an AABB broad phase, trembling a
//! little every step. Per-step narrow-phase time of each backend (standard and iterative tracing,
//! brute force and BVH), printed with the adapter's name. Timed, never asserted.
//!
//! `cargo bench -p rtcd_wgpu --bench gpu_vs_cpu [-- --steps N]`

use std::time::{Duration, Instant};

use glam::{Quat, Vec3};
use rtcd::{
    NarrowPhase, NarrowPhaseBackend, PairInput, PairKey, Pose, RtcdMesh, RtcdParams, StepOptions, TracerKind,
};
use rtcd_wgpu::{DeviceOptions, GpuNarrowPhase, create_device};

fn xorshift(s: &mut u64) -> f32 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    (*s >> 40) as f32 / (1u64 << 24) as f32
}

fn main() {
    let steps: usize =
        std::env::args().skip_while(|a| a != "--steps").nth(1).and_then(|s| s.parse().ok()).unwrap_or(20);
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../assets/meshes");
    let meshes: Vec<RtcdMesh> = ["blob_900", "torus_900", "bent_tube_896"]
        .iter()
        .map(|n| RtcdMesh::from_obj(dir.join(format!("{n}.obj"))).expect("assets/meshes is committed"))
        .collect();
    let mut seed = 0xA5A5_u64;
    let spacing = 0.62;
    let bodies: Vec<(usize, Pose)> = (0..256)
        .map(|k| {
            let (x, z, y) = ((k % 8) as f32, ((k / 8) % 8) as f32, (k / 64) as f32);
            let q = Quat::from_euler(
                glam::EulerRot::XYZ,
                xorshift(&mut seed) * std::f32::consts::TAU,
                xorshift(&mut seed) * std::f32::consts::TAU,
                xorshift(&mut seed) * std::f32::consts::TAU,
            );
            (k % meshes.len(), Pose::new(Vec3::new((x - 3.5) * spacing, y * spacing, (z - 3.5) * spacing), q))
        })
        .collect();
    let phase: Vec<f32> = bodies.iter().map(|_| xorshift(&mut seed) * std::f32::consts::TAU).collect();
    let pose_at = |b: usize, step: usize| {
        let t = step as f32 * 0.2 + phase[b];
        let (m, p) = bodies[b];
        let _ = m;
        Pose::new(
            p.translation + Vec3::new(t.sin(), t.cos(), (t * 0.7).sin()) * 3e-4,
            p.rotation * Quat::from_rotation_y(2e-4 * t.sin()),
        )
    };
    let mut pair_ids = Vec::new();
    for i in 0..bodies.len() {
        for j in i + 1..bodies.len() {
            let a = meshes[bodies[i].0].aabb().transformed(&bodies[i].1).extended(0.002);
            let b = meshes[bodies[j].0].aabb().transformed(&bodies[j].1).extended(0.002);
            if !a.intersection(b).is_empty() {
                pair_ids.push((i, j));
            }
        }
    }
    let device = create_device(&DeviceOptions::default());
    let refs: Vec<&RtcdMesh> = meshes.iter().collect();
    let base = RtcdParams::from_meshes(&refs);
    println!(
        "avalanche-like pile: {} concave meshes (~900 triangles), {} pairs, {steps} timed steps per variant",
        bodies.len(),
        pair_ids.len()
    );
    let adapter = match &device {
        Ok(d) => format!("{} ({:?}, {:?})", d.info.name, d.info.device_type, d.info.backend),
        Err(e) => format!("none: {e}"),
    };
    println!("GPU adapter: {adapter}; CPU: {} rayon threads", rayon::current_num_threads());

    let run =
        |backend: &mut dyn NarrowPhaseBackend, iterative_phase: bool| -> (Duration, Option<Duration>, u64) {
            let mut total = Duration::ZERO;
            let mut gpu_total = Duration::ZERO;
            let mut has_gpu = false;
            let mut contacts = 0;
            // Two untimed warm-up steps: the first step of every pair is standard.
            for step in 0..steps + 2 {
                let poses: Vec<Pose> = (0..bodies.len()).map(|b| pose_at(b, step)).collect();
                let pairs: Vec<PairInput> = pair_ids
                    .iter()
                    .map(|&(i, j)| {
                        PairInput::from_world(
                            PairKey::new(i as u64, j as u64),
                            &meshes[bodies[i].0],
                            poses[i],
                            &meshes[bodies[j].0],
                            poses[j],
                        )
                    })
                    .collect();
                let opts = StepOptions { force_standard: !iterative_phase, ..Default::default() };
                let start = Instant::now();
                let out = backend.step(&pairs, &opts).expect("step");
                if step >= 2 {
                    total += start.elapsed();
                    if let Some(g) = out.metrics.gpu_time {
                        gpu_total += g;
                        has_gpu = true;
                    }
                }
                contacts = out.metrics.contact_rays;
            }
            (total / steps as u32, has_gpu.then(|| gpu_total / steps as u32), contacts)
        };
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let mut table = Vec::new();
    for tracer in [TracerKind::BruteForce, TracerKind::Bvh] {
        for iterative in [false, true] {
            let params = RtcdParams { tracer, ..base };
            let label = format!("{tracer:?} {}", if iterative { "iterative" } else { "standard" });
            let mut cpu = NarrowPhase::new(params).unwrap();
            let (c, _, cn) = run(&mut cpu, iterative);
            let g = match &device {
                Ok(d) => {
                    let mut gpu = GpuNarrowPhase::new(&d.device, &d.queue, params).expect("GPU backend");
                    let (g, gk, gn) = run(&mut gpu, iterative);
                    assert_eq!(cn, gn, "both backends must find the same contacts");
                    Some((g, gk))
                }
                Err(_) => None,
            };
            match g {
                Some((g, gk)) => println!(
                    "{label:<22} CPU {:>9.2} ms/step   GPU {:>9.2} ms/step (kernels {})   GPU/CPU speedup {:>6.2}x   contact rays {cn}",
                    ms(c),
                    ms(g),
                    gk.map_or("n/a".into(), |k| format!("{:.2} ms", ms(k))),
                    ms(c) / ms(g)
                ),
                None => println!("{label:<22} CPU {:>9.2} ms/step   GPU unavailable", ms(c)),
            }
            table.push((label, c, g.map(|x| x.0)));
        }
    }
    println!();
    for pair in table.chunks(2) {
        let (s, i) = (&pair[0], &pair[1]);
        let tracer = s.0.split(' ').next().unwrap();
        let gpu = match (s.2, i.2) {
            (Some(a), Some(b)) => format!("{:.1}x", ms(a) / ms(b)),
            _ => "n/a".into(),
        };
        println!("iterative vs standard, {tracer:<10}: CPU {:.1}x   GPU {gpu}", ms(s.1) / ms(i.1));
    }
}
