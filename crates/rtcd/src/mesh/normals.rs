//! Triangle normals and angle-weighted outward vertex normals (Thürmer & Wüthrich 1998): the inward
//! ray of Hermann 2008 starts at each vertex and follows minus this normal.

use glam::Vec3;

/// Unit normal of each triangle (counter-clockwise winding faces outward).
pub fn triangle_normals(p: &[Vec3], triangles: &[[u32; 3]]) -> Vec<Vec3> {
    triangles
        .iter()
        .map(|t| {
            let [a, b, c] = t.map(|i| p[i as usize]);
            (b - a).cross(c - a).normalize_or_zero()
        })
        .collect()
}

/// A triangle whose height is below this fraction of its longest edge (three nearly collinear
/// corners) has no normal to speak of: the direction of its cross product is rounding. It adds
/// nothing to its vertices' normals, where its angle near π would weigh most.
const SLIVER: f32 = 1e-5;

/// Whether triangle `(a, b, c)` is a sliver ([`SLIVER`]): its normal is rounding.
pub(crate) fn is_sliver(a: Vec3, b: Vec3, c: Vec3) -> bool {
    let area = (b - a).cross(c - a).length();
    let longest = (b - a).length_squared().max((c - b).length_squared()).max((a - c).length_squared());
    // Twice the area over the longest edge squared: the height over that edge, per its length.
    area <= SLIVER * longest
}

/// Angle-weighted vertex normals. A vertex whose incident normals cancel (a knife edge) takes the
/// normal of its largest incident triangle. Slivers ([`SLIVER`]) are left out of the weighting.
pub fn vertex_normals(p: &[Vec3], triangles: &[[u32; 3]], tri_normals: &[Vec3]) -> Vec<Vec3> {
    let mut acc = vec![Vec3::ZERO; p.len()];
    let mut fallback = vec![(0.0f32, Vec3::ZERO); p.len()];
    for (t, n) in triangles.iter().zip(tri_normals) {
        let [a, b, c] = t.map(|i| p[i as usize]);
        let area = (b - a).cross(c - a).length();
        let sliver = is_sliver(a, b, c);
        for k in 0..3 {
            let i = t[k] as usize;
            let e1 = (p[t[(k + 1) % 3] as usize] - p[i]).normalize_or_zero();
            let e2 = (p[t[(k + 2) % 3] as usize] - p[i]).normalize_or_zero();
            let angle = e1.dot(e2).clamp(-1.0, 1.0).acos();
            if !sliver {
                acc[i] += *n * angle;
            }
            if area > fallback[i].0 {
                fallback[i] = (area, *n);
            }
        }
    }
    acc.iter()
        .zip(&fallback)
        .map(|(n, (_, f))| {
            let m = n.normalize_or_zero();
            if m == Vec3::ZERO || n.length() < 1e-6 { *f } else { m }
        })
        .collect()
}
