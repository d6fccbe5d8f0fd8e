//! The algorithm's parameters, with the papers' names. Defaults are derived from mesh sizes.

use thiserror::Error;

use crate::mesh::RtcdMesh;

/// Which standard ray-tracing algorithm runs when the iterative one cannot (IRTCD 2013 §4.2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TracerKind {
    /// Every ray against every triangle ("basic traversal").
    BruteForce,
    /// Stackless traversal of the mesh's flattened BVH.
    #[default]
    Bvh,
}

/// Parameters of the narrow phase. Build them with [`RtcdParams::from_meshes`] (or
/// [`RtcdParams::from_triangle_size`]) and adjust fields; [`RtcdParams::validate`] checks them.
///
/// With [`RtcdParams::per_pair`] (the default) each pair takes its lengths from its own two meshes
/// ([`RtcdParams::for_pair`]): one parameter set serves a world of 1 cm props and 10 m crates alike.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RtcdParams {
    /// IRTCD 2013 Eq. 2: a pair is traced iteratively while
    /// `max_dis = |t_ni - t| + angle(q_ni, q) * radius` ([`crate::detect::max_displacement`]) stays at
    /// or under this distance since its last standard step; above it, a standard trace runs and
    /// resets `(t_ni, q_ni)`.
    /// Default: one average triangle edge.
    pub displacement_threshold: f32,
    /// IRTCD 2013 Eq. 1: most triangles one iterative walk visits,
    /// `max_it = confidence * displacement_threshold / average_triangle_size` (rounded up).
    /// Default: 4 (confidence 4 at the default threshold).
    pub max_it: u32,
    /// 2014 §3.1: with prediction, candidate vertices are those inside the overlap of the two bounding
    /// boxes extended by this distance on every side. Must be greater than `displacement_threshold`,
    /// so vertices that can enter the other body before the next standard step get a predictive
    /// record. Without prediction the overlap itself (Hermann 2008 §3.2): a vertex outside it cannot
    /// be in contact, and only contacts are kept ([`RtcdParams::candidate_extension`]).
    /// Default: 1.5 × threshold.
    pub distance_extension: f32,
    /// 2014 Eq. 1: predictive rays longer than `culling_dist = confidence * displacement_threshold`
    /// are dropped. Default: the threshold (confidence 1: a vertex cannot close a larger gap before the next
    /// standard trace).
    pub culling_dist: f32,
    /// Use the iterative walk (IRTCD) below the threshold; `false` traces every step from scratch
    /// (Hermann 2008).
    pub iterative: bool,
    /// Cast predictive rays and keep their triangles as candidates (2014 §3.1).
    pub prediction: bool,
    /// Re-project rays onto the hit normal (2014 §3.2): depth `r·n`, direction `n`. With `false`,
    /// contacts use the raw ray: depth = ray length, direction = ray direction.
    pub reprojection: bool,
    /// Standard tracer.
    pub tracer: TracerKind,
    /// Contacts whose normals differ by less than this angle (radians) share a manifold. Default 5°.
    pub manifold_angle: f32,
    /// Each pair's length parameters come from its own meshes ([`RtcdParams::for_pair`]): its
    /// `displacement_threshold` is the smaller [`RtcdMesh::length_scale`] of its two meshes, and its
    /// `distance_extension` and `culling_dist` are the smaller mean edge of the two times their
    /// ratios to `displacement_threshold` given here. With `false` every pair uses the fields as
    /// they are. Default `true`.
    pub per_pair: bool,
    /// Trace the meshes' convex feature edges along their length (Mochi 2024 §3.4's edge rays;
    /// [`crate::detect::pair_edge_contacts`]): edges crossing the other body with no vertex inside
    /// get contacts. Default `true`.
    pub edge_rays: bool,
    /// Vertex rays into a closed mesh ([`RtcdMesh::is_closed`]) count a back-face hit as far as
    /// into a level chunk: within the larger of the vertex's exit distance and its body's size plus
    /// `culling_dist` ([`crate::detect::solid_reach`]), not only before the ray leaves its own body
    /// (Hermann 2008, Alg. 1). On a closed, consistently wound surface a ray whose first hit is a
    /// back face starts inside the mesh, however thin the casting body is, so a thin plate or limb
    /// pressed deeper than its own thickness into another body keeps the contacts of its deepest
    /// vertices, and a thin plate dropped onto a box mesh no longer sinks through it. Three
    /// limits keep it sound and cheap: the reach serves the vertices where their body is thinner
    /// along the ray than `culling_dist` ([`crate::detect::vertex_reach`]); beyond the exit
    /// distance a hit counts only as the nearer way out of the other mesh along the ray's line
    /// ([`crate::detect::nearer_way_out`]: the far side of a sunk plate is not pushed further in);
    /// and a ray is traced past its exit distance only when nothing says its vertex is outside the
    /// other mesh. A thin body wholly inside a closed mesh, within its reach of the surface, gets
    /// contacts too ([`crate::detect::separation_for_reach`]). Both backends decide alike.
    ///
    /// Default `true`. On the 2014 paper's ground-deviation protocol with the slab as a 12-triangle
    /// box mesh, the deepest vertex of a mesh with thin limbs gets a contact in 100 % of the cases
    /// instead of 8 %, a 1 cm plate's in 100 % instead of 7 %, at its true depth, with no wrong-way
    /// case either way; in the papers' piles (benchmark scenes 1 and 2), whose bodies are thicker
    /// than their edges are long, no ray goes past its exit distance and the narrow phase costs
    /// about 1 % more. `false`: Hermann's exit rule into every mesh but level chunks.
    pub closed_reach: bool,
    /// Contacts along each vertex's path ([`crate::detect::pair_motion_contacts`]): a vertex that
    /// moved in the last step by more than half the other body's typical thickness (or, into an
    /// open mesh, than half its own body's thickness there) is traced from where it was
    /// ([`crate::PairInput::previous`]) to where it is and on by twice that motion. A front face
    /// ahead gives a speculative contact; a front face it passed, a contact back out through that
    /// face, kept until the vertex is out.
    /// A body thinner than a step's motion, or landing with its corners' normals pointing past the
    /// other body's rim, is held by the faces it is moving onto, not only by those its vertex
    /// normals point at. Needs `prediction`. Default `true`.
    pub motion_rays: bool,
}

