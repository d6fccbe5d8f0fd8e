// The meshes' edges and each vertex's edges, resident beside the geometry (mesh_store.rs), for the
// edge rays of a step (edge_select.wgsl, edge_step.wgsl, pair_assemble.wgsl).
#define_import_path rtcd::edge_geometry

#import rtcd::types::MeshRef

@group(0) @binding(19) var<storage, read> edges: array<vec2<u32>>;
@group(0) @binding(20) var<storage, read> vertex_edge_offsets: array<u32>;
@group(0) @binding(21) var<storage, read> vertex_edge_list: array<u32>;

// Edge k of the mesh: its two vertices.
fn edge_of(m: MeshRef, k: u32) -> vec2<u32> {
    return edges[m.edge_offset + k];
}

// Where vertex v's edges are in vertex_edge_list: [x, y).
fn vertex_edge_range(m: MeshRef, v: u32) -> vec2<u32> {
    return vec2<u32>(vertex_edge_offsets[m.vertex_edge_offset + v], vertex_edge_offsets[m.vertex_edge_offset + v + 1u]);
}

// How many edges end at vertex v.
fn vertex_degree(m: MeshRef, v: u32) -> u32 {
    let r = vertex_edge_range(m, v);
    return r.y - r.x;
}
