//! The power manager: a layer of the engine under any queue policy.
//!
//! At every instant the engine calls, in this order:
//! 1. [`PowerManager::prepare`]: consume the instant's arrivals and completions (ICON's
//!    statistics and screen, which fix the call's mode), set the idle-timeout deadlines of newly
//!    idle nodes, and order the idle nodes for the energy-aware choice;
//! 2. the queue policy, whose scan asks [`PowerManager::scan`] to place each job it starts
//!    (and, with EASY, to plan the blocked head job's nodes);
//! 3. [`PowerManager::act`], once the starts are applied: plan the waiting jobs in the queue
//!    policy's order and wake the sleeping nodes they need, then the warm spares (ICON), the
//!    stale-completion shutdown and the idle timeout.
//!
//! The manager's state is part of the simulation state: look-ahead search clones it with the
//! rest, so a forward model sees the same power decisions the real run would take.

use std::sync::Arc;
use std::time::Instant;

use crate::engine::power::{NodeState, NO_JOB, STATES};
use crate::engine::KnownJob;
use crate::engine::{LayerActions, LayerSpec, LogTable, PowerLayer, QueueService, View};
use crate::error::Result;
use crate::power::classes::{class_plan, ClassInput, ClassScratch, NodeIndex};
use crate::power::config::{ManagerConfig, Mode, PowerRecord, ScreenRow};
use crate::power::easy_classes::{easy_class_plan, EasyInput};
use crate::power::easy_plan::{busy_now, easy_plan};
use crate::power::log::PowerLog;
use crate::power::plan::{agenda, plan, Plan, PlanJob, Slot, Windows};
use crate::power::screen::SeriesStats;
use crate::power::spare::{capped_horizon, optimise, SpareChoice, SpareInput};
use crate::power::stats::{IconStats, Rejection};
use crate::sched::scan::{scan, Placement};
use crate::sched::{Backfill, Decision, QueueRule};

/// Below this a predicted remaining time does not count as a coming completion (as in the
/// authors' code).
const EPS: f64 = 1e-9;

/// Above this many nodes changed at once, the sorted per-node lists are rebuilt rather than
/// updated node by node.
const BATCH: usize = 16;

/// What a call of the manager decides besides starts.
#[derive(Debug, Clone, Default)]
pub struct Actions {
    pub power_on: Vec<u32>,
    pub power_off: Vec<u32>,
    pub timers: Vec<f64>,
    pub record: Option<PowerRecord>,
    /// Spare candidates (target, W, E, J) of this call, for the record.
    pub candidates: Vec<(u32, f64, f64, f64)>,
}

#[derive(Debug, Clone)]
pub struct PowerManager {
    config: Arc<ManagerConfig>,
    /// Idle-timeout deadline of each node (NaN while it is not idle).
    deadlines: Vec<f64>,
    /// The nodes with a deadline, by (deadline, node): the expired ones come first, then the
    /// next timeout.
    by_deadline: Vec<(f64, u32)>,
    /// The per-node bookkeeping (deadlines, previous jobs) follows the nodes' journal of
    /// changes; when not (first call, a look-ahead's copy), the next call rebuilds it from
    /// every node.
    synced: bool,
    /// Rebuild from every node at this instant's `act` too.
    rebuild: bool,
    /// Nodes changed between the previous call's `act` and this `prepare`.
    changed: Vec<u32>,
    /// Which nodes are in which state, for the wake plan on classes of alike nodes.
    index: NodeIndex,
    class_scratch: ClassScratch,
    /// Job each node ran after the previous call (which nodes a completion released).
    previous_jobs: Vec<u32>,
    first_call: bool,
    stats: Option<IconStats>,
    /// How the queue policy serves the queue (from its last decision).
    rule: Arc<dyn QueueService>,
    /// The calls' log (a copy's starts empty).
    log: PowerLog,
    /// Future timers already asked for (sorted): each is asked once.
    timers: Vec<f64>,
    // This instant, set by `prepare`.
    now: f64,
    mode: Mode,
    epoch: bool,
    rejection: Rejection,
    screen: Option<(SeriesStats, SeriesStats)>,
    /// Idle nodes in the energy-aware order: longest remaining idle timeout first.
    idle_order: Vec<u32>,
    seconds: f64,
}

impl PowerManager {
    pub fn new(config: Arc<ManagerConfig>) -> Self {
        let stats = config.icon.as_ref().map(IconStats::new);
        PowerManager {
            config,
            deadlines: Vec::new(),
            by_deadline: Vec::new(),
            synced: false,
            rebuild: true,
            changed: Vec::new(),
            index: NodeIndex::default(),
            class_scratch: ClassScratch::default(),
            previous_jobs: Vec::new(),
            first_call: true,
            stats,
            rule: Arc::new(QueueRule::FCFS_EASY),
            log: PowerLog::default(),
            timers: Vec::new(),
            now: f64::NAN,
            mode: Mode::Ipm,
            epoch: false,
            rejection: Rejection::default(),
            screen: None,
            idle_order: Vec::new(),
            seconds: 0.0,
        }
    }

