//! `Simulation`: one engine run driven from Python.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hpcsched_core::engine::power::NodeState;
use hpcsched_core::engine::{Column, LogTable};
use hpcsched_core::search::{ActionSet, Reward, RootReference};
use hpcsched_core::{CoreError, Engine, Policy, StopFlag};
use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::{native_run, Run};
use crate::error::IntoPyResult;
use crate::external::{reason_of, view_dict, Outcome, PyPolicy};

/// A simulation of one workload under one policy (built-in, Python, or a learning agent's).
#[pyclass(name = "Simulation", module = "hpcsched._core")]
pub struct PySimulation {
    pub(crate) engine: Engine,
    pub(crate) policy: Box<dyn Policy>,
    /// A Python policy's exception and last decision (None for built-in policies).
    outside: Option<Arc<Mutex<Outcome>>>,
    /// The reference the episode's reward terms start from (agents).
    pub(crate) start: RootReference,
    /// The MARS action set an agent picks from (built on first use).
    pub(crate) actions: Option<ActionSet>,
    /// Raised on Ctrl-C: stops the engine's steps and every search at once.
    stop: Arc<AtomicBool>,
}

/// How often a run without the GIL looks for Ctrl-C.
const SIGNAL_CHECK: Duration = Duration::from_millis(50);

impl PySimulation {
    /// Runs `work` on the engine without the GIL, on a worker thread, while this thread looks
    /// for signals every `SIGNAL_CHECK`: on Ctrl-C the stop flag ends the worker's steps and
    /// searches at once and KeyboardInterrupt is raised. A simulation interrupted so has
    /// decisions cut short: it refuses to go on.
    fn detached<T: Send>(
        &mut self,
        py: Python<'_>,
        work: impl FnOnce(&mut Engine, &mut dyn Policy, &StopFlag) -> hpcsched_core::Result<T> + Send,
    ) -> PyResult<T> {
        if self.stop.load(Ordering::Relaxed) {
            return Err(pyo3::exceptions::PyRuntimeError::new_err(
                "this simulation was interrupted, its last decisions cut short: start a new one",
            ));
        }
        let flag = StopFlag::new(Arc::clone(&self.stop));
        let (engine, policy) = (&mut self.engine, &mut self.policy);
        let (sender, receiver) = mpsc::channel();
        let stop = &self.stop;
        let outcome = std::thread::scope(|scope| {
            scope.spawn(move || {
                let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    work(engine, policy.as_mut(), &flag)
                }));
                let _ = sender.send(done);
            });
            // (the receiver moves in and out of each wait: it is not Sync)
            let mut receiver = receiver;
            loop {
                let (received, back) = py.detach(move || {
                    let received = receiver.recv_timeout(SIGNAL_CHECK);
                    (received, receiver)
                });
                receiver = back;
                match received {
                    Ok(done) => return Ok(done),
                    Err(RecvTimeoutError::Timeout) => {
                        if let Err(interrupt) = py.check_signals() {
                            stop.store(true, Ordering::Relaxed);
                            // the worker ends its step (a search returns at once)
                            let _ = py.detach(move || receiver.recv());
                            return Err(interrupt);
                        }
                    }
                    Err(RecvTimeoutError::Disconnected) => {
                        unreachable!("the worker sends before it ends")
                    }
                }
            }
        })?;
        match outcome {
            Ok(result) => result.py_result(py),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
}

#[pymethods]
impl PySimulation {
    /// One run, as `hpcsched.run.native.NativeRun` holds it.
    #[new]
    fn new(py: Python<'_>, run: &Bound<'_, PyAny>) -> PyResult<Self> {
        let Run { spec, python } = native_run(run)?;
        // a Python policy: the object Python gave (the core refuses "python" without one)
        let (mut outside, mut external) = (None, None);
        if let Some(object) = python.filter(|_| spec.policy == "python") {
            let name: String = object.bind(py).getattr("name")?.extract()?;
            let slots: Option<usize> = object.bind(py).getattr("observation_slots")?.extract()?;
            let python = PyPolicy::new(object, name, slots);
            outside = Some(Arc::clone(&python.outcome));
            external = Some(Box::new(python) as Box<dyn Policy>);
        }
        let stop = Arc::new(AtomicBool::new(false));
        let (engine, policy) = spec
            .build(external, StopFlag::new(Arc::clone(&stop)))
            .py_result(py)?;
        let start = Reward::reference(&engine);
        Ok(PySimulation {
            engine,
            policy,
            outside,
            start,
            actions: None,
            stop,
        })
    }

