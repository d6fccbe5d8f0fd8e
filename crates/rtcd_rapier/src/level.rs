//! Level geometry: Rapier's own triangle-mesh ([`TriMesh`]) and heightfield ([`HeightField`])
//! colliders on fixed or kinematic bodies, seen as rtcd [`LevelMesh`]es (surfaces cut into chunks),
//! so our meshes collide with terrain, floors and ramps through the ray-traced narrow phase, not
//! through Rapier's triangle-by-triangle path.
//!
//! A [`TriMesh`]'s triangles keep their winding: counter-clockwise seen from outside, so a terrain
//! wound that way is solid below its surface. A [`HeightField`] is solid below by definition: its
//! triangles are wound to face up (+y in its frame). Cells that the heightfield marks as removed
//! are holes.
//!
//! The dispatcher only sees shapes, so a level is known by a fingerprint of its shape: the address
//! of its data, its sizes and its bounds. One [`LevelMesh`] is built per fingerprint, on first use,
//! and shared by the driver and the dispatcher. The cache holds a reference to each level's shape
//! while colliders use it: an edit then copies the shape (Rapier's `shape_mut` and bevy_rapier's
//! mutable heightfield access copy a shared shape), so the edited level has a new fingerprint and
//! its own mesh, and no other shape can take the address of one still cached. Levels no batch saw
//! are forgotten (`crate::GroundMeshes::forget_unseen_levels`).

use std::{
    hash::{Hash, Hasher},
    sync::Arc,
};

use glam::Vec3;
use parry3d::shape::{HeightField, Shape, SharedShape, TriMesh};
use rtcd::{LevelMesh, MeshError};
use rustc_hash::FxHasher;

/// Identifies a level shape (see the module docs).
pub type LevelKey = u64;

/// The level shapes: triangle meshes and heightfields.
pub(crate) enum LevelShape<'a> {
    TriMesh(&'a TriMesh),
    HeightField(&'a HeightField),
}

impl<'a> LevelShape<'a> {
    /// The level view of `shape`, if it is a triangle mesh or a heightfield.
    pub(crate) fn of(shape: &'a dyn Shape) -> Option<Self> {
        if let Some(t) = shape.as_trimesh() {
            Some(Self::TriMesh(t))
        } else {
            shape.as_heightfield().map(Self::HeightField)
        }
    }

    /// The shape's fingerprint: where its data lives, its sizes and its bounds.
    pub(crate) fn key(&self) -> LevelKey {
        let mut h = FxHasher::default();
        match self {
            Self::TriMesh(t) => {
                0u8.hash(&mut h);
                (t.vertices().as_ptr() as usize, t.vertices().len(), t.indices().as_ptr() as usize)
                    .hash(&mut h);
                t.indices().len().hash(&mut h);
                let b = t.local_aabb();
                [b.mins.to_array(), b.maxs.to_array()].map(|a| a.map(f32::to_bits)).hash(&mut h);
            }
            Self::HeightField(f) => {
                1u8.hash(&mut h);
                (f.heights().data().as_ptr() as usize, f.nrows(), f.ncols()).hash(&mut h);
                f.scale().to_array().map(f32::to_bits).hash(&mut h);
                let b = f.root_aabb();
                [b.mins.to_array(), b.maxs.to_array()].map(|a| a.map(f32::to_bits)).hash(&mut h);
            }
        }
        h.finish()
    }

    /// Builds the level mesh (see the module docs for the winding).
    pub(crate) fn build(&self) -> Result<LevelMesh, MeshError> {
        match self {
            Self::TriMesh(t) => {
                let indices: Vec<u32> = t.indices().iter().flatten().copied().collect();
                LevelMesh::new(format!("trimesh ({} triangles)", t.indices().len()), t.vertices(), &indices)
            }
            Self::HeightField(f) => {
                let (positions, indices) = heightfield_triangles(f);
                LevelMesh::new(format!("heightfield {}x{}", f.nrows(), f.ncols()), &positions, &indices)
            }
        }
    }
}

/// The heightfield's triangles (holes left out), each wound to face up, on its grid's vertices:
/// each grid point once (those of removed cells only left out), 12 bytes a vertex and 12 a
/// triangle, where a copy of each triangle's corners took 48 bytes a triangle before welding.
pub fn heightfield_triangles(f: &HeightField) -> (Vec<Vec3>, Vec<u32>) {
    // Cells (parry's `nrows` and `ncols` count them); grid point (i, j) is parry's vertex
    // `i + j * (rows + 1)`; `place[v]` its index in `positions`.
    let (rows, cols) = (f.nrows(), f.ncols());
    let mut place = vec![u32::MAX; (rows + 1) * (cols + 1)];
    let mut positions = Vec::new();
    let mut indices = Vec::new();
    for j in 0..cols {
        for i in 0..rows {
            let (vids, tris) = (f.triangles_vids_at(i, j), f.triangles_at(i, j));
            for (vid, tri) in [(vids.0, tris.0), (vids.1, tris.1)] {
                let (Some(mut v), Some(tri)) = (vid, tri) else { continue };
                let mut p = [tri.a, tri.b, tri.c];
                if (p[1] - p[0]).cross(p[2] - p[0]).y < 0.0 {
                    v.swap(1, 2);
                    p.swap(1, 2);
                }
                for (id, at) in v.into_iter().zip(p) {
                    let slot = &mut place[id as usize];
                    if *slot == u32::MAX {
                        *slot = positions.len() as u32;
                        positions.push(at);
                    }
                    indices.push(*slot);
                }
            }
        }
    }
    (positions, indices)
}

/// A cached level: its mesh (`None` when rejected), the shape it was built from (held, see the
/// module docs), and whether the current batch saw it.
#[derive(Clone)]
struct CachedLevel {
    mesh: Option<Arc<LevelMesh>>,
    _shape: SharedShape,
    seen: bool,
    /// The same shape is on a dynamic body too (a shared collider shape): the dispatcher, which
    /// cannot tell the bodies apart, leaves its pairs to Rapier.
    on_dynamic: bool,
}

impl std::fmt::Debug for CachedLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachedLevel").field("mesh", &self.mesh).field("seen", &self.seen).finish()
    }
}

