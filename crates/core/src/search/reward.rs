//! Rewards: what the search maximises, from the running totals since the search's root.
//!
//! Named terms, each in [0, 1], combined as a weighted mean so a user changes the goal by
//! configuration:
//! - `wait`: `1 / (1 + mean wait in hours)` of the jobs started since the root *and* of the
//!   jobs still waiting (their wait so far): leaving a job unstarted is never free (CW);
//! - `wait_started`: the same over the jobs started since the root only (the MARS paper's CW);
//! - `bsld`: `1 / mean bounded slowdown` of the jobs started since the root and of the jobs
//!   still waiting (their wait so far, their run time in the belief), as in `wait`;
//! - `max_wait`: `1 / (1 + longest wait in hours)`, started or still waiting (a tail term);
//! - `utilization`: busy node-seconds / up node-seconds over a fixed `horizon` from the root
//!   (cut at the start of the next announced maintenance: work after it cannot make up for
//!   nodes left idle before it), counting the work running jobs have committed within it; time
//!   of the horizon a rollout did not reach counts as idle, so idling now is never free;
//! - `maintenance_utilization`: the same from the root to the start of the next announced
//!   maintenance, however far; 1 when none is announced (idle node-seconds are lost for good
//!   only before a maintenance: elsewhere the work is still there to do, every decision ties);
//! - `utilization_since_root`: busy / up node-seconds from the root to the rollout's end (the
//!   MARS paper's CU, which a shorter makespan maximises);
//! - `energy`: the share of the energy used since the root that went into computing (1 minus
//!   the wasted share), on a platform with a power model.
//!
//! Before any job has started since the root, `wait_started` takes the value of the jobs
//! waiting at the root as if they started then (a neutral reference), so does `bsld` when
//! nothing waits either, and
//! `utilization_since_root` the share of nodes busy at that instant.
//!
//! Where jobs share nodes the utilization terms count CPUs (CPU-seconds held by jobs over
//! CPU-seconds up), as the run's summary does: a node one small job holds part of is not busy.

use crate::engine::{bounded_slowdown, Engine};

/// The weights of the named terms (and the utilization horizon).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reward {
    pub wait: f64,
    pub bsld: f64,
    pub utilization: f64,
    pub energy: f64,
    pub wait_started: f64,
    pub utilization_since_root: f64,
    pub max_wait: f64,
    pub maintenance_utilization: f64,
    /// Seconds from the root over which `utilization` is measured.
    pub horizon: f64,
}

/// What a reward needs to know about the root.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RootReference {
    pub wait_term: f64,
    pub bsld_term: f64,
    /// Simulated time of the root.
    pub time: f64,
    /// End of the `utilization` term's horizon.
    pub until: f64,
    /// Start of the next announced maintenance (infinite when none is announced).
    pub maintenance: f64,
}

/// The engine marks the rewards read: the `utilization` horizon's end, the next maintenance.
const UNTIL_MARK: usize = 0;
const MAINTENANCE_MARK: usize = 1;

impl RootReference {
    /// Has `root` (the engine this reference was taken at) keep its totals at the horizon's
    /// end and at the next maintenance, which the utilization terms read past them.
    pub fn set_marks(&self, root: &mut Engine) {
        root.set_mark(UNTIL_MARK, self.until);
        if self.maintenance.is_finite() {
            root.set_mark(MAINTENANCE_MARK, self.maintenance);
        }
    }
}

/// Default utilization horizon: a day.
pub const DEFAULT_HORIZON: f64 = 86_400.0;

impl Reward {
    /// No weight on anything (a base for struct updates).
    pub const ZERO: Reward = Reward {
        wait: 0.0,
        bsld: 0.0,
        utilization: 0.0,
        energy: 0.0,
        wait_started: 0.0,
        utilization_since_root: 0.0,
        max_wait: 0.0,
        maintenance_utilization: 0.0,
        horizon: DEFAULT_HORIZON,
    };
    /// MARS-CW: cumulative wait, jobs still waiting included.
    pub const CW: Reward = Reward {
        wait: 1.0,
        ..Reward::ZERO
    };
    /// MARS-CU: utilization up to an announced maintenance (weight 3), the wait elsewhere.
    pub const CU: Reward = Reward {
        wait: 1.0,
        maintenance_utilization: 3.0,
        ..Reward::ZERO
    };
    /// MARS-WB: the wait and the bounded slowdown (jobs still waiting included in both).
    pub const WB: Reward = Reward {
        wait: 1.0,
        bsld: 1.0,
        ..Reward::ZERO
    };
    /// Utilization over a fixed horizon (MARS-CU until issue 12's evaluation).
    pub const CU_HORIZON: Reward = Reward {
        utilization: 1.0,
        ..Reward::ZERO
    };
    /// The MARS paper's CW: mean wait of the jobs started since the root.
    pub const CW_PAPER: Reward = Reward {
        wait_started: 1.0,
        ..Reward::ZERO
    };
    /// The MARS paper's CU: utilization from the root to the rollout's end.
    pub const CU_PAPER: Reward = Reward {
        utilization_since_root: 1.0,
        ..Reward::ZERO
    };

