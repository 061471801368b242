//! Planning from a live cluster's snapshot (the production advisor of MARS §III).
//!
//! A resource manager reports running jobs (start, limit, nodes), pending jobs, nodes that are
//! down and announced maintenance. That becomes the same honest model MARS searches in
//! ([`Belief`]): every job runs for its limit, nothing else arrives. The policy decides at
//! `now` (MARS searches and picks a heuristic and window), and the plan is the start time of
//! every pending job when the engine runs that decision's ordering with EASY to the end.
//! The advisor turns the plan's order into priorities.

use std::sync::Arc;

use crate::engine::{Belief, Engine, Running, View};
use crate::error::{CoreError, Result};
use crate::model::{Downtime, DowntimeKind, Job, JobTable};
use crate::sched::registry::build_policy;
use crate::search::{build_mars, SearchOptions};

/// Far enough ahead to stand for "until further notice" (nodes down with no known return).
const UNTIL_FURTHER_NOTICE: f64 = crate::model::MAX_TIME;

/// A pending job as the resource manager reports it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PendingJob {
    pub id: i64,
    pub submit: f64,
    pub nodes: u32,
    /// The time limit (s): the only run-time estimate there is.
    pub limit: f64,
}

/// A running job as the resource manager reports it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunningJob {
    pub id: i64,
    pub start: f64,
    pub nodes: u32,
    pub limit: f64,
}

/// The state of the managed part of a cluster at `now`.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub now: f64,
    /// Nodes in the managed scope, whatever their state.
    pub machine_nodes: u32,
    /// Nodes down or drained now, with no known return.
    pub down_nodes: u32,
    /// Pending jobs in FCFS order.
    pub pending: Vec<PendingJob>,
    pub running: Vec<RunningJob>,
    /// Announced maintenance: (start, end, nodes; `None` = every node).
    pub maintenance: Vec<(f64, f64, Option<u32>)>,
}

/// Which policy plans.
#[derive(Debug, Clone)]
pub enum Planner {
    /// A heuristic (or `snf`) with its window and backfill.
    Queue {
        name: String,
        window: Option<usize>,
        backfill: String,
    },
    /// `mars` or `random`: decides the (heuristic, window) action at `now`.
    Search {
        name: String,
        options: Box<SearchOptions>,
    },
}

/// The plan: per pending job (snapshot order), its planned start, and the decision behind it.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Planned start (s, snapshot clock); `NaN` when the job can never start (too large).
    pub planned_start: Vec<f64>,
    /// The heuristic whose ordering the plan follows (`snf` for SNF).
    pub heuristic: String,
    /// Its window (`None` = the whole queue).
    pub window: Option<u32>,
    /// When the policy decided: `now`, or for MARS the first moment it could start a job.
    pub decided_at: f64,
    /// MARS chose to start nothing now although another action would have started jobs.
    pub drain: bool,
    /// Search statistics of the decision (zero for plain policies).
    pub iterations: u64,
    pub outcomes: u32,
    pub seconds: f64,
}

/// Plans the pending jobs of `snapshot` under `planner`.
pub fn plan(snapshot: &Snapshot, planner: &Planner) -> Result<Plan> {
    let table = Table::new(snapshot)?;
    let belief = table.belief(snapshot)?;
    let (mut ordering, mut plan) = match planner {
        Planner::Queue {
            name,
            window,
            backfill,
        } => {
            let mut plan = Plan::of(name, window.map(|w| w.min(u32::MAX as usize) as u32));
            plan.decided_at = snapshot.now;
            (build_policy(name, *window, backfill)?, plan)
        }
        Planner::Search { name, options } => {
            let mut search = build_mars(name, options)?;
            // The decision at `now`; when nothing can start now (no free node), the first one
            // the policy makes as the belief unfolds: the order it will follow from there.
            let mut probe = Engine::with_state(
                Arc::clone(belief.engine.inputs()),
                belief.engine.state().clone(),
            );
            probe.invoke(&mut search)?;
            while search.records().is_empty() && probe.step(&mut search)? {}
            let (plan, window) = match search.records().first() {
                Some(chosen) => {
                    let window = (chosen.window != u32::MAX).then_some(chosen.window);
                    let mut plan = Plan::of(chosen.heuristic.name(), window);
                    plan.decided_at = chosen.time;
                    plan.drain = chosen.drain;
                    plan.iterations = chosen.iterations;
                    plan.outcomes = chosen.outcomes;
                    plan.seconds = chosen.seconds;
                    (plan, window)
                }
                // No decision ever (no pending job can start): Slurm's own FCFS order.
                None => (Plan::of("fcfs", None), None),
            };
            let ordering = build_policy(&plan.heuristic, window.map(|w| w as usize), "easy")?;
            (ordering, plan)
        }
    };
    // The same state with a log that records every start.
    let mut engine = Engine::with_state(
        Arc::clone(belief.engine.inputs()),
        belief.engine.state().clone(),
    );
    engine.invoke(&mut *ordering)?; // the decision at `now`: no event need come first
    engine.run(&mut *ordering)?;
    let starts = &engine.log().start;
    plan.planned_start = table
        .pending_index
        .iter()
        .map(|&i| starts[belief.real_index.binary_search(&i).expect("known")])
        .collect();
    Ok(plan)
}

