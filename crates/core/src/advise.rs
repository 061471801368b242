//! Planning from a live cluster's snapshot (the production advisor of MARS §III).
//!
//! A resource manager reports running jobs (start, limit, nodes), pending jobs, nodes that are
//! down and announced maintenance. That becomes the same honest model MARS searches in
//! ([`Belief`]): every job runs for its limit, nothing else arrives. The policy decides at
//! `now` (MARS searches and picks a heuristic and window), and the plan is the start time of
//! every pending job when the engine runs that decision's ordering with EASY to the end.
//! The advisor turns the plan's order into priorities. Given the cluster's Slurm settings
//! ([`Snapshot::slurm`]), the plan also gives Slurm's own order of the pending jobs (its
//! multifactor priorities at `now`, [`SlurmPolicy::rank_queue`]) and their planned starts
//! under that order with EASY, beside the policy's.

use std::sync::Arc;

use crate::engine::{Belief, Engine, Inputs, Running, SiteState, SiteView, View};
use crate::error::{CoreError, Result};
use crate::model::{
    Calendar, Downtime, DowntimeKind, Job, JobTable, Machine, OverLimits, Overrun, PartitionSpec,
    Rejection,
};
use crate::sched::registry::build_policy;
use crate::sched::slurm::{SlurmJobs, SlurmPolicy, SlurmSetup};
use crate::sched::{Backfill, Heuristic, Policy, QueuePolicy};
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
    /// The scope's partitions, when it has any: then nodes are named (indices
    /// `0..machine_nodes`), and `down_nodes` and `maintenance` are read from here instead.
    pub site: Option<SnapshotSite>,
    /// Slurm's settings, association tree and QOS, and each job's attributes: the pending
    /// jobs' (snapshot order) then the running jobs' (snapshot order); one `PriorityJobFactor`
    /// per partition of `site` (one without). Then every view of the plan carries Slurm's
    /// order at `now` (the `slurm` ordering follows it) and the plan reports it.
    pub slurm: Option<SlurmSetup>,
}

/// The partitions of a snapshot's scope, and where its jobs may run and run.
#[derive(Debug, Clone, Default)]
pub struct SnapshotSite {
    /// Partitions over the scope's node indices, with their tiers, limits and states.
    pub partitions: Vec<PartitionSpec>,
    /// Candidate partitions of pending job `j`: `candidates[offsets[j]..offsets[j + 1]]`.
    pub pending_offsets: Vec<u32>,
    pub pending_candidates: Vec<u32>,
    /// Nodes (indices) running job `j` holds: `nodes[offsets[j]..offsets[j + 1]]`; its
    /// `nodes` count is their number.
    pub running_offsets: Vec<u32>,
    pub running_nodes: Vec<u32>,
    /// Node ranges `[first, end)` down or drained now, with no known return.
    pub down: Vec<(u32, u32)>,
    /// Announced maintenance: (start, end, node range).
    pub maintenance: Vec<(f64, f64, (u32, u32))>,
}

/// Which policy plans.
#[derive(Debug, Clone)]
pub enum Planner {
    /// A heuristic (or `snf`, or `slurm`: Slurm's priorities at `now`, which needs
    /// [`Snapshot::slurm`]) with its window and backfill.
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
    /// On partitions, per pending job: the partition it starts in (`None`: never), its tier
    /// (the highest of the partitions that accept it; 0: none) and why none accepts it.
    pub partition: Vec<Option<u32>>,
    pub tier: Vec<u32>,
    pub rejection: Vec<Option<Rejection>>,
    /// With [`Snapshot::slurm`], per pending job: its place (0 first) in Slurm's order at
    /// `now` (partition tier, priority, submission, job id; `None`: no partition accepts it)
    /// and its planned start when the engine follows that order with EASY. Empty otherwise.
    pub slurm_rank: Vec<Option<u32>>,
    pub slurm_start: Vec<f64>,
}

