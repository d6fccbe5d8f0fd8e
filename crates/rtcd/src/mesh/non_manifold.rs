//! Non-manifold edges and vertices split into manifold sheets, so that every edge has at most two
//! triangles and the narrow phase can trace the mesh (edge adjacency, vertex normals and exit
//! distances all assume a surface that is locally a disk or a half-disk).
//!
//! Real assets have such edges: a fin on a box's edge (three triangles), two closed solids touching
//! along one edge (four), a sheet glued onto a solid. They are resolved as solid modelling resolves
//! them (the radial ordering of Weiler's radial-edge structure; the cutting step of Guéziec, Taubin,
//! Lazarus and Horn, *Cutting and stitching: converting sets of polygons to manifold surfaces*,
//! IEEE TVCG 2001):
//!
//! 1. **Pairing.** The triangles on an edge `(a, b)` used by more than two are sorted by the angle
//!    of their third vertex around the edge's axis. A triangle walking the edge `a → b` has its
//!    normal on the side of increasing angle, so its solid (the side opposite its normal) lies
//!    towards the previous triangle; one walking `b → a` has its solid towards the next. Each
//!    triangle is paired with its angular neighbour on its solid side when that neighbour walks the
//!    edge the other way (consistent winding): a wedge of solid between them. A triangle left
//!    unpaired (a fin, or one wound against its neighbours) gets the edge as a boundary edge.
//!    Edges with one or two triangles join them as they are (the winding is repaired later).
//! 2. **Vertex split.** The triangle corners are merged by union-find across every joined edge
//!    (the corners of `a` in the two triangles, and those of `b`). A vertex whose corners fall in
//!    several classes keeps its index for the first class met and gets a copy (same position, new
//!    index) for each other. Two solids touching along an edge come apart there, each closed; a fin
//!    becomes a separate open sheet; two fans that only touch at a vertex (a non-manifold vertex)
//!    come apart the same way, at no extra cost.
//! 3. **Fan cut.** Rarely, both ends of a split edge stay single vertices: the fan around `a` runs
//!    through the edge twice (a solid whose hole is pinched to a slit). The corners of `a` are then
//!    merged again without the joins across that edge, which cuts `a`'s fan into pieces that each end
//!    on the edge, and each piece gets its own copy of `a`: the two ends of a piece become the edge's
//!    two triangles. This pairs the edge's triangles anew, which can leave two fans meeting at `b`,
//!    so step 2 runs again. Repeated until no edge has more than two triangles; a cut and a split
//!    only divide the triangles of the edges at a vertex, and each cut resolves an edge, so it ends.
//!
//! The copies are never welded back: nothing after this step compares positions.

use std::collections::HashMap;

use glam::Vec3;

use super::clean::edge_map;

/// What the split changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Split {
    /// Edges that had more than two triangles.
    pub edges: usize,
    /// Vertex copies made.
    pub vertices: usize,
}

/// Two triangles joined across the edge `(a, b)`.
#[derive(Clone, Copy, Debug)]
struct Join {
    t: u32,
    o: u32,
    a: u32,
    b: u32,
}

/// Splits the non-manifold edges and vertices of `triangles` (see the module docs), appending the
/// vertex copies to `positions`. Afterwards every edge has at most two triangles.
pub(crate) fn split_non_manifold(positions: &mut Vec<Vec3>, triangles: &mut [[u32; 3]]) -> Split {
    let (joins, edges) = join_edges(positions, triangles);
    let mut vertices = split_vertices(positions, triangles, &joins, None);
    loop {
        let map = edge_map(triangles);
        let Some(&(a, b)) = map.iter().filter(|(_, l)| l.len() > 2).map(|(e, _)| e).min() else {
            break;
        };
        let (mut joins, _) = join_edges(positions, triangles);
        joins.retain(|j| (j.a.min(j.b), j.a.max(j.b)) != (a, b));
        vertices += split_vertices(positions, triangles, &joins, Some(a));
        // The cut pairs the edge's triangles anew, which can leave two fans meeting at `b`.
        let (joins, _) = join_edges(positions, triangles);
        vertices += split_vertices(positions, triangles, &joins, None);
    }
    Split { edges, vertices }
}

