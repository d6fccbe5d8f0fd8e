//! [`RtcdShape`]: a custom parry shape ([`ShapeType::Custom`]) that marks a collider as ours.
//!
//! Rapier's query dispatcher only sees shapes and relative poses, never collider handles, so the
//! shape itself carries what the narrow phase needs: the shared [`RtcdMesh`] and an instance id
//! unique per collider (many colliders share one mesh; the id tells them apart in the
//! [`ContactCache`](crate::ContactCache)).
//!
//! Everything that is not our mesh-vs-mesh narrow phase is delegated to a parry [`TriMesh`] built
//! from the same welded vertices and triangles, in the same order (no re-indexing flag), so triangle
//! ids agree between rtcd and parry: ray casts, point queries, bounding volumes, and
//! [`Shape::as_composite_shape`], through which Rapier's default dispatcher keeps colliding our shape
//! with every other shape (balls, capsules, convex hulls, height fields) and runs CCD casts on it.

use std::{
    fmt,
    sync::{
        Arc, OnceLock,
        atomic::{AtomicU64, Ordering},
    },
};

use parry3d::{
    bounding_volume::{Aabb, BoundingSphere},
    mass_properties::MassProperties,
    math::{Pose, Real, Vector},
    query::{PointProjection, PointQuery, Ray, RayCast, RayIntersection},
    shape::{
        CompositeShape, ConvexPolyhedron, Cuboid, FeatureId, Shape, ShapeType, TriMesh, TriMeshBuilderError,
        TriMeshFlags, TypedShape,
    },
};
use rtcd::RtcdMesh;
use thiserror::Error;

/// Why an [`RtcdShape`] could not be built.
#[derive(Debug, Clone, Error, PartialEq)]
pub enum ShapeError {
    /// parry refused the triangle mesh.
    #[error("mesh `{mesh}`: parry cannot build its triangle mesh: {source}")]
    TriMesh {
        /// Mesh name.
        mesh: String,
        /// parry's error.
        #[source]
        source: TriMeshBuilderError,
    },
}

/// The immutable part of an [`RtcdShape`], shared by every collider using the same mesh.
pub struct RtcdShapeData {
    mesh: Arc<RtcdMesh>,
    trimesh: TriMesh,
    ccd_thickness: Real,
    /// Where the mass properties come from, chosen on first use (see [`RtcdShape::mass_properties_of`]).
    mass_source: OnceLock<MassSource>,
}

/// The solid whose mass properties stand for the mesh's.
enum MassSource {
    /// The closed volume the triangles bound.
    Volume,
    /// The convex hull of the vertices.
    Hull(ConvexPolyhedron),
    /// The solid bounding box.
    BoundingBox,
}

impl RtcdShapeData {
    /// Builds parry's triangle mesh from `mesh`'s welded vertices and triangles, in the same order.
    ///
    /// Closed meshes get [`TriMeshFlags::ORIENTED`] (pseudo-normals only, no re-indexing), so point
    /// queries see a solid interior; open meshes get no flag and stay hollow for parry.
    pub fn new(mesh: Arc<RtcdMesh>) -> Result<Self, ShapeError> {
        let flags = if mesh.is_closed() { TriMeshFlags::ORIENTED } else { TriMeshFlags::empty() };
        let trimesh = TriMesh::with_flags(mesh.positions().to_vec(), mesh.triangles().to_vec(), flags)
            .map_err(|source| ShapeError::TriMesh { mesh: mesh.name().to_owned(), source })?;
        let ccd_thickness = ccd_thickness_of(&mesh);
        Ok(Self { mesh, trimesh, ccd_thickness, mass_source: OnceLock::new() })
    }

    /// The ray-tracing mesh.
    pub fn mesh(&self) -> &Arc<RtcdMesh> {
        &self.mesh
    }

    /// parry's view of the same triangles (same vertex and triangle ids).
    pub fn trimesh(&self) -> &TriMesh {
        &self.trimesh
    }

    /// The first usable solid (positive, finite mass at unit density) of: the closed volume (closed
    /// meshes with a positive signed volume), the convex hull of the vertices, the bounding box.
    fn mass_source(&self) -> &MassSource {
        self.mass_source.get_or_init(|| {
            let usable = |m: MassProperties| m.mass().is_finite() && m.mass() > 0.0;
            if self.mesh.is_closed()
                && self.mesh.volume() > 0.0
                && usable(MassProperties::from_trimesh(1.0, self.trimesh.vertices(), self.trimesh.indices()))
            {
                return MassSource::Volume;
            }
            match ConvexPolyhedron::from_convex_hull(self.mesh.positions()) {
                Some(hull) if usable(hull.mass_properties(1.0)) => MassSource::Hull(hull),
                _ => MassSource::BoundingBox,
            }
        })
    }
}

