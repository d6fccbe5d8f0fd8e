//! The compaction's exclusive prefix sum (`shaders/scan.wgsl`): blocks of 1024 elements scanned in
//! place, their totals scanned the same way one level up (at most three levels: 2^30 elements), and
//! each block's offset added back on the way down.

use crate::{
    buffer::{Bound, FixedBuffer, GrowBuffer},
    error::GpuError,
    gpu_types::GpuScanParams,
    kernels::{BindCache, Kernels, Pipeline, untimed_pass},
    shaders::Kernel,
};

/// Elements one workgroup scans.
pub const BLOCK: u32 = 1024;

/// Level sizes for `n` elements: `n`, then the block counts while they exceed one block.
pub fn levels(n: u32) -> Result<Vec<u32>, GpuError> {
    let mut level_n = vec![n];
    while *level_n.last().unwrap() > BLOCK {
        let next = level_n.last().unwrap().div_ceil(BLOCK);
        level_n.push(next);
    }
    if level_n.len() > 3 || n.div_ceil(BLOCK) > 65_535 {
        return Err(GpuError::TooLarge {
            buffer: "rtcd:buffer:scan",
            needed: 4 * n as u64,
            allowed: 4 * 65_535 * BLOCK as u64,
        });
    }
    Ok(level_n)
}

/// Block-sum buffers and per-level constants.
pub(crate) struct ScanBuffers {
    pub sums: [GrowBuffer<u32>; 3],
    pub params: [FixedBuffer; 3],
}

impl ScanBuffers {
    pub fn new(device: &wgpu::Device) -> Self {
        let usage = wgpu::BufferUsages::STORAGE;
        let uniform = |label: &'static str| {
            FixedBuffer::new(device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: std::mem::size_of::<GpuScanParams>() as u64,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }))
        };
        Self {
            sums: [
                GrowBuffer::new(device, "rtcd:buffer:scan_sums0", usage, 64),
                GrowBuffer::new(device, "rtcd:buffer:scan_sums1", usage, 4),
                GrowBuffer::new(device, "rtcd:buffer:scan_sums2", usage, 1),
            ],
            params: [
                uniform("rtcd:buffer:scan_params0"),
                uniform("rtcd:buffer:scan_params1"),
                uniform("rtcd:buffer:scan_params2"),
            ],
        }
    }

    /// Sizes the block-sum buffers and writes each level's constants (through the queue, so before
    /// the next submission's passes). Returns the bytes written through the queue.
    pub fn prepare(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        levels: &[u32],
    ) -> Result<u64, GpuError> {
        let mut bytes = 0;
        for (level, n) in levels.iter().enumerate() {
            self.sums[level].reserve(device, encoder, n.div_ceil(BLOCK) as u64, 0)?;
            let constants = GpuScanParams { n: *n, ..Default::default() };
            queue.write_buffer(&self.params[level], 0, bytemuck::bytes_of(&constants));
            bytes += std::mem::size_of::<GpuScanParams>() as u64;
        }
        Ok(bytes)
    }

    /// Encodes the scan of `data` (prepared for `levels`), one compute pass per dispatch through
    /// `pass(encoder, pipeline, bind group, workgroups)`, its bind groups kept in `binds`.
    #[expect(
        clippy::too_many_arguments,
        reason = "one scan's passes, encoded where the step encodes its own"
    )]
    pub fn encode(
        &self,
        device: &wgpu::Device,
        kernels: &Kernels,
        binds: &mut BindCache,
        encoder: &mut wgpu::CommandEncoder,
        data: &GrowBuffer<u32>,
        levels: &[u32],
        pass: &mut impl FnMut(&mut wgpu::CommandEncoder, &Pipeline, &wgpu::BindGroup, (u32, u32)),
    ) {
        let level_data: Vec<Bound> =
            std::iter::once(data.bound()).chain(self.sums.iter().map(|s| s.bound())).collect();
        let mut bind = |pipe: &Pipeline, level: usize| {
            binds.bind(
                device,
                pipe,
                &[
                    (0, level_data[level].clone()),
                    (1, self.sums[level].bound()),
                    (2, self.params[level].bound()),
                ],
            )
        };
        for (level, n) in levels.iter().enumerate() {
            let pipe = kernels.get(Kernel::ScanBlocks);
            pass(encoder, pipe, &bind(pipe, level), (n.div_ceil(BLOCK), 1));
        }
        for (level, n) in levels.iter().enumerate().rev() {
            if n.div_ceil(BLOCK) > 1 {
                let pipe = kernels.get(Kernel::AddBlockSums);
                pass(encoder, pipe, &bind(pipe, level), (n.div_ceil(BLOCK), 1));
            }
        }
    }
}

/// Runs the scan kernels on `data` and returns its exclusive prefix sum (a shader contract test
/// entry point; the narrow phase runs the same passes inside its step).
pub fn exclusive_scan(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    data: &[u32],
) -> Result<Vec<u32>, GpuError> {
    let kernels = Kernels::new(device)?;
    let levels = levels(data.len() as u32)?;
    let mut encoder =
        device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("rtcd:scan_test") });
    let mut buf = GrowBuffer::<u32>::new(
        device,
        "rtcd:buffer:scan_test",
        wgpu::BufferUsages::STORAGE,
        data.len() as u64,
    );
    buf.reserve(device, &mut encoder, data.len() as u64, 0)?;
    buf.write(queue, 0, data);
    let mut scan = ScanBuffers::new(device);
    scan.prepare(device, queue, &mut encoder, &levels)?;
    scan.encode(device, &kernels, &mut BindCache::default(), &mut encoder, &buf, &levels, &mut untimed_pass);
    queue.submit([encoder.finish()]);
    let bytes = crate::readback::read_buffer(
        device,
        queue,
        buf.buffer(),
        4 * data.len() as u64,
        std::time::Duration::from_secs(60),
    )
    .map_err(|e| GpuError::Device(e.to_string()))?;
    Ok(bytemuck::pod_collect_to_vec(&bytes))
}
