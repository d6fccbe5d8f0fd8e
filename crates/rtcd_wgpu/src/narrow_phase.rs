//! The GPU narrow phase: the same inputs and outputs as `rtcd::NarrowPhase`, computed by the WGSL
//! kernels, with per-pair iterative state kept in GPU buffers between steps.
//!
//! What the host uploads a step: one world pose per body ([`crate::bodies::BodyTable`]), 5 flag bits
//! per pair-table slot (in the step, new in its slot, the tracer it decided by IRTCD 2013 Eq. 2,
//! separated, its motion paths traced on the device), the links (slot, bodies, kind: 16 bytes) of
//! the pairs new in their slots, and the statics of new pairs of meshes
//! ([`crate::bodies::KindTable`]).
//!
//! One step, on the device, the pairs indexed by slot: `pair_links` (one thread per new link) →
//! `pair_assemble` (one thread per slot: the relative pose made of the bodies' poses, the inverse
//! pose, the vertex candidate regions, the entries from the flags, meshes and record counts, the edge
//! rays' counts from the records, the motion rays' plan) → `scan` of the slots' entry counts →
//! `pair_layout` (each pair's first entry) → `pair_begin` (one thread per slot) → `scan` of the
//! slots' motion paths → `motion_args` → `motion_paths` (one thread per laid-out path, an indirect
//! dispatch: the vertices that moved far enough traced along their paths) → `trace_standard`,
//! `walk_iterative` and `edge_select` (one thread per entry of the flattened ray list: pair direction × vertex for pairs
//! traced with the standard tracer, pair direction × record for pairs traced iteratively, then each
//! pair's edge rays, Mochi 2024 §3.4; `edge_select` gathers the edges to trace) → `edge_step` (one
//! thread per gathered edge) → `flag_entries` (what is kept as a record, and what of it is read
//! back: the predictions surely beyond the prediction distance are not) + two `scan`s (prefix sums)
//! → `compact` (dense vertex and edge records for the next step; the rays that make contacts, to
//! read back, 16 bytes each; each slot's edges at its prediction records) → `pair_end` (record
//! ranges into the pair table, the counts of the slots with rays, each slot's pose for its next
//! paths, a bit for each slot that traced paths). The host checks that the device laid out the
//! rays it planned, reads back the compacted rays, the slots' counts (its mirror of each slot, for
//! the next step's plan) and the paths that met a front face, makes the rays' and the paths'
//! contacts with the CPU backend's code from the meshes it keeps (a crossing edge traced again; the
//! tunnels kept on the host), and reduces them to manifolds with the same code. It traces the
//! paths of the pairs the device does not (new in their slots, or whose previous pose is not their
//! last one) once the device is done.

use std::{
    cell::Cell,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
        mpsc,
    },
    time::{Duration, Instant},
};

use glam::Vec3;
use rayon::prelude::*;
use rtcd::{
    BackendError, ContactCandidate, NarrowPhaseBackend, PairInput, PairKey, PairOutput, RayKind, RtcdParams,
    StepMetrics, StepMode, StepOptions, StepOutput, TracerKind,
    aabb::Aabb,
    contact::{RayContact, ReduceScratch, reduce_manifolds_with, reproject},
    detect::{
        EdgeTest, MotionFrames, MotionHit, box_face_normal, closed_reach_into, edge_crossing,
        edge_crossing_contacts, is_quiet, merge_motion_contacts, motion_lengths, motion_path_contact,
        motion_tunnel_contacts, needs_standard_trace, pair_motion_contacts, reach_box, rim_paths_due,
        separation_before_trace, separation_for_reach_from, solid_behind_box, trace_motion_paths,
        vertex_clip_box,
    },
    narrow_phase::{RayDebug, RayOutcome},
};

use crate::{
    bodies::{BodyTable, KindTable, world_poses},
    buffer::{FixedBuffer, GrowBuffer},
    error::GpuError,
    gpu_types::*,
    kernels::{BindCache, Kernels, Pipeline, grid, untimed_pass},
    mesh_store::{HostMesh, MeshStore},
    pair_table::{PairTable, SlotAssignment, SlotMirror},
    readback::MapReceiver,
    scan::{self, ScanBuffers},
    shaders::Kernel,
};

/// Options of the GPU backend.
#[derive(Clone, Debug)]
pub struct GpuOptions {
    /// Longest wait for a step's results before the backend reports a readback failure.
    pub timeout: Duration,
    /// Pair-table slots allocated up front (the table doubles when full).
    pub initial_pair_capacity: u32,
    /// Time each kernel with timestamp queries when the device has them.
    pub timestamps: bool,
}

impl Default for GpuOptions {
    fn default() -> Self {
        Self { timeout: Duration::from_secs(20), initial_pair_capacity: 256, timestamps: true }
    }
}

/// Per-kernel GPU times of the last step (timestamp queries), in submission order.
pub type KernelTimings = Vec<(&'static str, Duration)>;

/// Where a step's host time went ([`StepMetrics::host_time`] is their sum).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HostPhases {
    /// `submit`: each pair's slot and plan, the step's records, encoding and the queue writes.
    pub plan: Duration,
    /// Of `plan`, each pair's decisions, made in parallel from its slot's mirror: IRTCD 2013
    /// Eq. 2 (standard or iterative tracer), and the separation descents of record-less pairs
    /// before their standard steps, as the CPU backend decides. Host work that grows with the
    /// pairs: the device does not make these decisions.
    pub decide: Duration,
    /// Record-less pairs whose separation bound was made before their standard step (one or two
    /// BVH descents each, or none where the pair's witness leaves are within reach;
    /// `rtcd::detect::separation_before_trace`).
    pub bounds: u32,
    /// Of `collect`, the motion rays' contacts: the tunnels' and those of the paths the device
    /// traced, and the paths the host traces (the edge rays run on the device).
    pub edges: Duration,
    /// `collect` without the waits and the motion rays: the contacts made of the rays read back
    /// and reduced, and the separation bound of each standard step that left its pair without
    /// records (kept for IRTCD 2013 Eq. 2 at its next steps, as the CPU backend keeps it).
    pub collect: Duration,
    /// Bind groups made for the step. The others are kept from step to step, so a step whose
    /// buffers all kept their size makes none.
    pub bind_groups: u32,
    /// Pairs whose motion paths the device traced.
    pub motion_on_device: u32,
    /// Pairs whose motion paths the host traced: new in their slots, or whose previous pose was not
    /// their last one, or all of a step whose paths' hits outgrew their read.
    pub motion_on_host: u32,
    /// Whether the step's motion hits outgrew their read (sized from the last step's), so that the
    /// host traced the device's pairs' paths again.
    pub motion_read_short: bool,
}

/// The longest the kernels' first run may take, when the backend is made (their compilation, on a
/// driver that compiles them then), unless [`GpuOptions::timeout`] is longer.
pub const KERNELS_FIRST_RUN: Duration = Duration::from_secs(300);

/// The most motion paths a step leaves to the device (an upper bound: every vertex of a pair's
/// two meshes); the device counts, scans and dispatches them in 32 bits.
const MAX_DEVICE_MOTION_PATHS: u64 = (u32::MAX / 4) as u64;

/// Meshes kept on the device beyond twice those the step's pairs use, before the device's state is
/// started again ([`GpuNarrowPhase::let_go_of_unused_meshes`]).
const MESH_SLACK: usize = 64;

/// The motion hits the small read maps back at least (then one and a half times the last step's
/// count): readback grows with them. A step that finds more has its paths traced again on the
/// host, exactly as the device traced them.
pub const FIRST_READ_MOTION_HITS: u64 = 16;

/// The contacts the first read of a step maps back at least (then one and a half times the last
/// step's count), so that one round trip suffices as the count drifts; a step that finds more reads
/// the rest with a second one.
pub const FIRST_READ_CONTACTS: u64 = 256;

/// Passes a step can have, each timed: about 15 kernels, and six scans (entries, entries read
/// back, slots, slots with rays, records, motion paths) of at most 4 levels each (1,024 elements a block, u32
/// counts), each level a pass down and all but the last one back up.
const MAX_PASSES: u32 = 15 + 6 * 7;
/// The small read: totals and counters in its first bytes, then the slots' counts, then the passes'
/// timestamps, then the motion hits and the moving slots' bits, each right after the last; only
/// what a step uses is read.
const COUNTS_OFFSET: u64 = 16 + 4 * COUNTERS as u64;
const SMALL_STAGING: u64 = COUNTS_OFFSET + 16 * MAX_PASSES as u64;

struct Timestamps {
    set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    period: f32,
}

struct StepBuffers {
    /// The step's pairs, one per pair-table slot, assembled on the device (`pair_assemble`).
    pairs: GrowBuffer<GpuPair>,
    /// Every body's world pose, uploaded every step by body slot.
    bodies: GrowBuffer<GpuBody>,
    /// Every slot's bodies and kind, kept on the device (as large as the pair table).
    links: GrowBuffer<GpuPairLink>,
    /// The links of the step's pairs new in their slots or whose bodies moved slot, uploaded.
    link_changes: GrowBuffer<GpuPairLink>,
    /// One [`GpuPairStatic`] per pair of meshes, kept (new ones uploaded once).
    kinds: GrowBuffer<GpuPairStatic>,
    /// Each slot's 5 flag bits this step ([`PAIR_FLAG_BITS`]), uploaded.
    slot_flags: GrowBuffer<u32>,
    /// Each slot's entry count, then (scanned) its first entry; one more element holds the total.
    pair_scan: GrowBuffer<u32>,
    pair_scan_levels: ScanBuffers,
    params: FixedBuffer,
    records: [GrowBuffer<GpuRecord>; 2],
    /// Each record's edges at a prediction record (`compact.wgsl`), then, scanned at the start of
    /// the next step, where each record's edges begin among its direction's: how `pair_assemble.wgsl`
    /// counts a slot's edge rays and `edge_select.wgsl` finds an edge ray's record. As large as the
    /// records, one element more.
    rec_edges: GrowBuffer<u32>,
    rec_scan_levels: ScanBuffers,
    /// The step's edge rays to trace (`edge_select.wgsl`), at most one per edge entry.
    edge_jobs: GrowBuffer<GpuEdgeJob>,
    entries: GrowBuffer<GpuEntryHit>,
    counters: FixedBuffer,
    /// The records' flags (`flag_entries.wgsl`), then their exclusive scan: each record's place.
    scan: GrowBuffer<u32>,
    scan_levels: ScanBuffers,
    /// The flags of what is read back, then their scan: each read-back record's place.
    read_scan: GrowBuffer<u32>,
    read_scan_levels: ScanBuffers,
    /// Each slot's edges at its prediction records, per direction (`compact.wgsl`).
    edge_sums: GrowBuffer<u32>,
    /// 1 for each slot with entries (`pair_assemble.wgsl`), then their exclusive scan: each such
    /// slot's place among them.
    active_scan: GrowBuffer<u32>,
    active_scan_levels: ScanBuffers,
    /// The counts of the slots with entries, in slot order (`pair_end.wgsl`): what is read back.
    reported: GrowBuffer<u32>,
    contacts: GrowBuffer<GpuContactOut>,
    /// Each slot's motion paths (`pair_assemble.wgsl`), then their exclusive scan: each slot's
    /// first; one more element holds the total.
    motion_counts: GrowBuffer<u32>,
    motion_scan_levels: ScanBuffers,
    /// Each slot's motion plan (written for the slots with paths).
    motion_plans: GrowBuffer<GpuMotionPlan>,
    /// 1 for each slot that traced a motion path this step (cleared by `pair_assemble.wgsl`).
    motion_traced: GrowBuffer<u32>,
    /// The paths that met a front face (read back).
    motion_hits: GrowBuffer<GpuMotionHit>,
    /// A bit for each slot that traced paths (`pair_end.wgsl`; read back).
    motion_moving: GrowBuffer<u32>,
    /// The motion paths' indirect dispatch (`motion_args.wgsl`).
    motion_args: FixedBuffer,
    small_staging: wgpu::Buffer,
    small_staging_bytes: u64,
    big_staging: wgpu::Buffer,
    big_staging_bytes: u64,
}

/// One pair of a submitted step that has something to trace or make (a quiet pair has no job:
/// [`Plan::quiet`]).
struct Job {
    input_index: usize,
    pos12: rtcd::Pose,
    /// The pair's meshes' host copies ([`MeshStore::host`]).
    meshes: [u32; 2],
    slot: u32,
    standard: bool,
    /// A standard step's separation bound from before its trace, where it made one
    /// ([`Plan::bound`]).
    bound: Option<f32>,
    /// The motion rays' figures: rays traced and contacts made.
    motion_figures: [u64; 2],
    /// Its motion contacts (`rtcd::detect::pair_motion_contacts`, shape 1's frame), traced with
    /// the edges.
    motion_contacts: Vec<ContactCandidate>,
    /// Their tunnel contacts' summed normals (what `pair_motion_contacts` returns).
    approach: Vec3,
    /// The slot's tunnels per direction after the motion rays, for its mirror.
    tunnel_counts: [u32; 2],
    /// Whether it has entries (rays), so that its slot's counts come back (`pair_end.wgsl`).
    reports: bool,
    /// Whether the device traces its motion paths ([`PAIR_MOTION`]): the host makes their contacts
    /// from the hits read back.
    device_motion: bool,
    /// Its previous pose, where its paths start (`PairInput::previous`, when valid).
    previous: Option<rtcd::Pose>,
    /// Whether its slot keeps tunnels.
    tunnels: bool,
    /// Whether the device traced any of its motion paths (they are counted with the step's).
    moving: bool,
}

