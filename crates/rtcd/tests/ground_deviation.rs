//! The ground-deviation test of the 2014 paper (Lehericey, Gouranton and Arnaldi 2014, §5.4,
//! Table 1, after Hermann, Faure and Raffin 2008, Fig. 7-8): a mesh pressed into a ground slab at
//! 400 orientations × 20 depths. Penalty forces are proportional to depth along each contact's
//! direction (Hermann 2008 §4); the net reaction should be vertical, and the paper's deviation is
//! the ratio of its tangential to its normal component, averaged over the cases.
//!
//! Every case is kept and measured against what is known without the narrow phase: the deepest
//! penetrating vertex (the lowest posed vertex) and its depth below the slab's top. Per mesh, per
//! ground and with or without re-projection (2014 §3.2), the test reports
//! - the share of cases where the deepest vertex gets a contact,
//! - the deepest reported depth against the true one (mean and worst relative error, -100 % for a
//!   case without contact),
//! - wrong-way cases (the net force has a downward component: it pushes the mesh further in),
//!   wrong-way contacts (one contact whose own push, along its separating direction, has a
//!   downward component; none is allowed in any run) and cases without any contact although the
//!   mesh penetrates,
//! - the paper's deviation, over the cases whose net force points up (the others are counted as
//!   wrong-way, without contact or horizontal), and the mean angle of the net force from the
//!   vertical over every case with a contact.
//!
//! Two grounds: the slab as [`RtcdMesh::cuboid`], the exact box Rapier cuboids give, whose contacts
//! must be exact for every mesh (no wrong-way case, the deepest vertex always in contact, its depth
//! within 1 %); and the slab as an ordinary closed mesh of 8 vertices and 12 triangles, the general
//! mesh-mesh path. There each mesh runs with and without [`RtcdParams::closed_reach`]:
//! - without it, a vertex ray only counts a contact when it meets the other body before it leaves
//!   its own (Hermann 2008 Alg. 1): the paper's own meshes keep the paper's figures, and the
//!   failures on thin bodies (limbs, a plate: their deepest vertex is deeper than the body is thick)
//!   are printed as the known limits of that rule, not asserted;
//! - with it (the default), a back-face hit counts as far as the body's size reaches into the
//!   closed slab, the nearer way out: re-projected, every mesh's contacts are as exact as on the
//!   cuboid (the same check), except in the option's one limit, each such case identified from the
//!   posed vertex alone and counted: a deepest vertex in a part at least `culling_dist` thick along
//!   its ray keeps Hermann's exit distance (`rtcd::detect::vertex_reach`), and gets no contact when
//!   its ray leaves its body before it reaches the slab's top (the knot's and the coil's tubes
//!   pressed in deeper than they are thick); and against the rule above the deepest vertex is in contact at least
//!   as often, with no more wrong-way or contact-less cases and a mean depth error no larger, with
//!   or without re-projection (the raw rays' depth, the ray's length, is not compared).

mod common;

use std::fmt;

use glam::{Quat, Vec3};
use rtcd::{FeatureId, NarrowPhase, PairInput, PairKey, Pose, RtcdMesh, RtcdParams, StepOptions, shapes};

const ORIENTATIONS: usize = 400;
const DEPTHS: usize = 20;
/// The slab: 40 × 2 × 40, its top face at y = 0 ([`common::ground_pose`]).
const GROUND_HALF: Vec3 = Vec3::new(20.0, 1.0, 20.0);
/// The largest relative error of the deepest reported depth against a cuboid ground.
const CUBOID_DEPTH_TOLERANCE: f64 = 0.01;
/// Failing cases listed per kind in the printed report.
const LISTED: usize = 10;

/// How the ground slab is given to the narrow phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ground {
    /// [`RtcdMesh::cuboid`]: the exact box.
    Cuboid,
    /// [`RtcdMesh::new`] of the box's 8 vertices and 12 triangles: vertex rays both ways.
    BoxMesh,
}

impl Ground {
    fn mesh(self) -> RtcdMesh {
        match self {
            Ground::Cuboid => RtcdMesh::cuboid("ground", GROUND_HALF).unwrap(),
            Ground::BoxMesh => common::cuboid("ground", GROUND_HALF),
        }
    }

