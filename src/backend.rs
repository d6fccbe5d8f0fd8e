//! Starting the backend the settings ask for, with a warning and the CPU backend whenever the GPU
//! cannot be had (no adapter, missing features, a shader that fails to build).

use bevy::{
    prelude::*,
    render::renderer::{RenderAdapterInfo, RenderDevice, RenderQueue},
};
use rtcd::{NarrowPhase, NarrowPhaseBackend, RtcdParams};
use rtcd_wgpu::{DeviceOptions, GpuNarrowPhase, GpuOptions};

use crate::settings::{GpuMode, RtcdBackend, RtcdSettings};

/// The backend actually running, and why (shown in diagnostics and logs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ActiveBackend {
    /// CPU backend.
    Cpu,
    /// GPU backend inside the fixed tick, on the named adapter.
    GpuImmediate(String),
    /// GPU backend in the render world, on the named adapter.
    GpuPipelined(String),
}

impl std::fmt::Display for ActiveBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ActiveBackend::Cpu => write!(f, "cpu"),
            ActiveBackend::GpuImmediate(a) => write!(f, "gpu immediate ({a})"),
            ActiveBackend::GpuPipelined(a) => write!(f, "gpu pipelined ({a})"),
        }
    }
}

/// A wgpu device from Bevy's renderer when the app has one (its resources are also in the main
/// world), else a headless one the plugin creates.
pub(crate) fn gpu_device(world: &World) -> Result<(wgpu::Device, wgpu::Queue, wgpu::AdapterInfo), String> {
    if let (Some(device), Some(queue), Some(info)) = (
        world.get_resource::<RenderDevice>(),
        world.get_resource::<RenderQueue>(),
        world.get_resource::<RenderAdapterInfo>(),
    ) {
        let q: &wgpu::Queue = queue;
        let i: &wgpu::AdapterInfo = info;
        return Ok((device.wgpu_device().clone(), q.clone(), i.clone()));
    }
    let d = rtcd_wgpu::create_device(&DeviceOptions::default()).map_err(|e| e.to_string())?;
    Ok((d.device, d.queue, d.info))
}

/// What `Auto` resolves to: the GPU for a hardware adapter, the CPU otherwise.
pub(crate) fn resolve(settings: &RtcdSettings, world: &World, has_render_app: bool) -> RtcdBackend {
    match settings.backend {
        RtcdBackend::Auto => {
            let info = world
                .get_resource::<RenderAdapterInfo>()
                .map(|i| {
                    let i: &wgpu::AdapterInfo = i;
                    i.clone()
                })
                .or_else(|| rtcd_wgpu::create_device(&DeviceOptions::default()).ok().map(|d| d.info));
            match info {
                Some(i) if i.device_type != wgpu::DeviceType::Cpu => RtcdBackend::Gpu {
                    mode: if has_render_app { GpuMode::Pipelined } else { GpuMode::Immediate },
                },
                _ => RtcdBackend::Cpu,
            }
        }
        other => other,
    }
}

/// The immediate-mode (or CPU) backend for `params`.
pub(crate) fn make_backend(
    backend: RtcdBackend,
    settings: &RtcdSettings,
    params: RtcdParams,
    world: &World,
) -> (Box<dyn NarrowPhaseBackend>, ActiveBackend) {
    let cpu =
        || Box::new(NarrowPhase::new(params).expect("validated parameters")) as Box<dyn NarrowPhaseBackend>;
    match backend {
        RtcdBackend::Gpu { .. } => match gpu_device(world).and_then(|(device, queue, info)| {
            let options = GpuOptions { timeout: settings.gpu_timeout, ..Default::default() };
            GpuNarrowPhase::with_options(&device, &queue, params, options)
                .map(|g| (Box::new(g) as Box<dyn NarrowPhaseBackend>, info.name))
                .map_err(|e| e.to_string())
        }) {
            Ok((b, name)) => (b, ActiveBackend::GpuImmediate(name)),
            Err(e) => {
                warn!("rtcd: the GPU backend cannot start ({e}); using the CPU backend");
                (cpu(), ActiveBackend::Cpu)
            }
        },
        _ => (cpu(), ActiveBackend::Cpu),
    }
}
