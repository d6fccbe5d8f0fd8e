//! [`RtcdDebugPlugin`]: a gizmo overlay of the last tick's rays, coloured by kind (standard,
//! iterative, predictive, rejected), and of the contacts handed to Rapier (normals scaled by depth).
//! Toggled with a key (F1 by default) or [`RtcdDebugSettings::enabled`].
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
    /// Initial settings.
    pub settings: RtcdDebugSettings,
}

impl Plugin for RtcdDebugPlugin {
    fn build(&self, app: &mut App) {
        app.insert_resource(self.settings.clone())
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

fn sync_recording(debug: Res<RtcdDebugSettings>, mut settings: ResMut<RtcdSettings>) {
    if settings.record_rays != debug.enabled {
        settings.record_rays = debug.enabled;
    }
}

/// Colour of a ray: by kind, grey when rejected, lighter for predictions.
pub fn ray_color(kind: RayKind, outcome: RayOutcome) -> Color {
    let base: Color = match (outcome, kind) {
        (RayOutcome::Rejected, _) => css::GRAY.into(),
        (_, RayKind::Standard) => css::ORANGE_RED.into(),
        (_, RayKind::Iterative) => css::LIME.into(),
        (_, RayKind::Predictive) => css::DEEP_SKY_BLUE.into(),
    };
    if outcome == RayOutcome::Prediction { base.with_alpha(0.5) } else { base }
}

fn draw(debug: Res<RtcdDebugSettings>, state: Option<Res<RtcdNarrowPhase>>, mut gizmos: Gizmos) {
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
            gizmos.arrow(*p, *p - *n * len, css::YELLOW);
        }
    }
}
