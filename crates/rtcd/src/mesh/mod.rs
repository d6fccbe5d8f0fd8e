//! Triangle meshes prepared for ray-traced collision detection.
//!
//! [`RtcdMesh::new`] validates and repairs the input (see [`clean`]), then precomputes what the
//! narrow phase reads every step: outward vertex normals (the rays' directions, Hermann 2008 §3),
//! edge adjacency (the iterative walk, IRTCD 2013 §3.1), a flattened BVH for stackless traversal
//! (IRTCD 2013 §4.2), each vertex's *exit distance* (how far its inward ray travels before leaving
//! its own body: Hermann's second validity test, precomputed since the body is rigid), the maximum
//! radius (IRTCD Eq. 2) and the average triangle size (IRTCD Eq. 1).

mod adjacency;
pub mod clean;
mod level;
mod non_manifold;
mod normals;
mod obj;

use std::sync::atomic::{AtomicU64, Ordering};

pub use adjacency::NO_NEIGHBOR;
use glam::Vec3;
pub use level::{DEFAULT_CHUNK_TRIANGLES, LevelMesh};
pub use obj::{ObjData, read_obj};

use crate::{
    aabb::Aabb,
    bvh::{self, BvhNode},
    error::MeshError,
    params::TracerKind,
    ray::{PreparedTriangle, Ray},
    trace::NO_SKIP,
};

/// Degenerate triangles (zero area, or a vertex repeated after welding) are dropped and counted in
/// [`MeshReport::degenerate_triangles`]; a mesh where they are more than this share of the input is
/// rejected with [`MeshError::TooManyDegenerate`].
pub const MAX_DEGENERATE_SHARE: f32 = 0.10;

/// The most triangles a mesh may have: a hierarchy leaf names its first triangle in the bits of a
/// 32-bit word that its count leaves ([`crate::bvh::LEAF_COUNT_BITS`]), on the CPU and the GPU alike;
/// a larger mesh is rejected with [`MeshError::TooLarge`]. (About 268 million: a mesh that size
/// is a level to split into chunks, not a collider.)
pub const MAX_TRIANGLES: usize = (1 << (32 - crate::bvh::LEAF_COUNT_BITS)) - 1;

/// What validation found and repaired. Nothing is dropped or changed without being counted here.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MeshReport {
    /// Vertices in the input.
    pub input_vertices: usize,
    /// Triangles in the input.
    pub input_triangles: usize,
    /// Input vertices welded onto an earlier one at the same place.
    pub merged_vertices: usize,
    /// Input vertices no triangle uses (dropped).
    pub unused_vertices: usize,
    /// Degenerate triangles dropped.
    pub degenerate_triangles: usize,
    /// Triangles with the same three vertices as an earlier one, in either winding (dropped): a
    /// repeated face, or the second side of a double-sided face.
    pub duplicate_triangles: usize,
    /// Edges shared by more than two triangles (non-manifold), split into manifold sheets: the
    /// triangles on the edge are paired across the wedges of solid between them, and those left
    /// unpaired get the edge as a boundary edge.
    pub split_edges: usize,
    /// Vertex copies made where a vertex's triangles fall into separate sheets (at the split edges,
    /// and where fans meet only at a vertex). Copies share their position, never their index.
    pub split_vertices: usize,
    /// Triangles whose winding was reversed to agree with their neighbours.
    pub rewound_triangles: usize,
    /// Closed components that were inside out (negative signed volume, and not the inward-wound
    /// wall of a cavity inside another closed component) and were flipped.
    pub inside_out_components: usize,
    /// Edges with a single triangle. Rays may escape through such holes.
    pub boundary_edges: usize,
    /// Connected components.
    pub components: usize,
    /// No boundary edge: the mesh bounds a volume.
    pub closed: bool,
}

impl MeshReport {
    /// Human-readable notes on every repair, empty when the input was clean.
    pub fn notes(&self) -> Vec<String> {
        let mut n = Vec::new();
        let mut note = |count: usize, what: &str| {
            if count > 0 {
                n.push(format!("{count} {what}"));
            }
        };
        note(self.merged_vertices, "duplicate vertices welded");
        note(self.unused_vertices, "unused vertices dropped");
        note(self.degenerate_triangles, "degenerate triangles dropped");
        note(self.duplicate_triangles, "repeated triangles dropped");
        note(self.split_edges, "non-manifold edges split into manifold sheets");
        note(self.split_vertices, "vertices copied to separate the sheets meeting there");
        note(self.rewound_triangles, "triangles rewound to a consistent orientation");
        note(self.inside_out_components, "inside-out components flipped (negative signed volume)");
        if !self.closed {
            n.push(format!(
                "open surface: {} boundary edges, rays may escape through holes",
                self.boundary_edges
            ));
        }
        n
    }
}

/// How far in, as a share of the mesh's bounding diagonal, the inward ray of a vertex copy starts
/// when its exit distance is measured ([`RtcdMesh::exit_distances`]).
const COPY_RAY_START: f32 = 1e-5;

/// A vertex may be a rim vertex ([`RtcdMesh::rim_motions`]) when the cosine between its normal and
/// the normal of one of its triangles is under this (more than 70° apart): its ray runs nearly
/// along that triangle. A box's corner (54.7°) is not one; a flat tetrahedron's base corner (about
/// 90° from its base) and a knife edge sharper than 40° are.
pub const RIM_COS: f32 = 0.34;

/// A rim vertex's body is thinner along its triangle's inward normal than this share of its exit
/// distance ([`RtcdMesh::rim_motions`]).
pub const RIM_SHARE: f32 = 0.25;

/// Where a rim vertex's thickness is measured on its triangle ([`RtcdMesh::rim_motions`]): this
/// share of the way from the vertex to the triangle's centroid.
pub const RIM_RAY_START: f32 = 1e-2;

