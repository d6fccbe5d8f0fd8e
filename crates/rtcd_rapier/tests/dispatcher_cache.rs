//! The dispatcher and its cache: stable feature ids and carried warm-start data, the miss path,
//! the depth-refresh policy, shared instances, and the CPU fallback when a backend fails.

mod common;

use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};

use common::{World, asset, lowest_vertex, rtcd_shape};
use rapier3d::{
    parry::query::{ContactManifold, PersistentQueryDispatcher},
    prelude::*,
};
use rtcd::{BackendError, NarrowPhaseBackend, PairInput, RtcdParams, StepOptions, StepOutput};
use rtcd_rapier::{Joints, MissPolicy, RtcdDriver, RtcdShape};

type Manifolds = Vec<ContactManifold<ContactManifoldData, ContactData>>;

fn features(ms: &Manifolds) -> Vec<(u32, u32)> {
    let mut f: Vec<(u32, u32)> =
        ms.iter().flat_map(|m| m.points.iter().map(|p| (p.fid1.0, p.fid2.0))).collect();
    f.sort_unstable();
    f
}

fn min_dist(ms: &Manifolds) -> f32 {
    ms.iter().flat_map(|m| m.points.iter().map(|p| p.dist)).fold(f32::INFINITY, f32::min)
}

/// A blob `depth` deep in a 10 x 1 x 10 cuboid whose top is at y = 0: shapes and `pos12`.
fn blob_in_ground(depth: f32) -> (SharedShape, SharedShape, Pose) {
    let mesh = asset("blob_900");
    let rot = Rotation::from_rotation_x(0.3);
    let lift = -lowest_vertex(&mesh, &Pose::from_rotation(rot)) - depth;
    let blob_pose = Pose::from_parts(Vector::new(0.0, lift, 0.0), rot);
    let ground_pose = Pose::from_translation(Vector::new(0.0, -0.5, 0.0));
    (rtcd_shape(&mesh), SharedShape::cuboid(5.0, 0.5, 5.0), blob_pose.inv_mul(&ground_pose))
}

fn driver() -> RtcdDriver {
    RtcdDriver::new(RtcdParams::from_meshes(&[&*asset("blob_900")])).unwrap()
}

#[test]
fn feature_ids_are_stable_and_warm_start_data_is_carried() {
    let d = driver();
    let dispatcher = d.dispatcher();
    let (blob, ground, pos12) = blob_in_ground(0.01);
    let (mut manifolds, mut workspace) = (Manifolds::new(), None);
    dispatcher.contact_manifolds(&pos12, &*blob, &*ground, 0.02, &mut manifolds, &mut workspace).unwrap();
    assert!(workspace.is_some(), "our pairs always carry a workspace");
    assert!(!manifolds.is_empty());
    assert!((min_dist(&manifolds) + 0.01).abs() < 1e-4, "deepest {}", min_dist(&manifolds));
    let before = features(&manifolds);
    for (k, p) in manifolds.iter_mut().flat_map(|m| m.points.iter_mut()).enumerate() {
        p.data.impulse = 1.0 + k as f32;
        p.data.warmstart_impulse = 1.0 + k as f32;
    }
    let impulses: Vec<((u32, u32), f32)> = manifolds
        .iter()
        .flat_map(|m| m.points.iter().map(|p| ((p.fid1.0, p.fid2.0), p.data.warmstart_impulse)))
        .collect();

    // A tenth of a millimetre deeper: same vertices on the same faces, same ids, data carried.
    let deeper = Pose::from_translation(Vector::new(0.0, 1e-4, 0.0)) * pos12;
    dispatcher.contact_manifolds(&deeper, &*blob, &*ground, 0.02, &mut manifolds, &mut workspace).unwrap();
    assert_eq!(features(&manifolds), before);
    for p in manifolds.iter().flat_map(|m| m.points.iter()) {
        let old = impulses.iter().find(|(f, _)| *f == (p.fid1.0, p.fid2.0)).unwrap().1;
        assert_eq!(p.data.warmstart_impulse, old, "warm-start data lost for {:?}/{:?}", p.fid1, p.fid2);
    }
    assert!((min_dist(&manifolds) + 0.0101).abs() < 1e-4);

    // The same pair seen from the ground: normals and features swapped.
    let (mut flipped, mut ws) = (Manifolds::new(), None);
    dispatcher.contact_manifolds(&deeper.inverse(), &*ground, &*blob, 0.02, &mut flipped, &mut ws).unwrap();
    let swap = |v: Vec<(u32, u32)>| {
        let mut s: Vec<(u32, u32)> = v.into_iter().map(|(a, b)| (b, a)).collect();
        s.sort_unstable();
        s
    };
    assert_eq!(swap(features(&flipped)), features(&manifolds));
    assert!(flipped[0].local_n1.y > 0.99, "ground normal points up toward the blob: {}", flipped[0].local_n1);
}

