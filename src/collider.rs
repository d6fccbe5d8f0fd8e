//! [`RtcdCollider`]: marks an entity's collider as a ray-traced concave mesh; [`RtcdColliderState`]:
//! what the plugin built from it.
//!
//! The plugin reads the mesh (a Bevy mesh asset, an OBJ file or a caller-built [`RtcdMesh`]), scales it
//! by the entity's global scale (what of its global transform bevy_rapier's rotation and translation
//! do not carry: mirrors, and the shear of a child rotated under a non-uniform scale; `baked_map`)
//! and validates it with [`RtcdMesh::new`]. Every source is then treated
//! alike:
//!
//! - **Valid**: a custom parry shape wrapping the triangle mesh, which our narrow phase handles (broad
//!   phase, mass properties and scene queries keep working through the wrapped triangle mesh):
//!   [`RtcdColliderState::Ready`]. An open mesh (one with holes) is accepted with a warning.
//!   A non-manifold mesh (an edge shared by more than two triangles) is repaired: such edges are
//!   split, and the mesh is ready with a note of how many.
//! - **Readable but rejected** (too many degenerate triangles, a surface that cannot be oriented;
//!   also a valid mesh that the entity's scale flattens):
//!   Rapier's own triangle-mesh collider, with a warning: [`RtcdColliderState::Fallback`].
//! - **Unusable** (no collider can be built from it): no collider, with an error:
//!   [`RtcdColliderState::Failed`].
//!
//! The result is computed once per mesh and scale: every collider of one mesh at one scale shares the
//! same prepared data (or the same fallback collider, or the same failure), and the warning or error is
//! logged once, naming the first entity that used it.

use std::{borrow::Cow, path::PathBuf, sync::Arc};

use bevy::{
    asset::LoadState,
    mesh::{Indices, MeshAccessError, VertexAttributeValues},
    platform::collections::HashMap,
    prelude::*,
};
use bevy_rapier3d::prelude::{Collider, ColliderScale, RigidBody};
use rtcd::{MeshError, RtcdMesh};
use rtcd_rapier::{RtcdShape, RtcdShapeData, parry3d::shape::SharedShape};

/// A ray-traced mesh collider. Put it on an entity with a `RigidBody` (or alone, for a static mesh);
/// the plugin inserts the Rapier `Collider` and an [`RtcdColliderState`] once the mesh is available.
/// Do not add a `Collider` yourself.
///
/// The collider's scale is baked in when it is built (the entity's global scale at that moment, its
/// mirrors and shear included, so that the collider has the shape the mesh is drawn with) and
/// not followed afterwards. Replacing the component (inserting another `RtcdCollider`) builds the
/// collider again, as does a change to its mesh asset's geometry (an `AssetEvent::Modified` that
/// changed its positions or indices, not only its colours or texture coordinates); removing it removes
/// the Rapier `Collider` and the [`RtcdColliderState`] the plugin inserted (a `Collider` inserted in
/// its place stays).
#[derive(Component, Clone, Debug)]
pub struct RtcdCollider {
    source: ColliderSource,
}

#[derive(Clone, Debug)]
enum ColliderSource {
    Mesh(Handle<Mesh>),
    Obj(PathBuf),
    Rtcd(Arc<RtcdMesh>),
}

impl RtcdCollider {
    /// From a Bevy mesh asset: a triangle list with `Float32x3` positions kept in the main world (its
    /// asset usage includes `MAIN_WORLD`). Built when the asset is loaded; until then the entity has no
    /// [`RtcdColliderState`]. An asset that fails to load gives [`RtcdColliderState::Failed`], until
    /// it arrives after all (reloaded, or inserted into `Assets<Mesh>`): the collider is built then.
    pub fn from_mesh(mesh: Handle<Mesh>) -> Self {
        Self { source: ColliderSource::Mesh(mesh) }
    }

    /// From a Wavefront OBJ file (path relative to the working directory, or absolute), read with
    /// [`rtcd::mesh::read_obj`]: every object of the file in one mesh, polygons triangulated. The
    /// colliders of one file share what was read of it until the file changes (its modification
    /// time): colliders made after that read it again.
    pub fn from_obj(path: impl Into<PathBuf>) -> Self {
        Self { source: ColliderSource::Obj(path.into()) }
    }

    /// From an `rtcd::RtcdMesh` built by the caller. If the entity is scaled, the scaled positions are
    /// validated again.
    pub fn from_rtcd_mesh(mesh: Arc<RtcdMesh>) -> Self {
        Self { source: ColliderSource::Rtcd(mesh) }
    }
}

