//! Input validation and repair: the steps between raw user data and an [`RtcdMesh`](super::RtcdMesh).
//!
//! In order: shape checks (empty, index count, NaN/inf, index range), welding of duplicate vertices,
//! dropping of degenerate and repeated triangles (counted; rejected past
//! [`MAX_DEGENERATE_SHARE`]), the split of non-manifold edges and vertices into manifold sheets
//! (module `non_manifold`), winding repair by orientation propagation, and
//! flipping of inside-out closed components (negative signed volume; the inward-wound wall of a
//! cavity, wholly inside another closed component, is kept).

use std::collections::VecDeque;

use glam::Vec3;
use rustc_hash::FxHashMap;

use super::{MAX_DEGENERATE_SHARE, MeshReport};
use crate::error::MeshError;

/// Vertices closer than this fraction of the bounding-box diagonal are welded.
pub const WELD_TOLERANCE: f32 = 1e-6;

/// The cleaned surface: welded positions and consistently wound triangles.
pub(crate) struct Cleaned {
    pub positions: Vec<Vec3>,
    pub triangles: Vec<[u32; 3]>,
    pub report: MeshReport,
}

/// [`MeshError::TooLarge`] past [`super::MAX_TRIANGLES`].
pub(crate) fn check_size(name: &str, triangles: usize) -> Result<(), MeshError> {
    if triangles > super::MAX_TRIANGLES {
        return Err(MeshError::TooLarge { mesh: name.to_string(), triangles, max: super::MAX_TRIANGLES });
    }
    Ok(())
}

