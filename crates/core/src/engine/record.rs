//! What a run records: per-job outcomes and killed attempts. Not part of the cloned state.

use crate::engine::decision::StartKind;

/// The nodes a start took on a site of whole nodes: (job, start, (atom, count) pairs).
pub type SiteTakes = (u32, f64, Box<[(u32, u32)]>);

/// A row of the node-state timeline: the instant and the node count in each power state.
pub type TimelineRow = (f64, [u32; crate::engine::power::STATES]);

/// The outcome of a run, indexed by job (replay order).
#[derive(Debug, Clone, Default)]
pub struct RunLog {
    /// Start of the final (completed) attempt; NaN if the job never started.
    pub start: Vec<f64>,
    /// End of the final attempt; NaN if the job never started.
    pub end: Vec<f64>,
    pub start_kind: Vec<StartKind>,
    /// How many times the job was killed by a downtime window and requeued.
    pub requeues: Vec<u32>,
    /// Killed at its requested time (overrun policy `kill`).
    pub killed: Vec<bool>,
    /// Energy its final attempt spent computing (J; NaN without a power model).
    pub energy_j: Vec<f64>,
    /// Attempts cut short by downtime: (job, start, kill time).
    pub lost_attempts: Vec<(u32, f64, f64)>,
    /// EASY reservations as decided: (time, top job, shadow time, extra nodes).
    pub reservations: Vec<(f64, u32, f64, u32)>,
    /// The running totals as they stood after the last job completion (energy is reported
    /// from 0 to the last completion).
    pub at_last_completion: crate::engine::Metrics,
    /// Node counts per power state (idle, computing, switching on, switching off, sleeping,
    /// down) after each instant they changed, for runs whose nodes have power states.
    pub timeline: Vec<TimelineRow>,
    /// Power drawn by the whole machine (W) after each instant of `timeline`.
    pub timeline_power_w: Vec<f64>,
    /// Keep every candidate in the decision logs of the policy and the power layer
    /// (`--decision-log full`)? Off by default: on a year-long trace they are most of the log
    /// (tens of millions of rows).
    pub candidate_detail: bool,
    /// Scheduling invocations (one per distinct event time with jobs waiting).
    pub invocations: u64,
    /// Distinct event times processed.
    pub event_times: u64,
    /// On a site, the partition each job started in (`u32::MAX`: none), by job; empty
    /// otherwise.
    pub partition: Vec<u32>,
    /// On a site, the jobs refused at submission, with the reason: (job, reason).
    pub rejected: Vec<(u32, crate::model::Rejection)>,
    /// On a site, the jobs queued that it holds pending for ever, with the reason: (job,
    /// reason).
    pub held: Vec<(u32, crate::model::Held)>,
    /// When jobs share nodes, what each start took: (job, allocation), in start order.
    pub allocations: Vec<(u32, crate::packing::Allocation)>,
    /// On a site of whole nodes, the nodes each start took by atom: (job, start, (atom,
    /// count) pairs), in start order (killed attempts too).
    pub site_takes: Vec<SiteTakes>,
}

impl RunLog {
    pub fn new(jobs: usize) -> Self {
        RunLog {
            start: vec![f64::NAN; jobs],
            end: vec![f64::NAN; jobs],
            start_kind: vec![StartKind::Primary; jobs],
            requeues: vec![0; jobs],
            killed: vec![false; jobs],
            energy_j: vec![f64::NAN; jobs],
            lost_attempts: Vec::new(),
            reservations: Vec::new(),
            at_last_completion: crate::engine::Metrics::default(),
            timeline: Vec::new(),
            timeline_power_w: Vec::new(),
            candidate_detail: false,
            invocations: 0,
            event_times: 0,
            partition: Vec::new(),
            rejected: Vec::new(),
            held: Vec::new(),
            allocations: Vec::new(),
            site_takes: Vec::new(),
        }
    }

    /// A log that records only the counters: what look-ahead search runs with.
    pub fn counters_only() -> Self {
        RunLog::default()
    }

    pub(crate) fn is_recording(&self) -> bool {
        !self.start.is_empty()
    }

    pub(crate) fn record_start(
        &mut self,
        job: u32,
        start: f64,
        end: f64,
        kind: StartKind,
        killed: bool,
    ) {
        if self.is_recording() {
            let j = job as usize;
            self.start[j] = start;
            self.end[j] = end;
            self.start_kind[j] = kind;
            self.killed[j] = killed;
        }
    }

    /// Job `job` started in partition `p` (on a site).
    pub(crate) fn record_partition(&mut self, job: u32, p: u32, jobs: usize) {
        if self.is_recording() {
            if self.partition.is_empty() {
                self.partition = vec![u32::MAX; jobs];
            }
            self.partition[job as usize] = p;
        }
    }

    pub(crate) fn record_allocation(&mut self, job: u32, allocation: &crate::packing::Allocation) {
        if self.is_recording() {
            self.allocations.push((job, allocation.clone()));
        }
    }

    pub(crate) fn record_takes(&mut self, job: u32, start: f64, takes: &[(u32, u32)]) {
        if self.is_recording() {
            self.site_takes.push((job, start, takes.into()));
        }
    }

    pub(crate) fn record_rejection(&mut self, job: u32, reason: crate::model::Rejection) {
        if self.is_recording() {
            self.rejected.push((job, reason));
        }
    }

    pub(crate) fn record_held(&mut self, job: u32, reason: crate::model::Held) {
        if self.is_recording() {
            self.held.push((job, reason));
        }
    }

    pub(crate) fn record_kill(&mut self, job: u32, start: f64, at: f64) {
        if self.is_recording() {
            let j = job as usize;
            self.lost_attempts.push((job, start, at));
            self.requeues[j] += 1;
            self.start[j] = f64::NAN;
            self.end[j] = f64::NAN;
            self.killed[j] = false;
            self.energy_j[j] = f64::NAN;
        }
    }

    pub(crate) fn record_reservation(
        &mut self,
        at: f64,
        reserve: Option<crate::engine::decision::Reserve>,
    ) {
        if let (true, Some(r)) = (self.is_recording(), reserve) {
            self.reservations.push((at, r.job, r.shadow_time, r.extra));
        }
    }

    pub(crate) fn record_node_counts(
        &mut self,
        at: f64,
        counts: [u32; crate::engine::power::STATES],
        power_w: f64,
    ) {
        if self.is_recording() && self.timeline.last().is_none_or(|last| last.1 != counts) {
            if self.timeline.last().is_some_and(|last| last.0 == at) {
                self.timeline.pop();
                self.timeline_power_w.pop();
            }
            self.timeline.push((at, counts));
            self.timeline_power_w.push(power_w);
        }
    }

    pub(crate) fn record_energy(&mut self, job: u32, joules: f64) {
        if self.is_recording() {
            self.energy_j[job as usize] = joules;
        }
    }

    /// Node-seconds lost to kills by downtime.
    pub fn lost_node_seconds(&self, nodes_of: impl Fn(u32) -> u32) -> f64 {
        self.lost_attempts
            .iter()
            .map(|&(job, start, end)| f64::from(nodes_of(job)) * (end - start))
            .sum()
    }
}
