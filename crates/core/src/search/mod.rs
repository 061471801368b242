//! MARS: look-ahead scheduling by Monte Carlo Tree Search over queue orderings.
//!
//! An action is a (heuristic, window) ordering followed by EASY; its outcome is the set of jobs
//! it starts now. The forward model is the engine itself on an honest belief
//! ([`Belief`](crate::engine::Belief)); the tree merges actions with equal outcomes
//! (horizontal) and fast-forwards invocations that offer a single outcome (vertical).

pub mod action;
pub mod config;
#[cfg(test)]
mod fixtures;
pub mod log;
pub mod mcts;
pub mod policy;
pub mod reward;
pub mod rollout;
pub mod scenario;
pub mod tree;

pub use action::{Action, ActionSet};
pub use config::{Lookahead, Rollout, SearchConfig, SearchOutcome};
pub use log::{CandidateRecord, DecisionRecord};
pub use mcts::search;
pub use policy::{build_mars, build_search_policy, Chooser, MarsPolicy, SearchOptions};
pub use reward::{Reward, RootReference};
pub use scenario::{ArrivalModel, RuntimeModel, ScenarioModel};