/// Plans the pending jobs of `snapshot` under `planner`.
pub fn plan(snapshot: &Snapshot, planner: &Planner) -> Result<Plan> {
    let table = Table::new(snapshot)?;
    let belief = match &snapshot.site {
        None => table.belief(snapshot)?,
        Some(site) => table.site_belief(snapshot, site)?,
    };
    let ranked = snapshot.slurm.is_some();
    let (mut ordering, mut plan) = match planner {
        Planner::Queue {
            name,
            window,
            backfill,
        } => {
            let mut plan = Plan::of(name, window.map(|w| w.min(u32::MAX as usize) as u32));
            plan.decided_at = snapshot.now;
            (queue_policy(name, *window, backfill, ranked)?, plan)
        }
        Planner::Search { name, options } => {
            if options.orders_by_slurm()? && !ranked {
                return Err(CoreError::input(
                    "the ordering 'slurm' needs Slurm's settings (a slurm.conf)",
                ));
            }
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
            let window = window.map(|w| w as usize);
            let ordering = queue_policy(&plan.heuristic, window, "easy", ranked)?;
            (ordering, plan)
        }
    };
    let belief_of = |i: &u32| belief.real_index.binary_search(i).expect("known");
    let starts = |ordering: &mut dyn Policy| -> Result<Engine> {
        // The same state with a log that records every start.
        let mut engine = Engine::with_state(
            Arc::clone(belief.engine.inputs()),
            belief.engine.state().clone(),
        );
        engine.invoke(ordering)?; // the decision at `now`: no event need come first
        engine.run(ordering)?;
        Ok(engine)
    };
    let engine = starts(&mut *ordering)?;
    let log = engine.log();
    plan.planned_start = (table.pending_index.iter())
        .map(|i| log.start[belief_of(i)])
        .collect();
    if let Some(site) = engine.inputs().site.as_ref() {
        for i in &table.pending_index {
            let j = belief_of(i);
            let p = log.partition.get(j).copied().filter(|&p| p != u32::MAX);
            plan.partition.push(p);
            plan.tier.push(site.tier(j as u32));
            plan.rejection.push(site.rejection(j as u32));
        }
    }
    if ranked {
        // Slurm's order beside the plan: its places, and the starts when it is followed
        let ranks = &belief.engine.inputs().ranks;
        plan.slurm_rank = (table.pending_index.iter())
            .map(|i| Some(ranks[belief_of(i)]).filter(|&r| r != u32::MAX))
            .collect();
        let mut slurm = QueuePolicy::new(Heuristic::Slurm, usize::MAX, Backfill::Easy);
        let engine = starts(&mut slurm)?;
        let log = engine.log();
        plan.slurm_start = (table.pending_index.iter())
            .map(|i| log.start[belief_of(i)])
            .collect();
    }
    Ok(plan)
}

