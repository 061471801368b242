//! QOS limits on running jobs (`acct_policy.c`): per user (MaxJobsPerUser, MaxTRESPerUser on
//! nodes and CPUs) and per QOS (GrpJobs, GrpTRES on nodes and CPUs). A job whose start would
//! pass a limit stays pending (Slurm's `QOSMax*PerUser` / `QOSGrp*` reasons); neither scheduler
//! lets it block its partition.

use std::collections::HashMap;

/// One QOS: its priority and limits (`None`: no limit).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Qos {
    pub priority: u32,
    pub max_jobs_per_user: Option<u32>,
    pub max_nodes_per_user: Option<u32>,
    pub max_cpus_per_user: Option<u32>,
    pub grp_jobs: Option<u32>,
    pub grp_nodes: Option<u32>,
    pub grp_cpus: Option<u32>,
    /// Jobs a user may have pending or running in the QOS: more are refused at submission
    /// (the engine's [`SubmitLimits`](crate::engine::SubmitLimits), not a running limit).
    pub max_submit_jobs_per_user: Option<u32>,
}

impl Qos {
    /// Whether it limits running jobs at all.
    pub fn limits(&self) -> bool {
        self.max_jobs_per_user.is_some()
            || self.max_nodes_per_user.is_some()
            || self.max_cpus_per_user.is_some()
            || self.grp_jobs.is_some()
            || self.grp_nodes.is_some()
            || self.grp_cpus.is_some()
    }
}

/// What is running, counted per (QOS, user) and per QOS: jobs, nodes, CPUs.
#[derive(Debug, Clone, Default)]
pub struct Usage {
    per_user: HashMap<(u32, u32), [u64; 3]>,
    per_qos: Vec<[u64; 3]>,
}

impl Usage {
    pub fn clear(&mut self, qos_count: usize) {
        self.per_user.clear();
        self.per_qos.clear();
        self.per_qos.resize(qos_count, [0; 3]);
    }

    /// A job of `user` in `qos` of `nodes` nodes and `cpus` CPUs runs.
    pub fn add(&mut self, qos: u32, user: u32, nodes: u32, cpus: u32) {
        let add = |c: &mut [u64; 3]| {
            c[0] += 1;
            c[1] += u64::from(nodes);
            c[2] += u64::from(cpus);
        };
        add(self.per_user.entry((qos, user)).or_default());
        add(&mut self.per_qos[qos as usize]);
    }

    /// Whether such a job may start within `limits` given what runs.
    pub fn admits(&self, limits: &Qos, qos: u32, user: u32, nodes: u32, cpus: u32) -> bool {
        let within = |used: &[u64; 3], jobs: Option<u32>, n: Option<u32>, c: Option<u32>| {
            jobs.is_none_or(|m| used[0] < u64::from(m))
                && n.is_none_or(|m| used[1] + u64::from(nodes) <= u64::from(m))
                && c.is_none_or(|m| used[2] + u64::from(cpus) <= u64::from(m))
        };
        let none = [0; 3];
        let mine = self.per_user.get(&(qos, user)).unwrap_or(&none);
        within(
            mine,
            limits.max_jobs_per_user,
            limits.max_nodes_per_user,
            limits.max_cpus_per_user,
        ) && within(
            &self.per_qos[qos as usize],
            limits.grp_jobs,
            limits.grp_nodes,
            limits.grp_cpus,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_user_and_group_limits_count_running_jobs_nodes_and_cpus() {
        let qos = Qos {
            max_jobs_per_user: Some(2),
            max_nodes_per_user: Some(4),
            grp_cpus: Some(100),
            ..Qos::default()
        };
        let mut usage = Usage::default();
        usage.clear(1);
        assert!(usage.admits(&qos, 0, 7, 4, 10));
        assert!(!usage.admits(&qos, 0, 7, 5, 10)); // over 4 nodes alone
        usage.add(0, 7, 1, 40);
        usage.add(0, 7, 1, 40);
        assert!(!usage.admits(&qos, 0, 7, 1, 1)); // a third job of user 7
        assert!(usage.admits(&qos, 0, 8, 1, 20)); // another user
        assert!(!usage.admits(&qos, 0, 8, 1, 21)); // 101 CPUs in the QOS
    }
}