    pub fn config(&self) -> &ManagerConfig {
        &self.config
    }

    /// Forgets that the per-node bookkeeping follows a journal of node changes: the next call
    /// rebuilds it from every node (a copy of the manager over nodes built anew).
    pub fn desync(&mut self) {
        self.synced = false;
        self.rebuild = true;
        // (its job numbers and states are not those of the new nodes: rebuilt when next read)
        self.index = NodeIndex::default();
    }

    /// Sets node `i`'s idle-timeout deadline (NaN: none), keeping `by_deadline` in step.
    fn set_deadline(&mut self, i: usize, deadline: f64) {
        let old = self.deadlines[i];
        if old.to_bits() == deadline.to_bits() {
            return;
        }
        let key = |&(t, node): &(f64, u32), d: f64| t.total_cmp(&d).then(node.cmp(&(i as u32)));
        if !old.is_nan() {
            let at = self
                .by_deadline
                .binary_search_by(|e| key(e, old))
                .expect("every deadline is listed");
            self.by_deadline.remove(at);
        }
        if !deadline.is_nan() {
            let at = self
                .by_deadline
                .binary_search_by(|e| key(e, deadline))
                .expect_err("a node has one deadline");
            self.by_deadline.insert(at, (deadline, i as u32));
        }
        self.deadlines[i] = deadline;
    }

    /// Sets the deadlines of many nodes (node, deadline; NaN: none) at once: one by one for a
    /// few, else by filtering and sorting `by_deadline` once (a sorted list's inserts and
    /// removals move its tail: many of them on a large machine cost its size squared). The
    /// same list either way.
    fn set_deadlines(&mut self, updates: &[(u32, f64)]) {
        if updates.len() <= BATCH {
            for &(i, deadline) in updates {
                self.set_deadline(i as usize, deadline);
            }
            return;
        }
        let mut touched = vec![false; self.deadlines.len()];
        for &(i, deadline) in updates {
            self.deadlines[i as usize] = deadline;
            touched[i as usize] = true;
        }
        self.by_deadline.retain(|&(_, i)| !touched[i as usize]);
        for (i, &flag) in touched.iter().enumerate() {
            if flag && !self.deadlines[i].is_nan() {
                self.by_deadline.push((self.deadlines[i], i as u32));
            }
        }
        self.by_deadline
            .sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    }

    /// A node's deadline after a change of state: set when a call first sees it idle,
    /// cleared when it is not idle (`None`: unchanged).
    fn follow(&self, i: usize, idle: bool, now: f64) -> Option<f64> {
        let old = self.deadlines[i];
        if idle {
            old.is_nan().then_some(now + self.config.idle_timeout)
        } else {
            (!old.is_nan()).then_some(f64::NAN)
        }
    }

    /// Maps the job indices the manager remembers (a look-ahead renumbers jobs).
    pub fn renumber_jobs(&mut self, map: impl Fn(u32) -> u32) {
        for j in &mut self.previous_jobs {
            if *j != NO_JOB {
                *j = map(*j);
            }
        }
    }

    /// The call's mode (set by `prepare`).
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Step 1: consume the instant's events, fix the mode and the energy-aware idle order.
    /// `changed` lists the nodes whose state or job changed since the previous call's `act`.
    pub fn prepare(&mut self, view: &View, changed: &[u32]) {
        let started = Instant::now();
        let n = view.nodes.len();
        if self.deadlines.len() != n {
            self.deadlines = vec![f64::NAN; n];
            self.by_deadline.clear();
            self.previous_jobs = vec![NO_JOB; n];
            self.synced = false;
        }
        self.now = view.now;
        self.epoch = self.first_call || !view.arrived.is_empty() || !view.completed.is_empty();
        self.first_call = false;
        self.mode = Mode::Ipm;
        self.screen = None;
        self.rejection = Rejection::default();
        if let (Some(stats), Some(icon)) = (self.stats.as_mut(), self.config.icon.as_ref()) {
            stats.observe(view, icon);
            let (rejection, arrivals, service) = stats.screen(icon);
            self.mode = if rejection.accepted() || !icon.fallback {
                Mode::Icon
            } else {
                Mode::Fallback
            };
            self.rejection = rejection;
            self.screen = Some((arrivals, service));
        }
        // Idle-timeout deadlines: set when a call first sees a node idle. Only the nodes that
        // changed can change (after `act` a node has a deadline if and only if it is idle).
        self.rebuild = !self.synced;
        let mut updates: Vec<(u32, f64)> = Vec::new();
        if self.synced {
            for &i in changed {
                let node = &view.nodes[i as usize];
                if let Some(d) = self.follow(i as usize, node.state == NodeState::Idle, view.now) {
                    updates.push((i, d));
                }
            }
            self.set_deadlines(&updates);
            self.index.update_many(changed, view.nodes);
        } else {
            for (i, node) in view.nodes.iter().enumerate() {
                if let Some(d) = self.follow(i, node.state == NodeState::Idle, view.now) {
                    updates.push((i as u32, d));
                }
            }
            self.set_deadlines(&updates);
            self.index.rebuild(view.nodes);
            self.synced = true;
        }
        self.changed.clear();
        self.changed.extend_from_slice(changed);
        // The energy-aware order of idle nodes, for the jobs the queue policy may start (none
        // unless the smallest waiting job fits).
        self.idle_order.clear();
        let smallest = view.queue.iter().map(|&j| view.jobs.get(j).nodes).min();
        if smallest.is_none_or(|s| s > view.free) {
            self.seconds = started.elapsed().as_secs_f64();
            return;
        }
        // (every idle node has a deadline and no other node has: `by_deadline` read backwards,
        // nodes with equal deadlines by number)
        let mut run = 0;
        for &(deadline, i) in self.by_deadline.iter().rev() {
            let last = self.idle_order.last().map(|&j| self.deadlines[j as usize]);
            if last.is_some_and(|d| d.total_cmp(&deadline).is_ne()) {
                self.idle_order[run..].reverse();
                run = self.idle_order.len();
            }
            self.idle_order.push(i);
        }
        self.idle_order[run..].reverse();
        debug_assert_eq!(self.idle_order.len(), view.free as usize);
        debug_assert!(self.idle_order.windows(2).all(|w| {
            let d = |i: u32| self.deadlines[i as usize];
            d(w[1]).total_cmp(&d(w[0])).then(w[0].cmp(&w[1])).is_lt()
        }));
        self.seconds = started.elapsed().as_secs_f64();
    }

