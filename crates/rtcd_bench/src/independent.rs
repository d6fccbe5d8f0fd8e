//! Scene 3's verdict on a simulation, from its poses after the last step and
//! [`rtcd_scenes::measure`] alone (no rtcd tracing, hierarchy or detection):
//!
//! - every pair whose world bounding boxes overlap (two bodies, or a body and the ground or a wall)
//!   is measured both ways: vertices inside the other body and their depths, and crossing edges
//!   (both endpoints outside, the segment through the other body deeper than a tolerance);
//! - the tolerance of a pair is 1 % of the bounding diagonal of its smaller body, or Rapier's
//!   allowed linear error (its geometric slop, 5 mm at `length_unit` 1) where that is larger; each
//!   pair records which rule gave it;
//! - a body is **tunnelled** when the centre of its bounding box is below the ground's top by more
//!   than the body's bounding diagonal, or off the floor between the walls (or off the ground when
//!   there are no walls), at the end or at any step before ([`crate::sim::lost`]).
//!
//! Every pair measured is kept, those that fail first of all.

use rayon::prelude::*;
use rtcd::Pose;
use rtcd_scenes::measure::{PairMeasure, PlacedMesh, measure_pair};

use crate::{scene::Scene, sim::lost};

/// The share of the smaller body's bounding diagonal that makes a pair's crossing-edge tolerance.
pub const TOL_SHARE: f64 = 0.01;

/// What a body was measured against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Partner {
    /// Another body (its index in spawn order).
    Body(usize),
    /// The ground.
    Ground,
    /// Wall `k` of the scene.
    Wall(usize),
}

/// Which rule gave a pair's tolerance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TolRule {
    /// 1 % of the smaller body's bounding diagonal.
    Share,
    /// Rapier's allowed linear error, larger than 1 %.
    AllowedError,
}

/// One pair measured.
#[derive(Clone, Debug)]
pub struct PairRecord {
    /// The body (spawn order).
    pub body: usize,
    /// What it was measured against.
    pub partner: Partner,
    /// Bounding diagonal of the smaller body (the body itself against a static box), m.
    pub smaller_diagonal: f64,
    /// The crossing-edge tolerance, m.
    pub tol: f64,
    /// Where the tolerance came from.
    pub rule: TolRule,
    /// The measure, `a` being the body and `b` the partner.
    pub measure: PairMeasure,
}

impl PairRecord {
    /// Penetration depth relative to the smaller body's bounding diagonal.
    pub fn relative_depth(&self) -> f64 {
        self.measure.depth() / self.smaller_diagonal.max(1e-12)
    }

    /// Whether the pair interpenetrates at all (a vertex inside, or an edge through, however
    /// shallow).
    pub fn touches(&self) -> bool {
        self.measure.vertices_inside() + self.measure.crossing_edges() + self.measure.shallow_edges() > 0
    }
}

/// The verdict on one simulation's end.
#[derive(Clone, Debug, Default)]
pub struct EndState {
    /// Bodies.
    pub bodies: usize,
    /// Rapier's allowed linear error in the simulation, m.
    pub allowed_linear_error: f64,
    /// Every pair measured: crossing edges first, then by depth.
    pub pairs: Vec<PairRecord>,
    /// Tunnelled bodies (spawn order).
    pub tunnelled: Vec<usize>,
}

/// A wall's box as it is measured: reaching down to the ground's bottom, and along its length to
/// the other walls' outer faces. The wall stands on the ground and its ends against the other
/// walls, so its bottom face and ends are not surfaces of the solid they make together; measured
/// as they are, a body sunk into a wall near the floor would be only as deep as its height above
/// the floor.
fn measured_wall(scene: &Scene, w: &rtcd_scenes::Cuboid) -> (glam::Vec3, glam::Vec3) {
    let (mut lo, mut hi) = (w.center - w.half_extents, w.center + w.half_extents);
    lo.y = lo.y.min(scene.ground_center().y - scene.ground_half_extents.y);
    let (all_lo, all_hi) = scene
        .walls
        .iter()
        .fold((lo, hi), |(l, h), o| (l.min(o.center - o.half_extents), h.max(o.center + o.half_extents)));
    // Along its longer horizontal axis.
    if w.half_extents.x >= w.half_extents.z {
        (lo.x, hi.x) = (all_lo.x, all_hi.x);
    } else {
        (lo.z, hi.z) = (all_lo.z, all_hi.z);
    }
    (0.5 * (lo + hi), 0.5 * (hi - lo))
}

