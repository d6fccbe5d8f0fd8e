//! The contact cache shared by the batch pass ([`RtcdDriver`](crate::RtcdDriver), before the step)
//! and the dispatcher ([`RtcdDispatcher`](crate::RtcdDispatcher), during the step).
//!
//! **Keying.** The dispatcher sees two shapes and their relative pose `pos12`, never collider
//! handles, so results are keyed by what it can see: a [`CacheKey`] made of the [`RtcdShape`]
//! instance ids, or of an instance id and a cuboid's half-extents. Several results may share a key
//! (two walls with the same half-extents, or colliders that share an instance); they are told apart
//! by `pos12`, which the batch computes exactly as Rapier does (see [`Pos12Tolerance`]). Mesh-mesh
//! keys are stored with the lower id as shape 1; a lookup in the other order swaps the manifolds.
//!
//! [`RtcdShape`]: crate::RtcdShape

use std::{
    sync::{
        Arc, Mutex, RwLock,
        atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, Ordering},
    },
    time::Duration,
};

use parry3d::math::Pose;
use rapier3d::dynamics::IntegrationParameters;
use rtcd::{ContactManifold, NarrowPhase, ParamsError, RtcdParams};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::{
    convert::displacement,
    depth_bound::{DepthBound, HandedDepths, corrective_depth_of},
    ground::{CuboidKey, GroundMeshes},
};

/// The second member of a cached pair, as the dispatcher can identify it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Partner {
    /// Another [`RtcdShape`](crate::RtcdShape), by instance id.
    Mesh(u64),
    /// A cuboid, by its half-extents.
    Cuboid(CuboidKey),
    /// A chunk of a level shape (a triangle-mesh or heightfield collider, [`crate::level`]).
    Level {
        /// The level shape.
        level: crate::level::LevelKey,
        /// The chunk's index in its [`rtcd::LevelMesh`].
        chunk: u32,
    },
}

/// A cached pair's key. Shape 1 of the stored results is the mesh `a`; for mesh-mesh pairs
/// `a <= b`. Build keys with [`CacheKey::meshes`] and [`CacheKey::cuboid`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CacheKey {
    /// Instance id of shape 1.
    pub a: u64,
    /// Shape 2.
    pub b: Partner,
}

impl CacheKey {
    /// The key of two meshes, and whether `(id1, id2)` is the stored order swapped.
    pub fn meshes(id1: u64, id2: u64) -> (Self, bool) {
        if id1 <= id2 {
            (Self { a: id1, b: Partner::Mesh(id2) }, false)
        } else {
            (Self { a: id2, b: Partner::Mesh(id1) }, true)
        }
    }

    /// The key of a mesh and a cuboid (the mesh is always shape 1 of the stored results).
    pub fn cuboid(mesh: u64, cuboid: CuboidKey) -> Self {
        Self { a: mesh, b: Partner::Cuboid(cuboid) }
    }

    /// The key of a mesh and a chunk of a level shape (the mesh is always shape 1 of the stored
    /// results).
    pub fn level(mesh: u64, level: crate::level::LevelKey, chunk: u32) -> Self {
        Self { a: mesh, b: Partner::Level { level, chunk } }
    }

    /// For the key of a level chunk, the key of the mesh and the whole level (chunk `u32::MAX`,
    /// the key of Rapier's pair): a miss on any chunk is noted under it too
    /// ([`ContactCache::note_update`]).
    pub(crate) fn whole_level(&self) -> Option<Self> {
        match self.b {
            Partner::Level { level, chunk } if chunk != u32::MAX => {
                Some(Self { a: self.a, b: Partner::Level { level, chunk: u32::MAX } })
            }
            _ => None,
        }
    }
}

