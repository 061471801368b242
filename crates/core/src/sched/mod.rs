//! Scheduling policies: queue ordering, the scan, EASY backfilling, SNF.
//!
//! A policy sees a read-only [`View`](crate::engine::View) and fills a [`Decision`]; the engine
//! applies it. Policies never touch the simulation state.

pub mod admission;
pub mod capability;
pub mod easy;
pub mod external;
pub mod mars;
pub mod order;
pub mod policy;
pub mod registry;

pub use capability::{capabilities, Capabilities};
pub use external::{translate, ExternalDecision};
pub use mars::{CandidateRecord, Chooser, DecisionRecord, MarsPolicy};
pub use order::Heuristic;
pub use policy::{
    Backfill, Decision, Policy, QueueOrder, QueuePolicy, QueueRule, Reserve, Snf, Start, StartKind,
};
pub use registry::{
    build_policy, build_policy_estimated, build_search_policy, build_snf, policy_names,
    power_alias, SearchOptions, POWER_POLICIES,
};
