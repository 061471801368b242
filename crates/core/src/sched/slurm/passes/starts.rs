//! What both schedulers' passes keep of the jobs they test and start, on whole or shared
//! nodes alike: the QOS usage (limits), the jobs each user had tested in a backfill cycle
//! (`bf_max_job_user`), and a start's entry in the decision.

use crate::engine::{Decision, Start, StartKind, View};
use crate::sched::slurm::passes::{Entry, Passes};
use crate::sched::slurm::setup::SlurmSetup;

impl Passes {
    /// The QOS usage of the running jobs, when a QOS has limits.
    pub(super) fn count_limits(&mut self, view: &View, setup: &SlurmSetup) {
        if self.limits_on {
            self.usage.clear(setup.qos.len());
            for r in view.running {
                let j = r.job as usize;
                let (qos, user, cpus) = (setup.jobs.qos[j], setup.jobs.user[j], setup.jobs.cpus[j]);
                self.usage.add(qos, user, r.nodes, cpus);
            }
        }
    }

    /// Whether a backfill cycle tests entry `e`: it waits, is within its QOS limits and, under
    /// `bf_max_job_user`, its user has not had that many tested (counted here when not).
    pub(super) fn backfill_tests(
        &mut self,
        view: &View,
        setup: &SlurmSetup,
        e: &Entry,
        waiting: &[bool],
    ) -> bool {
        if !waiting[e.job as usize] || !self.admits(setup, view, e.job) {
            return false;
        }
        let most = setup.scheduler.bf_max_job_user;
        if most > 0 {
            let count = (self.per_user)
                .entry(setup.jobs.user[e.job as usize])
                .or_insert(0);
            if *count >= most {
                return false;
            }
            *count += 1;
        }
        true
    }

    /// Puts entry `e`'s start in the decision (at its place in the queue, as `kind`), and
    /// counts its `nodes` in the QOS usage: what every start of either scheduler records.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn push_start(
        &mut self,
        view: &View,
        setup: &SlurmSetup,
        e: &Entry,
        kind: StartKind,
        nodes: u32,
        waiting: &mut [bool],
        decision: &mut Decision,
    ) {
        let pos = view
            .queue
            .iter()
            .position(|&q| q == e.job)
            .expect("a waiting job is in the queue") as u32;
        decision.starts.push(Start {
            pos,
            job: e.job,
            kind,
        });
        waiting[e.job as usize] = false;
        if self.limits_on {
            let j = e.job as usize;
            let (qos, user, cpus) = (setup.jobs.qos[j], setup.jobs.user[j], setup.jobs.cpus[j]);
            self.usage.add(qos, user, nodes, cpus);
        }
    }

    pub(super) fn admits(&self, setup: &SlurmSetup, view: &View, job: u32) -> bool {
        if !self.limits_on {
            return true;
        }
        let j = job as usize;
        let qos = setup.jobs.qos[j];
        self.usage.admits(
            &setup.qos[qos as usize],
            qos,
            setup.jobs.user[j],
            view.jobs.get(job).nodes,
            setup.jobs.cpus[j],
        )
    }
}
