//! Procedural meshes: analytic test shapes (boxes, spheres) and the concave shapes of the assets
//! (tori, bent tubes, star-shaped blobs, torus knots, a U bracket). Each returns positions and
//! counter-clockwise triangle indices.

use std::f32::consts::{PI, TAU};

use glam::{Quat, Vec3};

/// Positions and triangle indices.
pub type MeshData = (Vec<Vec3>, Vec<u32>);

/// A tetrahedron on an equilateral base `side` across (in the xz plane, its centroid at the origin)
/// whose fourth vertex is `height` above the base, over its centroid. Flat when `height` is small:
/// its base corners' normals then lie along the base (rim vertices, `RtcdMesh::rim_motions`).
pub fn flat_tetrahedron(side: f32, height: f32) -> MeshData {
    let r = side / 3f32.sqrt();
    let base = |k: f32| {
        let a = k * TAU / 3.0;
        Vec3::new(r * a.cos(), 0.0, r * a.sin())
    };
    let v = vec![base(0.0), base(1.0), base(2.0), Vec3::new(0.0, height, 0.0)];
    // Outward: the base faces down, the sides up and out.
    (v, vec![0, 1, 2, 0, 3, 1, 1, 3, 2, 2, 3, 0])
}

/// A box centred on the origin with the given half extents (8 vertices, 12 triangles).
pub fn cuboid(half: Vec3) -> MeshData {
    let v: Vec<Vec3> = (0..8)
        .map(|i| {
            Vec3::new(
                if i & 1 == 0 { -half.x } else { half.x },
                if i & 2 == 0 { -half.y } else { half.y },
                if i & 4 == 0 { -half.z } else { half.z },
            )
        })
        .collect();
    #[rustfmt::skip]
    let i = vec![
        0, 2, 3, 0, 3, 1, // -z
        4, 5, 7, 4, 7, 6, // +z
        0, 1, 5, 0, 5, 4, // -y
        2, 6, 7, 2, 7, 3, // +y
        0, 4, 6, 0, 6, 2, // -x
        1, 3, 7, 1, 7, 5, // +x
    ];
    (v, i)
}

/// A box with each face split into `n × n` quads: vertices on the faces, so rays start everywhere.
pub fn subdivided_cuboid(half: Vec3, n: u32) -> MeshData {
    let n = n.max(1);
    let mut v = Vec::new();
    let mut idx = Vec::new();
    // Each face: origin corner, two edge vectors (u × w points outward).
    let faces = [
        (Vec3::new(-1.0, -1.0, 1.0), Vec3::X * 2.0, Vec3::Y * 2.0),
        (Vec3::new(1.0, -1.0, -1.0), Vec3::NEG_X * 2.0, Vec3::Y * 2.0),
        (Vec3::new(1.0, -1.0, 1.0), Vec3::NEG_Z * 2.0, Vec3::Y * 2.0),
        (Vec3::new(-1.0, -1.0, -1.0), Vec3::Z * 2.0, Vec3::Y * 2.0),
        (Vec3::new(-1.0, 1.0, 1.0), Vec3::X * 2.0, Vec3::NEG_Z * 2.0),
        (Vec3::new(-1.0, -1.0, -1.0), Vec3::X * 2.0, Vec3::Z * 2.0),
    ];
    for (o, u, w) in faces {
        let base = v.len() as u32;
        for j in 0..=n {
            for i in 0..=n {
                let p = o + u * (i as f32 / n as f32) + w * (j as f32 / n as f32);
                v.push(p * half);
            }
        }
        for j in 0..n {
            for i in 0..n {
                let a = base + j * (n + 1) + i;
                let (b, c, d) = (a + 1, a + n + 1, a + n + 2);
                idx.extend_from_slice(&[a, b, d, a, d, c]);
            }
        }
    }
    (v, idx) // shared edge vertices are welded by RtcdMesh::new
}