    fn icon_mode(&self) -> bool {
        self.mode == Mode::Icon
    }

    /// The class planner's input for this call, every option off (callers set theirs).
    fn class_input<'a>(&'a self, view: &'a View, releases: &'a [(u32, f64)]) -> ClassInput<'a> {
        ClassInput {
            now: view.now,
            nodes: view.nodes,
            model: &view.models[0],
            index: &self.index,
            idle_by_deadline: &self.by_deadline,
            releases,
            needed_at: false,
            record: false,
            cut: false,
            taken: &[],
            taken_mark: &[],
        }
    }

    /// When a running job is expected to end: its requested end under IPM (unknown once it
    /// overruns), the predictor's conditional mean in ICON mode (Eqs. 50-51; a job started now
    /// at the log-normal mean).
    fn running_release(&self, view: &View, predicted: bool) -> Vec<(u32, f64)> {
        let mut out: Vec<(u32, f64)> = view
            .running
            .iter()
            .map(|r| {
                let t = match (&self.stats, predicted && self.icon_mode()) {
                    (Some(stats), true) => {
                        let job = view.jobs.get(r.job);
                        view.now
                            + stats
                                .predictor
                                .remaining(job.requested_time, view.now - r.start)
                    }
                    _ if r.requested_end > view.now => r.requested_end,
                    _ => f64::INFINITY,
                };
                (r.job, t)
            })
            .collect();
        out.sort_unstable_by_key(|&(job, _)| job);
        out
    }

    /// A waiting job's planned duration: requested (IPM), the predicted median (ICON, Eq. 46).
    fn queued_duration(&self, requested: f64) -> f64 {
        match (&self.stats, self.icon_mode()) {
            (Some(stats), true) => stats.predictor.queued(requested),
            _ => requested,
        }
    }

    /// The agenda of every node; with `predicted`, running jobs end when the mode expects
    /// (ICON: the predictor), else at their requested end.
    fn slots(&self, view: &View, predicted: bool) -> Vec<Slot> {
        let releases = self.running_release(view, predicted);
        let release = |job: u32| {
            releases
                .binary_search_by_key(&job, |&(j, _)| j)
                .map_or(f64::INFINITY, |i| releases[i].1)
        };
        agenda(view.now, view.nodes, view.models, &self.deadlines, release)
    }

    /// Step 2: the scan of a queue policy on nodes with identities. Starts jobs in the order of
    /// `positions` while they fit in the idle nodes, each on the first idle nodes of the
    /// energy-aware order; with EASY, the first job that does not fit is planned on the agenda
    /// and holds its planned nodes until its planned start (PSAS): a later job may start on
    /// idle nodes it does not hold, or on nodes it holds if it ends (by request) before then.
    pub fn scan(
        &self,
        view: &View,
        positions: &[u32],
        backfill: Backfill,
        decision: &mut Decision,
    ) {
        if view.power.is_none() {
            return;
        }
        // No idle node to place a job on (none, or the smallest waiting job does not fit) and
        // no reservation to plan: nothing starts (a job of no nodes would).
        if backfill == Backfill::None
            && self.idle_order.is_empty()
            && positions
                .iter()
                .all(|&p| view.jobs.get(view.queue[p as usize]).nodes > 0)
        {
            return;
        }
        let n = view.nodes.len();
        let mut placement = Identities {
            manager: self,
            taken: vec![false; n],
            first_taken: decision.nodes.len(),
            idle_left: view.free,
            busy_until: vec![f64::NAN; n],
            holds: Vec::new(),
            unheld_left: 0,
            shadow: f64::NAN,
        };
        let len = positions.len();
        scan(
            view,
            len,
            |k| positions[k],
            backfill,
            &mut placement,
            decision,
        );
    }

    /// The plans run on classes of alike nodes: one node group, no node down, the node index
    /// up to date (a look-ahead's copy acts before its first `prepare`: its index is rebuilt
    /// then), and not asked to plan node by node.
    fn by_classes(&self, view: &View) -> bool {
        view.models.len() == 1
            && self.index.len() == view.nodes.len()
            && !self.index.has_down()
            && !self.config.plan_by_node
    }

    /// The plan of one job (`head`, planned however far ahead: a reservation) on the agenda:
    /// its start and nodes, `None` when it cannot be planned. With `predicted`, running jobs
    /// end when the mode expects, else at their requested end; the idle nodes `started` (a
    /// start of this call took them, marked in `taken`) run until their given release. On
    /// one node group without nodes down, on classes of alike nodes (the same plan, see
    /// `classes`); otherwise node by node.
    fn head_plan(
        &self,
        view: &View,
        head: PlanJob,
        predicted: bool,
        started: &[(f64, u32)],
        taken: &[bool],
    ) -> Option<(f64, Vec<u32>)> {
        let windows = Windows::of(view);
        if self.by_classes(view) {
            let releases = self.running_release(view, predicted);
            let input = ClassInput {
                record: true,
                taken: started,
                taken_mark: if started.is_empty() { &[] } else { taken },
                ..self.class_input(view, &releases)
            };
            let mut scratch = ClassScratch::default();
            let out = class_plan(&input, &[head], &windows, &mut scratch);
            return out
                .planned
                .into_iter()
                .next()
                .map(|(_, t, nodes)| (t, nodes));
        }
        let mut slots = self.slots(view, predicted);
        for &(release, i) in started {
            let slot = &mut slots[i as usize];
            slot.release = release;
            slot.rank = 1;
            slot.timeout_key = 0.0;
        }
        plan(view.now, &[head], &mut slots, view.models, false, &windows).head
    }

    /// `count` idle nodes not yet `taken` and `allowed`, within one node group, first in the
    /// energy-aware order (longest remaining idle timeout), marked taken; `None` if no group
    /// has that many. Among groups that can hold the job: the lowest computing power, then the
    /// first group.
    fn take(
        &self,
        view: &View,
        count: u32,
        allowed: &dyn Fn(u32) -> bool,
        taken: &mut [bool],
    ) -> Option<Vec<u32>> {
        let usable = |i: u32| !taken[i as usize] && allowed(i);
        let group = if view.models.len() <= 1 {
            let available = self.idle_order.iter().filter(|&&i| usable(i)).count();
            (available >= count as usize).then_some(0u16)?
        } else {
            let mut available = vec![0u32; view.models.len()];
            for &i in &self.idle_order {
                if usable(i) {
                    available[view.nodes[i as usize].group as usize] += 1;
                }
            }
            (0..view.models.len() as u16)
                .filter(|&g| available[g as usize] >= count)
                .min_by(|&a, &b| {
                    let w = |g: u16| view.models[g as usize].computing_w;
                    w(a).total_cmp(&w(b)).then(a.cmp(&b))
                })?
        };
        let chosen: Vec<u32> = self
            .idle_order
            .iter()
            .copied()
            .filter(|&i| usable(i) && view.nodes[i as usize].group == group)
            .take(count as usize)
            .collect();
        for &i in &chosen {
            taken[i as usize] = true;
        }
        Some(chosen)
    }

    /// The energy-aware choice of `count` idle nodes for a job a decision did not place (within
    /// one node group); empty when no group has that many.
    pub fn place(&self, view: &View, count: u32, taken: &[bool]) -> Vec<u32> {
        let mut taken = taken.to_vec();
        let idle = |i: u32| view.nodes[i as usize].state == NodeState::Idle;
        self.take(view, count, &idle, &mut taken)
            .unwrap_or_default()
    }

    /// Step 3, after the instant's starts: wakes for the waiting jobs, warm spares, shutdowns
    /// and the idle timeout. `started` jobs started at this call; `record` asks for a log row.
    /// `changed` lists the nodes changed since `prepare` (the starts), `group_counts` the node
    /// counts per state of each group.
    pub fn act(
        &mut self,
        view: &View,
        decision: &Decision,
        record: bool,
        changed: &[u32],
        group_counts: &[[u32; STATES]],
    ) -> Actions {
        let started_at = Instant::now();
        let mut out = Actions::default();
        if view.power.is_none() {
            return out;
        }
        if let Some(rule) = &decision.rule {
            self.rule = Arc::clone(rule);
        }
        let n = view.nodes.len();
        let nodes = view.nodes;
        // Nodes that started a job at this call have no deadline any more; idle nodes past
        // their timeout (the first of `by_deadline`); sleeping nodes.
        let clear: Vec<(u32, f64)> = if self.rebuild {
            (0..n as u32)
                .filter(|&i| {
                    nodes[i as usize].state != NodeState::Idle
                        && !self.deadlines[i as usize].is_nan()
                })
                .map(|i| (i, f64::NAN))
                .collect()
        } else {
            changed
                .iter()
                .filter(|&&i| {
                    nodes[i as usize].state != NodeState::Idle
                        && !self.deadlines[i as usize].is_nan()
                })
                .map(|&i| (i, f64::NAN))
                .collect()
        };
        self.set_deadlines(&clear);
        if self.rebuild {
            self.index.rebuild(nodes);
        } else {
            self.index.update_many(changed, nodes);
        }
        let past = self.by_deadline.partition_point(|&(t, _)| t <= view.now);
        let mut expired_nodes: Vec<u32> = self.by_deadline[..past].iter().map(|e| e.1).collect();
        expired_nodes.sort_unstable();
        let asleep: usize = group_counts
            .iter()
            .map(|c| c[NodeState::Sleeping as usize] as usize)
            .sum();
        let queue_empty = view.queue.is_empty();
        // The plan only matters through the sleeping nodes it wakes and the expired idle nodes
        // it keeps awake: without either, skip it.
        let planned = if queue_empty || (expired_nodes.is_empty() && asleep == 0) {
            Plan::default()
        } else {
            // The waiting jobs in the queue policy's order.
            let jobs: Vec<PlanJob> = self
                .rule
                .positions(view)
                .iter()
                .map(|&p| {
                    let job = view.queue[p as usize];
                    let j = view.jobs.get(job);
                    PlanJob {
                        job,
                        nodes: j.nodes,
                        duration: self.queued_duration(j.requested_time),
                    }
                })
                .collect();
            let down = group_counts.iter().any(|c| c[NodeState::Down as usize] > 0);
            if self.rule.backfill() != Backfill::None {
                self.easy_wakes(view, &jobs, decision, !expired_nodes.is_empty())
            } else if view.models.len() == 1 && !down && !self.config.plan_by_node {
                // The same plan on classes of alike nodes (see `classes`).
                let releases = self.running_release(view, true);
                let mut scratch = std::mem::take(&mut self.class_scratch);
                let input = ClassInput {
                    needed_at: !expired_nodes.is_empty(),
                    cut: true,
                    ..self.class_input(view, &releases)
                };
                let out = class_plan(&input, &jobs, &Windows::of(view), &mut scratch);
                self.class_scratch = scratch;
                out
            } else {
                let mut slots = self.slots(view, true);
                let windows = Windows::of(view);
                plan(view.now, &jobs, &mut slots, view.models, true, &windows)
            }
        };
        let mut wake = planned.wake_now.clone();
        out.timers.extend_from_slice(&planned.wake_times);
        let mut off: Vec<u32> = Vec::new();
        // An expired node is kept awake when a planned job needs it before it could switch
        // off and wake again.
        let soon = |i: u32| {
            let m = &view.models[nodes[i as usize].group as usize];
            view.now + m.switch_off_s + m.switch_on_s
        };
        let mut spare = None;
        let mut gate_open = false;
        let mut spare_planning = false;
        match (self.config.icon.as_ref(), self.mode) {
            (Some(icon), Mode::Icon) => {
                let last = self.stats.as_ref().and_then(|s| s.last_arrival);
                gate_open = !icon.gate || last.is_some_and(|t| view.now - t <= icon.recency_window);
                if queue_empty && self.epoch {
                    if gate_open {
                        spare_planning = true;
                        let mut expired = vec![false; n];
                        for &i in &expired_nodes {
                            expired[i as usize] = true;
                        }
                        let choice = self.spares(view, &expired);
                        wake.extend_from_slice(&choice.wake);
                        off.extend_from_slice(&choice.switch_off);
                        spare = Some(choice);
                    } else if icon.stale_completion_shutdown && !view.completed.is_empty() {
                        // Stale-completion shutdown: nodes this instant's completions
                        // released and nobody uses, whatever their timeout.
                        off.extend((0..n as u32).filter(|&i| {
                            let node = &nodes[i as usize];
                            self.previous_jobs[i as usize] != NO_JOB
                                && node.state == NodeState::Idle
                        }));
                    }
                }
                if queue_empty {
                    // The idle timeout applies in ICON mode once the queue is empty.
                    off.extend_from_slice(&expired_nodes);
                }
            }
            _ => {
                let keep_for_plan = |i: u32| {
                    planned
                        .needed_at
                        .get(i as usize)
                        .is_some_and(|&t| t < soon(i))
                };
                off.extend(expired_nodes.iter().copied().filter(|&i| !keep_for_plan(i)));
            }
        }
        off.sort_unstable();
        off.dedup();
        wake.sort_unstable();
        wake.dedup();
        wake.retain(|i| off.binary_search(i).is_err());
        let clear: Vec<(u32, f64)> = off
            .iter()
            .filter(|&&i| !self.deadlines[i as usize].is_nan())
            .map(|&i| (i, f64::NAN))
            .collect();
        self.set_deadlines(&clear);
        // Be called back at the next idle timeout of a node that stays idle (in ICON mode only
        // while nothing waits: the timeout does not apply then).
        if !self.icon_mode() || queue_empty {
            // (nodes switched off here have no deadline any more)
            let later = self.by_deadline.partition_point(|&(t, _)| t <= view.now);
            let next_timeout = self.by_deadline.get(later).map_or(f64::INFINITY, |e| e.0);
            if next_timeout.is_finite() {
                out.timers.push(next_timeout);
            }
        }
        // IPM plans again a wake latency before each running job's requested end while a node
        // sleeps (PSAS's callbacks): a sleeping node may then be woken just in time.
        if !self.icon_mode() && asleep > wake.len() {
            // (the wake latencies of the groups that have sleeping nodes, in node order: nodes
            // are numbered group after group)
            let mut leads: Vec<f64> = Vec::new();
            for (g, counts) in group_counts.iter().enumerate() {
                let lead = view.models[g].switch_on_s;
                if counts[NodeState::Sleeping as usize] > 0 && !leads.contains(&lead) {
                    leads.push(lead);
                }
            }
            for lead in leads {
                out.timers.extend(
                    view.running
                        .iter()
                        .filter(|r| r.requested_end > view.now)
                        .map(|r| r.requested_end - lead)
                        .filter(|&t| t > view.now),
                );
            }
        }
        self.keep_new_timers(&mut out.timers, view.now);
        if self.rebuild {
            for (i, node) in nodes.iter().enumerate() {
                self.previous_jobs[i] = node.job;
            }
            self.rebuild = false;
        } else {
            for &i in self.changed.iter().chain(changed) {
                self.previous_jobs[i as usize] = nodes[i as usize].job;
            }
        }
        if record {
            let (arrivals, service) = match &self.screen {
                Some((a, s)) => (ScreenRow::of(a), ScreenRow::of(s)),
                None => (ScreenRow::NONE, ScreenRow::NONE),
            };
            let stats = self.stats.as_ref();
            let chosen = spare.as_ref().map_or([f32::NAN; 3], |c| {
                [
                    c.chosen.waiting as f32,
                    c.chosen.energy as f32,
                    c.chosen.cost as f32,
                ]
            });
            if let Some(choice) = &spare {
                out.candidates.extend(
                    choice
                        .candidates
                        .iter()
                        .map(|c| (c.target, c.waiting, c.energy, c.cost)),
                );
            }
            out.record = Some(PowerRecord {
                time: view.now,
                seconds: (self.seconds + started_at.elapsed().as_secs_f64()) as f32,
                mode: self.mode,
                rejection: self.rejection,
                spare_planning,
                gate_open,
                arrivals,
                service,
                arrival_rate: stats.map_or(f64::NAN, IconStats::arrival_rate) as f32,
                service_rate: stats.map_or(f64::NAN, IconStats::service_rate) as f32,
                runtime_ratio: stats
                    .and_then(|s| s.predictor.log_moments())
                    .map_or(f64::NAN, |(m, _)| m.exp()) as f32,
                candidates: 0..0,
                target: spare.as_ref().map_or(u32::MAX, |c| c.chosen.target),
                chosen,
                started: decision.starts.len() as u32,
                wakes: wake.len() as u32,
                shutdowns: off.len() as u32,
                queue_length: (view.queue.len() + decision.starts.len()) as u32,
            });
        }
        out.power_on = wake;
        out.power_off = off;
        out
    }

    /// The wakes and needs of the EASY plan (see `easy_plan`): the head job keeps the
    /// reservation decided at this call, or is planned now. `needs` fills `needed_at` (only read
    /// for idle nodes past their timeout).
    fn easy_wakes(&self, view: &View, jobs: &[PlanJob], decision: &Decision, needs: bool) -> Plan {
        let n = view.nodes.len();
        let mut out = Plan {
            needed_at: if needs {
                vec![f64::INFINITY; n]
            } else {
                Vec::new()
            },
            ..Plan::default()
        };
        let Some(first) = jobs.first() else {
            return out;
        };
        let head = match decision.reservation {
            Some(r) if r.job == first.job && !decision.held.is_empty() => {
                Some((r.shadow_time, decision.held.clone()))
            }
            _ => self.head_plan(view, *first, true, &[], &[]),
        };
        let Some(head) = head else {
            return out;
        };
        let windows = Windows::of(view);
        let entries = if self.by_classes(view) {
            let releases = self.running_release(view, true);
            let input = EasyInput {
                now: view.now,
                nodes: view.nodes,
                model: &view.models[0],
                index: &self.index,
                idle_by_deadline: &self.by_deadline,
                releases: &releases,
            };
            easy_class_plan(&input, jobs, head, &windows)
        } else {
            let slots = self.slots(view, true);
            let busy = busy_now(view.now, view.nodes, &slots);
            let groups = view.models.len() as u16;
            easy_plan(view.now, jobs, head, &slots, busy, groups, &windows)
        };
        // (node, when to wake it) for the sleeping nodes planned, then the earliest per node, by
        // node (listed as found rather than over every node: most calls plan few of them)
        let mut wake_at: Vec<(u32, f64)> = Vec::new();
        for (_, nodes, start) in &entries {
            for &i in nodes {
                if needs {
                    let at = &mut out.needed_at[i as usize];
                    *at = at.min(*start);
                }
                let node = &view.nodes[i as usize];
                // (a sleeping node planned for now can only be one that wakes at once: a zero
                // wake latency; it is woken now like any node whose wake time has come)
                if node.state == NodeState::Sleeping {
                    let wake_s = view.models[node.group as usize].switch_on_s;
                    wake_at.push((i, start - wake_s));
                }
            }
        }
        wake_at.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
        wake_at.dedup_by_key(|e| e.0);
        for (i, t) in wake_at {
            if t <= view.now + EPS {
                out.wake_now.push(i);
            } else if t.is_finite() {
                out.wake_times.push(t);
            }
        }
        out
    }

    /// Keeps only the timers not asked for before (and forgets the past ones).
    fn keep_new_timers(&mut self, timers: &mut Vec<f64>, now: f64) {
        self.timers.retain(|&t| t > now);
        timers.retain(|&t| t > now && t.is_finite());
        timers.sort_unstable_by(f64::total_cmp);
        timers.dedup();
        timers.retain(|t| match self.timers.binary_search_by(|x| x.total_cmp(t)) {
            Ok(_) => false,
            Err(at) => {
                self.timers.insert(at, *t);
                true
            }
        });
    }

    /// Spare-target optimisation at a spare-planning point (Eqs. 20-39).
    fn spares(&self, view: &View, expired: &[bool]) -> SpareChoice {
        let icon = self.config.icon.as_ref().expect("ICON mode");
        let stats = self.stats.as_ref().expect("ICON mode");
        let n = view.nodes.len();
        let arrival_rate = stats.arrival_rate();
        // The nearest predicted completion, jobs started at this instant included.
        let nearest = self
            .running_release(view, true)
            .iter()
            .map(|&(_, t)| t - view.now)
            .filter(|&r| r > EPS && r.is_finite())
            .fold(f64::INFINITY, f64::min);
        let completion_rate = if nearest.is_finite() {
            1.0 / nearest
        } else {
            view.running.len() as f64 * stats.service_rate()
        };
        let event_rate = arrival_rate + completion_rate;
        let arrival_probability = if event_rate > 0.0 {
            arrival_rate / event_rate
        } else {
            0.0
        };
        let to_timeout = (0..n)
            .filter(|&i| view.nodes[i].state == NodeState::Idle && !expired[i])
            .map(|i| self.deadlines[i] - view.now)
            .filter(|&d| d > EPS)
            .fold(icon.max_horizon, f64::min);
        let horizon = capped_horizon(event_rate, icon.max_horizon.min(to_timeout));
        let pmf = stats.size_pmf(n);
        let input = SpareInput {
            now: view.now,
            nodes: view.nodes,
            models: view.models,
            expired,
            pmf: &pmf,
            event_rate,
            arrival_probability,
            horizon,
            alpha: icon.alpha,
            beta: icon.beta,
            min_spares: icon.min_spares,
            max_spares: icon.max_spares.unwrap_or(n as u32),
        };
        optimise(&input)
    }
}