/// A shared cache of level meshes by [`LevelKey`]. Cloning shares the cache.
#[derive(Clone, Debug, Default)]
pub(crate) struct LevelMeshes {
    meshes: Arc<std::sync::Mutex<rustc_hash::FxHashMap<LevelKey, CachedLevel>>>,
}

impl LevelMeshes {
    /// The level mesh of `shape` and its key, built on first use (the cache holds `shape` from
    /// then on), and marked seen by this batch. `None` for a shape that is no level, or a surface
    /// that is rejected (logged once per shape; the pair is then left to Rapier's default
    /// dispatcher).
    pub(crate) fn get(&self, shape: &SharedShape) -> Option<(LevelKey, Arc<LevelMesh>)> {
        let level = LevelShape::of(&**shape)?;
        let key = level.key();
        let mut meshes = self.meshes.lock().unwrap_or_else(|e| e.into_inner());
        let cached = meshes.entry(key).or_insert_with(|| CachedLevel {
            mesh: match level.build() {
                Ok(m) => Some(Arc::new(m)),
                Err(e) => {
                    log::warn!("rtcd_rapier: a level shape is left to Rapier's narrow phase: {e}");
                    None
                }
            },
            _shape: shape.clone(),
            seen: true,
            on_dynamic: false,
        });
        cached.seen = true;
        Some((key, cached.mesh.clone()?))
    }

    /// Notes that `shape`, if it is a cached level, is also on a dynamic body this batch.
    pub(crate) fn mark_on_dynamic(&self, shape: &dyn Shape) {
        let Some(level) = LevelShape::of(shape) else { return };
        let mut meshes = self.meshes.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = meshes.get_mut(&level.key()) {
            c.on_dynamic = true;
        }
    }

    /// The level mesh of `shape` if [`LevelMeshes::get`] built it already.
    pub(crate) fn known(&self, shape: &LevelShape) -> Option<(LevelKey, Arc<LevelMesh>)> {
        let key = shape.key();
        let meshes = self.meshes.lock().unwrap_or_else(|e| e.into_inner());
        let cached = meshes.get(&key).filter(|c| !c.on_dynamic)?;
        Some((key, cached.mesh.clone()?))
    }

