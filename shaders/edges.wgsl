// The edge rays (Mandarapu, James, Kulkarni, Mochi, 2024, §3.4, reduction 4): an edge's line traced
// against the other mesh, its crossing made a contact: the ridge of its entry and exit faces, or, for
// an edge right through the body, its ways out perpendicular to it. Brute force, or the stackless BVH
// with the TRACER_BVH shader def. Mirror of rtcd::detect::edge_crossing
// (crates/rtcd/src/detect/edge.rs), operation for operation.
#define_import_path rtcd::edges

#import rtcd::types::{NONE, MeshRef, EdgeOut, EDGE_APART, EDGE_TOUCHING, EDGE_CROSSING}
#import rtcd::math::transform_point
#import rtcd::geometry::{corner, triangle_of, bvh_nodes}
#import rtcd::trace_brute::{trace_brute, LineHits}
#import rtcd::trace_bvh::trace_bvh

// The first hit in front along a line (rtcd::trace::LineHits::forward): its triangle (NONE for none),
// distance, the triangle's outward normal, and whether the line leaves the mesh there.
struct Fwd {
    tri: u32,
    t: f32,
    n: vec3<f32>,
    from_inside: bool,
}

fn forward(to: MeshRef, o: vec3<f32>, d: vec3<f32>, len: f32) -> Fwd {
#ifdef TRACER_BVH
    let h = trace_bvh(to, o, d, 0.0, len);
#else
    let h = trace_brute(to, o, d, 0.0, len);
#endif
    if (h.fwd_tri == NONE) {
        return Fwd(NONE, 0.0, vec3<f32>(0.0), false);
    }
    let n = triangle_of(to, h.fwd_tri).n.xyz;
    return Fwd(h.fwd_tri, h.fwd_t, n, dot(d, n) > 0.0);
}

// The nearest hits behind and ahead of `o` along `d`, within `back` and `fwd`: for a line that has
// them both, whether the one behind is an exit (`d · n > 0`) and the one ahead an entry, with their
// triangles, signed distances and normals (rtcd::trace::LineHits).
struct Around {
    found: bool,
    back_tri: u32,
    back_t: f32,
    back_n: vec3<f32>,
    back_exit: bool,
    fwd_tri: u32,
    fwd_t: f32,
    fwd_n: vec3<f32>,
    fwd_exit: bool,
}

fn around(to: MeshRef, o: vec3<f32>, d: vec3<f32>, back: f32, fwd: f32) -> Around {
#ifdef TRACER_BVH
    let h = trace_bvh(to, o, d, back, fwd);
#else
    let h = trace_brute(to, o, d, back, fwd);
#endif
    let z = vec3<f32>(0.0);
    if (h.fwd_tri == NONE || h.back_tri == NONE) {
        return Around(false, NONE, 0.0, z, false, NONE, 0.0, z, false);
    }
    let nb = triangle_of(to, h.back_tri).n.xyz;
    let nf = triangle_of(to, h.fwd_tri).n.xyz;
    return Around(true, h.back_tri, -h.back_t, nb, dot(d, nb) > 0.0, h.fwd_tri, h.fwd_t, nf, dot(d, nf) > 0.0);
}

fn root_min(to: MeshRef) -> vec3<f32> {
    let r = bvh_nodes[to.bvh_offset];
    return vec3<f32>(r.min_x, r.min_y, r.min_z);
}

fn root_max(to: MeshRef) -> vec3<f32> {
    let r = bvh_nodes[to.bvh_offset];
    return vec3<f32>(r.max_x, r.max_y, r.max_z);
}

// glam's Vec3::any_orthonormal_vector (signum keeps the sign of -0.0).
fn any_orthonormal(v: vec3<f32>) -> vec3<f32> {
    let sign = select(1.0, -1.0, (bitcast<u32>(v.z) >> 31u) == 1u);
    let a = -1.0 / (sign + v.z);
    let b = v.x * v.y * a;
    return vec3<f32>(b, sign + v.y * v.y * a, -v.y);
}

// rtcd::detect::ridge_contact; `found` is false for None.
struct Ridge {
    found: bool,
    point: vec3<f32>,
    n: vec3<f32>,
    depth: f32,
}

