//! What every example shares, so each example shows only its point: asset paths, static boxes (the
//! ground and walls), the render mesh of an OBJ asset, a camera and lights, an on-screen panel of the
//! narrow phase's [`RtcdDiagnostics`], and (in [`measure`]) the command line, the measurements and
//! the headless runner.
//!
//! Everything that draws takes `Option`al asset stores, so the same set-up code runs headless
//! (`MinimalPlugins`, no renderer).
#![allow(dead_code, reason = "shared by the examples, each using a part")]

pub mod measure;

use std::path::PathBuf;

use bevy::{
    asset::RenderAssetUsages,
    core_pipeline::tonemapping::DebandDither,
    light::CascadeShadowConfigBuilder,
    math::primitives::Cuboid as Cuboid3,
    mesh::{Indices, PrimitiveTopology},
    prelude::*,
};
use bevy_rapier3d::prelude::*;
use bevy_rtcd::prelude::*;
use bevy_rtcd::rtcd::RtcdMesh;
use rtcd_scenes::Cuboid;

/// Path of `{name}.obj` in the mesh folder the scenes load from (`rtcd_scenes::assets_dir`: the
/// repository's `assets/meshes`, absolute so examples run from any working directory, or the
/// folder `RTCD_ASSETS_DIR` names).
pub fn mesh_path(name: &str) -> PathBuf {
    rtcd_scenes::assets_dir().join(format!("{name}.obj"))
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

/// Spawns static boxes (plain Rapier cuboids: the plugin ray-traces mesh bodies against them): the
/// ground, then walls; with `render`, the ground opaque and the walls see-through.
pub fn spawn_static_boxes(
    commands: &mut Commands,
    ground: Cuboid,
    walls: &[Cuboid],
    mut render: Option<(&mut Assets<Mesh>, &mut Assets<StandardMaterial>)>,
) {
    let looks = render.as_mut().map(|(_, materials)| {
        let floor = StandardMaterial {
            base_color: Color::srgb(0.32, 0.34, 0.36),
            perceptual_roughness: 0.9,
            ..default()
        };
        let wall = StandardMaterial {
            base_color: Color::srgba(0.55, 0.6, 0.68, 0.15),
            alpha_mode: AlphaMode::Blend,
            ..default()
        };
        [materials.add(floor), materials.add(wall)]
    });
    for (k, b) in std::iter::once(&ground).chain(walls).enumerate() {
        let h = b.half_extents;
        let mut e = commands.spawn((
            Name::new(if k == 0 { "ground" } else { "wall" }),
            Collider::cuboid(h.x, h.y, h.z),
            Transform::from_translation(b.center),
        ));
        if let (Some((meshes, _)), Some(looks)) = (render.as_mut(), &looks) {
            e.insert((
                Mesh3d(meshes.add(Cuboid3::from_size(2.0 * h))),
                MeshMaterial3d(looks[k.min(1)].clone()),
            ));
        }
    }
}

/// A 3D camera at `eye` looking at `target`. Without deband dithering: its noise would make a
/// screenshot several times larger as a PNG, and the scene has no wide gradients to band.
pub fn spawn_camera(commands: &mut Commands, eye: Vec3, target: Vec3) {
    commands.spawn((
        Camera3d::default(),
        DebandDither::Disabled,
        Transform::from_translation(eye).looking_at(target, Vec3::Y),
    ));
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
pub struct DiagnosticsPanelPlugin {
    /// Text size in pixels.
    pub font_size: f32,
}

impl Default for DiagnosticsPanelPlugin {
    fn default() -> Self {
        Self { font_size: 14.0 }
    }
}

/// Extra lines shown under the diagnostics (set by the example).
#[derive(Resource, Default)]
pub struct PanelLines(pub Vec<String>);

#[derive(Component)]
struct DiagnosticsPanel;

impl Plugin for DiagnosticsPanelPlugin {
    fn build(&self, app: &mut App) {
        let font = TextFont::from_font_size(self.font_size);
        app.init_resource::<PanelLines>()
            .add_systems(Startup, move |commands: Commands| spawn_panel(commands, font.clone()))
            .add_systems(Update, update_panel);
    }
}

fn spawn_panel(mut commands: Commands, font: TextFont) {
    commands.spawn((
        DiagnosticsPanel,
        Text::new("rtcd: starting"),
        font,
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
        "backend {}: narrow phase {:.2} ms{gpu}, {} pairs\n\
         rays: {} standard, {} iterative ({:.1} % hit), {} predictive\n\
         contacts: {} points from {} rays, deepest {:.2} mm",
        if d.backend.is_empty() { "(not started)" } else { &d.backend },
        d.narrow_phase_time.as_secs_f64() * 1e3,
        d.pairs,
        d.standard_rays,
        d.iterative_rays,
        100.0 * d.iterative_hit_rate,
        d.predictive_rays,
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
