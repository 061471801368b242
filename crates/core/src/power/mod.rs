//! Energy-aware power management: the IPM baseline and SNF-ICON (SNF-ICON paper §III-V), as a
//! layer of the engine under any queue policy.
//!
//! - [`config`]: the managers' parameters and their decision log rows;
//! - [`log`]: the decision log, handed out as the engine's generic columns;
//! - [`manager`]: the layer itself (the engine's `PowerLayer`: prepare, place jobs, act), by
//!   job: placement, timeouts, wakes, spares;
//! - [`stats`]: SNF-ICON's online statistics;
//! - [`screen`]: the Markovianity screen;
//! - [`predict`]: the log-normal runtime predictor;
//! - [`plan`]: the release agenda and the sequential future plan with the energy-aware node
//!   choice;
//! - [`easy_plan`]: the future plan of a queue served with EASY (PSAS);
//! - [`classes`], [`easy_classes`]: the same plans on classes of alike nodes, which
//!   [`node_index`] keeps from the nodes' journal of changes;
//! - [`planner`]: both kinds of plan behind one interface (`Planner`: `ByNode`, `ByClass`);
//! - [`spare`]: the warm-spare target optimisation.

pub mod classes;
pub mod config;
pub mod easy_classes;
pub mod easy_plan;
pub mod log;
pub mod manager;
pub mod node_index;
pub mod plan;
pub mod planner;
pub mod predict;
#[cfg(test)]
pub(crate) mod random_machine;
pub mod screen;
pub mod spare;
pub mod stats;