struct Pending {
    /// Entries of the flattened ray list.
    entries: u32,
    outputs: Vec<PairOutput>,
    jobs: Vec<Job>,
    opts: StepOptions,
    metrics: StepMetrics,
    start: Instant,
    /// The host's time in `submit` (see [`StepMetrics::host_time`]).
    submit_host: Duration,
    /// Of it, the pairs' decisions ([`HostPhases::decide`]), and the bounds made.
    decide: Duration,
    bounds: u32,
    gpu: Option<PendingGpu>,
}

struct PendingGpu {
    /// The step's own submission; `None` when the caller submits the step's commands
    /// ([`GpuNarrowPhase::submit_into`]).
    submission: Option<wgpu::SubmissionIndex>,
    small_rx: MapReceiver,
    /// Bytes of the small read (its totals, counters, slot counts, timestamps, motion hits and
    /// moving slots' bits).
    small_bytes: u64,
    /// Where the slot counts end and the timestamps begin in it.
    stamps_offset: u64,
    /// Where the motion hits begin in it, and how many it holds; then the moving slots' bitmap.
    hits_offset: u64,
    motion_read: u64,
    moving_offset: u64,
    moving_words: u64,
    big_rx: Option<MapReceiver>,
    estimate: u64,
    passes: Vec<&'static str>,
    /// The mappings [`GpuNarrowPhase::try_collect`] found done (each callback is received once).
    small_done: bool,
    big_done: bool,
    /// The second read that [`GpuNarrowPhase::try_collect`] started for contacts beyond the first
    /// guess, with their recompaction when they outgrew the outputs.
    reread: Option<Reread>,
}

/// A step's records (kept for the next step) and, of them, those read back, from the scans' totals.
#[derive(Clone, Copy, Debug)]
struct Totals {
    kept: u64,
    read: u64,
}

/// A second read of the step's contacts, in flight.
struct Reread {
    staging: wgpu::Buffer,
    bytes: u64,
    rx: MapReceiver,
    done: bool,
}

/// The GPU narrow phase. See the module docs; the contract of [`GpuNarrowPhase::step`] is that of
/// `rtcd::NarrowPhase::step`, except that [`StepOptions::measure_errors`] is not supported (no
/// comparison is made), recorded rays are those that ended in a contact or a prediction, and a
/// held pair ([`PairInput::hold`]) is traced like any other, as its docs allow: its state moves on
/// and it is not counted in [`StepMetrics::held_pairs`].
///
/// Each step's [`StepMetrics`] also give what the step cost the host: [`StepMetrics::host_time`]
/// (the host's time in `submit` and `collect`, waits excluded), [`StepMetrics::device_wait`] (the
/// host blocked on the device), [`StepMetrics::upload_bytes`], [`StepMetrics::readback_bytes`],
/// and [`StepMetrics::gpu_time`] on adapters with timestamp queries.
pub struct GpuNarrowPhase {
    device: wgpu::Device,
    queue: wgpu::Queue,
    adapter: String,
    params: RtcdParams,
    options: GpuOptions,
    kernels: Kernels,
    /// The edge rays' kernels ([`GpuNarrowPhase::edge_crossings`]), compiled on first use.
    edge_kernels: Option<Kernels>,
    meshes: MeshStore,
    table: PairTable,
    bufs: StepBuffers,
    /// The step's bind groups, kept from step to step.
    binds: BindCache,
    cur: usize,
    last_total: u64,
    /// The records the last step read back (those that make contacts): the first read is sized
    /// from it.
    last_read: u64,
    /// The motion hits of the last step: their read is sized from it.
    last_motion_hits: u64,
    /// Each pair of the last step's input (by its place) and its slot.
    last_slots: Vec<(PairKey, u32)>,
    timestamps: Option<Timestamps>,
    last_timings: KernelTimings,
    last_host: HostPhases,
    /// Pairs of the last step on the device (the `pairs` buffer's filled length: the table's slots).
    last_pairs: u32,
    /// Body slots and poses.
    bodies: BodyTable,
    /// Pair statics by pair of meshes.
    kinds: KindTable,
    pending: Option<Pending>,
    failed: Option<BackendError>,
    lost: Option<Arc<AtomicBool>>,
    /// Meshes on the device past which a step counts the meshes its pairs use
    /// ([`GpuNarrowPhase::let_go_of_unused_meshes`]).
    mesh_watermark: usize,
}

impl GpuNarrowPhase {
    /// A GPU narrow phase on `device` (yours, or Bevy's `RenderDevice::wgpu_device()`), checking that
    /// the device can run the kernels.
    pub fn new(device: &wgpu::Device, queue: &wgpu::Queue, params: RtcdParams) -> Result<Self, GpuError> {
        Self::with_options(device, queue, params, GpuOptions::default())
    }

