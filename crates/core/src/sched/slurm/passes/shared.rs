//! Slurm's two schedulers when jobs share nodes (`select/cons_tres`): what fits is decided on
//! each node's free CPUs, memory and generic resources by the cons_tres rule
//! (`packing::select`), and the backfill's reservations hold whole nodes
//! (docs/slurm/cons_tres-22.05.md, §6; docs/semantics.md, "Slurm's scheduler on shared nodes").
//!
//! Main: in order, a job starts where it fits now on its partition's nodes not closed in this
//! pass; the first that does not fit fails its partition, whose nodes close for the rest of
//! the pass. Backfill (`_attempt_backfill`), for each job in order: the nodes of its partition
//! that no reservation of this cycle holds over its run; Slurm's will-run test on them (fits
//! now, else the running jobs end by their requests in batches, `_will_run_test`, and the
//! start is the end of the batch after which it fits, on the nodes the rule then gives it); a
//! start now starts; a later one is tried again from the map's next change when that may be
//! earlier (`later_start`), and otherwise reserves its nodes whole from its start to its end,
//! both floored to `bf_resolution`.

use crate::engine::shared::window_bits;
use crate::engine::{Decision, Reserve, SharedView, StartKind, View};
use std::collections::HashMap;

use crate::model::{Request, SharedNodes};
use crate::packing::select::node_needs;
use crate::packing::usage::open_nodes;
use crate::packing::{select, Allocation, Sparse, Tallies, Usage};
use crate::sched::slurm::clock;
use crate::sched::slurm::node_map::{bit, NodeMap};
use crate::sched::slurm::passes::{Entry, Held, Outcome, Passes};
use crate::sched::slurm::setup::SlurmSetup;

/// Where a job of the will-run list is: running (its allocation is the engine's) or started
/// at this invocation (the index of its allocation in the decision).
pub(super) const RUNNING: u32 = u32::MAX;

/// Slurm's will-run batches: the first ends within 30 s past the first end rounded up to 30 s.
pub(super) const WINDOW: f64 = 30.0;

/// The scratch of the passes on shared nodes.
#[derive(Debug, Clone, Default)]
pub struct SharedSlurm {
    /// What is free once this invocation's starts have taken theirs, over the engine's usage.
    pub(super) now: Sparse,
    /// The tallies of `now` (an upper bound on what fits, to skip placements).
    pub(super) tallies: Tallies,
    /// A will-run test's state: `now` with running jobs ended.
    pub(super) future: Sparse,
    /// The main pass's closed nodes (those of the partitions that failed).
    pub(super) closed: Vec<u64>,
    pub(super) map: NodeMap,
    /// The running jobs and those started at this invocation, by end (their request): (end,
    /// job, `RUNNING` or the index of the start's allocation).
    pub(super) ends: Vec<(f64, u32, u32)>,
    pub(super) usable: Vec<u64>,
    pub(super) avail: Vec<u64>,
    pub(super) bits: Vec<u64>,
    pub(super) nodes: Vec<u32>,
    pub(super) released: Vec<u32>,
    /// Starts made at this invocation, and the last candidate of the backfill cycle seen to
    /// fit what is free (its entry) at that count of starts.
    pub(super) starts: usize,
    pub(super) confirmed: Option<(usize, usize)>,
    /// The maintenance announced ahead: (start, end, its nodes as bits), and the nodes a job
    /// of the main pass may not use (closed, or going down before its time limit).
    pub(super) maintenance: Vec<(f64, f64, Vec<u64>)>,
    pub(super) barred: Vec<u64>,
    /// The will-run tests of this invocation, by a hash of what decides them, when kept (not
    /// in exhaustive cycles: the tests' reference).
    pub(super) tested: HashMap<u64, Vec<Tested>>,
    pub(super) keep_tests: bool,
}

/// A will-run test made in this invocation: what decides it, and its answer.
#[derive(Debug, Clone)]
pub(super) struct Tested {
    pub(super) request: Request,
    pub(super) set: u32,
    pub(super) starts: usize,
    pub(super) avail: Vec<u64>,
    pub(super) answer: Option<(f64, Allocation)>,
}

