//! An ordering action: a heuristic sorting the first `window` waiting jobs, then the scan and
//! EASY (what MARS branches on, and what its decision log names a choice by).

use crate::sched::{Backfill, Heuristic, QueuePolicy};

/// One action: sort the first `window` jobs by `heuristic`, scan, then EASY.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Action {
    pub heuristic: Heuristic,
    /// `u32::MAX` = the whole queue.
    pub window: u32,
}

impl Action {
    /// The action as a policy: its ordering, then the scan and EASY.
    pub fn policy(&self) -> QueuePolicy {
        QueuePolicy::new(self.heuristic, self.window as usize, Backfill::Easy)
    }

    pub fn name(&self) -> String {
        if self.heuristic == Heuristic::Fcfs || self.window == u32::MAX {
            self.heuristic.name().to_string()
        } else {
            format!("{}:{}", self.heuristic.name(), self.window)
        }
    }

    /// How familiar the action is to an operator (lower is better): the production heuristics
    /// first (FCFS, SJF, WFP3, F1, UNICEF, then the rest of Table II), and for one heuristic the
    /// widest window (the whole queue reads as the plain heuristic).
    pub fn familiarity(&self) -> (u8, u32) {
        const KNOWN: [Heuristic; 5] = [
            Heuristic::Fcfs,
            Heuristic::Sjf,
            Heuristic::Wfp3,
            Heuristic::F1,
            Heuristic::Unicef,
        ];
        let rank = KNOWN
            .iter()
            .position(|&h| h == self.heuristic)
            .unwrap_or(KNOWN.len() + self.heuristic as usize);
        (rank as u8, u32::MAX - self.window)
    }

    /// The action that orders a queue of `len` jobs the same way (windows past the queue's end
    /// and FCFS windows all collapse).
    pub(crate) fn effective(self, len: usize) -> Action {
        let window = (self.window as usize).min(len) as u32;
        if self.heuristic == Heuristic::Fcfs || window <= 1 {
            Action {
                heuristic: Heuristic::Fcfs,
                window: 1,
            }
        } else {
            Action {
                heuristic: self.heuristic,
                window,
            }
        }
    }
}
