//! [`RtcdCollider`]: marks an entity's collider as a ray-traced concave mesh. The plugin builds the
//! Rapier collider from it: a custom parry shape wrapping the triangle mesh (so broad phase, mass
//! properties from the closed volume and scene queries keep working) that our narrow phase handles.

use std::{path::PathBuf, sync::Arc};

use bevy::{
    mesh::{Indices, VertexAttributeValues},
    platform::collections::HashMap,
    prelude::*,
};
use bevy_rapier3d::prelude::{Collider, ColliderScale};
use rtcd::RtcdMesh;
use rtcd_rapier::{RtcdShape, RtcdShapeData, parry3d::shape::SharedShape};

/// A ray-traced mesh collider. Put it on an entity with a `RigidBody` (or alone, for a static mesh);
/// the plugin inserts the Rapier `Collider` once the mesh is available. Do not add a `Collider`
/// yourself.
///
/// The collider's scale is baked in when it is built (the entity's global scale at that moment) and
/// not followed afterwards.
#[derive(Component, Clone, Debug)]
pub struct RtcdCollider {
    source: ColliderSource,
}

#[derive(Clone, Debug)]
enum ColliderSource {
    Mesh(Handle<Mesh>),
    Obj(PathBuf),
    Rtcd(Arc<RtcdMesh>),
}

impl RtcdCollider {
    /// From a Bevy mesh asset (triangle list, positions as `Float32x3`; built when loaded).
    pub fn from_mesh(mesh: Handle<Mesh>) -> Self {
        Self { source: ColliderSource::Mesh(mesh) }
    }

    /// From a Wavefront OBJ file (path relative to the working directory, or absolute).
    pub fn from_obj(path: impl Into<PathBuf>) -> Self {
        Self { source: ColliderSource::Obj(path.into()) }
    }

    /// From an `rtcd::RtcdMesh` built by the caller.
    pub fn from_rtcd_mesh(mesh: Arc<RtcdMesh>) -> Self {
        Self { source: ColliderSource::Rtcd(mesh) }
    }
}

/// What became of an [`RtcdCollider`]: inserted by the plugin.
#[derive(Component, Clone, Debug)]
pub enum RtcdColliderState {
    /// Ray traced by our narrow phase.
    Ready {
        /// The prepared mesh.
        mesh: Arc<RtcdMesh>,
    },
    /// The mesh was rejected by validation: Rapier's own trimesh collider handles it (with a warning).
    Fallback {
        /// Why.
        reason: String,
    },
    /// No collider could be built (e.g. an unreadable file); the entity has no collider.
    Failed {
        /// Why.
        reason: String,
    },
}

/// Shared preparation results, so many colliders of one mesh share one `RtcdShapeData`.
#[derive(Resource, Default)]
pub(crate) struct RtcdMeshCache {
    meshes: HashMap<(AssetId<Mesh>, [u32; 3]), Arc<RtcdShapeData>>,
    files: HashMap<(PathBuf, [u32; 3]), Arc<RtcdShapeData>>,
    rtcd: HashMap<(u64, [u32; 3]), Arc<RtcdShapeData>>,
}

fn scale_key(s: Vec3) -> [u32; 3] {
    s.to_array().map(f32::to_bits)
}

/// Positions and triangle indices of a Bevy mesh, or why it cannot be used.
pub(crate) fn mesh_data(mesh: &Mesh) -> Result<(Vec<Vec3>, Vec<u32>), String> {
    if mesh.primitive_topology() != bevy::mesh::PrimitiveTopology::TriangleList {
        return Err(format!("topology {:?} is not a triangle list", mesh.primitive_topology()));
    }
    let positions = match mesh.try_attribute(Mesh::ATTRIBUTE_POSITION) {
        Ok(VertexAttributeValues::Float32x3(p)) => p.iter().map(|p| Vec3::from_array(*p)).collect::<Vec<_>>(),
        Ok(_) => return Err("positions are not Float32x3".into()),
        Err(e) => {
            return Err(format!(
                "no positions in the main world ({e}); keep the mesh's MAIN_WORLD asset usage"
            ));
        }
    };
    let indices = match mesh.try_indices_option() {
        Ok(Some(Indices::U16(i))) => i.iter().map(|&i| i as u32).collect(),
        Ok(Some(Indices::U32(i))) => i.clone(),
        Ok(None) => (0..positions.len() as u32).collect(),
        Err(e) => return Err(format!("no indices in the main world ({e})")),
    };
    Ok((positions, indices))
}

fn scaled(name: String, p: &[Vec3], i: &[u32], scale: Vec3) -> Result<RtcdMesh, rtcd::MeshError> {
    if scale == Vec3::ONE {
        return RtcdMesh::new(name, p, i);
    }
    let p: Vec<Vec3> = p.iter().map(|v| *v * scale).collect();
    RtcdMesh::new(name, &p, i)
}

