//! Everyday game content: the props a game drops on a floor, not the papers' uniform concave meshes.
//!
//! A fixed catalogue of closed triangle meshes from 12 to 2,000 triangles and from 5 cm to 5 m
//! ([`catalogue`]): boxes of every proportion (a die, a crate, a plank, a 1 cm plate, a 5 m beam),
//! a box tessellated as an ordinary mesh, low-poly furniture (a table and a stool on four legs, a
//! chair, a bookcase, a trestle bench), rings and a tyre, balls, a rock, a bent pipe, a can, a
//! spring and a U bracket. Every mesh is one closed 2-manifold component, checked by
//! [`RtcdMesh::new`]; the boxes are [`RtcdMesh::cuboid`]s, which the narrow phase treats as exact
//! solid boxes.
//!
//! [`Everyday`] drops a seeded selection of them as a pile on a static ground box closed by four
//! walls, as [`crate::Avalanche`] does with its concave meshes: every kind in turn (in a seeded
//! order), seeded orientations (long and wide props nearly flat, small ones any way up), seeded
//! places on the floor, each raised until its bounding box clears the ones already placed.

use std::{collections::HashMap, f32::consts::TAU, sync::Arc};

use glam::{Quat, Vec3};
use rtcd::{RtcdMesh, shapes};

use crate::{Cuboid, GROUND_TOP, Rng};

/// One prop of the catalogue.
#[derive(Clone, Debug)]
pub struct Prop {
    /// Short name (also the mesh's name).
    pub name: &'static str,
    /// How it is made, in one line.
    pub recipe: &'static str,
    /// The mesh, centred on its bounding box.
    pub mesh: Arc<RtcdMesh>,
}

impl Prop {
    /// Whether the mesh is an exact box ([`RtcdMesh::cuboid`]).
    pub fn is_cuboid(&self) -> bool {
        self.mesh.cuboid_half_extents().is_some()
    }
}

/// One body of the pile, at rest at the start.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EverydayBody {
    /// Index into [`Everyday::meshes`] (and [`Everyday::props`]).
    pub mesh: usize,
    /// Initial position of the mesh's frame (the centre of its bounding box).
    pub translation: Vec3,
    /// Initial orientation.
    pub rotation: Quat,
    /// Whether the mesh is an exact box ([`RtcdMesh::cuboid`]): an engine may give it its own box
    /// collider.
    pub cuboid: bool,
}

/// The pile: the catalogue, the bodies, the ground and its walls.
#[derive(Clone, Debug)]
pub struct Everyday {
    /// The catalogue ([`catalogue`]), in its order.
    pub props: Vec<Prop>,
    /// The props' meshes, in the same order.
    pub meshes: Vec<Arc<RtcdMesh>>,
    /// Every body, in the order they were placed (lowest first, mostly).
    pub bodies: Vec<EverydayBody>,
    /// The static ground: its top face at [`GROUND_TOP`], reaching [`Everyday::SLAB_MARGIN`] beyond
    /// the walls' outer faces.
    pub ground: Cuboid,
    /// The four static walls standing on the ground (+x, -x, +z, -z).
    pub walls: [Cuboid; 4],
    /// Half width of the floor between the walls (the same in x and z).
    pub floor_half_width: f32,
}

impl Everyday {
    /// Bodies at full scale: every kind of the catalogue three times or so.
    pub const COUNT: usize = 60;
    /// The seed every user takes by default.
    pub const DEFAULT_SEED: u64 = 1;
    /// Half width of the floor between the walls (m): room for the 5 m beam lying diagonally.
    pub const FLOOR_HALF_WIDTH: f32 = 4.0;
    /// Height of the lowest bounding boxes above the ground (m).
    pub const DROP: f32 = 0.5;
    /// Gap between the bounding boxes of the placed bodies (m).
    pub const GAP: f32 = 0.05;
    /// Height of the walls above the ground (m).
    pub const WALL_HEIGHT: f32 = 3.0;
    /// Wall thickness (m).
    pub const WALL_THICKNESS: f32 = 0.5;
    /// Half thickness of the ground box (m).
    pub const SLAB_HALF_THICKNESS: f32 = 0.5;
    /// How far the ground reaches beyond the walls' outer faces (m).
    pub const SLAB_MARGIN: f32 = 1.0;
    /// Props whose bounding radius is at least this (m) start nearly flat (a random turn about the
    /// vertical, tilted by at most [`Everyday::MAX_TILT`]), as a game stacks planks and tables; the
    /// smaller ones take any orientation.
    pub const FLAT_RADIUS: f32 = 0.5;
    /// Largest tilt of the props that start nearly flat (radians, 15°).
    pub const MAX_TILT: f32 = 0.26;

