//! Resident scene geometry: every mesh is uploaded once, on first use, into shared storage buffers
//! (vertices, triangles with adjacency and normals, BVH nodes; the edges and each vertex's edges, for
//! the edge rays) at per-mesh offsets. Steps upload only poses and pairs (the OpenCL tutorial's
//! lesson: keep geometry on the device).

use rtcd::RtcdMesh;
use rustc_hash::FxHashMap;

use crate::{
    buffer::GrowBuffer,
    error::GpuError,
    gpu_types::{GpuBvhNode, GpuMeshRef, GpuTriangle, GpuVertex},
};

/// What the host keeps of a resident mesh: the mesh itself, to make contacts of the rays read back
/// (the vertices and their normals, the triangles' normals) and to trace the crossing edges again.
pub(crate) struct HostMesh {
    pub mesh: RtcdMesh,
    /// Whether it is a box ([`RtcdMesh::cuboid`]).
    pub cuboid: bool,
}

pub(crate) struct MeshStore {
    /// Where each mesh lives on the GPU, and its [`HostMesh`]'s index.
    refs: FxHashMap<u64, (GpuMeshRef, u32)>,
    host: Vec<HostMesh>,
    pub vertices: GrowBuffer<GpuVertex>,
    pub triangles: GrowBuffer<GpuTriangle>,
    pub bvh: GrowBuffer<GpuBvhNode>,
    /// Every mesh's edges (`[a, b]`, its own vertex indices).
    pub edges: GrowBuffer<[u32; 2]>,
    /// Each mesh's `vertex_count + 1` offsets into `vertex_edge_list`.
    pub vertex_edge_offsets: GrowBuffer<u32>,
    /// Each vertex's edges (its mesh's edge indices).
    pub vertex_edge_list: GrowBuffer<u32>,
    /// Each vertex's rim motion ([`RtcdMesh::rim_motions`]; `f32::MAX` for none), by vertex like
    /// `vertices`.
    pub rim_motions: GrowBuffer<f32>,
    vertex_len: u64,
    triangle_len: u64,
    bvh_len: u64,
    edge_len: u64,
    vertex_edge_offset_len: u64,
    vertex_edge_list_len: u64,
    /// Bytes written by uploads since the last [`MeshStore::take_uploaded`].
    uploaded: u64,
}

impl MeshStore {
    pub fn new(device: &wgpu::Device) -> Self {
        let usage = wgpu::BufferUsages::STORAGE;
        Self {
            refs: FxHashMap::default(),
            host: Vec::new(),
            vertices: GrowBuffer::new(device, "rtcd:buffer:vertices", usage, 4096),
            triangles: GrowBuffer::new(device, "rtcd:buffer:triangles", usage, 8192),
            bvh: GrowBuffer::new(device, "rtcd:buffer:bvh", usage, 4096),
            edges: GrowBuffer::new(device, "rtcd:buffer:edges", usage, 4096),
            vertex_edge_offsets: GrowBuffer::new(device, "rtcd:buffer:vertex_edge_offsets", usage, 4096),
            vertex_edge_list: GrowBuffer::new(device, "rtcd:buffer:vertex_edge_list", usage, 8192),
            rim_motions: GrowBuffer::new(device, "rtcd:buffer:rim_motions", usage, 4096),
            vertex_len: 0,
            triangle_len: 0,
            bvh_len: 0,
            edge_len: 0,
            vertex_edge_offset_len: 0,
            vertex_edge_list_len: 0,
            uploaded: 0,
        }
    }

    /// Number of meshes resident.
    pub fn len(&self) -> usize {
        self.refs.len()
    }

    /// Bytes uploaded since the last call (meshes seen for the first time), and starts counting
    /// again.
    pub fn take_uploaded(&mut self) -> u64 {
        std::mem::take(&mut self.uploaded)
    }

    /// The host's copy of a resident mesh, by the index [`MeshStore::ensure`] gave.
    pub fn host(&self, index: u32) -> &HostMesh {
        &self.host[index as usize]
    }

    /// Where `mesh` lives on the GPU, and its host copy's index, if it is resident.
    pub fn get(&self, mesh: &RtcdMesh) -> Option<(GpuMeshRef, u32)> {
        self.refs.get(&mesh.id()).copied()
    }

