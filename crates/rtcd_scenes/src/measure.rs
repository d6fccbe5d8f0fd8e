//! An independent measure of interpenetration between closed triangle meshes, for judging any
//! narrow phase (rtcd's included) by what the bodies end up doing rather than by what the narrow
//! phase itself reports.
//!
//! It shares no code with rtcd's tracers, hierarchies or detection: the tests are written here,
//! plainly, in `f64`, brute force over every triangle with only a bounding-box cull. It reads a
//! mesh's positions and triangles and nothing else.
//!
//! - [`inside`]: ray parity (Jordan), cast along three fixed directions with irrational components
//!   and decided by majority, so a ray that grazes an edge or a vertex is outvoted;
//! - [`distance_to_surface`]: the closest point on every triangle (Ericson 2005, §5.1.5);
//! - [`vertex_penetration`]: the vertices of one mesh inside the other and their depths;
//! - [`crossing_edges`]: edges of one mesh whose two endpoints are outside the other but whose
//!   segment passes through it deeper than a tolerance, the interpenetration vertex rays cannot see
//!   (an edge-edge crossing with no vertex inside);
//! - [`measure_pair`]: all of it, both ways.
//!
//! Ray-triangle and segment-triangle intersections are Möller and Trumbore's (1997).

use glam::{DVec3, Vec3};
use rtcd::{Pose, RtcdMesh};

/// A triangle mesh placed in the world: world positions in `f64`, triangles, unique edges and
/// bounding boxes. Meant for closed meshes; [`inside`] means nothing for an open one.
#[derive(Clone, Debug)]
pub struct PlacedMesh {
    positions: Vec<DVec3>,
    triangles: Vec<[u32; 3]>,
    edges: Vec<[u32; 2]>,
    boxes: Vec<(DVec3, DVec3)>,
    lo: DVec3,
    hi: DVec3,
}

impl PlacedMesh {
    /// `positions` (in the mesh's frame) and `triangles` placed at `pose`.
    pub fn new(positions: &[Vec3], triangles: &[[u32; 3]], pose: Pose) -> Self {
        let (r, t) = (pose.rotation.as_dquat(), pose.translation.as_dvec3());
        let positions: Vec<DVec3> = positions.iter().map(|p| r * p.as_dvec3() + t).collect();
        let mut edges: Vec<[u32; 2]> = triangles
            .iter()
            .flat_map(|&[a, b, c]| [[a, b], [b, c], [c, a]])
            .map(|[a, b]| [a.min(b), a.max(b)])
            .collect();
        edges.sort_unstable();
        edges.dedup();
        let boxes: Vec<(DVec3, DVec3)> = triangles
            .iter()
            .map(|t| {
                let [a, b, c] = t.map(|i| positions[i as usize]);
                (a.min(b).min(c), a.max(b).max(c))
            })
            .collect();
        let lo = positions.iter().fold(DVec3::INFINITY, |l, p| l.min(*p));
        let hi = positions.iter().fold(DVec3::NEG_INFINITY, |h, p| h.max(*p));
        Self { positions, triangles: triangles.to_vec(), edges, boxes, lo, hi }
    }

    /// `mesh`'s positions and triangles placed at `pose`.
    pub fn from_mesh(mesh: &RtcdMesh, pose: Pose) -> Self {
        Self::new(mesh.positions(), mesh.triangles(), pose)
    }

    /// The box `[-half_extents, half_extents]` (12 triangles) placed at `pose`.
    pub fn cuboid(half_extents: Vec3, pose: Pose) -> Self {
        let (v, i) = rtcd::shapes::cuboid(half_extents);
        let triangles: Vec<[u32; 3]> = i.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect();
        Self::new(&v, &triangles, pose)
    }

    /// World positions.
    pub fn positions(&self) -> &[DVec3] {
        &self.positions
    }

    /// Triangles (indices into [`PlacedMesh::positions`]).
    pub fn triangles(&self) -> &[[u32; 3]] {
        &self.triangles
    }

    /// Every edge once, its indices in increasing order.
    pub fn edges(&self) -> &[[u32; 2]] {
        &self.edges
    }

