//! `RTCD_ASSETS_DIR` chooses the mesh folder at run time (a binary run away from the checkout it was
//! built in: `scripts/gpu_device_bench.sh`).

use std::ffi::OsString;

use rtcd_scenes::{AVALANCHE_MESHES, assets_dir_from, load_mesh};

#[test]
fn the_variable_names_the_mesh_folder() {
    let checkout = assets_dir_from(None);
    assert!(checkout.join(format!("{}.obj", AVALANCHE_MESHES[0])).is_file(), "{}", checkout.display());
    // Set but empty: the checkout's folder.
    assert_eq!(assets_dir_from(Some(OsString::new())), checkout);

    // A copy of one mesh elsewhere is found there, and only there.
    let dir = std::env::temp_dir().join(format!("rtcd_assets_dir_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let name = AVALANCHE_MESHES[0];
    std::fs::copy(checkout.join(format!("{name}.obj")), dir.join(format!("{name}.obj"))).unwrap();
    let chosen = assets_dir_from(Some(dir.clone().into_os_string()));
    assert_eq!(chosen, dir);
    assert!(load_mesh(&chosen, name).is_ok());
    let missing = load_mesh(&chosen, AVALANCHE_MESHES[1]).unwrap_err();
    assert!(missing.contains(&dir.display().to_string()), "{missing}");
    std::fs::remove_dir_all(&dir).unwrap();
}