pub(crate) fn clean(name: &str, positions: &[Vec3], indices: &[u32]) -> Result<Cleaned, MeshError> {
    let mesh = || name.to_string();
    if positions.is_empty() || indices.is_empty() {
        return Err(MeshError::Empty {
            mesh: mesh(),
            vertices: positions.len(),
            triangles: indices.len() / 3,
        });
    }
    if !indices.len().is_multiple_of(3) {
        return Err(MeshError::IndexCount { mesh: mesh(), count: indices.len() });
    }
    check_size(name, indices.len() / 3)?;
    if let Some(k) = indices.iter().position(|&i| i as usize >= positions.len()) {
        return Err(MeshError::IndexOutOfRange {
            mesh: mesh(),
            triangle: k / 3,
            index: indices[k],
            vertex_count: positions.len(),
        });
    }
    // Only the vertices some triangle uses count (a shared vertex buffer may hold others): their
    // positions must be finite, and their box sets the tolerances.
    let mut used = vec![false; positions.len()];
    for &i in indices {
        used[i as usize] = true;
    }
    if let Some(i) = (0..positions.len()).find(|&i| used[i] && !positions[i].is_finite()) {
        return Err(MeshError::NonFinite { mesh: mesh(), vertex: i, position: positions[i].to_array() });
    }
    let input_triangles = indices.len() / 3;
    let mut report = MeshReport { input_vertices: positions.len(), input_triangles, ..Default::default() };

    // Weld duplicate vertices (only those some triangle uses).
    let diag = {
        let b = crate::Aabb::from_points(positions.iter().zip(&used).filter(|(_, u)| **u).map(|(p, _)| p));
        b.extents().length()
    };
    let tol = (diag * WELD_TOLERANCE).max(f32::MIN_POSITIVE);
    let mut remap = vec![u32::MAX; positions.len()];
    let mut welded: Vec<Vec3> = Vec::new();
    let mut grid: FxHashMap<[i64; 3], Vec<u32>> = FxHashMap::default();
    let cell = |p: Vec3| -> [i64; 3] {
        let q = (p / tol).floor();
        [q.x as i64, q.y as i64, q.z as i64]
    };
    for (i, p) in positions.iter().enumerate() {
        if !used[i] {
            report.unused_vertices += 1;
            continue;
        }
        let c = cell(*p);
        let mut found = None;
        'search: for dx in -1..=1 {
            for dy in -1..=1 {
                for dz in -1..=1 {
                    // Saturating: a cell index saturates for a box of (nearly) no extent.
                    let key = [c[0].saturating_add(dx), c[1].saturating_add(dy), c[2].saturating_add(dz)];
                    if let Some(list) = grid.get(&key) {
                        for &j in list {
                            if welded[j as usize].distance(*p) <= tol {
                                found = Some(j);
                                break 'search;
                            }
                        }
                    }
                }
            }
        }
        let j = found.unwrap_or_else(|| {
            let j = welded.len() as u32;
            welded.push(*p);
            grid.entry(c).or_default().push(j);
            j
        });
        if found.is_some() {
            report.merged_vertices += 1;
        }
        remap[i] = j;
    }

    // Drop degenerate and repeated triangles; keep each kept triangle's input index for messages.
    let area_eps = (diag * diag) * 1e-12;
    let mut triangles: Vec<[u32; 3]> = Vec::with_capacity(input_triangles);
    let mut origin: Vec<usize> = Vec::with_capacity(input_triangles);
    let mut seen: FxHashMap<[u32; 3], usize> = FxHashMap::default();
    let mut first_degenerate = None;
    for (k, t) in indices.chunks_exact(3).enumerate() {
        let t = [remap[t[0] as usize], remap[t[1] as usize], remap[t[2] as usize]];
        let [a, b, c] = t.map(|i| welded[i as usize]);
        if t[0] == t[1] || t[1] == t[2] || t[2] == t[0] || (b - a).cross(c - a).length() <= area_eps {
            report.degenerate_triangles += 1;
            first_degenerate.get_or_insert(k);
            continue;
        }
        let mut key = t;
        key.sort_unstable();
        if seen.insert(key, k).is_some() {
            report.duplicate_triangles += 1;
            continue;
        }
        triangles.push(t);
        origin.push(k);
    }
    let max_degenerate = (MAX_DEGENERATE_SHARE * input_triangles as f32).floor() as usize;
    if report.degenerate_triangles > max_degenerate {
        return Err(MeshError::TooManyDegenerate {
            mesh: mesh(),
            degenerate: report.degenerate_triangles,
            total: input_triangles,
            first: first_degenerate.unwrap_or(0),
            max_percent: MAX_DEGENERATE_SHARE * 100.0,
        });
    }
    if triangles.is_empty() {
        return Err(MeshError::Empty { mesh: mesh(), vertices: welded.len(), triangles: 0 });
    }

    // Non-manifold edges and vertices split into manifold sheets; then every edge has one or two
    // triangles.
    let split = super::non_manifold::split_non_manifold(&mut welded, &mut triangles);
    report.split_edges = split.edges;
    report.split_vertices = split.vertices;
    let edges = edge_map(&triangles);
    report.boundary_edges = edges.values().filter(|l| l.len() == 1).count();

    // Orientation propagation over each connected component.
    let n = triangles.len();
    let mut flip = vec![false; n];
    let mut component = vec![u32::MAX; n];
    let mut components: Vec<Vec<u32>> = Vec::new();
    for seed in 0..n {
        if component[seed] != u32::MAX {
            continue;
        }
        let cid = components.len() as u32;
        let mut members = vec![seed as u32];
        component[seed] = cid;
        let mut queue = VecDeque::from([seed as u32]);
        while let Some(t) = queue.pop_front() {
            let tri = triangles[t as usize];
            for k in 0..3 {
                let (a, b) = (tri[k], tri[(k + 1) % 3]);
                // Direction of this edge in t after t's own flip.
                let forward_t = !flip[t as usize];
                for &(o, ok) in edges.get(&(a.min(b), a.max(b))).unwrap_or_default() {
                    if o == t {
                        continue;
                    }
                    let otri = triangles[o as usize];
                    let same_raw = otri[ok as usize] == a; // o walks the edge a -> b as written
                    // Consistent when the two walk the shared edge in opposite directions.
                    let o_forward_needed = if same_raw { !forward_t } else { forward_t };
                    let o_flip_needed = !o_forward_needed;
                    if component[o as usize] == u32::MAX {
                        component[o as usize] = cid;
                        flip[o as usize] = o_flip_needed;
                        members.push(o);
                        queue.push_back(o);
                    } else if flip[o as usize] != o_flip_needed {
                        return Err(MeshError::NonOrientable { mesh: mesh(), triangle: origin[o as usize] });
                    }
                }
            }
        }
        // Prefer the orientation that agrees with most of the input, so the count is the repair made.
        let flipped = members.iter().filter(|&&t| flip[t as usize]).count();
        if 2 * flipped > members.len() {
            for &t in &members {
                flip[t as usize] = !flip[t as usize];
            }
        }
        components.push(members);
    }
    for (t, f) in triangles.iter_mut().zip(&flip) {
        if *f {
            t.swap(1, 2);
            report.rewound_triangles += 1;
        }
    }

    // Inside-out closed components: negative signed volume.
    let closed_component = {
        let mut closed = vec![true; components.len()];
        for list in edges.values() {
            if list.len() == 1 {
                closed[component[list[0].0 as usize] as usize] = false;
            }
        }
        closed
    };
    // A closed component wound inward (negative volume) is inside out, unless it is the wall of a
    // cavity: the inner shell of a hollow body, wholly inside another closed component (inside an
    // odd number of them), whose inward winding is right.
    let inverted: Vec<usize> = (0..components.len())
        .filter(|&cid| {
            if !closed_component[cid] {
                return false;
            }
            let members = &components[cid];
            // About one of the component's own vertices: far from the origin, volumes about the
            // origin cancel in rounding and can come out with the wrong sign.
            let origin = welded[triangles[members[0] as usize][0] as usize];
            let volume: f64 =
                members.iter().map(|&t| signed_volume(&welded, triangles[t as usize], origin)).sum();
            volume < 0.0
        })
        .collect();
    for cid in inverted {
        let enclosing = (0..components.len())
            .filter(|&o| o != cid && closed_component[o])
            .filter(|&o| encloses(&welded, &triangles, &components[o], &components[cid]))
            .count();
        if enclosing % 2 == 1 {
            continue;
        }
        for &t in &components[cid] {
            triangles[t as usize].swap(1, 2);
        }
        report.inside_out_components += 1;
    }
    report.components = components.len();
    report.closed = report.boundary_edges == 0;
    Ok(Cleaned { positions: welded, triangles, report })
}

