//! The step loop: apply every event of the next event time in the documented order, then invoke
//! the policy once.
//!
//! Same-time order: job completions; power transitions ending; downtime ends; maintenance
//! announcements and downtime starts; job submissions. Then one scheduling invocation sees their
//! combined effect. Under a power manager the instant is: the manager's `prepare`, the queue
//! policy, the starts, the manager's `act` (wakes, spares, shutdowns, timers).

mod apply;
mod downtime;

use std::sync::Arc;

use crate::engine::inputs::Inputs;
use crate::engine::log::LogTable;
use crate::engine::policy::{Decision, Policy};
use crate::engine::power::{NodeState, Nodes};
use crate::engine::record::{RunLog, TimelineRow};
use crate::engine::shared::{SharedState, SharedView};
use crate::engine::site::{SiteState, SiteView};
use crate::engine::state::SimState;
use crate::engine::stop::StopFlag;
use crate::engine::submit_limit::Submitted;
use crate::engine::view::{KnownJobs, View};
use crate::error::{CoreError, Result};
use crate::model::{OverLimits, Rejection};

/// Invocations in a row with jobs waiting and only timers left after which a run is stalled
/// (`Engine::check_progress`): far more than any timer-driven plan takes to act.
pub const STALLED_CALLS: u32 = 10_000;

/// Where a driver of the engine (a look-ahead, a learning agent) stops to decide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecisionPoint {
    /// At every event time (an agent's power actions: idle nodes matter too).
    EveryEvent,
    /// When jobs wait (a rollout's orderings).
    JobsWaiting,
    /// When jobs wait and nodes are free (something could start).
    JobsAndNodes,
}

/// A simulation in progress: shared inputs, the small mutable state, and the run's record.
pub struct Engine {
    inputs: Arc<Inputs>,
    state: SimState,
    log: RunLog,
    decision: Decision,
    /// The started positions of the decision being applied (kept to avoid an allocation).
    scratch: Vec<u32>,
}

impl Engine {
    pub fn new(inputs: Arc<Inputs>) -> Self {
        let now = inputs.jobs.iter().next().map_or(0.0, |j| j.submit.min(0.0));
        let nodes = match (inputs.power_managed, inputs.machine.power) {
            (true, Some(_)) if !inputs.groups.is_empty() => Some(Nodes::with_groups(
                &inputs.groups,
                inputs.sample_transitions,
                now,
            )),
            (true, Some(model)) => Some(Nodes::new(
                inputs.machine.nodes,
                model,
                inputs.sample_transitions,
                now,
            )),
            _ => None,
        };
        let manager = inputs.manager.as_ref().map(|spec| Arc::clone(spec).build());
        // (with shared nodes the site's partitions are node sets of `shared`: no atom counts)
        let site = (inputs.site.as_ref())
            .filter(|_| inputs.shared.is_none())
            .map(|site| SiteState::new(site, inputs.jobs.len()));
        let shared = (inputs.shared.as_ref()).map(|s| SharedState::new(s, inputs.jobs.len()));
        let submitted =
            (inputs.submit_limits.as_ref()).map_or_else(Submitted::default, Submitted::new);
        let state = SimState {
            now,
            nodes,
            manager,
            site,
            shared,
            submitted,
            ..SimState::default()
        };
        Engine::with_state(inputs, state)
    }

    /// An engine that continues from `state` (a clone taken from another engine on the same
    /// inputs) with an empty record: what look-ahead search builds on.
    pub fn with_state(inputs: Arc<Inputs>, state: SimState) -> Self {
        let log = RunLog::new(inputs.jobs.len());
        Engine::from_parts(inputs, state, log)
    }

    pub(crate) fn from_parts(inputs: Arc<Inputs>, state: SimState, log: RunLog) -> Self {
        Engine {
            inputs,
            state,
            log,
            decision: Decision::default(),
            scratch: Vec::new(),
        }
    }

    /// The same engine state with a log that records only counters (for look-ahead copies).
    pub fn fork(&self) -> Self {
        Engine::from_parts(
            Arc::clone(&self.inputs),
            self.state.clone(),
            RunLog::counters_only(),
        )
    }

    pub fn inputs(&self) -> &Arc<Inputs> {
        &self.inputs
    }

    pub fn now(&self) -> f64 {
        self.state.now
    }

    pub fn state(&self) -> &SimState {
        &self.state
    }

