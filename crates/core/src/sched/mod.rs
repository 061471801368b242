//! Scheduling policies: queue ordering, the scan, EASY backfilling, SNF.
//!
//! A policy sees a read-only [`View`](crate::engine::View) and fills a [`Decision`]; the engine
//! applies it. Policies never touch the simulation state.

pub mod admission;
pub mod easy;
pub mod order;
pub mod policy;
pub mod registry;

pub use order::Heuristic;
pub use policy::{Backfill, Decision, Policy, QueuePolicy, Reserve, Snf, Start, StartKind};
pub use registry::{build_policy, policy_names};
