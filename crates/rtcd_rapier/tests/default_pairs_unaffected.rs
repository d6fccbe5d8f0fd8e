//! Pairs that are not ours go through Rapier's default dispatcher unchanged: a scene of balls,
//! a capsule and cuboids follows bit for bit the same trajectories with and without our dispatcher;
//! and our shape still collides with a ball through parry's composite-shape path.

mod common;

use std::sync::Arc;

use common::{World, asset, rtcd_shape};
use rapier3d::prelude::*;
use rtcd::{RtcdMesh, RtcdParams, shapes};
use rtcd_rapier::{RtcdDriver, RtcdShape, integration_parameters};

fn scene(w: &mut World, far_mesh: &Arc<RtcdMesh>) -> Vec<RigidBodyHandle> {
    w.add_ground(Vector::new(10.0, 0.5, 10.0), 0.0);
    // One of our meshes, fixed and far away: it changes nothing for the others.
    let far = w
        .colliders
        .insert(ColliderBuilder::new(rtcd_shape(far_mesh)).translation(Vector::new(50.0, 5.0, 0.0)));
    let _ = far;
    let mut bodies = Vec::new();
    let mut add = |w: &mut World, collider: ColliderBuilder, pos: Vector, linvel: Vector, angvel: Vector| {
        let b = w.bodies.insert(RigidBodyBuilder::dynamic().translation(pos).linvel(linvel).angvel(angvel));
        w.colliders.insert_with_parent(collider.restitution(0.3).friction(0.6), b, &mut w.bodies);
        bodies.push(b);
    };
    add(
        w,
        ColliderBuilder::ball(0.3),
        Vector::new(0.0, 2.0, 0.0),
        Vector::new(1.0, 0.0, 0.5),
        Vector::new(0.0, 3.0, 1.0),
    );
    add(
        w,
        ColliderBuilder::ball(0.25),
        Vector::new(0.8, 3.0, 0.3),
        Vector::new(-0.5, 0.0, 0.0),
        Vector::ZERO,
    );
    add(
        w,
        ColliderBuilder::capsule_y(0.3, 0.15),
        Vector::new(-1.0, 1.5, 0.0),
        Vector::ZERO,
        Vector::new(1.0, 0.0, 2.0),
    );
    add(
        w,
        ColliderBuilder::cuboid(0.2, 0.3, 0.25),
        Vector::new(1.5, 1.0, -0.5),
        Vector::new(0.0, 0.0, 0.3),
        Vector::new(0.5, 0.5, 0.0),
    );
    bodies
}

#[test]
fn non_rtcd_pairs_follow_the_same_trajectory() {
    let mesh = asset("torus_900");
    let mut plain = World::plain(integration_parameters());
    let mut ours = World::ours(RtcdDriver::new(RtcdParams::from_meshes(&[&mesh])).unwrap());
    let a = scene(&mut plain, &mesh);
    let b = scene(&mut ours, &mesh);
    let (mut contacts, mut served) = (0, 0);
    for tick in 0..300 {
        plain.step();
        ours.step();
        for (&ha, &hb) in a.iter().zip(&b) {
            let (pa, pb) = (plain.pose(ha), ours.pose(hb));
            assert!(
                pa.translation == pb.translation && pa.rotation == pb.rotation,
                "tick {tick}: trajectories differ: {pa:?} vs {pb:?}"
            );
        }
        contacts += ours.narrow_phase.contact_pairs().filter(|p| p.has_any_active_contact()).count();
        let c = ours.driver.as_ref().unwrap().metrics().cache;
        served += c.hits + c.misses + c.refreshed + c.separated;
    }
    println!(
        "300 ticks, 4 bodies: identical poses every tick; {contacts} active contact pairs summed over ticks; \
         our dispatcher answered {served} pairs (none of these is ours)"
    );
    assert_eq!(served, 0);
    assert!(contacts > 300, "the scene must have contacts: {contacts}");
}

#[test]
fn ball_collides_with_our_shape_through_the_default_dispatcher() {
    let (v, i) = shapes::cuboid(Vector::splat(0.5));
    let cube = Arc::new(RtcdMesh::new("cube", &v, &i).unwrap());
    let mut w = World::ours(RtcdDriver::new(RtcdParams::from_meshes(&[&cube])).unwrap());
    let table = w.colliders.insert(ColliderBuilder::new(SharedShape::new(RtcdShape::new(cube).unwrap())));
    let ball = w.bodies.insert(RigidBodyBuilder::dynamic().translation(Vector::new(0.1, 2.0, -0.1)));
    let ball_collider = w.colliders.insert_with_parent(ColliderBuilder::ball(0.2), ball, &mut w.bodies);
    let mut touched = false;
    for _ in 0..240 {
        w.step();
        touched |=
            w.narrow_phase.contact_pair(table, ball_collider).is_some_and(|p| p.has_any_active_contact());
    }
    let y = w.pose(ball).translation.y;
    println!("ball of radius 0.2 on our fixed unit cube (top at 0.5): rests at y = {y:.4}");
    assert!(touched);
    assert!((y - 0.7).abs() < 0.01, "ball at {y}");
    assert!(w.bodies[ball].linvel().length() < 0.05);
}