/// The motion in a step, as a share of the mesh's bounding diagonal, past which a rim vertex is
/// traced along its path ([`RtcdMesh::rim_motions`]): about any motion. A body farther from the
/// origin than ten times its size has a relative pose whose rounding is larger, so its rim vertices
/// are traced at every step even at rest (a few rays a pair).
pub const RIM_LEAST_MOTION: f32 = 1e-6;

static NEXT_MESH_ID: AtomicU64 = AtomicU64::new(1);

/// Least depth, as a share of the mesh's bounding diagonal, that a crossing of an edge with both
/// ends outside the other body could reach for the edge to cast an edge ray: 1 %.
///
/// A straight edge of length `L` between faces whose normals are `θ` apart crosses a body with both
/// ends outside it at most about `L/2 · tan(θ/2)` deep before a neighbouring vertex is inside (the
/// edge rises from the crossing at half the dihedral angle on either side, at most half its length):
/// a long sharp edge (a box's, a low-poly ring's) can hide a deep crossing; the short, nearly flat
/// edges of a finely tessellated surface cannot, and the vertex rays around them carry the contact.
/// A crossing is made of two edges crossing each other, and the other mesh's edge is bounded the same
/// way, so leaving out the edges of either mesh that cannot hide more than this loses no deeper
/// crossing.
pub const FEATURE_EDGE_DEPTH: f32 = 0.01;

/// Least depth, as a share of the mesh's bounding diagonal, that a crossing of an edge could reach
/// for the edge to be kept between steps whenever it comes near the other mesh (an edge's
/// prediction), as long, sharp edges are: 5 %. See [`RtcdMesh::predicting_edges`].
pub const PREDICTING_EDGE_DEPTH: f32 = 0.05;

/// The hierarchy over the boxes of `edges` ([`RtcdMesh::edges_in`]): its nodes, and the edge ids
/// its leaves' ranges index.
pub(crate) fn edge_hierarchy(positions: &[Vec3], edges: &[[u32; 2]]) -> (Vec<BvhNode>, Vec<u32>) {
    let boxes: Vec<Aabb> = edges
        .iter()
        .map(|&[a, b]| Aabb::from_points([positions[a as usize], positions[b as usize]].iter()))
        .collect();
    bvh::build(&boxes)
}

/// The convex feature edges, each once: edge `k` of triangle `t` (corners `k`, `k + 1`) when `t` is
/// the lower-indexed of its two triangles, which turn outward (the other triangle's far corner lies
/// behind `t`'s plane) and whose crossing could be deeper than [`FEATURE_EDGE_DEPTH`] of the
/// mesh's diagonal; and every boundary edge of an open mesh. A concave edge cannot cross another
/// body with both ends outside without the other body's convex edges crossing its faces, which
/// their own edge rays see.
/// Returns the edges with those that reach [`PREDICTING_EDGE_DEPTH`] (and the boundary edges)
/// first, and their count.
fn feature_edges(
    positions: &[Vec3],
    triangles: &[[u32; 3]],
    neighbors: &[[u32; 3]],
    normals: &[Vec3],
) -> (Vec<[u32; 2]>, u32) {
    let diagonal = Aabb::from_points(positions.iter()).extents().length();
    let least = FEATURE_EDGE_DEPTH * diagonal;
    let mut edges = Vec::new();
    let mut weak = Vec::new();
    for (t, (tri, adj)) in triangles.iter().zip(neighbors).enumerate() {
        for k in 0..3 {
            let (a, b) = (tri[k], tri[(k + 1) % 3]);
            let other = adj[k];
            if other == adjacency::NO_NEIGHBOR {
                edges.push([a, b]);
                continue;
            }
            if other < t as u32 {
                continue;
            }
            let n = normals[t];
            let far = triangles[other as usize].iter().copied().find(|&v| v != a && v != b);
            let convex = far.is_some_and(|c| n.dot(positions[c as usize] - positions[a as usize]) < 0.0);
            // tan(θ/2) from the normals' angle θ: |n1 × n2| / (1 + n1 · n2).
            let m = normals[other as usize];
            let half_tan = n.cross(m).length() / (1.0 + n.dot(m)).max(1e-6);
            let reach = 0.5 * positions[a as usize].distance(positions[b as usize]) * half_tan;
            if convex && reach > PREDICTING_EDGE_DEPTH * diagonal {
                edges.push([a, b]);
            } else if convex && reach > least {
                weak.push([a, b]);
            }
        }
    }
    let strong = edges.len() as u32;
    edges.extend(weak);
    (edges, strong)
}

/// The edges at each vertex, as offsets into one list (`offsets[v]..offsets[v + 1]`).
fn incident_edges(vertices: usize, edges: &[[u32; 2]]) -> (Vec<u32>, Vec<u32>) {
    let mut offsets = vec![0u32; vertices + 1];
    for e in edges {
        offsets[e[0] as usize + 1] += 1;
        offsets[e[1] as usize + 1] += 1;
    }
    for v in 0..vertices {
        offsets[v + 1] += offsets[v];
    }
    let mut fill = offsets.clone();
    let mut list = vec![0u32; 2 * edges.len()];
    for (id, e) in edges.iter().enumerate() {
        for &v in e {
            list[fill[v as usize] as usize] = id as u32;
            fill[v as usize] += 1;
        }
    }
    (offsets, list)
}