    /// [`GpuNarrowPhase::new`] with options.
    pub fn with_options(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        params: RtcdParams,
        options: GpuOptions,
    ) -> Result<Self, GpuError> {
        params.validate().map_err(|e| GpuError::Device(e.to_string()))?;
        let missing = crate::device::missing_requirements(&device.limits(), None);
        if !missing.is_empty() {
            return Err(GpuError::Unsupported {
                adapter: format!("{:?}", device.adapter_info().name),
                missing,
            });
        }
        // The pair table's first slots: each needs a link and a slot record on the device, and a
        // slot's index travels in the bits above a contact's kind.
        let slot_bytes = std::mem::size_of::<GpuSlot>().max(std::mem::size_of::<GpuPairLink>()) as u64;
        let limits = device.limits();
        let most = limits.max_buffer_size.min(limits.max_storage_buffer_binding_size);
        let needed = u64::from(options.initial_pair_capacity) * slot_bytes;
        if options.initial_pair_capacity > u32::MAX >> CONTACT_KIND_BITS || needed > most {
            return Err(GpuError::TooLarge { buffer: "rtcd:buffer:pair_table", needed, allowed: most });
        }
        let kernels = Kernels::new(device)?;
        // The kernels run once here, so that a driver that compiles them on their first dispatch
        // does it now, not in a step bound by `options.timeout`.
        kernels.warm_up(device, queue, options.timeout.max(KERNELS_FIRST_RUN))?;
        let usage = wgpu::BufferUsages::STORAGE;
        let uniform = |label: &'static str, size: u64| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        };
        let staging = |label: &'static str, size: u64| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        };
        let bufs = StepBuffers {
            pairs: GrowBuffer::new(device, "rtcd:buffer:pairs", usage, 256),
            bodies: GrowBuffer::new(device, "rtcd:buffer:bodies", usage, 256),
            links: GrowBuffer::new(
                device,
                "rtcd:buffer:pair_links",
                usage,
                options.initial_pair_capacity.max(1) as u64,
            ),
            link_changes: GrowBuffer::new(device, "rtcd:buffer:pair_link_changes", usage, 64),
            kinds: GrowBuffer::new(device, "rtcd:buffer:pair_kinds", usage, 16),
            slot_flags: GrowBuffer::new(device, "rtcd:buffer:slot_flags", usage, 64),
            pair_scan: GrowBuffer::new(device, "rtcd:buffer:pair_scan", usage, 257),
            pair_scan_levels: ScanBuffers::new(device),
            params: FixedBuffer::new(uniform("rtcd:buffer:params", std::mem::size_of::<GpuParams>() as u64)),
            records: [
                GrowBuffer::new(device, "rtcd:buffer:records_a", usage, 4096),
                GrowBuffer::new(device, "rtcd:buffer:records_b", usage, 4096),
            ],
            rec_edges: GrowBuffer::new(device, "rtcd:buffer:rec_edges", usage, 4097),
            rec_scan_levels: ScanBuffers::new(device),
            edge_jobs: GrowBuffer::new(device, "rtcd:buffer:edge_jobs", usage, 1024),
            entries: GrowBuffer::new(device, "rtcd:buffer:entries", usage, 4096),
            counters: FixedBuffer::new(device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("rtcd:buffer:counters"),
                size: 4 * COUNTERS as u64,
                usage: usage | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })),
            scan: GrowBuffer::new(device, "rtcd:buffer:scan", usage, 4097),
            scan_levels: ScanBuffers::new(device),
            read_scan: GrowBuffer::new(device, "rtcd:buffer:read_scan", usage, 4097),
            read_scan_levels: ScanBuffers::new(device),
            edge_sums: GrowBuffer::new(device, "rtcd:buffer:edge_sums", usage, 2 * 256),
            active_scan: GrowBuffer::new(device, "rtcd:buffer:active_scan", usage, 257),
            active_scan_levels: ScanBuffers::new(device),
            reported: GrowBuffer::new(device, "rtcd:buffer:reported_counts", usage, 6 * 256),
            contacts: GrowBuffer::new(device, "rtcd:buffer:contacts", usage, 4096),
            motion_counts: GrowBuffer::new(device, "rtcd:buffer:motion_counts", usage, 257),
            motion_scan_levels: ScanBuffers::new(device),
            motion_plans: GrowBuffer::new(device, "rtcd:buffer:motion_plans", usage, 256),
            motion_traced: GrowBuffer::new(device, "rtcd:buffer:motion_traced", usage, 256),
            motion_hits: GrowBuffer::new(device, "rtcd:buffer:motion_hits", usage, FIRST_READ_MOTION_HITS),
            motion_moving: GrowBuffer::new(device, "rtcd:buffer:motion_moving", usage, 8),
            motion_args: FixedBuffer::new(device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("rtcd:buffer:motion_args"),
                size: 12,
                usage: usage | wgpu::BufferUsages::INDIRECT,
                mapped_at_creation: false,
            })),
            small_staging: staging("rtcd:buffer:staging_counts", SMALL_STAGING),
            small_staging_bytes: SMALL_STAGING,
            big_staging: staging(
                "rtcd:buffer:staging_contacts",
                4096 * std::mem::size_of::<GpuContactOut>() as u64,
            ),
            big_staging_bytes: 4096 * std::mem::size_of::<GpuContactOut>() as u64,
        };
        let timestamps = (options.timestamps && device.features().contains(wgpu::Features::TIMESTAMP_QUERY))
            .then(|| Timestamps {
                set: device.create_query_set(&wgpu::QuerySetDescriptor {
                    label: Some("rtcd:queries:kernels"),
                    ty: wgpu::QueryType::Timestamp,
                    count: 2 * MAX_PASSES,
                }),
                resolve: device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("rtcd:buffer:timestamps"),
                    size: 16 * MAX_PASSES as u64,
                    usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                    mapped_at_creation: false,
                }),
                period: queue.get_timestamp_period(),
            });
        Ok(Self {
            device: device.clone(),
            queue: queue.clone(),
            adapter: device.adapter_info().name,
            params,
            table: PairTable::new(device, options.initial_pair_capacity),
            options,
            kernels,
            edge_kernels: None,
            meshes: MeshStore::new(device),
            bufs,
            binds: BindCache::default(),
            cur: 0,
            last_total: 0,
            last_read: 0,
            last_motion_hits: 0,
            last_slots: Vec::new(),
            timestamps,
            last_timings: Vec::new(),
            last_host: HostPhases::default(),
            last_pairs: 0,
            bodies: BodyTable::new(),
            kinds: KindTable::new(),
            pending: None,
            failed: None,
            lost: None,
            mesh_watermark: MESH_SLACK,
        })
    }

    /// Also watch this flag (set by a device-lost callback the caller installed, e.g.
    /// [`crate::GpuDevice::lost`]): once set, steps fail with [`BackendError::DeviceLost`].
    pub fn watch_device_lost(&mut self, flag: Arc<AtomicBool>) {
        self.lost = Some(flag);
    }

    /// The adapter's name.
    pub fn adapter_name(&self) -> &str {
        &self.adapter
    }

    /// Whether kernels are timed with timestamp queries.
    pub fn has_timestamps(&self) -> bool {
        self.timestamps.is_some()
    }

    /// Per-kernel GPU times of the last step (empty without timestamp queries).
    pub fn last_kernel_timings(&self) -> &KernelTimings {
        &self.last_timings
    }

    /// Where the last step's host time went.
    pub fn last_host_phases(&self) -> HostPhases {
        self.last_host
    }

    /// The pair-table slot of a pair, if it has one.
    pub fn pair_slot(&self, key: &PairKey) -> Option<u32> {
        self.table.slot_of(key)
    }

    /// Pairs with state.
    pub fn pair_count(&self) -> usize {
        self.table.len()
    }

    /// Slots in the pair table (grows by doubling).
    pub fn pair_capacity(&self) -> u32 {
        self.table.capacity()
    }

    /// Meshes resident on the device.
    pub fn mesh_count(&self) -> usize {
        self.meshes.len()
    }

    /// The host mirror of a slot (reference pose and record counts). Between a step's `submit` and
    /// its `collect`, a pair given a standard step has its new reference and the last one's
    /// separation bound; `collect` makes the new bound.
    pub fn slot_mirror(&self, slot: u32) -> Option<SlotMirror> {
        (slot < self.table.capacity()).then(|| *self.table.mirror(slot))
    }

    /// Reads the whole pair table back from the GPU (blocking; for tests and debugging).
    pub fn read_pair_table(&self) -> Result<Vec<GpuSlot>, BackendError> {
        self.read_elements(self.table.buffer.buffer(), self.table.capacity())
    }

    /// Reads back the last step's pairs as the device assembled them (`pair_assemble.wgsl`,
    /// `pair_layout.wgsl`: relative and inverse poses, flags, entries, candidate regions, the
    /// kind's statics), one per pair-table slot ([`GpuNarrowPhase::pair_slot`]; a slot whose pair was
    /// not in the step has no [`PAIR_PRESENT`] flag) (blocking; for tests and debugging). Empty before
    /// a step and after one without pairs on the device.
    pub fn read_step_pairs(&self) -> Result<Vec<GpuPair>, BackendError> {
        self.read_elements(self.bufs.pairs.buffer(), self.last_pairs)
    }

    /// Traces `rays` on the device (`shaders/edge_rays.wgsl`, one thread each, with the backend's
    /// tracer) and returns what each found, in order: the edge rays of Mochi 2024 §3.4, made
    /// contacts as `rtcd::detect::edge_crossing` makes them on the host (blocking). The meshes are
    /// made resident as a step makes them. An edge index past its mesh's edges is
    /// [`BackendError::InvalidInput`], and nothing runs.
    pub fn edge_crossings(
        &mut self,
        rays: &[crate::edge_rays::EdgeRay<'_>],
    ) -> Result<Vec<rtcd::detect::EdgeTest>, BackendError> {
        self.usable()?;
        if self.pending.is_some() {
            // The step's own encoder may still have to copy grown mesh buffers.
            return Err(BackendError::InvalidInput(
                "edge_crossings while a step is in flight: collect it first".into(),
            ));
        }
        if self.edge_kernels.is_none() {
            let kernels = Kernels::with(&self.device, &[Kernel::EdgeRaysBrute, Kernel::EdgeRaysBvh])
                .map_err(|e| BackendError::Device(e.to_string()))?;
            self.edge_kernels = Some(kernels);
        }
        let cx = crate::edge_rays::EdgeRayContext {
            device: &self.device,
            queue: &self.queue,
            kernels: self.edge_kernels.as_ref().expect("built above"),
            meshes: &mut self.meshes,
            tracer: self.params.tracer,
            timeout: self.options.timeout,
        };
        let result = crate::edge_rays::trace(cx, rays);
        // Meshes this call made resident are not a step's upload.
        self.meshes.take_uploaded();
        result
    }

    /// The first `n` elements of `buffer` (blocking).
    fn read_elements<T: bytemuck::Pod>(&self, buffer: &wgpu::Buffer, n: u32) -> Result<Vec<T>, BackendError> {
        let bytes = n as u64 * std::mem::size_of::<T>() as u64;
        crate::readback::read_buffer(&self.device, &self.queue, buffer, bytes, self.options.timeout)
            .map(|b| bytemuck::pod_collect_to_vec(&b))
    }

    fn usable(&self) -> Result<(), BackendError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        if self.lost.as_ref().is_some_and(|f| f.load(Ordering::SeqCst)) {
            return Err(BackendError::DeviceLost("the device reported itself lost".into()));
        }
        Ok(())
    }

    fn fail(&mut self, e: BackendError) -> BackendError {
        log::error!("rtcd GPU backend on {}: {e}; the backend is disabled", self.adapter);
        self.failed = Some(e.clone());
        self.pending = None;
        e
    }

    /// Uploads the step's pairs and submits its kernels; [`GpuNarrowPhase::collect`] waits for the
    /// results. One step at a time: the next step's walk reads this step's records. Held pairs
    /// ([`PairInput::hold`]) are traced like the others: every pair's records live in one buffer
    /// compacted each step, so a pair left out would lose them (their results are returned; callers
    /// that held them ignore them).
    pub fn submit(&mut self, pairs: &[PairInput], opts: &StepOptions) -> Result<(), BackendError> {
        self.start_step(None, pairs, opts)
    }

    /// [`GpuNarrowPhase::submit`], but the step's commands go into `encoder`, and the caller submits
    /// it on this backend's queue (Bevy's render graph submits the encoder of its `RenderContext`
    /// with the frame). The queue writes of the step (pair records, constants, new meshes) are
    /// flushed by that submission, and the readback buffers are mapped once it is done
    /// (`CommandEncoder::map_buffer_on_submit`); [`GpuNarrowPhase::collect`] before the submission
    /// waits at most [`GpuOptions::timeout`] for mappings that cannot come, and fails.
    pub fn submit_into(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        pairs: &[PairInput],
        opts: &StepOptions,
    ) -> Result<(), BackendError> {
        self.start_step(Some(encoder), pairs, opts)
    }

    fn start_step(
        &mut self,
        encoder: Option<&mut wgpu::CommandEncoder>,
        pairs: &[PairInput],
        opts: &StepOptions,
    ) -> Result<(), BackendError> {
        self.usable()?;
        if self.pending.is_some() {
            return Err(BackendError::Device("submit called twice without collect".into()));
        }
        let start = Instant::now();
        self.let_go_of_unused_meshes(pairs);
        let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let result = self.encode_and_submit(encoder, pairs, opts);
        let validation = futures_lite::future::block_on(validation.pop());
        let oom = futures_lite::future::block_on(oom.pop());
        match (result, validation.or(oom)) {
            (Ok(mut p), None) => {
                // Nothing in `submit` waits for the device: all of it is the host's.
                p.submit_host = start.elapsed();
                self.pending = Some(p);
                Ok(())
            }
            (_, Some(e)) => Err(self.fail(BackendError::Device(e.to_string()))),
            (Err(e), None) => Err(self.fail(e)),
        }
    }

    /// Once the device holds more meshes than [`MESH_SLACK`] beyond twice those this step's pairs
    /// use (an app that keeps making meshes: edited assets, generated props), starts the device's
    /// state again: meshes, pair table, kinds and bodies. Every pair of the step is then new and
    /// traced with the standard tracer once, as in a backend's first step; the meshes no pair
    /// uses, and the host's copies of them, are let go. The meshes are only counted when the
    /// device holds more than it did after the last count.
    fn let_go_of_unused_meshes(&mut self, pairs: &[PairInput]) {
        if self.meshes.len() <= self.mesh_watermark {
            return;
        }
        let used: rustc_hash::FxHashSet<u64> =
            pairs.iter().flat_map(|p| [p.mesh1.id(), p.mesh2.id()]).collect();
        let limit = 2 * used.len() + MESH_SLACK;
        if self.meshes.len() > limit {
            self.meshes = MeshStore::new(&self.device);
            self.table = PairTable::new(&self.device, self.table.capacity());
            self.kinds = KindTable::new();
            self.bodies = BodyTable::new();
            self.binds = BindCache::default();
            self.last_slots.clear();
            (self.cur, self.last_total, self.last_read, self.last_motion_hits, self.last_pairs) =
                (0, 0, 0, 0, 0);
        }
        self.mesh_watermark = self.meshes.len().max(limit);
    }

    /// Waits (at most [`GpuOptions::timeout`]) for the submitted step and returns its results.
    pub fn collect(&mut self) -> Result<StepOutput, BackendError> {
        self.usable()?;
        let pending = self
            .pending
            .take()
            .ok_or_else(|| BackendError::Device("collect called without submit".into()))?;
        self.finish(pending).map_err(|e| self.fail(e))
    }

    /// The results of the submitted step if the device is done with it, without waiting: `None`
    /// while it is not (the device is polled, `PollType::Poll`), or when no step was submitted. When
    /// the step found more contacts than the first read could hold, the second read is submitted
    /// here and collected by a later call. A step not done after [`GpuOptions::timeout`] is an error.
    /// For a caller that must never block (the pipelined mode's render world); [`StepMetrics::device_wait`]
    /// is then zero.
    pub fn try_collect(&mut self) -> Option<Result<StepOutput, BackendError>> {
        if let Err(e) = self.usable() {
            return Some(Err(e));
        }
        let pending = self.pending.as_mut()?;
        if pending.gpu.is_some() {
            let _ = self.device.poll(wgpu::PollType::Poll);
            match self.step_ready() {
                Ok(true) => {}
                Ok(false)
                    if self.pending.as_ref().is_some_and(|p| p.start.elapsed() > self.options.timeout) =>
                {
                    let e = BackendError::Readback(format!("no result after {:?}", self.options.timeout));
                    self.pending = None;
                    return Some(Err(self.fail(e)));
                }
                Ok(false) => return None,
                Err(e) => {
                    self.pending = None;
                    return Some(Err(self.fail(e)));
                }
            }
        }
        Some(self.collect())
    }

    /// Whether every read of the pending step is mapped; starts the second read when the first one
    /// was too small. Never waits.
    fn step_ready(&mut self) -> Result<bool, BackendError> {
        let Some(gpu) = self.pending.as_mut().and_then(|p| p.gpu.as_mut()) else { return Ok(true) };
        let received = |rx: &MapReceiver, done: &mut bool| -> Result<bool, BackendError> {
            if !*done {
                match rx.try_recv() {
                    Ok(Ok(())) => *done = true,
                    Ok(Err(e)) => return Err(BackendError::Readback(e.to_string())),
                    Err(mpsc::TryRecvError::Empty) => {}
                    Err(mpsc::TryRecvError::Disconnected) => {
                        return Err(BackendError::Readback("the mapping callback was dropped".into()));
                    }
                }
            }
            Ok(*done)
        };
        if !received(&gpu.small_rx, &mut gpu.small_done)? {
            return Ok(false);
        }
        if let Some(rx) = &gpu.big_rx
            && !received(rx, &mut gpu.big_done)?
        {
            return Ok(false);
        }
        if let Some(r) = gpu.reread.as_mut() {
            return received(&r.rx, &mut r.done);
        }
        let totals = {
            let view = self.bufs.small_staging.get_mapped_range(0..12);
            let words: [u32; 3] = bytemuck::pod_read_unaligned(&view[..12]);
            Totals { kept: u64::from(words[0]), read: u64::from(words[2]) }
        };
        let estimate = gpu.estimate;
        let entries = self.pending.as_ref().map_or(0, |p| p.entries);
        if self.fits_first_read(totals, estimate) {
            return Ok(true);
        }
        let (staging, bytes, rx) = self.start_reread(totals, entries)?;
        if let Some(gpu) = self.pending.as_mut().and_then(|p| p.gpu.as_mut()) {
            gpu.reread = Some(Reread { staging, bytes, rx, done: false });
        }
        Ok(false)
    }

    /// Whether a step's records fit the outputs and those read back the first read of `estimate`.
    fn fits_first_read(&self, totals: Totals, estimate: u64) -> bool {
        !self.overflows(totals) && totals.read <= estimate
    }

    /// Whether a step's records outgrew the outputs (next records, contacts).
    fn overflows(&self, totals: Totals) -> bool {
        let next = 1 - self.cur;
        let b = &self.bufs;
        totals.kept > b.records[next].capacity().min(b.rec_edges.capacity())
            || totals.read > b.contacts.capacity()
    }

    /// Submits the second read of a step's records read back (recompacted first when they outgrew
    /// the outputs): a staging buffer of their bytes, mapped on the submission. Never waits.
    fn start_reread(
        &mut self,
        totals: Totals,
        entries: u32,
    ) -> Result<(wgpu::Buffer, u64, MapReceiver), BackendError> {
        let dev = self.device.clone();
        let mut encoder =
            dev.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("rtcd:reread") });
        self.encode_recompact(&mut encoder, totals, entries)?;
        let bytes = totals.read * std::mem::size_of::<GpuContactOut>() as u64;
        let staging = dev.create_buffer(&wgpu::BufferDescriptor {
            label: Some("rtcd:buffer:staging_reread"),
            size: bytes.max(4),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let (tx, rx) = mpsc::channel();
        if bytes > 0 {
            encoder.copy_buffer_to_buffer(self.bufs.contacts.buffer(), 0, &staging, 0, bytes);
        }
        encoder.map_buffer_on_submit(&staging, wgpu::MapMode::Read, 0..bytes.max(4), move |r| {
            let _ = tx.send(r);
        });
        self.queue.submit([encoder.finish()]);
        Ok((staging, bytes, rx))
    }

    /// When a step's records outgrew the outputs (next records, contacts): grows them and encodes
    /// the compaction again (the entries and the scans are intact; the slots' edge sums and the
    /// prediction count, read with the first, are summed again and not read). Nothing otherwise.
    fn encode_recompact(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        totals: Totals,
        entries: u32,
    ) -> Result<(), BackendError> {
        let next = 1 - self.cur;
        if !self.overflows(totals) {
            return Ok(());
        }
        let dev = self.device.clone();
        let too_large = |e: GpuError| BackendError::Device(e.to_string());
        self.bufs.records[next].reserve(&dev, encoder, totals.kept, 0).map_err(too_large)?;
        self.bufs.contacts.reserve(&dev, encoder, totals.read, 0).map_err(too_large)?;
        self.bufs.rec_edges.reserve(&dev, encoder, totals.kept + 1, 0).map_err(too_large)?;
        encode_compact(
            &dev,
            &self.kernels,
            &self.meshes,
            &self.bufs,
            &mut self.binds,
            next,
            entries,
            encoder,
            &mut untimed_pass,
        );
        Ok(())
    }

    /// `submit` then `collect`.
    pub fn step(&mut self, pairs: &[PairInput], opts: &StepOptions) -> Result<StepOutput, BackendError> {
        self.submit(pairs, opts)?;
        self.collect()
    }

    /// Encodes the step into `target`, or into an encoder of its own that it submits.
    fn encode_and_submit(
        &mut self,
        target: Option<&mut wgpu::CommandEncoder>,
        pairs: &[PairInput],
        opts: &StepOptions,
    ) -> Result<Pending, BackendError> {
        let start = Instant::now();
        let dev = self.device.clone();
        let too_large = |e: GpuError| BackendError::Device(e.to_string());
        let mut own = None;
        let encoder: &mut wgpu::CommandEncoder = match target {
            Some(e) => e,
            None => own.insert(
                dev.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("rtcd:step") }),
            ),
        };
        // Same input checks as the CPU backend.
        let (mut outputs, valid) = rtcd::narrow_phase::check_pairs(pairs);
        let mut metrics = StepMetrics { failed_pairs: pairs.len() - valid.len(), ..Default::default() };
        // Every byte written through the queue this step (meshes seen for the first time included).
        let mut upload = 0u64;
        // The contacts read back carry their pair's index in the bits above their kind.
        if valid.len() as u64 > (u32::MAX >> CONTACT_KIND_BITS) as u64 {
            return Err(BackendError::Device(format!(
                "a step of {} pairs is too large for the GPU backend (at most {})",
                valid.len(),
                u32::MAX >> CONTACT_KIND_BITS
            )));
        }

        // Lay out the flattened ray list: each pair's tracer is decided here from the host mirror.
        // First the meshes' places and the pairs' slots: looked up in parallel, the slots of the
        // pairs that left freed, and places and slots made one pair after another only for the
        // pairs new in their slots or with a mesh new to the device (both mutate the stores);
        // then, in parallel, each pair's plan from its own inputs and
        // mirror (keys are unique, so are slots); then, in order, the mirrors' updates and the
        // step's records.
        let base = self.params;
        let (last, table) = (&self.last_slots, &self.table);
        let mut slotted: Vec<Slotted> = valid
            .par_iter()
            .with_min_len(64)
            .map(|&i| {
                let p = &pairs[i];
                // A pair given at the same place as at the last step is found without a lookup.
                let held = match last.get(i) {
                    Some(&(key, slot)) if key == p.key => Some(slot),
                    _ => table.slot_of(&p.key),
                };
                let found = || {
                    // Held with the same meshes: not new ([`PairTable::assign`] would say so), and
                    // its meshes' places are those its slot keeps.
                    let slot = held.filter(|&s| table.mirror(s).mesh_ids == (p.mesh1.id(), p.mesh2.id()))?;
                    let handles = table.mirror(slot).handles;
                    Some(Slotted { input_index: i, handles, a: SlotAssignment { slot, new: false }, held })
                };
                found().unwrap_or(Slotted { input_index: i, handles: [u32::MAX; 2], a: UNASSIGNED, held })
            })
            .collect();
        // The pairs that left free their slots; a pair whose meshes changed keeps its own, new in it.
        for s in &slotted {
            if let Some(slot) = s.held {
                self.table.keep(slot);
            }
        }
        metrics.freed_pairs = self.table.free_unkept();
        for s in slotted.iter_mut().filter(|s| s.a == UNASSIGNED) {
            let p = &pairs[s.input_index];
            s.handles = [
                self.meshes.ensure(&dev, &self.queue, &mut *encoder, p.mesh1).map_err(too_large)?.1,
                self.meshes.ensure(&dev, &self.queue, &mut *encoder, p.mesh2).map_err(too_large)?.1,
            ];
            s.a = self
                .table
                .assign(&dev, &mut *encoder, p.key, (p.mesh1.id(), p.mesh2.id()))
                .map_err(too_large)?;
            self.table.mirror_mut(s.a.slot).handles = s.handles;
        }
        // Each pair's slot by its place in the input, for the next step's lookup.
        self.last_slots.clear();
        self.last_slots.resize(pairs.len(), (PairKey::default(), u32::MAX));
        for s in &slotted {
            self.last_slots[s.input_index] = (pairs[s.input_index].key, s.a.slot);
        }
        let decide_start = Instant::now();
        let plans: Vec<Plan> = slotted
            .par_iter()
            .with_min_len(32)
            .map(|s| plan_pair(&pairs[s.input_index], s.a, self.table.mirror(s.a.slot), &base, opts))
            .collect();
        let decide = decide_start.elapsed();
        // Counted in the loop over the plans below.
        let mut bounds = 0u32;
        // The contacts read back carry their pair's slot in the bits above their kind.
        let capacity = self.table.capacity();
        if capacity as u64 > (u32::MAX >> CONTACT_KIND_BITS) as u64 {
            return Err(BackendError::Device(format!(
                "a pair table of {capacity} slots is too large for the GPU backend (at most {})",
                u32::MAX >> CONTACT_KIND_BITS
            )));
        }
        // What is uploaded of the pairs: one pose per body, 5 flag bits per slot, and the links of
        // pairs new in their slots (or whose bodies moved slot); the kinds of new pairs of meshes.
        self.binds.begin_step();
        self.bodies.begin();
        let per_word = (32 / PAIR_FLAG_BITS) as usize;
        let mut slot_flags = vec![0u32; (capacity as usize).div_ceil(per_word)];
        let mut link_changes = Vec::new();
        let mut jobs = Vec::with_capacity(valid.len());
        let mut quiet = 0;
        let mut entries = 0u64;
        let mut edge_entries = 0u64;
        let motion_on = base.motion_rays && base.prediction;
        let mut motion_paths = 0u64;
        for (s, plan) in slotted.iter().zip(plans) {
            let p = &pairs[s.input_index];
            let a = s.a;
            metrics.separated_pairs += usize::from(plan.separated);
            bounds += u32::from(plan.bound.is_some());
            if plan.standard {
                // The new reference; its separation is made once the step's records are known
                // (`GpuNarrowPhase::finish`).
                let m = self.table.mirror_mut(a.slot);
                m.reference = Some(p.pos12);
                m.witness = plan.witness;
            }
            metrics.new_pairs += a.new as usize;
            // A pair held in its slot has its last step's link: its bodies' slots are checked
            // without a lookup, and its kind (its meshes') is the same.
            let last = self.table.mirror(a.slot).link.filter(|_| !a.new);
            let [body_a, body_b] =
                self.bodies.pair_bodies(p.key, plan.world, &p.pos12, last.map(|[x, y, _]| [x, y]));
            let meshes = &self.meshes;
            let kind = match last {
                Some([_, _, kind]) => kind,
                None => self.kinds.kind((p.mesh1.id(), p.mesh2.id()), || {
                    // Both meshes were placed above.
                    let place = |m| meshes.get(m).map_or(GpuMeshRef::default(), |(r, _)| r);
                    pair_statics(p, [place(p.mesh1), place(p.mesh2)], &base)
                }),
            };
            let m = self.table.mirror_mut(a.slot);
            if a.new || m.link != Some([body_a, body_b, kind]) {
                link_changes.push(GpuPairLink { slot: a.slot, body_a, body_b, kind });
                m.link = Some([body_a, body_b, kind]);
            }
            // The device traces the pair's motion paths from its slot's last pose, where that is the
            // pair's previous one; the host traces those of the others.
            let previous = p.previous.filter(|q| q.is_valid());
            // At most every vertex of both meshes is a path: past `MAX_DEVICE_MOTION_PATHS` in a
            // step (the device counts and scans the paths in 32 bits), the host traces the rest.
            let paths = (p.mesh1.positions().len() + p.mesh2.positions().len()) as u64;
            let device_motion = motion_on
                && !plan.quiet
                && !a.new
                && previous.is_some()
                && previous == m.last_pose
                && motion_paths + paths <= MAX_DEVICE_MOTION_PATHS;
            motion_paths += if device_motion { paths } else { 0 };
            m.last_pose = Some(p.pos12);
            let flags = PAIR_PRESENT
                | if plan.standard { PAIR_STANDARD } else { 0 }
                | if a.new { PAIR_NEW } else { 0 }
                | if plan.separated { PAIR_SEPARATED } else { 0 }
                | if device_motion { PAIR_MOTION } else { 0 };
            let slot = a.slot as usize;
            slot_flags[slot / per_word] |= flags << (PAIR_FLAG_BITS as usize * (slot % per_word));
            if plan.quiet {
                // Nothing to trace and nothing to make: the slot is in the step (its flags, its
                // link), the pair has no job.
                outputs[s.input_index].mode = StepMode::Iterative;
                quiet += 1;
                continue;
            }
            let [e0, e1] = plan.entries;
            let [x0, x1] = plan.edges;
            jobs.push(Job {
                input_index: s.input_index,
                pos12: p.pos12,
                meshes: s.handles,
                slot: a.slot,
                standard: plan.standard,
                bound: plan.bound,
                motion_figures: [0, 0],
                motion_contacts: Vec::new(),
                approach: Vec3::ZERO,
                tunnel_counts: [0, 0],
                reports: e0 + e1 + x0 + x1 > 0,
                device_motion,
                previous,
                tunnels: self.table.mirror(a.slot).tunnels,
                moving: false,
            });
            entries += e0 as u64 + e1 as u64 + x0 as u64 + x1 as u64;
            edge_entries += x0 as u64 + x1 as u64;
            if entries >= u32::MAX as u64 / 2 {
                return Err(BackendError::Device(format!(
                    "a step of {entries} rays is too large for one dispatch"
                )));
            }
        }
        metrics.pairs = jobs.len() + quiet;
        metrics.standard_pairs = jobs.iter().filter(|j| j.standard).count();
        metrics.iterative_pairs = metrics.pairs - metrics.standard_pairs;
        upload += self.meshes.take_uploaded();
        self.last_pairs = if slotted.is_empty() { 0 } else { capacity };
        if slotted.is_empty() {
            if let Some(own) = own.take() {
                self.queue.submit([own.finish()]);
            }
            metrics.upload_bytes = upload;
            return Ok(Pending {
                entries: 0,
                outputs,
                jobs,
                opts: *opts,
                metrics,
                start,
                submit_host: Duration::ZERO,
                decide,
                bounds,
                gpu: None,
            });
        }

        let e = entries as u32;
        let p_count = capacity;
        let next = 1 - self.cur;
        let b = &mut self.bufs;
        b.pairs.reserve(&dev, &mut *encoder, p_count as u64, 0).map_err(too_large)?;
        // The kept links grow with the table, and the kinds with the pairs of meshes, their content
        // kept (new links are scattered by a kernel, new kinds written past the kept ones).
        let kept = b.links.capacity();
        b.links.reserve(&dev, &mut *encoder, p_count as u64, kept).map_err(too_large)?;
        let (first_kind, new_kinds) = self.kinds.take_new();
        b.kinds
            .reserve(&dev, &mut *encoder, self.kinds.len() as u64, first_kind as u64)
            .map_err(too_large)?;
        b.link_changes.reserve(&dev, &mut *encoder, link_changes.len() as u64, 0).map_err(too_large)?;
        b.slot_flags.reserve(&dev, &mut *encoder, slot_flags.len() as u64, 0).map_err(too_large)?;
        b.bodies.reserve(&dev, &mut *encoder, self.bodies.poses().len() as u64, 0).map_err(too_large)?;
        b.pair_scan.reserve(&dev, &mut *encoder, p_count as u64 + 1, 0).map_err(too_large)?;
        b.entries.reserve(&dev, &mut *encoder, e as u64, 0).map_err(too_large)?;
        b.edge_jobs.reserve(&dev, &mut *encoder, edge_entries, 0).map_err(too_large)?;
        // Outputs (next records, contacts) are sized from the last step's count; `finish` grows them
        // and compacts again in the rare step that finds more.
        let out_estimate = (e as u64).min((2 * self.last_total).max(65_536));
        b.records[next].reserve(&dev, &mut *encoder, out_estimate, 0).map_err(too_large)?;
        // Last step's records' edges are kept (scanned below); this step's compaction writes the
        // next records'.
        let last_records = self.last_total.min(b.records[self.cur].capacity());
        b.rec_edges
            .reserve(&dev, &mut *encoder, (last_records + 1).max(out_estimate), last_records)
            .map_err(too_large)?;
        let rec_levels = scan::levels(last_records as u32 + 1).map_err(too_large)?;
        upload +=
            b.rec_scan_levels.prepare(&dev, &self.queue, &mut *encoder, &rec_levels).map_err(too_large)?;
        b.scan.reserve(&dev, &mut *encoder, e as u64 + 1, 0).map_err(too_large)?;
        b.contacts.reserve(&dev, &mut *encoder, out_estimate, 0).map_err(too_large)?;
        // Scan levels: e + 1 elements (the last is 0, so the scan ends with the total).
        let levels = scan::levels(e + 1).map_err(too_large)?;
        upload += b.scan_levels.prepare(&dev, &self.queue, &mut *encoder, &levels).map_err(too_large)?;
        b.read_scan.reserve(&dev, &mut *encoder, e as u64 + 1, 0).map_err(too_large)?;
        upload += b.read_scan_levels.prepare(&dev, &self.queue, &mut *encoder, &levels).map_err(too_large)?;
        b.edge_sums.reserve(&dev, &mut *encoder, 2 * p_count as u64, 0).map_err(too_large)?;
        // The motion paths: every slot's count and plan (written by `pair_assemble`), and a read of
        // the hits sized from the last step's.
        let any_device_motion = jobs.iter().any(|j| j.device_motion);
        b.motion_counts.reserve(&dev, &mut *encoder, p_count as u64 + 1, 0).map_err(too_large)?;
        b.motion_plans.reserve(&dev, &mut *encoder, p_count as u64, 0).map_err(too_large)?;
        b.motion_traced.reserve(&dev, &mut *encoder, p_count as u64, 0).map_err(too_large)?;
        let motion_read =
            if any_device_motion { (self.last_motion_hits * 3 / 2).max(FIRST_READ_MOTION_HITS) } else { 0 };
        b.motion_hits.reserve(&dev, &mut *encoder, motion_read, 0).map_err(too_large)?;
        let moving_words = if any_device_motion { (p_count as u64).div_ceil(32) } else { 0 };
        b.motion_moving.reserve(&dev, &mut *encoder, moving_words.max(1), 0).map_err(too_large)?;
        b.active_scan.reserve(&dev, &mut *encoder, p_count as u64 + 1, 0).map_err(too_large)?;
        // The small read: totals, counters, the counts of the slots with entries, timestamps, the
        // motion hits and the moving slots' bits.
        let reporting = jobs.iter().filter(|j| j.reports).count() as u64;
        let counts_len = SLOT_COUNTS as u64 * reporting;
        b.reported.reserve(&dev, &mut *encoder, counts_len, 0).map_err(too_large)?;
        let stamps_offset = COUNTS_OFFSET + 4 * counts_len;
        let hit_size = std::mem::size_of::<GpuMotionHit>() as u64;
        // At most: the hits follow the timestamps the step writes (known once its passes are).
        let small_capacity =
            stamps_offset + 16 * MAX_PASSES as u64 + hit_size * motion_read + 4 * moving_words;
        if small_capacity > b.small_staging_bytes {
            let bytes = small_capacity + small_capacity / 2;
            b.small_staging = dev.create_buffer(&wgpu::BufferDescriptor {
                label: Some("rtcd:buffer:staging_counts"),
                size: bytes,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            b.small_staging_bytes = bytes;
        }
        // The slots' scan: p_count + 1 elements.
        let pair_levels = scan::levels(p_count + 1).map_err(too_large)?;
        upload +=
            b.pair_scan_levels.prepare(&dev, &self.queue, &mut *encoder, &pair_levels).map_err(too_large)?;
        upload += b
            .active_scan_levels
            .prepare(&dev, &self.queue, &mut *encoder, &pair_levels)
            .map_err(too_large)?;
        if any_device_motion {
            upload += b
                .motion_scan_levels
                .prepare(&dev, &self.queue, &mut *encoder, &pair_levels)
                .map_err(too_large)?;
        }
        upload += b.kinds.write(&self.queue, first_kind as u64, &new_kinds);
        upload += b.link_changes.write(&self.queue, 0, &link_changes);
        upload += b.slot_flags.write(&self.queue, 0, &slot_flags);
        upload += b.bodies.write(&self.queue, 0, self.bodies.poses());
        let gpu_params = GpuParams {
            link_count: link_changes.len() as u32,
            prediction_distance: opts.prediction_distance,
            prediction: base.prediction as u32,
            reprojection: base.reprojection as u32,
            pair_count: p_count,
            entry_count: e,
            edge_rays: base.edge_rays as u32,
            read_all: opts.record_rays as u32,
        };
        self.queue.write_buffer(&b.params, 0, bytemuck::bytes_of(&gpu_params));
        upload += std::mem::size_of::<GpuParams>() as u64;
        metrics.upload_bytes = upload;
        encoder.clear_buffer(&b.counters, 0, None);
        if moving_words > 0 {
            encoder.clear_buffer(b.motion_moving.buffer(), 0, Some(4 * moving_words));
        }

        // Passes.
        let k = &self.kernels;
        let m = &self.meshes;
        let slots = &self.table.buffer;
        let binds = &mut self.binds;
        let mut passes: Vec<&'static str> = Vec::new();
        let ts = self.timestamps.as_ref();
        // The next pass's indirect dispatch, when it has one (its workgroups are then ignored).
        let indirect: Cell<Option<&wgpu::Buffer>> = Cell::new(None);
        let mut pass = |encoder: &mut wgpu::CommandEncoder,
                        pipe: &Pipeline,
                        bg: &wgpu::BindGroup,
                        groups: (u32, u32)| {
            let q = passes.len() as u32;
            debug_assert!(q < MAX_PASSES, "a step's passes beyond the {MAX_PASSES} timed");
            let timestamp_writes = ts.filter(|_| q < MAX_PASSES).map(|t| wgpu::ComputePassTimestampWrites {
                query_set: &t.set,
                beginning_of_pass_write_index: Some(2 * q),
                end_of_pass_write_index: Some(2 * q + 1),
            });
            let mut cp = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(pipe.kernel.label()),
                timestamp_writes,
            });
            cp.set_pipeline(&pipe.pipeline);
            cp.set_bind_group(0, bg, &[]);
            match indirect.take() {
                Some(args) => cp.dispatch_workgroups_indirect(args, 0),
                None => cp.dispatch_workgroups(groups.0, groups.1, 1),
            }
            passes.push(pipe.kernel.label());
        };
        let pairs_b = b.pairs.bound();
        let params_b = b.params.bound();
        if !link_changes.is_empty() {
            let pipe = k.get(Kernel::PairLinks);
            let bg = binds.bind(
                &dev,
                pipe,
                &[(4, params_b.clone()), (14, b.links.bound()), (16, b.link_changes.bound())],
            );
            pass(&mut *encoder, pipe, &bg, grid(link_changes.len() as u32));
        }
        // Where each of last step's records' edges begin (an exclusive scan), for the slots' edge
        // rays' counts and the edge rays' records.
        b.rec_scan_levels.encode(&dev, k, binds, &mut *encoder, &b.rec_edges, &rec_levels, &mut pass);
        {
            let pipe = k.get(Kernel::PairAssemble);
            let bg = binds.bind(
                &dev,
                pipe,
                &[
                    (3, pairs_b.clone()),
                    (4, params_b.clone()),
                    (5, slots.bound()),
                    (9, b.pair_scan.bound()),
                    (12, b.slot_flags.bound()),
                    (13, b.bodies.bound()),
                    (14, b.links.bound()),
                    (15, b.kinds.bound()),
                    (22, b.rec_edges.bound()),
                    (29, b.active_scan.bound()),
                    (31, b.motion_counts.bound()),
                    (32, b.motion_plans.bound()),
                    (33, b.motion_traced.bound()),
                ],
            );
            pass(&mut *encoder, pipe, &bg, grid(p_count + 1));
        }
        // Each slot with entries' place among them, for its counts' report.
        b.active_scan_levels.encode(&dev, k, binds, &mut *encoder, &b.active_scan, &pair_levels, &mut pass);
        // The pairs laid out on the device: each slot's first entry, from the scan of their counts.
        b.pair_scan_levels.encode(&dev, k, binds, &mut *encoder, &b.pair_scan, &pair_levels, &mut pass);
        {
            let pipe = k.get(Kernel::PairLayout);
            let bg = binds.bind(
                &dev,
                pipe,
                &[(3, pairs_b.clone()), (4, params_b.clone()), (9, b.pair_scan.bound())],
            );
            pass(&mut *encoder, pipe, &bg, grid(p_count));
        }
        {
            let pipe = k.get(Kernel::PairBegin);
            let bg =
                binds.bind(&dev, pipe, &[(3, pairs_b.clone()), (4, params_b.clone()), (5, slots.bound())]);
            pass(&mut *encoder, pipe, &bg, grid(p_count));
        }
        if any_device_motion {
            // The motion paths laid out by a scan of the slots' counts, and traced by as many threads
            // (an indirect dispatch: the host does not know how many).
            b.motion_scan_levels.encode(
                &dev,
                k,
                binds,
                &mut *encoder,
                &b.motion_counts,
                &pair_levels,
                &mut pass,
            );
            let pipe = k.get(Kernel::MotionArgs);
            let bg = binds.bind(
                &dev,
                pipe,
                &[(4, params_b.clone()), (31, b.motion_counts.bound()), (34, b.motion_args.bound())],
            );
            pass(&mut *encoder, pipe, &bg, (1, 1));
            let kernel = match base.tracer {
                TracerKind::BruteForce => Kernel::MotionPathsBrute,
                TracerKind::Bvh => Kernel::MotionPathsBvh,
            };
            let pipe = k.get(kernel);
            let bg = binds.bind(
                &dev,
                pipe,
                &[
                    (0, m.vertices.bound()),
                    (1, m.triangles.bound()),
                    (2, m.bvh.bound()),
                    (3, pairs_b.clone()),
                    (4, params_b.clone()),
                    (8, b.counters.bound()),
                    (31, b.motion_counts.bound()),
                    (32, b.motion_plans.bound()),
                    (33, b.motion_traced.bound()),
                    (35, b.motion_hits.bound()),
                    (37, m.rim_motions.bound()),
                ],
            );
            indirect.set(Some(&b.motion_args));
            pass(&mut *encoder, pipe, &bg, (0, 0));
        }
        let any_standard = jobs.iter().any(|j| j.standard);
        let any_iterative = jobs.iter().any(|j| !j.standard);
        let any_edges = edge_entries > 0;
        if e > 0 && any_standard {
            let kernel = match base.tracer {
                TracerKind::BruteForce => Kernel::TraceStandardBrute,
                TracerKind::Bvh => Kernel::TraceStandardBvh,
            };
            let pipe = k.get(kernel);
            let bg = binds.bind(
                &dev,
                pipe,
                &[
                    (0, m.vertices.bound()),
                    (1, m.triangles.bound()),
                    (2, m.bvh.bound()),
                    (3, pairs_b.clone()),
                    (4, params_b.clone()),
                    (7, b.entries.bound()),
                    (8, b.counters.bound()),
                ],
            );
            pass(&mut *encoder, pipe, &bg, grid(e));
        }
        if e > 0 && any_iterative {
            let pipe = k.get(Kernel::WalkIterative);
            let bg = binds.bind(
                &dev,
                pipe,
                &[
                    (0, m.vertices.bound()),
                    (1, m.triangles.bound()),
                    (3, pairs_b.clone()),
                    (4, params_b.clone()),
                    (5, slots.bound()),
                    (6, b.records[self.cur].bound()),
                    (7, b.entries.bound()),
                    (8, b.counters.bound()),
                ],
            );
            pass(&mut *encoder, pipe, &bg, grid(e));
        }
        if e > 0 && any_edges {
            // The edge rays to trace, gathered so that the tracing threads are dense.
            let pipe = k.get(Kernel::EdgeSelect);
            let bg = binds.bind(
                &dev,
                pipe,
                &[
                    (0, m.vertices.bound()),
                    (3, pairs_b.clone()),
                    (4, params_b.clone()),
                    (5, slots.bound()),
                    (6, b.records[self.cur].bound()),
                    (7, b.entries.bound()),
                    (8, b.counters.bound()),
                    (19, m.edges.bound()),
                    (20, m.vertex_edge_offsets.bound()),
                    (21, m.vertex_edge_list.bound()),
                    (22, b.rec_edges.bound()),
                    (23, b.edge_jobs.bound()),
                ],
            );
            pass(&mut *encoder, pipe, &bg, grid(e));
            let kernel = match base.tracer {
                TracerKind::BruteForce => Kernel::EdgeStepBrute,
                TracerKind::Bvh => Kernel::EdgeStepBvh,
            };
            let pipe = k.get(kernel);
            let bg = binds.bind(
                &dev,
                pipe,
                &[
                    (0, m.vertices.bound()),
                    (1, m.triangles.bound()),
                    (2, m.bvh.bound()),
                    (3, pairs_b.clone()),
                    (4, params_b.clone()),
                    (5, slots.bound()),
                    (7, b.entries.bound()),
                    (8, b.counters.bound()),
                    (19, m.edges.bound()),
                    (23, b.edge_jobs.bound()),
                ],
            );
            pass(&mut *encoder, pipe, &bg, grid(edge_entries as u32));
        }
        {
            let pipe = k.get(Kernel::FlagEntries);
            let bg = binds.bind(
                &dev,
                pipe,
                &[
                    (0, m.vertices.bound()),
                    (1, m.triangles.bound()),
                    (3, pairs_b.clone()),
                    (4, params_b.clone()),
                    (7, b.entries.bound()),
                    (9, b.scan.bound()),
                    (27, b.read_scan.bound()),
                ],
            );
            pass(&mut *encoder, pipe, &bg, grid(e + 1));
        }
        b.scan_levels.encode(&dev, k, binds, &mut *encoder, &b.scan, &levels, &mut pass);
        b.read_scan_levels.encode(&dev, k, binds, &mut *encoder, &b.read_scan, &levels, &mut pass);
        encoder.clear_buffer(b.edge_sums.buffer(), 0, Some(8 * p_count as u64));
        if e > 0 {
            encode_compact(&dev, k, m, b, binds, next, e, &mut *encoder, &mut pass);
        }
        {
            let pipe = k.get(Kernel::PairEnd);
            let bg = binds.bind(
                &dev,
                pipe,
                &[
                    (3, pairs_b.clone()),
                    (4, params_b.clone()),
                    (5, slots.bound()),
                    (9, b.scan.bound()),
                    (28, b.edge_sums.bound()),
                    (29, b.active_scan.bound()),
                    (30, b.reported.bound()),
                    (33, b.motion_traced.bound()),
                    (36, b.motion_moving.bound()),
                ],
            );
            pass(&mut *encoder, pipe, &bg, grid(p_count));
        }

        // Readback: the total and counters, the timestamps, and a first guess of the contacts; and
        // the entries the device laid out, which must be the host's count.
        encoder.copy_buffer_to_buffer(b.scan.buffer(), 4 * e as u64, &b.small_staging, 0, 4);
        encoder.copy_buffer_to_buffer(b.pair_scan.buffer(), 4 * p_count as u64, &b.small_staging, 4, 4);
        encoder.copy_buffer_to_buffer(b.read_scan.buffer(), 4 * e as u64, &b.small_staging, 8, 4);
        if reporting > 0 {
            let bytes = 4 * SLOT_COUNTS as u64 * reporting;
            encoder.copy_buffer_to_buffer(b.reported.buffer(), 0, &b.small_staging, COUNTS_OFFSET, bytes);
        }
        encoder.copy_buffer_to_buffer(&b.counters, 0, &b.small_staging, 16, 4 * COUNTERS as u64);
        let mut small_bytes = stamps_offset;
        if let Some(t) = ts {
            let n = passes.len().min(MAX_PASSES as usize) as u32;
            encoder.resolve_query_set(&t.set, 0..2 * n, &t.resolve, 0);
            encoder.copy_buffer_to_buffer(&t.resolve, 0, &b.small_staging, stamps_offset, 16 * n as u64);
            small_bytes += 16 * n as u64;
        }
        let hits_offset = small_bytes;
        let moving_offset = hits_offset + hit_size * motion_read;
        if motion_read > 0 {
            let bytes = hit_size * motion_read;
            encoder.copy_buffer_to_buffer(b.motion_hits.buffer(), 0, &b.small_staging, hits_offset, bytes);
            encoder.copy_buffer_to_buffer(
                b.motion_moving.buffer(),
                0,
                &b.small_staging,
                moving_offset,
                4 * moving_words,
            );
            small_bytes = moving_offset + 4 * moving_words;
        }
        let contact_size = std::mem::size_of::<GpuContactOut>() as u64;
        let estimate = (e as u64)
            .min((self.last_read + self.last_read / 2).max(FIRST_READ_CONTACTS))
            .min(b.big_staging_bytes / contact_size)
            .min(b.contacts.capacity());
        let (small_tx, small_rx) = mpsc::channel();
        encoder.map_buffer_on_submit(&b.small_staging, wgpu::MapMode::Read, 0..small_bytes, move |r| {
            let _ = small_tx.send(r);
        });
        let big_rx = (estimate > 0).then(|| {
            encoder.copy_buffer_to_buffer(b.contacts.buffer(), 0, &b.big_staging, 0, estimate * contact_size);
            let (tx, rx) = mpsc::channel();
            encoder.map_buffer_on_submit(
                &b.big_staging,
                wgpu::MapMode::Read,
                0..estimate * contact_size,
                move |r| {
                    let _ = tx.send(r);
                },
            );
            rx
        });
        let submission = own.take().map(|own| self.queue.submit([own.finish()]));
        Ok(Pending {
            entries: e,
            outputs,
            jobs,
            opts: *opts,
            metrics,
            start,
            submit_host: Duration::ZERO,
            decide,
            bounds,
            gpu: Some(PendingGpu {
                submission,
                small_rx,
                small_bytes,
                stamps_offset,
                hits_offset,
                motion_read,
                moving_offset,
                moving_words,
                big_rx,
                estimate,
                passes,
                small_done: false,
                big_done: false,
                reread: None,
            }),
        })
    }

    /// The motion rays' contacts of the step's pairs (`rtcd::detect::pair_motion_contacts`), made
    /// on the host in parallel once the device is done: for each pair, the contacts of the tunnels
    /// it keeps, then those of its paths. The device traced the paths of the jobs with
    /// `device_motion`: `hits` (of the `count` it appended, `read` of them read back) are those
    /// that met a front face, `moving_bits` a bit for each slot that traced any: each pair's are taken in the order of its directions and
    /// vertices and made as the CPU backend makes them (`rtcd::detect::motion_path_contact`).
    /// The host traces the paths of the other pairs with a previous pose, and of all when the hits
    /// outgrew their read. Returns how many pairs' paths the device traced, how many the host
    /// traced, and whether the read fell short.
    #[expect(clippy::too_many_arguments, reason = "one step's motion results and the jobs they go to")]
    fn motion_contacts(
        &self,
        jobs: &mut [Job],
        outputs: &[PairOutput],
        mut hits: Vec<GpuMotionHit>,
        moving_bits: &[u32],
        count: u64,
        read: u64,
        speculative: f32,
    ) -> Result<(u32, u32, bool), BackendError> {
        let fits = count <= read;
        let capacity = self.table.capacity() as usize;
        // Each slot that traced paths (its bit), and its hits, in the order of its directions and
        // vertices.
        let moving = |slot: usize| moving_bits.get(slot / 32).is_some_and(|w| w >> (slot % 32) & 1 == 1);
        let mut ranges = Vec::new();
        if fits && !hits.is_empty() {
            ranges.resize(capacity, (0usize, 0usize));
            for h in &hits {
                let slot = (h.slot_dir >> 1) as usize;
                if slot >= capacity {
                    return Err(BackendError::Readback(format!("a motion hit of slot {slot}")));
                }
            }
            hits.sort_unstable_by_key(|h| (h.slot_dir, h.vertex));
            let mut k = 0;
            while k < hits.len() {
                let slot = (hits[k].slot_dir >> 1) as usize;
                let s = k;
                while k < hits.len() && (hits[k].slot_dir >> 1) as usize == slot {
                    k += 1;
                }
                ranges[slot] = (s, k);
            }
            let mine: usize = jobs
                .iter()
                .filter(|j| j.device_motion)
                .map(|j| ranges[j.slot as usize])
                .map(|(s, e): (usize, usize)| e - s)
                .sum();
            if mine != hits.len() {
                return Err(BackendError::Readback(
                    "motion hits of a pair whose paths the device did not trace".into(),
                ));
            }
        }
        let (base, table, meshes) = (self.params, &self.table, &self.meshes);
        let hits = &hits;
        let (on_device, on_host) = jobs
            .par_iter_mut()
            .with_min_len(32)
            .map(|job| -> Result<(u32, u32), BackendError> {
                // Nothing to make: no tunnel kept, and no path traced (on the device: no bit), nor
                // any to trace on the host.
                let quiet = if job.device_motion {
                    fits && !moving(job.slot as usize)
                } else {
                    job.previous.is_none()
                };
                if quiet && !job.tunnels {
                    return Ok((u32::from(job.device_motion), 0));
                }
                let mut guard = table.motion(job.slot);
                let st = &mut *guard;
                let (m1, m2) = (&meshes.host(job.meshes[0]).mesh, &meshes.host(job.meshes[1]).mesh);
                let input = PairInput::new(outputs[job.input_index].key, m1, m2, job.pos12)
                    .with_previous(job.previous);
                let params = base.for_pair(m1, m2);
                let mut figures = StepMetrics::default();
                let done = if !job.device_motion {
                    job.approach = pair_motion_contacts(
                        &input,
                        &params,
                        speculative,
                        &mut st.tunnels,
                        &mut figures,
                        &mut job.motion_contacts,
                    );
                    (0, u32::from(job.previous.is_some()))
                } else {
                    let mut step = motion_tunnel_contacts(
                        &input,
                        &params,
                        &mut st.tunnels,
                        &mut figures,
                        &mut job.motion_contacts,
                    )
                    .unwrap_or_default();
                    let previous = job.previous.unwrap_or(job.pos12);
                    let done = if fits {
                        let frames = MotionFrames::new(&input, &previous);
                        let (s, e) = ranges.get(job.slot as usize).copied().unwrap_or((0, 0));
                        for h in &hits[s..e] {
                            let from_shape2 = h.slot_dir & 1 == 1;
                            let (from, to) = if from_shape2 { (m2, m1) } else { (m1, m2) };
                            if h.vertex as usize >= from.positions().len()
                                || h.triangle as usize >= to.triangles().len()
                            {
                                return Err(BackendError::Readback("a motion hit out of its meshes".into()));
                            }
                            let hit =
                                MotionHit { from_shape2, vertex: h.vertex, triangle: h.triangle, t: h.t };
                            motion_path_contact(
                                &input,
                                &frames,
                                hit,
                                &params,
                                speculative,
                                &mut step,
                                &mut st.tunnels,
                                &mut figures,
                                &mut job.motion_contacts,
                            );
                        }
                        // Its paths are counted with the step's, on the device.
                        job.moving = moving(job.slot as usize);
                        (1, 0)
                    } else {
                        trace_motion_paths(
                            &input,
                            &params,
                            speculative,
                            &mut step,
                            &mut st.tunnels,
                            &mut figures,
                            &mut job.motion_contacts,
                        );
                        (0, 1)
                    };
                    job.approach = step.approach;
                    done
                };
                job.motion_figures = [figures.motion_rays, figures.motion_contacts];
                job.tunnel_counts = st.tunnels.each_ref().map(|t| t.len() as u32);
                Ok(done)
            })
            .try_reduce(|| (0, 0), |a, b| Ok((a.0 + b.0, a.1 + b.1)))?;
        let device_jobs = jobs.iter().filter(|j| j.device_motion).count();
        Ok((on_device, on_host, !fits && device_jobs > 0))
    }

    fn wait(&self, submission: wgpu::SubmissionIndex) -> Result<(), BackendError> {
        self.device
            .poll(wgpu::PollType::Wait {
                submission_index: Some(submission),
                timeout: Some(self.options.timeout),
            })
            .map(|_| ())
            .map_err(|e| match e {
                wgpu::PollError::Timeout => {
                    BackendError::Readback(format!("no result after {:?}", self.options.timeout))
                }
                e => BackendError::Readback(e.to_string()),
            })?;
        self.usable()
    }

    fn finish(&mut self, pending: Pending) -> Result<StepOutput, BackendError> {
        let collect_start = Instant::now();
        let Pending {
            mut outputs,
            mut jobs,
            opts,
            mut metrics,
            start,
            submit_host,
            decide,
            bounds,
            gpu,
            entries,
        } = pending;
        let pending_entries = entries;
        let Some(gpu) = gpu else {
            metrics.time = start.elapsed();
            let collect = collect_start.elapsed();
            metrics.host_time = Some(submit_host + collect);
            self.last_host = HostPhases {
                plan: submit_host,
                decide,
                bounds,
                edges: Duration::ZERO,
                collect,
                bind_groups: self.binds.made(),
                motion_on_device: 0,
                motion_on_host: 0,
                motion_read_short: false,
            };
            metrics.device_wait = Some(Duration::ZERO);
            return Ok(StepOutput { pairs: outputs, metrics });
        };
        // Time blocked on the device, and the bytes mapped back.
        let mut waited = Duration::ZERO;
        let mut readback = gpu.small_bytes;
        // What `try_collect` found mapped is not waited for (nor counted).
        // The small read mapped means the step's submission is done: nothing to wait for then.
        let t = Instant::now();
        let mapped =
            |rx: &MapReceiver| crate::readback::await_mapping(&self.device, rx, self.options.timeout);
        if !gpu.small_done {
            if let Some(submission) = gpu.submission.clone() {
                self.wait(submission)?;
            }
            mapped(&gpu.small_rx)?;
            waited += t.elapsed();
        }
        let b = &self.bufs;
        let (totals, laid_out, counters, timings, slot_counts, hits, moving_bits) = {
            let view = b.small_staging.get_mapped_range(0..gpu.small_bytes);
            let words: Vec<u32> = bytemuck::pod_collect_to_vec(&view[..16 + 4 * COUNTERS]);
            let slot_counts: Vec<u32> =
                bytemuck::pod_collect_to_vec(&view[COUNTS_OFFSET as usize..gpu.stamps_offset as usize]);
            let stamps_end = if gpu.motion_read > 0 { gpu.hits_offset } else { gpu.small_bytes };
            let hit_count = u64::from(words[4 + COUNT_MOTION_HITS]).min(gpu.motion_read);
            let hit_bytes = hit_count * std::mem::size_of::<GpuMotionHit>() as u64;
            let hits: Vec<GpuMotionHit> = if hit_count > 0 {
                bytemuck::pod_collect_to_vec(&view[gpu.hits_offset as usize..][..hit_bytes as usize])
            } else {
                Vec::new()
            };
            let moving_bits: Vec<u32> = if gpu.moving_words > 0 {
                bytemuck::pod_collect_to_vec(
                    &view[gpu.moving_offset as usize..][..4 * gpu.moving_words as usize],
                )
            } else {
                Vec::new()
            };
            let mut timings = Vec::new();
            if let Some(t) = &self.timestamps {
                let stamps: Vec<u64> =
                    bytemuck::pod_collect_to_vec(&view[gpu.stamps_offset as usize..stamps_end as usize]);
                for (q, name) in gpu.passes.iter().enumerate().take(MAX_PASSES as usize) {
                    let ns = stamps[2 * q + 1].saturating_sub(stamps[2 * q]) as f64 * t.period as f64;
                    timings.push((*name, Duration::from_nanos(ns as u64)));
                }
            }
            let totals = Totals { kept: u64::from(words[0]), read: u64::from(words[2]) };
            (totals, words[1], words[4..4 + COUNTERS].to_vec(), timings, slot_counts, hits, moving_bits)
        };
        b.small_staging.unmap();
        if laid_out != pending_entries {
            return Err(BackendError::Device(format!(
                "the device laid out {laid_out} rays where the host planned {pending_entries}"
            )));
        }
        if let Some(rx) = &gpu.big_rx {
            if !gpu.big_done {
                let t = Instant::now();
                mapped(rx)?;
                waited += t.elapsed();
            }
            readback += gpu.estimate * std::mem::size_of::<GpuContactOut>() as u64;
        }
        let contact_size = std::mem::size_of::<GpuContactOut>() as u64;
        let overflow = self.overflows(totals);
        // A second read that `try_collect` started holds the whole range: it is the one read (the
        // outputs it grew no longer overflow, but the first read may not hold what was compacted
        // again).
        let in_staging = gpu.reread.is_none() && !overflow && totals.read <= gpu.estimate;
        let mut contacts: Vec<GpuContactOut> = Vec::new();
        if in_staging && totals.read > 0 {
            let view = self.bufs.big_staging.get_mapped_range(0..totals.read * contact_size);
            contacts = bytemuck::pod_collect_to_vec(&view);
        }
        if gpu.big_rx.is_some() {
            self.bufs.big_staging.unmap();
        }
        if !in_staging {
            let dev = self.device.clone();
            if gpu.reread.is_none() && overflow {
                let mut encoder = dev.create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("rtcd:recompact"),
                });
                self.encode_recompact(&mut encoder, totals, entries)?;
                let index = self.queue.submit([encoder.finish()]);
                let t = Instant::now();
                self.wait(index)?;
                waited += t.elapsed();
            }
            // More than the first copy guessed: read the whole range (one more round trip), and make
            // the staging buffer big enough for next time.
            let bytes = totals.read * contact_size;
            let c = match &gpu.reread {
                // Read by `try_collect`'s second read: mapped by now if `try_collect` saw it done,
                // else waited for here (`collect` after a `try_collect` that started it).
                Some(r) => {
                    if !r.done {
                        let t = Instant::now();
                        crate::readback::await_mapping(&self.device, &r.rx, self.options.timeout)?;
                        waited += t.elapsed();
                    }
                    // Nothing read back (no record of the step is read): an empty range cannot be
                    // viewed.
                    let data = if r.bytes == 0 {
                        Vec::new()
                    } else {
                        r.staging.get_mapped_range(0..r.bytes).to_vec()
                    };
                    r.staging.unmap();
                    data
                }
                None => {
                    // Counted as waiting as a whole (it is mostly the wait for the copy).
                    let t = Instant::now();
                    let c = crate::readback::read_buffer(
                        &dev,
                        &self.queue,
                        self.bufs.contacts.buffer(),
                        bytes,
                        self.options.timeout,
                    )?;
                    waited += t.elapsed();
                    c
                }
            };
            readback += bytes;
            contacts = bytemuck::pod_collect_to_vec(&c);
            let bigger =
                (2 * bytes).max(self.bufs.big_staging_bytes).min(dev.limits().max_buffer_size).max(bytes);
            self.bufs.big_staging = dev.create_buffer(&wgpu::BufferDescriptor {
                label: Some("rtcd:buffer:staging_contacts"),
                size: bigger,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            self.bufs.big_staging_bytes = bigger;
        }
        self.cur = 1 - self.cur;
        self.last_total = totals.kept;
        self.last_read = totals.read;
        metrics.standard_rays = counters[COUNT_STANDARD_RAYS] as u64;
        metrics.iterative_rays = counters[COUNT_ITERATIVE_RAYS] as u64;
        metrics.predictive_rays = counters[COUNT_PREDICTIVE_RAYS] as u64;
        metrics.iterative_hits = counters[COUNT_ITERATIVE_HITS] as u64;
        metrics.walk_steps = counters[COUNT_WALK_STEPS] as u64;
        metrics.edge_rays = counters[COUNT_EDGE_RAYS] as u64;
        metrics.prediction_records = counters[COUNT_PREDICTION_RECORDS] as u64;
        metrics.gpu_time = (!timings.is_empty()).then(|| timings.iter().map(|(_, d)| *d).sum());
        self.last_timings = timings;

        // Each job's contacts are contiguous (entries are laid out slot after slot, each contact
        // carries its pair's slot).
        let mut slot_ranges = vec![(0usize, 0usize); self.table.capacity() as usize];
        let mut k = 0;
        let mut last_slot = None;
        while k < contacts.len() {
            let slot = (contacts[k].pair_kind >> CONTACT_KIND_BITS) as usize;
            if slot >= slot_ranges.len() || last_slot.is_some_and(|l| l >= slot) {
                return Err(BackendError::Readback("contacts out of pair order".into()));
            }
            let s = k;
            while k < contacts.len() && (contacts[k].pair_kind >> CONTACT_KIND_BITS) as usize == slot {
                k += 1;
            }
            slot_ranges[slot] = (s, k);
            last_slot = Some(slot);
        }
        let in_jobs: usize = jobs.iter().map(|j| slot_ranges[j.slot as usize]).map(|(s, e)| e - s).sum();
        if in_jobs != contacts.len() {
            return Err(BackendError::Readback("contacts of a pair not in the step".into()));
        }
        let params = self.params;
        // The counts come back for the slots with entries, in slot order: each one's place among
        // them is the number of such slots before it.
        let capacity = self.table.capacity() as usize;
        let mut rank = vec![u32::MAX; capacity];
        for job in jobs.iter().filter(|j| j.reports) {
            rank[job.slot as usize] = 0;
        }
        let mut reporting = 0;
        for r in rank.iter_mut().filter(|r| **r == 0) {
            *r = reporting;
            reporting += 1;
        }
        if SLOT_COUNTS * reporting as usize != slot_counts.len() {
            return Err(BackendError::Readback(format!(
                "{} slots' counts read back for {reporting} slots with rays",
                slot_counts.len() / SLOT_COUNTS,
            )));
        }
        // The motion paths' contacts, before each pair's are merged with its rays'.
        let motion_hits = u64::from(counters[COUNT_MOTION_HITS]);
        let motion_start = Instant::now();
        let (motion_on_device, motion_on_host, motion_read_short) = self.motion_contacts(
            &mut jobs,
            &outputs,
            hits,
            &moving_bits,
            motion_hits,
            gpu.motion_read,
            opts.prediction_distance,
        )?;
        let motion_host = motion_start.elapsed();
        if gpu.motion_read > 0 {
            self.last_motion_hits = motion_hits;
        }
        // Each pair's output made in place, in parallel (a pair's job by its input's index), and
        // the pairs' figures summed as they come.
        let mut job_of = vec![u32::MAX; outputs.len()];
        for (j, job) in jobs.iter().enumerate() {
            job_of[job.input_index] = j as u32;
        }
        let meshes = &self.meshes;
        let figures = outputs
            .par_iter_mut()
            .enumerate()
            .with_min_len(32)
            .filter_map(|(i, o)| jobs.get(job_of[i] as usize).map(|job| (o, job)))
            .map_init(
                || (ReduceScratch::default(), Vec::new()),
                |(scratch, candidates), (o, job)| {
                    let (s, e) = slot_ranges[job.slot as usize];
                    let m = job.meshes.map(|h| meshes.host(h));
                    let (manifolds, rays, kept, figures) =
                        parse_pair(&contacts[s..e], job, m, &params, &opts, scratch, candidates)?;
                    o.mode = if job.standard { StepMode::Standard } else { StepMode::Iterative };
                    o.manifolds = manifolds;
                    o.rays = rays;
                    o.contacts = kept;
                    o.moving = job.moving || job.motion_figures[0] > 0;
                    Ok(figures)
                },
            )
            .try_reduce(PairFigures::default, |a, b| Ok(a.plus(&b)))?;
        figures.add_to(&mut metrics);
        // The paths the device traced, where the host did not trace them again.
        if gpu.motion_read > 0 && !motion_read_short {
            metrics.motion_rays += u64::from(counters[COUNT_MOTION_PATHS]);
        }
        // What the step leaves each slot (`pair_end.wgsl`), per direction: vertex records, edge
        // records, and the edge rays its next iterative step lays out (the edges at its prediction
        // records, and its edge records). A slot without rays keeps none. In parallel over the
        // slots, each with its job.
        let mut job_at = vec![u32::MAX; capacity];
        for (j, job) in jobs.iter().enumerate() {
            job_at[job.slot as usize] = j as u32;
        }
        // A standard step's new reference keeps its separation bound where the step left the pair
        // without records (the CPU backend's rule, `rtcd::detect::detect_pair`): the bound made
        // before the trace, or a descent from the pair's witness.
        let none = [0u32; SLOT_COUNTS];
        self.table.mirrors_mut().par_iter_mut().enumerate().with_min_len(256).for_each(|(slot, mirror)| {
            let Some(job) = job_at.get(slot).and_then(|&j| jobs.get(j as usize)) else { return };
            let c = match rank[slot] {
                k if job.reports => &slot_counts[SLOT_COUNTS * k as usize..][..SLOT_COUNTS],
                _ => &none[..],
            };
            mirror.rec_counts = [c[0], c[1]];
            mirror.edge_counts = [0, 1].map(|d| c[2 + d] + job.tunnel_counts[d]);
            mirror.tunnels = job.tunnel_counts != [0, 0];
            mirror.edge_entries = [0, 1].map(|d| c[4 + d] + c[2 + d]);
            if job.standard {
                let has_records = mirror.rec_counts != [0, 0] || mirror.edge_counts != [0, 0];
                mirror.separation = if params.iterative && !has_records {
                    job.bound.unwrap_or_else(|| {
                        let [m1, m2] = job.meshes.map(|h| &meshes.host(h).mesh);
                        let pair_params = params.for_pair(m1, m2);
                        separation_for_reach_from(m1, m2, &job.pos12, &pair_params, &mut mirror.witness)
                    })
                } else {
                    0.0
                };
            }
        });
        metrics.time = start.elapsed();
        let collect_host = collect_start.elapsed().saturating_sub(waited);
        metrics.host_time = Some(submit_host + collect_host);
        self.last_host = HostPhases {
            plan: submit_host,
            decide,
            bounds,
            edges: motion_host,
            collect: collect_host.saturating_sub(motion_host),
            bind_groups: self.binds.made(),
            motion_on_device,
            motion_on_host,
            motion_read_short,
        };
        metrics.device_wait = Some(waited);
        metrics.readback_bytes = readback;
        Ok(StepOutput { pairs: outputs, metrics })
    }
}

