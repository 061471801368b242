//! `Simulation`: one engine run driven from Python.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hpcsched_core::agent::{apply_slot, episode_terms, observe, CLUSTER_FEATURES, JOB_FEATURES};
use hpcsched_core::engine::power::NodeState;
use hpcsched_core::engine::{Column, DecisionPoint, LogTable};
use hpcsched_core::model::PowerModel;
use hpcsched_core::power::config::{manager_config, IconConfig};
use hpcsched_core::sched::translate;
use hpcsched_core::sched::{build_policy, build_policy_estimated, build_snf};
use hpcsched_core::search::{
    build_search_policy, ActionSet, ArrivalModel, Reward, RootReference, RuntimeModel,
    ScenarioModel, SearchConfig, SearchOptions,
};
use hpcsched_core::search::{Lookahead, Rollout};
use hpcsched_core::{
    Calendar, CoreError, Decision, Downtime, DowntimeKind, Engine, Inputs, Job, JobTable, Machine,
    Overrun, Policy, StopFlag, MAX_NODES,
};
use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::error::IntoPyResult;
use crate::external::{external_decision, reason_of, view_dict, Outcome, PyPolicy};

/// An agent's observation: job features [slots, JOB_FEATURES], cluster features, slot mask.
type Observation<'py> = (
    Bound<'py, PyArray2<f32>>,
    Bound<'py, PyArray1<f32>>,
    Bound<'py, PyArray1<bool>>,
);

/// A simulation of one workload under one built-in policy.
#[pyclass(name = "Simulation", module = "hpcsched._core")]
pub struct PySimulation {
    engine: Engine,
    policy: Box<dyn Policy>,
    /// A Python policy's exception and last decision (None for built-in policies).
    outside: Option<Arc<Mutex<Outcome>>>,
    /// The reference the episode's reward terms start from (agents).
    start: RootReference,
    /// The MARS action set an agent picks from (built on first use).
    actions: Option<ActionSet>,
    /// Raised on Ctrl-C: stops the engine's steps and every search at once.
    stop: Arc<AtomicBool>,
}

/// How often a run without the GIL looks for Ctrl-C.
const SIGNAL_CHECK: Duration = Duration::from_millis(50);

fn input_err(reason: impl Into<String>) -> CoreError {
    CoreError::input(reason)
}

