//! The learning agents' side of `Simulation`: decision points, observations, actions and
//! the episode's reward terms (a second `#[pymethods]` block of the same class).

use hpcsched_core::agent::{apply_slot, episode_terms, observe, CLUSTER_FEATURES, JOB_FEATURES};
use hpcsched_core::engine::DecisionPoint;
use hpcsched_core::sched::translate;
use hpcsched_core::search::ActionSet;
use hpcsched_core::Decision;
use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::prelude::*;

use crate::engine::PySimulation;
use crate::error::IntoPyResult;
use crate::external::external_decision;

/// An agent's observation: job features [slots, JOB_FEATURES], cluster features, slot mask.
type Observation<'py> = (
    Bound<'py, PyArray2<f32>>,
    Bound<'py, PyArray1<f32>>,
    Bound<'py, PyArray1<bool>>,
);

#[pymethods]
impl PySimulation {
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
}