/// A pair's step from its contacts read back ([`parse_pair`]): manifolds, ray debug, kept contacts,
/// figures.
type PairParsed = (Vec<rtcd::ContactManifold>, Vec<RayDebug>, Vec<ContactCandidate>, PairFigures);

/// The figures of one pair's step that [`parse_pair`] makes, added to the step's [`StepMetrics`].
#[derive(Clone, Copy, Default)]
struct PairFigures {
    contact_rays: u64,
    edge_contacts: u64,
    motion_rays: u64,
    motion_contacts: u64,
    manifolds: u64,
    manifold_points: u64,
    cumulative_ray_length: f64,
    cumulative_depth: f64,
    max_depth: f32,
}

impl PairFigures {
    fn plus(&self, b: &Self) -> Self {
        Self {
            contact_rays: self.contact_rays + b.contact_rays,
            edge_contacts: self.edge_contacts + b.edge_contacts,
            motion_rays: self.motion_rays + b.motion_rays,
            motion_contacts: self.motion_contacts + b.motion_contacts,
            manifolds: self.manifolds + b.manifolds,
            manifold_points: self.manifold_points + b.manifold_points,
            cumulative_ray_length: self.cumulative_ray_length + b.cumulative_ray_length,
            cumulative_depth: self.cumulative_depth + b.cumulative_depth,
            max_depth: self.max_depth.max(b.max_depth),
        }
    }