    /// Current simulated time (s).
    #[getter]
    fn now(&self) -> f64 {
        self.engine.now()
    }

    /// Jobs submitted so far.
    #[getter]
    fn submitted(&self) -> usize {
        self.engine.submitted()
    }

    /// Scheduling invocations so far.
    #[getter]
    fn invocations(&self) -> u64 {
        self.engine.log().invocations
    }

    /// Name of the policy with its parameters.
    #[getter]
    fn policy_name(&self) -> String {
        self.policy.name()
    }

    /// Time of the next event, or None when the run is over.
    fn peek(&self) -> Option<f64> {
        self.engine.peek()
    }

    /// Processes every event up to and including time `until` (GIL released for built-in
    /// policies).
    fn run_until(&mut self, py: Python<'_>, until: f64) -> PyResult<()> {
        if self.outside.is_some() {
            return self.run_outside(py, until, u64::MAX);
        }
        self.detached(py, move |engine, policy, stop| {
            engine
                .run_bounded(until, u64::MAX, policy, stop)
                .map(|_| ())
        })
    }

    /// Processes at most `events` event times; returns True while events remain. What a
    /// progress display steps by: bounded work per call, whatever the time scale.
    fn run_events(&mut self, py: Python<'_>, events: u64) -> PyResult<bool> {
        if self.outside.is_some() {
            self.run_outside(py, f64::INFINITY, events)?;
            return Ok(self.engine.peek().is_some());
        }
        self.detached(py, move |engine, policy, stop| {
            engine.run_bounded(f64::INFINITY, events, policy, stop)
        })
    }

    /// Runs to the end (GIL released for built-in policies).
    fn run(&mut self, py: Python<'_>) -> PyResult<()> {
        if self.outside.is_some() {
            return self.run_outside(py, f64::INFINITY, u64::MAX);
        }
        self.detached(py, |engine, policy, stop| {
            engine
                .run_bounded(f64::INFINITY, u64::MAX, policy, stop)
                .map(|_| ())
        })
    }

