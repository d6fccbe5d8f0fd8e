//! A plain Rapier world (no Bevy) in one of three set-ups for concave meshes, with the narrow phase
//! timed the same way in each:
//!
//! - **rtcd**: [`RtcdShape`] colliders, the [`RtcdDriver`] batch before each step and our dispatcher
//!   chained in front of Rapier's (`rtcd_rapier`'s documented set-up, contact recycling off); a box
//!   mesh ([`RtcdMesh::cuboid`], scene 3's boxes) stays the exact box the narrow phase knows, while
//!   the other set-ups get its 12 triangles;
//! - **Rapier trimesh**: parry `TriMesh` colliders with `FIX_INTERNAL_EDGES | ORIENTED` (what Rapier
//!   recommends for dynamic triangle meshes), Rapier's defaults otherwise;
//! - **V-HACD**: parry's convex decomposition (`SharedShape::convex_decomposition`, default
//!   `VHACDParameters`), a compound of convex hulls per mesh, Rapier's defaults otherwise.
//!
//! **Narrow-phase time** is the time spent generating contacts: every top-level call Rapier makes to
//! its query dispatcher's `contact_manifolds` during the step (a [`TimedDispatcher`] wraps the whole
//! chain), plus, for rtcd, the batch pass run before the step (`RtcdDriver::detect`). Rapier's own
//! `Counters` only measure time with its `profiler` feature, which would build rapier3d a second time
//! with other features; the dispatcher calls are where its narrow phase spends its time on meshes.
//! Rapier here runs its narrow phase on one thread (no `parallel` feature, as bevy_rapier3d's
//! default); rtcd's batch runs on rayon's threads.

use std::{
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use rtcd::{RtcdMesh, RtcdParams};
use rtcd_rapier::{
    DepthBound, RtcdDriver, RtcdShape, RtcdShapeData,
    parry3d::{
        self,
        math::{Pose, Real, Vector},
        query::{
            ClosestPoints, Contact, ContactManifold, ContactManifoldsWorkspace, NonlinearRigidMotion,
            PersistentQueryDispatcher, QueryDispatcher, ShapeCastHit, ShapeCastOptions, Unsupported,
            details::NormalConstraints,
        },
        shape::{Shape, TriMeshFlags},
    },
    rapier3d::{
        geometry::{ContactData, ContactManifoldData},
        prelude::*,
    },
};

use crate::scene::{DT, Scene, Spawn};

/// What the contact cache does with deep overlaps:
/// [`CacheSettings::merge_deep_overlaps`](rtcd_rapier::CacheSettings::merge_deep_overlaps) and
/// [`CacheSettings::depth_bound`](rtcd_rapier::CacheSettings::depth_bound).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DeepOverlaps {
    pub merge: bool,
    pub bound: DepthBound,
}

impl Default for DeepOverlaps {
    /// The plugin's defaults: merged, not bounded.
    fn default() -> Self {
        Self { merge: true, bound: DepthBound::default() }
    }
}

/// How bodies collide.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Setup {
    /// Our narrow phase on the CPU backend with these parameters and, if set, this
    /// [`CacheSettings::speculative_angle`](rtcd_rapier::CacheSettings::speculative_angle) (radians);
    /// `Some(d)`: with Rapier's contact recycling (its default, as the other set-ups have it) at
    /// `normalized_contact_recycle_distance` `d`, the batch holding the pairs Rapier recycles
    /// ([`RtcdDriver::detect_recycling`]); `None`: recycling off; and what the cache does with deep
    /// overlaps.
    Rtcd(RtcdParams, Option<f32>, Option<f32>, DeepOverlaps),
    /// Rapier's trimesh colliders.
    TriMesh,
    /// V-HACD convex decomposition.
    Vhacd,
}