    fn add_to(&self, m: &mut StepMetrics) {
        m.contact_rays += self.contact_rays;
        m.edge_contacts += self.edge_contacts;
        m.motion_rays += self.motion_rays;
        m.motion_contacts += self.motion_contacts;
        m.manifolds += self.manifolds;
        m.manifold_points += self.manifold_points;
        m.cumulative_ray_length += self.cumulative_ray_length;
        m.cumulative_depth += self.cumulative_depth;
        m.max_depth = m.max_depth.max(self.max_depth);
    }
}

/// A valid pair of a step with its meshes' places on the device and its slot.
struct Slotted {
    input_index: usize,
    /// Its meshes' host copies ([`MeshStore::host`]).
    handles: [u32; 2],
    a: SlotAssignment,
    /// The slot its key held before this step, whatever its meshes.
    held: Option<u32>,
}

/// A pair not yet given its slot and meshes' places (they are given one pair after another).
const UNASSIGNED: SlotAssignment = SlotAssignment { slot: u32::MAX, new: false };

/// What the host decides for a pair before its rays run ([`plan_pair`]).
struct Plan {
    standard: bool,
    separated: bool,
    /// An iterative step of a pair that keeps no record, crossing edge or tunnel, and has no flat
    /// body that moved (`rtcd::detect::rim_paths_due`): it finds nothing, and the CPU backend
    /// skips it whole (`rtcd::detect::is_quiet`), its motion rays too. Such a pair has no job:
    /// nothing runs for it on the host or on the device.
    quiet: bool,
    /// Vertex rays of each mesh (all its vertices for a standard trace, its records otherwise).
    entries: [u32; 2],
    /// Edge rays of each mesh (all its edges for a standard trace; the edges at its prediction
    /// records and its edge records otherwise; none without `RtcdParams::edge_rays`).
    edges: [u32; 2],
    /// Its world poses, where they make its relative pose ([`world_poses`]).
    world: Option<[rtcd::Pose; 2]>,
    /// The separation bound of a record-less pair's standard step, made before its trace
    /// (`rtcd::detect::separation_before_trace`); a standard step's new reference keeps it if the
    /// trace leaves no record ([`GpuNarrowPhase::finish`]).
    bound: Option<f32>,
    /// The witness features its separation descents start from.
    witness: [u32; 2],
}