fn shape_data(mesh: RtcdMesh) -> Result<Arc<RtcdShapeData>, String> {
    RtcdShapeData::new(Arc::new(mesh)).map(Arc::new).map_err(|e| e.to_string())
}

/// Builds the Rapier collider of every new [`RtcdCollider`] whose mesh is available.
pub(crate) fn build_colliders(
    mut commands: Commands,
    meshes: Option<Res<Assets<Mesh>>>,
    mut cache: ResMut<RtcdMeshCache>,
    new: Query<
        (Entity, &RtcdCollider, Option<&Transform>, Option<&ChildOf>, Option<&Name>),
        Without<RtcdColliderState>,
    >,
    globals: Query<&GlobalTransform>,
) {
    for (entity, collider, local, parent, name) in &new {
        // The global scale. A freshly spawned entity's GlobalTransform is not propagated yet: use its
        // Transform, times its parent's global scale.
        let parent_scale = parent
            .and_then(|p| globals.get(p.parent()).ok())
            .map_or(Vec3::ONE, |g| g.compute_transform().scale);
        let scale = local.map_or(Vec3::ONE, |t| t.scale) * parent_scale;
        let label = name.map_or_else(|| format!("{entity}"), |n| n.to_string());
        let result: Result<Arc<RtcdShapeData>, (String, Option<Collider>)> = match &collider.source {
            ColliderSource::Mesh(handle) => {
                let Some(mesh) = meshes.as_ref().and_then(|m| m.get(handle)) else { continue }; // not loaded yet
                let key = (handle.id(), scale_key(scale));
                match cache.meshes.get(&key) {
                    Some(d) => Ok(d.clone()),
                    None => match mesh_data(mesh) {
                        Err(e) => Err((format!("mesh of {label}: {e}"), None)),
                        Ok((p, i)) => match scaled(label.clone(), &p, &i, scale) {
                            Ok(m) => shape_data(m).map_err(|e| (e, None)).inspect(|d| {
                                cache.meshes.insert(key, d.clone());
                            }),
                            Err(e) => {
                                // Rapier's own trimesh collider for a mesh we reject.
                                let p: Vec<Vec3> = p.iter().map(|v| *v * scale).collect();
                                let tris: Vec<[u32; 3]> =
                                    i.chunks_exact(3).map(|t| [t[0], t[1], t[2]]).collect();
                                let fallback = Collider::trimesh(p, tris).ok();
                                Err((e.to_string(), fallback))
                            }
                        },
                    },
                }
            }
            ColliderSource::Obj(path) => {
                let key = (path.clone(), scale_key(scale));
                match cache.files.get(&key) {
                    Some(d) => Ok(d.clone()),
                    None => RtcdMesh::from_obj(path)
                        .and_then(|m| {
                            let p = m.positions().to_vec();
                            let i: Vec<u32> = m.triangles().iter().flatten().copied().collect();
                            scaled(m.name().to_string(), &p, &i, scale)
                        })
                        .map_err(|e| (e.to_string(), None))
                        .and_then(|m| shape_data(m).map_err(|e| (e, None)))
                        .inspect(|d| {
                            cache.files.insert(key, d.clone());
                        }),
                }
            }
            ColliderSource::Rtcd(mesh) => {
                let key = (mesh.id(), scale_key(scale));
                match cache.rtcd.get(&key) {
                    Some(d) => Ok(d.clone()),
                    None => {
                        let m = if scale == Vec3::ONE {
                            Ok((**mesh).clone())
                        } else {
                            let i: Vec<u32> = mesh.triangles().iter().flatten().copied().collect();
                            scaled(mesh.name().to_string(), mesh.positions(), &i, scale)
                        };
                        m.map_err(|e| (e.to_string(), None))
                            .and_then(|m| shape_data(m).map_err(|e| (e, None)))
                            .inspect(|d| {
                                cache.rtcd.insert(key, d.clone());
                            })
                    }
                }
            }
        };
        let mut e = commands.entity(entity);
        // The collider's scale is baked in: tell bevy_rapier not to scale it again.
        e.insert(ColliderScale::Absolute(Vec3::ONE));
        match result {
            Ok(data) => {
                let shape = RtcdShape::from_data(data.clone());
                e.insert((
                    Collider::from(SharedShape::new(shape)),
                    RtcdColliderState::Ready { mesh: data.mesh().clone() },
                ));
            }
            Err((reason, Some(fallback))) => {
                warn!("rtcd: {label}: {reason}; using Rapier's trimesh collider for it instead");
                e.insert((fallback, RtcdColliderState::Fallback { reason }));
            }
            Err((reason, None)) => {
                warn!("rtcd: {label}: cannot build a collider: {reason}");
                e.insert(RtcdColliderState::Failed { reason });
            }
        }
    }
}