/// The collision shapes of a scene's meshes in one set-up, and what building them cost.
pub struct Shapes {
    per_mesh: Vec<MeshShape>,
    /// Time to build every distinct mesh's collision representation from its vertices and triangles
    /// (rtcd: welding, BVH, adjacency, exit distances and parry's view; trimesh: parry's BVH,
    /// pseudo-normals and internal-edge fix; V-HACD: voxelisation, decomposition, hulls).
    pub setup_time: Duration,
    /// One line per mesh: its build time and, for V-HACD, the number of convex parts.
    pub notes: Vec<String>,
}

enum MeshShape {
    Rtcd(Arc<RtcdShapeData>),
    Shared(SharedShape),
}

impl Shapes {
    /// Builds the shapes of `meshes` for `setup`, timing each.
    pub fn build(setup: Setup, meshes: &[Arc<RtcdMesh>]) -> Result<Self, String> {
        let mut per_mesh = Vec::with_capacity(meshes.len());
        let mut notes = Vec::new();
        let mut setup_time = Duration::ZERO;
        for m in meshes {
            let positions = m.positions().to_vec();
            let triangles = m.triangles().to_vec();
            let start = Instant::now();
            let (shape, note) = match setup {
                Setup::Rtcd(..) => {
                    let flat: Vec<u32> = triangles.iter().flatten().copied().collect();
                    // A box stays the exact box the narrow phase knows (scene 3's boxes).
                    let mesh = match m.cuboid_half_extents() {
                        Some(h) => RtcdMesh::cuboid(m.name(), h),
                        None => RtcdMesh::new(m.name(), &positions, &flat),
                    }
                    .map_err(|e| e.to_string())?;
                    let data = RtcdShapeData::new(Arc::new(mesh)).map_err(|e| e.to_string())?;
                    (MeshShape::Rtcd(Arc::new(data)), String::new())
                }
                Setup::TriMesh => {
                    let shape = SharedShape::trimesh_with_flags(
                        positions,
                        triangles,
                        TriMeshFlags::FIX_INTERNAL_EDGES | TriMeshFlags::ORIENTED,
                    )
                    .map_err(|e| format!("{}: {e}", m.name()))?;
                    (MeshShape::Shared(shape), String::new())
                }
                Setup::Vhacd => {
                    let shape = SharedShape::convex_decomposition(&positions, &triangles);
                    let parts = shape.as_compound().map_or(1, |c| c.shapes().len());
                    (MeshShape::Shared(shape), format!(", {parts} convex parts"))
                }
            };
            let t = start.elapsed();
            setup_time += t;
            notes.push(format!("{} {:.1} ms{note}", m.name(), t.as_secs_f64() * 1e3));
            per_mesh.push(shape);
        }
        Ok(Self { per_mesh, setup_time, notes })
    }

    /// The shape of a new collider of mesh `i` (rtcd: a fresh instance id per collider).
    fn collider_shape(&self, i: usize) -> SharedShape {
        match &self.per_mesh[i] {
            MeshShape::Rtcd(data) => SharedShape::new(RtcdShape::from_data(data.clone())),
            MeshShape::Shared(s) => s.clone(),
        }
    }
}

/// Accumulated time and calls of a [`TimedDispatcher`], shared with its owner.
#[derive(Clone, Debug, Default)]
pub struct DispatchClock {
    nanos: Arc<AtomicU64>,
    calls: Arc<AtomicU64>,
}

impl DispatchClock {
    /// Time and calls since the last take, and resets both.
    pub fn take(&self) -> (Duration, u64) {
        (Duration::from_nanos(self.nanos.swap(0, Ordering::Relaxed)), self.calls.swap(0, Ordering::Relaxed))
    }
}

/// Wraps a query dispatcher and times its top-level `contact_manifolds` calls (nested calls that
/// parry's composite-shape code makes go to the inner dispatcher directly and are inside them).
pub struct TimedDispatcher<D> {
    inner: D,
    clock: DispatchClock,
}

