//! The power layer: what the engine needs of a power manager under the queue policy (IPM,
//! SNF-ICON, ...), so that the engine knows this contract and not any one manager.
//!
//! At every instant with node power states the engine calls, in this order: `prepare` (the
//! instant's arrivals and completions), the queue policy (whose scan asks the layer to place
//! each job it starts and to plan the blocked head's nodes), then `act` once the starts are
//! applied (wakes, spares, shutdowns, timers).

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use crate::engine::log::LogTable;
use crate::engine::power::STATES;
use crate::engine::{Backfill, Decision, View};
use crate::error::Result;

/// What a call of the layer decides besides starts.
#[derive(Debug, Clone, Default)]
pub struct LayerActions {
    pub power_on: Vec<u32>,
    pub power_off: Vec<u32>,
    pub timers: Vec<f64>,
}

/// How to build a power layer: part of a run's inputs (and of a look-ahead's belief).
pub trait LayerSpec: Send + Sync + fmt::Debug {
    /// Refuses parameters the layer cannot run with.
    fn validate(&self) -> Result<()>;
    fn build(self: Arc<Self>) -> Box<dyn PowerLayer>;
}

/// A power layer under the queue policy. Its state is part of the simulation state: look-ahead
/// search clones it with the rest, so that a forward model sees the power decisions the real
/// run would take.
pub trait PowerLayer: Send + Sync + fmt::Debug {
    /// Consumes the instant's arrivals and completions; `changed` lists the nodes changed
    /// since the previous call's `act`.
    fn prepare(&mut self, view: &View, changed: &[u32]);
    /// The scan of a queue policy on nodes with identities: starts jobs in the order of
    /// `positions`, each on nodes the layer chooses, and with EASY plans the blocked head's.
    fn scan(&self, view: &View, positions: &[u32], backfill: Backfill, decision: &mut Decision);
    /// `count` idle nodes, not `taken`, for a job a decision did not place (empty: none).
    fn place(&self, view: &View, count: u32, taken: &[bool]) -> Vec<u32>;
    /// After the instant's starts: what to switch on and off, and when to be called again.
    /// `record` asks for a row of the layer's log; `changed` lists the nodes changed since
    /// `prepare`, `group_counts` the node counts per state of each group.
    fn act(
        &mut self,
        view: &View,
        decision: &Decision,
        record: bool,
        changed: &[u32],
        group_counts: &[[u32; STATES]],
    ) -> LayerActions;
    /// A copy of the layer (look-ahead); its log starts empty.
    fn clone_layer(&self) -> Box<dyn PowerLayer>;
    /// A copy for a look-ahead over nodes built anew, with job `j` renamed `rename(j)`.
    fn for_belief(&self, rename: &dyn Fn(u32) -> u32) -> Box<dyn PowerLayer>;
    /// How to build a fresh layer like this one (a look-ahead's belief).
    fn spec(&self) -> Arc<dyn LayerSpec>;
    /// Keeps every candidate of each logged call too (`--decision-log full`).
    fn set_log_detail(&mut self, on: bool);
    /// Rows waiting in the layer's log.
    fn log_rows(&self) -> usize;
    /// Takes the layer's log out as columns.
    fn take_log(&mut self) -> LogTable;
    /// The layer itself, for callers that know its type (tests, the layer's own module).
    fn as_any(&self) -> &dyn Any;
}

impl Clone for Box<dyn PowerLayer> {
    fn clone(&self) -> Self {
        self.clone_layer()
    }
}
