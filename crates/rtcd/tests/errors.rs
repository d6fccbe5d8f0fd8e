//! Every `MeshError` case, invalid poses and parameters: a clear message, and no panic.

mod common;

use glam::{Quat, Vec3};
use proptest::prelude::*;
use rtcd::{
    MeshError, NarrowPhase, PairError, PairInput, PairKey, Pose, RtcdMesh, RtcdParams, StepOptions, shapes,
};

fn cube() -> (Vec<Vec3>, Vec<u32>) {
    shapes::cuboid(Vec3::splat(0.5))
}

fn message(e: &MeshError) -> String {
    let s = e.to_string();
    assert!(s.contains("`bad`") || s.contains("bad"), "message names the mesh: {s}");
    s
}

#[test]
fn empty_meshes() {
    let e = RtcdMesh::new("bad", &[], &[]).unwrap_err();
    assert!(matches!(e, MeshError::Empty { .. }));
    assert!(message(&e).contains("empty"));
    let (v, _) = cube();
    assert!(matches!(RtcdMesh::new("bad", &v, &[]).unwrap_err(), MeshError::Empty { .. }));
}

#[test]
fn index_count_not_a_multiple_of_three() {
    let (v, mut i) = cube();
    i.pop();
    let e = RtcdMesh::new("bad", &v, &i).unwrap_err();
    assert!(matches!(e, MeshError::IndexCount { count: 35, .. }), "{e}");
    message(&e);
}

#[test]
fn non_finite_coordinates() {
    for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        let (mut v, i) = cube();
        v[5].y = bad;
        let e = RtcdMesh::new("bad", &v, &i).unwrap_err();
        assert!(matches!(e, MeshError::NonFinite { vertex: 5, .. }), "{e}");
        assert!(message(&e).contains("vertex 5"));
    }
}

#[test]
fn index_out_of_range() {
    let (v, mut i) = cube();
    i[7] = 8;
    let e = RtcdMesh::new("bad", &v, &i).unwrap_err();
    assert!(matches!(e, MeshError::IndexOutOfRange { triangle: 2, index: 8, vertex_count: 8, .. }), "{e}");
    assert!(message(&e).contains("triangle 2"));
}

#[test]
fn degenerate_triangles_dropped_and_counted_or_rejected() {
    // A sphere with one collapsed triangle: dropped, counted; the hole it leaves is reported.
    let (v, mut i) = shapes::icosphere(1.0, 4);
    let n = i.len() / 3;
    i[5] = i[4];
    let m = RtcdMesh::new("sphere", &v, &i).unwrap();
    assert_eq!(m.report().degenerate_triangles, 1);
    assert_eq!(m.triangles().len(), n - 1);
    assert!(!m.is_closed());
    assert!(m.report().notes().iter().any(|s| s.contains("degenerate")));
    // Zero-area (collinear) triangles count too.
    let (mut v2, i2) = shapes::icosphere(1.0, 1);
    let t = &i2[0..3];
    v2[t[2] as usize] = (v2[t[0] as usize] + v2[t[1] as usize]) * 0.5;
    let m2 = RtcdMesh::new("sphere", &v2, &i2).unwrap();
    assert_eq!(m2.report().degenerate_triangles, 1);
    // Past the documented share: rejected.
    let (v, mut i) = cube();
    for k in 0..3 {
        i[k * 3 + 1] = i[k * 3];
    }
    let e = RtcdMesh::new("bad", &v, &i).unwrap_err();
    assert!(matches!(e, MeshError::TooManyDegenerate { degenerate: 3, total: 12, first: 0, .. }), "{e}");
    assert!(message(&e).contains("10%"));
}

#[test]
fn non_manifold_edges_are_split_not_rejected() {
    // Two cubes sharing one edge exactly: four triangles on it, split into two closed cubes.
    let (mut v, mut i) = cube();
    let (v2, i2) = shapes::transformed(cube(), Quat::IDENTITY, Vec3::new(1.0, 1.0, 0.0));
    let base = v.len() as u32;
    v.extend(v2);
    i.extend(i2.iter().map(|k| k + base));
    let m = RtcdMesh::new("two cubes", &v, &i).unwrap();
    assert_eq!((m.report().split_edges, m.report().split_vertices), (1, 2));
    assert!(m.is_closed());
    assert!(m.report().notes().iter().any(|s| s.contains("non-manifold")));
}

