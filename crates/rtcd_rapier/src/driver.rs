//! [`RtcdDriver`]: the batch pass run before each `PhysicsPipeline::step`.
//!
//! Rapier's dispatcher is called pair by pair from inside the step; a ray tracer (and above all a
//! GPU one) wants every pair at once. So before the step the driver collects the colliders whose
//! shape is an [`RtcdShape`] (and cuboids, as grounds and walls), computes each one's world pose
//! exactly as Rapier will (`body.position() * collider.position_wrt_parent()`), finds the candidate
//! pairs with its own broad phase (boxes extended by the prediction, skins and a margin; sort and
//! sweep), runs one [`NarrowPhaseBackend::step`] over all of them, and publishes the manifolds in
//! the [`ContactCache`] the [`RtcdDispatcher`] reads during the step.
//!
//! The backend is injectable (a GPU one later); a CPU [`NarrowPhase`] is kept as a fallback: on a
//! backend error the driver warns once, switches to the CPU for good and re-runs the step, so no
//! step goes without contacts.

use std::{
    sync::{Arc, Mutex},
    time::Instant,
};

use parry3d::{
    bounding_volume::BoundingVolume, math::Pose, query::DefaultQueryDispatcher, query::QueryDispatcher,
};
use rapier3d::{
    dynamics::{
        ImpulseJointSet, IntegrationParameters, MultibodyJointSet, RigidBodyHandle, RigidBodySet,
        RigidBodyType,
    },
    geometry::{
        ActiveCollisionTypes, ColliderHandle, ColliderSet, InteractionGroups,
        NarrowPhase as RapierNarrowPhase,
    },
};
use rayon::prelude::*;
use rtcd::{
    NarrowPhase, NarrowPhaseBackend, PairInput, PairKey, ParamsError, RtcdMesh, RtcdParams, StepOptions,
    StepOutput,
};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::{
    broad_phase::CachedSweep,
    cache::{CacheKey, CacheSettings, CachedPair, ContactCache, MissPolicy, SWAPPED, UPDATED, USED},
    convert::{displacement, to_rtcd},
    dispatcher::RtcdDispatcher,
    ground::{GroundMeshes, cuboid_key},
    metrics::RtcdMetrics,
    reduction::Reducer,
    shape::RtcdShape,
};

/// With [`DriverSettings::lookahead_steps`] above 1, each step the results arrive late may see the
/// pair move this many times its motion of the last step ...
const LATE_MOTION_SLACK: f32 = 2.0;
/// ... plus this share of its prediction (a pair at rest that starts to move).
const LATE_REST_SHARE: f32 = 0.25;

/// Settings of the batch pass.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DriverSettings {
    /// Added to the prediction distance and the contact skins when the batch's broad phase pairs two
    /// bounding boxes. Pairs a little farther apart than the prediction keep their iterative state
    /// (IRTCD records, predictive rays) and are ready when they close in. Default: the parameters'
    /// `distance_extension` (2014 §3.1). With per-pair parameters (`RtcdParams::per_pair`, the
    /// default) it is a cap: each body's box grows by half its own mesh's `distance_extension`
    /// (`RtcdParams::for_pair` of the mesh with itself), at most half this margin, so two small
    /// bodies are paired within their own extension and a large one does not reach far.
    pub margin: f32,
    /// Record every ray and contact of each batch in world space ([`RtcdDriver::debug_geometry`]).
    pub record_rays: bool,
    /// The step's `IntegrationParameters::dt` (for soft CCD's enlarged prediction).
    pub dt: f32,
    /// How many steps ahead the batch's speculative contacts reach: 1 when the results are used by
    /// the step they were prepared for; more when they arrive late (pipelined GPU mode). Then each
    /// pair's [`BatchPair::reach`] goes beyond its prediction by its own motion of the last step
    /// (IRTCD 2013 Eq. 2's bound, from the step's relative poses, twice over, plus a quarter of its
    /// prediction) times `lookahead_steps - 1`, up to its culling distance, and bodies with soft
    /// CCD reach `lookahead_steps` sweeps ahead, so that contacts that closed in meanwhile are there
    /// to be refreshed ([`MissPolicy::RefreshDepths`]) instead of computed on the spot.
    pub lookahead_steps: f32,
}

impl DriverSettings {
    /// Defaults for these parameters.
    pub fn for_params(params: &RtcdParams) -> Self {
        Self { margin: params.distance_extension, record_rays: false, dt: 1.0 / 60.0, lookahead_steps: 1.0 }
    }
}

/// One pair of a [`Batch`].
#[derive(Clone, Debug)]
pub struct BatchPair {
    /// The backend's key (stable per collider pair).
    pub key: PairKey,
    /// Shape 1's mesh.
    pub mesh1: Arc<RtcdMesh>,
    /// Shape 2's mesh.
    pub mesh2: Arc<RtcdMesh>,
    /// Shape 1's world pose.
    pub pose1: Pose,
    /// Shape 2 in shape 1's frame, as Rapier computes it.
    pub pos12: Pose,
    /// Rapier's prediction for the pair (distance plus both skins).
    pub prediction: f32,
    /// How far out the pair's results hold candidates: its prediction, or more for results used
    /// steps late ([`DriverSettings::lookahead_steps`]), so that they can be refreshed as the pair
    /// closes in.
    pub reach: f32,
    /// Rapier will recycle the pair's contacts this step ([`RtcdDriver::detect_recycling`]): the
    /// backend keeps its state without tracing it ([`PairInput::hold`]) and nothing is published.
    /// Only for backends that do not hold pairs by key ([`NarrowPhaseBackend::holds_by_key`]); with
    /// the others, such pairs are in [`Batch::held_keys`], not among the batch's pairs.
    pub hold: bool,
    /// Shape 2's world pose.
    pose2: Pose,
    /// `pos12` one step earlier, from both colliders' [`Entry::before`]
    /// ([`rtcd::PairInput::previous`]).
    previous12: Pose,
    /// Both contact skins.
    skins: f32,
    /// The key of Rapier's pair: [`BatchPair::key`], except for a level chunk's pair.
    rapier_key: PairKey,
    /// Shape 2 is a chunk of a level shape. Rapier's pair is the mesh's and the whole level
    /// collider's: it holds or updates all the chunks' pairs at once, which come one after the
    /// other in the batch, the first with the pair's mirror.
    level: bool,
    cache_key: CacheKey,
    /// The pair's place in the batch's order ([`pair_order`]).
    order: u64,
    /// The pair's recycling reference, if known.
    mirror: Option<Mirror>,
}

/// The pairs of one step, prepared by [`RtcdDriver::prepare`]: owns its meshes (shared), so it can
/// be run on any thread by any backend and published later.
#[derive(Clone, Debug)]
pub struct Batch {
    /// The pairs given to the backend as inputs. With a backend that
    /// [`holds pairs by key`](NarrowPhaseBackend::holds_by_key), most pairs the batch holds are
    /// not among them ([`Batch::held_keys`]).
    pub pairs: Vec<BatchPair>,
    /// Held pairs given to the backend by key alone, and what the driver keeps of them (in pair
    /// order; shared with the driver until the next batch).
    held_keys: Vec<PairKey>,
    held: Arc<Vec<HeldPair>>,
    /// Largest reach of its pairs ([`BatchPair::reach`]): the backend reports candidates this far.
    pub prediction: f32,
    /// Ask the backend for every ray.
    pub record_rays: bool,
    /// Prepared to follow Rapier's contact recycling ([`RtcdDriver::detect_recycling`]).
    recycling: bool,
    /// Rapier's prediction distance: points closer (less the skins) become solver contacts.
    solver_distance: f32,
    /// Points Rapier keeps for the held pairs (see [`RtcdMetrics::held_points`]).
    held_points: usize,
    colliders: usize,
    broad_phase_time: std::time::Duration,
}

