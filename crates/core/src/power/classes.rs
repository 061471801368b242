//! The wake plan of a queue served without backfilling, on classes of nodes instead of nodes.
//!
//! [`plan`](crate::power::plan::plan) with the wake horizon looks at every node for every job it
//! plans; most nodes of a large machine are alike in all it compares: the sleeping nodes of a
//! group, the nodes of one running job. Here such nodes form one class (their agenda slot is
//! the same but for the node number), kept in the order the plan breaks ties in, so that a plan
//! costs what the classes cost, not what the nodes do. The decisions are exactly those of
//! `plan`: the same start for each job, the same nodes chosen (the least non-compute energy,
//! then state, longest remaining idle timeout, node number), the same wakes and timers. A test
//! (`tests/it/power_classes.rs`) runs both on the same calls and compares.
//!
//! The manager keeps which nodes are in which state from the nodes' journal of changes
//! ([`NodeIndex`], `node_index.rs`), so that building the classes does not scan every node
//! either. Covered: one
//! node group and no node down for maintenance; otherwise the manager plans node by node.

use crate::engine::power::{Node, NodeState, NO_JOB};
use crate::model::PowerModel;
use crate::power::node_index::NodeIndex;
use crate::power::plan::{Plan, PlanJob, Windows};

/// Nodes alike for the plan: one agenda slot but for the node number.
#[derive(Debug, Clone, Copy)]
struct Class {
    release: f64,
    base: f64,
    rank: u8,
    cold: bool,
    asleep: bool,
    /// Already chosen for a job of this plan (a sleeping node is woken for the first only).
    planned: bool,
    /// Its nodes: `source[lo..hi]`, in the order the plan takes them ((timeout key, node)).
    source: Source,
    lo: usize,
    hi: usize,
}

/// Where a class's nodes are listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    /// `ClassScratch::members`: (timeout key, node), the idle nodes (listed as far as the plan
    /// reads them, see [`list_idle`]).
    Members,
    /// `NodeIndex::computing`: (job, node); key 0.
    Computing,
    /// `NodeIndex::sleeping`; key 0.
    Sleeping,
    /// `NodeIndex::other`; key 0.
    Other,
    /// `ClassInput::taken`: (release, node); key 0.
    Taken,
}

/// The `k`-th node of a class, as (timeout key, node).
fn member(s: &ClassScratch, index: &NodeIndex, class: &Class, k: usize) -> (f64, u32) {
    match class.source {
        Source::Members => s.members[k],
        Source::Computing => (0.0, index.computing[k].1),
        Source::Sleeping => (0.0, index.sleeping[k]),
        Source::Other => (0.0, index.other[k].2),
        Source::Taken => (0.0, s.taken[k].1),
    }
}

/// Appends the nodes of `class` to `out`, in its order ([`member`] for a whole class, a list
/// at a time: a reservation may take most of the machine).
fn extend_nodes(out: &mut Vec<u32>, s: &ClassScratch, index: &NodeIndex, class: &Class) {
    let range = class.lo..class.hi;
    match class.source {
        Source::Members => out.extend(s.members[range].iter().map(|e| e.1)),
        Source::Computing => out.extend(index.computing[range].iter().map(|e| e.1)),
        Source::Sleeping => out.extend_from_slice(&index.sleeping[range]),
        Source::Other => out.extend(index.other[range].iter().map(|e| e.2)),
        Source::Taken => out.extend(s.taken[range].iter().map(|e| e.1)),
    }
}

/// What the class plan needs from the manager.
pub struct ClassInput<'a> {
    pub now: f64,
    pub nodes: &'a [Node],
    pub model: &'a PowerModel,
    pub index: &'a NodeIndex,
    /// Idle nodes by (deadline, node), the deadlines of all of them known.
    pub idle_by_deadline: &'a [(f64, u32)],
    /// Each running job's expected release, sorted by job.
    pub releases: &'a [(u32, f64)],
    /// Fill `Plan::needed_at` (only read for idle nodes past their timeout).
    pub needed_at: bool,
    /// Fill `Plan::starts` and `Plan::planned` (for tests, and for a reservation).
    pub record: bool,
    /// Stop at the wake horizon (planning for wakes); without it every job is planned however
    /// far ahead (a reservation).
    pub cut: bool,
    /// Idle nodes a start of this call took: (release, node), planned as computing until
    /// then (the scan's reservation); `taken_mark` marks them by node (empty when none).
    pub taken: &'a [(f64, u32)],
    pub taken_mark: &'a [bool],
}

