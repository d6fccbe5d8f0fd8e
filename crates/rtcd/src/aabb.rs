//! Axis-aligned bounding boxes: the candidate-vertex filter of Hermann 2008 §3.2 and the BVH nodes.

use glam::Vec3;

use crate::pose::Pose;

/// An axis-aligned box. An empty box has `min > max` on every axis.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb {
    /// Lower corner.
    pub min: Vec3,
    /// Upper corner.
    pub max: Vec3,
}

impl Aabb {
    /// The empty box: the identity of [`Aabb::union`].
    pub const EMPTY: Aabb = Aabb { min: Vec3::splat(f32::INFINITY), max: Vec3::splat(f32::NEG_INFINITY) };

    /// A box from its corners.
    pub fn new(min: Vec3, max: Vec3) -> Self {
        Self { min, max }
    }

    /// The smallest box holding every point (empty for no points).
    pub fn from_points<'a>(points: impl IntoIterator<Item = &'a Vec3>) -> Self {
        points.into_iter().fold(Self::EMPTY, |b, p| b.grow(*p))
    }

    /// This box grown to hold `p`.
    pub fn grow(self, p: Vec3) -> Self {
        Self { min: self.min.min(p), max: self.max.max(p) }
    }

    /// The smallest box holding both.
    pub fn union(self, o: Aabb) -> Self {
        Self { min: self.min.min(o.min), max: self.max.max(o.max) }
    }

    /// The overlap of both boxes (empty when they do not overlap).
    pub fn intersection(self, o: Aabb) -> Self {
        Self { min: self.min.max(o.min), max: self.max.min(o.max) }
    }

    /// Whether the box holds no point.
    pub fn is_empty(&self) -> bool {
        self.min.cmpgt(self.max).any()
    }

    /// The box grown by `d` on every side.
    pub fn extended(self, d: f32) -> Self {
        Self { min: self.min - Vec3::splat(d), max: self.max + Vec3::splat(d) }
    }

    /// Whether `p` is inside or on the boundary.
    #[inline]
    pub fn contains(&self, p: Vec3) -> bool {
        // In SIMD lanes: one comparison per bound instead of three (a hot test when every vertex of
        // a mesh is checked against a candidate region).
        let p = glam::Vec3A::from(p);
        (p.cmpge(self.min.into()) & p.cmple(self.max.into())).all()
    }

    /// Centre point.
    pub fn center(&self) -> Vec3 {
        (self.min + self.max) * 0.5
    }

    /// Edge lengths.
    pub fn extents(&self) -> Vec3 {
        self.max - self.min
    }

    /// Surface area (the SAH cost of a BVH node).
    pub fn surface_area(&self) -> f32 {
        if self.is_empty() {
            return 0.0;
        }
        let e = self.extents();
        2.0 * (e.x * e.y + e.y * e.z + e.z * e.x)
    }

    /// The box that holds this box after `pose` moves it (an AABB of the moved box).
    pub fn transformed(&self, pose: &Pose) -> Self {
        if self.is_empty() {
            return *self;
        }
        let c = pose.transform_point(self.center());
        let h = self.extents() * 0.5;
        let m = glam::Mat3::from_quat(pose.rotation);
        let r = m.x_axis.abs() * h.x + m.y_axis.abs() * h.y + m.z_axis.abs() * h.z;
        Self { min: c - r, max: c + r }
    }

    /// Parametric interval `[t_near, t_far]` of the line `origin + t * dir` inside the box, over all
    /// real `t` (negative values included); `None` when the line misses.
    /// `inv_dir` is `1 / dir` per component: infinite for zero components, or at least 1e20 in
    /// magnitude ([`crate::trace::safe_recip`]'s stand-in). Along such an axis the line is parallel
    /// to the slab: it meets all of it when the origin lies within it (bounds included), and none
    /// of it otherwise.
    #[inline]
    pub fn line_interval(&self, origin: Vec3, inv_dir: Vec3) -> Option<(f32, f32)> {
        let (mut near, mut far) = (f32::NEG_INFINITY, f32::INFINITY);
        for k in 0..3 {
            if inv_dir[k].is_nan() {
                return None;
            }
            if inv_dir[k].abs() >= 1e20 {
                if origin[k] < self.min[k] || origin[k] > self.max[k] {
                    return None;
                }
                continue;
            }
            let t1 = (self.min[k] - origin[k]) * inv_dir[k];
            let t2 = (self.max[k] - origin[k]) * inv_dir[k];
            near = near.max(t1.min(t2));
            far = far.min(t1.max(t2));
        }
        (near <= far).then_some((near, far))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Quat;

    #[test]
    fn line_interval_both_sides() {
        let b = Aabb::new(Vec3::splat(-1.0), Vec3::splat(1.0));
        let (n, f) = b.line_interval(Vec3::new(0.0, 5.0, 0.0), Vec3::new(0.0, -1.0, 0.0).recip()).unwrap();
        assert_eq!((n, f), (4.0, 6.0));
        let (n, f) = b.line_interval(Vec3::new(0.0, 5.0, 0.0), Vec3::new(0.0, 1.0, 0.0).recip()).unwrap();
        assert_eq!((n, f), (-6.0, -4.0));
        assert!(b.line_interval(Vec3::new(3.0, 5.0, 0.0), Vec3::new(0.0, 1.0, 0.0).recip()).is_none());
        // Along a face (the origin on a slab's bound, the direction parallel to it): the whole
        // chord, on either bound.
        for x in [-1.0, 1.0] {
            let (n, f) = b.line_interval(Vec3::new(x, 5.0, 0.0), Vec3::new(0.0, 1.0, 0.0).recip()).unwrap();
            assert_eq!((n, f), (-6.0, -4.0), "along the face x = {x}");
        }
    }

    #[test]
    fn contains_is_inclusive_per_axis() {
        let b = Aabb::new(Vec3::new(-1.0, -2.0, -3.0), Vec3::new(1.0, 2.0, 3.0));
        assert!(b.contains(Vec3::ZERO));
        assert!(b.contains(b.min) && b.contains(b.max));
        for k in 0..3 {
            let mut out = Vec3::ZERO;
            out[k] = b.max[k] + 1e-4;
            assert!(!b.contains(out), "axis {k} above");
            out[k] = b.min[k] - 1e-4;
            assert!(!b.contains(out), "axis {k} below");
            out[k] = f32::NAN;
            assert!(!b.contains(out), "axis {k} NaN");
        }
    }

    #[test]
    fn transformed_box_holds_rotated_corners() {
        let b = Aabb::new(Vec3::new(-1.0, -2.0, -0.5), Vec3::new(1.0, 2.0, 0.5));
        let pose = Pose::new(Vec3::new(3.0, 0.0, 1.0), Quat::from_euler(glam::EulerRot::XYZ, 0.3, 0.7, -1.1));
        let t = b.transformed(&pose);
        for i in 0..8 {
            let c = Vec3::new(
                if i & 1 == 0 { b.min.x } else { b.max.x },
                if i & 2 == 0 { b.min.y } else { b.max.y },
                if i & 4 == 0 { b.min.z } else { b.max.z },
            );
            assert!(t.extended(1e-5).contains(pose.transform_point(c)));
        }
    }
}