/// What became of an [`RtcdCollider`]: inserted by the plugin when the collider is built (or
/// cannot be), again when the `RtcdCollider` or its mesh asset changes.
#[derive(Component, Clone, Debug)]
pub enum RtcdColliderState {
    /// Ray traced by our narrow phase.
    ///
    /// An **open** mesh (`!mesh.is_closed()`: some edges have a single triangle) is accepted with a
    /// warning ([`RtcdColliderState::warning`]): rays that leave the body through its holes find no
    /// contact, so its contacts are only reliable where its surface is hit from its outward side (the
    /// side its triangles' counter-clockwise winding faces), and its mass properties come from the
    /// convex hull of its vertices (from its bounding box if that hull is flat).
    Ready {
        /// The prepared mesh (scaled by the entity's scale).
        mesh: Arc<RtcdMesh>,
    },
    /// [`RtcdMesh::new`] rejected the geometry although it is well formed: more degenerate
    /// triangles than `rtcd::mesh::MAX_DEGENERATE_SHARE`, a surface that cannot be oriented, or a
    /// mesh flattened by the entity's scale (e.g. a zero scale axis). The
    /// entity got Rapier's own triangle-mesh collider instead (`Collider::trimesh` of the same
    /// triangles, scaled the same way, zero-area triangles dropped), which Rapier's default narrow phase
    /// handles as a hollow surface, without ray tracing. Logged once as a warning.
    Fallback {
        /// Why the mesh was rejected.
        reason: String,
    },
    /// No collider could be built; the entity has none. The reasons: an OBJ file that cannot be read
    /// or parsed; a mesh asset that failed to load; a Bevy mesh that is not a triangle list, or whose
    /// positions are missing, not `Float32x3`, or no longer in the main world; a non-finite
    /// coordinate; an index out of range or an index count that is not a multiple of three; an empty
    /// mesh; a rejected mesh (see [`RtcdColliderState::Fallback`]) from which Rapier cannot build its
    /// triangle mesh either (e.g. every triangle has zero area). Logged once as an error.
    Failed {
        /// Why.
        reason: String,
    },
}

impl RtcdColliderState {
    /// What the logged warning or error said about the mesh: for [`RtcdColliderState::Ready`], the
    /// open-mesh warning with the mesh's validation notes (`None` for a closed mesh); for
    /// [`RtcdColliderState::Fallback`] and [`RtcdColliderState::Failed`], the reason.
    pub fn warning(&self) -> Option<String> {
        match self {
            Self::Ready { mesh } => open_mesh_warning(mesh),
            Self::Fallback { reason } | Self::Failed { reason } => Some(reason.clone()),
        }
    }
}

/// The warning for an open mesh, `None` for a closed one.
fn open_mesh_warning(mesh: &RtcdMesh) -> Option<String> {
    if mesh.is_closed() {
        return None;
    }
    Some(format!(
        "mesh `{}` is open ({}): rays that leave through its holes find no contact, so contacts are only \
         reliable where its surface is hit from its outward side; its mass properties come from its \
         convex hull (its bounding box if the hull is flat)",
        mesh.name(),
        mesh.report().notes().join("; ")
    ))
}

/// The Rapier `Collider` the plugin inserted on an entity (a weak handle on its shape, which keeps
/// its address from being reused): when the `RtcdCollider` goes, that collider goes with it, and a
/// `Collider` the user put in its place stays.
#[derive(Component, Clone, Debug)]
pub(crate) struct RtcdBuilt(std::sync::Weak<dyn rtcd_rapier::parry3d::shape::Shape>);

impl RtcdBuilt {
    fn of(collider: &Collider) -> Self {
        Self(Arc::downgrade(&collider.raw.0))
    }

    /// Whether `collider` is the one the plugin inserted.
    fn built(&self, collider: &Collider) -> bool {
        std::ptr::addr_eq(self.0.as_ptr(), Arc::as_ptr(&collider.raw.0))
    }
}

/// What one mesh at one scale gave, shared by all its colliders.
#[derive(Clone)]
enum Outcome {
    Ready(Arc<RtcdShapeData>),
    Fallback { collider: Collider, reason: String },
    Failed(String),
}

/// The outcome of every mesh and scale seen, so that many colliders of one mesh share one
/// `RtcdShapeData` and a rejected mesh is neither validated nor reported again.
#[derive(Resource, Default)]
pub(crate) struct RtcdMeshCache {
    /// With a hash of the geometry (positions and indices) it was built from, where it had one: a
    /// modified asset whose geometry is that of every entry (its colours or texture coordinates
    /// changed) leaves its colliders as they are.
    meshes: HashMap<(AssetId<Mesh>, MapKey), (Outcome, Option<u64>)>,
    /// With the file's modification time when it was read (`None`: it could not be stat'ed).
    files: HashMap<(PathBuf, MapKey), (Outcome, Option<std::time::SystemTime>)>,
    rtcd: HashMap<(u64, MapKey), Outcome>,
    /// Mesh assets waited for that neither `Assets<Mesh>` nor the asset server knows: the runs
    /// waited so far (a warning once at [`UNKNOWN_MESH_RUNS`]).
    unknown: HashMap<AssetId<Mesh>, u32>,
    /// Shapes no collider holds, by their address: the runs of [`RtcdMeshCache::forget_unused`]
    /// (frames) they have been unused for.
    idle: HashMap<usize, u32>,
}

