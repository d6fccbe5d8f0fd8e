//! Rapier settings for a batch-computed narrow phase.
//!
//! **Contact recycling: off with [`RtcdDriver::detect`](crate::RtcdDriver::detect), or followed
//! with [`RtcdDriver::detect_recycling`](crate::RtcdDriver::detect_recycling).** This Rapier build
//! recycles a pair's contacts while its relative pose drifts less than
//! `normalized_contact_recycle_distance`: the dispatcher is then not called and the old points and
//! solver anchors are reused. A batch that does not know which pairs Rapier recycles traces them for
//! nothing, and the iterative tracer (IRTCD) would lose their state (the backend frees state of
//! pairs absent from a step). So either recycling is off (what [`configure_integration_parameters`]
//! does, and what `detect` needs), or the batch follows it: `detect_recycling` mirrors Rapier's
//! recycling test and holds the recycled pairs (state kept, nothing traced). Following it traces
//! far fewer pairs once bodies settle, for slightly more penetration, since a recycled pair's
//! contacts are a few steps old (figures in `docs/benchmarks.md`). The Bevy plugin follows
//! recycling by default (`RtcdSettings::contact_recycling`), as Rapier's own shapes do.
//!
//! **CCD.** Rapier never sweeps a triangle mesh as the moving shape of its CCD, and
//! [`RtcdShape`](crate::RtcdShape) presents itself to it as one: a fast body of ours is not swept,
//! whatever its `ccd_enabled`, and is held by speculative contacts alone. Give such bodies soft CCD
//! (`RigidBody::set_soft_ccd_prediction`, at least the pair's `culling_dist`; the Bevy plugin sets
//! it): the batch then traces predictive rays out to that distance, and the motion rays
//! (`RtcdParams::motion_rays`) catch what moved through a thin wall within the step. A body of
//! another shape that Rapier sweeps still stops at ours: its sweep is answered by Rapier's default
//! dispatcher on our triangle mesh (a surface time of impact), and the contacts at the clamped pose
//! come from us on the next step.
//!
//! **Prediction.** [`RtcdDriver::detect`](crate::RtcdDriver::detect) traces with the step's
//! `IntegrationParameters::prediction_distance()`: vertices within it of the other body become
//! speculative contacts (positive `dist`) from rtcd's predictive rays, as Rapier's own manifolds do.
//! Contact clustering stays on: it merges our normal groups that are within ~5° of each other.

use rapier3d::dynamics::IntegrationParameters;

/// Configures `params` for the ray-traced narrow phase with [`RtcdDriver::detect`](crate::RtcdDriver::detect):
/// contact recycling off (see the module docs; leave it on and call
/// [`RtcdDriver::detect_recycling`](crate::RtcdDriver::detect_recycling) instead to follow it).
/// Everything else is left as Rapier's defaults.
pub fn configure_integration_parameters(params: &mut IntegrationParameters) {
    params.contact_recycling = false;
}

/// Rapier's default parameters with [`configure_integration_parameters`] applied.
pub fn integration_parameters() -> IntegrationParameters {
    let mut p = IntegrationParameters::default();
    configure_integration_parameters(&mut p);
    p
}