    /// Keeps every candidate in the power layer's log (`--decision-log full`).
    pub fn set_candidate_detail(&mut self, on: bool) {
        self.log.candidate_detail = on;
        if let Some(layer) = self.state.manager.as_mut() {
            layer.set_log_detail(on);
        }
    }

    pub fn log(&self) -> &RunLog {
        &self.log
    }

    pub fn into_log(self) -> RunLog {
        self.log
    }

    /// Takes the power layer's log out of it, as columns (empty without a layer).
    pub fn take_power_log(&mut self) -> LogTable {
        self.state
            .manager
            .as_mut()
            .map(|layer| layer.take_log())
            .unwrap_or_default()
    }

    /// Rows waiting in the power layer's log.
    pub fn power_log_rows(&self) -> usize {
        self.state.manager.as_ref().map_or(0, |l| l.log_rows())
    }

    /// The power layer under the queue policy, if any.
    pub fn power_layer(&self) -> Option<&dyn crate::engine::PowerLayer> {
        self.state.manager.as_deref()
    }

    /// Takes the node-state timeline (and the power after each row) out of the run's record.
    /// Mid-run (`all` false) the last row stays: a change later at the same instant replaces
    /// it, and later rows are compared with it.
    pub fn take_timeline(&mut self, all: bool) -> (Vec<TimelineRow>, Vec<f64>) {
        let log = &mut self.log;
        let keep = usize::from(!all).min(log.timeline.len());
        let cut = log.timeline.len() - keep;
        (
            log.timeline.drain(..cut).collect(),
            log.timeline_power_w.drain(..cut).collect(),
        )
    }

    /// Jobs submitted so far.
    pub fn submitted(&self) -> usize {
        self.state.next_submit as usize
    }

    /// Time of the next event, or `None` when the run is over.
    pub fn peek(&self) -> Option<f64> {
        let s = &self.state;
        let mut next = f64::INFINITY;
        if let Some(c) = s.completions.peek() {
            next = next.min(c.end);
        }
        if (s.next_submit as usize) < self.inputs.jobs.len() {
            next = next.min(self.inputs.jobs.get(s.next_submit).submit);
        }
        if let Some(b) = self.inputs.boundaries.get(s.next_boundary as usize) {
            next = next.min(b.time);
        }
        if let Some(t) = s.nodes.as_ref().and_then(Nodes::next_transition) {
            next = next.min(t);
        }
        if let Some(timer) = s.timers.peek() {
            next = next.min(timer.0);
        }
        next.is_finite().then_some(next)
    }

    /// Processes every event of the next event time, then invokes `policy` once.
    /// Returns `false` when there was nothing left to do.
    pub fn step(&mut self, policy: &mut dyn Policy) -> Result<bool> {
        if !self.advance() {
            return Ok(false);
        }
        self.invoke(policy)?;
        self.check_progress()?;
        if let Some(nodes) = &self.state.nodes {
            self.log
                .record_node_counts(self.state.now, nodes.counts(), nodes.power_w());
        }
        Ok(true)
    }

    /// Refuses to go on when jobs wait and only timers are left: no job runs, no node is
    /// switching, no submission or downtime boundary is to come, for `STALLED_CALLS` calls in a
    /// row. Nothing can then change but by the policy or manager acting at a timer, and they
    /// have not: time would grow for ever (a power manager that never wakes the nodes a job
    /// needs, a policy that only ever asks to be called back).
    fn check_progress(&mut self) -> Result<()> {
        let s = &self.state;
        let only_timers = !s.queue.is_empty()
            && s.completions.is_empty()
            && s.next_submit as usize == self.inputs.jobs.len()
            && s.next_boundary as usize == self.inputs.boundaries.len()
            && s.nodes
                .as_ref()
                .is_none_or(|n| n.next_transition().is_none());
        if !only_timers {
            self.state.fruitless_calls = 0;
            return Ok(());
        }
        self.state.fruitless_calls += 1;
        if self.state.fruitless_calls < STALLED_CALLS {
            return Ok(());
        }
        let s = &self.state;
        let first = self.inputs.jobs.get(s.queue.as_slice()[0]);
        let states = s.nodes.as_ref().map_or(String::new(), |n| {
            let counts = n.counts();
            let listed: Vec<String> = NodeState::ALL
                .iter()
                .filter(|&&st| counts[st as usize] > 0)
                .map(|&st| format!("{} {}", counts[st as usize], st.name()))
                .collect();
            format!(": {}", listed.join(", "))
        });
        Err(CoreError::input(format!(
            "the run cannot go on at t = {:.0} s: {} jobs wait (the first, job {}, needs {} of \
             {} nodes{states}), no job runs, no node is switching, nothing more arrives, and \
             {STALLED_CALLS} calls in a row started and woke nothing",
            s.now,
            s.queue.len(),
            first.id,
            first.nodes,
            self.inputs.machine.nodes,
        )))
    }