    /// `count` bodies from the catalogue, placed from `seed`.
    pub fn new(count: usize, seed: u64) -> Result<Self, String> {
        let props = catalogue()?;
        let meshes: Vec<Arc<RtcdMesh>> = props.iter().map(|p| p.mesh.clone()).collect();
        let mut rng = Rng::new(seed);
        // Every kind once before any kind twice, in a seeded order (Fisher-Yates).
        let mut order: Vec<usize> = (0..props.len()).collect();
        for i in (1..order.len()).rev() {
            let j = ((rng.next_f32() * (i + 1) as f32) as usize).min(i);
            order.swap(i, j);
        }
        let f = Self::FLOOR_HALF_WIDTH;
        let mut boxes: Vec<(Vec3, Vec3)> = Vec::with_capacity(count);
        let mut bodies = Vec::with_capacity(count);
        for k in 0..count {
            let mesh = order[k % order.len()];
            let m = &meshes[mesh];
            let rotation = if m.max_radius() >= Self::FLAT_RADIUS {
                let yaw = Quat::from_rotation_y(rng.next_f32() * TAU);
                let axis = Vec3::new(rng.signed(1.0), 0.0, rng.signed(1.0)).normalize_or(Vec3::X);
                yaw * Quat::from_axis_angle(axis, rng.signed(Self::MAX_TILT))
            } else {
                rng.rotation()
            };
            // The rotated bounding box, relative to the body's origin.
            let (mut lo, mut hi) = (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
            for v in m.positions() {
                let p = rotation * *v;
                lo = lo.min(p);
                hi = hi.max(p);
            }
            let reach = |lo: f32, hi: f32, u: f32| {
                // Inside the walls, with the gap; a prop wider than the floor stays centred.
                let (a, b) = (-f + Self::GAP - lo, f - Self::GAP - hi);
                if a < b { a + (b - a) * u } else { 0.5 * (a + b) }
            };
            let x = reach(lo.x, hi.x, rng.next_f32());
            let z = reach(lo.z, hi.z, rng.next_f32());
            let mut y = GROUND_TOP + Self::DROP - lo.y;
            // Raise it over every placed box it overlaps until it overlaps none.
            loop {
                let (a, b) = (Vec3::new(x, y, z) + lo, Vec3::new(x, y, z) + hi);
                let over = boxes
                    .iter()
                    .filter(|(c, d)| {
                        a.x < d.x + Self::GAP
                            && c.x < b.x + Self::GAP
                            && a.z < d.z + Self::GAP
                            && c.z < b.z + Self::GAP
                            && a.y < d.y + Self::GAP
                            && c.y < b.y + Self::GAP
                    })
                    .map(|(_, d)| d.y)
                    .fold(f32::NEG_INFINITY, f32::max);
                if over == f32::NEG_INFINITY {
                    break;
                }
                y = over + Self::GAP - lo.y + 1e-4;
            }
            let translation = Vec3::new(x, y, z);
            boxes.push((translation + lo, translation + hi));
            bodies.push(EverydayBody { mesh, translation, rotation, cuboid: props[mesh].is_cuboid() });
        }
        let (t, h) = (Self::WALL_THICKNESS, Self::WALL_HEIGHT);
        let outer = f + t + Self::SLAB_MARGIN;
        let ground = Cuboid {
            center: Vec3::new(0.0, GROUND_TOP - Self::SLAB_HALF_THICKNESS, 0.0),
            half_extents: Vec3::new(outer, Self::SLAB_HALF_THICKNESS, outer),
        };
        let y = GROUND_TOP + 0.5 * h;
        let x_wall = |sign: f32| Cuboid {
            center: Vec3::new(sign * (f + 0.5 * t), y, 0.0),
            half_extents: Vec3::new(0.5 * t, 0.5 * h, f + t),
        };
        let z_wall = |sign: f32| Cuboid {
            center: Vec3::new(0.0, y, sign * (f + 0.5 * t)),
            half_extents: Vec3::new(f, 0.5 * h, 0.5 * t),
        };
        let walls = [x_wall(1.0), x_wall(-1.0), z_wall(1.0), z_wall(-1.0)];
        Ok(Self { props, meshes, bodies, ground, walls, floor_half_width: f })
    }

    /// The name of mesh `i`.
    pub fn mesh_name(&self, i: usize) -> &'static str {
        self.props[i].name
    }

