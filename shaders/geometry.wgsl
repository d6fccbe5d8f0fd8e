// The resident scene geometry (uploaded once per mesh) and accessors.
#define_import_path rtcd::geometry

#import rtcd::types::{Vertex, Triangle, BvhNode, MeshRef}

@group(0) @binding(0) var<storage, read> vertices: array<Vertex>;
@group(0) @binding(1) var<storage, read> triangles: array<Triangle>;
@group(0) @binding(2) var<storage, read> bvh_nodes: array<BvhNode>;

fn vertex_of(m: MeshRef, i: u32) -> Vertex {
    return vertices[m.vertex_offset + i];
}

fn triangle_of(m: MeshRef, i: u32) -> Triangle {
    return triangles[m.triangle_offset + i];
}

fn corner(m: MeshRef, i: u32) -> vec3<f32> {
    return vertices[m.vertex_offset + i].p.xyz;
}
