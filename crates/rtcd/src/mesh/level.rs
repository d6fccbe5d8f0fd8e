//! Level geometry: a large static surface (a terrain, a floor, a ramp; open or closed) cut into
//! spatially compact chunks of at most a few hundred triangles, each an [`RtcdMesh`] of its own.
//!
//! A body near a level surface is paired with the chunks its box overlaps, and each body-chunk pair
//! is an ordinary pair of the narrow phase (Hermann 2008's vertex rays both ways, IRTCD 2013's
//! iterative walk, the 2014 predictions, Mandarapu et al. 2024's edge rays). So only the part of a
//! 100k-1M triangle level near each body is touched per tick, with the same per-pair costs as a
//! body-sized mesh: the candidate regions, the displacement bound of IRTCD Eq. 2 (which grows with
//! the radius of the meshes) and the device's one-thread-per-vertex layout all scale with a chunk,
//! not with the level.
//!
//! **Outward side.** A level surface need not be closed: its triangles' winding says which side is
//! outside (counter-clockwise seen from outside, as for any mesh), and the other side is solid
//! ([`RtcdMesh::solid_behind`]): a terrain wound counter-clockwise from above is solid below. A
//! vertex of a body is in contact when its inward ray meets the surface from behind (from the
//! inside), as with a closed mesh; but where Hermann's exit-distance test ends the ray where it
//! leaves its own body, a ray into a chunk reaches as far as the body's own size
//! ([`crate::detect::solid_reach`]): under a terrain a point is inside the solid however thin its
//! body is, so a 1 cm plate or a pebble that sank deeper than its thickness keeps its contacts. The
//! chunks of an open level are open meshes: their vertices' inward rays are bounded by the chunk's
//! diagonal ([`RtcdMesh::exit_distances`]).
//!
//! **Reach behind.** A chunk's vertex candidates are taken with its box grown behind the surface
//! ([`RtcdMesh::behind_box`], [`crate::detect::vertex_candidate_region`]), and a chunk is looked
//! up with its box grown behind its faces ([`LevelMesh::chunks_overlapping`]): a body sunk under a
//! flat terrain is below the chunk's flat box, yet paired with it.
//!
//! **Seams.** The whole surface is validated and repaired once ([`RtcdMesh::new`]'s steps), so the
//! winding is consistent across chunks; then each triangle goes to exactly one chunk. The edges
//! where two chunks meet are boundary edges of both chunks, but not of the surface: they are not
//! feature edges ([`RtcdMesh::edges`]), so they cast no edge rays as a hole's rim would. A vertex on
//! a seam belongs to every chunk that uses it; its normal is its chunk's.

use std::sync::Arc;

use glam::Vec3;
use rayon::prelude::*;
use rustc_hash::FxHashSet;

use super::{MeshReport, RtcdMesh, clean, edge_hierarchy, incident_edges};
use crate::{
    aabb::Aabb,
    bvh::{self, BvhNode},
    error::MeshError,
};

/// Default most triangles per chunk of a [`LevelMesh`]. A chunk of the bench's terrain (0.5 m cells)
/// is then about 8 m across: a body of a metre meets one or two chunks, not two or three as with
/// 256, and a chunk pair costs little more, since the body's rays and the chunk's vertices near it
/// are picked by boxes, not by the chunk's size (`rtcd_bench --ground terrain --big-level`: scene 1's
/// body-terrain pairs about 20 % cheaper, its pile asleep by the end).
pub const DEFAULT_CHUNK_TRIANGLES: usize = 1024;

/// A large static surface cut into chunks (see the module docs). Immutable; share it with `Arc`.
#[derive(Clone, Debug)]
pub struct LevelMesh {
    name: String,
    chunks: Vec<Arc<RtcdMesh>>,
    /// A hierarchy over the chunks' boxes: its leaves' "triangles" are chunk indices into `order`.
    tree: Vec<BvhNode>,
    order: Vec<u32>,
    aabb: Aabb,
    triangles: usize,
    report: MeshReport,
    feature_bits: u32,
    /// The largest growth of any chunk's [`RtcdMesh::behind_box`] per length, toward the minimum
    /// and the maximum corner ([`LevelMesh::behind_box`]).
    behind: (Vec3, Vec3),
    /// Per chunk, the growth of its box per length when it is looked up: toward the minimum and the
    /// maximum corner, along the axes its triangles face ([`facing_directions`]).
    lookup: Vec<(Vec3, Vec3)>,
    /// The largest of `lookup`: the hierarchy's node boxes grow by it.
    lookup_all: (Vec3, Vec3),
}

