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

/// What `Auto` resolves to, with the reason (empty for a backend named in the settings): the GPU
/// for a hardware adapter, or a software one when [`RtcdSettings::allow_software_adapter`] is on;
/// the CPU otherwise.
pub(crate) fn resolve(settings: &RtcdSettings, world: &World, has_render_app: bool) -> (RtcdBackend, String) {
    if settings.backend != RtcdBackend::Auto {
        return (settings.backend, String::new());
    }
    let info = match world.get_resource::<RenderAdapterInfo>() {
        Some(i) => {
            let i: &wgpu::AdapterInfo = i;
            Ok(i.clone())
        }
        None => {
            rtcd_wgpu::create_device(&DeviceOptions::default()).map(|d| d.info).map_err(|e| e.to_string())
        }
    };
    let gpu = RtcdBackend::Gpu { mode: if has_render_app { GpuMode::Pipelined } else { GpuMode::Immediate } };
    match info {
        Err(e) => (RtcdBackend::Cpu, format!("auto: no usable GPU adapter ({e})")),
        Ok(i) if i.device_type != wgpu::DeviceType::Cpu => {
            (gpu, format!("auto: hardware adapter `{}`", i.name))
        }
        Ok(i) if settings.allow_software_adapter => (
            gpu,
            format!("auto: software adapter `{}`, allowed by RtcdSettings::allow_software_adapter", i.name),
        ),
        Ok(i) => (
            RtcdBackend::Cpu,
            format!(
                "auto: the only adapter, `{}`, is a software one, which the CPU backend outruns \
                 (RtcdSettings::allow_software_adapter lets Auto use it)",
                i.name
            ),
        ),
    }
}

/// The immediate-mode (or CPU) backend for `params`; with the reason the GPU backend asked for
/// could not start, when the CPU backend replaces it.
pub(crate) fn make_backend(
    backend: RtcdBackend,
    settings: &RtcdSettings,
    params: RtcdParams,
    world: &World,
) -> (Box<dyn NarrowPhaseBackend>, ActiveBackend, Option<String>) {
    let cpu =
        || Box::new(NarrowPhase::new(params).expect("validated parameters")) as Box<dyn NarrowPhaseBackend>;
    match backend {
        RtcdBackend::Gpu { .. } => match gpu_device(world).and_then(|(device, queue, info)| {
            let options = GpuOptions { timeout: settings.gpu_timeout, ..Default::default() };
            GpuNarrowPhase::with_options(&device, &queue, params, options)
                .map(|g| (Box::new(g) as Box<dyn NarrowPhaseBackend>, info.name))
                .map_err(|e| e.to_string())
        }) {
            Ok((b, name)) => (b, ActiveBackend::GpuImmediate(name), None),
            Err(e) => {
                warn!("rtcd: the GPU backend cannot start ({e}); using the CPU backend");
                (cpu(), ActiveBackend::Cpu, Some(format!("the GPU backend cannot start ({e})")))
            }
        },
        _ => (cpu(), ActiveBackend::Cpu, None),
    }
}