/// One pair's results from the batch, in the key's order (shape 1 = `CacheKey::a`).
#[derive(Clone, Debug)]
pub struct CachedPair {
    /// The relative pose the results were computed at (shape 2 in shape 1's frame).
    pub pos12: Pose,
    /// The manifolds (rtcd's, parry conventions).
    pub manifolds: Vec<ContactManifold>,
    /// Each mesh's largest vertex distance from its origin (shape 1, shape 2): converts a rotation
    /// into a displacement ([`rtcd::detect::max_displacement`]) when choosing results to refresh.
    pub radii: [f32; 2],
    /// How far out the results hold speculative contacts (the batch pair's reach, at most the
    /// predictive rays' `culling_dist`). Refreshing them at a pose displaced by `d` can only
    /// miss contacts that are now closer than `prediction - d`.
    pub prediction: f32,
}

/// What the dispatcher does for a pair of ours that has no cached result at the current pose.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum MissPolicy {
    /// Compute the pair on the spot with a CPU [`NarrowPhase`] (one of a pool, so that parallel
    /// calls do not wait on each other; standard trace), counted in [`CacheCounters::misses`]. The
    /// results are exact for the current pose. For the synchronous mode, where the batch ran on this step's poses and misses are rare (a pair Rapier's
    /// broad phase found and ours did not, a body moved by the user after the batch).
    #[default]
    Exact,
    /// Reuse the cached results nearest to the current pose (within
    /// [`CacheSettings::refresh_max_displacement`]) and recompute each point's `dist` from the current
    /// `pos12`, keeping points and normals in their body frames; counted in
    /// [`CacheCounters::refreshed`]. For the pipelined GPU mode, where the results are a tick or two
    /// old.
    /// Pairs with nothing near enough are computed as with [`MissPolicy::Exact`].
    RefreshDepths,
}

/// How close the dispatcher's `pos12` must be to a cached one to use the cached results as they are.
///
/// The batch computes each collider's world pose with the same expression as Rapier
/// (`body.position() * collider.position_wrt_parent()`), and `pos12 = pose1.inv_mul(&pose2)` with
/// parry's own `Pose`, so in the synchronous mode the two agree to the bit; the tolerance only
/// absorbs rounding if an integration computes poses another way.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pos12Tolerance {
    /// Largest translation difference, relative to `max(1, |translation|)`.
    pub translation: f32,
    /// Largest rotation difference, in radians.
    pub angle: f32,
}

impl Default for Pos12Tolerance {
    fn default() -> Self {
        Self { translation: 1e-5, angle: 1e-5 }
    }
}

impl Pos12Tolerance {
    /// Whether `a` and `b` agree within the tolerance.
    pub fn matches(&self, a: &Pose, b: &Pose) -> bool {
        let dt = (a.translation - b.translation).length();
        let scale = a.translation.length().max(1.0);
        // Unit quaternions q and -q are the same rotation; the chord |qa - qb| is about θ/2.
        let chord = (a.rotation - b.rotation).length().min((a.rotation + b.rotation).length());
        dt <= self.translation * scale && chord <= 0.5 * self.angle
    }
}

/// Default of [`CacheSettings::support_fraction`].
pub const DEFAULT_SUPPORT_FRACTION: f32 = 0.1;

