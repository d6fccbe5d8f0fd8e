//! Compute pipelines of every kernel, with explicit bind group layouts (each lists exactly the
//! bindings its shader declares, with the same access).

use std::time::Duration;

use arrayvec::ArrayVec;
use rustc_hash::FxHashMap;

use crate::{
    buffer::Bound,
    error::GpuError,
    shaders::{self, Kernel},
};

#[derive(Clone, Copy)]
enum Access {
    Read,
    ReadWrite,
    Uniform,
}

fn bindings(kernel: Kernel) -> &'static [(u32, Access)] {
    use Access::*;
    match kernel {
        Kernel::PairLinks => &[(4, Uniform), (14, ReadWrite), (16, Read)],
        Kernel::PairAssemble => &[
            (3, ReadWrite),
            (4, Uniform),
            (5, Read),
            (9, ReadWrite),
            (12, Read),
            (13, Read),
            (14, Read),
            (15, Read),
            (22, Read),
            (29, ReadWrite),
            (31, ReadWrite),
            (32, ReadWrite),
            (33, ReadWrite),
        ],
        Kernel::PairLayout => &[(3, ReadWrite), (4, Uniform), (9, Read)],
        Kernel::PairBegin => &[(3, Read), (4, Uniform), (5, ReadWrite)],
        Kernel::TraceStandardBrute | Kernel::TraceStandardBvh => {
            &[(0, Read), (1, Read), (2, Read), (3, Read), (4, Uniform), (7, ReadWrite), (8, ReadWrite)]
        }
        Kernel::WalkIterative => &[
            (0, Read),
            (1, Read),
            (3, Read),
            (4, Uniform),
            (5, Read),
            (6, Read),
            (7, ReadWrite),
            (8, ReadWrite),
        ],
        Kernel::FlagEntries => {
            &[(0, Read), (1, Read), (3, Read), (4, Uniform), (7, ReadWrite), (9, ReadWrite), (27, ReadWrite)]
        }
        Kernel::ScanBlocks | Kernel::AddBlockSums => &[(0, ReadWrite), (1, ReadWrite), (2, Uniform)],
        Kernel::Compact => &[
            (3, Read),
            (4, Uniform),
            (7, Read),
            (8, ReadWrite),
            (9, Read),
            (10, ReadWrite),
            (11, ReadWrite),
            (19, Read),
            (20, Read),
            (21, Read),
            (22, ReadWrite),
            (27, Read),
            (28, ReadWrite),
        ],
        Kernel::PairEnd => &[
            (3, Read),
            (4, Uniform),
            (5, ReadWrite),
            (9, Read),
            (28, Read),
            (29, Read),
            (30, ReadWrite),
            (33, Read),
            (36, ReadWrite),
        ],
        Kernel::EdgeSelect => &[
            (0, Read),
            (3, Read),
            (4, Uniform),
            (5, Read),
            (6, Read),
            (7, ReadWrite),
            (8, ReadWrite),
            (19, Read),
            (20, Read),
            (21, Read),
            (22, Read),
            (23, ReadWrite),
        ],
        Kernel::EdgeStepBrute | Kernel::EdgeStepBvh => &[
            (0, Read),
            (1, Read),
            (2, Read),
            (3, Read),
            (4, Uniform),
            (5, Read),
            (7, ReadWrite),
            (8, ReadWrite),
            (19, Read),
            (23, Read),
        ],
        Kernel::EdgeRaysBrute | Kernel::EdgeRaysBvh => {
            &[(0, Read), (1, Read), (2, Read), (17, Read), (18, ReadWrite)]
        }
        Kernel::MotionArgs => &[(4, Uniform), (31, Read), (34, ReadWrite)],
        Kernel::MotionPathsBrute | Kernel::MotionPathsBvh => &[
            (0, Read),
            (1, Read),
            (2, Read),
            (3, Read),
            (4, Uniform),
            (8, ReadWrite),
            (31, Read),
            (32, Read),
            (33, ReadWrite),
            (35, ReadWrite),
            (37, Read),
        ],
    }
}

/// The most storage buffers one kernel binds: what a device must allow per shader stage
/// (`crate::device::required_limits`).
pub(crate) fn max_storage_bindings() -> u32 {
    Kernel::ALL
        .into_iter()
        .map(|k| bindings(k).iter().filter(|(_, a)| !matches!(a, Access::Uniform)).count() as u32)
        .max()
        .unwrap_or(0)
}