#[test]
fn inconsistent_winding_is_repaired() {
    let (v, mut i) = shapes::icosphere(1.0, 3);
    // Flip three triangles.
    for t in [0, 17, 100] {
        i.swap(t * 3 + 1, t * 3 + 2);
    }
    let m = RtcdMesh::new("sphere", &v, &i).unwrap();
    assert_eq!(m.report().rewound_triangles, 3);
    assert!(m.volume() > 0.0);
    // Every triangle normal points away from the centre.
    for (t, n) in m.triangles().iter().zip(m.triangle_normals()) {
        assert!(m.positions()[t[0] as usize].dot(*n) > 0.0);
    }
}

#[test]
fn inside_out_meshes_are_flipped_with_a_note() {
    let (v, mut i) = shapes::icosphere(1.0, 3);
    for t in i.chunks_exact_mut(3) {
        t.swap(1, 2);
    }
    let m = RtcdMesh::new("sphere", &v, &i).unwrap();
    assert_eq!(m.report().inside_out_components, 1);
    assert_eq!(m.report().rewound_triangles, 0);
    assert!(m.volume() > 3.5, "volume {}", m.volume());
    assert!(m.report().notes().iter().any(|s| s.contains("inside-out")));
}

/// A sliver (three nearly collinear corners, which rounding leaves with an area) gives its middle
/// vertex no normal of its own: the vertex of a flat sheet keeps the sheet's normal (the sliver's
/// angle there is near π and its cross product points anywhere).
#[test]
fn a_sliver_does_not_skew_its_vertex_normal() {
    let (a, m, c) = (Vec3::ZERO, Vec3::new(0.3, 0.0, 1e-7), Vec3::X);
    let (b, d) = (Vec3::new(0.5, 1.0, 0.0), Vec3::new(0.5, -1.0, 0.0));
    let v = vec![a, m, c, b, d];
    // Above the line: A M B, M C B; below: A D C; the sliver A C M closes the edges between.
    let i = vec![0, 1, 3, 1, 2, 3, 0, 4, 2, 0, 2, 1];
    let mesh = RtcdMesh::new("sheet with a sliver", &v, &i).unwrap();
    assert_eq!(mesh.triangles().len(), 4, "the sliver is kept (not exactly degenerate)");
    let k = mesh.positions().iter().position(|p| (*p - m).length() < 1e-6).unwrap();
    let n = mesh.normals()[k];
    assert!(n.dot(Vec3::Z) > 0.9999, "the middle vertex's normal {n}");
}

/// A hollow ball (a sealed tank, a room with thick walls) given as two closed shells, the inner one
/// wound inward, keeps its cavity: the inner shell is not taken for an inside-out body (it lies
/// wholly inside the outer shell), a point in the cavity gets no contact and a body there none,
/// and the solid's volume is the shell's. Two closed parts that pass through each other are not
/// nested: an inside-out one among them is still flipped.
#[test]
fn a_hollow_ball_keeps_its_cavity() {
    let shell = |r: f32, inward: bool| {
        let (v, mut i) = shapes::icosphere(r, 3);
        if inward {
            for t in i.chunks_exact_mut(3) {
                t.swap(1, 2);
            }
        }
        (v, i)
    };
    let (mut v, mut i) = shell(1.0, false);
    let (vi, ii) = shell(0.8, true);
    i.extend(ii.iter().map(|k| k + v.len() as u32));
    v.extend(vi);
    let m = RtcdMesh::new("hollow ball", &v, &i).unwrap();
    assert_eq!(m.report().inside_out_components, 0);
    assert_eq!(m.report().components, 2);
    // The inner shell's normals point into the cavity (toward the centre).
    for (t, n) in m.triangles().iter().zip(m.triangle_normals()) {
        let p = m.positions()[t[0] as usize];
        let toward_out = p.dot(*n) > 0.0;
        assert_eq!(toward_out, p.length() > 0.9, "triangle at radius {}", p.length());
    }
    // The shells' own volumes (tetrahedra from the centre, outward winding): the outer one's less
    // the inner one's, a scaled copy.
    let (ov, oi) = shell(1.0, false);
    let outer: f32 = oi
        .chunks_exact(3)
        .map(|t| ov[t[0] as usize].dot(ov[t[1] as usize].cross(ov[t[2] as usize])) / 6.0)
        .sum();
    let solid = outer * (1.0 - 0.8f32.powi(3));
    assert!((m.volume() - solid).abs() < 1e-3 * solid, "volume {} vs {solid}", m.volume());
    // A small cube floating in the cavity touches nothing; one across the inner wall has contacts.
    let (cv, ci) = cube();
    let small: Vec<Vec3> = cv.iter().map(|p| *p * 0.1).collect();
    let cube = RtcdMesh::new("small cube", &small, &ci).unwrap();
    let params = RtcdParams::from_meshes(&[&m, &cube]);
    let mut np = rtcd::NarrowPhase::new(params).unwrap();
    let contacts = |np: &mut rtcd::NarrowPhase, at: Vec3| -> usize {
        let pair =
            rtcd::PairInput::new(rtcd::PairKey::new(1, 2), &m, &cube, rtcd::Pose::from_translation(at));
        let out = np.step(&[pair], &rtcd::StepOptions::default());
        out.pairs[0].manifolds.iter().map(|x| x.points.iter().filter(|p| p.dist < 0.0).count()).sum()
    };
    assert_eq!(contacts(&mut np, Vec3::ZERO), 0, "a cube in the cavity got contacts");
    assert!(contacts(&mut rtcd::NarrowPhase::new(params).unwrap(), Vec3::new(0.8, 0.0, 0.0)) > 0);
    // Two closed parts through each other, one of them inside out: not nested, flipped.
    let (mut v, mut i) = shell(1.0, false);
    let (vi, ii) = shell(0.5, true);
    i.extend(ii.iter().map(|k| k + v.len() as u32));
    v.extend(vi.iter().map(|p| *p + Vec3::new(0.9, 0.0, 0.0)));
    let m = RtcdMesh::new("two parts", &v, &i).unwrap();
    assert_eq!(m.report().inside_out_components, 1);
}