/// The joins across every edge, and how many edges had more than two triangles.
fn join_edges(positions: &[Vec3], triangles: &[[u32; 3]]) -> (Vec<Join>, usize) {
    let mut joins = Vec::with_capacity(triangles.len() * 3 / 2);
    let mut split = 0;
    for (&(a, b), list) in edge_map(triangles).iter() {
        match list[..] {
            [_] => {}
            [(t, _), (o, _)] => joins.push(Join { t, o, a, b }),
            _ => {
                split += 1;
                pair_around_edge(positions, triangles, (a, b), list, &mut joins);
            }
        }
    }
    (joins, split)
}

/// Pairs the triangles on the edge `(a, b)` across the wedges of solid between them (step 1 of the
/// module docs). `list` holds each triangle with the local index of the edge in it.
fn pair_around_edge(
    positions: &[Vec3],
    triangles: &[[u32; 3]],
    (a, b): (u32, u32),
    list: &[(u32, u8)],
    joins: &mut Vec<Join>,
) {
    let origin = positions[a as usize];
    let axis = (positions[b as usize] - origin).normalize_or_zero();
    let u = axis.any_orthonormal_vector();
    // (u, w, axis) right-handed: axis × (cos θ u + sin θ w) is the direction at θ + 90°.
    let w = axis.cross(u);
    let mut around: Vec<(f32, u32, bool)> = list
        .iter()
        .map(|&(t, k)| {
            let tri = triangles[t as usize];
            let d = positions[tri[(k as usize + 2) % 3] as usize] - origin;
            // Walking a → b, the normal (b - a) × (c - a) points towards increasing angle.
            (d.dot(w).atan2(d.dot(u)), t, tri[k as usize] == a)
        })
        .collect();
    around.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
    let m = around.len();
    for i in 0..m {
        let (prev, next) = (around[i], around[(i + 1) % m]);
        // Solid between them: `prev`'s solid is towards increasing angle (it walks b → a), `next`'s
        // towards decreasing angle (it walks a → b).
        if !prev.2 && next.2 {
            joins.push(Join { t: prev.1, o: next.1, a, b });
        }
    }
}

/// Merges corners across `joins` (only those of `only`, when given) and gives each vertex one copy
/// per class of its corners beyond the first (step 2 of the module docs). Returns the copies made.
fn split_vertices(
    positions: &mut Vec<Vec3>,
    triangles: &mut [[u32; 3]],
    joins: &[Join],
    only: Option<u32>,
) -> usize {
    let corner = |t: u32, v: u32| -> usize {
        let k = triangles[t as usize].iter().position(|&x| x == v).unwrap_or(0);
        3 * t as usize + k
    };
    let mut sets = UnionFind::new(3 * triangles.len());
    for j in joins {
        for v in [j.a, j.b] {
            if only.is_none_or(|o| o == v) {
                sets.union(corner(j.t, v), corner(j.o, v));
            }
        }
    }
    let mut keeper = vec![usize::MAX; positions.len()];
    let mut copies: HashMap<usize, u32> = HashMap::new();
    let before = positions.len();
    for (t, tri) in triangles.iter_mut().enumerate() {
        for (k, corner) in tri.iter_mut().enumerate() {
            let v = *corner;
            if only.is_some_and(|o| o != v) {
                continue;
            }
            let class = sets.find(3 * t + k);
            let keep = &mut keeper[v as usize];
            if *keep == usize::MAX {
                *keep = class;
            } else if *keep != class {
                *corner = *copies.entry(class).or_insert_with(|| {
                    positions.push(positions[v as usize]);
                    positions.len() as u32 - 1
                });
            }
        }
    }
    positions.len() - before
}

/// Disjoint sets with path halving and union by size.
struct UnionFind {
    parent: Vec<usize>,
    size: Vec<u32>,
}

impl UnionFind {
    fn new(n: usize) -> Self {
        Self { parent: (0..n).collect(), size: vec![1; n] }
    }

    fn find(&mut self, mut x: usize) -> usize {
        while self.parent[x] != x {
            self.parent[x] = self.parent[self.parent[x]];
            x = self.parent[x];
        }
        x
    }

    fn union(&mut self, x: usize, y: usize) {
        let (mut x, mut y) = (self.find(x), self.find(y));
        if x == y {
            return;
        }
        if self.size[x] < self.size[y] {
            std::mem::swap(&mut x, &mut y);
        }
        self.parent[y] = x;
        self.size[x] += self.size[y];
    }
}
