//! The sequential future plan (SNF-ICON Definition 6) with the energy-aware node choice.
//!
//! Every node has an expected release time (the agenda) and a non-compute energy already
//! committed before it can run anything (a wake, the rest of a switch-off). Jobs are planned
//! one at a time in queue order; each takes, among the nodes released by its start, those with
//! the least non-compute energy until then, then by state (idle, computing, switching on,
//! others), then the longest remaining idle timeout, then node number. As in the authors'
//! simulator, a node's committed energy and state are those it had when planning began, and a
//! sleeping or switching-off node costs only its committed energy (it sleeps until woken).
//! Sleeping nodes a job takes are woken a wake latency before its start.

use crate::engine::power::{Node, NodeState};
use crate::engine::View;
use crate::model::PowerModel;

/// Announced maintenance windows the plans keep clear of: (start, end, nodes down), by start.
#[derive(Debug, Clone, Default)]
pub struct Windows {
    list: Vec<(f64, f64, u32)>,
    machine: u32,
}

impl Windows {
    /// The announced windows of `view` that have not started.
    pub fn of(view: &View) -> Self {
        let mut list: Vec<(f64, f64, u32)> = view
            .announced
            .iter()
            .filter(|w| w.start > view.now)
            .map(|w| (w.start, w.end, w.nodes_down(view.machine_nodes)))
            .collect();
        list.sort_by(|a, b| a.0.total_cmp(&b.0));
        Windows {
            list,
            machine: view.machine_nodes,
        }
    }

    /// Windows given as (start, end, nodes down) on a machine of `machine` nodes.
    pub fn new(mut list: Vec<(f64, f64, u32)>, machine: u32) -> Self {
        list.sort_by(|a, b| a.0.total_cmp(&b.0));
        Windows { list, machine }
    }

    /// The earliest time from `start` at which a job of `nodes` nodes running `d` seconds does
    /// not run into a window that leaves it too little room (its nodes and the window's more
    /// than the machine): such a job is planned after the window, as admission would start it.
    pub fn clear(&self, mut start: f64, d: f64, nodes: u32) -> f64 {
        let mut moved = true;
        while moved {
            moved = false;
            for &(ws, we, down) in &self.list {
                let blocks = u64::from(down) + u64::from(nodes) > u64::from(self.machine);
                if blocks && start < we && start + d > ws {
                    start = we;
                    moved = true;
                }
            }
        }
        start
    }
}

/// A job to plan: index, nodes, expected duration.
#[derive(Debug, Clone, Copy)]
pub struct PlanJob {
    pub job: u32,
    pub nodes: u32,
    pub duration: f64,
}

/// What the plan knows about one node.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slot {
    /// When it is expected free to run a job (infinity: unknown).
    pub release: f64,
    /// Non-compute energy committed before it can run anything (J).
    pub base: f64,
    /// 0 idle, 1 computing, 2 switching on, 3 the others.
    pub rank: u8,
    /// Minus the remaining idle timeout (idle nodes), 0 otherwise: longer timeouts first.
    pub timeout_key: f64,
    /// Asleep or falling asleep: it waits at no cost until woken.
    pub cold: bool,
    /// Asleep now: a job that takes it wakes it a wake latency before its start.
    pub asleep: bool,
    /// Its node group, and its group's idle power (W), computing power (W) and wake latency
    /// (s).
    pub group: u16,
    pub idle_w: f64,
    pub computing_w: f64,
    pub wake_s: f64,
}