    /// Advances through event times until `ready` holds after one (it may apply decisions of
    /// its own on the way); `false` when no event is left. What every driver of the engine
    /// (the tree search, the rollout look-ahead, a learning agent) runs between its decisions.
    pub fn advance_until(&mut self, mut ready: impl FnMut(&mut Engine) -> bool) -> bool {
        while self.advance() {
            if ready(self) {
                return true;
            }
        }
        false
    }

    /// Advances to the next event time that is a decision point of the given kind; `false`
    /// when no event is left.
    pub fn advance_to(&mut self, point: DecisionPoint) -> bool {
        self.advance_until(|engine| match point {
            DecisionPoint::EveryEvent => true,
            DecisionPoint::JobsWaiting => !engine.state.queue.is_empty(),
            DecisionPoint::JobsAndNodes => {
                let view = engine.view();
                !view.queue.is_empty() && view.has_room()
            }
        })
    }

    /// Applies every event of the next event time (completions, downtime boundaries,
    /// submissions), without invoking any policy; a power manager prepares its call. Returns
    /// `false` when no event is left.
    pub fn advance(&mut self) -> bool {
        if self.state.pending_act {
            // The previous instant ended without a decision: the manager still acts on it.
            self.act(&Decision::default())
                .expect("the manager's own actions are valid");
        }
        let Some(t) = self.peek() else {
            return false;
        };
        let capacity = self.inputs.machine.nodes - self.state.down;
        // Totals cover the replay clock from 0 (a calendar may start earlier).
        let dt = t.max(0.0) - self.state.now.max(0.0);
        // (a site of node groups of their own power: each atom's busy and idle nodes)
        let atoms = self.atom_counts();
        for mark in self.state.marks.iter_mut().flatten() {
            if mark.metrics.is_none() && mark.at <= t {
                // The totals are linear between events: the mark's are the part up to it.
                let mut at_mark = self.state.metrics;
                let part = mark.at.max(0.0) - self.state.now.max(0.0);
                at_mark.elapse(part, self.state.busy, capacity, self.state.down);
                if !atoms.is_empty() {
                    at_mark.elapse_atoms(part, &atoms, &self.inputs.atom_power);
                }
                if let Some(shared) = &self.state.shared {
                    at_mark.elapse_cpus(part, shared.busy_cpus(), shared.up_cpus());
                }
                mark.metrics = Some(at_mark);
            }
        }
        self.state
            .metrics
            .elapse(dt, self.state.busy, capacity, self.state.down);
        if !atoms.is_empty() {
            (self.state.metrics).elapse_atoms(dt, &atoms, &self.inputs.atom_power);
        }
        if let Some(shared) = &self.state.shared {
            (self.state.metrics).elapse_cpus(dt, shared.busy_cpus(), shared.up_cpus());
        }
        if let Some(nodes) = &self.state.nodes {
            self.state
                .metrics
                .elapse_power(dt, nodes.counts(), nodes.power_by_state());
        }
        self.state.now = t;
        self.log.event_times += 1;
        if !self.state.record_events {
            self.state.arrived.clear();
            self.state.completed.clear();
        }
        // Energy is reported up to the last completion: keep the totals as they were then.
        if self.complete_jobs(t) && self.inputs.machine.power.is_some() {
            self.log.at_last_completion = self.state.metrics;
        }
        if let Some(nodes) = self.state.nodes.as_mut() {
            nodes.complete_transitions(t);
        }
        self.apply_boundaries(t);
        if let Some(nodes) = &self.state.nodes {
            // Overlapping windows may take fewer nodes than they name: count those taken.
            self.state.down = nodes.count(NodeState::Down);
        }
        self.submit_jobs(t);
        while self.state.timers.peek().is_some_and(|timer| timer.0 <= t) {
            self.state.timers.pop();
        }
        if let Some(mut manager) = self.state.manager.take() {
            let changed = self.take_changed();
            manager.prepare(&self.view(), &changed);
            self.return_changed(changed);
            self.state.manager = Some(manager);
            self.state.pending_act = true;
        } else if let Some(nodes) = self.state.nodes.as_mut() {
            nodes.clear_changed(); // (nobody reads the journal of node changes)
        }
        true
    }

