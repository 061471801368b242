//! `--policy slurm`: Slurm 22.05's main scheduler and backfill scheduler over multifactor
//! priorities (docs/semantics.md, "Slurm's scheduler").
//!
//! At each invocation, in this order: the priority recalculations due since the last one
//! (usage decayed and charged, fair-share recomputed, every pending job's priority set again at
//! the last of them), the jobs that ended charged, the jobs that arrived given their priority;
//! then the main scheduler (on an event: the first `default_queue_depth` jobs; on its
//! `sched_interval` tick: all), then, on a `bf_interval` tick with something changed since the
//! last cycle, the backfill scheduler. Both walk the jobs by (partition PriorityTier, priority,
//! job id), one entry per partition a job may run in.

use std::cmp::Reverse;
use std::sync::Arc;

use crate::engine::{Decision, Policy, View};
use crate::model::Site;
use crate::sched::slurm::clock;
use crate::sched::slurm::fairshare::Shares;
use crate::sched::slurm::passes::{Entry, Passes};
use crate::sched::slurm::priority::{self, Factors};
use crate::sched::slurm::setup::SlurmSetup;

/// The Slurm policy: its settings, the fair-share state and the queue in priority order.
#[derive(Debug, Clone)]
pub struct SlurmPolicy {
    setup: Arc<SlurmSetup>,
    shares: Shares,
    /// Pending jobs' entries (one per usable partition), sorted when `sorted`.
    entries: Vec<Entry>,
    sorted: bool,
    /// By job index: whether it waits, as this policy knows it.
    waiting: Vec<bool>,
    waiting_count: usize,
    /// The last priority recalculation (Slurm's `g_last_ran`); `None` before the first.
    last_calc: Option<f64>,
    /// Something changed since the last backfill cycle / the last full main pass.
    /// The earliest change the backfill scheduler has not seen yet (Slurm's `_more_work`).
    dirty_since: Option<f64>,
    full_dirty: bool,
    /// When the last backfill cycle ran.
    last_bf: f64,
    /// Recalculations done at this call, by time (scratch).
    ticks: Vec<f64>,
    /// Whether a job waited when the last call ended (then a recalculation changes it).
    waited: bool,
    /// What the view should look like at the next invocation if nothing happens in between:
    /// (free nodes, queue length, windows down, windows announced).
    expected: Option<(u64, usize, usize, usize)>,
    passes: Passes,
    /// Whether a job's size factor changes at its first recalculation (CPUs requested that
    /// differ from those allocated, job size weighed).
    sizes_settle: bool,
    /// Scratch: jobs that ended, by end.
    ended: Vec<(u32, f64, f64)>,
}

impl SlurmPolicy {
    pub fn new(setup: Arc<SlurmSetup>) -> Self {
        let shares = Shares::new(&setup.associations);
        let jobs = setup.jobs.cpus.len();
        let j = &setup.jobs;
        let sizes_settle = setup.priority.weight_job_size > 0.0
            && j.requested_cpus.iter().zip(&j.cpus).any(|(a, b)| a != b);
        SlurmPolicy {
            passes: Passes::new(&setup),
            sizes_settle,
            setup,
            shares,
            entries: Vec::new(),
            sorted: true,
            waiting: vec![false; jobs],
            waiting_count: 0,
            last_calc: None,
            dirty_since: None,
            full_dirty: false,
            last_bf: f64::NEG_INFINITY,
            ticks: Vec::new(),
            waited: false,
            expected: None,
            ended: Vec::new(),
        }
    }

    /// The same policy with every backfill cycle run in full and every timer set (for tests:
    /// the work left out must change no start).
    pub fn exhaustive(mut self) -> Self {
        self.passes.exhaustive = true;
        self
    }

    /// The decay of usage over `seconds` (`pow(1 - 0.693 / half_life, seconds)`, Slurm's own
    /// approximation of `2^(-seconds / half_life)`).
    fn decay(&self, seconds: f64) -> f64 {
        let half_life = self.setup.priority.decay_half_life;
        if half_life > 0.0 {
            (1.0 - 0.693 / half_life)
                .powf(seconds)
                .max(f64::MIN_POSITIVE)
        } else {
            1.0
        }
    }

    /// Charges job `job` for running from `from` (or its start) to `to`: the seconds, decayed
    /// over themselves, times its billable TRES (its CPUs without billing weights;
    /// `_apply_new_usage`).
    fn charge(&mut self, job: u32, start: f64, from: f64, to: f64) {
        if self.setup.priority.weight_fairshare == 0.0 {
            return; // (usage only feeds fair-share)
        }
        let run = (to - start.max(from)).max(0.0);
        if run > 0.0 {
            let billable = self.setup.jobs.billable(job as usize);
            let amount = run * self.decay(run) * billable;
            self.shares
                .charge(self.setup.jobs.association[job as usize], amount);
        }
    }

