//! bevy_rtcd: GPU ray-traced collision detection for concave triangle meshes, as a narrow phase for
//! bevy_rapier3d. The algorithm crate is re-exported as [`rtcd`].
#![warn(missing_docs)]

pub use rtcd;
