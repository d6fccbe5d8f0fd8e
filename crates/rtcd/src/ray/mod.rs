//! Ray primitives: the ray itself and the ray/triangle test shared by every tracer.

mod ray_triangle;

pub use ray_triangle::{
    BARYCENTRIC_EPS, Location, PARALLEL_EPS, PreparedTriangle, TriangleLineHit, locate, ray_triangle,
    ray_triangle_prepared,
};

use glam::Vec3;

/// A ray: `origin + t * dir`. `dir` is a unit vector for every ray the narrow phase casts, so `t` is
/// a distance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ray {
    /// Start point (a mesh vertex, for collision rays).
    pub origin: Vec3,
    /// Unit direction (the vertex's inward normal, for collision rays).
    pub dir: Vec3,
}

impl Ray {
    /// A ray from its origin and (unit) direction.
    pub fn new(origin: Vec3, dir: Vec3) -> Self {
        Self { origin, dir }
    }

    /// The point at parameter `t`.
    pub fn at(&self, t: f32) -> Vec3 {
        self.origin + self.dir * t
    }
}