    /// Invokes `policy` at the current time if jobs are waiting, and applies its decision.
    pub fn invoke(&mut self, policy: &mut dyn Policy) -> Result<()> {
        // A policy switching nodes itself acts on idle nodes too; otherwise a queue policy has
        // nothing to do with an empty queue (a power manager still acts).
        let switches_nodes = self.state.nodes.is_some() && self.state.manager.is_none();
        if self.state.queue.is_empty() && !switches_nodes {
            if self.state.pending_act {
                self.act(&Decision::default())?;
            }
            return Ok(());
        }
        self.log.invocations += 1;
        let mut decision = std::mem::take(&mut self.decision);
        decision.clear();
        policy.decide(&self.view(), &mut decision);
        if self.state.record_events {
            self.state.arrived.clear();
            self.state.completed.clear();
        }
        let applied = self.apply(&decision);
        self.decision = decision;
        applied
    }

    /// Keeps in mark `slot` (below `state::MARKS`) a copy of the running totals as they are
    /// at time `at` (read with `state().metrics_at_mark(slot)` once the run has passed it).
    pub fn set_mark(&mut self, slot: usize, at: f64) {
        self.state.marks[slot] = Some(crate::engine::state::Mark {
            at,
            metrics: (at <= self.state.now).then_some(self.state.metrics),
        });
    }

    /// Keeps arrivals and completions in the view until the next invocation: what a policy
    /// outside the engine (Python, a learning agent) gets as "the events since the last call".
    pub fn record_events(&mut self) {
        self.state.record_events = true;
    }

    /// Applies a decision computed elsewhere (look-ahead search replays the outcome it chose).
    pub fn apply_decision(&mut self, decision: &Decision) -> Result<()> {
        self.apply(decision)
    }

    /// Steps while the next event time is at most `until`.
    pub fn run_until(&mut self, until: f64, policy: &mut dyn Policy) -> Result<()> {
        self.run_bounded(until, u64::MAX, policy, &StopFlag::default())
            .map(|_| ())
    }

    /// Processes at most `events` event times; returns `true` while events remain. Bounded work
    /// per call whatever the time scale: what a progress display steps by.
    pub fn run_events(&mut self, events: u64, policy: &mut dyn Policy) -> Result<bool> {
        self.run_bounded(f64::INFINITY, events, policy, &StopFlag::default())
    }

    /// Runs to the end of the workload.
    pub fn run(&mut self, policy: &mut dyn Policy) -> Result<()> {
        if policy.observes_events() {
            self.record_events();
        }
        self.run_bounded(f64::INFINITY, u64::MAX, policy, &StopFlag::default())
            .map(|_| ())
    }

    /// Steps through at most `events` event times, each at most `until`, until `stop` is raised
    /// (checked between two event times); returns `true` while events remain.
    pub fn run_bounded(
        &mut self,
        until: f64,
        events: u64,
        policy: &mut dyn Policy,
        stop: &StopFlag,
    ) -> Result<bool> {
        let mut left = events;
        while left > 0 && !stop.raised() && self.peek().is_some_and(|t| t <= until) {
            left -= 1;
            self.step(policy)?;
        }
        Ok(self.peek().is_some())
    }

    /// On a site of node groups of their own power, each atom's (busy, idle) nodes now (a
    /// down atom has neither); empty elsewhere.
    fn atom_counts(&self) -> Vec<(u32, u32)> {
        let (Some(site), Some(state)) = (self.inputs.site.as_ref(), self.state.site.as_ref())
        else {
            return Vec::new();
        };
        if self.inputs.atom_power.is_empty() {
            return Vec::new();
        }
        (site.atom_sizes().iter().zip(state.free()).enumerate())
            .map(|(a, (&size, &free))| match state.down(a as u32) {
                Some(_) => (0, 0),
                None => (size - free, free),
            })
            .collect()
    }

