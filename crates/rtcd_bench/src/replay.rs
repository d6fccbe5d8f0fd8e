//! Replaying a recorded trajectory through a narrow-phase backend: every step's poses (recorded
//! right before the physics step, where the narrow phase sees them), paired by the same broad phase
//! as `rtcd_rapier`'s batch (boxes grown by half the prediction plus the distance extension; sort and
//! sweep), fed to [`NarrowPhaseBackend::step`] with the batch's options. Narrow-phase timing needs no
//! physics: one recorded simulation serves every variant, on exactly the same poses.
//!
//! Standard tracing keeps no state between steps (every step traces from scratch), so a standard
//! variant may be timed on every `stride`-th step only; iterative variants always run every step.

use std::{sync::Arc, time::Instant};

use rtcd::{
    BackendError, NarrowPhaseBackend, PairInput, PairKey, Pose, RtcdMesh, RtcdParams, StepMetrics,
    StepOptions, TracerKind,
};

use crate::scene::Scene;

/// Poses of one simulation, recorded before each step.
#[derive(Clone, Debug, Default)]
pub struct Trajectory {
    /// Mesh index of each body, in spawn order.
    pub mesh_of: Vec<usize>,
    /// Per step, the poses of the bodies present (a prefix of `mesh_of`).
    pub poses: Vec<Vec<Pose>>,
}

/// One narrow-phase configuration (IRTCD 2013 §4.2-4.3, 2014 §3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Variant {
    /// Standard tracer.
    pub tracer: TracerKind,
    /// Iterative walk below the displacement threshold.
    pub iterative: bool,
    /// Predictive rays.
    pub prediction: bool,
    /// Edge rays (Mochi 2024 §3.4; `RtcdParams::edge_rays`).
    pub edge_rays: bool,
    /// Motion rays (`RtcdParams::motion_rays`).
    pub motion_rays: bool,
}

impl Variant {
    /// The eight variants, standard before iterative, brute force before BVH, with edge and motion
    /// rays; then the default one (iterative BVH with prediction) without edge rays and without
    /// motion rays, which gives their costs.
    pub fn all() -> Vec<Variant> {
        let mut v = Vec::new();
        for tracer in [TracerKind::BruteForce, TracerKind::Bvh] {
            for iterative in [false, true] {
                for prediction in [false, true] {
                    v.push(Variant::new(tracer, iterative, prediction));
                }
            }
        }
        v.push(Variant { edge_rays: false, ..Variant::new(TracerKind::Bvh, true, true) });
        v.push(Variant { motion_rays: false, ..Variant::new(TracerKind::Bvh, true, true) });
        v
    }

    /// A variant with edge and motion rays.
    pub fn new(tracer: TracerKind, iterative: bool, prediction: bool) -> Variant {
        Variant { tracer, iterative, prediction, edge_rays: true, motion_rays: true }
    }

    /// `standard-brute`, `iterative-bvh`, ...
    pub fn base_key(&self) -> String {
        format!(
            "{}-{}",
            if self.iterative { "iterative" } else { "standard" },
            if self.tracer == TracerKind::Bvh { "bvh" } else { "brute" }
        )
    }

    /// `standard-brute/nopred`, `iterative-bvh/pred`, `iterative-bvh/pred/noedges`,
    /// `iterative-bvh/pred/nomotion`, ...: what `--variants` matches.
    pub fn key(&self) -> String {
        format!(
            "{}/{}{}{}",
            self.base_key(),
            if self.prediction { "pred" } else { "nopred" },
            if self.edge_rays { "" } else { "/noedges" },
            if self.motion_rays { "" } else { "/nomotion" }
        )
    }

    /// The parameters of this variant on top of `base`.
    pub fn params(&self, base: &RtcdParams) -> RtcdParams {
        RtcdParams {
            tracer: self.tracer,
            iterative: self.iterative,
            prediction: self.prediction,
            edge_rays: self.edge_rays,
            motion_rays: self.motion_rays,
            ..*base
        }
    }
}

/// One replayed step's figures.
#[derive(Clone, Debug, Default)]
pub struct ReplayStep {
    /// Step index in the scene.
    pub step: usize,
    /// Bodies present.
    pub bodies: usize,
    /// Wall time of the backend's step (ms).
    pub ms: f64,
    /// GPU kernel time, for GPU backends with timestamp queries (ms).
    pub gpu_ms: Option<f64>,
    /// The backend's figures.
    pub metrics: StepMetrics,
}

/// What is replayed, shared by every variant of a scene.
pub struct Frames<'a> {
    scene: &'a Scene,
    trajectory: &'a Trajectory,
    /// The static boxes as meshes, with their poses: the ground first, then the walls.
    statics: Vec<(Arc<RtcdMesh>, Pose)>,
    /// Half the prediction plus the distance extension: how much the broad phase grows each box.
    grow: f32,
    /// The prediction distance passed to the backend (Rapier's, as the batch passes it).
    pub prediction: f32,
}

