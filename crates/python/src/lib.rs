//! `hpcsched._core`: PyO3 bindings of hpcsched-core. Bindings only, no logic.

mod advise;
mod agent;
mod convert;
mod engine;
mod error;
mod external;
mod ranks;
mod swf;
mod utilization;

use pyo3::prelude::*;
use pyo3::types::PyDict;

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

/// Why a job was refused at submission (a partition's limits, a QOS' submission limit),
/// indexed by the codes in `Simulation.results()["rejected"]`.
#[pyfunction]
fn rejection_names() -> Vec<&'static str> {
    hpcsched_core::model::Rejection::NAMES.to_vec()
}

/// Why a site holds a queued job pending for ever (a partition's limits, only partitions that
/// are down), indexed by the codes in `Simulation.results()["held"]`.
#[pyfunction]
fn held_names() -> Vec<&'static str> {
    hpcsched_core::model::Held::NAMES.to_vec()
}

/// A partition's states (`State=` in Slurm), as platform files name them.
#[pyfunction]
fn partition_state_names() -> Vec<&'static str> {
    hpcsched_core::model::PartitionState::NAMES.to_vec()
}

/// Bounded slowdowns of jobs (`max(1, (wait + run) / max(run, tau))`), the engine's definition.
#[pyfunction]
fn bounded_slowdowns<'py>(
    py: Python<'py>,
    wait: numpy::PyReadonlyArray1<'py, f64>,
    run_time: numpy::PyReadonlyArray1<'py, f64>,
) -> PyResult<Bound<'py, numpy::PyArray1<f64>>> {
    use numpy::IntoPyArray;
    let (wait, run_time) = (wait.as_slice()?, run_time.as_slice()?);
    if wait.len() != run_time.len() {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "wait and run_time have different lengths",
        ));
    }
    let out: Vec<f64> = wait
        .iter()
        .zip(run_time)
        .map(|(&w, &r)| hpcsched_core::engine::bounded_slowdown(w, r))
        .collect();
    Ok(out.into_pyarray(py))
}

/// Names each hold's nodes (`hpcsched_core::layout::lay_out`): per hold, its nodes inside its
/// pool as ranges (`0-3,7`).
#[pyfunction]
fn lay_out(
    py: Python<'_>,
    sizes: Vec<u32>,
    start: numpy::PyReadonlyArray1<'_, f64>,
    end: numpy::PyReadonlyArray1<'_, f64>,
    pool: numpy::PyReadonlyArray1<'_, u32>,
    count: numpy::PyReadonlyArray1<'_, u32>,
    from_top: numpy::PyReadonlyArray1<'_, bool>,
) -> PyResult<Vec<String>> {
    use hpcsched_core::layout::{index_ranges, Hold};
    let (start, end, pool) = (start.as_slice()?, end.as_slice()?, pool.as_slice()?);
    let (count, from_top) = (count.as_slice()?, from_top.as_slice()?);
    let n = start.len();
    if [end.len(), pool.len(), count.len(), from_top.len()] != [n; 4] {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "hold columns have different lengths",
        ));
    }
    let holds: Vec<Hold> = (0..n)
        .map(|i| Hold {
            start: start[i],
            end: end[i],
            pool: pool[i],
            count: count[i],
            from_top: from_top[i],
        })
        .collect();
    let named = py
        .detach(|| hpcsched_core::layout::lay_out(&sizes, &holds))
        .map_err(|e| error::to_py_err(py, e, None))?;
    Ok(named.iter().map(|nodes| index_ranges(nodes)).collect())
}

/// Names of the node power states, in the engine's order (the timeline's columns).
#[pyfunction]
fn node_state_names() -> Vec<&'static str> {
    hpcsched_core::engine::power::NodeState::ALL
        .iter()
        .map(|s| s.name())
        .collect()
}

/// What each built-in policy takes: `{name: {"searches", "window", "backfill", "power"}}`
/// (`backfill` is the mode it always uses, None when `--backfill` chooses).
#[pyfunction]
fn policy_capabilities(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let out = PyDict::new(py);
    for name in hpcsched_core::sched::policy_names() {
        let c = hpcsched_core::sched::capabilities(name).expect("a registered name");
        let entry = PyDict::new(py);
        entry.set_item("searches", c.searches)?;
        entry.set_item("window", c.window)?;
        entry.set_item("backfill", c.backfill)?;
        entry.set_item("power", c.power)?;
        out.set_item(name, entry)?;
    }
    Ok(out)
}

/// The reward terms, in the order of the weights (`Reward::TERMS`).
#[pyfunction]
fn reward_terms() -> Vec<&'static str> {
    hpcsched_core::search::Reward::TERMS.to_vec()
}

/// The named rewards (`Reward::PRESETS`): `{name: {term: weight}}`, nonzero weights only.
#[pyfunction]
fn reward_presets(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    use hpcsched_core::search::Reward;
    let out = PyDict::new(py);
    for (name, reward) in Reward::PRESETS {
        let weights = PyDict::new(py);
        for (term, w) in Reward::TERMS.iter().zip(reward.weights()) {
            if w != 0.0 {
                weights.set_item(term, w)?;
            }
        }
        out.set_item(name, weights)?;
    }
    Ok(out)
}