    fn label(self) -> &'static str {
        match self {
            Ground::Cuboid => "cuboid ground",
            Ground::BoxMesh => "box-mesh ground",
        }
    }
}

/// One orientation and depth of a mesh in the slab, and what the narrow phase made of it.
#[derive(Clone, Copy, Debug)]
struct Case {
    /// Index of the orientation (0..[`ORIENTATIONS`]).
    orientation: usize,
    /// Depth step (1..=[`DEPTHS`]).
    step: usize,
    rotation: Quat,
    /// The deepest vertex's index and its true depth below the slab's top, from the posed positions.
    deepest: u32,
    depth: f32,
    /// Whether a penetrating contact comes from the deepest vertex.
    deepest_in_contact: bool,
    /// The deepest penetrating contact's depth (0 without contact).
    reported: f32,
    /// Penetrating contacts.
    contacts: usize,
    /// Penetrating contacts whose separating direction points down: each pushes the mesh further in.
    wrong_contacts: usize,
    /// Net force on the mesh: the sum of each contact's separating direction times its depth.
    force: Vec3,
}

impl Case {
    /// Relative error of the deepest reported depth (-1 without contact).
    fn depth_error(&self) -> f64 {
        ((self.reported - self.depth) / self.depth) as f64
    }

    fn wrong_way(&self) -> bool {
        self.contacts > 0 && self.force.y < 0.0
    }

    fn no_contact(&self) -> bool {
        self.contacts == 0
    }
}

impl fmt::Display for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let q = self.rotation;
        write!(
            f,
            "orientation {} (q = [{:.5}, {:.5}, {:.5}, {:.5}]), depth {}/{DEPTHS} = {:.5}: deepest vertex {} {}, \
             {} contacts ({} wrong-way), deepest reported {:.5} ({:+.2} %), net force ({:.5}, {:.5}, {:.5})",
            self.orientation,
            q.x,
            q.y,
            q.z,
            q.w,
            self.step,
            self.depth,
            self.deepest,
            if self.deepest_in_contact { "in contact" } else { "without contact" },
            self.contacts,
            self.wrong_contacts,
            self.reported,
            100.0 * self.depth_error(),
            self.force.x,
            self.force.y,
            self.force.z,
        )
    }
}

/// Every case of `mesh` in the slab given as `ground`, with or without re-projection and
/// [`RtcdParams::closed_reach`].
fn run_cases(mesh: &RtcdMesh, ground: Ground, reprojection: bool, closed_reach: bool) -> Vec<Case> {
    let ground_mesh = ground.mesh();
    let ground_pose = common::ground_pose();
    let top = ground_pose.transform_point(Vec3::new(0.0, GROUND_HALF.y, 0.0)).y;
    let params =
        RtcdParams { reprojection, closed_reach, iterative: false, ..RtcdParams::from_meshes(&[mesh]) };
    let mut np = NarrowPhase::new(params).unwrap();
    let mut rng = common::rng(2014);
    let mut cases = Vec::with_capacity(ORIENTATIONS * DEPTHS);
    for orientation in 0..ORIENTATIONS {
        let q: Quat = common::random_rotation(&mut rng);
        let lowest = mesh.positions().iter().map(|p| (q * *p).y).fold(f32::INFINITY, f32::min);
        let height = mesh.positions().iter().map(|p| (q * *p).y).fold(f32::NEG_INFINITY, f32::max) - lowest;
        for step in 1..=DEPTHS {
            // Depths from 1 % to 20 % of the mesh's height.
            let depth = height * 0.2 * step as f32 / DEPTHS as f32;
            let pose = Pose::new(Vec3::new(0.0, top - lowest - depth, 0.0), q);
            // The deepest vertex, from the posed positions alone.
            let (deepest, lowest_y) = mesh
                .positions()
                .iter()
                .enumerate()
                .map(|(i, p)| (i as u32, pose.transform_point(*p).y))
                .fold((0, f32::INFINITY), |best, c| if c.1 < best.1 { c } else { best });
            let pair = PairInput::from_world(PairKey::new(1, 2), mesh, pose, &ground_mesh, ground_pose);
            let out = np.step(&[pair], &StepOptions { keep_contacts: true, ..Default::default() });
            let contacts: Vec<_> = out.pairs[0].contacts.iter().filter(|c| c.dist < 0.0).collect();
            // Every contact pushes the mesh (shape 1) along -n1 with a force proportional to its depth.
            let force: Vec3 = contacts.iter().map(|c| pose.transform_vector(-c.n1) * -c.dist).sum();
            cases.push(Case {
                orientation,
                step,
                rotation: q,
                deepest,
                depth: top - lowest_y,
                deepest_in_contact: contacts.iter().any(|c| c.fid1 == FeatureId::Vertex(deepest)),
                reported: contacts.iter().map(|c| -c.dist).fold(0.0, f32::max),
                contacts: contacts.len(),
                wrong_contacts: contacts.iter().filter(|c| pose.transform_vector(-c.n1).y < 0.0).count(),
                force,
            });
        }
    }
    cases
}