#[test]
fn feature_ids_persist_across_simulation_steps() {
    let mesh = asset("blob_900");
    let mut w = World::ours(driver());
    let ground = w.add_ground(Vector::new(5.0, 0.5, 5.0), 0.0);
    let body =
        w.bodies.insert(RigidBodyBuilder::dynamic().translation(Vector::new(0.0, 0.8, 0.0)).can_sleep(false));
    let blob = w.colliders.insert_with_parent(ColliderBuilder::new(rtcd_shape(&mesh)), body, &mut w.bodies);
    let (mut kept, mut total, mut warm) = (0, 0, 0);
    let mut previous: Vec<(u32, u32)> = Vec::new();
    for tick in 0..240 {
        w.step();
        let Some(pair) = w.narrow_phase.contact_pair(ground, blob) else { continue };
        let now = features(&pair.manifolds);
        if tick >= 120 {
            total += now.len();
            kept += now.iter().filter(|f| previous.contains(f)).count();
            warm += pair
                .manifolds
                .iter()
                .flat_map(|m| m.points.iter())
                .filter(|p| p.data.warmstart_impulse != 0.0)
                .count();
        }
        previous = now;
    }
    println!(
        "resting blob, ticks 120-240: {kept} of {total} contact points kept their feature ids from the previous tick, {warm} warm-started"
    );
    assert!(total > 0);
    assert!(kept as f32 >= 0.9 * total as f32, "{kept} of {total}");
}

/// Pairs computed on the spot from many threads at once (as Rapier's parallel dispatcher calls it)
/// get the same contacts as one after another: each takes a narrow phase of its own from the
/// cache's pool.
#[test]
fn pairs_computed_on_the_spot_in_parallel_match_one_by_one() {
    use rayon::prelude::*;
    let mesh = asset("blob_900");
    let (blob, ground) = (rtcd_shape(&mesh), SharedShape::cuboid(5.0, 0.5, 5.0));
    let ground_pose = Pose::from_translation(Vector::new(0.0, -0.5, 0.0));
    let poses: Vec<Pose> = (0..64)
        .map(|k| {
            // Close poses: a narrow phase that kept state between them would walk from the last.
            let rot = Rotation::from_rotation_x(0.3 + 0.002 * k as f32);
            let lift = -lowest_vertex(&mesh, &Pose::from_rotation(rot)) - 0.0005 * (k % 40) as f32;
            Pose::from_parts(Vector::new(0.0, lift, 0.0), rot).inv_mul(&ground_pose)
        })
        .collect();
    let d = driver();
    let contacts = |pos12: &Pose| {
        let (mut manifolds, mut ws) = (Manifolds::new(), None);
        d.dispatcher().contact_manifolds(pos12, &*blob, &*ground, 0.02, &mut manifolds, &mut ws).unwrap();
        let points: Vec<(u32, u32, u32)> = manifolds
            .iter()
            .flat_map(|m| m.points.iter().map(|p| (p.fid1.0, p.fid2.0, p.dist.to_bits())))
            .collect();
        points
    };
    let serial: Vec<_> = poses.iter().map(contacts).collect();
    let parallel: Vec<_> = poses.par_iter().map(contacts).collect();
    assert_eq!(d.cache().counters().misses, 2 * poses.len() as u64);
    assert!(serial.iter().filter(|p| !p.is_empty()).count() > poses.len() / 2, "most poses touch the ground");
    assert_eq!(serial, parallel);
    // New parameters reach every narrow phase of the pool, those made before them too.
    let params = RtcdParams { prediction: false, ..*d.params() };
    d.cache().set_params(params).unwrap();
    let parallel_after: Vec<_> = poses.par_iter().map(contacts).collect();
    let serial_after: Vec<_> = poses.iter().map(contacts).collect();
    assert_ne!(serial_after, serial, "without predictions the speculative contacts go");
    assert_eq!(serial_after, parallel_after);
}

