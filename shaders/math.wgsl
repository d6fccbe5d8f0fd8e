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

// The Hamilton product a * b (first b, then a), in the order glam's SSE2 Quat::mul_quat adds its
// terms, so that a relative pose made here rounds as rtcd::Pose::inv_mul makes it on the host.
fn quat_mul(a: vec4<f32>, b: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(
        (a.w * b.x + a.x * b.w) + (a.y * b.z - a.z * b.y),
        (a.w * b.y - a.x * b.z) + (a.y * b.w + a.z * b.x),
        (a.w * b.z + a.x * b.y) + (a.z * b.w - a.y * b.x),
        (a.w * b.w - a.x * b.x) - (a.y * b.y + a.z * b.z),
    );
}

// The inverse of a rigid transform (rtcd::Pose::inverse): the conjugate rotation (glam's
// Quat::inverse of a unit quaternion), and the translation rotated back and negated.
fn inverse_q(q: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(-q.xyz, q.w);
}

fn inverse_t(q: vec4<f32>, t: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(-quat_rotate(inverse_q(q), t.xyz), 0.0);
}

// An axis-aligned box moved by a rigid transform, bounded again (rtcd::Aabb::transformed: the
// centre moved, the half extents through the absolute rotation matrix, glam's Mat3::from_quat); an
// empty box (some min above its max) is returned as it is.
struct Box {
    lo: vec3<f32>,
    hi: vec3<f32>,
}

fn box_transformed(b: Box, q: vec4<f32>, t: vec4<f32>) -> Box {
    if (any(b.lo > b.hi)) {
        return b;
    }
    let c = transform_point(q, t, (b.lo + b.hi) * 0.5);
    let h = (b.hi - b.lo) * 0.5;
    let x2 = q.x + q.x;
    let y2 = q.y + q.y;
    let z2 = q.z + q.z;
    let xx = q.x * x2;
    let xy = q.x * y2;
    let xz = q.x * z2;
    let yy = q.y * y2;
    let yz = q.y * z2;
    let zz = q.z * z2;
    let wx = q.w * x2;
    let wy = q.w * y2;
    let wz = q.w * z2;
    let x_axis = vec3<f32>(1.0 - (yy + zz), xy + wz, xz - wy);
    let y_axis = vec3<f32>(xy - wz, 1.0 - (xx + zz), yz + wx);
    let z_axis = vec3<f32>(xz + wy, yz - wx, 1.0 - (xx + yy));
    let r = abs(x_axis) * h.x + abs(y_axis) * h.y + abs(z_axis) * h.z;
    return Box(c - r, c + r);
}

// Grid-launch helper: the linear invocation index of a 2D dispatch of 64-wide workgroups.
fn linear_index(wg: vec3<u32>, nwg: vec3<u32>, local: u32) -> u32 {
    return (wg.y * nwg.x + wg.x) * 64u + local;
}