    /// Forgets the levels that no [`LevelMeshes::get`] asked for since the last call (their
    /// colliders are gone, or their shapes were edited into new ones), and starts the next round.
    pub(crate) fn forget_unseen(&self) {
        let mut meshes = self.meshes.lock().unwrap_or_else(|e| e.into_inner());
        meshes.retain(|_, c| {
            c.on_dynamic = false;
            std::mem::take(&mut c.seen)
        });
    }

    /// Number of level shapes held.
    pub(crate) fn len(&self) -> usize {
        self.meshes.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}

#[cfg(test)]
mod tests {
    use parry3d::{math::Vector, utils::Array2};

    use super::*;

    #[test]
    fn heightfield_triangles_face_up_and_match_parry() {
        let heights = Array2::new(5, 4, (0..20).map(|k| ((k * 7) % 5) as f32 * 0.1).collect());
        let f = HeightField::new(heights, Vector::new(4.0, 1.0, 3.0));
        let (p, i) = heightfield_triangles(&f);
        assert_eq!(i.len() / 3, f.triangles().count());
        // One vertex per grid point, and parry's triangles, each with its corners, facing up.
        assert_eq!(p.len(), 20);
        for (t, tri) in i.chunks_exact(3).zip(f.triangles()) {
            let [a, b, c] = [p[t[0] as usize], p[t[1] as usize], p[t[2] as usize]];
            assert!((b - a).cross(c - a).y > 0.0);
            let mut ours = [a, b, c].map(|v| v.to_array().map(f32::to_bits));
            let mut parrys = [tri.a, tri.b, tri.c].map(|v| v.to_array().map(f32::to_bits));
            ours.sort_unstable();
            parrys.sort_unstable();
            assert_eq!(ours, parrys);
        }
        let cache = LevelMeshes::default();
        let shape = SharedShape::new(f);
        let (k1, m1) = cache.get(&shape).unwrap();
        let (k2, m2) = cache.get(&shape.clone()).unwrap();
        assert_eq!(k1, k2);
        assert!(Arc::ptr_eq(&m1, &m2));
        assert_eq!(m1.triangle_count(), 24);
        assert_eq!(cache.len(), 1);
    }

    /// An edited heightfield is a new level with its own mesh: the cache holds the shape, so the
    /// edit copies it (as Rapier's `shape_mut` does); the old level goes once no batch asks for it.
    #[test]
    fn an_edited_level_gets_a_new_mesh_and_the_old_one_goes() {
        let heights = Array2::new(5, 4, vec![0.0; 20]);
        let mut shape = SharedShape::new(HeightField::new(heights, Vector::new(4.0, 1.0, 3.0)));
        let cache = LevelMeshes::default();
        let (k1, m1) = cache.get(&shape).unwrap();
        assert_eq!(m1.triangle_count(), 24);
        cache.forget_unseen();
        // Dig a hole: one cell removed.
        let f = shape.make_mut().as_heightfield_mut().unwrap();
        f.set_cell_status(1, 1, parry3d::shape::HeightFieldCellStatus::CELL_REMOVED);
        let (k2, m2) = cache.get(&shape).unwrap();
        assert_ne!(k1, k2, "the edit made a new shape");
        assert_eq!(m2.triangle_count(), 22, "the hole is in the new level's mesh");
        assert_eq!(cache.len(), 2);
        cache.forget_unseen();
        // The next batch asks only for the edited shape: the old level is forgotten.
        cache.get(&shape).unwrap();
        cache.forget_unseen();
        assert_eq!(cache.len(), 1);
        assert!(cache.known(&LevelShape::of(&*shape).unwrap()).is_some());
    }

    /// A level shape that is on a dynamic body too is not known to the dispatcher for that batch.
    #[test]
    fn a_level_shape_on_a_dynamic_body_is_left_to_rapier() {
        let heights = Array2::new(3, 3, vec![0.0; 9]);
        let shape = SharedShape::new(HeightField::new(heights, Vector::new(2.0, 1.0, 2.0)));
        let level = || LevelShape::of(&*shape).unwrap();
        let cache = LevelMeshes::default();
        cache.get(&shape).unwrap();
        cache.forget_unseen();
        cache.get(&shape).unwrap();
        cache.forget_unseen();
        cache.mark_on_dynamic(&*shape);
        assert!(cache.known(&level()).is_none());
        // The next batch finds it on fixed bodies only.
        cache.get(&shape).unwrap();
        cache.forget_unseen();
        assert!(cache.known(&level()).is_some());
    }
}