impl Batch {
    /// The backend inputs (with both shapes' world poses: a backend may upload one pose per
    /// collider rather than one per pair).
    pub fn inputs(&self) -> Vec<PairInput<'_>> {
        self.pairs
            .iter()
            .map(|p| {
                PairInput::new(p.key, &p.mesh1, &p.mesh2, to_rtcd(&p.pos12))
                    .with_hold(p.hold)
                    .with_previous(Some(to_rtcd(&p.previous12)))
                    .with_world(to_rtcd(&p.pose1), to_rtcd(&p.pose2))
            })
            .collect()
    }

    /// The backend options: every candidate comes back (`keep_contacts`) for the two-tier reduction.
    pub fn options(&self) -> StepOptions {
        StepOptions {
            prediction_distance: self.prediction,
            keep_contacts: true,
            // The driver reduces the contacts itself (two tiers); rtcd's own reduction would be lost.
            skip_manifolds: true,
            record_rays: self.record_rays,
            ..Default::default()
        }
    }

    /// The pairs held by key: Rapier recycles them this step, and the backend keeps their state
    /// without an input ([`NarrowPhaseBackend::step_with_held`]).
    pub fn held_keys(&self) -> &[PairKey] {
        &self.held_keys
    }

    /// Number of pairs, held by key or not.
    pub fn len(&self) -> usize {
        self.pairs.len() + self.held_keys.len()
    }

    /// Whether there is no pair.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// World-space rays and contacts of the last batch (debug overlay).
#[derive(Clone, Debug, Default)]
pub struct DebugGeometry {
    /// Every ray cast: start, end, how it was traced, what became of it.
    pub rays: Vec<(glam::Vec3, glam::Vec3, rtcd::RayKind, rtcd::narrow_phase::RayOutcome)>,
    /// The batch's manifold points, before the dispatcher hands them to Rapier (which keeps those
    /// within the prediction distance, and may merge a deep overlap's or bound its depth): point on
    /// shape 1, normal from shape 1 toward shape 2 (scaled by nothing), signed distance.
    pub contacts: Vec<(glam::Vec3, glam::Vec3, f32)>,
}

impl DebugGeometry {
    fn clear(&mut self) {
        self.rays.clear();
        self.contacts.clear();
    }

    fn push_pair(&mut self, pose1: &Pose, o: &rtcd::PairOutput) {
        let p = to_rtcd(pose1);
        self.rays.extend(
            o.rays.iter().map(|r| (p.transform_point(r.origin), p.transform_point(r.end), r.kind, r.outcome)),
        );
    }

    fn push_manifolds(&mut self, pose1: &Pose, manifolds: &[rtcd::ContactManifold]) {
        let p = to_rtcd(pose1);
        for m in manifolds {
            let n = p.transform_vector(m.local_n1);
            self.contacts.extend(m.points.iter().map(|c| (p.transform_point(c.local_p1), n, c.dist)));
        }
    }
}

/// High bits of the backend keys of cuboids, and of meshes whose instance id is shared by several
/// colliders. Instance ids count up from 1 and never reach them.
const CUBOID_KEY_BIT: u64 = 1 << 63;
const SHARED_INSTANCE_KEY_BIT: u64 = 1 << 62;
/// High bit of the backend keys of level chunks ([`chunk_key`]).
const LEVEL_CHUNK_KEY_BIT: u64 = 1 << 61;

/// The backend key of chunk `chunk` of the level collider whose entry key is `level_key` (a
/// [`collider_key`]): the collider's index, the chunk (20 bits) and the low bits of its generation.
fn chunk_key(level_key: u64, chunk: u32) -> u64 {
    LEVEL_CHUNK_KEY_BIT | ((chunk as u64 & 0xf_ffff) << 40) | (level_key & 0xff_ffff_ffff)
}

fn collider_key(bit: u64, h: ColliderHandle) -> u64 {
    let (index, generation) = h.into_raw_parts();
    bit | ((generation as u64 & 0x3fff_ffff) << 32) | index as u64
}

/// A collider's pose `pose` (on `rb`) one step of `dt` earlier along the body's velocities: Rapier
/// moves a body's points by `x -> c + v dt + R(ω dt) (x - c)` about its centre of mass `c` at the
/// start of the step, with the velocities the step solved for (which the body still has when the
/// next step detects); this is that move undone. A body placed by hand keeps its velocities, so it
/// has no path through what lay between.
/// How fast Rapier's position correction may move a body, as far as telling a body's motion from a
/// move by hand goes: `max_corrective_velocity()`, or where that is unbounded (Rapier allows
/// `f32::MAX`), the default one at the world's `length_unit`, so that a body teleported through a
/// wall is still taken as placed there and not traced along the jump.
fn corrective_speed(params: &IntegrationParameters) -> f32 {
    let v = params.max_corrective_velocity();
    if v.is_finite() && v < f32::MAX {
        v
    } else {
        IntegrationParameters { length_unit: params.length_unit, ..Default::default() }
            .max_corrective_velocity()
    }
}

fn pose_before(rb: &rapier3d::dynamics::RigidBody, pose: &Pose, dt: f32) -> Pose {
    let (v, w) = (rb.linvel(), rb.angvel());
    if dt <= 0.0 || (v == glam::Vec3::ZERO && w == glam::Vec3::ZERO) {
        return *pose;
    }
    let c = rb.center_of_mass();
    let back = glam::Quat::from_scaled_axis(-w * dt);
    let p = *pose;
    Pose::from_parts(c - v * dt + back * (p.translation - c), back * p.rotation)
}

/// What the batch knows of one collider.
struct Entry {
    handle: ColliderHandle,
    /// Instance id of a mesh, or `None` for a cuboid.
    instance: Option<u64>,
    cuboid: Option<crate::ground::CuboidKey>,
    /// A level shape (triangle mesh or heightfield on a fixed or kinematic body), cut into chunks;
    /// `mesh` is then its first chunk.
    level: Option<(crate::level::LevelKey, Arc<rtcd::LevelMesh>)>,
    mesh: Arc<RtcdMesh>,
    pose: Pose,
    /// `pose` one step earlier: where the collider was at the last batch, when its body's velocities
    /// and Rapier's position correction can have carried it here in a step; otherwise (a body moved
    /// by hand, or no pose from the last step) taken back along its velocities ([`pose_before`]).
    before: Pose,
    /// Largest distance of the shape's local bounding box from its origin (Rapier's recycling
    /// `max_extent`).
    extent: f32,
    /// The collider has active hooks (Rapier never recycles its pairs).
    hooks: bool,
    /// Rapier's collision box of the collider at `pose` (with its contact skin).
    collision_aabb: parry3d::bounding_volume::Aabb,
    /// The body has soft CCD.
    soft_ccd: bool,
    skin: f32,
    /// Linear velocity, clamped as Rapier's soft CCD clamps it (zero without soft CCD).
    soft_linvel: glam::Vec3,
    body: Option<RigidBodyHandle>,
    body_type: RigidBodyType,
    active: bool,
    groups: InteractionGroups,
    collision_types: ActiveCollisionTypes,
    /// The backend's id of this collider (stable across steps).
    key: u64,
}

/// A pair's world poses (shape 1, shape 2 in the batch's order) at Rapier's last full update of it,
/// which Rapier's contact recycling measures the drift from.
#[derive(Clone, Copy, Debug)]
struct Mirror {
    pose1: Pose,
    pose2: Pose,
    /// The results handed over then had a point within Rapier's prediction distance (an active
    /// contact for Rapier's solver).
    active: bool,
    /// Points handed over then (Rapier keeps them while it recycles the pair).
    points: u32,
    /// What the batch knows of Rapier's pair since that update: from the dispatcher's call for
    /// active results, else read from Rapier's pair when the test needed it.
    rapier: Option<RapierPair>,
}

/// What Rapier's recycling test of a pair depends on besides the poses, known from the order of the
/// dispatcher's call (with active results) or read from its contact pair (a walk of its contact
/// graph) at most once per full update: the collider order is the pair's for
/// as long as it is in the graph, and whether it has active solver contacts changes only at a full
/// update (recycling keeps the contacts, and the bound Rapier stored with them).
#[derive(Clone, Copy, Debug)]
struct RapierPair {
    /// Rapier's collider 1 is the batch's shape 1.
    same_order: bool,
    /// Rapier's bound for the pair is the full recycling distance (active solver contacts).
    active: bool,
}

/// A pair held by key (see [`Batch::held_keys`]): what the mirrors' update needs of it.
#[derive(Clone, Copy, Debug)]
struct HeldPair {
    key: PairKey,
    cache_key: CacheKey,
    order: u64,
    /// It has a mirror, kept in place in the driver's list (see `update_mirrors`).
    mirrored: bool,
}

