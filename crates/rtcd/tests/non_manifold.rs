//! Non-manifold meshes are split into manifold sheets and accepted, not rejected: solids glued edge
//! to edge come apart into closed components, a fin becomes an open sheet, a face given twice is
//! dropped once.
//!
//! Every mesh is generated here, and every figure is checked against a measure of its own, with no
//! rtcd code: edge and fan counts over the output triangles, signed volumes in `f64`, connected
//! components by shared edges, and inside/outside by ray parity against the union of the solids
//! the mesh was made of.

mod common;

use std::collections::HashMap;

use glam::{DVec3, Quat, Vec3};
use rand::{Rng, seq::SliceRandom};
use rtcd::{RtcdMesh, shapes};

fn concat(parts: &[shapes::MeshData]) -> shapes::MeshData {
    let (mut v, mut i) = (Vec::new(), Vec::new());
    for (pv, pi) in parts {
        let base = v.len() as u32;
        v.extend_from_slice(pv);
        i.extend(pi.iter().map(|k| k + base));
    }
    (v, i)
}

fn edge_counts(triangles: &[[u32; 3]]) -> HashMap<(u32, u32), usize> {
    let mut counts = HashMap::new();
    for t in triangles {
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            *counts.entry((a.min(b), a.max(b))).or_insert(0) += 1;
        }
    }
    counts
}

/// Connected components of triangles sharing an edge, as lists of triangle indices.
fn components(triangles: &[[u32; 3]]) -> Vec<Vec<usize>> {
    let mut by_edge: HashMap<(u32, u32), Vec<usize>> = HashMap::new();
    for (n, t) in triangles.iter().enumerate() {
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            by_edge.entry((a.min(b), a.max(b))).or_default().push(n);
        }
    }
    let mut seen = vec![false; triangles.len()];
    let mut out = Vec::new();
    for seed in 0..triangles.len() {
        if seen[seed] {
            continue;
        }
        seen[seed] = true;
        let (mut stack, mut members) = (vec![seed], Vec::new());
        while let Some(n) = stack.pop() {
            members.push(n);
            let t = triangles[n];
            for k in 0..3 {
                let (a, b) = (t[k], t[(k + 1) % 3]);
                for &o in &by_edge[&(a.min(b), a.max(b))] {
                    if !seen[o] {
                        seen[o] = true;
                        stack.push(o);
                    }
                }
            }
        }
        out.push(members);
    }
    out
}

/// Whether the triangles around every vertex form one fan (connected through the edges at the
/// vertex): no two sheets meet at a vertex.
fn every_vertex_one_fan(triangles: &[[u32; 3]]) -> bool {
    let mut around: HashMap<u32, Vec<usize>> = HashMap::new();
    for (n, t) in triangles.iter().enumerate() {
        for &v in t {
            around.entry(v).or_default().push(n);
        }
    }
    around.iter().all(|(&v, fan)| {
        // The other two corners of each triangle, as its two spokes; a fan is connected when the
        // spokes link every triangle.
        let spokes = |n: usize| triangles[n].iter().copied().filter(move |&x| x != v);
        let mut reached = vec![fan[0]];
        let mut stack = vec![fan[0]];
        while let Some(n) = stack.pop() {
            for s in spokes(n) {
                for &o in fan {
                    if !reached.contains(&o) && spokes(o).any(|x| x == s) {
                        reached.push(o);
                        stack.push(o);
                    }
                }
            }
        }
        reached.len() == fan.len()
    })
}

fn volume(positions: &[Vec3], triangles: &[[u32; 3]], which: &[usize]) -> f64 {
    which
        .iter()
        .map(|&n| {
            let [a, b, c] = triangles[n].map(|i| positions[i as usize].as_dvec3());
            a.dot(b.cross(c)) / 6.0
        })
        .sum()
}

/// Ray parity along three fixed directions with irrational components, by majority.
fn parity_inside(p: DVec3, positions: &[Vec3], triangles: &[[u32; 3]]) -> bool {
    let dirs = [
        DVec3::new(1.0, 2f64.sqrt(), 3f64.sqrt()),
        DVec3::new(-5f64.sqrt(), 1.0, std::f64::consts::PI),
        DVec3::new(std::f64::consts::E, -7f64.sqrt(), -1.0),
    ];
    let votes = dirs
        .iter()
        .filter(|&&d| {
            let crossings = triangles
                .iter()
                .filter(|t| {
                    let [a, b, c] = t.map(|i| positions[i as usize].as_dvec3());
                    let (e1, e2) = (b - a, c - a);
                    let q = d.cross(e2);
                    let det = e1.dot(q);
                    if det.abs() < 1e-300 {
                        return false;
                    }
                    let s = p - a;
                    let u = s.dot(q) / det;
                    let r = s.cross(e1);
                    let v = d.dot(r) / det;
                    (0.0..=1.0).contains(&u) && v >= 0.0 && u + v <= 1.0 && e2.dot(r) / det > 0.0
                })
                .count();
            crossings % 2 == 1
        })
        .count();
    votes >= 2
}