    /// World bounding box `(min, max)`.
    pub fn aabb(&self) -> (DVec3, DVec3) {
        (self.lo, self.hi)
    }

    /// Length of the bounding box's diagonal.
    pub fn diagonal(&self) -> f64 {
        (self.hi - self.lo).length()
    }

    /// Whether the two bounding boxes, each grown by `margin`, overlap.
    pub fn boxes_overlap(&self, other: &PlacedMesh, margin: f64) -> bool {
        boxes_overlap((self.lo, self.hi), (other.lo, other.hi), margin)
    }
}

fn boxes_overlap(a: (DVec3, DVec3), b: (DVec3, DVec3), margin: f64) -> bool {
    (0..3).all(|k| a.0[k] <= b.1[k] + margin && b.0[k] <= a.1[k] + margin)
}

/// The three directions of the parity rays: irrational components, so that a ray from a point on a
/// grid of rational coordinates (a box's corner, an axis) never runs exactly along an edge.
pub fn ray_directions() -> [DVec3; 3] {
    [
        DVec3::new(1.0, 2f64.sqrt(), 3f64.sqrt()).normalize(),
        DVec3::new(-5f64.sqrt(), 1.0, std::f64::consts::PI).normalize(),
        DVec3::new(std::f64::consts::E, -7f64.sqrt(), -1.0).normalize(),
    ]
}

/// Möller-Trumbore: the parameter `t` where `origin + t * dir` meets triangle `(a, b, c)`, if it
/// does (either side of the triangle).
fn ray_triangle(origin: DVec3, dir: DVec3, a: DVec3, b: DVec3, c: DVec3) -> Option<f64> {
    let (e1, e2) = (b - a, c - a);
    let p = dir.cross(e2);
    let det = e1.dot(p);
    if det.abs() < 1e-300 {
        return None;
    }
    let inv = 1.0 / det;
    let s = origin - a;
    let u = s.dot(p) * inv;
    if !(0.0..=1.0).contains(&u) {
        return None;
    }
    let q = s.cross(e1);
    let v = dir.dot(q) * inv;
    if v < 0.0 || u + v > 1.0 {
        return None;
    }
    Some(e2.dot(q) * inv)
}

/// Whether `point` is inside the closed `mesh`: the parity of the surface crossings of a ray along
/// each of [`ray_directions`], decided by majority of the three. A point outside the mesh's
/// bounding box is outside; a point on the surface may go either way.
pub fn inside(point: DVec3, mesh: &PlacedMesh) -> bool {
    if !boxes_overlap((point, point), (mesh.lo, mesh.hi), 0.0) {
        return false;
    }
    let votes = ray_directions()
        .iter()
        .filter(|&&d| {
            let crossings = mesh
                .triangles
                .iter()
                .filter(|t| {
                    let [a, b, c] = t.map(|i| mesh.positions[i as usize]);
                    ray_triangle(point, d, a, b, c).is_some_and(|t| t > 0.0)
                })
                .count();
            crossings % 2 == 1
        })
        .count();
    votes >= 2
}

/// The closest point to `p` on triangle `(a, b, c)` (Ericson 2005, §5.1.5).
pub fn closest_point_on_triangle(p: DVec3, a: DVec3, b: DVec3, c: DVec3) -> DVec3 {
    let (ab, ac, ap) = (b - a, c - a, p - a);
    let (d1, d2) = (ab.dot(ap), ac.dot(ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return a;
    }
    let bp = p - b;
    let (d3, d4) = (ab.dot(bp), ac.dot(bp));
    if d3 >= 0.0 && d4 <= d3 {
        return b;
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        return a + ab * (d1 / (d1 - d3));
    }
    let cp = p - c;
    let (d5, d6) = (ab.dot(cp), ac.dot(cp));
    if d6 >= 0.0 && d5 <= d6 {
        return c;
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        return a + ac * (d2 / (d2 - d6));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        return b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6)));
    }
    let denom = 1.0 / (va + vb + vc);
    a + ab * (vb * denom) + ac * (vc * denom)
}

