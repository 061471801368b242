//! Policies written in Python: the engine's `Policy` contract over a Python object with
//! `decide(view) -> decision`. Bindings only: the view becomes a dict of numpy arrays, the
//! answer an `ExternalDecision` that the core translates and validates.

use std::sync::{Arc, Mutex};

use hpcsched_core::agent::{observe, CLUSTER_FEATURES, JOB_FEATURES};
use hpcsched_core::sched::{translate, Backfill, ExternalDecision};
use hpcsched_core::{CoreError, Decision, Policy, View};
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// What the Python side left behind: the first exception it raised, and the last decision it
/// made (to name it when the engine refuses it).
#[derive(Default)]
pub struct Outcome {
    pub error: Option<PyErr>,
    pub last_decision: Option<Py<PyAny>>,
}

impl Outcome {
    /// The last decision's repr (computed only when an error needs it: reprs of long orders
    /// are costly).
    pub fn describe(&self, py: Python<'_>) -> String {
        self.last_decision
            .as_ref()
            .and_then(|d| d.bind(py).repr().ok())
            .map_or_else(|| "none".to_string(), |r| r.to_string())
    }
}

pub struct PyPolicy {
    object: Py<PyAny>,
    name: String,
    /// Agent features for this many queue slots in each view (`observation_slots`), if set.
    slots: Option<usize>,
    pub outcome: Arc<Mutex<Outcome>>,
}

impl PyPolicy {
    pub fn new(object: Py<PyAny>, name: String, slots: Option<usize>) -> Self {
        PyPolicy {
            object,
            name,
            slots,
            outcome: Arc::new(Mutex::new(Outcome::default())),
        }
    }

    fn call(&self, py: Python<'_>, view: &View, decision: &mut Decision) -> PyResult<()> {
        let arrays = view_dict(py, view)?;
        if let Some(slots) = self.slots {
            let mut jobs = vec![0.0f32; slots * JOB_FEATURES];
            let mut cluster = vec![0.0f32; CLUSTER_FEATURES];
            let mut mask = vec![false; slots];
            observe(view, slots, &mut jobs, &mut cluster, &mut mask);
            jobs.extend_from_slice(&cluster);
            arrays.set_item("observation", jobs.into_pyarray(py))?;
        }
        let answer = self.object.bind(py).call_method1("decide", (arrays,))?;
        self.outcome.lock().expect("not poisoned").last_decision = Some(answer.clone().unbind());
        let described = || {
            answer
                .repr()
                .map_or_else(|_| "?".to_string(), |r| r.to_string())
        };
        let external = external_decision(&answer).map_err(|e| {
            // Ctrl-C while reading a decision (a sequence of the policy's own) stays Ctrl-C
            if e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) {
                return e;
            }
            let reason = format!("{}: not a decision ({e}): {}", self.name, described());
            crate::error::to_py_err(py, CoreError::decision(reason), None)
        })?;
        translate(view, &external, decision).map_err(|e| {
            let reason = format!(
                "{} at t={}: {}; decision: {}",
                self.name,
                view.now,
                reason_of(e),
                described()
            );
            crate::error::to_py_err(py, CoreError::decision(reason), None)
        })
    }
}

impl Policy for PyPolicy {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn decide(&mut self, view: &View, decision: &mut Decision) {
        if self.outcome.lock().expect("not poisoned").error.is_some() {
            return; // the run stops at this step; decide nothing more
        }
        Python::attach(|py| {
            if let Err(err) = self.call(py, view, decision) {
                decision.clear();
                self.outcome.lock().expect("not poisoned").error = Some(err);
            }
        });
    }
}

/// The reason of an error, without its kind ("invalid decision: ...").
pub fn reason_of(error: CoreError) -> String {
    match error {
        CoreError::InvalidDecision { reason } => reason,
        other => other.to_string(),
    }
}

/// Reads a Python decision: attributes `start`, `backfilled`, `order`, `backfill`, `timers`, `power_on`,
/// `power_off` (see `hpcsched.protocol.Decision`).
pub fn external_decision(answer: &Bound<'_, PyAny>) -> PyResult<ExternalDecision> {
    let list_u32 = |name: &str| -> PyResult<Vec<u32>> {
        let value = answer.getattr(name)?;
        if value.is_none() {
            return Ok(Vec::new());
        }
        indices(&value)
    };
    let order = {
        let value = answer.getattr("order")?;
        if value.is_none() {
            None
        } else {
            Some(indices(&value)?)
        }
    };
    let backfill: String = answer.getattr("backfill")?.extract()?;
    Ok(ExternalDecision {
        start: list_u32("start")?,
        backfilled: list_u32("backfilled")?,
        order,
        backfill: Backfill::from_name(&backfill).ok_or_else(|| {
            pyo3::exceptions::PyValueError::new_err(format!(
                "backfill must be 'easy' or 'none', not {backfill:?}"
            ))
        })?,
        timers: answer.getattr("timers")?.extract::<Vec<f64>>()?,
        power_on: list_u32("power_on")?,
        power_off: list_u32("power_off")?,
    })
}