/// Downtime windows from their columns: start, end, scheduled (else unscheduled), nodes (0
/// for the whole machine), back asleep.
pub(crate) fn downtime_windows(
    start: &[f64],
    end: &[f64],
    scheduled: &[bool],
    nodes: &[i64],
    asleep: &[bool],
) -> hpcsched_core::Result<Vec<Downtime>> {
    let n = start.len();
    if [end.len(), scheduled.len(), nodes.len(), asleep.len()]
        .iter()
        .any(|&l| l != n)
    {
        return Err(input_err("downtime columns have different lengths"));
    }
    Ok((0..n)
        .map(|i| Downtime {
            start: start[i],
            end: end[i],
            kind: if scheduled[i] {
                DowntimeKind::Scheduled
            } else {
                DowntimeKind::Unscheduled
            },
            nodes: (nodes[i] > 0).then(|| u32::try_from(nodes[i]).unwrap_or(u32::MAX)),
            back_asleep: asleep[i],
        })
        .collect())
}

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
    /// Jobs are given as columns in replay order. Downtime windows as columns too:
    /// `down_nodes` 0 means the whole machine.
    #[new]
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (
        job_id, submit, run_time, requested_time, nodes, machine_nodes,
        policy, window, backfill, overrun,
        down_start, down_end, down_scheduled, down_nodes, announce_lead, search=None, power=None, manager=None,
        python=None, user=None, estimates="requested", down_asleep=None, max_wait=None,
        groups=None, decision_log="compact"
    ))]
    fn new(
        py: Python<'_>,
        job_id: PyReadonlyArray1<'_, i64>,
        submit: PyReadonlyArray1<'_, f64>,
        run_time: PyReadonlyArray1<'_, f64>,
        requested_time: PyReadonlyArray1<'_, f64>,
        nodes: PyReadonlyArray1<'_, i64>,
        machine_nodes: i64,
        policy: &str,
        window: Option<usize>,
        backfill: &str,
        overrun: &str,
        down_start: PyReadonlyArray1<'_, f64>,
        down_end: PyReadonlyArray1<'_, f64>,
        down_scheduled: PyReadonlyArray1<'_, bool>,
        down_nodes: PyReadonlyArray1<'_, i64>,
        announce_lead: f64,
        search: Option<&Bound<'_, PyDict>>,
        power: Option<&Bound<'_, PyDict>>,
        manager: Option<&Bound<'_, PyDict>>,
        python: Option<Py<PyAny>>,
        user: Option<PyReadonlyArray1<'_, i64>>,
        estimates: &str,
        down_asleep: Option<PyReadonlyArray1<'_, bool>>,
        max_wait: Option<f64>,
        groups: Option<Vec<(u32, Bound<'_, PyDict>)>>,
        decision_log: &str,
    ) -> PyResult<Self> {
        let detail = match decision_log {
            "compact" => false,
            "full" => true,
            other => {
                return Err(input_err(format!(
                    "unknown decision log {other:?} (compact, full)"
                )))
                .py_result(py)
            }
        };
        let (ids, sub, run, req, nod) = (
            job_id.as_slice()?,
            submit.as_slice()?,
            run_time.as_slice()?,
            requested_time.as_slice()?,
            nodes.as_slice()?,
        );
        let n = ids.len();
        if [sub.len(), run.len(), req.len(), nod.len()]
            .iter()
            .any(|&l| l != n)
        {
            return Err(input_err("job columns have different lengths")).py_result(py);
        }
        let jobs: Vec<Job> = (0..n)
            .map(|i| Job {
                id: ids[i],
                submit: sub[i],
                run_time: run[i],
                requested_time: req[i],
                // past u32: more than any machine, refused below as larger than the machine
                nodes: u32::try_from(nod[i].max(0)).unwrap_or(u32::MAX),
            })
            .collect();
        let users: Option<Vec<i64>> = user.map(|u| u.as_array().to_vec());
        let (ds, de, dk, dn) = (
            down_start.as_slice()?,
            down_end.as_slice()?,
            down_scheduled.as_slice()?,
            down_nodes.as_slice()?,
        );
        let asleep = match &down_asleep {
            Some(a) => a.as_slice()?.to_vec(),
            None => vec![false; ds.len()],
        };
        let windows = downtime_windows(ds, de, dk, dn, &asleep).py_result(py)?;
        let machine_nodes = u32::try_from(machine_nodes)
            .ok()
            .filter(|n| (1..=MAX_NODES).contains(n))
            .ok_or_else(|| {
                input_err(format!(
                    "the machine has {machine_nodes} nodes; the engine takes 1 to {MAX_NODES}"
                ))
            })
            .py_result(py)?;
        let overrun = Overrun::from_name(overrun)
            .ok_or_else(|| {
                input_err(format!(
                    "unknown overrun policy {overrun:?} (continue, kill)"
                ))
            })
            .py_result(py)?;
        let power = power.map(power_model).transpose()?;
        let inputs = (|| {
            let mut table = JobTable::new(jobs)?;
            if let Some(users) = users {
                table = table.with_users(users)?;
            }
            let calendar = Calendar::new(windows, announce_lead)?;
            if let Some(model) = &power {
                model.validate()?;
            }
            let machine = Machine {
                nodes: machine_nodes,
                power,
            };
            Inputs::new(table, machine, calendar, overrun)
        })()
        .py_result(py)?;
        let inputs = match groups {
            Some(groups) => {
                let groups = groups
                    .iter()
                    .map(|(count, d)| Ok((*count, power_model(d)?)))
                    .collect::<PyResult<Vec<_>>>()?;
                inputs.with_groups(groups).py_result(py)?
            }
            None => inputs,
        };
        // Node power states: under a power manager ("name" in the options), or for an agent or
        // a Python policy on a platform with a power model (they switch nodes themselves).
        let inputs = match manager {
            Some(options) => {
                let sample: Option<u64> = get_item(options, "sample_transitions")?;
                let name: Option<String> = match options.get_item("name")? {
                    Some(value) => value.extract()?,
                    None => None,
                };
                match name {
                    Some(name) => {
                        let idle_timeout: f64 = get_item(options, "idle_timeout")?;
                        let config = manager_config(&name, idle_timeout, icon_config(options)?)
                            .ok_or_else(|| input_err(format!("{name:?} is not a power manager")))
                            .py_result(py)?;
                        inputs.with_manager(config, sample).py_result(py)?
                    }
                    None if policy == "agent" || policy == "python" => {
                        inputs.with_power_management(sample).py_result(py)?
                    }
                    None => inputs,
                }
            }
            None => inputs,
        };
        let mut outside = None;
        let stop = Arc::new(AtomicBool::new(false));
        let policy: Box<dyn Policy> = if policy == "agent" {
            // A learning agent drives the engine step by step (advance_to_decision, apply);
            // no policy decides.
            build_policy("fcfs", None, "none").py_result(py)?
        } else if policy == "python" {
            let object = python.ok_or_else(|| {
                pyo3::exceptions::PyValueError::new_err("policy 'python' needs the object")
            })?;
            let name: String = object.bind(py).getattr("name")?.extract()?;
            let slots: Option<usize> = object.bind(py).getattr("observation_slots")?.extract()?;
            let python = PyPolicy::new(object, name, slots);
            outside = Some(Arc::clone(&python.outcome));
            Box::new(python)
        } else {
            match search {
                Some(options) => {
                    let mut options = search_options(options)?;
                    options.config.stop = StopFlag::new(Arc::clone(&stop));
                    build_search_policy(policy, &options)
                }
                None if policy == "snf" && max_wait.is_some() => build_snf(max_wait),
                None => build_policy_estimated(policy, window, backfill, estimates),
            }
            .py_result(py)?
        };
        let mut policy = policy;
        policy.set_decision_detail(detail);
        let mut engine = Engine::new(Arc::new(inputs));
        engine.set_candidate_detail(detail);
        if outside.is_some() || policy.observes_events() {
            engine.record_events();
        }
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

    /// Agents: advances to the next decision point (jobs waiting and nodes free, or every
    /// event time with `every_event`); False when the episode is over.
    fn advance_to_decision(&mut self, every_event: bool) -> bool {
        self.engine.advance_to(if every_event {
            DecisionPoint::EveryEvent
        } else {
            DecisionPoint::JobsAndNodes
        })
    }

    /// Agents: (job features [slots, JOB_FEATURES], cluster features, slot mask).
    fn observe<'py>(&self, py: Python<'py>, slots: usize) -> Observation<'py> {
        let mut jobs = vec![0.0f32; slots * JOB_FEATURES];
        let mut cluster = vec![0.0f32; CLUSTER_FEATURES];
        let mut mask = vec![false; slots];
        observe(
            &self.engine.view(),
            slots,
            &mut jobs,
            &mut cluster,
            &mut mask,
        );
        let jobs = Array2::from_shape_vec((slots, JOB_FEATURES), jobs).expect("shape");
        (
            jobs.into_pyarray(py),
            cluster.into_pyarray(py),
            mask.into_pyarray(py),
        )
    }

    /// Agents: applies a decision object (as a Python policy returns) now.
    fn apply(&mut self, py: Python<'_>, decision: &Bound<'_, PyAny>) -> PyResult<()> {
        let external = external_decision(decision)?;
        let mut d = Decision::default();
        translate(&self.engine.view(), &external, &mut d).py_result(py)?;
        self.engine.apply_decision(&d).py_result(py)
    }

    /// Agents: the "pick a job" action (see `agent::apply_slot`); returns whether the slot
    /// was empty.
    fn apply_slot(&mut self, py: Python<'_>, slot: usize, slots: usize) -> PyResult<bool> {
        apply_slot(&mut self.engine, slot, slots).py_result(py)
    }

    /// Agents: applies MARS action `index` of the action set `actions` ("paper" = the 161
    /// actions) now; returns how many jobs it started.
    fn apply_action(&mut self, py: Python<'_>, index: usize, actions: &str) -> PyResult<usize> {
        if self.actions.is_none() {
            self.actions = Some(ActionSet::parse(actions).py_result(py)?);
        }
        let set = self.actions.as_mut().expect("built above");
        if index >= set.len() {
            return Err(pyo3::exceptions::PyIndexError::new_err(format!(
                "action {index} out of {} actions",
                set.len()
            )));
        }
        let mut d = Decision::default();
        set.decide(index, &self.engine.view(), &mut d);
        let started = d.starts.len();
        self.engine.apply_decision(&d).py_result(py)?;
        Ok(started)
    }

    /// Agents: the MARS reward terms (wait, bsld, utilization, energy) over the episode.
    fn episode_terms(&self) -> [f64; 4] {
        episode_terms(&self.engine, &self.start)
    }

    /// Jobs waiting now.
    #[getter]
    fn queue_length(&self) -> usize {
        self.engine.view().queue.len()
    }

    /// Jobs running now.
    #[getter]
    fn running_length(&self) -> usize {
        self.engine.view().running.len()
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
        out.set_item("invocations", log.invocations)?;
        out.set_item("event_times", log.event_times)?;
        Ok(out)
    }
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

