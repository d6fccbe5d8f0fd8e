//! Level geometry for the scenes: a gently wavy grid terrain in place of the ground box, as a Rapier
//! triangle-mesh collider or as a heightfield of the same heights, and a measure of how deep bodies
//! sink into it that uses the surface's own triangles and no rtcd code.
//!
//! The terrain's hills are `AMPLITUDE` high about their mean and `WAVELENGTH` apart; its highest
//! points are at the ground box's top ([`GROUND_TOP`]), so the scenes' spawns drop onto it as onto
//! the box. The waves fade out over `FADE` towards the walls: under the walls and beyond them the
//! terrain is flat at the box's top, so the walls stand on it without a gap beneath.

use std::sync::Arc;

use glam::Vec3;
use rtcd_rapier::{
    parry3d::{shape::HeightField, utils::Array2},
    rapier3d::prelude::{ColliderBuilder, SharedShape},
};

use crate::scene::GROUND_TOP;

/// Height of the hills about their mean (m).
pub const AMPLITUDE: f32 = 0.3;
/// Distance between two hills (m).
pub const WAVELENGTH: f32 = 10.0;
/// Width of the band along the walls over which the waves fade out (m).
pub const FADE: f32 = 1.0;
/// Side of a grid cell (m), at most.
pub const CELL: f32 = 0.5;

/// How a level ground reaches Rapier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LevelKind {
    /// A `TriMesh` collider (`ColliderBuilder::trimesh`).
    TriMesh,
    /// A `HeightField` collider of the same heights.
    HeightField,
}

impl LevelKind {
    /// `trimesh terrain` or `heightfield`.
    pub fn name(self) -> &'static str {
        match self {
            LevelKind::TriMesh => "trimesh terrain",
            LevelKind::HeightField => "heightfield",
        }
    }
}

/// A square grid of heights centred on the origin: `cells` × `cells` cells, two triangles each.
#[derive(Clone, Debug)]
pub struct Terrain {
    /// Cells along x and along z.
    pub cells: usize,
    /// Half the grid's side (m).
    pub half_width: f32,
    /// Heights of the `(cells + 1)²` vertices, row by row along z, each row along x.
    heights: Vec<f32>,
}

impl Terrain {
    /// A terrain covering a ground box's footprint (`half_width` on each side) with cells of at most
    /// [`CELL`], waves on the floor between walls `floor_half_width` from the centre.
    pub fn covering(half_width: f32, floor_half_width: f32) -> Self {
        let cells = (2.0 * half_width / CELL).ceil().max(1.0) as usize;
        Self::new(cells, half_width, floor_half_width)
    }

    /// A terrain of `cells` × `cells` cells of [`CELL`] (`2 cells²` triangles), the same surface as
    /// [`Terrain::covering`] near the centre.
    pub fn with_cells(cells: usize, floor_half_width: f32) -> Self {
        Self::new(cells, 0.5 * CELL * cells as f32, floor_half_width)
    }

    fn new(cells: usize, half_width: f32, floor_half_width: f32) -> Self {
        let n = cells + 1;
        let step = 2.0 * half_width / cells as f32;
        let heights = (0..n * n)
            .map(|k| {
                let (i, j) = (k % n, k / n);
                height(-half_width + i as f32 * step, -half_width + j as f32 * step, floor_half_width)
            })
            .collect();
        Self { cells, half_width, heights }
    }

    /// Triangles of the grid.
    pub fn triangle_count(&self) -> usize {
        2 * self.cells * self.cells
    }

    /// Position of vertex `(i, j)` (`i` along x, `j` along z).
    fn vertex(&self, i: usize, j: usize) -> Vec3 {
        let step = 2.0 * self.half_width / self.cells as f32;
        Vec3::new(
            -self.half_width + i as f32 * step,
            self.heights[j * (self.cells + 1) + i],
            -self.half_width + j as f32 * step,
        )
    }

    /// The grid's vertices and triangles, counter-clockwise seen from above (solid below).
    pub fn trimesh(&self) -> (Vec<Vec3>, Vec<[u32; 3]>) {
        let n = self.cells;
        let at = |i: usize, j: usize| (j * (n + 1) + i) as u32;
        let positions = (0..(n + 1) * (n + 1)).map(|k| self.vertex(k % (n + 1), k / (n + 1))).collect();
        let mut triangles = Vec::with_capacity(2 * n * n);
        for j in 0..n {
            for i in 0..n {
                triangles.push([at(i, j), at(i, j + 1), at(i + 1, j)]);
                triangles.push([at(i + 1, j), at(i, j + 1), at(i + 1, j + 1)]);
            }
        }
        (positions, triangles)
    }

