//! [`RtcdPlugin`]: installs the ray-traced narrow phase in front of Rapier's default dispatcher and
//! runs the batch detection every physics tick.

use bevy::{
    diagnostic::Diagnostics,
    ecs::schedule::{InternedScheduleLabel, ScheduleLabel},
    platform::collections::HashMap,
    prelude::*,
};
use bevy_rapier3d::prelude::{
    DefaultRapierContext, PhysicsSet, RapierConfiguration, RapierContextColliders, RapierContextJoints,
    RapierContextSimulation, RapierRigidBodySet, RigidBody, SoftCcd, TimestepMode,
};
use rtcd::RtcdParams;
use rtcd_rapier::{Joints, RtcdDriver, RtcdMetrics};

use crate::{
    backend::{self, ActiveBackend},
    collider::{RtcdColliderState, RtcdMeshCache, build_colliders, refresh_colliders},
    diagnostics::RtcdDiagnostics,
    render,
    settings::{GpuMode, RtcdBackend, RtcdParamsSource, RtcdSettings},
};

/// The plugin's system sets, in the physics schedule (`FixedUpdate` by default).
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RtcdSystems {
    /// Builds colliders of new `RtcdCollider`s and starts the backend: before `PhysicsSet::SyncBackend`
    /// so the new colliders enter Rapier this tick.
    Prepare,
    /// The batch detection: after `PhysicsSet::SyncBackend` (poses and colliders are in Rapier) and
    /// before `PhysicsSet::StepSimulation` (the dispatcher reads its results during the step).
    Detect,
    /// Diagnostics: after `PhysicsSet::StepSimulation` (the dispatcher's counters are complete).
    Diagnostics,
}

/// The ray-traced narrow phase for `bevy_rapier3d`: pairs of [`RtcdCollider`](crate::RtcdCollider)s,
/// an `RtcdCollider` against a cuboid (the usual ground and walls, or a crate), and against level
/// geometry (a trimesh or heightfield on a fixed or kinematic body), get ray-traced contacts; every
/// other pair behaves exactly as without the plugin.
///
/// Add it with `RapierPhysicsPlugin::<NoUserData>::default().in_fixed_schedule()`, with one Rapier
/// step of one substep per fixed tick: Rapier's default `TimestepMode::Variable` (which Rapier's
/// plugin inserts when the app has none, and which in the fixed schedule steps by the fixed tick),
/// or `TimestepMode::Fixed { dt, substeps: 1 }` with `dt` the fixed tick. Other modes get a warning.
pub struct RtcdPlugin {
    /// Settings (also a resource, read when the backend starts). An `RtcdSettings` resource the
    /// app inserted before adding the plugin is kept instead (with a warning if these differ from
    /// the defaults).
    pub settings: RtcdSettings,
    schedule: InternedScheduleLabel,
}

impl Default for RtcdPlugin {
    fn default() -> Self {
        Self { settings: RtcdSettings::default(), schedule: FixedUpdate.intern() }
    }
}

impl RtcdPlugin {
    /// The plugin with these settings.
    pub fn new(settings: RtcdSettings) -> Self {
        Self { settings, ..Default::default() }
    }

    /// Run in another schedule (the one Rapier runs in; `FixedUpdate` by default).
    pub fn in_schedule(mut self, schedule: impl ScheduleLabel) -> Self {
        self.schedule = schedule.intern();
        self
    }
}

