//! Pipelined GPU mode (render-world side): the GPU backend lives in the render world and runs each
//! batch from a system in Bevy's `RenderGraph` schedule, on the `RenderDevice`. The render thread
//! never waits for the device.
//!
//! Main world, after `PhysicsSet::Writeback`: the driver prepares a batch from the poses the next
//! tick will start from and sends it over a channel. Render world, in `RenderGraphSystems::Render`:
//! the batch in flight is collected if the device is done with it (`GpuNarrowPhase::try_collect`:
//! the device polled with `PollType::Poll`, the readback mappings checked without waiting, a second
//! read for contacts beyond the first one's guess submitted and collected later) and its results
//! sent back; when the device is free the newest batch is encoded into the command encoder of the
//! render graph's `RenderContext` (`GpuNarrowPhase::submit_into`), which Bevy submits with the
//! frame in `RenderGraphSystems::Submit`, older batches that waited being dropped. In `Finish`,
//! finished results are collected again. Next
//! tick, before the step: the main world takes the results of a batch the device is done with
//! itself when the render world has not yet (again without waiting, nor for the render world's
//! lock); the newest results that came back are published to the contact cache; Rapier's
//! dispatcher serves pairs at the same poses from them, and refreshes each contact's depth from the
//! current pose for pairs that moved since (`MissPolicy::RefreshDepths`), so a few ticks of latency
//! do not mean stale depths. On ticks with no results back the cache keeps the last ones.

use std::{
    sync::{
        Arc, Mutex,
        mpsc::{Receiver, Sender, SyncSender, TrySendError, channel, sync_channel},
    },
    time::{Duration, Instant},
};

use bevy::{
    ecs::schedule::InternedScheduleLabel,
    prelude::*,
    render::{
        RenderApp,
        renderer::{RenderContext, RenderDevice, RenderGraph, RenderGraphSystems},
    },
};
use bevy_rapier3d::prelude::{
    DefaultRapierContext, PhysicsSet, RapierContextColliders, RapierContextJoints, RapierContextSimulation,
    RapierRigidBodySet,
};
use rtcd::{BackendError, RtcdParams, StepOutput};
use rtcd_rapier::{Batch, Joints};
use rtcd_wgpu::{GpuNarrowPhase, GpuOptions, KERNELS_FIRST_RUN};

use crate::{RtcdNarrowPhase, RtcdSettings, plugin::RtcdSystems};

/// Messages the main world may leave for the render world before it takes them: it takes every one
/// each frame, so as many wait as fixed ticks ran in the frame (Bevy's clock advances at most
/// 250 ms a frame: 15 ticks at 60 Hz, 60 at 240 Hz). When the render world stops taking them
/// (rendering stopped after a device error), newer batches are not sent, and counted as dropped.
const QUEUED_BATCHES: usize = 64;

enum ToRender {
    Backend(Box<RenderGpu>),
    /// A batch and the tick that prepared it.
    Batch(Batch, u64),
}

/// What the render world tells the main world with each result.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RenderStats {
    /// The time the thread that collected these results was blocked on the device
    /// (`StepMetrics::device_wait`): zero, since `GpuNarrowPhase::try_collect` never waits.
    pub(crate) wait: Duration,
    /// Batches the render world dropped so far, replaced by a newer one before the device was free.
    pub(crate) dropped: u64,
}

/// A batch, the tick that prepared it, the GPU's results, and the render world's figures.
type FromRender = (Batch, u64, Result<StepOutput, BackendError>, RenderStats);

/// Main-world ends of the channels.
#[derive(Resource)]
pub(crate) struct PipelineChannels {
    to_render: Mutex<SyncSender<ToRender>>,
    from_render: Mutex<Receiver<FromRender>>,
    /// The render world's state: the main world's tick collects the batch in flight itself when
    /// the device is done with it before the render world saw it (never waiting, nor for the lock).
    render: Arc<Mutex<RenderState>>,
}

/// A batch submitted to the device, not yet collected.
struct InFlight {
    batch: Batch,
    tick: u64,
}

/// The backend (it polls its device without waiting in `try_collect`, and fails a step that takes
/// longer than `RtcdSettings::gpu_timeout`).
struct RenderGpu {
    gpu: GpuNarrowPhase,
}

/// Render-world state.
#[derive(Default)]
struct RenderState {
    gpu: Option<Box<RenderGpu>>,
    in_flight: Option<InFlight>,
    /// The newest batch, waiting for the device.
    waiting: Option<(Batch, u64)>,
    dropped: u64,
}

/// Render-world side.
#[derive(Resource)]
struct RenderSide {
    from_main: Mutex<Receiver<ToRender>>,
    to_main: Mutex<Sender<FromRender>>,
    state: Arc<Mutex<RenderState>>,
}

