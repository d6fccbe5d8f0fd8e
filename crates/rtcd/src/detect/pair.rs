//! One pair, one step: the displacement criterion (IRTCD 2013 Eq. 2) picks standard or iterative
//! tracing, rays are cast from both meshes' vertices, validated (Hermann 2008 Alg. 1), re-projected
//! (2014 §3.2) and reduced to manifolds. Against a box ([`RtcdMesh::cuboid`]) a vertex gets the exact
//! contact of one of its faces instead of a ray ([`box_vertex`]).

use std::collections::HashMap;

use glam::{Mat3A, Vec3, Vec3A};

use super::{PairState, RayKind, RayRecord, box_vertex_face};
use crate::{
    aabb::Aabb,
    bvh::BvhNode,
    contact::{
        ContactCandidate, ContactManifold, FeatureId, RayContact, ReduceScratch, ray_depth,
        reduce_manifolds_with, reproject,
    },
    mesh::RtcdMesh,
    metrics::{ERROR_DEPTH_TOLERANCE, ErrorMetrics, StepMetrics},
    narrow_phase::{PairInput, RayDebug, RayOutcome, StepMode, StepOptions},
    params::RtcdParams,
    pose::Pose,
    ray::Ray,
    trace::{LineHits, NO_SKIP, WalkOutcome, walk},
};

/// One pair's output of [`detect_pair`]. Its figures go to the caller's sum, but for the two
/// floating-point sums, which the caller adds in input order (the same total whatever the
/// workers' split).
pub(crate) struct PairResult {
    pub mode: StepMode,
    pub manifolds: Vec<ContactManifold>,
    pub rays: Vec<RayDebug>,
    pub contacts: Vec<ContactCandidate>,
    /// [`StepMetrics::cumulative_ray_length`] of the pair.
    pub ray_length: f64,
    /// [`StepMetrics::cumulative_depth`] of the pair.
    pub depth: f64,
    /// See [`crate::PairOutput::moving`].
    pub moving: bool,
}

/// Per-thread buffers reused from pair to pair, so a step allocates little beyond its output.
#[derive(Default)]
pub(crate) struct Scratch {
    contacts: Vec<RayContact>,
    candidates: Vec<ContactCandidate>,
    reduce: ReduceScratch,
    /// Edge contacts of the step ([`edge_direction`]).
    edge_contacts: Vec<ContactCandidate>,
    /// The edges an iterative step tests.
    edges: Vec<u32>,
    /// Motion contacts of the step ([`pair_motion_contacts`]).
    motion_contacts: Vec<ContactCandidate>,
}

/// One direction of a pair: rays from `from`'s vertices traced against `to`, in `to`'s frame.
pub(crate) struct Direction<'a> {
    pub from: &'a RtcdMesh,
    pub to: &'a RtcdMesh,
    /// Maps `from`'s frame into `to`'s frame.
    pub from_to: Pose,
    /// `false`: shape 1's vertices against shape 2; `true`: shape 2's against shape 1.
    pub from_shape2: bool,
}

impl Direction<'_> {
    /// The two directions of a pair.
    pub fn both<'a>(input: &PairInput<'a>) -> [Direction<'a>; 2] {
        [
            Direction {
                from: input.mesh1,
                to: input.mesh2,
                from_to: input.pos12.inverse(),
                from_shape2: false,
            },
            Direction { from: input.mesh2, to: input.mesh1, from_to: input.pos12, from_shape2: true },
        ]
    }

    /// See [`candidate_region`].
    pub fn candidate_region(&self, distance_extension: f32) -> Aabb {
        candidate_region(self.from, self.to, &self.from_to, distance_extension)
    }

    /// See [`vertex_candidate_region`].
    pub fn vertex_candidate_region(&self, params: &RtcdParams) -> Aabb {
        vertex_candidate_region(self.from, self.to, &self.from_to, params)
    }

    /// See [`solid_reach`].
    pub fn solid_reach(&self, params: &RtcdParams) -> Option<f32> {
        solid_reach(self.from, self.to, params)
    }

    /// The inward ray of vertex `v`, in `to`'s frame.
    #[inline]
    pub fn ray(&self, v: u32) -> Ray {
        let p = self.from.positions()[v as usize];
        let n = self.from.normals()[v as usize];
        Ray::new(self.from_to.transform_point(p), self.from_to.transform_vector(-n))
    }
}

/// Hermann 2008 §3.2 with the 2014 extension: where candidate vertices of `from` lie, in `from`'s
/// frame: the overlap of the two bounding boxes grown by `distance_extension`. `from_to` maps `from`'s
/// frame into `to`'s. Empty when the boxes are farther apart than twice the extension.
pub fn candidate_region(from: &RtcdMesh, to: &RtcdMesh, from_to: &Pose, distance_extension: f32) -> Aabb {
    let to_in_from = to.aabb().transformed(&from_to.inverse());
    from.aabb().intersection(to_in_from).extended(distance_extension)
}

/// How far a vertex ray of `from` may travel into `to` and still count a back-face hit as a contact
/// when `to` is [solid behind](RtcdMesh::solid_behind) (a level chunk), or closed
/// ([`RtcdMesh::is_closed`], not a [`RtcdMesh::cuboid`]) with [`RtcdParams::closed_reach`]:
/// `from`'s bounding-box diagonal plus the pair's `culling_dist`. `None` for any other `to`.
///
/// Hermann 2008, Alg. 1 counts a hit on the other mesh's back face only before the ray leaves its
/// own body (its exit distance), which tells a vertex inside the other body from one whose ray
/// merely passes through it. Behind a solid-behind surface a point is inside the solid whatever its
/// own body's thickness, so there the limit is the larger of the exit distance and this reach
/// ([`ray_limit`]): a thin plate or a small pebble that sank deeper than its thickness under a
/// terrain still gets contacts from its own vertices, whose rays leave it before they reach the
/// surface (the terrain's vertices rarely land inside such a body). The reach is local, a body's
/// own size: a far back face (an overhang above a cave) does not count. It serves the vertices
/// behind the chunk's surface, in its box grown behind the triangles by the reach
/// ([`solid_behind_box`]); a vertex elsewhere keeps its exit distance. A chunk sees only its own
/// triangles: a ray from a vertex above a neighbouring chunk, which enters the ground through that
/// chunk and comes back out through this one, meets this one from behind first, and would be a
/// false contact beyond the exit distance. A ray from behind this chunk's surface that leaves
/// through this one and comes back out of another within the reach still counts (a narrow ridge
/// under a body); the chunk cannot tell.
///
/// The same holds inside a closed, consistently wound mesh (what [`RtcdMesh::new`] makes of a
/// watertight input): a ray whose first hit is a back face starts inside it. A ray from a vertex
/// outside meets a front face first, which ends it, so the longer limit finds no false contact
/// there, except on a surface that passes through itself. Into a closed mesh the reach serves the
/// vertices where their body is thinner than the pair's `culling_dist` ([`vertex_reach`]), and
/// a hit beyond the exit distance counts only as the nearer way out ([`nearer_way_out`]). With the
/// option off, rays into closed meshes keep Hermann's exit distance. A box built by
/// [`RtcdMesh::cuboid`] gets exact contacts instead of rays, inside it at any depth: no reach.
pub fn solid_reach(from: &RtcdMesh, to: &RtcdMesh, params: &RtcdParams) -> Option<f32> {
    (to.solid_behind() || closed_reach_into(to, params))
        .then(|| from.aabb().extents().length() + params.culling_dist)
}

/// Where in a [solid-behind](RtcdMesh::solid_behind) `to`'s own frame a vertex of `from` must lie
/// for its ray to take the pair's [`solid_reach`] ([`solid_at`]): behind the surface, in
/// [`RtcdMesh::behind_box`] for that reach, grown by 1e-4 of `to`'s diagonal against rounding.
/// `None` for any other `to`, into which a solid reach (the closed one) serves every vertex. Both
/// backends use it (on the GPU, `Pair.behind_a_min` and the like).
pub fn solid_behind_box(from: &RtcdMesh, to: &RtcdMesh, params: &RtcdParams) -> Option<Aabb> {
    let reach = solid_reach(from, to, params).filter(|_| to.solid_behind())?;
    Some(to.behind_box(reach).extended(1e-4 * to.aabb().extents().length()))
}

/// The solid reach (`solid`, [`solid_reach`]) of a vertex ray starting at `origin` (in the other
/// mesh's frame): none outside the other mesh's [`solid_behind_box`] (`behind`), where the vertex is
/// not behind its surface.
#[inline]
pub fn solid_at(solid: Option<f32>, behind: Option<&Aabb>, origin: Vec3) -> Option<f32> {
    solid.filter(|_| behind.is_none_or(|b| b.contains(origin)))
}

/// Whether vertex rays into `to` take the [`solid_reach`] for `to` being closed
/// ([`RtcdParams::closed_reach`]; not a [`RtcdMesh::cuboid`], whose vertices get exact contacts).
/// Such a ray's back-face hit beyond its exit distance counts only when it is the nearer way out
/// of `to` along the ray's line ([`nearer_way_out`]). Both backends decide with it, per pair.
#[inline]
pub fn closed_reach_into(to: &RtcdMesh, params: &RtcdParams) -> bool {
    params.closed_reach && to.is_closed() && to.cuboid_half_extents().is_none()
}

/// With the closed reach ([`closed_reach_into`], `closed`), whether a back-face hit of `ray` at `t`
/// beyond the vertex's exit distance `exit` counts: when no triangle of `to` lies within `t` along
/// the opposite ray, so that the hit is the nearer way out of `to` along the line. Always within
/// `exit` (Hermann 2008, Alg. 1), and without the closed reach.
///
/// A vertex deeper inside a closed mesh than its own body is thick leaves it both ways along its
/// line. The deepest vertices of a thin limb pressed into a slab look back up the way they came
/// in, to the near face; the vertices on the limb's far side look on, through the slab, to its far
/// face, which would push the limb further in. Of the two, the nearer way out is the one that
/// separates the bodies; the other vertex gets no contact, as under Hermann's rule. Decided at
/// the standard trace (the tracer of [`RtcdParams::tracer`], on both backends); an iterative walk
/// continues from the triangle its record holds, on the side of the mesh that was the nearer way
/// out, and is not tested again.
#[inline]
pub fn nearer_way_out(
    to: &RtcdMesh,
    ray: &Ray,
    t: f32,
    exit: f32,
    closed: bool,
    params: &RtcdParams,
) -> bool {
    !closed
        || t <= exit
        || params.tracer.trace_line(to, &Ray::new(ray.origin, -ray.dir), 0.0, t, NO_SKIP).forward.is_none()
}

/// The reach of the ray of a vertex of exit distance `exit` into `to`, of `solid` the direction's
/// [`solid_reach`]: `solid`, but into a closed mesh ([`closed_reach_into`], `closed`) only where
/// the casting body is thinner along the ray than the pair's `culling_dist` (2014 Eq. 1), `None`
/// elsewhere (Hermann's exit distance).
///
/// Where the body is thinner than that, a vertex moving within the predictions' reach in a step
/// can end deeper in the other body than its own body is thick, and Hermann's rule loses it: a
/// thin plate or limb falling into a box mesh sinks on. Where the body is thicker, a vertex must go
/// in deeper than `culling_dist` for that, farther than the predictions look ahead; its ray keeps
/// its exit distance, which also spares the rays of the bodies of an ordinary pile, thicker than
/// their edges are long, any trace beyond it. Both backends use it (on the GPU, inside
/// `ray_limit` of `shaders/hermann.wgsl`).
#[inline]
pub fn vertex_reach(solid: Option<f32>, closed: bool, exit: f32, params: &RtcdParams) -> Option<f32> {
    if closed && exit >= params.culling_dist { None } else { solid }
}

/// The ray length within which a back-face hit is a contact: the vertex's exit distance `exit`, or
/// the larger of it and `reach` ([`vertex_reach`]: into a solid-behind mesh, or a closed one with
/// [`RtcdParams::closed_reach`], [`solid_reach`]). Both backends use it.
#[inline]
pub fn ray_limit(exit: f32, reach: Option<f32>) -> f32 {
    match reach {
        Some(r) => exit.max(r),
        None => exit,
    }
}

/// The candidate region of the vertex rays of `from` into `to` ([`candidate_region`] with
/// [`RtcdParams::candidate_extension`]); into a solid-behind `to`, with `to`'s box grown behind its
/// surface by [`solid_reach`] ([`RtcdMesh::behind_box`]), since a vertex that far under the
/// surface can still be in contact. Both backends pick their vertex candidates with it; the edge
/// rays keep [`candidate_region`].
pub fn vertex_candidate_region(from: &RtcdMesh, to: &RtcdMesh, from_to: &Pose, params: &RtcdParams) -> Aabb {
    let to_in_from = vertex_clip_box(from, to, params).transformed(&from_to.inverse());
    from.aabb().intersection(to_in_from).extended(params.candidate_extension())
}

