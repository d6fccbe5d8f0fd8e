//! A concave mesh dropped on a static cuboid ground comes to rest on it: penetration at rest under
//! 2 % of its size, never falling through, over 600 ticks at 60 Hz.

mod common;

use common::{World, asset, lowest_vertex, rtcd_shape, size};
use rapier3d::prelude::*;
use rtcd::RtcdParams;
use rtcd_rapier::RtcdDriver;

fn drop_on_ground(name: &str) {
    let mesh = asset(name);
    let mut w = World::ours(RtcdDriver::new(RtcdParams::from_meshes(&[&mesh])).unwrap());
    w.add_ground(Vector::new(5.0, 0.5, 5.0), 0.0);
    let rotation = Rotation::from_euler(glam::EulerRot::XYZ, 0.4, 0.3, 0.7);
    let start = Pose::from_parts(Vector::ZERO, rotation);
    let lift = 0.5 - lowest_vertex(&mesh, &start);
    let (body, _) = w.add_body(rtcd_shape(&mesh), Pose::from_parts(Vector::new(0.0, lift, 0.0), rotation));
    let size = size(&mesh);

    let (mut max_pen, mut rest_pen, mut misses, mut hits) = (0.0f32, 0.0f32, 0, 0);
    let mut counted_points = 0;
    let mut first_contact = None;
    for tick in 0..600 {
        w.step();
        let m = w.driver.as_ref().unwrap().metrics();
        misses += m.cache.misses;
        hits += m.cache.hits;
        if !w.bodies[body].is_sleeping() {
            // What the batch says it hands the solver is what Rapier holds.
            let held: usize =
                w.narrow_phase.contact_pairs().flat_map(|p| &p.manifolds).map(|m| m.points.len()).sum();
            assert_eq!(m.manifold_points, held, "{name}: tick {tick}");
            counted_points += held;
        }
        let pen = (-lowest_vertex(&mesh, &w.pose(body))).max(0.0);
        if pen > 0.0 && first_contact.is_none() {
            first_contact = Some(tick);
        }
        max_pen = max_pen.max(pen);
        if tick >= 480 {
            rest_pen = rest_pen.max(pen);
        }
        assert!(w.pose(body).translation.y > 0.0, "{name}: fell through the ground at tick {tick}");
    }
    let rb = &w.bodies[body];
    let speed = rb.linvel().length();
    println!(
        "{name}: size {size:.3}, first contact tick {first_contact:?}, max penetration {:.3} % of size over the run, \
         {:.3} % at rest (ticks 480-600), final speed {speed:.2e} m/s, sleeping {}, cache hits {hits}, misses {misses}",
        100.0 * max_pen / size,
        100.0 * rest_pen / size,
        rb.is_sleeping(),
    );
    assert!(rest_pen < 0.02 * size, "{name}: resting penetration {rest_pen} >= 2 % of {size}");
    assert!(max_pen < 0.1 * size, "{name}: impact penetration {max_pen}");
    assert!(speed < 0.05, "{name}: not at rest, speed {speed}");
    assert!(counted_points > 0, "{name}: no contact point was ever handed over");
}

#[test]
fn blob_rests_on_cuboid_ground() {
    drop_on_ground("blob_900");
}

#[test]
fn torus_rests_on_cuboid_ground() {
    drop_on_ground("torus_900");
}

/// Rapier's contact skin: the dispatcher gets `prediction + skins` and Rapier subtracts the skins
/// from our geometric distances, so the mesh rests a skin above the ground, as any Rapier shape does.
#[test]
fn contact_skin_keeps_the_mesh_a_skin_above_the_ground() {
    let mesh = asset("blob_900");
    let skin = 0.01;
    let mut w = World::ours(RtcdDriver::new(RtcdParams::from_meshes(&[&mesh])).unwrap());
    w.add_ground(Vector::new(5.0, 0.5, 5.0), 0.0);
    let body = w.bodies.insert(RigidBodyBuilder::dynamic().translation(Vector::new(0.0, 0.8, 0.0)));
    w.colliders.insert_with_parent(
        ColliderBuilder::new(rtcd_shape(&mesh)).contact_skin(skin),
        body,
        &mut w.bodies,
    );
    for _ in 0..300 {
        w.step();
    }
    let gap = lowest_vertex(&mesh, &w.pose(body));
    println!("blob with a {skin} m contact skin rests with its lowest vertex {gap:.4} m above the ground");
    assert!(gap > 0.5 * skin && gap < 1.05 * skin, "gap {gap}");
}
