//! The motion rays (`rtcd::detect::pair_motion_contacts`; the GPU backend traces the paths on the
//! device, `shaders/motion_paths.wgsl`, and makes their contacts on the host with the CPU backend's
//! code) run for the same pairs on both backends, with the same results, with either tracer: a seeded scene of thin plates (1 m,
//! 1 cm thick, as ordinary triangle meshes) thrown through a lying plate and a torus at 0.1-0.3 m
//! a tick, tilted, with their poses of the tick before (`PairInput::previous`), and of the same
//! plates flying past 3-6 m away, each pair's key kept from tick to tick. The far pairs keep no
//! record, so most of their ticks are quiet steps, which the CPU backend skips whole, motion rays
//! included: the GPU backend must skip them too. Each tick: the same motion rays and motion
//! contacts (counts), the same pairs marked moving, and every contact both backends keep for a pair
//! (named by its features) at the same depth within 1e-5 m, at most 0.1 % of the contacts kept by
//! one backend only (none on lavapipe): the motion rays' contacts are made on
//! the host by the same function from the same poses, the vertex rays' agree within the device's
//! rounding. From the second tick on, the pairs' paths are traced on the device (the first tick's
//! pairs are new in their slots, whose last poses the device does not have yet), except in a step
//! whose hits outgrow their read, sized from the last step's, which the host traces again.

mod common;

use glam::{Quat, Vec3};
use rand::Rng;
use rtcd::{
    NarrowPhase, PairInput, PairKey, Pose, RtcdMesh, RtcdParams, StepOptions, StepOutput, TracerKind,
    contact::{ContactCandidate, FeatureId},
    shapes,
};
use rtcd_wgpu::{GpuNarrowPhase, HostPhases};

const TICKS: usize = 40;

/// A pair's path: shape 2's pose in shape 1's frame at each tick.
struct Path {
    mesh1: usize,
    mesh2: usize,
    start: Vec3,
    velocity: Vec3,
    rotation: Quat,
    spin: Quat,
}

impl Path {
    fn pose(&self, tick: usize) -> Pose {
        let mut q = self.rotation;
        for _ in 0..tick {
            q = self.spin * q;
        }
        Pose::new(self.start + self.velocity * tick as f32, q.normalize())
    }
}

/// A contact's features, which name it on both backends.
fn features(c: &ContactCandidate) -> (FeatureId, FeatureId) {
    (c.fid1, c.fid2)
}

/// One tick of `pairs` on both backends. From the second tick the device traces every pair's paths
/// (the host none), except in a step whose hits outgrew their read; both trace the same motion
/// rays, make the same motion contacts and mark the same pairs moving.
fn step_both(
    cpu: &mut NarrowPhase,
    gpu: &mut GpuNarrowPhase,
    pairs: &[PairInput],
    opts: &StepOptions,
    tick: usize,
) -> (StepOutput, StepOutput, HostPhases) {
    let c = cpu.step(pairs, opts);
    let g = gpu.step(pairs, opts).unwrap();
    let phases = gpu.last_host_phases();
    if tick > 1 && !phases.motion_read_short {
        assert_eq!(phases.motion_on_host, 0, "tick {tick}: pairs whose paths the host traced");
    }
    assert_eq!(
        (c.metrics.motion_rays, c.metrics.motion_contacts),
        (g.metrics.motion_rays, g.metrics.motion_contacts),
        "tick {tick}: motion rays and contacts (CPU, GPU)"
    );
    for (k, (cp, gp)) in c.pairs.iter().zip(&g.pairs).enumerate() {
        assert_eq!(cp.moving, gp.moving, "tick {tick}, pair {k}: moving");
    }
    (c, g, phases)
}

#[test]
fn motion_rays_run_for_the_same_pairs_on_both_backends() {
    // The device's paths with either tracer (`motion_paths.wgsl` with and without `TRACER_BVH`).
    // And without re-projection, whose predictions the device sorts by their distance along the
    // path, not along the face's normal.
    for (tracer, reprojection) in
        [(TracerKind::Bvh, true), (TracerKind::BruteForce, true), (TracerKind::Bvh, false)]
    {
        run(tracer, reprojection);
    }
}