impl<D: QueryDispatcher> QueryDispatcher for TimedDispatcher<D> {
    fn intersection_test(&self, pos12: &Pose, g1: &dyn Shape, g2: &dyn Shape) -> Result<bool, Unsupported> {
        self.inner.intersection_test(pos12, g1, g2)
    }
    fn distance(&self, pos12: &Pose, g1: &dyn Shape, g2: &dyn Shape) -> Result<Real, Unsupported> {
        self.inner.distance(pos12, g1, g2)
    }
    fn contact(
        &self,
        pos12: &Pose,
        g1: &dyn Shape,
        g2: &dyn Shape,
        prediction: Real,
    ) -> Result<Option<Contact>, Unsupported> {
        self.inner.contact(pos12, g1, g2, prediction)
    }
    fn closest_points(
        &self,
        pos12: &Pose,
        g1: &dyn Shape,
        g2: &dyn Shape,
        max_dist: Real,
    ) -> Result<ClosestPoints, Unsupported> {
        self.inner.closest_points(pos12, g1, g2, max_dist)
    }
    fn cast_shapes(
        &self,
        pos12: &Pose,
        vel12: Vector,
        g1: &dyn Shape,
        g2: &dyn Shape,
        options: ShapeCastOptions,
    ) -> Result<Option<ShapeCastHit>, Unsupported> {
        self.inner.cast_shapes(pos12, vel12, g1, g2, options)
    }
    fn cast_shapes_nonlinear(
        &self,
        m1: &NonlinearRigidMotion,
        g1: &dyn Shape,
        m2: &NonlinearRigidMotion,
        g2: &dyn Shape,
        start: Real,
        end: Real,
        stop_at_penetration: bool,
    ) -> Result<Option<ShapeCastHit>, Unsupported> {
        self.inner.cast_shapes_nonlinear(m1, g1, m2, g2, start, end, stop_at_penetration)
    }
}

impl<D: PersistentQueryDispatcher<ContactManifoldData, ContactData>>
    PersistentQueryDispatcher<ContactManifoldData, ContactData> for TimedDispatcher<D>
{
    fn contact_manifolds(
        &self,
        pos12: &Pose,
        g1: &dyn Shape,
        g2: &dyn Shape,
        prediction: Real,
        manifolds: &mut Vec<ContactManifold<ContactManifoldData, ContactData>>,
        workspace: &mut Option<ContactManifoldsWorkspace>,
    ) -> Result<(), Unsupported> {
        let start = Instant::now();
        let r = self.inner.contact_manifolds(pos12, g1, g2, prediction, manifolds, workspace);
        self.clock.nanos.fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
        self.clock.calls.fetch_add(1, Ordering::Relaxed);
        r
    }

    fn contact_manifold_convex_convex(
        &self,
        pos12: &Pose,
        g1: &dyn Shape,
        g2: &dyn Shape,
        n1: Option<&dyn NormalConstraints>,
        n2: Option<&dyn NormalConstraints>,
        prediction: Real,
        manifold: &mut ContactManifold<ContactManifoldData, ContactData>,
    ) -> Result<(), Unsupported> {
        self.inner.contact_manifold_convex_convex(pos12, g1, g2, n1, n2, prediction, manifold)
    }
}

/// What one step cost.
#[derive(Clone, Copy, Debug, Default)]
pub struct StepTimes {
    /// Contact generation: rtcd's batch plus every dispatcher call (see the module docs).
    pub narrow_phase: Duration,
    /// rtcd's batch alone (zero for the other set-ups).
    pub batch: Duration,
    /// Of the batch: its preparation (our broad phase, and the recycling test when on).
    pub prepare: Duration,
    /// Of the batch: the backend's step (tracing). The rest of the batch is the reduction and
    /// publishing.
    pub backend: Duration,
    /// The whole step: rtcd's batch plus `PhysicsPipeline::step`.
    pub step: Duration,
    /// Top-level dispatcher calls.
    pub dispatcher_calls: u64,
    /// Pairs the rtcd batch sent to its backend (zero for the other set-ups).
    pub batch_pairs: usize,
    /// Of those, the pairs held untraced because Rapier recycles them.
    pub held_pairs: usize,
    /// Pairs the dispatcher found no batch result for and computed on the spot (rtcd set-ups).
    pub cache_misses: u64,
    /// Pairs the backend traced (`StepMetrics::pairs`: the batch's pairs less the held ones).
    pub traced_pairs: usize,
}

