//! QOS limits on running jobs (`acct_policy.c`): per user (MaxJobsPerUser, MaxTRESPerUser),
//! per QOS (GrpJobs, GrpTRES) and per job (MaxTRESPerJob), on nodes, CPUs, memory and generic
//! resources. A job whose start would pass a limit stays pending (Slurm's `QOSMax*PerUser` /
//! `QOSGrp*` / `QOSMax*PerJob` reasons); neither scheduler lets it block its partition.
//!
//! A job's TRES are counted as Slurm counts them (docs/semantics.md, "QOS limits in TRES"):
//! what it holds once running (`tres_alloc_cnt`), what it asks while pending (`tres_req_cnt`),
//! in the order nodes, CPUs, then the run's other TRES (`SlurmSetup::tres`). Where jobs share
//! nodes, a user's (and a QOS') nodes are counted once however many of its jobs hold each, and
//! a start adds only the nodes it does not hold yet (`_add_usage_node_bitmap`,
//! `_get_unique_job_node_cnt`).

use std::collections::{HashMap, HashSet};

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
    /// Where jobs share nodes: the (row, node) pairs where a running job of the row holds the
    /// node (Slurm's `node_bitmap`; rebuilt at every invocation, so no job count is needed).
    held_nodes: HashSet<(usize, u32)>,
}

impl Usage {
    /// Nothing runs, in `qos_count` QOS counting `tres` TRES each.
    pub fn clear(&mut self, qos_count: usize, tres: usize) {
        self.width = 1 + tres;
        self.qos_count = qos_count;
        self.per_user.clear();
        self.rows.clear();
        self.rows.resize(qos_count * self.width, 0);
        self.held_nodes.clear();
    }

    fn row(&self, r: usize) -> &[u64] {
        &self.rows[r * self.width..(r + 1) * self.width]
    }

    /// A job of `user` in `qos` holding `amounts` (one per TRES) runs; `nodes`: the nodes it
    /// holds where jobs share them (`None`: whole nodes, no two jobs on one).
    pub fn add(&mut self, qos: u32, user: u32, amounts: &[u64], nodes: Option<&[u32]>) {
        debug_assert_eq!(amounts.len() + 1, self.width);
        let next = self.qos_count + self.per_user.len(); // (the rows so far)
        let mine = *self.per_user.entry((qos, user)).or_insert(next);
        if mine == next {
            self.rows.resize((next + 1) * self.width, 0);
        }
        for r in [qos as usize, mine] {
            // (on shared nodes, its nodes the row does not hold yet, not all of them)
            let new_nodes = nodes.map(|nodes| {
                let new = self.new_nodes(r, nodes);
                self.held_nodes.extend(nodes.iter().map(|&n| (r, n)));
                new
            });
            let row = &mut self.rows[r * self.width..(r + 1) * self.width];
            row[0] += 1;
            for (t, (used, &a)) in row[1..].iter_mut().zip(amounts).enumerate() {
                *used += match new_nodes {
                    Some(new) if t == NODE as usize => new,
                    _ => a,
                };
            }
        }
    }

    /// Of `nodes`, those row `r`'s running jobs do not hold yet.
    fn new_nodes(&self, r: usize, nodes: &[u32]) -> u64 {
        let held = |n: &&u32| self.held_nodes.contains(&(r, **n));
        nodes.iter().filter(|n| !held(n)).count() as u64
    }