/// Settings of the dispatcher side of the cache.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CacheSettings {
    /// What to do for pairs without results at the current pose.
    pub miss_policy: MissPolicy,
    /// When cached results are used as they are.
    pub tolerance: Pos12Tolerance,
    /// [`MissPolicy::RefreshDepths`] only reuses results whose pose is within this displacement
    /// (IRTCD 2013 Eq. 2 bound) of the current one. Default: the parameters' `distance_extension`,
    /// the margin rtcd itself traces ahead with.
    pub refresh_max_displacement: f32,
    /// Candidates within this share of a pair's prediction distance (or of the pair's length scale,
    /// `rtcd::RtcdMesh::length_scale`, where that is smaller) of touching (and penetrating
    /// ones) are the *support* tier of the contact reduction; the others are speculative and kept only
    /// for normal directions the support does not cover (see the `reduction` module). Default 0.1.
    pub support_fraction: f32,
    /// Largest angle (radians) between a speculative group's normal and its members' (the support
    /// tier is grouped within the parameters' `manifold_angle`). `None` (the default): the
    /// `manifold_angle`. A wider angle hands Rapier fewer speculative manifolds, each point held
    /// along its group's normal rather than its own: the solver has less work, but the contacts
    /// are coarser, and whether penetration goes up or down depends on the scene (the bench's
    /// `--compare widespec` runs 30°). Values outside `[0, π)` are taken as `None`.
    pub speculative_angle: Option<f32>,
    /// Whether pairs of our meshes with cuboid colliders (grounds, walls) are ours, with the cuboid
    /// seen as an rtcd box. With `false` they go to Rapier's default dispatcher (our shape's triangle
    /// mesh against the cuboid, triangle by triangle). Default `true`.
    pub cuboids: bool,
    /// Whether pairs of our meshes with triangle-mesh and heightfield colliders on fixed or
    /// kinematic bodies (terrain, floors, ramps) are ours, with the level shape cut into chunks
    /// ([`crate::level`]). With `false` they go to Rapier's default dispatcher. Default `true`.
    pub levels: bool,
    /// How deep the contacts handed to Rapier's solver may be. With [`DepthBound::Corrective`] (the
    /// depth Rapier's `max_corrective_velocity()` removes in two steps,
    /// [`corrective_depth`](crate::corrective_depth)) a deep overlap is pushed out at a bounded
    /// rate, and shallow (resting) contacts pass unchanged (see the
    /// [`depth_bound`](crate::depth_bound) module). Default [`DepthBound::Off`]: every depth as rtcd
    /// measures it (a bound also slows how hard landings are pushed back out).
    pub depth_bound: DepthBound,
    /// Whether a deep overlap's manifolds are merged into one before Rapier's solver sees them: where
    /// at least two of a pair's manifolds hold a point deeper than the depth bound (the corrective
    /// depth when [`CacheSettings::depth_bound`] is off), those pushing along their depth-weighted
    /// normal become one manifold of that normal with at most four points, and those pushing
    /// against it are dropped, so the bodies come apart without being launched (see the
    /// [`depth_bound`](crate::depth_bound) module). Default `true`.
    pub merge_deep_overlaps: bool,
}

impl CacheSettings {
    /// The speculative grouping angle in use with a `manifold_angle` (see
    /// [`Self::speculative_angle`]).
    pub fn speculative_angle_or(&self, manifold_angle: f32) -> f32 {
        match self.speculative_angle {
            Some(a) if a.is_finite() && (0.0..std::f32::consts::PI).contains(&a) => a,
            _ => manifold_angle,
        }
    }
}

/// Counters of the dispatcher since the last [`ContactCache::reset_counters`] (the driver resets
/// them at each batch, so after a step they describe that step).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CacheCounters {
    /// Pairs served from the cache as they are.
    pub hits: u64,
    /// Pairs computed on the spot ([`MissPolicy::Exact`]).
    pub misses: u64,
    /// Pairs served from older results with refreshed depths ([`MissPolicy::RefreshDepths`]).
    pub refreshed: u64,
    /// Pairs answered with no contact because their bounding boxes are farther apart than the
    /// prediction distance (no lookup needed).
    pub separated: u64,
    /// Time spent computing misses.
    pub miss_time: Duration,
}