/// Marks that the render sub-app exists and got our system.
#[derive(Resource)]
struct PipelineReady;

pub(crate) fn build(app: &mut App, schedule: InternedScheduleLabel) {
    app.add_systems(schedule, send_batch.after(PhysicsSet::Writeback).after(RtcdSystems::Diagnostics));
}

/// Called from the plugin's `finish` (the render sub-app exists by then when there is one).
pub(crate) fn finish(app: &mut App) {
    let Some(render_app) = app.get_sub_app_mut(RenderApp) else { return };
    let (to_render, from_main) = sync_channel(QUEUED_BATCHES);
    let (to_main, from_render) = channel();
    let state = Arc::new(Mutex::new(RenderState::default()));
    render_app
        .insert_resource(RenderSide {
            from_main: Mutex::new(from_main),
            to_main: Mutex::new(to_main),
            state: state.clone(),
        })
        .add_systems(
            RenderGraph,
            (
                dispatch_render.in_set(RenderGraphSystems::Render),
                dispatch_finish.in_set(RenderGraphSystems::Finish),
            ),
        );
    app.insert_resource(PipelineChannels {
        to_render: Mutex::new(to_render),
        from_render: Mutex::new(from_render),
        render: state,
    })
    .insert_resource(PipelineReady);
}

pub(crate) fn pipelined_available(world: &World) -> bool {
    world.contains_resource::<PipelineReady>() && world.contains_resource::<RenderDevice>()
}

/// Creates the GPU backend on the `RenderDevice` and hands it to the render world. Returns the
/// adapter's name.
pub(crate) fn start(world: &World, params: RtcdParams, settings: &RtcdSettings) -> Result<String, String> {
    let (device, queue, info) = crate::backend::gpu_device(world)?;
    let options = GpuOptions { timeout: settings.gpu_timeout, ..Default::default() };
    let gpu = GpuNarrowPhase::with_options(&device, &queue, params, options).map_err(|e| e.to_string())?;
    let channels = world.get_resource::<PipelineChannels>().ok_or("no render world")?;
    channels
        .to_render
        .lock()
        .map_err(|e| e.to_string())?
        .try_send(ToRender::Backend(Box::new(RenderGpu { gpu })))
        .map_err(|e| format!("the render world takes no message: {e}"))?;
    Ok(info.name)
}

/// Main world, in the detect set: publish the newest GPU results that came back, and note how many
/// ticks late the results in use are.
pub(crate) fn pipelined_detect(
    state: &mut RtcdNarrowPhase,
    pipe: &PipelineChannels,
    bodies: &bevy_rapier3d::rapier::dynamics::RigidBodySet,
    colliders: &bevy_rapier3d::rapier::geometry::ColliderSet,
    joints: Joints,
    params: &bevy_rapier3d::rapier::dynamics::IntegrationParameters,
    timeout: Duration,
) {
    let mut newest = None;
    if let Ok(rx) = pipe.from_render.lock() {
        while let Ok(r) = rx.try_recv() {
            newest = Some(r);
        }
    }
    // Results done since the render world last looked are newer than any it sent.
    if let Ok(mut st) = pipe.render.try_lock()
        && let Some(r) = collect_done(&mut st)
    {
        newest = Some(r);
    }
    match newest {
        Some((batch, tick, Ok(out), stats)) => {
            state.driver.publish(&batch, out);
            state.results_tick = Some(tick);
            state.awaiting_since = None;
            (state.render_wait, state.dropped_batches) = (stats.wait, stats.dropped + state.unsent_batches);
        }
        Some((_, _, Err(e), _)) => {
            fall_back(
                state,
                &format!("the pipelined GPU backend failed ({e})"),
                bodies,
                colliders,
                joints,
                params,
            );
            return;
        }
        // Nothing back yet: the cache keeps the last results; the dispatcher refreshes their depths.
        // The dispatcher's counters start again for this tick (a publish resets them). Nothing back
        // for longer than the timeout (the render world stopped taking batches, as when rendering
        // stops after a device error) is a failure of the mode.
        None => {
            // The first results may take as long as the kernels' first run, as the backend allows.
            let limit = if state.results_tick.is_some() { timeout } else { timeout.max(KERNELS_FIRST_RUN) };
            if let Some(since) = state.awaiting_since
                && since.elapsed() > limit
            {
                let why = format!(
                    "the pipelined GPU backend gave no results for {:.1} s (the render world took no batch)",
                    since.elapsed().as_secs_f32()
                );
                fall_back(state, &why, bodies, colliders, joints, params);
                return;
            }
            state.fresh = false;
            state.driver.cache().reset_counters();
        }
    }
    // Before the first results, the ticks since the backend started (the dispatcher computes the
    // pairs on the CPU meanwhile).
    let since = state.results_tick.unwrap_or(1);
    state.latency_ticks = u32::try_from(state.tick.saturating_sub(since)).unwrap_or(u32::MAX);
}

