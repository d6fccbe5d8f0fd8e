//! Per-step figures of the integration: the batch's narrow-phase metrics, what the dispatcher did
//! with them during Rapier's step (cache hits and misses), and times.

use std::time::Duration;

use rtcd::StepMetrics;

use crate::cache::CacheCounters;

/// Figures of the last step: the batch pass ([`RtcdDriver::detect`](crate::RtcdDriver::detect)) and,
/// once Rapier's step has run, the dispatcher's counters for that step.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RtcdMetrics {
    /// Name of the backend that ran the batch (e.g. `"cpu"`).
    pub backend: String,
    /// Whether the injected backend failed at some point and the CPU fallback took over for good.
    pub fell_back: bool,
    /// Colliders the batch saw: our meshes, the cuboids and the level colliders.
    pub colliders: usize,
    /// Candidate pairs of the batch's broad phase, sent to the backend.
    pub batch_pairs: usize,
    /// The backend's figures for the batch (rays, depths, its own time). Its `manifolds` and
    /// `manifold_points` stay 0: the batch asks for the raw candidates and reduces them itself (see
    /// [`Self::manifolds`]).
    pub narrow_phase: StepMetrics,
    /// Manifolds the batch published for Rapier (after the two-tier reduction), all pairs.
    pub manifolds: usize,
    /// Their points: the contact points Rapier's solver gets from the batch this step (each within
    /// its pair's prediction distance, or its reach when the batch looks several steps ahead).
    pub manifold_points: usize,
    /// Pairs the batch held because Rapier recycles them this step
    /// ([`RtcdDriver::detect_recycling`](crate::RtcdDriver::detect_recycling)): nothing of theirs is
    /// published. The CPU backend does not trace them (its [`StepMetrics::held_pairs`] counts them
    /// too); the GPU backend traces them anyway, to keep its per-pair records in one compacted
    /// buffer, and its results for them are dropped.
    pub held_pairs: usize,
    /// Contact points Rapier keeps this step for the pairs it recycles (the batch held them,
    /// [`RtcdDriver::detect_recycling`](crate::RtcdDriver::detect_recycling)): the points the batch
    /// handed over at each held pair's last update. With [`Self::manifold_points`], every point
    /// Rapier's solver holds from us.
    pub held_points: usize,
    /// What the dispatcher did during Rapier's step: pairs served from the batch (hits), computed on
    /// the spot (misses), refreshed, or skipped as separated.
    pub cache: CacheCounters,
    /// Our broad phase (collecting colliders, poses, sort and sweep).
    pub broad_phase_time: Duration,
    /// The whole batch pass: broad phase, backend step and publishing to the cache.
    pub detect_time: Duration,
}

impl RtcdMetrics {
    /// Share of our pairs Rapier asked for that the batch had computed (1 when none was asked for).
    pub fn hit_rate(&self) -> f64 {
        let served = self.cache.hits + self.cache.misses + self.cache.refreshed;
        if served == 0 { 1.0 } else { self.cache.hits as f64 / served as f64 }
    }

    /// Time of the whole narrow phase for our pairs: the batch plus the misses computed in the step.
    pub fn total_time(&self) -> Duration {
        self.detect_time + self.cache.miss_time
    }
}
