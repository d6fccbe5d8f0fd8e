//! Ray re-projection (2014 paper §3.2, Eq. 2): a ray `r` from a vertex to the hit point on a triangle
//! of normal `n` becomes a contact with point = the vertex, depth `pd = r · n` and direction `n`,
//! the minimum translational distance for that vertex, instead of the raw ray.

use glam::Vec3;

use super::FeatureId;
use crate::pose::Pose;

/// A detected ray, in the frame of the mesh it hit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RayContact {
    /// Which direction: `false` for a vertex of shape 1 against shape 2, `true` for shape 2 against 1.
    pub from_shape2: bool,
    /// Vertex index in the casting mesh.
    pub vertex: u32,
    /// Triangle index in the hit mesh.
    pub triangle: u32,
    /// Ray origin (the vertex), in the hit mesh's frame.
    pub origin: Vec3,
    /// Unit ray direction (the vertex's inward normal), in the hit mesh's frame.
    pub dir: Vec3,
    /// Ray parameter of the hit: positive for a penetrating vertex, negative for a prediction (the
    /// opposite ray's hit, the vertex is outside).
    pub t: f32,
    /// Outward normal of the hit triangle, in the hit mesh's frame.
    pub normal: Vec3,
}

/// A contact in shape 1's frame, before manifold reduction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactCandidate {
    /// Point on shape 1 (shape 1's frame).
    pub p1: Vec3,
    /// Point on shape 2 (shape 1's frame).
    pub p2: Vec3,
    /// Shape 1's outward normal toward shape 2 (shape 1's frame).
    pub n1: Vec3,
    /// Signed distance `(p2 - p1) · n1`: negative when penetrating.
    pub dist: f32,
    /// Feature on shape 1.
    pub fid1: FeatureId,
    /// Feature on shape 2.
    pub fid2: FeatureId,
}

/// The depth of a ray's contact (Eq. 2): `|t| (dir · n)` with `reprojection`, the raw `|t|`
/// without. For a prediction (`t < 0`) it is the distance [`reproject`] gives the contact, so a
/// tracer can tell whether a prediction comes within a prediction distance before building it.
#[inline]
pub fn ray_depth(t: f32, dir: Vec3, normal: Vec3, reprojection: bool) -> f32 {
    if reprojection { t.abs() * dir.dot(normal) } else { t.abs() }
}

/// Turns a ray into a contact in shape 1's frame. `pos12` is shape 2's pose in shape 1's frame.
///
/// With `reprojection`, the separating direction is the hit normal and the depth is `|t| (dir · n)`
/// (Eq. 2); without it, the raw ray: direction `dir`, depth `|t|`.
pub fn reproject(r: &RayContact, pos12: &Pose, reprojection: bool) -> ContactCandidate {
    // The direction the casting body must move to separate, in the hit mesh's frame: the hit
    // triangle's outward normal (re-projected), or along the ray (raw).
    let sep = if reprojection { r.normal } else { r.dir };
    let depth = ray_depth(r.t, r.dir, r.normal, reprojection);
    // Penetrating (t >= 0): dist = -depth. Prediction (t < 0): the vertex is outside, dist = +depth.
    let dist = if r.t >= 0.0 { -depth } else { depth };
    if !r.from_shape2 {
        // Vertex of shape 1 inside (or near) shape 2; the hit mesh is shape 2.
        let sep1 = pos12.transform_vector(sep);
        let origin1 = pos12.transform_point(r.origin);
        let n1 = -sep1;
        ContactCandidate {
            p1: origin1,
            p2: origin1 + n1 * dist,
            n1,
            dist,
            fid1: FeatureId::Vertex(r.vertex),
            fid2: FeatureId::Face(r.triangle),
        }
    } else {
        // Vertex of shape 2 inside (or near) shape 1; the hit mesh is shape 1. Shape 2 moves along
        // `sep`, which is therefore the normal from 1 toward 2.
        let n1 = sep;
        ContactCandidate {
            p1: r.origin - n1 * dist,
            p2: r.origin,
            n1,
            dist,
            fid1: FeatureId::Face(r.triangle),
            fid2: FeatureId::Vertex(r.vertex),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vertex_under_a_plane() {
        // A vertex of shape 1 at depth 0.3 under the plane y = 0 of shape 2 (identity relative pose),
        // whose inward ray points up and tilted by 30°.
        let dir = Vec3::new(0.5, 0.75f32.sqrt(), 0.0);
        let t = 0.3 / dir.y;
        let r = RayContact {
            from_shape2: false,
            vertex: 7,
            triangle: 3,
            origin: Vec3::new(0.0, -0.3, 0.0),
            dir,
            t,
            normal: Vec3::Y,
        };
        let c = reproject(&r, &Pose::IDENTITY, true);
        assert!((c.dist + 0.3).abs() < 1e-6);
        assert!((c.n1 - Vec3::NEG_Y).length() < 1e-6);
        assert!((c.p2 - Vec3::ZERO).length() < 1e-6);
        assert!(((c.p2 - c.p1).dot(c.n1) - c.dist).abs() < 1e-6);
        let raw = reproject(&r, &Pose::IDENTITY, false);
        assert!((raw.dist + t).abs() < 1e-6);
        assert!((raw.p2 - r.origin - dir * t).length() < 1e-6);
    }

    #[test]
    fn vertex_of_shape2_inside_shape1() {
        let pos12 = Pose::from_translation(Vec3::new(0.0, 1.0, 0.0));
        // In shape 1's frame: a vertex of shape 2 at y = -0.2 under shape 1's face y = 0 (normal +y).
        let r = RayContact {
            from_shape2: true,
            vertex: 1,
            triangle: 2,
            origin: Vec3::new(0.0, -0.2, 0.0),
            dir: Vec3::Y,
            t: 0.2,
            normal: Vec3::Y,
        };
        let c = reproject(&r, &pos12, true);
        assert!((c.dist + 0.2).abs() < 1e-6);
        assert_eq!(c.n1, Vec3::Y);
        assert!(((c.p2 - c.p1).dot(c.n1) - c.dist).abs() < 1e-6);
        assert!(c.p1.y.abs() < 1e-6);
    }
}