impl fmt::Debug for RtcdShapeData {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RtcdShapeData")
            .field("mesh", &self.mesh.name())
            .field("vertices", &self.mesh.positions().len())
            .field("triangles", &self.mesh.triangles().len())
            .field("ccd_thickness", &self.ccd_thickness)
            .finish()
    }
}

/// The typical wall a vertex ray crosses: the first quartile of the vertices' exit distances (Hermann
/// 2008 Alg. 1), at most the smallest bounding-box extent. Vertex rays see a penetration as long as it
/// is shallower than the wall, so this is the motion per step the narrow phase absorbs without
/// speculative contacts. (Rapier's swept CCD does not use it: it never sweeps a triangle mesh.)
/// Falls back to the smallest extent when the exit distances say nothing.
fn ccd_thickness_of(mesh: &RtcdMesh) -> Real {
    let extent = mesh.aabb().extents().min_element();
    let mut d: Vec<Real> =
        mesh.exit_distances().iter().copied().filter(|d| d.is_finite() && *d > 0.0).collect();
    let t = if d.is_empty() {
        extent
    } else {
        let q = d.len() / 4;
        let (_, quartile, _) = d.select_nth_unstable_by(q, |a, b| a.total_cmp(b));
        quartile.min(extent)
    };
    if t.is_finite() && t > 0.0 { t } else { 0.0 }
}

static NEXT_INSTANCE: AtomicU64 = AtomicU64::new(1);

/// A collider's shape for the ray-traced narrow phase: shared mesh data plus an instance id.
///
/// Give **each collider its own instance** ([`RtcdShape::new`] or [`RtcdShape::instance`]): the id is
/// how the [`RtcdDispatcher`](crate::RtcdDispatcher), which only sees shapes, tells colliders apart.
/// Cloning (also `clone_dyn`) keeps the id, as a clone stands for the same collider. Colliders that
/// share an id still work (cached results are told apart by relative pose) but cost more.
#[derive(Clone, Debug)]
pub struct RtcdShape {
    data: Arc<RtcdShapeData>,
    id: u64,
}

impl RtcdShape {
    /// A new instance (fresh id) of a mesh.
    pub fn new(mesh: Arc<RtcdMesh>) -> Result<Self, ShapeError> {
        Ok(Self::from_data(Arc::new(RtcdShapeData::new(mesh)?)))
    }

    /// A new instance (fresh id) of already-built shape data.
    pub fn from_data(data: Arc<RtcdShapeData>) -> Self {
        Self { data, id: NEXT_INSTANCE.fetch_add(1, Ordering::Relaxed) }
    }

    /// Another instance of the same data with a fresh id: one per collider.
    pub fn instance(&self) -> Self {
        Self::from_data(self.data.clone())
    }

    /// The instance id (process-unique per instance, never 0).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The shared data.
    pub fn data(&self) -> &Arc<RtcdShapeData> {
        &self.data
    }

    /// The ray-tracing mesh.
    pub fn mesh(&self) -> &Arc<RtcdMesh> {
        &self.data.mesh
    }

    /// parry's view of the same triangles.
    pub fn trimesh(&self) -> &TriMesh {
        &self.data.trimesh
    }

    /// Mass properties at `density`, from the first of these solids that has a positive, finite mass:
    ///
    /// 1. the volume the triangles bound ([`MassProperties::from_trimesh`]), for a closed mesh whose
    ///    signed volume is positive;
    /// 2. the convex hull of the vertices ([`ConvexPolyhedron::from_convex_hull`]): an open mesh, or a
    ///    closed one whose volume comes out empty or inside out, weighs as its hull;
    /// 3. the solid bounding box (each extent at least `Real::EPSILON`), when the hull is degenerate,
    ///    e.g. for a flat mesh.
    ///
    /// The choice is made once per shape data (at unit density) and never panics.
    pub fn mass_properties_of(&self, density: Real) -> MassProperties {
        let data = &self.data;
        match data.mass_source() {
            MassSource::Volume => {
                MassProperties::from_trimesh(density, data.trimesh.vertices(), data.trimesh.indices())
            }
            MassSource::Hull(hull) => hull.mass_properties(density),
            MassSource::BoundingBox => {
                let aabb = data.mesh.aabb();
                let half = (aabb.extents() * 0.5).max(Vector::splat(Real::EPSILON));
                Cuboid::new(half)
                    .mass_properties(density)
                    .transform_by(&Pose::from_translation(aabb.center()))
            }
        }
    }
}