impl Passes {
    /// [`Passes::run`] when jobs share nodes.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn run_shared(
        &mut self,
        view: &View,
        shared: SharedView,
        setup: &SlurmSetup,
        entries: &mut Vec<Entry>,
        waiting: &mut [bool],
        main_depth: Option<usize>,
        backfill: bool,
        decision: &mut Decision,
    ) -> Outcome {
        let model = shared.model;
        let base = shared.state.usage();
        if base.open().iter().all(|&w| w == 0) {
            // no node has a free CPU: neither scheduler can start anything
            return Outcome {
                started: 0,
                main_covered_all: true,
            };
        }
        let s = &mut self.shared;
        let (nodes, kinds) = (
            model.resources.nodes() as usize,
            model.resources.gres_names().len(),
        );
        s.now.reset(nodes, kinds);
        s.future.reset(nodes, kinds);
        s.tallies.clone_from(shared.state.tallies());
        s.starts = 0;
        s.confirmed = None;
        s.tested.clear();
        s.keep_tests = !self.exhaustive;
        // maintenance announced ahead: a reservation of its nodes (`flags=maint`) no job may
        // run into
        s.maintenance.clear();
        for w in view.announced.iter().filter(|w| w.start > view.now) {
            s.maintenance.push((w.start, w.end, window_bits(model, w)));
        }
        s.ends.clear();
        s.ends
            .extend((view.running.iter()).map(|r| (r.requested_end, r.job, RUNNING)));
        s.ends
            .sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        self.count_limits(view, setup);
        let mut outcome = Outcome::default();
        if let Some(depth) = main_depth {
            outcome.main_covered_all =
                self.main_pass_shared(view, shared, setup, entries, waiting, depth, decision);
        }
        if backfill {
            self.backfill_shared(view, shared, setup, entries, waiting, decision);
        }
        outcome.started = decision.starts.len();
        if outcome.started > 0 {
            entries.retain(|e| waiting[e.job as usize]);
        }
        outcome
    }

    /// The main scheduler's pass on shared nodes; returns whether it tested every entry.
    #[allow(clippy::too_many_arguments)]
    fn main_pass_shared(
        &mut self,
        view: &View,
        shared: SharedView,
        setup: &SlurmSetup,
        entries: &[Entry],
        waiting: &mut [bool],
        depth: usize,
        decision: &mut Decision,
    ) -> bool {
        let model = shared.model;
        let parts = model.sets.len();
        self.failed.clear();
        self.failed.resize(parts, false);
        let mut closed = std::mem::take(&mut self.shared.closed);
        closed.clear();
        closed.resize(model.resources.nodes().div_ceil(64) as usize, 0);
        let mut any_closed = false;
        let mut failed = 0;
        for (tested, e) in entries.iter().enumerate() {
            if failed == parts {
                break; // every partition failed: nothing more starts in this pass
            }
            // an event's pass tests `default_queue_depth` + 1 records (Slurm's post-increment)
            if depth != usize::MAX && tested > depth {
                self.shared.closed = closed;
                return false;
            }
            if !waiting[e.job as usize] || self.failed[e.partition as usize] {
                continue;
            }
            if !self.admits(setup, view, e.job) {
                continue; // over a QOS limit: passed over, blocks nothing
            }
            // (the nodes of maintenance it would run into are barred as closed ones are)
            let end = view.now + view.jobs.get(e.job).requested_time;
            let barring = self.shared.bar(&closed, any_closed, end);
            let barred = std::mem::take(&mut self.shared.barred);
            let within = barring.then_some(&barred[..]);
            let placed = self.shared.place_now(shared, e.job, e.partition, within);
            self.shared.barred = barred;
            match placed {
                Some(a) => {
                    if !self.admits_allocation(setup, shared, e.job, &a) {
                        continue; // over a limit on what it would hold: passed over too
                    }
                    let kind = StartKind::Primary;
                    self.start_shared(view, shared, setup, e, a, kind, waiting, decision);
                }
                None => {
                    // the partition fails, and its nodes close to the rest of the pass
                    self.failed[e.partition as usize] = true;
                    failed += 1;
                    for (c, s) in closed.iter_mut().zip(model.set_bits(e.partition)) {
                        *c |= s;
                    }
                    any_closed = true;
                }
            }
        }
        self.shared.closed = closed;
        true
    }

    /// The backfill scheduler's cycle on shared nodes.
    fn backfill_shared(
        &mut self,
        view: &View,
        shared: SharedView,
        setup: &SlurmSetup,
        entries: &[Entry],
        waiting: &mut [bool],
        decision: &mut Decision,
    ) {
        let sched = &setup.scheduler;
        let now = view.now;
        let nodes = shared.model.resources.nodes() as usize;
        self.shared.map.reset(now, now + sched.bf_window, nodes);
        let maintenance = std::mem::take(&mut self.shared.maintenance);
        for (start, end, bits) in &maintenance {
            let down: Vec<u32> = (0..nodes as u32).filter(|&n| bit(bits, n)).collect();
            self.shared.map.reserve(&down, *start, *end, 0.0);
        }
        self.shared.maintenance = maintenance;
        self.per_user.clear();
        // Only a job that fits what is free now can start in the cycle (what is free only
        // shrinks in it): past the last one the cycle stops (what is left would make
        // reservations nothing reads); without one it does not run.
        self.candidates.clear();
        for (k, e) in entries.iter().enumerate() {
            if waiting[e.job as usize] && self.shared.may_fit(shared, e.job, e.partition) {
                self.candidates.push(k);
            }
        }
        if self.candidates.is_empty() && !self.exhaustive {
            return;
        }
        let mut tested = 0;
        for (k, e) in entries.iter().enumerate() {
            if tested >= sched.bf_max_job_test {
                break;
            }
            if !self.exhaustive && !self.candidate_from(shared, entries, waiting, k) {
                break; // nothing left can start now
            }
            if !self.backfill_tests(view, setup, e, waiting) {
                continue;
            }
            tested += 1;
            self.backfill_job(view, shared, setup, e, waiting, decision);
        }
    }

    /// Whether a candidate at or after entry `k` may still start now: the last ones that no
    /// longer fit what is free are dropped.
    fn candidate_from(
        &mut self,
        shared: SharedView,
        entries: &[Entry],
        waiting: &[bool],
        k: usize,
    ) -> bool {
        while let Some(&c) = self.candidates.last() {
            if c < k {
                return false;
            }
            let e = entries[c];
            if !waiting[e.job as usize] {
                self.candidates.pop();
                continue;
            }
            // (what is free changes only with a start: a fit seen since the last one holds)
            let s = &mut self.shared;
            if s.confirmed == Some((c, s.starts)) {
                return true;
            }
            if s.place_now(shared, e.job, e.partition, None).is_some() {
                s.confirmed = Some((c, s.starts));
                return true;
            }
            self.candidates.pop();
        }
        false
    }

    /// One job's test in a backfill cycle: a start now, a reservation, or nothing.
    fn backfill_job(
        &mut self,
        view: &View,
        shared: SharedView,
        setup: &SlurmSetup,
        e: &Entry,
        waiting: &mut [bool],
        decision: &mut Decision,
    ) {
        let model = shared.model;
        let (now, job, set) = (view.now, e.job, e.partition);
        if !model.fitting(job).contains(&set) {
            return; // it fits nowhere in this partition, even empty
        }
        let limit = view.jobs.get(job).requested_time;
        let res = setup.scheduler.bf_resolution;
        let origin = setup.origin;
        let floor = |t: f64| clock::at_or_before(t + origin, res) - origin; // (wall clock)
        let request = &model.requests[job as usize];
        let (min_nodes, _, _) = node_needs(request, model.sets[set as usize].limits);
        let s = &mut self.shared;
        s.usable.clear();
        s.usable.extend_from_slice(model.set_bits(set));
        let mut start_res = now;
        let mut tried = f64::NEG_INFINITY;
        loop {
            // TRY_LATER (each try from a later time: a try from the same one finds the same)
            if start_res <= tried {
                return;
            }
            tried = start_res;
            let s = &mut self.shared;
            let later = s
                .map
                .avail(&s.usable, start_res, start_res + limit, &mut s.avail);
            let count: u32 = s.avail.iter().map(|w| w.count_ones()).sum();
            let found = if count < min_nodes {
                None
            } else {
                s.will_run(view, shared, job, set, decision, origin)
            };
            let Some((start, allocation)) = found else {
                match later {
                    Some(l) => {
                        start_res = l;
                        continue;
                    }
                    None => return,
                }
            };
            let start = start.max(start_res);
            if start <= now {
                if !self.admits_allocation(setup, shared, job, &allocation) {
                    return; // over a limit on what it would hold: neither start nor reservation
                }
                let kind = StartKind::Backfill;
                let exclusive = allocation.exclusive.then(|| allocation.nodes.clone());
                self.start_shared(view, shared, setup, e, allocation, kind, waiting, decision);
                if let Some(nodes) = exclusive {
                    // an exclusive job holds its nodes in the map to its end (`_bf_reserve_running`)
                    self.shared
                        .map
                        .reserve(&nodes, now, floor(now + limit), res);
                }
                return;
            }
            if let Some(l) = later.filter(|&l| start > l) {
                start_res = l; // nodes reserved for others come back first: try from then
                continue;
            }
            if start > now + setup.scheduler.bf_window {
                return; // too far ahead: no reservation
            }
            let (from, to) = (floor(start), floor(start + limit));
            let s = &mut self.shared;
            if s.map.overlaps(&allocation.nodes, from, to) {
                start_res = start;
                continue;
            }
            s.map.reserve(&allocation.nodes, from, to, res);
            if decision.reservation.is_none() {
                decision.reservation = Some(Reserve {
                    job,
                    shadow_time: start,
                    extra: 0,
                });
            }
            return;
        }
    }

    /// Starts entry `e` with `allocation`: taken from what is free, recorded in the decision,
    /// counted in the QOS usage, and added to the jobs a will-run test ends.
    #[allow(clippy::too_many_arguments)]
    fn start_shared(
        &mut self,
        view: &View,
        shared: SharedView,
        setup: &SlurmSetup,
        e: &Entry,
        allocation: Allocation,
        kind: StartKind,
        waiting: &mut [bool],
        decision: &mut Decision,
    ) {
        let s = &mut self.shared;
        let (model, base) = (shared.model, shared.state.usage());
        s.starts += 1;
        s.count(model, base, &allocation.nodes, false);
        s.now.take(base, &allocation);
        s.count(model, base, &allocation.nodes, true);
        let end = view.now + view.jobs.get(e.job).requested_time;
        let index = decision.allocations.len() as u32;
        let at = s.ends.partition_point(|x| (x.0, x.1) <= (end, e.job));
        s.ends.insert(at, (end, e.job, index));
        let held = Held::Allocation(model, &allocation);
        self.push_start(view, setup, e, kind, held, waiting, decision);
        decision
            .site_starts
            .push((e.partition, decision.starts.len() as u32));
        decision.allocations.push(allocation);
    }

    /// Whether some waiting job may fit what is free after this invocation's starts (an upper
    /// bound: then a timer may start it).
    pub fn shared_may_start(
        &self,
        view: &View,
        entries: &[Entry],
        waiting: &[bool],
        started: bool,
    ) -> bool {
        let Some(shared) = view.shared else {
            return false;
        };
        let tallies = if started {
            &self.shared.tallies
        } else {
            shared.state.tallies()
        };
        (entries.iter()).any(|e| {
            waiting[e.job as usize]
                && tallies.may_fit(
                    shared.model,
                    e.partition,
                    &shared.model.requests[e.job as usize],
                )
        })
    }
}

