//! The read-only view a policy gets at each scheduling invocation.

use crate::engine::layer::PowerLayer;
use crate::engine::power::Node;
use crate::engine::state::Running;
use crate::model::{Downtime, JobTable, PowerModel};

/// What a real scheduler knows at time `now`: never the actual run time of a running job.
#[derive(Debug, Clone, Copy)]
pub struct View<'a> {
    pub now: f64,
    pub jobs: &'a JobTable,
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
            jobs,
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
        }
    }
}

impl View<'_> {
    /// A running job's estimated end: `max(start + requested time, now)`.
    #[inline]
    pub fn estimated_end(&self, running: &Running) -> f64 {
        running.requested_end.max(self.now)
    }

    /// Whether no decision can start a job now: no waiting job fits the free nodes (most
    /// invocations of a look-ahead's rollouts). With no power manager reading the decision,
    /// such an invocation's decision changes nothing in an engine that does not record.
    #[inline]
    pub fn starts_nothing(&self) -> bool {
        self.manager.is_none()
            && self
                .queue
                .iter()
                .all(|&j| self.jobs.get(j).nodes > self.free)
    }
}