impl EndState {
    /// Measures `poses` (one per body, in spawn order) of `scene`; `lost_before` flags the bodies
    /// lost at an earlier step ([`crate::sim::SimRun::lost`]; may be empty).
    pub fn measure(scene: &Scene, poses: &[Pose], allowed_linear_error: f32, lost_before: &[bool]) -> Self {
        let allowed = f64::from(allowed_linear_error);
        let mesh_of = |i: usize| &scene.meshes[scene.spawns[i].mesh];
        let placed: Vec<PlacedMesh> =
            poses.iter().enumerate().map(|(i, p)| PlacedMesh::from_mesh(mesh_of(i), *p)).collect();
        let statics: Vec<(Partner, PlacedMesh)> = std::iter::once((
            Partner::Ground,
            PlacedMesh::cuboid(scene.ground_half_extents, Pose::from_translation(scene.ground_center())),
        ))
        .chain(scene.walls.iter().enumerate().map(|(k, w)| {
            let (center, half) = measured_wall(scene, w);
            (Partner::Wall(k), PlacedMesh::cuboid(half, Pose::from_translation(center)))
        }))
        .collect();
        let mut jobs: Vec<(usize, Partner)> = Vec::new();
        for i in 0..placed.len() {
            for j in i + 1..placed.len() {
                if placed[i].boxes_overlap(&placed[j], 0.0) {
                    jobs.push((i, Partner::Body(j)));
                }
            }
            for (partner, s) in &statics {
                if placed[i].boxes_overlap(s, 0.0) {
                    jobs.push((i, *partner));
                }
            }
        }
        let mut pairs: Vec<PairRecord> = jobs
            .par_iter()
            .map(|&(i, partner)| {
                let a = &placed[i];
                let b = match partner {
                    Partner::Body(j) => &placed[j],
                    Partner::Ground => &statics[0].1,
                    Partner::Wall(k) => &statics[k + 1].1,
                };
                let smaller_diagonal = match partner {
                    Partner::Body(_) => a.diagonal().min(b.diagonal()),
                    _ => a.diagonal(),
                };
                let share = TOL_SHARE * smaller_diagonal;
                let (tol, rule) =
                    if allowed > share { (allowed, TolRule::AllowedError) } else { (share, TolRule::Share) };
                PairRecord { body: i, partner, smaller_diagonal, tol, rule, measure: measure_pair(a, b, tol) }
            })
            .collect();
        pairs.sort_by(|x, y| {
            y.measure
                .crossing_edges()
                .cmp(&x.measure.crossing_edges())
                .then(y.measure.depth().total_cmp(&x.measure.depth()))
                .then((x.body, format!("{:?}", x.partner)).cmp(&(y.body, format!("{:?}", y.partner))))
        });
        let tunnelled = poses
            .iter()
            .enumerate()
            .filter(|(i, p)| {
                let m = mesh_of(*i);
                lost_before.get(*i).copied().unwrap_or(false)
                    || lost(scene, m, p.transform_point(m.aabb().center()))
            })
            .map(|(i, _)| i)
            .collect();
        Self { bodies: poses.len(), allowed_linear_error: allowed, pairs, tunnelled }
    }

    /// The deepest penetration of any pair (m).
    pub fn max_depth(&self) -> f64 {
        self.pairs.iter().map(|p| p.measure.depth()).fold(0.0, f64::max)
    }

    /// The largest penetration relative to the smaller body's bounding diagonal.
    pub fn max_relative_depth(&self) -> f64 {
        self.pairs.iter().map(PairRecord::relative_depth).fold(0.0, f64::max)
    }

    /// The sum of every pair's penetration depth (m).
    pub fn sum_depth(&self) -> f64 {
        self.pairs.iter().map(|p| p.measure.depth()).sum()
    }

    /// Crossing edges deeper than their pair's tolerance, every pair, both ways.
    pub fn crossing_edges(&self) -> usize {
        self.pairs.iter().map(|p| p.measure.crossing_edges()).sum()
    }

    /// Crossing edges within their pair's tolerance.
    pub fn shallow_edges(&self) -> usize {
        self.pairs.iter().map(|p| p.measure.shallow_edges()).sum()
    }

