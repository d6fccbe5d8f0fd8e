//! Exact contacts of mesh vertices with a box ([`RtcdMesh::cuboid`](crate::RtcdMesh::cuboid)).
//!
//! Hermann 2008's vertex ray (Alg. 1) counts a contact only when the ray meets the other body before
//! it leaves its own: a vertex deeper than its own body is thick is dropped, and a thin plate sinks
//! into whatever it lands on. Against a box that test is not needed to know whether the vertex is in
//! contact: whether a point is inside a box, and how deep below each face, is known exactly. Every
//! vertex inside the box gets a contact with one of its faces ([`box_vertex_face`]): its outward
//! normal as the contact normal and the distance to its plane as the depth, the contact the 2014
//! follow-up's re-projection (§3.2) gives a ray that hits that face, with the vertex as the point.
//! The face is the one the vertex's inward ray leaves the box through when the ray stays inside the
//! vertex's own body until then (Hermann's test passes: the body came in through that face, as the
//! ray-traced contact says); otherwise, where the ray would leave its own body first (a body thinner
//! than its penetration), the face of least penetration ([`nearest_box_face`]). Outside the box,
//! for the 2014 paper's predictions (§3.1), the face of least penetration too.

use glam::Vec3;

/// Triangles per box face in [`RtcdMesh::cuboid`](crate::RtcdMesh::cuboid): face `f` (see
/// [`BoxFace::face`]) is made of triangles `TRIANGLES_PER_BOX_FACE * f` and the next one. The GPU
/// kernels read the same value (`shaders/types.wgsl`).
pub const TRIANGLES_PER_BOX_FACE: u32 = 2;

/// A face of a box and a point's signed distance to its plane.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoxFace {
    /// `2 * axis + 1` for the face on the positive side of `axis` (x, y, z = 0, 1, 2), `2 * axis`
    /// for the negative side.
    pub face: u32,
    /// The first of the face's triangles in [`RtcdMesh::cuboid`](crate::RtcdMesh::cuboid).
    pub triangle: u32,
    /// The face's outward unit normal.
    pub normal: Vec3,
    /// Signed distance from the face's plane along `normal`: negative inside the box (minus the
    /// depth), positive outside.
    pub distance: f32,
}

/// The outward unit normal of the face that triangle `triangle` of
/// [`RtcdMesh::cuboid`](crate::RtcdMesh::cuboid) belongs to (the [`BoxFace::normal`] of the face whose
/// [`BoxFace::triangle`] it is or follows); the GPU kernels' `box_face_normal`.
#[inline]
pub fn box_face_normal(triangle: u32) -> Vec3 {
    let face = triangle / TRIANGLES_PER_BOX_FACE;
    let mut normal = Vec3::ZERO;
    normal[(face / 2).min(2) as usize] = if face & 1 == 1 { 1.0 } else { -1.0 };
    normal
}

/// The face of least penetration of the box `[-half, half]` for the point `p` (both in the box's
/// frame): the axis where `|p_i| - half_i` is largest (the first such axis on a tie), on the side
/// of `p`'s sign (the positive side for 0). Inside the box `-distance` is the smallest translation
/// along a face normal that takes the point out of it; outside, `distance` is the distance to the
/// plane of the face the point lies beyond, which is at most its distance to the box.
#[inline]
pub fn nearest_box_face(half: Vec3, p: Vec3) -> BoxFace {
    let s = p.abs() - half;
    let (mut axis, mut distance) = (0usize, s.x);
    if s.y > distance {
        (axis, distance) = (1, s.y);
    }
    if s.z > distance {
        (axis, distance) = (2, s.z);
    }
    let positive = p[axis] >= 0.0;
    let mut normal = Vec3::ZERO;
    normal[axis] = if positive { 1.0 } else { -1.0 };
    let face = 2 * axis as u32 + u32::from(positive);
    BoxFace { face, triangle: TRIANGLES_PER_BOX_FACE * face, normal, distance }
}

/// Where the ray from `p` along `dir` (both in the box's frame, `p` inside the box) leaves the box
/// `[-half, half]`: the face it crosses first (the first axis on a tie) with `p`'s signed distance
/// to its plane, and the ray parameter there. `None` for a zero `dir`.
#[inline]
pub fn box_exit_face(half: Vec3, p: Vec3, dir: Vec3) -> Option<(BoxFace, f32)> {
    let mut best: Option<(usize, bool, f32)> = None;
    for axis in 0..3 {
        let d = dir[axis];
        if d == 0.0 {
            continue;
        }
        let positive = d > 0.0;
        let bound = if positive { half[axis] } else { -half[axis] };
        let t = (bound - p[axis]) / d;
        if best.is_none_or(|(_, _, b)| t < b) {
            best = Some((axis, positive, t));
        }
    }
    best.map(|(axis, positive, t)| {
        let mut normal = Vec3::ZERO;
        normal[axis] = if positive { 1.0 } else { -1.0 };
        let face = 2 * axis as u32 + u32::from(positive);
        let distance = normal[axis] * p[axis] - half[axis];
        (BoxFace { face, triangle: TRIANGLES_PER_BOX_FACE * face, normal, distance }, t)
    })
}

