//! Exact contacts against a box ([`RtcdMesh::cuboid`]): every vertex of the other mesh inside the
//! box gets a contact at exactly its depth below one face, whatever the thickness of its own body,
//! in standard and iterative steps, in either shape order: the face its inward ray leaves the box
//! through while the ray is still in its own body, else the face of least penetration; vertices
//! just outside get speculative contacts at their distance.

use glam::{Quat, Vec3};
use rtcd::{
    FeatureId, NarrowPhase, PairInput, PairKey, Pose, RtcdMesh, RtcdParams, StepMode, StepOptions,
    TracerKind,
    detect::{TRIANGLES_PER_BOX_FACE, nearest_box_face},
    shapes,
};

const GROUND: Vec3 = Vec3::new(5.0, 0.5, 5.0);

/// The least penetration of `p` into the box `[-half, half]`, over its six faces one by one:
/// (depth, outward normal).
fn least_penetration(half: Vec3, p: Vec3) -> (f32, Vec3) {
    let mut best = (f32::INFINITY, Vec3::ZERO);
    for axis in 0..3 {
        for sign in [-1.0f32, 1.0] {
            let depth = half[axis] - sign * p[axis];
            if depth < best.0 {
                let mut n = Vec3::ZERO;
                n[axis] = sign;
                best = (depth, n);
            }
        }
    }
    best
}

/// The face a vertex at `p` inside the box gets, over the six faces one by one: the face its inward
/// ray `dir` leaves the box through, when that is within `exit` (its own body's extent along the
/// ray), else the face of least penetration. (depth, outward normal).
fn expected_face(half: Vec3, p: Vec3, dir: Vec3, exit: f32) -> (f32, Vec3) {
    let mut through = (f32::INFINITY, 0.0, Vec3::ZERO);
    for axis in 0..3 {
        for sign in [-1.0f32, 1.0] {
            if dir[axis] * sign > 0.0 {
                let t = (sign * half[axis] - p[axis]) / dir[axis];
                if t < through.0 {
                    let mut n = Vec3::ZERO;
                    n[axis] = sign;
                    through = (t, half[axis] - sign * p[axis], n);
                }
            }
        }
    }
    if through.0 <= exit { (through.1, through.2) } else { least_penetration(half, p) }
}

fn variants(base: RtcdParams) -> Vec<RtcdParams> {
    let mut v = Vec::new();
    for tracer in [TracerKind::BruteForce, TracerKind::Bvh] {
        for iterative in [false, true] {
            for prediction in [false, true] {
                v.push(RtcdParams { tracer, iterative, prediction, ..base });
            }
        }
    }
    v
}

#[test]
fn the_box_mesh_has_its_faces_in_order_and_one_leaf() {
    // Negative extents give the same box, its faces in the same order (they were mirrored: with
    // two of them the faces kept their ids on the opposite sides).
    for half in [Vec3::new(2.0, 0.5, 1.0), Vec3::new(-2.0, -0.5, 1.0), Vec3::new(-2.0, 0.5, 1.0)] {
        let b = RtcdMesh::cuboid("box", half).unwrap();
        assert_eq!(b.cuboid_half_extents(), Some(Vec3::new(2.0, 0.5, 1.0)), "{half}");
        box_faces_in_order(&b);
    }
    // An ordinary mesh is not a box; nor is a box too thin to keep its eight corners.
    let (v, i) = shapes::cuboid(Vec3::ONE);
    assert_eq!(RtcdMesh::new("mesh", &v, &i).unwrap().cuboid_half_extents(), None);
}

fn box_faces_in_order(b: &RtcdMesh) {
    assert_eq!(b.bvh().len(), 1);
    assert!(b.is_closed());
    for face in 0..6u32 {
        let mut n = Vec3::ZERO;
        n[face as usize / 2] = if face % 2 == 1 { 1.0 } else { -1.0 };
        for k in 0..TRIANGLES_PER_BOX_FACE {
            let t = (TRIANGLES_PER_BOX_FACE * face + k) as usize;
            assert_eq!(b.triangle_normals()[t], n, "face {face}, triangle {t}");
        }
        // The face's own test point, 0.01 inside it.
        let p = n * (Vec3::new(2.0, 0.5, 1.0) - 0.01);
        assert_eq!(nearest_box_face(Vec3::new(2.0, 0.5, 1.0), p).face, face);
    }
}

/// A plate 2 mm thick sunk 0.2 m into the ground box: each of its eight vertices is deeper than the
/// plate is thick (Hermann's exit test would drop every ray), and each gets the exact depth along
/// the top face's normal (the face of least penetration), with either shape order, in every tracer and mode, standard and
/// iterative.
#[test]
fn a_thin_plate_deep_in_a_box_gets_exact_contacts() {
    let (v, i) = shapes::cuboid(Vec3::new(1.0, 0.001, 1.0));
    let plate = RtcdMesh::new("plate", &v, &i).unwrap();
    let ground = RtcdMesh::cuboid("ground", GROUND).unwrap();
    for params in variants(RtcdParams::from_meshes(&[&plate])) {
        for swapped in [false, true] {
            let mut np = NarrowPhase::new(params).unwrap();
            for step in 0..6 {
                // Sinking by 0.1 mm a step: iterative after the first step.
                let plate_pose = Pose::from_translation(Vec3::new(0.0, 0.301 - 1e-4 * step as f32, 0.0));
                let pair = if swapped {
                    PairInput::from_world(PairKey::new(1, 2), &ground, Pose::IDENTITY, &plate, plate_pose)
                } else {
                    PairInput::from_world(PairKey::new(1, 2), &plate, plate_pose, &ground, Pose::IDENTITY)
                };
                let out = np.step(&[pair], &StepOptions { keep_contacts: true, ..Default::default() });
                let o = &out.pairs[0];
                if step > 0 && params.iterative {
                    assert_eq!(o.mode, StepMode::Iterative, "{params:?}");
                }
                assert_eq!(o.contacts.len(), 8, "{params:?} swapped {swapped} step {step}");
                for c in &o.contacts {
                    let (vertex, face) = match (c.fid1, c.fid2) {
                        (FeatureId::Vertex(v), FeatureId::Face(f)) if !swapped => (v, f),
                        (FeatureId::Face(f), FeatureId::Vertex(v)) if swapped => (v, f),
                        other => panic!("features {other:?}"),
                    };
                    let p = plate_pose.transform_point(plate.positions()[vertex as usize]);
                    let (depth, n) = least_penetration(GROUND, p);
                    assert_eq!(face, 3 * TRIANGLES_PER_BOX_FACE, "the top face");
                    assert!((c.dist + depth).abs() < 1e-6, "{} vs {depth}", c.dist);
                    // n1: shape 1's normal toward shape 2.
                    let n1 = if swapped { n } else { -n };
                    assert!((c.n1 - n1).length() < 1e-6, "{:?}", c.n1);
                    assert!(((c.p2 - c.p1).dot(c.n1) - c.dist).abs() < 1e-6);
                }
            }
        }
    }
}