    /// Pairs with a crossing edge deeper than the tolerance.
    pub fn crossing_pairs(&self) -> usize {
        self.pairs.iter().filter(|p| p.measure.crossing_edges() > 0).count()
    }

    /// Vertices inside another body, every pair, both ways.
    pub fn vertices_inside(&self) -> usize {
        self.pairs.iter().map(|p| p.measure.vertices_inside()).sum()
    }

    /// Pairs measured whose tolerance came from each rule: `(1 % of the diagonal, Rapier's error)`.
    pub fn rule_counts(&self) -> (usize, usize) {
        let share = self.pairs.iter().filter(|p| p.rule == TolRule::Share).count();
        (share, self.pairs.len() - share)
    }

    /// Whether every figure is a number.
    pub fn finite(&self) -> bool {
        self.pairs.iter().all(|p| {
            let m = &p.measure;
            [m.depth(), m.a_in_b.sum_depth, m.b_in_a.sum_depth, m.deepest_edge(), p.tol]
                .iter()
                .all(|v| v.is_finite())
        })
    }
}

/// A partner's name: the body's mesh, `ground` or `wall k`.
pub fn partner_name(scene: &Scene, partner: Partner) -> String {
    match partner {
        Partner::Body(j) => format!("{} #{j}", scene.meshes[scene.spawns[j].mesh].name()),
        Partner::Ground => "ground".into(),
        Partner::Wall(k) => format!("wall {k}"),
    }
}

/// A body's name: its mesh and index.
pub fn body_name(scene: &Scene, body: usize) -> String {
    format!("{} #{body}", scene.meshes[scene.spawns[body].mesh].name())
}

#[cfg(test)]
mod tests {
    use glam::{Quat, Vec3};

    use super::*;
    use crate::{
        bench::run_scene,
        cli::Options,
        report::{MAIN_LABEL, scene_json, table, targets},
        scene::GROUND_TOP,
    };

    /// Poses of a small pile put by hand: the verdict counts what it must.
    #[test]
    fn tunnelled_bodies_and_interpenetrating_pairs_are_counted() {
        let scene = crate::scene::everyday(4, 1.0, true).unwrap();
        let f = scene.floor_half_width.unwrap();
        let ground_rest = |i: usize| {
            let m = &scene.meshes[scene.spawns[i].mesh];
            GROUND_TOP - m.aabb().min.y + 0.01
        };
        // Side by side along x, 10 cm apart, 1 cm above the ground.
        let mut x = -f + 0.1;
        let mut poses: Vec<Pose> = (0..4)
            .map(|i| {
                let b = scene.meshes[scene.spawns[i].mesh].aabb();
                let at = x - b.min.x;
                x += b.max.x - b.min.x + 0.1;
                Pose::new(Vec3::new(at, ground_rest(i), 0.0), Quat::IDENTITY)
            })
            .collect();
        assert!(x < f, "the four bodies do not fit side by side");
        let apart = EndState::measure(&scene, &poses, 0.005, &[]);
        assert_eq!(apart.tunnelled, Vec::<usize>::new());
        assert_eq!((apart.crossing_edges(), apart.vertices_inside()), (0, 0));
        assert_eq!(apart.max_depth(), 0.0);
        // Body 0 fell through the ground, body 1 is beyond a wall, body 2 sank 2 cm into the
        // ground.
        poses[0].translation.y = -50.0;
        poses[1].translation.x = f + 2.0;
        poses[2].translation.y -= 0.03;
        let s = EndState::measure(&scene, &poses, 0.005, &[]);
        assert_eq!(s.tunnelled, vec![0, 1]);
        // A body lost at an earlier step stays lost.
        let again = EndState::measure(&scene, &poses, 0.005, &[false, false, false, true]);
        assert_eq!(again.tunnelled, vec![0, 1, 3]);
        let sunk = s.pairs.iter().find(|p| p.body == 2 && p.partner == Partner::Ground).unwrap();
        assert!((sunk.measure.depth() - 0.02).abs() < 1e-4, "{}", sunk.measure.depth());
        assert!(s.max_depth() >= 0.02 - 1e-4 && s.finite());
        assert_eq!(s.rule_counts().0 + s.rule_counts().1, s.pairs.len());
    }