/// The box, in `to`'s frame, that [`vertex_candidate_region`] clips `from`'s box to: `to`'s
/// bounding box, or into a solid-behind `to` its box grown behind its surface by [`solid_reach`]
/// ([`RtcdMesh::behind_box`]). It depends on the meshes and the pair's lengths only, so the GPU
/// backend keeps it with the pair and derives the region from it on the device at every step.
pub fn vertex_clip_box(from: &RtcdMesh, to: &RtcdMesh, params: &RtcdParams) -> Aabb {
    match solid_reach(from, to, params) {
        Some(reach) => to.behind_box(reach),
        None => to.aabb(),
    }
}

/// How much farther than [`ray_reach`] a pair's vertex rays find contacts around the meshes'
/// surfaces: the larger [`solid_reach`] of its two directions into a
/// [solid-behind](RtcdMesh::solid_behind) mesh, 0 when neither mesh is. The reach into a closed
/// mesh ([`RtcdParams::closed_reach`]) is not counted: there it only matters for a body wholly
/// inside the other, which [`separation_for_reach_from`] tells apart.
pub fn pair_solid_reach(mesh1: &RtcdMesh, mesh2: &RtcdMesh, params: &RtcdParams) -> f32 {
    let reach = |from, to: &RtcdMesh| {
        if to.solid_behind() { solid_reach(from, to, params).unwrap_or(0.0) } else { 0.0 }
    };
    reach(mesh1, mesh2).max(reach(mesh2, mesh1))
}

/// A direction that no axis-aligned edge or face of a mesh lies along, for [`inside_closed`].
const INSIDE_TEST_DIR: Vec3 = Vec3::new(0.267_261_24, 0.534_522_5, 0.801_783_7);

/// Whether point `p` (in `to`'s frame) is inside the closed mesh `to`: within its box, and the
/// first triangle a ray from it meets is met from inside (the test of Hermann 2008, Alg. 1, on a
/// fixed direction).
fn inside_closed(to: &RtcdMesh, p: Vec3) -> bool {
    to.aabb().contains(p)
        && crate::params::TracerKind::Bvh
            .trace_line(to, &Ray::new(p, INSIDE_TEST_DIR), 0.0, f32::INFINITY, NO_SKIP)
            .forward
            .is_some_and(|h| h.from_inside)
}

/// The [`solid_reach`] into a closed mesh ([`RtcdParams::closed_reach`]) of a pair whose surfaces
/// do not meet, where one body can only touch the other from inside it: for each direction whose
/// `to` takes the closed reach, that reach when a vertex of each connected component of `from`
/// ([`RtcdMesh::component_vertices`]) is inside `to` (a component whose surface does not meet `to`'s
/// is wholly inside or wholly outside it) and some vertex of `from` takes the reach
/// ([`vertex_reach`]); the larger of the two, 0 when neither body is inside.
fn engulfed_reach(mesh1: &RtcdMesh, mesh2: &RtcdMesh, pos12: &Pose, params: &RtcdParams) -> f32 {
    let reach = |from: &RtcdMesh, to: &RtcdMesh, from_to: &Pose| {
        let inside = closed_reach_into(to, params)
            && from.exit_distances().iter().any(|&e| e < params.culling_dist)
            && from
                .component_vertices()
                .iter()
                .any(|&v| inside_closed(to, from_to.transform_point(from.positions()[v as usize])));
        if inside { solid_reach(from, to, params).unwrap_or(0.0) } else { 0.0 }
    };
    reach(mesh1, mesh2, &pos12.inverse()).max(reach(mesh2, mesh1, pos12))
}

/// IRTCD 2013 Eq. 2: an upper bound on how far any point of either body moved relative to the other
/// between two relative poses (shape 2 in shape 1's frame); `radius1`, `radius2`: each mesh's
/// [`RtcdMesh::max_radius`].
///
/// The paper multiplies the rotation angle by the larger of the two radii. Seen from mesh 1's frame,
/// mesh 1 does not move and a point `v` of mesh 2 moves by at most `|Δt₁₂| + angle · |v|`; seen from
/// mesh 2's frame, the same with the roles swapped. Both frames describe the same relative motion, so
/// the smaller of the two bounds the displacement too; it is never above the paper's, and for a small
/// body on a large one (a pile on a 40 m ground box) it does not turn a milliradian of rocking into
/// centimetres.
pub fn max_displacement(reference: &Pose, current: &Pose, radius1: f32, radius2: f32) -> f32 {
    let angle = reference.rotation_angle_to(current);
    let in_frame1 = (reference.translation - current.translation).length() + angle * radius2;
    let (r21, c21) = (reference.inverse(), current.inverse());
    let in_frame2 = (r21.translation - c21.translation).length() + angle * radius1;
    in_frame1.min(in_frame2)
}

/// A cheap sufficient test of `max_displacement(reference, current, radius1, radius2) <= limit`,
/// without the arctangent: the bound in shape 1's frame, and when that fails and `radius1` is the
/// smaller radius, in shape 2's frame (which costs the inverse poses), with the rotation angle
/// `2 atan(s / |w|)` (`s`, `w`: the relative quaternion's vector length and scalar, the same angle
/// in both frames) replaced by its upper bound `2 s / |w|` (`atan x <= x`) and each sum inflated
/// by 1e-5 against rounding; before both, the frame-1 test in squares, without square root or
/// division, which decides the pairs moved by under ~0.7 `limit`. It never says yes where [`max_displacement`] is above `limit` (the
/// smaller of the two frames' bounds is at most either), so deciding with it first changes no
/// decision; at rest, where nearly every pair is far under the threshold, it spares most pairs the
/// full bound, a small body on the large ground box too.
#[inline]
fn surely_within(reference: &Pose, current: &Pose, radius1: f32, radius2: f32, limit: f32) -> bool {
    let q = reference.rotation.conjugate() * current.rotation;
    let shift = reference.translation - current.translation;
    // First without square root or division: `a + b <= sqrt(2 (a² + b²))`, so with `a` the shift
    // and `b = 2 s r₂ / |w|`, `2 (|shift|² w² + 4 s² r₂²) <= limit² w²` gives the frame-1 test
    // (inflated by 1e-4 against rounding). It decides every pair moved by under ~0.7 `limit`.
    let (s2, w2) = (q.xyz().length_squared(), q.w * q.w);
    if 2.0 * (shift.length_squared() * w2 + 4.0 * s2 * radius2 * radius2) * (1.0 + 1e-4) <= limit * limit * w2
    {
        return true;
    }
    let angle_bound = 2.0 * s2.sqrt() / q.w.abs();
    let within = |bound: f32| bound * (1.0 + 1e-5) <= limit;
    within(shift.length() + angle_bound * radius2)
        || (radius1 < radius2 && {
            let (r21, c21) = (reference.inverse(), current.inverse());
            within((r21.translation - c21.translation).length() + angle_bound * radius1)
        })
}

/// Most node pairs [`separation_bound`] opens per frame before it settles for the bound it has.
const SEPARATION_VISITS: usize = 96;

/// A lower bound on the distance between two meshes, shape 2 at `pos12` in shape 1's frame.
///
/// A best-first descent of both BVHs, nearest node pair first, one mesh's node boxes moved into the
/// other's frame (a moved box contains its triangles, so the gap between two boxes is never more
/// than the distance between their contents): the gap of the nearest leaf pair, or, once
/// `SEPARATION_VISITS` (96) node pairs were opened, the smallest gap still pending. In shape 1's frame,
/// and in shape 2's when that gives 0; 0 when boxes overlap down to the leaves.
pub fn separation_bound(mesh1: &RtcdMesh, mesh2: &RtcdMesh, pos12: &Pose) -> f32 {
    separation_bound_beyond(mesh1, mesh2, pos12, f32::INFINITY)
}

/// [`separation_bound`], sharpened only as far as telling whether the meshes are more than
/// `enough` apart: the descent stops as soon as every pending node pair is, with the smallest of
/// their gaps (a lower bound above `enough`). Below `enough`, the same bound as
/// [`separation_bound`].
pub fn separation_bound_beyond(mesh1: &RtcdMesh, mesh2: &RtcdMesh, pos12: &Pose, enough: f32) -> f32 {
    // The descent in shape 1's frame, and when it ends at 0, the one in shape 2's frame.
    let g1 = bvh_gap(mesh1.bvh(), mesh2.bvh(), pos12, enough);
    let g = if g1 > 0.0 { g1 } else { g1.max(bvh_gap(mesh2.bvh(), mesh1.bvh(), &pos12.inverse(), enough)) };
    // An empty mesh has no hierarchy: no bound.
    if g.is_finite() { g } else { 0.0 }
}

/// A box as its two corners in SIMD lanes (`Vec3A`): the descents' working form.
type Corners = (Vec3A, Vec3A);

/// A node's box.
#[inline]
fn corners(node: &BvhNode) -> Corners {
    (Vec3A::from_array(node.min), Vec3A::from_array(node.max))
}

/// `other`'s node boxes moved into `own`'s frame by `pose` ([`Aabb::transformed`], with the
/// rotation and its absolute matrix computed once).
struct MovedNodes<'a> {
    nodes: &'a [BvhNode],
    rot: Mat3A,
    abs: Mat3A,
    translation: Vec3A,
}

impl<'a> MovedNodes<'a> {
    fn new(nodes: &'a [BvhNode], pose: &Pose) -> Self {
        let rot = Mat3A::from_quat(pose.rotation);
        let abs = Mat3A::from_cols(rot.x_axis.abs(), rot.y_axis.abs(), rot.z_axis.abs());
        Self { nodes, rot, abs, translation: pose.translation.into() }
    }

    /// Node `j`'s box, moved: its centre moved, its half extents through the absolute matrix.
    #[inline]
    fn corners(&self, j: u32) -> Corners {
        let (lo, hi) = corners(&self.nodes[j as usize]);
        let c = self.rot * ((lo + hi) * 0.5) + self.translation;
        let r = self.abs * ((hi - lo) * 0.5);
        (c - r, c + r)
    }
}

/// The distance between two boxes, 0 when they overlap.
#[inline]
fn box_gap((amin, amax): Corners, (bmin, bmax): Corners) -> f32 {
    (amin - bmax).max(bmin - amax).max(Vec3A::ZERO).length()
}

/// The two child pairs of node pair `(i, j)` (not two leaves), with their gaps: `own`'s node is
/// opened when it is the larger box (or the only internal one), else `other`'s. The children of an
/// internal node in pre-order are the next node and where that one's miss link points.
#[inline]
fn child_pairs(own: &[BvhNode], moved: &MovedNodes, i: u32, j: u32) -> [(f32, u32, u32); 2] {
    let (a, b) = (&own[i as usize], &moved.nodes[j as usize]);
    let children = |nodes: &[BvhNode], k: u32| [k + 1, nodes[k as usize + 1].miss];
    if a.leaf_range().is_none()
        && (b.leaf_range().is_some() || a.aabb().surface_area() >= b.aabb().surface_area())
    {
        let cb = moved.corners(j);
        children(own, i).map(|c| (box_gap(corners(&own[c as usize]), cb), c, j))
    } else {
        let ca = corners(a);
        children(moved.nodes, j).map(|c| (box_gap(ca, moved.corners(c)), i, c))
    }
}

/// [`separation_bound_beyond`] in `own`'s frame; `pose` maps `other`'s frame into it. Infinite when
/// either hierarchy is empty.
fn bvh_gap(own: &[BvhNode], other: &[BvhNode], pose: &Pose, enough: f32) -> f32 {
    use std::{cmp::Reverse, collections::BinaryHeap};
    if own.is_empty() || other.is_empty() {
        return f32::INFINITY;
    }
    let moved = MovedNodes::new(other, pose);
    // Gaps are never negative, so their bits order like the values: a min-heap on them. Among equal
    // gaps (overlapping boxes are all at 0) the deepest pair comes first, so touching meshes reach a
    // leaf pair at 0 in about two tree depths of visits instead of opening every overlapping pair
    // level by level.
    let entry = |d: f32, depth: u32, i: u32, j: u32| Reverse((d.to_bits(), u32::MAX - depth, i, j));
    let mut pending = BinaryHeap::with_capacity(2 * SEPARATION_VISITS + 1);
    pending.push(entry(box_gap(corners(&own[0]), moved.corners(0)), 0, 0, 0));
    for _ in 0..SEPARATION_VISITS {
        let Some(Reverse((bits, height, i, j))) = pending.pop() else { break };
        if f32::from_bits(bits) > enough {
            // Nothing pending is nearer.
            return f32::from_bits(bits);
        }
        if own[i as usize].leaf_range().is_some() && other[j as usize].leaf_range().is_some() {
            // The nearest pending pair is two leaves: nothing pending can be nearer.
            return f32::from_bits(bits);
        }
        let depth = u32::MAX - height + 1;
        for (g, ci, cj) in child_pairs(own, &moved, i, j) {
            pending.push(entry(g, depth, ci, cj));
        }
    }
    pending.peek().map_or(f32::INFINITY, |Reverse((bits, ..))| f32::from_bits(*bits))
}

