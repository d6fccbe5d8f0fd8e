//! The ground-deviation protocol of Lehericey, Gouranton and Arnaldi 2014 (§5.4, Table 1) on the GPU
//! backend: each mesh pressed into a ground slab at 400 orientations × 20 depths (1-20 % of its
//! height), every case kept, all of them in one step (one pair each). The slab is a cuboid (the
//! exact box) or a closed 12-triangle box mesh (vertex rays both ways, with the closed reach on, as
//! by default). For every case, measured against the posed vertices alone:
//! - the deepest penetrating vertex gets a contact, and the deepest reported depth is within 1 % of
//!   the true one; on the box mesh but for the closed reach's one limit, each such case identified
//!   from the posed vertex alone and counted: a deepest vertex in a part at least `culling_dist`
//!   thick along its ray keeps Hermann's exit distance (`rtcd::detect::vertex_reach`), and gets no
//!   contact when its ray leaves its body before it reaches the slab's top (the knot's tubes pressed
//!   in deeper than they are thick);
//! - no contact pushes the mesh further in (each contact's separating direction points up);
//! - the deepest reported depth is the CPU backend's on the same case within 1e-4 relative.
//!
//! The meshes: an icosphere (the paper's sphere), a 1 cm plate and every mesh of the project's
//! assets (blobs, a torus, a bent tube, a knot and a coil of tubes, a low-poly bracket). The GPU ran the step: its counters came
//! back from the device.

mod common;

use glam::Vec3;
use rtcd::{
    ContactCandidate, FeatureId, NarrowPhase, PairInput, PairKey, Pose, RtcdMesh, RtcdParams, StepOptions,
    shapes,
};
use rtcd_wgpu::GpuNarrowPhase;

const ORIENTATIONS: usize = 400;
const DEPTHS: usize = 20;
const GROUND_HALF: Vec3 = Vec3::new(20.0, 1.0, 20.0);
/// The largest relative error of the deepest reported depth.
const DEPTH_TOLERANCE: f32 = 0.01;
/// The largest relative difference of the deepest reported depth between the backends.
const AGREEMENT: f32 = 1e-4;
/// Cases (pairs) per GPU step.
const STEP: usize = 2000;

/// One case: the mesh's pose, its deepest vertex and that vertex's true depth.
struct Case {
    pose: Pose,
    deepest: u32,
    depth: f32,
}

fn cases(mesh: &RtcdMesh, ground_pose: &Pose) -> Vec<Case> {
    let top = ground_pose.transform_point(Vec3::new(0.0, GROUND_HALF.y, 0.0)).y;
    let mut rng = common::rng(2014);
    let mut out = Vec::with_capacity(ORIENTATIONS * DEPTHS);
    for _ in 0..ORIENTATIONS {
        let q = common::random_rotation(&mut rng);
        let ys: Vec<f32> = mesh.positions().iter().map(|p| (q * *p).y).collect();
        let lowest = ys.iter().copied().fold(f32::INFINITY, f32::min);
        let height = ys.iter().copied().fold(f32::NEG_INFINITY, f32::max) - lowest;
        for step in 1..=DEPTHS {
            let pressed = height * 0.2 * step as f32 / DEPTHS as f32;
            let pose = Pose::new(Vec3::new(0.0, top - lowest - pressed, 0.0), q);
            let (deepest, lowest_y) = mesh
                .positions()
                .iter()
                .enumerate()
                .map(|(i, p)| (i as u32, pose.transform_point(*p).y))
                .fold((0, f32::INFINITY), |best, c| if c.1 < best.1 { c } else { best });
            out.push(Case { pose, deepest, depth: top - lowest_y });
        }
    }
    out
}

/// Whether case `c`'s deepest vertex is the closed reach's known limit on a box-mesh ground: its
/// body is at least the pair's `culling` distance thick along its inward ray (its exit distance), so
/// the ray keeps Hermann's exit distance, and it leaves the body before it reaches the slab's top
/// face (or never climbs to it).
fn thick_part_limit(mesh: &RtcdMesh, c: &Case, culling: f32) -> bool {
    let v = c.deepest as usize;
    let exit = mesh.exit_distances()[v];
    let up = c.pose.transform_vector(-mesh.normals()[v]).y;
    exit >= culling && (up <= 0.0 || exit < c.depth / up)
}