/// The face of the box `[-half, half]` a vertex at `p` gets its contact with, `dir` being its unit
/// inward ray and `exit_distance` how far that ray travels inside its own body (both in the box's
/// frame): outside the box, the face of least penetration ([`nearest_box_face`]); inside, the face
/// its ray leaves the box through ([`box_exit_face`]) when it gets there within `exit_distance`
/// (the face Hermann's ray test would accept), else the face of least penetration.
#[inline]
pub fn box_vertex_face(half: Vec3, p: Vec3, dir: Vec3, exit_distance: f32) -> BoxFace {
    let nearest = nearest_box_face(half, p);
    if nearest.distance > 0.0 {
        return nearest;
    }
    match box_exit_face(half, p, dir) {
        Some((face, t)) if t <= exit_distance => face,
        _ => nearest,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_and_normal_of_the_nearest_face() {
        let half = Vec3::new(2.0, 0.5, 1.0);
        // 0.1 under the top face, far from the others.
        let f = nearest_box_face(half, Vec3::new(0.3, 0.4, -0.2));
        assert_eq!((f.face, f.normal), (3, Vec3::Y));
        assert!((f.distance + 0.1).abs() < 1e-6);
        // Near the +x/-z edge: 0.05 from +x, 0.02 from -z: -z wins.
        let f = nearest_box_face(half, Vec3::new(1.95, 0.0, -0.98));
        assert_eq!((f.face, f.normal), (4, Vec3::NEG_Z));
        assert!((f.distance + 0.02).abs() < 1e-6);
        // Outside the -x face by 0.25, within the other slabs.
        let f = nearest_box_face(half, Vec3::new(-2.25, 0.1, 0.1));
        assert_eq!((f.face, f.normal, f.distance), (0, Vec3::NEG_X, 0.25));
    }

    /// Each face's triangles give back its normal, and the box mesh's own triangles have it.
    #[test]
    fn box_face_normals_of_the_triangles() {
        let half = Vec3::new(2.0, 0.5, 1.0);
        let mesh = crate::RtcdMesh::cuboid("box", half).unwrap();
        for p in [Vec3::X, Vec3::NEG_X, Vec3::Y, Vec3::NEG_Y, Vec3::Z, Vec3::NEG_Z] {
            let f = nearest_box_face(half, p * 3.0);
            assert_eq!(f.normal, p);
            for tri in f.triangle..f.triangle + TRIANGLES_PER_BOX_FACE {
                assert_eq!(box_face_normal(tri), p, "triangle {tri}");
                assert!(mesh.triangle_normals()[tri as usize].distance(p) < 1e-6, "triangle {tri}");
            }
        }
    }

    #[test]
    fn the_inward_ray_picks_the_face_while_it_stays_in_its_body() {
        let half = Vec3::new(2.0, 0.5, 1.0);
        // 0.15 inside the +x face, 0.05 under the top: the ray toward -x leaves through -x (3.85 on).
        let p = Vec3::new(1.85, 0.45, 0.0);
        let (exit, t) = box_exit_face(half, p, Vec3::NEG_X).unwrap();
        assert_eq!((exit.face, exit.normal), (0, Vec3::NEG_X));
        assert!((t - 3.85).abs() < 1e-6 && (exit.distance + 3.85).abs() < 1e-6);
        // A body 4 m through that way: the -x face, 3.85 deep; a thinner one: the top, 0.05.
        let f = box_vertex_face(half, p, Vec3::NEG_X, 4.0);
        assert_eq!(f.face, 0);
        let f = box_vertex_face(half, p, Vec3::NEG_X, 1.0);
        assert_eq!(f.face, 3);
        assert!((f.distance + 0.05).abs() < 1e-6);
        // Toward +x it leaves through +x after 0.15: that face within the body, at depth 0.15.
        let f = box_vertex_face(half, p, Vec3::X, 1.0);
        assert_eq!(f.face, 1);
        assert!((f.distance + 0.15).abs() < 1e-6);
    }
}