/// [`bvh_gap`] for [`separation_for_reach`], depth first, where only the bound above `enough` needs
/// to be the best-first descent's: the node pairs within `enough` of each other are opened, nearer
/// child first, the others set aside, and the smallest gap set aside is the bound. Best first opens
/// the same node pairs and returns the same bound, unless either meets a leaf pair within `enough`
/// or opens `SEPARATION_VISITS` node pairs: then each returns the smallest gap of the pairs it left
/// pending (or set aside), within `enough` in the first case; the two can differ there. A stack
/// costs less than a heap here, for the same decisions.
///
/// `witness` is a leaf pair checked first (any pair of indices that are not both leaves: none); it
/// becomes the leaf pair where a descent ends within `enough`.
fn bvh_gap_within(
    own: &[BvhNode],
    other: &[BvhNode],
    pose: &Pose,
    enough: f32,
    witness: &mut [u32; 2],
) -> f32 {
    if own.is_empty() || other.is_empty() {
        return f32::INFINITY;
    }
    let moved = MovedNodes::new(other, pose);
    // The leaf pair the last descent ended at, if still within `enough`: the descent would end at a
    // leaf pair within `enough` too, and either value decides alike (`separation_for_reach_from`).
    let [wi, wj] = *witness;
    if let (Some(a), Some(b)) = (own.get(wi as usize), other.get(wj as usize))
        && a.leaf_range().is_some()
        && b.leaf_range().is_some()
    {
        let g = box_gap(corners(a), moved.corners(wj));
        if g <= enough {
            return g;
        }
    }
    // Each visit pops one pair and pushes at most two.
    let mut stack = arrayvec::ArrayVec::<(f32, u32, u32), { SEPARATION_VISITS + 2 }>::new();
    let mut set_aside = f32::INFINITY;
    let mut keep = |stack: &mut arrayvec::ArrayVec<_, _>, e: (f32, u32, u32)| {
        if e.0 > enough {
            set_aside = set_aside.min(e.0);
        } else {
            stack.push(e);
        }
    };
    keep(&mut stack, (box_gap(corners(&own[0]), moved.corners(0)), 0, 0));
    for _ in 0..SEPARATION_VISITS {
        let Some((g, i, j)) = stack.pop() else { break };
        if own[i as usize].leaf_range().is_some() && other[j as usize].leaf_range().is_some() {
            *witness = [i, j];
            // Within `enough`; with every pair still pending or set aside, a lower bound.
            return stack.iter().fold(g.min(set_aside), |m, e| m.min(e.0));
        }
        let [first, second] = child_pairs(own, &moved, i, j);
        // The nearer child on top.
        let (near, far) = if second.0 < first.0 { (second, first) } else { (first, second) };
        keep(&mut stack, far);
        keep(&mut stack, near);
    }
    stack.iter().fold(set_aside, |m, e| m.min(e.0))
}

/// How far from the other mesh a ray of a standard trace can find anything: 0 without prediction (a
/// ray counts a contact only when it meets the other mesh before leaving its own, which needs the
/// meshes to touch), `culling_dist` with it (predictions stop there). A pair without ray records
/// whose [`separation_bound`] is above this needs no standard trace: it would find nothing.
pub fn ray_reach(params: &RtcdParams) -> f32 {
    if params.prediction { params.culling_dist } else { 0.0 }
}

/// The separation bound the iterative algorithm keeps for a record-less pair:
/// [`separation_bound_beyond`] the rays' reach ([`ray_reach`]), from the descent in shape 1's frame
/// alone. Its decisions need no more: a standard trace is skipped when the bound is above the reach,
/// and put off while the displacement stays under `separation - reach` ([`needs_standard_trace`]),
/// which only matters above the displacement threshold, where checking again costs one more
/// (short) descent. These descents open far fewer node pairs than [`separation_bound`]'s, for the
/// same rays. The second descent, in shape 2's frame, which [`separation_bound_beyond`] makes when
/// the first ends at 0, is not made: it rarely turns a zero into a positive bound, and costs more
/// than the few standard steps it would spare (those steps find the same contacts, at most a step
/// apart). Both backends keep this choice.
pub fn separation_for_reach(mesh1: &RtcdMesh, mesh2: &RtcdMesh, pos12: &Pose, params: &RtcdParams) -> f32 {
    separation_for_reach_from(mesh1, mesh2, pos12, params, &mut [0, 0])
}

/// [`separation_for_reach`] for a pair that keeps `witness`: the BVH leaf pair (shape 1's node,
/// shape 2's) where its last descent found the meshes within the rays' reach (`[0, 0]` before the
/// first, or any pair of indices that are not both leaves), updated here. Both backends keep one per
/// pair. When that leaf pair is still within the reach, its gap is returned without a descent. The value is
/// then at most the reach, as the descent's would be (without prediction both are 0), and
/// [`needs_standard_trace`] and [`separation_before_trace`] decide alike for any value up to the
/// reach: the same steps are traced. In a settling pile most descents that end within the reach
/// end at the witness, so one box test replaces a descent of a few dozen visits.
///
/// With a [solid-behind](RtcdMesh::solid_behind) mesh in the pair (a level chunk), whose contacts
/// are found as far as [`pair_solid_reach`] behind its surface, the bound is the distance to that
/// reach around the surface: the descent's bound less the solid reach (at least 0), the descent
/// settling the same question about a reach grown by as much.
///
/// With [`RtcdParams::closed_reach`], a body wholly inside a closed mesh (their surfaces apart, a
/// vertex of each of its components inside the other: [`RtcdMesh::component_vertices`]) has
/// contacts as far as the [`solid_reach`] into that mesh from its surface: there the bound is the
/// descent's to that reach, less it (at least 0). A body outside keeps the surfaces' bound, since
/// it cannot get inside without its surface first crossing the other's.
pub fn separation_for_reach_from(
    mesh1: &RtcdMesh,
    mesh2: &RtcdMesh,
    pos12: &Pose,
    params: &RtcdParams,
    witness: &mut [u32; 2],
) -> f32 {
    let solid = pair_solid_reach(mesh1, mesh2, params);
    let g = bvh_gap_within(mesh1.bvh(), mesh2.bvh(), pos12, ray_reach(params) + solid, witness);
    // An empty mesh has no hierarchy: no bound.
    if !g.is_finite() {
        return 0.0;
    }
    let bound = (g - solid).max(0.0);
    if bound <= ray_reach(params) {
        return bound;
    }
    // Surfaces apart: with the closed reach, a body wholly inside the other still has contacts
    // within its reach of the surface.
    let engulfed = engulfed_reach(mesh1, mesh2, pos12, params);
    if engulfed <= solid {
        return bound;
    }
    let g = bvh_gap_within(mesh1.bvh(), mesh2.bvh(), pos12, ray_reach(params) + engulfed, witness);
    (g - engulfed).max(0.0)
}

/// The separation bound a standard step of `input` computes before tracing: for a pair of the
/// iterative algorithm that kept no ray record (`recordless`) and is not forced to the standard
/// tracer, [`separation_for_reach`], and whether it puts the meshes out of the rays' reach
/// ([`ray_reach`]): such a step traces nothing, and the records stay empty. `(None, false)`
/// otherwise. The descent starts from the pair's `witness` ([`separation_for_reach_from`]). Both
/// backends decide with it.
pub fn separation_before_trace(
    input: &PairInput,
    standard: bool,
    recordless: bool,
    params: &RtcdParams,
    opts: &StepOptions,
    witness: &mut [u32; 2],
) -> (Option<f32>, bool) {
    let bound = (standard && params.iterative && !opts.force_standard && recordless)
        .then(|| separation_for_reach_from(input.mesh1, input.mesh2, &input.pos12, params, witness));
    (bound, bound.is_some_and(|b| b > ray_reach(params)))
}

/// What a pair kept from its last standard trace, for [`needs_standard_trace`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TraceReference {
    /// The relative pose `(t_ni, q_ni)` of that step.
    pub pose: Pose,
    /// [`separation_for_reach`] at that pose.
    pub separation: f32,
    /// Whether the pair kept any ray record (contact or prediction) since.
    pub has_records: bool,
}

/// Whether a pair must be traced with the standard tracer this step (both backends decide with it).
///
/// IRTCD 2013 Eq. 2: yes once [`max_displacement`] since the reference exceeds
/// `displacement_threshold` (the walks from the records are only valid below it), or when there is
/// no reference. One exception, which changes no step's result (only the steps at which the pair is
/// traced again, and so its reference pose): a pair that kept no record and whose
/// meshes were at least `separation` apart at the reference cannot have come within reach of a
/// ray — penetration, or `culling_dist` with prediction — while the displacement stays under
/// `separation - reach` (the distance between two rigid bodies shrinks by at most the relative
/// displacement of their points), so the trace, which would find nothing, is put off until then.
/// Records include the edges kept by the edge rays (crossing, or within the rays' reach): two
/// coarse boxes closing in edge on edge, whose corners keep no prediction, keep their edges.
pub fn needs_standard_trace(
    reference: Option<&TraceReference>,
    pos12: &Pose,
    radius1: f32,
    radius2: f32,
    params: &RtcdParams,
) -> bool {
    let Some(r) = reference else { return true };
    // The cheap test first, against a displacement under which the answer is surely no: the
    // threshold, or for a record-less pair the gap left to the rays' reach when it is larger (a far
    // pair then skips the full bound at every step; shrunk by 1e-6 of itself, as that gap must not
    // be reached).
    let no_trace_under = if r.has_records {
        params.displacement_threshold
    } else {
        params.displacement_threshold.max((r.separation - ray_reach(params)) * (1.0 - 1e-6))
    };
    if surely_within(&r.pose, pos12, radius1, radius2, no_trace_under) {
        return false;
    }
    let d = max_displacement(&r.pose, pos12, radius1, radius2);
    if d <= params.displacement_threshold {
        return false;
    }
    r.has_records || d.is_nan() || d >= r.separation - ray_reach(params)
}

/// Whether a step of the pair runs the standard tracer: no iterative algorithm, a forced standard
/// step, a new pair (its state is for other meshes) or [`needs_standard_trace`]. Decided once per
/// pair and step, before [`is_quiet_step`] and [`detect_pair`].
pub(crate) fn takes_standard_step(
    input: &PairInput,
    state: &PairState,
    params: &RtcdParams,
    opts: &StepOptions,
) -> bool {
    !params.iterative
        || opts.force_standard
        || state.mesh_ids != (input.mesh1.id(), input.mesh2.id())
        || needs_standard_trace(
            state.trace_reference().as_ref(),
            &input.pos12,
            input.mesh1.max_radius(),
            input.mesh2.max_radius(),
            params,
        )
}

/// Whether an iterative step of the pair is sure to find nothing, so the caller can skip it: the
/// pair kept no ray record (nothing to walk from) and takes no standard step (`standard`, from
/// [`takes_standard_step`]), and no rim vertex of it moved far enough for a path
/// ([`rim_paths_due`]). The state of such a step only counts it (`steps_since_standard`);
/// [`detect_pair`] would return no contact.
pub(crate) fn is_quiet_step(
    input: &PairInput,
    params: &RtcdParams,
    state: &PairState,
    standard: bool,
    opts: &StepOptions,
) -> bool {
    is_quiet(standard, state.has_records(), opts) && !rim_paths_due(input, params)
}

/// Whether a pair with a flat body has motion paths to trace this step: one of its meshes has rim
/// vertices ([`RtcdMesh::rim_motions`]), and the pair moved since [`PairInput::previous`] by more
/// than the least motion of either direction ([`MotionLengths::least`]: a rim vertex's, or that of
/// the other body's vertices moving into the flat one). Such a pair has work without records, so it
/// is not quiet ([`is_quiet`]): a flat body falling onto another has no ray record before it lands.
pub fn rim_paths_due(input: &PairInput, params: &RtcdParams) -> bool {
    let flat = input.mesh1.least_rim_motion().min(input.mesh2.least_rim_motion()).is_finite();
    if !(flat && params.motion_rays && params.prediction) {
        return false;
    }
    let Some(previous) = input.previous.as_ref().filter(|p| p.is_valid()) else { return false };
    let least = Direction::both(input)
        .iter()
        .map(|d| motion_lengths(d.from, d.to, params).least)
        .fold(f32::INFINITY, f32::min);
    !surely_within(previous, &input.pos12, input.mesh1.max_radius(), input.mesh2.max_radius(), least)
}

/// Whether an iterative step of a pair is sure to find nothing, so that a backend skips it whole,
/// its motion rays too: the step is not standard (`standard`), errors are not measured, and the
/// pair keeps no ray record, crossing edge or tunnel (`has_records`, [`PairState::has_records`]).
/// The CPU backend decides with it from its pair states, the GPU backend from its slot mirrors,
/// both with [`rim_paths_due`] besides: a pair with a flat body that moved is not quiet.
pub fn is_quiet(standard: bool, has_records: bool, opts: &StepOptions) -> bool {
    !standard && !opts.measure_errors && !has_records
}