/// Least component of a triangle's normal along an axis for the chunk's lookup box to grow along
/// that axis behind it ([`LevelMesh::chunks_overlapping`]): the triangle faces within 45° of it.
const FACING: f32 = std::f32::consts::FRAC_1_SQRT_2;

/// The growth per length behind triangles of outward normals `normals` of a chunk's lookup box:
/// toward the minimum corner along the axes some triangle faces (its normal's component at least
/// [`FACING`]), by that component, and likewise toward the maximum corner; none along an axis no
/// triangle faces. A terrain's chunk grows down, not sideways by its slopes.
fn facing_directions(normals: &[Vec3]) -> (Vec3, Vec3) {
    let facing = |v: Vec3| Vec3::select(v.cmpge(Vec3::splat(FACING)), v, Vec3::ZERO);
    normals.iter().fold((Vec3::ZERO, Vec3::ZERO), |(to_min, to_max), n| {
        (to_min.max(facing(*n)), to_max.max(facing(-*n)))
    })
}

fn union_of(growths: impl Iterator<Item = (Vec3, Vec3)>) -> (Vec3, Vec3) {
    growths.fold((Vec3::ZERO, Vec3::ZERO), |(a, b), (c, d)| (a.max(c), b.max(d)))
}

/// `b` grown by `reach` times `growth` (toward its minimum and maximum corner).
fn grown(b: Aabb, (to_min, to_max): (Vec3, Vec3), reach: f32) -> Aabb {
    if b.is_empty() {
        return b;
    }
    Aabb { min: b.min - to_min * reach, max: b.max + to_max * reach }
}

impl LevelMesh {
    /// Validates and repairs `positions`/`indices` as [`RtcdMesh::new`] does (the surface may be
    /// open) and cuts it into chunks of at most [`DEFAULT_CHUNK_TRIANGLES`] triangles.
    pub fn new(name: impl Into<String>, positions: &[Vec3], indices: &[u32]) -> Result<Self, MeshError> {
        Self::with_chunk_triangles(name, positions, indices, DEFAULT_CHUNK_TRIANGLES)
    }

