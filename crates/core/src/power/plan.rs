//! The sequential future plan (SNF-ICON Definition 6) with the energy-aware node choice.
//!
//! Jobs are planned one at a time in queue order on the nodes' expected release times; a later
//! job never starts before an earlier one (the barrier). Each job takes, among the nodes free by
//! its planned start, those with the least non-compute energy until then, then by state (idle,
//! computing, switching on, others), then the longest remaining idle timeout, then node number.
//! Sleeping nodes it takes are woken `wake latency` before its start.

use crate::engine::power::{Node, NodeState};
use crate::model::PowerModel;

/// A job to plan: index, nodes, expected duration.
#[derive(Debug, Clone, Copy)]
pub struct PlanJob {
    pub job: u32,
    pub nodes: u32,
    pub duration: f64,
}

/// What the plan asks for now.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// Nodes to switch on now (sleeping or switching off ones chosen for a job starting within
    /// a wake latency).
    pub wake_now: Vec<u32>,
    /// The earliest future wake time, or the time to re-plan because planning stopped early.
    pub next_wake: Option<f64>,
    /// For each node, the earliest planned start that uses it (infinity if none).
    pub needed_at: Vec<f64>,
    /// Planned (start, nodes) of the first job, if it could be planned.
    pub head: Option<(f64, Vec<u32>)>,
    /// Planned starts, in order (for the decision log).
    pub starts: Vec<f64>,
}

/// Plans `jobs` from `now`. With `barrier_rule` a job never starts before the one planned
/// before it (SNF order); without it (FCFS with backfilling, behind the reserved head job)
/// each job takes the earliest nodes the earlier ones left, a job that cannot be planned is
/// passed over, and only the head job is planned beyond the wake horizon. `releases[i]` is when node i is expected free (infinity: unknown),
/// `deadlines[i]` its idle-timeout deadline (NaN: none). Planning stops at the first job that
/// cannot be planned, or that would start later than a wake latency plus a switch-off latency
/// from now: a wake it needs is then at least a switch-off latency away, and `next_wake` makes
/// the policy plan again before then.
pub fn plan(
    now: f64,
    jobs: &[PlanJob],
    nodes: &[Node],
    releases: &mut [f64],
    deadlines: &[f64],
    model: &PowerModel,
    barrier_rule: bool,
) -> Plan {
    let n = nodes.len();
    let mut out = Plan {
        needed_at: vec![f64::INFINITY; n],
        ..Plan::default()
    };
    let mut planned = vec![false; n];
    let mut barrier = now;
    // The known release times, kept sorted as jobs are planned: the r-th earliest is at hand.
    let mut sorted: Vec<f64> = releases.iter().copied().filter(|t| t.is_finite()).collect();
    sorted.sort_unstable_by(f64::total_cmp);
    let mut candidates: Vec<(f64, u8, f64, u32)> = Vec::with_capacity(n);
    let horizon = now + model.switch_on_s + model.switch_off_s;
    // Behind FCFS's head job (no barrier): the nodes it reserves stay usable, as in EASY, by
    // jobs that end before its planned start. `early[i]` is when node i is free for them.
    let mut head_start = f64::NEG_INFINITY;
    let mut early: Vec<f64> = Vec::new();
    let mut early_sorted: Vec<f64> = Vec::new();
    let mut backfilled = vec![false; n];
    for (k, job) in jobs.iter().enumerate() {
        let r = job.nodes as usize;
        if k > 0 && !barrier_rule && r > 0 && early_sorted.len() >= r {
            let start = now.max(early_sorted[r - 1]);
            let finish = start + job.duration;
            if finish <= head_start && start <= horizon {
                let chosen = choose(
                    r,
                    start,
                    now,
                    nodes,
                    &early,
                    &backfilled,
                    deadlines,
                    model,
                    &mut candidates,
                );
                for &i in &chosen {
                    let i = i as usize;
                    if !backfilled[i]
                        && matches!(
                            nodes[i].state,
                            NodeState::Sleeping | NodeState::SwitchingOff
                        )
                    {
                        let wake = start - model.switch_on_s;
                        if wake <= now {
                            out.wake_now.push(i as u32);
                        } else {
                            out.next_wake = Some(out.next_wake.map_or(wake, |w: f64| w.min(wake)));
                        }
                    }
                    out.needed_at[i] = out.needed_at[i].min(start);
                    move_release(&mut early_sorted, early[i], finish);
                    early[i] = finish;
                    backfilled[i] = true;
                    if !planned[i] {
                        move_release(&mut sorted, releases[i], finish);
                        releases[i] = finish;
                        planned[i] = true;
                    }
                }
                out.starts.push(start);
                continue;
            }
        }
        if sorted.len() < r || r == 0 {
            // Not enough nodes with a known release. In SNF order planning stops here; behind
            // FCFS's head job (no barrier) the next jobs may still fit.
            if barrier_rule {
                break;
            }
            continue;
        }
        let start = barrier.max(sorted[r - 1]);
        let beyond = start > horizon;
        if beyond {
            // Any wake this job needs is a switch-off latency away at least: plan again then.
            let replan = start - model.switch_on_s;
            out.next_wake = Some(out.next_wake.map_or(replan, |w: f64| w.min(replan)));
            if barrier_rule {
                break; // later jobs start later still
            }
            if k > 0 {
                continue; // only the head job's reservation is kept that far ahead
            }
        }
        let finish = start + job.duration;
        let chosen = choose(
            r,
            start,
            now,
            nodes,
            releases,
            &planned,
            deadlines,
            model,
            &mut candidates,
        );
        let before_head: Vec<f64> = if k == 0 && !barrier_rule {
            releases.to_vec()
        } else {
            Vec::new()
        };
        for &i in &chosen {
            let node = &nodes[i as usize];
            if !beyond
                && !planned[i as usize]
                && matches!(node.state, NodeState::Sleeping | NodeState::SwitchingOff)
            {
                let wake = start - model.switch_on_s;
                if wake <= now {
                    out.wake_now.push(i);
                } else {
                    out.next_wake = Some(out.next_wake.map_or(wake, |w: f64| w.min(wake)));
                }
            }
            let slot = &mut out.needed_at[i as usize];
            *slot = slot.min(start);
            move_release(&mut sorted, releases[i as usize], finish);
            releases[i as usize] = finish;
            planned[i as usize] = true;
        }
        if k == 0 {
            if !barrier_rule {
                head_start = start;
                early = releases.to_vec();
                for &i in &chosen {
                    early[i as usize] = before_head[i as usize];
                }
                early_sorted = early.iter().copied().filter(|t| t.is_finite()).collect();
                early_sorted.sort_unstable_by(f64::total_cmp);
            }
            out.head = Some((start, chosen));
        }
        out.starts.push(start);
        if barrier_rule {
            barrier = start;
        }
    }
    out
}

