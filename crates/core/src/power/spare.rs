//! Warm-spare target optimisation (SNF-ICON Eqs. 27-39, Lemma 2).
//!
//! With idle nodes never switched off before their timeout (Table I), a candidate target only
//! decides how many sleeping nodes to wake now. Their readiness delays and energies are then
//! the same for every candidate except those woken, so instead of sorting `N` delays for each of
//! up to `N + 1` candidates (O(N² log N)), the delays that do not depend on the target are sorted
//! once and each candidate's request-weighted order statistic is read off prefix sums:
//! O(N log N) per decision.

use crate::engine::power::{Node, NodeState};
use crate::model::PowerModel;

/// Lemma 2: expected transition time still remaining when the next event (rate `rate`) occurs.
pub fn unfinished(d: f64, rate: f64) -> f64 {
    if d <= 0.0 {
        return 0.0;
    }
    if rate <= 0.0 {
        return 0.0; // no event ever comes: nothing remains unfinished at it
    }
    d - (1.0 - (-rate * d).exp()) / rate
}

/// Lemma 1: `E[min(T, cap)]` for `T ~ Exp(rate)`.
pub fn capped_horizon(rate: f64, cap: f64) -> f64 {
    if rate <= 0.0 {
        cap
    } else {
        (1.0 - (-rate * cap).exp()) / rate
    }
}

/// The state of the machine at a spare-planning point.
#[derive(Debug, Clone)]
pub struct SpareInput<'a> {
    pub now: f64,
    pub nodes: &'a [Node],
    /// The power model of each node group (`Node::group`).
    pub models: &'a [PowerModel],
    /// Idle nodes whose timeout has expired: switched off in every plan.
    pub expired: &'a [bool],
    /// `p[r - 1]`: probability that the next job requests `r` nodes.
    pub pmf: &'a [f64],
    /// Next-event rate (arrivals + completions) and probability that it is an arrival.
    pub event_rate: f64,
    pub arrival_probability: f64,
    /// Mean capped time to the next event, Eq. 25.
    pub horizon: f64,
    pub alpha: f64,
    pub beta: f64,
    pub min_spares: u32,
    pub max_spares: u32,
}

/// One candidate target with its costs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Candidate {
    pub target: u32,
    pub waiting: f64,
    pub energy: f64,
    pub cost: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SpareChoice {
    pub chosen: Candidate,
    pub candidates: Vec<Candidate>,
    /// Sleeping nodes to wake now (the cheapest: equal costs on a homogeneous machine, so the
    /// lowest numbers).
    pub wake: Vec<u32>,
    /// Expired idle nodes to switch off.
    pub switch_off: Vec<u32>,
}

/// A sleeping node a candidate may wake: its readiness delay and energy over the horizon
/// either way.
#[derive(Debug, Clone, Copy)]
struct Sleeper {
    node: u32,
    woken_delay: f64,
    asleep_delay: f64,
    woken_energy: f64,
    asleep_energy: f64,
}

/// The pieces every candidate shares.
struct Parts {
    /// Delays that do not depend on the target, sorted.
    fixed: Vec<f64>,
    /// Energy of the nodes that do not depend on the target.
    fixed_energy: f64,
    /// Sleeping nodes, cheapest to wake first (alpha * wake latency + beta * wake energy,
    /// latency, energy, node number): a candidate waking w nodes wakes the first w.
    sleeping: Vec<Sleeper>,
    /// Energy of waking the first w sleeping nodes and letting the others sleep, by w.
    energy_by_wakes: Vec<f64>,
    /// Target without waking any sleeping node: switching on + idle kept warm.
    base: u32,
    /// Non-computing nodes (K).
    non_computing: usize,
    switch_off: Vec<u32>,
}