/// A pair's recycling reference, kept from batch to batch in the batches' pair order.
#[derive(Clone, Copy, Debug)]
struct MirrorEntry {
    /// [`pair_order`] of the pair.
    order: u64,
    key: PairKey,
    mirror: Mirror,
}

/// A pair of the last published batch, for the mirror's update at the next one.
#[derive(Clone, Copy, Debug)]
struct Published {
    /// Rapier's pair ([`BatchPair::rapier_key`]).
    key: PairKey,
    cache_key: CacheKey,
    order: u64,
    pose1: Pose,
    pose2: Pose,
    hold: bool,
    active: bool,
    /// Points of its results.
    points: u32,
    /// Its results went to the cache.
    cached: bool,
    /// Shape 2 is a level chunk ([`BatchPair::level`]).
    level: bool,
    /// The reference the batch held the pair by (unchanged if Rapier recycles it).
    mirror: Option<Mirror>,
}

/// Where a pair of colliders comes in a batch: by the two colliders' arena indices, lower first
/// (the order of the batch's entries, see [`RtcdDriver::collect`]). The same pair has the same
/// place in every batch, so its mirror is found by walking the last batch's alongside.
fn pair_order(a: ColliderHandle, b: ColliderHandle) -> u64 {
    let (a, b) = (a.into_raw_parts().0, b.into_raw_parts().0);
    ((a.min(b) as u64) << 32) | a.max(b) as u64
}

/// Held pairs must drift at most this share of Rapier's recycling bound (and turn by a cosine above
/// [`HOLD_MIN_ROT_COS`] where Rapier asks 0.98) while the batch does not know Rapier's collider
/// order for the pair (it then measures the drift of both orders, the reverse one from inverted
/// poses, which rounds differently): rounding can only make the batch trace a pair Rapier then
/// recycles (wasted work), never hold one Rapier updates.
const HOLD_DRIFT_SHARE: f32 = 0.95;
/// The same share once Rapier's order and bound are known ([`RapierPair`]): the drift is then
/// measured as Rapier measures it, from the same poses with the same operations, so only a
/// hair of margin is kept. A pair creeping towards the bound at rest is traced in the band
/// between the share and the bound, where Rapier still recycles it: with a wide band, a resting
/// pile keeps many such pairs traced for every pair Rapier actually updates.
const HOLD_DRIFT_SHARE_KNOWN: f32 = 0.999;
const HOLD_MIN_ROT_COS: f32 = 0.985;

/// Rapier's bound on how far any point within `extent` of the origin moved from `base` to `cur`
/// (`relative_pose_drift` in rapier's `contact_pair.rs`: translation plus rotation chord).
fn pose_drift(base: &Pose, cur: &Pose, extent: f32) -> f32 {
    let trans = (cur.translation - base.translation).length();
    let d = cur.rotation * base.rotation.inverse();
    trans + 2.0 * glam::Vec3::new(d.x, d.y, d.z).length() * extent
}

/// `cos Δθ` between two rotations (rapier's `relative_rot_cos`).
fn rot_cos(base: glam::Quat, cur: glam::Quat) -> f32 {
    let c = base.dot(cur);
    2.0 * c * c - 1.0
}

/// The batch's broad phase sweeps again when a box moved by more than this share of the distance
/// its boxes are grown by (the prediction and the margin): a pile at rest then sweeps now and then
/// instead of every step.
const SWEEP_SLACK_SHARE: f32 = 0.25;

/// Fewest pairs a rayon job of the publishing reduction takes.
const REDUCTION_MIN_PAIRS: usize = 64;

/// The batch pass and its backend. See the module docs.
///
/// `Send + Sync` (the backend sits behind a mutex that `detect`, holding `&mut self`, never waits
/// on), so it can live in a Bevy resource.
pub struct RtcdDriver {
    backend: Mutex<Box<dyn NarrowPhaseBackend>>,
    params: RtcdParams,
    backend_name: String,
    fallback: Option<NarrowPhase>,
    fell_back: bool,
    /// Why the injected backend failed, when it did.
    fallback_error: Option<String>,
    cache: ContactCache,
    settings: DriverSettings,
    metrics: RtcdMetrics,
    warned_shared_instance: bool,
    entries: Vec<Entry>,
    boxes: Vec<rtcd::Aabb>,
    /// The broad phase, and the entries' ids it reuses its sweep by.
    sweep: CachedSweep,
    ids: Vec<u64>,
    candidates: Vec<(u32, u32)>,
    debug: DebugGeometry,
    /// Rapier's recycling reference of each pair it last fully updated with our results, in
    /// [`pair_order`].
    mirrors: Vec<MirrorEntry>,
    /// The other buffer of the mirrors' update.
    spare_mirrors: Vec<MirrorEntry>,
    published: Vec<Published>,
    /// The last published batch's pairs held by key, in pair order.
    published_held: Arc<Vec<HeldPair>>,
    /// Per-batch scratch (kept for their capacity): the keys the dispatcher was called for that had
    /// no cached result ([`ContactCache::take_updated`]), and how many pairs share each cache key
    /// that can be shared.
    updated: FxHashSet<CacheKey>,
    /// Per-batch scratch: [`ContactCache::published_flags`].
    flags: Vec<u8>,
    /// Per-batch scratch of `collect`: the instance ids seen, and those used by several colliders.
    seen_instances: FxHashSet<u64>,
    shared_instances: FxHashSet<u64>,
    key_uses: FxHashMap<CacheKey, u32>,
    /// Per-batch scratch: per entry, whether its pairs' cache keys can be shared ([`shareable`]).
    shareable: Vec<bool>,
    /// Each collider's pose at the last batch and its body's speed then ([`Entry::before`]), and
    /// this batch's.
    last_poses: FxHashMap<ColliderHandle, (Pose, f32)>,
    next_poses: FxHashMap<ColliderHandle, (Pose, f32)>,
    /// Rapier's `max_corrective_velocity`: how fast its position correction may move a body.
    max_corrective: f32,
}

impl std::fmt::Debug for RtcdDriver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RtcdDriver")
            .field("backend", &self.backend_name)
            .field("fell_back", &self.fell_back)
            .field("settings", &self.settings)
            .field("cache", &self.cache)
            .finish()
    }
}

impl RtcdDriver {
    /// A driver on the CPU backend ([`rtcd::NarrowPhase`]) with these parameters.
    pub fn new(params: RtcdParams) -> Result<Self, ParamsError> {
        Self::with_backend(Box::new(NarrowPhase::new(params)?))
    }

    /// A driver on any backend, with a CPU fallback using the backend's parameters.
    pub fn with_backend(backend: Box<dyn NarrowPhaseBackend>) -> Result<Self, ParamsError> {
        let params = *backend.params();
        let fallback = NarrowPhase::new(params)?;
        let cache = ContactCache::new(params, GroundMeshes::new())?;
        Ok(Self {
            metrics: RtcdMetrics { backend: backend.name(), ..Default::default() },
            backend_name: backend.name(),
            backend: Mutex::new(backend),
            params,
            fallback: Some(fallback),
            fell_back: false,
            fallback_error: None,
            cache,
            settings: DriverSettings::for_params(&params),
            warned_shared_instance: false,
            entries: Vec::new(),
            last_poses: FxHashMap::default(),
            next_poses: FxHashMap::default(),
            max_corrective: corrective_speed(&IntegrationParameters::default()),
            boxes: Vec::new(),
            sweep: CachedSweep::default(),
            ids: Vec::new(),
            candidates: Vec::new(),
            debug: DebugGeometry::default(),
            mirrors: Vec::new(),
            spare_mirrors: Vec::new(),
            published: Vec::new(),
            published_held: Default::default(),
            updated: FxHashSet::default(),
            flags: Vec::new(),
            seen_instances: FxHashSet::default(),
            shared_instances: FxHashSet::default(),
            key_uses: FxHashMap::default(),
            shareable: Vec::new(),
        })
    }

    /// Replaces the backend and takes its parameters (the cache and the CPU fallback too). Pair
    /// state of the old backend is dropped; the dispatcher installed in Rapier keeps working.
    pub fn replace_backend(&mut self, backend: Box<dyn NarrowPhaseBackend>) -> Result<(), ParamsError> {
        let params = *backend.params();
        self.fallback = Some(NarrowPhase::new(params)?);
        self.cache.set_params(params)?;
        self.settings = DriverSettings { margin: params.distance_extension, ..self.settings };
        self.params = params;
        self.backend_name = backend.name();
        *self.backend.get_mut().unwrap_or_else(|e| e.into_inner()) = backend;
        self.fell_back = false;
        self.fallback_error = None;
        Ok(())
    }

