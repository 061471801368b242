//! One invocation's passes of Slurm's two schedulers over the jobs in priority order, on the
//! node-space map (`space.rs`): the main scheduler (`job_scheduler.c: _schedule`) and the
//! backfill scheduler (`backfill.c: _attempt_backfill`).
//!
//! Main: in order, a job starts if it fits the nodes free now; the first that does not blocks
//! its partition, and that partition's nodes, for the rest of the pass. Backfill: in order, each
//! job gets its earliest start on the map (running jobs until their time limits, reservations
//! made in this cycle, maintenance), starts if that is now, and otherwise reserves its nodes from
//! then on (every job, not only the first), within `bf_window`. Jobs over a QOS limit are passed
//! over by both, blocking nothing and reserving nothing.

mod backfill;
mod shared;
mod starts;
mod will_run;

use starts::Held;

use std::collections::HashMap;

use crate::engine::{Decision, StartKind, View};
use crate::sched::slurm::clock;
use crate::sched::slurm::limits::Usage;
use crate::sched::slurm::nodes::{self, partition_atoms};
use crate::sched::slurm::setup::SlurmSetup;
use crate::sched::slurm::space::{Fit, Space};

/// One pending job in one partition it may run in, with its priority there.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Entry {
    pub tier: u32,
    pub priority: u32,
    pub submit: f64,
    pub id: i64,
    pub job: u32,
    pub partition: u32,
}

/// What the passes did.
#[derive(Debug, Clone, Copy, Default)]
pub struct Outcome {
    pub started: usize,
    /// Whether the main pass walked every entry (a full pass).
    pub main_covered_all: bool,
}

/// The passes' scratch space and the numbers they normalise by.
#[derive(Debug, Clone, Default)]
pub struct Passes {
    pub max_qos_priority: u32,
    pub max_partition_factor: u32,
    /// Nodes the last invocation's starts took.
    started_nodes: u64,
    limits_on: bool,
    space: Space,
    /// The passes' state when jobs share nodes (`shared.rs`).
    shared: shared::SharedSlurm,
    releases: Vec<(f64, u32, u32)>,
    takes: Vec<(u32, u32)>,
    usage: Usage,
    /// A job's TRES for the QOS limits (scratch).
    amounts: Vec<u64>,
    failed: Vec<bool>,
    blocked_atoms: Vec<bool>,
    atoms: Vec<u32>,
    /// Per partition, the end times of the running jobs on its nodes, sorted (the backfill's
    /// estimate of a start, `_will_run_test`).
    ends: HashMap<u32, Vec<f64>>,
    per_user: HashMap<u32, usize>,
    /// The main pass's starts when it counted (nodes, end), for the map built after it.
    counted: Vec<(u32, f64)>,
    /// Per entry of a cycle, the smallest job and the longest candidate from it on (scratch).
    smallest_after: Vec<u32>,
    longest_after: Vec<f64>,
    /// The entries that may start in this backfill cycle, by entry (scratch).
    candidates: Vec<usize>,
    /// The last candidate of a backfill cycle found to fit now over its run, and that run's end,
    /// while nothing started since (see `candidate_after`).
    confirmed: Option<(usize, f64)>,
    /// Per partition, its room now in a backfill cycle (scratch).
    partition_room: Vec<i64>,
    /// The cycle's searches for a later start: (partition, nodes, run, first fit or infinity),
    /// the last [`BOUNDS`] of them (see `earliest_start`).
    bounds: Vec<(u32, u32, f64, f64)>,
    /// The wall-clock time of the replay clock's 0 (`SlurmSetup::origin`).
    origin: f64,
    /// Every backfill cycle runs in full, testing every job (for tests: the cycles cut short
    /// must start the same jobs).
    pub exhaustive: bool,
}

/// Slurm's guess of when a running job past its time limit ends: `KillWait` (30 s) after its
/// limit, or in a second (`_guess_job_end`).
pub(crate) fn running_end(requested_end: f64, now: f64) -> f64 {
    if requested_end > now {
        requested_end
    } else if requested_end + 30.0 > now {
        requested_end + 30.0
    } else {
        now + 1.0
    }
}

impl Passes {
    pub fn new(setup: &SlurmSetup) -> Self {
        Passes {
            max_qos_priority: setup.qos.iter().map(|q| q.priority).max().unwrap_or(0),
            max_partition_factor: setup.partition_factors.iter().copied().max().unwrap_or(0),
            limits_on: setup.qos.iter().any(|q| q.limits()),
            origin: setup.origin,
            ..Passes::default()
        }
    }

