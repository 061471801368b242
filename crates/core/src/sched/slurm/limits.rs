//! QOS limits on running jobs (`acct_policy.c`): per user (MaxJobsPerUser, MaxTRESPerUser),
//! per QOS (GrpJobs, GrpTRES) and per job (MaxTRESPerJob), on nodes, CPUs, memory and generic
//! resources. A job whose start would pass a limit stays pending (Slurm's `QOSMax*PerUser` /
//! `QOSGrp*` / `QOSMax*PerJob` reasons); neither scheduler lets it block its partition.
//!
//! A job's TRES are counted as Slurm counts them (docs/semantics.md, "QOS limits in TRES"):
//! what it holds once running (`tres_alloc_cnt`), what it asks while pending (`tres_req_cnt`),
//! in the order nodes, CPUs, then the run's other TRES (`SlurmSetup::tres`).

use std::collections::HashMap;

/// The place of nodes among a job's TRES.
pub const NODE: u32 = 0;
/// The place of CPUs among a job's TRES.
pub const CPU: u32 = 1;
/// TRES every run counts (nodes, CPUs), before `SlurmSetup::tres`.
pub const FIXED_TRES: usize = 2;

/// What a TRES limit bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// A user's running jobs in the QOS (`MaxTRESPerUser`).
    PerUser,
    /// Every running job of the QOS (`GrpTRES`).
    Group,
    /// Each job alone (`MaxTRESPerJob`, sacctmgr's `MaxTRES`).
    PerJob,
}

/// A limit of `most` on TRES `tres` (its place among a job's TRES: [`NODE`], [`CPU`], then
/// `SlurmSetup::tres`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TresLimit {
    pub scope: Scope,
    pub tres: u32,
    pub most: u64,
}

/// One QOS: its priority and limits (`None`, or no [`TresLimit`]: no limit).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Qos {
    pub priority: u32,
    pub max_jobs_per_user: Option<u32>,
    pub grp_jobs: Option<u32>,
    /// Jobs a user may have pending or running in the QOS: more are refused at submission
    /// (the engine's [`SubmitLimits`](crate::engine::SubmitLimits), not a running limit).
    pub max_submit_jobs_per_user: Option<u32>,
    pub tres: Vec<TresLimit>,
}

impl Qos {
    /// Whether it limits running jobs at all.
    pub fn limits(&self) -> bool {
        self.max_jobs_per_user.is_some() || self.grp_jobs.is_some() || !self.tres.is_empty()
    }

    /// The QOS with a limit of `most` on TRES `tres` over `scope` added.
    pub fn with(mut self, scope: Scope, tres: u32, most: u64) -> Self {
        self.tres.push(TresLimit { scope, tres, most });
        self
    }
}

/// What is running, counted per (QOS, user) and per QOS: jobs, then each TRES.
#[derive(Debug, Clone, Default)]
pub struct Usage {
    /// Counts per row: jobs, then the TRES.
    width: usize,
    /// The row of each (QOS, user) in `rows`, after the QOS' own.
    per_user: HashMap<(u32, u32), usize>,
    /// One row per QOS, then one per (QOS, user) seen.
    rows: Vec<u64>,
    qos_count: usize,
}

impl Usage {
    /// Nothing runs, in `qos_count` QOS counting `tres` TRES each.
    pub fn clear(&mut self, qos_count: usize, tres: usize) {
        self.width = 1 + tres;
        self.qos_count = qos_count;
        self.per_user.clear();
        self.rows.clear();
        self.rows.resize(qos_count * self.width, 0);
    }

    fn row(&self, r: usize) -> &[u64] {
        &self.rows[r * self.width..(r + 1) * self.width]
    }

    /// A job of `user` in `qos` holding `amounts` (one per TRES) runs.
    pub fn add(&mut self, qos: u32, user: u32, amounts: &[u64]) {
        debug_assert_eq!(amounts.len() + 1, self.width);
        let next = self.qos_count + self.per_user.len(); // (the rows so far)
        let mine = *self.per_user.entry((qos, user)).or_insert(next);
        if mine == next {
            self.rows.resize((next + 1) * self.width, 0);
        }
        for r in [qos as usize, mine] {
            let row = &mut self.rows[r * self.width..(r + 1) * self.width];
            row[0] += 1;
            for (used, &a) in row[1..].iter_mut().zip(amounts) {
                *used += a;
            }
        }
    }