/// One step of one pair; `standard` from [`takes_standard_step`] on the same input and state. The
/// pair's figures are added to `sum` (a worker's share of the step's [`StepMetrics`]).
pub(crate) fn detect_pair(
    input: &PairInput,
    state: &mut PairState,
    params: &RtcdParams,
    opts: &StepOptions,
    scratch: &mut Scratch,
    standard: bool,
    sum: &mut StepMetrics,
) -> PairResult {
    let ids = (input.mesh1.id(), input.mesh2.id());
    let mut metrics = StepMetrics { pairs: 1, ..Default::default() };
    // A new pair's state is the default one, whose mesh ids (0, 0) no mesh has.
    if state.mesh_ids != ids {
        metrics.new_pairs = 1;
        *state = PairState { mesh_ids: ids, ..Default::default() };
    }
    let mode = if standard { StepMode::Standard } else { StepMode::Iterative };
    // A standard trace of a pair without records: first the separation bound, and no trace when it
    // puts the meshes out of the rays' reach (it would find nothing; the records stay empty).
    let recordless = !state.has_records();
    // [`separation_before_trace`]: the bound decides the trace, and is the separation kept when the
    // trace leaves no record.
    let (bound, separated) =
        separation_before_trace(input, standard, recordless, params, opts, &mut state.witness);
    let dirs = Direction::both(input);
    // Motion rays first: they need only the poses, and their tunnel contacts say which way the
    // edges through the other body leave.
    scratch.motion_contacts.clear();
    let approach = pair_motion_contacts(
        input,
        params,
        opts.prediction_distance,
        &mut state.tunnels,
        &mut metrics,
        &mut scratch.motion_contacts,
    );
    // Edge rays (Mochi 2024 §3.4), before the vertex rays: last step's vertex records pick the
    // edges (so a backend can trace them without waiting for this step's vertex rays).
    scratch.edge_contacts.clear();
    if separated {
        state.edge_records.iter_mut().for_each(Vec::clear);
    } else {
        let records = [state.records[0].as_slice(), state.records[1].as_slice()];
        pair_edge_contacts(
            input,
            params,
            standard,
            approach,
            records,
            &mut state.edge_records,
            &mut scratch.edges,
            &mut metrics,
            &mut scratch.edge_contacts,
        );
    }
    let mut rays = Vec::new();
    scratch.contacts.clear();
    let mut standard_in_contact = false;
    for (d, dir) in dirs.iter().enumerate() {
        let first = scratch.contacts.len();
        let records = &mut state.records[d];
        if separated {
            records.clear();
        } else if standard {
            standard_direction(
                dir,
                params,
                opts.prediction_distance,
                &mut metrics,
                opts.record_rays.then_some(&mut rays),
                &mut scratch.contacts,
                records,
            );
        } else {
            iterative_direction(
                dir,
                records,
                params,
                opts.prediction_distance,
                &mut metrics,
                opts.record_rays.then_some(&mut rays),
                &mut scratch.contacts,
            );
        }
        if opts.measure_errors {
            let (e, theirs) = compare_with_standard(dir, params, &scratch.contacts[first..]);
            standard_in_contact |= theirs;
            match &mut metrics.errors {
                Some(m) => m.add(&e),
                None => metrics.errors = Some(e),
            }
        }
    }
    if let Some(e) = &mut metrics.errors {
        // Pair-level error: in contact in one result only (2013 §4.3's "wrongly detected pairs").
        let ours = scratch.contacts.iter().any(|c| c.t >= 0.0);
        e.erroneous_pairs = u64::from(ours != standard_in_contact);
    }
    if standard {
        state.reference = Some(input.pos12);
        // Only read for record-less pairs of the iterative algorithm (see `needs_standard_trace`).
        state.separation = if params.iterative && !state.has_records() {
            bound.unwrap_or_else(|| {
                separation_for_reach_from(input.mesh1, input.mesh2, &input.pos12, params, &mut state.witness)
            })
        } else {
            0.0
        };
        state.steps_since_standard = 0;
        metrics.standard_pairs = 1;
        metrics.separated_pairs = usize::from(separated);
    } else {
        state.steps_since_standard = state.steps_since_standard.saturating_add(1);
        metrics.iterative_pairs = 1;
    }

    // Re-projection and reduction. Penetrating rays always; predictions within the prediction
    // distance become speculative contacts (positive distance): the tracers pushed only those.
    scratch.candidates.clear();
    for c in &scratch.contacts {
        let cand = reproject(c, &input.pos12, params.reprojection);
        if c.t >= 0.0 {
            metrics.contact_rays += 1;
            metrics.cumulative_ray_length += c.t as f64;
            metrics.cumulative_depth += (-cand.dist) as f64;
            metrics.max_depth = metrics.max_depth.max(-cand.dist);
            scratch.candidates.push(cand);
        } else if cand.dist <= opts.prediction_distance {
            scratch.candidates.push(cand);
        }
    }
    for c in &scratch.edge_contacts {
        metrics.cumulative_depth += (-c.dist) as f64;
        metrics.max_depth = metrics.max_depth.max(-c.dist);
    }
    scratch.candidates.extend_from_slice(&scratch.edge_contacts);
    merge_motion_contacts(&mut scratch.candidates, &scratch.motion_contacts, approach);
    let kept = if opts.keep_contacts { scratch.candidates.clone() } else { Vec::new() };
    let mut manifolds = Vec::new();
    if !opts.skip_manifolds {
        reduce_manifolds_with(
            &scratch.candidates,
            &input.pos12,
            params.manifold_angle,
            &mut scratch.reduce,
            &mut manifolds,
        );
    }
    metrics.manifolds = manifolds.len() as u64;
    metrics.manifold_points = manifolds.iter().map(|m| m.points.len() as u64).sum();
    metrics.prediction_records = state.records.iter().flatten().filter(|r| !r.in_contact).count() as u64;
    let (ray_length, depth) = (metrics.cumulative_ray_length, metrics.cumulative_depth);
    (metrics.cumulative_ray_length, metrics.cumulative_depth) = (0.0, 0.0);
    sum.add(&metrics);
    PairResult { mode, manifolds, rays, contacts: kept, ray_length, depth, moving: metrics.motion_rays > 0 }
}

/// Records a ray for the overlay when `rays` is there. The tracers call it for every ray: inlined,
/// it costs them one test when nothing is recorded.
#[inline(always)]
fn push_debug(
    rays: &mut Option<&mut Vec<RayDebug>>,
    dir: &Direction,
    vertex: u32,
    ray: &Ray,
    hit: Option<(u32, f32)>,
    kind: RayKind,
    outcome: RayOutcome,
) {
    if let Some(rays) = rays {
        // Shape 1's frame: identity for shape-1 rays' `from`, `from_to` maps shape 2 → shape 1.
        let to_shape1 = if dir.from_shape2 { Pose::IDENTITY } else { dir.from_to.inverse() };
        let (triangle, t) = hit.unwrap_or((u32::MAX, 0.0));
        rays.push(RayDebug {
            origin: to_shape1.transform_point(ray.origin),
            end: to_shape1.transform_point(ray.at(t)),
            kind,
            outcome,
            from_shape2: dir.from_shape2,
            vertex,
            triangle,
            t,
        });
    }
}

fn contact_of(dir: &Direction, v: u32, ray: &Ray, triangle: u32, t: f32, normal: Vec3) -> RayContact {
    RayContact {
        from_shape2: dir.from_shape2,
        vertex: v,
        triangle,
        origin: ray.origin,
        dir: ray.dir,
        t,
        normal,
    }
}

/// Standard tracing of one direction: every candidate vertex, both sides of the line at once.
/// Replaces `records`; appends contacts, and the predictions (`t < 0`) whose [`ray_depth`] is at
/// most `speculative` (those that become speculative contacts), to `contacts`.
fn standard_direction(
    dir: &Direction,
    params: &RtcdParams,
    speculative: f32,
    metrics: &mut StepMetrics,
    mut rays: Option<&mut Vec<RayDebug>>,
    contacts: &mut Vec<RayContact>,
    records: &mut Vec<RayRecord>,
) {
    records.clear();
    let region = dir.vertex_candidate_region(params);
    if region.is_empty() {
        return;
    }
    let back = if params.prediction { params.culling_dist } else { 0.0 };
    let exits = dir.from.exit_distances();
    let solid = dir.solid_reach(params);
    let behind = solid_behind_box(dir.from, dir.to, params);
    let closed = closed_reach_into(dir.to, params);
    let reach_box = reach_box(dir.from, dir.to, params);
    let cuboid = dir.to.cuboid_half_extents();
    for (v, p) in dir.from.positions().iter().enumerate() {
        if !region.contains(*p) {
            continue;
        }
        let v = v as u32;
        let ray = dir.ray(v);
        if reach_box.is_some_and(|b| !b.contains(ray.origin)) {
            continue;
        }
        metrics.standard_rays += 1;
        if let Some(half) = cuboid {
            let (record, f) =
                box_vertex(dir, v, &ray, half, exits[v as usize], params, speculative, contacts);
            push_box_debug(&mut rays, dir, v, ray.origin, &f, RayKind::Standard, record.is_some());
            records.extend(record);
            continue;
        }
        let exit = exits[v as usize];
        let limit =
            ray_limit(exit, vertex_reach(solid_at(solid, behind.as_ref(), ray.origin), closed, exit, params));
        let hits = if closed {
            closed_trace(dir.to, &ray, back, exit, limit, params)
        } else {
            params.tracer.trace_line(dir.to, &ray, back, limit, NO_SKIP)
        };
        match (hits.forward, hits.backward) {
            // Hermann Alg. 1: the first hit faces away from the ray (hit from inside the other body)
            // and comes before the ray leaves its own body (`fwd` = exit distance; into a
            // solid-behind mesh, or a closed one with `closed_reach`, at least the solid reach:
            // `ray_limit`; into a closed one beyond the exit distance, the nearer way out).
            (Some(h), _)
                if h.from_inside && nearer_way_out(dir.to, &ray, h.t, exits[v as usize], closed, params) =>
            {
                contacts.push(contact_of(dir, v, &ray, h.triangle, h.t, h.normal));
                records.push(RayRecord { vertex: v, triangle: h.triangle, in_contact: true });
                push_debug(
                    &mut rays,
                    dir,
                    v,
                    &ray,
                    Some((h.triangle, h.t)),
                    RayKind::Standard,
                    RayOutcome::Contact,
                );
            }
            // Not in collision: the opposite ray's hit on the other body's outside, within
            // `culling_dist`, is kept as a prediction (2014 §3.1).
            (_, Some(b)) if b.from_inside => {
                if ray_depth(b.t, ray.dir, b.normal, params.reprojection) <= speculative {
                    contacts.push(contact_of(dir, v, &ray, b.triangle, b.t, b.normal));
                }
                records.push(RayRecord { vertex: v, triangle: b.triangle, in_contact: false });
                push_debug(
                    &mut rays,
                    dir,
                    v,
                    &ray,
                    Some((b.triangle, b.t)),
                    RayKind::Standard,
                    RayOutcome::Prediction,
                );
            }
            (f, _) => {
                push_debug(
                    &mut rays,
                    dir,
                    v,
                    &ray,
                    f.map(|h| (h.triangle, h.t)),
                    RayKind::Standard,
                    RayOutcome::Rejected,
                );
            }
        }
    }
}

/// The exact contact of vertex `v` of `dir.from`, whose inward ray is `ray` (in the frame of the box
/// `dir.to`, of half extents `half`: [`RtcdMesh::cuboid`]), in the ray contacts' format: the face
/// [`box_vertex_face`] picks stands for the hit triangle, its outward normal for both the ray
/// direction and the hit normal, and `t` is minus the signed distance to its plane, so [`reproject`]
/// gives the vertex as the point, that distance as the depth and the normal as the direction.
/// Inside the box (`t >= 0`) a contact. Outside, within `culling_dist` and with prediction, a
/// prediction record (2014 §3.1): every vertex that can enter the box before the next standard
/// step is tested again at each iterative step, whichever way it faces, since the exact test, unlike
/// a walk, does not depend on the ray. It becomes a speculative contact within `speculative` only
/// where a predictive ray would give one: when the vertex's opposite ray (along its outward normal)
/// meets the face's plane from outside within `culling_dist`. A vertex facing away from the face,
/// or nearly parallel to it, has a part of its body nearer to the face, which carries the contact.
/// The exit distance only picks the face: a vertex inside the box is in contact however thin its
/// own body is. Returns the vertex's record, if it keeps one, and the face.
#[expect(clippy::too_many_arguments, reason = "one vertex's test, with what the tracers pass")]
fn box_vertex(
    dir: &Direction,
    v: u32,
    ray: &Ray,
    half: Vec3,
    exit_distance: f32,
    params: &RtcdParams,
    speculative: f32,
    contacts: &mut Vec<RayContact>,
) -> (Option<RayRecord>, crate::detect::BoxFace) {
    let f = box_vertex_face(half, ray.origin, ray.dir, exit_distance);
    let in_contact = f.distance <= 0.0;
    let predicted = params.prediction && f.distance <= params.culling_dist;
    if !(in_contact || predicted) {
        return (None, f);
    }
    // A speculative contact only where a predictive ray would give one: the vertex's opposite ray
    // meets the face's plane from outside within `culling_dist`.
    let dn = ray.dir.dot(f.normal);
    let facing = dn > 0.0 && f.distance <= params.culling_dist * dn;
    if in_contact || (facing && f.distance <= speculative) {
        contacts.push(contact_of(dir, v, &Ray::new(ray.origin, f.normal), f.triangle, -f.distance, f.normal));
    }
    (Some(RayRecord { vertex: v, triangle: f.triangle, in_contact }), f)
}