/// Distance from `point` to the nearest point of `mesh`'s surface (every triangle).
pub fn distance_to_surface(point: DVec3, mesh: &PlacedMesh) -> f64 {
    mesh.triangles
        .iter()
        .map(|t| {
            let [a, b, c] = t.map(|i| mesh.positions[i as usize]);
            closest_point_on_triangle(point, a, b, c).distance_squared(point)
        })
        .fold(f64::INFINITY, f64::min)
        .sqrt()
}

/// Where segment `p`-`q` crosses `mesh`'s surface: the parameters `t` in `[0, 1]` of
/// `p + t (q - p)`, sorted, a crossing found on two triangles (through their shared edge or
/// vertex) kept once.
pub fn segment_crossings(p: DVec3, q: DVec3, mesh: &PlacedMesh) -> Vec<f64> {
    let seg = (p.min(q), p.max(q));
    if !boxes_overlap(seg, (mesh.lo, mesh.hi), 0.0) {
        return Vec::new();
    }
    let d = q - p;
    let mut ts: Vec<f64> = mesh
        .triangles
        .iter()
        .zip(&mesh.boxes)
        .filter(|(_, b)| boxes_overlap(seg, **b, 0.0))
        .filter_map(|(t, _)| {
            let [a, b, c] = t.map(|i| mesh.positions[i as usize]);
            ray_triangle(p, d, a, b, c).filter(|t| (0.0..=1.0).contains(t))
        })
        .collect();
    ts.sort_unstable_by(f64::total_cmp);
    let eps = 1e-9 / d.length().max(1e-12);
    ts.dedup_by(|b, a| (*b - *a).abs() <= eps);
    ts
}

/// The vertices of one mesh inside another.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct VertexPenetration {
    /// Vertices inside.
    pub inside: usize,
    /// The largest distance from one of them to the other mesh's surface (0 when none).
    pub max_depth: f64,
    /// The sum of those distances.
    pub sum_depth: f64,
}

/// The vertices of `a` inside `b`, with their distances to `b`'s surface.
pub fn vertex_penetration(a: &PlacedMesh, b: &PlacedMesh) -> VertexPenetration {
    let mut out = VertexPenetration::default();
    for &p in &a.positions {
        if inside(p, b) {
            let d = distance_to_surface(p, b);
            out.inside += 1;
            out.max_depth = out.max_depth.max(d);
            out.sum_depth += d;
        }
    }
    out
}

/// The edges of one mesh that pass through another.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EdgeCrossings {
    /// Edges that count ([`crossing_edges`]): deeper than the tolerance, or right through.
    pub edges: usize,
    /// Edges that pass through the other mesh, but no deeper than the tolerance.
    pub shallow: usize,
    /// The deepest point of any crossing edge, deeper than the tolerance or not (0 when none).
    pub deepest: f64,
}

/// The largest distance from `b`'s surface of a point of segment `p`-`q` between parameters `t0`
/// and `t1` (a stretch inside `b`): sampled at nine points, then refined by golden-section
/// search around the best sample (the distance to a surface along a line has one peak between two
/// crossings of a convex part, and the samples find the highest of several otherwise).
fn deepest_on_stretch(p: DVec3, q: DVec3, t0: f64, t1: f64, b: &PlacedMesh) -> f64 {
    let at = |t: f64| p + (q - p) * t;
    let depth = |t: f64| distance_to_surface(at(t), b);
    const SAMPLES: usize = 9;
    let step = (t1 - t0) / (SAMPLES + 1) as f64;
    let (mut best_t, mut best) = (0.5 * (t0 + t1), depth(0.5 * (t0 + t1)));
    for k in 1..=SAMPLES {
        let t = t0 + step * k as f64;
        let d = depth(t);
        if d > best {
            (best_t, best) = (t, d);
        }
    }
    let (mut lo, mut hi) = ((best_t - step).max(t0), (best_t + step).min(t1));
    let g = 0.5 * (5f64.sqrt() - 1.0);
    for _ in 0..24 {
        let (x1, x2) = (hi - g * (hi - lo), lo + g * (hi - lo));
        if depth(x1) < depth(x2) {
            lo = x1;
        } else {
            hi = x2;
        }
    }
    depth(0.5 * (lo + hi)).max(best)
}