    /// The main pass (`main_depth`: how many entries it may test) and/or a backfill cycle.
    #[allow(clippy::too_many_arguments)]
    pub fn run(
        &mut self,
        view: &View,
        setup: &SlurmSetup,
        entries: &mut Vec<Entry>,
        waiting: &mut [bool],
        main_depth: Option<usize>,
        backfill: bool,
        decision: &mut Decision,
    ) -> Outcome {
        self.started_nodes = 0;
        if let Some(shared) = view.shared {
            return self.run_shared(
                view, shared, setup, entries, waiting, main_depth, backfill, decision,
            );
        }
        let now = view.now;
        let free: u64 = match view.site {
            Some(site) => site.state.free().iter().map(|&f| u64::from(f)).sum(),
            None => u64::from(view.free),
        };
        if free == 0 {
            // no node free: neither scheduler can start anything
            return Outcome {
                started: 0,
                main_covered_all: true,
            };
        }
        // On one pool without maintenance ahead, a job fits now when its nodes are free (the
        // map adds nothing): the main pass counts, and the map is built for a backfill cycle
        // only, with the main pass's starts taken from it.
        let counted = view.site.is_none() && !view.announced.iter().any(|w| w.start > now);
        self.counted.clear();
        if !counted {
            self.build(view);
        }
        self.count_limits(view, setup);
        let mut outcome = Outcome::default();
        if let Some(depth) = main_depth {
            outcome.main_covered_all = if counted {
                self.main_pass_counted(view, setup, entries, waiting, depth, decision)
            } else {
                self.main_pass(view, setup, entries, waiting, depth, decision)
            };
        }
        if backfill && (!counted || u64::from(view.free) > self.started_nodes) {
            if counted {
                self.build(view);
                for k in 0..self.counted.len() {
                    let (nodes, end) = self.counted[k];
                    let fit = Fit { row: 0, start: now };
                    self.takes.clear();
                    self.space.take(fit, end, &[0], nodes, &mut self.takes);
                }
            }
            self.backfill_pass(view, setup, entries, waiting, decision);
        }
        outcome.started = decision.starts.len();
        if outcome.started > 0 {
            entries.retain(|e| waiting[e.job as usize]);
        }
        outcome
    }

    fn build(&mut self, view: &View) {
        let now = view.now;
        nodes::build(view, &mut self.space, &mut self.releases, |end| {
            running_end(end, now)
        });
    }

    /// The main pass on one pool without maintenance ahead: jobs start in order while their
    /// nodes are free; the first that does not fit fails the pool.
    fn main_pass_counted(
        &mut self,
        view: &View,
        setup: &SlurmSetup,
        entries: &[Entry],
        waiting: &mut [bool],
        depth: usize,
        decision: &mut Decision,
    ) -> bool {
        let mut free = view.free;
        for (tested, e) in entries.iter().enumerate() {
            if depth != usize::MAX && tested > depth {
                return false;
            }
            if !waiting[e.job as usize] || !self.admits(setup, view, e.job) {
                continue;
            }
            let job = view.jobs.get(e.job);
            if job.nodes > free {
                return true;
            }
            free -= job.nodes;
            self.counted
                .push((job.nodes, view.now + job.requested_time));
            self.record_start(view, setup, e, StartKind::Primary, waiting, decision);
        }
        true
    }

    /// The main scheduler's pass; returns whether it tested every entry.
    fn main_pass(
        &mut self,
        view: &View,
        setup: &SlurmSetup,
        entries: &[Entry],
        waiting: &mut [bool],
        depth: usize,
        decision: &mut Decision,
    ) -> bool {
        let now = view.now;
        let parts = setup.partition_factors.len();
        self.failed.clear();
        self.failed.resize(parts, false);
        self.blocked_atoms.clear();
        self.blocked_atoms.resize(self.space_atoms(view), false);
        let mut any_blocked = false;
        let mut failed = 0;
        for (tested, e) in entries.iter().enumerate() {
            if failed == parts {
                return true; // every partition failed: nothing more starts in this pass
            }
            // an event's pass tests `default_queue_depth` + 1 records (Slurm's post-increment)
            if depth != usize::MAX && tested > depth {
                return false;
            }
            if !waiting[e.job as usize] || self.failed[e.partition as usize] {
                continue;
            }
            if !self.admits(setup, view, e.job) {
                continue; // over a QOS limit: passed over, blocks nothing
            }
            let job = view.jobs.get(e.job);
            self.atoms.clear();
            for &a in partition_atoms(view, e.partition) {
                if !(any_blocked && self.blocked_atoms[a as usize]) {
                    self.atoms.push(a);
                }
            }
            let fit = self
                .space
                .earliest(now, job.requested_time, &self.atoms, job.nodes, now);
            match fit {
                Some(fit) => self.start(view, setup, e, fit, StartKind::Primary, waiting, decision),
                None => {
                    // the partition fails, and its nodes are closed to the rest of the pass
                    self.failed[e.partition as usize] = true;
                    failed += 1;
                    for &a in partition_atoms(view, e.partition) {
                        self.blocked_atoms[a as usize] = true;
                    }
                    any_blocked = true;
                }
            }
        }
        true
    }

