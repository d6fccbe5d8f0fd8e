//! Twenty concave meshes dropped into a box (a cuboid floor and four cuboid walls) settle into a pile:
//! kinetic energy under a stated bound after 10 s, no body below the floor: under 1 % of the size
//! at rest, and under 5 % at any tick (impacts at up to ~3 m/s move 5 cm per tick, more than Rapier's
//! 2 cm prediction distance, as for any shape in Rapier).

mod common;

use common::{World, asset, lowest_vertex, rtcd_shape, size};
use glam::Vec3Swizzles;
use rapier3d::prelude::*;
use rtcd::{BackendError, NarrowPhase, NarrowPhaseBackend, PairInput, RtcdParams, StepOptions, StepOutput};
use rtcd_rapier::RtcdDriver;

const BODIES: usize = 20;
/// Half the inner width of the box.
const HALF: f32 = 1.8;
const TICKS: usize = 600;
/// Kinetic energy bound at the end, in joules, for the whole pile (about 6 kg of bodies at
/// density 1): the same as every body moving at under 2 cm/s.
const KE_BOUND: f32 = 2e-3;

#[test]
fn twenty_concave_meshes_come_to_rest_in_a_box() {
    pile(false);
}

/// The same pile with Rapier's contact recycling on: the batch holds the pairs Rapier recycles
/// (`RtcdDriver::detect_recycling`), and its guess of which ones is never wrong where it matters: no
/// pair it held reaches the dispatcher (no cache miss).
#[test]
fn twenty_concave_meshes_come_to_rest_in_a_box_with_contact_recycling() {
    pile(true);
}

/// A backend that keeps no pair by key (the trait's defaults): the driver then gives the pairs it
/// holds as inputs with `hold` set.
struct InputsOnly(NarrowPhase);

impl NarrowPhaseBackend for InputsOnly {
    fn name(&self) -> String {
        "cpu, inputs only".into()
    }
    fn params(&self) -> &RtcdParams {
        self.0.params()
    }
    fn step(&mut self, pairs: &[PairInput], opts: &StepOptions) -> Result<StepOutput, BackendError> {
        Ok(self.0.step(pairs, opts))
    }
}

/// Held pairs given to the backend by key (the CPU backend) or as inputs (a backend that does not
/// hold by key) keep the same state: the piles are the same to the bit.
#[test]
fn pairs_held_by_key_or_as_inputs_give_the_same_pile() {
    let run = |by_key: bool| {
        let meshes = [asset("blob_900"), asset("torus_900"), asset("bent_tube_896")];
        let params = RtcdParams::from_meshes(&meshes.iter().map(|m| &**m).collect::<Vec<_>>());
        let driver = if by_key {
            RtcdDriver::new(params).unwrap()
        } else {
            RtcdDriver::with_backend(Box::new(InputsOnly(NarrowPhase::new(params).unwrap()))).unwrap()
        };
        let (mut w, bodies, _) = build(driver, true);
        let (mut held, mut misses) = (0, 0);
        for _ in 0..150 {
            w.step();
            let m = w.driver.as_ref().unwrap().metrics();
            held += m.narrow_phase.held_pairs;
            misses += m.cache.misses;
        }
        let poses: Vec<Pose> = bodies.iter().map(|(b, _)| w.pose(*b)).collect();
        (poses, held, misses)
    };
    let (by_key, by_input) = (run(true), run(false));
    println!("held pairs in 150 ticks: {} by key, {} as inputs", by_key.1, by_input.1);
    assert!(by_key.1 > 500, "only {} pairs held", by_key.1);
    assert_eq!(by_key.1, by_input.1);
    assert_eq!((by_key.2, by_input.2), (0, 0), "no cache miss");
    assert_eq!(by_key.0, by_input.0);
}