/// Frames a shape no collider holds stays in the cache (2 s at 60 frames a second): a prop spawned
/// again soon after the last one went (a projectile, a respawn) finds its prepared mesh, and its
/// mesh id (the GPU backend keeps the mesh it uploaded).
const IDLE_FRAMES: u32 = 120;

/// A hash of a mesh's geometry, for [`RtcdMeshCache::meshes`].
fn geometry_hash(positions: &[Vec3], indices: &[u32]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    positions.len().hash(&mut h);
    for p in positions {
        p.to_array().map(f32::to_bits).hash(&mut h);
    }
    indices.hash(&mut h);
    h.finish()
}

/// Ancestors whose scales a collider's takes at most (a guard against a cycle; Bevy's hierarchies
/// are far shallower).
const MAX_HIERARCHY_DEPTH: usize = 256;

/// Runs of the collider systems (fixed ticks) after which a mesh asset that neither `Assets<Mesh>`
/// nor the asset server knows is reported (10 s at 60 Hz): it may still be added, and the collider
/// keeps waiting for it.
const UNKNOWN_MESH_RUNS: u32 = 600;

/// Colliders whose input changed since they were built: an `RtcdCollider` replaced (the entity's
/// state and Rapier collider are removed, so [`build_colliders`] builds it again) or removed (the
/// state and collider it gave are removed), and mesh assets modified or removed (their cached
/// outcomes are forgotten and the colliders built from them are built again).
#[expect(clippy::too_many_arguments, reason = "a Bevy system: the queries and resources it reads")]
pub(crate) fn refresh_colliders(
    mut commands: Commands,
    mut cache: ResMut<RtcdMeshCache>,
    mut events: Option<MessageReader<AssetEvent<Mesh>>>,
    meshes: Option<Res<Assets<Mesh>>>,
    changed: Query<(Entity, Ref<RtcdCollider>, Ref<RtcdColliderState>), Changed<RtcdCollider>>,
    ticks: bevy::ecs::system::SystemChangeTick,
    built: Query<(Entity, &RtcdCollider, &RtcdColliderState)>,
    owned: Query<(&RtcdBuilt, Option<&Collider>, Option<&ColliderScale>)>,
    rescaled: Query<(Entity, &ColliderScale, Option<&Name>), (Changed<ColliderScale>, With<RtcdBuilt>)>,
    mut removed: RemovedComponents<RtcdCollider>,
) {
    // The scale is baked into the plugin's collider: a `ColliderScale` of another value would have
    // bevy_rapier rebuild it as a plain triangle mesh (no ray tracing). It is set back, with a
    // warning; a new scale takes a new `RtcdCollider`.
    for (e, scale, name) in &rescaled {
        if *scale != ColliderScale::Absolute(Vec3::ONE) {
            let label = name.map_or_else(|| format!("{e}"), |n| n.to_string());
            warn!(
                "rtcd: {label}: ColliderScale {scale:?} on an RtcdCollider's collider is set back to \
                 Absolute(ONE): its scale was baked in when it was built; insert the RtcdCollider again \
                 to build it at a new scale"
            );
            commands.entity(e).try_insert(ColliderScale::Absolute(Vec3::ONE));
        }
    }
    // What the plugin inserted goes: its state, and the Rapier collider and its scale where they are
    // still the plugin's (not a `Collider` the user inserted after removing the `RtcdCollider`).
    let unbuild = |commands: &mut Commands, e: Entity| {
        let Ok(mut cmd) = commands.get_entity(e) else { return };
        cmd.try_remove::<RtcdColliderState>();
        if let Ok((built, collider, scale)) = owned.get(e) {
            if collider.is_some_and(|c| built.built(c)) {
                cmd.try_remove::<Collider>();
            }
            // The plugin's scale goes whoever's the collider is: a collider the user put in its
            // place follows the entity's scale, as bevy_rapier's do.
            if scale == Some(&ColliderScale::Absolute(Vec3::ONE)) {
                cmd.try_remove::<ColliderScale>();
            }
            cmd.try_remove::<RtcdBuilt>();
        }
    };
    // Replaced since it was built (whether it was added this frame or long ago): a component no older
    // than the state built from it (the same tick: replaced by a command applied with the plugin's
    // own; the plugin never inserts an `RtcdCollider`, and a new one is spawned before it is built).
    for (e, c, built) in &changed {
        if !built.last_changed().is_newer_than(c.last_changed(), ticks.this_run()) {
            unbuild(&mut commands, e);
        }
    }
    // Removed, or removed and inserted again in one frame: either way what was built from the old
    // one goes.
    for e in removed.read() {
        unbuild(&mut commands, e);
    }
    cache.forget_unused();
    let Some(events) = events.as_mut() else { return };
    // Modified or removed: everything built from the asset goes. Added (an asset that failed to
    // load, loaded again or inserted by hand): what failed for want of it goes.
    let (mut stale, mut arrived) = (std::collections::HashSet::new(), std::collections::HashSet::new());
    for ev in events.read() {
        match ev {
            AssetEvent::Modified { id } => {
                // Only a change of geometry: colours, normals or texture coordinates are the
                // renderer's. Every entry of the asset (one per baked map) must have been built
                // from the geometry it has now; an asset no entry was built from is not read.
                let built: Vec<Option<u64>> =
                    cache.meshes.iter().filter(|((m, _), _)| m == id).map(|(_, (_, h))| *h).collect();
                let same = !built.is_empty()
                    && meshes.as_ref().and_then(|m| m.get(*id)).and_then(|m| mesh_data(m).ok()).is_some_and(
                        |(p, i)| {
                            let now = geometry_hash(&p, &i);
                            built.iter().all(|h| *h == Some(now))
                        },
                    );
                if !same {
                    stale.insert(*id);
                }
            }
            AssetEvent::Removed { id } => {
                stale.insert(*id);
            }
            AssetEvent::Added { id } => {
                arrived.insert(*id);
            }
            _ => {}
        }
    }
    if stale.is_empty() && arrived.is_empty() {
        return;
    }
    cache.meshes.retain(|(id, _), (o, _)| {
        !(stale.contains(id) || (arrived.contains(id) && matches!(o, Outcome::Failed(_))))
    });
    for (e, c, s) in &built {
        if let ColliderSource::Mesh(h) = &c.source
            && (stale.contains(&h.id())
                || (arrived.contains(&h.id()) && matches!(s, RtcdColliderState::Failed { .. })))
        {
            unbuild(&mut commands, e);
        }
    }
}