/// The unit normal (either way) of the triangle of `b` nearest `point`.
fn face_normal_near(point: DVec3, b: &PlacedMesh) -> Option<DVec3> {
    b.triangles
        .iter()
        .map(|t| {
            let [x, y, z] = t.map(|i| b.positions[i as usize]);
            (closest_point_on_triangle(point, x, y, z).distance_squared(point), (y - x).cross(z - x))
        })
        .min_by(|u, v| u.0.total_cmp(&v.0))
        .and_then(|(_, n)| (n.length() > 0.0).then(|| n.normalize()))
}

/// Whether segment `p`-`q`, inside `b` from parameter `t0` to `t1`, goes right through a part of
/// `b` (a plate or a wire pierced): it enters and leaves through parallel faces, and the middle of
/// that chord is at least a quarter of the chord's length from `b`'s surface, so the faces it
/// crossed are the nearest ones (a plate pierced at up to 60° from its normal). An edge sunk a
/// little along under a face and out through two parallel sides is not through: its chord is long
/// and the face above its middle near.
fn runs_through(p: DVec3, q: DVec3, t0: f64, t1: f64, b: &PlacedMesh) -> bool {
    let (entry, exit) = (p + (q - p) * t0, p + (q - p) * t1);
    let parallel =
        face_normal_near(entry, b).zip(face_normal_near(exit, b)).is_some_and(|(m, n)| m.dot(n).abs() > 0.9);
    let chord = entry.distance(exit);
    parallel && chord > 0.0 && distance_to_surface(0.5 * (entry + exit), b) >= 0.25 * chord
}

/// The edges of `a` that pass through `b`. Along each edge, between consecutive crossings of `b`'s
/// surface ([`segment_crossings`]), a stretch whose midpoint is inside `b` is inside; its deepest
/// point (`deepest_on_stretch`) says how deep the edge goes there. An edge counts in
/// [`EdgeCrossings::edges`] when
/// - both its endpoints are outside `b`, and a stretch goes deeper than `tol`, or right through
///   a part of `b` (`runs_through`: a plate or a wire thinner than twice the tolerance pierced
///   by the edge, which no depth could show);
/// - or one endpoint is inside `b`, and the stretch from it goes deeper than `tol` beyond that
///   endpoint's own depth (an edge that sinks farther than its vertex, which the vertex's depth
///   does not show).
///
/// Edges with both endpoints outside whose stretches stay within `tol` count in
/// [`EdgeCrossings::shallow`]. Edges with both endpoints inside are the vertices' to show.
pub fn crossing_edges(a: &PlacedMesh, b: &PlacedMesh, tol: f64) -> EdgeCrossings {
    let mut out = EdgeCrossings::default();
    if !a.boxes_overlap(b, 0.0) {
        return out;
    }
    for &[i, j] in &a.edges {
        let (p, q) = (a.positions[i as usize], a.positions[j as usize]);
        let ts = segment_crossings(p, q, b);
        if ts.is_empty() {
            continue;
        }
        let (p_in, q_in) = (inside(p, b), inside(q, b));
        if p_in && q_in {
            continue;
        }
        let mut bounds = Vec::with_capacity(ts.len() + 2);
        bounds.push(0.0);
        bounds.extend_from_slice(&ts);
        bounds.push(1.0);
        let (mut deepest, mut through, mut beyond_vertex) = (0.0f64, false, false);
        for (k, w) in bounds.windows(2).enumerate() {
            let from_end = (k == 0 && p_in) || (k + 2 == bounds.len() && q_in);
            if w[1] - w[0] <= 0.0 {
                continue;
            }
            let mid = p + (q - p) * (0.5 * (w[0] + w[1]));
            if !from_end && !inside(mid, b) {
                continue;
            }
            let d = deepest_on_stretch(p, q, w[0], w[1], b);
            deepest = deepest.max(d);
            if from_end {
                let end = if k == 0 { p } else { q };
                beyond_vertex |= d - distance_to_surface(end, b) > tol;
            } else {
                through |= runs_through(p, q, w[0], w[1], b);
            }
        }
        if deepest > 0.0 {
            out.deepest = out.deepest.max(deepest);
            let counts = if p_in || q_in { beyond_vertex } else { deepest > tol || through };
            if counts {
                out.edges += 1;
            } else if !(p_in || q_in) {
                out.shallow += 1;
            }
        }
    }
    out
}

