//! [`RtcdDebugPlugin`]: a gizmo overlay of the last tick's rays, coloured by kind (standard
//! magenta, iterative yellow, predictive white, rejected grey; see [`ray_color`]), and of the
//! contacts handed to Rapier (red normals scaled by depth). Toggled with a key (F1 by default) or
//! [`RtcdDebugSettings::enabled`].
//!
//! Rays are short (a contact's rays are about as long as the penetration) and lie where bodies
//! touch, mostly hidden by the bodies' surfaces. So the overlay draws with its own gizmo group,
//! [`RtcdGizmos`], whose lines are wider than Bevy's default and drawn in front of the scene's
//! geometry (`depth_bias` -1), in colours the scene's materials are unlikely to have; change them
//! through Bevy's `GizmoConfigStore` (`config_mut::<RtcdGizmos>()`).
//!
//! Only what the tick traced is drawn: with Rapier's contact recycling followed (the default,
//! [`RtcdSettings::contact_recycling`]), a pair Rapier recycles keeps its contacts untraced and
//! shows neither rays nor contacts until it moves; set `contact_recycling: false` to see every
//! pair's rays every tick.

use bevy::{color::palettes::css, prelude::*};
use rtcd::{RayKind, narrow_phase::RayOutcome};

use crate::{RtcdNarrowPhase, RtcdSettings};

/// Settings of the overlay (a resource).
#[derive(Resource, Clone, Debug)]
pub struct RtcdDebugSettings {
    /// Draw the overlay (turning it on makes the narrow phase record its rays).
    pub enabled: bool,
    /// Draw the rays.
    pub rays: bool,
    /// Draw the contact normals, scaled by depth (times `normal_scale`).
    pub contacts: bool,
    /// Length of a drawn normal per metre of depth (depths are small; default 20).
    pub normal_scale: f32,
    /// The key that toggles `enabled`.
    pub toggle_key: KeyCode,
}

impl Default for RtcdDebugSettings {
    fn default() -> Self {
        Self { enabled: true, rays: true, contacts: true, normal_scale: 20.0, toggle_key: KeyCode::F1 }
    }
}

/// The overlay. Needs Bevy's gizmos (and `RtcdPlugin`).
#[derive(Default)]
pub struct RtcdDebugPlugin {
    /// Initial settings (an `RtcdDebugSettings` resource inserted before the plugin is kept
    /// instead).
    pub settings: RtcdDebugSettings,
}

/// The gizmo config group the overlay draws with (see the module docs).
#[derive(Default, Reflect, GizmoConfigGroup)]
pub struct RtcdGizmos;

impl RtcdGizmos {
    /// The overlay's default gizmo config: 3-pixel lines, in front of all geometry.
    pub fn default_config() -> GizmoConfig {
        GizmoConfig { line: GizmoLineConfig { width: 3.0, ..default() }, depth_bias: -1.0, ..default() }
    }
}

impl Plugin for RtcdDebugPlugin {
    fn build(&self, app: &mut App) {
        crate::plugin::keep_or_insert(
            app,
            &self.settings,
            &RtcdDebugSettings::default(),
            "RtcdDebugSettings",
        );
        app.insert_gizmo_config(RtcdGizmos, RtcdGizmos::default_config())
            .add_systems(Update, (toggle, sync_recording, draw).chain());
    }
}

fn toggle(keys: Option<Res<ButtonInput<KeyCode>>>, mut settings: ResMut<RtcdDebugSettings>) {
    if let Some(keys) = keys
        && keys.just_pressed(settings.toggle_key)
    {
        settings.enabled = !settings.enabled;
    }
}

/// The overlay records the rays while it is on, and stops recording them when turned off only if it
/// was what turned the recording on: an app's own `record_rays: true` stays.
fn sync_recording(
    debug: Res<RtcdDebugSettings>,
    mut settings: ResMut<RtcdSettings>,
    mut turned_on: Local<bool>,
) {
    if debug.enabled && !settings.record_rays {
        settings.record_rays = true;
        *turned_on = true;
    } else if !debug.enabled && *turned_on {
        settings.record_rays = false;
        *turned_on = false;
    }
}

/// Colour of a ray: by kind (standard magenta, iterative yellow, predictive white), grey when
/// rejected, half transparent for predictions.
pub fn ray_color(kind: RayKind, outcome: RayOutcome) -> Color {
    let base: Color = match (outcome, kind) {
        (RayOutcome::Rejected, _) => css::GRAY.into(),
        (_, RayKind::Standard) => css::FUCHSIA.into(),
        (_, RayKind::Iterative) => css::YELLOW.into(),
        (_, RayKind::Predictive) => css::WHITE.into(),
    };
    if outcome == RayOutcome::Prediction { base.with_alpha(0.5) } else { base }
}

fn draw(debug: Res<RtcdDebugSettings>, state: Option<Res<RtcdNarrowPhase>>, mut gizmos: Gizmos<RtcdGizmos>) {
    let Some(state) = state else { return };
    if !debug.enabled {
        return;
    }
    let g = state.debug_geometry();
    if debug.rays {
        for (a, b, kind, outcome) in &g.rays {
            let color = ray_color(*kind, *outcome);
            if a != b {
                gizmos.line(*a, *b, color);
            } else {
                // A ray that never left its vertex: a small cross (three segments; a gizmo sphere
                // is ~100, which made the overlay of a large pile cost seconds per frame).
                const S: f32 = 0.004;
                for axis in [Vec3::X, Vec3::Y, Vec3::Z] {
                    gizmos.line(*a - axis * S, *a + axis * S, color);
                }
            }
        }
    }
    if debug.contacts {
        for (p, n, dist) in &g.contacts {
            let len = (-dist).max(0.0) * debug.normal_scale + 0.01;
            gizmos.arrow(*p, *p - *n * len, css::RED);
        }
    }
}