/// Records [`box_vertex`]'s test of vertex `v` for the overlay when `rays` is there: the segment
/// from the vertex to its face's plane, along the face normal.
#[inline(always)]
fn push_box_debug(
    rays: &mut Option<&mut Vec<RayDebug>>,
    dir: &Direction,
    v: u32,
    origin: Vec3,
    f: &crate::detect::BoxFace,
    kind: RayKind,
    kept: bool,
) {
    if rays.is_some() {
        let outcome = match (kept, f.distance <= 0.0) {
            (false, _) => RayOutcome::Rejected,
            (true, true) => RayOutcome::Contact,
            (true, false) => RayOutcome::Prediction,
        };
        push_debug(rays, dir, v, &Ray::new(origin, f.normal), Some((f.triangle, -f.distance)), kind, outcome);
    }
}

/// The standard trace of `ray` into a closed mesh with the closed reach ([`closed_reach_into`]):
/// the line within `back` behind the vertex and its exit distance `exit` in front, as without the
/// option; then, when the ray's `limit` ([`ray_limit`]) is longer, nothing was met in front,
/// nothing behind says the vertex is outside `to` (a triangle faced from outside: a prediction),
/// and both the vertex and the ray's exit point lie in `to`'s box (its hierarchy's root box, as on
/// the GPU), the ray on to `limit`. On a closed, consistently wound mesh the first hit in front and
/// the nearest behind are those of one trace of the line to `limit` (from a point outside `to` a
/// ray meets a front face first, and a vertex inside it has its whole ray up to the exit inside
/// it); the rays of vertices near `to` and outside it are not traced beyond their exit.
fn closed_trace(to: &RtcdMesh, ray: &Ray, back: f32, exit: f32, limit: f32, params: &RtcdParams) -> LineHits {
    let mut hits = params.tracer.trace_line(to, ray, back, exit, NO_SKIP);
    let in_box = |p: Vec3| to.bvh().first().is_some_and(|root| root.aabb().contains(p));
    if limit > exit
        && hits.forward.is_none()
        && !hits.backward.is_some_and(|b| b.from_inside)
        && in_box(ray.origin)
        && in_box(ray.at(exit))
    {
        hits.forward = params.tracer.trace_line(to, ray, 0.0, limit, NO_SKIP).forward;
    }
    hits
}

/// Where in `to`'s own frame a vertex of `from` must lie for its ray to leave a record. A standard
/// step of either backend skips the candidates outside it before tracing them: the candidate region
/// ([`vertex_candidate_region`]) is a box in `from`'s frame, which holds `to`'s box turned with the
/// pair and is up to √3 times wider per axis.
///
/// - A closed `to`: its box grown by the rays' reach ([`ray_reach`]) and a margin of 1e-4 of its
///   diagonal against rounding. A contact needs the ray's first hit to leave `to` (Hermann's test),
///   so the vertex is inside the closed mesh, hence inside its box; a prediction needs a hit behind
///   the vertex within `culling_dist`, so the vertex is that close to a point of `to`'s surface. On
///   a mesh whose surface is consistently oriented it finds the same records; where a surface folds
///   over itself (a self-intersecting tube) a ray from outside can meet a back face first, and the
///   box drops that false contact.
/// - A [solid-behind](RtcdMesh::solid_behind) `to` (a level chunk): the points from which a ray as
///   long as the pair's [`solid_reach`] (no vertex ray into it is longer: [`ray_limit`], the exit
///   distance being at most the body's diagonal) meets one of its triangles from behind
///   ([`RtcdMesh::back_face_box`]), grown by the rays' reach and the same margin. A body resting on
///   a chunk of gentle terrain then traces its vertices near and under the chunk's surface, not every
///   vertex below the top of the chunk's box turned into the body's frame.
/// - `None` (no skip) for any other open `to`, where a ray can meet a back face from anywhere.
pub fn reach_box(from: &RtcdMesh, to: &RtcdMesh, params: &RtcdParams) -> Option<Aabb> {
    let b = to.aabb();
    let margin = 1e-4 * b.extents().length();
    if to.is_closed() {
        return Some(b.extended(ray_reach(params) + margin));
    }
    let reach = solid_reach(from, to, params).filter(|_| to.solid_behind())?;
    Some(to.back_face_box(reach).extended(ray_reach(params) + margin))
}

/// Iterative tracing of one direction: walks from last step's records only (2013 §3.4: vertices
/// entering contact between standard steps are found by predictions, or at the next standard step).
/// Updates `records` in place (lost rays are removed); appends to `contacts` as
/// [`standard_direction`] does.
fn iterative_direction(
    dir: &Direction,
    records: &mut Vec<RayRecord>,
    params: &RtcdParams,
    speculative: f32,
    metrics: &mut StepMetrics,
    mut rays: Option<&mut Vec<RayDebug>>,
    contacts: &mut Vec<RayContact>,
) {
    let exits = dir.from.exit_distances();
    let solid = dir.solid_reach(params);
    let behind = solid_behind_box(dir.from, dir.to, params);
    let closed = closed_reach_into(dir.to, params);
    let mut kept = 0;
    for k in 0..records.len() {
        let r = records[k];
        let ray = dir.ray(r.vertex);
        let kind = if r.in_contact { RayKind::Iterative } else { RayKind::Predictive };
        match kind {
            RayKind::Predictive => metrics.predictive_rays += 1,
            _ => metrics.iterative_rays += 1,
        }
        if let Some(half) = dir.to.cuboid_half_extents() {
            let exit = exits[r.vertex as usize];
            let (record, f) = box_vertex(dir, r.vertex, &ray, half, exit, params, speculative, contacts);
            if let Some(record) = record {
                metrics.iterative_hits += u64::from(record.in_contact);
                records[kept] = record;
                kept += 1;
            }
            push_box_debug(&mut rays, dir, r.vertex, ray.origin, &f, kind, record.is_some());
            continue;
        }
        let w = walk(dir.to, &ray, r.triangle, params.max_it);
        metrics.walk_steps += w.steps as u64;
        match w.outcome {
            WalkOutcome::Hit(h)
                if h.from_inside && {
                    let exit = exits[r.vertex as usize];
                    let solid = solid_at(solid, behind.as_ref(), ray.origin);
                    h.t <= ray_limit(exit, vertex_reach(solid, closed, exit, params))
                } =>
            {
                metrics.iterative_hits += 1;
                contacts.push(contact_of(dir, r.vertex, &ray, h.triangle, h.t, h.normal));
                records[kept] = RayRecord { vertex: r.vertex, triangle: h.triangle, in_contact: true };
                kept += 1;
                push_debug(
                    &mut rays,
                    dir,
                    r.vertex,
                    &ray,
                    Some((h.triangle, h.t)),
                    kind,
                    RayOutcome::Contact,
                );
            }
            WalkOutcome::Prediction(h)
                if params.prediction && h.from_inside && -h.t <= params.culling_dist =>
            {
                if ray_depth(h.t, ray.dir, h.normal, params.reprojection) <= speculative {
                    contacts.push(contact_of(dir, r.vertex, &ray, h.triangle, h.t, h.normal));
                }
                records[kept] = RayRecord { vertex: r.vertex, triangle: h.triangle, in_contact: false };
                kept += 1;
                push_debug(
                    &mut rays,
                    dir,
                    r.vertex,
                    &ray,
                    Some((h.triangle, h.t)),
                    kind,
                    RayOutcome::Prediction,
                );
            }
            WalkOutcome::Hit(h) | WalkOutcome::Prediction(h) => {
                push_debug(
                    &mut rays,
                    dir,
                    r.vertex,
                    &ray,
                    Some((h.triangle, h.t)),
                    kind,
                    RayOutcome::Rejected,
                );
            }
            WalkOutcome::Miss => push_debug(&mut rays, dir, r.vertex, &ray, None, kind, RayOutcome::Rejected),
        }
    }
    records.truncate(kept);
}

/// Edge rays of one direction (Mochi 2024 §3.4; [`edge_crossing`]): the edges of `dir.from` that
/// cross `dir.to` with both ends outside it become contacts (appended to `out`, in shape 1's frame)
/// and the direction's `edge_records`.
///
/// `vertex_records` are the direction's records from the last step (the edges are traced before
/// this step's vertex rays, so a backend may trace both at once). A standard step tests every
/// edge whose bounding box meets the candidate region. An iterative step tests last step's
/// crossing edges and the edges at a vertex kept as a prediction (a vertex near the other mesh and
/// outside it): as with vertices (IRTCD 2013 §3.4), an edge that starts crossing between standard
/// steps is found through its predicted ends, or at the next standard step; it skips the edges
/// with an end that was in contact (inside the other mesh: that end's vertex ray carries the
/// contact, and such an edge cannot cross with both ends outside). A standard step skips none, so
/// that it finds what a fresh standard trace finds, whatever the records.
#[expect(clippy::too_many_arguments, reason = "one direction's edges, with what the vertex rays pass")]
fn edge_direction(
    dir: &Direction,
    params: &RtcdParams,
    standard: bool,
    vertex_records: &[RayRecord],
    edge_records: &mut Vec<u32>,
    edges: &mut Vec<u32>,
    metrics: &mut StepMetrics,
    out: &mut Vec<(crate::detect::EdgeCrossing, bool)>,
) {
    let in_contact = |v: u32| {
        vertex_records.binary_search_by_key(&v, |r| r.vertex).is_ok_and(|k| vertex_records[k].in_contact)
    };
    let mesh_edges = dir.from.edges();
    edges.clear();
    if standard {
        dir.from.edges_in(&dir.candidate_region(params.candidate_extension()), edges);
    } else {
        edges.extend_from_slice(edge_records);
        for r in vertex_records.iter().filter(|r| !r.in_contact) {
            edges.extend_from_slice(dir.from.vertex_edges(r.vertex));
        }
        edges.sort_unstable();
        edges.dedup();
    }
    edge_records.clear();
    // A long sharp edge ([`RtcdMesh::predicting_edges`]), or any edge where the direction keeps no
    // vertex record, within the rays' reach of the other mesh's box (in its frame) is kept as an
    // edge record even when it does not cross: the analogue of a vertex's prediction (2014 §3.1),
    // so coarse meshes closing in edge on edge, whose corners' normals point away and keep no
    // prediction, are walked at every step and their edges tested as they come in. The short edges
    // of a finer mesh are tested at its predicted vertices only (keeping them all would cost more
    // than they hide).
    let strong = dir.from.predicting_edges();
    let any_edge = vertex_records.is_empty();
    let near_box = dir.to.aabb().extended(ray_reach(params));
    let positions = dir.from.positions();
    let near = |a: u32, b: u32| {
        let (pa, pb) = (
            dir.from_to.transform_point(positions[a as usize]),
            dir.from_to.transform_point(positions[b as usize]),
        );
        pa.min(pb).cmple(near_box.max).all() && pa.max(pb).cmpge(near_box.min).all()
    };
    for &k in edges.iter() {
        let [a, b] = mesh_edges[k as usize];
        if !standard && (in_contact(a) || in_contact(b)) {
            continue;
        }
        metrics.edge_rays += 1;
        match crate::detect::edge_crossing(dir.from, dir.to, &dir.from_to, k, params.tracer) {
            crate::detect::EdgeTest::Crossing(c) => {
                metrics.edge_contacts += 1;
                edge_records.push(k);
                out.push((c, dir.from_shape2));
            }
            _ => {
                if params.prediction && (any_edge || k < strong) && near(a, b) {
                    edge_records.push(k);
                }
            }
        }
    }
}

/// The edge contacts of one step of a pair, both directions (see `edge_direction`): appended to
/// `out` in shape 1's frame; `vertex_records` are each direction's vertex records from the last
/// step (shape 1's vertices first), `edge_records` the edges kept between steps (crossing, or
/// within the rays' reach of the other mesh's box), updated here; `edges` is a scratch buffer;
/// `approach` is what [`pair_motion_contacts`] returned for the step (zero for none). Both
/// backends call it for a pair that is not [separated](separation_before_trace) this step (a
/// separated pair clears its edge records).
/// Nothing without [`RtcdParams::edge_rays`].
#[expect(clippy::too_many_arguments, reason = "one pair's edges, with the state both backends keep")]
pub fn pair_edge_contacts(
    input: &PairInput,
    params: &RtcdParams,
    standard: bool,
    approach: Vec3,
    vertex_records: [&[RayRecord]; 2],
    edge_records: &mut [Vec<u32>; 2],
    edges: &mut Vec<u32>,
    metrics: &mut StepMetrics,
    out: &mut Vec<ContactCandidate>,
) {
    if !params.edge_rays {
        edge_records.iter_mut().for_each(Vec::clear);
        return;
    }
    let mut crossings = Vec::new();
    for (d, dir) in Direction::both(input).iter().enumerate() {
        edge_direction(
            dir,
            params,
            standard,
            vertex_records[d],
            &mut edge_records[d],
            edges,
            metrics,
            &mut crossings,
        );
    }
    edge_crossing_contacts(&input.pos12, approach, crossings, metrics, out);
}