/// A validated triangle mesh with everything the narrow phase reads precomputed. Immutable; share it
/// with `Arc`.
#[derive(Clone, Debug)]
pub struct RtcdMesh {
    id: u64,
    name: String,
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    triangles: Vec<[u32; 3]>,
    triangle_normals: Vec<Vec3>,
    prepared: Vec<PreparedTriangle>,
    neighbors: Vec<[u32; 3]>,
    edges: Vec<[u32; 2]>,
    predicting_edges: u32,
    vertex_edge_offsets: Vec<u32>,
    vertex_edges: Vec<u32>,
    /// A hierarchy over the edges' boxes ([`RtcdMesh::edges_in`]): its leaves index `edge_order`,
    /// which holds edge ids.
    edge_bvh: Vec<BvhNode>,
    edge_order: Vec<u32>,
    bvh: Vec<BvhNode>,
    exit_distances: Vec<f32>,
    /// Per vertex, the motion in a step past which a rim vertex is traced along its path
    /// ([`RtcdMesh::rim_motions`]); infinite for the others.
    rim_motions: Vec<f32>,
    /// The least of `rim_motions`.
    least_rim_motion: f32,
    aabb: Aabb,
    max_radius: f32,
    average_triangle_size: f32,
    length_scale: f32,
    /// Half the median and half the smallest exit distance ([`RtcdMesh::half_thickness`]).
    half_thickness: [f32; 2],
    volume: f32,
    report: MeshReport,
    /// Half extents when the mesh is the box [`RtcdMesh::cuboid`] built.
    cuboid: Option<Vec3>,
    /// For a mesh that is solid behind its back side ([`RtcdMesh::solid_behind`]): how far, per
    /// length behind the surface, the points behind it reach past its box toward the box's
    /// minimum and maximum corner ([`RtcdMesh::behind_box`]).
    behind: Option<(Vec3, Vec3)>,
    /// For a solid-behind mesh: how far, per ray length, the points from which a ray meets one of
    /// its triangles from behind reach past its box toward the minimum and the maximum corner
    /// ([`RtcdMesh::back_face_box`]).
    back_faces: Option<(Vec3, Vec3)>,
    /// One vertex of each connected component ([`RtcdMesh::component_vertices`]).
    component_vertices: Vec<u32>,
}

impl RtcdMesh {
    /// Builds a mesh from positions and a triangle index list (three indices per triangle,
    /// counter-clockwise seen from outside; inconsistent or inside-out windings are repaired).
    ///
    /// `name` appears in every error and note.
    pub fn new(name: impl Into<String>, positions: &[Vec3], indices: &[u32]) -> Result<Self, MeshError> {
        let name = name.into();
        let cleaned = clean::clean(&name, positions, indices)?;
        Ok(Self::from_clean(name, cleaned, None))
    }

    /// The box `[-half_extents, half_extents]` (8 vertices, 12 triangles), which the narrow phase
    /// treats as the exact solid box it is: a vertex of another mesh inside it (or, as a
    /// prediction, near it) gets an exact contact with one of its faces
    /// ([`crate::detect::box_vertex_face`]) instead of a ray, and Hermann's exit-distance test only
    /// picks the face, so a body thinner than its penetration still gets its contacts. The box's
    /// own corners cast their rays into the other mesh as any mesh's vertices do.
    ///
    /// Face `f` (`2 * axis` for the negative side, `2 * axis + 1` for the positive one) is made of
    /// triangles `2 f` and `2 f + 1`, and the hierarchy is a single leaf holding the whole box, so
    /// the separation bound ([`crate::detect::separation_bound`]) measures the distance to the solid
    /// box, not to its surface.
    pub fn cuboid(name: impl Into<String>, half_extents: Vec3) -> Result<Self, MeshError> {
        let name = name.into();
        // Built from the extents' sizes: a negative one would mirror the corners, and the face ids
        // (below) name their faces by side.
        let (positions, _) = crate::shapes::cuboid(half_extents.abs());
        // Faces -x, +x, -y, +y, -z, +z, two triangles each.
        #[rustfmt::skip]
        let indices = [
            0, 4, 6, 0, 6, 2,
            1, 3, 7, 1, 7, 5,
            0, 1, 5, 0, 5, 4,
            2, 6, 7, 2, 7, 3,
            0, 2, 3, 0, 3, 1,
            4, 5, 7, 4, 7, 6,
        ];
        let cleaned = clean::clean(&name, &positions, &indices)?;
        let repaired = cleaned.positions.len() != 8
            || cleaned.triangles.len() != 12
            || cleaned.report.rewound_triangles + cleaned.report.inside_out_components > 0;
        if repaired {
            // Extents that welding or the orientation repair changed (zero, or too thin to tell
            // corners apart): an ordinary mesh with the usual rays.
            return Ok(Self::from_clean(name, cleaned, None));
        }
        Ok(Self::from_clean(name, cleaned, Some(half_extents.abs())))
    }

    /// This mesh scaled by `scale` per axis, as a new mesh (validated again, named `name`): an
    /// exact box stays an exact box ([`RtcdMesh::cuboid`] of the scaled extents), and a scale that
    /// mirrors (an odd number of negative axes) keeps the triangles wound as before, outward,
    /// whether the mesh is closed or open. Zero or non-finite scales give the error the positions
    /// would.
    pub fn scaled(&self, name: impl Into<String>, scale: Vec3) -> Result<Self, MeshError> {
        let name = name.into();
        if let Some(half) = self.cuboid {
            let scaled = half * scale;
            if scaled.is_finite() && scaled.abs().min_element() > 0.0 {
                return Self::cuboid(name, scaled.abs());
            }
        }
        let indices: Vec<u32> = self.triangles.iter().flatten().copied().collect();
        let (positions, indices) = scaled_mesh_data(&self.positions, &indices, scale);
        Self::new(name, &positions, &indices)
    }

