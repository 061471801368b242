//! What a search is asked (its budgets, rollouts and look-ahead) and what it answers (the root
//! outcomes with their visits and values, and the one chosen).

use crate::engine::StopFlag;
use crate::search::action::Action;

/// How a rollout picks its actions.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Rollout {
    /// Uniform among the actions (the MARS paper): outcomes shared by many actions are picked
    /// more often.
    #[default]
    Actions,
    /// Uniform among the distinct outcomes at each step (costs every action's evaluation).
    Outcomes,
    /// The `guide` ordering (with EASY) with probability 1 - `epsilon`, else a uniform action.
    Guided { guide: Action, epsilon: f64 },
}

impl Rollout {
    /// The rollout policies' names, in the order of the variants.
    pub const NAMES: [&'static str; 3] = ["actions", "outcomes", "guided"];
}

/// How a decision's outcomes are valued.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Lookahead {
    /// Monte Carlo Tree Search over the outcomes of successive decisions (the MARS paper).
    #[default]
    Tree,
    /// Each outcome of this decision followed by each of the `bases` orderings (with EASY), in
    /// several sampled futures: see [`crate::search::rollout`].
    Rollout { bases: Vec<Action> },
}

impl Lookahead {
    /// The look-aheads' names, in the order of the variants.
    pub const NAMES: [&'static str; 2] = ["tree", "rollout"];
    /// The priors at expansion: none (the paper) or the `bases` rollout value.
    pub const PRIOR_NAMES: [&'static str; 2] = ["none", "rollout"];
}

/// Budgets and parameters of one decision's search.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchConfig {
    /// Iterations per tree (deterministic with a seed).
    pub iterations: Option<u32>,
    /// Wall-clock seconds per decision (every tree stops then).
    pub time_budget: Option<f64>,
    /// Horizon D: counted scheduling cycles (those that start a job) from the root.
    pub depth: u32,
    pub gamma: f64,
    /// c0 in `c = c0·(Qmax − Qmin)`.
    pub exploration: f64,
    /// P: independent trees (each on its own sampled scenario when the forward model samples).
    pub trees: u32,
    pub seed: u64,
    pub rollout: Rollout,
    pub lookahead: Lookahead,
    /// A prior at expansion (the tree only): each new child starts with one virtual visit
    /// worth the best of these orderings' returns after it, and the best is tried first.
    pub prior: Option<Vec<Action>>,
    /// Stops the search early when raised (an interrupted run's decisions are not kept).
    pub stop: StopFlag,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            // the command line's and the Python specs' defaults are read from here
            iterations: Some(100),
            time_budget: None,
            depth: 50,
            gamma: 0.99,
            exploration: 1.0,
            // P = the number of cores, as in the paper
            trees: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
            seed: 17,
            rollout: Rollout::Actions,
            lookahead: Lookahead::Tree,
            prior: None,
            stop: StopFlag::default(),
        }
    }
}

/// A root outcome with its statistics merged over the trees.
#[derive(Debug, Clone, PartialEq)]
pub struct RootChild {
    pub action: u16,
    pub outcome: Vec<u32>,
    pub visits: u64,
    pub value: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SearchOutcome {
    /// One entry per root branch, in the branches' order.
    pub children: Vec<RootChild>,
    /// Index of the most visited child (ties: the earliest).
    pub chosen: usize,
    /// Iterations summed over the trees.
    pub iterations: u64,
}