/// Far from the world's origin (a prop or a level placed in world coordinates up to kilometres
/// away), a closed mesh keeps its winding: its volume's sign does not drown in rounding.
#[test]
fn closed_meshes_far_from_the_origin_keep_their_winding() {
    let far = [Vec3::new(1e4, -7e3, 2e3), Vec3::splat(1000.0), Vec3::new(-850.0, 3.0, 990.0)];
    for (name, (v, i), volume) in [("cube", cube(), 1.0), ("sphere", shapes::icosphere(0.5, 3), 0.5)] {
        for offset in far {
            let moved: Vec<Vec3> = v.iter().map(|p| *p + offset).collect();
            let m = RtcdMesh::new(name, &moved, &i).unwrap();
            assert_eq!(m.report().inside_out_components, 0, "{name} at {offset}");
            assert_eq!(m.report().rewound_triangles, 0, "{name} at {offset}");
            // The winding given (outward) is kept: every normal points away from the centre.
            let c = m.aabb().center();
            for (t, n) in m.triangles().iter().zip(m.triangle_normals()) {
                assert!((m.positions()[t[0] as usize] - c).dot(*n) > 0.0, "{name} at {offset}");
            }
            assert!(
                m.volume() > 0.5 * volume && m.volume() < 1.5 * volume,
                "{name} at {offset}: {}",
                m.volume()
            );
        }
    }
}

/// Vertices no triangle uses (a shared vertex buffer) neither set the tolerances nor fail the mesh.
#[test]
fn unused_vertices_are_ignored() {
    let (mut v, i) = cube();
    v.push(Vec3::new(1e6, 0.0, 0.0));
    v.push(Vec3::NAN);
    let m = RtcdMesh::new("cube", &v, &i).unwrap();
    assert_eq!(m.report().unused_vertices, 2);
    assert_eq!(m.positions().len(), 8);
    assert!(m.is_closed());
    assert_eq!(m.report().degenerate_triangles, 0);
}

/// Every used vertex in one place: every triangle is degenerate, an error and no panic.
#[test]
fn all_vertices_in_one_place_are_refused() {
    for p in [Vec3::ZERO, Vec3::ONE, Vec3::splat(-3e7)] {
        let e = RtcdMesh::new("bad", &[p; 3], &[0, 1, 2]).unwrap_err();
        assert!(matches!(e, MeshError::TooManyDegenerate { .. }), "{e}");
    }
}

