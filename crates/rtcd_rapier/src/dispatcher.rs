//! [`RtcdDispatcher`]: the parry query dispatcher that hands our contacts to Rapier.
//!
//! Rapier's narrow phase calls [`PersistentQueryDispatcher::contact_manifolds`] for every pair it
//! updates, with the two shapes, `pos12` and a prediction distance, and ignores the result
//! (`let _ = ...`): for a pair we accept we always return `Ok` with rewritten manifolds. We accept
//! [`RtcdShape`] vs [`RtcdShape`], [`RtcdShape`] vs [`Cuboid`], and [`RtcdShape`] vs the level
//! shapes the cache cuts into chunks (Rapier's trimesh and heightfield), in either order; every other
//! pair, and every other query (ray, distance, shape casts for CCD), returns `Err(Unsupported)` so
//! the chained `DefaultQueryDispatcher` answers exactly as in plain Rapier (it sees our shape through
//! [`Shape::as_composite_shape`]).
//!
//! **Contact skin.** Rapier passes `prediction = prediction_distance + skin1 + skin2` and, when it
//! builds solver contacts, subtracts both skins from each point's `dist` itself
//! (`pair_update.rs`). parry's own manifold functions report plain geometric distances within that
//! prediction, and so do we: the skin needs nothing else here. The batch traces with the largest
//! such prediction of its pairs, so speculative contacts within the skin are present.
//!
//! **Manifolds and workspace.** One Rapier manifold per normal group of at most 4 points (the
//! two-tier reduction of the `reduction` module; Rapier's contact clustering then merges groups
//! within ~5°). Rapier's solver graph only rebuilds a pair whose manifold count may change when the
//! pair has a workspace, so we always set `*workspace = Some(RtcdWorkspace)`, as parry's
//! composite-shape code does. Warm-start data is carried from the pair's previous points by feature
//! id (`match_contacts`), then by casting vertex. A deep overlap's manifolds are merged into one
//! ([`CacheSettings::merge_deep_overlaps`](crate::CacheSettings::merge_deep_overlaps)) and, with a
//! [`CacheSettings::depth_bound`](crate::CacheSettings::depth_bound), points deeper than it are
//! handed over at that depth, so deep overlaps separate without launching the bodies (the
//! [`depth_bound`](crate::depth_bound) module).
//!
//! **Looking up.** The cached result computed at this `pos12` (within [`Pos12Tolerance`]) is used,
//! read in place under the cache's read lock and swapped on the fly if Rapier's order is the reverse
//! of the cache's. A pair whose oriented bounding boxes are farther apart than the prediction has no
//! contact: that test runs only when it can change the answer (a cached result with a point within
//! the prediction, none of whose points already shows the shapes that close), or when nothing is
//! cached. Without a cached result the [`MissPolicy`] decides.
//!
//! [`Pos12Tolerance`]: crate::Pos12Tolerance

use std::time::Instant;

use parry3d::{
    math::{Pose, Real, Vector},
    query::{
        ClosestPoints, Contact, ContactManifold, ContactManifoldsWorkspace, NonlinearRigidMotion,
        PersistentQueryDispatcher, QueryDispatcher, ShapeCastHit, ShapeCastOptions, TypedWorkspaceData,
        Unsupported, WorkspaceData, details::NormalConstraints, intersection_test,
    },
    shape::{Cuboid, Shape},
};
use rapier3d::geometry::{ContactData, ContactManifoldData};
use rtcd::{PairInput, PairKey, StepOptions};

use crate::{
    cache::{CacheKey, ContactCache, Count, MissPolicy},
    convert::{displacement, flipped, refresh_depths, to_rtcd},
    ground::cuboid_key,
    manifolds::{handed_over, write_manifolds},
    reduction::Reducer,
    shape::RtcdShape,
};

/// The workspace we attach to our pairs: carries nothing, but its presence makes Rapier treat the
/// pair like a composite one and rebuild its solver graph entries when the manifold count changes.
#[derive(Clone, Copy, Debug, Default)]
pub struct RtcdWorkspace;

