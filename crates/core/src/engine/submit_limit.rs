//! Caps on the jobs a group may have submitted and not yet finished (Slurm's QOS
//! `MaxSubmitJobsPerUser`: `acct_policy_validate` refuses a submission when the user's jobs in
//! the QOS, pending or running, already reach the cap). A refused job is never queued.

use crate::error::{CoreError, Result};

/// Each job's group and each group's cap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubmitLimits {
    /// Each job's group, by job index ([`SubmitLimits::NONE`]: no cap).
    pub group: Vec<u32>,
    /// Each group's most jobs pending or running at once.
    pub cap: Vec<u32>,
}

impl SubmitLimits {
    /// The group of a job no cap applies to.
    pub const NONE: u32 = u32::MAX;

    /// Checks the limits against `jobs` jobs.
    pub fn validate(&self, jobs: usize) -> Result<()> {
        if self.group.len() != jobs {
            return Err(CoreError::input("submission limits: one group per job"));
        }
        if let Some(i) =
            (self.group.iter()).position(|&g| g != Self::NONE && g as usize >= self.cap.len())
        {
            return Err(CoreError::input(format!(
                "submission limits: job index {i} is in a group without a cap"
            )));
        }
        Ok(())
    }
}

/// What each group has pending or running now.
#[derive(Debug, Clone, Default)]
pub(crate) struct Submitted {
    active: Vec<u32>,
}

impl Submitted {
    pub(crate) fn new(limits: &SubmitLimits) -> Self {
        Submitted {
            active: vec![0; limits.cap.len()],
        }
    }

    /// Takes job `job`'s submission if its group has room (counting it), else refuses it.
    pub(crate) fn admit(&mut self, limits: &SubmitLimits, job: u32) -> bool {
        let group = limits.group[job as usize];
        if group == SubmitLimits::NONE {
            return true;
        }
        let active = &mut self.active[group as usize];
        if *active >= limits.cap[group as usize] {
            return false;
        }
        *active += 1;
        true
    }

    /// Job `job` has ended: its group has room for one more.
    pub(crate) fn finish(&mut self, limits: &SubmitLimits, job: u32) {
        let group = limits.group[job as usize];
        if group != SubmitLimits::NONE {
            self.active[group as usize] -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_takes_jobs_up_to_its_cap_and_again_once_one_ends() {
        let limits = SubmitLimits {
            group: vec![0, 0, 0, SubmitLimits::NONE, 1],
            cap: vec![2, 0],
        };
        limits.validate(5).unwrap();
        let mut submitted = Submitted::new(&limits);
        assert!(submitted.admit(&limits, 0));
        assert!(submitted.admit(&limits, 1));
        assert!(!submitted.admit(&limits, 2)); // a third pending or running job
        assert!(submitted.admit(&limits, 3)); // uncapped
        assert!(!submitted.admit(&limits, 4)); // a cap of 0 refuses everything
        submitted.finish(&limits, 0);
        assert!(submitted.admit(&limits, 2));
    }

    #[test]
    fn limits_must_name_one_group_per_job_and_only_groups_with_a_cap() {
        let limits = SubmitLimits {
            group: vec![0, 1],
            cap: vec![1],
        };
        assert!(limits.validate(3).is_err());
        assert!(limits.validate(2).is_err());
    }
}