#[test]
fn pairs_the_batch_did_not_see_are_computed_on_the_spot() {
    let d = driver();
    let dispatcher = d.dispatcher();
    let (blob, ground, pos12) = blob_in_ground(0.02);
    let (mut manifolds, mut workspace) = (Manifolds::new(), None);
    dispatcher.contact_manifolds(&pos12, &*blob, &*ground, 0.02, &mut manifolds, &mut workspace).unwrap();
    let c = d.cache().counters();
    assert_eq!((c.hits, c.misses), (0, 1));
    assert!((min_dist(&manifolds) + 0.02).abs() < 1e-4);

    // In a simulation: the batch runs, then the user moves the body before the step.
    let mesh = asset("blob_900");
    let mut w = World::ours(driver());
    w.add_ground(Vector::new(5.0, 0.5, 5.0), 0.0);
    let (body, _) = w.add_body(rtcd_shape(&mesh), Pose::from_translation(Vector::new(0.0, 0.8, 0.0)));
    for _ in 0..60 {
        w.step();
    }
    let before = w.driver.as_ref().unwrap().metrics().cache;
    assert_eq!(before.misses, 0);
    assert!(before.hits > 0);
    let d = w.driver.as_mut().unwrap();
    d.detect(&w.bodies, &w.colliders, Joints::new(&w.impulse_joints, &w.multibody_joints), &w.params);
    let mut pose = *w.bodies[body].position();
    pose.translation.y -= 0.01;
    w.bodies[body].set_position(pose, true);
    w.rapier_step();
    let after = w.driver.as_ref().unwrap().metrics().cache;
    let pair = w.narrow_phase.contact_pairs().next().unwrap();
    println!(
        "moved after the batch: {} miss(es) in {:?}, deepest point {:.4}",
        after.misses,
        after.miss_time,
        min_dist(&pair.manifolds)
    );
    assert_eq!((after.hits, after.misses), (0, 1));
    assert!(min_dist(&pair.manifolds) < -0.009, "the on-the-spot contacts see the moved body");
}

/// The reach of late results on generated content: a 1 cm plate (1 m across, 4 x 4 quads a face)
/// sliding 3 mm a step over a cuboid and over a terrain (Rapier's trimesh collider, traced in
/// chunks). Without the lookahead each batch pair reaches as far as its prediction; with it, at
/// least twice its motion over the two late steps further (3 mm a step, from the body's velocity,
/// not from the driver), at most its culling distance, level chunks included.
#[test]
fn late_results_reach_covers_the_motion_on_levels_and_cuboids() {
    use glam::Vec3;
    let (v, i) = rtcd::shapes::subdivided_cuboid(Vec3::new(0.5, 0.005, 0.5), 4);
    let plate = Arc::new(rtcd::RtcdMesh::new("plate", &v, &i).unwrap());
    // A gentle terrain, 8 m across, 16 x 16 cells.
    let n = 16;
    let at = |k: u32| -4.0 + 8.0 * k as f32 / n as f32;
    let mut points = Vec::new();
    for z in 0..=n {
        for x in 0..=n {
            points.push(Vector::new(at(x), 0.05 * (at(x) * 1.3).sin() * (at(z) * 0.7).cos(), at(z)));
        }
    }
    let mut tris = Vec::new();
    for z in 0..n {
        for x in 0..n {
            let c = z * (n + 1) + x;
            tris.push([c, c + n + 1, c + 1]);
            tris.push([c + 1, c + n + 1, c + n + 2]);
        }
    }
    let step = 0.003;
    let mut reaches = Vec::new();
    for lookahead in [1.0, 3.0] {
        let mut d = RtcdDriver::new(RtcdParams::from_meshes(&[&*plate])).unwrap();
        let mut ds = d.settings();
        ds.lookahead_steps = lookahead;
        d.set_settings(ds);
        let params = *d.params();
        let mut bodies = RigidBodySet::new();
        let mut colliders = ColliderSet::new();
        colliders.insert(ColliderBuilder::trimesh(points.clone(), tris.clone()).unwrap());
        colliders.insert(ColliderBuilder::cuboid(1.0, 0.5, 1.0).translation(Vector::new(2.5, -0.49, 0.0)));
        for x in [-1.5, 2.5] {
            let body = bodies.insert(
                RigidBodyBuilder::dynamic().translation(Vector::new(x, 0.07, 0.0)).linvel(Vector::new(
                    step * 60.0,
                    0.0,
                    0.0,
                )),
            );
            colliders.insert_with_parent(ColliderBuilder::new(rtcd_shape(&plate)), body, &mut bodies);
        }
        let batch = d.prepare(&bodies, &colliders, Joints::none(), &prediction(0.02));
        // Level chunks are solid behind their surface; the cuboid is not.
        let level = |p: &rtcd_rapier::BatchPair| p.mesh1.solid_behind() || p.mesh2.solid_behind();
        assert!(batch.pairs.iter().any(level), "the plate over the terrain meets its chunks");
        assert!(batch.pairs.iter().any(|p| !level(p)), "the plate over the cuboid");
        for p in &batch.pairs {
            let culling = params.for_pair(&p.mesh1, &p.mesh2).culling_dist;
            assert!(p.reach <= p.prediction.max(culling) + 1e-6, "{} > culling {culling}", p.reach);
            if lookahead == 1.0 {
                assert_eq!(p.reach, p.prediction);
            } else {
                let want = (p.prediction + 2.0 * 2.0 * step * 0.999).min(p.prediction.max(culling));
                assert!(p.reach >= want, "reach {} vs {want} (level: {})", p.reach, level(p));
            }
            assert!(batch.prediction >= p.reach, "the backend reports as far as each pair reaches");
        }
        reaches.push(batch.pairs.iter().map(|p| p.reach - p.prediction).fold(0.0f32, f32::max));
    }
    assert!(reaches[1] > reaches[0], "{reaches:?}");
}