/// Expected release of each node (the agenda), from its state and its group's model: idle now;
/// computing when its job is expected to end (`job_release`, infinity if unknown); switching
/// on at the mean latency after the transition began; sleeping after a wake; switching off
/// after the rest of the switch-off and a wake; down when its window ends (plus a wake if it
/// comes back asleep). Transitions are assumed to take their mean latency from their start (a
/// real manager does not know the draw), and an overdue one to end now.
pub fn agenda(
    now: f64,
    nodes: &[Node],
    models: &[PowerModel],
    deadlines: &[f64],
    job_release: impl Fn(u32) -> f64,
) -> Vec<Slot> {
    nodes
        .iter()
        .enumerate()
        .map(|(i, node)| {
            let m = &models[node.group as usize];
            // (release, committed energy, rank, cold, asleep)
            let (release, base, rank, cold, asleep) = match node.state {
                NodeState::Idle => (now, 0.0, 0, false, false),
                NodeState::Computing => (job_release(node.job), 0.0, 1, false, false),
                NodeState::SwitchingOn => {
                    let end = (node.since + m.switch_on_s).max(now);
                    (end, m.switching_on_w * (end - now), 2, false, false)
                }
                NodeState::SwitchingOff => {
                    let end = (node.since + m.switch_off_s).max(now);
                    let base = m.switching_off_w * (end - now) + m.switching_on_w * m.switch_on_s;
                    (end + m.switch_on_s, base, 3, true, false)
                }
                NodeState::Sleeping => (
                    now + m.switch_on_s,
                    m.switching_on_w * m.switch_on_s,
                    3,
                    true,
                    true,
                ),
                NodeState::Down => {
                    let back = node.back.max(now);
                    if node.back_asleep {
                        let base = m.switching_on_w * m.switch_on_s;
                        (back + m.switch_on_s, base, 3, true, false)
                    } else {
                        (back, 0.0, 3, false, false)
                    }
                }
            };
            let timeout_key = match (node.state, deadlines[i].is_finite()) {
                (NodeState::Idle, true) => -(deadlines[i] - now),
                (NodeState::Idle, false) => f64::NEG_INFINITY,
                _ => 0.0,
            };
            Slot {
                release,
                base,
                rank,
                timeout_key,
                cold,
                asleep,
                group: node.group,
                idle_w: m.idle_w,
                computing_w: m.computing_w,
                wake_s: m.switch_on_s,
            }
        })
        .collect()
}

/// What the plan asks for now.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// Sleeping nodes to switch on now (chosen for a job starting within a wake latency).
    pub wake_now: Vec<u32>,
    /// Future times at which a chosen sleeping node must wake (re-plan then), and the time to
    /// plan again when planning stopped at the wake horizon.
    pub wake_times: Vec<f64>,
    /// For each node, the earliest planned start that uses it (infinity if none).
    pub needed_at: Vec<f64>,
    /// Planned (start, nodes) of the first job, if it could be planned.
    pub head: Option<(f64, Vec<u32>)>,
    /// Planned starts, in order (for the decision log).
    pub starts: Vec<f64>,
    /// Each planned job's start and nodes, in order (the class plan fills it only when asked:
    /// tests compare it).
    pub planned: Vec<(u32, f64, Vec<u32>)>,
}

