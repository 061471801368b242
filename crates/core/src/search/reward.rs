//! Rewards: what the search maximises, from the running totals since the search's root.
//!
//! Named terms, each in [0, 1], combined as a weighted mean so a user changes the goal by
//! configuration:
//! - `wait`: `1 / (1 + mean wait in hours)` of the jobs started since the root (MARS CW);
//! - `bsld`: `1 / mean bounded slowdown` of the jobs started since the root;
//! - `utilization`: busy node-seconds / up node-seconds since the root (MARS CU);
//! - `energy`: the share of the energy used since the root that went into computing (1 minus
//!   the wasted share), on a platform with a power model.
//!
//! Before any job has started since the root, `wait` and `bsld` take the value of the jobs
//! waiting at the root as if they started then (a neutral reference), and `utilization` the
//! share of nodes busy at that instant.

use crate::engine::{Engine, Metrics};

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reward {
    pub wait: f64,
    pub bsld: f64,
    pub utilization: f64,
    pub energy: f64,
}

/// What a reward needs to know about the root.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RootReference {
    pub wait_term: f64,
    pub bsld_term: f64,
}

impl Reward {
    /// MARS-CW: cumulative wait.
    pub const CW: Reward = Reward {
        wait: 1.0,
        bsld: 0.0,
        utilization: 0.0,
        energy: 0.0,
    };
    /// MARS-CU: cumulative utilization.
    pub const CU: Reward = Reward {
        wait: 0.0,
        bsld: 0.0,
        utilization: 1.0,
        energy: 0.0,
    };

    pub fn is_valid(&self) -> bool {
        let weights = [self.wait, self.bsld, self.utilization, self.energy];
        weights.iter().all(|w| w.is_finite() && *w >= 0.0) && weights.iter().sum::<f64>() > 0.0
    }

    /// The reference values at the root engine `root`.
    pub fn reference(root: &Engine) -> RootReference {
        let view = root.view();
        let n = view.queue.len().max(1) as f64;
        let (mut wait, mut bsld) = (0.0, 0.0);
        for &j in view.queue {
            let job = view.jobs.get(j);
            let w = (view.now - job.submit).max(0.0);
            wait += w;
            bsld += ((w + job.run_time) / job.run_time.max(Metrics::BSLD_TAU)).max(1.0);
        }
        RootReference {
            wait_term: wait_term(wait / n),
            bsld_term: 1.0 / (bsld / n).max(1.0),
        }
    }

    /// The immediate reward of the state `engine` is in.
    pub fn evaluate(&self, engine: &Engine, root: &RootReference) -> f64 {
        let m = engine.state().metrics();
        let (wait, bsld) = if m.started > 0 {
            let n = f64::from(m.started);
            (wait_term(m.wait_sum / n), 1.0 / (m.bsld_sum / n).max(1.0))
        } else {
            (root.wait_term, root.bsld_term)
        };
        // Busy and idle node-seconds since the root (at the root itself: node counts now).
        let (busy, idle) = if m.up_node_seconds > 0.0 {
            (m.busy_node_seconds, m.idle_node_seconds())
        } else {
            let s = engine.state();
            let up = engine.inputs().machine.nodes - s.down_nodes();
            (
                f64::from(s.busy_nodes()),
                f64::from(up.saturating_sub(s.busy_nodes())),
            )
        };
        let share = |busy_weight: f64, idle_weight: f64| {
            let total = busy * busy_weight + idle * idle_weight;
            if total > 0.0 {
                (busy * busy_weight / total).clamp(0.0, 1.0)
            } else {
                0.0
            }
        };
        let utilization = share(1.0, 1.0);
        let energy = match engine.inputs().machine.power {
            Some(p) => share(p.computing_w, p.idle_w),
            None => utilization,
        };
        let total = self.wait + self.bsld + self.utilization + self.energy;
        (self.wait * wait
            + self.bsld * bsld
            + self.utilization * utilization
            + self.energy * energy)
            / total
    }
}

fn wait_term(mean_wait_seconds: f64) -> f64 {
    1.0 / (1.0 + mean_wait_seconds / 3600.0)
}