/// Results used a step later than the step they were prepared for (pipelined mode): with
/// `lookahead_steps`, each pair's prediction grows by its own motion of the last step, so a body
/// still moving as it did is refreshed, not computed on the spot; without it, it is computed.
#[test]
fn late_results_reach_as_far_as_the_pair_moves() {
    let mesh = asset("blob_900");
    let ground = SharedShape::cuboid(5.0, 0.5, 5.0);
    let ground_pose = Pose::from_translation(Vector::new(0.0, -0.5, 0.0));
    let rot = Rotation::from_rotation_x(0.3);
    // Just beyond Rapier's 2 cm prediction now, within it a step later: only results that reach
    // ahead hold the contact to refresh.
    let y = -lowest_vertex(&mesh, &Pose::from_rotation(rot)) + 0.021;
    // 3 mm a step downwards, and a slow spin: the next step's pose.
    let (v, w, dt) = (Vector::new(0.0, -0.18, 0.0), Vector::new(0.0, 0.3, 0.0), 1.0 / 60.0);
    let next = Pose::from_parts(Vector::new(0.0, y, 0.0) + v * dt, Rotation::from_scaled_axis(w * dt) * rot);
    let mut counts = Vec::new();
    for lookahead in [1.0, 3.0] {
        let mut d = driver();
        d.set_miss_policy(MissPolicy::RefreshDepths);
        let mut ds = d.settings();
        ds.lookahead_steps = lookahead;
        d.set_settings(ds);
        let mut bodies = RigidBodySet::new();
        let mut colliders = ColliderSet::new();
        colliders.insert(ColliderBuilder::new(ground.clone()).position(ground_pose));
        let body = bodies.insert(
            RigidBodyBuilder::dynamic()
                .pose(Pose::from_parts(Vector::new(0.0, y, 0.0), rot))
                .linvel(v)
                .angvel(w),
        );
        let blob = colliders.insert_with_parent(ColliderBuilder::new(rtcd_shape(&mesh)), body, &mut bodies);
        d.detect(&bodies, &colliders, Joints::none(), &prediction(0.02));
        // A step later, moved on as before: the cached results are a step old.
        let pos12 = next.inv_mul(&ground_pose);
        let (mut manifolds, mut ws) = (Manifolds::new(), None);
        d.cache().reset_counters();
        d.dispatcher()
            .contact_manifolds(
                &pos12,
                &*colliders[blob].shared_shape().clone(),
                &*ground,
                0.02,
                &mut manifolds,
                &mut ws,
            )
            .unwrap();
        let c = d.cache().counters();
        counts.push((c.misses, c.refreshed));
        if lookahead > 1.0 {
            // The refreshed contacts are those of the current pose: the lowest vertex's height.
            let lowest = lowest_vertex(&mesh, &next);
            assert!(
                (min_dist(&manifolds) - lowest).abs() < 1e-3,
                "refreshed depth {} vs the lowest vertex at {lowest}",
                min_dist(&manifolds)
            );
        }
    }
    assert_eq!(counts, [(1, 0), (0, 1)], "(misses, refreshed) without and with the lookahead");
}