pub(crate) struct Pipeline {
    pub pipeline: wgpu::ComputePipeline,
    pub layout: wgpu::BindGroupLayout,
    pub kernel: Kernel,
}

impl Pipeline {
    /// A bind group from `(binding, resource)` pairs; they must match the kernel's layout.
    pub fn bind_group(
        &self,
        device: &wgpu::Device,
        resources: &[(u32, wgpu::BindingResource<'_>)],
    ) -> wgpu::BindGroup {
        let entries: Vec<wgpu::BindGroupEntry> = resources
            .iter()
            .map(|(b, r)| wgpu::BindGroupEntry { binding: *b, resource: r.clone() })
            .collect();
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(self.kernel.label()),
            layout: &self.layout,
            entries: &entries,
        })
    }
}

/// Most resources a kernel binds (`compact` binds 13).
const MAX_BINDINGS: usize = 16;

/// A bind group's kernel and what it binds: `(binding, allocation id)` in the order given (no
/// allocation per lookup).
type BindKey = (Kernel, ArrayVec<(u32, u64), MAX_BINDINGS>);

/// Bind groups kept from step to step: creating them is a good part of the host's work of encoding
/// a step. Each is keyed by its kernel and the allocations it binds ([`Bound::id`]), which are
/// never reused, so a buffer that grew gets a new bind group. [`BindCache::begin_step`] drops the
/// ones neither of the last two steps used (they hold replaced buffers alive; the records' two
/// buffers swap roles every step, so a kernel that binds one of them alternates between two).
#[derive(Default)]
pub(crate) struct BindCache {
    /// By kernel and `(binding, allocation id)` list: the bind group and the last step that used it.
    map: FxHashMap<BindKey, (wgpu::BindGroup, u64)>,
    step: u64,
    /// Bind groups made since the step began.
    made: u32,
}