/// Whether the closed surface `outer` (triangles of `triangles`) wholly encloses the surface
/// `inner`: `inner`'s box lies within `outer`'s, and every vertex of `inner` is inside `outer` by ray
/// parity (the majority of three skewed rays, tested as the tracers test a triangle). Two closed
/// parts that pass through each other (an arm through a torso) have vertices on both sides, and are
/// not nested.
fn encloses(p: &[Vec3], triangles: &[[u32; 3]], outer: &[u32], inner: &[u32]) -> bool {
    let bounds = |members: &[u32]| {
        members
            .iter()
            .flat_map(|&t| triangles[t as usize])
            .fold((Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY)), |(lo, hi), v| {
                (lo.min(p[v as usize]), hi.max(p[v as usize]))
            })
    };
    let ((olo, ohi), (ilo, ihi)) = (bounds(outer), bounds(inner));
    if !(ilo.cmpge(olo).all() && ihi.cmple(ohi).all()) {
        return false;
    }
    // Skewed directions, along no axis-aligned edge or face.
    const RAYS: [Vec3; 3] = [
        Vec3::new(0.872_9, 0.315_4, 0.372_1),
        Vec3::new(-0.291_1, 0.913_1, -0.285_7),
        Vec3::new(0.332_0, -0.271_3, -0.903_4),
    ];
    let crossings = |o: Vec3, d: Vec3| {
        outer
            .iter()
            .filter(|&&t| {
                let [a, b, c] = triangles[t as usize].map(|i| p[i as usize]);
                crate::ray::ray_triangle(o, d, a, b, c)
                    .is_some_and(|h| h.u >= 0.0 && h.v >= 0.0 && h.u + h.v <= 1.0 && h.t > 0.0)
            })
            .count()
    };
    let mut vertices: Vec<u32> = inner.iter().flat_map(|&t| triangles[t as usize]).collect();
    vertices.sort_unstable();
    vertices.dedup();
    vertices.iter().all(|&v| RAYS.iter().filter(|&&d| crossings(p[v as usize], d) % 2 == 1).count() >= 2)
}