#[test]
fn refresh_depths_reuses_older_results() {
    let mesh = asset("blob_900");
    let mut d = driver();
    d.set_miss_policy(MissPolicy::RefreshDepths);
    let mut bodies = RigidBodySet::new();
    let mut colliders = ColliderSet::new();
    colliders.insert(ColliderBuilder::cuboid(5.0, 0.5, 5.0).translation(Vector::new(0.0, -0.5, 0.0)));
    let rot = Rotation::from_rotation_x(0.3);
    let y = -lowest_vertex(&mesh, &Pose::from_rotation(rot)) - 0.01;
    let body =
        bodies.insert(RigidBodyBuilder::dynamic().pose(Pose::from_parts(Vector::new(0.0, y, 0.0), rot)));
    let blob = colliders.insert_with_parent(ColliderBuilder::new(rtcd_shape(&mesh)), body, &mut bodies);
    // The batch looks 5 cm ahead (as a pipelined batch with soft CCD does), so its results still
    // hold every contact within Rapier's 2 cm after a 2 mm move.
    d.detect(&bodies, &colliders, Joints::none(), &prediction(0.05));
    // One tick later the blob is 2 mm deeper; the cached results are refreshed, not recomputed.
    let pos12 = Pose::from_translation(Vector::new(0.0, 0.002, 0.0))
        * bodies[body].position().inv_mul(&Pose::from_translation(Vector::new(0.0, -0.5, 0.0)));
    let (mut manifolds, mut ws) = (Manifolds::new(), None);
    let shape = colliders[blob].shared_shape().clone();
    d.dispatcher()
        .contact_manifolds(
            &pos12,
            &*shape,
            &*SharedShape::cuboid(5.0, 0.5, 5.0),
            0.02,
            &mut manifolds,
            &mut ws,
        )
        .unwrap();
    let c = d.cache().counters();
    assert_eq!((c.hits, c.misses, c.refreshed), (0, 0, 1));
    assert!((min_dist(&manifolds) + 0.012).abs() < 1e-4, "refreshed depth {}", min_dist(&manifolds));
    // Moved farther than the results' 5 cm reach minus the 2 cm prediction: recomputed instead.
    let far = Pose::from_translation(Vector::new(0.0, 0.04, 0.0)) * pos12;
    d.cache().reset_counters();
    d.dispatcher()
        .contact_manifolds(&far, &*shape, &*SharedShape::cuboid(5.0, 0.5, 5.0), 0.02, &mut manifolds, &mut ws)
        .unwrap();
    let c = d.cache().counters();
    assert_eq!((c.hits, c.misses, c.refreshed), (0, 1, 0));
}

#[test]
fn colliders_sharing_an_instance_still_collide() {
    let mesh = asset("blob_900");
    let mut w = World::ours(driver());
    w.add_ground(Vector::new(5.0, 0.5, 5.0), 0.0);
    let shared = SharedShape::new(RtcdShape::new(mesh.clone()).unwrap());
    let (low, c_low) = w.add_body(shared.clone(), Pose::from_translation(Vector::new(0.0, 0.6, 0.0)));
    let (high, c_high) =
        w.add_body(shared, Pose::from_parts(Vector::new(0.1, 1.9, 0.0), Rotation::from_rotation_z(1.0)));
    let (mut deepest, mut touching, mut misses) = (0.0f32, 0, 0);
    for _ in 0..240 {
        w.step();
        deepest = deepest.max(common::interpenetration(&mesh, &w.pose(low), &mesh, &w.pose(high)));
        touching +=
            w.narrow_phase.contact_pair(c_low, c_high).is_some_and(|p| p.has_any_active_contact()) as usize;
        misses += w.driver.as_ref().unwrap().metrics().cache.misses;
    }
    println!(
        "two colliders, one instance: in contact {touching} ticks, deepest interpenetration {deepest:.4}, {misses} misses"
    );
    assert!(touching > 10);
    assert!(deepest < 0.03, "{deepest}");
    assert_eq!(misses, 0, "results are told apart by pose");
}

