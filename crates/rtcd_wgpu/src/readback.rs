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
    await_mapping(device, &rx, timeout)?;
    let data = staging.get_mapped_range(0..bytes).to_vec();
    staging.unmap();
    Ok(data)
}

/// The receiving end of a `map_buffer_on_submit`/`map_async` callback.
pub type MapReceiver = mpsc::Receiver<Result<(), wgpu::BufferAsyncError>>;

/// Waits at most `timeout` for a mapping callback, after `poll` said its submission is done.
///
/// When the device is shared between threads (Bevy's render device, or tests that share one), another
/// thread's `poll` may have taken the callback off the queue and not run it yet when our own `poll`
/// returns, so `try_recv` alone can miss a mapping that is about to complete. The wait polls the device
/// without blocking between short waits on the channel, so a callback that nobody else fires still runs.
pub fn await_mapping(device: &wgpu::Device, rx: &MapReceiver, timeout: Duration) -> Result<(), BackendError> {
    // A timeout too long to add to the clock (`Duration::MAX`: wait for ever) has no deadline.
    let deadline = std::time::Instant::now().checked_add(timeout);
    loop {
        match rx.recv_timeout(Duration::from_millis(1)) {
            Ok(Ok(())) => return Ok(()),
            Ok(Err(e)) => return Err(BackendError::Readback(e.to_string())),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(BackendError::Readback("the mapping callback was dropped".into()));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
                    return Err(BackendError::Readback(format!(
                        "the staging buffer was not mapped after {timeout:?}"
                    )));
                }
                let _ = device.poll(wgpu::PollType::Poll);
            }
        }
    }
}