    /// Total triangles of every body.
    pub fn triangles(&self) -> usize {
        self.bodies.iter().map(|b| self.meshes[b.mesh].triangles().len()).sum()
    }

    /// Whether a point is over the floor between the walls.
    pub fn inside_walls(&self, p: Vec3) -> bool {
        p.x.abs() <= self.floor_half_width && p.z.abs() <= self.floor_half_width
    }

    /// Height of the highest bounding box at the start.
    pub fn top(&self) -> f32 {
        self.bodies
            .iter()
            .map(|b| {
                let m = &self.meshes[b.mesh];
                m.positions().iter().map(|v| (b.rotation * *v).y).fold(f32::NEG_INFINITY, f32::max)
                    + b.translation.y
            })
            .fold(GROUND_TOP, f32::max)
    }

    /// The ground, then the walls.
    pub fn statics(&self) -> impl Iterator<Item = Cuboid> + '_ {
        std::iter::once(self.ground).chain(self.walls)
    }
}

/// The catalogue: every prop, validated (one closed 2-manifold component, no triangle dropped).
pub fn catalogue() -> Result<Vec<Prop>, String> {
    let cuboid = |name: &'static str, recipe: &'static str, half: Vec3| -> Result<Prop, String> {
        let mesh = RtcdMesh::cuboid(name, half).map_err(|e| format!("{name}: {e}"))?;
        if mesh.cuboid_half_extents().is_none() {
            return Err(format!("{name}: not kept as an exact box"));
        }
        Ok(Prop { name, recipe, mesh: Arc::new(mesh) })
    };
    let mesh = |name: &'static str, recipe: &'static str, data: shapes::MeshData| -> Result<Prop, String> {
        Ok(Prop { name, recipe, mesh: Arc::new(closed_mesh(name, data)?) })
    };
    let straight = |half_height: f32, radius: f32, segments: u32| {
        shapes::tube_along(2, segments, false, move |s| {
            (Vec3::new(0.0, half_height * (2.0 * s - 1.0), 0.0), Vec3::Y, radius)
        })
    };
    Ok(vec![
        cuboid("die", "box 5 cm", Vec3::splat(0.025))?,
        cuboid("crate", "box 50 cm", Vec3::splat(0.25))?,
        cuboid("plank", "box 2 m x 4 cm x 20 cm", Vec3::new(1.0, 0.02, 0.1))?,
        cuboid("plate", "box 1 m x 1 cm x 1 m", Vec3::new(0.5, 0.005, 0.5))?,
        cuboid("beam", "box 5 m x 20 cm x 30 cm", Vec3::new(2.5, 0.1, 0.15))?,
        mesh(
            "panel",
            "box 1.2 m x 5 cm x 80 cm as an ordinary mesh, each face in 4 x 4 quads",
            shapes::subdivided_cuboid(Vec3::new(0.6, 0.025, 0.4), 4),
        )?,
        mesh("table", "table 1.2 x 0.75 x 0.8 m: top 4 cm and four 6 cm legs, one surface", table())?,
        mesh("chair", "chair 44 x 90 x 44 cm: four legs, seat, back, one surface", chair())?,
        mesh("stool", "stool 34 x 50 x 34 cm: four legs joined by a stretcher ring", stool())?,
        mesh("bookcase", "bookcase 80 x 180 x 30 cm: sides, back, four shelves", bookcase())?,
        mesh(
            "bench",
            "trestle bench 1.5 x 0.45 x 0.35 m: a Π profile extruded",
            shapes::extrude(
                &[
                    (-0.75, 0.0),
                    (-0.7, 0.0),
                    (-0.7, 0.4),
                    (0.7, 0.4),
                    (0.7, 0.0),
                    (0.75, 0.0),
                    (0.75, 0.45),
                    (-0.75, 0.45),
                ],
                0.35,
            ),
        )?,
        mesh("bracket", "U bracket 30 x 20 x 10 cm, walls 2 cm", shapes::u_bracket(0.3, 0.2, 0.02, 0.1))?,
        mesh("ring", "ring: torus 15 cm / 3.5 cm, 8 x 4 segments", shapes::torus(0.15, 0.035, 8, 4))?,
        mesh("tyre", "tyre: torus 30 cm / 10 cm, 24 x 12 segments", shapes::torus(0.3, 0.1, 24, 12))?,
        mesh("ball", "ball: icosphere radius 11 cm, frequency 3", shapes::icosphere(0.11, 3))?,
        mesh("pebble", "pebble: icosahedron radius 3 cm", shapes::icosphere(0.03, 1))?,
        mesh(
            "rock",
            "rock: star-shaped blob radius 50 cm, 6 lobes, UV 40 x 26 (2,000 triangles)",
            shapes::star_blob(0.5, 40, 26, 6, 0.2, 7),
        )?,
        mesh(
            "pipe",
            "pipe: tube radius 4 cm bent 90° on a 25 cm radius, 12 rings x 10",
            shapes::bent_tube(0.25, 0.04, std::f32::consts::FRAC_PI_2, 12, 10),
        )?,
        mesh("can", "can: capped cylinder 12 cm x radius 3.3 cm, 12 sides", straight(0.06, 0.033, 12))?,
        mesh(
            "spring",
            "spring: coil radius 4 cm, 4 turns of 3 cm, wire radius 6 mm, 96 rings x 6",
            shapes::coil(0.04, 0.03, 4.0, 0.006, 96, 6),
        )?,
    ])
}