#[test]
fn non_orientable_surfaces_are_rejected() {
    // A Möbius strip.
    let n = 24;
    let mut v = Vec::new();
    for k in 0..n {
        let a = std::f32::consts::TAU * k as f32 / n as f32;
        let c = Vec3::new(a.cos(), 0.0, a.sin());
        let w = Vec3::new(a.cos() * (a / 2.0).cos(), (a / 2.0).sin(), a.sin() * (a / 2.0).cos()) * 0.2;
        v.push(c - w);
        v.push(c + w);
    }
    let mut i = Vec::new();
    for k in 0..n {
        let (a, b) = (2 * k, 2 * k + 1);
        let (c, d) = if k + 1 == n { (1, 0) } else { (2 * k + 2, 2 * k + 3) };
        i.extend_from_slice(&[a, c, d, a, d, b]);
    }
    let e = RtcdMesh::new("bad", &v, &i).unwrap_err();
    assert!(matches!(e, MeshError::NonOrientable { .. }), "{e}");
    message(&e);
}

#[test]
fn open_boundaries_are_accepted_and_flagged() {
    let (v, i) = cube();
    let m = RtcdMesh::new("open", &v, &i[..i.len() - 6]).unwrap();
    assert!(!m.is_closed());
    assert_eq!(m.report().boundary_edges, 4);
    assert!(m.report().notes().iter().any(|s| s.contains("rays may escape")));
    // Exit distances stay finite.
    assert!(m.exit_distances().iter().all(|d| d.is_finite()));
}

#[test]
fn duplicate_vertices_are_welded() {
    // The subdivided cube repeats every vertex on face borders.
    let (v, i) = shapes::subdivided_cuboid(Vec3::ONE, 2);
    let m = RtcdMesh::new("welded", &v, &i).unwrap();
    assert_eq!(m.positions().len(), 26);
    assert!(m.report().merged_vertices > 0);
    assert!(m.is_closed());
}

