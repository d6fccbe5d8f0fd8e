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

/// The edges of one mesh that cross another with both endpoints outside it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EdgeCrossings {
    /// Edges whose deepest point inside is deeper than the tolerance: the count that matters.
    pub edges: usize,
    /// Edges that pass through the other mesh, but no deeper than the tolerance.
    pub shallow: usize,
    /// The deepest point of any crossing edge, deeper than the tolerance or not (0 when none).
    pub deepest: f64,
}

/// The edges of `a` whose two endpoints are outside `b` ([`inside`]) but whose segment passes
/// through `b`: between consecutive crossings of `b`'s surface ([`segment_crossings`]), a stretch
/// whose midpoint is inside `b` is inside, and the distance from that midpoint to `b`'s surface is
/// how deep the edge goes there. An edge counts in [`EdgeCrossings::edges`] when its deepest such
/// midpoint is deeper than `tol`, in [`EdgeCrossings::shallow`] otherwise.
pub fn crossing_edges(a: &PlacedMesh, b: &PlacedMesh, tol: f64) -> EdgeCrossings {
    let mut out = EdgeCrossings::default();
    if !a.boxes_overlap(b, 0.0) {
        return out;
    }
    for &[i, j] in &a.edges {
        let (p, q) = (a.positions[i as usize], a.positions[j as usize]);
        let ts = segment_crossings(p, q, b);
        if ts.is_empty() || inside(p, b) || inside(q, b) {
            continue;
        }
        let deepest = ts
            .windows(2)
            .filter_map(|w| {
                let mid = p + (q - p) * (0.5 * (w[0] + w[1]));
                inside(mid, b).then(|| distance_to_surface(mid, b))
            })
            .fold(0.0, f64::max);
        if deepest > 0.0 {
            out.deepest = out.deepest.max(deepest);
            if deepest > tol {
                out.edges += 1;
            } else {
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
    /// The pair's penetration depth: its deepest vertex, either way (m).
    pub fn depth(&self) -> f64 {
        self.a_in_b.max_depth.max(self.b_in_a.max_depth)
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
        assert_eq!(m.depth(), 0.0);
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
}