#[derive(Default)]
struct Counters {
    hits: AtomicU64,
    misses: AtomicU64,
    refreshed: AtomicU64,
    separated: AtomicU64,
    miss_nanos: AtomicU64,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Count {
    Hit,
    Miss(Duration),
    Refreshed,
    Separated,
}

#[derive(Default)]
struct Entries {
    pairs: FxHashMap<CacheKey, Results>,
    prediction: f32,
    /// What the dispatcher did with each key's results ([`UPDATED`], [`USED`], [`SWAPPED`]), by
    /// [`Results::slot`].
    flags: Vec<AtomicU8>,
    /// Each published pair's slot in `flags`, in publishing order.
    slot_of: Vec<u32>,
}

/// [`ContactCache::published_flags`]: the dispatcher was called for the pair (Rapier fully
/// updated it).
pub const UPDATED: u8 = 1;
/// [`ContactCache::published_flags`]: the dispatcher used a result cached under the pair's key as
/// it is (see [`ContactCache::used`]).
pub const USED: u8 = 2;
/// [`ContactCache::published_flags`]: the dispatcher was called with the pair's shapes in the
/// other order than the key's (Rapier's collider 1 is the key's shape 2).
pub const SWAPPED: u8 = 4;

/// The results under one key: nearly always one, so it is stored inline (a `Vec` per key cost an
/// allocation and a free per pair and step); more only when colliders share a key.
struct Results {
    first: CachedPair,
    more: Vec<CachedPair>,
    /// The key's place in [`Entries::flags`].
    slot: u32,
}

impl Results {
    fn iter(&self) -> impl Iterator<Item = &CachedPair> {
        std::iter::once(&self.first).chain(&self.more)
    }

    fn len(&self) -> usize {
        1 + self.more.len()
    }
}

struct Inner {
    entries: RwLock<Entries>,
    /// Whether the dispatcher notes the keys of the pairs Rapier fully updates ([`ContactCache::track_updates`]).
    tracking: AtomicBool,
    /// The keys the dispatcher was called for that had no cached result (the others are in
    /// [`Entries::flags`]).
    updated: Mutex<FxHashSet<CacheKey>>,
    settings: RwLock<CacheSettings>,
    /// What [`DepthBound::Corrective`] derives its length from: Rapier's
    /// `max_corrective_velocity()`, the step's `dt` and the contact recycling distance (0 with
    /// recycling off), as `f32` bits.
    corrective_velocity: AtomicU32,
    step_dt: AtomicU32,
    recycle_distance: AtomicU32,
    counters: Counters,
    exact: Mutex<ExactPool>,
    grounds: GroundMeshes,
}

/// The on-the-spot CPU narrow phases ([`MissPolicy::Exact`]): Rapier's dispatcher runs on many
/// threads, so each miss takes an idle narrow phase (or makes one with the pool's parameters) and
/// gives it back, instead of queueing behind one lock.
struct ExactPool {
    /// Never lent: new ones are made from it ([`NarrowPhase::fresh`]), with its parameters.
    model: NarrowPhase,
    idle: Vec<NarrowPhase>,
}

/// The cache shared by the driver and the dispatcher. Cloning shares it (`Arc` inside); it is
/// `Send + Sync`.
#[derive(Clone)]
pub struct ContactCache {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for ContactCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ContactCache")
            .field("pairs", &self.len())
            .field("settings", &self.settings())
            .finish()
    }
}

fn read<T>(l: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|e| e.into_inner())
}

fn write<T>(l: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|e| e.into_inner())
}

impl ContactCache {
    /// An empty cache whose on-the-spot narrow phase uses `params`.
    pub fn new(params: RtcdParams, grounds: GroundMeshes) -> Result<Self, ParamsError> {
        let exact = NarrowPhase::new(params)?;
        let settings = CacheSettings {
            miss_policy: MissPolicy::Exact,
            tolerance: Pos12Tolerance::default(),
            refresh_max_displacement: params.distance_extension,
            support_fraction: DEFAULT_SUPPORT_FRACTION,
            speculative_angle: None,
            cuboids: true,
            levels: true,
            depth_bound: DepthBound::Off,
            merge_deep_overlaps: true,
        };
        let rapier = IntegrationParameters::default();
        Ok(Self {
            inner: Arc::new(Inner {
                entries: RwLock::new(Entries::default()),
                tracking: AtomicBool::new(false),
                updated: Mutex::new(FxHashSet::default()),
                settings: RwLock::new(settings),
                corrective_velocity: AtomicU32::new(rapier.max_corrective_velocity().to_bits()),
                step_dt: AtomicU32::new(rapier.dt.to_bits()),
                recycle_distance: AtomicU32::new(0.0f32.to_bits()),
                counters: Counters::default(),
                exact: Mutex::new(ExactPool { idle: vec![exact.fresh()], model: exact }),
                grounds,
            }),
        })
    }

