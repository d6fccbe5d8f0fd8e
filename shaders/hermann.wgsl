// Hermann 2008 Alg. 1 validity and the 2014 paper's prediction culling.
// Mirror of the tests in crates/rtcd/src/detect/pair.rs.
#define_import_path rtcd::hermann

#import rtcd::types::{REACH_SOLID_BEHIND, REACH_CLOSED}

// A hit in front of the vertex is a contact when the ray hits the triangle from inside the other body
// (the triangle faces away from the ray) and before the ray leaves its own body (`limit`: ray_limit).
fn contact_valid(d: vec3<f32>, n_tri: vec3<f32>, t: f32, limit: f32) -> bool {
    return t >= 0.0 && dot(d, n_tri) > 0.0 && t <= limit;
}

// How far a vertex ray counts a back-face hit (rtcd::detect::ray_limit with rtcd::detect::vertex_reach):
// its exit distance, or the larger of it and the solid reach, the casting mesh's bounding-box diagonal
// (Vertex.n.w) plus the pair's culling_dist (rtcd::detect::solid_reach), into a solid-behind mesh (a level
// chunk: below a terrain a point is inside the solid however thin its body is), and into a closed mesh with
// the closed reach (MeshRef.solid_behind) where the casting body is thinner along the ray than
// culling_dist.
fn ray_limit(exit_dist: f32, mesh_size: f32, culling_dist: f32, solid_behind: u32) -> f32 {
    let closed = (solid_behind & REACH_CLOSED) != 0u;
    if ((solid_behind & REACH_SOLID_BEHIND) != 0u || (closed && exit_dist < culling_dist)) {
        return max(exit_dist, mesh_size + culling_dist);
    }
    return exit_dist;
}

// A hit behind the vertex is kept as a prediction when the opposite ray hits the triangle's outside
// within culling_dist.
fn prediction_valid(d: vec3<f32>, n_tri: vec3<f32>, t: f32, culling_dist: f32) -> bool {
    return t < 0.0 && dot(d, n_tri) > 0.0 && -t <= culling_dist;
}