/// The contacts of a pair's crossing edges ([`crate::detect::edge_crossing`]'s, each with whether
/// shape 2's edge it is; direction 0's first, each direction's in increasing edge order), appended
/// to `out` in shape 1's frame: where an edge passes right through the other body, the way out its
/// pair agrees with (see [`pair_edge_contacts`]); `metrics.edge_contacts` loses those left without
/// one. `approach` is what [`pair_motion_contacts`] returned for the step. The GPU backend, whose
/// device finds the crossings, makes their contacts with it.
pub fn edge_crossing_contacts(
    pos12: &Pose,
    approach: Vec3,
    crossings: Vec<(crate::detect::EdgeCrossing, bool)>,
    metrics: &mut StepMetrics,
    out: &mut Vec<ContactCandidate>,
) {
    // An edge right through the other body (no ridge) could leave either way. Where the pair's
    // vertices tunnelled in the last step (`approach`, from [`pair_motion_contacts`]), it leaves the
    // way they came in. Otherwise the pair's ridge contacts say which (their normals, from shape 1 toward shape 2, weighted by depth): a way out
    // against them would fight them (a plank sunk into a beam: the beam's top edges through the
    // plank must leave through its bottom, as the plank's edges over the beam's ridges lift the
    // plank). Without a ridge contact, the shallowest of the pass-through edges' nearest ways out
    // decides for all of them (two thin panels crossed through each other: every edge leaves the
    // same way, rather than each its own and the pair pushed both ways at once).
    let mut agreed: Vec3 = approach;
    if agreed == Vec3::ZERO {
        agreed = crossings
            .iter()
            .filter(|(c, _)| c.through.is_none())
            .map(|(c, from_shape2)| edge_candidate(c, *from_shape2, pos12))
            .map(|c| c.n1 * -c.dist)
            .sum();
    }
    if agreed == Vec3::ZERO
        && let Some((c, from_shape2)) = crossings
            .iter()
            .filter(|(c, _)| c.through.is_some())
            .min_by(|x, y| x.0.depth.total_cmp(&y.0.depth))
    {
        agreed = edge_candidate(c, *from_shape2, pos12).n1;
    }
    for (mut c, from_shape2) in crossings {
        if let Some(others) = c.through.filter(|_| agreed != Vec3::ZERO) {
            let n1 = |n: Vec3| {
                edge_candidate(&crate::detect::EdgeCrossing { normal: n, ..c }, from_shape2, pos12).n1
            };
            let best = std::iter::once((c.triangle, c.normal, c.depth))
                .chain(others.into_iter().flatten())
                .find(|&(_, n, _)| n1(n).dot(agreed) > 0.0);
            match best {
                Some((triangle, normal, depth)) => {
                    (c.triangle, c.normal, c.depth) = (triangle, normal, depth)
                }
                None => {
                    metrics.edge_contacts -= 1;
                    continue;
                }
            }
        }
        out.push(edge_candidate(&c, from_shape2, pos12));
    }
}

/// Contacts along the vertices' motion ([`RtcdParams::motion_rays`]), both directions, appended to
/// `out` in shape 1's frame; returns the pair's approach: the sum of its tunnel contacts' normals
/// (shape 1 toward shape 2) times their depths, zero without one. The path of each vertex starts
/// at [`PairInput::previous`], the pair's relative pose one step earlier along its motion.
///
/// A vertex's predictive ray runs along its outward normal (2014 §3.1). It finds the surface a
/// vertex is moving onto only when the normal points there: a thin plate's corner, whose normal is
/// diagonal, looks past the rim of the plate it is landing on. And a vertex that went through a
/// body thinner than a step's motion, or came out of its far side, has no ray that sees it from
/// inside (Hermann 2008 Alg. 1 needs the vertex inside the other body, within its own exit
/// distance); its nearest way out is then the far side, the wrong way. So each candidate vertex
/// whose motion `m` in the last step is longer than half the other body's typical thickness
/// ([`RtcdMesh::half_thickness`]), or than half its own exit distance where that limits its rays
/// (into an open mesh: into a cuboid, a level chunk or, with the closed reach, a closed mesh a
/// vertex inside is in contact however thin its body), and than the pair's
/// `displacement_threshold` (below which the iterative walk follows it: IRTCD 2013 Eq. 2), is
/// traced along its path, from where it was to where it is and on by `2 |m|` (the next step's
/// motion, taken as the last one's, with room for acceleration). The first face met decides:
/// - a front face ahead of the vertex (it is outside): a prediction, in the predictive rays'
///   format: re-projected, the vertex's distance to the face's plane along its normal, kept within
///   `speculative`. The solver lets the vertex close that gap within the step and no more;
/// - a front face behind it, on the path of the last step: the vertex entered the other body there
///   (it is inside, or went through): a **tunnel contact**, the depth of the vertex under that face's
///   plane along its normal, which takes it back out the way it came in;
/// - a back face (the vertex was inside at the last step): nothing; its vertex ray carries it.
///
/// A tunnel is remembered (`tunnels`, per direction, `[vertex, triangle]`, kept in the pair's
/// state): at the next steps the vertex keeps a contact with the face it came in through, its
/// depth under that face's plane, until it is back out on that side, or no longer over the face
/// (`tunnel_contact`). The solver may take several steps to bring it back; in between the vertex
/// moves too little for a path, and its own rays, seeing it on the far side, would hold it there.
///
/// A vertex moving less is left to its normal rays, whose exit distance sees it inside the other
/// body (the finely tessellated, thick bodies of the papers' piles cast few paths). A rim vertex
/// ([`RtcdMesh::rim_motions`]: its ray runs along its body, as at a flat body's rim) has rays that
/// see nothing it moves onto or into, whatever the other body: it is traced whenever it moves more
/// than its rim motion, below the displacement threshold too, and a pair with such a vertex moving
/// that far is not quiet ([`rim_paths_due`]). Nothing without `prediction` or
/// [`PairInput::previous`].
pub fn pair_motion_contacts(
    input: &PairInput,
    params: &RtcdParams,
    speculative: f32,
    tunnels: &mut [Vec<[u32; 2]>; 2],
    metrics: &mut StepMetrics,
    out: &mut Vec<ContactCandidate>,
) -> Vec3 {
    let Some(mut step) = motion_tunnel_contacts(input, params, tunnels, metrics, out) else {
        return Vec3::ZERO;
    };
    trace_motion_paths(input, params, speculative, &mut step, tunnels, metrics, out);
    step.approach
}

/// What the first part of a pair's motion rays ([`motion_tunnel_contacts`]) leaves to the paths
/// ([`motion_path_contact`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MotionStep {
    /// The sum of the tunnel contacts' normals times their depths (shape 1's frame).
    pub approach: Vec3,
    /// The ways out of the tunnels that ended this step, as contacts' normals in shape 1's frame: a
    /// path the other way is no new tunnel.
    back_out: Vec<Vec3>,
}

/// The first part of [`pair_motion_contacts`]: the contacts of the tunnels the pair keeps (a vertex
/// stays held to the face it came in through until it is back out on its side, or off it), appended
/// to `out`. `None` (and no tunnel kept) without [`RtcdParams::motion_rays`] and prediction: then
/// there are no paths either. The paths follow, traced here ([`pair_motion_contacts`]) or elsewhere
/// (the GPU backend's device), each that meets a front face given to [`motion_path_contact`].
pub fn motion_tunnel_contacts(
    input: &PairInput,
    params: &RtcdParams,
    tunnels: &mut [Vec<[u32; 2]>; 2],
    metrics: &mut StepMetrics,
    out: &mut Vec<ContactCandidate>,
) -> Option<MotionStep> {
    if !(params.motion_rays && params.prediction) {
        tunnels.iter_mut().for_each(Vec::clear);
        return None;
    }
    let mut step = MotionStep::default();
    // Last steps' tunnels first: a vertex stays held to the face it came in through until it is
    // back out on its side, or off it. Where vertices came back out this step, the body went back
    // through the other on its last step's path: paths the other way are no new tunnels (from the
    // far side they would look like entries there, and hold the body on the wrong side again).
    let held = tunnels.iter().any(|t| !t.is_empty());
    for (dir, kept) in Direction::both(input).iter().zip(tunnels.iter_mut()).filter(|_| held) {
        kept.retain_mut(|[v, triangle]| {
            let Some(c) = tunnel_contact(dir, *v, triangle, params) else {
                if let Some(n) = tunnel_resolved(dir, *v, *triangle) {
                    // The way out, as a contact's normal in shape 1's frame (`reproject`).
                    step.back_out.push(if dir.from_shape2 { n } else { -input.pos12.transform_vector(n) });
                }
                return false;
            };
            let cand = reproject(&c, &input.pos12, params.reprojection);
            step.approach += cand.n1 * -cand.dist;
            metrics.motion_contacts += 1;
            out.push(cand);
            true
        });
    }
    Some(step)
}

/// Each direction's maps into the other mesh's frame, now ([`PairInput::pos12`]) and one step
/// earlier ([`PairInput::previous`]): where a vertex's path runs ([`motion_path_contact`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MotionFrames {
    /// Direction 0 (shape 1's vertices in shape 2's frame), then direction 1, now.
    pub now: [Pose; 2],
    /// The same one step earlier.
    pub then: [Pose; 2],
}

impl MotionFrames {
    /// The frames of `input` with `previous` as its pose one step earlier.
    pub fn new(input: &PairInput, previous: &Pose) -> Self {
        let before = PairInput { pos12: *previous, previous: None, ..*input };
        let [a, b] = Direction::both(input);
        let [c, d] = Direction::both(&before);
        Self { now: [a.from_to, b.from_to], then: [c.from_to, d.from_to] }
    }

    /// Where vertex `p` (of the casting mesh of direction `dir`, in its frame) was and is, in the
    /// other mesh's frame, and its path's length.
    pub fn path(&self, dir: usize, p: Vec3) -> (Vec3, Vec3, f32) {
        let (now, then) = (self.now[dir].transform_point(p), self.then[dir].transform_point(p));
        (then, now, (now - then).length())
    }
}

/// A vertex's path ([`pair_motion_contacts`]) that met a front face of the other mesh first.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MotionHit {
    /// `false`: a vertex of shape 1 in shape 2; `true`: the reverse.
    pub from_shape2: bool,
    /// The vertex.
    pub vertex: u32,
    /// The face met, in the other mesh.
    pub triangle: u32,
    /// How far along the path from where the vertex was.
    pub t: f32,
}

/// The second part of [`pair_motion_contacts`]: the paths of the vertices that moved far enough,
/// traced here, each that meets a front face first made a contact by [`motion_path_contact`]
/// (`step` from [`motion_tunnel_contacts`]).
pub fn trace_motion_paths(
    input: &PairInput,
    params: &RtcdParams,
    speculative: f32,
    step: &mut MotionStep,
    tunnels: &mut [Vec<[u32; 2]>; 2],
    metrics: &mut StepMetrics,
    out: &mut Vec<ContactCandidate>,
) {
    let Some(previous) = input.previous.as_ref().filter(|p| p.is_valid()) else { return };
    let (radius1, radius2) = (input.mesh1.max_radius(), input.mesh2.max_radius());
    let dirs = Direction::both(input);
    let lengths = dirs.each_ref().map(|dir| motion_lengths(dir.from, dir.to, params));
    // A pair that surely moved less than both directions' least motion traces no path (the cheap
    // test first; it decides as the bound would).
    if surely_within(previous, &input.pos12, radius1, radius2, lengths[0].least.min(lengths[1].least)) {
        return;
    }
    let bound = max_displacement(previous, &input.pos12, radius1, radius2);
    if !bound.is_finite() {
        return;
    }
    let frames = MotionFrames::new(input, previous);
    for (d, (dir, lengths)) in dirs.iter().zip(lengths).enumerate() {
        let MotionLengths { own, other, floor, least } = lengths;
        if bound <= least {
            continue;
        }
        let region = dir.candidate_region(2.0 * bound);
        if region.is_empty() {
            continue;
        }
        let (exits, rims) = (dir.from.exit_distances(), dir.from.rim_motions());
        for (v, p) in dir.from.positions().iter().enumerate() {
            if !region.contains(*p) {
                continue;
            }
            let (then, now, length) = frames.path(d, *p);
            let least = if own { (0.5 * exits[v]).min(other) } else { other }.max(floor).min(rims[v]);
            if length.is_nan() || length <= least {
                continue;
            }
            metrics.motion_rays += 1;
            let path = Ray::new(then, (now - then) / length);
            let Some(h) = params.tracer.trace_line(dir.to, &path, 0.0, 3.0 * length, NO_SKIP).forward else {
                continue;
            };
            if h.from_inside {
                continue;
            }
            let hit =
                MotionHit { from_shape2: dir.from_shape2, vertex: v as u32, triangle: h.triangle, t: h.t };
            motion_path_contact(input, &frames, hit, params, speculative, step, tunnels, metrics, out);
        }
    }
}

