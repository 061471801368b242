//! Idle timeouts: each idle node's deadline (kept sorted for the next expiry), which nodes
//! are past it after the instant's starts, and the timers the manager asks for.

use crate::engine::power::{NodeState, STATES};
use crate::engine::View;
use crate::power::manager::{PowerManager, BATCH};

impl PowerManager {
    /// Sets node `i`'s idle-timeout deadline (NaN: none), keeping `by_deadline` in step.
    pub(super) fn set_deadline(&mut self, i: usize, deadline: f64) {
        let old = self.deadlines[i];
        if old.to_bits() == deadline.to_bits() {
            return;
        }
        let key = |&(t, node): &(f64, u32), d: f64| t.total_cmp(&d).then(node.cmp(&(i as u32)));
        if !old.is_nan() {
            let at = self
                .by_deadline
                .binary_search_by(|e| key(e, old))
                .expect("every deadline is listed");
            self.by_deadline.remove(at);
        }
        if !deadline.is_nan() {
            let at = self
                .by_deadline
                .binary_search_by(|e| key(e, deadline))
                .expect_err("a node has one deadline");
            self.by_deadline.insert(at, (deadline, i as u32));
        }
        self.deadlines[i] = deadline;
    }

    /// Sets the deadlines of many nodes (node, deadline; NaN: none) at once: one by one for a
    /// few, else by filtering and sorting `by_deadline` once (a sorted list's inserts and
    /// removals move its tail: many of them on a large machine cost its size squared). The
    /// same list either way.
    pub(super) fn set_deadlines(&mut self, updates: &[(u32, f64)]) {
        if updates.len() <= BATCH {
            for &(i, deadline) in updates {
                self.set_deadline(i as usize, deadline);
            }
            return;
        }
        let mut touched = vec![false; self.deadlines.len()];
        for &(i, deadline) in updates {
            self.deadlines[i as usize] = deadline;
            touched[i as usize] = true;
        }
        self.by_deadline.retain(|&(_, i)| !touched[i as usize]);
        for (i, &flag) in touched.iter().enumerate() {
            if flag && !self.deadlines[i].is_nan() {
                self.by_deadline.push((self.deadlines[i], i as u32));
            }
        }
        self.by_deadline
            .sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    }

    /// A node's deadline after a change of state: set when a call first sees it idle,
    /// cleared when it is not idle (`None`: unchanged).
    pub(super) fn follow(&self, i: usize, idle: bool, now: f64) -> Option<f64> {
        let old = self.deadlines[i];
        if idle {
            old.is_nan().then_some(now + self.config.idle_timeout)
        } else {
            (!old.is_nan()).then_some(f64::NAN)
        }
    }

    /// The idle-timeout bookkeeping after the instant's starts: nodes no longer idle lose
    /// their deadline, the node index follows the changes; returns the idle nodes past their
    /// timeout, by number.
    pub(super) fn expire(&mut self, view: &View, changed: &[u32]) -> Vec<u32> {
        let n = view.nodes.len();
        let nodes = view.nodes;
        // Nodes that started a job at this call have no deadline any more; idle nodes past
        // their timeout (the first of `by_deadline`); sleeping nodes.
        let clear: Vec<(u32, f64)> = if self.rebuild {
            (0..n as u32)
                .filter(|&i| {
                    nodes[i as usize].state != NodeState::Idle
                        && !self.deadlines[i as usize].is_nan()
                })
                .map(|i| (i, f64::NAN))
                .collect()
        } else {
            changed
                .iter()
                .filter(|&&i| {
                    nodes[i as usize].state != NodeState::Idle
                        && !self.deadlines[i as usize].is_nan()
                })
                .map(|&i| (i, f64::NAN))
                .collect()
        };
        self.set_deadlines(&clear);
        if self.rebuild {
            self.index.rebuild(nodes);
        } else {
            self.index.update_many(changed, nodes);
        }
        let past = self.by_deadline.partition_point(|&(t, _)| t <= view.now);
        let mut expired_nodes: Vec<u32> = self.by_deadline[..past].iter().map(|e| e.1).collect();
        expired_nodes.sort_unstable();
        expired_nodes
    }

    /// The timers of this call: the next idle timeout of a node that stays idle, and IPM's
    /// callbacks a wake latency before each running job's requested end while nodes sleep.
    pub(super) fn timeout_timers(
        &self,
        view: &View,
        queue_empty: bool,
        asleep: usize,
        woken: usize,
        group_counts: &[[u32; STATES]],
        timers: &mut Vec<f64>,
    ) {
        // Be called back at the next idle timeout of a node that stays idle (in ICON mode only
        // while nothing waits: the timeout does not apply then).
        if !self.icon_mode() || queue_empty {
            // (nodes switched off here have no deadline any more)
            let later = self.by_deadline.partition_point(|&(t, _)| t <= view.now);
            let next_timeout = self.by_deadline.get(later).map_or(f64::INFINITY, |e| e.0);
            if next_timeout.is_finite() {
                timers.push(next_timeout);
            }
        }
        // IPM plans again a wake latency before each running job's requested end while a node
        // sleeps (PSAS's callbacks): a sleeping node may then be woken just in time.
        if !self.icon_mode() && asleep > woken {
            // (the wake latencies of the groups that have sleeping nodes, in node order: nodes
            // are numbered group after group)
            let mut leads: Vec<f64> = Vec::new();
            for (g, counts) in group_counts.iter().enumerate() {
                let lead = view.models[g].switch_on_s;
                if counts[NodeState::Sleeping as usize] > 0 && !leads.contains(&lead) {
                    leads.push(lead);
                }
            }
            for lead in leads {
                timers.extend(
                    view.running
                        .iter()
                        .filter(|r| r.requested_end > view.now)
                        .map(|r| r.requested_end - lead)
                        .filter(|&t| t > view.now),
                );
            }
        }
    }

    /// Keeps only the timers not asked for before (and forgets the past ones).
    pub(super) fn keep_new_timers(&mut self, timers: &mut Vec<f64>, now: f64) {
        self.timers.retain(|&t| t > now);
        timers.retain(|&t| t > now && t.is_finite());
        timers.sort_unstable_by(f64::total_cmp);
        timers.dedup();
        timers.retain(|t| match self.timers.binary_search_by(|x| x.total_cmp(t)) {
            Ok(_) => false,
            Err(at) => {
                self.timers.insert(at, *t);
                true
            }
        });
    }
}