/// The pile's world: the box, and the bodies with their meshes, in the air; the largest mesh size.
fn build(
    driver: RtcdDriver,
    recycling: bool,
) -> (World, Vec<(RigidBodyHandle, std::sync::Arc<rtcd::RtcdMesh>)>, f32) {
    let meshes = [asset("blob_900"), asset("torus_900"), asset("bent_tube_896")];
    let mut w = World::ours(driver);
    w.params.contact_recycling = recycling;
    // Floor top at y = 0, inner size 3.6 x 3.6, walls 2.5 high.
    let (half, wall) = (HALF, 0.25f32);
    w.add_ground(Vector::new(half + 2.0 * wall, 0.5, half + 2.0 * wall), 0.0);
    for (x, z, hx, hz) in [
        (half + wall, 0.0, wall, half + 2.0 * wall),
        (-(half + wall), 0.0, wall, half + 2.0 * wall),
        (0.0, half + wall, half, wall),
        (0.0, -(half + wall), half, wall),
    ] {
        w.add_fixed_cuboid(Vector::new(hx, 1.25, hz), Vector::new(x, 1.25, z));
    }
    let mut bodies = Vec::new();
    for k in 0..BODIES {
        let (layer, cell) = (k / 9, k % 9);
        let pos = Vector::new(
            ((cell % 3) as f32 - 1.0) * 1.15,
            0.8 + 1.2 * layer as f32,
            ((cell / 3) as f32 - 1.0) * 1.15,
        );
        let rot = Rotation::from_euler(glam::EulerRot::XYZ, 0.7 * k as f32, 1.3 * k as f32, 0.4 * k as f32);
        let mesh = &meshes[k % meshes.len()];
        let (b, _) = w.add_body(rtcd_shape(mesh), Pose::from_parts(pos, rot));
        bodies.push((b, mesh.clone()));
    }
    let size = meshes.iter().map(|m| size(m)).fold(0.0, f32::max);
    (w, bodies, size)
}

fn pile(recycling: bool) {
    let meshes = [asset("blob_900"), asset("torus_900"), asset("bent_tube_896")];
    let refs: Vec<_> = meshes.iter().map(|m| &**m).collect();
    let (mut w, bodies, size) = build(RtcdDriver::new(RtcdParams::from_meshes(&refs)).unwrap(), recycling);
    let half = HALF;

    let (mut lowest, mut misses, mut pairs, mut held, mut detect) =
        (f32::INFINITY, 0, 0, 0, std::time::Duration::ZERO);
    let start = std::time::Instant::now();
    for tick in 0..TICKS {
        w.step();
        let m = w.driver.as_ref().unwrap().metrics();
        misses += m.cache.misses;
        pairs = pairs.max(m.batch_pairs);
        held += m.narrow_phase.held_pairs;
        detect += m.total_time();
        for (b, mesh) in &bodies {
            let low = lowest_vertex(mesh, &w.pose(*b));
            lowest = lowest.min(low);
            assert!(
                low > -0.05 * size,
                "tick {tick}: a body sank {low} below the floor (more than 5 % of the size)"
            );
        }
    }
    let wall_time = start.elapsed();
    let ke = w.kinetic_energy();
    let mass: f32 = bodies.iter().map(|(b, _)| w.bodies[*b].mass()).sum();
    let sleeping = bodies.iter().filter(|(b, _)| w.bodies[*b].is_sleeping()).count();
    let escaped =
        bodies.iter().filter(|(b, _)| w.pose(*b).translation.xz().abs().max_element() > half).count();
    let resting_lowest =
        bodies.iter().map(|(b, mesh)| lowest_vertex(mesh, &w.pose(*b))).fold(f32::INFINITY, f32::min);
    println!(
        "{BODIES} bodies ({mass:.2} kg), {TICKS} ticks: final kinetic energy {ke:.2e} J (bound {KE_BOUND:.0e}), {sleeping} asleep, \
         lowest vertex {:.2} % of size below the floor at any tick (impacts), {:.3} % at the end; {escaped} out of the box; \
         up to {pairs} batch pairs per step, {held} pairs held in all (contact recycling {recycling}), \
         {misses} cache misses; narrow phase {:.2} ms/step, whole tick {:.2} ms/step (debug build)",
        100.0 * (-lowest).max(0.0) / size,
        100.0 * (-resting_lowest).max(0.0) / size,
        detect.as_secs_f64() * 1e3 / TICKS as f64,
        wall_time.as_secs_f64() * 1e3 / TICKS as f64,
    );
    assert!(ke < KE_BOUND, "the pile is not at rest: {ke} J");
    assert!(resting_lowest > -0.01 * size, "a body rests {resting_lowest} below the floor");
    assert_eq!(escaped, 0);
    assert_eq!(misses, 0, "pairs the batch did not compute reached the dispatcher");
    // Recycling on, most resting pairs are held; off, none is.
    if recycling {
        assert!(held > TICKS * BODIES / 4, "only {held} pairs held");
    } else {
        assert_eq!(held, 0);
    }
}