/// A backend whose device is lost on the first step.
struct LostDevice {
    params: RtcdParams,
    calls: Arc<AtomicUsize>,
}

impl NarrowPhaseBackend for LostDevice {
    fn name(&self) -> String {
        "lost gpu".into()
    }
    fn params(&self) -> &RtcdParams {
        &self.params
    }
    fn step(&mut self, _: &[PairInput], _: &StepOptions) -> Result<StepOutput, BackendError> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        Err(BackendError::DeviceLost("test".into()))
    }
}

#[test]
fn backend_errors_switch_to_the_cpu_for_good() {
    let mesh = asset("blob_900");
    let calls = Arc::new(AtomicUsize::new(0));
    let backend = LostDevice { params: RtcdParams::from_meshes(&[&mesh]), calls: calls.clone() };
    let driver = RtcdDriver::with_backend(Box::new(backend)).unwrap();
    assert_eq!(driver.backend_name(), "lost gpu");
    let mut w = World::ours(driver);
    w.add_ground(Vector::new(5.0, 0.5, 5.0), 0.0);
    let (body, _) = w.add_body(rtcd_shape(&mesh), Pose::from_translation(Vector::new(0.0, 0.7, 0.0)));
    let (mut hits, mut misses) = (0, 0);
    for _ in 0..120 {
        w.step();
        let m = w.driver.as_ref().unwrap().metrics();
        hits += m.cache.hits;
        misses += m.cache.misses;
    }
    let d = w.driver.as_ref().unwrap();
    let m = d.metrics();
    println!(
        "after a lost device: backend {}, fell back {}, {hits} hits, {misses} misses",
        m.backend, m.fell_back
    );
    assert_eq!(calls.load(Ordering::Relaxed), 1, "the failed backend is not retried");
    assert!(d.fell_back() && m.fell_back);
    assert!(d.fallback_error().is_some_and(|e| e.contains("lost")), "{:?}", d.fallback_error());
    assert_eq!(d.backend_name(), "cpu");
    assert!(hits > 0);
    assert_eq!(misses, 0, "the failed step was re-run on the CPU, nothing left to the miss path");
    assert!(lowest_vertex(&mesh, &w.pose(body)) > -0.01);
}

/// The grounds a resting blob is held on: a cuboid, a flat triangle-mesh floor and a flat
/// heightfield, both 10 m wide with 64 x 64 cells (level geometry: the blob meets several chunks).
#[derive(Clone, Copy, Debug)]
enum Floor {
    Cuboid,
    TriMesh,
    HeightField,
}

fn add_floor(w: &mut World, floor: Floor) {
    const CELLS: usize = 64;
    let at = |k: usize| 10.0 * (k as f32 / CELLS as f32 - 0.5);
    match floor {
        Floor::Cuboid => {
            w.add_ground(Vector::new(5.0, 0.5, 5.0), 0.0);
        }
        Floor::TriMesh => {
            let n = CELLS + 1;
            let points = (0..n * n).map(|k| Vector::new(at(k % n), 0.0, at(k / n))).collect();
            let mut tris = Vec::new();
            for z in 0..CELLS {
                for x in 0..CELLS {
                    let v = (z * n + x) as u32;
                    let n = n as u32;
                    // Counter-clockwise seen from above: solid below.
                    tris.push([v, v + n, v + 1]);
                    tris.push([v + 1, v + n, v + n + 1]);
                }
            }
            w.colliders.insert(ColliderBuilder::trimesh(points, tris).unwrap());
        }
        Floor::HeightField => {
            let field = HeightField::new(
                rapier3d::parry::utils::Array2::new(
                    CELLS + 1,
                    CELLS + 1,
                    vec![0.0; (CELLS + 1) * (CELLS + 1)],
                ),
                Vector::new(10.0, 1.0, 10.0),
            );
            w.colliders.insert(ColliderBuilder::new(SharedShape::new(field)));
        }
    }
}

