//! [`RtcdParams::closed_reach`]: vertex rays into a closed mesh count a back-face hit as far as
//! their body's size reaches (`rtcd::detect::solid_reach`), not only before they leave their own
//! body (Hermann et al. 2008, Alg. 1): a thin plate pressed deeper than its thickness into a closed
//! slab is pushed back up from its bottom corners, at their depth, and the corners on its far side,
//! whose rays run on through the slab to its bottom face within the reach, get no contact, that
//! face not being the nearer way out (`rtcd::detect::nearer_way_out`); a pebble wholly inside the
//! slab is pushed up too. Without the option, Hermann's exit rule.

mod common;

use common::plate::{self, THICKNESS, assert_pushed_up, contacts, plate, plate_pose};
use glam::Vec3;
use rtcd::{
    NarrowPhase, Pose, RtcdMesh, RtcdParams, StepMode,
    detect::{ray_reach, separation_for_reach, solid_reach},
    shapes,
};

/// The slab's thickness: its bottom face is within a plate corner's reach.
const SLAB: f32 = 0.5;

/// A closed box mesh 4 x [`SLAB`] x 4, its top face at y = 0, of 12 triangles (`cells` 1) or with
/// each face cut into `cells` x `cells` squares.
fn slab(cells: u32) -> RtcdMesh {
    slab_of(cells, SLAB)
}

/// [`slab`] `thickness` thick.
fn slab_of(cells: u32, thickness: f32) -> RtcdMesh {
    let half = Vec3::new(2.0, 0.5 * thickness, 2.0);
    let (v, i) = if cells == 1 { shapes::cuboid(half) } else { shapes::subdivided_cuboid(half, cells) };
    let v: Vec<Vec3> = v.iter().map(|p| *p - Vec3::Y * 0.5 * thickness).collect();
    let slab = RtcdMesh::new(format!("closed slab, {cells} x {cells} cells a face"), &v, &i).unwrap();
    assert!(slab.is_closed() && slab.cuboid_half_extents().is_none() && !slab.solid_behind());
    slab
}

/// [`plate::variants`] of `base` with closed reach on.
fn variants(base: RtcdParams) -> Vec<RtcdParams> {
    plate::variants(RtcdParams { closed_reach: true, ..base })
}

#[test]
fn a_plate_sunk_in_a_closed_slab_is_pushed_up_at_its_depth() {
    let plate = plate();
    let mut cases = 0;
    for slab in [slab(1), slab(16)] {
        let base = RtcdParams::from_meshes(&[&plate, &slab]);
        assert!(base.closed_reach, "the closed reach is on by default");
        for params in variants(base) {
            let reach = solid_reach(&plate, &slab, &params.for_pair(&plate, &slab)).unwrap();
            for body_first in [true, false] {
                for (depth, yaw) in [(0.05, 0.0), (0.05, 0.7), (0.2, 0.3)] {
                    let bottom = depth + THICKNESS;
                    // The bottom corners' rays reach the top face within the plate's size, far past
                    // its thickness (their exit distance); the top corners' rays reach the bottom face
                    // within it too, farther than the top face is behind them.
                    let far = (SLAB - depth) * 3f32.sqrt();
                    assert!(bottom * 3f32.sqrt() < reach && THICKNESS * 3f32.sqrt() < bottom * 3f32.sqrt());
                    assert!(far < reach && depth * 3f32.sqrt() < far, "{far} {reach}");
                    let what = format!(
                        "{}: {params:?}, plate first {body_first}, {depth} m under, yaw {yaw}",
                        slab.name()
                    );
                    let mut np = NarrowPhase::new(params).unwrap();
                    let pose = plate_pose(depth, yaw);
                    let (found, mode) = contacts(&mut np, &plate, &slab, pose, body_first);
                    assert_eq!(mode, StepMode::Standard, "{what}");
                    assert_pushed_up(&found, &params, bottom, &what);
                    // The next step, moved by a hair, walks from the records (IRTCD 2013) to the same.
                    let moved = Pose::new(pose.translation + Vec3::new(1e-4, 0.0, 0.0), pose.rotation);
                    let (found, mode) = contacts(&mut np, &plate, &slab, moved, body_first);
                    assert_eq!(mode, StepMode::Iterative, "{what}");
                    assert_pushed_up(&found, &params, bottom, &format!("{what}, iterative"));
                    // Without the option: Hermann's exit rule, no contact from the plate.
                    let mut np = NarrowPhase::new(RtcdParams { closed_reach: false, ..params }).unwrap();
                    let (found, _) = contacts(&mut np, &plate, &slab, pose, body_first);
                    assert!(found.is_empty(), "{what}, without the closed reach: {found:?}");
                    cases += 1;
                }
            }
        }
    }
    assert_eq!(cases, 96);
}