    /// Whether a job of `user` in `qos` holding `amounts` may start within `limits` given what
    /// runs (`_qos_job_runnable_pre_select` for jobs, `_post_select` for TRES: a job's amount
    /// over a per-job limit, or what runs plus its amount over a user's or the QOS' limit);
    /// `nodes`: where jobs share nodes, those it would hold (only the ones not held yet add to
    /// a user's or the QOS' nodes), `None` to count its nodes all.
    pub fn admits(
        &self,
        limits: &Qos,
        qos: u32,
        user: u32,
        amounts: &[u64],
        nodes: Option<&[u32]>,
    ) -> bool {
        let group = self.row(qos as usize);
        let mine_row = self.per_user.get(&(qos, user)).copied();
        let mine = mine_row.map(|r| self.row(r));
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
            let (used, row) = match l.scope {
                Scope::PerJob => (0, None),
                Scope::Group => (group[1 + t], Some(qos as usize)),
                Scope::PerUser => (mine.map_or(0, |m| m[1 + t]), mine_row),
            };
            let amount = match (nodes, row) {
                (Some(nodes), Some(r)) if l.tres == NODE => self.new_nodes(r, nodes),
                _ => amounts[t],
            };
            used + amount <= l.most
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
        assert!(usage.admits(&qos, 0, 7, &[4, 10, 600], None));
        assert!(!usage.admits(&qos, 0, 7, &[5, 10, 0], None)); // over 4 nodes alone
        assert!(!usage.admits(&qos, 0, 7, &[1, 10, 601], None)); // over 600 MB a job
        usage.add(0, 7, &[1, 40, 500], None);
        assert!(!usage.admits(&qos, 0, 7, &[1, 1, 501], None)); // 1001 MB for user 7
        assert!(usage.admits(&qos, 0, 7, &[1, 1, 500], None));
        usage.add(0, 7, &[1, 40, 0], None);
        assert!(!usage.admits(&qos, 0, 7, &[1, 1, 0], None)); // a third job of user 7
        assert!(usage.admits(&qos, 0, 8, &[1, 20, 600], None)); // another user
        assert!(!usage.admits(&qos, 0, 8, &[1, 21, 0], None)); // 101 CPUs in the QOS
        assert!(usage.admits(&qos, 1, 7, &[1, 21, 0], None)); // another QOS counts apart
        usage.add(1, 7, &[3, 60, 0], None);
        assert!(!usage.admits(&qos, 1, 7, &[2, 1, 0], None)); // 5 nodes for user 7 in QOS 1
        assert!(!usage.admits(&qos, 0, 7, &[0, 0, 0], None)); // (QOS 0: still 2 jobs of user 7)
    }

    #[test]
    fn on_shared_nodes_a_users_and_a_qos_nodes_count_once() {
        // MaxTRESPerUser node=2, GrpTRES node=3 (TRES: nodes, CPUs). User 7's two jobs on
        // node 0 hold one node; a job on nodes 0 and 1 adds one (2); then one on node 2 would
        // make 3 for user 7. User 8 on node 2: the QOS holds nodes 0-2 (3), so a job of
        // user 8 on node 3 would make 4, one on node 1 adds none.
        let qos = Qos::default()
            .with(Scope::PerUser, NODE, 2)
            .with(Scope::Group, NODE, 3);
        let mut usage = Usage::default();
        usage.clear(1, 2);
        usage.add(0, 7, &[1, 1], Some(&[0]));
        usage.add(0, 7, &[1, 1], Some(&[0]));
        assert!(usage.admits(&qos, 0, 7, &[2, 2], Some(&[0, 1])));
        // (counted per job, as on whole nodes, the two jobs already hold 2)
        assert!(!usage.admits(&qos, 0, 7, &[2, 2], None));
        usage.add(0, 7, &[2, 2], Some(&[0, 1]));
        assert!(usage.admits(&qos, 0, 7, &[1, 1], Some(&[1])));
        assert!(!usage.admits(&qos, 0, 7, &[1, 1], Some(&[2])));
        usage.add(0, 8, &[1, 1], Some(&[2]));
        assert!(!usage.admits(&qos, 0, 8, &[1, 1], Some(&[3])));
        assert!(usage.admits(&qos, 0, 8, &[1, 1], Some(&[1])));
        // a job's own nodes against a per-job limit: all of them
        let per_job = Qos::default().with(Scope::PerJob, NODE, 1);
        assert!(!usage.admits(&per_job, 0, 7, &[2, 2], Some(&[0, 1])));
    }

    #[test]
    fn grp_jobs_counts_every_users_running_jobs() {
        let qos = Qos {
            grp_jobs: Some(2),
            ..Qos::default()
        };
        let mut usage = Usage::default();
        usage.clear(1, 2);
        assert!(usage.admits(&qos, 0, 7, &[1, 1], None));
        usage.add(0, 7, &[1, 1], None);
        assert!(usage.admits(&qos, 0, 8, &[1, 1], None));
        usage.add(0, 8, &[1, 1], None);
        assert!(!usage.admits(&qos, 0, 9, &[1, 1], None)); // a third job in the QOS
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
