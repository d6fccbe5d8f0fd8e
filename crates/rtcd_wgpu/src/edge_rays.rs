//! Edge rays on the device (Mandarapu, James, Kulkarni, *Mochi*, 2024, §3.4, reduction 4): the
//! kernel `shaders/edge_rays.wgsl` traces each edge's line against the other mesh and makes its
//! crossing a contact, as `rtcd::detect::edge_crossing` does on the host, operation for operation.
//! [`GpuNarrowPhase::edge_crossings`](crate::GpuNarrowPhase::edge_crossings) runs a list of them in
//! one dispatch and waits for the results.

use std::time::Duration;

use glam::Vec3;
use rtcd::{
    BackendError, RtcdMesh, TracerKind,
    detect::{EdgeCrossing, EdgeTest},
};

use crate::{
    gpu_types::{EDGE_APART, EDGE_CROSSING, EDGE_TOUCHING, GpuEdgeOut, GpuEdgeTask, quat4, vec4},
    kernels::{Kernels, grid, untimed_pass},
    mesh_store::MeshStore,
    shaders::Kernel,
};

/// One edge ray: edge `edge` ([`RtcdMesh::edges`]) of `from` against `to`, `from_to` mapping
/// `from`'s frame into `to`'s (the arguments of `rtcd::detect::edge_crossing`).
#[derive(Clone, Copy, Debug)]
pub struct EdgeRay<'a> {
    /// The mesh whose edge is cast.
    pub from: &'a RtcdMesh,
    /// The mesh it is traced against.
    pub to: &'a RtcdMesh,
    /// `from`'s frame into `to`'s.
    pub from_to: rtcd::Pose,
    /// The edge, an index into `from.edges()`.
    pub edge: u32,
}

/// The device and what the kernel needs of the backend.
pub(crate) struct EdgeRayContext<'a> {
    pub device: &'a wgpu::Device,
    pub queue: &'a wgpu::Queue,
    pub kernels: &'a Kernels,
    pub meshes: &'a mut MeshStore,
    pub tracer: TracerKind,
    pub timeout: Duration,
}

/// Traces `rays` on the device, one thread each, and returns what each found, in order (the
/// meshes are made resident first, as a step does). An edge index out of its mesh is an error.
pub(crate) fn trace(cx: EdgeRayContext<'_>, rays: &[EdgeRay<'_>]) -> Result<Vec<EdgeTest>, BackendError> {
    if rays.is_empty() {
        return Ok(Vec::new());
    }
    let too_large = |e: crate::GpuError| BackendError::Device(e.to_string());
    let mut encoder =
        cx.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("rtcd:edge_rays") });
    let limits = cx.device.limits();
    let most = limits.max_buffer_size.min(limits.max_storage_buffer_binding_size);
    let biggest =
        rays.len() as u64 * std::mem::size_of::<GpuEdgeTask>().max(std::mem::size_of::<GpuEdgeOut>()) as u64;
    if biggest > most {
        return Err(BackendError::InvalidInput(format!(
            "{} edge rays in one call need a buffer of {biggest} bytes; the device binds at most {most}",
            rays.len()
        )));
    }
    // Every ray checked before any mesh is placed: placing one may grow the mesh store, whose old
    // contents the encoder then copies over, so the encoder must not be dropped after that.
    let mut ends = Vec::with_capacity(rays.len());
    for (k, r) in rays.iter().enumerate() {
        let Some(&[a, b]) = r.from.edges().get(r.edge as usize) else {
            return Err(BackendError::InvalidInput(format!(
                "edge ray {k}: edge {} of mesh `{}`, which has {} edges",
                r.edge,
                r.from.name(),
                r.from.edges().len()
            )));
        };
        ends.push([a, b]);
    }
    let mut tasks = Vec::with_capacity(rays.len());
    for (r, [a, b]) in rays.iter().zip(ends) {
        let placed = cx
            .meshes
            .ensure(cx.device, cx.queue, &mut encoder, r.from)
            .and_then(|(from, _)| Ok((from, cx.meshes.ensure(cx.device, cx.queue, &mut encoder, r.to)?.0)));
        let (from_mesh, to_mesh) = match placed {
            Ok(m) => m,
            Err(e) => {
                // The meshes placed so far keep their places: their copies are submitted.
                cx.queue.submit([encoder.finish()]);
                return Err(too_large(e));
            }
        };
        tasks.push(GpuEdgeTask {
            q: quat4(r.from_to.rotation),
            t: vec4(r.from_to.translation, 0.0),
            from_mesh,
            to_mesh,
            a,
            b,
            ..Default::default()
        });
    }
    let storage = |label: &'static str, bytes: u64, usage: wgpu::BufferUsages| {
        cx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: bytes,
            usage: wgpu::BufferUsages::STORAGE | usage,
            mapped_at_creation: false,
        })
    };
    let task_bytes = std::mem::size_of_val(tasks.as_slice()) as u64;
    let out_bytes = (rays.len() * std::mem::size_of::<GpuEdgeOut>()) as u64;
    let task_buf = storage("rtcd:buffer:edge_tasks", task_bytes, wgpu::BufferUsages::COPY_DST);
    let out_buf = storage("rtcd:buffer:edge_results", out_bytes, wgpu::BufferUsages::COPY_SRC);
    cx.queue.write_buffer(&task_buf, 0, bytemuck::cast_slice(&tasks));
    let pipe = cx.kernels.get(match cx.tracer {
        TracerKind::BruteForce => Kernel::EdgeRaysBrute,
        TracerKind::Bvh => Kernel::EdgeRaysBvh,
    });
    let bg = pipe.bind_group(
        cx.device,
        &[
            (0, cx.meshes.vertices.binding()),
            (1, cx.meshes.triangles.binding()),
            (2, cx.meshes.bvh.binding()),
            (17, task_buf.as_entire_binding()),
            (18, out_buf.as_entire_binding()),
        ],
    );
    untimed_pass(&mut encoder, pipe, &bg, grid(rays.len() as u32));
    cx.queue.submit([encoder.finish()]);
    let bytes = crate::readback::read_buffer(cx.device, cx.queue, &out_buf, out_bytes, cx.timeout)?;
    let outs: Vec<GpuEdgeOut> = bytemuck::pod_collect_to_vec(&bytes);
    rays.iter().zip(outs).map(|(r, o)| edge_test(r.edge, &o)).collect()
}

/// The host's form of a kernel's result for edge `edge`.
fn edge_test(edge: u32, o: &GpuEdgeOut) -> Result<EdgeTest, BackendError> {
    let v = |a: [f32; 4]| Vec3::new(a[0], a[1], a[2]);
    match o.kind {
        EDGE_APART => Ok(EdgeTest::Apart),
        EDGE_TOUCHING => Ok(EdgeTest::Touching),
        EDGE_CROSSING => {
            let exit = |k: usize, a: [f32; 4]| {
                (o.exit_triangles[k] != u32::MAX).then(|| (o.exit_triangles[k], v(a), a[3]))
            };
            Ok(EdgeTest::Crossing(EdgeCrossing {
                edge,
                triangle: o.triangle,
                point: v(o.point),
                normal: v(o.normal),
                depth: o.depth,
                through: (o.through != 0).then(|| [exit(0, o.exit_a), exit(1, o.exit_b), exit(2, o.exit_c)]),
            }))
        }
        k => Err(BackendError::Readback(format!("edge ray result of unknown kind {k}"))),
    }
}