/// With Rapier's contact recycling on, the batch holds the pair Rapier recycles (a blob resting
/// on the ground: a cuboid, or level geometry, whose chunks' pairs are held together) and traces
/// it again, with no miss, once it is moved past the recycling bound.
#[test]
fn recycled_pairs_are_held_and_moved_ones_traced() {
    for floor in [Floor::Cuboid, Floor::TriMesh, Floor::HeightField] {
        held_and_traced(floor);
    }
}

fn held_and_traced(floor: Floor) {
    let mesh = asset("blob_900");
    let mut w = World::ours(driver());
    w.params.contact_recycling = true;
    add_floor(&mut w, floor);
    let body =
        w.bodies.insert(RigidBodyBuilder::dynamic().translation(Vector::new(0.0, 0.8, 0.0)).can_sleep(false));
    let blob = w.colliders.insert_with_parent(ColliderBuilder::new(rtcd_shape(&mesh)), body, &mut w.bodies);
    let (mut held, mut misses, mut held_points, mut traced, mut wasted) = (0, 0, 0, 0, 0);
    // The blob rocks for about 2.5 s before it settles.
    for tick in 0..300 {
        w.step();
        let m = w.driver.as_ref().unwrap().metrics();
        held += m.narrow_phase.held_pairs;
        traced += m.narrow_phase.pairs;
        misses += m.cache.misses;
        held_points += m.held_points;
        assert_eq!(
            m.held_pairs, m.narrow_phase.held_pairs,
            "{floor:?} tick {tick}: the CPU backend traced no held pair"
        );
        // The points handed over this tick and those Rapier kept for the recycled pair are the
        // points Rapier holds.
        let rapier: usize = w
            .narrow_phase
            .contact_pairs_with(blob)
            .flat_map(|cp| &cp.manifolds)
            .map(|m| m.points.len())
            .sum();
        // A level's pair may be traced at a step Rapier recycles it (its drift bound for the
        // level's extent is not known to the batch): wasted work, counted, never a held pair that
        // Rapier updates (no miss).
        let called = m.cache.hits + m.cache.misses + m.cache.separated + m.cache.refreshed > 0;
        if called || m.narrow_phase.pairs == 0 || matches!(floor, Floor::Cuboid) {
            assert_eq!(m.manifold_points + m.held_points, rapier, "{floor:?} tick {tick}");
        } else {
            wasted += 1;
        }
        if m.narrow_phase.held_pairs == 0 {
            assert_eq!(m.held_points, 0, "{floor:?} tick {tick}");
        }
    }
    assert!(held_points > 0, "{floor:?}");
    let lowest = lowest_vertex(&mesh, &w.pose(body));
    println!(
        "resting blob on {floor:?} with contact recycling: {held} pairs held and {traced} traced in 300 \
         ticks, traced at {wasted} ticks Rapier recycled, {misses} misses, lowest vertex {lowest}"
    );
    assert!(held > 60, "{floor:?}: {held} pairs held");
    assert_eq!(misses, 0, "{floor:?}");
    assert!(lowest > -0.02 && lowest < 0.02, "{floor:?}: the blob rests at {lowest}");

    // Lifted by 0.3 m (beyond Rapier's 5 cm bound): traced again, served from the batch.
    let mut rb = w.bodies[body].clone();
    rb.set_translation(rb.translation() + Vector::new(0.0, 0.3, 0.0), true);
    w.bodies[body] = rb;
    w.step();
    let m = w.driver.as_ref().unwrap().metrics();
    assert_eq!(m.narrow_phase.held_pairs, 0, "{floor:?}");
    assert_eq!(m.cache.misses, 0, "{floor:?}");
    assert!(m.cache.hits >= 1, "{floor:?}");
}