    fn from_clean(name: String, c: clean::Cleaned, cuboid: Option<Vec3>) -> Self {
        let clean::Cleaned { positions, triangles, report } = c;
        // BVH first: it decides the triangle order. A box is one leaf, its triangles in face order.
        let boxes: Vec<Aabb> =
            triangles.iter().map(|t| Aabb::from_points(t.iter().map(|&i| &positions[i as usize]))).collect();
        let (bvh, order) = match cuboid {
            Some(_) => bvh::single_leaf(&boxes),
            None => bvh::build(&boxes),
        };
        let triangles: Vec<[u32; 3]> = order.iter().map(|&i| triangles[i as usize]).collect();
        let neighbors = adjacency::build_adjacency(&triangles);
        let triangle_normals = normals::triangle_normals(&positions, &triangles);
        let (edges, predicting_edges) = feature_edges(&positions, &triangles, &neighbors, &triangle_normals);
        let (vertex_edge_offsets, vertex_edges) = incident_edges(positions.len(), &edges);
        let (edge_bvh, edge_order) = edge_hierarchy(&positions, &edges);
        let prepared = triangles
            .iter()
            .map(|t| {
                PreparedTriangle::new(
                    positions[t[0] as usize],
                    positions[t[1] as usize],
                    positions[t[2] as usize],
                )
            })
            .collect();
        let normals = normals::vertex_normals(&positions, &triangles, &triangle_normals);
        let aabb = Aabb::from_points(positions.iter());
        let max_radius = positions.iter().map(|p| p.length()).fold(0.0, f32::max);
        let (edge_sum, edge_count) = triangles.iter().fold((0.0f32, 0usize), |(s, n), t| {
            let [a, b, c] = t.map(|i| positions[i as usize]);
            (s + a.distance(b) + b.distance(c) + c.distance(a), n + 3)
        });
        let volume =
            triangles.iter().map(|t| clean::signed_volume(&positions, *t, aabb.center())).sum::<f64>() as f32;
        let mut mesh = Self {
            id: NEXT_MESH_ID.fetch_add(1, Ordering::Relaxed),
            name,
            positions,
            normals,
            triangles,
            triangle_normals,
            prepared,
            neighbors,
            edges,
            predicting_edges,
            vertex_edge_offsets,
            vertex_edges,
            edge_bvh,
            edge_order,
            bvh,
            exit_distances: Vec::new(),
            rim_motions: Vec::new(),
            least_rim_motion: f32::INFINITY,
            aabb,
            max_radius,
            average_triangle_size: edge_sum / edge_count.max(1) as f32,
            length_scale: 0.0,
            half_thickness: [0.0; 2],
            volume,
            report,
            cuboid,
            behind: None,
            back_faces: None,
            component_vertices: Vec::new(),
        };
        let component = vertex_components(mesh.positions.len(), &mesh.triangles);
        mesh.component_vertices =
            (0..component.len() as u32).filter(|&v| component[v as usize] == v).collect();
        mesh.exit_distances = mesh.compute_exit_distances(&component);
        mesh.rim_motions = mesh.compute_rim_motions();
        mesh.least_rim_motion = mesh.rim_motions.iter().copied().fold(f32::INFINITY, f32::min);
        (mesh.length_scale, mesh.half_thickness) = mesh.compute_length_scale();
        mesh
    }

    /// [`RtcdMesh::length_scale`]: the mean edge, at most half the median exit distance (the
    /// body's typical thickness along its vertex normals); a positive fallback for a degenerate mesh.
    /// With [`RtcdMesh::half_thickness`].
    fn compute_length_scale(&self) -> (f32, [f32; 2]) {
        let fallback = {
            let diag = self.aabb.extents().length();
            if diag.is_finite() && diag > 0.0 { diag } else { 1.0 }
        };
        let positive = |s: f32| if s.is_finite() && s > 0.0 { s } else { fallback };
        // A vertex whose ray leaves at once (on a knife edge) has no thickness to tell: only positive
        // exits count, so that the thinnest is never the fallback.
        let mut exits: Vec<f32> =
            self.exit_distances.iter().copied().filter(|d| d.is_finite() && *d > 0.0).collect();
        let (half_thickness, thinnest) = if exits.is_empty() {
            (f32::INFINITY, f32::INFINITY)
        } else {
            let mid = exits.len() / 2;
            let median = 0.5 * *exits.select_nth_unstable_by(mid, f32::total_cmp).1;
            (median, 0.5 * exits.iter().copied().fold(f32::INFINITY, f32::min))
        };
        let s = positive(self.average_triangle_size.min(half_thickness));
        (s, [positive(half_thickness), positive(thinnest)])
    }

    /// How far each vertex's inward ray travels inside the mesh before it leaves (Hermann 2008 Alg. 1's
    /// `point3`). Rays that never leave (open meshes) get the bounding-box diagonal: no ray inside the
    /// body can be longer.
    ///
    /// A vertex that shares its position with a copy (a non-manifold vertex split by
    /// [`clean`]) starts its ray a hair further in: the copy's triangles meet the ray at its
    /// origin, and would end it there.
    /// `component`: each vertex's connected component ([`vertex_components`]).
    fn compute_exit_distances(&self, component: &[u32]) -> Vec<f32> {
        let diag = self.aabb.extents().length();
        let mut at: std::collections::HashMap<[u32; 3], u32> = std::collections::HashMap::new();
        for p in &self.positions {
            *at.entry(p.to_array().map(f32::to_bits)).or_default() += 1;
        }
        let start = COPY_RAY_START * diag;
        (0..self.positions.len())
            .map(|v| {
                let (p, dir) = (self.positions[v], -self.normals[v]);
                let skip = if at[&p.to_array().map(f32::to_bits)] > 1 { start } else { 0.0 };
                let exit = |skip: f32| {
                    let ray = Ray::new(p + skip * dir, dir);
                    let hit = TracerKind::Bvh.trace_line(self, &ray, 0.0, f32::INFINITY, v as u32).forward;
                    hit.map(|h| (h, skip))
                };
                match exit(skip) {
                    // The ray meets another part of the mesh right where it starts (a vertex lying on
                    // a face of a part it touches, such as the corner of a box standing on another):
                    // it goes on from a hair further in, as a copy's does. A face of its own part
                    // that close is where a thin body ends.
                    Some((h, _))
                        if h.t <= start
                            && component[self.triangles[h.triangle as usize][0] as usize] != component[v] =>
                    {
                        exit(skip + start)
                    }
                    hit => hit,
                }
                .map_or(diag, |(h, skip)| (h.t + skip).min(diag))
            })
            .collect()
    }