/// Reads the search options Python validated (see `hpcsched.policies.SearchSpec`).
pub(crate) fn search_options(d: &Bound<'_, PyDict>) -> PyResult<SearchOptions> {
    let weights: Bound<'_, PyDict> = get_item(d, "reward")?;
    let weight = |term: &str| -> PyResult<f64> {
        Ok(weights
            .get_item(term)?
            .map(|w| w.extract())
            .transpose()?
            .unwrap_or(0.0))
    };
    let mut weights = [0.0; Reward::TERMS.len()];
    for (w, term) in weights.iter_mut().zip(Reward::TERMS) {
        *w = weight(term)?;
    }
    let reward = Reward::from_weights(weights, get_item(d, "horizon")?);
    let invalid = |what: &str, value: &str| {
        pyo3::exceptions::PyValueError::new_err(format!("unknown {what} {value:?}"))
    };
    let runtime: String = get_item(d, "runtime_model")?;
    let arrivals: String = get_item(d, "arrivals")?;
    let model = ScenarioModel {
        runtime: RuntimeModel::from_name(&runtime)
            .ok_or_else(|| invalid("runtime model", &runtime))?,
        arrivals: match arrivals.as_str() {
            "none" => ArrivalModel::None,
            "recent" => ArrivalModel::Recent {
                window: get_item(d, "arrival_window")?,
                horizon: get_item(d, "arrival_horizon")?,
            },
            other => return Err(invalid("arrival model", other)),
        },
        overrun_kill: get_item(d, "overrun_kill")?,
    };
    let rollout: String = get_item(d, "rollout")?;
    let rollout = match rollout.as_str() {
        "actions" => Rollout::Actions,
        "outcomes" => Rollout::Outcomes,
        "guided" => {
            let guide: String = get_item(d, "guide")?;
            let set = ActionSet::parse(&guide).map_err(|e| invalid("guide", &e.to_string()))?;
            Rollout::Guided {
                guide: set.get(0),
                epsilon: get_item(d, "epsilon")?,
            }
        }
        other => return Err(invalid("rollout", other)),
    };
    Ok(SearchOptions {
        actions: get_item(d, "actions")?,
        reward,
        config: SearchConfig {
            iterations: get_item(d, "iterations")?,
            time_budget: get_item(d, "time_budget")?,
            depth: get_item(d, "depth")?,
            gamma: get_item(d, "gamma")?,
            exploration: get_item(d, "exploration")?,
            trees: get_item(d, "trees")?,
            seed: get_item(d, "seed")?,
            stop: StopFlag::default(),
            rollout,
            lookahead: match get_item::<String>(d, "lookahead")?.as_str() {
                "tree" => Lookahead::Tree,
                "rollout" => {
                    let bases: String = get_item(d, "bases")?;
                    let set =
                        ActionSet::parse(&bases).map_err(|e| invalid("bases", &e.to_string()))?;
                    Lookahead::Rollout {
                        bases: (0..set.len()).map(|i| set.get(i)).collect(),
                    }
                }
                other => return Err(invalid("lookahead", other)),
            },
            prior: match get_item::<String>(d, "prior")?.as_str() {
                "none" => None,
                "rollout" => {
                    let bases: String = get_item(d, "bases")?;
                    let set =
                        ActionSet::parse(&bases).map_err(|e| invalid("bases", &e.to_string()))?;
                    Some((0..set.len()).map(|i| set.get(i)).collect())
                }
                other => return Err(invalid("prior", other)),
            },
        },
        model,
        threads: get_item(d, "threads")?,
    })
}