/// Scratch space kept between calls.
#[derive(Debug, Clone, Default)]
pub struct ClassScratch {
    classes: Vec<Class>,
    members: Vec<(f64, u32)>,
    known: Vec<(f64, u32)>,
    eligible: Vec<(f64, u8, u32)>,
    tied: Vec<(f64, u32, u32)>,
    per_class: Vec<usize>,
    needs: Vec<(u32, f64)>,
    /// `ClassInput::taken`, sorted by (release, node).
    taken: Vec<(f64, u32)>,
    /// Idle nodes of `ClassInput::idle_by_deadline` already in `members` (from its end).
    idle_read: usize,
}

/// Lists the idle nodes in `members`, in the order of their timeout key -(deadline - now),
/// then number, at least up to `upto` (by deadline, latest first, read backwards; equal keys,
/// from equal or nearly equal deadlines, sorted by number). Plans mostly take a few idle nodes:
/// those are all it lists.
fn list_idle(s: &mut ClassScratch, input: &ClassInput, upto: usize) {
    let all = input.idle_by_deadline;
    let key = |deadline: f64| {
        if deadline.is_finite() {
            -(deadline - input.now)
        } else {
            f64::NEG_INFINITY
        }
    };
    // (a reservation's plan, on a fresh scratch, may list every idle node)
    s.members
        .reserve(upto.min(all.len()).saturating_sub(s.members.len()));
    while s.members.len() < upto && s.idle_read < all.len() {
        let run = s.members.len();
        let first = key(all[all.len() - 1 - s.idle_read].0);
        while s.idle_read < all.len() {
            let (deadline, i) = all[all.len() - 1 - s.idle_read];
            if key(deadline).to_bits() != first.to_bits() {
                break;
            }
            if input.taken_mark.is_empty() || !input.taken_mark[i as usize] {
                s.members.push((first, i));
            }
            s.idle_read += 1;
        }
        if s.members.len() - run > 1 {
            s.members[run..].sort_unstable_by_key(|e| e.1);
        }
    }
    debug_assert!(s.members.windows(2).all(|w| w[0]
        .0
        .total_cmp(&w[1].0)
        .then(w[0].1.cmp(&w[1].1))
        .is_lt()));
}