/// A Rapier world in one set-up.
pub struct World {
    bodies: RigidBodySet,
    colliders: ColliderSet,
    islands: IslandManager,
    broad_phase: DefaultBroadPhase,
    narrow_phase: NarrowPhase,
    impulse_joints: ImpulseJointSet,
    multibody_joints: MultibodyJointSet,
    ccd_solver: CCDSolver,
    pipeline: PhysicsPipeline,
    params: IntegrationParameters,
    driver: Option<RtcdDriver>,
    clock: DispatchClock,
    shapes: Shapes,
    /// The ground's collider (the box, or the level).
    ground: ColliderHandle,
    /// Bodies meet the ground only (see [`World::ground_only`]).
    ground_only: bool,
    /// Body handles in spawn order.
    pub handles: Vec<RigidBodyHandle>,
}

/// Collision groups of the bodies of a [`World::ground_only`] world: they meet the ground, not
/// each other.
const BODY_GROUPS: InteractionGroups =
    InteractionGroups::new(Group::GROUP_1, Group::GROUP_2, InteractionTestMode::And);
/// The ground's groups in such a world.
const GROUND_GROUPS: InteractionGroups =
    InteractionGroups::new(Group::GROUP_2, Group::GROUP_1, InteractionTestMode::And);

impl World {
    /// An empty world with the scene's ground and walls, in `setup`, with `shapes` built for it.
    pub fn new(scene: &Scene, setup: Setup, shapes: Shapes) -> Result<Self, String> {
        Self::build(scene, setup, shapes, false)
    }

    /// A world with the scene's ground and no walls, whose bodies meet the ground but not each
    /// other: its narrow phase handles the body-ground pairs alone (poses set from a recording with
    /// [`World::set_state`]).
    pub fn ground_only(scene: &Scene, setup: Setup, shapes: Shapes) -> Result<Self, String> {
        Self::build(scene, setup, shapes, true)
    }

    fn build(scene: &Scene, setup: Setup, shapes: Shapes, ground_only: bool) -> Result<Self, String> {
        let clock = DispatchClock::default();
        let (narrow_phase, params, driver) = match setup {
            Setup::Rtcd(p, speculative_angle, recycling, deep) => {
                let driver = RtcdDriver::new(p).map_err(|e| e.to_string())?;
                let cache = driver.cache();
                // A level ground is ours unless the scene leaves it to Rapier.
                let levels = scene.level.as_ref().is_none_or(|l| l.ours);
                cache.set_settings(rtcd_rapier::CacheSettings {
                    speculative_angle,
                    levels,
                    merge_deep_overlaps: deep.merge,
                    depth_bound: deep.bound,
                    ..cache.settings()
                });
                let dispatcher = TimedDispatcher {
                    inner: driver.dispatcher().chain(parry3d::query::DefaultQueryDispatcher),
                    clock: clock.clone(),
                };
                let params = match recycling {
                    Some(d) => {
                        IntegrationParameters { normalized_contact_recycle_distance: d, ..Default::default() }
                    }
                    None => rtcd_rapier::integration_parameters(),
                };
                (NarrowPhase::with_query_dispatcher(dispatcher), params, Some(driver))
            }
            Setup::TriMesh | Setup::Vhacd => {
                let dispatcher =
                    TimedDispatcher { inner: parry3d::query::DefaultQueryDispatcher, clock: clock.clone() };
                (NarrowPhase::with_query_dispatcher(dispatcher), IntegrationParameters::default(), None)
            }
        };
        let mut w = Self {
            bodies: RigidBodySet::new(),
            colliders: ColliderSet::new(),
            islands: IslandManager::new(),
            broad_phase: DefaultBroadPhase::new(),
            narrow_phase,
            impulse_joints: ImpulseJointSet::new(),
            multibody_joints: MultibodyJointSet::new(),
            ccd_solver: CCDSolver::new(),
            pipeline: PhysicsPipeline::new(),
            params: IntegrationParameters { dt: DT, ..params },
            driver,
            clock,
            shapes,
            ground: ColliderHandle::invalid(),
            ground_only,
            handles: Vec::new(),
        };
        let (h, c) = (scene.ground_half_extents, scene.ground_center());
        let ground = match &scene.level {
            None => ColliderBuilder::cuboid(h.x, h.y, h.z).translation(c),
            Some(l) => l.terrain.collider(l.kind)?.0,
        };
        let groups = if ground_only { GROUND_GROUPS } else { InteractionGroups::all() };
        w.ground = w.colliders.insert(ground.collision_groups(groups));
        for wall in scene.walls.iter().filter(|_| !ground_only) {
            let (h, c) = (wall.half_extents, wall.center);
            w.colliders.insert(ColliderBuilder::cuboid(h.x, h.y, h.z).translation(c));
        }
        Ok(w)
    }