/// A geodesic sphere: an icosahedron with each edge split into `frequency` segments, projected on
/// the sphere (`20 f²` triangles; each face's vertices listed apart, `10 (f + 1) (f + 2)` in all,
/// which [`RtcdMesh::new`](crate::RtcdMesh::new) welds into `10 f² + 2`).
pub fn icosphere(radius: f32, frequency: u32) -> MeshData {
    let f = frequency.max(1);
    let phi = (1.0 + 5f32.sqrt()) / 2.0;
    let c: Vec<Vec3> = [
        (-1.0, phi, 0.0),
        (1.0, phi, 0.0),
        (-1.0, -phi, 0.0),
        (1.0, -phi, 0.0),
        (0.0, -1.0, phi),
        (0.0, 1.0, phi),
        (0.0, -1.0, -phi),
        (0.0, 1.0, -phi),
        (phi, 0.0, -1.0),
        (phi, 0.0, 1.0),
        (-phi, 0.0, -1.0),
        (-phi, 0.0, 1.0),
    ]
    .iter()
    .map(|&(x, y, z)| Vec3::new(x, y, z))
    .collect();
    #[rustfmt::skip]
    let faces: [[usize; 3]; 20] = [
        [0, 11, 5], [0, 5, 1], [0, 1, 7], [0, 7, 10], [0, 10, 11],
        [1, 5, 9], [5, 11, 4], [11, 10, 2], [10, 7, 6], [7, 1, 8],
        [3, 9, 4], [3, 4, 2], [3, 2, 6], [3, 6, 8], [3, 8, 9],
        [4, 9, 5], [2, 4, 11], [6, 2, 10], [8, 6, 7], [9, 8, 1],
    ];
    let mut v = Vec::new();
    let mut idx = Vec::new();
    for [a, b, cc] in faces {
        let (a, b, cc) = (c[a], c[b], c[cc]);
        let base = v.len() as u32;
        // Row j has f - j + 1 points.
        let mut row_start = Vec::new();
        for j in 0..=f {
            row_start.push(v.len() as u32 - base);
            for i in 0..=(f - j) {
                let p = a + (b - a) * (i as f32 / f as f32) + (cc - a) * (j as f32 / f as f32);
                v.push(p.normalize() * radius);
            }
        }
        for j in 0..f {
            for i in 0..(f - j) {
                let p0 = base + row_start[j as usize] + i;
                let p1 = p0 + 1;
                let p2 = base + row_start[j as usize + 1] + i;
                idx.extend_from_slice(&[p0, p1, p2]);
                if i + 1 < f - j {
                    let p3 = p2 + 1;
                    idx.extend_from_slice(&[p1, p3, p2]);
                }
            }
        }
    }
    (v, idx)
}

/// A UV sphere with `slices` meridians and `stacks` parallels bands, radius displaced by
/// `radius_fn(direction)`: `slices × (stacks - 1) + 2` vertices, `2 × slices × (stacks - 1)` triangles.
pub fn uv_sphere_with(slices: u32, stacks: u32, radius_fn: impl Fn(Vec3) -> f32) -> MeshData {
    let (s, k) = (slices.max(3), stacks.max(2));
    let mut v = vec![Vec3::Y * radius_fn(Vec3::Y)];
    for j in 1..k {
        let theta = PI * j as f32 / k as f32;
        for i in 0..s {
            let phi = TAU * i as f32 / s as f32;
            let d = Vec3::new(theta.sin() * phi.cos(), theta.cos(), theta.sin() * phi.sin());
            v.push(d * radius_fn(d));
        }
    }
    v.push(Vec3::NEG_Y * radius_fn(Vec3::NEG_Y));
    let south = v.len() as u32 - 1;
    let ring = |j: u32, i: u32| 1 + (j - 1) * s + (i % s);
    let mut idx = Vec::new();
    for i in 0..s {
        idx.extend_from_slice(&[0, ring(1, i + 1), ring(1, i)]);
        idx.extend_from_slice(&[south, ring(k - 1, i), ring(k - 1, i + 1)]);
    }
    for j in 1..k - 1 {
        for i in 0..s {
            let (a, b, c, d) = (ring(j, i), ring(j, i + 1), ring(j + 1, i), ring(j + 1, i + 1));
            idx.extend_from_slice(&[a, b, d, a, d, c]);
        }
    }
    (v, idx)
}