/// [`plan`](crate::power::plan::plan) with the wake horizon (`cut`), on one node group without
/// nodes down: the same wakes, timers and needs.
pub fn class_plan(
    input: &ClassInput,
    jobs: &[PlanJob],
    windows: &Windows,
    scratch: &mut ClassScratch,
) -> Plan {
    let now = input.now;
    let m = input.model;
    let index = input.index;
    let s = scratch;
    s.classes.clear();
    s.members.clear();
    s.needs.clear();
    let mut out = Plan::default();
    // The agenda, class by class (see `plan::agenda`).
    #[allow(clippy::too_many_arguments)]
    fn push(
        s: &mut ClassScratch,
        source: Source,
        lo: usize,
        hi: usize,
        release: f64,
        base: f64,
        rank: u8,
        cold: bool,
        asleep: bool,
    ) {
        if hi > lo {
            s.classes.push(Class {
                release,
                base,
                rank,
                cold,
                asleep,
                planned: false,
                source,
                lo,
                hi,
            });
        }
    }
    // Idle: released now (listed when the plan takes them), but for those taken by a start.
    s.idle_read = 0;
    let idle = input.idle_by_deadline.len() - input.taken.len();
    push(s, Source::Members, 0, idle, now, 0.0, 0, false, false);
    // Taken by a start: one class per release.
    s.taken.clear();
    s.taken.extend_from_slice(input.taken);
    s.taken
        .sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut k = 0;
    while k < s.taken.len() {
        let (release, lo) = (s.taken[k].0, k);
        while k < s.taken.len() && s.taken[k].0.to_bits() == release.to_bits() {
            k += 1;
        }
        push(s, Source::Taken, lo, k, release, 0.0, 1, false, false);
    }
    // Computing: one class per job, released when it is expected to end.
    let computing = &index.computing;
    let mut k = 0;
    while k < computing.len() {
        let (job, lo) = (computing[k].0, k);
        k += computing[k..].partition_point(|e| e.0 == job);
        let release = if job == NO_JOB {
            f64::INFINITY
        } else {
            input
                .releases
                .binary_search_by_key(&job, |&(j, _)| j)
                .map_or(f64::INFINITY, |i| input.releases[i].1)
        };
        push(s, Source::Computing, lo, k, release, 0.0, 1, false, false);
    }
    // Switching on or off: one class per (state, start of the transition).
    let other = &index.other;
    let mut k = 0;
    while k < other.len() {
        let (state, since, lo) = (other[k].0, other[k].1, k);
        while k < other.len() && other[k].0 == state && other[k].1.to_bits() == since.to_bits() {
            k += 1;
        }
        match state {
            NodeState::SwitchingOn => {
                let end = (since + m.switch_on_s).max(now);
                let base = m.switching_on_w * (end - now);
                push(s, Source::Other, lo, k, end, base, 2, false, false);
            }
            NodeState::SwitchingOff => {
                let end = (since + m.switch_off_s).max(now);
                let base = m.switching_off_w * (end - now) + m.switching_on_w * m.switch_on_s;
                let release = end + m.switch_on_s;
                push(s, Source::Other, lo, k, release, base, 3, true, false);
            }
            _ => unreachable!("the class plan runs without nodes down"),
        }
    }
    // Sleeping: one class, by number.
    let release = now + m.switch_on_s;
    let wake_energy = m.switching_on_w * m.switch_on_s;
    let asleep = index.sleeping.len();
    push(
        s,
        Source::Sleeping,
        0,
        asleep,
        release,
        wake_energy,
        3,
        true,
        true,
    );

    let horizon = if input.cut {
        now + (m.switch_on_s + m.switch_off_s).max(0.0)
    } else {
        f64::INFINITY
    };
    let mut barrier = now;
    for job in jobs {
        let r = job.nodes as usize;
        if r == 0 {
            continue;
        }
        // The r-th earliest known release.
        s.known.clear();
        s.known.extend(
            s.classes
                .iter()
                .filter(|c| c.hi > c.lo && c.release.is_finite())
                .map(|c| (c.release, (c.hi - c.lo) as u32)),
        );
        let count: usize = s.known.iter().map(|k| k.1 as usize).sum();
        if count < r {
            break; // not enough nodes with a known release
        }
        s.known.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
        let mut seen = 0usize;
        let mut rth = f64::NAN;
        for &(t, c) in &s.known {
            seen += c as usize;
            if seen >= r {
                rth = t;
                break;
            }
        }
        let start = windows.clear(barrier.max(rth), job.duration, job.nodes);
        if start > horizon {
            out.wake_times.push(start - m.switch_on_s);
            break; // later jobs start later still
        }
        let finish = start + job.duration;
        // The r nodes released by `start` with the least (cost, state, timeout key, number).
        s.eligible.clear();
        for (c, class) in s.classes.iter().enumerate() {
            if class.hi > class.lo && class.release <= start {
                let cost = if class.cold {
                    class.base
                } else {
                    class.base + m.idle_w * (start - class.release)
                };
                s.eligible.push((cost, class.rank, c as u32));
            }
        }
        s.eligible
            .sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        let first_new = s.classes.len();
        let mut left = r;
        let mut g = 0;
        while left > 0 && g < s.eligible.len() {
            // Classes alike in (cost, state): their nodes compare by (timeout key, number).
            let mut end = g + 1;
            while end < s.eligible.len()
                && s.eligible[end].0.total_cmp(&s.eligible[g].0).is_eq()
                && s.eligible[end].1 == s.eligible[g].1
            {
                end += 1;
            }
            let size: usize = s.eligible[g..end]
                .iter()
                .map(|e| {
                    let c = &s.classes[e.2 as usize];
                    c.hi - c.lo
                })
                .sum();
            if size <= left || end == g + 1 {
                // all of them, or a prefix of the one class
                for e in g..end {
                    let c = s.eligible[e].2 as usize;
                    let class = s.classes[c];
                    let take = (class.hi - class.lo).min(left);
                    take_prefix(s, input, &mut out, c, take, start, finish);
                    left -= take;
                }
            } else {
                // a part of several classes: the least (key, number) over them, a prefix of
                // each
                s.tied.clear();
                for e in g..end {
                    let c = s.eligible[e].2;
                    let class = s.classes[c as usize];
                    if class.source == Source::Members {
                        list_idle(s, input, class.hi);
                    }
                    for k in class.lo..class.hi {
                        let (key, i) = member(s, index, &class, k);
                        s.tied.push((key, i, c));
                    }
                }
                s.tied
                    .sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                s.per_class.clear();
                s.per_class.resize(s.classes.len(), 0);
                for &(_, _, c) in &s.tied[..left] {
                    s.per_class[c as usize] += 1;
                }
                for e in g..end {
                    let c = s.eligible[e].2 as usize;
                    let take = s.per_class[c];
                    take_prefix(s, input, &mut out, c, take, start, finish);
                }
                left = 0;
            }
            g = end;
        }
        debug_assert_eq!(left, 0, "r nodes are released by the start");
        if input.record {
            // (the classes made for this job, last: its nodes)
            let mut nodes = Vec::with_capacity(r);
            for c in first_new..s.classes.len() {
                let class = s.classes[c];
                if class.source == Source::Members {
                    list_idle(s, input, class.hi);
                }
                extend_nodes(&mut nodes, s, index, &class);
            }
            out.starts.push(start);
            out.planned.push((job.job, start, nodes));
        }
        barrier = start;
    }
    if input.needed_at {
        out.needed_at = vec![f64::INFINITY; input.nodes.len()];
        for &(i, t) in &s.needs {
            let at = &mut out.needed_at[i as usize];
            *at = at.min(t);
        }
    }
    out
}

