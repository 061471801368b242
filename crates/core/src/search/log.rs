//! MARS's decision log: one row per decision, and optionally every candidate outcome it
//! weighed; handed out as the engine's generic columns (`Policy::take_log`).

use crate::sched::{Action, Heuristic};

/// One row of the decision log.
#[derive(Debug, Clone, PartialEq)]
pub struct DecisionRecord {
    pub time: f64,
    pub queue_length: u32,
    /// Distinct root outcomes: the effective branching factor.
    pub outcomes: u32,
    pub iterations: u64,
    pub heuristic: Heuristic,
    /// Window of the chosen action (`u32::MAX` = whole queue).
    pub window: u32,
    /// How many actions give the chosen outcome.
    pub actions: u32,
    /// The best-known of them (what the decision log names the choice by).
    pub best: Action,
    pub started: u32,
    /// The chosen outcome starts nothing although another would have started jobs.
    pub drain: bool,
    pub seconds: f64,
    /// This decision's candidates in the policy's candidate log (empty unless kept).
    pub candidates: std::ops::Range<u32>,
}

/// One distinct root outcome of a logged decision (kept only with `--decision-log full`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CandidateRecord {
    /// The best-known action giving this outcome.
    pub best: Action,
    /// How many actions give it.
    pub actions: u32,
    /// Jobs it starts.
    pub started: u32,
    /// Search visits, summed over the trees (0 without a search).
    pub visits: u64,
    /// Mean backed-up value over those visits (NaN when never visited).
    pub value: f64,
    /// Whether this is the outcome taken.
    pub chosen: bool,
}
