//! EASY backfilling: one reservation for the top job, at the shadow time.
//!
//! Walk the running jobs by estimated end (ties by job index), adding their nodes to the free
//! count until the top job fits: that end is the shadow time. `extra` = the nodes free at the
//! shadow time (every running job whose estimated end is <= the shadow time released) minus the
//! top job's size. A later job that fits now may start if it ends (by estimate) no later than
//! the shadow time, or if its size is <= `extra` (which then shrinks by its size).
//!
//! Jobs started earlier in the same invocation are running too, and downtime windows in progress
//! give their nodes back at their end: both are releases in the walk.

use crate::engine::View;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reservation {
    pub shadow_time: f64,
    pub extra: u32,
}

impl Reservation {
    /// The top job's reservation, or `None` if no known release ever makes room for it.
    /// `started_now` holds (estimated end, nodes) of the jobs started in this invocation; it is
    /// sorted in place.
    pub fn compute(
        view: &View,
        free_now: u32,
        top_nodes: u32,
        started_now: &mut [(f64, u32)],
    ) -> Option<Reservation> {
        let running = view
            .running
            .iter()
            .map(|r| (view.estimated_end(r), r.nodes));
        if started_now.is_empty() && view.down_windows.is_empty() {
            return walk(running, free_now, top_nodes); // the common case: one sorted source
        }
        started_now.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
        let mut running = running.peekable();
        let mut started = started_now.iter().copied().peekable();
        let mut windows = view.down_windows.iter().copied().peekable();
        let merged = std::iter::from_fn(|| {
            let candidates = [
                running.peek().copied(),
                started.peek().copied(),
                windows.peek().copied(),
            ];
            let (source, _) = candidates
                .iter()
                .enumerate()
                .filter_map(|(i, c)| c.map(|c| (i, c.0)))
                .min_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)))?;
            match source {
                0 => running.next(),
                1 => started.next(),
                _ => windows.next(),
            }
        });
        walk(merged, free_now, top_nodes)
    }

    /// The top job's reservation with the running jobs' releases given (sorted by time) instead
    /// of their requested ends (EASY on predicted run times).
    pub fn compute_from(
        view: &View,
        releases: &[(f64, u32)],
        free_now: u32,
        top_nodes: u32,
        started_now: &mut [(f64, u32)],
    ) -> Option<Reservation> {
        started_now.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
        let mut merged: Vec<(f64, u32)> = releases
            .iter()
            .chain(started_now.iter())
            .chain(view.down_windows.iter())
            .copied()
            .collect();
        merged.sort_by(|a, b| a.0.total_cmp(&b.0));
        walk(merged.into_iter(), free_now, top_nodes)
    }

    /// Whether a job ending (by estimate) at `est_end` with `nodes` nodes may be backfilled;
    /// consumes `extra` when it runs past the shadow time.
    #[inline]
    pub fn admits(&mut self, est_end: f64, nodes: u32) -> bool {
        if est_end <= self.shadow_time {
            true
        } else if nodes <= self.extra {
            self.extra -= nodes;
            true
        } else {
            false
        }
    }
}

/// Walks releases in time order, adding nodes to the free count until the top job fits: that
/// time is the shadow time; every release at or before it counts toward `extra`.
pub(crate) fn walk(
    releases: impl Iterator<Item = (f64, u32)>,
    free_now: u32,
    top_nodes: u32,
) -> Option<Reservation> {
    let mut free = u64::from(free_now);
    let need = u64::from(top_nodes);
    let mut shadow = None;
    for (time, nodes) in releases {
        if let Some(s) = shadow {
            if time > s {
                break;
            }
        }
        free += u64::from(nodes);
        if shadow.is_none() && free >= need {
            shadow = Some(time);
        }
    }
    let shadow_time = shadow?;
    Some(Reservation {
        shadow_time,
        extra: (free - need).min(u64::from(u32::MAX)) as u32,
    })
}
