//! `hpcsched._core`: PyO3 bindings of hpcsched-core. Bindings only, no logic.

mod engine;
mod error;
mod swf;

use pyo3::prelude::*;

/// Names of the built-in policies (the 17 MARS heuristics and SNF).
#[pyfunction]
fn policy_names() -> Vec<&'static str> {
    hpcsched_core::sched::policy_names()
}

/// Names of the 17 queue-ordering heuristics of MARS Table II.
#[pyfunction]
fn heuristic_names() -> Vec<&'static str> {
    hpcsched_core::Heuristic::ALL
        .iter()
        .map(|h| h.name())
        .collect()
}

/// Names of the start kinds, indexed by the codes in `Simulation.results()["start_kind"]`.
#[pyfunction]
fn start_kind_names() -> Vec<&'static str> {
    use hpcsched_core::StartKind;
    [StartKind::Primary, StartKind::Backfill, StartKind::Drain]
        .iter()
        .map(|k| k.name())
        .collect()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<engine::PySimulation>()?;
    m.add_function(wrap_pyfunction!(swf::parse_swf, m)?)?;
    m.add_function(wrap_pyfunction!(swf::parse_swf_file, m)?)?;
    m.add_function(wrap_pyfunction!(policy_names, m)?)?;
    m.add_function(wrap_pyfunction!(heuristic_names, m)?)?;
    m.add_function(wrap_pyfunction!(start_kind_names, m)?)?;
    Ok(())
}