impl RayCast for RtcdShape {
    fn cast_local_ray(&self, ray: &Ray, max_time_of_impact: Real, solid: bool) -> Option<Real> {
        self.data.trimesh.cast_local_ray(ray, max_time_of_impact, solid)
    }

    fn cast_local_ray_and_get_normal(
        &self,
        ray: &Ray,
        max_time_of_impact: Real,
        solid: bool,
    ) -> Option<RayIntersection> {
        self.data.trimesh.cast_local_ray_and_get_normal(ray, max_time_of_impact, solid)
    }
}

impl PointQuery for RtcdShape {
    fn project_local_point(&self, pt: Vector, solid: bool) -> PointProjection {
        self.data.trimesh.project_local_point(pt, solid)
    }

    fn project_local_point_and_get_feature(&self, pt: Vector) -> (PointProjection, FeatureId) {
        self.data.trimesh.project_local_point_and_get_feature(pt)
    }

    fn project_local_point_with_max_dist(
        &self,
        pt: Vector,
        solid: bool,
        max_dist: Real,
    ) -> Option<PointProjection> {
        self.data.trimesh.project_local_point_with_max_dist(pt, solid, max_dist)
    }

    fn contains_local_point(&self, pt: Vector) -> bool {
        self.data.trimesh.contains_local_point(pt)
    }
}

impl Shape for RtcdShape {
    fn compute_local_aabb(&self) -> Aabb {
        Shape::compute_local_aabb(&self.data.trimesh)
    }

    fn compute_local_bounding_sphere(&self) -> BoundingSphere {
        Shape::compute_local_bounding_sphere(&self.data.trimesh)
    }

    fn compute_aabb(&self, position: &Pose) -> Aabb {
        Shape::compute_aabb(&self.data.trimesh, position)
    }

    fn clone_dyn(&self) -> Box<dyn Shape> {
        Box::new(self.clone())
    }

    /// Scales the mesh (a new [`RtcdMesh`], validated again: [`RtcdMesh::scaled`]), as a new
    /// instance (fresh id): shapes scaled from one instance, for several colliders or by several
    /// scales, are other meshes, and their results must not be taken for each other's. `None` (with
    /// a warning) when the scaled mesh is rejected, e.g. a zero scale; never panics.
    fn scale_dyn(&self, scale: Vector, _num_subdivisions: u32) -> Option<Box<dyn Shape>> {
        if scale == Vector::ONE {
            return Some(Box::new(self.clone()));
        }
        let mesh = &self.data.mesh;
        let name = format!("{} scaled {scale}", mesh.name());
        // An exact box stays one; a mirroring scale keeps the triangles facing out.
        let scaled = mesh
            .scaled(name, scale)
            .map_err(|e| e.to_string())
            .and_then(|m| RtcdShapeData::new(Arc::new(m)).map_err(|e| e.to_string()));
        match scaled {
            Ok(data) => Some(Box::new(RtcdShape::from_data(Arc::new(data)))),
            Err(e) => {
                log::warn!("rtcd_rapier: cannot scale mesh `{}` by {scale}: {e}", mesh.name());
                None
            }
        }
    }

    fn mass_properties(&self, density: Real) -> MassProperties {
        self.mass_properties_of(density)
    }

    fn shape_type(&self) -> ShapeType {
        ShapeType::Custom
    }