    /// The reward terms by name, in the order of [`Reward::weights`] (the Python specs, the
    /// run keys and the command line read them from here).
    pub const TERMS: [&'static str; 8] = [
        "wait",
        "bsld",
        "utilization",
        "energy",
        "wait_started",
        "utilization_since_root",
        "max_wait",
        "maintenance_utilization",
    ];

    /// The named rewards (`--reward cw`, ...; the presets `mars-cw`, `mars-cu`, `mars-wb`
    /// take the first, second and fourth).
    pub const PRESETS: [(&'static str, Reward); 6] = [
        ("cw", Reward::CW),
        ("cu", Reward::CU),
        ("cu-horizon", Reward::CU_HORIZON),
        ("wb", Reward::WB),
        ("cw-paper", Reward::CW_PAPER),
        ("cu-paper", Reward::CU_PAPER),
    ];

    /// The reward with these weights (in the order of [`Reward::TERMS`]) over `horizon`.
    pub fn from_weights(w: [f64; 8], horizon: f64) -> Reward {
        Reward {
            wait: w[0],
            bsld: w[1],
            utilization: w[2],
            energy: w[3],
            wait_started: w[4],
            utilization_since_root: w[5],
            max_wait: w[6],
            maintenance_utilization: w[7],
            horizon,
        }
    }

    /// The weights in the order of [`Reward::TERMS`].
    pub fn weights(&self) -> [f64; 8] {
        [
            self.wait,
            self.bsld,
            self.utilization,
            self.energy,
            self.wait_started,
            self.utilization_since_root,
            self.max_wait,
            self.maintenance_utilization,
        ]
    }

    pub fn is_valid(&self) -> bool {
        let weights = self.weights();
        weights.iter().all(|w| w.is_finite() && *w >= 0.0)
            && weights.iter().sum::<f64>() > 0.0
            && self.horizon.is_finite()
            && self.horizon > 0.0
    }

    /// The reference values at the root engine `root`.
    pub fn reference(root: &Engine) -> RootReference {
        let view = root.view();
        let n = view.queue.len().max(1) as f64;
        let (mut wait, mut bsld) = (0.0, 0.0);
        for &j in view.queue {
            // (the belief's own jobs: their run times are the ones it believes)
            let job = root.inputs().jobs.get(j);
            let w = (view.now - job.submit).max(0.0);
            wait += w;
            bsld += bounded_slowdown(w, job.run_time);
        }
        RootReference {
            wait_term: wait_term(wait / n),
            bsld_term: 1.0 / (bsld / n).max(1.0),
            time: view.now,
            until: view.now + DEFAULT_HORIZON,
            maintenance: f64::INFINITY,
        }
    }

    /// The reference at the root engine `root`, with this reward's utilization horizon: `horizon`
    /// seconds, or up to the next announced maintenance if it starts sooner.
    pub fn reference_of(&self, root: &Engine) -> RootReference {
        let view = root.view();
        let maintenance = view
            .announced
            .iter()
            .map(|w| w.start)
            .filter(|&start| start > view.now)
            .fold(f64::INFINITY, f64::min);
        RootReference {
            until: (view.now + self.horizon).min(maintenance),
            maintenance,
            ..Reward::reference(root)
        }
    }

    /// The immediate reward of the state `engine` is in.
    pub fn evaluate(&self, engine: &Engine, root: &RootReference) -> f64 {
        let m = engine.state().metrics();
        let mut total = 0.0;
        if self.wait > 0.0 || self.max_wait > 0.0 {
            let (waiting, oldest) = queue_waits(engine);
            if self.wait > 0.0 {
                let n = f64::from(m.started) + engine.state().queue().len() as f64;
                let mean = if n > 0.0 {
                    (m.wait_sum + waiting) / n
                } else {
                    0.0
                };
                total += self.wait * wait_term(mean);
            }
            if self.max_wait > 0.0 {
                total += self.max_wait * wait_term(m.wait_max.max(oldest));
            }
        }
        if self.wait_started > 0.0 {
            let wait = if m.started > 0 {
                wait_term(m.wait_sum / f64::from(m.started))
            } else {
                root.wait_term
            };
            total += self.wait_started * wait;
        }
        if self.bsld > 0.0 {
            // Jobs still waiting count with their bounded slowdown so far, as in `wait`.
            let waiting = engine.state().queue().len();
            let bsld = if m.started > 0 || waiting > 0 {
                let n = f64::from(m.started) + waiting as f64;
                1.0 / ((m.bsld_sum + queue_bsld(engine)) / n).max(1.0)
            } else {
                root.bsld_term
            };
            total += self.bsld * bsld;
        }
        if self.utilization > 0.0 {
            total += self.utilization * horizon_utilization(engine, root.until, UNTIL_MARK);
        }
        if self.maintenance_utilization > 0.0 {
            // Without a maintenance announced, no idle node-second is lost for good (the
            // work is still there to do): every decision ties.
            let u = if root.maintenance.is_finite() {
                horizon_utilization(engine, root.maintenance, MAINTENANCE_MARK)
            } else {
                1.0
            };
            total += self.maintenance_utilization * u;
        }
        if self.utilization_since_root > 0.0 || self.energy > 0.0 {
            // Busy and idle node-seconds since the root (at the root itself: node counts now);
            // CPUs where jobs share nodes.
            let (busy, idle) = if let Some(shared) = &engine.state().shared {
                if m.up_cpu_seconds > 0.0 {
                    (m.busy_cpu_seconds, m.up_cpu_seconds - m.busy_cpu_seconds)
                } else {
                    let busy = shared.busy_cpus() as f64;
                    (busy, shared.up_cpus() as f64 - busy)
                }
            } else if m.up_node_seconds > 0.0 {
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
                Some(p) => {
                    computing_share(engine, &p).unwrap_or_else(|| share(p.computing_w, p.idle_w))
                }
                None => utilization,
            };
            total += self.utilization_since_root * utilization + self.energy * energy;
        }
        total / self.weights().iter().sum::<f64>()
    }
}

/// (sum of the waits so far, longest wait so far) of the jobs waiting in `engine`.
fn queue_waits(engine: &Engine) -> (f64, f64) {
    let state = engine.state();
    let jobs = &engine.inputs().jobs;
    let now = state.now;
    let mut sum = 0.0;
    let mut longest: f64 = 0.0;
    for &j in state.queue() {
        let wait = (now - jobs.get(j).submit).max(0.0);
        sum += wait;
        longest = longest.max(wait);
    }
    (sum, longest)
}

/// The sum of the bounded slowdowns so far (their wait until now, their run time in the
/// belief) of the jobs waiting in `engine`.
fn queue_bsld(engine: &Engine) -> f64 {
    let state = engine.state();
    let jobs = &engine.inputs().jobs;
    state
        .queue()
        .iter()
        .map(|&j| {
            let job = jobs.get(j);
            bounded_slowdown((state.now - job.submit).max(0.0), job.run_time)
        })
        .sum()
}

/// Utilization from the root to `until`: the busy node-seconds so far plus the work running
/// jobs have committed before `until`, over the node-seconds up so far plus the rest of the
/// horizon at today's capacity. Past `until`: the totals as they were then (the engine keeps
/// them in its mark `mark`, set at `until`), else busy over up since the root.
fn horizon_utilization(engine: &Engine, until: f64, mark: usize) -> f64 {
    let state = engine.state();
    let m = state.metrics();
    let now = state.now;
    let left = until - now;
    let shared = state.shared.as_ref();
    // (where jobs share nodes, in CPUs: each running job's, the CPUs up)
    let held = |job: u32, nodes: u32| match shared {
        Some(s) => s.allocation(job).map_or(0.0, |a| a.total_cpus() as f64),
        None => f64::from(nodes),
    };
    let totals = |at: &crate::engine::Metrics| match shared {
        Some(_) => (at.busy_cpu_seconds, at.up_cpu_seconds),
        None => (at.busy_node_seconds, at.up_node_seconds),
    };
    let (busy, up) = if left > 0.0 {
        let committed: f64 = (state.completions.iter())
            .map(|c| held(c.job, c.nodes) * (c.end.min(until) - now).max(0.0))
            .sum();
        let capacity = match shared {
            Some(s) => s.up_cpus() as f64,
            None => f64::from(engine.inputs().machine.nodes - state.down_nodes()),
        };
        let (busy, up) = totals(m);
        (busy + committed, up + capacity * left)
    } else {
        totals(state.metrics_at_mark(mark).unwrap_or(m))
    };
    if up > 0.0 {
        (busy / up).clamp(0.0, 1.0)
    } else {
        0.0
    }
}

/// With node power states, the computing share of all the energy (idle, waking, switching off
/// and sleeping nodes included) since the root, or of the power drawn at the root itself.
fn computing_share(engine: &Engine, p: &crate::model::PowerModel) -> Option<f64> {
    let m = engine.state().metrics();
    let counts = engine.state().nodes.as_ref()?.counts();
    let (computing, total) = if m.up_node_seconds > 0.0 {
        let e = m.energy(p);
        (e.computing_j, e.total_j())
    } else {
        let power = [
            p.idle_w,
            p.computing_w,
            p.switching_on_w,
            p.switching_off_w,
            p.sleeping_w,
            0.0,
        ];
        let total: f64 = counts
            .iter()
            .zip(power)
            .map(|(&c, w)| f64::from(c) * w)
            .sum();
        (f64::from(counts[1]) * p.computing_w, total)
    };
    Some(if total > 0.0 {
        (computing / total).clamp(0.0, 1.0)
    } else {
        0.0
    })
}

fn wait_term(mean_wait_seconds: f64) -> f64 {
    1.0 / (1.0 + mean_wait_seconds / 3600.0)
}
