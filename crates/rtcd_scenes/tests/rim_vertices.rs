//! The benchmark scenes' meshes have no rim vertex (`rtcd::RtcdMesh::rim_motions`): neither the
//! papers' meshes the scenes load from `assets/meshes/` nor scene 3's everyday props (furniture
//! with concave corners, brackets, rings, tubes, a spring). Their figures owe nothing to rim
//! vertices' paths, which a flat body (a flat tetrahedron's base corners, a knife edge) has.

use rtcd_scenes::{assets_dir_from, everyday, load_mesh};

#[test]
fn the_scenes_meshes_have_no_rim_vertex() {
    let dir = assets_dir_from(None);
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok()?.path().file_stem()?.to_str().map(str::to_owned))
        .collect();
    names.sort();
    assert!(names.len() >= 6, "{names:?}");
    let mut meshes: Vec<(String, usize)> = names
        .iter()
        .map(|name| {
            let mesh = load_mesh(&dir, name).unwrap();
            (name.clone(), mesh.rim_motions().iter().filter(|r| r.is_finite()).count())
        })
        .collect();
    let props = everyday::catalogue().unwrap();
    assert_eq!(props.len(), 20);
    meshes.extend(
        props
            .iter()
            .map(|p| (p.name.to_owned(), p.mesh.rim_motions().iter().filter(|r| r.is_finite()).count())),
    );
    let with_rims: Vec<&(String, usize)> = meshes.iter().filter(|(_, n)| *n > 0).collect();
    assert!(with_rims.is_empty(), "meshes with rim vertices: {with_rims:?}");
}
