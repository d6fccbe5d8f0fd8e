//! # rtcd: ray-traced collision detection for rigid triangle meshes
//!
//! The CPU reference implementation of the narrow phase that `bevy_rtcd` runs on the GPU. It follows
//! three papers:
//!
//! - Hermann, Faure, Raffin, *Ray-traced collision detection for deformable bodies*, GRAPP 2008
//!   ("Hermann 2008"): a ray from every surface vertex along its inward normal; a contact when the
//!   first hit on the other body is an inward-facing triangle and the ray does not leave its own
//!   body first (Alg. 1, Fig. 4).
//! - Lehericey, Gouranton, Arnaldi, *New Iterative Ray-Traced Collision Detection Algorithm for GPU
//!   Architectures*, VRST 2013 ("IRTCD 2013"): per-ray records of the hit triangle, the iterative
//!   walk over triangle adjacency (Alg. 1) with the closest-edge choice (Alg. 2), `max_it` (Eq. 1)
//!   and the displacement criterion that switches between iterative and standard tracing (Eq. 2).
//! - Lehericey, Gouranton, Arnaldi, *Ray-Traced Collision Detection: Interpenetration Control and
//!   Multi-GPU Performance*, JVRC 2013 ("the 2014 follow-up", "2014"): predictive rays (Alg. 1
//!   lines 6-7, `culling_dist`, `distance_extension`) and ray re-projection onto the hit normal
//!   (§3.2).
//!
//! Additions of ours:
//! - Eq. 2 bounds the rotation's share with the radius of the mesh that moves in the other's frame
//!   (the smaller of the two frames' bounds, [`detect::max_displacement`]), never more than the
//!   paper's larger radius: a body rocking on a 40 m ground box is not re-traced for each
//!   milliradian.
//! - A pair without ray records is not traced when a lower bound on the distance between its meshes
//!   ([`detect::separation_bound`], a best-first descent of both BVHs; the one kept is
//!   [`detect::separation_for_reach`], a depth-first descent stopped as soon as it settles the
//!   question, which first checks the leaf pair where the pair's last descent found the meshes
//!   within reach) puts them beyond the rays' reach
//!   ([`detect::ray_reach`]): its standard step casts no ray, where it would find nothing.
//!   Until Eq. 2's displacement could have closed that gap, it takes no step at all
//!   ([`detect::needs_standard_trace`]). No step's result changes, but the steps at which such a pair
//!   is traced again move (and with them its reference pose), so a simulation's later steps differ
//!   slightly from the paper's schedule.
//! - A box built by [`RtcdMesh::cuboid`] is treated as the exact solid box it is: a vertex of the
//!   other mesh inside it gets an exact contact with one of its faces ([`detect::box_vertex_face`]:
//!   the face its inward ray leaves the box through while still in its own body, else the face of
//!   least penetration) instead of a ray, so bodies thinner than their penetration keep their
//!   contacts against it; the box's corners cast their rays as usual.
//!
//! The crate has no Bevy and no GPU dependency. Everything is `f32`, as on the GPU.
//!
//! ```
//! use rtcd::{shapes, NarrowPhase, PairInput, PairKey, Pose, RtcdMesh, RtcdParams, StepOptions};
//! use glam::Vec3;
//!
//! let (v, i) = shapes::cuboid(Vec3::splat(0.5));
//! let cube = RtcdMesh::new("cube", &v, &i).unwrap();
//! let (v, i) = shapes::cuboid(Vec3::new(5.0, 0.5, 5.0));
//! let ground = RtcdMesh::new("ground", &v, &i).unwrap();
//!
//! let params = RtcdParams::from_meshes(&[&cube, &ground]);
//! let mut narrow_phase = NarrowPhase::new(params).unwrap();
//! // The cube sits 0.1 deep in the ground's top face (y = 0.5).
//! let pair = PairInput::from_world(
//!     PairKey::new(1, 2),
//!     &cube, Pose::from_translation(Vec3::new(0.0, 0.9, 0.0)),
//!     &ground, Pose::IDENTITY,
//! );
//! let out = narrow_phase.step(&[pair], &StepOptions::default());
//! let deepest = out.pairs[0].manifolds[0].points[0].dist;
//! assert!((deepest + 0.1).abs() < 1e-5);
//! ```

pub mod aabb;
pub mod backend;
pub mod bvh;
pub mod contact;
pub mod detect;
pub mod error;
pub mod mesh;
pub mod metrics;
pub mod narrow_phase;
pub mod params;
pub mod pose;
pub mod ray;
pub mod shapes;
pub mod trace;

pub use aabb::Aabb;
pub use backend::{BackendError, NarrowPhaseBackend};
pub use contact::{ContactCandidate, ContactManifold, ContactPoint, FeatureId};
pub use detect::{PairState, RayKind, RayRecord};
pub use error::{MeshError, PairError};
pub use mesh::{LevelMesh, MeshReport, RtcdMesh};
pub use metrics::StepMetrics;
pub use narrow_phase::{NarrowPhase, PairInput, PairKey, PairOutput, StepMode, StepOptions, StepOutput};
pub use params::{ParamsError, RtcdParams, TracerKind};
pub use pose::Pose;

/// Re-export of the math library (`glam`, the same version Bevy uses).
pub use glam;