impl<'a> Frames<'a> {
    /// Frames of `trajectory` with the broad phase of `rtcd_rapier`'s batch for `params` and Rapier's
    /// `prediction` distance.
    pub fn new(
        scene: &'a Scene,
        trajectory: &'a Trajectory,
        params: &RtcdParams,
        prediction: f32,
    ) -> Result<Self, String> {
        let cuboids = rtcd_rapier::GroundMeshes::new();
        let ground = (scene.ground_half_extents, scene.ground_center());
        let statics = std::iter::once(ground)
            .chain(scene.walls.iter().map(|w| (w.half_extents, w.center)))
            .map(|(h, c)| {
                let mesh = cuboids.get(h).ok_or_else(|| format!("the cuboid {h} has no mesh"))?;
                Ok((mesh, Pose::from_translation(c)))
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Self {
            scene,
            trajectory,
            statics,
            grow: 0.5 * (prediction + params.distance_extension),
            prediction,
        })
    }

    /// Bodies present at step `step`.
    pub fn bodies(&self, step: usize) -> usize {
        self.trajectory.poses[step].len()
    }

    /// Steps recorded.
    pub fn len(&self) -> usize {
        self.trajectory.poses.len()
    }

    /// The candidate pairs of step `step` (sort and sweep on x), meshes first and the static box
    /// (ground or wall) second. Bodies have ids 1 to n; the ground has id 0 and the walls
    /// `u64::MAX`, `u64::MAX - 1`, ... (the statics' ids count down from 0, wrapping).
    /// Each pair's [`PairInput::previous`] is its relative pose at the step before (the motion rays
    /// trace the recorded path, as the driver gives them the last batch's poses); none for a body
    /// that was not there yet.
    pub fn pairs(&self, step: usize) -> Vec<PairInput<'_>> {
        let poses = &self.trajectory.poses[step];
        let before = &self.trajectory.poses[step.saturating_sub(1)];
        let n = poses.len();
        let mut boxes: Vec<rtcd::Aabb> = poses
            .iter()
            .enumerate()
            .map(|(i, p)| self.mesh(i).aabb().transformed(p).extended(self.grow))
            .collect();
        boxes.extend(self.statics.iter().map(|(m, p)| m.aabb().transformed(p).extended(self.grow)));
        let mut order: Vec<usize> = (0..boxes.len()).collect();
        order.sort_unstable_by(|&a, &b| boxes[a].min.x.total_cmp(&boxes[b].min.x));
        let mut out = Vec::new();
        for (k, &i) in order.iter().enumerate() {
            for &j in &order[k + 1..] {
                if boxes[j].min.x > boxes[i].max.x {
                    break;
                }
                let (a, b) = (&boxes[i], &boxes[j]);
                if a.min.y > b.max.y || b.min.y > a.max.y || a.min.z > b.max.z || b.min.z > a.max.z {
                    continue;
                }
                let (i, j) = (i.min(j), i.max(j));
                if i >= n {
                    continue; // two statics
                }
                if j >= n {
                    let (mesh, pose) = &self.statics[j - n];
                    out.push(
                        PairInput::from_world(
                            PairKey::new(i as u64 + 1, 0u64.wrapping_sub((j - n) as u64)),
                            self.mesh(i),
                            poses[i],
                            mesh,
                            *pose,
                        )
                        .with_previous(before.get(i).map(|b| b.inv_mul(pose))),
                    );
                } else {
                    out.push(
                        PairInput::from_world(
                            PairKey::new(i as u64 + 1, j as u64 + 1),
                            self.mesh(i),
                            poses[i],
                            self.mesh(j),
                            poses[j],
                        )
                        .with_previous(before.get(i).zip(before.get(j)).map(|(a, b)| a.inv_mul(b))),
                    );
                }
            }
        }
        // A fixed order, so every variant sees the same input.
        out.sort_unstable_by_key(|p| p.key);
        out
    }

    fn mesh(&self, body: usize) -> &RtcdMesh {
        &self.scene.meshes[self.trajectory.mesh_of[body]]
    }

    /// The options `rtcd_rapier`'s batch passes (every contact kept for its reduction).
    pub fn options(&self) -> StepOptions {
        StepOptions {
            prediction_distance: self.prediction,
            keep_contacts: true,
            skip_manifolds: true,
            ..Default::default()
        }
    }

    /// Runs `backend` over the steps `stride` apart (1: every step), with `opts`; `progress` is called
    /// with each step done. [`Frames::replay_interleaved`] with one backend.
    pub fn replay(
        &self,
        backend: &mut dyn NarrowPhaseBackend,
        opts: &StepOptions,
        stride: usize,
        steps: std::ops::Range<usize>,
        progress: impl FnMut(usize),
    ) -> Result<Vec<ReplayStep>, BackendError> {
        let mut runs =
            self.replay_interleaved(&mut [(backend, stride)], opts, steps, progress).map_err(|(_, e)| e)?;
        Ok(runs.pop().unwrap_or_default())
    }

