//! The pair table: one slot per pair in the narrow phase, allocated when a pair enters and freed when
//! it leaves (free list). The slot's state lives on the GPU (`Slot`: reference pose, record ranges;
//! the records themselves in the records buffer); the host keeps a small mirror (reference pose,
//! separation bound and record counts) to decide each pair's tracer and lay out the next dispatch
//! without a round trip.
//! The slot buffer grows by doubling with a device-side copy, so growth never drops state, and a
//! persisting pair keeps its slot. The edge rays' records live on the device beside the vertex
//! records; the motion rays' state ([`HostMotionState`]) lives on the host.

use std::sync::{Mutex, MutexGuard};

use rtcd::{PairKey, Pose, detect::TraceReference};
use rustc_hash::FxHashMap;

use crate::{buffer::GrowBuffer, error::GpuError, gpu_types::GpuSlot};

/// Host mirror of one slot.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SlotMirror {
    /// `(mesh1.id(), mesh2.id())`.
    pub mesh_ids: (u64, u64),
    /// Relative pose at the last standard step.
    pub reference: Option<Pose>,
    /// Records per direction after the last step.
    pub rec_counts: [u32; 2],
    /// [`rtcd::detect::separation_for_reach`] at the reference pose.
    pub separation: f32,
    /// The leaf pair the pair's separation descents start from
    /// ([`rtcd::detect::separation_for_reach_from`]).
    pub witness: [u32; 2],
    /// Edge records (the edges kept on the device between steps) and tunnels
    /// ([`HostMotionState::tunnels`]) per direction.
    pub edge_counts: [u32; 2],
    /// The edge rays of each direction at the pair's next iterative step: the edges at its
    /// prediction records (counted with repeats) and its edge records, as the device lays them
    /// out (`pair_assemble.wgsl`).
    pub edge_entries: [u32; 2],
    /// The slot's link on the device: its bodies' slots and its kind (`GpuPairLink`), once uploaded.
    pub link: Option<[u32; 3]>,
    /// The pair's relative pose at the last step it was in: where the device starts its motion
    /// paths (the slot's `last_q`, `last_t`), used when the pair's previous pose is this one.
    pub last_pose: Option<Pose>,
    /// Whether the slot keeps tunnels ([`HostMotionState::tunnels`]).
    pub tunnels: bool,
    /// Its meshes' host copies (`MeshStore::host`), given with the slot.
    pub handles: [u32; 2],
}

/// What the motion rays of one slot keep between steps (`rtcd::detect::pair_motion_contacts`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HostMotionState {
    /// Vertices that tunnelled into the other mesh, per direction (`rtcd::PairState::tunnels`).
    pub tunnels: [Vec<[u32; 2]>; 2],
}

impl SlotMirror {
    /// What [`rtcd::detect::needs_standard_trace`] reads; `None` before the first standard trace.
    pub fn trace_reference(&self) -> Option<TraceReference> {
        self.reference.map(|pose| TraceReference {
            pose,
            separation: self.separation,
            has_records: self.rec_counts != [0, 0] || self.edge_counts != [0, 0],
        })
    }
}

pub(crate) struct PairTable {
    slots: FxHashMap<PairKey, u32>,
    free: Vec<u32>,
    mirror: Vec<SlotMirror>,
    /// By slot; each behind its own lock, so that the step's pairs work on theirs in parallel.
    motion: Vec<Mutex<HostMotionState>>,
    /// By slot: the last step whose pairs hold it ([`PairTable::keep`]).
    kept: Vec<u64>,
    /// The step [`PairTable::keep`] marks.
    step: u64,
    pub buffer: GrowBuffer<GpuSlot>,
}

/// A pair's slot this step.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct SlotAssignment {
    pub slot: u32,
    /// First step of this pair in this slot (reset on the GPU).
    pub new: bool,
}

impl PairTable {
    pub fn new(device: &wgpu::Device, capacity: u32) -> Self {
        let capacity = capacity.max(1);
        Self {
            slots: FxHashMap::default(),
            free: (0..capacity).rev().collect(),
            mirror: vec![SlotMirror::default(); capacity as usize],
            motion: (0..capacity).map(|_| Mutex::default()).collect(),
            kept: vec![0; capacity as usize],
            step: 1,
            buffer: GrowBuffer::new(
                device,
                "rtcd:buffer:pair_table",
                wgpu::BufferUsages::STORAGE,
                capacity as u64,
            ),
        }
    }

    pub fn capacity(&self) -> u32 {
        self.mirror.len() as u32
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn slot_of(&self, key: &PairKey) -> Option<u32> {
        self.slots.get(key).copied()
    }

    pub fn mirror(&self, slot: u32) -> &SlotMirror {
        &self.mirror[slot as usize]
    }

    pub fn mirror_mut(&mut self, slot: u32) -> &mut SlotMirror {
        &mut self.mirror[slot as usize]
    }

    /// Every slot's mirror, by slot.
    pub fn mirrors_mut(&mut self) -> &mut [SlotMirror] {
        &mut self.mirror
    }

    /// The slot's motion-ray state (each pair of a step has its own slot, so the lock is never
    /// waited on).
    pub fn motion(&self, slot: u32) -> MutexGuard<'_, HostMotionState> {
        self.motion[slot as usize].lock().unwrap_or_else(|e| e.into_inner())
    }

    fn clear_motion(&mut self, slot: u32) {
        *self.motion[slot as usize].get_mut().unwrap_or_else(|e| e.into_inner()) = HostMotionState::default();
    }

    /// Marks `slot` as held by a pair of this step (before [`PairTable::free_unkept`]).
    pub fn keep(&mut self, slot: u32) {
        self.kept[slot as usize] = self.step;
    }

    /// Frees the slot of every pair that no [`PairTable::keep`] marked since the last call;
    /// returns how many were freed.
    pub fn free_unkept(&mut self) -> usize {
        let before = self.slots.len();
        let (free, kept, step) = (&mut self.free, &self.kept, self.step);
        self.slots.retain(|_, s| {
            let keep = kept[*s as usize] == step;
            if !keep {
                free.push(*s);
            }
            keep
        });
        self.step += 1;
        before - self.slots.len()
    }

    /// The slot of `key`, allocating one (growing the table on the device if full) for a new pair.
    /// A pair whose meshes changed is treated as new in its old slot.
    pub fn assign(
        &mut self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        key: PairKey,
        mesh_ids: (u64, u64),
    ) -> Result<SlotAssignment, GpuError> {
        if let Some(&slot) = self.slots.get(&key) {
            let m = &mut self.mirror[slot as usize];
            if m.mesh_ids == mesh_ids {
                return Ok(SlotAssignment { slot, new: false });
            }
            *m = SlotMirror { mesh_ids, ..Default::default() };
            self.clear_motion(slot);
            return Ok(SlotAssignment { slot, new: true });
        }
        if self.free.is_empty() {
            let old = self.capacity();
            let new_cap = old * 2;
            self.buffer.reserve(device, encoder, new_cap as u64, old as u64)?;
            self.mirror.resize(new_cap as usize, SlotMirror::default());
            self.motion.resize_with(new_cap as usize, Mutex::default);
            self.kept.resize(new_cap as usize, 0);
            self.free.extend((old..new_cap).rev());
        }
        let slot = self.free.pop().expect("free list refilled above");
        self.slots.insert(key, slot);
        self.mirror[slot as usize] = SlotMirror { mesh_ids, ..Default::default() };
        self.clear_motion(slot);
        Ok(SlotAssignment { slot, new: true })
    }
}