/// Everything measured on a pair, both ways.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PairMeasure {
    /// Vertices of `a` inside `b`.
    pub a_in_b: VertexPenetration,
    /// Vertices of `b` inside `a`.
    pub b_in_a: VertexPenetration,
    /// Edges of `a` crossing `b`.
    pub edges_of_a: EdgeCrossings,
    /// Edges of `b` crossing `a`.
    pub edges_of_b: EdgeCrossings,
}

impl PairMeasure {
    /// The pair's penetration depth: its deepest vertex or deepest point of a crossing edge,
    /// either way (m).
    pub fn depth(&self) -> f64 {
        self.a_in_b.max_depth.max(self.b_in_a.max_depth).max(self.deepest_edge())
    }

    /// Vertices inside, both ways.
    pub fn vertices_inside(&self) -> usize {
        self.a_in_b.inside + self.b_in_a.inside
    }

    /// Crossing edges deeper than the tolerance, both ways.
    pub fn crossing_edges(&self) -> usize {
        self.edges_of_a.edges + self.edges_of_b.edges
    }

    /// Crossing edges within the tolerance, both ways.
    pub fn shallow_edges(&self) -> usize {
        self.edges_of_a.shallow + self.edges_of_b.shallow
    }

    /// The deepest point of any crossing edge, either way.
    pub fn deepest_edge(&self) -> f64 {
        self.edges_of_a.deepest.max(self.edges_of_b.deepest)
    }
}

/// [`vertex_penetration`] and [`crossing_edges`] (with tolerance `tol`), both ways.
pub fn measure_pair(a: &PlacedMesh, b: &PlacedMesh, tol: f64) -> PairMeasure {
    if !a.boxes_overlap(b, 0.0) {
        return PairMeasure::default();
    }
    PairMeasure {
        a_in_b: vertex_penetration(a, b),
        b_in_a: vertex_penetration(b, a),
        edges_of_a: crossing_edges(a, b, tol),
        edges_of_b: crossing_edges(b, a, tol),
    }
}

/// A surface's triangles, bucketed by grid cell, for vertical look-ups: the independent measure of
/// how deep a body sank (no rtcd code).
pub struct Surface {
    tris: Vec<[Vec3; 3]>,
    cells: Vec<Vec<u32>>,
    n: usize,
    half_width: f32,
}

impl Surface {
    /// The surface of `tris`, on a grid of `n` × `n` buckets over `half_width` on each side.
    pub fn new(tris: Vec<[Vec3; 3]>, n: usize, half_width: f32) -> Self {
        let mut s = Self { tris: Vec::new(), cells: vec![Vec::new(); n * n], n, half_width };
        for (k, t) in tris.iter().enumerate() {
            let lo = t[0].min(t[1]).min(t[2]);
            let hi = t[0].max(t[1]).max(t[2]);
            let (i0, j0, i1, j1) = (s.cell(lo.x), s.cell(lo.z), s.cell(hi.x), s.cell(hi.z));
            for j in j0..=j1 {
                for i in i0..=i1 {
                    s.cells[j * n + i].push(k as u32);
                }
            }
        }
        s.tris = tris;
        s
    }

    fn cell(&self, x: f32) -> usize {
        let f = (x / (2.0 * self.half_width) + 0.5) * self.n as f32;
        (f.floor().max(0.0) as usize).min(self.n - 1)
    }

    /// The surface's triangles.
    pub fn triangles(&self) -> &[[Vec3; 3]] {
        &self.tris
    }

