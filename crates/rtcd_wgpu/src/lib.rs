//! # rtcd_wgpu: the GPU backend of rtcd
//!
//! The ray-traced narrow phase of `rtcd` as WGSL compute kernels (`shaders/`, composed with
//! naga_oil imports) on wgpu, on a device it creates itself ([`create_device`]) or on any `wgpu`
//! device, such as Bevy's `RenderDevice`. Meshes are uploaded once and stay resident, and so are the
//! reach, solid-behind and candidate-region boxes of each pair of meshes, and each pair's bodies and
//! kind while it holds its slot; each step uploads one world pose per body and 5 flag bits per slot
//! (the tracer the host decided, the separation test, whether the device traces its motion paths),
//! and the device makes each pair's relative pose, candidate regions and ray layout (a prefix sum
//! over the slots' entry counts), and lays out and traces the motion rays' paths (an indirect
//! dispatch). Per-pair iterative state (each ray's last triangle or prediction, the reference pose,
//! the last pose its paths start from) stays in GPU buffers between steps, in a pair table whose slots are allocated
//! and freed as pairs enter and leave. Work layout: one thread per (pair direction, vertex) — or per
//! record for pairs traced iteratively — over a flattened ray list with per-pair offsets (IRTCD 2013
//! §3.5); a prefix-sum compaction packs contacts densely so readback grows with contacts (16 bytes
//! each: the ray that found it; the host makes the contact).
//!
//! [`GpuNarrowPhase`] has the same inputs and outputs as `rtcd::NarrowPhase` and implements
//! `rtcd::NarrowPhaseBackend`; `submit` / `collect` split a step for pipelined use.

mod bodies;
mod buffer;
pub mod device;
pub mod edge_rays;
mod error;
pub mod gpu_types;
mod kernels;
mod mesh_store;
mod narrow_phase;
pub mod pair_table;
pub mod readback;
pub mod scan;
pub mod shaders;

pub use device::{DeviceOptions, GpuDevice, create_device};
pub use error::GpuError;
pub use narrow_phase::{
    FIRST_READ_CONTACTS, GpuNarrowPhase, GpuOptions, HostPhases, KERNELS_FIRST_RUN, KernelTimings,
};
