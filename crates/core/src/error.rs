//! Errors of the core, split by who must act on them.

use std::fmt;

/// Everything that can go wrong in the core.
#[derive(Debug, Clone, PartialEq)]
pub enum CoreError {
    /// An input (workload, calendar, options) is malformed; names the line and field when known.
    InvalidInput {
        reason: String,
        line: Option<u64>,
        field: Option<String>,
    },
    /// A policy asked for something illegal (starting a job that does not fit, an unknown job).
    InvalidDecision { reason: String },
    /// An internal invariant broke: a bug in hpcsched.
    Internal { reason: String },
}

pub type Result<T> = std::result::Result<T, CoreError>;

impl CoreError {
    pub fn input(reason: impl Into<String>) -> Self {
        CoreError::InvalidInput {
            reason: reason.into(),
            line: None,
            field: None,
        }
    }

    pub fn decision(reason: impl Into<String>) -> Self {
        CoreError::InvalidDecision {
            reason: reason.into(),
        }
    }
}

impl fmt::Display for CoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CoreError::InvalidInput {
                reason,
                line,
                field,
            } => {
                if let Some(line) = line {
                    write!(f, "line {line}")?;
                    if let Some(field) = field {
                        write!(f, ", field {field}")?;
                    }
                    write!(f, ": ")?;
                }
                write!(f, "{reason}")
            }
            CoreError::InvalidDecision { reason } => write!(f, "invalid decision: {reason}"),
            CoreError::Internal { reason } => write!(f, "internal error: {reason}"),
        }
    }
}

impl std::error::Error for CoreError {}

/// Return early with an `InvalidInput` error.
#[macro_export]
macro_rules! ensure_input {
    ($cond:expr, $($arg:tt)+) => {
        if !$cond {
            return Err($crate::error::CoreError::input(format!($($arg)+)));
        }
    };
}
