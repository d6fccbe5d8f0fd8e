//! Cuboid colliders (the usual static ground and walls) seen as [`RtcdMesh`] boxes, so our meshes
//! collide with them through the ray-traced narrow phase too. One mesh per distinct half-extents,
//! built once and shared by the driver and the dispatcher. Each is an exact box
//! ([`RtcdMesh::cuboid`]): a vertex of a mesh inside the cuboid gets an exact contact with one of
//! its faces, however thin the mesh is, and the cuboid's corners cast their rays into the mesh.

use std::sync::{Arc, Mutex};

use glam::Vec3;
use rtcd::{LevelMesh, RtcdMesh};
use rustc_hash::FxHashMap;

use crate::level::{LevelKey, LevelMeshes, LevelShape};

/// Identifies a cuboid by its exact half-extents (the bits of the three floats). The dispatcher only
/// sees the `Cuboid` shape, so this is all it can key on; cuboids with equal half-extents are told
/// apart by their relative pose.
pub type CuboidKey = [u32; 3];

/// The key of a cuboid's half-extents.
pub fn cuboid_key(half_extents: Vec3) -> CuboidKey {
    half_extents.to_array().map(f32::to_bits)
}

/// A shared cache of the static partners' meshes: box meshes by half-extents, and the level
/// meshes of triangle-mesh and heightfield colliders ([`crate::level`]). Cloning shares the cache.
#[derive(Clone, Debug, Default)]
pub struct GroundMeshes {
    meshes: Arc<Mutex<FxHashMap<CuboidKey, Cuboid>>>,
    levels: LevelMeshes,
}

/// A cuboid's box mesh (`None`: rejected), and whether it was asked for since the last
/// [`GroundMeshes::forget_unseen`].
#[derive(Debug)]
struct Cuboid {
    mesh: Option<Arc<RtcdMesh>>,
    seen: bool,
}

impl GroundMeshes {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// The box mesh for these half-extents ([`RtcdMesh::cuboid`]: 8 vertices, 12 triangles, exact
    /// contacts for the vertices inside it). `None` when the box is rejected (zero or non-finite
    /// extents); that is logged once per half-extents and the pair is left to Rapier's default
    /// dispatcher.
    pub fn get(&self, half_extents: Vec3) -> Option<Arc<RtcdMesh>> {
        let key = cuboid_key(half_extents);
        let mut meshes = self.meshes.lock().unwrap_or_else(|e| e.into_inner());
        let c = meshes.entry(key).or_insert_with(|| Cuboid {
            mesh: match RtcdMesh::cuboid(format!("cuboid {half_extents}"), half_extents) {
                Ok(m) => Some(Arc::new(m)),
                Err(e) => {
                    log::warn!("rtcd_rapier: cuboid {half_extents} is left to Rapier's narrow phase: {e}");
                    None
                }
            },
            seen: true,
        });
        c.seen = true;
        c.mesh.clone()
    }

    /// Forgets the box meshes of the half-extents that no [`GroundMeshes::get`] asked for since
    /// the last call, and the level meshes likewise ([`GroundMeshes::forget_unseen_levels`]): the
    /// driver calls it after each batch's colliders, so a cuboid whose size keeps changing (an
    /// animated scale, debris of random sizes) does not leave a mesh behind for every size it had.
    /// A size asked for again is built again (its pairs are then traced afresh once).
    pub fn forget_unseen(&self) {
        self.meshes.lock().unwrap_or_else(|e| e.into_inner()).retain(|_, c| std::mem::take(&mut c.seen));
        self.forget_unseen_levels();
    }

    /// The level mesh of a triangle-mesh or heightfield shape, with its key (see
    /// [`crate::level`]: the cache holds the shape while batches use it); `None` for another shape,
    /// or a surface that validation rejects.
    pub fn level(&self, shape: &parry3d::shape::SharedShape) -> Option<(LevelKey, Arc<LevelMesh>)> {
        self.levels.get(shape)
    }

    /// Notes that a level shape is on a dynamic body too this batch (one collider shape shared by
    /// a fixed and a dynamic body): the dispatcher then leaves that shape's pairs to Rapier, as it
    /// does every trimesh on a dynamic body, until [`GroundMeshes::forget_unseen_levels`].
    pub fn mark_level_on_dynamic(&self, shape: &dyn parry3d::shape::Shape) {
        self.levels.mark_on_dynamic(shape);
    }

    /// Forgets the level meshes that no [`GroundMeshes::level`] asked for since the last call:
    /// the driver calls it after each batch's colliders, so removed or edited levels go.
    pub fn forget_unseen_levels(&self) {
        self.levels.forget_unseen();
    }

    /// The level mesh of a triangle-mesh or heightfield shape if [`GroundMeshes::level`] built it
    /// already (the driver does, for such colliders on fixed and kinematic bodies).
    pub fn known_level(&self, shape: &dyn parry3d::shape::Shape) -> Option<(LevelKey, Arc<LevelMesh>)> {
        self.levels.known(&LevelShape::of(shape)?)
    }

    /// Number of level shapes seen.
    pub fn levels(&self) -> usize {
        self.levels.len()
    }

    /// Number of half-extents held (asked for since the last [`GroundMeshes::forget_unseen`] but
    /// one).
    pub fn len(&self) -> usize {
        self.meshes.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Whether no cuboid was seen yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_mesh_per_half_extents() {
        let g = GroundMeshes::new();
        let a = g.get(Vec3::new(5.0, 0.5, 5.0)).unwrap();
        let b = g.clone().get(Vec3::new(5.0, 0.5, 5.0)).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(a.positions().len(), 8);
        assert_eq!(a.cuboid_half_extents(), Some(Vec3::new(5.0, 0.5, 5.0)));
        assert!(g.get(Vec3::new(0.0, 1.0, 1.0)).is_none());
        assert_eq!(g.len(), 2);
    }

    /// Sizes no batch asks for any more go; those still asked for stay the same mesh.
    #[test]
    fn unseen_sizes_are_forgotten() {
        let g = GroundMeshes::new();
        let kept = g.get(Vec3::splat(1.0)).unwrap();
        for k in 0..100 {
            g.get(Vec3::new(1.0 + k as f32 * 0.01, 1.0, 1.0));
            assert!(Arc::ptr_eq(&kept, &g.get(Vec3::splat(1.0)).unwrap()));
            g.forget_unseen();
            assert!(g.len() <= 2, "{} box meshes held", g.len());
        }
        g.forget_unseen();
        assert_eq!(g.len(), 0);
    }
}
