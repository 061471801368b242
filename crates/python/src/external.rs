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
        nodes: chosen_nodes(answer)?,
    })
}

/// The decision's `nodes`: job index -> node indices (absent or empty: none named), in the
/// mapping's order.
fn chosen_nodes(answer: &Bound<'_, PyAny>) -> PyResult<Vec<(u32, Vec<u32>)>> {
    let Ok(value) = answer.getattr("nodes") else {
        return Ok(Vec::new());
    };
    if value.is_none() {
        return Ok(Vec::new());
    }
    let mapping = value.cast::<pyo3::types::PyMapping>().map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err("nodes must map job indices to node indices")
    })?;
    let mut out = Vec::new();
    for item in mapping.items()?.iter() {
        let (job, nodes): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item.extract()?;
        let job = u32::try_from(job.extract::<i64>()?).map_err(|_| {
            pyo3::exceptions::PyValueError::new_err("nodes: a job index is negative")
        })?;
        out.push((job, indices(&nodes)?));
    }
    Ok(out)
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
    if let Some(shared) = view.shared {
        shared_view(py, &d, view, shared)?;
    }
    Ok(d)
}

/// Where jobs share nodes: each node's free CPUs, memory and generic resources, each waiting
/// job's request, and where each would start now alone (see `hpcsched.protocol.View`).
fn shared_view<'py>(
    py: Python<'py>,
    d: &Bound<'py, PyDict>,
    view: &View,
    shared: hpcsched_core::engine::SharedView,
) -> PyResult<()> {
    use hpcsched_core::model::Memory;
    use numpy::PyArray2;
    let (model, usage) = (shared.model, shared.state.usage());
    let nodes = model.resources.nodes();
    let kinds = model.resources.gres_names();
    d.set_item("gres_kinds", kinds.to_vec())?;
    d.set_item(
        "node_free_cpus",
        array(py, (0..nodes).map(|n| i64::from(usage.free_cpus(n)))),
    )?;
    d.set_item(
        "node_free_memory",
        array(py, (0..nodes).map(|n| usage.free_memory(n) as i64)),
    )?;
    let gres: Vec<Vec<i64>> = (0..nodes)
        .map(|n| {
            (0..kinds.len() as u32)
                .map(|k| i64::from(usage.free_gres(n, k)))
                .collect()
        })
        .collect();
    let gres = if kinds.is_empty() {
        numpy::ndarray::Array2::<i64>::zeros((nodes as usize, 0)).into_pyarray(py)
    } else {
        PyArray2::from_vec2(py, &gres)?
    };
    d.set_item("node_free_gres", gres)?;
    let requests = view.queue.iter().map(|&j| &model.requests[j as usize]);
    d.set_item(
        "queue_tasks",
        array(py, requests.clone().map(|r| i64::from(r.tasks))),
    )?;
    d.set_item(
        "queue_cpus_per_task",
        array(py, requests.clone().map(|r| i64::from(r.cpus_per_task))),
    )?;
    d.set_item(
        "queue_req_nodes",
        array(
            py,
            requests.clone().map(|r| i64::from(r.nodes.unwrap_or(0))),
        ),
    )?;
    d.set_item(
        "queue_memory",
        array(
            py,
            requests.clone().map(|r| match r.memory {
                Memory::PerNode(mb) | Memory::PerCpu(mb) => mb as i64,
                Memory::Whole => -1,
            }),
        ),
    )?;
    d.set_item(
        "queue_memory_per_cpu",
        array(
            py,
            requests
                .clone()
                .map(|r| matches!(r.memory, Memory::PerCpu(_))),
        ),
    )?;
    d.set_item(
        "queue_gres",
        array(
            py,
            requests
                .clone()
                .map(|r| r.gres.iter().map(|g| i64::from(g.count)).sum::<i64>()),
        ),
    )?;
    d.set_item("queue_exclusive", array(py, requests.map(|r| r.exclusive)))?;
    let fits = hpcsched_core::sched::shared::SharedScan::default().fits_alone(view, usize::MAX);
    let fit_nodes: Vec<String> = (fits.iter())
        .map(|a| {
            a.as_ref().map_or_else(String::new, |a| {
                hpcsched_core::layout::index_ranges(&a.nodes)
            })
        })
        .collect();
    d.set_item("queue_fit_nodes", fit_nodes)?;
    Ok(())
}