/// `RtcdMesh::new` on `data` centred on its bounding box, refused unless it is one closed
/// component with no triangle dropped (welding and re-winding are allowed).
pub fn closed_mesh(name: &str, (positions, indices): shapes::MeshData) -> Result<RtcdMesh, String> {
    let (lo, hi) =
        positions.iter().fold((Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY)), |(l, h), p| {
            (l.min(*p), h.max(*p))
        });
    let centre = 0.5 * (lo + hi);
    let centred: Vec<Vec3> = positions.iter().map(|p| *p - centre).collect();
    let mesh = RtcdMesh::new(name, &centred, &indices).map_err(|e| format!("{name}: {e}"))?;
    let r = mesh.report();
    if !r.closed
        || r.components != 1
        || r.degenerate_triangles + r.duplicate_triangles + r.unused_vertices > 0
    {
        return Err(format!("{name}: not one closed 2-manifold component: {:?}", r.notes()));
    }
    Ok(mesh)
}

/// A solid made of the filled cells of a grid with the given lines along x, y and z: the faces
/// between a filled cell and an empty one (or the outside), outward, two triangles each, on shared
/// grid vertices. The surface is closed; it is a 2-manifold when no two filled cells meet along an
/// edge only (the furniture below never does).
pub fn cell_solid(
    xs: &[f32],
    ys: &[f32],
    zs: &[f32],
    filled: impl Fn([usize; 3]) -> bool,
) -> shapes::MeshData {
    let n = [xs.len() - 1, ys.len() - 1, zs.len() - 1];
    let full = |c: [isize; 3]| {
        (0..3).all(|a| c[a] >= 0 && (c[a] as usize) < n[a])
            && filled([c[0] as usize, c[1] as usize, c[2] as usize])
    };
    let mut index: HashMap<[usize; 3], u32> = HashMap::new();
    let mut positions = Vec::new();
    let mut vertex = |g: [usize; 3]| {
        *index.entry(g).or_insert_with(|| {
            positions.push(Vec3::new(xs[g[0]], ys[g[1]], zs[g[2]]));
            positions.len() as u32 - 1
        })
    };
    let mut indices = Vec::new();
    for i in 0..n[0] {
        for j in 0..n[1] {
            for k in 0..n[2] {
                let c = [i, j, k];
                if !filled(c) {
                    continue;
                }
                for a in 0..3 {
                    for side in [0usize, 1] {
                        let mut o = c.map(|v| v as isize);
                        o[a] += if side == 1 { 1 } else { -1 };
                        if full(o) {
                            continue;
                        }
                        // Corners in the (b, c) plane; e_b × e_c = e_a, so (00, 10, 11, 01) faces +a.
                        let (b, cc) = ((a + 1) % 3, (a + 2) % 3);
                        let corner = |db: usize, dc: usize| {
                            let mut g = c;
                            g[a] += side;
                            g[b] += db;
                            g[cc] += dc;
                            g
                        };
                        let q = [corner(0, 0), corner(1, 0), corner(1, 1), corner(0, 1)].map(&mut vertex);
                        if side == 1 {
                            indices.extend_from_slice(&[q[0], q[1], q[2], q[0], q[2], q[3]]);
                        } else {
                            indices.extend_from_slice(&[q[0], q[2], q[1], q[0], q[3], q[2]]);
                        }
                    }
                }
            }
        }
    }
    (positions, indices)
}