impl SharedSlurm {
    /// Adds (`add`) or removes `nodes` to or from the tallies of what is free now.
    fn count(&mut self, model: &SharedNodes, base: &Usage, nodes: &[u32], add: bool) {
        let now = self.now.over(base);
        for &node in nodes {
            self.tallies.count(model, node, &now, add);
        }
    }

    /// Whether `job` may fit what is free now in set `set` (its tallies: an upper bound).
    fn may_fit(&self, shared: SharedView, job: u32, set: u32) -> bool {
        let model = shared.model;
        model.fitting(job).contains(&set)
            && (self.tallies).may_fit(model, set, &model.requests[job as usize])
    }

    /// Fills `barred` with the nodes `closed` (when `any_closed`) and those of maintenance
    /// starting before `end`; whether there are any.
    fn bar(&mut self, closed: &[u64], any_closed: bool, end: f64) -> bool {
        let mut any = any_closed;
        self.barred.clear();
        self.barred.extend_from_slice(closed);
        for (start, _, bits) in &self.maintenance {
            if *start < end {
                any = true;
                for (b, m) in self.barred.iter_mut().zip(bits) {
                    *b |= m;
                }
            }
        }
        any
    }

    /// Where `job` starts now in set `set` (less the nodes `closed`), by the cons_tres rule.
    fn place_now(
        &mut self,
        shared: SharedView,
        job: u32,
        set: u32,
        closed: Option<&[u64]>,
    ) -> Option<Allocation> {
        let model = shared.model;
        if !self.may_fit(shared, job, set) {
            return None;
        }
        let base = shared.state.usage();
        self.usable.clear();
        self.usable.extend_from_slice(model.set_bits(set));
        if let Some(closed) = closed {
            for (u, c) in self.usable.iter_mut().zip(closed) {
                *u &= !c;
            }
        }
        let now = self.now.over(base);
        let touched: [&[u32]; 1] = [self.now.touched()];
        open_nodes(
            base,
            &now,
            &self.usable,
            &touched,
            &mut self.bits,
            &mut self.nodes,
        );
        let limits = model.sets[set as usize].limits;
        select(
            &model.resources,
            &now,
            &self.nodes,
            &model.requests[job as usize],
            limits,
        )
    }
}
