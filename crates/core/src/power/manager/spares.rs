//! Shutdowns and warm spares: the idle timeout (kept for nodes the plan needs soon), ICON's
//! spare target (the cost optimisation of `power/spare.rs`) and the stale-completion
//! shutdown.

use crate::engine::power::{NodeState, NO_JOB};
use crate::engine::View;
use crate::power::config::Mode;
use crate::power::manager::{PowerManager, Shutdowns, EPS};
use crate::power::plan::Plan;
use crate::power::spare::{capped_horizon, optimise, SpareChoice, SpareInput};

impl PowerManager {
    /// What to switch off (and, in ICON mode, which warm spares to wake) after the plan: the
    /// idle timeout, ICON's spare target and the stale-completion shutdown.
    pub(super) fn shutdowns(
        &self,
        view: &View,
        planned: &Plan,
        expired_nodes: &[u32],
        queue_empty: bool,
    ) -> Shutdowns {
        let (n, nodes) = (view.nodes.len(), view.nodes);
        let mut wake: Vec<u32> = Vec::new();
        let mut off: Vec<u32> = Vec::new();
        // An expired node is kept awake when a planned job needs it before it could switch
        // off and wake again.
        let soon = |i: u32| {
            let m = &view.models[nodes[i as usize].group as usize];
            view.now + m.switch_off_s + m.switch_on_s
        };
        let mut spare = None;
        let mut gate_open = false;
        let mut spare_planning = false;
        match (self.config.icon.as_ref(), self.mode) {
            (Some(icon), Mode::Icon) => {
                let last = self.stats.as_ref().and_then(|s| s.last_arrival);
                gate_open = !icon.gate || last.is_some_and(|t| view.now - t <= icon.recency_window);
                if queue_empty && self.epoch {
                    if gate_open {
                        spare_planning = true;
                        let mut expired = vec![false; n];
                        for &i in expired_nodes {
                            expired[i as usize] = true;
                        }
                        let choice = self.spares(view, &expired);
                        wake.extend_from_slice(&choice.wake);
                        off.extend_from_slice(&choice.switch_off);
                        spare = Some(choice);
                    } else if icon.stale_completion_shutdown && !view.completed.is_empty() {
                        // Stale-completion shutdown: nodes this instant's completions
                        // released and nobody uses, whatever their timeout.
                        off.extend((0..n as u32).filter(|&i| {
                            let node = &nodes[i as usize];
                            self.previous_jobs[i as usize] != NO_JOB
                                && node.state == NodeState::Idle
                        }));
                    }
                }
                if queue_empty {
                    // The idle timeout applies in ICON mode once the queue is empty.
                    off.extend_from_slice(expired_nodes);
                }
            }
            _ => {
                let keep_for_plan = |i: u32| {
                    planned
                        .needed_at
                        .get(i as usize)
                        .is_some_and(|&t| t < soon(i))
                };
                off.extend(expired_nodes.iter().copied().filter(|&i| !keep_for_plan(i)));
            }
        }
        Shutdowns {
            wake,
            off,
            spare,
            gate_open,
            spare_planning,
        }
    }

    /// Spare-target optimisation at a spare-planning point (Eqs. 20-39).
    pub(super) fn spares(&self, view: &View, expired: &[bool]) -> SpareChoice {
        let icon = self.config.icon.as_ref().expect("ICON mode");
        let stats = self.stats.as_ref().expect("ICON mode");
        let n = view.nodes.len();
        let arrival_rate = stats.arrival_rate();
        // The nearest predicted completion, jobs started at this instant included.
        let nearest = self
            .running_release(view, true)
            .iter()
            .map(|&(_, t)| t - view.now)
            .filter(|&r| r > EPS && r.is_finite())
            .fold(f64::INFINITY, f64::min);
        let completion_rate = if nearest.is_finite() {
            1.0 / nearest
        } else {
            view.running.len() as f64 * stats.service_rate()
        };
        let event_rate = arrival_rate + completion_rate;
        let arrival_probability = if event_rate > 0.0 {
            arrival_rate / event_rate
        } else {
            0.0
        };
        let to_timeout = (0..n)
            .filter(|&i| view.nodes[i].state == NodeState::Idle && !expired[i])
            .map(|i| self.deadlines[i] - view.now)
            .filter(|&d| d > EPS)
            .fold(icon.max_horizon, f64::min);
        let horizon = capped_horizon(event_rate, icon.max_horizon.min(to_timeout));
        let pmf = stats.size_pmf(n);
        let input = SpareInput {
            now: view.now,
            nodes: view.nodes,
            models: view.models,
            expired,
            pmf: &pmf,
            event_rate,
            arrival_probability,
            horizon,
            alpha: icon.alpha,
            beta: icon.beta,
            min_spares: icon.min_spares,
            max_spares: icon.max_spares.unwrap_or(n as u32),
        };
        optimise(&input)
    }
}