    /// The surface's height at `(x, z)` and the up part of its normal there; `None` off the grid.
    pub fn at(&self, x: f32, z: f32) -> Option<(f32, f32)> {
        if x.abs() > self.half_width || z.abs() > self.half_width {
            return None;
        }
        self.cells[self.cell(z) * self.n + self.cell(x)].iter().find_map(|&k| {
            let [a, b, c] = self.tris[k as usize];
            // Barycentric coordinates in the xz plane.
            let (v0, v1, v2) = (b - a, c - a, Vec3::new(x, 0.0, z) - a);
            let d = v0.x * v1.z - v1.x * v0.z;
            let u = (v2.x * v1.z - v1.x * v2.z) / d;
            let v = (v0.x * v2.z - v2.x * v0.z) / d;
            let e = -1e-5;
            (u >= e && v >= e && u + v <= 1.0 - e).then(|| {
                let n = v0.cross(v1).normalize();
                (a.y + u * v0.y + v * v1.y, n.y.abs())
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use std::f32::consts::FRAC_PI_4;

    use glam::Quat;

    use super::*;

    fn cube(half: f32, at: Vec3, rotation: Quat) -> PlacedMesh {
        PlacedMesh::cuboid(Vec3::splat(half), Pose::new(at, rotation))
    }

    #[test]
    fn parity_inside_a_box_and_a_torus() {
        let b = cube(0.5, Vec3::ZERO, Quat::IDENTITY);
        assert!(inside(DVec3::ZERO, &b));
        // On a line through two corners and on the axes: the rays' directions are never along
        // the box's edges or diagonals.
        assert!(inside(DVec3::splat(0.49), &b) && inside(DVec3::new(0.0, 0.49, 0.0), &b));
        assert!(!inside(DVec3::splat(0.51), &b) && !inside(DVec3::new(0.0, 0.51, 0.0), &b));
        assert!(!inside(DVec3::new(3.0, 0.0, 0.0), &b));
        // A low-poly torus: the tube is inside, the hole and the far side are not.
        let (v, i) = rtcd::shapes::torus(1.0, 0.3, 8, 4);
        let tri: Vec<[u32; 3]> = i.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect();
        let t = PlacedMesh::new(&v, &tri, Pose::from_translation(Vec3::new(0.0, 2.0, 0.0)));
        assert!(inside(DVec3::new(0.9, 2.0, 0.0), &t));
        assert!(!inside(DVec3::new(0.0, 2.0, 0.0), &t));
        assert!(!inside(DVec3::new(0.9, 2.35, 0.0), &t));
        assert_eq!(t.edges().len(), 3 * tri.len() / 2);
    }

    #[test]
    fn distances_and_crossings_on_a_box() {
        let b = cube(0.5, Vec3::ZERO, Quat::IDENTITY);
        assert!((distance_to_surface(DVec3::ZERO, &b) - 0.5).abs() < 1e-12);
        assert!((distance_to_surface(DVec3::new(0.2, 0.1, 0.0), &b) - 0.3).abs() < 1e-12);
        assert!((distance_to_surface(DVec3::new(2.0, 0.0, 0.0), &b) - 1.5).abs() < 1e-12);
        assert!((distance_to_surface(DVec3::new(1.5, 1.5, 0.0), &b) - 2f64.sqrt()).abs() < 1e-12);
        // Through the box along x: in at 0.25, out at 0.75 (a face's diagonal shared by two
        // triangles is crossed once).
        let ts = segment_crossings(DVec3::new(-1.0, 0.0, 0.0), DVec3::new(1.0, 0.0, 0.0), &b);
        assert_eq!(ts.len(), 2);
        assert!((ts[0] - 0.25).abs() < 1e-12 && (ts[1] - 0.75).abs() < 1e-12);
        assert!(segment_crossings(DVec3::new(-1.0, 0.7, 0.0), DVec3::new(1.0, 0.7, 0.0), &b).is_empty());
    }

    /// Two unit boxes crossed edge on edge at 90°, 0.1 into each other: no vertex is inside, but an
    /// edge of each passes through the other, 0.1 / √2 deep at its midpoint.
    #[test]
    fn boxes_crossed_edge_on_edge_have_crossing_edges_and_no_vertex_inside() {
        let h = std::f32::consts::FRAC_1_SQRT_2;
        let below = cube(0.5, Vec3::ZERO, Quat::from_rotation_z(FRAC_PI_4));
        let above = cube(0.5, Vec3::new(0.0, 2.0 * h - 0.1, 0.0), Quat::from_rotation_x(FRAC_PI_4));
        let m = measure_pair(&above, &below, 0.01);
        assert_eq!(m.vertices_inside(), 0);
        assert!((m.depth() - 0.1 / 2f64.sqrt()).abs() < 1e-5, "the edges' depth: {}", m.depth());
        assert_eq!((m.edges_of_a.edges, m.edges_of_b.edges), (1, 1), "{m:?}");
        assert!((m.deepest_edge() - 0.1 / 2f64.sqrt()).abs() < 1e-5, "{}", m.deepest_edge());
        // Deeper than the tolerance only.
        let m = measure_pair(&above, &below, 0.08);
        assert_eq!((m.crossing_edges(), m.shallow_edges()), (0, 2));
        // The same boxes 0.1 apart: nothing.
        let apart = cube(0.5, Vec3::new(0.0, 2.0 * h + 0.1, 0.0), Quat::from_rotation_x(FRAC_PI_4));
        assert_eq!(measure_pair(&apart, &below, 0.0), PairMeasure::default());
    }

    #[test]
    fn boxes_apart_measure_nothing() {
        let a = cube(0.5, Vec3::ZERO, Quat::IDENTITY);
        let b = cube(0.5, Vec3::new(1.2, 0.3, 0.0), Quat::from_rotation_y(0.3));
        let m = measure_pair(&a, &b, 0.0);
        assert_eq!(m, PairMeasure::default());
        // Touching boxes' grown bounding boxes overlap, but nothing is inside.
        let c = cube(0.5, Vec3::new(1.0 + 1e-3, 0.0, 0.0), Quat::IDENTITY);
        assert!(a.boxes_overlap(&c, 0.01));
        let m = measure_pair(&a, &c, 0.0);
        assert_eq!((m.vertices_inside(), m.crossing_edges(), m.shallow_edges()), (0, 0, 0));
    }

    /// A box resting 1 mm into another: its bottom corners are inside, 1 mm deep, and no edge
    /// crosses deeper than 2 mm. Turned 45° so that its corners overhang, no corner is inside and
    /// the edges that cross do so 1 mm deep: shallow, not counted at 2 mm.
    #[test]
    fn a_box_resting_a_millimetre_into_another() {
        let floor = cube(0.5, Vec3::ZERO, Quat::IDENTITY);
        let small = cube(0.3, Vec3::new(0.0, 0.8 - 1e-3, 0.0), Quat::IDENTITY);
        let m = measure_pair(&small, &floor, 2e-3);
        assert_eq!((m.a_in_b.inside, m.b_in_a.inside), (4, 0));
        assert!((m.depth() - 1e-3).abs() < 1e-6, "{}", m.depth());
        assert!((m.a_in_b.sum_depth - 4e-3).abs() < 1e-6);
        assert_eq!(m.crossing_edges(), 0);
        let turned = cube(0.5, Vec3::new(0.0, 1.0 - 1e-3, 0.0), Quat::from_rotation_y(FRAC_PI_4));
        let m = measure_pair(&turned, &floor, 2e-3);
        assert_eq!(m.vertices_inside(), 0);
        assert_eq!(m.crossing_edges(), 0);
        assert!(m.shallow_edges() > 0);
        assert!(m.deepest_edge() <= 1e-3 + 1e-6 && m.deepest_edge() > 0.5e-3, "{}", m.deepest_edge());
        assert!(measure_pair(&turned, &floor, 1e-4).crossing_edges() > 0);
    }

    #[test]
    fn a_box_fully_inside_another() {
        let outer = cube(0.5, Vec3::ZERO, Quat::IDENTITY);
        let inner = cube(0.2, Vec3::new(0.1, 0.0, 0.0), Quat::IDENTITY);
        let m = measure_pair(&inner, &outer, 0.0);
        assert_eq!((m.a_in_b.inside, m.b_in_a.inside), (8, 0));
        // Corners at x = 0.3 are 0.2 from the +x face, those at x = -0.1 are 0.3 from the y and z
        // faces.
        assert!((m.depth() - 0.3).abs() < 1e-6, "{}", m.depth());
        assert!((m.a_in_b.sum_depth - 2.0).abs() < 1e-6, "{}", m.a_in_b.sum_depth);
        assert_eq!((m.crossing_edges(), m.shallow_edges()), (0, 0));
    }

    /// A 1 cm plate slicing a crate: no vertex of either is inside the other, and no edge goes
    /// deeper than the plate's half thickness, under the tolerance; the crate's edges pierce the
    /// plate, and count.
    #[test]
    fn edges_through_a_thin_plate_count_whatever_their_depth() {
        let plate = PlacedMesh::cuboid(Vec3::new(0.5, 0.005, 0.5), Pose::IDENTITY);
        let crate_ = cube(0.25, Vec3::new(0.245, 0.0, -0.245), Quat::IDENTITY);
        let tol = 0.01 * crate_.diagonal();
        let m = measure_pair(&crate_, &plate, tol);
        // Three of the upright edges and face diagonals count; the fourth upright edge, 5 mm from
        // the plate's corner, is as near its rim as its faces, and is left as shallow.
        assert!(m.edges_of_a.edges >= 3, "the crate's edges pierce the plate: {m:?}");
        assert!(m.deepest_edge() <= 0.005 + 1e-9);
        // A plate lying 2 mm into a crate's top: its edges run under the crate's top, not through.
        let on_top = PlacedMesh::cuboid(
            Vec3::new(0.5, 0.005, 0.5),
            Pose::from_translation(Vec3::new(0.0, 0.253, 0.0)),
        );
        let m = measure_pair(&on_top, &cube(0.25, Vec3::ZERO, Quat::IDENTITY), 0.005);
        assert_eq!(m.crossing_edges(), 0, "{m:?}");
    }

    /// A bar whose end is a little inside a crate, its long edges deeper inside than that end:
    /// the edges count, beyond the end vertex's own depth.
    #[test]
    fn an_edge_deeper_than_its_inside_end_counts() {
        let b = cube(0.25, Vec3::ZERO, Quat::IDENTITY);
        let angle = 30f32.to_radians();
        let dir = Vec3::new(angle.cos(), angle.sin(), 0.0);
        let end = Vec3::new(0.05, 0.23, 0.0);
        let bar = PlacedMesh::cuboid(
            Vec3::new(0.5, 0.01, 0.01),
            Pose::new(end - dir * 0.5, Quat::from_rotation_z(angle)),
        );
        let m = measure_pair(&bar, &b, 0.01);
        assert!(m.a_in_b.inside > 0);
        assert!(m.edges_of_a.edges > 0, "{m:?}");
        assert!(m.deepest_edge() > m.a_in_b.max_depth + 0.01, "{m:?}");
    }

    /// The deepest point of a stretch is searched for, not taken at its middle: a segment entering
    /// a cube's top and leaving its side is deepest near its exit.
    #[test]
    fn a_stretch_is_measured_at_its_deepest() {
        let b = cube(0.5, Vec3::ZERO, Quat::IDENTITY);
        let (p, q) = (DVec3::new(0.06, 0.502, 0.0), DVec3::new(0.54, 0.478, 0.0));
        let ts = segment_crossings(p, q, &b);
        assert_eq!(ts.len(), 2);
        let mid = p + (q - p) * (0.5 * (ts[0] + ts[1]));
        let d = deepest_on_stretch(p, q, ts[0], ts[1], &b);
        assert!(distance_to_surface(mid, &b) < 0.011);
        assert!(d > 0.0189, "{d}");
    }
}