/// The narrow phase's state: the batch driver (and its backend), shared with Rapier's dispatcher.
#[derive(Resource)]
pub struct RtcdNarrowPhase {
    pub(crate) driver: RtcdDriver,
    pub(crate) active: Option<ActiveBackend>,
    pub(crate) pipelined: bool,
    /// A GPU backend was asked for (or chosen by `Auto`) and the CPU backend runs instead, for good.
    pub(crate) fell_back: bool,
    /// Why the backend running was chosen, or replaced (see [`RtcdNarrowPhase::backend_reason`]).
    pub(crate) reason: String,
    /// Fixed ticks since the backend started, this one included (counted by the detect system).
    pub(crate) tick: u64,
    /// Pipelined mode: the tick whose batch gave the results in the contact cache.
    pub(crate) results_tick: Option<u64>,
    /// Whether this tick's contacts come from a batch published this tick (false in pipelined mode
    /// when no results came back: the cache keeps the last ones).
    pub(crate) fresh: bool,
    /// Ticks between the batch whose results Rapier uses this tick and this tick.
    pub(crate) latency_ticks: u32,
    /// Pipelined mode: the render thread's time blocked on the device to collect the results
    /// published this tick.
    pub(crate) render_wait: std::time::Duration,
    /// Pipelined mode: batches the render world dropped so far (a newer one came before the device
    /// was free).
    pub(crate) dropped_batches: u64,
    /// Pipelined mode: batches the render world left unread (its queue was full), counted with the
    /// dropped ones.
    pub(crate) unsent_batches: u64,
    /// Pipelined mode: since when the main world has sent batches and got no results back.
    pub(crate) awaiting_since: Option<std::time::Instant>,
    /// Pipelined mode: Rapier's contact recycling as it was before the mode turned it off, given
    /// back if the mode falls back to the CPU.
    pub(crate) recycling_before_pipelined: Option<bool>,
    /// The run of the detect system this tick (its change tick), to tell whether Rapier stepped
    /// between it and the diagnostics.
    pub(crate) detect_run: Option<bevy::ecs::change_detection::Tick>,
    /// Ticks in a row in which Rapier did not step between the plugin's narrow phase and its
    /// diagnostics, its physics running ([`OUT_OF_STEP_TICKS`] of them: warned once).
    pub(crate) unstepped_ticks: u32,
}

/// Ticks in a row without a Rapier step between the plugin's narrow phase and its diagnostics
/// after which Rapier is taken to run in another schedule ([`RtcdDiagnostics::rapier_out_of_step`]).
pub(crate) const OUT_OF_STEP_TICKS: u32 = 3;

impl RtcdNarrowPhase {
    fn new(driver: RtcdDriver) -> Self {
        Self {
            driver,
            active: None,
            pipelined: false,
            fell_back: false,
            reason: String::new(),
            tick: 0,
            results_tick: None,
            fresh: false,
            latency_ticks: 0,
            render_wait: std::time::Duration::ZERO,
            dropped_batches: 0,
            unsent_batches: 0,
            awaiting_since: None,
            recycling_before_pipelined: None,
            detect_run: None,
            unstepped_ticks: 0,
        }
    }

    /// The CPU backend took over from the GPU one for good, for this reason.
    pub(crate) fn fall_back(&mut self, why: &str) {
        self.active = Some(ActiveBackend::Cpu);
        self.fell_back = true;
        self.reason = if self.reason.is_empty() { why.into() } else { format!("{}; {why}", self.reason) };
    }

    /// Whether a GPU backend was asked for (or chosen by [`RtcdBackend::Auto`]) and the CPU backend
    /// took over for good: the GPU backend could not start, or failed during the run.
    pub fn fell_back(&self) -> bool {
        self.fell_back
    }

    /// Why the backend running runs: what [`RtcdBackend::Auto`] chose and why, or why the GPU
    /// backend asked for is not running; empty when the backend named in the settings runs.
    pub fn backend_reason(&self) -> &str {
        &self.reason
    }

    /// The contact cache Rapier's dispatcher reads: its settings (`rtcd_rapier::CacheSettings`,
    /// from [`RtcdSettings`] when the backend starts) can be read and changed while the app runs.
    pub fn contact_cache(&self) -> &rtcd_rapier::ContactCache {
        self.driver.cache()
    }

    /// Figures of the last tick (batch and dispatcher).
    pub fn metrics(&self) -> RtcdMetrics {
        self.driver.metrics()
    }

    /// The backend running, once started (it starts with the first ready collider).
    pub fn active_backend(&self) -> Option<&ActiveBackend> {
        self.active.as_ref()
    }

    /// The parameters in use.
    pub fn params(&self) -> &RtcdParams {
        self.driver.params()
    }

    /// World-space rays and contacts of the last tick (when `RtcdSettings::record_rays` is on).
    pub fn debug_geometry(&self) -> &rtcd_rapier::DebugGeometry {
        self.driver.debug_geometry()
    }
}

/// Marks a Rapier context whose narrow phase is ours.
#[derive(Component)]
struct RtcdInstalled;

