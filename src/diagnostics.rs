//! [`RtcdDiagnostics`]: the last tick's narrow-phase figures, as a resource and in Bevy's
//! diagnostics store (so `LogDiagnosticsPlugin` and on-screen overlays can show them).

use std::time::Duration;

use bevy::{
    diagnostic::{Diagnostic, DiagnosticPath, Diagnostics, RegisterDiagnostic},
    prelude::*,
};

/// Figures of the last fixed tick.
#[derive(Resource, Clone, Debug, Default, PartialEq)]
pub struct RtcdDiagnostics {
    /// Backend that ran it (e.g. `"cpu"`, `"gpu immediate (NVIDIA ...)"`).
    pub backend: String,
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

    pub(crate) fn from_metrics(m: &rtcd_rapier::RtcdMetrics, backend: String) -> Self {
        let n = &m.narrow_phase;
        Self {
            backend,
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