/// Takes the first `take` nodes of class `c` for a job planned at `start`: wakes, needs, and
/// a class of their own holding them until `finish` (the same list, split).
fn take_prefix(
    s: &mut ClassScratch,
    input: &ClassInput,
    out: &mut Plan,
    c: usize,
    take: usize,
    start: f64,
    finish: f64,
) {
    if take == 0 {
        return;
    }
    let class = s.classes[c];
    let (lo, mid) = (class.lo, class.lo + take);
    // (idle nodes are listed only when read: a plan taking many of them mostly needs only how
    // many it took; they are never asleep, so only the needs read them here)
    if class.source == Source::Members && input.needed_at {
        list_idle(s, input, mid);
    }
    let index = input.index;
    if !class.planned && class.asleep {
        let at = start - input.model.switch_on_s;
        if at <= input.now {
            for k in lo..mid {
                out.wake_now.push(member(s, index, &class, k).1);
            }
        } else {
            out.wake_times.push(at);
        }
    }
    if input.needed_at {
        for k in lo..mid {
            let i = member(s, index, &class, k).1;
            s.needs.push((i, start));
        }
    }
    s.classes[c].lo = mid;
    s.classes.push(Class {
        release: finish,
        planned: true,
        lo,
        hi: mid,
        ..class
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::power::plan::{agenda, plan};
    use crate::power::random_machine::{model, Lcg, Machine};

    /// 3000 random machines (states, shared transition starts and deadlines, tied and unknown job
    /// ends) and queues: every planned job's start and nodes, every wake, timer and need
    /// agree with the plan node by node.
    #[test]
    fn the_class_plan_equals_the_plan_node_by_node() {
        let mut rng = Lcg(5);
        for case in 0..3000u32 {
            let m = model(case);
            let n = 1 + rng.below(40) as usize;
            let now = 10_000.0;
            let machine = Machine::random(&mut rng, n, now, false);
            let nodes = &machine.nodes;
            let jobs: Vec<PlanJob> = (0..1 + rng.below(6))
                .map(|k| PlanJob {
                    job: 100 + k,
                    nodes: 1 + rng.below(n as u32),
                    duration: [0.0, 100.0, 900.0, 5000.0][rng.below(4) as usize],
                })
                .collect();
            let windows = Windows::default();
            let release = |j: u32| machine.release(j);
            let mut slots = agenda(now, nodes, &[m], &machine.deadlines, release);
            let slow = plan(now, &jobs, &mut slots, &[m], true, &windows);
            // What a plan fills: the wakes and timers always, the needs and the planned nodes
            // when asked (idle nodes are listed only when something reads them).
            let norm = |p: &Plan, needs: bool, record: bool| {
                let mut wake = p.wake_now.clone();
                wake.sort_unstable();
                let mut times = p.wake_times.clone();
                times.sort_by(f64::total_cmp);
                times.dedup();
                let planned: Vec<(u32, f64, Vec<u32>)> = p
                    .planned
                    .iter()
                    .map(|(j, t, nodes)| {
                        let mut nodes = nodes.clone();
                        nodes.sort_unstable();
                        (*j, *t, nodes)
                    })
                    .collect();
                let needed = if needs {
                    format!("{:?}", p.needed_at)
                } else {
                    String::new()
                };
                let planned = if record {
                    format!("{planned:?}")
                } else {
                    String::new()
                };
                format!("{wake:?} {times:?} {needed} {planned}")
            };
            for (needed_at, record) in [(true, true), (false, true), (false, false), (true, false)]
            {
                let input = ClassInput {
                    now,
                    nodes,
                    model: &m,
                    index: &machine.index,
                    idle_by_deadline: &machine.by_deadline,
                    releases: &machine.releases,
                    needed_at,
                    record,
                    cut: true,
                    taken: &[],
                    taken_mark: &[],
                };
                let mut scratch = ClassScratch::default();
                let fast = class_plan(&input, &jobs, &windows, &mut scratch);
                assert_eq!(
                    norm(&fast, needed_at, record),
                    norm(&slow, needed_at, record),
                    "case {case} (needs {needed_at}, record {record}): {nodes:?} {jobs:?}"
                );
            }
        }
    }
}
