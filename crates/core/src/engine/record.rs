//! What a run records: per-job outcomes and killed attempts. Not part of the cloned state.

use crate::sched::StartKind;

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
    /// Attempts cut short by downtime: (job, start, kill time).
    pub lost_attempts: Vec<(u32, f64, f64)>,
    /// EASY reservations as decided: (time, top job, shadow time, extra nodes).
    pub reservations: Vec<(f64, u32, f64, u32)>,
    /// Scheduling invocations (one per distinct event time with jobs waiting).
    pub invocations: u64,
    /// Distinct event times processed.
    pub event_times: u64,
}

impl RunLog {
    pub fn new(jobs: usize) -> Self {
        RunLog {
            start: vec![f64::NAN; jobs],
            end: vec![f64::NAN; jobs],
            start_kind: vec![StartKind::Primary; jobs],
            requeues: vec![0; jobs],
            killed: vec![false; jobs],
            lost_attempts: Vec::new(),
            reservations: Vec::new(),
            invocations: 0,
            event_times: 0,
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
