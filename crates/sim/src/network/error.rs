//! Why a run could not be built or did not end cleanly.

use std::fmt;

/// Why a run could not be built or did not end cleanly.
#[derive(Debug, Clone, PartialEq)]
pub enum SimError {
    /// The configuration is invalid; the message names the field.
    Config(String),
    /// An end-of-run invariant failed; the run's results are not to be trusted.
    Invariant(Vec<String>),
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Config(m) => write!(f, "{m}"),
            SimError::Invariant(v) => write!(f, "invariant violated: {}", v.join("; ")),
        }
    }
}

impl std::error::Error for SimError {}

/// A configuration error as a result.
pub(crate) fn cfg_err<T>(msg: String) -> Result<T, SimError> {
    Err(SimError::Config(msg))
}
