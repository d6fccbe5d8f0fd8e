//! A plain Rapier world (no Bevy) stepped at 60 Hz with gravity -9.81, with or without our narrow
//! phase, and measures that do not depend on rtcd (parry point queries, vertex heights).
#![allow(dead_code, reason = "shared by several test binaries, each using a part")]

use std::{path::PathBuf, sync::Arc};

use rapier3d::{parry::shape::TriMeshFlags, prelude::*};
use rtcd::RtcdMesh;
use rtcd_rapier::{Joints, RtcdDriver, RtcdShape, integration_parameters};

/// 60 Hz.
pub const DT: f32 = 1.0 / 60.0;

/// A Rapier world and, for ours, the batch driver that runs before each step.
pub struct World {
    pub bodies: RigidBodySet,
    pub colliders: ColliderSet,
    pub islands: IslandManager,
    pub broad_phase: DefaultBroadPhase,
    pub narrow_phase: NarrowPhase,
    pub impulse_joints: ImpulseJointSet,
    pub multibody_joints: MultibodyJointSet,
    pub ccd_solver: CCDSolver,
    pub pipeline: PhysicsPipeline,
    pub params: IntegrationParameters,
    pub gravity: Vector,
    pub driver: Option<RtcdDriver>,
}

impl World {
    /// Plain Rapier, with the given parameters.
    pub fn plain(params: IntegrationParameters) -> Self {
        Self::build(NarrowPhase::new(), params, None)
    }

    /// Rapier with our dispatcher chained in front and the driver's batch before each step.
    pub fn ours(driver: RtcdDriver) -> Self {
        Self::build(driver.rapier_narrow_phase(), integration_parameters(), Some(driver))
    }

    fn build(
        narrow_phase: NarrowPhase,
        mut params: IntegrationParameters,
        driver: Option<RtcdDriver>,
    ) -> Self {
        params.dt = DT;
        Self {
            bodies: RigidBodySet::new(),
            colliders: ColliderSet::new(),
            islands: IslandManager::new(),
            broad_phase: DefaultBroadPhase::new(),
            narrow_phase,
            impulse_joints: ImpulseJointSet::new(),
            multibody_joints: MultibodyJointSet::new(),
            ccd_solver: CCDSolver::new(),
            pipeline: PhysicsPipeline::new(),
            params,
            gravity: Vector::new(0.0, -9.81, 0.0),
            driver,
        }
    }

    /// One tick: our batch (if any), then Rapier's step.
    pub fn step(&mut self) {
        let joints = Joints::new(&self.impulse_joints, &self.multibody_joints);
        if let Some(d) = &mut self.driver {
            if self.params.contact_recycling {
                d.detect_recycling(&self.bodies, &self.colliders, joints, &self.params, &self.narrow_phase);
            } else {
                d.detect(&self.bodies, &self.colliders, joints, &self.params);
            }
        }
        self.rapier_step();
    }

    /// Rapier's step alone (the batch run, or not, by the caller).
    pub fn rapier_step(&mut self) {
        self.pipeline.step(
            self.gravity,
            &self.params,
            &mut self.islands,
            &mut self.broad_phase,
            &mut self.narrow_phase,
            &mut self.bodies,
            &mut self.colliders,
            &mut self.impulse_joints,
            &mut self.multibody_joints,
            &mut self.ccd_solver,
            &(),
            &(),
        );
    }

    /// A fixed cuboid with its top face at `top` (y), centred on x = z = 0.
    pub fn add_ground(&mut self, half_extents: Vector, top: f32) -> ColliderHandle {
        self.add_fixed_cuboid(half_extents, Vector::new(0.0, top - half_extents.y, 0.0))
    }

    /// A fixed cuboid (no body).
    pub fn add_fixed_cuboid(&mut self, half_extents: Vector, center: Vector) -> ColliderHandle {
        self.colliders.insert(
            ColliderBuilder::cuboid(half_extents.x, half_extents.y, half_extents.z).translation(center),
        )
    }

    /// A dynamic body with one collider of this shape.
    pub fn add_body(&mut self, shape: SharedShape, pose: Pose) -> (RigidBodyHandle, ColliderHandle) {
        let body = self.bodies.insert(RigidBodyBuilder::dynamic().pose(pose));
        let collider = self.colliders.insert_with_parent(ColliderBuilder::new(shape), body, &mut self.bodies);
        (body, collider)
    }