impl BindCache {
    /// The bind group of `pipe` over `entries` (`(binding, resource)`, as [`Pipeline::bind_group`]
    /// takes them), made only when no kept one binds the same allocations. A cache serves the
    /// pipelines of one [`Kernels`] (its keys name kernels, not layouts).
    pub fn bind(
        &mut self,
        device: &wgpu::Device,
        pipe: &Pipeline,
        entries: &[(u32, Bound<'_>)],
    ) -> wgpu::BindGroup {
        let key: BindKey = (pipe.kernel, entries.iter().map(|(b, x)| (*b, x.id)).collect());
        let step = self.step;
        let made = &mut self.made;
        let kept = self.map.entry(key).or_insert_with(|| {
            *made += 1;
            let resources: Vec<(u32, wgpu::BindingResource)> =
                entries.iter().map(|(b, x)| (*b, x.resource.clone())).collect();
            (pipe.bind_group(device, &resources), step)
        });
        kept.1 = step;
        kept.0.clone()
    }

    /// Starts a step: keeps the bind groups the last two steps used, drops the others.
    pub fn begin_step(&mut self) {
        let last = self.step;
        self.map.retain(|_, (_, used)| *used + 1 >= last);
        self.step += 1;
        self.made = 0;
    }

    /// Bind groups made since the step began.
    pub fn made(&self) -> u32 {
        self.made
    }
}

pub(crate) struct Kernels {
    map: FxHashMap<Kernel, Pipeline>,
}

impl Kernels {
    /// Composes, compiles and links the kernels of a step ([`Kernel::in_step`]). Device errors are
    /// captured with an error scope.
    pub fn new(device: &wgpu::Device) -> Result<Self, GpuError> {
        let step: Vec<Kernel> = Kernel::ALL.into_iter().filter(|k| k.in_step()).collect();
        Self::with(device, &step)
    }

    /// Composes, compiles and links `kernels`.
    pub fn with(device: &wgpu::Device, kernels: &[Kernel]) -> Result<Self, GpuError> {
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let mut composer = shaders::composer()?;
        let mut map = FxHashMap::default();
        for &kernel in kernels {
            let module = shaders::shader_module(device, &mut composer, kernel)?;
            let entries: Vec<wgpu::BindGroupLayoutEntry> = bindings(kernel)
                .iter()
                .map(|&(binding, access)| wgpu::BindGroupLayoutEntry {
                    binding,
                    visibility: wgpu::ShaderStages::COMPUTE,
                    ty: match access {
                        Access::Uniform => wgpu::BindingType::Buffer {
                            ty: wgpu::BufferBindingType::Uniform,
                            has_dynamic_offset: false,
                            min_binding_size: None,
                        },
                        Access::Read | Access::ReadWrite => wgpu::BindingType::Buffer {
                            ty: wgpu::BufferBindingType::Storage {
                                read_only: matches!(access, Access::Read),
                            },
                            has_dynamic_offset: false,
                            min_binding_size: None,
                        },
                    },
                    count: None,
                })
                .collect();
            let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some(kernel.label()),
                entries: &entries,
            });
            let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some(kernel.label()),
                bind_group_layouts: &[Some(&layout)],
                immediate_size: 0,
            });
            let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(kernel.label()),
                layout: Some(&pipeline_layout),
                module: &module,
                entry_point: Some(kernel.entry_point()),
                compilation_options: Default::default(),
                cache: None,
            });
            map.insert(kernel, Pipeline { pipeline, layout, kernel });
        }
        if let Some(e) = futures_lite::future::block_on(scope.pop()) {
            return Err(GpuError::Shader { shader: "pipelines".into(), message: e.to_string() });
        }
        Ok(Self { map })
    }

    pub fn get(&self, kernel: Kernel) -> &Pipeline {
        &self.map[&kernel]
    }

    /// Runs every kernel once, on small zeroed buffers (no pair, no entry: each thread finds
    /// nothing to do), and waits at most `timeout` for them. Some drivers compile a pipeline on its
    /// first dispatch (Mesa's lavapipe, without a warm shader cache, takes tens of seconds for all of
    /// them on two cores): done here, the backend's steps are not held up by it.
    pub fn warm_up(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        timeout: Duration,
    ) -> Result<(), GpuError> {
        let mut encoder =
            device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("rtcd:warm_up") });
        // One buffer per binding: a buffer bound twice in a dispatch, once writable, is refused.
        let mut buffers = Vec::new();
        let mut kernels: Vec<&Pipeline> = self.map.values().collect();
        kernels.sort_by_key(|p| p.kernel.label());
        for pipe in kernels {
            let resources: Vec<(u32, wgpu::Buffer)> = bindings(pipe.kernel)
                .iter()
                .map(|&(binding, access)| {
                    let usage = match access {
                        Access::Uniform => wgpu::BufferUsages::UNIFORM,
                        Access::Read | Access::ReadWrite => wgpu::BufferUsages::STORAGE,
                    };
                    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
                        label: Some("rtcd:buffer:warm_up"),
                        size: WARM_UP_BYTES,
                        usage,
                        mapped_at_creation: false,
                    });
                    (binding, buffer)
                })
                .collect();
            let entries: Vec<(u32, wgpu::BindingResource)> =
                resources.iter().map(|(b, buf)| (*b, buf.as_entire_binding())).collect();
            let bg = pipe.bind_group(device, &entries);
            untimed_pass(&mut encoder, pipe, &bg, (1, 1));
            buffers.extend(resources.into_iter().map(|(_, b)| b));
        }
        let index = queue.submit([encoder.finish()]);
        device
            .poll(wgpu::PollType::Wait { submission_index: Some(index), timeout: Some(timeout) })
            .map_err(|e| GpuError::Device(format!("the kernels' first run: {e}")))?;
        drop(buffers);
        Ok(())
    }
}

/// Bytes of each zeroed buffer the kernels' first run binds: more than one element of any struct
/// they bind, and than any uniform block.
const WARM_UP_BYTES: u64 = 4096;

/// Workgroups for `n` invocations of 64-wide workgroups, as a 2D grid within the per-dimension limit.
pub(crate) fn grid(n: u32) -> (u32, u32) {
    let groups = n.div_ceil(64).max(1);
    let x = groups.min(65_535);
    (x, groups.div_ceil(x))
}

/// One compute pass of `pipe` over `groups` workgroups with bind group `bg`, without timestamps.
pub(crate) fn untimed_pass(
    encoder: &mut wgpu::CommandEncoder,
    pipe: &Pipeline,
    bg: &wgpu::BindGroup,
    groups: (u32, u32),
) {
    let mut cp = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
        label: Some(pipe.kernel.label()),
        timestamp_writes: None,
    });
    cp.set_pipeline(&pipe.pipeline);
    cp.set_bind_group(0, bg, &[]);
    cp.dispatch_workgroups(groups.0, groups.1, 1);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bind group's key holds every resource its kernel binds.
    #[test]
    fn every_kernel_binds_at_most_what_a_key_holds() {
        for kernel in Kernel::ALL {
            assert!(bindings(kernel).len() <= MAX_BINDINGS, "{kernel:?}: {}", bindings(kernel).len());
        }
    }
}
