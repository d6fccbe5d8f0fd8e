//! Simulating a scene in one set-up: spawns, 60 Hz steps, per-step times and state, the poses
//! recorded for replays and for the penetration measure, and the phases of scene 1.

use std::time::{Duration, Instant};

use crate::{
    replay::Trajectory,
    scene::{GROUND_TOP, Scene},
    world::{Setup, Shapes, World},
};

/// One simulated step.
#[derive(Clone, Copy, Debug, Default)]
pub struct SimStep {
    /// Bodies present.
    pub bodies: usize,
    /// Contact generation (ms), see [`crate::world`].
    pub narrow_ms: f64,
    /// rtcd's batch alone (ms).
    pub batch_ms: f64,
    /// Of the batch: its preparation, our broad phase (ms).
    pub prepare_ms: f64,
    /// Of the batch: the backend's step (ms); the rest is reduction and publishing.
    pub backend_ms: f64,
    /// The whole step (ms).
    pub step_ms: f64,
    /// Pairs the rtcd batch sent to its backend.
    pub batch_pairs: usize,
    /// Of those, the pairs held untraced because Rapier recycles them.
    pub held_pairs: usize,
    /// Pairs the dispatcher computed on the spot, without a batch result (rtcd set-ups).
    pub cache_misses: u64,
    /// Top-level calls to Rapier's query dispatcher for contacts.
    pub dispatcher_calls: u64,
    /// Pairs Rapier holds contacts for after the step.
    pub contact_pairs: usize,
    /// Their manifolds (with a point) and points, as handed to Rapier's solver.
    pub manifolds: usize,
    /// See [`Self::manifolds`].
    pub contact_points: usize,
    /// Sleeping bodies after the step.
    pub sleeping: usize,
    /// Kinetic energy after the step (J).
    pub kinetic_energy: f32,
    /// Lowest vertex of any body relative to the ground's top (m; negative: below it), before the
    /// step, over the ground's footprint.
    pub lowest: f32,
    /// Bodies that have tunnelled so far.
    pub tunnelled: usize,
}

/// A whole simulation.
pub struct SimRun {
    /// `rtcd`, `Rapier trimesh`, ...
    pub label: String,
    /// Building the collision shapes.
    pub setup_time: Duration,
    /// Per-mesh set-up notes.
    pub setup_notes: Vec<String>,
    /// Per step.
    pub steps: Vec<SimStep>,
    /// The poses, for replays and measures.
    pub trajectory: Trajectory,
    /// Rapier's prediction distance in this set-up.
    pub prediction: f32,
    /// Rapier's allowed linear error in this set-up.
    pub allowed_linear_error: f32,
    /// The poses after the last step.
    pub final_poses: Vec<rtcd::Pose>,
    /// Per body, whether at some step its bounding box's centre was below the ground's top by more
    /// than the body's bounding diagonal, or off the floor between the walls (off the ground when
    /// there are none): scene 3's tunnelling, see [`lost`].
    pub lost: Vec<bool>,
    /// Wall time of the whole simulation.
    pub wall: Duration,
}

/// Simulates `scene` in `setup`. `progress` gets the step index now and then.
pub fn simulate(
    scene: &Scene,
    label: &str,
    setup: Setup,
    mut progress: impl FnMut(usize),
) -> Result<SimRun, String> {
    let start = Instant::now();
    let shapes = Shapes::build(setup, &scene.meshes)?;
    let (setup_time, setup_notes) = (shapes.setup_time, shapes.notes.clone());
    let mut world = World::new(scene, setup, shapes)?;
    let mut trajectory =
        Trajectory { mesh_of: scene.spawns.iter().map(|s| s.mesh).collect(), poses: Vec::new() };
    let mut steps = Vec::with_capacity(scene.steps);
    let mut next_spawn = 0;
    let mut tunnelled = vec![false; scene.bodies()];
    let mut lost_bodies = vec![false; scene.bodies()];
    for step in 0..scene.steps {
        while next_spawn < scene.spawns.len() && scene.spawns[next_spawn].step <= step {
            world.spawn(&scene.spawns[next_spawn]);
            next_spawn += 1;
        }
        let n = world.handles.len();
        let poses: Vec<rtcd::Pose> = (0..n).map(|i| world.pose(i)).collect();
        let mut lowest = f32::INFINITY;
        for (i, p) in poses.iter().enumerate() {
            let mesh = &scene.meshes[trajectory.mesh_of[i]];
            let centre = p.transform_point(mesh.aabb().center());
            lost_bodies[i] |= lost(scene, mesh, centre);
            // A body lost (not finite, off the floor, or far below the ground) counts as tunnelled
            // too, wherever it went.
            tunnelled[i] |= lost_bodies[i];
            if !scene.over_ground(centre) {
                continue;
            }
            if centre.y < GROUND_TOP {
                tunnelled[i] = true;
            }
            if mesh.aabb().transformed(p).min.y < GROUND_TOP + 0.05 {
                let low =
                    mesh.positions().iter().map(|v| p.transform_point(*v).y).fold(f32::INFINITY, f32::min);
                lowest = lowest.min(low - GROUND_TOP);
            }
        }
        trajectory.poses.push(poses);
        let t = world.step();
        let contacts = world.contacts();
        steps.push(SimStep {
            bodies: n,
            narrow_ms: t.narrow_phase.as_secs_f64() * 1e3,
            batch_ms: t.batch.as_secs_f64() * 1e3,
            prepare_ms: t.prepare.as_secs_f64() * 1e3,
            backend_ms: t.backend.as_secs_f64() * 1e3,
            step_ms: t.step.as_secs_f64() * 1e3,
            batch_pairs: t.batch_pairs,
            held_pairs: t.held_pairs,
            cache_misses: t.cache_misses,
            dispatcher_calls: t.dispatcher_calls,
            contact_pairs: contacts.pairs,
            manifolds: contacts.manifolds,
            contact_points: contacts.points,
            sleeping: (0..n).filter(|&i| world.sleeping(i)).count(),
            kinetic_energy: world.kinetic_energy(),
            lowest,
            tunnelled: tunnelled.iter().filter(|t| **t).count(),
        });
        progress(step);
    }
    Ok(SimRun {
        label: label.to_string(),
        setup_time,
        setup_notes,
        prediction: world.prediction_distance(),
        allowed_linear_error: world.allowed_linear_error(),
        final_poses: (0..world.handles.len()).map(|i| world.pose(i)).collect(),
        lost: lost_bodies,
        steps,
        trajectory,
        wall: start.elapsed(),
    })
}

