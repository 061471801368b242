//! The step loop: apply every event of the next event time in the documented order, then invoke
//! the policy once.
//!
//! Same-time order: job completions; power transitions ending; downtime ends; maintenance
//! announcements and downtime starts; job submissions. Then one scheduling invocation sees their
//! combined effect. Under a power manager the instant is: the manager's `prepare`, the queue
//! policy, the starts, the manager's `act` (wakes, spares, shutdowns, timers).

use std::sync::Arc;

use crate::engine::admission::Admission;
use crate::engine::layer::LayerSpec;
use crate::engine::log::LogTable;
use crate::engine::policy::{Decision, Policy};
use crate::engine::power::{NodeState, Nodes};
use crate::engine::record::{RunLog, TimelineRow};
use crate::engine::state::{Completion, Running, SimState, Timer};
use crate::engine::stop::StopFlag;
use crate::engine::utilization::nodes_down;
use crate::engine::view::{KnownJobs, View};
use crate::error::{CoreError, Result};
use crate::model::{Calendar, DowntimeKind, JobTable, Machine, Overrun, PowerModel, MAX_NODES};

/// Invocations in a row with jobs waiting and only timers left after which a run is stalled
/// (`Engine::check_progress`): far more than any timer-driven plan takes to act.
pub const STALLED_CALLS: u32 = 10_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum BoundaryKind {
    End,
    Announce,
    Begin,
}