/// A 0.5 m plate wholly inside a 1 m slab (faces cut into 20 x 20 cells, so that the hierarchy
/// tells the plate from the surface), its top 0.3 m under the slab's top, farther than the
/// predictions reach: the separation bound no longer puts it out of the rays' reach, and its bottom
/// corners, whose rays go up to the top face within its reach, push it up, at their depth; without
/// the option, the bound keeps the surfaces' distance and the plate gets no contact. Above the slab
/// both settings agree.
#[test]
fn a_plate_wholly_inside_a_closed_slab_is_pushed_up() {
    let (v, i) = shapes::cuboid(Vec3::new(0.25, 0.5 * THICKNESS, 0.25));
    let plate = RtcdMesh::new("plate 0.5 x 0.01 x 0.5", &v, &i).unwrap();
    let slab = slab_of(20, 1.0);
    let base = RtcdParams::from_meshes(&[&plate, &slab]);
    for on in variants(base) {
        let off = RtcdParams { closed_reach: false, ..on };
        let depth = 0.3;
        let inside = plate_pose(depth, 0.4);
        let above = plate_pose(-0.4, 0.4);
        for (params, pose) in [(on, inside), (off, inside), (on, above), (off, above)] {
            let pair = params.for_pair(&plate, &slab);
            assert!(depth > ray_reach(&pair), "{pair:?}");
            let separation = separation_for_reach(&plate, &slab, &pose.inverse(), &pair);
            let reaches = params.closed_reach && pose == inside;
            let what = format!("{params:?} at {pose:?}: separation {separation}");
            assert_eq!(separation <= ray_reach(&pair), reaches, "{what}");
            for body_first in [true, false] {
                let mut np = NarrowPhase::new(params).unwrap();
                let (found, _) = contacts(&mut np, &plate, &slab, pose, body_first);
                if reaches {
                    assert_pushed_up(&found, &params, depth + THICKNESS, &what);
                } else {
                    assert!(found.is_empty(), "{what}: {found:?}");
                }
            }
        }
    }
}

/// Where the casting body is at least the pair's `culling_dist` thick along its ray, the ray keeps
/// Hermann's exit distance with the option too (`rtcd::detect::vertex_reach`): a 20 cm thick block
/// of 10 cm edges pressed 30 cm into the slab gets no contact from its deepest vertices.
#[test]
fn thick_parts_keep_the_exit_distance() {
    let (v, i) = shapes::subdivided_cuboid(Vec3::new(0.5, 0.1, 0.5), 10);
    let block = RtcdMesh::new("block 1 x 0.2 x 1", &v, &i).unwrap();
    let slab = slab_of(1, 1.0);
    let params = RtcdParams { closed_reach: true, ..RtcdParams::from_meshes(&[&block, &slab]) };
    let pair = params.for_pair(&block, &slab);
    assert!(block.exit_distances().iter().all(|&e| e >= pair.culling_dist), "{pair:?}");
    assert!(solid_reach(&block, &slab, &pair).is_some());
    let pose = Pose::from_translation(Vec3::new(0.1, -0.3 - 0.1, -0.2));
    let mut np = NarrowPhase::new(params).unwrap();
    let (found, _) = contacts(&mut np, &block, &slab, pose, true);
    assert!(found.is_empty(), "{found:?}");
}