/// The deepest reported depth of each case, checked against the case. `limit`: the closed reach's
/// limit applies (a box-mesh ground), with the mesh and the pair's `culling_dist`.
fn check(
    name: &str,
    ground: &str,
    limit: Option<(&RtcdMesh, f32)>,
    cases: &[Case],
    contacts: &[&[ContactCandidate]],
    errors: &mut Vec<String>,
) -> Vec<f32> {
    let mut deepest = Vec::with_capacity(cases.len());
    let (mut missed, mut off, mut wrong, mut limited) = (0, 0, 0, 0);
    for (k, (case, found)) in cases.iter().zip(contacts).enumerate() {
        let pen: Vec<&ContactCandidate> = found.iter().filter(|c| c.dist < 0.0).collect();
        let reported = pen.iter().map(|c| -c.dist).fold(0.0, f32::max);
        let in_contact = pen.iter().any(|c| c.fid1 == FeatureId::Vertex(case.deepest));
        let wrong_way = pen.iter().filter(|c| case.pose.transform_vector(-c.n1).y < 0.0).count();
        let error = (reported - case.depth) / case.depth;
        // The limit excuses the deepest vertex alone: the case still has contacts, none the wrong
        // way, none deeper than the true depth.
        if !in_contact
            && !pen.is_empty()
            && reported <= case.depth * (1.0 + DEPTH_TOLERANCE)
            && limit.is_some_and(|(mesh, culling)| thick_part_limit(mesh, case, culling))
        {
            limited += 1;
            if wrong_way > 0 {
                wrong += 1;
            }
            deepest.push(reported);
            continue;
        }
        if !in_contact || error.abs() > DEPTH_TOLERANCE || wrong_way > 0 {
            if missed + off + wrong < 5 {
                errors.push(format!(
                    "{name}, {ground}, case {k}: deepest vertex {} {}, depth {:.5} reported {reported:.5} \
                     ({:+.2} %), {wrong_way} of {} contacts the wrong way",
                    case.deepest,
                    if in_contact { "in contact" } else { "without contact" },
                    case.depth,
                    100.0 * error,
                    pen.len()
                ));
            }
            missed += usize::from(!in_contact);
            off += usize::from(error.abs() > DEPTH_TOLERANCE);
            wrong += usize::from(wrong_way > 0);
        }
        deepest.push(reported);
    }
    println!(
        "{name}, {ground} (GPU): {} cases, deepest vertex without contact {missed}, depth off by more than 1 % \
         {off}, with a wrong-way contact {wrong}; the closed reach's limit {limited}",
        cases.len()
    );
    if missed + off + wrong > 0 {
        errors.push(format!("{name}, {ground}: {missed} missed, {off} off, {wrong} wrong-way"));
    }
    deepest
}

fn run(name: &str, mesh: &RtcdMesh, errors: &mut Vec<String>) {
    let ground_pose = Pose::from_translation(Vec3::new(0.0, -1.0, 0.0));
    let cases = cases(mesh, &ground_pose);
    let (v, i) = shapes::cuboid(GROUND_HALF);
    let grounds = [
        ("cuboid ground", RtcdMesh::cuboid("ground", GROUND_HALF).unwrap()),
        ("box-mesh ground", RtcdMesh::new("ground mesh", &v, &i).unwrap()),
    ];
    for (ground_name, ground) in &grounds {
        let params = RtcdParams { iterative: false, ..RtcdParams::from_meshes(&[mesh]) };
        assert!(params.closed_reach && params.reprojection);
        let inputs: Vec<PairInput> = cases
            .iter()
            .enumerate()
            .map(|(k, c)| {
                PairInput::from_world(PairKey::new(2 * k as u64 + 1, 0), mesh, c.pose, ground, ground_pose)
            })
            .collect();
        let opts = StepOptions { keep_contacts: true, ..Default::default() };
        let d = common::device();
        let mut gpu = GpuNarrowPhase::new(&d.device, &d.queue, params).unwrap();
        // In steps of at most `STEP` pairs: a standard step lays out a ray for every vertex of a
        // pair, and the device's buffers have a size limit.
        let mut gpu_contacts: Vec<Vec<ContactCandidate>> = Vec::with_capacity(inputs.len());
        for chunk in inputs.chunks(STEP) {
            let g = gpu.step(chunk, &opts).unwrap();
            assert!(
                g.metrics.readback_bytes > 0
                    && g.metrics.device_wait.is_some()
                    && g.metrics.standard_rays > 0,
                "{name}, {ground_name}: the step did not run on the device: {:?}",
                g.metrics
            );
            assert!(g.pairs.iter().all(|p| p.error.is_none()));
            gpu_contacts.extend(g.pairs.into_iter().map(|p| p.contacts));
        }
        let gpu_contacts: Vec<&[ContactCandidate]> = gpu_contacts.iter().map(|c| c.as_slice()).collect();
        let culling = params.for_pair(mesh, ground).culling_dist;
        let limit = ground.cuboid_half_extents().is_none().then_some((mesh, culling));
        let gpu_deepest = check(name, ground_name, limit, &cases, &gpu_contacts, errors);
        let c = NarrowPhase::new(params).unwrap().step(&inputs, &opts);
        let disagree = c
            .pairs
            .iter()
            .zip(&gpu_deepest)
            .filter(|(p, g)| {
                let cpu = p.contacts.iter().filter(|c| c.dist < 0.0).map(|c| -c.dist).fold(0.0, f32::max);
                (cpu - **g).abs() > AGREEMENT * cpu.max(1e-3)
            })
            .count();
        if disagree > 0 {
            errors.push(format!(
                "{name}, {ground_name}: {disagree} cases' deepest depth differs from the CPU's"
            ));
        }
    }
}

#[test]
fn ground_deviation_on_the_gpu() {
    let (v, i) = shapes::icosphere(0.5, 3);
    let (pv, pi) = shapes::cuboid(Vec3::new(0.5, 0.005, 0.5));
    let meshes = [
        ("icosphere", RtcdMesh::new("icosphere", &v, &i).unwrap()),
        ("plate 1 x 0.01 x 1", RtcdMesh::new("plate", &pv, &pi).unwrap()),
        ("blob_900", common::asset("blob_900")),
        ("blob_2130", common::asset("blob_2130")),
        ("torus_900", common::asset("torus_900")),
        ("bent_tube_896", common::asset("bent_tube_896")),
        ("knot_3456", common::asset("knot_3456")),
        ("coil_3458", common::asset("coil_3458")),
        ("u_bracket", common::asset("u_bracket")),
    ];
    let mut errors = Vec::new();
    for (name, mesh) in &meshes {
        run(name, mesh, &mut errors);
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}