fn parts(input: &SpareInput) -> Parts {
    let h = input.horizon;
    let (rate, now) = (input.event_rate, input.now);
    let transition = |power_during: f64, left: f64, power_after: f64| {
        power_during * left.min(h) + power_after * (h - left).max(0.0)
    };
    let mut p = Parts {
        fixed: Vec::new(),
        fixed_energy: 0.0,
        sleeping: Vec::new(),
        energy_by_wakes: Vec::new(),
        base: 0,
        non_computing: 0,
        switch_off: Vec::new(),
    };
    let mut ranked: Vec<(f64, f64, f64, u32)> = Vec::new();
    for (i, node) in input.nodes.iter().enumerate() {
        let m = &input.models[node.group as usize];
        match node.state {
            NodeState::Computing | NodeState::Down => continue,
            NodeState::Idle if input.expired[i] => {
                // Switched off now: the rest of the switch-off when the event comes, then a
                // wake.
                p.fixed
                    .push(m.switch_on_s + unfinished(m.switch_off_s, rate));
                p.fixed_energy += transition(m.switching_off_w, m.switch_off_s, m.sleeping_w);
                p.switch_off.push(i as u32);
            }
            NodeState::Idle => {
                p.fixed.push(0.0);
                p.fixed_energy += m.idle_w * h;
                p.base += 1;
            }
            NodeState::SwitchingOn => {
                // Transitions take their mean latency from their start (the manager does not
                // know the draw).
                let left = (node.since + m.switch_on_s - now).max(0.0);
                p.fixed.push(unfinished(left, rate));
                p.fixed_energy += transition(m.switching_on_w, left, m.idle_w);
                p.base += 1;
            }
            NodeState::SwitchingOff => {
                let left = (node.since + m.switch_off_s - now).max(0.0);
                p.fixed.push(m.switch_on_s + unfinished(left, rate));
                p.fixed_energy += transition(m.switching_off_w, left, m.sleeping_w);
            }
            NodeState::Sleeping => {
                let wake_energy = m.switching_on_w * m.switch_on_s;
                let cost = input.alpha * m.switch_on_s + input.beta * wake_energy;
                ranked.push((cost, m.switch_on_s, wake_energy, i as u32));
                p.sleeping.push(Sleeper {
                    node: i as u32,
                    woken_delay: unfinished(m.switch_on_s, rate),
                    asleep_delay: m.switch_on_s,
                    woken_energy: transition(m.switching_on_w, m.switch_on_s, m.idle_w),
                    asleep_energy: m.sleeping_w * h,
                });
            }
        }
        p.non_computing += 1;
    }
    p.fixed.sort_unstable_by(f64::total_cmp);
    // Cheapest to wake first (node numbers already ascending: a stable sort keeps them).
    let mut order: Vec<usize> = (0..ranked.len()).collect();
    order.sort_by(|&a, &b| {
        let (x, y) = (ranked[a], ranked[b]);
        x.0.total_cmp(&y.0)
            .then(x.1.total_cmp(&y.1))
            .then(x.2.total_cmp(&y.2))
            .then(x.3.cmp(&y.3))
    });
    p.sleeping = order.iter().map(|&k| p.sleeping[k]).collect();
    let asleep_total: f64 = p.sleeping.iter().map(|s| s.asleep_energy).sum();
    let mut energy = p.fixed_energy + asleep_total;
    p.energy_by_wakes.push(energy);
    for sleeper in &p.sleeping {
        energy += sleeper.woken_energy - sleeper.asleep_energy;
        p.energy_by_wakes.push(energy);
    }
    p
}

/// Order-statistic weights `q[m]` (m = 0..K-1): `p[m]` below K, the tail mass at K.
fn rank_weights(pmf: &[f64], k: usize) -> Vec<f64> {
    let mut q = vec![0.0; k];
    for (r, &p) in pmf.iter().enumerate() {
        if k > 0 {
            q[r.min(k - 1)] += p;
        }
    }
    q
}

/// The candidate range {x_min, ..., x_max} (Eqs. 29-31) as numbers of nodes to wake.
fn wake_range(input: &SpareInput, p: &Parts) -> (u32, u32) {
    let sleeping = p.sleeping.len() as u32;
    let real = p.base + sleeping;
    let x_min = p.base.max(input.min_spares.min(real));
    let x_max = x_min.max(input.max_spares.min(real));
    (x_min - p.base, x_max - p.base)
}

fn candidate(input: &SpareInput, p: &Parts, wake: u32, waiting_delay: f64) -> Candidate {
    let waiting = if p.non_computing > 0 && input.arrival_probability > 0.0 {
        input.arrival_probability * waiting_delay
    } else {
        0.0
    };
    let energy = p.energy_by_wakes[wake as usize];
    Candidate {
        target: p.base + wake,
        waiting,
        energy,
        cost: input.alpha * waiting + input.beta * energy,
    }
}

fn better(a: &Candidate, b: &Candidate) -> bool {
    let key = |c: &Candidate| (c.cost, c.waiting, c.energy, c.target);
    let (ka, kb) = (key(a), key(b));
    ka.0.total_cmp(&kb.0)
        .then(ka.1.total_cmp(&kb.1))
        .then(ka.2.total_cmp(&kb.2))
        .then(ka.3.cmp(&kb.3))
        .is_lt()
}

