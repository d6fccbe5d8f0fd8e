//! The separation bound that lets a record-less pair put off its standard trace
//! (`rtcd::detect::needs_standard_trace`): a true lower bound of the distance, and no contact found
//! later than with a standard trace on every step.

use glam::{Quat, Vec3};
use rtcd::{
    NarrowPhase, PairInput, PairKey, Pose, RtcdMesh, RtcdParams, StepMode, StepOptions,
    detect::{
        TraceReference, max_displacement, needs_standard_trace, separation_bound, separation_bound_beyond,
        separation_for_reach,
    },
    shapes,
};

fn cube(half: f32) -> RtcdMesh {
    let (v, i) = shapes::subdivided_cuboid(Vec3::splat(half), 4);
    RtcdMesh::new("cube", &v, &i).unwrap()
}

fn blob() -> RtcdMesh {
    let (v, i) = shapes::star_blob(0.5, 24, 16, 5, 0.25, 3);
    RtcdMesh::new("blob", &v, &i).unwrap()
}

/// `n` seeded random poses: a random rotation, the origin 0.4 to `0.4 + spread` from the other's.
fn random_poses(mut seed: u64, n: usize, spread: f32) -> Vec<Pose> {
    let mut rnd = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f32 / (1u64 << 53) as f32
    };
    (0..n)
        .map(|_| {
            let dir = Vec3::new(rnd() - 0.5, rnd() - 0.5, rnd() - 0.5).normalize_or(Vec3::X);
            let rot = Quat::from_axis_angle(Vec3::new(rnd(), rnd(), rnd() + 0.1).normalize(), rnd() * 6.3);
            Pose::new(dir * (0.4 + spread * rnd()), rot)
        })
        .collect()
}

/// The distance between the closest vertex pair, `b` at `pose` in `a`'s frame: at least the
/// distance between the meshes, so no lower bound may exceed it.
fn closest_vertices(a: &RtcdMesh, b: &RtcdMesh, pose: &Pose) -> f32 {
    a.positions()
        .iter()
        .flat_map(|p| b.positions().iter().map(move |q| (*p - pose.transform_point(*q)).length()))
        .fold(f32::INFINITY, f32::min)
}

#[test]
fn exact_for_axis_aligned_cubes() {
    let c = cube(0.5);
    for gap in [0.0f32, 0.05, 0.3, 1.7] {
        let pose = Pose::from_translation(Vec3::new(1.0 + gap, 0.0, 0.0));
        let b = separation_bound(&c, &c, &pose);
        assert!((b - gap).abs() < 1e-5, "gap {gap}: bound {b}");
    }
    // Overlapping cubes: no separation.
    assert_eq!(separation_bound(&c, &c, &Pose::from_translation(Vec3::new(0.6, 0.1, 0.0))), 0.0);
}

#[test]
fn never_above_the_distance_between_vertices() {
    // The distance between two meshes is at most the distance between any two of their vertices, so
    // a bound above the closest vertex pair is wrong.
    let (a, b) = (blob(), cube(0.3));
    let (mut positive, mut slack) = (0, 0.0f32);
    for pose in random_poses(0x51, 300, 1.6) {
        let bound = separation_bound(&a, &b, &pose);
        let closest = closest_vertices(&a, &b, &pose);
        assert!(bound >= 0.0 && bound <= closest + 1e-5, "bound {bound} > closest vertices {closest}");
        if bound > 0.0 {
            (positive, slack) = (positive + 1, slack + closest - bound);
        }
    }
    assert!(positive > 50, "the bound is almost never positive ({positive} of 300)");
    // How far under the closest vertex pair the bound is, on average (the closest vertices are
    // themselves farther apart than the surfaces): 0.13 m for the leaf-level descent, 0.22 m for a
    // cut 3 levels down, at a mean vertex distance of 0.6 m.
    let slack = slack / positive as f32;
    assert!(slack < 0.18, "the bound is loose: {slack} m under the closest vertices on average");
}