impl RtcdMeshCache {
    /// Forgets the shapes no collider has held for [`IDLE_FRAMES`] runs (the cache's was the last
    /// reference), ray traced or Rapier's stand-ins: props of random scales, generated meshes and
    /// despawned colliders leave nothing behind. The outcomes of meshes no collider could be built
    /// from are kept (reported once), until their file or asset changes.
    fn forget_unused(&mut self) {
        /// The shape's address, and whether some collider holds it (`None`: a failure, kept).
        fn holder(o: &Outcome) -> Option<(usize, bool)> {
            match o {
                Outcome::Ready(data) => Some((Arc::as_ptr(data) as usize, Arc::strong_count(data) > 1)),
                // Rapier's triangle mesh, held by the colliders (and Rapier's copies of them); the
                // cache's own `Collider` holds it twice (bevy_rapier keeps it as the unscaled shape
                // too; the unit test below checks the count).
                Outcome::Fallback { collider, .. } => Some((
                    Arc::as_ptr(&collider.raw.0).cast::<()>() as usize,
                    Arc::strong_count(&collider.raw.0) > 2,
                )),
                Outcome::Failed(_) => None,
            }
        }
        let (last, mut idle) = (std::mem::take(&mut self.idle), HashMap::default());
        let mut keep = |o: &Outcome| match holder(o) {
            None | Some((_, true)) => true,
            Some((addr, false)) => {
                let runs = last.get(&addr).copied().unwrap_or(0) + 1;
                let kept = runs < IDLE_FRAMES;
                if kept {
                    idle.insert(addr, runs);
                }
                kept
            }
        };
        self.meshes.retain(|_, (o, _)| keep(o));
        self.files.retain(|_, (o, _)| keep(o));
        self.rtcd.retain(|_, o| keep(o));
        self.idle = idle;
    }

    /// Shapes held (tests).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.meshes.len() + self.files.len() + self.rtcd.len()
    }
}

/// The linear map baked into a collider's vertices, as a cache key (its nine entries' bits).
type MapKey = [u32; 9];

/// What of an entity's global transform is baked into its collider's vertices: the part of the
/// global linear map that bevy_rapier's pose for the collider does not carry. bevy_rapier places a
/// collider by rotation and translation alone (`ColliderScale::Absolute(ONE)` keeps it from scaling
/// it again), so the vertices take `R⁻¹ · L`, where `L` is the entity's global linear map and `R` the
/// rotation bevy_rapier gives the collider.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Baked {
    /// A scale along the mesh's own axes (no rotation of a child under a non-uniform scale): an
    /// exact box stays one. Negative entries mirror.
    Scale(Vec3),
    /// A general linear map (a child rotated under a non-uniformly scaled parent: a shear).
    Linear(Mat3),
}

impl Baked {
    fn key(self) -> MapKey {
        let m = match self {
            Baked::Scale(s) => Mat3::from_diagonal(s),
            Baked::Linear(m) => m,
        };
        m.to_cols_array().map(f32::to_bits)
    }

    /// `positions` and `indices` with the map applied, wound to face out again where it mirrors.
    fn apply(self, positions: &[Vec3], indices: &[u32]) -> (Vec<Vec3>, Vec<u32>) {
        match self {
            Baked::Scale(s) => rtcd::mesh::scaled_mesh_data(positions, indices, s),
            Baked::Linear(m) => {
                let p = positions.iter().map(|p| m * *p).collect();
                let mut i = indices.to_vec();
                if m.determinant() < 0.0 {
                    for t in i.chunks_exact_mut(3) {
                        t.swap(1, 2);
                    }
                }
                (p, i)
            }
        }
    }
}

