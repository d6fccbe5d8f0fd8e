//! Resident scene geometry: every mesh is uploaded once, on first use, into three shared storage
//! buffers (vertices, triangles with adjacency and normals, BVH nodes) at per-mesh offsets. Steps
//! upload only poses and pairs (the OpenCL tutorial's lesson: keep geometry on the device).

use glam::Vec3;
use rtcd::RtcdMesh;
use rustc_hash::FxHashMap;

use crate::{
    buffer::GrowBuffer,
    error::GpuError,
    gpu_types::{GpuBvhNode, GpuMeshRef, GpuTriangle, GpuVertex},
};

/// What the host keeps of a resident mesh to make contacts of the rays read back (the vertices and
/// their normals, the triangles' normals, whether it is a box).
pub(crate) struct HostMesh {
    pub positions: Vec<Vec3>,
    pub normals: Vec<Vec3>,
    pub triangle_normals: Vec<Vec3>,
    pub cuboid: bool,
}

pub(crate) struct MeshStore {
    /// Where each mesh lives on the GPU, and its [`HostMesh`]'s index.
    refs: FxHashMap<u64, (GpuMeshRef, u32)>,
    host: Vec<HostMesh>,
    pub vertices: GrowBuffer<GpuVertex>,
    pub triangles: GrowBuffer<GpuTriangle>,
    pub bvh: GrowBuffer<GpuBvhNode>,
    vertex_len: u64,
    triangle_len: u64,
    bvh_len: u64,
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
            vertex_len: 0,
            triangle_len: 0,
            bvh_len: 0,
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
        let r = GpuMeshRef {
            vertex_offset: self.vertex_len as u32,
            vertex_count: vertices.len() as u32,
            triangle_offset: self.triangle_len as u32,
            triangle_count: triangles.len() as u32,
            bvh_offset: self.bvh_len as u32,
            bvh_count: mesh.bvh().len() as u32,
            cuboid: u32::from(mesh.cuboid_half_extents().is_some()),
            solid_behind: u32::from(mesh.solid_behind()),
        };
        self.vertices.reserve(device, encoder, self.vertex_len + vertices.len() as u64, self.vertex_len)?;
        self.triangles.reserve(
            device,
            encoder,
            self.triangle_len + triangles.len() as u64,
            self.triangle_len,
        )?;
        self.bvh.reserve(device, encoder, self.bvh_len + mesh.bvh().len() as u64, self.bvh_len)?;
        self.uploaded += self.vertices.write(queue, self.vertex_len, &vertices)
            + self.triangles.write(queue, self.triangle_len, &triangles)
            + self.bvh.write(queue, self.bvh_len, mesh.bvh());
        self.vertex_len += vertices.len() as u64;
        self.triangle_len += triangles.len() as u64;
        self.bvh_len += mesh.bvh().len() as u64;
        let index = self.host.len() as u32;
        self.host.push(HostMesh {
            positions: mesh.positions().to_vec(),
            normals: mesh.normals().to_vec(),
            triangle_normals: mesh.triangle_normals().to_vec(),
            cuboid: mesh.cuboid_half_extents().is_some(),
        });
        self.refs.insert(mesh.id(), (r, index));
        Ok((r, index))
    }
}