    /// The settings.
    pub fn settings(&self) -> CacheSettings {
        *read(&self.inner.settings)
    }

    /// Changes the settings.
    pub fn set_settings(&self, settings: CacheSettings) {
        *write(&self.inner.settings) = settings;
    }

    /// Takes what [`DepthBound::Corrective`] derives its length from out of the world's parameters:
    /// `max_corrective_velocity()`, `dt`, and `contact_recycle_distance()`
    /// when `contact_recycling` is on (see [`corrective_depth`](crate::corrective_depth)).
    pub fn set_integration_parameters(&self, params: &IntegrationParameters) {
        let recycle = if params.contact_recycling { params.contact_recycle_distance() } else { 0.0 };
        self.inner.corrective_velocity.store(params.max_corrective_velocity().to_bits(), Ordering::Relaxed);
        self.inner.recycle_distance.store(recycle.to_bits(), Ordering::Relaxed);
        self.set_step_dt(params.dt);
    }

    /// Takes the step's `dt`, for [`DepthBound::Corrective`].
    pub(crate) fn set_step_dt(&self, dt: f32) {
        self.inner.step_dt.store(dt.to_bits(), Ordering::Relaxed);
    }

    /// The bound on the depths handed to Rapier's solver in use ([`CacheSettings::depth_bound`]
    /// resolved), infinite when off.
    pub fn depth_bound(&self) -> f32 {
        self.handed_depths().bound
    }

    /// The bound and the depth from which a deep overlap is merged, resolved from the settings.
    pub(crate) fn handed_depths(&self) -> HandedDepths {
        let load = |a: &AtomicU32| f32::from_bits(a.load(Ordering::Relaxed));
        let corrective = corrective_depth_of(
            load(&self.inner.corrective_velocity),
            load(&self.inner.step_dt),
            load(&self.inner.recycle_distance),
        );
        let settings = self.settings();
        let bound = settings.depth_bound.length(corrective).unwrap_or(f32::INFINITY);
        let merge_from = match settings.merge_deep_overlaps {
            true if bound.is_finite() => bound,
            true => corrective,
            false => f32::INFINITY,
        };
        HandedDepths { bound, merge_from }
    }

    /// Sets the parameters of the on-the-spot narrow phase (e.g. when the driver's change).
    pub fn set_params(&self, params: RtcdParams) -> Result<(), ParamsError> {
        let mut pool = self.inner.exact.lock().unwrap_or_else(|e| e.into_inner());
        pool.model.set_params(params)?;
        // Those lent out take them when they come back.
        pool.idle.clear();
        Ok(())
    }

    /// The box meshes of cuboid colliders.
    pub fn grounds(&self) -> &GroundMeshes {
        &self.inner.grounds
    }

    /// Replaces the cached results with a batch's. `prediction` is the distance the batch kept
    /// speculative contacts within.
    ///
    /// The old results' manifolds are freed on a rayon thread ([`rayon::spawn`]): in the
    /// synchronous mode that thread is idle while Rapier's step (single-threaded without its
    /// `parallel` feature) runs, and thousands of frees would otherwise weigh on the batch's
    /// serial main-thread time.
    pub fn publish(&self, pairs: impl IntoIterator<Item = (CacheKey, CachedPair)>, prediction: f32) {
        let mut e = write(&self.inner.entries);
        let old: Vec<Vec<ContactManifold>> = e
            .pairs
            .values_mut()
            .flat_map(|r| std::iter::once(&mut r.first).chain(&mut r.more))
            .filter(|p| p.manifolds.capacity() > 0)
            .map(|p| std::mem::take(&mut p.manifolds))
            .collect();
        e.pairs.clear();
        e.flags.clear();
        e.slot_of.clear();
        if !old.is_empty() {
            rayon::spawn(move || drop(old));
        }
        let Entries { pairs: map, flags, slot_of, .. } = &mut *e;
        for (key, pair) in pairs {
            match map.entry(key) {
                std::collections::hash_map::Entry::Occupied(mut o) => {
                    slot_of.push(o.get().slot);
                    o.get_mut().more.push(pair);
                }
                std::collections::hash_map::Entry::Vacant(v) => {
                    let slot = flags.len() as u32;
                    flags.push(AtomicU8::new(0));
                    slot_of.push(slot);
                    v.insert(Results { first: pair, more: Vec::new(), slot });
                }
            }
        }
        e.prediction = prediction;
    }