/// The signed volume of the tetrahedron (`origin`, a, b, c) of triangle `t`, in f64: summed over a
/// closed surface, its enclosed volume whatever `origin` (positive for outward winding). An origin
/// near the surface keeps the terms small, so the sum keeps its sign far from the world's origin.
pub(crate) fn signed_volume(p: &[Vec3], t: [u32; 3], origin: Vec3) -> f64 {
    let [a, b, c] = t.map(|i| (p[i as usize] - origin).as_dvec3());
    a.dot(b.cross(c)) / 6.0
}

/// Undirected edge `(min, max)` → triangles on it with the local edge index `k` (edge `k` runs from
/// corner `k` to corner `(k + 1) % 3`), in triangle order. See [`EdgeMap`].
pub(crate) fn edge_map(triangles: &[[u32; 3]]) -> EdgeMap {
    let mut uses: Vec<(u64, u32, u8)> = Vec::with_capacity(triangles.len() * 3);
    for (t, tri) in triangles.iter().enumerate() {
        for k in 0..3 {
            let (a, b) = (tri[k], tri[(k + 1) % 3]);
            uses.push(((a.min(b) as u64) << 32 | a.max(b) as u64, t as u32, k as u8));
        }
    }
    uses.sort_unstable();
    let mut map = EdgeMap {
        keys: Vec::with_capacity(uses.len() / 2 + 1),
        starts: Vec::with_capacity(uses.len() / 2 + 2),
        uses: Vec::with_capacity(uses.len()),
    };
    for (key, t, k) in uses {
        let edge = ((key >> 32) as u32, key as u32);
        if map.keys.last() != Some(&edge) {
            map.keys.push(edge);
            map.starts.push(map.uses.len() as u32);
        }
        map.uses.push((t, k));
    }
    map.starts.push(map.uses.len() as u32);
    map
}

/// The edges of a triangle list, each with the triangles on it and their local edge index
/// ([`edge_map`]): sorted arrays, built with one sort and no allocation per edge (a level of a
/// million triangles has a million and a half edges).
pub(crate) struct EdgeMap {
    /// The edges `(min, max)`, in increasing order.
    keys: Vec<(u32, u32)>,
    /// Edge `i`'s triangles are `uses[starts[i]..starts[i + 1]]`.
    starts: Vec<u32>,
    uses: Vec<(u32, u8)>,
}

impl EdgeMap {
    /// The triangles on edge `key` (`(min, max)`), in triangle order.
    pub(crate) fn get(&self, key: &(u32, u32)) -> Option<&[(u32, u8)]> {
        self.keys.binary_search(key).ok().map(|i| self.list(i))
    }

    fn list(&self, i: usize) -> &[(u32, u8)] {
        &self.uses[self.starts[i] as usize..self.starts[i + 1] as usize]
    }

    /// Each edge's triangles, in edge order.
    pub(crate) fn values(&self) -> impl Iterator<Item = &[(u32, u8)]> {
        (0..self.keys.len()).map(|i| self.list(i))
    }

    /// Each edge with its triangles, in edge order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&(u32, u32), &[(u32, u8)])> {
        self.keys.iter().enumerate().map(|(i, k)| (k, self.list(i)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{bvh::LEAF_COUNT_BITS, mesh::MAX_TRIANGLES};

    /// The hierarchy's leaf word bounds the triangle count: one more than the limit is refused with
    /// the counts, the limit itself is taken (checked without building a mesh that size), and the
    /// last triangle it allows still fits the leaf word beside a full leaf's count.
    #[test]
    fn too_many_triangles_are_refused() {
        assert!(check_size("big", MAX_TRIANGLES).is_ok());
        match check_size("big", MAX_TRIANGLES + 1) {
            Err(MeshError::TooLarge { triangles, max, .. }) => {
                assert_eq!((triangles, max), (MAX_TRIANGLES + 1, MAX_TRIANGLES))
            }
            other => panic!("{other:?}"),
        }
        let last = MAX_TRIANGLES as u64 - 1;
        let word = (last << LEAF_COUNT_BITS) | ((1 << LEAF_COUNT_BITS) - 1);
        assert!(word <= u64::from(u32::MAX) && word >> LEAF_COUNT_BITS == last);
    }
}