    /// [`RtcdMesh::rim_motions`]: a rim vertex's normal is more than `acos(RIM_COS)` from the normal
    /// of one of its triangles, and its body is thin there: a ray along that triangle's inward
    /// normal, from a point of it next to the vertex ([`RIM_RAY_START`] of the way to its centroid,
    /// off the edges the ray would otherwise run along), leaves the mesh within [`RIM_SHARE`] of
    /// the vertex's exit distance, or starts outside it (the body ends at the vertex). A concave
    /// corner (a table's leg under its top) has such a normal too, but the body is thick there.
    /// Slivers, whose normals are rounding, are left out; an open mesh (a level chunk, a sheet) has
    /// no thickness to tell, and no rim vertex.
    fn compute_rim_motions(&self) -> Vec<f32> {
        if !self.report.closed {
            return vec![f32::INFINITY; self.positions.len()];
        }
        let diag = self.aabb.extents().length();
        let least = RIM_LEAST_MOTION * diag;
        let mut rim = vec![false; self.positions.len()];
        for (tri, &n) in self.triangles.iter().zip(&self.triangle_normals) {
            let corners = tri.map(|v| self.positions[v as usize]);
            if normals::is_sliver(corners[0], corners[1], corners[2]) {
                continue;
            }
            let centroid = (corners[0] + corners[1] + corners[2]) / 3.0;
            for (&v, &p) in tri.iter().zip(&corners) {
                let v = v as usize;
                if rim[v] || self.normals[v].dot(n) >= RIM_COS {
                    continue;
                }
                // From a hair past the triangle's plane.
                let skip = COPY_RAY_START * diag;
                let ray = Ray::new(p + RIM_RAY_START * (centroid - p) - skip * n, -n);
                let thickness =
                    match TracerKind::Bvh.trace_line(self, &ray, 0.0, f32::INFINITY, NO_SKIP).forward {
                        // Leaves the body through another face: that far.
                        Some(h) if h.from_inside => h.t + skip,
                        // Enters the body, or meets nothing: it started outside.
                        Some(_) | None => 0.0,
                    };
                rim[v] = thickness < RIM_SHARE * self.exit_distances[v];
            }
        }
        rim.iter().map(|&r| if r { least } else { f32::INFINITY }).collect()
    }

    /// A process-unique id, new for every mesh built (clones share it). The narrow phase uses it to
    /// notice that a pair's mesh changed and its per-pair state is stale.
    pub fn id(&self) -> u64 {
        self.id
    }
    /// The name given at construction.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// Welded vertex positions.
    pub fn positions(&self) -> &[Vec3] {
        &self.positions
    }
    /// Outward unit vertex normals (angle-weighted).
    pub fn normals(&self) -> &[Vec3] {
        &self.normals
    }
    /// Triangles, counter-clockwise seen from outside, in BVH leaf order.
    pub fn triangles(&self) -> &[[u32; 3]] {
        &self.triangles
    }
    /// Outward unit triangle normals.
    pub fn triangle_normals(&self) -> &[Vec3] {
        &self.triangle_normals
    }
    /// Per triangle, what the ray/triangle test reads (see [`PreparedTriangle`]).
    pub fn prepared_triangles(&self) -> &[PreparedTriangle] {
        &self.prepared
    }
    /// `neighbors()[t][k]`: the triangle across edge `k` of `t`, or [`NO_NEIGHBOR`].
    pub fn neighbors(&self) -> &[[u32; 3]] {
        &self.neighbors
    }
    /// The edges that cast edge rays (Mochi 2024 §3.4), each once, as two vertices: the convex
    /// ones that could cross another body deeper than [`FEATURE_EDGE_DEPTH`] of the mesh's diagonal
    /// with both ends outside it, and the boundary edges of an open mesh. The index in this list is the edge's id ([`crate::FeatureId::Edge`]).
    pub fn edges(&self) -> &[[u32; 2]] {
        &self.edges
    }
    /// How many of [`RtcdMesh::edges`], the first ones, are long and sharp enough to hide a crossing
    /// of [`PREDICTING_EDGE_DEPTH`] of the diagonal (a box's, a low-poly ring's edges; boundary
    /// edges too): the edge rays keep them between steps whenever they come within the rays'
    /// reach of the other mesh, the edges' predictions.
    pub fn predicting_edges(&self) -> u32 {
        self.predicting_edges
    }
    /// Appends to `out` the ids of the edges ([`RtcdMesh::edges`]) whose boxes meet `region` (both
    /// ends' smallest coordinates at most its maximum, their largest at least its minimum, bounds
    /// included), in increasing order: all of them when the region holds the mesh's box, else
    /// those the edge hierarchy's boxes lead to, so that a region over a corner of a large mesh
    /// does not test every edge.
    pub fn edges_in(&self, region: &Aabb, out: &mut Vec<u32>) {
        if self.edges.is_empty() || region.is_empty() {
            return;
        }
        if region.min.cmple(self.aabb.min).all() && region.max.cmpge(self.aabb.max).all() {
            out.extend(0..self.edges.len() as u32);
            return;
        }
        let start = out.len();
        let meets = |lo: Vec3, hi: Vec3| lo.cmple(region.max).all() && hi.cmpge(region.min).all();
        let mut i = 0;
        while i < self.edge_bvh.len() {
            let node = &self.edge_bvh[i];
            if !meets(Vec3::from_array(node.min), Vec3::from_array(node.max)) {
                i = node.miss as usize;
                continue;
            }
            match node.leaf_range() {
                Some((first, count)) => {
                    for &k in &self.edge_order[first as usize..(first + count) as usize] {
                        let [a, b] = self.edges[k as usize];
                        let (pa, pb) = (self.positions[a as usize], self.positions[b as usize]);
                        if meets(pa.min(pb), pa.max(pb)) {
                            out.push(k);
                        }
                    }
                    i = node.miss as usize;
                }
                None => i += 1,
            }
        }
        out[start..].sort_unstable();
    }