/// The lengths that decide which of `from`'s vertices have their paths into `to` traced
/// ([`pair_motion_contacts`]): a vertex whose motion is longer than `to`'s half thickness, or (where
/// its own body's thickness counts) than half its exit distance, and than the pair's displacement
/// threshold. Both backends take them from here (the GPU backend with each pair of meshes' statics).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MotionLengths {
    /// Whether the vertices' own body's thickness counts: not into a cuboid, a level chunk or (with
    /// the closed reach) a closed mesh, where a vertex inside is in contact however thin its body.
    pub own: bool,
    /// `to`'s half thickness ([`RtcdMesh::half_thickness`]): its typical one, or its thinnest
    /// where it has rim vertices (a flat body, whose vertex rays along its flat extent report a
    /// thickness it does not have).
    pub other: f32,
    /// No shorter motion is traced, a rim vertex's aside: the pair's displacement threshold, or 0
    /// into a body with rim vertices (the pair's lengths come from those rays too).
    pub floor: f32,
    /// The least motion of any of `from`'s vertices that needs a path (a rim vertex's included):
    /// no direction whose displacement bound is at most this traces one.
    pub least: f32,
}

/// [`MotionLengths`] of `from`'s vertices moving into `to`, in a pair of `params`.
pub fn motion_lengths(from: &RtcdMesh, to: &RtcdMesh, params: &RtcdParams) -> MotionLengths {
    let own = !(to.cuboid_half_extents().is_some() || to.solid_behind() || closed_reach_into(to, params));
    let flat = to.least_rim_motion().is_finite();
    let other = to.half_thickness()[usize::from(flat)];
    let floor = if flat { 0.0 } else { params.displacement_threshold };
    let least =
        if own { from.half_thickness()[1].min(other) } else { other }.max(floor).min(from.least_rim_motion());
    MotionLengths { own, other, floor, least }
}

/// The contact of one vertex's path that met a front face first ([`MotionHit`], its vertex's path
/// from `frames`), appended to `out`:
/// - a front face ahead of the vertex (it is outside): a prediction, in the predictive rays'
///   format, kept within `speculative`;
/// - a front face behind it, on the path of the last step: a tunnel contact, which takes it back
///   out the way it came in, and a tunnel the pair keeps (`tunnels`), unless the vertex has one, or
///   the way out is against a tunnel that ended this step (`step`).
///
/// Both backends make the contacts of their paths with it, in the order of the directions and the
/// vertices.
#[expect(clippy::too_many_arguments, reason = "one path's inputs and the pair's running state")]
pub fn motion_path_contact(
    input: &PairInput,
    frames: &MotionFrames,
    hit: MotionHit,
    params: &RtcdParams,
    speculative: f32,
    step: &mut MotionStep,
    tunnels: &mut [Vec<[u32; 2]>; 2],
    metrics: &mut StepMetrics,
    out: &mut Vec<ContactCandidate>,
) {
    let (from, to) = if hit.from_shape2 { (input.mesh2, input.mesh1) } else { (input.mesh1, input.mesh2) };
    let (Some(p), Some(&normal)) =
        (from.positions().get(hit.vertex as usize), to.triangle_normals().get(hit.triangle as usize))
    else {
        return;
    };
    let (then, now, length) = frames.path(usize::from(hit.from_shape2), *p);
    // From where the vertex is, back along its path: the face behind it (`t >= 0`, a contact) or
    // ahead of it (`t < 0`, a prediction), hit from inside as a vertex ray's.
    let c = RayContact {
        from_shape2: hit.from_shape2,
        vertex: hit.vertex,
        triangle: hit.triangle,
        origin: now,
        dir: -(now - then) / length,
        t: length - hit.t,
        normal,
    };
    let cand = reproject(&c, &input.pos12, params.reprojection);
    if c.t >= 0.0 {
        if step.back_out.iter().any(|n| n.dot(cand.n1) < 0.0) {
            return;
        }
        let kept = &mut tunnels[usize::from(hit.from_shape2)];
        if !kept.iter().any(|&[k, _]| k == hit.vertex) {
            kept.push([hit.vertex, hit.triangle]);
            metrics.motion_contacts += 1;
            step.approach += cand.n1 * -cand.dist;
            out.push(cand);
        }
    } else if cand.dist <= speculative {
        metrics.motion_contacts += 1;
        out.push(cand);
    }
}

/// The contact of vertex `v` of `dir.from` that tunnelled into `dir.to` through `triangle`: its
/// depth under the triangle's plane along its outward normal, while that is positive, no deeper
/// than `culling_dist`, and the vertex is over the face the triangle is part of (its projection on
/// the plane inside the triangle, or inside a triangle reached from it across edges between
/// coplanar triangles, at most [`TUNNEL_FACE_HOPS`] of them: a box's face is two triangles, and a
/// vertex held under one slides across the diagonal as the bodies turn); `triangle` becomes the
/// triangle it is over. `None` once it is out on the face's side, or off it.
fn tunnel_contact(dir: &Direction, v: u32, triangle: &mut u32, params: &RtcdParams) -> Option<RayContact> {
    let p = dir.from_to.transform_point(*dir.from.positions().get(v as usize)?);
    let (positions, triangles) = (dir.to.positions(), dir.to.triangles());
    let n = *dir.to.triangle_normals().get(*triangle as usize)?;
    let corners = |t: u32| triangles[t as usize].map(|k| positions[k as usize]);
    let depth = (corners(*triangle)[0] - p).dot(n);
    if !(depth > 0.0 && depth <= params.culling_dist) {
        return None;
    }
    // Over a triangle: on the inner side of its three edges' planes along the normal. Off it, on
    // to the coplanar triangle across the first edge it is outside of.
    let q = p + n * depth;
    let mut t = *triangle;
    for _ in 0..=TUNNEL_FACE_HOPS {
        let [a, b, c] = corners(t);
        let outside =
            [(a, b), (b, c), (c, a)].iter().position(|&(e0, e1)| (e1 - e0).cross(q - e0).dot(n) < 0.0);
        let Some(k) = outside else {
            *triangle = t;
            return Some(RayContact {
                from_shape2: dir.from_shape2,
                vertex: v,
                triangle: t,
                origin: p,
                dir: n,
                t: depth,
                normal: n,
            });
        };
        let next = dir.to.neighbors()[t as usize][k];
        if next == crate::mesh::NO_NEIGHBOR || dir.to.triangle_normals()[next as usize].dot(n) < COPLANAR_COS
        {
            return None;
        }
        t = next;
    }
    None
}

/// The outward normal of `triangle` (in `dir.to`'s frame) when vertex `v` of `dir.from`, held by a
/// tunnel through it, is back out on its side of its plane (what ends its tunnel in
/// [`tunnel_contact`], besides leaving the face or going deeper than `culling_dist`).
fn tunnel_resolved(dir: &Direction, v: u32, triangle: u32) -> Option<Vec3> {
    let p = dir.from_to.transform_point(*dir.from.positions().get(v as usize)?);
    let t = dir.to.triangles().get(triangle as usize)?;
    let n = dir.to.triangle_normals()[triangle as usize];
    ((dir.to.positions()[t[0] as usize] - p).dot(n) <= 0.0).then_some(n)
}

/// Triangles of one flat face a tunnel contact follows its vertex across ([`tunnel_contact`]).
pub const TUNNEL_FACE_HOPS: usize = 8;

/// Neighbouring triangles whose normals' cosine is at least this lie in one plane (they share an
/// edge) for [`tunnel_contact`].
const COPLANAR_COS: f32 = 0.999_999;

/// Adds the motion rays' contacts ([`pair_motion_contacts`]) to a pair's candidates, after the
/// vertex rays' and the edges'. Where the pair has tunnel contacts (`approach`, their summed
/// normals, not zero), the candidates whose normals point against it are dropped first: a vertex
/// or edge that went through the other body with the rest has its nearest way out on the far side,
/// and a contact there would hold the pair in the crossing it came into. A motion contact whose
/// vertex and face already have a candidate (the same plane, so the same re-projected distance) is
/// not added again. Both backends merge so.
pub fn merge_motion_contacts(
    candidates: &mut Vec<ContactCandidate>,
    motion: &[ContactCandidate],
    approach: Vec3,
) {
    if approach != Vec3::ZERO {
        candidates.retain(|c| c.n1.dot(approach) >= 0.0);
    }
    let before = candidates.len();
    for m in motion {
        if !candidates[..before].iter().any(|c| c.fid1 == m.fid1 && c.fid2 == m.fid2) {
            candidates.push(*m);
        }
    }
}

/// An edge crossing ([`crate::detect::EdgeCrossing`], in the other mesh's frame) as a contact in
/// shape 1's frame, with the conventions of [`reproject`]: the casting mesh moves along the
/// crossing's normal to separate.
fn edge_candidate(c: &crate::detect::EdgeCrossing, from_shape2: bool, pos12: &Pose) -> ContactCandidate {
    let dist = -c.depth;
    if !from_shape2 {
        // An edge of shape 1 in shape 2 (the crossing is in shape 2's frame).
        let n1 = -pos12.transform_vector(c.normal);
        let p1 = pos12.transform_point(c.point);
        ContactCandidate {
            p1,
            p2: p1 + n1 * dist,
            n1,
            dist,
            fid1: FeatureId::Edge(c.edge),
            fid2: FeatureId::Face(c.triangle),
        }
    } else {
        // An edge of shape 2 in shape 1: shape 2 moves along the normal, from 1 toward 2.
        let n1 = c.normal;
        ContactCandidate {
            p1: c.point - n1 * dist,
            p2: c.point,
            n1,
            dist,
            fid1: FeatureId::Face(c.triangle),
            fid2: FeatureId::Edge(c.edge),
        }
    }
}

/// Compares this step's contacts of one direction with a full standard trace (no prediction).
/// Also says whether the standard trace found any contact.
fn compare_with_standard(dir: &Direction, params: &RtcdParams, ours: &[RayContact]) -> (ErrorMetrics, bool) {
    let mut reference = RtcdParams { prediction: false, ..*params };
    reference.iterative = false;
    let mut scratch = StepMetrics::default();
    let (mut theirs, mut records) = (Vec::new(), Vec::new());
    standard_direction(dir, &reference, f32::NEG_INFINITY, &mut scratch, None, &mut theirs, &mut records);
    let depth = |c: &RayContact| c.t * c.dir.dot(c.normal);
    let theirs: HashMap<u32, &RayContact> =
        theirs.iter().filter(|c| c.t >= 0.0).map(|c| (c.vertex, c)).collect();
    let ours: HashMap<u32, &RayContact> = ours.iter().filter(|c| c.t >= 0.0).map(|c| (c.vertex, c)).collect();
    let mut e = ErrorMetrics::default();
    for (v, s) in &theirs {
        e.compared_rays += 1;
        match ours.get(v) {
            None => {
                e.erroneous_rays += 1;
                e.late_contacts += 1;
            }
            Some(o) => {
                if o.triangle != s.triangle && (depth(o) - depth(s)).abs() > ERROR_DEPTH_TOLERANCE {
                    e.erroneous_rays += 1;
                }
            }
        }
    }
    for v in ours.keys() {
        if !theirs.contains_key(v) {
            e.compared_rays += 1;
            e.erroneous_rays += 1;
        }
    }
    (e, !theirs.is_empty())
}

#[cfg(test)]
mod tests {
    use glam::{Quat, Vec3};
    use rand::{Rng, SeedableRng};

    use super::*;
    use crate::{shapes, trace::NO_SKIP};

    /// One direction's standard trace, every contact and prediction kept.
    fn standard_trace(dir: &Direction, params: &RtcdParams) -> (Vec<RayContact>, Vec<RayRecord>) {
        let (mut contacts, mut records) = (Vec::new(), Vec::new());
        standard_direction(
            dir,
            params,
            f32::INFINITY,
            &mut StepMetrics::default(),
            None,
            &mut contacts,
            &mut records,
        );
        (contacts, records)
    }

    fn mesh(name: &str, (positions, indices): shapes::MeshData) -> RtcdMesh {
        RtcdMesh::new(name, &positions, &indices).unwrap()
    }