    /// Rapier's prediction distance for this world's parameters.
    pub fn prediction_distance(&self) -> f32 {
        self.params.prediction_distance()
    }

    /// Rapier's allowed linear error (its geometric slop; the bench's tolerance for small bodies)
    /// for this world's parameters.
    pub fn allowed_linear_error(&self) -> f32 {
        self.params.allowed_linear_error()
    }

    /// Adds a body. Ray-traced bodies get soft CCD with a prediction of `culling_dist`, as the Bevy
    /// plugin gives them by default (`RtcdSettings::soft_ccd`).
    pub fn spawn(&mut self, s: &Spawn) {
        let soft_ccd = self.driver.as_ref().map_or(0.0, |d| d.params().culling_dist);
        let body = RigidBodyBuilder::dynamic()
            .pose(Pose::from_parts(s.translation, s.rotation))
            .linvel(s.linvel)
            .angvel(s.angvel)
            .soft_ccd_prediction(soft_ccd)
            .build();
        let h = self.bodies.insert(body);
        let groups = if self.ground_only { BODY_GROUPS } else { InteractionGroups::all() };
        self.colliders.insert_with_parent(
            ColliderBuilder::new(self.shapes.collider_shape(s.mesh)).collision_groups(groups),
            h,
            &mut self.bodies,
        );
        self.handles.push(h);
    }

    /// One 60 Hz step: the rtcd batch (if any), then Rapier's.
    pub fn step(&mut self) -> StepTimes {
        self.clock.take();
        let start = Instant::now();
        let (batch, prepare, backend, batch_pairs, held_pairs, traced_pairs) = match &mut self.driver {
            Some(d) => {
                let m = if self.params.contact_recycling {
                    d.detect_recycling(
                        &self.bodies,
                        &self.colliders,
                        rtcd_rapier::Joints::new(&self.impulse_joints, &self.multibody_joints),
                        &self.params,
                        &self.narrow_phase,
                    )
                } else {
                    d.detect(
                        &self.bodies,
                        &self.colliders,
                        rtcd_rapier::Joints::new(&self.impulse_joints, &self.multibody_joints),
                        &self.params,
                    )
                };
                let traced = m.narrow_phase.pairs;
                (m.detect_time, m.broad_phase_time, m.narrow_phase.time, m.batch_pairs, m.held_pairs, traced)
            }
            None => (Duration::ZERO, Duration::ZERO, Duration::ZERO, 0, 0, 0),
        };
        self.pipeline.step(
            Vector::new(0.0, -9.81, 0.0),
            &self.params,
            &mut self.islands,
            &mut self.broad_phase,
            &mut self.narrow_phase,
            &mut self.bodies,
            &mut self.colliders,
            &mut self.impulse_joints,
            &mut self.multibody_joints,
            &mut self.ccd_solver,
            &(),
            &(),
        );
        let step = start.elapsed();
        let (dispatch, dispatcher_calls) = self.clock.take();
        let cache_misses = self.driver.as_ref().map_or(0, |d| d.cache().counters().misses);
        StepTimes {
            narrow_phase: batch + dispatch,
            batch,
            prepare,
            backend,
            step,
            dispatcher_calls,
            batch_pairs,
            held_pairs,
            cache_misses,
            traced_pairs,
        }
    }