    /// The cache shared with the dispatcher.
    pub fn cache(&self) -> &ContactCache {
        &self.cache
    }

    /// A dispatcher reading this driver's cache.
    pub fn dispatcher(&self) -> RtcdDispatcher {
        RtcdDispatcher::new(self.cache.clone())
    }

    /// A Rapier narrow phase with our dispatcher chained in front of Rapier's default one. Install it
    /// before any collider is added (Rapier does not re-report existing pairs).
    pub fn rapier_narrow_phase(&self) -> RapierNarrowPhase {
        RapierNarrowPhase::with_query_dispatcher(self.dispatcher().chain(DefaultQueryDispatcher))
    }

    /// The settings.
    pub fn settings(&self) -> DriverSettings {
        self.settings
    }

    /// Changes the settings.
    pub fn set_settings(&mut self, settings: DriverSettings) {
        self.settings = settings;
        // The step's length, for the depth bound of `DepthBound::Corrective`.
        self.cache.set_step_dt(settings.dt);
    }

    /// Takes what the driver needs of the world's parameters: `dt` ([`DriverSettings::dt`]) and what
    /// [`DepthBound::Corrective`](crate::DepthBound) derives the bound on the depths handed to the
    /// solver from ([`corrective_depth`](crate::corrective_depth)). [`RtcdDriver::detect`],
    /// [`RtcdDriver::detect_recycling`] and [`RtcdDriver::prepare`] call it themselves with the
    /// parameters they are given.
    pub fn set_integration_parameters(&mut self, params: &IntegrationParameters) {
        self.settings.dt = params.dt;
        self.max_corrective = corrective_speed(params);
        self.cache.set_integration_parameters(params);
    }

    /// What the dispatcher does with pairs the batch did not compute at the current pose.
    pub fn set_miss_policy(&self, miss_policy: MissPolicy) {
        self.cache.set_settings(CacheSettings { miss_policy, ..self.cache.settings() });
    }

    /// The backend's parameters.
    pub fn params(&self) -> &RtcdParams {
        &self.params
    }

    /// The name of the backend in use.
    pub fn backend_name(&self) -> String {
        self.backend_name.clone()
    }

    /// Whether the injected backend failed and the CPU fallback took over.
    pub fn fell_back(&self) -> bool {
        self.fell_back
    }

    /// The error of the injected backend that made the CPU fallback take over, if one did.
    pub fn fallback_error(&self) -> Option<&str> {
        self.fallback_error.as_deref()
    }

    /// Figures of the last batch, with the dispatcher's counters as they are now (call after
    /// Rapier's step for the whole step).
    pub fn metrics(&self) -> RtcdMetrics {
        RtcdMetrics { cache: self.cache.counters(), ..self.metrics.clone() }
    }

    /// The batch pass: call right before `PhysicsPipeline::step`, after every change to bodies and
    /// colliders, with the step's `params` (their prediction distance is traced; their `dt`,
    /// `length_unit` and corrective velocity set the soft-CCD reach, the deep-overlap handling and
    /// the hand-move test: [`RtcdDriver::set_integration_parameters`]). Resets the dispatcher's
    /// counters and replaces the cache's results. Same as [`RtcdDriver::prepare`], a backend step,
    /// then [`RtcdDriver::publish`]. Every pair is traced; [`RtcdDriver::detect_recycling`] holds
    /// those Rapier recycles.
    pub fn detect(
        &mut self,
        bodies: &RigidBodySet,
        colliders: &ColliderSet,
        joints: Joints,
        params: &IntegrationParameters,
    ) -> RtcdMetrics {
        let batch = self.prepare(bodies, colliders, joints, params);
        let out = self.run(&batch);
        self.publish(&batch, out)
    }

    /// [`RtcdDriver::detect`] for a pipeline with Rapier's contact recycling on
    /// (`params.contact_recycling`, Rapier's default): the pairs Rapier will recycle this step (their
    /// relative pose drifted less than `params.contact_recycle_distance()` since Rapier last updated
    /// them, as Rapier measures it) are held, not traced: the backend keeps their state (given by key,
    /// [`NarrowPhaseBackend::step_with_held`], to a backend that holds so, else as inputs with
    /// [`PairInput::hold`]) and the dispatcher is not called for them; so are the pairs Rapier's
    /// soft-CCD test clears without calling the dispatcher (collision boxes apart). `narrow_phase`:
    /// the one the step will run. Call it right before `PhysicsPipeline::step` with the same
    /// `params` (set as in [`RtcdDriver::detect`]); with recycling off it is [`RtcdDriver::detect`].
    ///
    /// The batch mirrors Rapier's recycling test from the poses at which the dispatcher used its
    /// results, with a margin; a pair Rapier updates anyway (a collider changed in another way than
    /// its pose) reaches the dispatcher's miss path ([`MissPolicy`]), counted in
    /// [`CacheCounters::misses`](crate::CacheCounters::misses).
    pub fn detect_recycling(
        &mut self,
        bodies: &RigidBodySet,
        colliders: &ColliderSet,
        joints: Joints,
        params: &IntegrationParameters,
        narrow_phase: &RapierNarrowPhase,
    ) -> RtcdMetrics {
        // Soft-CCD velocities are clamped with the step's `dt`, as Rapier clamps them; the depth
        // bound follows the parameters too.
        self.set_integration_parameters(params);
        let recycle = params
            .contact_recycling
            .then(|| Recycling { distance: params.contact_recycle_distance(), narrow_phase });
        let batch = self.prepare_with(bodies, colliders, joints, params.prediction_distance(), recycle);
        let out = self.run(&batch);
        self.publish(&batch, out)
    }

    /// Runs the driver's backend on a prepared batch (falling back to the CPU on errors).
    pub fn run(&mut self, batch: &Batch) -> StepOutput {
        let inputs = batch.inputs();
        let opts = batch.options();
        let backend = self.backend.get_mut().unwrap_or_else(|e| e.into_inner());
        let out = Self::run_step(
            backend,
            &mut self.fallback,
            (&mut self.fell_back, &mut self.fallback_error),
            &inputs,
            &batch.held_keys,
            &opts,
        );
        self.backend_name = backend.name();
        out
    }

    /// First half of [`RtcdDriver::detect`] (`params` set as there): our broad phase over the
    /// colliders at their current poses. The batch owns what a backend step needs, so it can be
    /// sent to another thread (a render world) and its results published later with
    /// [`RtcdDriver::publish`].
    pub fn prepare(
        &mut self,
        bodies: &RigidBodySet,
        colliders: &ColliderSet,
        joints: Joints,
        params: &IntegrationParameters,
    ) -> Batch {
        self.set_integration_parameters(params);
        self.prepare_with(bodies, colliders, joints, params.prediction_distance(), None)
    }