/// Plans `jobs` (in queue order) from `now` on `slots` (updated: planned jobs hold their nodes
/// until their expected end). A job never starts before the one planned before it, and planning
/// stops at the first job that cannot be planned (Definition 6). On a machine of several node
/// groups a job runs within one: the one where it can start earliest (ties: the lowest
/// computing power, then the first group).
///
/// With `cut` (planning for wakes), the wake horizon: a job starting later than a wake plus a
/// switch-off latency from now needs no wake before a switch-off latency from now; planning
/// stops there and `wake_times` holds the time to plan again (its start minus a wake latency).
/// Without it (a reservation), every job is planned however far ahead. A job is planned after
/// an announced window it would run into without room (see [`Windows::clear`]).
pub fn plan(
    now: f64,
    jobs: &[PlanJob],
    slots: &mut [Slot],
    models: &[PowerModel],
    cut: bool,
    windows: &Windows,
) -> Plan {
    let n = slots.len();
    let mut out = Plan {
        needed_at: vec![f64::INFINITY; n],
        ..Plan::default()
    };
    let mut barrier = now;
    let mut known: Vec<f64> = Vec::with_capacity(n);
    let mut candidates: Vec<(f64, u8, f64, u32)> = Vec::with_capacity(n);
    let longest = models
        .iter()
        .map(|m| m.switch_on_s + m.switch_off_s)
        .fold(0.0, f64::max);
    let horizon = if cut { now + longest } else { f64::INFINITY };
    // A sleeping node is woken for the first job planned on it (the earliest: later ones
    // start later).
    let mut planned = vec![false; n];
    for (k, job) in jobs.iter().enumerate() {
        let r = job.nodes as usize;
        if r == 0 {
            continue;
        }
        // The group where it starts earliest, and when: the r-th earliest known release there
        // (few jobs are planned per call: selecting each time costs less than keeping sorted
        // lists).
        let mut best: Option<(f64, f64, u16)> = None;
        for g in 0..models.len() as u16 {
            known.clear();
            known.extend(
                slots
                    .iter()
                    .filter(|s| s.group == g)
                    .map(|s| s.release)
                    .filter(|t| t.is_finite()),
            );
            if known.len() < r {
                continue;
            }
            let (_, rth, _) = known.select_nth_unstable_by(r - 1, f64::total_cmp);
            let start = windows.clear(barrier.max(*rth), job.duration, job.nodes);
            let computing = models[g as usize].computing_w;
            let better = best
                .is_none_or(|(s, c, _)| start.total_cmp(&s).then(computing.total_cmp(&c)).is_lt());
            if better {
                best = Some((start, computing, g));
            }
        }
        let Some((start, _, group)) = best else {
            break; // not enough nodes with a known release
        };
        if start > horizon {
            // Any wake this job needs is a switch-off latency away at least: plan again then.
            out.wake_times
                .push(start - models[group as usize].switch_on_s);
            break; // later jobs start later still
        }
        let finish = start + job.duration;
        let release = |i: usize| slots[i].release;
        let chosen = choose(r, start, slots, release, Some(group), &mut candidates);
        for &i in &chosen {
            let i = i as usize;
            if !planned[i] && slots[i].asleep {
                let at = start - slots[i].wake_s;
                if at <= now {
                    out.wake_now.push(i as u32);
                } else {
                    out.wake_times.push(at);
                }
            }
            out.needed_at[i] = out.needed_at[i].min(start);
            slots[i].release = finish;
            planned[i] = true;
        }
        if k == 0 {
            out.head = Some((start, chosen.clone()));
        }
        out.starts.push(start);
        out.planned.push((job.job, start, chosen));
        barrier = start;
    }
    out
}

/// The `r` nodes of `group` (any group when `None`) released by `start` (per `release`) with
/// the least non-compute energy until then, then by state, longest remaining idle timeout,
/// node number.
pub fn choose(
    r: usize,
    start: f64,
    slots: &[Slot],
    release: impl Fn(usize) -> f64,
    group: Option<u16>,
    candidates: &mut Vec<(f64, u8, f64, u32)>,
) -> Vec<u32> {
    candidates.clear();
    for (i, s) in slots.iter().enumerate() {
        if group.is_some_and(|g| s.group != g) {
            continue;
        }
        let at = release(i);
        if at <= start {
            let cost = if s.cold {
                s.base
            } else {
                s.base + s.idle_w * (start - at)
            };
            candidates.push((cost, s.rank, s.timeout_key, i as u32));
        }
    }
    let key = |a: &(f64, u8, f64, u32), b: &(f64, u8, f64, u32)| {
        a.0.total_cmp(&b.0)
            .then(a.1.cmp(&b.1))
            .then(a.2.total_cmp(&b.2))
            .then(a.3.cmp(&b.3))
    };
    // The r smallest keys (unique: the node number ends them); their order does not matter.
    if candidates.len() > r {
        candidates.select_nth_unstable_by(r - 1, key);
        candidates.truncate(r);
    }
    candidates.iter().map(|c| c.3).collect()
}
