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