/// A pair's plan for the step, from its inputs and its slot's mirror alone (run in parallel over
/// the pairs): the tracer (IRTCD 2013 Eq. 2 from the mirror's reference) and the separation test of
/// record-less pairs, the same decisions as the CPU backend's. The device lays the pair out from
/// them (`pair_assemble.wgsl`: entries, candidate regions). A standard step's separation at its
/// new reference is only read while the pair keeps no record (`needs_standard_trace`): as the CPU
/// backend does, the host makes it after the step ([`GpuNarrowPhase::finish`]), for the pairs the
/// trace left without one.
fn plan_pair(
    p: &PairInput,
    a: SlotAssignment,
    mirror: &SlotMirror,
    base: &RtcdParams,
    opts: &StepOptions,
) -> Plan {
    // Each pair with its own lengths, as on the CPU.
    let params = base.for_pair(p.mesh1, p.mesh2);
    let (radius1, radius2) = (p.mesh1.max_radius(), p.mesh2.max_radius());
    let standard = a.new
        || !params.iterative
        || opts.force_standard
        || needs_standard_trace(mirror.trace_reference().as_ref(), &p.pos12, radius1, radius2, &params);
    // As on the CPU: a pair without records whose meshes are out of the rays' reach gets a
    // standard step without rays (its records stay empty).
    let recordless = a.new || (mirror.rec_counts == [0, 0] && mirror.edge_counts == [0, 0]);
    let quiet = is_quiet(standard, !recordless, opts) && !rim_paths_due(p, &params);
    let mut witness = mirror.witness;
    let (bound, separated) = separation_before_trace(p, standard, recordless, &params, opts, &mut witness);
    let entries = if separated {
        [0, 0]
    } else if standard {
        [p.mesh1.positions().len() as u32, p.mesh2.positions().len() as u32]
    } else {
        mirror.rec_counts
    };
    let edges = if separated || !params.edge_rays {
        [0, 0]
    } else if standard {
        [p.mesh1.edges().len() as u32, p.mesh2.edges().len() as u32]
    } else {
        mirror.edge_entries
    };
    let world = world_poses(p.world, &p.pos12);
    Plan { standard, separated, quiet, entries, edges, bound, witness, world }
}

