//! One typed, growable GPU buffer. Growth doubles the capacity; a buffer that holds state is copied
//! on the device into the new allocation (recorded in the step's command encoder, so it happens before
//! the step's kernels and nothing is dropped). Labels read `"rtcd:buffer:<name>"`.

use std::{
    marker::PhantomData,
    ops::Deref,
    sync::atomic::{AtomicU64, Ordering},
};

use bytemuck::Pod;

use crate::error::GpuError;

pub(crate) struct GrowBuffer<T: Pod> {
    label: &'static str,
    usage: wgpu::BufferUsages,
    buffer: wgpu::Buffer,
    capacity: u64,
    /// This allocation's id ([`next_id`]): a new one on every reallocation, so that a cached bind
    /// group ([`crate::kernels::BindCache`]) never binds a buffer that was replaced.
    id: u64,
    _t: PhantomData<T>,
}

impl<T: Pod> GrowBuffer<T> {
    const SIZE: u64 = std::mem::size_of::<T>() as u64;

    pub fn new(device: &wgpu::Device, label: &'static str, usage: wgpu::BufferUsages, capacity: u64) -> Self {
        let capacity = capacity.max(1);
        let usage = usage | wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC;
        Self {
            label,
            usage,
            buffer: Self::alloc(device, label, usage, capacity),
            capacity,
            id: next_id(),
            _t: PhantomData,
        }
    }

    fn alloc(
        device: &wgpu::Device,
        label: &'static str,
        usage: wgpu::BufferUsages,
        capacity: u64,
    ) -> wgpu::Buffer {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: capacity * Self::SIZE,
            usage,
            mapped_at_creation: false,
        })
    }

    pub fn buffer(&self) -> &wgpu::Buffer {
        &self.buffer
    }

    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Makes room for `n` elements, doubling until it fits. The first `keep` elements are copied to
    /// the new buffer with `encoder` (pass 0 for buffers rewritten every step). Returns whether the
    /// buffer was reallocated.
    pub fn reserve(
        &mut self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        n: u64,
        keep: u64,
    ) -> Result<bool, GpuError> {
        if n <= self.capacity {
            return Ok(false);
        }
        let mut cap = self.capacity.max(1);
        while cap < n {
            cap *= 2;
        }
        let limits = device.limits();
        let allowed = limits.max_buffer_size.min(limits.max_storage_buffer_binding_size);
        if cap * Self::SIZE > allowed {
            // Doubling overshot: try the exact size before giving up.
            cap = n;
            if cap * Self::SIZE > allowed {
                return Err(GpuError::TooLarge { buffer: self.label, needed: n * Self::SIZE, allowed });
            }
        }
        let new = Self::alloc(device, self.label, self.usage, cap);
        let keep = keep.min(self.capacity);
        if keep > 0 {
            encoder.copy_buffer_to_buffer(&self.buffer, 0, &new, 0, keep * Self::SIZE);
        }
        self.buffer = new;
        self.capacity = cap;
        self.id = next_id();
        Ok(true)
    }

    /// Writes `data` at element `offset` (through the queue: happens before the next submission's
    /// commands). Returns the bytes written.
    pub fn write(&self, queue: &wgpu::Queue, offset: u64, data: &[T]) -> u64 {
        if !data.is_empty() {
            queue.write_buffer(&self.buffer, offset * Self::SIZE, bytemuck::cast_slice(data));
        }
        data.len() as u64 * Self::SIZE
    }

    pub fn binding(&self) -> wgpu::BindingResource<'_> {
        self.buffer.as_entire_binding()
    }

    /// The whole buffer as a binding, with its allocation's id.
    pub fn bound(&self) -> Bound<'_> {
        Bound { id: self.id, resource: self.buffer.as_entire_binding() }
    }
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A fresh allocation id: never handed out twice in a process.
pub(crate) fn next_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

/// A binding and the id of the allocation it binds: what a cached bind group is keyed by.
#[derive(Clone)]
pub(crate) struct Bound<'a> {
    pub id: u64,
    pub resource: wgpu::BindingResource<'a>,
}

/// A buffer made once and never replaced, with its allocation's id (dereferences to the buffer).
pub(crate) struct FixedBuffer {
    buffer: wgpu::Buffer,
    id: u64,
}

impl FixedBuffer {
    pub fn new(buffer: wgpu::Buffer) -> Self {
        Self { buffer, id: next_id() }
    }

    /// The whole buffer as a binding, with its allocation's id.
    pub fn bound(&self) -> Bound<'_> {
        Bound { id: self.id, resource: self.buffer.as_entire_binding() }
    }
}

impl Deref for FixedBuffer {
    type Target = wgpu::Buffer;

    fn deref(&self) -> &wgpu::Buffer {
        &self.buffer
    }
}
