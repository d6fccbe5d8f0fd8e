//! Contacts in parry's conventions: everything in the frame of shape 1 except `local_p2` and
//! `local_n2` (shape 2's frame), `local_n1` is shape 1's outward normal pointing toward shape 2, and
//! `dist < 0` when the shapes penetrate.

mod manifold;
mod reproject;

pub use manifold::{ReduceScratch, reduce_manifolds, reduce_manifolds_with, reduce_subset_with};
pub use reproject::{ContactCandidate, RayContact, ray_depth, reproject};

use arrayvec::ArrayVec;
use glam::Vec3;

/// Which feature of a mesh a contact point comes from. Stable from step to step while the same
/// vertex ray hits the same triangle, so the solver can warm-start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FeatureId {
    /// The vertex the ray was cast from.
    Vertex(u32),
    /// The triangle the ray hit.
    Face(u32),
    /// An edge ([`crate::RtcdMesh::edges`]) that crosses the other mesh's surface (Mochi 2024
    /// §3.4's edge rays).
    Edge(u32),
}

impl FeatureId {
    /// A `u64` that orders and identifies the feature (kind in the high bits).
    pub fn packed(self) -> u64 {
        match self {
            FeatureId::Vertex(v) => (1u64 << 32) | v as u64,
            FeatureId::Edge(e) => (2u64 << 32) | e as u64,
            FeatureId::Face(f) => (3u64 << 32) | f as u64,
        }
    }
}

/// One contact point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactPoint {
    /// Point on shape 1, in shape 1's frame.
    pub local_p1: Vec3,
    /// Point on shape 2, in shape 2's frame.
    pub local_p2: Vec3,
    /// Signed distance along the point's own contact normal (its ray's, which lies within the
    /// manifold's `manifold_angle` of the manifold normal, not always on it): negative when
    /// penetrating (minus the re-projected depth), positive for a speculative contact within the
    /// prediction distance.
    pub dist: f32,
    /// Feature of shape 1.
    pub fid1: FeatureId,
    /// Feature of shape 2.
    pub fid2: FeatureId,
}

/// Up to four points sharing a normal.
#[derive(Clone, Debug, PartialEq)]
pub struct ContactManifold {
    /// Shape 1's outward normal, in its frame, pointing toward shape 2.
    pub local_n1: Vec3,
    /// `local_n1` seen from shape 2: `pos12.rotation⁻¹ * -local_n1`.
    pub local_n2: Vec3,
    /// At most [`MAX_MANIFOLD_POINTS`] points, the deepest first.
    pub points: ArrayVec<ContactPoint, MAX_MANIFOLD_POINTS>,
}

/// Most points in a manifold (what Rapier's solver takes).
pub const MAX_MANIFOLD_POINTS: usize = 4;

impl ContactManifold {
    /// The smallest `dist` (the deepest point).
    pub fn min_dist(&self) -> f32 {
        self.points.iter().map(|p| p.dist).fold(f32::INFINITY, f32::min)
    }
}
