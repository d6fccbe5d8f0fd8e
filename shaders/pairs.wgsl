// The step's pair list and constants, and the mapping from a flattened ray-list entry to its pair,
// direction and index (IRTCD 2013 §3.5's pair × vertex work layout, flattened with per-pair offsets).
#define_import_path rtcd::pairs

#import rtcd::types::{Pair, Params, MeshRef, REACH_SOLID_BEHIND}

@group(0) @binding(3) var<storage, read> pairs: array<Pair>;
@group(0) @binding(4) var<uniform> params: Params;

struct EntryRef {
    pair: u32,
    // 0: shape 1's vertices (or edges) against shape 2; 1: the reverse.
    dir: u32,
    // Vertex (standard pair) or record (iterative pair) index within the direction; for an edge ray,
    // its index among the direction's edge rays (edge_select.wgsl).
    index: u32,
    // An edge ray: a pair's entries are its vertex rays (direction 0, then 1), then its edge rays.
    edge: bool,
}

// The pair whose entry range holds `entry`: the last pair starting at or before it.
fn find_pair(entry: u32) -> u32 {
    var lo = 0u;
    var hi = params.pair_count - 1u;
    while (lo < hi) {
        let mid = (lo + hi + 1u) / 2u;
        if (pairs[mid].step.entry_offset <= entry) {
            lo = mid;
        } else {
            hi = mid - 1u;
        }
    }
    return lo;
}

fn entry_ref(entry: u32) -> EntryRef {
    let p = find_pair(entry);
    let s = pairs[p].step;
    var local = entry - s.entry_offset;
    if (local < s.entries_a) {
        return EntryRef(p, 0u, local, false);
    }
    local = local - s.entries_a;
    if (local < s.entries_b) {
        return EntryRef(p, 1u, local, false);
    }
    local = local - s.entries_b;
    if (local < s.edges_a) {
        return EntryRef(p, 0u, local, true);
    }
    return EntryRef(p, 1u, local - s.edges_a, true);
}

// Mesh casting the rays of direction `dir`, and the mesh they hit.
fn from_mesh(pair: Pair, dir: u32) -> MeshRef {
    if (dir == 0u) {
        return pair.statics.mesh_a;
    }
    return pair.statics.mesh_b;
}

fn to_mesh(pair: Pair, dir: u32) -> MeshRef {
    if (dir == 0u) {
        return pair.statics.mesh_b;
    }
    return pair.statics.mesh_a;
}

// The hit mesh's MeshRef.solid_behind bits for a ray of direction `dir` from `o` (in the hit mesh's
// frame): without REACH_SOLID_BEHIND outside the mesh's solid-behind box, where the vertex is not
// behind its surface and keeps its exit distance (rtcd::detect::solid_at).
fn reach_flags(pair: Pair, dir: u32, to: MeshRef, o: vec3<f32>) -> u32 {
    var lo = pair.statics.behind_b_min.xyz;
    var hi = pair.statics.behind_b_max.xyz;
    if (dir == 1u) {
        lo = pair.statics.behind_a_min.xyz;
        hi = pair.statics.behind_a_max.xyz;
    }
    if (all(o >= lo) && all(o <= hi)) {
        return to.solid_behind;
    }
    return to.solid_behind & ~REACH_SOLID_BEHIND;
}

// Rotation and translation mapping the casting mesh's frame into the hit mesh's frame.
fn from_to_q(pair: Pair, dir: u32) -> vec4<f32> {
    return select(pair.step.pose12_q, pair.frame.pose21_q, dir == 0u);
}

fn from_to_t(pair: Pair, dir: u32) -> vec4<f32> {
    return select(pair.step.pose12_t, pair.frame.pose21_t, dir == 0u);
}