    /// [`LevelMesh::new`] with at most `chunk_triangles` triangles per chunk (at least 16).
    pub fn with_chunk_triangles(
        name: impl Into<String>,
        positions: &[Vec3],
        indices: &[u32],
        chunk_triangles: usize,
    ) -> Result<Self, MeshError> {
        let name = name.into();
        let cleaned = clean::clean(&name, positions, indices)?;
        let report = cleaned.report.clone();
        let (positions, triangles) = (cleaned.positions, cleaned.triangles);
        let max = chunk_triangles.max(16);

        // Spatially compact groups: split at the median centroid along the longest axis.
        let centroids: Vec<Vec3> =
            triangles.iter().map(|t| t.iter().map(|&i| positions[i as usize]).sum::<Vec3>() / 3.0).collect();
        let mut ids: Vec<u32> = (0..triangles.len() as u32).collect();
        let mut groups: Vec<std::ops::Range<usize>> = Vec::new();
        let mut todo = Vec::new();
        todo.push(0..ids.len());
        while let Some(r) = todo.pop() {
            if r.len() <= max {
                groups.push(r);
                continue;
            }
            let b = Aabb::from_points(ids[r.clone()].iter().map(|&t| &centroids[t as usize]));
            let axis = b.extents().max_position();
            let mid = r.len() / 2;
            ids[r.clone()].select_nth_unstable_by(mid, |&a, &c| {
                centroids[a as usize][axis].total_cmp(&centroids[c as usize][axis])
            });
            todo.push(r.start + mid..r.end);
            todo.push(r.start..r.start + mid);
        }
        groups.sort_by_key(|r| r.start);

        // Which chunk holds each triangle, to tell seams from the surface's own boundary.
        let mut chunk_of = vec![0u32; triangles.len()];
        for (c, r) in groups.iter().enumerate() {
            for &t in &ids[r.clone()] {
                chunk_of[t as usize] = c as u32;
            }
        }
        let edges = clean::edge_map(&triangles);
        let seam = |a: u32, b: u32| {
            edges.get(&(a.min(b), a.max(b))).is_some_and(|l| {
                l.len() > 1 && l.iter().any(|&(t, _)| chunk_of[t as usize] != chunk_of[l[0].0 as usize])
            })
        };

        // The chunks are built in parallel: each its own vertices (in increasing global order),
        // repair report, seams and hierarchy.
        let chunks: Vec<Arc<RtcdMesh>> = groups
            .par_iter()
            .enumerate()
            .map(|(c, r)| {
                let mut global: Vec<u32> =
                    ids[r.clone()].iter().flat_map(|&t| triangles[t as usize]).collect();
                global.sort_unstable();
                global.dedup();
                let local = |v: u32| global.binary_search(&v).map_or(u32::MAX, |i| i as u32);
                let chunk_positions: Vec<Vec3> = global.iter().map(|&v| positions[v as usize]).collect();
                let chunk_triangles: Vec<[u32; 3]> =
                    ids[r.clone()].iter().map(|&t| triangles[t as usize].map(local)).collect();
                let chunk_edges = clean::edge_map(&chunk_triangles);
                let boundary = chunk_edges.values().filter(|l| l.len() == 1).count();
                let seams: FxHashSet<(u32, u32)> = chunk_edges
                    .iter()
                    .filter(|(_, l)| l.len() == 1)
                    .map(|(&(a, b), _)| (a, b))
                    .filter(|&(a, b)| seam(global[a as usize], global[b as usize]))
                    .collect();
                let chunk_report = MeshReport {
                    input_vertices: chunk_positions.len(),
                    input_triangles: chunk_triangles.len(),
                    boundary_edges: boundary,
                    components: 1,
                    closed: boundary == 0,
                    ..Default::default()
                };
                let mut mesh = RtcdMesh::from_clean(
                    format!("{name} [chunk {c}]"),
                    clean::Cleaned {
                        positions: chunk_positions,
                        triangles: chunk_triangles,
                        report: chunk_report,
                    },
                    None,
                );
                mesh.drop_seam_edges(&seams);
                mesh.set_solid_behind();
                Arc::new(mesh)
            })
            .collect();

        let boxes: Vec<Aabb> = chunks.iter().map(|m| m.aabb()).collect();
        let (tree, order) = bvh::build(&boxes);
        let aabb = boxes.iter().fold(Aabb::EMPTY, |b, c| b.union(*c));
        let most = chunks
            .iter()
            .map(|m| m.positions().len().max(m.triangles().len()).max(m.edges().len()))
            .max()
            .unwrap_or(0);
        let feature_bits = usize::BITS - most.leading_zeros();
        let behind = union_of(chunks.iter().filter_map(|c| c.behind));
        let lookup: Vec<(Vec3, Vec3)> =
            chunks.iter().map(|c| facing_directions(c.triangle_normals())).collect();
        let lookup_all = union_of(lookup.iter().copied());
        Ok(Self {
            name,
            chunks,
            tree,
            order,
            aabb,
            triangles: triangles.len(),
            report,
            feature_bits,
            behind,
            lookup,
            lookup_all,
        })
    }

    /// The name given at construction.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The chunks, each an open (or closed) [`RtcdMesh`] in the level's frame.
    pub fn chunks(&self) -> &[Arc<RtcdMesh>] {
        &self.chunks
    }

    /// Triangles of the whole surface after repair.
    pub fn triangle_count(&self) -> usize {
        self.triangles
    }

    /// The box of the whole surface, in its frame.
    pub fn aabb(&self) -> Aabb {
        self.aabb
    }

    /// Bits that hold any chunk's vertex, triangle and feature-edge indices: a feature of chunk `c`
    /// is told apart from the other chunks' as `c << feature_bits | index`.
    pub fn feature_bits(&self) -> u32 {
        self.feature_bits
    }

    /// What validation of the whole surface found and repaired.
    pub fn report(&self) -> &MeshReport {
        &self.report
    }

    /// The box of the whole surface and of the points up to `reach` behind it
    /// ([`RtcdMesh::behind_box`] of every chunk, joined).
    pub fn behind_box(&self, reach: f32) -> Aabb {
        grown(self.aabb, self.behind, reach)
    }

    /// The box chunk `c` is looked up with ([`LevelMesh::chunks_overlapping`]) for a query of
    /// diagonal `reach`: its box grown by `reach` behind the faces of its triangles, along the axes
    /// they face (within 45°).
    pub fn lookup_box(&self, c: u32, reach: f32) -> Aabb {
        grown(self.chunks[c as usize].aabb(), self.lookup[c as usize], reach)
    }