/// A UV sphere of constant radius.
pub fn uv_sphere(radius: f32, slices: u32, stacks: u32) -> MeshData {
    uv_sphere_with(slices, stacks, |_| radius)
}

/// A torus around the y axis: `major × minor` vertices, `2 × major × minor` triangles.
pub fn torus(major_radius: f32, minor_radius: f32, major: u32, minor: u32) -> MeshData {
    tube_along(major.max(3), minor.max(3), true, |s| {
        let a = TAU * s;
        let c = Vec3::new(a.cos(), 0.0, a.sin()) * major_radius;
        let t = Vec3::new(-a.sin(), 0.0, a.cos());
        (c, t, minor_radius)
    })
}

/// A closed tube of `rings × segments` vertices swept along `path(s)` for `s` in `[0, 1]`, which gives
/// the centre, the tangent and the radius. Closed loops join the last ring to the first; open tubes
/// get flat caps (one centre vertex each).
pub fn tube_along(
    rings: u32,
    segments: u32,
    closed_loop: bool,
    path: impl Fn(f32) -> (Vec3, Vec3, f32),
) -> MeshData {
    let (r, m) = (rings.max(2), segments.max(3));
    let denom = if closed_loop { r as f32 } else { (r - 1) as f32 };
    // Parallel transport of the frame keeps the tube from twisting.
    let mut rings_at: Vec<(Vec3, Vec3, Vec3, f32)> = Vec::with_capacity(r as usize);
    for j in 0..r {
        let (c, t, rad) = path(j as f32 / denom);
        let t = t.normalize();
        let n = match rings_at.last() {
            None => t.any_orthonormal_vector(),
            Some(&(_, _, p, _)) => (p - t * p.dot(t)).normalize(),
        };
        rings_at.push((c, t, n, rad));
    }
    // Around a loop that is not planar the transported frame comes back turned (its holonomy): the
    // last ring would be joined to the first with a twist, its quads cutting across the tube. The
    // turn is spread evenly over the rings instead.
    let twist = if closed_loop {
        let (_, t0, n0, _) = rings_at[0];
        let p = rings_at[rings_at.len() - 1].2;
        let back = (p - t0 * p.dot(t0)).normalize();
        n0.cross(back).dot(t0).atan2(n0.dot(back))
    } else {
        0.0
    };
    let mut v = Vec::new();
    for (j, &(c, t, n, rad)) in rings_at.iter().enumerate() {
        let n = glam::Quat::from_axis_angle(t, -twist * j as f32 / r as f32) * n;
        let b = t.cross(n);
        for i in 0..m {
            let a = TAU * i as f32 / m as f32;
            v.push(c + (n * a.cos() + b * a.sin()) * rad);
        }
    }
    let mut idx = Vec::new();
    let ring_count = if closed_loop { r } else { r - 1 };
    for j in 0..ring_count {
        let j1 = (j + 1) % r;
        for i in 0..m {
            let i1 = (i + 1) % m;
            let (a, b, c, d) = (j * m + i, j * m + i1, j1 * m + i, j1 * m + i1);
            idx.extend_from_slice(&[a, d, c, a, b, d]);
        }
    }
    if !closed_loop {
        for (j, (c, _, _)) in [(0, path(0.0)), (r - 1, path(1.0))] {
            let center = v.len() as u32;
            v.push(c);
            for i in 0..m {
                let (a, b) = (j * m + i, j * m + (i + 1) % m);
                if j == 0 {
                    idx.extend_from_slice(&[center, b, a])
                } else {
                    idx.extend_from_slice(&[center, a, b])
                }
            }
        }
    }
    (v, idx) // winding is made consistent and outward by RtcdMesh::new
}

/// A tube bent along a circular arc of `angle` radians (a concave "C"), with flat caps.
pub fn bent_tube(bend_radius: f32, tube_radius: f32, angle: f32, rings: u32, segments: u32) -> MeshData {
    tube_along(rings, segments, false, |s| {
        let a = angle * (s - 0.5);
        let c = Vec3::new(a.sin(), 0.0, 1.0 - a.cos()) * bend_radius
            - Vec3::new(0.0, 0.0, bend_radius * 0.5 * (1.0 - (angle * 0.5).cos()));
        let t = Vec3::new(a.cos(), 0.0, a.sin());
        (c, t, tube_radius)
    })
}

