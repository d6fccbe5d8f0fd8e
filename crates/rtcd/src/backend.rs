//! The interface every narrow-phase backend implements: the CPU reference here ([`NarrowPhase`]) and
//! the GPU one in `rtcd_wgpu`. Same inputs, same outputs; callers hold a `Box<dyn NarrowPhaseBackend>`
//! and fall back to the CPU when a GPU backend returns an error.

use thiserror::Error;

use crate::{
    narrow_phase::{NarrowPhase, PairInput, StepOptions, StepOutput},
    params::RtcdParams,
};

/// Why a backend could not run a step. The caller can retry on another backend; pair state of the
/// failed backend should be considered lost.
#[derive(Debug, Clone, Error, PartialEq)]
pub enum BackendError {
    /// The GPU device was lost (driver reset, removed adapter, ...).
    #[error("GPU device lost: {0}")]
    DeviceLost(String),
    /// Results could not be read back in time or at all.
    #[error("GPU readback failed: {0}")]
    Readback(String),
    /// The device refused a command (validation or out-of-memory error).
    #[error("GPU error: {0}")]
    Device(String),
}

/// A narrow phase that runs steps over many pairs (see [`NarrowPhase::step`] for the contract).
pub trait NarrowPhaseBackend: Send {
    /// Short human-readable name, e.g. `"cpu"` or `"gpu (llvmpipe)"`.
    fn name(&self) -> String;
    /// The parameters in use.
    fn params(&self) -> &RtcdParams;
    /// Runs one step; see [`NarrowPhase::step`].
    fn step(&mut self, pairs: &[PairInput], opts: &StepOptions) -> Result<StepOutput, BackendError>;
}

impl NarrowPhaseBackend for NarrowPhase {
    fn name(&self) -> String {
        "cpu".into()
    }
    fn params(&self) -> &RtcdParams {
        NarrowPhase::params(self)
    }
    fn step(&mut self, pairs: &[PairInput], opts: &StepOptions) -> Result<StepOutput, BackendError> {
        Ok(NarrowPhase::step(self, pairs, opts))
    }
}