/// An invalid parameter.
#[derive(Debug, Clone, Error, PartialEq)]
#[error("invalid parameter `{name}` = {value}: {reason}")]
pub struct ParamsError {
    /// The field.
    pub name: &'static str,
    /// Its value.
    pub value: f32,
    /// What is required.
    pub reason: &'static str,
}

impl RtcdParams {
    /// How far the bounding-box overlap is grown to pick candidate vertices: `distance_extension`
    /// with prediction, 0 without.
    pub fn candidate_extension(&self) -> f32 {
        if self.prediction { self.distance_extension } else { 0.0 }
    }

    /// Confidence of Eq. 1 (2013) used by the defaults.
    pub const DEFAULT_MAX_IT_CONFIDENCE: f32 = 4.0;
    /// Confidence of Eq. 1 (2014) used by the defaults.
    pub const DEFAULT_CULLING_CONFIDENCE: f32 = 1.0;

    /// Defaults for meshes whose mean edge length is `average_triangle_size`.
    pub fn from_triangle_size(average_triangle_size: f32) -> Self {
        let s = if average_triangle_size.is_finite() && average_triangle_size > 0.0 {
            average_triangle_size
        } else {
            0.1
        };
        let displacement_threshold = s;
        Self {
            displacement_threshold,
            max_it: Self::max_it_for(Self::DEFAULT_MAX_IT_CONFIDENCE, displacement_threshold, s),
            distance_extension: 1.5 * displacement_threshold,
            culling_dist: Self::DEFAULT_CULLING_CONFIDENCE * displacement_threshold,
            iterative: true,
            prediction: true,
            reprojection: true,
            tracer: TracerKind::Bvh,
            manifold_angle: 5f32.to_radians(),
            per_pair: true,
            edge_rays: true,
            closed_reach: true,
            motion_rays: true,
        }
    }