/// A (p, q) torus knot tube.
pub fn torus_knot(p: u32, q: u32, scale: f32, tube_radius: f32, rings: u32, segments: u32) -> MeshData {
    let pos = move |s: f32| {
        let a = TAU * s;
        let r = 2.0 + (q as f32 * a).cos();
        Vec3::new(r * (p as f32 * a).cos(), -(q as f32 * a).sin(), r * (p as f32 * a).sin()) * scale
    };
    tube_along(rings, segments, true, move |s| {
        let h = 1e-3;
        (pos(s), pos(s + h) - pos(s - h), tube_radius)
    })
}

/// A star-shaped blob: a UV sphere whose radius varies with a sum of `lobes` smooth bumps seeded by
/// `seed`, deep enough to make it concave.
pub fn star_blob(radius: f32, slices: u32, stacks: u32, lobes: u32, amplitude: f32, seed: u64) -> MeshData {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f32 / (1u64 << 53) as f32
    };
    let bumps: Vec<(Vec3, f32)> = (0..lobes)
        .map(|_| {
            let d =
                Vec3::new(next() * 2.0 - 1.0, next() * 2.0 - 1.0, next() * 2.0 - 1.0).normalize_or(Vec3::X);
            (d, 0.5 + next())
        })
        .collect();
    uv_sphere_with(slices, stacks, |d| {
        let bump: f32 = bumps.iter().map(|(c, w)| w * (d.dot(*c) - 1.0).mul_add(6.0, 0.0).exp()).sum();
        radius * (1.0 - amplitude + amplitude * 2.0 * bump.min(1.5) / 1.5)
    })
}

/// A U-shaped bracket (three boxes welded into one closed surface): a concave test shape.
/// `width` across, `height` of the arms, `thickness` of the walls, `depth` along z.
pub fn u_bracket(width: f32, height: f32, thickness: f32, depth: f32) -> MeshData {
    // Profile in the xy plane, counter-clockwise, extruded along z.
    let (w, h, t) = (width * 0.5, height, thickness);
    let profile = [(-w, 0.0), (w, 0.0), (w, h), (w - t, h), (w - t, t), (-w + t, t), (-w + t, h), (-w, h)];
    extrude(&profile, depth)
}

/// Extrudes a simple polygon (counter-clockwise in xy) along z by `depth`, centred on z = 0. The caps
/// are triangulated by ear clipping.
pub fn extrude(profile: &[(f32, f32)], depth: f32) -> MeshData {
    let n = profile.len() as u32;
    let mut v = Vec::new();
    for &(x, y) in profile {
        v.push(Vec3::new(x, y, -depth * 0.5));
    }
    for &(x, y) in profile {
        v.push(Vec3::new(x, y, depth * 0.5));
    }
    let mut idx = Vec::new();
    for i in 0..n {
        let j = (i + 1) % n;
        idx.extend_from_slice(&[i, j, n + j, i, n + j, n + i]);
    }
    for [a, b, c] in ear_clip(profile) {
        idx.extend_from_slice(&[n + a, n + b, n + c]); // front cap (+z), counter-clockwise
        idx.extend_from_slice(&[a, c, b]); // back cap
    }
    (v, idx)
}

fn ear_clip(poly: &[(f32, f32)]) -> Vec<[u32; 3]> {
    let mut rest: Vec<u32> = (0..poly.len() as u32).collect();
    let p = |i: u32| glam::Vec2::new(poly[i as usize].0, poly[i as usize].1);
    let cross = |a: glam::Vec2, b: glam::Vec2, c: glam::Vec2| (b - a).perp_dot(c - a);
    let mut out = Vec::new();
    let mut guard = 0;
    while rest.len() > 3 && guard < 10_000 {
        guard += 1;
        let n = rest.len();
        let mut clipped = false;
        for k in 0..n {
            let (a, b, c) = (rest[(k + n - 1) % n], rest[k], rest[(k + 1) % n]);
            if cross(p(a), p(b), p(c)) <= 0.0 {
                continue;
            }
            let inside = rest.iter().any(|&o| {
                o != a && o != b && o != c && {
                    let q = p(o);
                    cross(p(a), p(b), q) >= 0.0 && cross(p(b), p(c), q) >= 0.0 && cross(p(c), p(a), q) >= 0.0
                }
            });
            if !inside {
                out.push([a, b, c]);
                rest.remove(k);
                clipped = true;
                break;
            }
        }
        if !clipped {
            break;
        }
    }
    if rest.len() == 3 {
        out.push([rest[0], rest[1], rest[2]]);
    }
    out
}

