//! [`RtcdDiagnostics`]: the last tick's narrow-phase figures, as a resource and in Bevy's
//! diagnostics store (so `LogDiagnosticsPlugin` and on-screen overlays can show them).

use std::time::Duration;

use bevy::{
    diagnostic::{Diagnostic, DiagnosticPath, Diagnostics, RegisterDiagnostic},
    prelude::*,
};

use crate::RtcdNarrowPhase;

/// Figures of the last fixed tick. In pipelined mode the work figures (time, rays, pairs) are those
/// of the batch published this tick, and 0 on a tick where no results came back, but for the pairs
/// the dispatcher computed on the spot; [`Self::contacts`] and [`Self::max_depth`] describe the
/// results in use.
#[derive(Resource, Clone, Debug, Default, PartialEq)]
pub struct RtcdDiagnostics {
    /// Backend whose results Rapier's solver got this tick (e.g. `"cpu"`,
    /// `"gpu immediate (NVIDIA ...)"`, `"gpu pipelined (NVIDIA ...)"`): `"cpu"` once the CPU backend
    /// has taken over from a GPU one ([`Self::fell_back`]). In pipelined mode, the GPU's results
    /// reach a later tick ([`Self::latency_ticks`]); pairs they do not cover (new pairs, and every
    /// pair before the first results come back) are computed on the CPU, counted in
    /// [`Self::cache_misses`].
    pub backend: String,
    /// The GPU backend was asked for (or chosen by [`RtcdBackend::Auto`](crate::RtcdBackend::Auto))
    /// but could not start, or failed during the run, and the CPU backend took over for good
    /// ([`Self::backend_reason`] says why). Tests and apps that need the GPU should check it.
    pub fell_back: bool,
    /// Rapier did not step between the plugin's narrow phase and its diagnostics for several ticks
    /// in a row, its physics running (warned once): `RapierPhysicsPlugin` runs in another schedule
    /// than `RtcdPlugin` (Rapier's default, `PostUpdate`, without `.in_fixed_schedule()`), so the
    /// batch is not computed for the poses Rapier steps from. Apps and tests can check it.
    pub rapier_out_of_step: bool,
    /// Why [`Self::backend`] runs: what [`RtcdBackend::Auto`](crate::RtcdBackend::Auto) chose and
    /// why (e.g. that the only adapter is a software one), or why the GPU backend asked for is not
    /// running; empty when the backend named in the settings runs.
    pub backend_reason: String,
    /// How many ticks late the contacts' batch results are: the ticks between the tick that
    /// prepared the batch (from the poses the next tick starts with) and this one. 0 on the CPU and
    /// in immediate mode (traced inside the tick). In pipelined mode the render world submits a
    /// batch without waiting and the results are taken once the GPU is done: 1 when the GPU is done
    /// before the next tick's narrow phase, 2 or more when it is not (the render world keeps one
    /// batch in flight, and a tick uses the newest results back); with more than one tick per
    /// frame, the ticks of a frame share a batch's results. It grows on ticks where no results came
    /// back (the cache keeps the last ones, their depths
    /// refreshed from the current poses). Before the first results, the ticks since the backend
    /// started.
    pub latency_ticks: u32,
    /// Pipelined mode: the time the thread that collected the results published this tick (the
    /// render thread, or this tick's narrow phase when they were done before the render world
    /// looked) was blocked on the GPU. Neither waits for the device: a batch is collected only once
    /// the device is done with it (`GpuNarrowPhase::try_collect`), and a readback larger than its
    /// first guess is read again by a later frame, so this is zero; 0 also on ticks with no results
    /// back, and in the other modes.
    pub render_wait: Duration,
    /// Pipelined mode: batches the render world dropped since the backend started, because a newer
    /// one came while the device was still busy with an earlier one (only the newest is stepped).
    pub dropped_batches: u64,
    /// Our narrow phase: the batch (broad phase, backend step, publishing) plus pairs computed on the
    /// spot during Rapier's step.
    pub narrow_phase_time: Duration,
    /// Kernel time on the GPU (timestamp queries), when measured.
    pub gpu_time: Option<Duration>,
    /// Pairs ray traced.
    pub pairs: usize,
    /// Pairs Rapier recycled this tick: their contacts are kept, nothing is handed over
    /// ([`RtcdSettings::contact_recycling`](crate::RtcdSettings::contact_recycling)).
    pub held_pairs: usize,
    /// Rays traced by the standard tracer.
    pub standard_rays: u64,
    /// Rays walked from last tick's contacts.
    pub iterative_rays: u64,
    /// Rays walked from predictions.
    pub predictive_rays: u64,
    /// Share of walks that ended in contact.
    pub iterative_hit_rate: f64,
    /// Vertex rays in contact.
    pub contact_rays: u64,
    /// Contact points Rapier's solver holds from us this tick: those handed over now, plus those
    /// Rapier keeps for the pairs it recycles (their last results).
    pub contacts: u64,
    /// Deepest re-projected penetration.
    pub max_depth: f32,
    /// Pairs Rapier asked for that the batch had not computed.
    pub cache_misses: u64,
}