/// Four legs under a top: the legs are the corner columns of a 3 × 3 grid.
fn table() -> shapes::MeshData {
    let (xs, zs) = ([-0.6, -0.54, 0.54, 0.6], [-0.4, -0.34, 0.34, 0.4]);
    cell_solid(&xs, &[0.0, 0.71, 0.75], &zs, |[i, j, k]| j == 1 || (i != 1 && k != 1))
}

/// Four legs, a seat, and a back along the last row.
fn chair() -> shapes::MeshData {
    let s = [-0.22, -0.18, 0.18, 0.22];
    cell_solid(&s, &[0.0, 0.42, 0.46, 0.9], &s, |[i, j, k]| match j {
        0 => i != 1 && k != 1,
        1 => true,
        _ => k == 2,
    })
}

/// Four legs joined by a ring of stretchers, under a seat.
fn stool() -> shapes::MeshData {
    let s = [-0.17, -0.14, 0.14, 0.17];
    cell_solid(&s, &[0.0, 0.15, 0.18, 0.47, 0.5], &s, |[i, j, k]| match j {
        3 => true,
        1 => i != 1 || k != 1,
        _ => i != 1 && k != 1,
    })
}

/// Two sides, a back, and four shelves (bottom and top included).
fn bookcase() -> shapes::MeshData {
    let ys = [0.0, 0.02, 0.6, 0.62, 1.2, 1.22, 1.78, 1.8];
    cell_solid(&[-0.4, -0.38, 0.38, 0.4], &ys, &[-0.15, -0.13, 0.15], |[i, j, k]| {
        k == 0 || i != 1 || j % 2 == 0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_prop_is_one_closed_component_within_the_sizes_and_triangle_counts() {
        let props = catalogue().unwrap();
        assert!(props.len() >= 15);
        let mut names: Vec<&str> = props.iter().map(|p| p.name).collect();
        names.dedup();
        assert_eq!(names.len(), props.len());
        for p in &props {
            let m = &p.mesh;
            let size = m.aabb().extents().max_element();
            let t = m.triangles().len();
            assert!((0.05 - 1e-4..=5.0 + 1e-4).contains(&size), "{}: {size} m", p.name);
            assert!((12..=2000).contains(&t), "{}: {t} triangles", p.name);
            assert!(m.is_closed() && m.report().components == 1, "{}: {:?}", p.name, m.report());
            assert!(m.volume() > 0.0, "{}", p.name);
            // Centred on its bounding box.
            assert!(m.aabb().center().length() < 1e-4 * size.max(1.0), "{}", p.name);
        }
        let cuboids = props.iter().filter(|p| p.is_cuboid()).count();
        assert_eq!(cuboids, 5);
        let smallest = props.iter().map(|p| p.mesh.aabb().extents().max_element()).fold(f32::MAX, f32::min);
        let largest = props.iter().map(|p| p.mesh.aabb().extents().max_element()).fold(0.0, f32::max);
        assert!((smallest - 0.05).abs() < 1e-3 && (largest - 5.0).abs() < 1e-3);
    }

    #[test]
    fn furniture_is_built_from_cells_with_the_expected_faces() {
        // A single cell is a box: 8 corners, 12 triangles, outward.
        let (v, i) = cell_solid(&[0.0, 1.0], &[0.0, 2.0], &[0.0, 3.0], |_| true);
        let m = RtcdMesh::new("cell", &v, &i).unwrap();
        assert_eq!((m.positions().len(), m.triangles().len()), (8, 12));
        assert_eq!(m.report().rewound_triangles + m.report().inside_out_components, 0);
        assert!((m.volume() - 6.0).abs() < 1e-5);
        // The table: volume of the top plus four legs, no repair needed.
        let (v, i) = table();
        let t = RtcdMesh::new("table", &v, &i).unwrap();
        assert_eq!(t.report().rewound_triangles + t.report().inside_out_components, 0);
        let expected = 1.2 * 0.8 * 0.04 + 4.0 * 0.06 * 0.06 * 0.71;
        assert!((t.volume() - expected).abs() < 1e-4, "{}", t.volume());
        // The stool's stretchers make a ring: still one closed component.
        let s = closed_mesh("stool", stool()).unwrap();
        assert!(s.is_closed());
    }

    #[test]
    fn same_seed_same_pile_and_bodies_start_apart_inside_the_walls() {
        let a = Everyday::new(Everyday::COUNT, 1).unwrap();
        let b = Everyday::new(Everyday::COUNT, 1).unwrap();
        let c = Everyday::new(Everyday::COUNT, 2).unwrap();
        assert_eq!(a.bodies, b.bodies);
        assert_ne!(a.bodies, c.bodies);
        assert_eq!(a.bodies.len(), 60);
        // Every kind at least once.
        for k in 0..a.props.len() {
            assert!(a.bodies.iter().any(|b| b.mesh == k), "{} missing", a.mesh_name(k));
        }
        let boxes: Vec<(Vec3, Vec3)> = a
            .bodies
            .iter()
            .map(|b| {
                let ps: Vec<Vec3> =
                    a.meshes[b.mesh].positions().iter().map(|v| b.rotation * *v + b.translation).collect();
                let lo = ps.iter().fold(Vec3::splat(f32::MAX), |l, p| l.min(*p));
                let hi = ps.iter().fold(Vec3::splat(f32::MIN), |h, p| h.max(*p));
                (lo, hi)
            })
            .collect();
        for (i, (lo, hi)) in boxes.iter().enumerate() {
            assert_eq!(a.bodies[i].cuboid, a.props[a.bodies[i].mesh].is_cuboid());
            assert!(lo.y >= GROUND_TOP + Everyday::DROP - 1e-3, "{i} starts too low");
            assert!(a.inside_walls(*lo) && a.inside_walls(*hi), "{i} outside the walls");
            for (j, (c, d)) in boxes.iter().enumerate().skip(i + 1) {
                let apart = (0..3).any(|k| hi[k] < c[k] || d[k] < lo[k]);
                assert!(apart, "{i} and {j} start overlapping");
            }
        }
        assert!(a.top() < 12.0, "pile {} m high", a.top());
        let top = a.ground.center.y + a.ground.half_extents.y;
        assert!((top - GROUND_TOP).abs() < 1e-6);
        assert_eq!(a.statics().count(), 5);
    }
}