/// The figures of a set of cases.
#[derive(Clone, Copy, Debug)]
struct Figures {
    cases: usize,
    /// Cases where the deepest vertex gets a contact, in percent.
    deepest_contact: f64,
    /// Mean and worst (largest in magnitude, signed) relative error of the deepest reported depth,
    /// in percent.
    depth_error_mean: f64,
    depth_error_worst: f64,
    wrong_way: usize,
    /// Wrong-way contacts, over every case.
    wrong_contacts: usize,
    no_contact: usize,
    /// Cases with contacts whose net force has no vertical component.
    horizontal: usize,
    /// The paper's deviation (tangential / normal, in percent) over the `upward` cases.
    deviation: f64,
    upward: usize,
    /// Mean angle of the net force from the vertical, in degrees, over every case with a contact.
    angle: f64,
}

impl Figures {
    fn of(cases: &[Case]) -> Self {
        let n = cases.len();
        let mut deviation = 0.0f64;
        let mut upward = 0usize;
        let mut angle = 0.0f64;
        let mut with_contact = 0usize;
        for c in cases.iter().filter(|c| !c.no_contact()) {
            with_contact += 1;
            let normal = c.force.y;
            angle += (c.force - Vec3::Y * normal).length().atan2(normal).to_degrees() as f64;
            if normal > 0.0 {
                let tangential = (c.force - Vec3::Y * normal).length();
                deviation += (tangential / normal) as f64;
                upward += 1;
            }
        }
        let worst =
            cases.iter().map(Case::depth_error).fold(0.0f64, |w, e| if e.abs() > w.abs() { e } else { w });
        Self {
            cases: n,
            deepest_contact: 100.0 * cases.iter().filter(|c| c.deepest_in_contact).count() as f64 / n as f64,
            depth_error_mean: 100.0 * cases.iter().map(Case::depth_error).sum::<f64>() / n as f64,
            depth_error_worst: 100.0 * worst,
            wrong_way: cases.iter().filter(|c| c.wrong_way()).count(),
            wrong_contacts: cases.iter().map(|c| c.wrong_contacts).sum(),
            no_contact: cases.iter().filter(|c| c.no_contact()).count(),
            horizontal: cases.iter().filter(|c| !c.no_contact() && c.force.y == 0.0).count(),
            deviation: 100.0 * deviation / upward.max(1) as f64,
            upward,
            angle: angle / with_contact.max(1) as f64,
        }
    }
}

impl fmt::Display for Figures {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} cases: deepest vertex in contact {:.2} %, depth error mean {:+.3} % worst {:+.3} %, wrong-way {} \
             (contacts {}), no contact {}, horizontal {}, deviation {:.5} % over {} upward cases, mean angle {:.4}°",
            self.cases,
            self.deepest_contact,
            self.depth_error_mean,
            self.depth_error_worst,
            self.wrong_way,
            self.wrong_contacts,
            self.no_contact,
            self.horizontal,
            self.deviation,
            self.upward,
            self.angle,
        )
    }
}

