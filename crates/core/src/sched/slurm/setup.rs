//! What a Slurm run is given beyond the jobs' sizes and times: the settings, the association
//! tree (account -> user) with its shares, the QOS, and each job's association, user, QOS,
//! nice value and CPUs; on a site, each partition's `PriorityJobFactor`.

use std::collections::HashMap;

use crate::engine::SubmitLimits;
use crate::error::{CoreError, Result};
use crate::sched::slurm::config::{PrioritySettings, SchedulerSettings};
use crate::sched::slurm::limits::{Qos, FIXED_TRES};

/// One association: the root (no parent), an account, or a user in an account (a leaf).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Association {
    pub parent: Option<u32>,
    /// `Fairshare=N`; `None`: `Fairshare=parent` (it ranks as its parent).
    pub shares: Option<u32>,
    /// A user association (a leaf, whose jobs run): fair-share factors are theirs.
    pub user: bool,
}

/// The jobs' Slurm attributes, by job index.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SlurmJobs {
    /// The user association each job runs under (an index into `associations`).
    pub association: Vec<u32>,
    /// The user, for per-user limits and `bf_max_job_user`.
    pub user: Vec<u32>,
    pub qos: Vec<u32>,
    /// `--nice` (may be negative).
    pub nice: Vec<i64>,
    /// CPUs allocated (what usage charges and the job-size factor's CPU term count).
    pub cpus: Vec<u32>,
    /// CPUs asked for, when they differ from `cpus` (a whole-node job asks for one per node
    /// and is given them all); empty: as `cpus`. Until the first recalculation after a job's
    /// submission its job-size factor counts these: Slurm computes the first priority before
    /// any scheduling attempt has set the job's `total_cpus`.
    pub requested_cpus: Vec<u32>,
    /// Each job's billable TRES (its partition's `TRESBillingWeights` over what it holds),
    /// what its usage is charged per second; empty: its CPUs.
    pub billing: Vec<f64>,
    /// Each job's `PriorityWeightTRES` term in each partition (row-major, job by partition:
    /// weights times its TRES over the partition's); empty: none.
    pub tres_priority: Vec<f64>,
    /// Each job's amount of each of `SlurmSetup::tres` as it asks them (row-major, job by
    /// TRES): memory in MB in all, each `gres/NAME[:TYPE]` per node times the nodes it asks
    /// (`-N`, else 1); what a pending job's QOS limits test, and what a job holds on whole
    /// nodes. Empty when `SlurmSetup::tres` is.
    pub tres: Vec<u64>,
}

impl SlurmJobs {
    /// Job `j`'s amounts of `tres` TRES as asked (`SlurmSetup::tres`' order).
    #[inline]
    pub fn tres_of(&self, j: usize, tres: usize) -> &[u64] {
        &self.tres[j * tres..(j + 1) * tres]
    }

    /// The amounts of `tres` TRES of the jobs `order` names, in that order.
    pub fn tres_rows(&self, order: &[usize], tres: usize) -> Vec<u64> {
        (order.iter())
            .flat_map(|&r| self.tres_of(r, tres))
            .copied()
            .collect()
    }

    /// What job `j`'s usage is charged per second of its run.
    #[inline]
    pub fn billable(&self, j: usize) -> f64 {
        match self.billing.get(j) {
            Some(&b) => b,
            None => f64::from(self.cpus[j]),
        }
    }

    /// Job `j`'s TRES priority term in partition `p` of `partitions`.
    #[inline]
    pub fn tres_term(&self, j: usize, p: usize, partitions: usize) -> f64 {
        self.tres_priority
            .get(j * partitions + p)
            .copied()
            .unwrap_or(0.0)
    }
}