#[test]
fn missing_and_malformed_obj_files() {
    let e = RtcdMesh::from_obj("/nonexistent/mesh.obj").unwrap_err();
    assert!(matches!(e, MeshError::Obj { .. }));
    assert!(e.to_string().contains("/nonexistent/mesh.obj"));
    let dir = std::env::temp_dir().join(format!("rtcd-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("bad.obj");
    std::fs::write(&p, "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 7\n").unwrap();
    let e = RtcdMesh::from_obj(&p).unwrap_err();
    assert!(e.to_string().contains("bad"), "{e}");
    std::fs::write(&p, "v 0 0 nan\nv 1 0 0\nv 0 1 0\nf 1 2 3\n").unwrap();
    assert!(RtcdMesh::from_obj(&p).is_err());
}

#[test]
fn invalid_poses_skip_the_pair_with_a_typed_error() {
    let a = common::cuboid("a", Vec3::splat(0.5));
    let b = common::cuboid("b", Vec3::splat(0.5));
    let mut np = NarrowPhase::new(RtcdParams::from_meshes(&[&a, &b])).unwrap();
    let good = Pose::from_translation(Vec3::new(0.2, 0.9, 0.1));
    let poses = [
        Pose::from_translation(Vec3::new(f32::NAN, 0.0, 0.0)),
        Pose::from_translation(Vec3::new(0.0, f32::INFINITY, 0.0)),
        Pose::new(Vec3::ZERO, Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0)),
        Pose::new(Vec3::ZERO, Quat::from_xyzw(0.0, 0.0, 0.0, 3.0)),
    ];
    for (k, bad) in poses.iter().enumerate() {
        let pairs = [
            PairInput::new(PairKey::new(1, 2), &a, &b, *bad),
            PairInput::new(PairKey::new(3, 4), &a, &b, good),
        ];
        let out = np.step(&pairs, &StepOptions::default());
        let e = out.pairs[0].error.clone().unwrap_or_else(|| panic!("pose {k} accepted"));
        assert!(matches!(e, PairError::InvalidPose { .. }));
        assert!(e.to_string().contains("(1, 2)"));
        assert!(out.pairs[0].manifolds.is_empty());
        assert!(
            out.pairs[1].error.is_none() && !out.pairs[1].manifolds.is_empty(),
            "the good pair is unaffected"
        );
        assert_eq!(out.metrics.failed_pairs, 1);
        assert!(np.pair_state(&PairKey::new(1, 2)).is_none());
    }
}

#[test]
fn self_and_duplicate_pairs() {
    let a = common::cuboid("a", Vec3::splat(0.5));
    let mut np = NarrowPhase::new(RtcdParams::from_meshes(&[&a])).unwrap();
    let p = Pose::from_translation(Vec3::Y * 0.9);
    let out = np.step(
        &[
            PairInput::new(PairKey::new(1, 1), &a, &a, p),
            PairInput::new(PairKey::new(1, 2), &a, &a, p),
            PairInput::new(PairKey::new(1, 2), &a, &a, p),
        ],
        &StepOptions::default(),
    );
    assert!(matches!(out.pairs[0].error, Some(PairError::SelfPair { .. })));
    assert!(out.pairs[1].error.is_none());
    assert!(matches!(out.pairs[2].error, Some(PairError::DuplicatePair { .. })));
}

#[test]
fn errors_among_many_pairs() {
    // Past 16 pairs to run, the step runs them in parallel over its slots: each error still lands on
    // its own pair, and every other pair gets the output it gets without them.
    let a = common::cuboid("a", Vec3::splat(0.5));
    let params = RtcdParams::from_meshes(&[&a]);
    let pose = |k: u64| Pose::from_translation(Vec3::new(0.2 + 0.01 * k as f32, 0.9, 0.1));
    let mut pairs: Vec<PairInput> =
        (0..40).map(|k| PairInput::new(PairKey::new(2 * k + 10, 2 * k + 11), &a, &a, pose(k))).collect();
    let valid = pairs.clone();
    pairs.insert(5, PairInput::new(PairKey::new(7, 7), &a, &a, pose(0)));
    pairs.insert(17, PairInput::new(PairKey::new(14, 15), &a, &a, pose(2)));
    pairs.insert(
        30,
        PairInput::new(PairKey::new(1000, 1001), &a, &a, Pose::from_translation(Vec3::splat(f32::NAN))),
    );
    let out = NarrowPhase::new(params).unwrap().step(&pairs, &StepOptions::default());
    let clean = NarrowPhase::new(params).unwrap().step(&valid, &StepOptions::default());
    assert!(matches!(out.pairs[5].error, Some(PairError::SelfPair { .. })));
    assert!(matches!(out.pairs[17].error, Some(PairError::DuplicatePair { .. })));
    assert!(matches!(out.pairs[30].error, Some(PairError::InvalidPose { .. })));
    assert_eq!(out.metrics.failed_pairs, 3);
    let others: Vec<_> =
        out.pairs.iter().enumerate().filter(|(i, _)| ![5, 17, 30].contains(i)).map(|(_, o)| o).collect();
    assert_eq!(others.len(), clean.pairs.len());
    for (o, c) in others.iter().zip(&clean.pairs) {
        assert_eq!((o.key, o.mode, o.error.is_none()), (c.key, c.mode, true));
        assert_eq!(format!("{:?}", o.manifolds), format!("{:?}", c.manifolds));
        assert!(!o.manifolds.is_empty(), "pair {} should touch", o.key);
    }
    for i in [5, 17, 30] {
        assert!(out.pairs[i].manifolds.is_empty() && out.pairs[i].key == pairs[i].key);
    }
}

#[test]
fn invalid_parameters_are_refused() {
    let mut p = RtcdParams::from_triangle_size(0.1);
    p.max_it = 0;
    let e = NarrowPhase::new(p).unwrap_err();
    assert_eq!(e.name, "max_it");
    assert!(e.to_string().contains("max_it"));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, .. ProptestConfig::default() })]

    /// Arbitrary input never panics: it builds a mesh or returns an error.
    #[test]
    fn arbitrary_meshes_never_panic(
        pts in prop::collection::vec(prop::array::uniform3(prop_oneof![-2.0f32..2.0, Just(0.0f32), Just(f32::NAN)]), 0..40),
        idx in prop::collection::vec(0u32..45, 0..120),
    ) {
        let v: Vec<Vec3> = pts.iter().map(|p| Vec3::from_array(*p)).collect();
        if let Ok(m) = RtcdMesh::new("fuzz", &v, &idx) {
            // A valid result is usable by the narrow phase.
            let mut np = NarrowPhase::new(RtcdParams::from_meshes(&[&m])).unwrap();
            let out = np.step(&[PairInput::new(PairKey::new(1, 2), &m, &m, Pose::from_translation(Vec3::X * 0.1))], &StepOptions::default());
            prop_assert!(out.pairs[0].error.is_none());
        }
    }
}