    /// Drops every cached result.
    pub fn clear(&self) {
        let mut e = write(&self.inner.entries);
        e.pairs.clear();
        e.flags.clear();
        e.slot_of.clear();
    }

    /// Number of cached pairs.
    pub fn len(&self) -> usize {
        read(&self.inner.entries).pairs.values().map(Results::len).sum()
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The prediction distance of the last published batch.
    pub fn batch_prediction(&self) -> f32 {
        read(&self.inner.entries).prediction
    }

    /// The counters since the last reset.
    pub fn counters(&self) -> CacheCounters {
        let c = &self.inner.counters;
        CacheCounters {
            hits: c.hits.load(Ordering::Relaxed),
            misses: c.misses.load(Ordering::Relaxed),
            refreshed: c.refreshed.load(Ordering::Relaxed),
            separated: c.separated.load(Ordering::Relaxed),
            miss_time: Duration::from_nanos(c.miss_nanos.load(Ordering::Relaxed)),
        }
    }

    /// Sets every counter to zero.
    pub fn reset_counters(&self) {
        let c = &self.inner.counters;
        for a in [&c.hits, &c.misses, &c.refreshed, &c.separated, &c.miss_nanos] {
            a.store(0, Ordering::Relaxed);
        }
    }

    pub(crate) fn count(&self, what: Count) {
        let c = &self.inner.counters;
        match what {
            Count::Hit => c.hits.fetch_add(1, Ordering::Relaxed),
            Count::Refreshed => c.refreshed.fetch_add(1, Ordering::Relaxed),
            Count::Separated => c.separated.fetch_add(1, Ordering::Relaxed),
            Count::Miss(t) => {
                c.miss_nanos.fetch_add(t.as_nanos().min(u64::MAX as u128) as u64, Ordering::Relaxed);
                c.misses.fetch_add(1, Ordering::Relaxed)
            }
        };
    }

    /// The cached manifolds of `key` computed at `pos12` (the key's order), within the tolerance.
    pub fn exact(&self, key: &CacheKey, pos12: &Pose) -> Option<Vec<ContactManifold>> {
        self.read_exact(key, pos12, None, <[ContactManifold]>::to_vec).flatten()
    }

    /// Runs `f` on the manifolds of the cached result of `key` computed at `pos12` (within the
    /// tolerance), in place: `None` when nothing is cached under `key`, `Some(None)` when nothing
    /// at `pos12`. `mark` (the dispatcher's calls): note the call, the use if there is one and
    /// whether the call's order is the key's swapped ([`ContactCache::published_flags`],
    /// [`ContactCache::used`]).
    pub(crate) fn read_exact<R>(
        &self,
        key: &CacheKey,
        pos12: &Pose,
        mark: Option<bool>,
        f: impl FnOnce(&[ContactManifold]) -> R,
    ) -> Option<Option<R>> {
        let tolerance = read(&self.inner.settings).tolerance;
        let e = read(&self.inner.entries);
        let results = e.pairs.get(key)?;
        let found = results.iter().find(|p| tolerance.matches(&p.pos12, pos12));
        if let Some(swapped) = mark {
            let flags = UPDATED | if found.is_some() { USED } else { 0 } | if swapped { SWAPPED } else { 0 };
            e.flags[results.slot as usize].fetch_or(flags, Ordering::Relaxed);
        }
        Some(found.map(|p| f(&p.manifolds)))
    }

    /// Whether the dispatcher has used a result cached under `key` as it is (at its pose), since
    /// the last [`ContactCache::publish`].
    pub fn used(&self, key: &CacheKey) -> bool {
        let e = read(&self.inner.entries);
        e.pairs.get(key).is_some_and(|r| e.flags[r.slot as usize].load(Ordering::Relaxed) & USED != 0)
    }

    /// What the dispatcher did, since the last [`ContactCache::publish`], with the results of each
    /// pair that publish was given, in its order ([`UPDATED`], [`USED`] and [`SWAPPED`] bits, per
    /// cache key), written to `out` (cleared first).
    pub fn published_flags(&self, out: &mut Vec<u8>) {
        let e = read(&self.inner.entries);
        out.clear();
        out.extend(e.slot_of.iter().map(|&s| e.flags[s as usize].load(Ordering::Relaxed)));
    }

    /// Starts (or stops) noting the keys of the pairs the dispatcher is called for, that is the pairs
    /// Rapier fully updates (not recycled, not asleep): [`ContactCache::take_updated`]. The driver
    /// turns it on when it follows Rapier's contact recycling.
    pub fn track_updates(&self, on: bool) {
        self.inner.tracking.store(on, Ordering::Relaxed);
    }

    pub(crate) fn tracking(&self) -> bool {
        self.inner.tracking.load(Ordering::Relaxed)
    }

    /// Notes a call of the dispatcher for `key`, which has no cached result; for a level chunk,
    /// under the whole level's key as well ([`CacheKey::whole_level`]).
    pub(crate) fn note_update(&self, key: CacheKey) {
        let mut updated = self.inner.updated.lock().unwrap_or_else(|e| e.into_inner());
        updated.insert(key);
        if let Some(whole) = key.whole_level() {
            updated.insert(whole);
        }
    }

    /// Moves into `into` (cleared first) the keys the dispatcher was called for since the last call
    /// (while tracking) that had no cached result (the calls for the others are in
    /// [`ContactCache::published_flags`]); the two sets swap buffers, so neither is reallocated.
    pub fn take_updated(&self, into: &mut FxHashSet<CacheKey>) {
        into.clear();
        std::mem::swap(into, &mut *self.inner.updated.lock().unwrap_or_else(|e| e.into_inner()));
    }

    /// The cached result of `key` nearest to `pos12` (IRTCD Eq. 2 displacement), if within
    /// `max_displacement`.
    pub fn nearest(&self, key: &CacheKey, pos12: &Pose, max_displacement: f32) -> Option<CachedPair> {
        let e = read(&self.inner.entries);
        e.pairs
            .get(key)?
            .iter()
            .map(|p| (displacement(&p.pos12, pos12, p.radii), p))
            .filter(|(d, _)| *d <= max_displacement)
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, p)| p.clone())
    }

    /// Runs `f` on an on-the-spot CPU narrow phase of its own (taken from the pool, given back
    /// after).
    pub(crate) fn with_exact<R>(&self, f: impl FnOnce(&mut NarrowPhase) -> R) -> R {
        let lock = || self.inner.exact.lock().unwrap_or_else(|e| e.into_inner());
        let mut np = {
            let mut pool = lock();
            pool.idle.pop().unwrap_or_else(|| pool.model.fresh())
        };
        let out = f(&mut np);
        let mut pool = lock();
        // One lent out while the parameters changed is dropped.
        if np.params() == pool.model.params() {
            pool.idle.push(np);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{Quat, Vec3};

    #[test]
    fn tolerance_on_translation_and_angle() {
        let t = Pos12Tolerance::default();
        let a = Pose::from_parts(Vec3::new(10.0, 0.0, 0.0), Quat::from_rotation_y(1.0));
        assert!(t.matches(&a, &a));
        let b = Pose::from_parts(Vec3::new(10.00005, 0.0, 0.0), Quat::from_rotation_y(1.0));
        assert!(t.matches(&a, &b));
        let c = Pose::from_parts(Vec3::new(10.001, 0.0, 0.0), Quat::from_rotation_y(1.0));
        assert!(!t.matches(&a, &c));
        let d = Pose::from_parts(Vec3::new(10.0, 0.0, 0.0), Quat::from_rotation_y(1.0 + 1e-3));
        assert!(!t.matches(&a, &d));
        let flipped_sign = Pose::from_parts(a.translation, -a.rotation);
        assert!(t.matches(&a, &flipped_sign));
    }

    /// The merge depth is the bound when one is set, else the corrective depth; none when off.
    #[test]
    fn handed_depths_follow_the_settings() {
        let cache = ContactCache::new(RtcdParams::from_triangle_size(0.1), GroundMeshes::new()).unwrap();
        let params = IntegrationParameters { contact_recycling: false, ..Default::default() };
        cache.set_integration_parameters(&params);
        let corrective = crate::corrective_depth(&params);
        let depths = |depth_bound, merge_deep_overlaps| {
            cache.set_settings(CacheSettings { depth_bound, merge_deep_overlaps, ..cache.settings() });
            let d = cache.handed_depths();
            (d.bound, d.merge_from)
        };
        assert_eq!(depths(DepthBound::Off, true), (f32::INFINITY, corrective));
        assert_eq!(depths(DepthBound::Corrective, true), (corrective, corrective));
        assert_eq!(depths(DepthBound::Length(0.3), true), (0.3, 0.3));
        assert_eq!(depths(DepthBound::Length(0.3), false), (0.3, f32::INFINITY));
        assert_eq!(depths(DepthBound::Off, false), (f32::INFINITY, f32::INFINITY));
        assert_eq!(cache.depth_bound(), f32::INFINITY);
        let fresh = ContactCache::new(RtcdParams::from_triangle_size(0.1), GroundMeshes::new()).unwrap();
        assert!(fresh.settings().merge_deep_overlaps);
        assert_eq!(fresh.settings().depth_bound, DepthBound::Off);
    }

    #[test]
    fn keys_order_meshes() {
        assert_eq!(CacheKey::meshes(3, 9), (CacheKey { a: 3, b: Partner::Mesh(9) }, false));
        assert_eq!(CacheKey::meshes(9, 3), (CacheKey { a: 3, b: Partner::Mesh(9) }, true));
    }

    #[test]
    fn same_key_told_apart_by_pose() {
        let cache = ContactCache::new(RtcdParams::from_triangle_size(0.1), GroundMeshes::new()).unwrap();
        let key = CacheKey::cuboid(1, [0, 0, 0]);
        let p1 = Pose::from_translation(Vec3::X);
        let p2 = Pose::from_translation(Vec3::NEG_X);
        let m = |n: Vec3| ContactManifold { local_n1: n, local_n2: -n, points: Default::default() };
        cache.publish(
            [
                (
                    key,
                    CachedPair { pos12: p1, manifolds: vec![m(Vec3::X)], radii: [1.0; 2], prediction: 0.1 },
                ),
                (
                    key,
                    CachedPair {
                        pos12: p2,
                        manifolds: vec![m(Vec3::NEG_X)],
                        radii: [1.0; 2],
                        prediction: 0.1,
                    },
                ),
            ],
            0.0,
        );
        assert_eq!(cache.len(), 2);
        assert_eq!(cache.exact(&key, &p2).unwrap()[0].local_n1, Vec3::NEG_X);
        assert!(cache.exact(&key, &Pose::IDENTITY).is_none());
        let near = Pose::from_translation(Vec3::new(0.9, 0.0, 0.0));
        assert_eq!(cache.nearest(&key, &near, 0.2).unwrap().manifolds[0].local_n1, Vec3::X);
        assert!(cache.nearest(&key, &near, 0.05).is_none());
    }
}
