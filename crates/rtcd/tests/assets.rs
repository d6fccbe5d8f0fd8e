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
        for (a, b) in loaded.positions().iter().zip(generated.positions()) {
            assert!((*a - *b).length() < 1e-5, "{}: regenerate with `cargo run -p rtcd --example gen_assets`", spec.name);
        }
        assert!(loaded.is_closed(), "{} must be closed", spec.name);
        assert!(loaded.report().notes().is_empty(), "{}: {:?}", spec.name, loaded.report().notes());
    }
}
