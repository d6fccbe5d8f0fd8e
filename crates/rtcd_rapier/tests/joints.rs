//! The batch follows Rapier's joint rules: two bodies joined with contacts disabled (an impulse
//! joint, or a multibody joint; or two links of a multibody with self-contacts off) are never
//! traced, as Rapier never asks for their contacts, while joints with contacts enabled leave their
//! pairs to the batch. Without the joint sets (`Joints::none()`) such pairs are traced for nothing:
//! Rapier's results are the same.

mod common;

use common::{DT, World, asset, rtcd_shape};
use rapier3d::prelude::*;
use rtcd_rapier::{Joints, RtcdDriver};

/// How two bodies are joined.
#[derive(Clone, Copy, Debug)]
enum Link {
    Impulse { contacts: bool },
    Multibody { contacts: bool, self_contacts: bool },
}

/// Two blobs overlapping by a third of their size, in zero gravity, joined by `link`; the second
/// is pushed towards the first. Returns the world and both bodies.
fn joined_blobs(link: Link) -> (World, [RigidBodyHandle; 2]) {
    let mesh = asset("blob_900");
    let size = (mesh.aabb().max - mesh.aabb().min).max_element();
    let driver = RtcdDriver::new(rtcd::RtcdParams::from_meshes(&[&mesh])).unwrap();
    let mut w = World::ours(driver);
    w.gravity = Vector::ZERO;
    let (a, _) = w.add_body(rtcd_shape(&mesh), Pose::translation(0.0, 0.0, 0.0));
    let (b, _) = w.add_body(rtcd_shape(&mesh), Pose::translation(0.66 * size, 0.0, 0.0));
    w.bodies[b].set_linvel(Vector::new(-0.5, 0.0, 0.0), true);
    // A free joint: no axis locked, so only contacts could keep the bodies apart.
    let joint =
        |contacts: bool| GenericJointBuilder::new(JointAxesMask::empty()).contacts_enabled(contacts).build();
    match link {
        Link::Impulse { contacts } => {
            w.impulse_joints.insert(a, b, joint(contacts), true);
        }
        Link::Multibody { contacts, self_contacts } => {
            w.multibody_joints.insert(a, b, joint(contacts), true).unwrap();
            let id = w.multibody_joints.rigid_body_link(a).unwrap().multibody;
            w.multibody_joints.get_multibody_mut(id).unwrap().set_self_contacts_enabled(self_contacts);
        }
    }
    (w, [a, b])
}

/// Steps the world `steps` times with the batch given `joints` (or the world's own joint sets);
/// returns the batch's pair count of each step and the bodies' final poses.
fn run(
    mut w: World,
    bodies: [RigidBodyHandle; 2],
    own_joints: bool,
    steps: usize,
) -> (Vec<usize>, [Pose; 2]) {
    let mut pairs = Vec::new();
    for _ in 0..steps {
        let joints =
            if own_joints { Joints::new(&w.impulse_joints, &w.multibody_joints) } else { Joints::none() };
        let d = w.driver.as_mut().unwrap();
        let m = d.detect(&w.bodies, &w.colliders, joints, &w.params);
        pairs.push(m.batch_pairs);
        w.rapier_step();
    }
    (pairs, bodies.map(|b| w.pose(b)))
}

/// Whether Rapier made contacts for the pair of `a`'s and `b`'s colliders.
fn touching(w: &World, a: RigidBodyHandle, b: RigidBodyHandle) -> bool {
    let (ca, cb) = (w.bodies[a].colliders()[0], w.bodies[b].colliders()[0]);
    w.narrow_phase.contact_pair(ca, cb).is_some_and(|p| p.has_any_active_contact())
}

#[test]
fn joined_bodies_with_contacts_disabled_are_not_traced() {
    let steps = (0.5 / DT) as usize;
    for link in [
        Link::Impulse { contacts: false },
        Link::Multibody { contacts: false, self_contacts: true },
        Link::Multibody { contacts: true, self_contacts: false },
    ] {
        let (w, bodies) = joined_blobs(link);
        let (pairs, poses) = run(w, bodies, true, steps);
        assert!(pairs.iter().all(|&n| n == 0), "{link:?}: the batch traced the joined pair: {pairs:?}");
        // Without the joint rules the pair is traced, and Rapier's step is the same: it leaves the
        // pair out either way (nothing is handed to the dispatcher).
        let (w, bodies) = joined_blobs(link);
        let (pairs_none, poses_none) = run(w, bodies, false, steps);
        assert!(pairs_none.iter().all(|&n| n == 1), "{link:?}: without the joint rules: {pairs_none:?}");
        assert_eq!(poses, poses_none, "{link:?}: the joint rules changed Rapier's step");
        // The bodies passed into each other: nothing held them apart. (A multibody link is placed
        // and moved by its joint's coordinates, not by the velocity set here: checked for the
        // impulse joint only.)
        if let Link::Impulse { .. } = link {
            let moved = poses[1].translation.x - poses[0].translation.x;
            let (w, bodies) = joined_blobs(link);
            let start = w.pose(bodies[1]).translation.x - w.pose(bodies[0]).translation.x;
            assert!(moved < start - 0.2, "{link:?}: the bodies were held apart ({start} -> {moved})");
        }
    }
}

#[test]
fn joined_bodies_with_contacts_enabled_are_traced_and_pushed_apart() {
    for link in [Link::Impulse { contacts: true }, Link::Multibody { contacts: true, self_contacts: true }] {
        let (mut w, [a, b]) = joined_blobs(link);
        let start = w.pose(b).translation.x - w.pose(a).translation.x;
        let mut traced = 0;
        let mut touched = false;
        for _ in 0..30 {
            let joints = Joints::new(&w.impulse_joints, &w.multibody_joints);
            let d = w.driver.as_mut().unwrap();
            traced += d.detect(&w.bodies, &w.colliders, joints, &w.params).batch_pairs;
            w.rapier_step();
            touched |= touching(&w, a, b);
        }
        assert_eq!(traced, 30, "{link:?}: the pair must be traced every step");
        assert!(touched, "{link:?}: Rapier made no contact for the overlapping pair");
        // Rapier's multibody solver is its own matter: the push apart is checked for the impulse joint.
        let end = w.pose(b).translation.x - w.pose(a).translation.x;
        if let Link::Impulse { .. } = link {
            assert!(end > start, "{link:?}: the contacts did not push the bodies apart ({start} -> {end})");
        }
    }
}
