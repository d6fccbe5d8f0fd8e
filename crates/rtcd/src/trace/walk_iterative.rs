//! The iterative ray/triangle-mesh intersection of IRTCD 2013 Alg. 1, with the prediction handling of
//! the 2014 paper's Alg. 1 (lines 6-7).
//!
//! Start at the triangle the ray hit last step. Cast the ray on it: a hit ends the walk; a hit of the
//! opposite ray (the triangle is behind the vertex) ends it with a prediction; otherwise cross the
//! closest edge (2013 Alg. 2) to the adjacent triangle and repeat, at most `max_it` times (2013 Eq. 1)
//! so a ray trapped in a cavity (2013 Fig. 3) cannot loop forever.

use super::Hit;
use crate::{
    mesh::{NO_NEIGHBOR, RtcdMesh},
    ray::{Location, Ray, locate, ray_triangle_prepared},
};

/// How a walk ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum WalkOutcome {
    /// The ray hits this triangle (`t >= 0`).
    Hit(Hit),
    /// The opposite ray hits this triangle (`t < 0`): kept as a prediction candidate.
    Prediction(Hit),
    /// Not found within `max_it` steps, or the walk crossed a boundary edge, or the ray is parallel
    /// to a triangle on the way (discarded, 2013 §3.2).
    Miss,
}

/// A walk's outcome and the number of triangles it tested.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Walk {
    /// How it ended.
    pub outcome: WalkOutcome,
    /// Triangles tested (1 to `max_it`).
    pub steps: u32,
}

/// Walks `mesh` from triangle `start` along the line of `ray` (both in the mesh's frame).
pub fn walk(mesh: &RtcdMesh, ray: &Ray, start: u32, max_it: u32) -> Walk {
    let prepared = mesh.prepared_triangles();
    let mut tri = start;
    for step in 1..=max_it.max(1) {
        let Some(t) = prepared.get(tri as usize) else {
            return Walk { outcome: WalkOutcome::Miss, steps: step };
        };
        let Some(h) = ray_triangle_prepared(ray.origin, ray.dir, t) else {
            return Walk { outcome: WalkOutcome::Miss, steps: step };
        };
        match locate(&h) {
            Location::Hit => {
                return Walk { outcome: WalkOutcome::Hit(Hit::new(mesh, tri, h.t, ray.dir)), steps: step };
            }
            Location::Behind => {
                return Walk {
                    outcome: WalkOutcome::Prediction(Hit::new(mesh, tri, h.t, ray.dir)),
                    steps: step,
                };
            }
            Location::Edge(k) => {
                tri = mesh.neighbors()[tri as usize][k as usize];
                if tri == NO_NEIGHBOR {
                    return Walk { outcome: WalkOutcome::Miss, steps: step };
                }
            }
        }
    }
    Walk { outcome: WalkOutcome::Miss, steps: max_it.max(1) }
}
