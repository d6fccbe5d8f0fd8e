// Rigid transforms with quaternions (xyzw), as glam does.
#define_import_path rtcd::math

// The formula glam uses (Quat::mul_vec3), so both backends round alike.
fn quat_rotate(q: vec4<f32>, v: vec3<f32>) -> vec3<f32> {
    let b = q.xyz;
    let w = q.w;
    return v * (w * w - dot(b, b)) + b * (dot(v, b) * 2.0) + cross(b, v) * (w * 2.0);
}

fn transform_point(q: vec4<f32>, t: vec4<f32>, p: vec3<f32>) -> vec3<f32> {
    return quat_rotate(q, p) + t.xyz;
}

// Grid-launch helper: the linear invocation index of a 2D dispatch of 64-wide workgroups.
fn linear_index(wg: vec3<u32>, nwg: vec3<u32>, local: u32) -> u32 {
    return (wg.y * nwg.x + wg.x) * 64u + local;
}