    /// Fair-share factors from the usage as it stands (at a recalculation).
    fn recompute_shares(&mut self) {
        let p = &self.setup.priority;
        if p.weight_fairshare > 0.0 {
            self.shares.recompute(p.fair_share, p.dampening);
        }
    }

    /// Charges the `k`-th job that ended for its run since the last recalculation, when Slurm
    /// does (`PrioritySettings::charge_at_end`).
    fn charge_end(&mut self, k: usize) {
        if self.setup.priority.charge_at_end {
            let (job, start, end) = self.ended[k];
            let from = self.last_calc.unwrap_or(f64::NEG_INFINITY);
            self.charge(job, start, from, end);
        }
    }

    /// The recalculations due by `now` and the completions since the last call, in time
    /// order; returns the time of the last recalculation done, if any.
    fn catch_up(&mut self, view: &View) -> Option<f64> {
        let period = self.setup.priority.calc_period;
        let now = view.now;
        self.ended.clear();
        self.ended.extend_from_slice(view.completed);
        self.ended
            .sort_by(|a, b| a.2.total_cmp(&b.2).then(a.0.cmp(&b.0)));
        let mut next_end = 0;
        let mut last_done = None;
        self.ticks.clear();
        let mut tick = match self.last_calc {
            // the first recalculation: when the first job is seen (slurmctld's start)
            None => clock::at_or_before(now, period),
            Some(last) => clock::after(last, period),
        };
        while tick <= now {
            // completions up to the tick first (charged when they end)
            while next_end < self.ended.len() && self.ended[next_end].2 <= tick {
                self.charge_end(next_end);
                next_end += 1;
            }
            if let Some(last) = self.last_calc {
                let decay = self.decay(tick - last);
                self.shares.decay(decay);
                for r in view.running {
                    self.charge(r.job, r.start, last, tick);
                }
                for k in next_end..self.ended.len() {
                    let (job, start, end) = self.ended[k];
                    if start < tick && end > tick {
                        self.charge(job, start, last, tick);
                    }
                }
            }
            self.last_calc = Some(tick);
            self.ticks.push(tick);
            last_done = Some(tick);
            if clock::after(tick, period) > now {
                self.recompute_shares(); // (as at this tick: later ends are charged after it)
            }
            tick = clock::after(tick, period);
            if tick <= now && tick + period <= now {
                // long idle gaps: skip straight to the last ticks only when nothing ran
                if view.running.is_empty() && next_end == self.ended.len() {
                    let last = clock::at_or_before(now, period);
                    let decay = self.decay(last - self.last_calc.unwrap_or(last));
                    self.shares.decay(decay);
                    self.last_calc = Some(last);
                    self.ticks.push(last);
                    last_done = Some(last);
                    self.recompute_shares();
                    tick = clock::after(last, period);
                }
            }
        }
        while next_end < self.ended.len() {
            self.charge_end(next_end);
            next_end += 1;
        }
        last_done
    }

    /// The factors of job `job` at `now` in partition `partition`.
    fn factors(&self, view: &View, job: u32, partition: u32, now: f64) -> Factors {
        let s = &self.setup;
        let known = view.jobs.get(job);
        let j = job as usize;
        let qos = &s.qos[s.jobs.qos[j] as usize];
        // (the CPUs asked for until a recalculation after the submission)
        let cpus = match s.jobs.requested_cpus.get(j) {
            Some(&asked) if self.last_calc.is_none_or(|t| t < known.submit) => asked,
            _ => s.jobs.cpus[j],
        };
        let max_qos = self.passes.max_qos_priority;
        let max_part = self.passes.max_partition_factor;
        Factors {
            age: priority::age(&s.priority, now, known.submit),
            fairshare: self.shares.factor(s.jobs.association[j]),
            job_size: priority::job_size(
                &s.priority,
                known.nodes,
                cpus,
                known.requested_time,
                s.cluster_nodes,
                s.cluster_cpus,
            ),
            partition: if max_part == 0 {
                0.0
            } else {
                f64::from(s.partition_factors[partition as usize]) / f64::from(max_part)
            },
            qos: if max_qos == 0 {
                0.0
            } else {
                f64::from(qos.priority) / f64::from(max_qos)
            },
            nice: s.jobs.nice[j],
            tres: s
                .jobs
                .tres_term(j, partition as usize, s.partition_factors.len()),
        }
    }

