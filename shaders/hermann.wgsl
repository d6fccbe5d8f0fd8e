// Hermann 2008 Alg. 1 validity and the 2014 paper's prediction culling.
// Mirror of the tests in crates/rtcd/src/detect/pair.rs.
#define_import_path rtcd::hermann

// A hit in front of the vertex is a contact when the ray hits the triangle from inside the other body
// (the triangle faces away from the ray) and before the ray leaves its own body.
fn contact_valid(d: vec3<f32>, n_tri: vec3<f32>, t: f32, exit_dist: f32) -> bool {
    return t >= 0.0 && dot(d, n_tri) > 0.0 && t <= exit_dist;
}

// A hit behind the vertex is kept as a prediction when the opposite ray hits the triangle's outside
// within culling_dist.
fn prediction_valid(d: vec3<f32>, n_tri: vec3<f32>, t: f32, culling_dist: f32) -> bool {
    return t < 0.0 && dot(d, n_tri) > 0.0 && -t <= culling_dist;
}