    /// A 0.8 m plate 1 mm thick whose step carried it down through another (its vertices 1.1 mm
    /// under the lower plate's top, below its bottom) gets tunnel contacts out through the top,
    /// which follow its vertices as they slide across the diagonal of that face; when the solver
    /// has taken it back up through the plate, its vertices' paths that step cross the lower plate
    /// from below, and they are the way back out, no new tunnel: no contact pushes it down. Then it
    /// rests on the top with contacts pushing up only.
    #[test]
    fn a_vertex_back_out_of_its_tunnel_is_not_sent_through_again() {
        const SLIDE: f32 = 0.15;
        let plate = |name: &str, half: f32| mesh(name, shapes::cuboid(Vec3::new(half, 0.0005, half)));
        let (lower, upper) = (plate("lower", 0.75), plate("upper", 0.4));
        let params = RtcdParams::from_meshes(&[&lower, &upper]).for_pair(&lower, &upper);
        let at = |y: f32, s: f32| Pose::new(Vec3::new(s, y, -s), Quat::from_rotation_y(0.1));
        let mut tunnels: [Vec<[u32; 2]>; 2] = Default::default();
        let step = |from: Pose, to: Pose, tunnels: &mut [Vec<[u32; 2]>; 2]| {
            let input =
                PairInput::new(crate::PairKey::new(1, 2), &lower, &upper, to).with_previous(Some(from));
            let mut out = Vec::new();
            let approach =
                pair_motion_contacts(&input, &params, 0.05, tunnels, &mut StepMetrics::default(), &mut out);
            (approach, out)
        };
        // Down through the lower plate in one step (5 cm): tunnel contacts out through its top.
        let (approach, out) = step(at(0.05, 0.0), at(-0.0011, 0.0), &mut tunnels);
        let tunnelled: Vec<&ContactCandidate> = out.iter().filter(|c| c.dist < 0.0).collect();
        assert!(!tunnelled.is_empty() && approach.y > 0.0, "{approach} {out:?}");
        assert!(tunnelled.iter().all(|c| c.n1.y > 0.99), "{tunnelled:?}");
        assert!(!tunnels[1].is_empty());
        // Still under, sliding 21 cm: the tunnels hold, each vertex's from the triangle it is over
        // now (some vertices cross the diagonal of the top face).
        let before = tunnels.clone();
        let (approach, out) = step(at(-0.0011, 0.0), at(-0.0011, SLIDE), &mut tunnels);
        assert!(approach.y > 0.0 && out.iter().all(|c| c.n1.y > 0.99), "{approach} {out:?}");
        let vertices = |t: &[[u32; 2]]| t.iter().map(|&[v, _]| v).collect::<Vec<_>>();
        assert_eq!(vertices(&tunnels[1]), vertices(&before[1]), "{before:?} {tunnels:?}");
        assert!(tunnels[1] != before[1], "no vertex crossed the diagonal: {tunnels:?}");
        // Back up through it, out on the top: no contact pushes the upper plate down.
        let (approach, out) = step(at(-0.0011, SLIDE), at(0.0015, SLIDE), &mut tunnels);
        assert!(approach.y >= 0.0, "{approach} {out:?}");
        assert!(out.iter().all(|c| c.n1.y > -0.5), "{out:?}");
        assert!(tunnels.iter().all(Vec::is_empty), "{tunnels:?}");
        // At rest on it: nothing downward either.
        let (_, out) = step(at(0.0015, SLIDE), at(0.0012, SLIDE), &mut tunnels);
        assert!(out.iter().all(|c| c.n1.y > -0.5), "{out:?}");
    }

    /// A pair's separation descents started from its last leaf pair within reach decide as fresh
    /// descents do, along a random walk of two concave meshes through contact and apart, with and
    /// without prediction: the same value beyond the reach, a value within the reach where the fresh
    /// one is (the same 0 without prediction); and the witness carries over from step to step
    /// (a witness never updated leaves `hits` at 0).
    #[test]
    fn descents_from_the_witness_decide_as_fresh_ones() {
        let (a, b) = (
            mesh("torus", shapes::torus(0.5, 0.18, 32, 12)),
            mesh("blob", shapes::star_blob(0.5, 24, 14, 5, 0.3, 3)),
        );
        let mut rng = rand_pcg::Pcg64::seed_from_u64(11);
        let (mut hits, mut within, mut beyond) = (0, 0, 0);
        for prediction in [false, true] {
            let params = RtcdParams { prediction, ..RtcdParams::from_meshes(&[&a, &b]) };
            let reach = ray_reach(&params);
            let mut witness = [0, 0];
            let mut pose = Pose::from_translation(Vec3::new(1.6, 0.0, 0.0));
            for step in 0..1500 {
                // Drift toward and away from each other (1.6 → 0.7 → 1.6 m apart), turning.
                let toward = if (step / 150) % 2 == 0 { -0.006 } else { 0.006 };
                let t = pose.translation
                    + Vec3::new(toward, 0.0, 0.0)
                    + 0.01
                        * Vec3::new(
                            rng.random_range(-1.0..1.0),
                            rng.random_range(-1.0..1.0),
                            rng.random_range(-1.0..1.0),
                        );
                let q = Quat::from_euler(
                    glam::EulerRot::XYZ,
                    rng.random_range(-0.05..0.05),
                    rng.random_range(-0.05..0.05),
                    rng.random_range(-0.05..0.05),
                );
                pose = Pose::new(
                    t.clamp(Vec3::new(0.0, -0.3, -0.3), Vec3::new(2.0, 0.3, 0.3)),
                    (q * pose.rotation).normalize(),
                );
                let before = witness;
                let fresh = separation_for_reach(&a, &b, &pose, &params);
                let kept = separation_for_reach_from(&a, &b, &pose, &params, &mut witness);
                if fresh > reach {
                    assert_eq!(kept, fresh, "step {step}, prediction {prediction}");
                    beyond += 1;
                } else {
                    assert!(
                        (0.0..=reach).contains(&kept),
                        "step {step}: {kept} where the fresh descent gives {fresh} (reach {reach})"
                    );
                    if !prediction {
                        assert_eq!(kept, fresh);
                    }
                    within += 1;
                    hits += usize::from(before == witness && before != [0, 0]);
                }
            }
        }
        assert!(
            hits > 200 && within > 500 && beyond > 500,
            "cases not covered: {hits} witness hits, {within} within, {beyond} beyond"
        );
    }

    /// The records a standard direction keeps when every vertex of `region` is traced, none skipped:
    /// the reference the reach-box tests compare with. `limit` gives each vertex's ray length; the
    /// second value counts the vertices without a record that lie outside `reach` (the skips).
    fn traced_without_skips(
        dir: &Direction,
        params: &RtcdParams,
        region: Aabb,
        limit: impl Fn(u32, &Ray) -> f32,
        reach: Option<Aabb>,
    ) -> (Vec<RayRecord>, usize) {
        let back = if params.prediction { params.culling_dist } else { 0.0 };
        let (mut all, mut skipped) = (Vec::new(), 0);
        for (v, p) in dir.from.positions().iter().enumerate() {
            if region.is_empty() || !region.contains(*p) {
                continue;
            }
            let v = v as u32;
            let ray = dir.ray(v);
            let hits = params.tracer.trace_line(dir.to, &ray, back, limit(v, &ray), NO_SKIP);
            match (hits.forward, hits.backward) {
                (Some(h), _) if h.from_inside => {
                    all.push(RayRecord { vertex: v, triangle: h.triangle, in_contact: true })
                }
                (_, Some(h)) if h.from_inside => {
                    all.push(RayRecord { vertex: v, triangle: h.triangle, in_contact: false })
                }
                _ => skipped += usize::from(reach.is_some_and(|b| !b.contains(ray.origin))),
            }
        }
        (all, skipped)
    }

    /// The reach box skips only rays that leave no record: on random poses of closed concave meshes,
    /// with and without prediction, a standard direction keeps exactly the records and contacts of
    /// tracing every vertex of the candidate region, and the box does skip candidates.
    #[test]
    fn reach_box_skips_only_rays_without_records() {
        let meshes = [
            mesh("torus", shapes::torus(0.5, 0.18, 32, 12)),
            mesh("blob", shapes::star_blob(0.5, 24, 14, 5, 0.3, 3)),
            mesh("tube", shapes::bent_tube(0.5, 0.15, 3.0, 24, 10)),
        ];
        let mut rng = rand_pcg::Pcg64::seed_from_u64(5);
        let (mut skipped, mut kept) = (0, 0);
        for k in 0..900 {
            let (a, b) = (&meshes[k % 3], &meshes[(k / 3) % 3]);
            let mut params = RtcdParams::from_meshes(&[a, b]);
            params.prediction = k % 2 == 0;
            let t = Vec3::new(
                rng.random_range(-0.8..0.8),
                rng.random_range(-0.8..0.8),
                rng.random_range(-0.8..0.8),
            );
            let q = Quat::from_euler(
                glam::EulerRot::XYZ,
                rng.random_range(-3.0..3.0),
                rng.random_range(-3.0..3.0),
                rng.random_range(-3.0..3.0),
            );
            let input = PairInput::new(crate::PairKey::new(1, 2), a, b, Pose::new(t, q));
            for dir in Direction::both(&input) {
                let (contacts, records) = standard_trace(&dir, &params);
                // Every vertex of the region traced, with the same rules.
                let exits = dir.from.exit_distances();
                let (all, skips) = traced_without_skips(
                    &dir,
                    &params,
                    dir.candidate_region(params.candidate_extension()),
                    |v, _| exits[v as usize],
                    reach_box(dir.from, dir.to, &params),
                );
                skipped += skips;
                kept += all.len();
                assert_eq!(records, all, "pose {k}");
                assert_eq!(contacts.len(), all.len());
            }
        }
        assert!(kept > 1000 && skipped > 10_000, "{kept} records, {skipped} skipped rays");
    }

    /// Into a level chunk (solid behind), the reach box skips only rays that leave no record: bodies
    /// (a blob, a torus, a thin plate) on random poses around and under a steep hilly terrain cut into
    /// small chunks, with and without prediction, the whole scene 1 cm, 8 m and 1 km across; tracing
    /// every vertex of the candidate region with the same rules (the solid reach, no skip) keeps
    /// exactly the same records and contacts, and the box does skip candidates.
    #[test]
    fn reach_box_into_level_chunks_skips_only_rays_without_records() {
        for scale in [0.01 / 8.0, 1.0, 1000.0 / 8.0] {
            reach_box_into_level_chunks_at(scale);
        }
    }

    /// The scene of `reach_box_into_level_chunks_skips_only_rays_without_records`, every length
    /// times `scale`.
    fn reach_box_into_level_chunks_at(scale: f32) {
        let height = |x: f32, z: f32| 0.8 * (1.3 * x).sin() * (0.9 * z).cos();
        let scaled = |(p, i): shapes::MeshData| -> shapes::MeshData {
            (p.into_iter().map(|v| v * scale).collect(), i)
        };
        let n = 32u32;
        let size = 8.0f32;
        let mut positions = Vec::new();
        for j in 0..=n {
            for i in 0..=n {
                let (x, z) = (size * (i as f32 / n as f32 - 0.5), size * (j as f32 / n as f32 - 0.5));
                positions.push(Vec3::new(x, height(x, z), z) * scale);
            }
        }
        let at = |i: u32, j: u32| j * (n + 1) + i;
        let indices: Vec<u32> = (0..n)
            .flat_map(|j| (0..n).map(move |i| (i, j)))
            .flat_map(|(i, j)| {
                [at(i, j), at(i, j + 1), at(i + 1, j), at(i + 1, j), at(i, j + 1), at(i + 1, j + 1)]
            })
            .collect();
        let level = crate::LevelMesh::with_chunk_triangles("hills", &positions, &indices, 64).unwrap();
        let bodies = [
            mesh("blob", scaled(shapes::star_blob(0.5, 24, 14, 5, 0.3, 3))),
            mesh("torus", scaled(shapes::torus(0.5, 0.18, 32, 12))),
            mesh("plate", scaled(shapes::cuboid(Vec3::new(0.6, 0.02, 0.4)))),
        ];
        let mut rng = rand_pcg::Pcg64::seed_from_u64(11);
        let (mut skipped, mut kept, mut contacts_seen, mut chunk_pairs) = (0, 0, 0, 0);
        let mut near = Vec::new();
        for k in 0..600 {
            let body = &bodies[k % 3];
            let (x, z) = (rng.random_range(-3.0..3.0), rng.random_range(-3.0..3.0));
            let t = Vec3::new(x, height(x, z) + rng.random_range(-0.8..0.6), z) * scale;
            let q = Quat::from_euler(
                glam::EulerRot::XYZ,
                rng.random_range(-3.0..3.0),
                rng.random_range(-3.0..3.0),
                rng.random_range(-3.0..3.0),
            );
            let pose = Pose::new(t, q);
            near.clear();
            level.chunks_overlapping(&body.aabb().transformed(&pose), &mut near);
            for &c in &near {
                let chunk = &level.chunks()[c as usize];
                let mut params = RtcdParams::from_meshes(&[body, chunk]);
                params.prediction = k % 2 == 0;
                let input = PairInput::new(crate::PairKey::new(1, 2), chunk, body, pose);
                let dir = &Direction::both(&input)[1];
                assert!(dir.to.solid_behind());
                chunk_pairs += 1;
                let (_, records) = standard_trace(dir, &params);
                let solid = dir.solid_reach(&params);
                let behind = solid_behind_box(dir.from, dir.to, &params);
                let reach = reach_box(dir.from, dir.to, &params);
                assert!(reach.is_some(), "a chunk has a reach box");
                let exits = dir.from.exit_distances();
                let (all, skips) = traced_without_skips(
                    dir,
                    &params,
                    dir.vertex_candidate_region(&params),
                    |v, ray| {
                        let exit = exits[v as usize];
                        ray_limit(
                            exit,
                            vertex_reach(solid_at(solid, behind.as_ref(), ray.origin), false, exit, &params),
                        )
                    },
                    reach,
                );
                skipped += skips;
                kept += all.len();
                contacts_seen += all.iter().filter(|r| r.in_contact).count();
                assert_eq!(records, all, "scale {scale}: pose {k}, chunk {c}");
            }
        }
        assert!(
            chunk_pairs > 1000 && kept > 2000 && contacts_seen > 1000 && skipped > 10_000,
            "scale {scale}: {chunk_pairs} chunk pairs, {kept} records ({contacts_seen} contacts), {skipped} skipped rays"
        );
    }
}