fn cube_at(center: Vec3) -> shapes::MeshData {
    shapes::transformed(shapes::cuboid(Vec3::splat(0.5)), Quat::IDENTITY, center)
}

#[test]
fn two_cubes_sharing_an_edge_become_two_closed_cubes() {
    let (v, i) = concat(&[cube_at(Vec3::ZERO), cube_at(Vec3::new(1.0, 1.0, 0.0))]);
    let m = RtcdMesh::new("two cubes", &v, &i).unwrap();
    let r = m.report();
    assert_eq!((r.split_edges, r.split_vertices), (1, 2), "{r:?}");
    assert!(m.is_closed() && r.boundary_edges == 0, "{r:?}");
    assert_eq!(r.components, 2);
    assert!((m.volume() - 2.0).abs() < 1e-5, "volume {}", m.volume());
    assert!(edge_counts(m.triangles()).values().all(|&c| c == 2));
    assert!(every_vertex_one_fan(m.triangles()));
    let parts = components(m.triangles());
    assert_eq!(parts.len(), 2);
    for p in &parts {
        assert!((volume(m.positions(), m.triangles(), p) - 1.0).abs() < 1e-6);
    }
    // The vertex copies' inward rays cross their own cube, not the other cube's faces at the copy.
    let least = m.exit_distances().iter().copied().fold(f32::INFINITY, f32::min);
    assert!(least > 0.9, "shortest exit distance {least}");
    assert!(m.report().notes().iter().any(|s| s.contains("non-manifold edges split")));
}

/// Three triangles on an edge: the cube's two faces pair across the cube's solid, the fin is left
/// alone. The cube stays a closed component; the fin is an open one whose three edges are
/// boundary edges, so the mesh as a whole is open.
#[test]
fn a_fin_on_a_cube_edge_becomes_an_open_sheet_beside_a_closed_cube() {
    let (mut v, mut i) = shapes::cuboid(Vec3::splat(0.5));
    // Vertices 2 and 3 are the edge y = 0.5, z = -0.5; the fin leans out above and behind it.
    v.push(Vec3::new(0.0, 1.0, -1.0));
    i.extend([2, 3, 8]);
    let m = RtcdMesh::new("finned cube", &v, &i).unwrap();
    let r = m.report();
    assert_eq!((r.split_edges, r.split_vertices), (1, 2), "{r:?}");
    assert_eq!((r.boundary_edges, r.components, r.closed), (3, 2, false), "{r:?}");
    let parts = components(m.triangles());
    let (cube, fin): (Vec<_>, Vec<_>) = parts.into_iter().partition(|p| p.len() == 12);
    assert_eq!((cube.len(), fin.len(), fin[0].len()), (1, 1, 1));
    assert!((volume(m.positions(), m.triangles(), &cube[0]) - 1.0).abs() < 1e-6);
    let counts = edge_counts(m.triangles());
    let cube_tris: Vec<[u32; 3]> = cube[0].iter().map(|&n| m.triangles()[n]).collect();
    assert!(edge_counts(&cube_tris).keys().all(|e| counts[e] == 2), "the cube's edges have two triangles");
    assert_eq!(counts.values().filter(|&&c| c == 1).count(), 3);
}

#[test]
fn a_face_given_twice_in_opposite_winding_is_dropped_once() {
    let (v, mut i) = shapes::cuboid(Vec3::splat(0.5));
    // The -z face (triangles 0 and 1) again, wound the other way: a double-sided face.
    let twice: Vec<u32> = i[0..6].chunks_exact(3).flat_map(|t| [t[0], t[2], t[1]]).collect();
    i.extend(twice);
    let m = RtcdMesh::new("cube", &v, &i).unwrap();
    let r = m.report();
    assert_eq!((r.duplicate_triangles, r.split_edges, r.split_vertices), (2, 0, 0), "{r:?}");
    assert!(m.is_closed());
    assert_eq!(m.triangles().len(), 12);
    assert!((m.volume() - 1.0).abs() < 1e-6);
}

