// Exact contacts of mesh vertices with a box (rtcd::RtcdMesh::cuboid): inside the box, the face the
// vertex's inward ray leaves it through when the ray is still in its own body there, else the face of
// least penetration; outside, the face of least penetration. Its outward normal, and the signed
// distance to its plane. Mirror of crates/rtcd/src/detect/cuboid.rs and of box_vertex in
// crates/rtcd/src/detect/pair.rs.
#define_import_path rtcd::cuboid

#import rtcd::types::{MeshRef, TRIANGLES_PER_BOX_FACE, OUTCOME_CONTACT, OUTCOME_PREDICTION, OUTCOME_REJECTED, ENTRY_RECORD_ONLY}
#import rtcd::geometry::vertex_of

struct BoxFace {
    // The face's first triangle.
    triangle: u32,
    // Outward unit normal.
    normal: vec3<f32>,
    // Signed distance from the face's plane: negative inside the box.
    distance: f32,
}

// The box's half extents: every corner is at (±x, ±y, ±z).
fn box_half_extents(m: MeshRef) -> vec3<f32> {
    return abs(vertex_of(m, 0u).p.xyz);
}

// The axis where |p_i| - half_i is largest (the first on a tie), on the side of p's sign (positive
// for 0).
fn nearest_box_face(half: vec3<f32>, p: vec3<f32>) -> BoxFace {
    let s = abs(p) - half;
    var axis = 0u;
    var distance = s.x;
    if (s.y > distance) {
        axis = 1u;
        distance = s.y;
    }
    if (s.z > distance) {
        axis = 2u;
        distance = s.z;
    }
    let positive = p[axis] >= 0.0;
    let face = 2u * axis + select(0u, 1u, positive);
    return BoxFace(TRIANGLES_PER_BOX_FACE * face, box_face_normal(TRIANGLES_PER_BOX_FACE * face), distance);
}

// The face the ray from p (inside the box) along d leaves the box through (the first axis on a tie),
// with p's signed distance to its plane; its ray parameter in `t` (f32 max for a zero d).
struct BoxExit {
    face: BoxFace,
    t: f32,
}

fn box_exit_face(half: vec3<f32>, p: vec3<f32>, d: vec3<f32>) -> BoxExit {
    var best_t = 3.4028235e38;
    var best_axis = 3u;
    var best_positive = false;
    for (var axis = 0u; axis < 3u; axis++) {
        if (d[axis] != 0.0) {
            let positive = d[axis] > 0.0;
            let bound = select(-half[axis], half[axis], positive);
            let t = (bound - p[axis]) / d[axis];
            if (best_axis == 3u || t < best_t) {
                best_t = t;
                best_axis = axis;
                best_positive = positive;
            }
        }
    }
    if (best_axis == 3u) {
        return BoxExit(BoxFace(0u, vec3<f32>(0.0), 0.0), 3.4028235e38);
    }
    let face = 2u * best_axis + select(0u, 1u, best_positive);
    let normal = box_face_normal(TRIANGLES_PER_BOX_FACE * face);
    let distance = normal[best_axis] * p[best_axis] - half[best_axis];
    return BoxExit(BoxFace(TRIANGLES_PER_BOX_FACE * face, normal, distance), best_t);
}

// The face a vertex at p gets its contact with, d its unit inward ray and exit_dist how far that ray
// travels inside its own body: outside the box, the face of least penetration; inside, the face its
// ray leaves the box through when that is within exit_dist, else the face of least penetration.
fn box_vertex_face(half: vec3<f32>, p: vec3<f32>, d: vec3<f32>, exit_dist: f32) -> BoxFace {
    let nearest = nearest_box_face(half, p);
    if (nearest.distance > 0.0) {
        return nearest;
    }
    let exit = box_exit_face(half, p, d);
    if (exit.t <= exit_dist) {
        return exit.face;
    }
    return nearest;
}

// The outward normal of the face a box triangle lies on.
fn box_face_normal(triangle: u32) -> vec3<f32> {
    let face = triangle / TRIANGLES_PER_BOX_FACE;
    let axis = face / 2u;
    let sign = select(-1.0, 1.0, (face & 1u) == 1u);
    return vec3<f32>(select(0.0, sign, axis == 0u), select(0.0, sign, axis == 1u), select(0.0, sign, axis == 2u));
}

// EntryHit.kind of a vertex against a box (outcome, and ENTRY_RECORD_ONLY): inside the box a contact;
// outside within culling_dist, with prediction, a prediction, which makes a speculative contact only
// where a predictive ray would: its opposite ray meets the face's plane within culling_dist (dn: its
// inward ray · the face's normal).
fn box_outcome(distance: f32, dn: f32, prediction: bool, culling_dist: f32) -> u32 {
    if (distance <= 0.0) {
        return OUTCOME_CONTACT;
    }
    if (prediction && distance <= culling_dist) {
        let facing = dn > 0.0 && distance <= culling_dist * dn;
        return OUTCOME_PREDICTION | select(ENTRY_RECORD_ONLY, 0u, facing);
    }
    return OUTCOME_REJECTED;
}
