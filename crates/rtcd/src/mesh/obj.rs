//! Wavefront OBJ loading with `tobj`: every object and group of the file merged into one mesh.

use std::path::Path;

use glam::Vec3;

use super::RtcdMesh;
use crate::error::MeshError;

/// The geometry of an OBJ file as read, before any validation: every object and group merged, polygons
/// triangulated.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ObjData {
    /// The file stem (`"obj"` if the path has none).
    pub name: String,
    /// Vertex positions.
    pub positions: Vec<Vec3>,
    /// Three indices into `positions` per triangle.
    pub indices: Vec<u32>,
}

/// Reads an OBJ file's positions and triangles without validating them (the loader of
/// [`RtcdMesh::from_obj`]), e.g. to build another collider from a mesh that [`RtcdMesh::new`] rejects.
/// Fails with [`MeshError::Obj`] when the file cannot be read or parsed.
pub fn read_obj(path: impl AsRef<Path>) -> Result<ObjData, MeshError> {
    let path = path.as_ref();
    let error = |source| MeshError::Obj { path: path.to_path_buf(), source };
    let bytes = std::fs::read(path).map_err(|e| {
        error(if e.kind() == std::io::ErrorKind::NotFound {
            tobj::LoadError::OpenFileFailed
        } else {
            tobj::LoadError::ReadError
        })
    })?;
    let text = surface_lines(&String::from_utf8_lossy(&bytes));
    let options = tobj::LoadOptions { triangulate: true, single_index: true, ..Default::default() };
    let (models, _materials) =
        tobj::load_obj_buf(&mut text.as_bytes(), &options, |_| Err(tobj::LoadError::OpenFileFailed))
            .map_err(error)?;
    let mut positions = Vec::new();
    let mut indices = Vec::new();
    for m in &models {
        let base = positions.len() as u32;
        positions.extend(m.mesh.positions.chunks_exact(3).map(|c| Vec3::new(c[0], c[1], c[2])));
        indices.extend(m.mesh.indices.iter().map(|i| i + base));
    }
    let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "obj".into());
    Ok(ObjData { name, positions, indices })
}

/// The lines of an OBJ text that make its surface, as the parser is given them: vertices (`v`) with
/// any trailing comment cut off, and faces (`f`) with their position indices only. Lines (`l`,
/// polylines: no surface, which the parser would take for faces), texture coordinates and normals
/// (whose indices faces no longer name, so an out-of-range one cannot reach the parser), materials,
/// groups and comments are left out.
fn surface_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        let mut words = line.split_whitespace();
        match words.next() {
            Some("v") => {
                out.push_str(line);
                out.push('\n');
            }
            Some("f") => {
                out.push('f');
                for w in words {
                    out.push(' ');
                    out.push_str(w.split('/').next().unwrap_or(w));
                }
                out.push('\n');
            }
            _ => {}
        }
    }
    out
}

impl RtcdMesh {
    /// Loads every object of an OBJ file into one mesh (polygons are triangulated). The mesh is named
    /// after the file stem.
    pub fn from_obj(path: impl AsRef<Path>) -> Result<Self, MeshError> {
        let ObjData { name, positions, indices } = read_obj(path)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_obj_keeps_what_validation_rejects() {
        // One triangle of four with a repeated vertex (degenerate, past the 10 % share), readable.
        let text = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nv 1 1 1\nf 1 2 3\nf 2 3 4\nf 3 2 5\nf 1 1 4\n";
        let path = std::env::temp_dir().join(format!("rtcd_read_obj_{}_degenerate.obj", std::process::id()));
        std::fs::write(&path, text).unwrap();
        let obj = read_obj(&path).unwrap();
        assert!(matches!(RtcdMesh::from_obj(&path), Err(MeshError::TooManyDegenerate { .. })));
        let _ = std::fs::remove_file(&path);
        assert_eq!(obj.name, format!("rtcd_read_obj_{}_degenerate", std::process::id()));
        assert_eq!(obj.positions.len(), 5);
        assert_eq!(obj.positions[4], Vec3::ONE);
        assert_eq!(obj.indices, [0, 1, 2, 1, 2, 3, 2, 1, 4, 0, 0, 3]);
        assert!(matches!(read_obj("/nonexistent/mesh.obj"), Err(MeshError::Obj { .. })));
    }

    /// Polylines (`l`) are no surface, texture and normal indices are not read (an out-of-range
    /// one is no error), comments after a vertex and CRLF line ends are read past.
    #[test]
    fn lines_texture_indices_and_comments_are_read_past() {
        let (v, i) = crate::shapes::cuboid(Vec3::splat(0.5));
        let mut text = String::from("mtllib none.mtl\r\no cube\r\n");
        for p in &v {
            text += &format!("v {} {} {} # a corner\r\n", p.x, p.y, p.z);
        }
        text += "vt 0 0\r\nvn 0 1 0\r\nusemtl none\r\n";
        for t in i.chunks_exact(3) {
            text += &format!("f {}/1/1 {}/-9/1 {}//1\r\n", t[0] + 1, t[1] + 1, t[2] + 1);
        }
        text += "l 1 2\r\nl 1 2 3 4\r\n";
        let path = std::env::temp_dir().join(format!("rtcd_read_obj_{}_lines.obj", std::process::id()));
        std::fs::write(&path, text).unwrap();
        let obj = read_obj(&path);
        let mesh = RtcdMesh::from_obj(&path);
        let _ = std::fs::remove_file(&path);
        let obj = obj.unwrap();
        assert_eq!(obj.indices.len(), 36, "12 triangles, no polyline among them");
        let mesh = mesh.unwrap();
        assert!(mesh.is_closed());
        assert_eq!(mesh.report().degenerate_triangles, 0);
    }
}