/// Two cones touching tip to tip (a non-manifold vertex, no non-manifold edge): the tip is copied.
#[test]
fn two_cones_touching_at_their_tips_come_apart() {
    let cone = |dir: f32| -> shapes::MeshData {
        let n = 12;
        let mut v = vec![Vec3::ZERO, Vec3::new(0.0, dir, 0.0)];
        for k in 0..n {
            let a = std::f32::consts::TAU * k as f32 / n as f32;
            v.push(Vec3::new(a.cos(), dir, a.sin()));
        }
        let mut i = Vec::new();
        for k in 0..n {
            let (p, q) = (2 + k, 2 + (k + 1) % n);
            i.extend([0, p, q, 1, q, p]);
        }
        (v, i)
    };
    let (v, i) = concat(&[cone(1.0), cone(-1.0)]);
    let m = RtcdMesh::new("hourglass", &v, &i).unwrap();
    let r = m.report();
    assert_eq!((r.split_edges, r.split_vertices, r.components), (0, 1, 2), "{r:?}");
    assert!(m.is_closed() && every_vertex_one_fan(m.triangles()));
    let expected = 2.0 * (12.0 * 0.5 * (std::f64::consts::TAU / 12.0).sin()) / 3.0;
    assert!((m.volume() as f64 - expected).abs() < 1e-4, "volume {} vs {expected}", m.volume());
}

/// A solid glued onto the base along one unit edge of its rim.
enum Glued {
    /// The unit cube in the diagonal cell beyond the edge.
    Cube,
    /// A tetrahedron: the edge and two points in the wedge beyond it, between these angles (from
    /// the second face's normal towards the first's).
    Tets(Vec<(f32, f32)>),
}

/// The base (a 10 m box, each face a 10 × 10 grid of unit squares) with solids glued onto unit
/// edges of its top and bottom rims, and the membership test of the union.
struct Glue {
    mesh: shapes::MeshData,
    /// Glued solids.
    solids: usize,
    /// Volume of each solid, the base first.
    volumes: Vec<f64>,
    /// Each glued solid: its vertices (a tetrahedron's four or a cube's two opposite corners).
    parts: Vec<(bool, Vec<DVec3>)>,
}

const HALF: f32 = 5.0;

fn glue(k: usize, seed: u64) -> Glue {
    let mut rng = common::rng(seed);
    // Rims: (first face normal, second face normal); the edge runs along their cross product.
    let rims: Vec<(Vec3, Vec3)> = [Vec3::Y, Vec3::NEG_Y]
        .into_iter()
        .flat_map(|n1| [Vec3::X, Vec3::NEG_X, Vec3::Z, Vec3::NEG_Z].map(|n2| (n1, n2)))
        .collect();
    // Unit slots 1, 3, 5, 7 along each rim: none at a corner, none next to another.
    let mut slots: Vec<(usize, u32)> = (0..rims.len()).flat_map(|r| [1, 3, 5, 7].map(|s| (r, s))).collect();
    slots.shuffle(&mut rng);
    let mut parts_data = vec![shapes::subdivided_cuboid(Vec3::splat(HALF), 10)];
    let mut volumes = vec![1000.0];
    let mut parts = Vec::new();
    for &(r, s) in &slots[..k] {
        let (n1, n2) = rims[r];
        let along = n1.cross(n2);
        let p = HALF * (n1 + n2) + (s as f32 - HALF) * along;
        let q = p + along;
        let kind = match rng.random_range(0..3) {
            0 => Glued::Cube,
            1 => Glued::Tets(vec![(0.2, 1.3)]),
            _ => Glued::Tets(vec![(0.15, 0.6), (0.9, 1.4)]),
        };
        match kind {
            Glued::Cube => {
                let center = p + 0.5 * (along + n1 + n2);
                parts_data.push(cube_at(center));
                volumes.push(1.0);
                parts.push((true, vec![(center - 0.5).as_dvec3(), (center + 0.5).as_dvec3()]));
            }
            Glued::Tets(spans) => {
                for (a0, a1) in spans {
                    let m = p + along * rng.random_range(0.2..0.8);
                    let r0 = rng.random_range(0.5..1.0);
                    let r1 = rng.random_range(0.5..1.0);
                    let at = |a: f32, r: f32| m + r * (a.cos() * n2 + a.sin() * n1);
                    let mut t = [p, q, at(a0, r0), at(a1, r1)];
                    let det = (t[1] - t[0]).dot((t[2] - t[0]).cross(t[3] - t[0]));
                    if det < 0.0 {
                        t.swap(2, 3);
                    }
                    parts_data.push((t.to_vec(), vec![0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3]));
                    volumes.push(det.abs() as f64 / 6.0);
                    parts.push((false, t.iter().map(|v| v.as_dvec3()).collect()));
                }
            }
        }
    }
    Glue { mesh: concat(&parts_data), solids: parts.len(), volumes, parts }
}

