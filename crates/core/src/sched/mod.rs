//! Scheduling policies: queue ordering, the scan, EASY backfilling, SNF.
//!
//! A policy sees a read-only [`View`](crate::engine::View) and fills a [`Decision`] (the
//! engine's contract, `engine/policy.rs`); the engine applies it.

pub mod action;
pub mod capability;
pub mod easy;
pub mod external;
pub mod order;
pub mod policy;
pub mod registry;
pub mod scan;
pub mod shared;
pub mod site;
pub mod slurm;
pub mod snf;

pub use action::Action;
pub use capability::{capabilities, Capabilities};
pub use external::{translate, ExternalDecision};
pub use order::Heuristic;
pub use policy::{
    Backfill, Decision, Policy, QueueOrder, QueuePolicy, QueueRule, QueueService, Reserve, Start,
    StartKind,
};
pub use registry::{
    build_policy, build_policy_estimated, build_snf, policy_names, power_alias, POWER_POLICIES,
};
pub use snf::Snf;