/// The cases of one kind of failure: their count and the first [`LISTED`] of them, or all of them.
fn list(report: &mut String, what: &str, cases: &[&Case], all: bool) {
    if cases.is_empty() {
        return;
    }
    report.push_str(&format!("    {what}: {} cases\n", cases.len()));
    let shown = if all { cases.len() } else { LISTED.min(cases.len()) };
    for c in &cases[..shown] {
        report.push_str(&format!("      {c}\n"));
    }
    if shown < cases.len() {
        report.push_str(&format!("      ... and {} more\n", cases.len() - shown));
    }
}

/// The failing cases of a run: deepest vertex without contact, depth off by more than
/// [`CUBOID_DEPTH_TOLERANCE`], wrong way, no contact at all.
fn failures(report: &mut String, cases: &[Case], all: bool) {
    let missed: Vec<&Case> = cases.iter().filter(|c| !c.deepest_in_contact).collect();
    let off: Vec<&Case> = cases.iter().filter(|c| c.depth_error().abs() > CUBOID_DEPTH_TOLERANCE).collect();
    let wrong: Vec<&Case> = cases.iter().filter(|c| c.wrong_way()).collect();
    let wrong_contacts: Vec<&Case> = cases.iter().filter(|c| c.wrong_contacts > 0).collect();
    let none: Vec<&Case> = cases.iter().filter(|c| c.no_contact()).collect();
    list(report, "deepest vertex without contact", &missed, all);
    list(report, "deepest depth off by more than 1 %", &off, all);
    list(report, "wrong way (net force pushes the mesh further in)", &wrong, all);
    list(report, "wrong-way contacts (a contact pushes the mesh further in)", &wrong_contacts, all);
    list(report, "no contact although the mesh penetrates", &none, all);
}

/// Whether case `c`'s deepest vertex is the closed reach's known limit on the box-mesh ground: its
/// body is at least the pair's `culling_dist` thick along its inward ray (its exit distance), so
/// the ray keeps Hermann's exit distance, and the ray leaves the body before it reaches the slab's
/// top face (or never climbs to it).
fn thick_part_limit(mesh: &RtcdMesh, c: &Case) -> bool {
    let ground = Ground::BoxMesh.mesh();
    let culling = RtcdParams::from_meshes(&[mesh]).for_pair(mesh, &ground).culling_dist;
    let v = c.deepest as usize;
    let exit = mesh.exit_distances()[v];
    let up = (c.rotation * -mesh.normals()[v]).y;
    exit >= culling && (up <= 0.0 || exit < c.depth / up)
}

/// The figures of one mesh on one ground with one [`RtcdParams::closed_reach`] setting, with
/// (`with`) and without (`without`) re-projection, and their cases.
struct Run {
    closed_reach: bool,
    with_cases: Vec<Case>,
    without_cases: Vec<Case>,
    with: Figures,
    without: Figures,
}

impl Run {
    fn new(mesh: &RtcdMesh, ground: Ground, closed_reach: bool) -> Self {
        let with_cases = run_cases(mesh, ground, true, closed_reach);
        let without_cases = run_cases(mesh, ground, false, closed_reach);
        let (with, without) = (Figures::of(&with_cases), Figures::of(&without_cases));
        Self { closed_reach, with_cases, without_cases, with, without }
    }

    fn setting(&self) -> &'static str {
        if self.closed_reach { "closed reach on" } else { "closed reach off" }
    }
}