    /// The view a policy gets now, as a dict of numpy arrays.
    fn view<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        view_dict(py, &self.engine.view())
    }

    /// The policy's decision log as columns (empty for policies that keep none). Takes the log
    /// out of the policy (a second call returns only what was decided since): a long run's log
    /// is written to disk as it goes, held only once.
    fn decisions<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        log_columns(py, self.policy.take_log())
    }

    /// Rows waiting in the run's logs (decisions and their candidates, the power manager's
    /// log and its candidates, the timeline): the caller writes them out past a bound.
    #[getter]
    fn pending_log_rows(&self) -> usize {
        let log = self.engine.log();
        self.policy.log_rows() + self.engine.power_log_rows() + log.timeline.len()
    }

    /// The power manager's decision log as columns (empty without a power manager). Takes the
    /// log out of the run's record (a second call returns it empty): long runs keep hundreds
    /// of thousands of rows, held only once.
    fn power_decisions<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        log_columns(py, self.engine.take_power_log())
    }

    /// Node counts per power state after each instant they changed (power-managed runs), taken
    /// out of the run's record; with `all` false (mid-run) the last row stays, since a change
    /// later at the same instant replaces it.
    #[pyo3(signature = (all=true))]
    fn timeline<'py>(&mut self, py: Python<'py>, all: bool) -> PyResult<Bound<'py, PyDict>> {
        let (rows, watts) = self.engine.take_timeline(all);
        let out = PyDict::new(py);
        out.set_item("time", column(py, &rows, |r| r.0))?;
        for (k, state) in NodeState::ALL.iter().enumerate() {
            out.set_item(state.name(), column(py, &rows, |r| r.1[k]))?;
        }
        out.set_item("power_kw", column(py, &watts, |w| w / 1000.0))?;
        Ok(out)
    }

    /// Per-job results (numpy arrays in replay order) and run counters.
    fn results<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let log = self.engine.log();
        let out = PyDict::new(py);
        out.set_item("start", log.start.clone().into_pyarray(py))?;
        out.set_item("end", log.end.clone().into_pyarray(py))?;
        let kinds: Vec<u8> = log.start_kind.iter().map(|k| *k as u8).collect();
        out.set_item("start_kind", kinds.into_pyarray(py))?;
        out.set_item("requeues", log.requeues.clone().into_pyarray(py))?;
        out.set_item("killed", log.killed.clone().into_pyarray(py))?;
        out.set_item("energy_j", log.energy_j.clone().into_pyarray(py))?;
        let (lj, ls, le): (Vec<u32>, Vec<f64>, Vec<f64>) = log.lost_attempts.iter().fold(
            (Vec::new(), Vec::new(), Vec::new()),
            |(mut j, mut s, mut e), &(job, start, end)| {
                j.push(job);
                s.push(start);
                e.push(end);
                (j, s, e)
            },
        );
        out.set_item("lost_job", lj.into_pyarray(py))?;
        out.set_item("lost_start", ls.into_pyarray(py))?;
        out.set_item("lost_end", le.into_pyarray(py))?;
        let res = &log.reservations;
        out.set_item(
            "reservation_time",
            res.iter().map(|r| r.0).collect::<Vec<_>>().into_pyarray(py),
        )?;
        out.set_item(
            "reservation_job",
            res.iter().map(|r| r.1).collect::<Vec<_>>().into_pyarray(py),
        )?;
        out.set_item(
            "reservation_shadow",
            res.iter().map(|r| r.2).collect::<Vec<_>>().into_pyarray(py),
        )?;
        out.set_item(
            "reservation_extra",
            res.iter().map(|r| r.3).collect::<Vec<_>>().into_pyarray(py),
        )?;
        let totals = &log.at_last_completion;
        let node_seconds = PyDict::new(py);
        node_seconds.set_item("computing", totals.busy_node_seconds)?;
        node_seconds.set_item("idle", totals.idle_node_seconds())?;
        node_seconds.set_item("down", totals.down_node_seconds)?;
        node_seconds.set_item("switching_on", totals.switching_on_node_seconds)?;
        node_seconds.set_item("switching_off", totals.switching_off_node_seconds)?;
        node_seconds.set_item("sleeping", totals.sleeping_node_seconds)?;
        out.set_item("node_seconds", node_seconds)?;
        out.set_item("horizon", totals.elapsed)?;
        if let Some(model) = self.engine.inputs().machine.power {
            let energy = totals.energy(&model);
            let joules = PyDict::new(py);
            joules.set_item("computing", energy.computing_j)?;
            joules.set_item("idle", energy.idle_j)?;
            joules.set_item("switching_on", energy.switching_on_j)?;
            joules.set_item("switching_off", energy.switching_off_j)?;
            joules.set_item("sleeping", energy.sleeping_j)?;
            joules.set_item("total", energy.total_j())?;
            joules.set_item("wasted", energy.wasted_j())?;
            out.set_item("energy_by_state_j", joules)?;
        }
        let inputs = self.engine.inputs();
        if inputs.site.is_some() {
            // the partition each job started in (-1: none)
            let mut partition = vec![-1i64; log.start.len()];
            for (j, &p) in log.partition.iter().enumerate() {
                if p != u32::MAX {
                    partition[j] = i64::from(p);
                }
            }
            out.set_item("partition", partition.into_pyarray(py))?;
        }
        let shared = inputs.shared.is_some();
        if inputs.site.is_some() || inputs.submit_limits.is_some() || shared {
            // why a job was refused at submission (-1: it was not)
            let mut rejected = vec![-1i8; log.start.len()];
            for &(j, reason) in &log.rejected {
                rejected[j as usize] = reason as i8;
            }
            out.set_item("rejected", rejected.into_pyarray(py))?;
        }
        if inputs.site.is_some() || shared {
            // why the site holds a queued job pending for ever (-1: it does not)
            let mut held = vec![-1i8; log.start.len()];
            for &(j, reason) in &log.held {
                held[j as usize] = reason as i8;
            }
            out.set_item("held", held.into_pyarray(py))?;
        }
        if let Some(model) = inputs.shared.as_ref() {
            shared_results(py, &out, log, model)?;
        } else if let Some(site) = inputs.site.as_ref() {
            // whole nodes counted per atom: named inside their atoms for charts and exports
            let (last, killed) =
                hpcsched_core::layout::site_nodes(site, inputs.calendar.windows(), log)
                    .map_err(|e| crate::error::to_py_err(py, e, None))?;
            out.set_item("alloc_nodes", last)?;
            out.set_item("lost_alloc_nodes", killed)?;
        }
        out.set_item("invocations", log.invocations)?;
        out.set_item("event_times", log.event_times)?;
        Ok(out)
    }
}