    /// [`RtcdDriver::prepare`], following Rapier's contact recycling when `recycle` (the recycling
    /// distance and the narrow phase) is given (see [`RtcdDriver::detect_recycling`]).
    fn prepare_with(
        &mut self,
        bodies: &RigidBodySet,
        colliders: &ColliderSet,
        joints: Joints,
        prediction: f32,
        recycle: Option<Recycling>,
    ) -> Batch {
        let start = Instant::now();
        self.update_mirrors(recycle.is_some());
        let prediction = if prediction.is_finite() { prediction.max(0.0) } else { 0.0 };
        self.collect(bodies, colliders);
        let (params, margin) = (self.params, self.settings.margin.max(0.0));
        // Each body's share of a pair's margin: with per-pair parameters its own extension, at
        // most the margin (a 40 m ground box's own extension would pair it with everything).
        let grow_of = |mesh: &RtcdMesh| {
            let m = if params.per_pair {
                params.for_pair(mesh, mesh).distance_extension.min(margin)
            } else {
                margin
            };
            0.5 * (prediction + m.max(0.0))
        };
        let dt = self.settings.dt.max(0.0) * self.settings.lookahead_steps.max(1.0);
        let lookahead_lead = if self.settings.lookahead_steps.is_finite() {
            (self.settings.lookahead_steps - 1.0).max(0.0)
        } else {
            0.0
        };
        self.boxes.clear();
        let mut grow_sum = 0.0f64;
        self.boxes.extend(self.entries.iter().map(|e| {
            let grow = grow_of(&e.mesh);
            grow_sum += grow as f64;
            // Soft CCD widens Rapier's pairing by the motion of the step; so does ours.
            let sweep = e.soft_linvel.length() * dt;
            let local = e.level.as_ref().map_or_else(|| e.mesh.aabb(), |(_, l)| l.aabb());
            local.transformed(&to_rtcd(&e.pose)).extended(grow + e.skin + sweep)
        }));
        // The sweep's slack only trades sweeps against pairs: the bodies' mean growth.
        let grow = (grow_sum / self.entries.len().max(1) as f64) as f32;
        // In the entries' order (the colliders' arena order), which changes only with the pairs. The
        // sweep is made again only when a box moved out of its slack.
        self.ids.clear();
        self.ids.extend(self.entries.iter().map(|e| e.key));
        self.sweep.candidates(&self.ids, &self.boxes, SWEEP_SLACK_SHARE * grow, &mut self.candidates);
        let mut old_mirrors = std::mem::take(&mut self.mirrors);
        // How many pairs share each cache key that can be shared.
        self.key_uses.clear();
        if recycle.is_some() {
            // Which entries can share keys, looked up per candidate from a compact list.
            self.shareable.clear();
            self.shareable.extend(self.entries.iter().map(shareable));
            for &(i, j) in &self.candidates {
                if (self.shareable[i as usize] || self.shareable[j as usize])
                    && let Some((_, _, cache_key)) = batch_pair(&self.entries, i, j, joints)
                {
                    *self.key_uses.entry(cache_key).or_default() += 1;
                }
            }
        }
        let mut next_mirror = 0;

        // Orient and filter the pairs, as Rapier would filter them before calling the dispatcher.
        // Pairs Rapier recycles go to the backend by key, if it keeps them so.
        let by_key =
            recycle.is_some() && self.backend.get_mut().unwrap_or_else(|e| e.into_inner()).holds_by_key();
        let (mut held_keys, mut held) =
            (Vec::with_capacity(self.candidates.len()), Vec::with_capacity(self.candidates.len()));
        let mut pairs: Vec<BatchPair> = Vec::with_capacity(self.candidates.len());
        let mut batch_prediction = prediction;
        let mut held_points = 0;
        let mut chunks = Vec::new();
        for &(i, j) in &self.candidates {
            let Some((e1, e2, cache_key)) = batch_pair(&self.entries, i, j, joints) else { continue };
            // Rapier's prediction for the pair: the distance plus both contact skins.
            // With soft CCD on either body, Rapier enlarges the prediction by the relative motion of
            // the step (rapier's pair_update.rs); the batch does the same so its speculative
            // contacts are there when a fast body closes in.
            let soft = e1.soft_linvel != glam::Vec3::ZERO || e2.soft_linvel != glam::Vec3::ZERO;
            let base = if soft {
                prediction.max(dt * (e1.soft_linvel - e2.soft_linvel).length())
            } else {
                prediction
            };
            let (pos12, previous12) = (e1.pose.inv_mul(&e2.pose), e1.before.inv_mul(&e2.before));
            // Late results: the pair's own motion of the last step, continued over the steps until
            // they are used (the cache refreshes them only while the pair moved less than their
            // prediction exceeds Rapier's), with slack for a pair that speeds up or starts moving.
            // The backend reports candidates out to the batch's largest prediction, and the cache
            // trusts results no further than the pair's culling distance (the predictive rays'
            // reach): the lead stops there.
            let pair_prediction = base + e1.skin + e2.skin;
            let with_lead = |mesh2: &RtcdMesh| {
                if lookahead_lead <= 0.0 {
                    return pair_prediction;
                }
                let radii = [e1.mesh.max_radius(), mesh2.max_radius()];
                let d = displacement(&previous12, &pos12, radii);
                let d = if d.is_finite() { d } else { 0.0 };
                let lead = lookahead_lead * (LATE_MOTION_SLACK * d + LATE_REST_SHARE * base);
                let reach = params.for_pair(&e1.mesh, mesh2).culling_dist;
                (pair_prediction + lead).min(pair_prediction.max(reach))
            };
            batch_prediction = batch_prediction.max(pair_prediction);
            let order = pair_order(e1.handle, e2.handle);
            // Rapier's pair (for a level, the body's and the whole level collider's).
            let key = PairKey::new(e1.key, e2.key);
            // The pair's mirror: both lists are in pair order; the mirrors of pairs that left the
            // batch are passed over (Rapier may have dropped them, and their reference with them).
            while old_mirrors.get(next_mirror).is_some_and(|m| m.order < order) {
                next_mirror += 1;
            }
            let found = old_mirrors.get(next_mirror).is_some_and(|m| m.order == order && m.key == key);
            let mut mirror = found.then(|| old_mirrors[next_mirror].mirror);
            let update = match &recycle {
                Some(r) => rapier_update(e1, e2, mirror.as_mut(), r, prediction),
                None => RapierUpdate::Full,
            };
            if update == RapierUpdate::Cleared {
                mirror = None;
            }
            // Pairs under a shared cache key cannot be told apart by the dispatcher's use of
            // them: never held, never mirrored.
            let shared =
                (shareable(e1) || shareable(e2)) && self.key_uses.get(&cache_key).is_some_and(|&n| n > 1);
            if shared {
                mirror = None;
            }
            let hold = update != RapierUpdate::Full && !shared;
            if hold {
                held_points += mirror.map_or(0, |m| m.points as usize);
            }
            // A level's pair is traced (or held) as the pairs of the body and the level's chunks
            // within the body's broad-phase box, in the level's frame. Rapier holds or updates
            // them all at once: one mirror, carried by the first.
            chunks.clear();
            if let Some((_, level)) = &e2.level {
                let body = if std::ptr::eq(e1, &self.entries[i as usize]) { i } else { j };
                let query = self.boxes[body as usize]
                    .transformed(&to_rtcd(&e2.pose).inverse())
                    .extended(grow_of(&e2.mesh) + e2.skin);
                level.chunks_overlapping(&query, &mut chunks);
            }
            if hold && by_key {
                match &e2.level {
                    Some(_) => {
                        held_keys.extend(chunks.iter().map(|&c| PairKey::new(e1.key, chunk_key(e2.key, c))))
                    }
                    None => held_keys.push(key),
                }
                // A held pair's mirror stays where it is (with what `rapier_update` learnt), for the
                // mirrors' update to carry over.
                if let Some(m) = mirror {
                    old_mirrors[next_mirror].mirror = m;
                }
                held.push(HeldPair { key, cache_key, order, mirrored: mirror.is_some() });
                continue;
            }
            let pair = BatchPair {
                key,
                mesh1: e1.mesh.clone(),
                mesh2: e2.mesh.clone(),
                pose1: e1.pose,
                pos12,
                previous12,
                prediction: pair_prediction,
                reach: with_lead(&e2.mesh),
                hold,
                pose2: e2.pose,
                skins: e1.skin + e2.skin,
                rapier_key: key,
                level: false,
                cache_key,
                order,
                mirror,
            };
            match &e2.level {
                Some((level_key, level)) => {
                    let id1 = e1.instance.unwrap_or_default();
                    pairs.extend(chunks.iter().enumerate().map(|(n, &c)| BatchPair {
                        key: PairKey::new(e1.key, chunk_key(e2.key, c)),
                        reach: with_lead(&level.chunks()[c as usize]),
                        mesh2: level.chunks()[c as usize].clone(),
                        level: true,
                        cache_key: CacheKey::level(id1, *level_key, c),
                        mirror: if n == 0 { mirror } else { None },
                        ..pair.clone()
                    }));
                }
                None => pairs.push(pair),
            }
        }
        // Kept for the held pairs' mirrors (see `update_mirrors`).
        self.mirrors = old_mirrors;
        // Late results' leads widen what the backend reports.
        let batch_prediction = pairs.iter().map(|p| p.reach).fold(batch_prediction, f32::max);
        Batch {
            pairs,
            held_keys,
            held: Arc::new(held),
            prediction: batch_prediction,
            record_rays: self.settings.record_rays,
            recycling: recycle.is_some(),
            solver_distance: prediction,
            held_points,
            colliders: self.entries.len(),
            broad_phase_time: start.elapsed(),
        }
    }