/// Runs every case of `mesh` on both grounds, with and without re-projection, with
/// [`RtcdParams::closed_reach`] off and on, prints the figures and checks them. `paper_mesh`: one
/// of the paper's own meshes, which keeps the paper's figures on the box-mesh ground.
fn check(name: &str, mesh: &RtcdMesh, paper_mesh: bool) {
    assert!(RtcdParams::from_meshes(&[mesh]).closed_reach, "the closed reach is on by default");
    let mut report = format!(
        "ground deviation, {name} ({} vertices, {} triangles):\n",
        mesh.positions().len(),
        mesh.triangles().len()
    );
    let mut errors = Vec::new();
    for ground in [Ground::Cuboid, Ground::BoxMesh] {
        let runs = [Run::new(mesh, ground, false), Run::new(mesh, ground, true)];
        for run in &runs {
            let (with, without) = (&run.with, &run.without);
            let at = format!("{}, {}", ground.label(), run.setting());
            report.push_str(&format!("  {at}, re-projection: {with}\n"));
            report.push_str(&format!("  {at}, raw rays:      {without}\n"));
            // No contact pushes the mesh further in, in any run (known limits included).
            for (mode, cases, fig) in
                [("re-projection", &run.with_cases, with), ("raw rays", &run.without_cases, without)]
            {
                if fig.wrong_contacts > 0 {
                    report.push_str(&format!("  FAILING on the {at}, {mode}: wrong-way contacts\n"));
                    failures(&mut report, cases, true);
                    errors.push(format!("{name}, {at}, {mode}: {} wrong-way contacts", fig.wrong_contacts));
                }
            }
            match ground {
                Ground::Cuboid => {
                    // The exact box: every case, with or without re-projection (the box's contacts
                    // do not depend on it) and either setting (the box takes no ray).
                    for (mode, cases, fig) in
                        [("re-projection", &run.with_cases, with), ("raw rays", &run.without_cases, without)]
                    {
                        let worst = cases.iter().map(|c| c.depth_error().abs()).fold(0.0, f64::max);
                        let ok = fig.wrong_way == 0
                            && fig.no_contact == 0
                            && cases.iter().all(|c| c.deepest_in_contact)
                            && worst <= CUBOID_DEPTH_TOLERANCE;
                        if !ok {
                            report.push_str(&format!("  FAILING on the {at}, {mode}:\n"));
                            failures(&mut report, cases, true);
                            errors.push(format!("{name}, {at}, {mode}: {fig}"));
                        }
                    }
                    if with.deviation > 0.01 {
                        errors.push(format!("{name}, {at}: deviation {} % > 0.01 %", with.deviation));
                    }
                }
                Ground::BoxMesh if run.closed_reach => {
                    // As exact as the cuboid once re-projected (the raw rays' depth is the ray's
                    // length, and their direction the ray's), but for the closed reach's one limit:
                    // a deepest vertex whose body is at least `culling_dist` thick along its ray
                    // keeps Hermann's exit distance (`rtcd::detect::vertex_reach`), so where its ray
                    // leaves the body before it reaches the slab's top face it gets no contact. Each
                    // case without the deepest vertex in contact must be that one, measured from the
                    // posed vertex alone; every other case is exact.
                    let cases = &run.with_cases;
                    // The limit excuses the deepest vertex alone: the case still has contacts, none
                    // deeper than the true depth.
                    let excused = |c: &Case| {
                        thick_part_limit(mesh, c)
                            && c.contacts > 0
                            && c.reported <= c.depth * (1.0 + CUBOID_DEPTH_TOLERANCE as f32)
                    };
                    let unexplained: Vec<&Case> =
                        cases.iter().filter(|c| !c.deepest_in_contact && !excused(c)).collect();
                    let limited = cases.iter().filter(|c| !c.deepest_in_contact).count() - unexplained.len();
                    let worst = cases
                        .iter()
                        .filter(|c| c.deepest_in_contact)
                        .map(|c| c.depth_error().abs())
                        .fold(0.0, f64::max);
                    if limited > 0 {
                        report.push_str(&format!(
                            "  {at}: {limited} cases whose deepest vertex, in a part at least culling_dist thick, \
                             is deeper than its ray's exit from its body (the closed reach's limit)\n"
                        ));
                    }
                    let ok = with.wrong_way == 0
                        && with.no_contact == 0
                        && unexplained.is_empty()
                        && worst <= CUBOID_DEPTH_TOLERANCE;
                    if !ok {
                        list(
                            &mut report,
                            "deepest vertex without contact, not the closed reach's limit",
                            &unexplained,
                            true,
                        );
                        report.push_str(&format!("  FAILING on the {at}, re-projection:\n"));
                        failures(&mut report, cases, true);
                        errors.push(format!("{name}, {at}, re-projection: {with}"));
                    }
                    if with.deviation > 0.01 {
                        errors.push(format!("{name}, {at}: deviation {} % > 0.01 %", with.deviation));
                    }
                }
                Ground::BoxMesh => {
                    report.push_str(&format!(
                        "  {at}, known limits of Hermann 2008 Alg. 1 (a vertex deeper than its own body is \
                         thick along its inward ray gets no contact), re-projection:\n"
                    ));
                    failures(&mut report, &run.with_cases, false);
                    if paper_mesh {
                        if with.upward < ORIENTATIONS * DEPTHS * 9 / 10 {
                            errors.push(format!("{name}, {at}: only {} cases pushed up", with.upward));
                        }
                        if with.deviation > 0.01 {
                            errors.push(format!(
                                "{name}, {at}: deviation with re-projection {} % > 0.01 %",
                                with.deviation
                            ));
                        }
                        if without.deviation <= with.deviation {
                            errors.push(format!("{name}, {at}: raw rays should deviate more"));
                        }
                    }
                }
            }
        }
        if ground == Ground::BoxMesh {
            // The closed reach against Hermann's exit rule on the general mesh-mesh path: the
            // deepest vertex in contact at least as often, the deepest depth at least as close on
            // average, no more wrong-way cases nor cases without contact, with or without
            // re-projection.
            let [off, on] = &runs;
            for (mode, off, on) in
                [("re-projection", &off.with, &on.with), ("raw rays", &off.without, &on.without)]
            {
                let at = format!("{name}, {}, {mode}", ground.label());
                if on.deepest_contact < off.deepest_contact {
                    errors.push(format!(
                        "{at}: deepest vertex in contact {:.2} % with the closed reach, {:.2} % without",
                        on.deepest_contact, off.deepest_contact
                    ));
                }
                if on.wrong_way > off.wrong_way || on.no_contact > off.no_contact {
                    errors.push(format!(
                        "{at}: {} wrong-way and {} contact-less cases with the closed reach, {} and {} without",
                        on.wrong_way, on.no_contact, off.wrong_way, off.no_contact
                    ));
                }
                if mode == "re-projection" && on.depth_error_mean.abs() > off.depth_error_mean.abs() + 0.001 {
                    errors.push(format!(
                        "{at}: mean depth error {:+.3} % with the closed reach, {:+.3} % without",
                        on.depth_error_mean, off.depth_error_mean
                    ));
                }
            }
        }
    }
    println!("{report}");
    assert!(errors.is_empty(), "{name}:\n{}", errors.join("\n"));
}

