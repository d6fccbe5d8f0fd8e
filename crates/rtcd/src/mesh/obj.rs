//! Wavefront OBJ loading with `tobj`: every object and group of the file merged into one mesh.

use std::path::Path;

use glam::Vec3;

use super::RtcdMesh;
use crate::error::MeshError;

impl RtcdMesh {
    /// Loads every object of an OBJ file into one mesh (polygons are triangulated). The mesh is named
    /// after the file stem.
    pub fn from_obj(path: impl AsRef<Path>) -> Result<Self, MeshError> {
        let path = path.as_ref();
        let options = tobj::LoadOptions { triangulate: true, single_index: true, ..Default::default() };
        let (models, _materials) = tobj::load_obj(path, &options)
            .map_err(|source| MeshError::Obj { path: path.to_path_buf(), source })?;
        let mut positions = Vec::new();
        let mut indices = Vec::new();
        for m in &models {
            let base = positions.len() as u32;
            positions.extend(m.mesh.positions.chunks_exact(3).map(|c| Vec3::new(c[0], c[1], c[2])));
            indices.extend(m.mesh.indices.iter().map(|i| i + base));
        }
        let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "obj".into());
        Self::new(name, &positions, &indices)
    }

    /// Writes the mesh as OBJ text (positions and triangles), e.g. to generate assets.
    pub fn to_obj_string(&self, header: &str) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        for line in header.lines() {
            let _ = writeln!(s, "# {line}");
        }
        for p in self.positions() {
            let _ = writeln!(s, "v {} {} {}", p.x, p.y, p.z);
        }
        for t in self.triangles() {
            let _ = writeln!(s, "f {} {} {}", t[0] + 1, t[1] + 1, t[2] + 1);
        }
        s
    }
}
