//! The mutable part of a simulation: small and cheap to clone.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::engine::layer::PowerLayer;
use crate::engine::power::{Nodes, STATES};
use crate::engine::queue::WaitQueue;
use crate::engine::submit_limit::Submitted;
use crate::engine::utilization::node_seconds;
use crate::model::{Downtime, Energy, PowerModel};

/// A running job as the scheduler knows it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Running {
    /// `start + requested time`: the estimate of its end, before clamping at `now`.
    pub requested_end: f64,
    pub job: u32,
    /// Nodes it holds (copied from the job table: the hot loops then never touch it).
    pub nodes: u32,
    pub start: f64,
}

/// A completion in the event queue: when the job really ends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Completion {
    pub end: f64,
    pub job: u32,
    pub nodes: u32,
    pub requested_end: f64,
}

impl Eq for Completion {}

impl Ord for Completion {
    // Reversed: BinaryHeap is a max-heap, we pop the earliest (end, job) first.
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .end
            .total_cmp(&self.end)
            .then(other.job.cmp(&self.job))
    }
}

impl PartialOrd for Completion {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Everything that changes during a run. Inputs (job table, calendar) are shared, not here.
#[derive(Debug, Clone, Default)]
pub struct SimState {
    pub now: f64,
    /// Next job (replay index) to be submitted.
    pub(crate) next_submit: u32,
    /// Next downtime boundary event to apply.
    pub(crate) next_boundary: u32,
    pub(crate) queue: WaitQueue,
    /// Running jobs sorted by (requested end, job).
    pub(crate) running: Vec<Running>,
    pub(crate) completions: BinaryHeap<Completion>,
    pub(crate) busy: u32,
    /// Windows in progress: (window index, end, nodes down).
    pub(crate) active: Vec<(u32, f64, u32)>,
    /// Windows in progress as the view shows them: (end, nodes down), by end.
    pub(crate) down_windows: Vec<(f64, u32)>,
    /// Announced scheduled windows not yet started.
    pub(crate) announced: Vec<Downtime>,
    pub(crate) down: u32,
    /// Running totals since the state was created (rewards of look-ahead search read them).
    pub(crate) metrics: Metrics,
    /// Node power states, when nodes have identities.
    pub(crate) nodes: Option<Nodes>,
    /// Free and held nodes of the site's atoms, on a platform with partitions.
    pub(crate) site: Option<crate::engine::site::SiteState>,
    /// Each node's free resources and each running job's, when jobs share nodes.
    pub(crate) shared: Option<crate::engine::shared::SharedState>,
    /// The power manager under the queue policy, if any.
    pub(crate) manager: Option<Box<dyn PowerLayer>>,
    /// The manager has prepared the current instant and not acted on it yet.
    pub(crate) pending_act: bool,
    /// Nodes each window in progress took down (with node identities).
    pub(crate) taken_down: Vec<(u32, Vec<u32>)>,
    /// Times at which the policy asked to be invoked.
    pub(crate) timers: BinaryHeap<Timer>,
    /// Jobs submitted at the current event time.
    pub(crate) arrived: Vec<u32>,
    /// Keep arrivals and completions until the next invocation (policies outside the engine
    /// get "the events since the last call"); power managers see each instant's.
    pub(crate) record_events: bool,
    /// Jobs completed at the current event time: (job, start, end).
    pub(crate) completed: Vec<(u32, f64, f64)>,
    /// Times at which to keep a copy of the running totals (a reward's horizon ends).
    pub(crate) marks: [Option<Mark>; MARKS],
    /// Invocations in a row that left jobs waiting with nothing else left to happen but
    /// timers (see `Engine::step`).
    pub(crate) fruitless_calls: u32,
    /// Each submission group's jobs pending or running (under submission limits).
    pub(crate) submitted: Submitted,
}

/// How many marks an engine keeps (a reward has at most this many horizon ends).
pub const MARKS: usize = 2;

/// The running totals as they were at time `at` (once the run has passed it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mark {
    pub at: f64,
    pub metrics: Option<Metrics>,
}

/// A requested invocation time (min-heap order).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Timer(pub f64);

impl Eq for Timer {}

impl Ord for Timer {
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.total_cmp(&self.0)
    }
}

