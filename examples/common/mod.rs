//! What every example shares, so each example shows only its point: asset paths, the static ground
//! (a cuboid whose top face is y = 0, optionally with low walls), the render mesh of an OBJ asset,
//! a camera and lights, and an on-screen panel of the narrow phase's [`RtcdDiagnostics`].
//!
//! Everything that draws takes `Option`al asset stores, so the same set-up code runs headless
//! (`MinimalPlugins`, no renderer).
#![allow(dead_code, reason = "shared by the examples, each using a part")]

use std::path::PathBuf;

use bevy::{
    asset::RenderAssetUsages,
    light::CascadeShadowConfigBuilder,
    mesh::{Indices, PrimitiveTopology},
    prelude::*,
};
use bevy_rapier3d::prelude::*;
use bevy_rtcd::prelude::*;
use bevy_rtcd::rtcd::RtcdMesh;

/// Path of `assets/meshes/{name}.obj` (absolute: examples run from any working directory).
pub fn mesh_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/meshes").join(format!("{name}.obj"))
}

/// A Bevy render mesh (positions, smooth vertex normals, indices) of an `RtcdMesh`, so what is drawn
/// is exactly what collides. (Bevy's `obj` loader is not enabled; this also keeps the welded
/// vertices the narrow phase uses.)
pub fn render_mesh(mesh: &RtcdMesh) -> Mesh {
    let positions: Vec<[f32; 3]> = mesh.positions().iter().map(|p| p.to_array()).collect();
    let normals: Vec<[f32; 3]> = mesh.normals().iter().map(|n| n.to_array()).collect();
    let indices: Vec<u32> = mesh.triangles().iter().flatten().copied().collect();
    Mesh::new(PrimitiveTopology::TriangleList, RenderAssetUsages::RENDER_WORLD)
        .with_inserted_attribute(Mesh::ATTRIBUTE_POSITION, positions)
        .with_inserted_attribute(Mesh::ATTRIBUTE_NORMAL, normals)
        .with_inserted_indices(Indices::U32(indices))
}

/// The static ground: a cuboid slab whose top face is y = 0, and optionally four low walls around
/// it (all plain Rapier cuboids; the plugin ray-traces mesh bodies against static cuboids).
#[derive(Clone, Copy, Debug)]
pub struct Ground {
    /// Half size of the walled floor in x and z (inside the walls).
    pub half_size: Vec2,
    /// Height of the walls above the floor; `None`: no walls.
    pub wall_height: Option<f32>,
}

impl Ground {
    /// Half thickness of the slab.
    pub const SLAB_HALF: f32 = 0.5;
    /// Wall thickness.
    pub const WALL: f32 = 0.3;
    /// How far the slab reaches beyond the walls (or the floor).
    pub const MARGIN: f32 = 1.0;

    /// Half extents of the slab in x and z.
    pub fn slab_half(&self) -> Vec2 {
        self.half_size + Vec2::splat(Self::WALL + Self::MARGIN)
    }

    /// Whether a point is over the slab (so below y = 0 means through it).
    pub fn over_slab(&self, p: Vec3) -> bool {
        let h = self.slab_half();
        p.x.abs() <= h.x && p.z.abs() <= h.y
    }

    /// Cuboids (centre, half extents) of the slab and the walls.
    pub fn boxes(&self) -> Vec<(Vec3, Vec3)> {
        let s = self.slab_half();
        let mut boxes = vec![(Vec3::new(0.0, -Self::SLAB_HALF, 0.0), Vec3::new(s.x, Self::SLAB_HALF, s.y))];
        if let Some(h) = self.wall_height {
            let (hx, hz, t) = (self.half_size.x, self.half_size.y, Self::WALL * 0.5);
            let y = h * 0.5;
            boxes.push((Vec3::new(hx + t, y, 0.0), Vec3::new(t, y, hz + 2.0 * t)));
            boxes.push((Vec3::new(-hx - t, y, 0.0), Vec3::new(t, y, hz + 2.0 * t)));
            boxes.push((Vec3::new(0.0, y, hz + t), Vec3::new(hx, y, t)));
            boxes.push((Vec3::new(0.0, y, -hz - t), Vec3::new(hx, y, t)));
        }
        boxes
    }