#[test]
fn sharpened_only_beyond_enough() {
    // Stopped as soon as every pending node pair is more than `enough` apart: the same bound as the
    // full descent at or under `enough`, and above it a bound between `enough` and the full one
    // (within rounding: a child's moved box may stick out of its parent's by an ulp).
    let (a, b) = (blob(), cube(0.3));
    let (mut early, mut same) = (0, 0);
    for pose in random_poses(0x7a, 300, 1.2) {
        let full = separation_bound(&a, &b, &pose);
        for enough in [0.0f32, 0.02, 0.1] {
            let beyond = separation_bound_beyond(&a, &b, &pose, enough);
            if full <= enough {
                assert!(
                    (beyond - full).abs() < 1e-5,
                    "enough {enough}: {beyond} where the full descent gives {full}"
                );
                same += 1;
            } else {
                assert!(
                    beyond > enough && beyond <= full + 1e-5,
                    "enough {enough}: {beyond} not in ({enough}, {full}]"
                );
                early += usize::from(beyond < full);
            }
        }
    }
    assert!(early > 50 && same > 50, "cases not covered: {early} stopped early, {same} at or under enough");
}

#[test]
fn kept_separation_is_the_best_first_bound_beyond_reach() {
    // `separation_for_reach` descends depth first in shape 1's frame only: above the reach, the
    // best-first bound (`separation_bound_beyond`, whose first descent is in the same frame and
    // decides alone when positive); never above the closest vertex pair.
    let (a, b) = (blob(), cube(0.3));
    let (mut beyond, mut within) = (0, 0);
    for prediction in [false, true] {
        let params = RtcdParams { prediction, ..RtcdParams::from_triangle_size(0.02) };
        let reach = rtcd::detect::ray_reach(&params);
        for pose in random_poses(0x3c, 300, 1.2) {
            let kept = separation_for_reach(&a, &b, &pose, &params);
            let best_first = separation_bound_beyond(&a, &b, &pose, reach);
            let closest = closest_vertices(&a, &b, &pose);
            assert!(kept >= 0.0 && kept <= closest + 1e-5, "{kept} above the closest vertices {closest}");
            if kept > reach {
                assert_eq!(kept, best_first, "reach {reach}");
                beyond += 1;
            } else {
                within += 1;
            }
        }
    }
    assert!(beyond > 50 && within > 50, "cases not covered: {beyond} beyond the reach, {within} within");
}

#[test]
fn decision_rules() {
    let params = RtcdParams::from_triangle_size(0.1);
    let (thr, reach) = (params.displacement_threshold, params.culling_dist);
    let reference =
        |separation, has_records| TraceReference { pose: Pose::IDENTITY, separation, has_records };
    let moved = |d: f32| Pose::from_translation(Vec3::new(d, 0.0, 0.0));
    // No reference: standard.
    assert!(needs_standard_trace(None, &moved(0.0), 1.0, 1.0, &params));
    // Under the threshold: iterative, whatever the rest.
    assert!(!needs_standard_trace(Some(&reference(0.0, true)), &moved(0.5 * thr), 1.0, 1.0, &params));
    // Over it: standard with records, or when the separation may have closed to within reach.
    let far = reach + 3.0 * thr;
    assert!(needs_standard_trace(Some(&reference(far, true)), &moved(1.5 * thr), 1.0, 1.0, &params));
    assert!(!needs_standard_trace(Some(&reference(far, false)), &moved(1.5 * thr), 1.0, 1.0, &params));
    assert!(needs_standard_trace(Some(&reference(far, false)), &moved(3.0 * thr), 1.0, 1.0, &params));
    // Without prediction nothing is within reach before contact.
    let nopred = RtcdParams { prediction: false, ..params };
    assert!(!needs_standard_trace(Some(&reference(2.9 * thr, false)), &moved(2.5 * thr), 1.0, 1.0, &nopred));
    // A NaN pose never skips the trace.
    let nan = Pose::from_translation(Vec3::splat(f32::NAN));
    assert!(needs_standard_trace(Some(&reference(far, false)), &nan, 1.0, 1.0, &params));
}