    /// [`Frames::replay`] for several backends at once, interleaved step by step: each step's pairs
    /// are built once, and every backend whose stride (1: every step) divides the step runs them,
    /// in an order that turns from step to step. A drift of the machine's speed over a run then
    /// weighs on every backend alike, and the ratios between them are measured side by side. Per
    /// backend, its steps; on an error, the backend's index and the error.
    pub fn replay_interleaved<'b>(
        &self,
        backends: &mut [(&mut (dyn NarrowPhaseBackend + 'b), usize)],
        opts: &StepOptions,
        steps: std::ops::Range<usize>,
        mut progress: impl FnMut(usize),
    ) -> Result<Vec<Vec<ReplayStep>>, (usize, BackendError)> {
        let k = backends.len();
        let mut out: Vec<Vec<ReplayStep>> = (0..k).map(|_| Vec::new()).collect();
        for step in steps {
            if !backends.iter().any(|(_, stride)| step % (*stride).max(1) == 0) {
                continue;
            }
            let pairs = self.pairs(step);
            for turn in 0..k {
                let b = (step + turn) % k;
                let (backend, stride) = &mut backends[b];
                if step % (*stride).max(1) != 0 {
                    continue;
                }
                let start = Instant::now();
                let o = backend.step(&pairs, opts).map_err(|e| (b, e))?;
                let ms = start.elapsed().as_secs_f64() * 1e3;
                out[b].push(ReplayStep {
                    step,
                    bodies: self.trajectory.poses[step].len(),
                    ms,
                    gpu_ms: o.metrics.gpu_time.map(|d| d.as_secs_f64() * 1e3),
                    metrics: o.metrics,
                });
            }
            progress(step);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use glam::{Quat, Vec3};

    use super::*;

    /// Backends replayed together, interleaved step by step, each get the steps, rays and contacts
    /// of their own replay: the order in which they run changes no result.
    #[test]
    fn interleaved_replay_equals_separate_replays() {
        let assets = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/meshes");
        let scene = crate::scene::avalanche(&assets, 2, 0.2, true).unwrap();
        // Eight bodies sinking into each other and the ground, turning a little each step.
        let mesh_of: Vec<usize> = (0..8).map(|k| k % scene.meshes.len()).collect();
        let poses: Vec<Vec<Pose>> = (0..12)
            .map(|step| {
                (0..8)
                    .map(|k| {
                        let at = Vec3::new(
                            (k % 4) as f32 * 0.9,
                            0.5 + (k / 4) as f32 * 0.9 - 0.02 * step as f32,
                            0.0,
                        );
                        Pose::new(at, Quat::from_rotation_y(0.3 * k as f32 + 0.01 * step as f32))
                    })
                    .collect()
            })
            .collect();
        let trajectory = Trajectory { mesh_of, poses };
        let refs: Vec<&RtcdMesh> = scene.meshes.iter().map(|m| m.as_ref()).collect();
        let params = RtcdParams::from_meshes(&refs);
        let frames = Frames::new(&scene, &trajectory, &params, params.culling_dist).unwrap();
        let opts = frames.options();
        let variants: Vec<(Variant, usize)> = Variant::all()
            .into_iter()
            .filter(|v| v.tracer == TracerKind::Bvh)
            .map(|v| (v, if v.iterative { 1 } else { 2 }))
            .collect();
        let backend = |v: &Variant| {
            Box::new(rtcd::NarrowPhase::new(v.params(&params)).unwrap()) as Box<dyn NarrowPhaseBackend>
        };
        let mut together: Vec<(Box<dyn NarrowPhaseBackend>, usize)> =
            variants.iter().map(|(v, s)| (backend(v), *s)).collect();
        let mut refs: Vec<_> = together.iter_mut().map(|(b, s)| (b.as_mut(), *s)).collect();
        let runs = frames.replay_interleaved(&mut refs, &opts, 0..frames.len(), |_| {}).unwrap();
        let figures = |steps: &[ReplayStep]| -> Vec<_> {
            steps
                .iter()
                .map(|s| {
                    (
                        s.step,
                        s.metrics.pairs,
                        s.metrics.standard_rays,
                        s.metrics.iterative_rays,
                        s.metrics.contact_rays,
                    )
                })
                .collect()
        };
        let mut contacts = 0;
        for ((v, stride), run) in variants.iter().zip(&runs) {
            let mut alone = backend(v);
            let own = frames.replay(&mut *alone, &opts, *stride, 0..frames.len(), |_| {}).unwrap();
            assert_eq!(figures(run), figures(&own), "{}", v.key());
            contacts += run.iter().map(|s| s.metrics.contact_rays).sum::<u64>();
        }
        assert!(contacts > 100, "{contacts} contact rays");
    }
}