impl Plugin for RtcdPlugin {
    fn build(&self, app: &mut App) {
        // Provisional parameters until the first meshes are known (the dispatcher needs a cache
        // before any collider enters Rapier).
        let driver =
            RtcdDriver::new(RtcdParams::from_triangle_size(0.1)).expect("default parameters are valid");
        keep_or_insert(app, &self.settings, &RtcdSettings::default(), "RtcdSettings");
        app.insert_resource(RtcdNarrowPhase::new(driver)).init_resource::<RtcdMeshCache>();
        RtcdDiagnostics::register(app);
        let s = self.schedule;
        app.configure_sets(
            s,
            (
                RtcdSystems::Prepare.before(PhysicsSet::SyncBackend),
                RtcdSystems::Detect.after(PhysicsSet::SyncBackend).before(PhysicsSet::StepSimulation),
                RtcdSystems::Diagnostics.after(PhysicsSet::StepSimulation),
            ),
        )
        .add_systems(
            s,
            (install_narrow_phase, build_colliders, start_backend, apply_soft_ccd)
                .chain()
                .in_set(RtcdSystems::Prepare),
        )
        .add_systems(s, detect.in_set(RtcdSystems::Detect))
        // Every frame (a frame may run no fixed tick, and removals and asset events last two
        // frames): colliders whose input changed are unbuilt, the next tick builds them again.
        .add_systems(PostUpdate, refresh_colliders)
        .add_systems(s, update_diagnostics.in_set(RtcdSystems::Diagnostics));
        render::build(app, s);
    }

    fn finish(&self, app: &mut App) {
        render::finish(app);
    }
}

/// Inserts a plugin's settings resource, unless the app holds one already: a resource inserted
/// before the plugin is kept (as Bevy's own plugins keep theirs), with a warning when the plugin
/// was given settings of its own (other than `default`), which are then not used.
pub(crate) fn keep_or_insert<R: Resource + Clone + std::fmt::Debug>(
    app: &mut App,
    settings: &R,
    default: &R,
    name: &str,
) {
    match app.world().get_resource::<R>() {
        None => {
            app.insert_resource(settings.clone());
        }
        // Compared by their debug text: the settings hold function pointers, which have no
        // reliable equality.
        Some(held)
            if format!("{settings:?}") != format!("{default:?}")
                && format!("{held:?}") != format!("{settings:?}") =>
        {
            warn!(
                "rtcd: a {name} resource was inserted before the plugin; it is kept, and the settings given to \
                 the plugin are not used: {settings:?}"
            );
        }
        Some(_) => {}
    }
}

/// Our dispatcher in front of Rapier's default one, on the default context, before any collider
/// enters it. Rapier's contact recycling stays on when the batch follows it
/// ([`RtcdSettings::contact_recycling`], the default); else it is turned off, so that every pair
/// reaches the dispatcher every step.
fn install_narrow_phase(
    mut commands: Commands,
    state: Res<RtcdNarrowPhase>,
    settings: Res<RtcdSettings>,
    mut contexts: Query<
        (Entity, &mut RapierContextSimulation),
        (With<DefaultRapierContext>, Without<RtcdInstalled>),
    >,
    timestep: Option<Res<TimestepMode>>,
) {
    for (entity, mut sim) in &mut contexts {
        sim.narrow_phase = state.driver.rapier_narrow_phase();
        if !settings.contact_recycling {
            rtcd_rapier::configure_integration_parameters(&mut sim.integration_parameters);
        }
        commands.entity(entity).try_insert(RtcdInstalled);
        // One Rapier step per run of the schedule: `Fixed` or `Variable` (Rapier's default, which in
        // the fixed schedule steps by the fixed tick), with one substep.
        match timestep.as_deref() {
            Some(TimestepMode::Fixed { substeps: 1, .. } | TimestepMode::Variable { substeps: 1, .. }) => {}
            other => warn!(
                "rtcd: TimestepMode is {other:?}; use TimestepMode::Fixed {{ dt, substeps: 1 }}: the batch is computed once \
                 per tick and is only exact for the first of several steps (later ones are computed pair by pair)"
            ),
        }
    }
}