impl Plan {
    fn of(heuristic: &str, window: Option<u32>) -> Plan {
        Plan {
            planned_start: Vec::new(),
            heuristic: heuristic.to_string(),
            window,
            decided_at: f64::NAN,
            drain: false,
            iterations: 0,
            outcomes: 0,
            seconds: 0.0,
        }
    }
}

/// The snapshot as a job table in submit order, with the way back to pending and running.
struct Table {
    jobs: JobTable,
    /// Table index of each pending job (snapshot order).
    pending_index: Vec<u32>,
    /// Table index of each running job (snapshot order).
    running_index: Vec<u32>,
}

impl Table {
    fn new(snapshot: &Snapshot) -> Result<Table> {
        check(snapshot)?;
        // (submit, kind, position): running jobs enter at their start, pending at their
        // submission; the table must be in submit order.
        let mut entries: Vec<(f64, bool, usize)> = snapshot
            .running
            .iter()
            .enumerate()
            .map(|(i, r)| (r.start, false, i))
            .chain(
                snapshot
                    .pending
                    .iter()
                    .enumerate()
                    .map(|(i, p)| (p.submit.min(snapshot.now), true, i)),
            )
            .collect();
        entries.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        let mut pending_index = vec![0; snapshot.pending.len()];
        let mut running_index = vec![0; snapshot.running.len()];
        let mut jobs = Vec::with_capacity(entries.len());
        for (index, &(submit, pending, position)) in entries.iter().enumerate() {
            let (id, nodes, limit) = if pending {
                pending_index[position] = index as u32;
                let p = &snapshot.pending[position];
                (p.id, p.nodes, p.limit)
            } else {
                running_index[position] = index as u32;
                let r = &snapshot.running[position];
                (r.id, r.nodes, r.limit)
            };
            jobs.push(Job {
                id,
                submit,
                run_time: limit,
                requested_time: limit,
                nodes,
            });
        }
        Ok(Table {
            jobs: JobTable::new(jobs)?,
            pending_index,
            running_index,
        })
    }

    /// The honest look-ahead engine at `now`, built through the same [`View`] a policy gets.
    fn belief(&self, snapshot: &Snapshot) -> Result<Belief> {
        let now = snapshot.now;
        let mut running: Vec<Running> = self
            .running_index
            .iter()
            .zip(&snapshot.running)
            .map(|(&job, r)| Running {
                requested_end: r.start + r.limit,
                job,
                nodes: r.nodes,
                start: r.start,
            })
            .collect();
        running.sort_by(|a, b| {
            a.requested_end
                .max(now)
                .total_cmp(&b.requested_end.max(now))
                .then(a.job.cmp(&b.job))
        });
        // FCFS: the snapshot's order is the queue order.
        let queue = self.pending_index.clone();
        let busy: u32 = running.iter().map(|r| r.nodes).sum();
        let down = if snapshot.down_nodes > 0 {
            vec![(UNTIL_FURTHER_NOTICE, snapshot.down_nodes)]
        } else {
            Vec::new()
        };
        let announced: Vec<Downtime> = snapshot
            .maintenance
            .iter()
            .filter(|&&(_, end, _)| end > now)
            .map(|&(start, end, nodes)| Downtime {
                start: start.max(now),
                end,
                kind: DowntimeKind::Scheduled,
                nodes,
                back_asleep: false,
                partition: None,
                range: None,
            })
            .collect();
        let free = snapshot
            .machine_nodes
            .saturating_sub(busy)
            .saturating_sub(snapshot.down_nodes);
        let view = View {
            down_windows: &down,
            announced: &announced,
            ..View::anonymous(
                now,
                &self.jobs,
                snapshot.machine_nodes,
                free,
                &queue,
                &running,
            )
        };
        Belief::from_view(&view)
    }
}

fn check(snapshot: &Snapshot) -> Result<()> {
    if !snapshot.now.is_finite() {
        return Err(CoreError::input("the snapshot's time is not finite"));
    }
    if snapshot.machine_nodes == 0 {
        return Err(CoreError::input("the managed scope has no nodes"));
    }
    let busy: u64 = snapshot.running.iter().map(|r| u64::from(r.nodes)).sum();
    if busy > u64::from(snapshot.machine_nodes) {
        return Err(CoreError::input(format!(
            "running jobs hold {busy} nodes but the scope has {}",
            snapshot.machine_nodes
        )));
    }
    for r in &snapshot.running {
        if !(r.start.is_finite() && r.start <= snapshot.now) {
            return Err(CoreError::input(format!(
                "running job {} starts at {} after the snapshot's time {}",
                r.id, r.start, snapshot.now
            )));
        }
    }
    let limits = snapshot
        .running
        .iter()
        .map(|r| (r.id, r.limit, r.nodes))
        .chain(snapshot.pending.iter().map(|p| (p.id, p.limit, p.nodes)));
    for (id, limit, nodes) in limits {
        if !(limit.is_finite() && limit >= 0.0) {
            return Err(CoreError::input(format!(
                "job {id}: the time limit must be finite and >= 0, not {limit}"
            )));
        }
        if nodes == 0 {
            return Err(CoreError::input(format!("job {id} needs 0 nodes")));
        }
    }
    for &(start, end, nodes) in &snapshot.maintenance {
        if !(start.is_finite() && end.is_finite() && end > start) || nodes == Some(0) {
            return Err(CoreError::input(format!(
                "maintenance [{start}, {end}) on {nodes:?} nodes is not a window"
            )));
        }
    }
    Ok(())
}