impl BoundaryKind {
    /// Ends come before announcements and starts at the same instant.
    fn rank(self) -> u8 {
        match self {
            BoundaryKind::End => 0,
            BoundaryKind::Announce | BoundaryKind::Begin => 1,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Boundary {
    time: f64,
    kind: BoundaryKind,
    window: u32,
}

/// The immutable inputs of a run, shared by every clone of its state.
#[derive(Debug, Clone)]
pub struct Inputs {
    pub jobs: JobTable,
    pub machine: Machine,
    pub calendar: Calendar,
    pub overrun: Overrun,
    boundaries: Vec<Boundary>,
    /// The policy switches nodes on and off: nodes get identities and power states.
    pub power_managed: bool,
    /// Seed for drawing transition latencies (mean latencies when `None`).
    pub sample_transitions: Option<u64>,
    /// The power manager under the queue policy, if any (it needs node power states).
    pub manager: Option<Arc<dyn LayerSpec>>,
    /// Node groups (count, power model) of a heterogeneous platform; empty: one group of the
    /// machine's power model.
    pub groups: Vec<(u32, PowerModel)>,
}

impl Inputs {
    /// Turns on node power states: for a power manager, or a policy that switches nodes itself.
    pub fn with_power_management(mut self, sample_transitions: Option<u64>) -> Result<Self> {
        if self.machine.power.is_none() {
            return Err(CoreError::input(
                "power management needs a platform with a power model",
            ));
        }
        self.power_managed = true;
        self.sample_transitions = sample_transitions;
        Ok(self)
    }

    /// Node groups of a heterogeneous platform (counts summing to the machine's size); jobs
    /// run within one group. They need node identities (a power manager places the jobs).
    pub fn with_groups(mut self, groups: Vec<(u32, PowerModel)>) -> Result<Self> {
        let total: u64 = groups.iter().map(|g| u64::from(g.0)).sum();
        if total != u64::from(self.machine.nodes) || groups.iter().any(|g| g.0 == 0) {
            return Err(CoreError::input(format!(
                "node groups of {total} nodes in all for a machine of {}",
                self.machine.nodes
            )));
        }
        let largest = groups.iter().map(|g| g.0).max().unwrap_or(0);
        if let Some(job) = self.jobs.iter().find(|j| j.nodes > largest) {
            return Err(CoreError::input(format!(
                "job {} needs {} nodes, more than the largest node group ({largest})",
                job.id, job.nodes
            )));
        }
        for (_, model) in &groups {
            model.validate()?;
        }
        self.groups = groups;
        Ok(self)
    }

    /// Puts a power manager under the queue policy.
    pub fn with_manager(
        self,
        spec: impl LayerSpec + 'static,
        sample_transitions: Option<u64>,
    ) -> Result<Self> {
        self.with_layer(Arc::new(spec), sample_transitions)
    }

    /// Puts the power layer `spec` builds under the queue policy.
    pub fn with_layer(
        self,
        spec: Arc<dyn LayerSpec>,
        sample_transitions: Option<u64>,
    ) -> Result<Self> {
        spec.validate()?;
        let mut inputs = self.with_power_management(sample_transitions)?;
        inputs.manager = Some(spec);
        Ok(inputs)
    }

    /// How many downtime boundaries fall at or before `t` (already applied at a decision at t).
    pub(crate) fn boundaries_through(&self, t: f64) -> u32 {
        self.boundaries.partition_point(|b| b.time <= t) as u32
    }

    pub fn new(
        jobs: JobTable,
        machine: Machine,
        calendar: Calendar,
        overrun: Overrun,
    ) -> Result<Self> {
        if machine.nodes == 0 || machine.nodes > MAX_NODES {
            return Err(CoreError::input(format!(
                "the machine has {} nodes; the engine takes 1 to {MAX_NODES}",
                machine.nodes
            )));
        }
        if let Some(job) = jobs.iter().find(|j| j.nodes > machine.nodes) {
            return Err(CoreError::input(format!(
                "job {} needs {} nodes, more than the machine's {}",
                job.id, job.nodes, machine.nodes
            )));
        }
        // Nothing happens before the run starts: a window announced (or begun) earlier is
        // applied at the start, one over by then is left out.
        let start = jobs.iter().next().map_or(0.0, |j| j.submit.min(0.0));
        let mut boundaries = Vec::with_capacity(calendar.windows().len() * 3);
        for (i, w) in calendar.windows().iter().enumerate() {
            let window = i as u32;
            if w.end <= start {
                continue;
            }
            if w.kind == DowntimeKind::Scheduled {
                let time = calendar.announced_at(w).max(start);
                boundaries.push(Boundary {
                    time,
                    kind: BoundaryKind::Announce,
                    window,
                });
            }
            boundaries.push(Boundary {
                time: w.start.max(start),
                kind: BoundaryKind::Begin,
                window,
            });
            boundaries.push(Boundary {
                time: w.end,
                kind: BoundaryKind::End,
                window,
            });
        }
        boundaries.sort_by(|a, b| {
            a.time
                .total_cmp(&b.time)
                .then(a.kind.rank().cmp(&b.kind.rank()))
                .then(a.window.cmp(&b.window))
                .then(a.kind.cmp(&b.kind))
        });
        Ok(Inputs {
            jobs,
            machine,
            calendar,
            overrun,
            boundaries,
            power_managed: false,
            sample_transitions: None,
            manager: None,
            groups: Vec::new(),
        })
    }
}

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
        let state = SimState {
            now,
            nodes,
            manager,
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
                !view.queue.is_empty() && view.free > 0
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
        for mark in self.state.marks.iter_mut().flatten() {
            if mark.metrics.is_none() && mark.at <= t {
                // The totals are linear between events: the mark's are the part up to it.
                let mut at_mark = self.state.metrics;
                let part = mark.at.max(0.0) - self.state.now.max(0.0);
                at_mark.elapse(part, self.state.busy, capacity, self.state.down);
                mark.metrics = Some(at_mark);
            }
        }
        self.state
            .metrics
            .elapse(dt, self.state.busy, capacity, self.state.down);
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
            self.state.busy -= c.nodes;
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
            self.state.queue.push(self.state.next_submit);
            if self.state.nodes.is_some() || self.state.record_events {
                self.state.arrived.push(self.state.next_submit);
            }
            self.state.next_submit += 1;
        }
    }

    fn apply_boundaries(&mut self, t: f64) {
        let due = |e: &Self| {
            e.inputs
                .boundaries
                .get(e.state.next_boundary as usize)
                .is_some_and(|b| b.time <= t)
        };
        if !due(self) {
            return; // the common case: no Arc clone on the hot path
        }
        let inputs = Arc::clone(&self.inputs);
        while let Some(b) = inputs.boundaries.get(self.state.next_boundary as usize) {
            if b.time > t {
                break;
            }
            self.state.next_boundary += 1;
            let window = inputs.calendar.windows()[b.window as usize];
            let nodes_down = window.nodes_down(inputs.machine.nodes);
            let s = &mut self.state;
            match b.kind {
                BoundaryKind::Announce => s.announced.push(window),
                BoundaryKind::Begin => {
                    if window.kind == DowntimeKind::Scheduled {
                        if let Some(pos) = s.announced.iter().position(|w| *w == window) {
                            s.announced.remove(pos);
                        }
                    }
                    s.active.push((b.window, window.end, nodes_down));
                    self.refresh_down();
                    self.kill_for_capacity(t);
                    self.take_nodes_down(b.window, &window, t);
                }
                BoundaryKind::End => {
                    if let Some(pos) = s.active.iter().position(|a| a.0 == b.window) {
                        s.active.remove(pos);
                    }
                    self.bring_nodes_up(b.window, t);
                    self.refresh_down();
                }
            }
        }
    }

    pub(crate) fn refresh_down(&mut self) {
        let n = self.inputs.machine.nodes;
        let s = &mut self.state;
        let total: u64 = s.active.iter().map(|a| u64::from(a.2)).sum();
        s.down = nodes_down(n, total);
        s.down_windows.clear();
        s.down_windows.extend(s.active.iter().map(|a| (a.1, a.2)));
        s.down_windows.sort_by(|a, b| a.0.total_cmp(&b.0));
    }

    /// At a window's start, kills running jobs until the remaining nodes hold them: all of them
    /// for a whole-machine window, else the most recently started first. Killed jobs go back to
    /// the front of the queue, in FCFS order, with their original submit time.
    fn kill_for_capacity(&mut self, t: f64) {
        let capacity = self.inputs.machine.nodes - self.state.down;
        if self.state.busy <= capacity {
            return;
        }
        let mut victims: Vec<Running> = self.state.running.clone();
        victims.sort_by(|a, b| b.start.total_cmp(&a.start).then(b.job.cmp(&a.job)));
        let mut killed = Vec::new();
        for v in victims {
            if self.state.busy <= capacity {
                break;
            }
            self.state.remove_running(v.job, v.requested_end);
            self.state.busy -= v.nodes;
            if let Some(nodes) = self.state.nodes.as_mut() {
                nodes.release(v.job, t);
            }
            self.log.record_kill(v.job, v.start, t);
            killed.push(v.job);
        }
        self.state.completions.retain(|c| !killed.contains(&c.job));
        killed.sort_unstable();
        self.state.queue.push_front(&killed);
    }

    /// With node identities, a window's start takes its nodes down: those asleep first, then
    /// switching off, idle, switching on (lowest numbers first); running jobs were killed
    /// before as needed. They come back at its end in the state the calendar says.
    fn take_nodes_down(&mut self, window: u32, w: &crate::model::Downtime, t: f64) {
        let machine = self.inputs.machine.nodes;
        let Some(nodes) = self.state.nodes.as_mut() else {
            return;
        };
        let already = nodes.count(NodeState::Down);
        let want = w.nodes_down(machine).min(machine - already) as usize;
        let rank = |state: NodeState| match state {
            NodeState::Sleeping => 0,
            NodeState::SwitchingOff => 1,
            NodeState::Idle => 2,
            NodeState::SwitchingOn => 3,
            NodeState::Computing | NodeState::Down => 4,
        };
        let mut candidates: Vec<(u8, u32)> = nodes
            .as_slice()
            .iter()
            .enumerate()
            .map(|(i, n)| (rank(n.state), i as u32))
            .filter(|&(r, _)| r < 4)
            .collect();
        candidates.sort_unstable();
        let chosen: Vec<u32> = candidates.iter().take(want).map(|&(_, i)| i).collect();
        debug_assert_eq!(chosen.len(), want, "jobs were killed to make room");
        for &i in &chosen {
            nodes.take_down(i, t, w.end, w.back_asleep);
        }
        self.state.taken_down.push((window, chosen));
    }

    fn bring_nodes_up(&mut self, window: u32, t: f64) {
        let Some(pos) = self.state.taken_down.iter().position(|d| d.0 == window) else {
            return;
        };
        let (_, chosen) = self.state.taken_down.remove(pos);
        if let Some(nodes) = self.state.nodes.as_mut() {
            for i in chosen {
                nodes.bring_up(i, t);
            }
        }
    }

    /// Validates and applies a decision: the only place jobs start.
    fn apply(&mut self, decision: &Decision) -> Result<()> {
        if !decision.starts.is_empty() {
            self.apply_starts(decision)?;
        }
        self.log
            .record_reservation(self.state.now, decision.reservation);
        if self.state.manager.is_some()
            && !(decision.power_on.is_empty() && decision.power_off.is_empty())
        {
            return Err(CoreError::decision(
                "a power manager switches the nodes of this run; run without one to switch them",
            ));
        }
        self.apply_power(&decision.power_off, &decision.power_on, &decision.timers)?;
        if self.state.pending_act {
            self.act(decision)?;
        }
        Ok(())
    }

    /// The power manager's step after the instant's starts (see `PowerManager::act`).
    fn act(&mut self, decision: &Decision) -> Result<()> {
        self.state.pending_act = false;
        let Some(mut manager) = self.state.manager.take() else {
            return Ok(());
        };
        let recording = self.log.is_recording();
        let changed = self.take_changed();
        let group_counts = self
            .state
            .nodes
            .as_ref()
            .map_or(&[][..], |n| n.group_counts());
        let actions = manager.act(&self.view(), decision, recording, &changed, group_counts);
        self.return_changed(changed);
        self.state.manager = Some(manager);
        self.apply_power(&actions.power_off, &actions.power_on, &actions.timers)
    }

    /// The journal of node changes since it was last taken (empty without node identities).
    fn take_changed(&mut self) -> Vec<u32> {
        self.state
            .nodes
            .as_mut()
            .map(Nodes::take_changed)
            .unwrap_or_default()
    }

    fn return_changed(&mut self, changed: Vec<u32>) {
        if let Some(nodes) = self.state.nodes.as_mut() {
            nodes.return_changed(changed);
        }
    }

    /// Switches nodes off, then on, and records timers.
    fn apply_power(&mut self, off: &[u32], on: &[u32], timers: &[f64]) -> Result<()> {
        let now = self.state.now;
        if !(on.is_empty() && off.is_empty()) {
            let Some(nodes) = self.state.nodes.as_mut() else {
                return Err(CoreError::decision("this run does not manage node power"));
            };
            for &node in off {
                nodes.power_off(node, now)?;
            }
            for &node in on {
                nodes.power_on(node, now)?;
            }
        }
        for &t in timers {
            if t > now && t.is_finite() {
                self.state.timers.push(Timer(t));
            }
        }
        Ok(())
    }

    /// The nodes of each start, one list after the other: the decision's own, else the power
    /// manager's energy-aware choice, else the lowest-numbered idle nodes. Empty without node
    /// identities.
    fn placements(&self, decision: &Decision) -> Result<Vec<u32>> {
        let Some(nodes) = self.state.nodes.as_ref() else {
            if !decision.nodes.is_empty() {
                return Err(CoreError::decision(
                    "this run's nodes have no identities: a decision cannot name them",
                ));
            }
            return Ok(Vec::new());
        };
        let jobs = &self.inputs.jobs;
        let total: usize = decision
            .starts
            .iter()
            .map(|s| jobs.get(s.job).nodes as usize)
            .sum();
        if !decision.nodes.is_empty() {
            if decision.nodes.len() != total {
                return Err(CoreError::decision(format!(
                    "the decision names {} nodes for starts that need {total}",
                    decision.nodes.len()
                )));
            }
            return Ok(decision.nodes.clone());
        }
        let view = self.view();
        let mut taken = vec![false; nodes.as_slice().len()];
        let mut placed = Vec::with_capacity(total);
        for start in &decision.starts {
            let count = jobs.get(start.job).nodes;
            let chosen = match view.manager {
                Some(manager) => manager.place(&view, count, &taken),
                None => (0..taken.len() as u32)
                    .filter(|&i| {
                        !taken[i as usize] && view.nodes[i as usize].state == NodeState::Idle
                    })
                    .take(count as usize)
                    .collect(),
            };
            for &i in &chosen {
                taken[i as usize] = true;
            }
            placed.extend(chosen);
        }
        Ok(placed)
    }

    fn apply_starts(&mut self, decision: &Decision) -> Result<()> {
        self.scratch.clear();
        self.scratch.extend(decision.starts.iter().map(|s| s.pos));
        self.scratch.sort_unstable();
        if self.scratch.windows(2).any(|w| w[0] == w[1]) {
            return Err(CoreError::decision(
                "the same queue position is started twice",
            ));
        }
        let view = self.view();
        let mut admission = Admission::new(&view);
        let mut free = view.free;
        let now = self.state.now;
        let inputs = &*self.inputs;
        let placed = self.placements(decision)?;
        let mut offset = 0;
        for start in &decision.starts {
            let queued = self.state.queue.as_slice().get(start.pos as usize).copied();
            if queued != Some(start.job) {
                return Err(CoreError::decision(format!(
                    "job index {} is not at queue position {}",
                    start.job, start.pos
                )));
            }
            let job = inputs.jobs.get(start.job);
            let requested_end = now + job.requested_time;
            if job.nodes > free {
                return Err(CoreError::decision(format!(
                    "job {} needs {} nodes but only {free} are free",
                    job.id, job.nodes
                )));
            }
            if !admission.admits(requested_end, job.nodes) {
                return Err(CoreError::decision(format!(
                    "job {} would run into an announced maintenance window",
                    job.id
                )));
            }
            admission.commit(requested_end, job.nodes);
            free -= job.nodes;
            let killed = inputs.overrun == Overrun::Kill && job.run_time > job.requested_time;
            let end = now
                + if killed {
                    job.requested_time
                } else {
                    job.run_time
                };
            self.log
                .record_start(start.job, now, end, start.kind, killed);
            self.state.metrics.on_start(now - job.submit, job.run_time);
            self.state.insert_running(Running {
                requested_end,
                job: start.job,
                nodes: job.nodes,
                start: now,
            });
            self.state.completions.push(Completion {
                end,
                job: start.job,
                nodes: job.nodes,
                requested_end,
            });
            self.state.busy += job.nodes;
            let mut watts = inputs
                .machine
                .power
                .map(|m| f64::from(job.nodes) * m.computing_w);
            if let Some(nodes) = self.state.nodes.as_mut() {
                let k = job.nodes as usize;
                let these = placed.get(offset..offset + k).ok_or_else(|| {
                    CoreError::decision(format!("no idle nodes left for job {}", job.id))
                })?;
                let group = |i: u32| nodes.as_slice().get(i as usize).map(|n| n.group);
                if these.iter().any(|&i| group(i) != group(these[0])) {
                    return Err(CoreError::decision(format!(
                        "job {} would run on nodes of several groups",
                        job.id
                    )));
                }
                nodes.allocate(start.job, these, now)?;
                watts = Some(these.iter().map(|&i| nodes.model_of(i).computing_w).sum());
                offset += k;
            }
            if let Some(watts) = watts {
                // the computing energy of this attempt (its nodes' groups' power)
                self.log.record_energy(start.job, watts * (end - now));
            }
        }
        // `scratch` holds the started positions, sorted and distinct (checked above).
        self.state.queue.remove_sorted(&self.scratch);
        Ok(())
    }
}
