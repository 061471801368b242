//! Power drawn by nodes, per state, and the energy a run used.
//!
//! Nodes are computing (running a job), idle (up, awake, free), switching on, switching off or
//! sleeping (SNF-ICON Definition 1). Nodes taken by a downtime window are counted apart and draw
//! nothing. Wasted energy is everything not spent computing.

use crate::error::{CoreError, Result};

/// Power of one node in each state (W) and mean transition latencies (s) with their standard
/// deviations, for a homogeneous machine.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PowerModel {
    pub computing_w: f64,
    pub idle_w: f64,
    pub sleeping_w: f64,
    pub switching_on_w: f64,
    pub switching_off_w: f64,
    pub switch_on_s: f64,
    pub switch_on_std_s: f64,
    pub switch_off_s: f64,
    pub switch_off_std_s: f64,
}

/// Energy by state (J).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Energy {
    pub computing_j: f64,
    pub idle_j: f64,
    pub switching_on_j: f64,
    pub switching_off_j: f64,
    pub sleeping_j: f64,
}

impl Energy {
    pub fn total_j(&self) -> f64 {
        self.computing_j
            + self.idle_j
            + self.switching_on_j
            + self.switching_off_j
            + self.sleeping_j
    }

    /// Everything not spent computing.
    pub fn wasted_j(&self) -> f64 {
        self.total_j() - self.computing_j
    }
}

impl PowerModel {
    pub fn validate(&self) -> Result<()> {
        let values = [
            ("computing power", self.computing_w),
            ("idle power", self.idle_w),
            ("sleeping power", self.sleeping_w),
            ("switching-on power", self.switching_on_w),
            ("switching-off power", self.switching_off_w),
            ("switch-on latency", self.switch_on_s),
            ("switch-on latency std", self.switch_on_std_s),
            ("switch-off latency", self.switch_off_s),
            ("switch-off latency std", self.switch_off_std_s),
        ];
        for (name, value) in values {
            if !(value.is_finite() && value >= 0.0) {
                return Err(CoreError::input(format!(
                    "{name} must be a finite number >= 0, not {value}"
                )));
            }
        }
        Ok(())
    }

    /// Power of one node in each state (idle, computing, switching on, switching off,
    /// sleeping, down), the order of node-state counts.
    pub fn per_state_w(&self) -> [f64; 6] {
        [
            self.idle_w,
            self.computing_w,
            self.switching_on_w,
            self.switching_off_w,
            self.sleeping_w,
            0.0,
        ]
    }
}