/// What a pair keeps on the device that its meshes (their places `meshes`) and lengths decide: its
/// kind's [`GpuPairStatic`], made once per pair of meshes ([`KindTable`]): its reach, solid-behind
/// and candidate-region boxes, its meshes' places (marked for the closed reach), its lengths.
fn pair_statics(p: &PairInput, meshes: [GpuMeshRef; 2], base: &RtcdParams) -> GpuPairStatic {
    let params = base.for_pair(p.mesh1, p.mesh2);
    let open = Aabb::new(Vec3::splat(f32::MIN), Vec3::splat(f32::MAX));
    let (reach1, reach2) = (
        reach_box(p.mesh2, p.mesh1, &params).unwrap_or(open),
        reach_box(p.mesh1, p.mesh2, &params).unwrap_or(open),
    );
    let (behind1, behind2) = (
        solid_behind_box(p.mesh2, p.mesh1, &params).unwrap_or(open),
        solid_behind_box(p.mesh1, p.mesh2, &params).unwrap_or(open),
    );
    let (box1, box2) = (p.mesh1.aabb(), p.mesh2.aabb());
    let (clip1, clip2) =
        (vertex_clip_box(p.mesh2, p.mesh1, &params), vertex_clip_box(p.mesh1, p.mesh2, &params));
    // The motion rays' lengths (`rtcd::detect::pair_motion_contacts`): shape 1's vertices move
    // into shape 2 (direction 0), shape 2's into shape 1.
    let (a, b) = (motion_lengths(p.mesh1, p.mesh2, &params), motion_lengths(p.mesh2, p.mesh1, &params));
    GpuPairStatic {
        reach_a_min: vec4(reach1.min, 0.0),
        reach_a_max: vec4(reach1.max, 0.0),
        reach_b_min: vec4(reach2.min, 0.0),
        reach_b_max: vec4(reach2.max, 0.0),
        behind_a_min: vec4(behind1.min, 0.0),
        behind_a_max: vec4(behind1.max, 0.0),
        behind_b_min: vec4(behind2.min, 0.0),
        behind_b_max: vec4(behind2.max, 0.0),
        box_a_min: vec4(box1.min, 0.0),
        box_a_max: vec4(box1.max, 0.0),
        box_b_min: vec4(box2.min, 0.0),
        box_b_max: vec4(box2.max, 0.0),
        clip_a_min: vec4(clip1.min, 0.0),
        clip_a_max: vec4(clip1.max, 0.0),
        clip_b_min: vec4(clip2.min, 0.0),
        clip_b_max: vec4(clip2.max, 0.0),
        // Rays into a closed mesh take the closed reach per pair (`closed_reach_into`).
        mesh_a: closed_reach_ref(meshes[0], p.mesh1, &params),
        mesh_b: closed_reach_ref(meshes[1], p.mesh2, &params),
        culling_dist: params.culling_dist,
        max_it: params.max_it,
        candidate_extension: params.candidate_extension(),
        radius_a: p.mesh1.max_radius(),
        radius_b: p.mesh2.max_radius(),
        motion_floor: a.floor,
        motion_floor_b: b.floor,
        motion_own: u32::from(a.own) | u32::from(b.own) << 1,
        least_a: a.least,
        least_b: b.least,
        other_a: a.other,
        other_b: b.other,
    }
}