/// A closed, manifold, irregular star with thin limbs: a low-poly sphere of jittered radius with
/// `limbs` of its faces, far apart, each inset and extruded into a long, thin, tapered and bent
/// triangular prism. About 200 vertices and 400 triangles for 5 limbs.
fn limbs_mesh(limbs: usize, seed: u64) -> (Vec<Vec3>, Vec<u32>) {
    use rand::Rng;
    const RINGS: usize = 10;
    let mut rng = common::rng(seed);
    // The icosphere repeats the vertices its 20 patches share: welded first, then jittered.
    let (v, i) = shapes::icosphere(0.25, 2);
    let body = RtcdMesh::new("body", &v, &i).unwrap();
    let mut v: Vec<Vec3> = body.positions().iter().map(|p| *p * rng.random_range(0.85f32..1.15)).collect();
    let faces = body.triangles().to_vec();
    let centroid = |v: &[Vec3], f: &[u32; 3]| (v[f[0] as usize] + v[f[1] as usize] + v[f[2] as usize]) / 3.0;
    // Faces at least 55° apart, picked in a seeded order.
    let mut order: Vec<usize> = (0..faces.len()).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.random_range(0..=i));
    }
    let mut picked: Vec<usize> = Vec::new();
    for &f in &order {
        let d = centroid(&v, &faces[f]).normalize();
        if picked.iter().all(|&g| centroid(&v, &faces[g]).normalize().dot(d) < 55f32.to_radians().cos()) {
            picked.push(f);
            if picked.len() == limbs {
                break;
            }
        }
    }
    assert_eq!(picked.len(), limbs, "room for {limbs} limbs");
    let mut indices: Vec<u32> =
        faces.iter().enumerate().filter(|(i, _)| !picked.contains(i)).flat_map(|(_, f)| *f).collect();
    // Side quad between directed edge a→b of one ring and the same edge of the next, wound like the
    // removed face so that the surface stays consistently oriented.
    let quad = |indices: &mut Vec<u32>, a0: u32, b0: u32, a1: u32, b1: u32| {
        indices.extend([a0, b0, b1, a0, b1, a1]);
    };
    for &f in &picked {
        let face = faces[f];
        let c0 = centroid(&v, &face);
        let n = (v[face[1] as usize] - v[face[0] as usize])
            .cross(v[face[2] as usize] - v[face[0] as usize])
            .normalize();
        let offsets: Vec<Vec3> = face.iter().map(|&i| v[i as usize] - c0).collect();
        let mean = offsets.iter().map(|o| o.length()).sum::<f32>() / 3.0;
        // Cross-section circumradius 0.02-0.035, length 0.5-0.9, bent sideways by up to ~20°.
        let radius = rng.random_range(0.02f32..0.035);
        let scale = radius / mean;
        let length = rng.random_range(0.5f32..0.9);
        let side = n.any_orthonormal_vector();
        let side = Quat::from_axis_angle(n, rng.random_range(0.0..std::f32::consts::TAU)) * side;
        let bend = side * rng.random_range(0.1f32..0.35);
        // Ring 0: the face inset to the limb's cross-section, in the face's plane.
        let mut ring: Vec<u32> = offsets
            .iter()
            .map(|o| {
                v.push(c0 + *o * scale);
                (v.len() - 1) as u32
            })
            .collect();
        for j in 0..3 {
            quad(&mut indices, face[j], face[(j + 1) % 3], ring[j], ring[(j + 1) % 3]);
        }
        let mut centre = c0;
        for k in 1..=RINGS {
            let s = k as f32 / RINGS as f32;
            let tangent = (n + bend * s).normalize();
            centre += tangent * (length / RINGS as f32);
            let turn = Quat::from_rotation_arc(n, tangent);
            let taper = scale * (1.0 - 0.5 * s) * rng.random_range(0.9f32..1.1);
            let next: Vec<u32> = offsets
                .iter()
                .map(|o| {
                    v.push(centre + turn * (*o * taper));
                    (v.len() - 1) as u32
                })
                .collect();
            for j in 0..3 {
                quad(&mut indices, ring[j], ring[(j + 1) % 3], next[j], next[(j + 1) % 3]);
            }
            ring = next;
        }
        indices.extend([ring[0], ring[1], ring[2]]);
    }
    (v, indices)
}