    fn entry(&self, view: &View, job: u32, partition: u32, now: f64) -> Entry {
        let f = self.factors(view, job, partition, now);
        Entry {
            tier: site_of(view).map_or(0, |s| s.partition(partition).spec.tier),
            priority: priority::priority(&self.setup.priority, &f),
            submit: view.jobs.get(job).submit,
            id: view.jobs.get(job).id,
            job,
            partition,
        }
    }

    /// Adds the entries of waiting job `job` (one per partition it may start in).
    fn enqueue(&mut self, view: &View, job: u32, now: f64) {
        if std::mem::replace(&mut self.waiting[job as usize], true) {
            return;
        }
        self.waiting_count += 1;
        if let Some(shared) = view.shared {
            // the partitions it may run in and fits once empty (none: it is held for ever)
            for &p in shared.model.fitting(job) {
                let e = self.entry(view, job, p, now);
                self.insert(e);
            }
            return;
        }
        match view.site {
            None => {
                let e = self.entry(view, job, 0, now);
                self.insert(e);
            }
            Some(site) => {
                for &p in site.model.usable(job) {
                    let e = self.entry(view, job, p, now);
                    self.insert(e);
                }
            }
        }
    }

    /// Adds `e` where it goes in the order (at the end when the entries are to be sorted).
    fn insert(&mut self, e: Entry) {
        if self.sorted {
            let at = self.entries.partition_point(|x| order(x, &e).is_lt());
            self.entries.insert(at, e);
        } else {
            self.entries.push(e);
        }
    }

    /// Every pending job's priority again, at `at` (a recalculation).
    fn reprioritise(&mut self, view: &View, at: f64) {
        let mut entries = std::mem::take(&mut self.entries);
        entries.retain(|e| self.waiting[e.job as usize]);
        for e in entries.iter_mut() {
            *e = self.entry(view, e.job, e.partition, at);
        }
        self.entries = entries;
        self.sorted = false;
    }

    /// The view's queue as the truth when it disagrees with what this policy knows (jobs
    /// requeued by a downtime window).
    fn resync(&mut self, view: &View) {
        for w in self.waiting.iter_mut() {
            *w = false;
        }
        self.waiting_count = 0;
        self.entries.clear();
        // (every entry is made again: the priorities are set now)
        for &job in view.queue {
            self.enqueue(view, job, view.now);
        }
    }

    fn sort(&mut self) {
        if !self.sorted {
            // `sort_job_queue2`: tier, priority, then submission and job id
            self.entries.sort_unstable_by(order);
            self.sorted = true;
        }
    }

    /// The backfill cycles that ran since the last call without one (no timer was set: no
    /// waiting job fitted the nodes free, so they started nothing), for when the next one may
    /// run: Slurm starts a cycle `bf_interval` after the last one, once anything changed since
    /// it. The changes: the one left unseen at the last call, and each recalculation done for
    /// the time since (Slurm marks every pending job updated at one), if a job waited.
    fn unseen_cycles(&mut self, now: f64) {
        let Some(iv) = self.setup.scheduler.bf_interval else {
            return;
        };
        let mut changes: Vec<f64> = self.dirty_since.into_iter().collect();
        if self.waited {
            changes.extend(self.ticks.iter().copied().filter(|&t| t < now));
        }
        changes.sort_by(f64::total_cmp);
        let mut i = 0;
        while i < changes.len() {
            let cycle = changes[i].max(self.last_bf + iv);
            if cycle >= now {
                break;
            }
            self.last_bf = cycle;
            while i < changes.len() && changes[i] <= cycle {
                i += 1;
            }
        }
        self.dirty_since = changes.get(i).copied();
        if self.ticks.last() == Some(&now) && self.waited {
            self.dirty_since = Some(self.dirty_since.map_or(now, |d| d.min(now)));
        }
    }

    /// The pending entries in priority order, as (job, partition).
    fn order_key(&mut self) -> Vec<(u32, u32)> {
        self.sort();
        (self.entries.iter())
            .filter(|e| self.waiting[e.job as usize])
            .map(|e| (e.job, e.partition))
            .collect()
    }