    /// Appends to `out` the chunks near `query` (a body's box, in the level's frame): those whose
    /// box grown behind the surface by the query's diagonal ([`LevelMesh::lookup_box`]) overlaps it.
    /// A body's rays into a chunk reach as far as its size ([`crate::detect::solid_reach`]), so a
    /// body sunk under the surface (below a flat chunk's flat box) is still paired with the chunk
    /// above it; a body beside or above the surface only with the chunks its box overlaps. The
    /// growth follows the directions the triangles face, not the sideways reach of their slopes
    /// ([`RtcdMesh::behind_box`]), which would pair each body near a seam with the next chunk: a body
    /// sunk under a slope near a chunk's border is paired with the chunk it is under.
    pub fn chunks_overlapping(&self, query: &Aabb, out: &mut Vec<u32>) {
        if query.is_empty() {
            return;
        }
        let reach = query.extents().length();
        let mut i = 0;
        while let Some(node) = self.tree.get(i) {
            if grown(node.aabb(), self.lookup_all, reach).intersection(*query).is_empty() {
                i = node.miss as usize;
                continue;
            }
            match node.leaf_range() {
                Some((first, count)) => {
                    for k in first..first + count {
                        let c = self.order[k as usize];
                        if !self.lookup_box(c, reach).intersection(*query).is_empty() {
                            out.push(c);
                        }
                    }
                    i = node.miss as usize;
                }
                None => i += 1,
            }
        }
    }
}