/// Whether a body of `mesh` whose bounding box's centre is at `centre` is lost: below the ground's
/// top by more than its bounding diagonal (through the ground, not resting in it), off the floor
/// between the walls (off the ground when there are none), or not a number.
pub fn lost(scene: &Scene, mesh: &rtcd::RtcdMesh, centre: glam::Vec3) -> bool {
    let off = match scene.floor_half_width {
        Some(f) => centre.x.abs() > f || centre.z.abs() > f,
        None => !scene.over_ground(centre),
    };
    !centre.is_finite() || centre.y < GROUND_TOP - mesh.aabb().extents().length() || off
}

/// Step ranges of scene 1's three phases (IRTCD 2013 Fig. 7), from a simulation.
#[derive(Clone, Debug, PartialEq)]
pub struct Phases {
    /// A, falling: before the first body touches the ground.
    pub falling: std::ops::Range<usize>,
    /// B, impact: from then until the kinetic energy, past its peak, stays under 5 % of the peak.
    pub impact: std::ops::Range<usize>,
    /// C, rest: the remaining steps.
    pub rest: std::ops::Range<usize>,
}

impl Phases {
    /// Share of the peak kinetic energy under which the pile counts as at rest.
    pub const REST_KE_SHARE: f32 = 0.05;

    /// Detects the phases of a simulation.
    pub fn detect(steps: &[SimStep]) -> Self {
        let n = steps.len();
        let contact = steps.iter().position(|s| s.lowest <= 0.005).unwrap_or(n);
        let (peak_at, peak) =
            steps.iter().enumerate().skip(contact).fold((contact, 0.0f32), |(k, m), (i, s)| {
                if s.kinetic_energy > m { (i, s.kinetic_energy) } else { (k, m) }
            });
        let rest = steps
            .iter()
            .enumerate()
            .skip(peak_at)
            .filter(|(_, s)| s.kinetic_energy >= Self::REST_KE_SHARE * peak)
            .map(|(i, _)| i + 1)
            .next_back()
            .unwrap_or(n)
            .max(contact)
            .min(n);
        Self { falling: 0..contact, impact: contact..rest, rest: rest..n }
    }

    /// `(name, range)` of each phase.
    pub fn named(&self) -> [(&'static str, std::ops::Range<usize>); 3] {
        [("A", self.falling.clone()), ("B", self.impact.clone()), ("C", self.rest.clone())]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(lowest: f32, kinetic_energy: f32) -> SimStep {
        SimStep { lowest, kinetic_energy, ..Default::default() }
    }

    #[test]
    fn phases_follow_ground_contact_and_kinetic_energy() {
        // Falling 3 steps, impact with a peak of 10 J, then under 5 % of it from step 7 on.
        let ke = [1.0, 2.0, 3.0, 10.0, 6.0, 2.0, 0.6, 0.4, 0.3, 0.2];
        let low = [1.0, 0.5, 0.1, 0.0, -0.01, 0.0, 0.0, 0.0, 0.0, 0.0];
        let steps: Vec<SimStep> = ke.iter().zip(low).map(|(&k, l)| step(l, k)).collect();
        let p = Phases::detect(&steps);
        assert_eq!((p.falling, p.impact, p.rest), (0..3, 3..7, 7..10));
    }

    #[test]
    fn no_contact_means_all_falling() {
        let steps: Vec<SimStep> = (0..5).map(|i| step(1.0, i as f32)).collect();
        let p = Phases::detect(&steps);
        assert_eq!((p.falling, p.impact, p.rest), (0..5, 5..5, 5..5));
    }
}
