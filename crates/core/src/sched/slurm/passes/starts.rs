//! What both schedulers' passes keep of the jobs they test and start, on whole or shared
//! nodes alike: the QOS usage (limits), the jobs each user had tested in a backfill cycle
//! (`bf_max_job_user`), and a start's entry in the decision.
//!
//! A job's TRES for the QOS limits (`limits`): pending, what it asks (Slurm's `tres_req_cnt`:
//! its nodes, its CPUs, `SlurmJobs::tres`); running, or tested at a start on shared nodes,
//! what its allocation holds (`tres_alloc_cnt`: its nodes, their CPUs, their memory, its
//! generic resources per node times its nodes, an exclusive job's nodes' all). On whole nodes
//! the two are the same.

use crate::engine::{Decision, SharedView, Start, StartKind, View};
use crate::model::SharedNodes;
use crate::packing::Allocation;
use crate::sched::slurm::limits::FIXED_TRES;
use crate::sched::slurm::passes::{Entry, Passes};
use crate::sched::slurm::setup::SlurmSetup;

/// What a job started holds, for the QOS usage.
#[derive(Debug, Clone, Copy)]
pub(super) enum Held<'a> {
    /// Whole nodes: this many.
    Nodes(u32),
    /// Part of shared nodes.
    Allocation(&'a SharedNodes, &'a Allocation),
}

/// Job `j`'s TRES as it asks them, on `nodes` nodes, into `out`.
fn asked(setup: &SlurmSetup, j: usize, nodes: u32, out: &mut Vec<u64>) {
    out.clear();
    out.push(u64::from(nodes));
    out.push(u64::from(setup.jobs.cpus[j]));
    out.extend_from_slice(setup.jobs.tres_of(j, setup.tres.len()));
}

/// Job `j`'s TRES as `allocation` holds them, into `out`: its nodes, CPUs and memory (none
/// where memory is not a resource: cons_tres allocates none), and for each `gres/NAME[:TYPE]`
/// what it asks per node times its nodes, or for an exclusive job its nodes' own
/// (`_handle_exclusive_gres`).
fn allocated(
    setup: &SlurmSetup,
    model: &SharedNodes,
    j: usize,
    allocation: &Allocation,
    out: &mut Vec<u64>,
) {
    let nodes = allocation.nodes.len() as u64;
    out.clear();
    out.push(nodes);
    out.push(allocation.total_cpus());
    let asked = setup.jobs.tres_of(j, setup.tres.len());
    let per_node = u64::from(model.requests[j].nodes.unwrap_or(1).max(1));
    let kinds = model.resources.gres_names().len();
    for (name, &amount) in setup.tres.iter().zip(asked) {
        out.push(match name.strip_prefix("gres/") {
            None => allocation.total_memory(),
            Some(gres) if allocation.exclusive => (model.resources.gres_kinds(gres).iter())
                .map(|&k| allocation.total_gres(k as usize, kinds))
                .sum(),
            Some(_) => amount / per_node * nodes,
        });
    }
}

/// Job `j`'s TRES as `held` holds them, into `out`; its nodes where jobs share them (each
/// counts once toward a user's and a QOS' nodes, `limits::Usage`).
fn held_amounts<'a>(
    setup: &SlurmSetup,
    j: usize,
    held: Held<'a>,
    out: &mut Vec<u64>,
) -> Option<&'a [u32]> {
    match held {
        Held::Nodes(nodes) => {
            asked(setup, j, nodes, out);
            None
        }
        Held::Allocation(model, a) => {
            allocated(setup, model, j, a, out);
            Some(&a.nodes)
        }
    }
}

impl Passes {
    /// The QOS usage of the running jobs, when a QOS has limits.
    pub(super) fn count_limits(&mut self, view: &View, setup: &SlurmSetup) {
        if self.limits_on {
            self.usage
                .clear(setup.qos.len(), FIXED_TRES + setup.tres.len());
            let mut amounts = std::mem::take(&mut self.amounts);
            for r in view.running {
                let j = r.job as usize;
                let held = match view.shared {
                    Some(shared) => Held::Allocation(
                        shared.model,
                        (shared.state.allocation(r.job))
                            .expect("a running job holds an allocation"),
                    ),
                    None => Held::Nodes(r.nodes),
                };
                let nodes = held_amounts(setup, j, held, &mut amounts);
                let (qos, user) = (setup.jobs.qos[j], setup.jobs.user[j]);
                self.usage.add(qos, user, &amounts, nodes);
            }
            self.amounts = amounts;
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
    /// counts what it holds in the QOS usage: what every start of either scheduler records.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn push_start(
        &mut self,
        view: &View,
        setup: &SlurmSetup,
        e: &Entry,
        kind: StartKind,
        held: Held<'_>,
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
            let mut amounts = std::mem::take(&mut self.amounts);
            let nodes = held_amounts(setup, j, held, &mut amounts);
            let (qos, user) = (setup.jobs.qos[j], setup.jobs.user[j]);
            self.usage.add(qos, user, &amounts, nodes);
            self.amounts = amounts;
        }
    }

    /// Whether pending `job`'s QOS limits let it start, on what it asks.
    pub(super) fn admits(&mut self, setup: &SlurmSetup, view: &View, job: u32) -> bool {
        if !self.limits_on {
            return true;
        }
        let mut amounts = std::mem::take(&mut self.amounts);
        asked(setup, job as usize, view.jobs.get(job).nodes, &mut amounts);
        let ok = self.within(setup, job, &amounts, None);
        self.amounts = amounts;
        ok
    }

    /// Whether `job`'s QOS limits let it start with `allocation` (Slurm tests a start on what
    /// its nodes give it: `select_nodes`, then `acct_policy_job_runnable_post_select`).
    pub(super) fn admits_allocation(
        &mut self,
        setup: &SlurmSetup,
        shared: SharedView,
        job: u32,
        allocation: &Allocation,
    ) -> bool {
        if !self.limits_on {
            return true;
        }
        let mut amounts = std::mem::take(&mut self.amounts);
        let held = Held::Allocation(shared.model, allocation);
        let nodes = held_amounts(setup, job as usize, held, &mut amounts);
        let ok = self.within(setup, job, &amounts, nodes);
        self.amounts = amounts;
        ok
    }

    /// `nodes`: where jobs share nodes, those the job would hold (see `Usage::admits`).
    fn within(&self, setup: &SlurmSetup, job: u32, amounts: &[u64], nodes: Option<&[u32]>) -> bool {
        let j = job as usize;
        let (qos, user) = (setup.jobs.qos[j], setup.jobs.user[j]);
        (self.usage).admits(&setup.qos[qos as usize], qos, user, amounts, nodes)
    }
}