    /// Updates the recycling mirrors from what the dispatcher did with the last published batch,
    /// before the next batch is prepared (see [`RtcdDriver::detect_recycling`]).
    fn update_mirrors(&mut self, recycling: bool) {
        self.cache.track_updates(recycling);
        let mut updated = std::mem::take(&mut self.updated);
        self.cache.take_updated(&mut updated);
        // The list the last batch was prepared with (its held pairs' mirrors are there), and the new
        // one.
        let old = std::mem::take(&mut self.mirrors);
        let mut mirrors = std::mem::take(&mut self.spare_mirrors);
        mirrors.clear();
        if !recycling {
            self.published.clear();
            self.published_held = Default::default();
        }
        // Both lists of published pairs are in pair order, and so are the mirrors made from them.
        // A pair not updated by Rapier (recycled, or asleep) keeps its reference. A held pair that
        // Rapier updated was updated at a pose the batch did not trace: its reference is unknown.
        let mut flags = std::mem::take(&mut self.flags);
        self.cache.published_flags(&mut flags);
        let mut next_flag = 0;
        let published_held = std::mem::take(&mut self.published_held);
        let mut held = published_held.iter().copied().peekable();
        let mut next_old = 0;
        let mut keep_held = |h: HeldPair, mirrors: &mut Vec<MirrorEntry>| {
            if h.mirrored && !updated.contains(&h.cache_key) {
                while old.get(next_old).is_some_and(|m| m.order < h.order) {
                    next_old += 1;
                }
                if let Some(m) = old.get(next_old).filter(|m| m.order == h.order && m.key == h.key) {
                    mirrors.push(*m);
                }
            }
        };
        let published = std::mem::take(&mut self.published);
        let mut rest = &published[..];
        while let Some(p) = rest.first() {
            // A level's pair comes as the pairs of its chunks, one after the other.
            let n = if p.level {
                rest.iter().take_while(|q| q.level && q.order == p.order && q.key == p.key).count()
            } else {
                1
            };
            let (group, tail) = rest.split_at(n);
            rest = tail;
            while let Some(h) = held.next_if(|h| h.order < p.order) {
                keep_held(h, &mut mirrors);
            }
            // What the dispatcher did with the pair: from the cache's flags if it was published
            // there (in the same order), else from the keys it had nothing cached for. Rapier's
            // pair of a level was updated if any chunk's was, and with the batch's results if
            // every chunk it looked up had them (a chunk missed is noted under the whole level's
            // key too).
            let (mut was_updated, mut used, mut swapped) = (false, true, false);
            for q in group {
                let f = if q.cached {
                    next_flag += 1;
                    flags.get(next_flag - 1).copied().unwrap_or(UPDATED)
                } else if updated.contains(&q.cache_key) {
                    UPDATED
                } else {
                    0
                };
                if f & UPDATED != 0 {
                    was_updated = true;
                    used &= f & USED != 0;
                    swapped |= f & SWAPPED != 0;
                }
            }
            if p.level && p.cache_key.whole_level().is_some_and(|k| updated.contains(&k)) {
                (was_updated, used) = (true, false);
            }
            let mirror = match was_updated.then_some(used) {
                None => p.mirror,
                // Updated with the batch's results: at the batch's poses. Rapier called the dispatcher
                // in its collider order (the cache key's is the batch's); results with a point within
                // the prediction mean active solver contacts (see `rapier_update`): with them, what
                // the batch would read of Rapier's pair is known. The chunks' keys do not tell
                // Rapier's collider order: for a level it is read from Rapier's pair when needed.
                Some(used) if used && !p.hold => {
                    let active = group.iter().any(|q| q.active);
                    let rapier =
                        (active && !p.level).then_some(RapierPair { same_order: !swapped, active: true });
                    Some(Mirror {
                        pose1: p.pose1,
                        pose2: p.pose2,
                        active,
                        points: group.iter().map(|q| q.points).sum(),
                        rapier,
                    })
                }
                Some(_) => None,
            };
            if let Some(mirror) = mirror {
                mirrors.push(MirrorEntry { order: p.order, key: p.key, mirror });
            }
        }
        self.published = published;
        self.published.clear();
        for h in held {
            keep_held(h, &mut mirrors);
        }
        self.mirrors = mirrors;
        self.spare_mirrors = old;
        self.updated = updated;
        self.flags = flags;
    }

    /// Second half of [`RtcdDriver::detect`]: reduces a backend's output for `batch` and publishes
    /// it to the cache the dispatcher reads. Resets the dispatcher's counters. Held pairs
    /// ([`BatchPair::hold`]) are not published.
    pub fn publish(&mut self, batch: &Batch, out: StepOutput) -> RtcdMetrics {
        let publish_start = Instant::now();
        self.published.clear();
        self.published_held = Default::default();
        let out_time = out.metrics.time;
        self.cache.reset_counters();
        let settings = self.cache.settings();
        let angle = self.params.manifold_angle;
        let (spec_angle, support_fraction) =
            (settings.speculative_angle_or(angle), settings.support_fraction);
        let params = self.params;
        self.debug.clear();
        let record = batch.record_rays;
        // The two-tier reduction of each pair, in parallel (each worker thread's own reducer),
        // collected in pair order straight into place.
        let mut outputs = out.pairs;
        let mut manifolds: Vec<Option<Vec<rtcd::ContactManifold>>> = Vec::with_capacity(batch.pairs.len());
        batch
            .pairs
            .par_iter()
            .zip(outputs.par_iter_mut())
            .with_min_len(REDUCTION_MIN_PAIRS)
            .map(|(p, o)| {
                (o.error.is_none() && !p.hold).then(|| {
                    Reducer::with_local(|reducer| {
                        reducer.reduce_output(
                            o,
                            &to_rtcd(&p.pos12),
                            angle,
                            spec_angle,
                            p.prediction,
                            p.reach,
                            support_fraction,
                            p.mesh1.length_scale().min(p.mesh2.length_scale()),
                        )
                    })
                })
            })
            .collect_into_vec(&mut manifolds);
        if batch.recycling {
            self.published_held = batch.held.clone();
            self.published.extend(batch.pairs.iter().zip(&manifolds).map(|(p, m)| {
                Published {
                    key: p.rapier_key,
                    cache_key: p.cache_key,
                    order: p.order,
                    pose1: p.pose1,
                    pose2: p.pose2,
                    hold: p.hold,
                    mirror: p.mirror,
                    cached: m.is_some(),
                    level: p.level,
                    active: m
                        .iter()
                        .flatten()
                        .flat_map(|m| &m.points)
                        .any(|c| c.dist < batch.solver_distance + p.skins),
                    points: m.iter().flatten().map(|m| m.points.len() as u32).sum(),
                }
            }));
        }
        let (mut manifold_count, mut point_count) = (0, 0);
        for m in manifolds.iter().flatten().flatten() {
            manifold_count += 1;
            point_count += m.points.len();
        }
        let published = batch.pairs.iter().zip(&outputs).zip(manifolds).filter_map(|((p, o), m)| {
            let manifolds = m?;
            if record {
                self.debug.push_pair(&p.pose1, o);
                self.debug.push_manifolds(&p.pose1, &manifolds);
            }
            let radii = [p.mesh1.max_radius(), p.mesh2.max_radius()];
            let culling = params.for_pair(&p.mesh1, &p.mesh2).culling_dist;
            Some((
                p.cache_key,
                CachedPair { pos12: p.pos12, manifolds, radii, prediction: p.reach.min(culling) },
            ))
        });
        self.cache.publish(published, batch.prediction);
        // The outputs (each traced pair's candidates) are freed off this thread, as the cache's
        // old results are (see `ContactCache::publish`).
        rayon::spawn(move || drop(outputs));
        self.metrics = RtcdMetrics {
            backend: self.backend_name.clone(),
            fell_back: self.fell_back,
            colliders: batch.colliders,
            batch_pairs: batch.len(),
            narrow_phase: out.metrics,
            manifolds: manifold_count,
            manifold_points: point_count,
            held_points: batch.held_points,
            held_pairs: batch.held_keys.len() + batch.pairs.iter().filter(|p| p.hold).count(),
            cache: Default::default(),
            broad_phase_time: batch.broad_phase_time,
            // Compute time: the broad phase, the backend's step and this publishing (in pipelined use
            // the batch waits between them; that latency is not narrow-phase work).
            detect_time: batch.broad_phase_time + out_time + publish_start.elapsed(),
        };
        self.metrics()
    }

