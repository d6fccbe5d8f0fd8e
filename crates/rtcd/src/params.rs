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

    /// IRTCD 2013 Eq. 1: `ceil(confidence * displacement_threshold / average_triangle_size)`, at least 1.
    pub fn max_it_for(confidence: f32, displacement_threshold: f32, average_triangle_size: f32) -> u32 {
        let v = (confidence * displacement_threshold / average_triangle_size).ceil();
        if v.is_finite() { (v as u32).clamp(1, 1 << 16) } else { 1 }
    }

    /// Checks every field; the narrow phase refuses invalid parameters.
    pub fn validate(&self) -> Result<(), ParamsError> {
        let positive = |name, value: f32| {
            if value.is_finite() && value > 0.0 {
                Ok(())
            } else {
                Err(ParamsError { name, value, reason: "must be finite and > 0" })
            }
        };
        positive("displacement_threshold", self.displacement_threshold)?;
        positive("distance_extension", self.distance_extension)?;
        positive("culling_dist", self.culling_dist)?;
        if self.max_it == 0 {
            return Err(ParamsError { name: "max_it", value: 0.0, reason: "must be at least 1" });
        }
        if self.distance_extension <= self.displacement_threshold {
            return Err(ParamsError {
                name: "distance_extension",
                value: self.distance_extension,
                reason: "must be greater than displacement_threshold (2014 §3.1)",
            });
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

    #[test]
    fn invalid_values_are_named() {
        let mut p = RtcdParams::from_triangle_size(0.1);
        p.distance_extension = p.displacement_threshold * 0.5;
        assert_eq!(p.validate().unwrap_err().name, "distance_extension");
        p = RtcdParams::from_triangle_size(0.1);
        p.culling_dist = f32::NAN;
        assert_eq!(p.validate().unwrap_err().name, "culling_dist");
        assert!(RtcdParams::from_triangle_size(f32::NAN).validate().is_ok());
    }
}