/// Rotates and translates mesh data (e.g. to place a shape in a scene).
pub fn transformed((v, i): MeshData, rotation: Quat, translation: Vec3) -> MeshData {
    (v.into_iter().map(|p| rotation * p + translation).collect(), i)
}

/// A helix (a coil spring) tube with flat caps: `turns` turns of `coil_radius`, rising `pitch` per
/// turn.
pub fn coil(
    coil_radius: f32,
    pitch: f32,
    turns: f32,
    tube_radius: f32,
    rings: u32,
    segments: u32,
) -> MeshData {
    let height = pitch * turns;
    let pos = move |s: f32| {
        let a = TAU * turns * s;
        Vec3::new(coil_radius * a.cos(), height * (s - 0.5), coil_radius * a.sin())
    };
    tube_along(rings, segments, false, move |s| {
        let h = 1e-3;
        (pos(s), pos(s + h) - pos(s - h), tube_radius)
    })
}

/// One mesh of `assets/meshes/`: its file stem, how it is made, and its data.
pub struct AssetSpec {
    /// File stem (`assets/meshes/{name}.obj`).
    pub name: &'static str,
    /// One line on how it is made.
    pub recipe: &'static str,
    /// Positions and indices.
    pub data: MeshData,
}

/// The concave meshes the examples, tests and benchmarks load from `assets/meshes/`, about the size
/// of the IRTCD papers' (~450 vertices / ~900 triangles, and 2,130 / 3,456 / 3,458 triangles for the
/// second scene), all about one unit across. `cargo run -p rtcd --example gen_assets` writes them.
pub fn asset_catalog() -> Vec<AssetSpec> {
    vec![
        AssetSpec {
            name: "torus_900",
            recipe: "torus, major radius 0.35, minor 0.15, 30 x 15 segments",
            data: torus(0.35, 0.15, 30, 15),
        },
        AssetSpec {
            name: "blob_900",
            recipe: "star-shaped blob, radius 0.5, 7 lobes, amplitude 0.35, seed 1, UV 30 x 16",
            data: star_blob(0.5, 30, 16, 7, 0.35, 1),
        },
        AssetSpec {
            name: "bent_tube_896",
            recipe: "tube of radius 0.12 bent along a 240 degree arc of radius 0.4, 28 rings x 16, capped",
            data: bent_tube(0.4, 0.12, 240f32.to_radians(), 28, 16),
        },
        AssetSpec {
            name: "blob_2130",
            recipe: "star-shaped blob, radius 0.5, 9 lobes, amplitude 0.4, seed 2, UV 71 x 16",
            data: star_blob(0.5, 71, 16, 9, 0.4, 2),
        },
        AssetSpec {
            name: "knot_3456",
            recipe: "(2,3) torus knot, scale 0.15, tube radius 0.07, 144 rings x 12",
            data: torus_knot(2, 3, 0.15, 0.07, 144, 12),
        },
        AssetSpec {
            name: "coil_3458",
            recipe: "coil spring, radius 0.35, pitch 0.25, 3 turns, tube radius 0.08, 133 rings x 13, capped",
            data: coil(0.35, 0.25, 3.0, 0.08, 133, 13),
        },
        AssetSpec {
            name: "u_bracket",
            recipe: "U bracket, 1.0 wide, 0.8 high, walls 0.2 thick, 0.5 deep",
            data: u_bracket(1.0, 0.8, 0.2, 0.5),
        },
    ]
}