    /// Where `mesh` lives on the GPU, and its host copy's index, uploading it first if needed.
    pub fn ensure(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        mesh: &RtcdMesh,
    ) -> Result<(GpuMeshRef, u32), GpuError> {
        if let Some(r) = self.refs.get(&mesh.id()) {
            return Ok(*r);
        }
        // The mesh's size, as `rtcd::detect::solid_reach` takes it.
        let size = mesh.aabb().extents().length();
        let vertices: Vec<GpuVertex> = mesh
            .positions()
            .iter()
            .zip(mesh.normals())
            .zip(mesh.exit_distances())
            .map(|((p, n), e)| GpuVertex { p: [p.x, p.y, p.z, *e], n: [n.x, n.y, n.z, size] })
            .collect();
        // No infinity on the device: the largest finite value stands for none.
        let rim_motions: Vec<f32> = mesh.rim_motions().iter().map(|r| r.min(f32::MAX)).collect();
        let triangles: Vec<GpuTriangle> = mesh
            .triangles()
            .iter()
            .zip(mesh.neighbors())
            .zip(mesh.triangle_normals())
            .map(|((t, a), n)| GpuTriangle {
                v: [t[0], t[1], t[2], 0],
                adj: [a[0], a[1], a[2], 0],
                n: [n.x, n.y, n.z, 0.0],
            })
            .collect();
        // Each vertex's edges, flattened, with absolute offsets into the shared list.
        let mut vertex_edge_offsets = Vec::with_capacity(mesh.positions().len() + 1);
        let mut vertex_edge_list = Vec::new();
        for v in 0..mesh.positions().len() as u32 {
            vertex_edge_offsets.push((self.vertex_edge_list_len + vertex_edge_list.len() as u64) as u32);
            vertex_edge_list.extend_from_slice(mesh.vertex_edges(v));
        }
        vertex_edge_offsets.push((self.vertex_edge_list_len + vertex_edge_list.len() as u64) as u32);
        let r = GpuMeshRef {
            vertex_offset: self.vertex_len as u32,
            vertex_count: vertices.len() as u32,
            triangle_offset: self.triangle_len as u32,
            triangle_count: triangles.len() as u32,
            bvh_offset: self.bvh_len as u32,
            bvh_count: mesh.bvh().len() as u32,
            cuboid: u32::from(mesh.cuboid_half_extents().is_some()),
            solid_behind: u32::from(mesh.solid_behind()),
            edge_offset: self.edge_len as u32,
            edge_count: mesh.edges().len() as u32,
            strong_edges: mesh.predicting_edges(),
            vertex_edge_offset: self.vertex_edge_offset_len as u32,
        };
        self.vertices.reserve(device, encoder, self.vertex_len + vertices.len() as u64, self.vertex_len)?;
        self.rim_motions.reserve(
            device,
            encoder,
            self.vertex_len + vertices.len() as u64,
            self.vertex_len,
        )?;
        self.triangles.reserve(
            device,
            encoder,
            self.triangle_len + triangles.len() as u64,
            self.triangle_len,
        )?;
        self.bvh.reserve(device, encoder, self.bvh_len + mesh.bvh().len() as u64, self.bvh_len)?;
        self.edges.reserve(device, encoder, self.edge_len + mesh.edges().len() as u64, self.edge_len)?;
        self.vertex_edge_offsets.reserve(
            device,
            encoder,
            self.vertex_edge_offset_len + vertex_edge_offsets.len() as u64,
            self.vertex_edge_offset_len,
        )?;
        self.vertex_edge_list.reserve(
            device,
            encoder,
            self.vertex_edge_list_len + vertex_edge_list.len() as u64,
            self.vertex_edge_list_len,
        )?;
        self.uploaded += self.vertices.write(queue, self.vertex_len, &vertices)
            + self.rim_motions.write(queue, self.vertex_len, &rim_motions)
            + self.triangles.write(queue, self.triangle_len, &triangles)
            + self.bvh.write(queue, self.bvh_len, mesh.bvh())
            + self.edges.write(queue, self.edge_len, mesh.edges())
            + self.vertex_edge_offsets.write(queue, self.vertex_edge_offset_len, &vertex_edge_offsets)
            + self.vertex_edge_list.write(queue, self.vertex_edge_list_len, &vertex_edge_list);
        self.vertex_len += vertices.len() as u64;
        self.triangle_len += triangles.len() as u64;
        self.bvh_len += mesh.bvh().len() as u64;
        self.edge_len += mesh.edges().len() as u64;
        self.vertex_edge_offset_len += vertex_edge_offsets.len() as u64;
        self.vertex_edge_list_len += vertex_edge_list.len() as u64;
        let index = self.host.len() as u32;
        self.host.push(HostMesh { mesh: mesh.clone(), cuboid: mesh.cuboid_half_extents().is_some() });
        self.refs.insert(mesh.id(), (r, index));
        Ok((r, index))
    }
}