fn ridge_contact(p0: vec3<f32>, e: vec3<f32>, t_in: f32, n_in: vec3<f32>, t_out: f32, n_out: vec3<f32>) -> Ridge {
    let none = Ridge(false, vec3<f32>(0.0), vec3<f32>(0.0), 0.0);
    let r = cross(n_in, n_out);
    let c = dot(n_in, n_out);
    if (dot(r, r) < 1e-6 || c < -0.98) {
        return none;
    }
    var n = cross(e, r);
    let n_len = length(n);
    if (n_len < 1e-3 * length(r)) {
        return none;
    }
    n = n / n_len;
    if (dot(n, n_in + n_out) < 0.0) {
        n = -n;
    }
    let p_in = p0 + e * t_in;
    let p_out = p0 + e * t_out;
    let d_out = dot(n_out, p_out - p_in);
    let det = 1.0 - c * c;
    let x = n_in * (-c * d_out / det) + n_out * (d_out / det);
    let q0 = p_in + x;
    let depth = dot(n, x);
    // !(depth > 0 && finite): NaN fails the first test; infinity the second.
    if (!(depth > 0.0) || depth > 3.4e38) {
        return none;
    }
    let r_unit = r / length(r);
    let er = dot(e, r_unit);
    let w0 = p_in - q0;
    let denom = 1.0 - er * er;
    var s = 0.0;
    if (denom > 1e-9) {
        s = (er * dot(r_unit, w0) - dot(e, w0)) / denom;
    }
    s = clamp(t_in + s, t_in, t_out);
    return Ridge(true, p0 + e * s, n, depth);
}

// One way out of a pass-through stretch (rtcd::detect::edge's through_exits): triangle NONE for none.
struct Exit {
    tri: u32,
    n: vec3<f32>,
    depth: f32,
}

fn exit_along(to: MeshRef, mid: vec3<f32>, d: vec3<f32>, reach: f32, p_in: vec3<f32>, p_out: vec3<f32>) -> Exit {
    let none = Exit(NONE, vec3<f32>(0.0), 0.0);
    let h = forward(to, mid, d, reach);
    if (h.tri == NONE) {
        return none;
    }
    let q = mid + d * h.t;
    // f32::MIN folded with max over the stretch's ends and middle, in that order.
    var depth = -3.4028235e38;
    depth = max(depth, dot(h.n, q - p_in));
    depth = max(depth, dot(h.n, q - p_out));
    depth = max(depth, dot(h.n, q - mid));
    if (!(h.from_inside && depth > 0.0)) {
        return none;
    }
    return Exit(h.tri, h.n, depth);
}

// Whether exit x sorts after exit y (found ones by depth, total order; none last).
fn after(x: Exit, y: Exit) -> bool {
    if (x.tri == NONE) {
        return y.tri != NONE;
    }
    if (y.tri == NONE) {
        return false;
    }
    return x.depth > y.depth;
}

fn result_of(kind: u32) -> EdgeOut {
    let z = vec4<f32>(0.0);
    return EdgeOut(kind, NONE, 0.0, 0u, z, z, vec4<u32>(NONE), z, z, z);
}

// Edge (end_a, end_b) of `src` against `to`; (q, t) maps `src`'s frame into `to`'s.
fn edge_crossing(src: MeshRef, to: MeshRef, q: vec4<f32>, t: vec4<f32>, end_a: u32, end_b: u32) -> EdgeOut {
    let p0 = transform_point(q, t, corner(src, end_a));
    let p1 = transform_point(q, t, corner(src, end_b));
    // beside_box: the segment wholly beside the mesh's box.
    let bmin = root_min(to);
    let bmax = root_max(to);
    let ext = bmax - bmin;
    let margin = vec3<f32>(1e-5 * max(max(ext.x, ext.y), ext.z));
    if (any(min(p0, p1) > bmax + margin) || any(max(p0, p1) < bmin - margin)) {
        return result_of(EDGE_APART);
    }
    let dv = p1 - p0;
    let len = length(dv);
    if (!(len > 0.0) || len > 3.4e38) {
        return result_of(EDGE_APART);
    }
    let e = dv / len;
    let h_in = forward(to, p0, e, len);
    if (h_in.tri == NONE) {
        return result_of(EDGE_APART);
    }
    if (h_in.from_inside) {
        return result_of(EDGE_TOUCHING);
    }
    let h_out = forward(to, p1, -e, len);
    if (h_out.tri == NONE) {
        return result_of(EDGE_TOUCHING);
    }
    let t_out = len - h_out.t;
    if (h_out.from_inside || t_out <= h_in.t) {
        return result_of(EDGE_TOUCHING);
    }
    // A line inside a body that is not convex in several stretches (rtcd::detect::edge's
    // traced_crossing): the middle of the first entry and the last exit is then outside; the first
    // and the last stretch are each a crossing, and the deeper is the edge's.
    let t_mid = 0.5 * (h_in.t + t_out);
    let half = 0.5 * (t_out - h_in.t);
    let ar = around(to, p0 + e * t_mid, e, half, half);
    if (ar.found && ar.back_exit && !ar.fwd_exit) {
        let first = stretch_crossing(to, ext, p0, e, len, h_in.t, h_in.tri, h_in.n, t_mid + ar.back_t, ar.back_n);
        let last = stretch_crossing(to, ext, p0, e, len, t_mid + ar.fwd_t, ar.fwd_tri, ar.fwd_n, t_out, h_out.n);
        return deeper(first, last);
    }
    return stretch_crossing(to, ext, p0, e, len, h_in.t, h_in.tri, h_in.n, t_out, h_out.n);
}