    /// Whether a job of `user` in `qos` holding `amounts` may start within `limits` given what
    /// runs (`_qos_job_runnable_pre_select` for jobs, `_post_select` for TRES: a job's amount
    /// over a per-job limit, or what runs plus its amount over a user's or the QOS' limit).
    pub fn admits(&self, limits: &Qos, qos: u32, user: u32, amounts: &[u64]) -> bool {
        let group = self.row(qos as usize);
        let mine = self.per_user.get(&(qos, user)).map(|&r| self.row(r));
        let jobs_mine = mine.map_or(0, |m| m[0]);
        if limits
            .max_jobs_per_user
            .is_some_and(|m| jobs_mine >= u64::from(m))
            || limits.grp_jobs.is_some_and(|m| group[0] >= u64::from(m))
        {
            return false;
        }
        limits.tres.iter().all(|l| {
            let t = l.tres as usize;
            let used = match l.scope {
                Scope::PerJob => 0,
                Scope::Group => group[1 + t],
                Scope::PerUser => mine.map_or(0, |m| m[1 + t]),
            };
            used + amounts[t] <= l.most
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_user_and_group_limits_count_running_jobs_and_each_tres() {
        // TRES: nodes, CPUs, memory
        let qos = Qos {
            max_jobs_per_user: Some(2),
            ..Qos::default()
        }
        .with(Scope::PerUser, NODE, 4)
        .with(Scope::Group, CPU, 100)
        .with(Scope::PerUser, 2, 1000)
        .with(Scope::PerJob, 2, 600);
        let mut usage = Usage::default();
        usage.clear(2, 3);
        assert!(usage.admits(&qos, 0, 7, &[4, 10, 600]));
        assert!(!usage.admits(&qos, 0, 7, &[5, 10, 0])); // over 4 nodes alone
        assert!(!usage.admits(&qos, 0, 7, &[1, 10, 601])); // over 600 MB a job
        usage.add(0, 7, &[1, 40, 500]);
        assert!(!usage.admits(&qos, 0, 7, &[1, 1, 501])); // 1001 MB for user 7
        assert!(usage.admits(&qos, 0, 7, &[1, 1, 500]));
        usage.add(0, 7, &[1, 40, 0]);
        assert!(!usage.admits(&qos, 0, 7, &[1, 1, 0])); // a third job of user 7
        assert!(usage.admits(&qos, 0, 8, &[1, 20, 600])); // another user
        assert!(!usage.admits(&qos, 0, 8, &[1, 21, 0])); // 101 CPUs in the QOS
        assert!(usage.admits(&qos, 1, 7, &[1, 21, 0])); // another QOS counts apart
        usage.add(1, 7, &[3, 60, 0]);
        assert!(!usage.admits(&qos, 1, 7, &[2, 1, 0])); // 5 nodes for user 7 in QOS 1
        assert!(!usage.admits(&qos, 0, 7, &[0, 0, 0])); // (QOS 0: still 2 jobs of user 7)
    }

    #[test]
    fn grp_jobs_counts_every_users_running_jobs() {
        let qos = Qos {
            grp_jobs: Some(2),
            ..Qos::default()
        };
        let mut usage = Usage::default();
        usage.clear(1, 2);
        assert!(usage.admits(&qos, 0, 7, &[1, 1]));
        usage.add(0, 7, &[1, 1]);
        assert!(usage.admits(&qos, 0, 8, &[1, 1]));
        usage.add(0, 8, &[1, 1]);
        assert!(!usage.admits(&qos, 0, 9, &[1, 1])); // a third job in the QOS
    }

    #[test]
    fn a_qos_limits_when_it_has_a_job_count_or_a_tres_limit() {
        assert!(!Qos::default().limits());
        let jobs = Qos {
            grp_jobs: Some(1),
            ..Qos::default()
        };
        assert!(jobs.limits());
        let submit = Qos {
            max_submit_jobs_per_user: Some(1),
            ..Qos::default()
        };
        assert!(!submit.limits());
        assert!(Qos::default().with(Scope::PerJob, CPU, 4).limits());
    }
}