/// Leaves the pipelined mode for the CPU backend, for good, and traces this tick's pairs on it.
fn fall_back(
    state: &mut RtcdNarrowPhase,
    why: &str,
    bodies: &bevy_rapier3d::rapier::dynamics::RigidBodySet,
    colliders: &bevy_rapier3d::rapier::geometry::ColliderSet,
    joints: Joints,
    params: &bevy_rapier3d::rapier::dynamics::IntegrationParameters,
) {
    warn!("rtcd: {why}; using the CPU backend from now on");
    state.pipelined = false;
    state.fall_back(why);
    state.driver.set_miss_policy(rtcd_rapier::MissPolicy::Exact);
    state.driver.detect(bodies, colliders, joints, params);
}

/// Main world, after writeback: the poses the next tick starts from, to the render world.
fn send_batch(
    mut state: ResMut<RtcdNarrowPhase>,
    pipe: Option<Res<PipelineChannels>>,
    contexts: Query<
        (&RapierContextSimulation, &RapierContextColliders, &RapierRigidBodySet, &RapierContextJoints),
        With<DefaultRapierContext>,
    >,
) {
    if !state.pipelined {
        return;
    }
    let (Some(pipe), Ok((sim, colliders, bodies, joints))) = (pipe, contexts.single()) else { return };
    let joints = Joints::new(&joints.impulse_joints, &joints.multibody_joints);
    let batch =
        state.driver.prepare(&bodies.bodies, &colliders.colliders, joints, &sim.integration_parameters);
    state.awaiting_since.get_or_insert_with(Instant::now);
    let tick = state.tick;
    if let Ok(tx) = pipe.to_render.lock()
        && let Err(TrySendError::Full(_)) = tx.try_send(ToRender::Batch(batch, tick))
    {
        state.unsent_batches += 1;
    }
}

/// Render world, in `RenderGraphSystems::Render`: never waits for the device. Takes the main
/// world's messages; when the batch in flight is done, collects its results and sends them to the
/// main world; when the device is free, encodes the newest batch into the render graph's command
/// encoder, which Bevy submits with the frame (older batches that waited are dropped, counted).
fn dispatch_render(side: Res<RenderSide>, mut ctx: RenderContext) {
    let mut messages = Vec::new();
    if let Ok(rx) = side.from_main.lock() {
        while let Ok(m) = rx.try_recv() {
            messages.push(m);
        }
    }
    let Ok(mut guard) = side.state.lock() else { return };
    let st = &mut *guard;
    for m in messages {
        match m {
            ToRender::Backend(g) => st.gpu = Some(g),
            ToRender::Batch(b, tick) => {
                if st.waiting.replace((b, tick)).is_some() {
                    st.dropped += 1;
                }
            }
        }
    }
    send_done(&side, st);
    let Some(RenderGpu { gpu, .. }) = st.gpu.as_deref_mut() else { return };
    if st.in_flight.is_some() {
        return;
    }
    let Some((batch, tick)) = st.waiting.take() else { return };
    if let Err(e) = gpu.submit_into(ctx.command_encoder(), &batch.inputs(), &batch.options()) {
        st.gpu = None;
        if let Ok(tx) = side.to_main.lock() {
            let _ = tx.send((batch, tick, Err(e), RenderStats { wait: Duration::ZERO, dropped: st.dropped }));
        }
        return;
    }
    st.in_flight = Some(InFlight { batch, tick });
}

/// Render world, in `RenderGraphSystems::Finish`, after Bevy submitted the frame: collects
/// finished results.
fn dispatch_finish(side: Res<RenderSide>) {
    let Ok(mut guard) = side.state.lock() else { return };
    send_done(&side, &mut guard);
}

/// Sends the results of the batch in flight to the main world when the device is done with it.
fn send_done(side: &RenderSide, st: &mut RenderState) {
    if let Some(r) = collect_done(st)
        && let Ok(tx) = side.to_main.lock()
    {
        let _ = tx.send(r);
    }
}

/// The results of the batch in flight if the device is done with it, without waiting
/// (`GpuNarrowPhase::try_collect`). A batch in flight longer than `RtcdSettings::gpu_timeout` is a
/// failure, as in immediate mode. The backend is dropped after a failure.
fn collect_done(st: &mut RenderState) -> Option<FromRender> {
    let RenderGpu { gpu } = st.gpu.as_deref_mut()?;
    st.in_flight.as_ref()?;
    let out = gpu.try_collect()?;
    let wait = out.as_ref().ok().and_then(|o| o.metrics.device_wait).unwrap_or_default();
    let f = st.in_flight.take()?;
    if out.is_err() {
        st.gpu = None;
    }
    Some((f.batch, f.tick, out, RenderStats { wait, dropped: st.dropped }))
}
