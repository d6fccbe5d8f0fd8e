//! Rigid poses: a rotation then a translation, as parry's `Pose3` / Bevy's `Transform` without scale.

use glam::{Quat, Vec3};

/// A rigid transform: `p ↦ rotation * p + translation`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pose {
    /// Unit rotation.
    pub rotation: Quat,
    /// Translation, applied after the rotation.
    pub translation: Vec3,
}

impl Default for Pose {
    fn default() -> Self {
        Self::IDENTITY
    }
}

impl Pose {
    /// The identity pose.
    pub const IDENTITY: Pose = Pose { rotation: Quat::IDENTITY, translation: Vec3::ZERO };

    /// A pose from a translation and a rotation.
    pub fn new(translation: Vec3, rotation: Quat) -> Self {
        Self { rotation, translation }
    }

    /// A pure translation.
    pub fn from_translation(translation: Vec3) -> Self {
        Self { rotation: Quat::IDENTITY, translation }
    }

    /// The inverse transform.
    pub fn inverse(&self) -> Self {
        let r = self.rotation.inverse();
        Self { rotation: r, translation: -(r * self.translation) }
    }

    /// `self * other`: first `other`, then `self`.
    pub fn mul(&self, other: &Pose) -> Self {
        Self {
            rotation: self.rotation * other.rotation,
            translation: self.rotation * other.translation + self.translation,
        }
    }

    /// The pose of `other` expressed in the frame of `self` (`self⁻¹ * other`): parry's `pos12` for
    /// `self = pos1`, `other = pos2`.
    pub fn inv_mul(&self, other: &Pose) -> Self {
        self.inverse().mul(other)
    }

    /// Transforms a point.
    #[inline]
    pub fn transform_point(&self, p: Vec3) -> Vec3 {
        self.rotation * p + self.translation
    }

    /// Rotates a vector.
    #[inline]
    pub fn transform_vector(&self, v: Vec3) -> Vec3 {
        self.rotation * v
    }

    /// Whether every component is finite and the rotation is a unit quaternion (within 1e-3).
    pub fn is_valid(&self) -> bool {
        self.translation.is_finite()
            && self.rotation.is_finite()
            && (self.rotation.length_squared() - 1.0).abs() < 1e-3
    }

    /// The rotation angle between two rotations, in `[0, π]` (IRTCD 2013 Eq. 2's `angle(q_ni, q)`).
    ///
    /// From the relative rotation's vector and scalar parts (`atan2`), not `acos` of the dot
    /// product, which in `f32` is off by ~1e-4 rad for angles of a milliradian.
    pub fn rotation_angle_to(&self, other: &Pose) -> f32 {
        let q = self.rotation.conjugate() * other.rotation;
        2.0 * q.xyz().length().atan2(q.w.abs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_and_relative_pose() {
        let a = Pose::new(Vec3::new(1.0, 2.0, 3.0), Quat::from_rotation_y(0.4));
        let b = Pose::new(Vec3::new(-1.0, 0.5, 0.0), Quat::from_rotation_x(-1.2));
        let p = Vec3::new(0.3, -0.2, 0.9);
        let rel = a.inv_mul(&b);
        let world = b.transform_point(p);
        assert!((a.transform_point(rel.transform_point(p)) - world).length() < 1e-5);
        assert!((a.inverse().transform_point(a.transform_point(p)) - p).length() < 1e-5);
    }

    #[test]
    fn rotation_angle() {
        let a = Pose::IDENTITY;
        let b = Pose::new(Vec3::ZERO, Quat::from_rotation_z(0.5));
        assert!((a.rotation_angle_to(&b) - 0.5).abs() < 1e-4);
        // q and -q are the same rotation.
        let c = Pose::new(Vec3::ZERO, -Quat::from_rotation_z(0.5));
        assert!((a.rotation_angle_to(&c) - 0.5).abs() < 1e-4);
    }
}