    /// The parameters of a pair of `mesh1` and `mesh2`: with [`RtcdParams::per_pair`], the
    /// displacement threshold is the smaller of the two meshes' [`RtcdMesh::length_scale`] (the mean
    /// edge, or half the typical thickness of a thin body), `distance_extension` and `culling_dist`
    /// are the smaller of their mean edges ([`RtcdMesh::average_triangle_size`]) times the ratios
    /// of `self`'s fields to its threshold, and the rest is kept; without, `self`. Both backends
    /// trace each pair with its own, and a pair's parameters never change while its meshes do not.
    ///
    /// The smaller scale rules: a thin plate on a large box must be traced again before it can
    /// move by its own thickness, whatever the box's triangles are. The predictive rays keep the
    /// reach of the triangles' size, which thinness does not shorten: a thin plate still sees the
    /// ground coming within its edges' length. Scaling a scene scales every length here with it,
    /// so penetration relative to size and the rest behaviour do not depend on the units. The
    /// extension stays above the threshold, as [`RtcdParams::validate`] requires, since a mesh's
    /// length scale is at most its mean edge.
    #[inline]
    pub fn for_pair(&self, mesh1: &RtcdMesh, mesh2: &RtcdMesh) -> RtcdParams {
        if !self.per_pair {
            return *self;
        }
        let threshold = mesh1.length_scale().min(mesh2.length_scale());
        let k =
            mesh1.average_triangle_size().min(mesh2.average_triangle_size()) / self.displacement_threshold;
        RtcdParams {
            displacement_threshold: threshold,
            distance_extension: self.distance_extension * k,
            culling_dist: self.culling_dist * k,
            ..*self
        }
    }

    /// Defaults for a set of meshes: the triangle-count-weighted mean of their average triangle sizes.
    pub fn from_meshes(meshes: &[&RtcdMesh]) -> Self {
        let (sum, n) = meshes.iter().fold((0.0f64, 0usize), |(s, n), m| {
            let t = m.triangles().len();
            (s + m.average_triangle_size() as f64 * t as f64, n + t)
        });
        Self::from_triangle_size(if n == 0 { 0.1 } else { (sum / n as f64) as f32 })
    }

    /// The largest ratio of `distance_extension` and of `culling_dist` to `displacement_threshold`
    /// that [`RtcdParams::validate`] accepts.
    pub const MAX_LENGTH_RATIO: f32 = 1e6;

    /// The largest `max_it` [`RtcdParams::validate`] accepts (and [`RtcdParams::max_it_for`] gives).
    pub const MAX_IT_LIMIT: u32 = 1 << 16;

    /// IRTCD 2013 Eq. 1: `ceil(confidence * displacement_threshold / average_triangle_size)`, at least 1.
    pub fn max_it_for(confidence: f32, displacement_threshold: f32, average_triangle_size: f32) -> u32 {
        let v = (confidence * displacement_threshold / average_triangle_size).ceil();
        if v.is_finite() { (v as u32).clamp(1, Self::MAX_IT_LIMIT) } else { 1 }
    }

