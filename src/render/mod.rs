//! Pipelined GPU mode (render-world side): the GPU backend lives in the render world and runs each
//! batch from a system in Bevy's `RenderGraph` schedule, on the `RenderDevice`.
//!
//! Main world, after `PhysicsSet::Writeback`: the driver prepares a batch from the poses the next
//! tick will start from and sends it over a channel. Render world (`RenderGraph`, before submit): the
//! newest batch is stepped on the GPU (bounded wait) and its results sent back. Next tick, before the
//! step: the results that came back are published to the contact cache; Rapier's dispatcher serves
//! pairs at the same poses from them, and refreshes each contact's depth from the current pose for
//! pairs that moved since (`MissPolicy::RefreshDepths`), so a frame of latency does not mean stale
//! depths.

use std::sync::{
    Mutex,
    mpsc::{Receiver, Sender, channel},
};

use bevy::{
    ecs::schedule::InternedScheduleLabel,
    prelude::*,
    render::{
        RenderApp,
        renderer::{RenderDevice, RenderGraph, RenderGraphSystems},
    },
};
use bevy_rapier3d::prelude::{
    DefaultRapierContext, PhysicsSet, RapierContextColliders, RapierContextSimulation, RapierRigidBodySet,
};
use rtcd::{BackendError, RtcdParams, StepOutput};
use rtcd_rapier::Batch;
use rtcd_wgpu::{GpuNarrowPhase, GpuOptions};

use crate::{RtcdNarrowPhase, RtcdSettings, plugin::RtcdSystems};

enum ToRender {
    Backend(Box<GpuNarrowPhase>),
    /// A batch and the tick that prepared it.
    Batch(Batch, u64),
}

/// A batch, the tick that prepared it, and the GPU's results.
type FromRender = (Batch, u64, Result<StepOutput, BackendError>);

/// Main-world ends of the channels.
#[derive(Resource)]
pub(crate) struct PipelineChannels {
    to_render: Mutex<Sender<ToRender>>,
    from_render: Mutex<Receiver<FromRender>>,
}

/// Render-world side.
#[derive(Resource)]
struct RenderSide {
    from_main: Mutex<Receiver<ToRender>>,
    to_main: Mutex<Sender<FromRender>>,
    gpu: Mutex<Option<Box<GpuNarrowPhase>>>,
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
    let (to_render, from_main) = channel();
    let (to_main, from_render) = channel();
    render_app
        .insert_resource(RenderSide {
            from_main: Mutex::new(from_main),
            to_main: Mutex::new(to_main),
            gpu: Mutex::new(None),
        })
        .add_systems(RenderGraph, dispatch.in_set(RenderGraphSystems::Render));
    app.insert_resource(PipelineChannels {
        to_render: Mutex::new(to_render),
        from_render: Mutex::new(from_render),
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
        .send(ToRender::Backend(Box::new(gpu)))
        .map_err(|e| e.to_string())?;
    Ok(info.name)
}

/// Main world, in the detect set: publish the newest GPU results that came back, and note how many
/// ticks late the results in use are.
pub(crate) fn pipelined_detect(
    state: &mut RtcdNarrowPhase,
    pipe: &PipelineChannels,
    bodies: &bevy_rapier3d::rapier::dynamics::RigidBodySet,
    colliders: &bevy_rapier3d::rapier::geometry::ColliderSet,
    prediction: f32,
) {
    let mut newest = None;
    if let Ok(rx) = pipe.from_render.lock() {
        while let Ok(r) = rx.try_recv() {
            newest = Some(r);
        }
    }
    match newest {
        Some((batch, tick, Ok(out))) => {
            state.driver.publish(&batch, out);
            state.results_tick = Some(tick);
        }
        Some((_, _, Err(e))) => {
            warn!("rtcd: the pipelined GPU backend failed ({e}); using the CPU backend from now on");
            state.pipelined = false;
            state.fall_back(&format!("the pipelined GPU backend failed ({e})"));
            state.driver.set_miss_policy(rtcd_rapier::MissPolicy::Exact);
            state.driver.detect(bodies, colliders, prediction);
            return;
        }
        // Nothing back yet: the cache keeps the last results; the dispatcher refreshes their depths.
        // The dispatcher's counters start again for this tick (a publish resets them).
        None => {
            state.fresh = false;
            state.driver.cache().reset_counters();
        }
    }
    // Before the first results, the ticks since the backend started (the dispatcher computes the
    // pairs on the CPU meanwhile).
    let since = state.results_tick.unwrap_or(1);
    state.latency_ticks = u32::try_from(state.tick.saturating_sub(since)).unwrap_or(u32::MAX);
}

/// Main world, after writeback: the poses the next tick starts from, to the render world.
fn send_batch(
    mut state: ResMut<RtcdNarrowPhase>,
    pipe: Option<Res<PipelineChannels>>,
    contexts: Query<
        (&RapierContextSimulation, &RapierContextColliders, &RapierRigidBodySet),
        With<DefaultRapierContext>,
    >,
) {
    if !state.pipelined {
        return;
    }
    let (Some(pipe), Ok((sim, colliders, bodies))) = (pipe, contexts.single()) else { return };
    let batch = state.driver.prepare(
        &bodies.bodies,
        &colliders.colliders,
        sim.integration_parameters.prediction_distance(),
    );
    if let Ok(tx) = pipe.to_render.lock() {
        let _ = tx.send(ToRender::Batch(batch, state.tick));
    }
}

/// Render world: step the newest batch on the GPU and send the results back.
fn dispatch(side: Res<RenderSide>) {
    let mut batch = None;
    let mut messages = Vec::new();
    if let Ok(rx) = side.from_main.lock() {
        while let Ok(m) = rx.try_recv() {
            messages.push(m);
        }
    }
    let Ok(mut gpu) = side.gpu.lock() else { return };
    for m in messages {
        match m {
            ToRender::Backend(g) => *gpu = Some(g),
            ToRender::Batch(b, tick) => batch = Some((b, tick)),
        }
    }
    let (Some((batch, tick)), Some(gpu)) = (batch, gpu.as_mut()) else { return };
    let out = gpu.step(&batch.inputs(), &batch.options());
    if let Ok(tx) = side.to_main.lock() {
        let _ = tx.send((batch, tick, out));
    }
}
