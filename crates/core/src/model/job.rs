//! Jobs as the engine sees them, in replay order.

use crate::error::{CoreError, Result};

/// Simulated time, in seconds since the trace's first submission.
pub type Time = f64;

/// The largest time (s) an input may hold: submit, run and requested times, downtime bounds.
/// About 3,170 years: far beyond any trace (even absolute Unix times), and small enough that
/// `start + run time` keeps sub-millisecond resolution (a submit time of 1e308 would make a 100 s
/// job end when it starts).
pub const MAX_TIME: f64 = 1e11;

/// One rigid job. Its index in the [`JobTable`] is its identity inside the engine.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Job {
    /// The trace's job id (reported back, used as the final tie-break by SNF).
    pub id: i64,
    pub submit: Time,
    /// Actual run time: what the replay executes, never seen by planning.
    pub run_time: f64,
    /// The estimate every planning decision uses (requested walltime).
    pub requested_time: f64,
    pub nodes: u32,
}

/// All jobs of a workload in replay order: (submit, id), stable.
#[derive(Debug, Clone, Default)]
pub struct JobTable {
    jobs: Vec<Job>,
    /// The trace's user of each job (empty: unknown for all). Only run-time models read it.
    users: Vec<i64>,
    /// `log10(max(requested, 1))` and `log10(max(submit, 1))` of each job: the queue-ordering
    /// heuristics F1-F4 read them at every decision of a look-ahead.
    logs: Vec<(f64, f64)>,
    /// Per queue-ordering heuristic whose scores do not change with time, every job of the
    /// table in score order (built on first use; see `sched::order`).
    static_orders: [std::sync::OnceLock<Box<[u32]>>; 17],
    /// The same orders as ranks: each job's place in its slot's order.
    static_ranks: [std::sync::OnceLock<Box<[u32]>>; 17],
}

impl JobTable {
    /// Builds the table, checking what the engine relies on.
    pub fn new(jobs: Vec<Job>) -> Result<Self> {
        for (i, job) in jobs.iter().enumerate() {
            let bad = |what: &str| CoreError::input(format!("job {} (index {i}): {what}", job.id));
            if !(job.submit.is_finite() && job.submit.abs() <= MAX_TIME) {
                return Err(bad("submit time must be finite and within +-1e11 s"));
            }
            if !(job.run_time.is_finite() && (0.0..=MAX_TIME).contains(&job.run_time)) {
                return Err(bad("run time must be between 0 and 1e11 s"));
            }
            if !(job.requested_time.is_finite() && (0.0..=MAX_TIME).contains(&job.requested_time)) {
                return Err(bad("requested time must be between 0 and 1e11 s"));
            }
            if job.nodes == 0 {
                return Err(bad("needs 0 nodes"));
            }
            if i > 0 && job.submit < jobs[i - 1].submit {
                return Err(bad("jobs are not in submit order"));
            }
        }
        if jobs.len() >= u32::MAX as usize {
            return Err(CoreError::input("too many jobs"));
        }
        let logs = jobs
            .iter()
            .map(|j| (j.requested_time.max(1.0).log10(), j.submit.max(1.0).log10()))
            .collect();
        Ok(JobTable {
            jobs,
            users: Vec::new(),
            logs,
            static_orders: Default::default(),
            static_ranks: Default::default(),
        })
    }

    /// The memo of a time-independent ordering of the whole table (slot `slot`), built by
    /// `build` on first use.
    pub fn static_order(&self, slot: usize, build: impl FnOnce() -> Box<[u32]>) -> &[u32] {
        self.static_orders[slot].get_or_init(build)
    }

    /// Each job's place in the memo of slot `slot` (built by `build` on first use, as for
    /// [`JobTable::static_order`]).
    pub fn static_rank(&self, slot: usize, build: impl FnOnce() -> Box<[u32]>) -> &[u32] {
        self.static_ranks[slot].get_or_init(|| {
            let order = self.static_order(slot, build);
            let mut ranks = vec![0u32; order.len()].into_boxed_slice();
            for (rank, &job) in order.iter().enumerate() {
                ranks[job as usize] = rank as u32;
            }
            ranks
        })
    }

    /// `(log10(max(requested, 1)), log10(max(submit, 1)))` of job `index`.
    #[inline]
    pub fn logs(&self, index: u32) -> (f64, f64) {
        self.logs[index as usize]
    }

    /// The table with each job's user (`-1` unknown), in the same order.
    pub fn with_users(mut self, users: Vec<i64>) -> Result<Self> {
        if users.len() != self.jobs.len() {
            return Err(CoreError::input("one user per job"));
        }
        self.users = users;
        Ok(self)
    }

    /// The user of job `index` (`-1` when unknown).
    #[inline]
    pub fn user(&self, index: u32) -> i64 {
        self.users.get(index as usize).copied().unwrap_or(-1)
    }

    #[inline]
    pub fn get(&self, index: u32) -> &Job {
        &self.jobs[index as usize]
    }

    pub fn len(&self) -> usize {
        self.jobs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Job> {
        self.jobs.iter()
    }
}