/// `r`, where `mesh` lives, marked [`MESH_REACH_CLOSED`] when the other mesh's vertex rays into it
/// take the closed reach in a pair of `params` ([`closed_reach_into`]).
fn closed_reach_ref(r: GpuMeshRef, mesh: &rtcd::RtcdMesh, params: &RtcdParams) -> GpuMeshRef {
    let closed = if closed_reach_into(mesh, params) { MESH_REACH_CLOSED } else { 0 };
    GpuMeshRef { solid_behind: r.solid_behind | closed, ..r }
}

/// Encodes the compaction pass (entries → next records and contacts).
#[expect(clippy::too_many_arguments, reason = "the per-pair inputs of one step, passed as they are used")]
fn encode_compact(
    dev: &wgpu::Device,
    kernels: &Kernels,
    meshes: &MeshStore,
    b: &StepBuffers,
    binds: &mut BindCache,
    next: usize,
    entries: u32,
    encoder: &mut wgpu::CommandEncoder,
    pass: &mut impl FnMut(&mut wgpu::CommandEncoder, &Pipeline, &wgpu::BindGroup, (u32, u32)),
) {
    let pipe = kernels.get(Kernel::Compact);
    let bg = binds.bind(
        dev,
        pipe,
        &[
            (3, b.pairs.bound()),
            (4, b.params.bound()),
            (7, b.entries.bound()),
            (8, b.counters.bound()),
            (9, b.scan.bound()),
            (10, b.records[next].bound()),
            (11, b.contacts.bound()),
            (19, meshes.edges.bound()),
            (20, meshes.vertex_edge_offsets.bound()),
            (21, meshes.vertex_edge_list.bound()),
            (22, b.rec_edges.bound()),
            (27, b.read_scan.bound()),
            (28, b.edge_sums.bound()),
        ],
    );
    pass(encoder, pipe, &bg, grid(entries));
}

/// The contact the CPU backend makes of the ray `c` of a pair (`pos12`, its meshes `meshes`, shape
/// 1's first): the ray from the casting vertex along its inward normal (against a box, along the
/// face's normal: `rtcd::detect` makes box contacts so), in the hit mesh's frame, re-projected
/// (`rtcd::contact::reproject`). Also the ray's direction, in the hit mesh's frame.
/// `None` for a vertex or triangle the meshes do not have (a corrupt readback).
fn candidate_of(
    c: &GpuContactOut,
    pos12: &rtcd::Pose,
    pos21: &rtcd::Pose,
    meshes: [&HostMesh; 2],
    reprojection: bool,
) -> Option<(ContactCandidate, Vec3)> {
    let from_shape2 = (c.pair_kind >> 4) & 1 == 1;
    let (from, to, from_to) =
        if from_shape2 { (meshes[1], meshes[0], pos12) } else { (meshes[0], meshes[1], pos21) };
    let (v, tri) = (c.vertex as usize, c.triangle as usize);
    let (p, n, n_tri) =
        (*from.mesh.positions().get(v)?, *from.mesh.normals().get(v)?, *to.mesh.triangle_normals().get(tri)?);
    let origin = from_to.transform_point(p);
    let (dir, normal) = if to.cuboid {
        let n = box_face_normal(c.triangle);
        (n, n)
    } else {
        (from_to.transform_vector(-n), n_tri)
    };
    let ray = RayContact { from_shape2, vertex: c.vertex, triangle: c.triangle, origin, dir, t: c.t, normal };
    Some((reproject(&ray, pos12, reprojection), dir))
}

/// Turns one pair's compacted rays into manifolds, debug rays, metrics and its slot's counts. The
/// edge rays' crossings are traced again here (`rtcd::detect::edge_crossing`, from the host's
/// copies of the meshes) to make their contacts, and their ways out chosen as the CPU backend
/// chooses them.
fn parse_pair(
    contacts: &[GpuContactOut],
    job: &Job,
    meshes: [&HostMesh; 2],
    params: &RtcdParams,
    opts: &StepOptions,
    scratch: &mut ReduceScratch,
    candidates: &mut Vec<ContactCandidate>,
) -> Result<PairParsed, BackendError> {
    let mut m = PairFigures::default();
    [m.motion_rays, m.motion_contacts] = job.motion_figures;
    if contacts.is_empty() && job.motion_contacts.is_empty() {
        return Ok((Vec::new(), Vec::new(), Vec::new(), m));
    }
    let mut crossings: Vec<(u32, u32)> = Vec::new();
    let mut rays = Vec::new();
    candidates.clear();
    candidates.reserve(contacts.len() + job.motion_contacts.len());
    let pos21 = job.pos12.inverse();
    let out_of_meshes = |vertex: u32, triangle: u32| {
        BackendError::Readback(format!(
            "a contact of vertex {vertex} and triangle {triangle} out of its meshes"
        ))
    };
    for c in contacts {
        let (vertex, triangle, t) = (c.vertex, c.triangle, c.t);
        let kind = c.pair_kind & ((1 << CONTACT_KIND_BITS) - 1);
        let outcome = kind & 3;
        let dir = ((kind >> 4) & 1) as usize;
        let (from, to) = if dir == 1 { (meshes[1], meshes[0]) } else { (meshes[0], meshes[1]) };
        if (kind >> 2) & 3 == RAY_EDGE {
            // A crossing, traced again below (with the debug rays, an edge kept for the next step
            // too, which makes nothing).
            if vertex as usize >= from.mesh.edges().len() {
                return Err(BackendError::Readback(format!("an edge ray of edge {vertex} out of its mesh")));
            }
            if outcome == OUTCOME_CONTACT {
                crossings.push((dir as u32, vertex));
            }
            continue;
        }
        if vertex as usize >= from.mesh.positions().len()
            || triangle as usize >= to.mesh.triangle_normals().len()
        {
            return Err(out_of_meshes(vertex, triangle));
        }
        // A prediction the device found beyond the prediction distance, or that makes no contact:
        // its record alone, read back only with the debug rays (its ray's contact is made for them).
        if outcome != OUTCOME_CONTACT && kind & ENTRY_RECORD_ONLY != 0 && !opts.record_rays {
            continue;
        }
        let (cand, ray_dir) = candidate_of(c, &job.pos12, &pos21, meshes, params.reprojection)
            .ok_or_else(|| out_of_meshes(vertex, triangle))?;
        let dist = cand.dist;
        if outcome == OUTCOME_CONTACT {
            m.contact_rays += 1;
            m.cumulative_ray_length += t as f64;
            m.cumulative_depth += -dist as f64;
            m.max_depth = m.max_depth.max(-dist);
            candidates.push(cand);
        } else if dist <= opts.prediction_distance && kind & ENTRY_RECORD_ONLY == 0 {
            candidates.push(cand);
        }
        if opts.record_rays {
            let origin = if dir == 0 { cand.p1 } else { cand.p2 };
            // The ray in shape 1's frame: direction 0 casts from shape 1, in shape 2's frame.
            let ray = if dir == 0 { job.pos12.transform_vector(ray_dir) } else { ray_dir };
            rays.push(RayDebug {
                origin,
                end: origin + ray * t,
                kind: match (kind >> 2) & 3 {
                    RAY_ITERATIVE => RayKind::Iterative,
                    RAY_PREDICTIVE => RayKind::Predictive,
                    _ => RayKind::Standard,
                },
                outcome: if outcome == OUTCOME_CONTACT {
                    RayOutcome::Contact
                } else {
                    RayOutcome::Prediction
                },
                from_shape2: dir == 1,
                vertex,
                triangle,
                t,
            });
        }
    }
    // The crossing edges, in the CPU backend's order (direction 0's first, each in increasing edge
    // order), traced again from the host's copies of the meshes: the device found them, the host
    // makes their contacts with the same function as the CPU backend.
    crossings.sort_unstable();
    let mut found = Vec::with_capacity(crossings.len());
    for (dir, edge) in crossings {
        let (from, to, from_to) = if dir == 1 {
            (&meshes[1].mesh, &meshes[0].mesh, job.pos12)
        } else {
            (&meshes[0].mesh, &meshes[1].mesh, pos21)
        };
        if let EdgeTest::Crossing(c) = edge_crossing(from, to, &from_to, edge, params.tracer) {
            found.push((c, dir == 1));
        }
    }
    let mut edge_metrics = StepMetrics { edge_contacts: found.len() as u64, ..Default::default() };
    let mut edge_contacts = Vec::with_capacity(found.len());
    edge_crossing_contacts(&job.pos12, job.approach, found, &mut edge_metrics, &mut edge_contacts);
    m.edge_contacts = edge_metrics.edge_contacts;
    // The edge contacts after the vertex rays' candidates, as the CPU backend orders them.
    for c in &edge_contacts {
        m.cumulative_depth += (-c.dist) as f64;
        m.max_depth = m.max_depth.max(-c.dist);
    }
    candidates.extend_from_slice(&edge_contacts);
    merge_motion_contacts(candidates, &job.motion_contacts, job.approach);
    let mut manifolds = Vec::new();
    if !opts.skip_manifolds {
        reduce_manifolds_with(candidates, &job.pos12, params.manifold_angle, scratch, &mut manifolds);
    }
    // Kept as they are: moved out when the reduction is skipped (the next pair reserves its own).
    let kept = match (opts.keep_contacts, opts.skip_manifolds) {
        (false, _) => Vec::new(),
        (true, true) => std::mem::take(candidates),
        (true, false) => candidates.clone(),
    };
    m.manifolds = manifolds.len() as u64;
    m.manifold_points = manifolds.iter().map(|x| x.points.len() as u64).sum();
    Ok((manifolds, rays, kept, m))
}

impl NarrowPhaseBackend for GpuNarrowPhase {
    fn name(&self) -> String {
        format!("gpu ({})", self.adapter)
    }
    fn params(&self) -> &RtcdParams {
        &self.params
    }
    fn step(&mut self, pairs: &[PairInput], opts: &StepOptions) -> Result<StepOutput, BackendError> {
        GpuNarrowPhase::step(self, pairs, opts)
    }
}