/// One entity of a collider's hierarchy, from the collider's own up to the root: its local
/// transform (the identity where it has none) and whether it is a `RigidBody`.
pub(crate) type Link = (Transform, bool);

/// The linear map a collider's vertices take ([`Baked`]), from its hierarchy (`chain[0]` the
/// collider's entity, the root last), so that the collider has the shape its mesh is drawn with
/// while bevy_rapier runs it:
///
/// - A collider with no body above it is placed by the rotation of its global transform decomposed
///   by glam (`GlobalTransform::compute_transform`, which puts a mirror's sign on x), and drawn
///   with its global transform: it takes `R⁻¹ · L`.
/// - A body is placed the same way, but bevy_rapier then writes the body's rotation back into its
///   `Transform` and keeps its scale, so from the first step on the body is drawn with Rapier's
///   rotation and its own scale: a collider on the body's entity takes the body's scale; one on a
///   child of the body, placed by the body's rotation times the rotations of the entities between
///   them (bevy_rapier's `collider_offset`), takes those rotations undone from the body's scale and
///   the children's transforms.
///
/// The transforms are composed here, not read from `GlobalTransform`, which is not propagated yet
/// for entities spawned this tick.
pub(crate) fn baked_map(chain: &[Link]) -> Baked {
    let linear = |links: &[Link]| {
        links.iter().rev().fold(Mat3::IDENTITY, |acc, (t, _)| {
            acc * Mat3::from_quat(t.rotation) * Mat3::from_diagonal(t.scale)
        })
    };
    let rotations = |links: &[Link]| links.iter().rev().fold(Quat::IDENTITY, |acc, (t, _)| acc * t.rotation);
    // The product of the local scales: the map when nothing is rotated.
    let naive = chain.iter().fold(Vec3::ONE, |acc, (t, _)| acc * t.scale);
    let l = linear(chain);
    let det = l.determinant();
    if !(det.is_finite() && det.abs() > f32::MIN_POSITIVE && naive.is_finite()) {
        // A flattened or non-finite map: no rotation can be decomposed from it; the mesh is
        // rejected as flattened (or not finite) by its validation.
        return Baked::Scale(naive);
    }
    let decomposed = |m: Mat3| bevy::math::Affine3A::from_mat3(m).to_scale_rotation_translation().1;
    let (rotation, drawn) = match chain.iter().position(|(_, body)| *body) {
        None => (decomposed(l), l),
        Some(k) => {
            // The body's rotation in Rapier, and its drawn linear map once it is written back
            // (relative to its parent's decomposed rotation where it has one).
            let body = decomposed(linear(&chain[k..]));
            let parent = linear(&chain[k + 1..]);
            // bevy_rapier's writeback: the rotation of the parent's inverse affine map, times Rapier's.
            let local = if k + 1 < chain.len() { decomposed(parent.inverse()) * body } else { body };
            let drawn_body = parent * Mat3::from_quat(local) * Mat3::from_diagonal(chain[k].0.scale);
            (body * rotations(&chain[..k]), drawn_body * linear(&chain[..k]))
        }
    };
    let m = Mat3::from_quat(rotation.normalize().inverse()) * drawn;
    let cols = m.to_cols_array_2d();
    let size = cols.iter().flatten().fold(0.0f32, |a, v| a.max(v.abs()));
    let off = (0..3).flat_map(|c| (0..3).filter(move |&r| r != c).map(move |r| (c, r)));
    if off.clone().any(|(c, r)| cols[c][r].abs() > 1e-6 * size) {
        return Baked::Linear(m);
    }
    let diagonal = Vec3::new(cols[0][0], cols[1][1], cols[2][2]);
    // Each axis's scale is the product of the local ones up to rounding when no rotation moved it
    // to another axis: that exact product then, with the decomposition's sign.
    let exact = (diagonal.abs() - naive.abs()).abs().cmple(1e-5 * naive.abs()).all();
    Baked::Scale(if exact { naive.abs().copysign(diagonal) } else { diagonal })
}

/// Positions and triangle indices of a Bevy mesh, or why it cannot be used.
pub(crate) fn mesh_data(mesh: &Mesh) -> Result<(Vec<Vec3>, Vec<u32>), String> {
    if mesh.primitive_topology() != bevy::mesh::PrimitiveTopology::TriangleList {
        return Err(format!("topology {:?} is not a triangle list", mesh.primitive_topology()));
    }
    let positions = match mesh.try_attribute(Mesh::ATTRIBUTE_POSITION) {
        Ok(VertexAttributeValues::Float32x3(p)) => p.iter().map(|p| Vec3::from_array(*p)).collect::<Vec<_>>(),
        Ok(_) => return Err("positions are not Float32x3".into()),
        Err(MeshAccessError::NotFound) => return Err("the mesh has no positions".into()),
        Err(e) => {
            return Err(format!(
                "no positions in the main world ({e}); keep the mesh's MAIN_WORLD asset usage"
            ));
        }
    };
    let indices = match mesh.try_indices_option() {
        Ok(Some(Indices::U16(i))) => i.iter().map(|&i| i as u32).collect(),
        Ok(Some(Indices::U32(i))) => i.clone(),
        Ok(None) => (0..positions.len() as u32).collect(),
        Err(e) => return Err(format!("no indices in the main world ({e})")),
    };
    Ok((positions, indices))
}