fn run(tracer: TracerKind, reprojection: bool) {
    let d = common::device();
    let mesh = |name: &str, (v, i): shapes::MeshData| RtcdMesh::new(name, &v, &i).unwrap();
    let meshes = [
        mesh("plate", shapes::subdivided_cuboid(Vec3::new(0.5, 0.005, 0.5), 4)),
        mesh("torus", shapes::torus(0.4, 0.12, 24, 12)),
    ];
    let mut r = common::rng(0x6d6f_7469);
    let mut paths = Vec::new();
    for k in 0..48 {
        let far = k % 3 == 2;
        let speed = r.random_range(0.1..0.3);
        let tilt = Quat::from_axis_angle(
            Vec3::new(r.random_range(-1.0..1.0), 0.0, r.random_range(-1.0..1.0)).normalize_or(Vec3::X),
            r.random_range(0.0..0.6),
        );
        let side = Vec3::new(r.random_range(-0.2..0.2), 0.0, r.random_range(-0.2..0.2));
        let (start, velocity) = if far {
            // Past the other body, several metres away, at the same speed.
            let off = Vec3::new(r.random_range(3.0..6.0), 0.0, r.random_range(-1.0..1.0));
            (off + Vec3::Y * 2.0, Vec3::NEG_Y * speed)
        } else {
            // Down through it, from a little above.
            (side + Vec3::Y * r.random_range(0.2..0.5), Vec3::NEG_Y * speed)
        };
        paths.push(Path {
            mesh1: k % 2,
            mesh2: 0,
            start,
            velocity,
            rotation: tilt,
            spin: Quat::from_rotation_y(r.random_range(-0.05..0.05)),
        });
    }
    let refs: Vec<&RtcdMesh> = meshes.iter().collect();
    let params = RtcdParams { tracer, reprojection, ..RtcdParams::from_meshes(&refs) };
    let mut cpu = NarrowPhase::new(params).unwrap();
    let mut gpu = GpuNarrowPhase::new(&d.device, &d.queue, params).unwrap();
    let opts = StepOptions {
        prediction_distance: 0.02,
        keep_contacts: true,
        skip_manifolds: true,
        ..Default::default()
    };
    let (mut rays, mut contacts, mut moving_pairs, mut compared) = (0u64, 0u64, 0usize, 0usize);
    let (mut total, mut unmatched) = (0usize, 0usize);
    let (mut on_device, mut short) = (0u64, 0usize);
    let size = 1.0f32;
    for tick in 1..TICKS {
        let pairs: Vec<PairInput> = paths
            .iter()
            .enumerate()
            .map(|(k, p)| {
                PairInput::new(
                    PairKey::new(2 * k as u64, 2 * k as u64 + 1),
                    &meshes[p.mesh1],
                    &meshes[p.mesh2],
                    p.pose(tick),
                )
                .with_previous(Some(p.pose(tick - 1)))
            })
            .collect();
        let (c, g, phases) = step_both(&mut cpu, &mut gpu, &pairs, &opts, tick);
        short += usize::from(phases.motion_read_short);
        on_device += u64::from(phases.motion_on_device);
        rays += c.metrics.motion_rays;
        contacts += c.metrics.motion_contacts;
        for (k, (cp, gp)) in c.pairs.iter().zip(&g.pairs).enumerate() {
            moving_pairs += usize::from(cp.moving);
            // The contacts both backends kept (motion rays' and vertex rays'), by their features;
            // those only one of them kept are counted.
            total += cp.contacts.len() + gp.contacts.len();
            unmatched += gp
                .contacts
                .iter()
                .filter(|y| !cp.contacts.iter().any(|x| features(x) == features(y)))
                .count();
            for x in &cp.contacts {
                let Some(y) = gp.contacts.iter().find(|y| features(y) == features(x)) else {
                    unmatched += 1;
                    continue;
                };
                assert!(
                    (x.dist - y.dist).abs() <= 1e-5 * size,
                    "tick {tick}, pair {k}: {:?} at {} (CPU) and {} (GPU)",
                    features(x),
                    x.dist,
                    y.dist
                );
                compared += 1;
            }
        }
    }
    println!(
        "{tracer:?}, re-projection {reprojection}: motion rays {rays}, motion contacts {contacts}, moving pair-ticks {moving_pairs}, contacts compared {compared}, kept by one backend only {unmatched} of {total}, pair-ticks traced on the device {on_device}, steps whose hits outgrew their read {short}"
    );
    // At most 0.1 % of the contacts kept by one backend only (a relative pose made on the device
    // rounds a hair apart from the host's).
    assert!(unmatched * 1000 <= total, "{unmatched} of {total} contacts kept by one backend only");
    assert!(on_device > 200, "the device must trace the paths: {on_device} pair-ticks");
    assert!(short <= 2, "{short} steps' motion hits outgrew their read");
    assert!(rays > 1_000, "the scene must cast motion rays: {rays}");
    assert!(contacts > 50, "the plates must tunnel: {contacts} motion contacts");
    assert!(compared > 100, "contacts found by both: {compared}");
}