/// What each job took on shared nodes (its last start): its nodes as index ranges
/// (`0-3,7`), its CPUs and memory (MB) in all (-1: never started) and its generic resources
/// (`gpu:a100=2,gpu=1`).
fn shared_results(
    py: Python<'_>,
    out: &Bound<'_, PyDict>,
    log: &hpcsched_core::RunLog,
    model: &hpcsched_core::model::SharedNodes,
) -> PyResult<()> {
    let n = log.start.len();
    let names = model.resources.gres_names();
    let kinds = names.len();
    let mut nodes = vec![String::new(); n];
    let mut cpus = vec![-1i64; n];
    let mut memory = vec![-1i64; n];
    let mut gres = vec![String::new(); n];
    for (job, a) in &log.allocations {
        let j = *job as usize;
        nodes[j] = hpcsched_core::layout::index_ranges(&a.nodes);
        cpus[j] = a.total_cpus() as i64;
        memory[j] = a.total_memory() as i64;
        gres[j] = (0..kinds)
            .map(|k| (k, a.total_gres(k, kinds)))
            .filter(|&(_, units)| units > 0)
            .map(|(k, units)| format!("{}={units}", names[k]))
            .collect::<Vec<_>>()
            .join(",");
    }
    out.set_item("alloc_nodes", nodes)?;
    out.set_item("alloc_cpus", cpus.into_pyarray(py))?;
    out.set_item("alloc_memory", memory.into_pyarray(py))?;
    out.set_item("alloc_gres", gres)?;
    Ok(())
}

/// A decision log's columns as a dict of numpy arrays (text columns as lists of str).
fn log_columns(py: Python<'_>, table: LogTable) -> PyResult<Bound<'_, PyDict>> {
    let out = PyDict::new(py);
    for (name, column) in table.columns {
        match column {
            Column::F64(v) => out.set_item(name, v.into_pyarray(py))?,
            Column::F32(v) => out.set_item(name, v.into_pyarray(py))?,
            Column::U8(v) => out.set_item(name, v.into_pyarray(py))?,
            Column::U32(v) => out.set_item(name, v.into_pyarray(py))?,
            Column::U64(v) => out.set_item(name, v.into_pyarray(py))?,
            Column::I64(v) => out.set_item(name, v.into_pyarray(py))?,
            Column::Bool(v) => out.set_item(name, v.into_pyarray(py))?,
            Column::Text(v) => out.set_item(name, v)?,
        }
    }
    Ok(out)
}

/// One numpy column from a field of each record.
fn column<'py, R, T: numpy::Element>(
    py: Python<'py>,
    records: &[R],
    field: impl Fn(&R) -> T,
) -> Bound<'py, numpy::PyArray1<T>> {
    records
        .iter()
        .map(field)
        .collect::<Vec<T>>()
        .into_pyarray(py)
}

impl PySimulation {
    /// Steps with a Python policy (the GIL held: the policy is Python) through event times up to
    /// `until`, at most `events` of them, stopping at its first exception; a decision the engine
    /// refuses is named with the policy and the time.
    fn run_outside(&mut self, py: Python<'_>, until: f64, events: u64) -> PyResult<()> {
        let outcome = Arc::clone(self.outside.as_ref().expect("a Python policy"));
        let mut left = events;
        while left > 0 && self.engine.peek().is_some_and(|t| t <= until) {
            left -= 1;
            let now = self.engine.peek().unwrap_or(f64::NAN);
            let stepped = self.engine.step(self.policy.as_mut());
            let mut state = outcome.lock().expect("not poisoned");
            if let Some(err) = state.error.take() {
                return Err(err);
            }
            if let Err(err) = stepped {
                let reason = format!(
                    "{} at t={now}: {}; decision: {}",
                    self.policy.name(),
                    reason_of(err),
                    state.describe(py)
                );
                return Err(crate::error::to_py_err(
                    py,
                    CoreError::decision(reason),
                    None,
                ));
            }
        }
        Ok(())
    }
}
