//! What users configure: the backend and the algorithm's parameters.

use std::time::Duration;

use bevy::prelude::*;
use rtcd::RtcdParams;

/// How the GPU backend is scheduled (`docs/architecture.md`, "GPU modes").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Reflect)]
pub enum GpuMode {
    /// The dispatch runs in the render world (a system in Bevy's `RenderGraph` schedule, on the
    /// `RenderDevice`) from the poses of the end of a tick; the next tick uses its results, with
    /// contact depths refreshed on the CPU from the current poses. Needs the render plugins; without
    /// them the plugin falls back to `Immediate`.
    #[default]
    Pipelined,
    /// The fixed-tick system submits and waits (bounded) for the results inside the tick:
    /// deterministic, for headless servers and tests. Runs on Bevy's `RenderDevice` when there is
    /// one, on a device the plugin creates otherwise.
    Immediate,
}

/// Which narrow-phase backend computes the ray-traced contacts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Reflect)]
pub enum RtcdBackend {
    /// The GPU when a hardware adapter is present (pipelined with a renderer, immediate without),
    /// the CPU otherwise (no adapter, or only a software one such as llvmpipe, which the CPU
    /// backend outruns; [`RtcdSettings::allow_software_adapter`] lets it take a software one).
    /// Why it chose is logged when the backend starts and kept in
    /// [`RtcdDiagnostics::backend_reason`](crate::RtcdDiagnostics::backend_reason).
    #[default]
    Auto,
    /// The CPU backend (`rtcd::NarrowPhase`, parallel with rayon). No GPU needed.
    Cpu,
    /// The GPU backend (`rtcd_wgpu`); falls back to the CPU with a warning when it cannot start or
    /// fails.
    Gpu {
        /// Scheduling.
        mode: GpuMode,
    },
}

/// Where the algorithm's parameters come from.
#[derive(Clone, Copy, Debug)]
pub enum RtcdParamsSource {
    /// `RtcdParams::from_meshes` over the meshes ready when the first ray-traced collider appears,
    /// then `adjust` (e.g. to pick the brute-force tracer).
    FromMeshes {
        /// Applied to the derived parameters.
        adjust: fn(RtcdParams) -> RtcdParams,
    },
    /// These parameters, as they are.
    Fixed(RtcdParams),
}

impl Default for RtcdParamsSource {
    fn default() -> Self {
        Self::FromMeshes { adjust: |p| p }
    }
}

/// Settings of [`RtcdPlugin`](crate::RtcdPlugin), a resource (read when the backend starts).
#[derive(Resource, Clone, Debug)]
pub struct RtcdSettings {
    /// The backend.
    pub backend: RtcdBackend,
    /// The algorithm's parameters (`displacement_threshold`, `max_it`, `distance_extension`,
    /// `culling_dist`, tracer, prediction, re-projection; see `rtcd::RtcdParams`).
    pub params: RtcdParamsSource,
    /// Record every ray of every step (the debug overlay turns this on).
    pub record_rays: bool,
    /// Longest wait for GPU results before the GPU backend is abandoned for the CPU one
    /// (`Duration::MAX`: wait for ever; zero abandons it at its first step, with a warning).
    pub gpu_timeout: Duration,
    /// Give dynamic bodies with an `RtcdCollider` (and no `SoftCcd` of their own) Rapier's soft CCD
    /// with a prediction of its own mesh's `culling_dist` (`RtcdParams::for_pair` of the mesh with
    /// itself): a fast body's pairs then get speculative contacts from
    /// the predictive rays one step ahead, up to that culling distance, so impacts faster than
    /// Rapier's prediction distance per tick are met before they sink in. Rapier's solver takes a
    /// speculative point only where the bodies' velocities before the step close its gap: a body
    /// that lands on one side and turns can still sink its other side in for a tick. The
    /// prediction follows the body's colliders (the largest of theirs) as they are built and
    /// removed; turned off, the plugin takes back the soft CCD it gave.
    pub soft_ccd: bool,
    /// Follow Rapier's contact recycling (`IntegrationParameters::contact_recycling`, on by default
    /// in Rapier): pairs Rapier recycles this tick (they barely moved since their contacts were
    /// computed: they keep them, as every other Rapier pair does) are not traced, and their ray
    /// state is kept (`RtcdDriver::detect_recycling`). On by default. Off: the plugin turns Rapier's
    /// recycling off for the whole world (every pair, ours or not, is then updated every tick) and
    /// every pair of ours is traced every tick.
    ///
    /// Following it, a settling pile traces only the pairs that moved, for slightly more
    /// penetration (a recycled pair's contacts are a few ticks old, as in plain Rapier); in the
    /// `falling_objects` example the pile falls asleep with it and does not without (figures in
    /// `docs/benchmarks.md`). Not followed by the pipelined GPU mode, whose results are a tick old:
    /// recycling is turned off there.
    pub contact_recycling: bool,
    /// Let [`RtcdBackend::Auto`] pick the GPU on a software adapter (a CPU device type, such as
    /// Mesa's llvmpipe/lavapipe): off by default, since the CPU backend outruns it; on for CI
    /// machines without a GPU that must run the GPU path. `Gpu { .. }` runs on any adapter anyway.
    pub allow_software_adapter: bool,
    /// Hand a deep overlap to Rapier's solver as one push
    /// (`rtcd_rapier::CacheSettings::merge_deep_overlaps`): where two of a pair's contact groups are
    /// deeper than what Rapier's `max_corrective_velocity` removes in two steps, they become one
    /// group of one normal, so bodies spawned into each other come apart without being launched. On
    /// by default.
    pub merge_deep_overlaps: bool,
    /// Bound the depths handed to Rapier's solver (`rtcd_rapier::DepthBound`; the
    /// `rtcd_rapier::depth_bound` module): `Corrective` pushes deep overlaps out at a bounded rate,
    /// and hard landings too. `Off` by default.
    pub depth_bound: rtcd_rapier::DepthBound,
}

impl Default for RtcdSettings {
    fn default() -> Self {
        Self {
            backend: RtcdBackend::Auto,
            params: RtcdParamsSource::default(),
            record_rays: false,
            gpu_timeout: Duration::from_secs(10),
            soft_ccd: true,
            contact_recycling: true,
            allow_software_adapter: false,
            merge_deep_overlaps: true,
            depth_bound: rtcd_rapier::DepthBound::default(),
        }
    }
}

impl RtcdSettings {
    /// Settings with this backend.
    pub fn with_backend(backend: RtcdBackend) -> Self {
        Self { backend, ..Default::default() }
    }
}