/// Starts the configured backend with the first ready collider (the parameters derive from the
/// meshes ready at that moment).
fn start_backend(world: &mut World) {
    if world.resource::<RtcdNarrowPhase>().active.is_some() {
        return;
    }
    let mut q = world.query::<&RtcdColliderState>();
    let meshes: Vec<_> = q
        .iter(world)
        .filter_map(|s| match s {
            RtcdColliderState::Ready { mesh } => Some(mesh.clone()),
            _ => None,
        })
        .collect();
    if meshes.is_empty() {
        return;
    }
    let settings = world.resource::<RtcdSettings>().clone();
    let refs: Vec<&rtcd::RtcdMesh> = meshes.iter().map(|m| &**m).collect();
    let derived = RtcdParams::from_meshes(&refs);
    let params = match settings.params {
        RtcdParamsSource::FromMeshes { adjust } => adjust(derived),
        RtcdParamsSource::Fixed(p) => p,
    };
    let params = match params.validate() {
        Ok(()) => params,
        Err(e) => {
            warn!("rtcd: {e}; using the parameters derived from the meshes instead");
            derived
        }
    };
    let has_render_app = render::pipelined_available(world);
    let (mut backend, mut reason) = backend::resolve(&settings, world, has_render_app);
    if matches!(backend, RtcdBackend::Gpu { .. }) && settings.gpu_timeout.is_zero() {
        warn!(
            "rtcd: RtcdSettings::gpu_timeout is zero: the GPU backend's first results will come too late, and the \
             CPU backend will take over"
        );
    }
    let mut because = |why: String| {
        reason = if reason.is_empty() { why } else { format!("{reason}; {why}") };
    };
    let mut pipelined = false;
    if let RtcdBackend::Gpu { mode: GpuMode::Pipelined } = backend {
        if has_render_app {
            pipelined = true;
        } else {
            warn!(
                "rtcd: pipelined GPU mode needs the render plugins; running the GPU backend in immediate mode"
            );
            because("the pipelined GPU mode needs the render plugins: immediate mode".into());
            backend = RtcdBackend::Gpu { mode: GpuMode::Immediate };
        }
    }
    // Pipelined mode: the driver keeps a CPU backend for the steps whose GPU results are not back
    // (and as the fallback); the GPU backend lives in the render world.
    let (b, mut active, failed) =
        backend::make_backend(if pipelined { RtcdBackend::Cpu } else { backend }, &settings, params, world);
    let mut fell_back = false;
    if let Some(e) = failed {
        because(e);
        fell_back = true;
    }
    if pipelined {
        match render::start(world, params, &settings) {
            Ok(adapter) => active = ActiveBackend::GpuPipelined(adapter),
            Err(e) => {
                warn!("rtcd: the pipelined GPU backend cannot start ({e}); using the CPU backend");
                because(format!("the pipelined GPU backend cannot start ({e})"));
                fell_back = true;
                pipelined = false;
            }
        }
    }
    let mut state = world.resource_mut::<RtcdNarrowPhase>();
    if let Err(e) = state.driver.replace_backend(b) {
        warn!("rtcd: {e}");
    }
    let mut ds = state.driver.settings();
    ds.record_rays = settings.record_rays;
    if pipelined {
        // Results arrive a tick or two after their batch: refresh depths from the current poses and
        // reach speculative contacts of fast bodies three steps ahead.
        state.driver.set_miss_policy(rtcd_rapier::MissPolicy::RefreshDepths);
        ds.lookahead_steps = 3.0;
    }
    state.driver.set_settings(ds);
    let cache = state.driver.cache();
    cache.set_settings(rtcd_rapier::CacheSettings {
        merge_deep_overlaps: settings.merge_deep_overlaps,
        depth_bound: settings.depth_bound,
        ..cache.settings()
    });
    if reason.is_empty() {
        info!("rtcd: narrow phase on {active}, {params:?}");
    } else {
        info!("rtcd: narrow phase on {active} ({reason}), {params:?}");
    }
    state.active = Some(active);
    state.pipelined = pipelined;
    state.fell_back = fell_back;
    state.reason = reason;
    state.tick = 0;
    state.results_tick = None;
}

/// The soft-CCD prediction the plugin gave a body: followed as the body's colliders change, and
/// taken back with them, while the body's `SoftCcd` is still the plugin's. NaN: the user removed
/// it, and the body is left without.
#[derive(Component, Clone, Copy, Debug)]
pub(crate) struct RtcdSoftCcd(f32);