impl LayerSpec for ManagerConfig {
    fn validate(&self) -> Result<()> {
        // (an infinite timeout: nodes never sleep, the manager only places jobs)
        if self.idle_timeout.is_nan() || self.idle_timeout < 0.0 {
            return Err(crate::error::CoreError::input(
                "the idle timeout must be a number of seconds >= 0",
            ));
        }
        Ok(())
    }

    fn build(self: Arc<Self>) -> Box<dyn PowerLayer> {
        Box::new(PowerManager::new(self))
    }
}

impl PowerManager {
    /// The calls logged so far (taken out by `take_log`).
    pub fn records(&self) -> &[PowerRecord] {
        &self.log.records
    }
}

impl PowerLayer for PowerManager {
    fn prepare(&mut self, view: &View, changed: &[u32]) {
        PowerManager::prepare(self, view, changed);
    }

    fn scan(&self, view: &View, positions: &[u32], backfill: Backfill, decision: &mut Decision) {
        PowerManager::scan(self, view, positions, backfill, decision);
    }

    fn place(&self, view: &View, count: u32, taken: &[bool]) -> Vec<u32> {
        PowerManager::place(self, view, count, taken)
    }

    fn act(
        &mut self,
        view: &View,
        decision: &Decision,
        record: bool,
        changed: &[u32],
        group_counts: &[[u32; STATES]],
    ) -> LayerActions {
        let actions = PowerManager::act(self, view, decision, record, changed, group_counts);
        if let Some(row) = actions.record {
            self.log.push(row, &actions.candidates);
        }
        LayerActions {
            power_on: actions.power_on,
            power_off: actions.power_off,
            timers: actions.timers,
        }
    }