    /// Rays and contact normals of the last published batch, in world space, when
    /// [`DriverSettings::record_rays`] is on (for debug overlays).
    pub fn debug_geometry(&self) -> &DebugGeometry {
        &self.debug
    }

    /// Collects our colliders and the cuboids with their poses, as Rapier will see them this step.
    fn collect(&mut self, bodies: &RigidBodySet, colliders: &ColliderSet) {
        self.entries.clear();
        self.next_poses.clear();
        let (cuboids, levels) = (self.cache.settings().cuboids, self.cache.settings().levels);
        let (mut seen, mut shared) =
            (std::mem::take(&mut self.seen_instances), std::mem::take(&mut self.shared_instances));
        seen.clear();
        shared.clear();
        let mut dynamic_levels = Vec::new();
        for (handle, co) in colliders.iter() {
            if !co.is_enabled() || co.is_sensor() {
                continue;
            }
            let shape = co.shape();
            let rb = co.parent().and_then(|h| bodies.get(h));
            let mut level = None;
            let (instance, cuboid, mesh) = if let Some(s) = shape.as_shape::<RtcdShape>() {
                (Some(s.id()), None, s.mesh().clone())
            } else if let Some(c) = shape.as_cuboid().filter(|_| cuboids) {
                match self.cache.grounds().get(c.half_extents) {
                    Some(m) => (None, Some(cuboid_key(c.half_extents)), m),
                    None => continue,
                }
            } else if levels
                && rb.is_none_or(|rb| !rb.is_dynamic())
                && let Some((key, l)) = self.cache.grounds().level(co.shared_shape())
            {
                let first = l.chunks()[0].clone();
                level = Some((key, l));
                (None, None, first)
            } else {
                if levels
                    && rb.is_some_and(|rb| rb.is_dynamic())
                    && (shape.as_trimesh().is_some() || shape.as_heightfield().is_some())
                {
                    dynamic_levels.push(co.shared_shape().clone());
                }
                continue;
            };
            // The expression Rapier uses when it moves colliders with their body.
            let pose = match (rb, co.position_wrt_parent()) {
                (Some(rb), Some(local)) => *rb.position() * *local,
                _ => *co.position(),
            };
            if let Some(id) = instance
                && !seen.insert(id)
            {
                shared.insert(id);
            }
            self.entries.push(Entry {
                handle,
                instance,
                cuboid,
                level,
                mesh,
                pose,
                before: {
                    let speed = rb.map_or(0.0, |rb| rb.linvel().length());
                    let last = self.last_poses.get(&handle).copied();
                    self.next_poses.insert(handle, (pose, speed));
                    match last {
                        Some((old, old_speed))
                            if (old.translation - pose.translation).length()
                                <= 1.5 * (old_speed.max(speed) + self.max_corrective) * self.settings.dt
                                    + 1e-6 * pose.translation.length() =>
                        {
                            old
                        }
                        _ => rb.map_or(pose, |rb| pose_before(rb, &pose, self.settings.dt)),
                    }
                },
                extent: {
                    let b = shape.compute_local_aabb();
                    b.mins.length().max(b.maxs.length())
                },
                hooks: !co.active_hooks().is_empty(),
                collision_aabb: shape.compute_aabb(&pose).loosened(co.contact_skin()),
                soft_ccd: rb.is_some_and(|rb| rb.soft_ccd_prediction() > 0.0),
                skin: co.contact_skin().max(0.0),
                soft_linvel: rb
                    .filter(|rb| rb.soft_ccd_prediction() > 0.0)
                    // As Rapier: the sweep of a step is at most the soft-CCD prediction (so at most
                    // `lookahead_steps` predictions over the batch's lookahead).
                    .map_or(glam::Vec3::ZERO, |rb| {
                        rb.linvel().clamp_length_max(rb.soft_ccd_prediction() / self.settings.dt.max(1e-6))
                    }),
                body: rb.and(co.parent()),
                body_type: rb.map_or(RigidBodyType::Fixed, |rb| rb.body_type()),
                active: rb.is_some_and(|rb| !rb.is_fixed() && !rb.is_sleeping()),
                groups: co.collision_groups(),
                collision_types: co.active_collision_types(),
                key: 0,
            });
        }
        // Box meshes and levels no collider uses any more (removed, resized, or edited into new
        // shapes) are let go; a level shape also on a dynamic body is left to Rapier for this batch.
        self.cache.grounds().forget_unseen();
        if levels {
            for shape in &dynamic_levels {
                self.cache.grounds().mark_level_on_dynamic(&**shape);
            }
        }
        // The batch's pair order ([`pair_order`]) is the entries' order: the arena's, which its
        // iterator follows.
        if !self.entries.is_sorted_by_key(|e| e.handle.into_raw_parts().0) {
            self.entries.sort_unstable_by_key(|e| e.handle.into_raw_parts().0);
        }
        if !shared.is_empty() && !self.warned_shared_instance {
            self.warned_shared_instance = true;
            log::warn!(
                "rtcd_rapier: {} RtcdShape instance id(s) are used by several colliders; give each collider its own \
                 `RtcdShape::instance()` (results are still told apart by pose, at a cost)",
                shared.len()
            );
        }
        for e in &mut self.entries {
            e.key = match e.instance {
                Some(id) if !shared.contains(&id) => id,
                Some(_) => collider_key(SHARED_INSTANCE_KEY_BIT, e.handle),
                None => collider_key(CUBOID_KEY_BIT, e.handle),
            };
        }
        (self.seen_instances, self.shared_instances) = (seen, shared);
        std::mem::swap(&mut self.last_poses, &mut self.next_poses);
    }

    /// One backend step; on error, warn once, switch to the CPU fallback for good and re-run.
    fn run_step(
        backend: &mut Box<dyn NarrowPhaseBackend>,
        fallback: &mut Option<NarrowPhase>,
        (fell_back, fallback_error): (&mut bool, &mut Option<String>),
        inputs: &[PairInput],
        held: &[PairKey],
        opts: &StepOptions,
    ) -> StepOutput {
        let result = if held.is_empty() {
            backend.step(inputs, opts)
        } else {
            backend.step_with_held(inputs, held, opts)
        };
        match result {
            Ok(out) => out,
            Err(e) => match fallback.take() {
                Some(cpu) => {
                    log::warn!(
                        "rtcd_rapier: narrow-phase backend `{}` failed ({e}); switching to the CPU backend for the rest of the run",
                        backend.name()
                    );
                    *backend = Box::new(cpu);
                    *fell_back = true;
                    *fallback_error = Some(e.to_string());
                    Self::run_step(backend, fallback, (fell_back, fallback_error), inputs, held, opts)
                }
                None => {
                    // Only reachable when the CPU fallback itself failed, which it never does;
                    // the dispatcher's miss path then computes every pair.
                    log::warn!(
                        "rtcd_rapier: backend `{}` failed ({e}) with no fallback left",
                        backend.name()
                    );
                    StepOutput::default()
                }
            },
        }
    }
}

/// The candidate pair of entries `i` and `j` as the batch has it: shape 1 and shape 2 (shape 1 is
/// always a mesh) and the cache key; `None` for a pair Rapier filters out before calling the
/// dispatcher (or that is not ours).
fn batch_pair<'e>(
    entries: &'e [Entry],
    i: u32,
    j: u32,
    joints: Joints,
) -> Option<(&'e Entry, &'e Entry, CacheKey)> {
    let (a, b) = (&entries[i as usize], &entries[j as usize]);
    let (e1, e2) = match (a.instance, b.instance) {
        (None, None) => return None,
        (Some(_), None) => (a, b),
        (None, Some(_)) => (b, a),
        (Some(x), Some(y)) => {
            if (x, a.handle.into_raw_parts()) <= (y, b.handle.into_raw_parts()) {
                (a, b)
            } else {
                (b, a)
            }
        }
    };
    if !(e1.active || e2.active)
        || (e1.body.is_some() && e1.body == e2.body)
        || e1.body.zip(e2.body).is_some_and(|(b1, b2)| joints.contacts_disabled(b1, b2))
        || !e1.groups.test(e2.groups)
        || !(e1.collision_types.test(e1.body_type, e2.body_type)
            || e2.collision_types.test(e1.body_type, e2.body_type))
    {
        return None;
    }
    let id1 = e1.instance?;
    let cache_key = match (e2.instance, e2.cuboid) {
        (Some(id2), _) => CacheKey::meshes(id1, id2).0,
        (None, Some(c)) => CacheKey::cuboid(id1, c),
        // The level's chunks are paired in `prepare_with`, each with its own key.
        (None, None) => CacheKey::level(id1, e2.level.as_ref()?.0, u32::MAX),
    };
    Some((e1, e2, cache_key))
}

