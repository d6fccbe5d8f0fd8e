//! Blocking readback with a bounded wait.

use std::{sync::mpsc, time::Duration};

use rtcd::BackendError;

/// Copies `bytes` from the start of `buffer` (which needs `COPY_SRC`) and returns them, waiting at
/// most `timeout`.
pub fn read_buffer(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    buffer: &wgpu::Buffer,
    bytes: u64,
    timeout: Duration,
) -> Result<Vec<u8>, BackendError> {
    if bytes == 0 {
        return Ok(Vec::new());
    }
    let staging = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("rtcd:buffer:staging_read"),
        size: bytes,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder =
        device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("rtcd:readback") });
    encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, bytes);
    let (tx, rx) = mpsc::channel();
    encoder.map_buffer_on_submit(&staging, wgpu::MapMode::Read, 0..bytes, move |r| {
        let _ = tx.send(r);
    });
    let index = queue.submit([encoder.finish()]);
    device
        .poll(wgpu::PollType::Wait { submission_index: Some(index), timeout: Some(timeout) })
        .map_err(|e| BackendError::Readback(format!("{e} (waited at most {timeout:?})")))?;
    match rx.try_recv() {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(BackendError::Readback(e.to_string())),
        Err(_) => return Err(BackendError::Readback("the staging buffer was not mapped".into())),
    }
    let data = staging.get_mapped_range(0..bytes).to_vec();
    staging.unmap();
    Ok(data)
}