/// Whether Rapier's triangle mesh may stand in for a mesh that [`RtcdMesh::new`] rejected: the data is
/// well formed (finite, indices in range, whole triangles) and only its shape is not what ray tracing
/// needs.
fn may_fall_back(e: &MeshError) -> bool {
    matches!(e, MeshError::TooManyDegenerate { .. } | MeshError::NonOrientable { .. })
}

/// Validates `positions` with the map `baked` applied and prepares the shape; Rapier's triangle mesh
/// for geometry that is rejected but well formed.
fn outcome(name: String, positions: &[Vec3], indices: &[u32], baked: Baked) -> Outcome {
    // Mapped, and wound to face out again under a mirroring map.
    let (p, i): (Cow<[Vec3]>, Cow<[u32]>) = if baked == Baked::Scale(Vec3::ONE) {
        (Cow::Borrowed(positions), Cow::Borrowed(indices))
    } else {
        let (p, i) = baked.apply(positions, indices);
        (Cow::Owned(p), Cow::Owned(i))
    };
    match RtcdMesh::new(name, &p, &i) {
        Ok(mesh) => prepared(Arc::new(mesh), &p, &i),
        Err(e) if may_fall_back(&e) => fallback(&p, &i, e.to_string()),
        Err(e) => Outcome::Failed(e.to_string()),
    }
}

/// The shape data of a validated mesh; Rapier's triangle mesh of `positions` and `indices` (the same
/// geometry) if parry refuses it.
fn prepared(mesh: Arc<RtcdMesh>, positions: &[Vec3], indices: &[u32]) -> Outcome {
    match RtcdShapeData::new(mesh) {
        Ok(data) => Outcome::Ready(Arc::new(data)),
        Err(e) => fallback(positions, indices, e.to_string()),
    }
}

fn fallback(positions: &[Vec3], indices: &[u32], reason: String) -> Outcome {
    match rapier_trimesh(positions, indices) {
        Ok(collider) => Outcome::Fallback { collider, reason },
        Err(why) => {
            Outcome::Failed(format!("{reason}; Rapier's triangle mesh cannot be built either: {why}"))
        }
    }
}

/// Rapier's triangle-mesh collider of the triangles with a non-zero area.
fn rapier_trimesh(positions: &[Vec3], indices: &[u32]) -> Result<Collider, String> {
    if !indices.len().is_multiple_of(3) {
        return Err(format!("index count {} is not a multiple of 3", indices.len()));
    }
    let mut triangles = Vec::with_capacity(indices.len() / 3);
    for t in indices.chunks_exact(3) {
        let t = [t[0], t[1], t[2]];
        let [Some(a), Some(b), Some(c)] = t.map(|k| positions.get(k as usize).copied()) else {
            return Err(format!("triangle {t:?} uses a vertex index out of range"));
        };
        if !(a.is_finite() && b.is_finite() && c.is_finite()) {
            return Err(format!("triangle {t:?} has a non-finite vertex"));
        }
        let area = (b - a).cross(c - a).length_squared();
        if area > 0.0 && area.is_finite() {
            triangles.push(t);
        }
    }
    if triangles.is_empty() {
        return Err("no triangle has a non-zero area".into());
    }
    Collider::trimesh(positions.to_vec(), triangles).map_err(|e| e.to_string())
}