    /// Slurm's order of `view`'s queue, as each job's place in it (`ranks`, by job index;
    /// `u32::MAX` for the others): the priorities kept up with the view as `decide` keeps them
    /// (recalculations, usage charged), with the jobs that left the queue by another policy's
    /// decisions forgotten. For a policy that orders by Slurm's priorities without Slurm's
    /// scheduler (MARS's `slurm` ordering); a job's place is its best partition's entry.
    /// `ranks` is kept between calls (only the queue's jobs are written: O(queue) a call).
    pub fn rank_queue(&mut self, view: &View, ranks: &mut Vec<u32>) {
        if self.waiting.len() < view.jobs.len() {
            self.waiting.resize(view.jobs.len(), false);
        }
        // the last call's places (its queue: the entries) cleared
        ranks.resize(view.jobs.len(), u32::MAX);
        for e in &self.entries {
            ranks[e.job as usize] = u32::MAX;
        }
        if let Some(at) = self.catch_up(view) {
            let p = &self.setup.priority;
            if p.weight_fairshare > 0.0 || p.weight_age > 0.0 || self.sizes_settle {
                self.reprioritise(view, at);
            }
        }
        // jobs started by the other policy leave; jobs requeued come back
        for &job in view.queue {
            ranks[job as usize] = 0; // (scratch: in the queue)
        }
        for e in &self.entries {
            let j = e.job as usize;
            if self.waiting[j] && ranks[j] == u32::MAX {
                self.waiting[j] = false;
                self.waiting_count -= 1;
            }
        }
        for &job in view.queue {
            ranks[job as usize] = u32::MAX;
            self.enqueue(view, job, view.now);
        }
        self.entries.retain(|e| self.waiting[e.job as usize]);
        self.sort();
        let mut place = 0;
        for e in &self.entries {
            let r = &mut ranks[e.job as usize];
            if *r == u32::MAX {
                *r = place;
                place += 1;
            }
        }
    }

    /// What the view shows of what may start: free nodes (with shared nodes, the version of
    /// their state, which every start and end changes), the queue's length, windows down and
    /// windows announced.
    fn signature(view: &View) -> (u64, usize, usize, usize) {
        let free = match (view.shared, view.site) {
            (Some(shared), _) => shared.state.version(),
            (None, Some(site)) => site.state.free().iter().map(|&f| u64::from(f)).sum(),
            (None, None) => u64::from(view.free),
        };
        (
            free,
            view.queue.len(),
            view.down_windows.len(),
            view.announced.len(),
        )
    }
}

/// The site whose partitions the jobs run in (with shared nodes, that of the node sets).
fn site_of<'a>(view: &View<'a>) -> Option<&'a Site> {
    match view.shared {
        Some(shared) => shared.site,
        None => view.site.map(|s| s.model),
    }
}

/// Slurm's order of the queue (`sort_job_queue2`): partition tier, priority (both highest
/// first), then submission and job id.
fn order(a: &Entry, b: &Entry) -> std::cmp::Ordering {
    (Reverse(a.tier), Reverse(a.priority))
        .cmp(&(Reverse(b.tier), Reverse(b.priority)))
        .then(a.submit.total_cmp(&b.submit))
        .then((a.id, a.job, a.partition).cmp(&(b.id, b.job, b.partition)))
}

impl Policy for SlurmPolicy {
    fn name(&self) -> String {
        "slurm".to_string()
    }

    fn observes_events(&self) -> bool {
        true
    }