impl Glue {
    /// Whether `p` is inside the union of the base and the glued solids.
    fn contains(&self, p: DVec3) -> bool {
        if p.abs().max_element() < HALF as f64 {
            return true;
        }
        self.parts.iter().any(|(cube, v)| {
            if *cube {
                return p.cmpgt(v[0]).all() && p.cmplt(v[1]).all();
            }
            // Inside each face's plane, taking the face's side from the opposite vertex.
            [[0, 1, 2, 3], [0, 1, 3, 2], [0, 2, 3, 1], [1, 2, 3, 0]].iter().all(|&[a, b, c, o]| {
                let n = (v[b] - v[a]).cross(v[c] - v[a]);
                n.dot(p - v[a]) * n.dot(v[o] - v[a]) > 0.0
            })
        })
    }
}

/// k = 1..20 solids glued edge to edge onto a box, at random: each glued edge is split, every
/// solid comes out a closed component with its own volume, and ray parity over the output agrees
/// with the union of the solids at random points.
#[test]
fn solids_glued_edge_to_edge_at_random_come_apart_closed() {
    let mut rng = common::rng(7);
    for k in 1..=20 {
        let g = glue(k, 100 + k as u64);
        let (v, i) = &g.mesh;
        let m = RtcdMesh::new(format!("glued {k}"), v, i).unwrap();
        let r = m.report();
        let counts = edge_counts(m.triangles());
        let parts = components(m.triangles());
        let mut got: Vec<f64> = parts.iter().map(|p| volume(m.positions(), m.triangles(), p)).collect();
        let mut want = g.volumes.clone();
        got.sort_by(f64::total_cmp);
        want.sort_by(f64::total_cmp);
        let mut misses = 0;
        let points = 400;
        for n in 0..points {
            // Half near the glued solids, half anywhere around the box.
            let p = if n % 2 == 0 {
                let (_, vs) = &g.parts[n / 2 % g.parts.len()];
                vs[0] + DVec3::new(rng.random(), rng.random(), rng.random()) * 1.5 - 0.25
            } else {
                DVec3::new(rng.random(), rng.random(), rng.random()) * 14.0 - 7.0
            };
            if parity_inside(p, m.positions(), m.triangles()) != g.contains(p) {
                misses += 1;
            }
        }
        let least_exit = m.exit_distances().iter().copied().fold(f32::INFINITY, f32::min);
        println!(
            "{k} glued edges, {} solids: split {} edges, {} vertex copies, {} components, closed {}, \
             volume {:.4} (solids {:.4}), parity misses {misses}/{points}, shortest exit distance {least_exit:.3}",
            g.solids,
            r.split_edges,
            r.split_vertices,
            r.components,
            r.closed,
            m.volume(),
            want.iter().sum::<f64>(),
        );
        assert_eq!(r.split_edges, k, "{r:?}");
        assert_eq!(r.split_vertices, 2 * g.solids, "{r:?}");
        assert!(r.closed && r.boundary_edges == 0, "{r:?}");
        assert!(counts.values().all(|&c| c == 2), "an edge without exactly two triangles");
        assert!(every_vertex_one_fan(m.triangles()));
        assert_eq!((parts.len(), r.components), (g.solids + 1, g.solids + 1));
        for (a, b) in got.iter().zip(&want) {
            assert!((a - b).abs() < 1e-4 * b.max(1.0), "component volumes {got:?} vs solids {want:?}");
        }
        assert_eq!(misses, 0);
        assert!(least_exit > 0.05, "a vertex ray stops at {least_exit}");
    }
}