/// The cache's flags say which published pairs Rapier updated, whether it used their results, and
/// in which collider order it called the dispatcher: the order of Rapier's own contact pair.
#[test]
fn published_flags_follow_rapiers_calls_and_order() {
    use rtcd_rapier::cache::{SWAPPED, UPDATED, USED};
    let mesh = asset("blob_900");
    let mut w = World::ours(driver());
    w.params.contact_recycling = true;
    // Added before and after the ground: Rapier's collider order differs between the two pairs
    // (or the test says so).
    let add = |w: &mut World, x: f32| {
        let body = w
            .bodies
            .insert(RigidBodyBuilder::dynamic().translation(Vector::new(x, 0.55, 0.0)).can_sleep(false));
        w.colliders.insert_with_parent(ColliderBuilder::new(rtcd_shape(&mesh)), body, &mut w.bodies)
    };
    let first = add(&mut w, -2.0);
    let ground = w.add_ground(Vector::new(5.0, 0.5, 5.0), 0.0);
    let second = add(&mut w, 2.0);
    let mut flags = Vec::new();
    let mut orders = std::collections::HashSet::new();
    for tick in 0..40 {
        w.step();
        // The batch publishes its mesh-first pairs in the colliders' order: `first`, then `second`.
        w.driver.as_ref().unwrap().cache().published_flags(&mut flags);
        let updated: Vec<ColliderHandle> = [first, second]
            .into_iter()
            .filter(|&c| w.narrow_phase.contact_pair(c, ground).is_some_and(|cp| cp.has_any_active_contact()))
            .collect();
        if flags.len() != 2 || updated.len() != 2 {
            continue;
        }
        for (k, c) in [first, second].into_iter().enumerate() {
            let cp = w.narrow_phase.contact_pair(c, ground).unwrap();
            if flags[k] & UPDATED == 0 {
                continue;
            }
            assert_ne!(flags[k] & USED, 0, "tick {tick}: Rapier's update used the batch's result");
            let swapped = cp.collider1 != c;
            assert_eq!(flags[k] & SWAPPED != 0, swapped, "tick {tick}: collider {k}");
            orders.insert(swapped);
        }
    }
    assert_eq!(orders.len(), 2, "both collider orders seen: {orders:?}");
}

/// Rapier's default parameters with a prediction distance of `d` (length unit 1).
fn prediction(d: f32) -> IntegrationParameters {
    IntegrationParameters { normalized_prediction_distance: d, ..Default::default() }
}

/// `detect` and `detect_recycling` with Rapier's recycling off are the same batch for the same
/// world, whatever its parameters: two blobs spawned deep in each other in a world of length unit
/// 100 and `dt` 1/30 (where the merging of deep overlaps, the depth bound and the soft-CCD reach
/// follow the world's figures) come apart along the same path, pose for pose.
#[test]
fn detect_and_detect_recycling_follow_the_same_parameters() {
    let mesh = Arc::new(asset("blob_900").scaled("blob x100", glam::Vec3::splat(100.0)).unwrap());
    let run = |recycling_entry: bool| {
        let mut w = World::ours(driver());
        w.params.length_unit = 100.0;
        w.params.dt = 1.0 / 30.0;
        w.params.contact_recycling = false;
        w.gravity = Vector::ZERO;
        let a = w.add_body(rtcd_shape(&mesh), Pose::from_translation(Vector::ZERO)).0;
        let b = w.add_body(rtcd_shape(&mesh), Pose::from_translation(Vector::new(40.0, 10.0, 0.0))).0;
        let mut path = Vec::new();
        for _ in 0..30 {
            let d = w.driver.as_mut().unwrap();
            if recycling_entry {
                d.detect_recycling(
                    &w.bodies,
                    &w.colliders,
                    Joints::new(&w.impulse_joints, &w.multibody_joints),
                    &w.params,
                    &w.narrow_phase,
                );
            } else {
                d.detect(
                    &w.bodies,
                    &w.colliders,
                    Joints::new(&w.impulse_joints, &w.multibody_joints),
                    &w.params,
                );
            }
            w.rapier_step();
            path.push((*w.bodies[a].position(), *w.bodies[b].position()));
        }
        path
    };
    let (plain, recycling) = (run(false), run(true));
    if let Some(k) = (0..plain.len()).find(|&k| plain[k] != recycling[k]) {
        panic!("the paths part at step {k}: {:?} against {:?}", plain[k], recycling[k]);
    }
    let (first, last) = (plain[0], plain[plain.len() - 1]);
    let gap = |(a, b): (Pose, Pose)| (a.translation - b.translation).length();
    assert!(gap(last) > gap(first) + 1.0, "the blobs come apart: {} -> {}", gap(first), gap(last));
}
