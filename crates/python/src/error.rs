//! The only place a core error becomes a Python exception.
//!
//! The exception classes live in Python (`hpcsched.exceptions`) so they carry docstrings and
//! attributes; here they are looked up and instantiated with those attributes.

use hpcsched_core::CoreError;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Converts a core error into the matching `hpcsched.exceptions` class. `path` names the input
/// file, when the error is about one.
pub fn to_py_err(py: Python<'_>, err: CoreError, path: Option<&str>) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let exceptions = py.import("hpcsched.exceptions")?;
        let kwargs = PyDict::new(py);
        let (class, reason) = match err {
            CoreError::InvalidInput {
                reason,
                line,
                field,
            } => {
                kwargs.set_item("path", path)?;
                kwargs.set_item("line", line)?;
                kwargs.set_item("field", field)?;
                ("InputError", reason)
            }
            CoreError::InvalidDecision { reason } => ("DecisionError", reason),
            CoreError::Internal { reason } => {
                return Ok(PyRuntimeError::new_err(format!(
                    "hpcsched internal error: {reason}"
                )));
            }
        };
        let value = exceptions.getattr(class)?.call((reason,), Some(&kwargs))?;
        Ok(PyErr::from_value(value))
    };
    build().unwrap_or_else(|e| e)
}

/// `Result` adapter used by every binding method.
pub trait IntoPyResult<T> {
    fn py_result(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> IntoPyResult<T> for hpcsched_core::Result<T> {
    fn py_result(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| to_py_err(py, e, None))
    }
}