/// The boundary surface of a set of unit voxels in an `n³` grid: two triangles per face between a
/// filled cell and an empty one (or the outside), wound outwards, on shared grid vertices. Cells
/// that touch only along an edge give that edge four triangles; only at a corner, a vertex shared
/// by two fans.
fn voxel_surface(n: usize, filled: &[bool]) -> shapes::MeshData {
    let cell = |x: i64, y: i64, z: i64| {
        let inside = (0..n as i64).contains(&x) && (0..n as i64).contains(&y) && (0..n as i64).contains(&z);
        inside && filled[x as usize + n * (y as usize + n * z as usize)]
    };
    let m = n + 1;
    let v: Vec<Vec3> =
        (0..m * m * m).map(|k| Vec3::new((k % m) as f32, (k / m % m) as f32, (k / (m * m)) as f32)).collect();
    let id = |p: [i64; 3]| (p[0] as usize + m * (p[1] as usize + m * p[2] as usize)) as u32;
    let mut i = Vec::new();
    for z in 0..n as i64 {
        for y in 0..n as i64 {
            for x in 0..n as i64 {
                if !cell(x, y, z) {
                    continue;
                }
                for d in 0..3 {
                    let (u, w) = ((d + 1) % 3, (d + 2) % 3);
                    for side in [0, 1] {
                        let mut next = [x, y, z];
                        next[d] += if side == 1 { 1 } else { -1 };
                        if cell(next[0], next[1], next[2]) {
                            continue;
                        }
                        let corner = |du: i64, dw: i64| {
                            let mut p = [x, y, z];
                            p[d] += side;
                            p[u] += du;
                            p[w] += dw;
                            id(p)
                        };
                        // Counter-clockwise seen from +d (e_u × e_w = e_d), reversed on the - side.
                        let mut q = [corner(0, 0), corner(1, 0), corner(1, 1), corner(0, 1)];
                        if side == 0 {
                            q.reverse();
                        }
                        i.extend([q[0], q[1], q[2], q[0], q[2], q[3]]);
                    }
                }
            }
        }
    }
    (v, i)
}

/// Checks the split surface of voxels: closed, two triangles on every edge, one fan at every
/// vertex, the voxels' volume, and ray parity matching the cells at random points. Returns the
/// report.
fn check_voxels(name: &str, n: usize, filled: &[bool], rng: &mut impl Rng) -> rtcd::MeshReport {
    let (v, i) = voxel_surface(n, filled);
    let m = RtcdMesh::new(name, &v, &i).unwrap();
    let r = m.report().clone();
    assert!(r.closed, "{name}: {r:?}");
    assert!(edge_counts(m.triangles()).values().all(|&c| c == 2), "{name}: {r:?}");
    assert!(every_vertex_one_fan(m.triangles()), "{name}: {r:?}");
    let cells = filled.iter().filter(|&&f| f).count() as f64;
    let whole = volume(m.positions(), m.triangles(), &(0..m.triangles().len()).collect::<Vec<_>>());
    assert!((whole - cells).abs() < 1e-6, "{name}: volume {whole} of {cells} cells");
    for _ in 0..200 {
        let p = DVec3::new(rng.random(), rng.random(), rng.random()) * (n as f64 + 1.0) - 0.5;
        let c = p.floor();
        let inside = c.cmpge(DVec3::ZERO).all()
            && c.cmplt(DVec3::splat(n as f64)).all()
            && filled[c.x as usize + n * (c.y as usize + n * c.z as usize)];
        assert_eq!(parity_inside(p, m.positions(), m.triangles()), inside, "{name}: at {p}");
    }
    r
}

/// Two notches cut into a block's middle layer from two sides, touching along one edge inside it:
/// both ends of that edge stay single vertices after the pairing (the fan around each runs through
/// the edge twice), so the fan is cut at one end and the other end split after.
#[test]
fn notches_touching_along_an_edge_are_cut_apart_at_its_ends() {
    let n = 4;
    let mut filled = vec![true; n * n * 3];
    filled.resize(n * n * n, false);
    // Layer z = 1: cells (0, 2), (1, 2) open to the -x side, (2, 0), (2, 1) to the -y side; (1, 2)
    // and (2, 1) touch along the edge x = y = 2.
    for (x, y) in [(0, 2), (1, 2), (2, 0), (2, 1)] {
        filled[x + n * (y + n)] = false;
    }
    let r = check_voxels("notches", n, &filled, &mut common::rng(3));
    assert_eq!((r.split_edges, r.split_vertices, r.components), (1, 2, 1), "{r:?}");
}

