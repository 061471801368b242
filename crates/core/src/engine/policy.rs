//! The decision contract: a policy gets a read-only [`View`] and fills a [`Decision`], which the
//! engine validates and applies. Policies never touch the simulation state.

use std::fmt;
use std::sync::Arc;

use crate::engine::log::LogTable;
use crate::engine::{Reserve, Start, View};

/// Whether the jobs behind a blocked top job may start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Backfill {
    #[default]
    Easy,
    None,
}

impl Backfill {
    pub const NAMES: [&'static str; 2] = ["easy", "none"];

    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "easy" => Some(Backfill::Easy),
            "none" => Some(Backfill::None),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Backfill::Easy => "easy",
            Backfill::None => "none",
        }
    }
}

/// How a queue policy serves the queue, for a power layer that plans the waiting jobs the way
/// the policy will serve them (which sleeping nodes to wake, and when).
pub trait QueueService: Send + Sync + fmt::Debug {
    /// The queue positions of the view's waiting jobs in the order the policy considers them.
    fn positions(&self, view: &View) -> Vec<u32>;
    /// Whether jobs behind a blocked top job may start.
    fn backfill(&self) -> Backfill;
}

/// What a policy decides at one invocation.
#[derive(Debug, Clone, Default)]
pub struct Decision {
    pub starts: Vec<Start>,
    /// The nodes of each start, one list after the other in start order (a power manager
    /// places jobs); empty: the engine chooses.
    pub nodes: Vec<u32>,
    /// How the policy serves the queue (a power manager plans the waiting jobs by it).
    pub rule: Option<Arc<dyn QueueService>>,
    pub reservation: Option<Reserve>,
    /// The nodes the reservation holds until its shadow time (under a power manager).
    pub held: Vec<u32>,
    /// Nodes to switch on (sleeping, or switching off: then as soon as asleep).
    pub power_on: Vec<u32>,
    /// Idle nodes to switch off.
    pub power_off: Vec<u32>,
    /// Times at which the policy wants to be invoked again.
    pub timers: Vec<f64>,
    /// On a site, each start's partition and the end of its nodes in `takes` (they begin
    /// where the previous start's end), in start order.
    pub site_starts: Vec<(u32, u32)>,
    /// On a site, the nodes of the starts: (atom, count) pairs (`model::site`).
    pub takes: Vec<(u32, u32)>,
    /// When jobs share nodes, what each start takes, in start order.
    pub allocations: Vec<crate::packing::Allocation>,
}

impl Decision {
    pub fn clear(&mut self) {
        self.starts.clear();
        self.nodes.clear();
        self.rule = None;
        self.reservation = None;
        self.held.clear();
        self.power_on.clear();
        self.power_off.clear();
        self.timers.clear();
        self.site_starts.clear();
        self.takes.clear();
        self.allocations.clear();
    }
}

/// A scheduling policy: called once per invocation with a read-only view.
pub trait Policy: Send + Sync {
    fn name(&self) -> String;
    fn decide(&mut self, view: &View, decision: &mut Decision);
    /// Whether the policy reads the jobs completed since its last call (`View::completed`):
    /// the engine then keeps them for it.
    fn observes_events(&self) -> bool {
        false
    }
    /// Asks a policy that keeps a decision log to keep every candidate of each decision too
    /// (`--decision-log full`); off by default, since the candidates grow with the branching.
    fn set_decision_detail(&mut self, _on: bool) {}
    /// Rows (decisions and candidates) waiting in the policy's decision log.
    fn log_rows(&self) -> usize {
        0
    }
    /// Takes the decision log out of the policy as columns (it is written to disk as a run
    /// goes): empty for policies that keep none.
    fn take_log(&mut self) -> LogTable {
        LogTable::default()
    }
}
