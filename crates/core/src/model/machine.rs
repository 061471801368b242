//! The machine: a pool of identical nodes, and what happens to jobs that overrun.

/// What happens when a job runs longer than it requested.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Overrun {
    /// The trace is the truth: the job runs for its full run time.
    #[default]
    Continue,
    /// The job is killed at its requested time, and recorded as killed.
    Kill,
}

impl Overrun {
    /// The names, in the order of the variants.
    pub const NAMES: [&'static str; 2] = ["continue", "kill"];

    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "continue" => Some(Overrun::Continue),
            "kill" => Some(Overrun::Kill),
            _ => None,
        }
    }
}

/// The largest machine the engine accepts, in nodes (2^24 = 16,777,216): above every real
/// machine even counted in cores, and small enough for per-node power states in memory.
pub const MAX_NODES: u32 = 1 << 24;

/// A machine of `nodes` identical nodes, with their power model when one is known.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Machine {
    pub nodes: u32,
    pub power: Option<crate::model::PowerModel>,
}

impl Machine {
    /// A machine without a power model.
    pub fn new(nodes: u32) -> Self {
        Machine { nodes, power: None }
    }
}