/// Reads the power model Python validated (see `hpcsched.platform.Platform`).
fn power_model(d: &Bound<'_, PyDict>) -> PyResult<PowerModel> {
    let get = |key: &str| get_item::<f64>(d, key);
    Ok(PowerModel {
        computing_w: get("computing")?,
        idle_w: get("idle")?,
        sleeping_w: get("sleeping")?,
        switching_on_w: get("switching_on")?,
        switching_off_w: get("switching_off")?,
        switch_on_s: get("switch_on")?,
        switch_on_std_s: get("switch_on_std")?,
        switch_off_s: get("switch_off")?,
        switch_off_std_s: get("switch_off_std")?,
    })
}

fn get_item<'py, T: pyo3::conversion::FromPyObjectOwned<'py>>(
    d: &Bound<'py, PyDict>,
    key: &str,
) -> PyResult<T> {
    d.get_item(key)?
        .ok_or_else(|| pyo3::exceptions::PyKeyError::new_err(key.to_string()))?
        .extract()
        .map_err(Into::into)
}

/// SNF-ICON parameters Python validated (see `hpcsched.policies.PowerSpec`).
fn icon_config(d: &Bound<'_, PyDict>) -> PyResult<IconConfig> {
    let defaults = IconConfig::default();
    let screen = hpcsched_core::power::screen::ScreenConfig {
        min_samples: get_item(d, "screen_min_samples")?,
        max_samples: get_item(d, "screen_max_samples")?,
        cv_tolerance: get_item(d, "cv_tolerance")?,
        max_autocorrelation: get_item(d, "max_autocorrelation")?,
        ks_multiplier: get_item(d, "ks_multiplier")?,
        ks_scale: get_item(d, "ks_scale")?,
    };
    Ok(IconConfig {
        alpha: get_item(d, "alpha")?,
        beta: get_item(d, "beta")?,
        initial_arrival_rate: get_item(d, "initial_arrival_rate")?,
        arrival_smoothing: get_item(d, "arrival_smoothing")?,
        service_smoothing: get_item(d, "service_smoothing")?,
        resource_smoothing: get_item(d, "resource_smoothing")?,
        sigma_floor: get_item(d, "sigma_floor")?,
        min_spares: get_item(d, "min_spares")?,
        max_spares: get_item(d, "max_spares")?,
        max_horizon: get_item(d, "max_horizon")?,
        recency_window: get_item(d, "recency_window")?,
        screen_window: get_item(d, "screen_window")?,
        screen,
        require_service_samples: get_item(d, "require_service_samples")?,
        stale_completion_shutdown: get_item(d, "stale_completion_shutdown")?,
        ..defaults
    })
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