/// Fills the empty cells that no path of face-adjacent empty cells joins to the outside: hollow
/// solids are not what these tests are about.
fn fill_cavities(n: usize, filled: &mut [bool]) {
    let at = |x: usize, y: usize, z: usize| x + n * (y + n * z);
    let mut outside = vec![false; n * n * n];
    let mut stack: Vec<[usize; 3]> = Vec::new();
    for z in 0..n {
        for y in 0..n {
            for x in 0..n {
                let rim = [x, y, z].iter().any(|&c| c == 0 || c == n - 1);
                if rim && !filled[at(x, y, z)] {
                    outside[at(x, y, z)] = true;
                    stack.push([x, y, z]);
                }
            }
        }
    }
    while let Some(c) = stack.pop() {
        for d in 0..3 {
            for step in [-1i64, 1] {
                let mut o = c.map(|v| v as i64);
                o[d] += step;
                if o.iter().any(|&v| v < 0 || v >= n as i64) {
                    continue;
                }
                let k = at(o[0] as usize, o[1] as usize, o[2] as usize);
                if !filled[k] && !outside[k] {
                    outside[k] = true;
                    stack.push(o.map(|v| v as usize));
                }
            }
        }
    }
    for (f, o) in filled.iter_mut().zip(outside) {
        *f = !o;
    }
}

/// Random voxel sets: every kind of non-manifold edge and vertex voxels make, all resolved into a
/// closed manifold surface of the right volume.
#[test]
fn random_voxel_sets_become_closed_manifolds() {
    let mut rng = common::rng(11);
    let (mut split_edges, mut split_vertices) = (0, 0);
    for seed in 0..40 {
        let n = 4;
        let mut filled: Vec<bool> = (0..n * n * n).map(|_| rng.random_bool(0.45)).collect();
        fill_cavities(n, &mut filled);
        if !filled.contains(&true) {
            continue;
        }
        let r = check_voxels(&format!("voxels {seed}"), n, &filled, &mut rng);
        split_edges += r.split_edges;
        split_vertices += r.split_vertices;
    }
    println!("40 random voxel sets: {split_edges} non-manifold edges split, {split_vertices} vertex copies");
    assert!(split_edges > 40 && split_vertices > 40);
}

/// Where a ray from `o` along `d` leaves the axis-aligned box `(min, max)` it enters first: the box
/// holding the ray's first millimetre, by slab intersections (no rtcd code).
fn exit_from_boxes(o: Vec3, d: Vec3, boxes: &[(Vec3, Vec3)]) -> f32 {
    let p = o + d * 1e-3;
    let (lo, hi) = *boxes
        .iter()
        .find(|(lo, hi)| (p.cmpge(*lo) & p.cmple(*hi)).all())
        .expect("the ray starts into a box");
    (0..3)
        .map(|k| match d[k] {
            x if x > 0.0 => (hi[k] - o[k]) / x,
            x if x < 0.0 => (lo[k] - o[k]) / x,
            _ => f32::INFINITY,
        })
        .fold(f32::INFINITY, f32::min)
}

/// A box standing on another's face, as one mesh (stacked props, a level piece): the corners of the
/// small box lie on the big box's top face. Every vertex's inward ray gets the thickness of its box
/// along it, measured by slabs (a ray that met the face it starts on ended there, at 0: no
/// thickness, and the body's thinnest fell back to its whole diagonal).
#[test]
fn a_box_standing_on_a_box_keeps_its_thickness() {
    let (big, small) = (
        (Vec3::new(-1.0, -1.0, -1.0), Vec3::new(1.0, 0.0, 1.0)),
        (Vec3::new(0.1, 0.0, -0.3), Vec3::new(0.5, 0.4, 0.1)),
    );
    let part = |(lo, hi): (Vec3, Vec3)| {
        shapes::transformed(shapes::cuboid((hi - lo) * 0.5), Quat::IDENTITY, (hi + lo) * 0.5)
    };
    let (v, i) = concat(&[part(big), part(small)]);
    let m = RtcdMesh::new("stacked", &v, &i).unwrap();
    assert_eq!(m.positions().len(), 16, "the two boxes stay apart (no vertex welded)");
    for (k, (&p, &n)) in m.positions().iter().zip(m.normals()).enumerate() {
        let expected = exit_from_boxes(p, -n, &[big, small]);
        let got = m.exit_distances()[k];
        assert!(
            got > 0.0 && (got - expected).abs() <= 1e-4 * (1.0 + expected),
            "vertex {k} at {p}: exit {got}, the boxes' {expected}"
        );
    }
    let thinnest = m.exit_distances().iter().copied().fold(f32::INFINITY, f32::min);
    assert!(thinnest > 0.0);
    assert_eq!(m.half_thickness()[1], 0.5 * thinnest);
}