/// Job indices from a numpy integer array (the view's own arrays, read in one go) or any
/// sequence of integers.
fn indices(value: &Bound<'_, PyAny>) -> PyResult<Vec<u32>> {
    let convert = |v: i64| {
        u32::try_from(v)
            .map_err(|_| pyo3::exceptions::PyValueError::new_err(format!("{v} is not a job index")))
    };
    if let Ok(array) = value.extract::<PyReadonlyArray1<'_, i64>>() {
        return array.as_array().iter().map(|&v| convert(v)).collect();
    }
    value
        .extract::<Vec<i64>>()?
        .into_iter()
        .map(convert)
        .collect()
}

/// A numpy array from an iterator.
fn array<'py, T: numpy::Element>(
    py: Python<'py>,
    values: impl Iterator<Item = T>,
) -> Bound<'py, PyArray1<T>> {
    values.collect::<Vec<T>>().into_pyarray(py)
}

/// The view as a dict of numpy arrays (see `hpcsched.protocol.View`).
pub fn view_dict<'py>(py: Python<'py>, view: &View) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let jobs = view.jobs;
    let queue = view.queue.iter().map(|&j| (j, jobs.get(j)));
    let running = view.running.iter();
    let completed = view.completed.iter();
    d.set_item("now", view.now)?;
    d.set_item("machine_nodes", view.machine_nodes)?;
    d.set_item("free", view.free)?;
    d.set_item("queue", array(py, queue.clone().map(|(j, _)| i64::from(j))))?;
    d.set_item("queue_id", array(py, queue.clone().map(|(_, job)| job.id)))?;
    d.set_item(
        "queue_submit",
        array(py, queue.clone().map(|(_, job)| job.submit)),
    )?;
    d.set_item(
        "queue_nodes",
        array(py, queue.clone().map(|(_, job)| i64::from(job.nodes))),
    )?;
    d.set_item(
        "queue_requested",
        array(py, queue.map(|(_, job)| job.requested_time)),
    )?;
    d.set_item(
        "running",
        array(py, running.clone().map(|r| i64::from(r.job))),
    )?;
    d.set_item(
        "running_id",
        array(py, running.clone().map(|r| jobs.get(r.job).id)),
    )?;
    d.set_item(
        "running_nodes",
        array(py, running.clone().map(|r| i64::from(r.nodes))),
    )?;
    d.set_item("running_start", array(py, running.clone().map(|r| r.start)))?;
    d.set_item(
        "running_estimated_end",
        array(py, running.map(|r| view.estimated_end(r))),
    )?;
    d.set_item("down", view.down_windows.to_vec())?;
    d.set_item(
        "announced",
        view.announced
            .iter()
            .map(|w| (w.start, w.end, w.nodes.unwrap_or(view.machine_nodes)))
            .collect::<Vec<_>>(),
    )?;
    d.set_item(
        "node_state",
        array(py, view.nodes.iter().map(|n| n.state as u8)),
    )?;
    d.set_item(
        "arrived",
        array(py, view.arrived.iter().map(|&j| i64::from(j))),
    )?;
    d.set_item(
        "completed",
        array(py, completed.clone().map(|c| i64::from(c.0))),
    )?;
    d.set_item("completed_start", array(py, completed.clone().map(|c| c.1)))?;
    if let Some(site) = view.site {
        // each partition (name, nodes, free nodes) and each waiting job's partitions (indices)
        let partitions: Vec<(String, u32, u32)> = (site.model.partitions().iter())
            .enumerate()
            .map(|(p, part)| {
                let free = site.free_in(p as u32, site.state.free());
                (part.spec.name.clone(), part.size, free)
            })
            .collect();
        d.set_item("partitions", partitions)?;
        let candidates: Vec<Vec<u32>> = (view.queue.iter())
            .map(|&j| site.model.usable(j).to_vec())
            .collect();
        d.set_item("queue_partitions", candidates)?;
    }
    d.set_item("completed_end", array(py, completed.map(|c| c.2)))?;
    Ok(d)
}