/// Everything a Slurm run needs beyond the engine's inputs.
#[derive(Debug, Clone, PartialEq)]
pub struct SlurmSetup {
    pub priority: PrioritySettings,
    pub scheduler: SchedulerSettings,
    /// The root first, every parent before its children.
    pub associations: Vec<Association>,
    pub qos: Vec<Qos>,
    /// The TRES QOS limits count beyond nodes and CPUs, in the order of `SlurmJobs::tres`:
    /// `mem` (MB), `gres/NAME` (every kind of that name, typed or not), `gres/NAME:TYPE`.
    pub tres: Vec<String>,
    pub jobs: SlurmJobs,
    /// The cluster's CPUs (the job-size factor's denominator).
    pub cluster_cpus: u64,
    /// The cluster's nodes.
    pub cluster_nodes: u32,
    /// Each partition's `PriorityJobFactor` (one pool: one value).
    pub partition_factors: Vec<u32>,
    /// The wall-clock time (Unix seconds) of the replay clock's 0: Slurm rounds times on the
    /// wall clock (`bf_resolution` floors, `_will_run_test`'s 30-s windows); 0 when unknown.
    pub origin: f64,
}

impl SlurmSetup {
    /// The QOS' `MaxSubmitJobsPerUser` as the engine's caps: one group per (QOS, user) of the
    /// jobs whose QOS has one (`None` when no QOS has).
    pub fn submit_limits(&self) -> Option<SubmitLimits> {
        if self
            .qos
            .iter()
            .all(|q| q.max_submit_jobs_per_user.is_none())
        {
            return None;
        }
        let mut groups: HashMap<(u32, u32), u32> = HashMap::new();
        let mut cap = Vec::new();
        let group = (self.jobs.qos.iter().zip(&self.jobs.user))
            .map(
                |(&qos, &user)| match self.qos[qos as usize].max_submit_jobs_per_user {
                    None => SubmitLimits::NONE,
                    Some(most) => *groups.entry((qos, user)).or_insert_with(|| {
                        cap.push(most);
                        cap.len() as u32 - 1
                    }),
                },
            )
            .collect();
        Some(SubmitLimits { group, cap })
    }

    /// Checks the setup against `jobs` jobs and `partitions` partitions (1: one pool).
    pub fn validate(&self, jobs: usize, partitions: usize) -> Result<()> {
        self.priority.validate()?;
        self.scheduler.validate()?;
        let assocs = self.associations.len();
        if assocs == 0 || self.associations[0].parent.is_some() {
            return Err(CoreError::input(
                "the association tree must start with its root (no parent)",
            ));
        }
        for (i, a) in self.associations.iter().enumerate().skip(1) {
            match a.parent {
                Some(p) if (p as usize) < i && !self.associations[p as usize].user => {}
                _ => {
                    return Err(CoreError::input(format!(
                        "association {i}: its parent must be an account listed before it"
                    )))
                }
            }
        }
        let j = &self.jobs;
        if [
            j.association.len(),
            j.user.len(),
            j.qos.len(),
            j.nice.len(),
            j.cpus.len(),
        ]
        .iter()
        .any(|&l| l != jobs)
        {
            return Err(CoreError::input("one Slurm attribute of each kind per job"));
        }
        if let Some(i) = j
            .association
            .iter()
            .position(|&a| !self.associations.get(a as usize).is_some_and(|a| a.user))
        {
            return Err(CoreError::input(format!(
                "job index {i}: its association is not a user association"
            )));
        }
        if self.qos.is_empty() {
            return Err(CoreError::input("at least one QOS"));
        }
        self.validate_tres(jobs)?;
        if let Some(i) = j.qos.iter().position(|&q| q as usize >= self.qos.len()) {
            return Err(CoreError::input(format!("job index {i}: unknown QOS")));
        }
        if let Some(i) = j.cpus.iter().position(|&c| c == 0) {
            return Err(CoreError::input(format!("job index {i}: 0 CPUs")));
        }
        if !j.requested_cpus.is_empty() {
            if j.requested_cpus.len() != jobs {
                return Err(CoreError::input("CPUs requested: one per job, or none"));
            }
            if let Some(i) = j.requested_cpus.iter().position(|&c| c == 0) {
                return Err(CoreError::input(format!("job index {i}: 0 CPUs requested")));
            }
        }
        if !j.billing.is_empty()
            && (j.billing.len() != jobs || j.billing.iter().any(|b| !b.is_finite()))
        {
            return Err(CoreError::input(
                "billable TRES: one finite value per job, or none",
            ));
        }
        if !j.tres_priority.is_empty()
            && (j.tres_priority.len() != jobs * partitions
                || j.tres_priority.iter().any(|t| !t.is_finite()))
        {
            return Err(CoreError::input(
                "TRES priority: one finite value per job and partition, or none",
            ));
        }
        if self.partition_factors.len() != partitions {
            return Err(CoreError::input("one PriorityJobFactor per partition"));
        }
        if !self.origin.is_finite() {
            return Err(CoreError::input("the clock's origin must be a finite time"));
        }
        if self.cluster_cpus == 0 || self.cluster_nodes == 0 {
            return Err(CoreError::input("the cluster has no CPUs or no nodes"));
        }
        Ok(())
    }