    fn clone_layer(&self) -> Box<dyn PowerLayer> {
        Box::new(self.clone())
    }

    fn for_belief(&self, rename: &dyn Fn(u32) -> u32) -> Box<dyn PowerLayer> {
        let mut copy = self.clone();
        // (its nodes are built anew: no journal of their changes yet)
        copy.desync();
        copy.renumber_jobs(rename);
        Box::new(copy)
    }

    fn spec(&self) -> Arc<dyn LayerSpec> {
        Arc::clone(&self.config) as Arc<dyn LayerSpec>
    }

    fn set_log_detail(&mut self, on: bool) {
        self.log.detail = on;
    }

    fn log_rows(&self) -> usize {
        self.log.rows()
    }

    fn take_log(&mut self) -> LogTable {
        self.log.take()
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Nodes with identities, as the power manager places jobs: each start on the first idle
/// nodes of the energy-aware order; with EASY, the head job is planned on the agenda and holds
/// its planned nodes until its planned start (PSAS): a later job may start on idle nodes it
/// does not hold, or on nodes it holds if it ends (by request) before then.
struct Identities<'m> {
    manager: &'m PowerManager,
    /// Nodes taken by a start of this scan.
    taken: Vec<bool>,
    /// Where this scan's starts begin in `decision.nodes`.
    first_taken: usize,
    idle_left: u32,
    /// When each node taken by a start here is free again at the latest (its request).
    busy_until: Vec<f64>,
    /// Nodes the head job holds, and the idle nodes left that it does not.
    holds: Vec<bool>,
    unheld_left: u32,
    shadow: f64,
}

impl Placement for Identities<'_> {
    fn free(&self) -> u32 {
        self.idle_left
    }