    /// A body pushed into a wall near the floor is as deep as it went into the wall, not only as
    /// high as it is above the floor (the wall is measured down into the ground).
    #[test]
    fn a_body_in_a_wall_is_measured_to_the_wall_face_it_came_through() {
        let scene = crate::scene::everyday(4, 1.0, true).unwrap();
        let wall = scene.walls[0];
        let inner = if wall.center.x > 0.0 {
            wall.center.x - wall.half_extents.x
        } else {
            wall.center.x + wall.half_extents.x
        };
        let into = wall.center.x.signum();
        // Every body 1 cm above the floor, the first one's far side 0.2 m into the +x/-x wall.
        let mut poses: Vec<Pose> = (0..4)
            .map(|i| {
                let b = scene.meshes[scene.spawns[i].mesh].aabb();
                Pose::new(Vec3::new(0.0, GROUND_TOP - b.min.y + 0.01, (i as f32 - 1.5) * 1.5), Quat::IDENTITY)
            })
            .collect();
        let b = scene.meshes[scene.spawns[0].mesh].aabb();
        let far = if into > 0.0 { b.max.x } else { b.min.x };
        poses[0].translation.x = inner + into * 0.2 - far;
        let s = EndState::measure(&scene, &poses, 0.005, &[]);
        let in_wall = s.pairs.iter().find(|p| p.body == 0 && p.partner == Partner::Wall(0)).unwrap();
        let expected = 0.2f64.min(0.5 * f64::from(b.max.x - b.min.x));
        assert!(in_wall.measure.depth() > expected - 0.01, "{} vs {expected}", in_wall.measure.depth());
    }

    /// A small scene 3 run end to end: every set-up simulated, measured at its end and reported.
    #[test]
    fn a_small_everyday_pile_runs_end_to_end_with_figures_for_every_setup() {
        let args = "--scene 3 --quick --bodies 4 --seconds 1 --variants none --no-errors --gpu off";
        let opts = Options::parse(args.split_whitespace().map(String::from)).unwrap();
        let scene = crate::scene::everyday(4, 1.0, true).unwrap();
        let r = run_scene(scene, &opts, None).unwrap();
        let labels: Vec<&str> = r.sims.iter().map(|s| s.run.label.as_str()).collect();
        assert_eq!(labels.len(), 6, "{labels:?}");
        assert_eq!(labels[0], MAIN_LABEL);
        for s in &r.sims {
            let end = s.end.as_ref().unwrap_or_else(|| panic!("{}: no end state", s.run.label));
            assert_eq!(end.bodies, 4);
            assert!(end.finite(), "{}", s.run.label);
            // After a second the pile has landed: something lies on the ground.
            assert!(end.pairs.iter().any(|p| p.partner == Partner::Ground), "{}", s.run.label);
            assert!(end.tunnelled.windows(2).all(|w| w[0] < w[1]) && end.tunnelled.iter().all(|&b| b < 4));
            assert!(end.max_depth().is_finite() && end.max_relative_depth().is_finite());
            assert!(end.max_depth() <= end.sum_depth() + 1e-12);
            // Pairs with crossing edges come first.
            let crossing: Vec<bool> = end.pairs.iter().map(|p| p.measure.crossing_edges() > 0).collect();
            assert!(crossing.windows(2).all(|w| w[0] >= w[1]));
            let ms = s.median_narrow_ms(&(0..r.scene.steps)).unwrap();
            assert!(ms.is_finite() && ms > 0.0, "{}: {ms}", s.run.label);
        }
        let text = table(&r);
        for l in &labels {
            assert!(text.contains(l), "{l} missing from the table");
        }
        assert!(text.contains("crossing edges"));
        let t = targets(std::slice::from_ref(&r));
        assert!(t.iter().any(|(what, ok, _)| what.contains("scene 3") && ok.is_some()), "{t:?}");
        let json = scene_json(&r);
        let sims = json["simulated"].as_array().unwrap();
        assert_eq!(sims.len(), 6);
        for s in sims {
            let e = &s["end_state"];
            assert!(e["crossing_edges"].is_u64() && e["tunnelled"].is_u64(), "{s}");
            assert!(e["max_penetration_m"].is_f64() && s["narrow_phase_median_ms"]["all"].is_f64(), "{s}");
        }
    }
}