impl WorkspaceData for RtcdWorkspace {
    fn as_typed_workspace_data(&self) -> TypedWorkspaceData<'_> {
        TypedWorkspaceData::Custom
    }

    fn clone_dyn(&self) -> Box<dyn WorkspaceData> {
        Box::new(*self)
    }
}

/// The query dispatcher to put in front of Rapier's default one:
/// `NarrowPhase::with_query_dispatcher(RtcdDispatcher::new(cache).chain(DefaultQueryDispatcher))`.
#[derive(Clone, Debug)]
pub struct RtcdDispatcher {
    cache: ContactCache,
}

/// The cache keys a call may be stored under, each with whether the stored order is this call's
/// swapped: one, or both orders when two colliders share an instance.
type Keys = arrayvec::ArrayVec<(CacheKey, bool), 2>;

/// One side of a pair, as the dispatcher recognises it.
enum Side<'a> {
    Mesh(&'a RtcdShape),
    Cuboid(&'a Cuboid),
    /// A triangle mesh or heightfield that the driver cut into a level mesh.
    Level(&'a dyn Shape),
}

impl<'a> Side<'a> {
    fn of(g: &'a dyn Shape, settings: &crate::CacheSettings) -> Option<Self> {
        if let Some(s) = g.as_shape::<RtcdShape>() {
            Some(Side::Mesh(s))
        } else if let Some(c) = g.as_cuboid() {
            settings.cuboids.then_some(Side::Cuboid(c))
        } else {
            (settings.levels && (g.as_trimesh().is_some() || g.as_heightfield().is_some()))
                .then_some(Side::Level(g))
        }
    }
}

impl RtcdDispatcher {
    /// A dispatcher reading `cache` (the one the [`RtcdDriver`](crate::RtcdDriver) fills).
    pub fn new(cache: ContactCache) -> Self {
        Self { cache }
    }

    /// The cache it reads.
    pub fn cache(&self) -> &ContactCache {
        &self.cache
    }

    /// Our contacts for `g1`/`g2` at `pos12` (rtcd manifolds in this call's order), or `None` when
    /// the pair is not ours.
    pub fn resolve(
        &self,
        pos12: &Pose,
        g1: &dyn Shape,
        g2: &dyn Shape,
        prediction: Real,
    ) -> Option<Vec<rtcd::ContactManifold>> {
        let mut result = Vec::new();
        self.resolve_with(pos12, g1, g2, prediction, |ms, swapped| {
            result = if swapped { ms.iter().map(flipped).collect() } else { ms.to_vec() };
        })?;
        Some(result)
    }

    /// [`RtcdDispatcher::resolve`] without copies: `write` gets the manifolds and whether they are
    /// stored in the other order (shape 1 and 2 swapped). A cache hit is read in place.
    fn resolve_with(
        &self,
        pos12: &Pose,
        g1: &dyn Shape,
        g2: &dyn Shape,
        prediction: Real,
        write: impl FnMut(&[rtcd::ContactManifold], bool),
    ) -> Option<()> {
        let settings = self.cache.settings();
        let (s1, s2) = (Side::of(g1, &settings)?, Side::of(g2, &settings)?);
        // (cache key, whether this call's order is the key's order swapped) candidates.
        let ground: std::sync::Arc<rtcd::RtcdMesh>;
        let (keys, mesh1, mesh2) = match (&s1, &s2) {
            (Side::Mesh(a), Side::Level(l)) => {
                return self.resolve_level(pos12, a, g1, *l, false, prediction, write);
            }
            (Side::Level(l), Side::Mesh(a)) => {
                return self.resolve_level(pos12, a, g2, *l, true, prediction, write);
            }
            (Side::Level(_), _) | (_, Side::Level(_)) => return None,
            (Side::Mesh(a), Side::Mesh(b)) => {
                let (key, swapped) = CacheKey::meshes(a.id(), b.id());
                // Two colliders sharing an instance: the stored order is unknown, try both.
                let keys: Keys = if a.id() == b.id() {
                    [(key, false), (key, true)].into()
                } else {
                    [(key, swapped)].into_iter().collect()
                };
                (keys, a.mesh(), b.mesh())
            }
            (Side::Mesh(a), Side::Cuboid(c)) => {
                ground = self.cache.grounds().get(c.half_extents)?;
                (
                    [(CacheKey::cuboid(a.id(), cuboid_key(c.half_extents)), false)].into_iter().collect(),
                    a.mesh(),
                    &ground,
                )
            }
            (Side::Cuboid(c), Side::Mesh(b)) => {
                ground = self.cache.grounds().get(c.half_extents)?;
                (
                    [(CacheKey::cuboid(b.id(), cuboid_key(c.half_extents)), true)].into_iter().collect(),
                    &ground,
                    b.mesh(),
                )
            }
            (Side::Cuboid(_), Side::Cuboid(_)) => return None,
        };
        self.resolve_pair(pos12, g1, g2, &keys, mesh1, mesh2, prediction, write)
    }

    /// A mesh against a level shape (in either order: `level_first` when the level is shape 1 of
    /// this call): the chunks near the mesh, each a pair of its own ([`Self::resolve_pair`], in the
    /// stored order: the mesh first), their manifolds together, with the level's feature ids told
    /// apart by chunk ([`rtcd::LevelMesh::feature_bits`]). `None` when the driver did not make the
    /// shape a level (a dynamic body's, or levels off): Rapier's default dispatcher answers.
    #[expect(clippy::too_many_arguments, reason = "one call's shapes, order and prediction")]
    fn resolve_level(
        &self,
        pos12: &Pose,
        mesh: &RtcdShape,
        mesh_shape: &dyn Shape,
        level_shape: &dyn Shape,
        level_first: bool,
        prediction: Real,
        mut write: impl FnMut(&[rtcd::ContactManifold], bool),
    ) -> Option<()> {
        let (level_key, level) = self.cache.grounds().known_level(level_shape)?;
        // The level in the mesh's frame (the stored order's pos12), and the mesh in the level's.
        let stored_pos12 = if level_first { pos12.inverse() } else { *pos12 };
        let query =
            mesh.mesh().aabb().transformed(&to_rtcd(&stored_pos12.inverse())).extended(prediction.max(0.0));
        let mut chunks = Vec::new();
        level.chunks_overlapping(&query, &mut chunks);
        let bits = level.feature_bits();
        let mut all = Vec::new();
        for c in chunks {
            let keys: Keys = [(CacheKey::level(mesh.id(), level_key, c), false)].into_iter().collect();
            let chunk = &level.chunks()[c as usize];
            self.resolve_pair(
                &stored_pos12,
                mesh_shape,
                level_shape,
                &keys,
                mesh.mesh(),
                chunk,
                prediction,
                |ms, _| all.extend(ms.iter().map(|m| chunk_features(m, c, bits))),
            )?;
        }
        write(&all, level_first);
        Some(())
    }

    /// One pair's contacts: the cached result at `pos12` under one of `keys`, else what the
    /// [`MissPolicy`] gives (see the module docs). `write` as for [`Self::resolve_with`].
    #[expect(clippy::too_many_arguments, reason = "one pair's shapes, keys, meshes and prediction")]
    fn resolve_pair(
        &self,
        pos12: &Pose,
        g1: &dyn Shape,
        g2: &dyn Shape,
        keys: &Keys,
        mesh1: &std::sync::Arc<rtcd::RtcdMesh>,
        mesh2: &std::sync::Arc<rtcd::RtcdMesh>,
        prediction: Real,
        mut write: impl FnMut(&[rtcd::ContactManifold], bool),
    ) -> Option<()> {
        let settings = self.cache.settings();
        let stored = |swapped: bool| if swapped { pos12.inverse() } else { *pos12 };
        // Rapier fully updates the pair: noted by the cache's lookup (with whether a batch result
        // was used as it is), or when the key has no cached result, while the driver follows
        // Rapier's recycling.
        let mut cached = false;

        // The batch's result at this pose. Farther apart than the prediction there is no contact:
        // the box test decides only when the result has a point within the prediction (without one,
        // nothing is handed over either way) and no point already shows the shapes that close.
        for &(key, swapped) in keys {
            let stored_pos12 = stored(swapped);
            let hit = self.cache.read_exact(&key, &stored_pos12, Some(swapped), |ms| {
                let live = ms.iter().any(|m| m.points.iter().any(|p| handed_over(p, prediction)));
                if live
                    && !witnessed_within(ms, &stored_pos12, prediction)
                    && !boxes_within(pos12, g1, g2, prediction)
                {
                    return Count::Separated;
                }
                write(if live { ms } else { &[] }, swapped);
                Count::Hit
            });
            match hit {
                None => {}
                Some(None) => cached = true,
                Some(Some(count)) => {
                    if count == Count::Separated {
                        write(&[], false);
                    }
                    self.cache.count(count);
                    return Some(());
                }
            }
        }
        if !cached && self.cache.tracking() {
            self.cache.note_update(keys[0].0);
        }
        if !boxes_within(pos12, g1, g2, prediction) {
            self.cache.count(Count::Separated);
            write(&[], false);
            return Some(());
        }
        if settings.miss_policy == MissPolicy::RefreshDepths {
            for &(key, swapped) in keys {
                let stored_pos12 = stored(swapped);
                if let Some(mut pair) = self.cache.nearest(&key, &stored_pos12, settings.refresh_max_displacement)
                    // Only while the stale results cannot be missing a contact: a vertex they did not
                    // hold was farther than their prediction, and is still farther than ours now.
                    && displacement(&pair.pos12, &stored_pos12, pair.radii)
                        <= pair.prediction - prediction
                {
                    pair.manifolds.iter_mut().for_each(|m| refresh_depths(m, &stored_pos12));
                    self.cache.count(Count::Refreshed);
                    write(&pair.manifolds, swapped);
                    return Some(());
                }
            }
        }

        // Not in the cache: compute on the spot, in this call's order (a standard trace: the
        // on-the-spot narrow phase keeps no useful state between unrelated pairs).
        let start = Instant::now();
        let input = PairInput::new(PairKey::new(1, 2), mesh1, mesh2, to_rtcd(pos12));
        let prediction = prediction.max(0.0);
        let opts = StepOptions {
            prediction_distance: prediction,
            force_standard: true,
            keep_contacts: true,
            skip_manifolds: true,
            ..Default::default()
        };
        let (mut out, angle) = self.cache.with_exact(|np| {
            (np.step(&[input], &opts).pairs.pop().unwrap_or_default(), np.params().manifold_angle)
        });
        let spec_angle = settings.speculative_angle_or(angle);
        let manifolds = Reducer::with_local(|reducer| {
            reducer.reduce_output(
                &mut out,
                &to_rtcd(pos12),
                angle,
                spec_angle,
                prediction,
                prediction,
                settings.support_fraction,
                mesh1.length_scale().min(mesh2.length_scale()),
            )
        });
        self.cache.count(Count::Miss(start.elapsed()));
        write(&manifolds, false);
        Some(())
    }
}

/// A level chunk's manifold with shape 2's (the chunk's) feature ids made unique across the level:
/// `chunk << bits | id`.
fn chunk_features(m: &rtcd::ContactManifold, chunk: u32, bits: u32) -> rtcd::ContactManifold {
    use rtcd::FeatureId;
    let offset = |f: FeatureId| {
        let high = chunk.checked_shl(bits).unwrap_or(u32::MAX);
        match f {
            FeatureId::Vertex(v) => FeatureId::Vertex(high | v),
            FeatureId::Face(t) => FeatureId::Face(high | t),
            FeatureId::Edge(e) => FeatureId::Edge(high | e),
        }
    };
    let mut m = m.clone();
    m.points.iter_mut().for_each(|p| p.fid2 = offset(p.fid2));
    m
}

/// Whether a handed-over point of `ms` (stored order, shape 2 at `pos12`) proves the shapes within
/// `prediction` of each other, so that [`boxes_within`] holds: a penetrating point (its vertex is
/// inside the other shape), or witnesses on both surfaces at most `prediction` apart.
fn witnessed_within(ms: &[rtcd::ContactManifold], pos12: &Pose, prediction: Real) -> bool {
    let pos12 = to_rtcd(pos12);
    ms.iter().flat_map(|m| &m.points).any(|p| {
        handed_over(p, prediction)
            && (p.dist <= 0.0
                || p.local_p1.distance_squared(pos12.transform_point(p.local_p2)) <= prediction * prediction)
    })
}

/// Whether the two shapes' local bounding boxes, as oriented boxes at `pos12` and each grown by half
/// the prediction, overlap. Stricter than parry's AABB-in-frame-1 test and implied by the batch's
/// world-box test, so a pair failing it cannot be in contact and was never in the batch.
fn boxes_within(pos12: &Pose, g1: &dyn Shape, g2: &dyn Shape, prediction: Real) -> bool {
    let grow = 0.5 * prediction.max(0.0);
    let obb = |g: &dyn Shape| {
        let b = g.compute_local_aabb();
        (Cuboid::new(b.half_extents() + Vector::splat(grow)), Pose::from_translation(b.center()))
    };
    let ((c1, p1), (c2, p2)) = (obb(g1), obb(g2));
    intersection_test(&p1, &c1, &(*pos12 * p2), &c2).unwrap_or(true)
}

impl QueryDispatcher for RtcdDispatcher {
    fn intersection_test(&self, _: &Pose, _: &dyn Shape, _: &dyn Shape) -> Result<bool, Unsupported> {
        Err(Unsupported)
    }

    fn distance(&self, _: &Pose, _: &dyn Shape, _: &dyn Shape) -> Result<Real, Unsupported> {
        Err(Unsupported)
    }

    fn contact(
        &self,
        _: &Pose,
        _: &dyn Shape,
        _: &dyn Shape,
        _: Real,
    ) -> Result<Option<Contact>, Unsupported> {
        Err(Unsupported)
    }

    fn closest_points(
        &self,
        _: &Pose,
        _: &dyn Shape,
        _: &dyn Shape,
        _: Real,
    ) -> Result<ClosestPoints, Unsupported> {
        Err(Unsupported)
    }

    fn cast_shapes(
        &self,
        _: &Pose,
        _: Vector,
        _: &dyn Shape,
        _: &dyn Shape,
        _: ShapeCastOptions,
    ) -> Result<Option<ShapeCastHit>, Unsupported> {
        Err(Unsupported)
    }

    fn cast_shapes_nonlinear(
        &self,
        _: &NonlinearRigidMotion,
        _: &dyn Shape,
        _: &NonlinearRigidMotion,
        _: &dyn Shape,
        _: Real,
        _: Real,
        _: bool,
    ) -> Result<Option<ShapeCastHit>, Unsupported> {
        Err(Unsupported)
    }
}

impl PersistentQueryDispatcher<ContactManifoldData, ContactData> for RtcdDispatcher {
    fn contact_manifolds(
        &self,
        pos12: &Pose,
        g1: &dyn Shape,
        g2: &dyn Shape,
        prediction: Real,
        manifolds: &mut Vec<ContactManifold<ContactManifoldData, ContactData>>,
        workspace: &mut Option<ContactManifoldsWorkspace>,
    ) -> Result<(), Unsupported> {
        let depths = self.cache.handed_depths();
        self.resolve_with(pos12, g1, g2, prediction, |ours, swapped| {
            write_manifolds(ours, swapped, pos12, prediction, depths, manifolds)
        })
        .ok_or(Unsupported)?;
        // Always, whatever the count: see the module docs.
        *workspace = Some(ContactManifoldsWorkspace(Box::new(RtcdWorkspace)));
        Ok(())
    }

    fn contact_manifold_convex_convex(
        &self,
        _: &Pose,
        _: &dyn Shape,
        _: &dyn Shape,
        _: Option<&dyn NormalConstraints>,
        _: Option<&dyn NormalConstraints>,
        _: Real,
        _: &mut ContactManifold<ContactManifoldData, ContactData>,
    ) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
}