/// Replaces `old` by `new` in the sorted release list.
fn move_release(sorted: &mut Vec<f64>, old: f64, new: f64) {
    if old.is_finite() {
        let at = sorted.partition_point(|&t| t < old);
        sorted.remove(at);
    }
    sorted.insert(sorted.partition_point(|&t| t < new), new);
}

/// The `r` nodes free by `start` (per `free_at`) with the least non-compute energy until then,
/// then by state, longest remaining idle timeout, node number. `busy[i]`: node i runs a planned
/// job until `free_at[i]`.
#[allow(clippy::too_many_arguments)]
fn choose(
    r: usize,
    start: f64,
    now: f64,
    nodes: &[Node],
    free_at: &[f64],
    busy: &[bool],
    deadlines: &[f64],
    model: &PowerModel,
    candidates: &mut Vec<(f64, u8, f64, u32)>,
) -> Vec<u32> {
    candidates.clear();
    for i in 0..nodes.len() {
        if free_at[i] <= start {
            let (energy, rank) = if busy[i] {
                (model.idle_w * (start - free_at[i]), 1)
            } else {
                node_cost(&nodes[i], free_at[i], now, start, model)
            };
            let timeout =
                if nodes[i].state == NodeState::Idle && !busy[i] && deadlines[i].is_finite() {
                    -(deadlines[i] - now)
                } else {
                    0.0
                };
            candidates.push((energy, rank, timeout, i as u32));
        }
    }
    let key = |a: &(f64, u8, f64, u32), b: &(f64, u8, f64, u32)| {
        a.0.total_cmp(&b.0)
            .then(a.1.cmp(&b.1))
            .then(a.2.total_cmp(&b.2))
            .then(a.3.cmp(&b.3))
    };
    if candidates.len() > r {
        candidates.select_nth_unstable_by(r - 1, key);
        candidates.truncate(r);
    }
    candidates.sort_unstable_by(key);
    candidates.iter().map(|c| c.3).collect()
}

/// Non-compute energy of node `node` (free at `release`) from `now` until `start`, and the
/// rank of its state in the tie-break.
fn node_cost(node: &Node, release: f64, now: f64, start: f64, m: &PowerModel) -> (f64, u8) {
    match node.state {
        NodeState::Idle => (m.idle_w * (start - now), 0),
        NodeState::Computing => (m.idle_w * (start - release), 1),
        NodeState::SwitchingOn => (
            m.switching_on_w * (node.until - now) + m.idle_w * (start - node.until),
            2,
        ),
        NodeState::Sleeping => (
            m.sleeping_w * (start - m.switch_on_s - now).max(0.0)
                + m.switching_on_w * m.switch_on_s,
            3,
        ),
        NodeState::SwitchingOff => (
            m.switching_off_w * (node.until - now)
                + m.sleeping_w * (start - m.switch_on_s - node.until).max(0.0)
                + m.switching_on_w * m.switch_on_s,
            3,
        ),
    }
}

/// Expected release time of each node with the IPM rules: idle now; computing at its job's
/// start + requested time (unknown once overrunning); switching on at the end of the
/// transition; sleeping after a wake; switching off after the switch-off and a wake.
/// `computing_release(job)` gives the release of a computing node's job.
pub fn releases(
    now: f64,
    nodes: &[Node],
    model: &PowerModel,
    computing_release: impl Fn(u32) -> f64,
) -> Vec<f64> {
    nodes
        .iter()
        .map(|node| match node.state {
            NodeState::Idle => now,
            NodeState::Computing => computing_release(node.job),
            NodeState::SwitchingOn => node.until,
            NodeState::Sleeping => now + model.switch_on_s,
            NodeState::SwitchingOff => node.until + model.switch_on_s,
        })
        .collect()
}
