//! `hpcsched._core`: PyO3 bindings of hpcsched-core. Bindings only, no logic.

mod advise;
mod engine;
mod error;
mod external;
mod swf;

use pyo3::prelude::*;

/// Names of the built-in policies (the 17 MARS heuristics and SNF).
#[pyfunction]
fn policy_names() -> Vec<&'static str> {
    hpcsched_core::sched::policy_names()
}

/// The SNF-ICON paper's names for a queue policy under a power manager.
#[pyfunction]
fn power_policy_names() -> Vec<&'static str> {
    hpcsched_core::sched::POWER_POLICIES.to_vec()
}

/// What a paper name stands for: (queue policy, backfill, power manager), or None.
#[pyfunction]
fn power_alias(name: &str) -> Option<(&'static str, &'static str, &'static str)> {
    hpcsched_core::sched::power_alias(name)
}

/// The modes of a power manager's log, indexed by its `mode` codes.
#[pyfunction]
fn power_mode_names() -> Vec<&'static str> {
    use hpcsched_core::power::config::Mode;
    [Mode::Ipm, Mode::Fallback, Mode::Icon]
        .iter()
        .map(|m| m.name())
        .collect()
}

/// The reasons a screen rejected, as the log's `rejection` bits say them.
#[pyfunction]
fn rejection_text(bits: u8) -> String {
    hpcsched_core::power::stats::Rejection(bits).describe()
}

/// Names of the power managers (`ipm`, `icon` and ICON's ablations).
#[pyfunction]
fn manager_names() -> Vec<&'static str> {
    hpcsched_core::power::config::MANAGER_NAMES.to_vec()
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

/// The Markovianity screen's statistics of a series: (CV, lag-one autocorrelation, KS distance
/// to the exponential with the sample mean). Exposed for checks against scipy.
#[pyfunction]
fn screen_statistics(samples: Vec<f64>) -> (f64, f64, f64) {
    use hpcsched_core::power::screen;
    let mut scratch = Vec::new();
    (
        screen::coefficient_of_variation(&samples),
        screen::lag_one_autocorrelation(&samples),
        screen::ks_distance_exponential(&samples, &mut scratch),
    )
}

/// The runtime predictor after observing `(run time, requested time)` pairs: predicted remaining
/// time of a job with `requested` seconds asked that has run `elapsed` seconds (Eq. 50).
#[pyfunction]
fn predict_remaining(
    observed: Vec<(f64, f64)>,
    requested: f64,
    elapsed: f64,
    smoothing: f64,
    sigma_floor: f64,
) -> f64 {
    let mut predictor =
        hpcsched_core::power::predict::RuntimePredictor::new(smoothing, sigma_floor);
    for (run, req) in observed {
        predictor.observe(run, req);
    }
    predictor.remaining(requested, elapsed)
}

/// Names of the actions of a MARS action set (`paper` = 161, or e.g. `fcfs,wfp3:256`), in the
/// order agents index them.
#[pyfunction]
fn action_names(spec: &str) -> PyResult<Vec<String>> {
    let py_err =
        |e: hpcsched_core::CoreError| pyo3::exceptions::PyValueError::new_err(e.to_string());
    let set = hpcsched_core::search::ActionSet::parse(spec).map_err(py_err)?;
    Ok((0..set.len()).map(|i| set.get(i).name()).collect())
}

/// Decompressed bytes a gzip input of `compressed` bytes may expand to (every reader's cap).
#[pyfunction]
fn inflated_cap(compressed: u64) -> u64 {
    hpcsched_core::io::swf::inflated_cap(compressed)
}

/// Fetches numpy's C API now, at import, where a failure is an exception. The numpy crate
/// fetches it on first use and panics when that fails, and fetching it runs Python code
/// (`numpy.lib.NumpyVersion`): a Ctrl-C arriving then became a Rust panic.
fn load_numpy_api(py: Python<'_>) -> PyResult<()> {
    let quiet = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let loaded = std::panic::catch_unwind(|| {
        numpy::PyArray1::<f64>::zeros(py, 0, false);
    });
    std::panic::set_hook(quiet);
    loaded.map_err(|_| match PyErr::take(py) {
        Some(err) => err,
        // the numpy crate dropped the error it panicked on: an interrupt is the one expected
        None => pyo3::exceptions::PyKeyboardInterrupt::new_err("while loading numpy's C API"),
    })
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    load_numpy_api(m.py())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("MAX_NODES", hpcsched_core::MAX_NODES)?;
    m.add("MAX_TIME", hpcsched_core::MAX_TIME)?;
    m.add("MAX_LINE_BYTES", hpcsched_core::io::swf::MAX_LINE_BYTES)?;
    m.add("QUOTED_CHARS", hpcsched_core::io::swf::QUOTED_CHARS)?;
    m.add_function(wrap_pyfunction!(inflated_cap, m)?)?;
    m.add_class::<engine::PySimulation>()?;
    m.add_function(wrap_pyfunction!(swf::parse_swf, m)?)?;
    m.add_function(wrap_pyfunction!(swf::parse_swf_file, m)?)?;
    m.add_function(wrap_pyfunction!(advise::plan_snapshot, m)?)?;
    m.add_function(wrap_pyfunction!(action_names, m)?)?;
    m.add_function(wrap_pyfunction!(policy_names, m)?)?;
    m.add_function(wrap_pyfunction!(heuristic_names, m)?)?;
    m.add_function(wrap_pyfunction!(power_policy_names, m)?)?;
    m.add_function(wrap_pyfunction!(power_alias, m)?)?;
    m.add_function(wrap_pyfunction!(manager_names, m)?)?;
    m.add_function(wrap_pyfunction!(power_mode_names, m)?)?;
    m.add_function(wrap_pyfunction!(rejection_text, m)?)?;
    m.add_function(wrap_pyfunction!(start_kind_names, m)?)?;
    m.add_function(wrap_pyfunction!(screen_statistics, m)?)?;
    m.add_function(wrap_pyfunction!(predict_remaining, m)?)?;
    Ok(())
}
