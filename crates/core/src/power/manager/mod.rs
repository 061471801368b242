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
//!
//! By job: `placement` (the scan's node choice and EASY's held nodes), `timeouts` (idle
//! deadlines and timers), `wakes` (the plan of the waiting jobs and the nodes it wakes),
//! `spares` (shutdowns and ICON's warm spares); this module holds the state, the two
//! steps and the engine's `PowerLayer` contract.

mod placement;
mod spares;
mod timeouts;
mod wakes;

use std::sync::Arc;
use std::time::Instant;

use crate::engine::power::{NodeState, NO_JOB, STATES};
use crate::engine::{LayerActions, LayerSpec, LogTable, PowerLayer, QueueService, View};
use crate::error::Result;
use crate::power::classes::ClassScratch;
use crate::power::config::{ManagerConfig, Mode};
use crate::power::log::{PowerLog, PowerRecord, ScreenRow};
use crate::power::node_index::NodeIndex;
use crate::power::plan::Plan;
use crate::power::screen::SeriesStats;
use crate::power::spare::SpareChoice;
use crate::power::stats::{IconStats, Rejection};
use crate::sched::{Backfill, Decision, QueueRule};

/// Below this a predicted remaining time does not count as a coming completion (as in the
/// authors' code).
pub(super) const EPS: f64 = 1e-9;

/// Above this many nodes changed at once, the sorted per-node lists are rebuilt rather than
/// updated node by node.
pub(super) const BATCH: usize = 16;

/// What the shutdown step decides: spares to wake, nodes to switch off, ICON's spare choice.
pub(super) struct Shutdowns {
    wake: Vec<u32>,
    off: Vec<u32>,
    spare: Option<SpareChoice>,
    gate_open: bool,
    spare_planning: bool,
}

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
        let expired_nodes = self.expire(view, changed);
        let nodes = view.nodes;
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
            self.wake_plan(view, decision, !expired_nodes.is_empty(), group_counts)
        };
        let mut wake = planned.wake_now.clone();
        out.timers.extend_from_slice(&planned.wake_times);
        let Shutdowns {
            wake: spare_wake,
            mut off,
            spare,
            gate_open,
            spare_planning,
        } = self.shutdowns(view, &planned, &expired_nodes, queue_empty);
        wake.extend_from_slice(&spare_wake);
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
        self.timeout_timers(
            view,
            queue_empty,
            asleep,
            wake.len(),
            group_counts,
            &mut out.timers,
        );
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
