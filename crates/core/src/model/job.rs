//! Jobs as the engine sees them, in replay order.

use crate::error::{CoreError, Result};

/// Simulated time, in seconds since the trace's first submission.
pub type Time = f64;

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
}

impl JobTable {
    /// Builds the table, checking what the engine relies on.
    pub fn new(jobs: Vec<Job>) -> Result<Self> {
        for (i, job) in jobs.iter().enumerate() {
            let bad = |what: &str| CoreError::input(format!("job {} (index {i}): {what}", job.id));
            if !job.submit.is_finite() {
                return Err(bad("submit time is not finite"));
            }
            if !(job.run_time.is_finite() && job.run_time >= 0.0) {
                return Err(bad("run time must be finite and >= 0"));
            }
            if !(job.requested_time.is_finite() && job.requested_time >= 0.0) {
                return Err(bad("requested time must be finite and >= 0"));
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
        Ok(JobTable { jobs })
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

    pub fn max_nodes(&self) -> u32 {
        self.jobs.iter().map(|j| j.nodes).max().unwrap_or(0)
    }
}