    /// The ids of the edges that end at vertex `v` ([`RtcdMesh::edges`]).
    pub fn vertex_edges(&self, v: u32) -> &[u32] {
        let (a, b) = (self.vertex_edge_offsets[v as usize], self.vertex_edge_offsets[v as usize + 1]);
        &self.vertex_edges[a as usize..b as usize]
    }
    /// The flattened BVH (see [`crate::bvh`]).
    pub fn bvh(&self) -> &[BvhNode] {
        &self.bvh
    }
    /// Per-vertex distance along the inward ray to where it leaves the mesh.
    pub fn exit_distances(&self) -> &[f32] {
        &self.exit_distances
    }
    /// Per vertex, for a **rim vertex**, the motion in a step past which its path is traced
    /// ([`crate::detect::pair_motion_contacts`]); infinite for the others. A rim vertex's normal
    /// lies nearly along one of its triangles ([`RIM_COS`]), as at the rim of a flat body (a flat
    /// tetrahedron's base corners, whose normals lie along the base) or a sharp knife edge: its
    /// vertex ray and its predictive ray run along its body and see nothing it moves onto or into,
    /// so it is traced along its path whenever it moves at all ([`RIM_LEAST_MOTION`] of the mesh's
    /// bounding diagonal), whatever the other body and the pair's displacement threshold. Only a
    /// closed mesh has rim vertices.
    pub fn rim_motions(&self) -> &[f32] {
        &self.rim_motions
    }
    /// The least of [`RtcdMesh::rim_motions`]; infinite for a mesh without rim vertices.
    pub fn least_rim_motion(&self) -> f32 {
        self.least_rim_motion
    }
    /// Bounding box in the mesh's frame.
    pub fn aabb(&self) -> Aabb {
        self.aabb
    }
    /// Distance of the farthest vertex from the frame's origin (IRTCD 2013 Eq. 2's radius).
    pub fn max_radius(&self) -> f32 {
        self.max_radius
    }
    /// Mean edge length (IRTCD 2013 Eq. 1's "average triangle size").
    pub fn average_triangle_size(&self) -> f32 {
        self.average_triangle_size
    }
    /// The length each pair's parameters are taken from ([`crate::RtcdParams::for_pair`]): the mean
    /// edge ([`RtcdMesh::average_triangle_size`]), at most half the median exit distance of the
    /// vertices' inward rays, the body's typical thickness. A coarse box of a few large triangles
    /// gets the scale of its thickness, not of its edges: a displacement threshold of one edge would
    /// let it move through a thin part of another body, or another through it, between two
    /// standard traces.
    pub fn length_scale(&self) -> f32 {
        self.length_scale
    }
    /// Half the body's typical thickness (the median exit distance of its vertices' inward rays),
    /// and half its thinnest (the smallest); each positive (the bounding diagonal for a degenerate
    /// mesh). A vertex moving less than the first figure in a step cannot pass through the body
    /// unseen ([`crate::detect::pair_motion_contacts`]); the second stands for it in a mesh with
    /// rim vertices ([`RtcdMesh::rim_motions`]: a flat body, whose rays along it report a
    /// thickness it does not have).
    pub fn half_thickness(&self) -> [f32; 2] {
        self.half_thickness
    }
    /// Enclosed volume (meaningful for closed meshes).
    pub fn volume(&self) -> f32 {
        self.volume
    }
    /// What validation found and repaired.
    pub fn report(&self) -> &MeshReport {
        &self.report
    }
    /// Whether the surface is closed (no boundary edge).
    pub fn is_closed(&self) -> bool {
        self.report.closed
    }
    /// One vertex of each connected component of the surface (the lowest index in it), in
    /// increasing order: a body whose surface does not meet another closed mesh's lies inside it
    /// only where one of these vertices does ([`crate::detect::separation_for_reach`]).
    pub fn component_vertices(&self) -> &[u32] {
        &self.component_vertices
    }
    /// The half extents of a box built by [`RtcdMesh::cuboid`], which the narrow phase treats as
    /// the exact solid box; `None` for every other mesh.
    pub fn cuboid_half_extents(&self) -> Option<Vec3> {
        self.cuboid
    }

    /// Whether the mesh is a surface that is solid behind its back side as far as anything reaches:
    /// a chunk of a [`LevelMesh`] (a terrain, "solid below" when wound counter-clockwise from
    /// above), `false` for every other mesh.
    ///
    /// A vertex of another body whose inward ray meets such a mesh from behind is in contact when
    /// the hit is within the body's own size of the vertex ([`crate::detect::solid_reach`]), not
    /// only before the ray leaves its own body (Hermann 2008, Alg. 1's exit distance): below a
    /// terrain a point is inside the solid whatever the thickness of the body it belongs to, so a
    /// plate or a pebble that sank deeper than its thickness still gets its contacts. The bound
    /// stays local, so a far back face does not count. The mesh's own vertices cast their rays as
    /// any mesh's do.
    pub fn solid_behind(&self) -> bool {
        self.behind.is_some()
    }