    fn space_atoms(&self, view: &View) -> usize {
        view.site.map_or(1, |s| s.model.atoms())
    }

    #[allow(clippy::too_many_arguments)]
    fn start(
        &mut self,
        view: &View,
        setup: &SlurmSetup,
        e: &Entry,
        fit: Fit,
        kind: StartKind,
        waiting: &mut [bool],
        decision: &mut Decision,
    ) {
        let job = view.jobs.get(e.job);
        let atoms = partition_atoms(view, e.partition);
        self.takes.clear();
        let end = view.now + job.requested_time;
        self.space.take(fit, end, atoms, job.nodes, &mut self.takes);
        self.record_start(view, setup, e, kind, waiting, decision);
    }

    /// Records the start of `e` (its nodes, on a site, in `self.takes`).
    fn record_start(
        &mut self,
        view: &View,
        setup: &SlurmSetup,
        e: &Entry,
        kind: StartKind,
        waiting: &mut [bool],
        decision: &mut Decision,
    ) {
        let job = view.jobs.get(e.job);
        let end = view.now + job.requested_time;
        self.push_start(
            view,
            setup,
            e,
            kind,
            Held::Nodes(job.nodes),
            waiting,
            decision,
        );
        if view.site.is_some() {
            decision.takes.extend_from_slice(&self.takes);
            decision
                .site_starts
                .push((e.partition, decision.takes.len() as u32));
        }
        self.started_nodes += u64::from(job.nodes);
        // a running job's end, for the backfill's estimates of later starts
        for ends in self.ends.values_mut() {
            let at = ends.partition_point(|&t| t <= end);
            ends.insert(at, end);
        }
    }
}

/// Slurm's estimate of a start from the running jobs' `ends` (sorted) when the map's first fit
/// is at `fit`: the end of the last job of the removal group holding `fit`. Groups: the first
/// holds the ends up to `anchor + 30` s, where `anchor` is the first end rounded up to the next
/// multiple of 30 s; each later one doubles the window from the same anchor.
pub fn group_end(ends: &[f64], fit: f64, origin: f64) -> f64 {
    let Some(&first) = ends.first() else {
        return fit;
    };
    if ends.binary_search_by(|t| t.total_cmp(&fit)).is_err() {
        return fit; // not a running job's end: a reservation or maintenance boundary
    }
    // (rounded on the wall clock: `origin` is the replay clock's 0 there)
    let anchor = clock::at_or_before(first + origin, 30.0) + 30.0 - origin;
    let mut window = 30.0;
    while fit > anchor + window {
        window *= 2.0;
    }
    let bound = anchor + window;
    let last = ends.partition_point(|&t| t <= bound);
    ends[last - 1].max(fit)
}

#[cfg(test)]
mod tests {
    use super::group_end;

    #[test]
    fn a_start_is_the_last_end_of_its_removal_group() {
        // The facts' example: ends at 100, 130, 200; first group up to 120 + 30 = 150.
        let ends = [100.0, 130.0, 200.0];
        assert_eq!(group_end(&ends, 100.0, 0.0), 130.0);
        assert_eq!(group_end(&ends, 130.0, 0.0), 130.0);
        // next window: 120 + 60 = 180, then 240: 200 is alone in its group
        assert_eq!(group_end(&ends, 200.0, 0.0), 200.0);
        // a reservation's end is not moved
        assert_eq!(group_end(&ends, 150.0, 0.0), 150.0);
        // an end already on the grid rounds up a whole 30 s
        assert_eq!(group_end(&[90.0, 140.0, 150.0], 90.0, 0.0), 150.0);
        // on the wall clock: the first end, 61 s after an origin at 17 s past a minute, is at
        // 78 s past it: rounded up to 90 (73 on the replay clock), window to 103: 120 is past
        // it, the start stays at the first end
        assert_eq!(group_end(&[61.0, 120.0], 61.0, 17.0), 61.0);
    }
}
