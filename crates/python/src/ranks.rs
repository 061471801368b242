//! `rank_correlation`: Spearman's rho of two samples (`hpcsched_core::engine::ranks`).

use hpcsched_core::engine::ranks::rank_correlation as spearman;
use numpy::PyReadonlyArray1;
use pyo3::prelude::*;

/// Spearman's rank correlation of `a` and `b` (same length, no NaN; ties take their average
/// rank); `None` with fewer than two values or when either is constant.
#[pyfunction]
pub(crate) fn rank_correlation(
    py: Python<'_>,
    a: PyReadonlyArray1<'_, f64>,
    b: PyReadonlyArray1<'_, f64>,
) -> PyResult<Option<f64>> {
    let (a, b) = (a.as_slice()?, b.as_slice()?);
    if a.len() != b.len() {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "the two samples have different lengths",
        ));
    }
    if a.iter().chain(b).any(|x| x.is_nan()) {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "a sample holds NaN",
        ));
    }
    Ok(py.detach(|| spearman(a, b)))
}