fn choose(input: &SpareInput, p: Parts, candidates: Vec<Candidate>) -> SpareChoice {
    let chosen = *candidates
        .iter()
        .reduce(|best, c| if better(c, best) { c } else { best })
        .expect("x_min exists");
    let wake = p.sleeping[..(chosen.target - p.base) as usize]
        .iter()
        .map(|s| s.node)
        .collect();
    let _ = input;
    SpareChoice {
        chosen,
        candidates,
        wake,
        switch_off: p.switch_off,
    }
}

/// The optimal target: O(N log N) on a machine of one node group (every sleeping node then
/// has the same delays), else by evaluating every candidate (O(N² log N)).
pub fn optimise(input: &SpareInput) -> SpareChoice {
    if input.models.len() > 1 {
        return brute_force(input);
    }
    let p = parts(input);
    let k = p.non_computing;
    let q = rank_weights(input.pmf, k);
    let mut prefix = vec![0.0; k + 1];
    for m in 0..k {
        prefix[m + 1] = prefix[m] + q[m];
    }
    let m = &input.models[0];
    let (v, l) = (unfinished(m.switch_on_s, input.event_rate), m.switch_on_s);
    let s = p.sleeping.len();
    // Fixed delays below v (region A), in [v, l) (B), at or above l (C).
    let a = p.fixed.partition_point(|&f| f < v);
    let b_end = p.fixed.partition_point(|&f| f < l).max(a);
    let region_a: f64 = (0..a).map(|i| p.fixed[i] * q[i]).sum();
    let region_c: f64 = (b_end..p.fixed.len()).map(|i| p.fixed[i] * q[i + s]).sum();
    let (lo, hi) = wake_range(input, &p);
    let mut candidates = Vec::with_capacity((hi - lo + 1) as usize);
    for wake in lo..=hi {
        let w = wake as usize;
        let woken = v * (prefix[a + w] - prefix[a]);
        let region_b: f64 = (a..b_end).map(|i| p.fixed[i] * q[i + w]).sum();
        let first_asleep = b_end + w;
        let asleep = l * (prefix[first_asleep + (s - w)] - prefix[first_asleep]);
        candidates.push(candidate(
            input,
            &p,
            wake,
            region_a + woken + region_b + asleep + region_c,
        ));
    }
    choose(input, p, candidates)
}