/// The names each look-ahead option takes, and EASY's estimates: the engine's lists, which the
/// Python specs validate against (`{option: [names]}`).
#[pyfunction]
fn option_names(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    use hpcsched_core::search::Rollout;
    use hpcsched_core::search::{ArrivalModel, Lookahead, RuntimeModel};
    let out = PyDict::new(py);
    out.set_item("runtime_model", RuntimeModel::NAMES.to_vec())?;
    out.set_item("arrivals", ArrivalModel::NAMES.to_vec())?;
    out.set_item("rollout", Rollout::NAMES.to_vec())?;
    out.set_item("lookahead", Lookahead::NAMES.to_vec())?;
    out.set_item("prior", Lookahead::PRIOR_NAMES.to_vec())?;
    out.set_item(
        "estimates",
        hpcsched_core::sched::registry::ESTIMATES.to_vec(),
    )?;
    out.set_item("overrun", hpcsched_core::model::Overrun::NAMES.to_vec())?;
    out.set_item("backfill", hpcsched_core::Backfill::NAMES.to_vec())?;
    out.set_item(
        "decision_log",
        hpcsched_core::spec::LogDetail::NAMES.to_vec(),
    )?;
    Ok(out)
}

/// The look-ahead's defaults (`SearchConfig::default()`), which the Python specs use.
#[pyfunction]
fn search_defaults(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let c = hpcsched_core::search::SearchConfig::default();
    let out = PyDict::new(py);
    out.set_item("iterations", c.iterations)?;
    out.set_item("time_budget", c.time_budget)?;
    out.set_item("depth", c.depth)?;
    out.set_item("gamma", c.gamma)?;
    out.set_item("exploration", c.exploration)?;
    out.set_item("trees", c.trees)?;
    out.set_item("seed", c.seed)?;
    Ok(out)
}

/// SNF-ICON's defaults (`IconConfig::default()`, SNF-ICON Table I), which the Python specs use.
#[pyfunction]
fn icon_defaults(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let c = hpcsched_core::power::config::IconConfig::default();
    let out = PyDict::new(py);
    out.set_item("alpha", c.alpha)?;
    out.set_item("beta", c.beta)?;
    out.set_item("initial_arrival_rate", c.initial_arrival_rate)?;
    out.set_item("arrival_smoothing", c.arrival_smoothing)?;
    out.set_item("service_smoothing", c.service_smoothing)?;
    out.set_item("resource_smoothing", c.resource_smoothing)?;
    out.set_item("sigma_floor", c.sigma_floor)?;
    out.set_item("min_spares", c.min_spares)?;
    out.set_item("max_spares", c.max_spares)?;
    out.set_item("max_horizon", c.max_horizon)?;
    out.set_item("recency_window", c.recency_window)?;
    out.set_item("screen_window", c.screen_window)?;
    out.set_item("screen_min_samples", c.screen.min_samples)?;
    out.set_item("screen_max_samples", c.screen.max_samples)?;
    out.set_item("cv_tolerance", c.screen.cv_tolerance)?;
    out.set_item("max_autocorrelation", c.screen.max_autocorrelation)?;
    out.set_item("ks_multiplier", c.screen.ks_multiplier)?;
    out.set_item("ks_scale", c.screen.ks_scale)?;
    out.set_item("require_service_samples", c.require_service_samples)?;
    out.set_item("stale_completion_shutdown", c.stale_completion_shutdown)?;
    Ok(out)
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
    m.add("BSLD_TAU", hpcsched_core::engine::BSLD_TAU)?;
    m.add(
        "PRE_MAINTENANCE",
        hpcsched_core::engine::utilization::PRE_MAINTENANCE,
    )?;
    m.add("MAX_TIME", hpcsched_core::MAX_TIME)?;
    m.add("MAX_LINE_BYTES", hpcsched_core::io::swf::MAX_LINE_BYTES)?;
    m.add("QUOTED_CHARS", hpcsched_core::io::swf::QUOTED_CHARS)?;
    // The largest search count (iterations, depth, trees: u32 in `SearchConfig`) and seed (u64).
    m.add("MAX_COUNT", u32::MAX)?;
    m.add("MAX_SEED", u64::MAX)?;
    // What a node may hold where jobs share nodes, and the names of the sharing modes.
    m.add(
        "MAX_PER_NODE",
        hpcsched_core::model::resources::MAX_PER_NODE,
    )?;
    m.add("MAX_MEMORY", hpcsched_core::model::resources::MAX_MEMORY)?;
    m.add(
        "SHARING_NAMES",
        hpcsched_core::model::Sharing::NAMES.to_vec(),
    )?;
    m.add(
        "DEFAULT_IDLE_TIMEOUT",
        hpcsched_core::power::config::DEFAULT_IDLE_TIMEOUT,
    )?;
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
    m.add_function(wrap_pyfunction!(rejection_names, m)?)?;
    m.add_function(wrap_pyfunction!(held_names, m)?)?;
    m.add_function(wrap_pyfunction!(partition_state_names, m)?)?;
    m.add_function(wrap_pyfunction!(node_state_names, m)?)?;
    m.add_function(wrap_pyfunction!(lay_out, m)?)?;
    m.add_function(wrap_pyfunction!(bounded_slowdowns, m)?)?;
    m.add_function(wrap_pyfunction!(utilization::utilization, m)?)?;
    m.add_function(wrap_pyfunction!(utilization::overall_utilization, m)?)?;
    m.add_function(wrap_pyfunction!(ranks::rank_correlation, m)?)?;
    m.add_function(wrap_pyfunction!(policy_capabilities, m)?)?;
    m.add_function(wrap_pyfunction!(search_defaults, m)?)?;
    m.add_function(wrap_pyfunction!(option_names, m)?)?;
    m.add_function(wrap_pyfunction!(reward_terms, m)?)?;
    m.add_function(wrap_pyfunction!(reward_presets, m)?)?;
    m.add_function(wrap_pyfunction!(icon_defaults, m)?)?;
    m.add_function(wrap_pyfunction!(screen_statistics, m)?)?;
    m.add_function(wrap_pyfunction!(predict_remaining, m)?)?;
    Ok(())
}