    /// The world pose of a body.
    pub fn pose(&self, body: RigidBodyHandle) -> Pose {
        *self.bodies[body].position()
    }

    /// Kinetic energy of every dynamic body.
    pub fn kinetic_energy(&self) -> f32 {
        self.bodies.iter().filter(|(_, b)| b.is_dynamic()).map(|(_, b)| b.kinetic_energy()).sum()
    }
}

/// A tetrahedron on an equilateral base of side 1 m whose fourth vertex is `height` above the base
/// plane, over the base's centroid (`rtcd::shapes::flat_tetrahedron`).
pub fn flat_tetrahedron(height: f32) -> Arc<RtcdMesh> {
    let (v, i) = rtcd::shapes::flat_tetrahedron(1.0, height);
    Arc::new(RtcdMesh::new(format!("tetrahedron {height} m high"), &v, &i).unwrap())
}

/// `assets/meshes/{name}.obj`.
pub fn asset(name: &str) -> Arc<RtcdMesh> {
    let path: PathBuf =
        [env!("CARGO_MANIFEST_DIR"), "..", "..", "assets", "meshes", &format!("{name}.obj")].iter().collect();
    Arc::new(RtcdMesh::from_obj(&path).unwrap_or_else(|e| panic!("{e}")))
}

/// Our shape for a mesh (a fresh instance).
pub fn rtcd_shape(mesh: &Arc<RtcdMesh>) -> SharedShape {
    SharedShape::new(RtcdShape::new(mesh.clone()).unwrap())
}

/// Rapier's own trimesh collider shape for the same mesh (plain Rapier's way, with its recommended
/// flags for dynamic meshes).
pub fn rapier_trimesh(mesh: &RtcdMesh) -> SharedShape {
    SharedShape::trimesh_with_flags(
        mesh.positions().to_vec(),
        mesh.triangles().to_vec(),
        TriMeshFlags::FIX_INTERNAL_EDGES | TriMeshFlags::ORIENTED,
    )
    .unwrap()
}

/// Lowest vertex height of a mesh at a pose.
pub fn lowest_vertex(mesh: &RtcdMesh, pose: &Pose) -> f32 {
    mesh.positions().iter().map(|p| pose.transform_point(*p).y).fold(f32::INFINITY, f32::min)
}

/// Largest edge of a mesh's bounding box: "its size".
pub fn size(mesh: &RtcdMesh) -> f32 {
    mesh.aabb().extents().max_element()
}

/// Deepest vertex of either mesh inside the other, by parry's solid point queries on the oriented
/// triangle meshes (independent of rtcd): the interpenetration of the pair.
pub fn interpenetration(a: &RtcdMesh, pose_a: &Pose, b: &RtcdMesh, pose_b: &Pose) -> f32 {
    let tri = |m: &RtcdMesh| {
        TriMesh::with_flags(m.positions().to_vec(), m.triangles().to_vec(), TriMeshFlags::ORIENTED).unwrap()
    };
    let (ta, tb) = (tri(a), tri(b));
    let depth = |from: &RtcdMesh, from_pose: &Pose, into: &TriMesh, into_pose: &Pose| {
        from.positions()
            .iter()
            .map(|p| {
                let local = into_pose.inverse_transform_point(from_pose.transform_point(*p));
                if into.contains_local_point(local) {
                    (into.project_local_point(local, false).point - local).length()
                } else {
                    0.0
                }
            })
            .fold(0.0f32, f32::max)
    };
    depth(a, pose_a, &tb, pose_b).max(depth(b, pose_b, &ta, pose_a))
}

/// A driver on the CPU backend, or on the GPU one (whatever adapter the machine has: lavapipe in CI;
/// panics without one, so a GPU test never runs on the CPU instead).
pub fn driver(params: rtcd::RtcdParams, gpu: bool) -> RtcdDriver {
    if gpu {
        let d = rtcd_wgpu::create_device(&rtcd_wgpu::DeviceOptions::default()).unwrap_or_else(|e| {
            panic!("no GPU device (install Mesa's lavapipe: scripts/install-deps.sh): {e}")
        });
        let backend = rtcd_wgpu::GpuNarrowPhase::new(&d.device, &d.queue, params).unwrap();
        RtcdDriver::with_backend(Box::new(backend)).unwrap()
    } else {
        RtcdDriver::new(params).unwrap()
    }
}