/// The same choice by evaluating J(x) directly for every candidate: sort every non-computing
/// node's delay, weight the order statistics (Eqs. 33-35). O(N² log N): the reference for
/// tests, and the way on machines of several node groups.
pub fn brute_force(input: &SpareInput) -> SpareChoice {
    let p = parts(input);
    let k = p.non_computing;
    let (lo, hi) = wake_range(input, &p);
    let mut candidates = Vec::new();
    for wake in lo..=hi {
        let mut delays = p.fixed.clone();
        let w = wake as usize;
        delays.extend(p.sleeping[..w].iter().map(|s| s.woken_delay));
        delays.extend(p.sleeping[w..].iter().map(|s| s.asleep_delay));
        delays.sort_unstable_by(f64::total_cmp);
        let mean: f64 = input
            .pmf
            .iter()
            .enumerate()
            .map(|(r, &pr)| {
                if k == 0 {
                    0.0
                } else {
                    pr * delays[r.min(k - 1)]
                }
            })
            .sum();
        candidates.push(candidate(input, &p, wake, mean));
    }
    choose(input, p, candidates)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::power::NO_JOB;

    const AOBA: PowerModel = PowerModel {
        computing_w: 2100.0,
        idle_w: 600.0,
        sleeping_w: 60.0,
        switching_on_w: 600.0,
        switching_off_w: 600.0,
        switch_on_s: 1200.0,
        switch_on_std_s: 60.0,
        switch_off_s: 600.0,
        switch_off_std_s: 60.0,
    };

    /// A crafted machine state from a seed: every node state, transitions part-way through.
    fn state(seed: u64, n: usize) -> (Vec<Node>, Vec<bool>, Vec<f64>) {
        let mut x = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) as f64 / (1u64 << 31) as f64
        };
        let mut nodes = Vec::new();
        let mut expired = Vec::new();
        for _ in 0..n {
            let r = next();
            // Transitions began before now (1000) or overdue (began long ago).
            let (state, since) = match (r * 5.0) as u32 {
                0 => (NodeState::Idle, 0.0),
                1 => (NodeState::Computing, 0.0),
                2 => (NodeState::SwitchingOn, -500.0 + 1500.0 * next()),
                3 => (NodeState::SwitchingOff, 0.0 + 1200.0 * next()),
                _ => (NodeState::Sleeping, 0.0),
            };
            expired.push(state == NodeState::Idle && next() < 0.3);
            nodes.push(Node {
                state,
                since,
                job: NO_JOB,
                wake_when_asleep: false,
                back: f64::NAN,
                back_asleep: false,
                group: 0,
            });
        }
        let mut pmf: Vec<f64> = (0..n).map(|_| next().powi(3)).collect();
        let total: f64 = pmf.iter().sum();
        pmf.iter_mut().for_each(|p| *p /= total);
        (nodes, expired, pmf)
    }

    #[test]
    fn fast_optimiser_matches_brute_force() {
        for seed in 0..200 {
            let n = 1 + (seed as usize * 7) % 60;
            let (nodes, expired, pmf) = state(seed, n);
            for (rate, alpha) in [(1e-3, 5000.0), (1e-5, 5000.0), (0.0, 1.0), (5e-3, 1e6)] {
                let input = SpareInput {
                    now: 1000.0,
                    nodes: &nodes,
                    models: &[AOBA],
                    expired: &expired,
                    pmf: &pmf,
                    event_rate: rate,
                    arrival_probability: 0.6,
                    horizon: capped_horizon(rate, 86400.0),
                    alpha,
                    beta: 1.0,
                    min_spares: 1,
                    max_spares: n as u32,
                };
                let (fast, slow) = (optimise(&input), brute_force(&input));
                assert_eq!(fast.chosen.target, slow.chosen.target, "seed {seed}");
                for (a, b) in fast.candidates.iter().zip(&slow.candidates) {
                    assert!(
                        (a.waiting - b.waiting).abs() <= 1e-9 * b.waiting.abs().max(1.0),
                        "seed {seed}"
                    );
                    assert!((a.energy - b.energy).abs() <= 1e-9 * b.energy.abs().max(1.0));
                }
                assert_eq!(fast.wake, slow.wake);
            }
        }
    }

    #[test]
    fn hand_computed_two_node_case() {
        // Two sleeping nodes, one request size (1 node) for sure, next event an arrival with
        // probability 1 at rate 1/1000 s. Waking one node: delay phi(1200) instead of 1200.
        let nodes = [Node {
            state: NodeState::Sleeping,
            since: 0.0,
            job: NO_JOB,
            wake_when_asleep: false,
            back: f64::NAN,
            back_asleep: false,
            group: 0,
        }; 2];
        let rate = 1e-3;
        let h = capped_horizon(rate, 86400.0);
        let input = SpareInput {
            now: 0.0,
            nodes: &nodes,
            models: &[AOBA],
            expired: &[false, false],
            pmf: &[1.0, 0.0],
            event_rate: rate,
            arrival_probability: 1.0,
            horizon: h,
            alpha: 5000.0,
            beta: 1.0,
            min_spares: 1,
            max_spares: 2,
        };
        let choice = optimise(&input);
        // x_min = min(1, 2) = 1 (wake at least one); x in {1, 2}.
        assert_eq!(choice.candidates.len(), 2);
        let phi = 1200.0 - (1.0 - (-rate * 1200.0f64).exp()) / rate;
        assert!((choice.candidates[0].waiting - phi).abs() < 1e-9);
        let woken = 600.0 * 1200f64.min(h) + 600.0 * (h - 1200.0).max(0.0);
        let asleep = 60.0 * h;
        assert!((choice.candidates[0].energy - (woken + asleep)).abs() < 1e-6);
        assert!((choice.candidates[1].energy - 2.0 * woken).abs() < 1e-6);
        // Same waiting (only the first-ready node matters for 1-node jobs): less energy wins.
        assert_eq!(choice.chosen.target, 1);
        assert_eq!(choice.wake, vec![0]);
    }

    #[test]
    fn lemma_formulas() {
        assert!((unfinished(100.0, 0.01) - (100.0 - (1.0 - (-1.0f64).exp()) / 0.01)).abs() < 1e-12);
        assert_eq!(unfinished(100.0, 0.0), 0.0);
        assert!((capped_horizon(0.01, 50.0) - (1.0 - (-0.5f64).exp()) / 0.01).abs() < 1e-12);
        assert_eq!(capped_horizon(0.0, 50.0), 50.0);
    }
}
