// Ray re-projection (2014 §3.2, Eq. 2): point = the vertex, depth = r·n, direction = n; in shape 1's
// frame with parry's conventions. Mirror of crates/rtcd/src/contact/reproject.rs.
#define_import_path rtcd::reproject

#import rtcd::math::quat_rotate

struct Reprojected {
    point_a: vec3<f32>,
    point_b: vec3<f32>,
    normal_a: vec3<f32>,
    dist: f32,
}

// `origin`, `d`, `n_tri` in the hit mesh's frame; `pose_q`/`pose_t`: shape 2's pose in shape 1's frame;
// `from_shape2`: the vertex belongs to shape 2 (the hit mesh is shape 1).
fn reproject(origin: vec3<f32>, d: vec3<f32>, t: f32, n_tri: vec3<f32>, pose_q: vec4<f32>, pose_t: vec4<f32>, from_shape2: bool, reprojection: bool) -> Reprojected {
    var sep = d;
    var depth = abs(t);
    if (reprojection) {
        sep = n_tri;
        depth = abs(t) * dot(d, n_tri);
    }
    let dist = select(depth, -depth, t >= 0.0);
    if (!from_shape2) {
        let sep_a = quat_rotate(pose_q, sep);
        let origin_a = quat_rotate(pose_q, origin) + pose_t.xyz;
        let normal = -sep_a;
        return Reprojected(origin_a, origin_a + normal * dist, normal, dist);
    }
    return Reprojected(origin - sep * dist, origin, sep, dist);
}