    /// Checks the TRES limits count: known names, one amount per job and TRES, limits on
    /// TRES of the run.
    fn validate_tres(&self, jobs: usize) -> Result<()> {
        for (t, name) in self.tres.iter().enumerate() {
            let gres = name
                .strip_prefix("gres/")
                .filter(|g| !g.is_empty() && !g.starts_with(':') && !g.ends_with(':'));
            if (name != "mem" && gres.is_none()) || self.tres[..t].contains(name) {
                return Err(CoreError::input(format!(
                    "TRES {name:?}: QOS limits count mem and gres/NAME[:TYPE], each once"
                )));
            }
        }
        if self.jobs.tres.len() != jobs * self.tres.len() {
            return Err(CoreError::input("TRES amounts: one per job and TRES"));
        }
        let counted = FIXED_TRES + self.tres.len();
        if let Some(q) =
            (self.qos.iter()).position(|q| q.tres.iter().any(|l| l.tres as usize >= counted))
        {
            return Err(CoreError::input(format!(
                "QOS {q}: a limit on a TRES the run does not count"
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jobs_tres_are_its_row_and_rows_follow_an_order() {
        let jobs = SlurmJobs {
            tres: vec![1, 2, 3, 4, 5, 6],
            ..SlurmJobs::default()
        };
        assert_eq!(jobs.tres_of(1, 2), [3, 4]);
        assert_eq!(jobs.tres_rows(&[2, 0], 2), [5, 6, 1, 2]);
        assert!(jobs.tres_rows(&[1, 0], 0).is_empty());
    }

    #[test]
    fn the_tres_limits_count_are_checked() {
        let setup = |tres: &[&str], amounts: Vec<u64>, limit: u32| SlurmSetup {
            priority: PrioritySettings::default(),
            scheduler: SchedulerSettings::default(),
            associations: Vec::new(),
            qos: vec![Qos::default().with(crate::sched::slurm::limits::Scope::Group, limit, 1)],
            tres: tres.iter().map(|t| t.to_string()).collect(),
            jobs: SlurmJobs {
                tres: amounts,
                ..SlurmJobs::default()
            },
            cluster_cpus: 1,
            cluster_nodes: 1,
            partition_factors: vec![1],
            origin: 0.0,
        };
        let ok = |tres: &[&str], amounts: Vec<u64>, limit: u32| {
            setup(tres, amounts, limit).validate_tres(2).is_ok()
        };
        assert!(ok(&["mem", "gres/gpu", "gres/gpu:a100"], vec![0; 6], 4));
        assert!(ok(&[], Vec::new(), 1));
        for bad in [
            "cpu",
            "gres/",
            "gres/:a100",
            "gres/gpu:",
            "license/x",
            "gpu",
        ] {
            assert!(!ok(&[bad], vec![0; 2], 1), "{bad}");
        }
        assert!(!ok(&["mem", "mem"], vec![0; 4], 1)); // named twice
        assert!(!ok(&["mem"], vec![0; 3], 1)); // one amount short... or over
        assert!(!ok(&["mem"], vec![0; 2], 3)); // a limit on a TRES the run does not count
    }
}
