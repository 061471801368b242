//! The read-only view a policy gets at each scheduling invocation.

use crate::engine::layer::PowerLayer;
use crate::engine::power::Node;
use crate::engine::shared::SharedView;
use crate::engine::site::SiteView;
use crate::engine::state::Running;
use crate::model::{Downtime, JobTable, PowerModel};

/// What a scheduler may know of a job: everything but its actual run time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KnownJob {
    /// The trace's job id.
    pub id: i64,
    pub submit: f64,
    /// The estimate every planning decision uses (requested walltime).
    pub requested_time: f64,
    pub nodes: u32,
}

impl From<&crate::model::Job> for KnownJob {
    fn from(job: &crate::model::Job) -> Self {
        KnownJob {
            id: job.id,
            submit: job.submit,
            requested_time: job.requested_time,
            nodes: job.nodes,
        }
    }
}

/// The job table as a policy sees it: a job without its actual run time, so that no policy
/// can read a future it could not know (the honest look-ahead, enforced by the type).
///
/// A policy that tries does not compile:
///
/// ```compile_fail
/// use hpcsched_core::{Decision, Policy, View};
/// struct Clairvoyant;
/// impl Policy for Clairvoyant {
///     fn name(&self) -> String {
///         "clairvoyant".into()
///     }
///     fn decide(&mut self, view: &View, _: &mut Decision) {
///         let _ = view.jobs.get(view.queue[0]).run_time;
///     }
/// }
/// ```
///
/// while what it may know does:
///
/// ```
/// use hpcsched_core::{Decision, Policy, View};
/// struct Honest;
/// impl Policy for Honest {
///     fn name(&self) -> String {
///         "honest".into()
///     }
///     fn decide(&mut self, view: &View, _: &mut Decision) {
///         let _ = view.jobs.get(view.queue[0]).requested_time;
///     }
/// }
/// ```
#[derive(Debug, Clone, Copy)]
pub struct KnownJobs<'a>(&'a JobTable);

impl<'a> KnownJobs<'a> {
    pub fn new(table: &'a JobTable) -> Self {
        KnownJobs(table)
    }

    #[inline]
    pub fn get(&self, index: u32) -> KnownJob {
        KnownJob::from(self.0.get(index))
    }

    /// The user of job `index` (`-1` when unknown).
    #[inline]
    pub fn user(&self, index: u32) -> i64 {
        self.0.user(index)
    }

    /// `(log10(max(requested, 1)), log10(max(submit, 1)))` of job `index`.
    #[inline]
    pub fn logs(&self, index: u32) -> (f64, f64) {
        self.0.logs(index)
    }

    /// See [`JobTable::static_order`] (orders by what is known: submit, request, size).
    pub fn static_order(&self, slot: usize, build: impl FnOnce() -> Box<[u32]>) -> &'a [u32] {
        self.0.static_order(slot, build)
    }

    /// See [`JobTable::static_rank`].
    pub fn static_rank(&self, slot: usize, build: impl FnOnce() -> Box<[u32]>) -> &'a [u32] {
        self.0.static_rank(slot, build)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// What a real scheduler knows at time `now`: never the actual run time of a job.
#[derive(Debug, Clone, Copy)]
pub struct View<'a> {
    pub now: f64,
    pub jobs: KnownJobs<'a>,
    /// Jobs submitted so far: `jobs[..submitted]` are known; later ones are the future, which
    /// no policy may read.
    pub submitted: u32,
    pub machine_nodes: u32,
    /// Nodes that are up and not running anything.
    pub free: u32,
    /// Waiting jobs (indices into `jobs`), FCFS order (requeued jobs first).
    pub queue: &'a [u32],
    /// Running jobs sorted by (estimated end, job index).
    pub running: &'a [Running],
    /// Downtime windows in progress: (end, nodes down), by end.
    pub down_windows: &'a [(f64, u32)],
    /// Announced scheduled windows that have not started yet.
    pub announced: &'a [Downtime],
    /// Node power states (empty unless the policy manages power).
    pub nodes: &'a [Node],
    /// The platform's power model, when it has one (its first node group's).
    pub power: Option<&'a PowerModel>,
    /// The power model of each node group, when nodes have power states (`Node::group`
    /// indexes it).
    pub models: &'a [PowerModel],
    /// The power manager, when one manages the nodes: queue policies let it place jobs.
    pub manager: Option<&'a dyn PowerLayer>,
    /// Jobs submitted at this instant (recorded for power managers only).
    pub arrived: &'a [u32],
    /// Jobs completed at this instant: (job, start, end); their run time is now known
    /// (recorded for power managers only).
    pub completed: &'a [(u32, f64, f64)],
    /// The partitions and their nodes, on a platform with partitions.
    pub site: Option<SiteView<'a>>,
    /// Each node's free resources and each job's request, when jobs share nodes.
    pub shared: Option<SharedView<'a>>,
    /// Each job's place in an outside priority order (Slurm's multifactor priorities, set by
    /// a policy that keeps them: the ordering [`crate::sched::Heuristic::Slurm`] reads it);
    /// empty when there is none.
    pub ranks: &'a [u32],
}

impl<'a> View<'a> {
    /// A view with anonymous nodes: every job of `jobs` submitted, nothing down or announced,
    /// no power states or manager, no events of the instant (fields can be set after).
    pub fn anonymous(
        now: f64,
        jobs: &'a JobTable,
        machine_nodes: u32,
        free: u32,
        queue: &'a [u32],
        running: &'a [Running],
    ) -> Self {
        View {
            now,
            jobs: KnownJobs::new(jobs),
            submitted: jobs.len() as u32,
            machine_nodes,
            free,
            queue,
            running,
            down_windows: &[],
            announced: &[],
            nodes: &[],
            power: None,
            models: &[],
            manager: None,
            arrived: &[],
            completed: &[],
            site: None,
            shared: None,
            ranks: &[],
        }
    }
}

impl View<'_> {
    /// A running job's estimated end: `max(start + requested time, now)`.
    #[inline]
    pub fn estimated_end(&self, running: &Running) -> f64 {
        running.requested_end.max(self.now)
    }

    /// Job `job`'s place in the outside priority order ([`View::ranks`]); `u32::MAX` when it
    /// has none.
    #[inline]
    pub fn rank(&self, job: u32) -> u32 {
        self.ranks.get(job as usize).copied().unwrap_or(u32::MAX)
    }

    /// Whether no decision can start a job now: no waiting job fits the free nodes (most
    /// invocations of a look-ahead's rollouts). With no power manager reading the decision,
    /// such an invocation's decision changes nothing in an engine that does not record.
    /// A job might start now: a node is free or, where jobs share nodes, a node has a free
    /// CPU (every job asks for one).
    #[inline]
    pub fn has_room(&self) -> bool {
        self.free > 0
            || self.shared.is_some_and(|s| {
                let sets = s.model.sets.len() as u32;
                (0..sets).any(|set| s.state.tallies().get(set).with_cpus > 0)
            })
    }

    #[inline]
    pub fn starts_nothing(&self) -> bool {
        self.manager.is_none()
            && self.shared.is_none()
            && self
                .queue
                .iter()
                .all(|&j| self.jobs.get(j).nodes > self.free)
    }
}