/// `needs_standard_trace` tests a cheap bound first (no arctangent, in the frame of the larger
/// radius too, against the separation left to reach for a record-less pair). Its decisions are
/// those of the rule itself, `max_displacement` against the threshold and the separation, on
/// seeded random small motions of a small body next to a large one, in both orders, around the
/// decision boundaries.
#[test]
fn the_cheap_bound_changes_no_decision() {
    let params = RtcdParams::from_triangle_size(0.05);
    let nopred = RtcdParams { prediction: false, ..params };
    let thr = params.displacement_threshold;
    let starts = random_poses(3, 200, 20.0);
    let moves = random_poses(4, 200, 0.0);
    let (mut traced, mut skipped) = (0, 0);
    for (k, (start, mv)) in starts.iter().zip(&moves).enumerate() {
        // A motion of 0 to ~3 thresholds: a turn of up to ~0.03 rad and a shift.
        let scale = (k % 7) as f32 * 0.5;
        let turn = Quat::from_scaled_axis(mv.rotation.to_scaled_axis().normalize_or_zero() * 0.01 * scale);
        let shift = mv.translation.normalize_or_zero() * thr * scale * 0.5;
        let current = Pose::new(start.translation + shift, turn * start.rotation);
        let (r1, r2) = if k % 2 == 0 { (0.5, 30.0) } else { (30.0, 0.5) };
        for p in [&params, &nopred] {
            let reach = if p.prediction { p.culling_dist } else { 0.0 };
            let d = max_displacement(start, &current, r1, r2);
            for (separation, has_records) in [
                (0.0, true),
                (0.0, false),
                (d + reach, false),
                (2.0 * d + reach, false),
                (f32::INFINITY, false),
            ] {
                let reference = TraceReference { pose: *start, separation, has_records };
                let rule = d > thr && (has_records || d >= separation - reach);
                let got = needs_standard_trace(Some(&reference), &current, r1, r2, p);
                assert_eq!(got, rule, "pose {k}, d {d}, separation {separation}, records {has_records}");
                if got {
                    traced += 1;
                } else {
                    skipped += 1;
                }
            }
        }
    }
    assert!(traced > 300 && skipped > 300, "{traced} traced, {skipped} skipped");
}

/// Shape 2 approaches shape 1 from far away. The first step with contacts is the same as with a
/// standard trace on every step, and the pair is not re-traced while it is provably out of reach.
#[test]
fn no_contact_found_later_than_standard_tracing() {
    let (a, b) = (blob(), blob());
    let params = RtcdParams::from_meshes(&[&a, &b]);
    let radius = a.max_radius().max(b.max_radius());
    let speed = 0.4 * params.displacement_threshold;
    let start = 2.0 * radius + 12.0 * params.displacement_threshold;
    let pose_at = |s: usize| {
        Pose::new(Vec3::new(start - speed * s as f32, 0.05, 0.0), Quat::from_rotation_y(0.01 * s as f32))
    };
    let first_contact = |force_standard: bool| {
        let mut np = NarrowPhase::new(params).unwrap();
        let (mut deferred, mut first) = (0, None);
        for s in 0..200 {
            let out = np.step(
                &[PairInput::new(PairKey::new(1, 2), &a, &b, pose_at(s))],
                &StepOptions { force_standard, ..Default::default() },
            );
            let reference = np.pair_state(&PairKey::new(1, 2)).and_then(|st| st.reference).unwrap();
            let o = &out.pairs[0];
            if o.mode == StepMode::Iterative
                && max_displacement(&reference, &pose_at(s), a.max_radius(), b.max_radius())
                    > params.displacement_threshold
            {
                deferred += 1;
            }
            if first.is_none()
                && !o.manifolds.is_empty()
                && o.manifolds.iter().any(|m| m.points.iter().any(|p| p.dist < 0.0))
            {
                first = Some(s);
            }
        }
        (first, deferred)
    };
    let (standard, _) = first_contact(true);
    let (ours, deferred) = first_contact(false);
    println!(
        "first contact: step {standard:?} traced standard every step, {ours:?} with deferred traces ({deferred} deferred)"
    );
    assert!(standard.is_some(), "the scripted motion must reach contact");
    assert_eq!(ours, standard);
    assert!(deferred > 0, "no standard trace was put off");
}
