//! Readbacks on a device that several threads poll at once (as Bevy's render device is): every
//! readback returns its buffer's bytes, even when another thread's `poll` took its mapping callback.

mod common;

use std::time::Duration;

use wgpu::util::DeviceExt;

#[test]
fn readbacks_from_threads_sharing_a_device_all_arrive() {
    let d = common::device();
    let threads = 4;
    let rounds = 500;
    let failures: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || {
                    let mut failures = Vec::new();
                    for r in 0..rounds {
                        let words: Vec<u32> =
                            (0..64).map(|k| (t * 1_000_000 + r * 1_000 + k) as u32).collect();
                        let buffer = d.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                            label: Some("test:shared_device"),
                            contents: bytemuck::cast_slice(&words),
                            usage: wgpu::BufferUsages::COPY_SRC,
                        });
                        match rtcd_wgpu::readback::read_buffer(
                            &d.device,
                            &d.queue,
                            &buffer,
                            256,
                            Duration::from_secs(30),
                        ) {
                            Ok(bytes) if bytemuck::cast_slice::<u8, u32>(&bytes) == words => {}
                            Ok(_) => failures.push(format!("thread {t} round {r}: wrong bytes")),
                            Err(e) => failures.push(format!("thread {t} round {r}: {e}")),
                        }
                    }
                    failures
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert!(
        failures.is_empty(),
        "{} of {} readbacks failed: {:?}",
        failures.len(),
        threads * rounds,
        &failures[..failures.len().min(5)]
    );
}