/// Builds the Rapier collider of every new [`RtcdCollider`] whose mesh is available, and inserts its
/// [`RtcdColliderState`].
pub(crate) fn build_colliders(
    mut commands: Commands,
    meshes: Option<Res<Assets<Mesh>>>,
    server: Option<Res<AssetServer>>,
    mut cache: ResMut<RtcdMeshCache>,
    new: Query<
        (Entity, &RtcdCollider, Option<&Transform>, Option<&ChildOf>, Option<&Name>, Has<RigidBody>),
        Without<RtcdColliderState>,
    >,
    ancestors: Query<(Option<&Transform>, Option<&ChildOf>, Has<RigidBody>)>,
) {
    // The unknown meshes counted this run: each once, however many colliders wait for it.
    let mut counted = std::collections::HashSet::new();
    let mut chain: Vec<Link> = Vec::new();
    for (entity, collider, local, parent, name, is_body) in &new {
        // The hierarchy's transforms, this entity's first: freshly spawned entities (this one, or
        // its parent spawned in the same tick) have no propagated GlobalTransform yet.
        chain.clear();
        chain.push((local.copied().unwrap_or_default(), is_body));
        let mut up = parent.map(|p| p.parent());
        while let Some(p) = up
            && chain.len() <= MAX_HIERARCHY_DEPTH
            && let Ok((t, next, body)) = ancestors.get(p)
        {
            chain.push((t.copied().unwrap_or_default(), body));
            up = next.map(|n| n.parent());
        }
        let baked = baked_map(&chain);
        let label = name.map_or_else(|| format!("{entity}"), |n| n.to_string());
        let skey = baked.key();
        let (result, fresh) = match &collider.source {
            ColliderSource::Mesh(handle) => {
                let key = (handle.id(), skey);
                if let Some((o, _)) = cache.meshes.get(&key) {
                    (o.clone(), false)
                } else {
                    let mut geometry = None;
                    let path = server.as_ref().and_then(|s| s.get_path(handle.id())).map(|p| p.to_string());
                    let what = path
                        .as_ref()
                        .map_or_else(|| "mesh asset".to_owned(), |p| format!("mesh asset `{p}`"));
                    let o = if let Some(mesh) = meshes.as_ref().and_then(|m| m.get(handle)) {
                        match mesh_data(mesh) {
                            Ok((p, i)) => {
                                geometry = Some(geometry_hash(&p, &i));
                                outcome(path.unwrap_or_else(|| label.clone()), &p, &i, baked)
                            }
                            Err(e) => Outcome::Failed(format!("{what}: {e}")),
                        }
                    } else if let Some(LoadState::Failed(e)) =
                        server.as_ref().and_then(|s| s.get_load_state(handle.id()))
                    {
                        Outcome::Failed(format!("{what} failed to load: {e}"))
                    } else if meshes.is_none() {
                        Outcome::Failed(format!(
                            "{what}: there is no Assets<Mesh> resource (Bevy's AssetPlugin and mesh support)"
                        ))
                    } else {
                        // Still loading, or not added yet. One that the asset server does not know
                        // either (a handle made by hand, or an asset removed) is reported once.
                        if server.as_ref().and_then(|s| s.get_load_state(handle.id())).is_none()
                            && counted.insert(handle.id())
                        {
                            let runs = cache.unknown.entry(handle.id()).or_default();
                            *runs = runs.saturating_add(1);
                            if *runs == UNKNOWN_MESH_RUNS {
                                warn!(
                                    "rtcd: {label}: {what} ({:?}) is in no Assets<Mesh> and unknown to the asset \
                                     server after {UNKNOWN_MESH_RUNS} ticks; the collider waits for it",
                                    handle.id()
                                );
                            }
                        }
                        continue;
                    };
                    cache.unknown.remove(&handle.id());
                    cache.meshes.insert(key, (o.clone(), geometry));
                    (o, true)
                }
            }
            ColliderSource::Obj(path) => {
                let key = (path.clone(), skey);
                // A file written, fixed or edited since it was read is read again (a missing file
                // that appears, a broken one mended).
                let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok();
                match cache.files.get(&key) {
                    Some((o, when)) if *when == modified => (o.clone(), false),
                    _ => {
                        let o = match rtcd::mesh::read_obj(path) {
                            Ok(obj) => outcome(obj.name, &obj.positions, &obj.indices, baked),
                            Err(e) => Outcome::Failed(e.to_string()),
                        };
                        cache.files.insert(key, (o.clone(), modified));
                        (o, true)
                    }
                }
            }
            ColliderSource::Rtcd(mesh) => {
                let key = (mesh.id(), skey);
                if let Some(o) = cache.rtcd.get(&key) {
                    (o.clone(), false)
                } else {
                    let indices: Vec<u32> = mesh.triangles().iter().flatten().copied().collect();
                    let o = match baked {
                        Baked::Scale(Vec3::ONE) => prepared(mesh.clone(), mesh.positions(), &indices),
                        Baked::Scale(scale) => {
                            // `RtcdMesh::scaled`: an exact box stays one, a mirroring scale faces out.
                            let (p, i) = baked.apply(mesh.positions(), &indices);
                            match mesh.scaled(mesh.name(), scale) {
                                Ok(scaled) => prepared(Arc::new(scaled), &p, &i),
                                Err(e) if may_fall_back(&e) => fallback(&p, &i, e.to_string()),
                                Err(e) => Outcome::Failed(e.to_string()),
                            }
                        }
                        // Sheared: a mesh of its own (an exact box is a box no more).
                        Baked::Linear(_) => {
                            outcome(mesh.name().to_owned(), mesh.positions(), &indices, baked)
                        }
                    };
                    cache.rtcd.insert(key, o.clone());
                    (o, true)
                }
            }
        };
        if fresh {
            match &result {
                Outcome::Ready(data) => {
                    if let Some(w) = open_mesh_warning(data.mesh()) {
                        warn!("rtcd: {label}: {w}");
                    }
                }
                Outcome::Fallback { reason, .. } => {
                    warn!(
                        "rtcd: {label}: {reason}; Rapier's own triangle-mesh collider stands in (no ray tracing)"
                    )
                }
                Outcome::Failed(reason) => error!("rtcd: {label}: no collider: {reason}"),
            }
        }
        // `try_insert`: an entity despawned by a command queued before these is passed over.
        let mut e = commands.entity(entity);
        match result {
            Outcome::Ready(data) => {
                let collider = Collider::from(SharedShape::new(RtcdShape::from_data(data.clone())));
                e.try_insert((
                    // The collider's scale is baked in: tell bevy_rapier not to scale it again.
                    ColliderScale::Absolute(Vec3::ONE),
                    RtcdBuilt::of(&collider),
                    collider,
                    RtcdColliderState::Ready { mesh: data.mesh().clone() },
                ));
            }
            Outcome::Fallback { collider, reason } => {
                e.try_insert((
                    ColliderScale::Absolute(Vec3::ONE),
                    RtcdBuilt::of(&collider),
                    collider,
                    RtcdColliderState::Fallback { reason },
                ));
            }
            Outcome::Failed(reason) => {
                e.try_insert(RtcdColliderState::Failed { reason });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scale_key(s: Vec3) -> MapKey {
        Baked::Scale(s).key()
    }

    /// A shape some collider still holds stays, ray traced or Rapier's stand-in; one only the cache
    /// holds goes after `IDLE_FRAMES` frames unused; a failure's outcome stays (it is reported once).
    #[test]
    fn unused_shapes_are_forgotten() {
        let (v, i) = rtcd::shapes::cuboid(Vec3::splat(0.5));
        let mut cache = RtcdMeshCache::default();
        let held = outcome("held".into(), &v, &i, Baked::Scale(Vec3::ONE));
        let Outcome::Ready(data) = &held else { panic!("a cube is ready") };
        let in_use = data.clone();
        cache.rtcd.insert((1, scale_key(Vec3::ONE)), held);
        for k in 1..=50 {
            let s = Vec3::splat(1.0 + k as f32 * 0.1);
            cache.rtcd.insert((1, scale_key(s)), outcome("random scale".into(), &v, &i, Baked::Scale(s)));
        }
        let (collider, reason) = (rapier_trimesh(&v, &i).unwrap(), String::new());
        let held_fallback = collider.clone();
        cache.files.insert(
            (PathBuf::from("open.obj"), scale_key(Vec3::ONE)),
            (Outcome::Fallback { collider, reason: reason.clone() }, None),
        );
        let (collider, reason) = (rapier_trimesh(&v, &i).unwrap(), String::new());
        cache.files.insert(
            (PathBuf::from("unused.obj"), scale_key(Vec3::ONE)),
            (Outcome::Fallback { collider, reason }, None),
        );
        cache
            .files
            .insert((PathBuf::from("bad.obj"), scale_key(Vec3::ONE)), (Outcome::Failed("bad".into()), None));
        assert_eq!(cache.len(), 54);
        // Unused shapes stay for a while (a prop spawned again soon finds its mesh), then go.
        for _ in 1..IDLE_FRAMES {
            cache.forget_unused();
        }
        assert_eq!(cache.len(), 54, "kept for {} frames", IDLE_FRAMES - 1);
        cache.forget_unused();
        assert_eq!(cache.len(), 3, "the held shape, the held stand-in and the failure stay");
        assert!(cache.rtcd.contains_key(&(1, scale_key(Vec3::ONE))));
        assert!(cache.files.contains_key(&(PathBuf::from("open.obj"), scale_key(Vec3::ONE))));
        drop((in_use, held_fallback));
        for _ in 0..IDLE_FRAMES {
            cache.forget_unused();
        }
        assert_eq!(cache.len(), 1, "the failure stays");
    }

    /// A static collider's baked map, placed by bevy_rapier's rotation (the global transform
    /// decomposed by Bevy), gives the drawn shape at 1 cm and 1 km scales, under every mirror and a
    /// turn; without shear it is a plain scale (an exact box stays one).
    #[test]
    fn baked_maps_give_the_drawn_shape_at_any_scale() {
        let turn = Quat::from_euler(EulerRot::YXZ, 0.7, -0.3, 1.1);
        let corners = [Vec3::X, Vec3::Y, Vec3::Z, Vec3::new(0.3, -0.7, 0.5)];
        for size in [0.01f32, 1.0, 1000.0] {
            for signs in 0..8u32 {
                let sign = |k: u32| if signs & (1 << k) != 0 { -1.0 } else { 1.0 };
                let scale = Vec3::new(sign(0) * size, sign(1) * 0.5 * size, sign(2) * 2.0 * size);
                for rotation in [Quat::IDENTITY, turn] {
                    let t = Transform { rotation, scale, ..default() };
                    let baked = baked_map(&[(t, false)]);
                    let Baked::Scale(s) = baked else { panic!("{scale}: {baked:?}") };
                    let placed = GlobalTransform::from(t).compute_transform().rotation;
                    for p in corners {
                        let (drawn, built) = (t.rotation * (t.scale * p), placed * (s * p));
                        assert!(
                            (drawn - built).length() <= 1e-5 * size,
                            "scale {scale}, turned {}: {drawn} vs {built}",
                            rotation != Quat::IDENTITY
                        );
                    }
                }
            }
        }
    }
}