/// Soft CCD (see [`RtcdSettings::soft_ccd`]) for dynamic ray-traced bodies: the body of an
/// `RtcdCollider` is its own entity's `RigidBody`, or the nearest ancestor's (as bevy_rapier
/// attaches it); a body with several gets the largest of their predictions, raised when one is
/// built later and lowered when one goes (colliders that could not be built do not count). A body
/// whose colliders are all gone, or all bodies when `soft_ccd` is turned off, lose the plugin's
/// soft CCD. A `SoftCcd` the user set, changed or removed is left so.
fn apply_soft_ccd(
    mut commands: Commands,
    state: Res<RtcdNarrowPhase>,
    settings: Res<RtcdSettings>,
    colliders: Query<(Entity, &RtcdColliderState)>,
    parents: Query<&ChildOf>,
    bodies: Query<(&RigidBody, Option<&SoftCcd>, Option<&RtcdSoftCcd>)>,
    ours: Query<(Entity, &RtcdSoftCcd, Option<&SoftCcd>)>,
) {
    if state.active.is_none() {
        return;
    }
    // In the colliders' order (the bodies' components are inserted in a deterministic order), each
    // body once.
    let mut wanted: Vec<(Entity, f32)> = Vec::new();
    let mut place: HashMap<Entity, usize> = HashMap::default();
    if settings.soft_ccd {
        let params = *state.driver.params();
        for (e, collider) in &colliders {
            let mut body = e;
            while !bodies.contains(body) {
                match parents.get(body) {
                    Ok(p) => body = p.parent(),
                    Err(_) => break,
                }
            }
            let Ok((rb, _, _)) = bodies.get(body) else { continue };
            if !matches!(rb, RigidBody::Dynamic) {
                continue;
            }
            // The collider's own culling distance (the parameters of its mesh with itself).
            let prediction = match collider {
                RtcdColliderState::Ready { mesh } => params.for_pair(mesh, mesh).culling_dist,
                RtcdColliderState::Fallback { .. } => params.culling_dist,
                RtcdColliderState::Failed { .. } => continue,
            };
            let k = *place.entry(body).or_insert_with(|| {
                wanted.push((body, prediction));
                wanted.len() - 1
            });
            wanted[k].1 = wanted[k].1.max(prediction);
        }
    }
    for &(body, prediction) in &wanted {
        let Ok((_, soft, given)) = bodies.get(body) else { continue };
        let ours = match (soft, given) {
            (None, None) => true,
            // The user removed the plugin's: the body stays without.
            (None, Some(g)) => {
                if !g.0.is_nan() {
                    commands.entity(body).try_insert(RtcdSoftCcd(f32::NAN));
                }
                false
            }
            // Still what the plugin gave (the user did not change it), and the colliders changed.
            (Some(s), Some(g)) => s.prediction == g.0 && g.0 != prediction,
            (Some(_), None) => false,
        };
        if ours {
            commands.entity(body).try_insert((SoftCcd { prediction }, RtcdSoftCcd(prediction)));
        }
    }
    // Bodies the plugin gave soft CCD that no longer want it.
    for (body, given, soft) in &ours {
        if place.contains_key(&body) {
            continue;
        }
        let Ok(mut cmd) = commands.get_entity(body) else { continue };
        if soft.is_some_and(|s| s.prediction == given.0) {
            cmd.try_remove::<SoftCcd>();
        }
        cmd.try_remove::<RtcdSoftCcd>();
    }
}