    fn decide(&mut self, view: &View, decision: &mut Decision) {
        let now = view.now;
        if self.waiting.len() < view.jobs.len() {
            self.waiting.resize(view.jobs.len(), false);
        }
        let event = !view.arrived.is_empty()
            || !view.completed.is_empty()
            || self.expected != Some(Self::signature(view));
        if let Some(at) = self.catch_up(view) {
            let p = &self.setup.priority;
            // Only age, fair-share and a new job's size change with time. Slurm marks every pending job updated
            // at a recalculation, which wakes both schedulers; a pass over the same jobs in
            // the same order on the same nodes as the last one, which started nothing, starts
            // nothing again (the map's times are absolute): such passes are not run.
            if p.weight_fairshare > 0.0 || p.weight_age > 0.0 || self.sizes_settle {
                let before: Vec<(u32, u32)> = self.order_key();
                self.reprioritise(view, at);
                self.sort();
                if before != self.order_key() || self.passes.exhaustive {
                    self.full_dirty = true;
                }
            }
        }
        self.unseen_cycles(now);
        for &job in view.arrived {
            self.enqueue(view, job, now);
        }
        if self.waiting_count != view.queue.len() {
            self.resync(view);
        }
        if event {
            self.dirty_since = Some(self.dirty_since.map_or(now, |d| d.min(now)));
            self.full_dirty = true;
        }
        self.sort();
        let sched = &self.setup.scheduler;
        let nothing_runs = view.running.is_empty();
        // With nothing running, nothing but an event can change what may start: every pass is
        // run now, in full, and no timer is set (a run whose jobs can never start ends).
        let full_due = nothing_runs
            || sched
                .sched_interval
                .is_some_and(|iv| self.full_dirty && clock::on_grid(now, iv));
        // A backfill cycle starts bf_interval after the last one, if anything changed since.
        let bf_due = sched.bf_interval.is_some_and(|iv| {
            self.dirty_since.is_some() && (nothing_runs || now >= self.last_bf + iv)
        });
        let main_due = event || full_due;
        if main_due || bf_due {
            let depth = if full_due {
                usize::MAX
            } else {
                sched.default_queue_depth
            };
            let outcome = self.passes.run(
                view,
                &self.setup,
                &mut self.entries,
                &mut self.waiting,
                main_due.then_some(depth),
                bf_due,
                decision,
            );
            self.waiting_count -= outcome.started;
            if main_due && outcome.main_covered_all {
                self.full_dirty = false;
            }
            if bf_due {
                self.dirty_since = None;
                self.last_bf = now;
            }
            if outcome.started > 0 {
                self.dirty_since = Some(now);
                self.full_dirty = true;
            }
        }
        // The view expected at the next call if nothing happens but timers.
        let mut expected = Self::signature(view);
        if view.shared.is_some() {
            expected.0 += decision.starts.len() as u64; // (one version a start)
        } else {
            let started: u64 = (decision.starts.iter())
                .map(|s| u64::from(view.jobs.get(s.job).nodes))
                .sum();
            expected.0 -= started;
        }
        expected.1 -= decision.starts.len();
        self.expected = Some(expected);
        self.waited = self.waiting_count > 0;
        if self.waiting_count == 0 || (nothing_runs && decision.starts.is_empty()) {
            return;
        }
        // Until something ends or arrives, only a job that fits the nodes free now could start
        // at a timer: without one, no timer (what they would have done is caught up with at
        // the next event, to the same priorities).
        let (may_start, free) = if view.shared.is_some() {
            let started = !decision.starts.is_empty();
            let may = (self.passes).shared_may_start(view, &self.entries, &self.waiting, started);
            (may, may)
        } else {
            let smallest = (self.entries.iter())
                .filter(|e| self.waiting[e.job as usize])
                .map(|e| u64::from(view.jobs.get(e.job).nodes))
                .min()
                .unwrap_or(u64::MAX);
            (smallest <= expected.0, expected.0 > 0)
        };
        if !may_start && !self.passes.exhaustive {
            return; // (cycles due run unseen, starting nothing: `unseen_cycles`)
        }
        if free {
            decision
                .timers
                .push(clock::after(now, self.setup.priority.calc_period));
        }
        if let Some(iv) = sched.bf_interval.filter(|_| self.dirty_since.is_some()) {
            decision.timers.push((self.last_bf + iv).max(now + 1.0));
        }
        if let Some(iv) = sched.sched_interval.filter(|_| self.full_dirty) {
            decision.timers.push(clock::after(now, iv));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::slurm::config::{PrioritySettings, SchedulerSettings};
    use crate::sched::slurm::limits::Qos;
    use crate::sched::slurm::setup::{Association, SlurmJobs};

    fn with_half_life(half_life: f64) -> SlurmPolicy {
        SlurmPolicy::new(Arc::new(SlurmSetup {
            priority: PrioritySettings {
                decay_half_life: half_life,
                ..PrioritySettings::default()
            },
            scheduler: SchedulerSettings::default(),
            associations: vec![Association {
                parent: None,
                shares: Some(1),
                user: false,
            }],
            qos: vec![Qos::default()],
            tres: Vec::new(),
            jobs: SlurmJobs::default(),
            cluster_cpus: 1,
            cluster_nodes: 1,
            partition_factors: vec![1],
            origin: 0.0,
        }))
    }

    #[test]
    fn usage_halves_over_one_half_life() {
        // Slurm's per-second factor 1 - 0.693 / 693 = 0.999: over 693 s 0.999^693 = 0.49990
        // (ln: 693 * -0.0010005 = -0.69335), about one half; over 1386 s about a quarter
        let p = with_half_life(693.0);
        assert!((p.decay(693.0) - 0.4999).abs() < 1e-4);
        assert!((p.decay(1386.0) - 0.2499).abs() < 1e-4);
        assert_eq!(p.decay(0.0), 1.0);
        // no half-life: no decay
        assert_eq!(with_half_life(0.0).decay(1e6), 1.0);
    }
}
