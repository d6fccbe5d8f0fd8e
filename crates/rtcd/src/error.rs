//! Typed errors. Each carries what was wrong and where (which mesh, which element) so the caller can
//! tell its user; nothing in this crate panics on user input.

use std::path::PathBuf;

use thiserror::Error;

/// Why a mesh was rejected by [`RtcdMesh::new`](crate::RtcdMesh::new) or
/// [`RtcdMesh::from_obj`](crate::RtcdMesh::from_obj).
#[derive(Debug, Error)]
pub enum MeshError {
    /// No vertex or no triangle (after dropping degenerate triangles).
    #[error("mesh `{mesh}` is empty: {vertices} vertices, {triangles} triangles")]
    Empty {
        /// Mesh name.
        mesh: String,
        /// Vertex count given.
        vertices: usize,
        /// Triangle count left.
        triangles: usize,
    },
    /// The index buffer's length is not a multiple of 3.
    #[error("mesh `{mesh}`: index count {count} is not a multiple of 3")]
    IndexCount {
        /// Mesh name.
        mesh: String,
        /// Length of the index buffer.
        count: usize,
    },
    /// A vertex coordinate is NaN or infinite.
    #[error("mesh `{mesh}`: vertex {vertex} has a non-finite coordinate {position:?}")]
    NonFinite {
        /// Mesh name.
        mesh: String,
        /// Index of the vertex in the input.
        vertex: usize,
        /// Its position.
        position: [f32; 3],
    },
    /// A triangle names a vertex that does not exist.
    #[error(
        "mesh `{mesh}`: triangle {triangle} uses vertex index {index}, but there are only {vertex_count} vertices"
    )]
    IndexOutOfRange {
        /// Mesh name.
        mesh: String,
        /// Index of the triangle in the input.
        triangle: usize,
        /// The offending index.
        index: u32,
        /// Number of vertices given.
        vertex_count: usize,
    },
    /// More triangles than the hierarchy's leaves can name
    /// ([`MAX_TRIANGLES`](crate::mesh::MAX_TRIANGLES)).
    #[error("mesh `{mesh}` has {triangles} triangles; at most {max} are supported")]
    TooLarge {
        /// Mesh name.
        mesh: String,
        /// Triangles given.
        triangles: usize,
        /// The limit.
        max: usize,
    },
    /// More degenerate triangles than [`MAX_DEGENERATE_SHARE`](crate::mesh::MAX_DEGENERATE_SHARE) allows.
    #[error(
        "mesh `{mesh}`: {degenerate} of {total} triangles are degenerate (zero area or repeated vertex), first is triangle {first}; more than {max_percent}% is rejected"
    )]
    TooManyDegenerate {
        /// Mesh name.
        mesh: String,
        /// Degenerate triangles found.
        degenerate: usize,
        /// Triangles given.
        total: usize,
        /// Index of the first degenerate triangle in the input.
        first: usize,
        /// The limit, in percent.
        max_percent: f32,
    },
    /// Triangle windings cannot be made consistent (a Möbius-like surface).
    #[error(
        "mesh `{mesh}`: the surface is not orientable (inconsistent winding around triangle {triangle} cannot be repaired)"
    )]
    NonOrientable {
        /// Mesh name.
        mesh: String,
        /// Input index of a triangle where the propagation met a contradiction.
        triangle: usize,
    },
    /// The OBJ file could not be read.
    #[error("cannot load OBJ file {path:?}: {source}")]
    Obj {
        /// File path.
        path: PathBuf,
        /// The loader's error.
        #[source]
        source: tobj::LoadError,
    },
}

/// Why a pair was skipped by a narrow-phase step. The pair produces no contact for that step and its
/// iterative state is dropped; the other pairs are not affected.
#[derive(Debug, Clone, Error, PartialEq)]
pub enum PairError {
    /// The relative pose has a NaN/infinite component or a non-unit rotation.
    #[error("pair {key}: relative pose is not finite or its rotation is not unit: {pose}")]
    InvalidPose {
        /// The pair.
        key: crate::PairKey,
        /// The pose, formatted.
        pose: String,
    },
    /// The same key appears twice in one step's input.
    #[error("pair {key} appears more than once in this step's input; the repeat is skipped")]
    DuplicatePair {
        /// The pair.
        key: crate::PairKey,
    },
    /// A body paired with itself (self-collision is not supported).
    #[error("pair {key} pairs a body with itself; self-collision is not supported")]
    SelfPair {
        /// The pair.
        key: crate::PairKey,
    },
}
