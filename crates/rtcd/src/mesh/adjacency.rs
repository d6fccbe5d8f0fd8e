//! Edge adjacency (IRTCD 2013 §3.1): for each triangle, the triangle across each of its three edges.

use super::clean::edge_map;

/// Marker for a boundary edge (no triangle on the other side): the iterative walk stops there.
pub const NO_NEIGHBOR: u32 = u32::MAX;

/// `neighbors[t][k]` is the triangle across edge `k` of `t` (edge `k` runs from corner `k` to corner
/// `(k + 1) % 3`), or [`NO_NEIGHBOR`]. Expects a manifold mesh (at most two triangles per edge).
pub fn build_adjacency(triangles: &[[u32; 3]]) -> Vec<[u32; 3]> {
    let edges = edge_map(triangles);
    let mut neighbors = vec![[NO_NEIGHBOR; 3]; triangles.len()];
    for list in edges.values() {
        if let [(t0, k0), (t1, k1)] = list[..] {
            neighbors[t0 as usize][k0 as usize] = t1;
            neighbors[t1 as usize][k1 as usize] = t0;
        }
    }
    neighbors
}