    /// The same heights as a parry heightfield (rows along z, columns along x), centred.
    pub fn heightfield(&self) -> HeightField {
        let n = self.cells + 1;
        // Column-major: entry `k` is row `k % n` (z), column `k / n` (x).
        let data = (0..n * n).map(|k| self.heights[(k % n) * n + k / n]).collect();
        let side = 2.0 * self.half_width;
        HeightField::new(Array2::new(n, n, data), Vec3::new(side, 1.0, side))
    }

    /// The ground's collider (fixed, no body) and its surface triangles in the world.
    pub fn collider(&self, kind: LevelKind) -> Result<(ColliderBuilder, Vec<[Vec3; 3]>), String> {
        match kind {
            LevelKind::TriMesh => {
                let (p, t) = self.trimesh();
                let tris = t.iter().map(|t| t.map(|i| p[i as usize])).collect();
                let c = ColliderBuilder::trimesh(p, t).map_err(|e| format!("terrain: {e}"))?;
                Ok((c, tris))
            }
            LevelKind::HeightField => {
                let field = self.heightfield();
                let tris = field.triangles().map(|t| [t.a, t.b, t.c]).collect();
                Ok((ColliderBuilder::new(SharedShape::new(field)), tris))
            }
        }
    }
}

/// The terrain's height at `(x, z)`: waves on the floor, fading out towards the walls.
pub fn height(x: f32, z: f32, floor_half_width: f32) -> f32 {
    let k = std::f32::consts::TAU / WAVELENGTH;
    let fade = |s: f32| {
        let t = ((floor_half_width - s.abs()) / FADE).clamp(0.0, 1.0);
        t * t * (3.0 - 2.0 * t)
    };
    GROUND_TOP + AMPLITUDE * ((k * x).cos() * (k * z).cos() - 1.0) * fade(x) * fade(z)
}

/// A scene's level ground: which collider, on which terrain.
#[derive(Clone, Debug)]
pub struct Level {
    /// Trimesh or heightfield.
    pub kind: LevelKind,
    /// The heights.
    pub terrain: Arc<Terrain>,
    /// Our narrow phase traces the bodies' pairs with it; `false`: Rapier's own path
    /// (`CacheSettings::levels` off).
    pub ours: bool,
}

#[cfg(test)]
mod tests {
    use rtcd_scenes::measure::Surface;

    use super::*;

    #[test]
    fn terrain_tops_at_the_ground_box_and_is_flat_under_the_walls() {
        let t = Terrain::covering(8.0, 6.0);
        assert_eq!(t.cells, 32);
        let (p, tris) = t.trimesh();
        assert_eq!(tris.len(), t.triangle_count());
        let top = p.iter().map(|v| v.y).fold(f32::MIN, f32::max);
        let low = p.iter().map(|v| v.y).fold(f32::MAX, f32::min);
        assert!((top - GROUND_TOP).abs() < 1e-6 && (GROUND_TOP - 0.6..GROUND_TOP - 0.3).contains(&low));
        assert!(p.iter().filter(|v| v.x.abs() >= 6.0 || v.z.abs() >= 6.0).all(|v| v.y == GROUND_TOP));
        // Counter-clockwise seen from above.
        for t in &tris {
            let [a, b, c] = t.map(|i| p[i as usize]);
            assert!((b - a).cross(c - a).y > 0.0);
        }
    }

    #[test]
    fn trimesh_and_heightfield_have_the_same_heights() {
        let t = Terrain::covering(8.0, 6.0);
        let (_, tm) = t.collider(LevelKind::TriMesh).unwrap();
        let (_, hf) = t.collider(LevelKind::HeightField).unwrap();
        let (a, b) = (Surface::new(tm, 32, 8.0), Surface::new(hf, 32, 8.0));
        for (x, z) in [(0.0, 0.0), (1.3, -2.2), (-4.9, 3.1), (5.5, 5.5), (7.9, -7.9)] {
            let (ha, hb) = (a.at(x, z).unwrap().0, b.at(x, z).unwrap().0);
            assert!((ha - height(x, z, 6.0)).abs() < 0.02, "({x}, {z}): {ha}");
            assert!((ha - hb).abs() < 0.02, "({x}, {z}): {ha} vs {hb}");
        }
        assert!(a.at(8.5, 0.0).is_none());
    }
}