    /// The box of the mesh and of the points up to `reach` behind its triangles, along their
    /// inward normals, for a [`RtcdMesh::solid_behind`] mesh: the box grown by `reach` times how
    /// far the triangles' normals point away from each side (a terrain facing up grows downward
    /// by `reach`, and sideways only as far as its slopes turn). The mesh's box for any other mesh.
    pub fn behind_box(&self, reach: f32) -> Aabb {
        match self.behind {
            Some((to_min, to_max)) if !self.aabb.is_empty() => {
                Aabb { min: self.aabb.min - to_min * reach, max: self.aabb.max + to_max * reach }
            }
            _ => self.aabb,
        }
    }

    /// The box of the points from which a ray of length at most `reach` can meet one of the
    /// triangles of a [`RtcdMesh::solid_behind`] mesh from behind: its box grown by `reach` toward
    /// each side that some triangle's back faces, and by `reach` times the sine of the largest angle
    /// between a triangle's plane and that side elsewhere (a grazing ray). A terrain facing up grows
    /// down and sideways by `reach`, and up only by `reach` times the sine of its steepest slope. The
    /// mesh's box for any other mesh.
    pub fn back_face_box(&self, reach: f32) -> Aabb {
        match self.back_faces {
            Some((to_min, to_max)) if !self.aabb.is_empty() => {
                Aabb { min: self.aabb.min - to_min * reach, max: self.aabb.max + to_max * reach }
            }
            _ => self.aabb,
        }
    }

    /// Marks the mesh [`RtcdMesh::solid_behind`] (a chunk of a [`LevelMesh`]).
    fn set_solid_behind(&mut self) {
        self.behind = Some(behind_directions(&self.triangle_normals));
        self.back_faces = Some(back_face_directions(&self.triangle_normals));
    }
}

/// Each vertex's connected component of `triangles` (vertices joined by their triangles' edges), as
/// the component's lowest vertex index; `vertex_count` vertices, all used by some triangle.
fn vertex_components(vertex_count: usize, triangles: &[[u32; 3]]) -> Vec<u32> {
    // Union-find, each set's root its lowest vertex.
    let mut parent: Vec<u32> = (0..vertex_count as u32).collect();
    fn root(parent: &mut [u32], mut v: u32) -> u32 {
        while parent[v as usize] != v {
            let up = parent[parent[v as usize] as usize];
            parent[v as usize] = up;
            v = up;
        }
        v
    }
    for t in triangles {
        for k in 1..3 {
            let (a, b) = (root(&mut parent, t[0]), root(&mut parent, t[k]));
            let (lo, hi) = (a.min(b), a.max(b));
            parent[hi as usize] = lo;
        }
    }
    (0..vertex_count as u32).map(|v| root(&mut parent, v)).collect()
}

/// How far the points behind triangles of outward normals `normals` reach past the triangles' box,
/// per length behind: toward the box's minimum corner (per axis, the largest component of a normal
/// along that axis) and toward its maximum corner (the largest component against it), each in
/// `[0, 1]`.
fn behind_directions(normals: &[Vec3]) -> (Vec3, Vec3) {
    normals.iter().fold((Vec3::ZERO, Vec3::ZERO), |(to_min, to_max), n| {
        (to_min.max(n.max(Vec3::ZERO)), to_max.max((-*n).max(Vec3::ZERO)))
    })
}

/// How far the points from which a ray meets a triangle of outward normal `n` (one of `normals`)
/// from behind reach past the triangle, per ray length, toward the minimum and the maximum corner:
/// the vertex is `h - t d` for a hit point `h`, a length `t` and a direction `d` with `d · n > 0`, so
/// toward a side `e` it reaches up to `t` where `e · n <= 0` (`d = -e`), and `t` times
/// `sqrt(1 - (e · n)^2)` elsewhere (`d` along the triangle's plane).
fn back_face_directions(normals: &[Vec3]) -> (Vec3, Vec3) {
    let toward = |en: Vec3| {
        let graze = (Vec3::ONE - en * en).max(Vec3::ZERO);
        Vec3::select(
            en.cmple(Vec3::ZERO),
            Vec3::ONE,
            Vec3::new(graze.x.sqrt(), graze.y.sqrt(), graze.z.sqrt()),
        )
    };
    normals.iter().fold((Vec3::ZERO, Vec3::ZERO), |(to_min, to_max), n| {
        (to_min.max(toward(-*n)), to_max.max(toward(*n)))
    })
}

