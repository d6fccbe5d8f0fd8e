//! Creating a headless device, and checking that a device can run the kernels.

use std::sync::{
    Arc,
    atomic::{AtomicBool, Ordering},
};

use crate::error::GpuError;

/// Limits the kernels need (everything else is checked per step against the device's limits).
pub fn required_limits() -> wgpu::Limits {
    wgpu::Limits {
        max_storage_buffers_per_shader_stage: crate::kernels::max_storage_bindings(),
        max_compute_workgroup_size_x: 256,
        max_compute_invocations_per_workgroup: 256,
        max_compute_workgroup_storage_size: 1024,
        ..wgpu::Limits::downlevel_defaults()
    }
}

/// Lists what `limits`/`downlevel` lack for the kernels; empty when the device can run them.
pub fn missing_requirements(
    limits: &wgpu::Limits,
    downlevel: Option<&wgpu::DownlevelCapabilities>,
) -> Vec<String> {
    let need = required_limits();
    let mut missing = Vec::new();
    let mut check = |name: &str, have: u64, want: u64| {
        if have < want {
            missing.push(format!("limit {name} >= {want} (has {have})"));
        }
    };
    check(
        "max_storage_buffers_per_shader_stage",
        limits.max_storage_buffers_per_shader_stage as u64,
        need.max_storage_buffers_per_shader_stage as u64,
    );
    check(
        "max_compute_workgroup_size_x",
        limits.max_compute_workgroup_size_x as u64,
        need.max_compute_workgroup_size_x as u64,
    );
    check(
        "max_compute_invocations_per_workgroup",
        limits.max_compute_invocations_per_workgroup as u64,
        need.max_compute_invocations_per_workgroup as u64,
    );
    check(
        "max_compute_workgroup_storage_size",
        limits.max_compute_workgroup_storage_size as u64,
        need.max_compute_workgroup_storage_size as u64,
    );
    check("max_bind_groups", limits.max_bind_groups as u64, 1);
    if let Some(d) = downlevel
        && !d.flags.contains(wgpu::DownlevelFlags::COMPUTE_SHADERS)
    {
        missing.push("downlevel flag COMPUTE_SHADERS".into());
    }
    // The motion paths are launched with an indirect dispatch.
    if let Some(d) = downlevel
        && !d.flags.contains(wgpu::DownlevelFlags::INDIRECT_EXECUTION)
    {
        missing.push("downlevel flag INDIRECT_EXECUTION".into());
    }
    missing
}

/// A device created by [`create_device`], with the adapter's name.
pub struct GpuDevice {
    /// The device.
    pub device: wgpu::Device,
    /// Its queue.
    pub queue: wgpu::Queue,
    /// The adapter it runs on.
    pub info: wgpu::AdapterInfo,
    /// Set when the device reports itself lost.
    pub lost: Arc<AtomicBool>,
}

/// Options of [`create_device`].
#[derive(Clone, Debug)]
pub struct DeviceOptions {
    /// Backends to search (default: all native ones; `WGPU_BACKEND` overrides).
    pub backends: wgpu::Backends,
    /// Power preference.
    pub power_preference: wgpu::PowerPreference,
}

impl Default for DeviceOptions {
    fn default() -> Self {
        Self {
            backends: wgpu::Backends::from_env().unwrap_or(wgpu::Backends::PRIMARY),
            power_preference: wgpu::PowerPreference::HighPerformance,
        }
    }
}

/// Creates a headless device for the GPU backend (timestamp queries when the adapter has them).
pub fn create_device(options: &DeviceOptions) -> Result<GpuDevice, GpuError> {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends: options.backends,
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    });
    let adapter = futures_lite::future::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
        power_preference: options.power_preference,
        force_fallback_adapter: false,
        compatible_surface: None,
    }))
    .map_err(|e| GpuError::NoAdapter(e.to_string()))?;
    let info = adapter.get_info();
    let limits = adapter.limits();
    let missing = missing_requirements(&limits, Some(&adapter.get_downlevel_capabilities()));
    if !missing.is_empty() {
        return Err(GpuError::Unsupported { adapter: info.name.clone(), missing });
    }
    let features = adapter.features() & wgpu::Features::TIMESTAMP_QUERY;
    let (device, queue) = futures_lite::future::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("rtcd"),
        required_features: features,
        required_limits: limits,
        ..Default::default()
    }))
    .map_err(|e| GpuError::Device(e.to_string()))?;
    let lost = Arc::new(AtomicBool::new(false));
    let flag = lost.clone();
    device.set_device_lost_callback(move |reason, message| {
        log::error!("rtcd: GPU device lost ({reason:?}): {message}");
        flag.store(true, Ordering::SeqCst);
    });
    // Errors outside our error scopes must not abort the process: record them; the next step fails.
    device.on_uncaptured_error(Arc::new(|e| log::error!("rtcd: uncaptured GPU error: {e}")));
    Ok(GpuDevice { device, queue, info, lost })
}