impl RtcdMesh {
    /// Leaves the boundary edges in `seams` (local vertex pairs, lower first) out of the feature
    /// edges: they are edges of the surface that continues in a neighbouring chunk.
    fn drop_seam_edges(&mut self, seams: &FxHashSet<(u32, u32)>) {
        if seams.is_empty() {
            return;
        }
        let strong = self.predicting_edges as usize;
        let keep = |e: &[u32; 2]| !seams.contains(&(e[0].min(e[1]), e[0].max(e[1])));
        let kept_strong = self.edges[..strong].iter().filter(|e| keep(e)).count();
        self.edges.retain(keep);
        self.predicting_edges = kept_strong as u32;
        (self.vertex_edge_offsets, self.vertex_edges) = incident_edges(self.positions.len(), &self.edges);
        (self.edge_bvh, self.edge_order) = edge_hierarchy(&self.positions, &self.edges);
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A wavy height grid of `n x n` cells over `[-size/2, size/2]^2`, counter-clockwise from above.
    pub(crate) fn terrain(n: u32, size: f32) -> (Vec<Vec3>, Vec<u32>) {
        let h = |x: f32, z: f32| 0.3 * (0.7 * x).sin() * (0.5 * z).cos();
        let mut p = Vec::new();
        for j in 0..=n {
            for i in 0..=n {
                let (x, z) = (size * (i as f32 / n as f32 - 0.5), size * (j as f32 / n as f32 - 0.5));
                p.push(Vec3::new(x, h(x, z), z));
            }
        }
        let mut idx = Vec::new();
        let at = |i: u32, j: u32| j * (n + 1) + i;
        for j in 0..n {
            for i in 0..n {
                idx.extend([
                    at(i, j),
                    at(i, j + 1),
                    at(i + 1, j),
                    at(i + 1, j),
                    at(i, j + 1),
                    at(i + 1, j + 1),
                ]);
            }
        }
        (p, idx)
    }

    #[test]
    fn every_triangle_in_one_chunk_and_queries_match_a_scan() {
        let (p, i) = terrain(40, 40.0);
        let level = LevelMesh::with_chunk_triangles("terrain", &p, &i, 100).unwrap();
        assert_eq!(level.triangle_count(), 3200);
        assert!(level.chunks().len() >= 32, "{} chunks", level.chunks().len());
        let total: usize = level.chunks().iter().map(|c| c.triangles().len()).sum();
        assert_eq!(total, 3200);
        for c in level.chunks() {
            assert!(c.triangles().len() <= 100);
            // Counter-clockwise from above stays so: every triangle faces up.
            assert!(c.triangle_normals().iter().all(|n| n.y > 0.0));
        }
        // Looked up, a chunk grows down only (its slopes are gentle); its candidates' box grows
        // sideways too, as far as the slopes turn.
        for (k, c) in level.chunks().iter().enumerate() {
            let (b, look, behind) = (c.aabb(), level.lookup_box(k as u32, 2.0), c.behind_box(2.0));
            assert_eq!((look.max, look.min.x, look.min.z), (b.max, b.min.x, b.min.z));
            assert!((look.min.y - (b.min.y - 2.0)).abs() < 0.02, "{look:?} {b:?}");
            assert!(behind.min.x < b.min.x || behind.max.x > b.max.x, "{behind:?} {b:?}");
            assert_eq!(behind.max.y, b.max.y);
        }
        let mut found = Vec::new();
        // Around the surface, and under it (more than the query's size: nothing).
        for (k, y) in (0..150).map(|k| (k, [0.0, -2.0, -8.0][k % 3])) {
            let c = Vec3::new((k as f32 * 7.3) % 40.0 - 20.0, y, (k as f32 * 3.1) % 40.0 - 20.0);
            let q = Aabb::new(c - Vec3::splat(1.5), c + Vec3::splat(1.5));
            found.clear();
            level.chunks_overlapping(&q, &mut found);
            found.sort_unstable();
            let reach = q.extents().length();
            let scan: Vec<u32> = (0..level.chunks().len() as u32)
                .filter(|&c| !level.lookup_box(c, reach).intersection(q).is_empty())
                .collect();
            assert_eq!(found, scan);
            assert_eq!(found.is_empty(), y < -5.0, "{c}");
        }
    }

    /// Chunks are solid behind, other meshes are not; a flat chunk's box grows only downward.
    #[test]
    fn chunks_are_solid_below_and_their_boxes_grow_down() {
        let flat: Vec<Vec3> =
            [(-2.0, -2.0), (2.0, -2.0), (2.0, 2.0), (-2.0, 2.0)].map(|(x, z)| Vec3::new(x, 1.0, z)).to_vec();
        let level = LevelMesh::new("flat", &flat, &[0, 3, 1, 1, 3, 2]).unwrap();
        let chunk = &level.chunks()[0];
        assert!(chunk.solid_behind());
        let b = chunk.behind_box(0.5);
        assert_eq!((b.min, b.max), (Vec3::new(-2.0, 0.5, -2.0), Vec3::new(2.0, 1.0, 2.0)));
        assert_eq!(level.behind_box(0.5), b);
        assert_eq!(level.lookup_box(0, 0.5), b);
        let ordinary = RtcdMesh::new("flat", &flat, &[0, 3, 1, 1, 3, 2]).unwrap();
        assert!(!ordinary.solid_behind());
        assert_eq!(ordinary.behind_box(0.5), ordinary.aabb());
        // A 0.2 m box 0.3 m under the surface: paired; 1 m under it: not.
        let mut found = Vec::new();
        let under = |y: f32| Aabb::new(Vec3::new(0.0, y - 0.2, 0.0), Vec3::new(0.2, y, 0.2));
        level.chunks_overlapping(&under(0.7), &mut found);
        assert_eq!(found, [0]);
        found.clear();
        level.chunks_overlapping(&under(0.0), &mut found);
        assert!(found.is_empty());
    }

    #[test]
    fn seams_are_not_feature_edges_but_the_rim_is() {
        let (p, i) = terrain(20, 20.0);
        let level = LevelMesh::with_chunk_triangles("terrain", &p, &i, 64).unwrap();
        let on_rim = |v: Vec3| v.x.abs().max(v.z.abs()) > 10.0 - 1e-4;
        let (mut rim, mut inner_boundary) = (0, 0);
        for c in level.chunks() {
            for k in 0..c.triangles().len() {
                for e in 0..3 {
                    if c.neighbors()[k][e] != super::super::NO_NEIGHBOR {
                        continue;
                    }
                    let t = c.triangles()[k];
                    let (a, b) = (c.positions()[t[e] as usize], c.positions()[t[(e + 1) % 3] as usize]);
                    let listed = c.edges().iter().any(|f| {
                        let (x, y) = (c.positions()[f[0] as usize], c.positions()[f[1] as usize]);
                        (x == a && y == b) || (x == b && y == a)
                    });
                    if on_rim(a) && on_rim(b) {
                        rim += 1;
                        assert!(listed, "a rim edge is a feature edge");
                    } else {
                        inner_boundary += 1;
                        assert!(!listed, "a seam edge is not a feature edge");
                    }
                }
            }
        }
        assert_eq!(rim, 80);
        assert!(inner_boundary > 0);
    }
}
