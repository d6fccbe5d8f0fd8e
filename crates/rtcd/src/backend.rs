//! The interface every narrow-phase backend implements: the CPU reference here ([`NarrowPhase`]) and
//! the GPU one in `rtcd_wgpu`. Same inputs, same outputs; callers hold a `Box<dyn NarrowPhaseBackend>`
//! and fall back to the CPU when a GPU backend returns an error.

use thiserror::Error;

use crate::{
    narrow_phase::{NarrowPhase, PairInput, PairKey, StepOptions, StepOutput},
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
    /// A call's input names something that does not exist (an edge index past its mesh's edges);
    /// nothing ran, and the backend is unchanged.
    #[error("invalid input: {0}")]
    InvalidInput(String),
}

/// A narrow phase that runs steps over many pairs (see [`NarrowPhase::step`] for the contract).
pub trait NarrowPhaseBackend: Send {
    /// Short human-readable name, e.g. `"cpu"` or `"gpu (llvmpipe)"`.
    fn name(&self) -> String;
    /// The parameters in use.
    fn params(&self) -> &RtcdParams;
    /// Runs one step; see [`NarrowPhase::step`].
    fn step(&mut self, pairs: &[PairInput], opts: &StepOptions) -> Result<StepOutput, BackendError>;
    /// Whether [`NarrowPhaseBackend::step_with_held`] keeps the state of pairs held by key. When
    /// not, a caller that wants a held pair's state kept gives it in `pairs` with
    /// [`PairInput::hold`](crate::PairInput::hold) set. Default `false`.
    fn holds_by_key(&self) -> bool {
        false
    }
    /// A step in which the pairs `held` (by key) keep their state untouched without an input or an
    /// output; see [`NarrowPhase::step_with_held`]. The default, for backends that do not
    /// [`hold by key`](NarrowPhaseBackend::holds_by_key), runs [`NarrowPhaseBackend::step`]: the
    /// held pairs are absent and lose their state (their next step is a standard trace).
    fn step_with_held(
        &mut self,
        pairs: &[PairInput],
        held: &[PairKey],
        opts: &StepOptions,
    ) -> Result<StepOutput, BackendError> {
        let _ = held;
        self.step(pairs, opts)
    }
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
    fn holds_by_key(&self) -> bool {
        true
    }
    fn step_with_held(
        &mut self,
        pairs: &[PairInput],
        held: &[PairKey],
        opts: &StepOptions,
    ) -> Result<StepOutput, BackendError> {
        Ok(NarrowPhase::step_with_held(self, pairs, held, opts))
    }
}