    /// Sets the `i`-th body's pose and velocities (the velocities set to zero and the body put to
    /// sleep when `asleep`).
    pub fn set_state(&mut self, i: usize, pose: &rtcd::Pose, linvel: Vector, angvel: Vector, asleep: bool) {
        let b = &mut self.bodies[self.handles[i]];
        b.set_position(Pose::from_parts(pose.translation, pose.rotation), !asleep);
        if asleep {
            if !b.is_sleeping() {
                b.sleep();
            }
        } else {
            b.set_linvel(linvel, true);
            b.set_angvel(angvel, true);
        }
    }

    /// Rapier's pairs of a body with the ground after the step (its broad phase's, whether in
    /// contact or not), those with an awake body: the pairs its narrow phase handles.
    pub fn ground_pairs(&self) -> usize {
        let awake =
            |c: ColliderHandle| self.colliders[c].parent().is_some_and(|b| !self.bodies[b].is_sleeping());
        self.narrow_phase
            .contact_pairs_with(self.ground)
            .filter(|p| awake(if p.collider1 == self.ground { p.collider2 } else { p.collider1 }))
            .count()
    }

    /// Pose of the `i`-th spawned body, as rtcd's pose.
    pub fn pose(&self, i: usize) -> rtcd::Pose {
        let p = self.bodies[self.handles[i]].position();
        rtcd::Pose::new(p.translation, p.rotation)
    }

    /// Whether the `i`-th body sleeps.
    pub fn sleeping(&self, i: usize) -> bool {
        self.bodies[self.handles[i]].is_sleeping()
    }

    /// Kinetic energy of every dynamic body.
    pub fn kinetic_energy(&self) -> f32 {
        self.handles.iter().map(|h| self.bodies[*h].kinetic_energy()).sum()
    }

    /// What Rapier's narrow phase holds after the step: pairs with contacts (any manifold with a
    /// point), their manifolds with a point, and those manifolds' points (what the solver is given,
    /// before Rapier's contact clustering).
    pub fn contacts(&self) -> ContactCounts {
        let mut c = ContactCounts::default();
        for p in self.narrow_phase.contact_pairs().filter(|p| p.has_any_active_contact()) {
            c.pairs += 1;
            for m in p.manifolds.iter().filter(|m| !m.points.is_empty()) {
                c.manifolds += 1;
                c.points += m.points.len();
            }
        }
        c
    }
}

/// See [`World::contacts`].
#[derive(Clone, Copy, Debug, Default)]
pub struct ContactCounts {
    /// Pairs with a contact point.
    pub pairs: usize,
    /// Their manifolds with a point.
    pub manifolds: usize,
    /// Those manifolds' points.
    pub points: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The default set-ups run what the plugin does by default.
    #[test]
    fn deep_overlaps_default_to_the_plugins() {
        let params = RtcdParams::from_triangle_size(0.1);
        let cache = rtcd_rapier::ContactCache::new(params, rtcd_rapier::GroundMeshes::new()).unwrap();
        let s = cache.settings();
        assert_eq!(
            DeepOverlaps::default(),
            DeepOverlaps { merge: s.merge_deep_overlaps, bound: s.depth_bound }
        );
    }
}