impl RtcdDiagnostics {
    /// Narrow-phase time per tick, in ms.
    pub const NARROW_PHASE_MS: DiagnosticPath = DiagnosticPath::const_new("rtcd/narrow_phase_ms");
    /// Rays by kind per tick.
    pub const STANDARD_RAYS: DiagnosticPath = DiagnosticPath::const_new("rtcd/standard_rays");
    /// See [`RtcdDiagnostics::STANDARD_RAYS`].
    pub const ITERATIVE_RAYS: DiagnosticPath = DiagnosticPath::const_new("rtcd/iterative_rays");
    /// See [`RtcdDiagnostics::STANDARD_RAYS`].
    pub const PREDICTIVE_RAYS: DiagnosticPath = DiagnosticPath::const_new("rtcd/predictive_rays");
    /// Contact points per tick.
    pub const CONTACTS: DiagnosticPath = DiagnosticPath::const_new("rtcd/contacts");
    /// Iterative hit rate (0-1).
    pub const ITERATIVE_HIT_RATE: DiagnosticPath = DiagnosticPath::const_new("rtcd/iterative_hit_rate");

    pub(crate) fn register(app: &mut App) {
        for path in [
            Self::NARROW_PHASE_MS,
            Self::STANDARD_RAYS,
            Self::ITERATIVE_RAYS,
            Self::PREDICTIVE_RAYS,
            Self::CONTACTS,
            Self::ITERATIVE_HIT_RATE,
        ] {
            app.register_diagnostic(Diagnostic::new(path));
        }
        app.init_resource::<RtcdDiagnostics>();
    }

    /// The tick's figures from the narrow phase's state, after Rapier's step.
    pub(crate) fn from_state(state: &RtcdNarrowPhase) -> Self {
        let m = state.driver.metrics();
        let backend = state.active.as_ref().map(ToString::to_string).unwrap_or_default();
        let mut d = Self::from_metrics(&m, backend);
        d.fell_back = state.fell_back;
        d.rapier_out_of_step = state.unstepped_ticks >= crate::plugin::OUT_OF_STEP_TICKS;
        d.backend_reason = state.reason.clone();
        d.latency_ticks = state.latency_ticks;
        d.render_wait = state.render_wait;
        d.dropped_batches = state.dropped_batches;
        if !state.fresh {
            // Pipelined mode, no results back this tick: nothing was traced for it; Rapier's solver
            // still holds the contacts of the last results (refreshed), and the dispatcher's misses
            // took their time.
            Self {
                narrow_phase_time: m.cache.miss_time,
                gpu_time: None,
                pairs: 0,
                held_pairs: 0,
                standard_rays: 0,
                iterative_rays: 0,
                predictive_rays: 0,
                iterative_hit_rate: 0.0,
                contact_rays: 0,
                ..d
            }
        } else {
            d
        }
    }

    fn from_metrics(m: &rtcd_rapier::RtcdMetrics, backend: String) -> Self {
        let n = &m.narrow_phase;
        Self {
            backend,
            fell_back: false,
            rapier_out_of_step: false,
            backend_reason: String::new(),
            latency_ticks: 0,
            render_wait: Duration::ZERO,
            dropped_batches: 0,
            narrow_phase_time: m.total_time(),
            gpu_time: n.gpu_time,
            pairs: n.pairs,
            held_pairs: m.held_pairs,
            standard_rays: n.standard_rays,
            iterative_rays: n.iterative_rays,
            predictive_rays: n.predictive_rays,
            iterative_hit_rate: n.iterative_hit_rate(),
            contact_rays: n.contact_rays,
            contacts: (m.manifold_points + m.held_points) as u64,
            max_depth: n.max_depth,
            cache_misses: m.cache.misses,
        }
    }

    pub(crate) fn record(&self, diagnostics: &mut Diagnostics) {
        diagnostics.add_measurement(&Self::NARROW_PHASE_MS, || self.narrow_phase_time.as_secs_f64() * 1e3);
        diagnostics.add_measurement(&Self::STANDARD_RAYS, || self.standard_rays as f64);
        diagnostics.add_measurement(&Self::ITERATIVE_RAYS, || self.iterative_rays as f64);
        diagnostics.add_measurement(&Self::PREDICTIVE_RAYS, || self.predictive_rays as f64);
        diagnostics.add_measurement(&Self::CONTACTS, || self.contacts as f64);
        diagnostics.add_measurement(&Self::ITERATIVE_HIT_RATE, || self.iterative_hit_rate);
    }
}