/// The world's joints, for their contact rules: Rapier's narrow phase never asks for the contacts
/// of two bodies joined by an impulse joint or a multibody joint with contacts disabled
/// (`GenericJoint::contacts_enabled`), nor of two links of one multibody with self-contacts off
/// (rapier's `pair_update.rs`). The batch leaves those pairs out as Rapier does: tracing them would
/// only cost time (a ragdoll's limbs overlap at their joints) and draw their rays in the debug
/// overlay. Give the joint sets that `PhysicsPipeline::step` will be given.
#[derive(Clone, Copy, Default)]
pub struct Joints<'a> {
    impulse: Option<&'a ImpulseJointSet>,
    multibody: Option<&'a MultibodyJointSet>,
}

impl<'a> Joints<'a> {
    /// The world's impulse and multibody joint sets. An empty set is not looked into: a world
    /// without joints costs the batch nothing per pair.
    pub fn new(impulse: &'a ImpulseJointSet, multibody: &'a MultibodyJointSet) -> Self {
        Self {
            impulse: (!impulse.is_empty()).then_some(impulse),
            multibody: multibody.multibodies().next().is_some().then_some(multibody),
        }
    }

    /// No joint rules: for a world without joints. With joints, their pairs with contacts disabled
    /// are then traced for nothing (Rapier still leaves them out, so contacts are the same).
    pub fn none() -> Self {
        Self::default()
    }

    /// Whether Rapier leaves out the contacts of bodies `b1` and `b2` for a joint between them
    /// (the same tests, in the same order, as rapier's `pair_update.rs`).
    pub fn contacts_disabled(&self, b1: RigidBodyHandle, b2: RigidBodyHandle) -> bool {
        if let Some(impulse) = self.impulse
            && impulse.joints_between(b1, b2).any(|(_, joint)| !joint.data.contacts_enabled)
        {
            return true;
        }
        let Some(multibody) = self.multibody else { return false };
        let (Some(link1), Some(link2)) = (multibody.rigid_body_link(b1), multibody.rigid_body_link(b2))
        else {
            return false;
        };
        if link1.multibody != link2.multibody {
            return false;
        }
        if multibody.get_multibody(link1.multibody).is_some_and(|mb| !mb.self_contacts_enabled()) {
            return true;
        }
        multibody.joint_between(b1, b2).is_some_and(|(_, _, link)| !link.joint.data.contacts_enabled)
    }
}

/// Whether a pair with this entry may share its cache key with another pair: only keys with a
/// cuboid or a shared instance can repeat.
fn shareable(e: &Entry) -> bool {
    e.instance.is_none() || e.key & SHARED_INSTANCE_KEY_BIT != 0
}

/// What the batch needs to follow Rapier's contact recycling ([`RtcdDriver::detect_recycling`]).
#[derive(Clone, Copy)]
struct Recycling<'a> {
    /// `IntegrationParameters::contact_recycle_distance()`.
    distance: f32,
    /// The narrow phase the step will run (for a pair's collider order and contact state).
    narrow_phase: &'a RapierNarrowPhase,
}

/// What Rapier's narrow phase will do with a pair this step, as far as the batch can tell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RapierUpdate {
    /// Calls the dispatcher (or the batch cannot tell that it will not).
    Full,
    /// Recycles the pair's contacts: the dispatcher is not called.
    Recycled,
    /// Clears the pair without calling the dispatcher: soft CCD is on and the collision boxes are
    /// apart, even swept by the clamped relative velocity (rapier's `pair_update.rs`). Its
    /// recycling reference goes with it.
    Cleared,
}

/// Boxes are grown by this much before the batch concludes that Rapier finds them apart, so
/// rounding can only make it trace a pair Rapier clears.
const CLEARED_BOX_MARGIN: f32 = 1e-4;

/// What Rapier will do with the pair `e1`-`e2` (see [`RapierUpdate`]), by its own tests, with
/// margins that can only turn a skipped pair into a traced one. `mirror`: the pair's recycling
/// reference, if known. A mirrored pair is assumed to still be in
/// Rapier's contact graph with its reference (it cannot leave Rapier's broad phase without drifting
/// past the bound); were it not, the dispatcher's miss path would compute it.
fn rapier_update(
    e1: &Entry,
    e2: &Entry,
    mirror: Option<&mut Mirror>,
    r: &Recycling,
    prediction: f32,
) -> RapierUpdate {
    if e1.hooks || e2.hooks {
        return RapierUpdate::Full;
    }
    if let Some(m) = mirror {
        let cos =
            rot_cos(m.pose1.rotation, e1.pose.rotation).min(rot_cos(m.pose2.rotation, e2.pose.rotation));
        if cos > HOLD_MIN_ROT_COS {
            // Rapier measures the drift in its collider order, and allows the larger bound to pairs
            // with active solver contacts. Both are known from Rapier's pair (a walk of its
            // contact graph), read at most once per reference ([`RapierPair`]) and only when the
            // answer may depend on them: not when the drift in both orders is within the bound the
            // batch knows applies. A manifold's deepest point is always among Rapier's solver
            // contacts, so results with a point within the prediction (`m.active`) mean an active
            // pair.
            let extent = e1.extent.max(e2.extent);
            let bound = |active: bool| if active { r.distance } else { r.distance.min(prediction) };
            let known = match m.rapier {
                Some(known) => Some(known),
                None => {
                    let (base, cur) = (m.pose1.inv_mul(&m.pose2), e1.pose.inv_mul(&e2.pose));
                    let (d12, d21) = (
                        pose_drift(&base, &cur, extent),
                        pose_drift(&base.inverse(), &cur.inverse(), extent),
                    );
                    if d12.max(d21) <= HOLD_DRIFT_SHARE * bound(m.active) {
                        return RapierUpdate::Recycled;
                    }
                    // Rapier's pair, read once, when the answer may depend on it.
                    (d12.min(d21) <= r.distance)
                        .then(|| r.narrow_phase.contact_pair(e1.handle, e2.handle))
                        .flatten()
                        .map(|cp| {
                            let known = RapierPair {
                                same_order: cp.collider1 == e1.handle,
                                active: cp.has_any_active_contact(),
                            };
                            m.rapier = Some(known);
                            known
                        })
                }
            };
            if let Some(known) = known {
                // Rapier's drift: its collider order, its operations.
                let drift = if known.same_order {
                    pose_drift(&m.pose1.inv_mul(&m.pose2), &e1.pose.inv_mul(&e2.pose), extent)
                } else {
                    pose_drift(&m.pose2.inv_mul(&m.pose1), &e2.pose.inv_mul(&e1.pose), extent)
                };
                if drift <= HOLD_DRIFT_SHARE_KNOWN * bound(known.active) {
                    return RapierUpdate::Recycled;
                }
            }
        }
    }
    // Rapier's soft-CCD early-out is symmetric in the two colliders.
    let (f, s) = (e1, e2);
    if f.soft_ccd || s.soft_ccd {
        let (v1, v2) = (f.soft_linvel, s.soft_linvel);
        let (a1, a2) =
            (f.collision_aabb.loosened(CLEARED_BOX_MARGIN), s.collision_aabb.loosened(CLEARED_BOX_MARGIN));
        if !a1.intersects(&a2) && !a1.intersects_moving_aabb(&a2, v2 - v1) {
            return RapierUpdate::Cleared;
        }
    }
    RapierUpdate::Full
}

#[cfg(test)]
mod tests {
    use super::*;

    fn send_sync<T: Send + Sync>() {}

    #[test]
    fn shareable_across_threads() {
        send_sync::<RtcdDriver>();
        send_sync::<RtcdDispatcher>();
        send_sync::<ContactCache>();
    }
}