    fn start(
        &mut self,
        view: &View,
        _: u32,
        job: KnownJob,
        est_end: f64,
        decision: &mut Decision,
    ) -> bool {
        // (`take` would not find more idle nodes than are left: `idle_order` lists them all
        // whenever a waiting job fits)
        let Some(nodes) = self
            .manager
            .take(view, job.nodes, &|_| true, &mut self.taken)
        else {
            return false;
        };
        for &i in &nodes {
            self.busy_until[i as usize] = est_end; // (by request: see the reservation)
        }
        decision.nodes.extend_from_slice(&nodes);
        self.idle_left -= job.nodes;
        true
    }

    fn reserve(
        &mut self,
        view: &View,
        index: u32,
        job: KnownJob,
        decision: &mut Decision,
    ) -> Option<(f64, u32)> {
        let manager = self.manager;
        // The head job's plan on the agenda, the nodes started above running from now. A
        // reservation is a promise: planned on requested times (upper bounds) in every mode,
        // so that it never slips because a prediction was short.
        let head = PlanJob {
            job: index,
            nodes: job.nodes,
            duration: manager.queued_duration(job.requested_time),
        };
        let mut started: Vec<(f64, u32)> = decision.nodes[self.first_taken..]
            .iter()
            .map(|&i| (self.busy_until[i as usize], i))
            .collect();
        started.sort_unstable_by_key(|e| e.1);
        // Without a plan (a node it needs has no known release: a job overran its request) the
        // head job could start any moment: nothing is backfilled (as PSAS does).
        let (shadow, held) = manager.head_plan(view, head, false, &started, &self.taken)?;
        self.holds = vec![false; view.nodes.len()];
        for &i in &held {
            self.holds[i as usize] = true;
        }
        let free_left = manager
            .idle_order
            .iter()
            .filter(|&&i| !self.taken[i as usize] && !self.holds[i as usize])
            .count() as u32;
        decision.held.clone_from(&held);
        // Idle nodes left that the head does not hold (none to look for when fewer than a job
        // needs: the head holds most of them while its own nodes wake).
        self.unheld_left = free_left;
        self.shadow = shadow;
        Some((shadow, free_left))
    }

    fn backfill(
        &mut self,
        view: &View,
        _: u32,
        job: KnownJob,
        est_end: f64,
        decision: &mut Decision,
    ) -> bool {
        let manager = self.manager;
        // Nodes the head does not hold, else (if it ends by the head's start) any.
        let holds = &self.holds;
        let not_held = |i: u32| !holds[i as usize];
        let unheld = if job.nodes <= self.unheld_left {
            manager.take(view, job.nodes, &not_held, &mut self.taken)
        } else {
            None
        };
        let nodes = match unheld {
            Some(nodes) => nodes,
            None if est_end <= self.shadow => {
                match manager.take(view, job.nodes, &|_| true, &mut self.taken) {
                    Some(nodes) => nodes,
                    None => return false,
                }
            }
            None => return false,
        };
        self.unheld_left -= nodes.iter().filter(|&&i| !self.holds[i as usize]).count() as u32;
        decision.nodes.extend_from_slice(&nodes);
        self.idle_left -= job.nodes;
        true
    }
}