    /// The wrapped triangle mesh: code that matches on typed shapes (Rapier's CCD, debug rendering,
    /// bevy_rapier's collider views) sees what the geometry is. Identity stays with
    /// [`Shape::shape_type`] (`Custom`, which routes contact generation to our dispatcher) and
    /// `as_shape::<RtcdShape>()`. In particular Rapier never sweeps a mesh as the moving shape of
    /// its CCD and relies on speculative contacts instead, which our predictive rays provide (soft
    /// CCD); sweeping a concave mesh triangle by triangle cost most of a step in falling scenes.
    fn as_typed_shape(&self) -> TypedShape<'_> {
        TypedShape::TriMesh(&self.data.trimesh)
    }

    /// The typical wall of the mesh (see `ccd_thickness_of`: first quartile of the vertex exit
    /// distances), for code that asks a shape for it. Rapier's CCD does not: it never sweeps a
    /// triangle mesh, which this shape presents itself as ([`Shape::as_typed_shape`]), and leaves
    /// such colliders out of a body's CCD thickness.
    fn ccd_thickness(&self) -> Real {
        self.data.ccd_thickness
    }

    fn ccd_angular_thickness(&self) -> Real {
        // As parry's TriMesh.
        std::f32::consts::FRAC_PI_4
    }

    fn as_composite_shape(&self) -> Option<&dyn CompositeShape> {
        Some(&self.data.trimesh as &dyn CompositeShape)
    }

    fn feature_normal_at_point(&self, feature: FeatureId, point: Vector) -> Option<Vector> {
        Shape::feature_normal_at_point(&self.data.trimesh, feature, point)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;
    use rtcd::shapes;

    fn cube() -> Arc<RtcdMesh> {
        let (v, i) = shapes::cuboid(Vector::splat(0.5));
        Arc::new(RtcdMesh::new("cube", &v, &i).unwrap())
    }

    #[test]
    fn instances_get_fresh_ids_and_share_data() {
        let a = RtcdShape::new(cube()).unwrap();
        let b = a.instance();
        assert_ne!(a.id(), b.id());
        assert!(Arc::ptr_eq(a.data(), b.data()));
        assert_eq!(a.clone().id(), a.id());
        let dynamic: &dyn Shape = &a;
        assert_eq!(dynamic.as_shape::<RtcdShape>().unwrap().id(), a.id());
        assert_eq!(dynamic.shape_type(), ShapeType::Custom);
    }

    #[test]
    fn trimesh_keeps_rtcd_ids() {
        let s = RtcdShape::new(cube()).unwrap();
        assert_eq!(s.trimesh().indices(), s.mesh().triangles());
        assert_eq!(s.trimesh().vertices(), s.mesh().positions());
    }

    #[test]
    fn mass_of_a_unit_cube_and_solid_queries() {
        let s = RtcdShape::new(cube()).unwrap();
        let m = s.mass_properties(2.0);
        assert!((m.mass() - 2.0).abs() < 1e-4, "{}", m.mass());
        assert!(m.local_com.length() < 1e-5);
        assert!(s.contains_local_point(Vector::ZERO));
        assert!(!s.contains_local_point(Vector::splat(0.6)));
        assert!((s.ccd_thickness() - 1.0).abs() < 1e-4, "{}", s.ccd_thickness());
    }

    fn mass_of(v: &[Vector], i: &[u32], density: Real) -> MassProperties {
        let s = RtcdShape::new(Arc::new(RtcdMesh::new("m", v, i).unwrap())).unwrap();
        s.mass_properties(density)
    }

    #[test]
    fn open_mesh_weighs_as_its_convex_hull() {
        // A unit cube without its top (+y) face: open, its hull is the whole cube.
        let (v, mut i) = shapes::cuboid(Vector::splat(0.5));
        i.drain(18..24);
        let s = RtcdShape::new(Arc::new(RtcdMesh::new("open", &v, &i).unwrap())).unwrap();
        assert!(!s.mesh().is_closed());
        let m = s.mass_properties(1.0);
        assert!((m.mass() - 1.0).abs() < 1e-4, "{}", m.mass());
        assert!(m.local_com.length() < 1e-5, "{}", m.local_com);
        let m = s.mass_properties(3.0);
        assert!((m.mass() - 3.0).abs() < 1e-4, "{}", m.mass());
        // The solid cube's inertia: m (1 + 1) / 12 about each axis.
        let inertia = m.principal_inertia();
        assert!((inertia - Vector::splat(0.5)).abs().max_element() < 1e-4, "{inertia}");

        // The four sides of a square pyramid (base 2 x 2 at y = 0, apex at y = 3), open at the base:
        // its hull is the pyramid, a third of its bounding box (12).
        let v = [
            Vector::new(-1.0, 0.0, -1.0),
            Vector::new(1.0, 0.0, -1.0),
            Vector::new(1.0, 0.0, 1.0),
            Vector::new(-1.0, 0.0, 1.0),
            Vector::new(0.0, 3.0, 0.0),
        ];
        let i = [0, 4, 1, 1, 4, 2, 2, 4, 3, 3, 4, 0];
        let m = mass_of(&v, &i, 1.0);
        assert!((m.mass() - 4.0).abs() < 1e-4, "the pyramid's volume, not the box's 12: {}", m.mass());
        // A pyramid's centroid is a quarter of the way up from its base.
        assert!((m.local_com - Vector::new(0.0, 0.75, 0.0)).length() < 1e-4, "{}", m.local_com);
    }

    #[test]
    fn flat_mesh_weighs_as_its_bounding_box() {
        // One square in the y = 0 plane: its hull is flat, the (thin) bounding box stands in.
        let v = [
            Vector::new(0.0, 0.0, 0.0),
            Vector::new(2.0, 0.0, 0.0),
            Vector::new(2.0, 0.0, 1.0),
            Vector::new(0.0, 0.0, 1.0),
        ];
        let m = mass_of(&v, &[0, 2, 1, 0, 3, 2], 1.0);
        let thin = 2.0 * 1.0 * (2.0 * Real::EPSILON);
        assert!(
            m.mass() > 0.0 && m.mass().is_finite() && (m.mass() - thin).abs() < thin * 1e-3,
            "{}",
            m.mass()
        );
        assert!((m.local_com - Vector::new(1.0, 0.0, 0.5)).length() < 1e-5, "{}", m.local_com);
    }

    #[test]
    fn scale_never_panics() {
        let s = RtcdShape::new(cube()).unwrap();
        let big = s.scale_dyn(Vector::new(2.0, 1.0, 1.0), 10).unwrap();
        assert!((big.mass_properties(1.0).mass() - 2.0).abs() < 1e-3);
        // Each scaled shape is an instance of its own.
        let again = s.scale_dyn(Vector::new(2.0, 1.0, 1.0), 10).unwrap();
        let ids =
            [s.id(), big.as_shape::<RtcdShape>().unwrap().id(), again.as_shape::<RtcdShape>().unwrap().id()];
        assert!(ids[0] != ids[1] && ids[1] != ids[2] && ids[0] != ids[2], "{ids:?}");
        assert!(s.scale_dyn(Vector::ZERO, 10).is_none());
        assert!(s.scale_dyn(Vector::splat(f32::NAN), 10).is_none());
        assert!(s.scale_dyn(Vector::new(-1.0, 1.0, 1.0), 10).is_some());
    }

    /// A mirroring scale keeps an open mesh's triangles facing out (each normal the original's
    /// mirrored), and an exact box stays an exact box of the scaled extents.
    #[test]
    fn mirrored_and_box_scales_keep_the_mesh_what_it_was() {
        let (v, i) = rtcd::shapes::cuboid(Vec3::splat(0.5));
        // The cube without its top: open.
        let keep: Vec<u32> = i
            .chunks_exact(3)
            .filter(|t| t.iter().any(|&k| v[k as usize].y < 0.0))
            .flatten()
            .copied()
            .collect();
        let open = Arc::new(RtcdMesh::new("open box", &v, &keep).unwrap());
        assert!(!open.is_closed());
        let mirror = Vec3::new(-1.0, 1.0, 1.0);
        let s = RtcdShape::new(open.clone()).unwrap().scale_dyn(mirror, 10).unwrap();
        let m = s.as_shape::<RtcdShape>().unwrap().mesh().clone();
        assert_eq!(m.report().rewound_triangles + m.report().inside_out_components, 0);
        let centroid = |mesh: &RtcdMesh, t: [u32; 3]| {
            t.iter().map(|&k| mesh.positions()[k as usize]).sum::<Vec3>() / 3.0
        };
        for (t, n) in m.triangles().iter().zip(m.triangle_normals()) {
            // The original triangle at the mirrored place, and its normal mirrored.
            let c = centroid(&m, *t) * mirror;
            let (k, _) = open
                .triangles()
                .iter()
                .enumerate()
                .map(|(k, u)| (k, centroid(&open, *u).distance(c)))
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .unwrap();
            assert!(
                (*n - open.triangle_normals()[k] * mirror).length() < 1e-5,
                "{n} vs {}",
                open.triangle_normals()[k]
            );
        }
        let b = Arc::new(RtcdMesh::cuboid("box", Vec3::new(0.5, 0.1, 0.2)).unwrap());
        let s = RtcdShape::new(b).unwrap().scale_dyn(Vector::new(2.0, -3.0, 1.0), 10).unwrap();
        let m = s.as_shape::<RtcdShape>().unwrap().mesh().clone();
        assert_eq!(m.cuboid_half_extents(), Some(Vec3::new(1.0, 0.3, 0.2)));
    }
}
