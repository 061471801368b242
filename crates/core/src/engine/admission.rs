//! Which jobs may start now, given the announced maintenance windows.
//!
//! A scheduled window is known from its announcement on. No job may start whose estimated end
//! falls after the window's start if the window would not have room for it: for a
//! whole-machine window that is every such job; for a window that takes `k` of the `N` nodes,
//! the jobs expected to run into it (running ones and those started now) may hold at most
//! `N - k` nodes. Ineligible jobs are skipped by the scan: they do not block it and get no
//! reservation.

use crate::engine::View;

#[derive(Debug, Clone, Copy)]
struct Room {
    start: f64,
    /// Nodes still allowed to run into the window; negative when already over-committed.
    allowance: i64,
}

/// Admission control for one scheduling invocation.
#[derive(Debug, Clone, Default)]
pub struct Admission {
    rooms: Vec<Room>,
}

impl Admission {
    pub fn new(view: &View) -> Self {
        let mut rooms = Vec::new();
        for w in view.announced {
            if w.start <= view.now {
                continue;
            }
            let mut allowance =
                i64::from(view.machine_nodes) - i64::from(w.nodes_down(view.machine_nodes));
            if allowance > 0 {
                // Whole-machine windows need no sum: nothing may run into them anyway.
                for r in view.running {
                    if view.estimated_end(r) > w.start {
                        allowance -= i64::from(r.nodes);
                    }
                }
            }
            rooms.push(Room {
                start: w.start,
                allowance,
            });
        }
        Admission { rooms }
    }

    /// Whether an announced window lies ahead of `view.now` (admission may then refuse jobs).
    pub fn constrains(view: &View) -> bool {
        view.announced.iter().any(|w| w.start > view.now)
    }

    /// The start of the earliest window ahead (+inf when none): a job whose estimated end is no
    /// later is admitted whatever has started before it.
    pub fn first_start(&self) -> f64 {
        self.rooms
            .iter()
            .map(|room| room.start)
            .fold(f64::INFINITY, f64::min)
    }

    /// Whether a job of `nodes` nodes ending (by estimate) at `est_end` may start now.
    #[inline]
    pub fn admits(&self, est_end: f64, nodes: u32) -> bool {
        self.rooms
            .iter()
            .all(|room| est_end <= room.start || i64::from(nodes) <= room.allowance)
    }

    /// Records that such a job started.
    #[inline]
    pub fn commit(&mut self, est_end: f64, nodes: u32) {
        for room in &mut self.rooms {
            if est_end > room.start {
                room.allowance -= i64::from(nodes);
            }
        }
    }
}