    /// Checks every field; the narrow phase refuses invalid parameters.
    pub fn validate(&self) -> Result<(), ParamsError> {
        // Normal (not subnormal) lengths: each pair's lengths are these scaled by a ratio to the
        // displacement threshold ([`RtcdParams::for_pair`]), which must stay finite.
        let positive = |name, value: f32| {
            if value.is_finite() && value >= f32::MIN_POSITIVE {
                Ok(())
            } else {
                Err(ParamsError { name, value, reason: "must be finite and > 0 (not subnormal)" })
            }
        };
        positive("displacement_threshold", self.displacement_threshold)?;
        positive("distance_extension", self.distance_extension)?;
        positive("culling_dist", self.culling_dist)?;
        if self.max_it == 0 || self.max_it > Self::MAX_IT_LIMIT {
            return Err(ParamsError {
                name: "max_it",
                value: self.max_it as f32,
                reason: "must be from 1 to 65,536 (IRTCD 2013 Eq. 1 gives a few; each ray walks at most this many triangles)",
            });
        }
        if self.distance_extension <= self.displacement_threshold {
            return Err(ParamsError {
                name: "distance_extension",
                value: self.distance_extension,
                reason: "must be greater than displacement_threshold (2014 §3.1)",
            });
        }
        // Each pair's lengths are its mean edge times these ratios: bounded, so that they stay finite.
        for (name, value) in
            [("distance_extension", self.distance_extension), ("culling_dist", self.culling_dist)]
        {
            if value / self.displacement_threshold > Self::MAX_LENGTH_RATIO {
                return Err(ParamsError {
                    name,
                    value,
                    reason: "must be at most 1e6 times displacement_threshold (each pair's is its mean edge times that ratio)",
                });
            }
        }
        if !(self.manifold_angle.is_finite() && (0.0..std::f32::consts::PI).contains(&self.manifold_angle)) {
            return Err(ParamsError {
                name: "manifold_angle",
                value: self.manifold_angle,
                reason: "must be in [0, π)",
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_follow_the_equations() {
        let p = RtcdParams::from_triangle_size(0.09);
        p.validate().unwrap();
        assert_eq!(p.max_it, RtcdParams::max_it_for(4.0, p.displacement_threshold, 0.09));
        assert!(p.distance_extension > p.displacement_threshold);
        assert!(
            (p.culling_dist - RtcdParams::DEFAULT_CULLING_CONFIDENCE * p.displacement_threshold).abs() < 1e-7
        );
    }

    /// A coarse thin plate takes the scale of its thickness, a fine blob of its edges; a pair the
    /// smaller of the two, with the ratios of the given lengths kept; `per_pair: false` keeps them.
    #[test]
    fn each_pair_takes_its_lengths_from_its_meshes() {
        use glam::Vec3;

        use crate::shapes;
        let mesh = |(v, i): shapes::MeshData| RtcdMesh::new("m", &v, &i).unwrap();
        let plate = mesh(shapes::cuboid(Vec3::new(5.0, 0.05, 5.0)));
        let blob = mesh(shapes::star_blob(0.5, 24, 14, 5, 0.3, 3));
        assert!(plate.average_triangle_size() > 5.0);
        // Its corners' rays cross it diagonally: √3 × 0.1 m, half of it.
        assert!(
            (0.05..=0.1).contains(&plate.length_scale()),
            "a 0.1 m thick plate: {}",
            plate.length_scale()
        );
        assert_eq!(blob.length_scale(), blob.average_triangle_size());
        let base = RtcdParams { culling_dist: 0.3, ..RtcdParams::from_triangle_size(0.2) };
        let p = base.for_pair(&blob, &plate);
        p.validate().unwrap();
        assert_eq!(p.displacement_threshold, blob.length_scale().min(plate.length_scale()));
        let edge = blob.average_triangle_size().min(plate.average_triangle_size());
        assert!((p.distance_extension / edge - 1.5).abs() < 1e-5);
        assert!((p.culling_dist / edge - 1.5).abs() < 1e-5);
        assert_eq!((p.max_it, p.tracer, p.prediction), (base.max_it, base.tracer, base.prediction));
        assert_eq!(p, base.for_pair(&plate, &blob));
        let fixed = RtcdParams { per_pair: false, ..base };
        assert_eq!(fixed.for_pair(&blob, &plate), fixed);
    }

    #[test]
    fn invalid_values_are_named() {
        let mut p = RtcdParams::from_triangle_size(0.1);
        p.distance_extension = p.displacement_threshold * 0.5;
        assert_eq!(p.validate().unwrap_err().name, "distance_extension");
        p = RtcdParams::from_triangle_size(0.1);
        p.culling_dist = f32::NAN;
        assert_eq!(p.validate().unwrap_err().name, "culling_dist");
        assert!(RtcdParams::from_triangle_size(f32::NAN).validate().is_ok());
        p = RtcdParams::from_triangle_size(0.1);
        p.max_it = u32::MAX;
        assert_eq!(p.validate().unwrap_err().name, "max_it");
        p.max_it = RtcdParams::MAX_IT_LIMIT;
        p.validate().unwrap();
        // A subnormal threshold would make each pair's lengths infinite.
        p = RtcdParams { displacement_threshold: 1e-40, ..RtcdParams::from_triangle_size(0.1) };
        assert_eq!(p.validate().unwrap_err().name, "displacement_threshold");
        // Normal lengths whose ratio would make a pair's extension infinite.
        let base = RtcdParams::from_triangle_size(0.1);
        p = RtcdParams { displacement_threshold: 1e-30, distance_extension: 1e10, ..base };
        assert_eq!(p.validate().unwrap_err().name, "distance_extension");
        p = RtcdParams { displacement_threshold: 1e-6, distance_extension: 0.5, culling_dist: 1e3, ..base };
        assert_eq!(p.validate().unwrap_err().name, "culling_dist");
        p.culling_dist = 0.5;
        p.validate().unwrap();
    }
}