// Of two tests of one edge, the crossing, or the deeper of two (the first where equally deep).
fn deeper(x: EdgeOut, y: EdgeOut) -> EdgeOut {
    if (x.kind == EDGE_CROSSING && y.kind == EDGE_CROSSING) {
        if (y.depth > x.depth) {
            return y;
        }
        return x;
    }
    if (x.kind == EDGE_CROSSING) {
        return x;
    }
    if (y.kind == EDGE_CROSSING) {
        return y;
    }
    return result_of(EDGE_TOUCHING);
}

// The crossing of the stretch of the line p0 + s e inside `to` from t_in (entering through
// triangle tri_in, normal n_in) to t_out (leaving through a face of normal n_out): the ridge of the
// two faces, or the ways out as through a slab (rtcd::detect::edge's stretch_crossing). `ext` is
// the extent of `to`'s box.
fn stretch_crossing(to: MeshRef, ext: vec3<f32>, p0: vec3<f32>, e: vec3<f32>, len: f32, t_in: f32, tri_in: u32,
                    n_in: vec3<f32>, t_out: f32, n_out: vec3<f32>) -> EdgeOut {
    let ridge = ridge_contact(p0, e, t_in, n_in, t_out, n_out);
    if (ridge.found) {
        let check = forward(to, ridge.point, ridge.n, 2.0 * ridge.depth + len);
        if (check.tri != NONE && check.from_inside
            && abs(check.t - ridge.depth) <= 0.1 * ridge.depth + 1e-6 * len) {
            var out = result_of(EDGE_CROSSING);
            out.triangle = tri_in;
            out.depth = ridge.depth;
            out.point = vec4<f32>(ridge.point, 0.0);
            out.normal = vec4<f32>(ridge.n, 0.0);
            return out;
        }
    }
    // No ridge where the faces meet: the ways out of the stretch inside, as through a slab.
    let p_in = p0 + e * t_in;
    let p_out = p0 + e * t_out;
    let mid = 0.5 * (p_in + p_out);
    var a = n_in - e * dot(n_in, e);
    if (dot(a, a) > 1e-8) {
        a = normalize(a);
    } else {
        a = any_orthonormal(e);
    }
    let b = cross(e, a);
    let reach = length(ext);
    var x = array<Exit, 4>(
        exit_along(to, mid, a, reach, p_in, p_out),
        exit_along(to, mid, -a, reach, p_in, p_out),
        exit_along(to, mid, b, reach, p_in, p_out),
        exit_along(to, mid, -b, reach, p_in, p_out),
    );
    // A stable insertion sort, as the host's sort_by.
    for (var i = 1; i < 4; i++) {
        let k = x[i];
        var j = i;
        while (j > 0 && after(x[j - 1], k)) {
            x[j] = x[j - 1];
            j--;
        }
        x[j] = k;
    }
    if (x[0].tri == NONE) {
        return result_of(EDGE_TOUCHING);
    }
    var out = result_of(EDGE_CROSSING);
    out.triangle = x[0].tri;
    out.depth = x[0].depth;
    out.through = 1u;
    out.point = vec4<f32>(0.5 * (p_in + p_out), 0.0);
    out.normal = vec4<f32>(x[0].n, 0.0);
    out.exit_triangles = vec4<u32>(x[1].tri, x[2].tri, x[3].tri, NONE);
    out.exit_a = vec4<f32>(x[1].n, x[1].depth);
    out.exit_b = vec4<f32>(x[2].n, x[2].depth);
    out.exit_c = vec4<f32>(x[3].n, x[3].depth);
    return out;
}