    /// Spawns the static colliders, and their meshes when `render` is given.
    pub fn spawn(
        &self,
        commands: &mut Commands,
        mut render: Option<(&mut Assets<Mesh>, &mut Assets<StandardMaterial>)>,
    ) {
        let floor = render.as_mut().map(|(_, materials)| {
            materials.add(StandardMaterial {
                base_color: Color::srgb(0.32, 0.34, 0.36),
                perceptual_roughness: 0.9,
                ..default()
            })
        });
        let wall = render.as_mut().map(|(_, materials)| {
            materials.add(StandardMaterial {
                base_color: Color::srgba(0.55, 0.6, 0.68, 0.35),
                alpha_mode: AlphaMode::Blend,
                ..default()
            })
        });
        for (k, (centre, half)) in self.boxes().into_iter().enumerate() {
            let mut e = commands.spawn((
                Name::new(if k == 0 { "ground" } else { "wall" }),
                Collider::cuboid(half.x, half.y, half.z),
                Transform::from_translation(centre),
            ));
            if let Some((meshes, _)) = render.as_mut() {
                let material = if k == 0 { floor.clone() } else { wall.clone() };
                e.insert((
                    Mesh3d(meshes.add(Cuboid::from_size(2.0 * half))),
                    MeshMaterial3d(material.expect("render given")),
                ));
            }
        }
    }
}

/// A 3D camera at `eye` looking at `target`.
pub fn spawn_camera(commands: &mut Commands, eye: Vec3, target: Vec3) {
    commands.spawn((Camera3d::default(), Transform::from_translation(eye).looking_at(target, Vec3::Y)));
}

/// A sun with shadows (cascades sized for a scene of about `extent` metres) and some ambient light.
pub fn spawn_lights(commands: &mut Commands, extent: f32) {
    commands.spawn((
        DirectionalLight { illuminance: 9_000.0, shadow_maps_enabled: true, ..default() },
        Transform::from_xyz(4.0, 10.0, 6.0).looking_at(Vec3::ZERO, Vec3::Y),
        CascadeShadowConfigBuilder { num_cascades: 1, maximum_distance: 4.0 * extent, ..default() }.build(),
    ));
    commands.insert_resource(GlobalAmbientLight { brightness: 400.0, ..default() });
}

/// The on-screen panel: [`RtcdDiagnostics`] of the last tick, plus lines the example puts in
/// [`PanelLines`], refreshed every frame.
pub struct DiagnosticsPanelPlugin;

/// Extra lines shown under the diagnostics (set by the example).
#[derive(Resource, Default)]
pub struct PanelLines(pub Vec<String>);

#[derive(Component)]
struct DiagnosticsPanel;

impl Plugin for DiagnosticsPanelPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<PanelLines>().add_systems(Startup, spawn_panel).add_systems(Update, update_panel);
    }
}

fn spawn_panel(mut commands: Commands) {
    commands.spawn((
        DiagnosticsPanel,
        Text::new("rtcd: starting"),
        TextFont::from_font_size(14.0),
        TextColor(Color::WHITE),
        BackgroundColor(Color::srgba(0.0, 0.0, 0.0, 0.55)),
        Node {
            position_type: PositionType::Absolute,
            top: Val::Px(8.0),
            left: Val::Px(8.0),
            padding: UiRect::all(Val::Px(6.0)),
            ..default()
        },
    ));
}

/// The panel's text for these diagnostics.
pub fn diagnostics_text(d: &RtcdDiagnostics) -> String {
    let gpu = d.gpu_time.map(|t| format!(" (gpu {:.2} ms)", t.as_secs_f64() * 1e3)).unwrap_or_default();
    format!(
        "backend: {}\nnarrow phase: {:.2} ms{gpu}\npairs: {}\nrays: {} standard, {} iterative, {} predictive\n\
         iterative hit rate: {:.1} %\ncontacts: {} points ({} rays in contact), deepest {:.2} mm",
        if d.backend.is_empty() { "(not started)" } else { &d.backend },
        d.narrow_phase_time.as_secs_f64() * 1e3,
        d.pairs,
        d.standard_rays,
        d.iterative_rays,
        d.predictive_rays,
        100.0 * d.iterative_hit_rate,
        d.contacts,
        d.contact_rays,
        1e3 * d.max_depth,
    )
}

fn update_panel(
    diagnostics: Res<RtcdDiagnostics>,
    lines: Res<PanelLines>,
    mut panel: Query<&mut Text, With<DiagnosticsPanel>>,
) {
    let mut text = diagnostics_text(&diagnostics);
    for l in &lines.0 {
        text.push('\n');
        text.push_str(l);
    }
    for mut t in &mut panel {
        if t.0 != text {
            t.0.clone_from(&text);
        }
    }
}