/// The ordering named `name` (a heuristic, `snf`, or `slurm` when the views carry Slurm's
/// order: `ranked`) with its window and backfill.
fn queue_policy(
    name: &str,
    window: Option<usize>,
    backfill: &str,
    ranked: bool,
) -> Result<Box<dyn Policy>> {
    if Heuristic::ordering_from_name(name) != Some(Heuristic::Slurm) {
        return build_policy(name, window, backfill);
    }
    if !ranked {
        return Err(CoreError::input(
            "the ordering 'slurm' needs Slurm's settings (a slurm.conf)",
        ));
    }
    let backfill = Backfill::from_name(backfill)
        .ok_or_else(|| CoreError::input(format!("unknown backfill {backfill:?} (easy, none)")))?;
    if window == Some(0) {
        return Err(CoreError::input("window must be at least 1"));
    }
    Ok(Box::new(QueuePolicy::new(
        Heuristic::Slurm,
        window.unwrap_or(usize::MAX),
        backfill,
    )))
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
            partition: Vec::new(),
            tier: Vec::new(),
            rejection: Vec::new(),
            slurm_rank: Vec::new(),
            slurm_start: Vec::new(),
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
    /// Slurm's setup with its job attributes in table order, when the snapshot has one.
    slurm: Option<SlurmSetup>,
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
        let partitions = snapshot.site.as_ref().map_or(1, |s| s.partitions.len());
        let slurm = (snapshot.slurm.as_ref())
            .map(|setup| in_table_order(setup, &pending_index, &running_index, partitions))
            .transpose()?;
        Ok(Table {
            jobs: JobTable::new(jobs)?,
            pending_index,
            running_index,
            slurm,
        })
    }

    /// The belief of `view` (a policy's view of the snapshot at `now`), carrying Slurm's order
    /// of the queue at `now` when the snapshot has Slurm's setup: a fresh Slurm policy ranks
    /// it (no usage recorded: every association's fair-share factor is that of no usage).
    fn believe(&self, view: &View) -> Result<Belief> {
        let Some(setup) = &self.slurm else {
            return Belief::from_view(view);
        };
        let mut ranks = Vec::new();
        SlurmPolicy::new(Arc::new(setup.clone())).rank_queue(view, &mut ranks);
        Belief::from_view(&View {
            ranks: &ranks,
            ..*view
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
        self.believe(&view)
    }
}

impl Table {
    /// The honest look-ahead engine at `now` on the scope's partitions: the engine's own site
    /// (running jobs on their nodes, nodes down as windows in progress over their ranges,
    /// maintenance over its nodes), seen through a policy's [`View`].
    fn site_belief(&self, snapshot: &Snapshot, site: &SnapshotSite) -> Result<Belief> {
        let now = snapshot.now;
        check_site(snapshot, site)?;
        let down = site.down.iter().map(|&range| Downtime {
            start: now,
            end: UNTIL_FURTHER_NOTICE,
            kind: DowntimeKind::Unscheduled,
            nodes: None,
            back_asleep: false,
            partition: None,
            range: Some(range),
        });
        let maintenance =
            (site.maintenance.iter())
                .filter(|m| m.1 > now)
                .map(|&(start, end, range)| Downtime {
                    start: start.max(now),
                    end,
                    kind: DowntimeKind::Scheduled,
                    nodes: None,
                    back_asleep: false,
                    partition: None,
                    range: Some(range),
                });
        let windows: Vec<Downtime> = down.chain(maintenance).collect();
        // (announced long ago: known now)
        let calendar = Calendar::new(windows, 2.0 * UNTIL_FURTHER_NOTICE)?;
        // candidates in table order: a running job's, the first partition holding its first
        // node (its completion frees the nodes it holds, whatever its partition)
        let n = self.jobs.len();
        let mut candidates: Vec<&[u32]> = vec![&[]; n];
        let mut holder = vec![0u32; snapshot.running.len()];
        for (r, h) in holder.iter_mut().enumerate() {
            let first = site.running_nodes[site.running_offsets[r] as usize];
            *h = (site.partitions.iter())
                .position(|p| p.ranges.iter().any(|&(a, b)| a <= first && first < b))
                .ok_or_else(|| {
                    CoreError::input(format!(
                        "running job {}: node {first} is in no partition",
                        snapshot.running[r].id
                    ))
                })? as u32;
        }
        for (r, &i) in self.running_index.iter().enumerate() {
            candidates[i as usize] = std::slice::from_ref(&holder[r]);
        }
        for (k, &i) in self.pending_index.iter().enumerate() {
            let (a, b) = (site.pending_offsets[k], site.pending_offsets[k + 1]);
            candidates[i as usize] = &site.pending_candidates[a as usize..b as usize];
        }
        let mut offsets = Vec::with_capacity(n + 1);
        let mut flat = Vec::new();
        offsets.push(0);
        for c in &candidates {
            flat.extend_from_slice(c);
            offsets.push(flat.len() as u32);
        }
        let inputs = Inputs::new(
            self.jobs.clone(),
            Machine::new(snapshot.machine_nodes),
            calendar,
            Overrun::Continue,
        )?
        // (a job no partition accepts stays pending in Slurm: held, never started)
        .with_site(site.partitions.clone(), OverLimits::Hold, offsets, flat)?;
        let model = inputs.site.as_ref().expect("a site");
        let mut state = SiteState::new(model, n);
        let mut running = Vec::with_capacity(snapshot.running.len());
        let mut takes: Vec<(u32, u32)> = Vec::new();
        for (r, (&job, run)) in self.running_index.iter().zip(&snapshot.running).enumerate() {
            takes.clear();
            let (a, b) = (site.running_offsets[r], site.running_offsets[r + 1]);
            for &node in &site.running_nodes[a as usize..b as usize] {
                let atom = model.atom_of_node(node).ok_or_else(|| {
                    CoreError::input(format!(
                        "running job {}: node {node} is in no partition",
                        run.id
                    ))
                })?;
                match takes.iter_mut().find(|t| t.0 == atom) {
                    Some(t) => t.1 += 1,
                    None => takes.push((atom, 1)),
                }
            }
            takes.sort_unstable();
            let requested_end = run.start + run.limit;
            state.take(job, &takes, requested_end);
            running.push(Running {
                requested_end,
                job,
                nodes: run.nodes,
                start: run.start,
            });
        }
        for w in inputs.calendar.windows().iter().filter(|w| w.start <= now) {
            state.take_down(&model.window_atoms(w), *w);
        }
        let mut queue = self.pending_index.clone();
        queue.sort_unstable(); // (the table is in submit order: FCFS; jobs join in index order)
        for &job in &queue {
            let held = self.jobs.get(job);
            state.enqueue(job, model.job_key(job).1, held.nodes, held.requested_time);
        }
        running.sort_by(|a, b| {
            (a.requested_end.max(now))
                .total_cmp(&b.requested_end.max(now))
                .then(a.job.cmp(&b.job))
        });
        let busy: u32 = running.iter().map(|r| r.nodes).sum();
        let down_nodes: u32 = site.down.iter().map(|&(a, b)| b - a).sum();
        let announced: Vec<Downtime> = (inputs.calendar.windows().iter())
            .filter(|w| w.start > now)
            .copied()
            .collect();
        let down_windows: Vec<(f64, u32)> = (inputs.calendar.windows().iter())
            .filter(|w| w.start <= now)
            .map(|w| (w.end, w.nodes_down(snapshot.machine_nodes)))
            .collect();
        let free = (snapshot.machine_nodes)
            .saturating_sub(busy)
            .saturating_sub(down_nodes);
        let view = View {
            down_windows: &down_windows,
            announced: &announced,
            site: Some(SiteView {
                model,
                state: &state,
            }),
            ..View::anonymous(
                now,
                &self.jobs,
                snapshot.machine_nodes,
                free,
                &queue,
                &running,
            )
        };
        self.believe(&view)
    }
}

/// `setup` (its jobs' attributes: the pending jobs' then the running jobs', each in snapshot
/// order) checked and with its jobs' attributes in table order.
fn in_table_order(
    setup: &SlurmSetup,
    pending_index: &[u32],
    running_index: &[u32],
    partitions: usize,
) -> Result<SlurmSetup> {
    let n = pending_index.len() + running_index.len();
    setup.validate(n, partitions)?;
    // table index of each attribute row
    let rows: Vec<u32> = pending_index.iter().chain(running_index).copied().collect();
    let mut order = vec![0usize; n];
    for (row, &i) in rows.iter().enumerate() {
        order[i as usize] = row;
    }
    let j = &setup.jobs;
    let pick = |values: &[u32]| order.iter().map(|&r| values[r]).collect();
    Ok(SlurmSetup {
        jobs: SlurmJobs {
            association: pick(&j.association),
            user: pick(&j.user),
            qos: pick(&j.qos),
            nice: order.iter().map(|&r| j.nice[r]).collect(),
            cpus: pick(&j.cpus),
            requested_cpus: Vec::new(), // (squeue's CPUs of a pending job: asked for)
            billing: Vec::new(),
            tres_priority: Vec::new(),
            tres: j.tres_rows(&order, setup.tres.len()),
        },
        ..setup.clone()
    })
}

/// A snapshot's site: its columns of one length each, nodes within the scope, every pending
/// job with a candidate and every running job on as many nodes as it counts.
fn check_site(snapshot: &Snapshot, site: &SnapshotSite) -> Result<()> {
    let machine = snapshot.machine_nodes;
    let ragged = |offsets: &[u32], items: usize, rows: usize| {
        offsets.len() == rows + 1
            && offsets.first() == Some(&0)
            && offsets.last().map(|&o| o as usize) == Some(items)
            && offsets.windows(2).all(|w| w[0] <= w[1])
    };
    if !ragged(
        &site.pending_offsets,
        site.pending_candidates.len(),
        snapshot.pending.len(),
    ) || !ragged(
        &site.running_offsets,
        site.running_nodes.len(),
        snapshot.running.len(),
    ) {
        return Err(CoreError::input(
            "snapshot site: offsets must run from 0 to the items' count, one per job + 1",
        ));
    }
    for (r, run) in snapshot.running.iter().enumerate() {
        let held = site.running_offsets[r + 1] - site.running_offsets[r];
        if held != run.nodes {
            return Err(CoreError::input(format!(
                "running job {} counts {} nodes but names {held}",
                run.id, run.nodes
            )));
        }
    }
    let mut seen = vec![false; machine as usize];
    for &node in &site.running_nodes {
        if node >= machine || std::mem::replace(&mut seen[node as usize], true) {
            return Err(CoreError::input(format!(
                "node {node}: outside the scope's {machine} or held by two running jobs"
            )));
        }
    }
    for &(first, end) in site
        .down
        .iter()
        .chain(site.maintenance.iter().map(|m| &m.2))
    {
        if first >= end || end > machine {
            return Err(CoreError::input(format!(
                "nodes {first}..{end} are not a range within the scope's {machine}"
            )));
        }
    }
    if let Some(&(first, _)) = (site.down.iter()).find(|&&(a, b)| (a..b).any(|n| seen[n as usize]))
    {
        return Err(CoreError::input(format!(
            "nodes from {first} are down, and a running job holds one of them"
        )));
    }
    Ok(())
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
