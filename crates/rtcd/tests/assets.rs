//! The committed meshes in `assets/meshes` are what `rtcd::shapes::asset_catalog()` generates.

mod common;

use rtcd::{RtcdMesh, shapes::asset_catalog};

#[test]
fn committed_assets_match_the_generator() {
    for spec in asset_catalog() {
        let (v, i) = &spec.data;
        let generated = RtcdMesh::new(spec.name, v, i).unwrap();
        let loaded = common::asset(spec.name);
        assert_eq!(loaded.positions().len(), generated.positions().len(), "{}", spec.name);
        assert_eq!(loaded.triangles().len(), generated.triangles().len(), "{}", spec.name);
        // The OBJ loader orders vertices by first use: compare them as sorted lists.
        let sorted = |m: &RtcdMesh| {
            let mut p: Vec<[f32; 3]> = m.positions().iter().map(|p| p.to_array()).collect();
            p.sort_by(|a, b| a.partial_cmp(b).unwrap());
            p
        };
        for (a, b) in sorted(&loaded).iter().zip(&sorted(&generated)) {
            let (a, b) = (glam::Vec3::from_array(*a), glam::Vec3::from_array(*b));
            assert!(
                (a - b).length() < 1e-5,
                "{}: regenerate with `cargo run -p rtcd --example gen_assets`",
                spec.name
            );
        }
        assert!((loaded.volume() - generated.volume()).abs() < 1e-5 * generated.volume().abs().max(1.0));
        assert!(loaded.is_closed(), "{} must be closed", spec.name);
        assert!(loaded.report().notes().is_empty(), "{}: {:?}", spec.name, loaded.report().notes());
    }
}

/// The closed tubes join their last ring to their first without a twist: around a loop that is not
/// planar, a parallel-transported frame comes back turned, and joined vertex by vertex the seam's
/// quads cut across the tube (the (2,3) knot's frame came back turned about 174°, its seam edges
/// longer than the tube is wide). Every ring-to-ring edge, the seam's included, is about as long as
/// the others.
#[test]
fn closed_tubes_join_without_a_twist() {
    for (name, (v, _), m) in [
        ("knot", rtcd::shapes::torus_knot(2, 3, 0.15, 0.07, 144, 12), 12usize),
        ("trefoil", rtcd::shapes::torus_knot(3, 2, 0.2, 0.05, 90, 10), 10),
    ] {
        let r = v.len() / m;
        let longest_between = |j: usize, k: usize| {
            (0..m).map(|i| (v[j * m + i] - v[k * m + i]).length()).fold(0.0f32, f32::max)
        };
        let usual = (0..r - 1).map(|j| longest_between(j, j + 1)).fold(0.0f32, f32::max);
        let seam = longest_between(r - 1, 0);
        assert!(seam < 1.5 * usual, "{name}: seam edges {seam} against {usual} elsewhere");
    }
}
