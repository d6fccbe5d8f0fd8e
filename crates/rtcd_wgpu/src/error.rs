//! Typed errors of the GPU backend.

use thiserror::Error;

/// Why the GPU backend cannot start or run.
#[derive(Debug, Clone, Error, PartialEq)]
pub enum GpuError {
    /// No adapter was found (no driver, or none for the requested backends).
    #[error("no GPU adapter found: {0}")]
    NoAdapter(String),
    /// The adapter or device lacks what the kernels need.
    #[error("GPU adapter `{adapter}` cannot run rtcd: missing {}", missing.join(", "))]
    Unsupported {
        /// Adapter name.
        adapter: String,
        /// Each missing feature or too-small limit, with the value needed and the value found.
        missing: Vec<String>,
    },
    /// Requesting the device failed.
    #[error("cannot create the GPU device: {0}")]
    Device(String),
    /// A shader failed to compose, validate or compile.
    #[error("shader `{shader}` failed: {message}")]
    Shader {
        /// File.
        shader: String,
        /// What the compiler said.
        message: String,
    },
    /// A step needs a buffer larger than the device allows.
    #[error("a step needs {needed} bytes in `{buffer}` but the device allows {allowed}")]
    TooLarge {
        /// Buffer label.
        buffer: &'static str,
        /// Bytes needed.
        needed: u64,
        /// Device limit.
        allowed: u64,
    },
}