fn detect(
    mut state: ResMut<RtcdNarrowPhase>,
    settings: Res<RtcdSettings>,
    mut contexts: Query<
        (&mut RapierContextSimulation, &RapierContextColliders, &RapierRigidBodySet, &RapierContextJoints),
        With<DefaultRapierContext>,
    >,
    pipe: Option<Res<render::PipelineChannels>>,
    ticks: bevy::ecs::system::SystemChangeTick,
) {
    if state.active.is_none() {
        return;
    }
    let Ok((mut sim_mut, colliders, bodies, joints)) = contexts.single_mut() else { return };
    let joints = Joints::new(&joints.impulse_joints, &joints.multibody_joints);
    state.tick += 1;
    state.detect_run = Some(ticks.this_run());
    // Traced inside this tick unless the pipelined mode says otherwise.
    (state.fresh, state.latency_ticks, state.render_wait) = (true, 0, std::time::Duration::ZERO);
    // The pipelined mode's results are a tick old: it cannot follow Rapier's contact recycling.
    if state.pipelined && sim_mut.integration_parameters.contact_recycling {
        sim_mut.integration_parameters.contact_recycling = false;
        state.recycling_before_pipelined = Some(true);
    }
    let was_pipelined = state.pipelined;
    let sim = &*sim_mut;
    // Rapier's parameters as they are this tick (`dt`, `length_unit`, the corrective velocity), on
    // every path: the depth bound, the merging of deep overlaps and the telling of a body's motion
    // from a move by hand follow them, with or without contact recycling, in either mode.
    state.driver.set_integration_parameters(&sim.integration_parameters);
    let ds = state.driver.settings();
    if settings.record_rays != ds.record_rays {
        state.driver.set_settings(rtcd_rapier::DriverSettings { record_rays: settings.record_rays, ..ds });
    }
    if state.pipelined
        && let Some(pipe) = pipe
    {
        let timeout = settings.gpu_timeout;
        render::pipelined_detect(
            &mut state,
            &pipe,
            &bodies.bodies,
            &colliders.colliders,
            joints,
            &sim.integration_parameters,
            timeout,
        );
    } else if sim.integration_parameters.contact_recycling {
        state.driver.detect_recycling(
            &bodies.bodies,
            &colliders.colliders,
            joints,
            &sim.integration_parameters,
            &sim.narrow_phase,
        );
    } else {
        state.driver.detect(&bodies.bodies, &colliders.colliders, joints, &sim.integration_parameters);
    }
    // The immediate GPU backend failed inside the driver, which re-ran the step on the CPU and keeps
    // it for good.
    if state.driver.fell_back() && matches!(state.active, Some(ActiveBackend::GpuImmediate(_))) {
        let why = match state.driver.fallback_error() {
            Some(e) => format!("the GPU backend failed during the run ({e})"),
            None => "the GPU backend failed during the run".to_string(),
        };
        state.fall_back(&why);
    }
    // The pipelined mode fell back to the CPU this tick: from the next tick the CPU backend runs as
    // it does when started so (one step of lookahead, Rapier's recycling as it was).
    if was_pipelined && !state.pipelined {
        let ds = state.driver.settings();
        state.driver.set_settings(rtcd_rapier::DriverSettings { lookahead_steps: 1.0, ..ds });
        if let Some(recycling) = state.recycling_before_pipelined.take() {
            sim_mut.integration_parameters.contact_recycling = recycling;
        }
    }
}

fn update_diagnostics(
    mut state: ResMut<RtcdNarrowPhase>,
    mut out: ResMut<RtcdDiagnostics>,
    mut diagnostics: Diagnostics,
    contexts: Query<(Ref<RapierContextSimulation>, &RapierConfiguration), With<DefaultRapierContext>>,
    ticks: bevy::ecs::system::SystemChangeTick,
) {
    if state.active.is_none() {
        return;
    }
    // Rapier steps its simulation between the plugin's narrow phase and this system when both run
    // in the same schedule: its step changes the simulation after the narrow phase ran. A Rapier
    // running in another schedule (its default, `PostUpdate`, beside the plugin's fixed ticks)
    // steps elsewhere, and the batch and the step no longer follow each other.
    if let (Ok((sim, config)), Some(run)) = (contexts.single(), state.detect_run.take())
        && config.physics_pipeline_active
    {
        if sim.last_changed().is_newer_than(run, ticks.this_run()) {
            state.unstepped_ticks = 0;
        } else {
            state.unstepped_ticks = state.unstepped_ticks.saturating_add(1);
            if state.unstepped_ticks == OUT_OF_STEP_TICKS {
                warn!(
                    "rtcd: Rapier did not step between the plugin's narrow phase and its diagnostics for \
                     {OUT_OF_STEP_TICKS} ticks: RapierPhysicsPlugin runs in another schedule than RtcdPlugin. \
                     Add it with `RapierPhysicsPlugin::<NoUserData>::default().in_fixed_schedule()` (or give \
                     RtcdPlugin Rapier's schedule)"
                );
            }
        }
    }
    let d = RtcdDiagnostics::from_state(&state);
    d.record(&mut diagnostics);
    *out = d;
}