/// Rim vertices (`RtcdMesh::rim_motions`) are traced along their paths whenever they move, far
/// below the pairs' displacement threshold, on the device as on the CPU: flat tetrahedra 1 mm high
/// sinking 0.5-2 mm a tick, tilted, onto and into a 12-triangle box floor and a 1 cm plate (both
/// ordinary meshes) or rising as fast into a ball above them, some with the tetrahedron as shape 1,
/// and the same 8 m away (no path: their candidate regions are empty). The ball's vertices moving
/// into the tetrahedron are traced once they move more than half its thinnest extent, below the
/// pair's displacement threshold too (`rtcd::detect::MotionLengths`). Each tick both backends
/// trace the same paths and make the same motion contacts, the same contacts at the same depths
/// within 1e-5 m; from the second tick the device traces them. Without the rim gate in
/// `motion_paths.wgsl` the device traces none of the tetrahedra's corners' paths; with one floor
/// for both directions, not the ball's.
#[test]
fn rim_vertices_are_traced_on_both_backends() {
    let d = common::device();
    let mesh = |name: &str, (v, i): shapes::MeshData| RtcdMesh::new(name, &v, &i).unwrap();
    let meshes = [
        mesh("box floor", shapes::cuboid(Vec3::new(5.0, 0.5, 5.0))),
        mesh("plate", shapes::cuboid(Vec3::new(0.75, 0.005, 0.75))),
        mesh("flat tetrahedron", shapes::flat_tetrahedron(1.0, 0.001)),
        mesh("ball", shapes::icosphere(0.1, 2)),
    ];
    assert_eq!(meshes[2].rim_motions().iter().filter(|m| m.is_finite()).count(), 3);
    assert!([0, 1, 3].iter().all(|&m| meshes[m].least_rim_motion().is_infinite()));
    let mut r = common::rng(0x7269_6d73);
    let mut paths = Vec::new();
    for k in 0..36 {
        // The tetrahedron onto the floor or the plate, or rising against a ball above it (the
        // ball's vertices moving into the tetrahedron).
        let (other, top) = [(0, 0.5), (1, 0.005), (3, -0.1)][k % 3];
        let speed = r.random_range(0.0005..0.002);
        let tilt = Quat::from_axis_angle(
            Vec3::new(r.random_range(-1.0..1.0), 0.0, r.random_range(-1.0..1.0)).normalize_or(Vec3::X),
            r.random_range(0.0..0.05),
        );
        let side = Vec3::new(r.random_range(-0.2..0.2), 0.0, r.random_range(-0.2..0.2));
        let far = if k % 5 == 4 { Vec3::new(8.0, 0.0, 0.0) } else { Vec3::ZERO };
        let (gap, velocity) = if other == 3 {
            // Below the ball, its top rising.
            (-r.random_range(0.002..0.02) - 0.001, Vec3::Y * speed)
        } else {
            (r.random_range(0.002..0.02), Vec3::NEG_Y * speed)
        };
        paths.push(Path {
            mesh1: other,
            mesh2: 2,
            start: side + far + Vec3::Y * (top + gap),
            velocity,
            rotation: tilt,
            spin: Quat::from_rotation_y(r.random_range(-0.002..0.002)),
        });
    }
    let refs: Vec<&RtcdMesh> = meshes.iter().collect();
    for tracer in [TracerKind::Bvh, TracerKind::BruteForce] {
        let params = RtcdParams { tracer, ..RtcdParams::from_meshes(&refs) };
        // Every pair moves far less than its displacement threshold a tick: without rim vertices
        // no path would be traced.
        for p in &paths {
            let threshold = params.for_pair(&meshes[p.mesh1], &meshes[2]).displacement_threshold;
            assert!(p.velocity.length() < threshold, "{} against {threshold}", p.velocity.length());
        }
        let mut cpu = NarrowPhase::new(params).unwrap();
        let mut gpu = GpuNarrowPhase::new(&d.device, &d.queue, params).unwrap();
        let opts = StepOptions {
            prediction_distance: 0.02,
            keep_contacts: true,
            skip_manifolds: true,
            ..Default::default()
        };
        let (mut rays, mut contacts, mut on_device, mut compared) = (0u64, 0u64, 0u64, 0usize);
        // Pair-ticks of the ball that traced paths: the ball's vertices (the tetrahedron's rim
        // corners stay out of the ball's reach).
        let mut ball_moving = 0usize;
        for tick in 1..TICKS {
            // Every fourth pair the other way round: the tetrahedron is shape 1, and the paths
            // into it are direction 1's.
            let pairs: Vec<PairInput> = paths
                .iter()
                .enumerate()
                .map(|(k, p)| {
                    let key = PairKey::new(2 * k as u64, 2 * k as u64 + 1);
                    let (now, then) = (p.pose(tick), p.pose(tick - 1));
                    if k % 4 == 3 {
                        PairInput::new(key, &meshes[p.mesh2], &meshes[p.mesh1], now.inverse())
                            .with_previous(Some(then.inverse()))
                    } else {
                        PairInput::new(key, &meshes[p.mesh1], &meshes[p.mesh2], now).with_previous(Some(then))
                    }
                })
                .collect();
            let (c, g, phases) = step_both(&mut cpu, &mut gpu, &pairs, &opts, tick);
            on_device += u64::from(phases.motion_on_device);
            rays += c.metrics.motion_rays;
            contacts += c.metrics.motion_contacts;
            for (k, (cp, gp)) in c.pairs.iter().zip(&g.pairs).enumerate() {
                ball_moving += usize::from(cp.moving && paths[k].mesh1 == 3);
                assert_eq!(cp.contacts.len(), gp.contacts.len(), "tick {tick}, pair {k}: contacts kept");
                for x in &cp.contacts {
                    let y = gp.contacts.iter().find(|y| features(y) == features(x)).unwrap_or_else(|| {
                        panic!("tick {tick}, pair {k}: {:?} only on the CPU", features(x))
                    });
                    assert!(
                        (x.dist - y.dist).abs() <= 1e-5,
                        "tick {tick}, pair {k}: {:?} at {} (CPU) and {} (GPU)",
                        features(x),
                        x.dist,
                        y.dist
                    );
                    compared += 1;
                }
            }
        }
        println!(
            "{tracer:?}: paths {rays}, motion contacts {contacts}, contacts compared {compared}, pair-ticks traced on the device {on_device}, ball pair-ticks with paths {ball_moving}"
        );
        assert!(
            ball_moving > 50,
            "the ball's vertices must be traced into the tetrahedron: {ball_moving} pair-ticks"
        );
        assert!(rays > 500, "rim vertices must be traced: {rays} paths");
        assert!(contacts > 100, "the tetrahedra's corners must get contacts from their paths: {contacts}");
        assert!(on_device > 200, "the device must trace the paths: {on_device} pair-ticks");
    }
}
