//! # rtcd_rapier: the ray-traced narrow phase inside Rapier
//!
//! Plugs [`rtcd`] (Hermann 2008, IRTCD 2013/2014) into `rapier3d` without Bevy, so the Bevy plugin
//! and a plain benchmark binary share one integration. Rapier treats a triangle mesh as a hollow
//! surface; here a concave mesh collider gets contacts with depths and separating directions from
//! vertex rays, and Rapier's solver resolves them.
//!
//! Three pieces (`docs/architecture.md`, "How contacts reach Rapier", describes them in full):
//!
//! - [`RtcdShape`]: a custom parry shape ([`ShapeType::Custom`](parry3d::shape::ShapeType)) that
//!   carries an [`rtcd::RtcdMesh`] and a per-collider instance id. It also exposes its triangle mesh
//!   as a composite shape, so Rapier's default dispatcher still collides it with every other shape
//!   (balls, capsules, convex hulls, ...), casts rays on it, and stops other shapes' CCD sweeps at
//!   it (Rapier never sweeps a triangle mesh itself: our fast bodies need soft CCD; see
//!   [`settings`]).
//! - [`RtcdDriver`]: the batch pass run **before** each `PhysicsPipeline::step`. It finds the pairs
//!   of our shapes (and of our shapes with cuboids, the usual static ground, and with the level
//!   colliders: trimesh and heightfield colliders of Rapier's own) with its own broad
//!   phase, runs one [`rtcd::NarrowPhaseBackend::step`] over all of them (CPU by default, any
//!   backend can be injected, with a CPU fallback on errors), and publishes the manifolds in a
//!   [`ContactCache`].
//! - [`RtcdDispatcher`]: the parry query dispatcher Rapier's narrow phase calls during the step. For
//!   our pairs it copies the cached manifolds into Rapier's, with stable feature ids and carried
//!   warm-start impulses; a pair the batch did not see is computed on the spot ([`MissPolicy`]).
//!   Every other pair returns `Err(Unsupported)`, so `.chain(DefaultQueryDispatcher)` keeps Rapier's
//!   behaviour exactly.
//!
//! A deep overlap's manifolds are merged into one before Rapier's solver sees them
//! ([`CacheSettings::merge_deep_overlaps`], on by default), so bodies spawned into each other come
//! apart without being launched; with [`CacheSettings::depth_bound`] set to
//! [`DepthBound::Corrective`], points deeper than the depth Rapier's `max_corrective_velocity`
//! removes in two steps are also handed over at that depth (the [`depth_bound`] module).
//!
//! Contacts are reduced for Rapier's solver in two tiers (at most four points per normal direction,
//! taken from the touching candidates before the speculative ones), so resting piles of concave
//! meshes come to rest and sleep. Call [`configure_integration_parameters`] (contact recycling off)
//! and install the narrow phase before adding colliders; or keep Rapier's contact recycling and call
//! [`RtcdDriver::detect_recycling`] instead of `detect`: the batch then skips the pairs Rapier
//! recycles (what the Bevy plugin does by default: a resting pile then traces only the pairs that
//! moved, and Rapier's recycling stays on for every other pair).
//!
//! ```no_run
//! use std::sync::Arc;
//! use rapier3d::prelude::*;
//! use rtcd_rapier::{Joints, RtcdDriver, RtcdShape, configure_integration_parameters};
//!
//! let mesh = Arc::new(rtcd::RtcdMesh::from_obj("assets/meshes/torus_900.obj").unwrap());
//! let mut driver = RtcdDriver::new(rtcd::RtcdParams::from_meshes(&[&mesh])).unwrap();
//! let mut narrow_phase = driver.rapier_narrow_phase(); // our dispatcher chained before Rapier's
//! let mut params = IntegrationParameters::default();
//! configure_integration_parameters(&mut params); // contact recycling off
//!
//! let mut bodies = RigidBodySet::new();
//! let mut colliders = ColliderSet::new();
//! let shape = RtcdShape::new(mesh).unwrap(); // one instance per collider: `shape.instance()`
//! let body = bodies.insert(RigidBodyBuilder::dynamic().translation(Vector::new(0.0, 2.0, 0.0)));
//! colliders.insert_with_parent(ColliderBuilder::new(SharedShape::new(shape)), body, &mut bodies);
//! // Each step: the batch first, then Rapier.
//! let (impulse_joints, multibody_joints) = (ImpulseJointSet::new(), MultibodyJointSet::new());
//! driver.detect(&bodies, &colliders, Joints::new(&impulse_joints, &multibody_joints), &params);
//! // physics_pipeline.step(.., &mut narrow_phase, &mut bodies, &mut colliders, ..);
//! # let _ = &mut narrow_phase;
//! ```

mod broad_phase;
pub mod cache;
mod convert;
pub mod depth_bound;
pub mod dispatcher;
pub mod driver;
pub mod ground;
pub mod level;
mod manifolds;
pub mod metrics;
mod reduction;
pub mod settings;
pub mod shape;

pub use cache::{CacheCounters, CacheSettings, ContactCache, MissPolicy, Pos12Tolerance};
pub use depth_bound::{DepthBound, corrective_depth};
pub use dispatcher::{RtcdDispatcher, RtcdWorkspace};
pub use driver::{Batch, BatchPair, DebugGeometry, DriverSettings, Joints, RtcdDriver};
pub use ground::GroundMeshes;
pub use metrics::RtcdMetrics;
pub use settings::{configure_integration_parameters, integration_parameters};
pub use shape::{RtcdShape, RtcdShapeData, ShapeError};

/// Re-export of the geometry library (the exact version this crate was built against).
pub use parry3d;
/// Re-export of the physics engine (the exact version this crate was built against).
pub use rapier3d;
/// Re-export of the core crate.
pub use rtcd;