impl PartialOrd for Timer {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Running totals of what happened since a state was created.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Metrics {
    /// Jobs started.
    pub started: u32,
    /// Sum of their waits (s).
    pub wait_sum: f64,
    /// The longest of their waits (s).
    pub wait_max: f64,
    /// Sum of their bounded slowdowns (tau = 10 s), with the run time the engine knows.
    pub bsld_sum: f64,
    /// Node-seconds of busy nodes (see `engine::utilization`, which integrates the same after
    /// the fact over any interval).
    pub busy_node_seconds: f64,
    /// Node-seconds of nodes that were up (not taken by a downtime window).
    pub up_node_seconds: f64,
    /// Node-seconds of nodes taken by downtime windows.
    pub down_node_seconds: f64,
    /// Node-seconds switching on, switching off and sleeping (nodes with power states).
    pub switching_on_node_seconds: f64,
    pub switching_off_node_seconds: f64,
    pub sleeping_node_seconds: f64,
    /// Node-seconds idle, counted from the node states themselves (with power states; else
    /// idle is what up nodes did not compute).
    pub counted_idle_node_seconds: Option<f64>,
    /// Energy (J) by node state (idle, computing, switching on, switching off, sleeping,
    /// down), counted from the node states and their groups' powers (with power states).
    pub state_energy_j: Option<[f64; STATES]>,
    /// Seconds elapsed.
    pub elapsed: f64,
    /// Where jobs share nodes: CPU-seconds held by running jobs, and of the CPUs up (0
    /// otherwise). A look-ahead's utilization reads these there.
    pub busy_cpu_seconds: f64,
    pub up_cpu_seconds: f64,
}

/// Bounded-slowdown threshold τ (s): run times shorter than this count as this long.
pub const BSLD_TAU: f64 = 10.0;

/// A job's bounded slowdown, `max(1, (wait + run) / max(run, τ))`: the one definition the
/// engine's metrics, the look-ahead's rewards and the Python summaries use.
#[inline]
pub fn bounded_slowdown(wait: f64, run_time: f64) -> f64 {
    ((wait + run_time) / run_time.max(BSLD_TAU)).max(1.0)
}

impl Metrics {
    /// Energy of the node-seconds spent in each state (or the energy counted state by state
    /// when the nodes had power states, possibly of several groups).
    pub fn energy(&self, model: &PowerModel) -> Energy {
        if let Some(j) = self.state_energy_j {
            return Energy {
                computing_j: j[1],
                idle_j: j[0],
                switching_on_j: j[2],
                switching_off_j: j[3],
                sleeping_j: j[4],
            };
        }
        Energy {
            computing_j: self.busy_node_seconds * model.computing_w,
            idle_j: self.idle_node_seconds() * model.idle_w,
            switching_on_j: self.switching_on_node_seconds * model.switching_on_w,
            switching_off_j: self.switching_off_node_seconds * model.switching_off_w,
            sleeping_j: self.sleeping_node_seconds * model.sleeping_w,
        }
    }

    pub(crate) fn on_start(&mut self, wait: f64, run_time: f64) {
        self.started += 1;
        self.wait_sum += wait;
        self.wait_max = self.wait_max.max(wait);
        self.bsld_sum += bounded_slowdown(wait, run_time);
    }

    pub(crate) fn elapse(&mut self, dt: f64, busy: u32, capacity: u32, down: u32) {
        if dt > 0.0 {
            self.elapsed += dt;
            self.busy_node_seconds += node_seconds(dt, f64::from(busy));
            self.up_node_seconds += node_seconds(dt, f64::from(capacity));
            self.down_node_seconds += node_seconds(dt, f64::from(down));
        }
    }

    /// On a site of node groups of their own power: `dt` seconds of each atom's (busy, idle)
    /// nodes at its model's power (nodes down draw nothing).
    pub(crate) fn elapse_atoms(&mut self, dt: f64, atoms: &[(u32, u32)], power: &[PowerModel]) {
        let energy = self.state_energy_j.get_or_insert([0.0; STATES]);
        if dt > 0.0 {
            for (&(busy, idle), model) in atoms.iter().zip(power) {
                energy[1] += dt * f64::from(busy) * model.computing_w;
                energy[0] += dt * f64::from(idle) * model.idle_w;
            }
        }
    }

    pub(crate) fn elapse_cpus(&mut self, dt: f64, busy: u64, up: u64) {
        if dt > 0.0 {
            self.busy_cpu_seconds += node_seconds(dt, busy as f64);
            self.up_cpu_seconds += node_seconds(dt, up as f64);
        }
    }

    pub(crate) fn elapse_power(&mut self, dt: f64, counts: [u32; STATES], power: [f64; STATES]) {
        let idle = self.counted_idle_node_seconds.get_or_insert(0.0);
        let energy = self.state_energy_j.get_or_insert([0.0; STATES]);
        if dt > 0.0 {
            for (e, p) in energy.iter_mut().zip(power) {
                *e += dt * p;
            }
            *idle += dt * f64::from(counts[0]);
            self.switching_on_node_seconds += dt * f64::from(counts[2]);
            self.switching_off_node_seconds += dt * f64::from(counts[3]);
            self.sleeping_node_seconds += dt * f64::from(counts[4]);
        }
    }

    /// Node-seconds of nodes up, awake and running nothing: counted node by node with power
    /// states, else the up node-seconds nothing ran on.
    pub fn idle_node_seconds(&self) -> f64 {
        self.counted_idle_node_seconds
            .unwrap_or(self.up_node_seconds - self.busy_node_seconds)
    }
}

impl SimState {
    pub fn queue(&self) -> &[u32] {
        self.queue.as_slice()
    }

    pub fn running(&self) -> &[Running] {
        &self.running
    }

    pub fn busy_nodes(&self) -> u32 {
        self.busy
    }

    pub fn down_nodes(&self) -> u32 {
        self.down
    }

    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The running totals at mark `slot`'s time, once the run has passed it.
    pub fn metrics_at_mark(&self, slot: usize) -> Option<&Metrics> {
        self.marks[slot].as_ref().and_then(|m| m.metrics.as_ref())
    }

    pub(crate) fn insert_running(&mut self, r: Running) {
        let key = order_key(r.requested_end, r.job);
        let pos = self
            .running
            .partition_point(|x| order_key(x.requested_end, x.job) < key);
        self.running.insert(pos, r);
    }

    pub(crate) fn remove_running(&mut self, job: u32, requested_end: f64) -> Running {
        let key = order_key(requested_end, job);
        let pos = self
            .running
            .partition_point(|x| order_key(x.requested_end, x.job) < key);
        debug_assert_eq!(self.running[pos].job, job);
        self.running.remove(pos)
    }
}

/// (time, job) as one integer ordered like `(t.total_cmp, job)`: integer compares keep the
/// binary searches over running jobs cheap.
#[inline]
fn order_key(t: f64, job: u32) -> u128 {
    let bits = t.to_bits();
    let monotone = if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    };
    (u128::from(monotone) << 32) | u128::from(job)
}