/// Positions scaled by `scale` per axis, and the triangles (`indices`, three per triangle) wound so
/// that they face the way they did: a scale with an odd number of negative axes mirrors the
/// geometry, which reverses every triangle's winding unless two of its corners swap.
pub fn scaled_mesh_data(positions: &[Vec3], indices: &[u32], scale: Vec3) -> (Vec<Vec3>, Vec<u32>) {
    let positions = positions.iter().map(|p| *p * scale).collect();
    let mut indices = indices.to_vec();
    if scale.x * scale.y * scale.z < 0.0 {
        for t in indices.chunks_exact_mut(3) {
            t.swap(1, 2);
        }
    }
    (positions, indices)
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};

    use super::*;
    use crate::shapes;

    /// Rim vertices ([`RtcdMesh::rim_motions`]) are the vertices whose normals run along a thin
    /// body: a flat tetrahedron's base corners (not its apex), the sharp edge of a 20° wedge; not a
    /// box's corners, however thin the box, nor a 60° wedge's, nor the concave corners of an L or a
    /// U bracket, whose bodies are thick along their faces' normals.
    #[test]
    fn rim_vertices_are_those_whose_rays_run_along_a_thin_body() {
        let rims = |m: &RtcdMesh| -> Vec<u32> {
            m.rim_motions().iter().enumerate().filter(|(_, r)| r.is_finite()).map(|(v, _)| v as u32).collect()
        };
        for height in [1e-3, 1e-6] {
            let (v, i) = shapes::flat_tetrahedron(1.0, height);
            let m = RtcdMesh::new("tetrahedron", &v, &i).unwrap();
            let corners: Vec<u32> = (0..4).filter(|&k| m.positions()[k as usize].y < 0.5 * height).collect();
            assert_eq!(rims(&m), corners, "{height} m high");
            let diag = m.aabb().extents().length();
            assert_eq!(m.least_rim_motion(), RIM_LEAST_MOTION * diag);
        }
        let new = |name: &str, (v, i): shapes::MeshData| RtcdMesh::new(name, &v, &i).unwrap();
        for half in [Vec3::splat(0.5), Vec3::new(0.5, 0.0005, 0.5)] {
            let m = new("box", shapes::cuboid(half));
            assert!(rims(&m).is_empty() && m.least_rim_motion().is_infinite(), "box {half}");
        }
        // Wedges 1 m long with an apex of `angle` degrees at x = 1.
        let wedge = |angle: f32| {
            let h = (0.5 * angle).to_radians().tan();
            new("wedge", shapes::extrude(&[(0.0, -h), (1.0, 0.0), (0.0, h)], 0.5))
        };
        let sharp = wedge(20.0);
        let apex: Vec<u32> =
            (0..sharp.positions().len() as u32).filter(|&v| sharp.positions()[v as usize].x > 0.99).collect();
        assert_eq!(apex.len(), 2);
        assert_eq!(rims(&sharp), apex);
        assert!(rims(&wedge(60.0)).is_empty());
        let l = new(
            "L",
            shapes::extrude(&[(0.0, 0.0), (1.0, 0.0), (1.0, 0.1), (0.1, 0.1), (0.1, 1.0), (0.0, 1.0)], 0.3),
        );
        assert!(rims(&l).is_empty());
        assert!(rims(&new("U bracket", shapes::u_bracket(1.0, 0.8, 0.1, 0.4))).is_empty());
    }

    /// The edges the hierarchy finds in a region are those a test of every edge finds, in the same
    /// order: on random regions (small, large, holding the whole mesh, beside it, empty) over a
    /// concave blob, a torus, a low-poly box, a 1 cm plate, a 2,000-triangle rock, and the chunks of
    /// an open terrain (whose seams between chunks are left out of their edges).
    #[test]
    fn edges_in_a_region_are_those_of_a_full_scan() {
        let meshes = [
            shapes::star_blob(0.5, 24, 14, 5, 0.3, 3),
            shapes::torus(0.5, 0.18, 32, 12),
            shapes::cuboid(Vec3::new(1.0, 0.5, 0.25)),
            shapes::cuboid(Vec3::new(0.5, 0.005, 0.5)),
            shapes::star_blob(1.0, 40, 26, 9, 0.4, 7),
        ]
        .map(|(v, i)| RtcdMesh::new("m", &v, &i).unwrap());
        // A wavy 12 x 12 terrain with a ridge along x = 0, in chunks of 24 triangles.
        let (mut p, idx) = level::tests::terrain(12, 12.0);
        p.iter_mut().filter(|q| q.x.abs() < 1e-3).for_each(|q| q.y += 0.5);
        let level = LevelMesh::with_chunk_triangles("terrain", &p, &idx, 24).unwrap();
        let chunks: Vec<&RtcdMesh> = level.chunks().iter().map(|c| &**c).collect();
        assert!(chunks.len() > 4 && chunks.iter().any(|c| !c.edges().is_empty()));
        let meshes: Vec<&RtcdMesh> = meshes.iter().chain(chunks).collect();
        let mut rng = rand_pcg::Pcg64::seed_from_u64(5);
        let (mut found, mut all, mut some) = (0, 0, 0);
        for &mesh in &meshes {
            let b = mesh.aabb();
            for _ in 0..400 {
                let size = b.extents() * rng.random_range(0.0..1.5f32);
                let corner = b.min - 0.5 * b.extents()
                    + b.extents() * Vec3::new(rng.random(), rng.random(), rng.random()) * 2.0;
                let region = Aabb::new(corner, corner + size);
                let expected: Vec<u32> = (0..mesh.edges().len() as u32)
                    .filter(|&k| {
                        let [a, c] = mesh.edges()[k as usize];
                        let (pa, pc) = (mesh.positions()[a as usize], mesh.positions()[c as usize]);
                        !region.is_empty()
                            && pa.min(pc).cmple(region.max).all()
                            && pa.max(pc).cmpge(region.min).all()
                    })
                    .collect();
                let mut got = vec![u32::MAX];
                mesh.edges_in(&region, &mut got);
                assert_eq!(got[0], u32::MAX, "appends");
                assert_eq!(&got[1..], &expected[..]);
                found += expected.len();
                all += usize::from(expected.len() == mesh.edges().len());
                some += usize::from(!expected.is_empty() && expected.len() < mesh.edges().len());
            }
            let mut every = Vec::new();
            mesh.edges_in(&b.extended(0.1), &mut every);
            assert_eq!(every.len(), mesh.edges().len());
        }
        assert!(found > 1000 && all > 100 && some > 200, "{found} {all} {some}");
    }
}
