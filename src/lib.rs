//! # bevy_rtcd
//!
//! Ray-traced collision detection for concave triangle meshes in `bevy_rapier3d`: vertex rays
//! along inward normals (Hermann et al. 2008), iterative tracing over triangle adjacency (IRTCD
//! 2013) with predictive rays and ray re-projection (2014), on the CPU or the GPU, feeding
//! re-projected contacts into Rapier's solver each fixed tick. Every other pair keeps Rapier's
//! behaviour.
//!
//! ```no_run
//! use bevy::prelude::*;
//! use bevy_rapier3d::prelude::*;
//! use bevy_rtcd::prelude::*;
//!
//! App::new()
//!     .add_plugins(DefaultPlugins)
//!     .add_plugins(RapierPhysicsPlugin::<NoUserData>::default().in_fixed_schedule())
//!     .add_plugins(RtcdPlugin::default()) // after Rapier's plugin
//!     .add_systems(Startup, |mut commands: Commands| {
//!         // A static ground and a falling concave mesh.
//!         commands.spawn((Collider::cuboid(10.0, 0.5, 10.0), Transform::from_xyz(0.0, -0.5, 0.0)));
//!         commands.spawn((
//!             RigidBody::Dynamic,
//!             RtcdCollider::from_obj("assets/meshes/torus_900.obj"),
//!             Transform::from_xyz(0.0, 2.0, 0.0),
//!         ));
//!     })
//!     .run();
//! ```
#![expect(
    clippy::type_complexity,
    reason = "Bevy queries and filters make long types; naming each would not help reading"
)]

mod backend;
mod collider;
#[cfg(feature = "debug-overlay")]
pub mod debug;
mod diagnostics;
mod plugin;
mod render;
mod settings;

pub use backend::ActiveBackend;
pub use collider::{RtcdCollider, RtcdColliderState};
#[cfg(feature = "debug-overlay")]
pub use debug::{RtcdDebugPlugin, RtcdDebugSettings};
pub use diagnostics::RtcdDiagnostics;
pub use plugin::{RtcdNarrowPhase, RtcdPlugin, RtcdSystems};
pub use rtcd;
pub use rtcd_rapier;
pub use settings::{GpuMode, RtcdBackend, RtcdParamsSource, RtcdSettings};

/// Everything a user needs.
pub mod prelude {
    pub use crate::{
        GpuMode, RtcdBackend, RtcdCollider, RtcdColliderState, RtcdDiagnostics, RtcdNarrowPhase,
        RtcdParamsSource, RtcdPlugin, RtcdSettings, RtcdSystems,
    };
    #[cfg(feature = "debug-overlay")]
    pub use crate::{RtcdDebugPlugin, RtcdDebugSettings};
}

/// README's Rust snippets, compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
