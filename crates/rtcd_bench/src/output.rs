//! Files of a run: per-step CSV of every replayed and simulated row, summary CSV, scene 3's pairs at
//! the end (the independent measure), and the SVG plots.

use std::{fmt::Write as _, fs, path::Path};

use rtcd::TracerKind;

use crate::{
    bench::SceneResult,
    plot::{Chart, Series, draw, smooth_segments},
    replay::Variant,
    report::{error_summaries, speedups},
    scene::DT,
};

fn t(step: usize) -> f64 {
    step as f64 * DT as f64
}

fn write(dir: &Path, name: &str, text: &str, files: &mut Vec<String>) -> Result<(), String> {
    let path = dir.join(name);
    fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    files.push(path.display().to_string());
    Ok(())
}

/// Writes the scene's CSV files and plots into `dir`; returns the paths written.
pub fn write_scene(dir: &Path, r: &SceneResult) -> Result<Vec<String>, String> {
    fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut files = Vec::new();
    let k = r.scene.id.number();
    let quick = if r.scene.quick { "_quick" } else { "" };
    let name = |what: &str, ext: &str| format!("scene{k}{quick}_{what}.{ext}");

    // Replayed rows, one line per step run.
    let mut csv = String::from(
        "variant,backend,how,step,time_s,bodies,ms,gpu_kernel_ms,pairs,standard_pairs,separated_pairs,iterative_pairs,standard_rays,iterative_rays,predictive_rays,iterative_hits,walk_steps,contact_rays,manifolds,cumulative_ray_length,cumulative_depth,max_depth,compared_rays,erroneous_rays,late_contacts,erroneous_pairs\n",
    );
    for row in r.replays.iter().chain(&r.gpu).chain(&r.errors) {
        for s in &row.steps {
            let m = &s.metrics;
            let e = m.errors.map_or(",,,".to_string(), |e| {
                format!("{},{},{},{}", e.compared_rays, e.erroneous_rays, e.late_contacts, e.erroneous_pairs)
            });
            let _ = writeln!(
                csv,
                "{},{},replayed,{},{:.4},{},{:.4},{},{},{},{},{},{},{},{},{},{},{},{},{:.6},{:.6},{:.6},{e}",
                row.key,
                row.backend.replace(',', ";"),
                s.step,
                t(s.step),
                s.bodies,
                s.ms,
                s.gpu_ms.map_or(String::new(), |g| format!("{g:.4}")),
                m.pairs,
                m.standard_pairs,
                m.separated_pairs,
                m.iterative_pairs,
                m.standard_rays,
                m.iterative_rays,
                m.predictive_rays,
                m.iterative_hits,
                m.walk_steps,
                m.contact_rays,
                m.manifolds,
                m.cumulative_ray_length,
                m.cumulative_depth,
                m.max_depth,
            );
        }
    }
    write(dir, &name("replay", "csv"), &csv, &mut files)?;
    if let Some(h) = &r.host_cost {
        write(dir, &name("gpu_host_cost", "csv"), &h.csv(), &mut files)?;
    }

    // Simulated rows, one line per step.
    let mut csv = String::from(
        "setup,how,step,time_s,bodies,narrow_ms,batch_ms,prepare_ms,backend_ms,step_ms,batch_pairs,held_pairs,cache_misses,dispatcher_calls,contact_pairs,manifolds,contact_points,sleeping,kinetic_energy,lowest_vertex,tunnelled,measured_depth,measured_ray_length,measured_max_depth,measured_contact_rays\n",
    );
    for s in &r.sims {
        let mut measured = s.measure.iter().peekable();
        for (i, st) in s.run.steps.iter().enumerate() {
            let m = match measured.peek() {
                Some(m) if m.step == i => {
                    let m = measured.next().unwrap();
                    format!("{:.6},{:.6},{:.6},{}", m.depth, m.ray_length, m.max_depth, m.contact_rays)
                }
                _ => ",,,".into(),
            };
            let _ = writeln!(
                csv,
                "{},simulated,{i},{:.4},{},{:.4},{:.4},{:.4},{:.4},{:.4},{},{},{},{},{},{},{},{},{:.6},{:.6},{},{m}",
                s.run.label.replace(',', ";"),
                t(i),
                st.bodies,
                st.narrow_ms,
                st.batch_ms,
                st.prepare_ms,
                st.backend_ms,
                st.step_ms,
                st.batch_pairs,
                st.held_pairs,
                st.cache_misses,
                st.dispatcher_calls,
                st.contact_pairs,
                st.manifolds,
                st.contact_points,
                st.sleeping,
                st.kinetic_energy,
                if st.lowest.is_finite() { st.lowest } else { f32::NAN },
                st.tunnelled,
            );
        }
    }
    write(dir, &name("sim", "csv"), &csv, &mut files)?;

    // Summary: one line per row and window.
    let mut csv = String::from("row,backend,how,window,mean_narrow_ms,mean_step_ms,sampling\n");
    for row in r.replays.iter().chain(&r.gpu) {
        for (w, range) in &r.windows {
            let _ = writeln!(
                csv,
                "{},{},replayed,{w},{},,{}",
                row.key,
                row.backend.replace(',', ";"),
                row.mean_ms(range).map_or(String::new(), |v| format!("{v:.4}")),
                row.sampling
            );
        }
    }
    for s in &r.sims {
        for (w, range) in &r.windows {
            let _ = writeln!(
                csv,
                "{},cpu,simulated,{w},{},{},every step",
                s.run.label.replace(',', ";"),
                s.narrow_ms(range).map_or(String::new(), |v| format!("{v:.4}")),
                s.step_ms(range).map_or(String::new(), |v| format!("{v:.4}")),
            );
        }
    }
    write(dir, &name("summary", "csv"), &csv, &mut files)?;

    // Scene 3: the independent measure of each simulation's end, every pair measured.
    if r.sims.iter().any(|s| s.end.is_some()) {
        let mut csv = String::from(
            "setup,body,partner,smaller_diagonal,tolerance,tolerance_rule,depth,relative_depth,vertices_inside,vertex_depth_sum,crossing_edges,shallow_edges,deepest_edge,tunnelled\n",
        );
        for s in &r.sims {
            let Some(e) = &s.end else { continue };
            for p in &e.pairs {
                let m = &p.measure;
                let _ = writeln!(
                    csv,
                    "{},{},{},{:.6},{:.6},{},{:.6},{:.6},{},{:.6},{},{},{:.6},{}",
                    s.run.label.replace(',', ";"),
                    crate::independent::body_name(&r.scene, p.body),
                    crate::independent::partner_name(&r.scene, p.partner),
                    p.smaller_diagonal,
                    p.tol,
                    match p.rule {
                        crate::independent::TolRule::Share => "share",
                        crate::independent::TolRule::AllowedError => "allowed_error",
                    },
                    m.depth(),
                    p.relative_depth(),
                    m.vertices_inside(),
                    m.a_in_b.sum_depth + m.b_in_a.sum_depth,
                    m.crossing_edges(),
                    m.shallow_edges(),
                    m.deepest_edge(),
                    e.tunnelled.contains(&p.body),
                );
            }
        }
        write(dir, &name("end_pairs", "csv"), &csv, &mut files)?;
    }

    // Plots.
    let markers: Vec<(f64, String)> = match &r.phases {
        Some(p) => p.named().iter().map(|(k, w)| (t(w.start), k.to_string())).collect(),
        None => r.window("peak").map(|w| vec![(t(w.start), "peak".to_string())]).unwrap_or_default(),
    };
    // One series per simulated set-up, of a per-step figure.
    let per_sim = |f: fn(&crate::sim::SimStep) -> f64| -> Vec<Series> {
        r.sims
            .iter()
            .map(|s| {
                Series::new(
                    s.run.label.clone(),
                    s.run.steps.iter().enumerate().map(|(i, x)| (t(i), f(x))).collect(),
                )
            })
            .collect()
    };
    let scene_title = if r.scene.quick { format!("scene {k} (quick)") } else { format!("scene {k}") };
    let mut plot = |what: &str, chart: Chart| -> Result<(), String> {
        let path = dir.join(name(what, "svg"));
        draw(&path, &chart)?;
        files.push(path.display().to_string());
        Ok(())
    };

    if !r.replays.is_empty() {
        let series = r
            .replays
            .iter()
            .chain(&r.gpu)
            .map(|row| {
                let label = if row.backend == "cpu" { row.key.clone() } else { format!("{} (GPU)", row.key) };
                let label = if row.windowed { format!("{label} (windows)") } else { label };
                let mut pts = Vec::with_capacity(row.steps.len());
                for (i, s) in row.steps.iter().enumerate() {
                    // Break the line between windows and between strided samples far apart.
                    if i > 0 && s.step > row.steps[i - 1].step + row.stride {
                        pts.push((t(s.step), f64::NAN));
                    }
                    pts.push((t(s.step), s.ms));
                }
                Series::new(label, pts)
            })
            .collect();
        plot(
            "narrow_phase_time",
            Chart {
                title: &format!("{scene_title}: narrow-phase time per step, replayed (CPU, rayon)"),
                x_label: "simulated time (s)",
                y_label: "ms per step (log)",
                log_y: true,
                markers: markers.clone(),
                series,
            },
        )?;
    }

    let sp = speedups(r);
    if !sp.is_empty() {
        let mut series = Vec::new();
        for s in &sp {
            let sk = Variant::new(s.tracer, false, s.prediction).key();
            let ik = Variant::new(s.tracer, true, s.prediction).key();
            let (Some(a), Some(b)) = (r.replay(&sk), r.replay(&ik)) else { continue };
            let mut pts: Vec<(f64, f64)> = Vec::new();
            let mut last = None;
            for x in &a.steps {
                let Some(y) = b.steps.iter().find(|y| y.step == x.step) else { continue };
                if last.is_some_and(|l| x.step > l + a.stride.max(b.stride)) {
                    pts.push((t(x.step), f64::NAN));
                }
                last = Some(x.step);
                pts.push((t(x.step), x.ms / y.ms.max(1e-6)));
            }
            let label = format!(
                "{}{}{}",
                if s.tracer == TracerKind::Bvh { "BVH" } else { "brute force" },
                if s.prediction { ", prediction" } else { ", no prediction" },
                s.per_window
                    .iter()
                    .filter(|w| w.0 != "all")
                    .map(|w| format!(" {} {}", w.0, w.3.map_or("-".into(), |x| format!("{x:.1}x"))))
                    .collect::<String>()
            );
            series.push(Series::new(label, smooth_segments(&pts, 9)));
        }
        plot(
            "speedup",
            Chart {
                title: &format!(
                    "{scene_title}: iterative vs standard speedup (moving average; per-phase means in the legend)"
                ),
                x_label: "simulated time (s)",
                y_label: "standard ms / iterative ms (log)",
                log_y: true,
                markers: markers.clone(),
                series,
            },
        )?;
    }

    if !r.errors.is_empty() {
        let es = error_summaries(r);
        let series = r
            .errors
            .iter()
            .zip(&es)
            .map(|(row, e)| {
                let pts = row
                    .steps
                    .iter()
                    .map(|s| (t(s.step), s.metrics.errors.map_or(0.0, |e| 100.0 * e.erroneous_share())))
                    .collect::<Vec<_>>();
                Series::new(
                    format!(
                        "iterative BVH, {} ({:.2} % over the run)",
                        if e.prediction { "prediction" } else { "no prediction" },
                        e.rays_pct
                    ),
                    pts,
                )
            })
            .collect();
        plot(
            "erroneous_rays",
            Chart {
                title: &format!("{scene_title}: erroneous rays vs a full standard trace (2014 Fig. 9/10)"),
                x_label: "simulated time (s)",
                y_label: "% of rays in contact in either",
                log_y: false,
                markers: markers.clone(),
                series,
            },
        )?;
    }

    if !r.sims.is_empty() {
        let cumulative = |s: &crate::bench::SimRow| {
            let mut acc = 0.0;
            s.measure
                .iter()
                .map(|m| {
                    acc += m.ray_length * s.measure_stride as f64;
                    (t(m.step), acc)
                })
                .collect::<Vec<_>>()
        };
        plot(
            "cumulative_ray_length",
            Chart {
                title: &format!(
                    "{scene_title}: cumulative ray length, standard trace of each simulation (2014 §5.2, Table 2)"
                ),
                x_label: "simulated time (s)",
                y_label: "cumulative ray length (m)",
                log_y: false,
                markers: markers.clone(),
                series: r.sims.iter().map(|s| Series::new(s.run.label.clone(), cumulative(s))).collect(),
            },
        )?;
        plot(
            "rapier_comparison",
            Chart {
                title: &format!("{scene_title}: narrow-phase time per step, each set-up simulated"),
                x_label: "simulated time (s)",
                y_label: "ms per step (log)",
                log_y: true,
                markers: markers.clone(),
                series: per_sim(|x| x.narrow_ms),
            },
        )?;
        plot(
            "whole_step",
            Chart {
                title: &format!("{scene_title}: whole physics step, each set-up simulated"),
                x_label: "simulated time (s)",
                y_label: "ms per step (log)",
                log_y: true,
                markers: markers.clone(),
                series: per_sim(|x| x.step_ms),
            },
        )?;
        plot(
            "penetration",
            Chart {
                title: &format!(
                    "{scene_title}: total penetration depth per step (sum over penetrating vertices)"
                ),
                x_label: "simulated time (s)",
                y_label: "m",
                log_y: false,
                markers: markers.clone(),
                series: r
                    .sims
                    .iter()
                    .map(|s| {
                        Series::new(
                            s.run.label.clone(),
                            s.measure.iter().map(|m| (t(m.step), m.depth)).collect(),
                        )
                    })
                    .collect(),
            },
        )?;
    }

    let default_key = Variant::new(TracerKind::Bvh, true, true).key();
    if let Some(row) = r.replay(&default_key) {
        let pts = |g: fn(&rtcd::StepMetrics) -> u64| {
            row.steps.iter().map(|s| (t(s.step), g(&s.metrics) as f64)).collect::<Vec<_>>()
        };
        plot(
            "rays_by_kind",
            Chart {
                title: &format!("{scene_title}: rays by kind, {default_key} (replayed)"),
                x_label: "simulated time (s)",
                y_label: "rays per step (log)",
                log_y: true,
                markers: markers.clone(),
                series: vec![
                    Series::new("standard", pts(|m| m.standard_rays)),
                    Series::new("iterative walks", pts(|m| m.iterative_rays)),
                    Series::new("predictive walks", pts(|m| m.predictive_rays)),
                    Series::new("in contact", pts(|m| m.contact_rays)),
                ],
            },
        )?;
        let mut series = vec![
            Series::new(
                "pairs in the narrow phase",
                row.steps.iter().map(|s| (t(s.step), s.metrics.pairs as f64)).collect(),
            ),
            Series::new(
                "pairs traced standard",
                row.steps.iter().map(|s| (t(s.step), s.metrics.standard_pairs as f64)).collect(),
            ),
        ];
        if let Some(s) = r.sims.first() {
            series.push(Series::new(
                "Rapier contact pairs (rtcd simulation)",
                s.run.steps.iter().enumerate().map(|(i, x)| (t(i), x.contact_pairs as f64)).collect(),
            ));
            series.push(Series::new(
                "bodies",
                s.run.steps.iter().enumerate().map(|(i, x)| (t(i), x.bodies as f64)).collect(),
            ));
        }
        plot(
            "pairs",
            Chart {
                title: &format!("{scene_title}: pairs per step"),
                x_label: "simulated time (s)",
                y_label: "count",
                log_y: false,
                markers: markers.clone(),
                series,
            },
        )?;
    }
    Ok(files)
}