/// Near an edge and a corner of the box, each vertex gets the face its inward ray leaves the box
/// through while still inside the cube, else the face of least penetration, and its depth, on
/// random poses of a small cube around the box's +x/+y/+z corner.
#[test]
fn near_edges_and_corners_each_vertex_gets_its_face() {
    let (v, i) = shapes::cuboid(Vec3::splat(0.02));
    let cube = RtcdMesh::new("cube", &v, &i).unwrap();
    let ground = RtcdMesh::cuboid("ground", GROUND).unwrap();
    let params = RtcdParams { prediction: false, ..RtcdParams::from_meshes(&[&cube]) };
    let mut checked = std::collections::HashSet::new();
    let mut state = 12345u32;
    let mut r = || {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        (state % 10_000) as f32 / 10_000.0
    };
    for k in 0..400 {
        let mut np = NarrowPhase::new(params).unwrap();
        let c = GROUND - Vec3::new(r(), r(), r()) * 0.06;
        let q = Quat::from_euler(glam::EulerRot::XYZ, r() * 6.0, r() * 6.0, r() * 6.0);
        let pose = Pose::new(c, q);
        let pair = PairInput::from_world(PairKey::new(1, 2), &cube, pose, &ground, Pose::IDENTITY);
        let out = np.step(&[pair], &StepOptions { keep_contacts: true, ..Default::default() });
        let inside = cube
            .positions()
            .iter()
            .filter(|p| {
                let w = pose.transform_point(**p);
                w.abs().cmplt(GROUND).all()
            })
            .count();
        // The box's corner, where it pokes into the cube, casts its ray as before: those contacts
        // are the box's (a vertex of shape 2).
        let of_cube: Vec<_> =
            out.pairs[0].contacts.iter().filter(|c| matches!(c.fid1, FeatureId::Vertex(_))).collect();
        assert_eq!(of_cube.len(), inside, "pose {k}");
        for cand in of_cube {
            let FeatureId::Vertex(v) = cand.fid1 else { unreachable!() };
            let p = pose.transform_point(cube.positions()[v as usize]);
            let dir = pose.rotation * -cube.normals()[v as usize];
            let (depth, n) = expected_face(GROUND, p, dir, cube.exit_distances()[v as usize]);
            // Rounding of coordinates near 5 m (f32 steps of 4.8e-7).
            assert!((cand.dist + depth).abs() < 1e-5, "pose {k}: {} vs {depth}", cand.dist);
            // n1 is in shape 1's (the cube's) frame.
            let n1 = pose.rotation * cand.n1;
            assert!((n1 + n).length() < 1e-6, "pose {k}: {n1:?} vs {n:?}");
            checked.insert(n.to_array().map(f32::to_bits));
        }
    }
    assert!(checked.len() >= 3, "the +x, +y and +z faces were each chosen somewhere: {}", checked.len());
}

/// A plate hovering 1 cm above the box: with prediction, its eight vertices keep predictions; the
/// four lower ones, whose opposite rays meet the box, become speculative contacts at exactly their
/// distance within the prediction distance (the upper four face away: no predictive ray would).
#[test]
fn vertices_just_outside_get_speculative_contacts() {
    let (v, i) = shapes::cuboid(Vec3::new(1.0, 0.001, 1.0));
    let plate = RtcdMesh::new("plate", &v, &i).unwrap();
    let ground = RtcdMesh::cuboid("ground", GROUND).unwrap();
    let params = RtcdParams::from_meshes(&[&plate]);
    assert!(params.culling_dist > 0.02);
    let mut np = NarrowPhase::new(params).unwrap();
    let pose = Pose::from_translation(Vec3::new(0.0, 0.511, 0.0));
    let pair = PairInput::from_world(PairKey::new(1, 2), &plate, pose, &ground, Pose::IDENTITY);
    let opts = StepOptions { keep_contacts: true, prediction_distance: 0.011, ..Default::default() };
    let out = np.step(&[pair], &opts);
    assert_eq!(out.pairs[0].contacts.len(), 4);
    for c in &out.pairs[0].contacts {
        assert!((c.dist - 0.01).abs() < 1e-6, "{}", c.dist);
        assert!((c.n1 - Vec3::NEG_Y).length() < 1e-6);
    }
    let state = np.pair_state(&PairKey::new(1, 2)).unwrap();
    assert_eq!(state.records[0].len(), 8, "every vertex within culling_dist keeps a prediction");
    assert!(state.records[0].iter().all(|r| !r.in_contact));
}