#[test]
fn icosphere_ground_deviation() {
    // Frequency 3: 92 vertices, the nearest icosphere to the paper's 70-vertex sphere.
    let (v, i) = shapes::icosphere(0.5, 3);
    let sphere = RtcdMesh::new("icosphere", &v, &i).unwrap();
    check("icosphere", &sphere, true);
}

#[test]
fn irregular_blob_ground_deviation() {
    check("blob_900", &common::asset("blob_900"), true);
}

#[test]
fn torus_ground_deviation() {
    check("torus_900", &common::asset("torus_900"), false);
}

#[test]
fn bent_tube_ground_deviation() {
    check("bent_tube_896", &common::asset("bent_tube_896"), false);
}

#[test]
fn fine_blob_ground_deviation() {
    check("blob_2130", &common::asset("blob_2130"), false);
}

#[test]
fn knot_ground_deviation() {
    check("knot_3456", &common::asset("knot_3456"), false);
}

#[test]
fn coil_ground_deviation() {
    check("coil_3458", &common::asset("coil_3458"), false);
}

#[test]
fn bracket_ground_deviation() {
    check("u_bracket", &common::asset("u_bracket"), false);
}

#[test]
fn thin_limbs_ground_deviation() {
    let (v, i) = limbs_mesh(5, 7);
    let mesh = RtcdMesh::new("limbs", &v, &i).unwrap();
    let r = mesh.report();
    assert!(r.notes().is_empty(), "the limbs mesh needed repairs: {:?}", r.notes());
    assert!(r.closed && r.components == 1, "the limbs mesh is not one closed surface: {r:?}");
    assert_eq!((mesh.positions().len(), mesh.triangles().len()), (v.len(), i.len() / 3));
    check("limbs", &mesh, false);
}

#[test]
fn thin_plate_ground_deviation() {
    // 1 × 0.01 × 1.
    check("plate", &common::cuboid("plate", Vec3::new(0.5, 0.005, 0.5)), false);
}