    pub fn view(&self) -> View<'_> {
        let s = &self.state;
        let capacity = self.inputs.machine.nodes - s.down;
        View {
            now: s.now,
            jobs: KnownJobs::new(&self.inputs.jobs),
            submitted: s.next_submit,
            machine_nodes: self.inputs.machine.nodes,
            free: match &s.nodes {
                Some(nodes) => nodes.count(NodeState::Idle),
                None => capacity.saturating_sub(s.busy),
            },
            queue: s.queue.as_slice(),
            running: &s.running,
            down_windows: &s.down_windows,
            announced: &s.announced,
            nodes: s.nodes.as_ref().map_or(&[], |n| n.as_slice()),
            power: self.inputs.machine.power.as_ref(),
            models: s.nodes.as_ref().map_or(&[], |n| n.models()),
            manager: s.manager.as_deref(),
            arrived: &s.arrived,
            completed: &s.completed,
            site: (self.inputs.site.as_ref())
                .zip(s.site.as_ref())
                .map(|(model, state)| SiteView { model, state }),
            shared: (self.inputs.shared.as_ref())
                .zip(s.shared.as_ref())
                .map(|(model, state)| SharedView {
                    model,
                    state,
                    site: self.inputs.site.as_ref(),
                    downtime: self.inputs.calendar.windows(),
                    active: &s.active,
                }),
            ranks: &self.inputs.ranks,
        }
    }

    /// Completes the jobs ending at `t`; returns whether there were any.
    fn complete_jobs(&mut self, t: f64) -> bool {
        let mut any = false;
        while let Some(c) = self.state.completions.peek().copied() {
            if c.end > t {
                break;
            }
            any = true;
            self.state.completions.pop();
            let running = self.state.remove_running(c.job, c.requested_end);
            self.state.busy -= match (self.inputs.shared.as_ref(), self.state.shared.as_mut()) {
                (Some(model), Some(shared)) => shared.end(model, c.job),
                _ => c.nodes,
            };
            if let Some(limits) = &self.inputs.submit_limits {
                self.state.submitted.finish(limits, c.job);
            }
            if let (Some(model), Some(site)) = (self.inputs.site.as_ref(), self.state.site.as_mut())
            {
                // the components of the nodes it held (its own; a running job a snapshot gave
                // the engine may hold nodes of several)
                let held = site.holdings(c.job);
                let first = held.first().map(|&(a, _)| model.atom_component(a));
                let spread = held
                    .iter()
                    .any(|&(a, _)| Some(model.atom_component(a)) != first);
                site.release(c.job, c.requested_end);
                if first.is_some() {
                    site.changed(if spread { None } else { first });
                }
            }
            // Only power managers and outside policies read completions and arrivals.
            if let Some(nodes) = self.state.nodes.as_mut() {
                nodes.release(c.job, t);
                self.state.completed.push((c.job, running.start, c.end));
            } else if self.state.record_events {
                self.state.completed.push((c.job, running.start, c.end));
            }
        }
        any
    }

    fn submit_jobs(&mut self, t: f64) {
        let jobs = &self.inputs.jobs;
        while (self.state.next_submit as usize) < jobs.len()
            && jobs.get(self.state.next_submit).submit <= t
        {
            let index = self.state.next_submit;
            self.state.next_submit += 1;
            if let Some(reason) = (self.inputs.site.as_ref())
                .filter(|site| site.over_limits == OverLimits::Reject)
                .and_then(|site| site.rejection(index))
            {
                self.log.record_rejection(index, reason);
                continue; // refused at submission: never queued
            }
            let shared = self.inputs.shared.as_ref();
            let too_large = shared
                .and_then(|s| s.refusal(index))
                .filter(|_| (self.inputs.site.as_ref()).is_none_or(|s| s.held(index).is_none()));
            let over_limits =
                (self.inputs.site.as_ref()).map_or(OverLimits::Reject, |s| s.over_limits);
            if let Some(reason) = too_large {
                if over_limits == OverLimits::Reject {
                    self.log.record_rejection(index, reason);
                    continue;
                }
                if let Some(held) = crate::model::Held::of(reason) {
                    self.log.record_held(index, held);
                }
            }
            if let Some(limits) = &self.inputs.submit_limits {
                if !self.state.submitted.admit(limits, index) {
                    self.log.record_rejection(index, Rejection::OverSubmitLimit);
                    continue;
                }
            }
            if let Some(held) = (self.inputs.site.as_ref()).and_then(|site| site.held(index)) {
                self.log.record_held(index, held); // queued, and never to start
            }
            self.state.queue.push(index);
            if let (Some(site), Some(state)) = (&self.inputs.site, self.state.site.as_mut()) {
                let job = self.inputs.jobs.get(index);
                state.enqueue(index, site.job_key(index).1, job.nodes, job.requested_time);
            }
            if self.state.nodes.is_some() || self.state.record_events {
                self.state.arrived.push(index);
            }
        }
    }
}
