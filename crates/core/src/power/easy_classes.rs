//! The EASY future plan ([`easy_plan`](crate::power::easy_plan::easy_plan)) on classes of
//! alike nodes instead of nodes.
//!
//! The plan node by node looks at every node for every waiting job, twice (queue order, then
//! the backfill sweep over each node's free gaps). Most nodes of a large machine are alike in
//! all it compares: the idle nodes but for their remaining idle timeout, the sleeping nodes,
//! the nodes of one running job, the nodes that began a transition together. Here such nodes
//! form one class (the same agenda slot and busy intervals but for the node number and timeout
//! key), its nodes kept in the order the plan breaks ties in ((timeout key, number)), so that a
//! job taking some of a class takes a prefix of it, which becomes a class of its own. A plan
//! then costs what the classes cost, not what the nodes do. The entries are exactly those of
//! the plan node by node: each job's start and the same set of nodes (unit tests below and
//! `tests/it/power_classes.rs` compare both). Covered: one node group and no node down (as
//! for [`class_plan`](crate::power::classes::class_plan)); otherwise the manager plans node by
//! node.

use crate::engine::power::{Node, NodeState, NO_JOB};
use crate::model::PowerModel;
use crate::power::easy_plan::{Busy, Entries};
use crate::power::node_index::NodeIndex;
use crate::power::plan::{PlanJob, Windows};

const EPS: f64 = 1e-9;

/// What the plan on classes needs from the manager.
pub struct EasyInput<'a> {
    pub now: f64,
    pub nodes: &'a [Node],
    pub model: &'a PowerModel,
    pub index: &'a NodeIndex,
    /// Idle nodes by (deadline, node), the deadlines of all of them known.
    pub idle_by_deadline: &'a [(f64, u32)],
    /// Each running job's expected release, sorted by job.
    pub releases: &'a [(u32, f64)],
}

/// Nodes alike for the plan.
#[derive(Debug, Clone)]
struct Class {
    /// When expected free (the queue-order pass).
    release: f64,
    base: f64,
    rank: u8,
    cold: bool,
    /// Busy intervals (the backfill pass).
    busy: Busy,
    /// Its nodes: `Set::members[lo..hi]`, by (timeout key, node).
    lo: usize,
    hi: usize,
}

impl Class {
    fn size(&self) -> usize {
        self.hi - self.lo
    }
}

/// The classes of a pass, their nodes and each node's class.
#[derive(Debug, Clone)]
struct Set {
    classes: Vec<Class>,
    members: Vec<(f64, u32)>,
    of: Vec<u32>,
}

impl Set {
    fn push(&mut self, lo: usize, release: f64, base: f64, rank: u8, cold: bool, busy: Busy) {
        let hi = self.members.len();
        if hi > lo {
            let id = self.classes.len() as u32;
            for &(_, i) in &self.members[lo..hi] {
                self.of[i as usize] = id;
            }
            self.classes.push(Class {
                release,
                base,
                rank,
                cold,
                busy,
                lo,
                hi,
            });
        }
    }

    /// Makes the first `take` nodes of class `c` a class of their own (the same but for its
    /// nodes) and returns it; `c` itself when it takes them all.
    fn split(&mut self, c: usize, take: usize) -> usize {
        let class = &self.classes[c];
        if take == class.size() {
            return c;
        }
        let mut prefix = class.clone();
        prefix.hi = class.lo + take;
        self.classes[c].lo += take;
        let id = self.classes.len();
        for &(_, i) in &self.members[prefix.lo..prefix.hi] {
            self.of[i as usize] = id as u32;
        }
        self.classes.push(prefix);
        id
    }

    /// Makes classes of exactly `nodes` (each node's class split, its nodes in `nodes` first,
    /// in order) and returns them. `mark` is all false and left so.
    fn take_nodes(&mut self, nodes: &[u32], mark: &mut [bool]) -> Vec<usize> {
        if let Some(out) = self.take_prefixes(nodes) {
            return out;
        }
        // The classes touched, each with how many of `nodes` it holds: counted rather than
        // sorted node by node (a reservation may hold most of the machine).
        let mut held = vec![0usize; self.classes.len()];
        let mut touched: Vec<usize> = Vec::new();
        for &i in nodes {
            let c = self.of[i as usize] as usize;
            if held[c] == 0 {
                touched.push(c);
            }
            held[c] += 1;
            mark[i as usize] = true;
        }
        touched.sort_unstable();
        let mut out = Vec::new();
        let mut rest: Vec<(f64, u32)> = Vec::new();
        for &c in &touched {
            let count = held[c];
            let (lo, hi) = (self.classes[c].lo, self.classes[c].hi);
            // (often they are its first nodes already: the plan takes prefixes)
            if self.members[lo..lo + count]
                .iter()
                .all(|e| mark[e.1 as usize])
            {
                out.push(self.split(c, count));
                continue;
            }
            rest.clear();
            let mut w = lo;
            for k in lo..hi {
                let e = self.members[k];
                if mark[e.1 as usize] {
                    self.members[w] = e;
                    w += 1;
                } else {
                    rest.push(e);
                }
            }
            self.members[w..hi].copy_from_slice(&rest);
            out.push(self.split(c, w - lo));
        }
        for &i in nodes {
            mark[i as usize] = false;
        }
        out
    }

    /// [`Set::take_nodes`] when `nodes` lists, class after class, a prefix of each class in
    /// its order (as a plan on the same classes takes them): checked run by run, without marks
    /// or counts per node; `None` otherwise.
    fn take_prefixes(&mut self, nodes: &[u32]) -> Option<Vec<usize>> {
        let mut runs: Vec<(usize, usize)> = Vec::new();
        let mut k = 0;
        while k < nodes.len() {
            let c = self.of[nodes[k] as usize] as usize;
            let class = &self.classes[c];
            let prefix = &self.members[class.lo..class.hi];
            let len = prefix
                .iter()
                .zip(&nodes[k..])
                .take_while(|(e, &i)| e.1 == i)
                .count();
            if len == 0 {
                return None;
            }
            runs.push((c, len));
            k += len;
        }
        // (in class order, as `take_nodes` splits them; a class met twice is no prefix)
        runs.sort_unstable();
        if runs.windows(2).any(|w| w[0].0 == w[1].0) {
            return None;
        }
        Some(
            runs.into_iter()
                .map(|(c, len)| self.split(c, len))
                .collect(),
        )
    }

    /// The nodes of class `c`.
    fn nodes(&self, c: usize) -> impl Iterator<Item = u32> + '_ {
        let class = &self.classes[c];
        self.members[class.lo..class.hi].iter().map(|e| e.1)
    }

    /// The `r` least nodes (fewer if there are not as many) of the classes `eligible`, sorted by
    /// (cost, state, class): nodes compare by (cost, state, timeout key, number). Returns how
    /// many of each class (a prefix of it), as (class, count).
    fn least(&self, eligible: &[(f64, u8, u32)], r: usize) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut left = r;
        let mut g = 0;
        while left > 0 && g < eligible.len() {
            let mut end = g + 1;
            while end < eligible.len()
                && eligible[end].0.total_cmp(&eligible[g].0).is_eq()
                && eligible[end].1 == eligible[g].1
            {
                end += 1;
            }
            let size: usize = eligible[g..end]
                .iter()
                .map(|e| self.classes[e.2 as usize].size())
                .sum();
            if size <= left || end == g + 1 {
                for e in &eligible[g..end] {
                    let c = e.2 as usize;
                    let take = self.classes[c].size().min(left);
                    out.push((c, take));
                    left -= take;
                }
            } else {
                // a part of several classes: the least (key, number) over them, a prefix of each
                let mut tied: Vec<(f64, u32, u32)> = Vec::with_capacity(size);
                for e in &eligible[g..end] {
                    let class = &self.classes[e.2 as usize];
                    tied.extend(
                        self.members[class.lo..class.hi]
                            .iter()
                            .map(|&(key, i)| (key, i, e.2)),
                    );
                }
                // (only which ones are among the least `left` matters, not their order)
                tied.select_nth_unstable_by(left - 1, |a, b| {
                    a.0.total_cmp(&b.0).then(a.1.cmp(&b.1))
                });
                tied.truncate(left);
                for e in &eligible[g..end] {
                    let take = tied.iter().filter(|t| t.2 == e.2).count();
                    if take > 0 {
                        out.push((e.2 as usize, take));
                    }
                }
                left = 0;
            }
            g = end;
        }
        out
    }
}

/// The classes of every node now: idle; each running job's nodes; nodes that began the same
/// transition at the same instant; sleeping.
fn classes(input: &EasyInput) -> Set {
    let now = input.now;
    let m = input.model;
    let index = input.index;
    let n = input.nodes.len();
    let mut set = Set {
        classes: Vec::new(),
        members: Vec::with_capacity(n),
        of: vec![u32::MAX; n],
    };
    // Idle: released now, by timeout key -(deadline - now) then number (`by_deadline` read
    // backwards; equal keys, from equal or nearly equal deadlines, by number).
    let all = input.idle_by_deadline;
    let key = |deadline: f64| {
        if deadline.is_finite() {
            -(deadline - now)
        } else {
            f64::NEG_INFINITY
        }
    };
    let mut k = all.len();
    while k > 0 {
        let first = key(all[k - 1].0);
        let run = set.members.len();
        while k > 0 && key(all[k - 1].0).to_bits() == first.to_bits() {
            set.members.push((first, all[k - 1].1));
            k -= 1;
        }
        if set.members.len() - run > 1 {
            set.members[run..].sort_unstable_by_key(|e| e.1);
        }
    }
    set.push(0, now, 0.0, 0, false, Busy::default());
    // Computing: per job (and start), released when it is expected to end.
    let computing = &index.computing;
    let mut k = 0;
    while k < computing.len() {
        let (job, i) = computing[k];
        let from = input.nodes[i as usize].since.min(now);
        let lo = set.members.len();
        while k < computing.len()
            && computing[k].0 == job
            && input.nodes[computing[k].1 as usize]
                .since
                .min(now)
                .to_bits()
                == from.to_bits()
        {
            set.members.push((0.0, computing[k].1));
            k += 1;
        }
        let release = if job == NO_JOB {
            f64::INFINITY
        } else {
            input
                .releases
                .binary_search_by_key(&job, |&(j, _)| j)
                .map_or(f64::INFINITY, |at| input.releases[at].1)
        };
        set.push(lo, release, 0.0, 1, false, Busy::new(Some((from, release))));
    }
    // Switching on or off: per (state, start of the transition).
    let other = &index.other;
    let mut k = 0;
    while k < other.len() {
        let (state, since) = (other[k].0, other[k].1);
        let lo = set.members.len();
        while k < other.len() && other[k].0 == state && other[k].1.to_bits() == since.to_bits() {
            set.members.push((0.0, other[k].2));
            k += 1;
        }
        let from = since.min(now);
        match state {
            NodeState::SwitchingOn => {
                let end = (since + m.switch_on_s).max(now);
                let base = m.switching_on_w * (end - now);
                set.push(lo, end, base, 2, false, Busy::new(Some((from, end))));
            }
            NodeState::SwitchingOff => {
                let end = (since + m.switch_off_s).max(now);
                let base = m.switching_off_w * (end - now) + m.switching_on_w * m.switch_on_s;
                let release = end + m.switch_on_s;
                set.push(lo, release, base, 3, true, Busy::new(Some((from, release))));
            }
            _ => unreachable!("the class plans run without nodes down"),
        }
    }
    // Sleeping: after a wake.
    let lo = set.members.len();
    set.members.extend(index.sleeping.iter().map(|&i| (0.0, i)));
    let release = now + m.switch_on_s;
    let base = m.switching_on_w * m.switch_on_s;
    set.push(lo, release, base, 3, true, Busy::new(Some((now, release))));
    debug_assert!(
        set.of.iter().all(|&c| c != u32::MAX),
        "every node in a class"
    );
    set
}

/// [`easy_plan`](crate::power::easy_plan::easy_plan) on one node group without nodes down:
/// the same entries (each job's start and set of nodes).
pub fn easy_class_plan(
    input: &EasyInput,
    jobs: &[PlanJob],
    head: (f64, Vec<u32>),
    windows: &Windows,
) -> Entries {
    let Some(first) = jobs.first() else {
        return Vec::new();
    };
    let now = input.now;
    let m = input.model;
    let n = input.nodes.len();
    let mut mark = vec![false; n];
    let mut initial = classes(input);
    let (head_start, head_nodes) = head;
    // The head's nodes become classes of their own in both passes: split once, then copied.
    let held = initial.take_nodes(&head_nodes, &mut mark);
    // 1. Queue order without backfilling, behind the head (the barrier rule). Its splits
    // never reorder the nodes, so it borrows them (handed back below) and copies the rest.
    let mut set = Set {
        classes: initial.classes.clone(),
        members: std::mem::take(&mut initial.members),
        of: initial.of.clone(),
    };
    for &c in &held {
        set.classes[c].release = head_start + first.duration;
    }
    // (the head's entry is not read back from here: pass 2 starts from its own)
    let mut seed: Vec<(u32, Vec<u32>, f64)> = vec![(first.job, Vec::new(), head_start)];
    let mut barrier = head_start;
    let mut known: Vec<(f64, usize)> = Vec::new();
    let mut eligible: Vec<(f64, u8, u32)> = Vec::new();
    for job in &jobs[1..] {
        let r = job.nodes as usize;
        if r == 0 {
            break;
        }
        // The r-th earliest known release.
        known.clear();
        known.extend(
            set.classes
                .iter()
                .filter(|c| c.size() > 0 && c.release.is_finite())
                .map(|c| (c.release, c.size())),
        );
        if known.iter().map(|k| k.1).sum::<usize>() < r {
            break;
        }
        known.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
        let mut seen = 0;
        let mut rth = f64::NAN;
        for &(t, count) in &known {
            seen += count;
            if seen >= r {
                rth = t;
                break;
            }
        }
        let start = windows.clear(barrier.max(rth), job.duration, job.nodes);
        // The r nodes released by then with the least (cost, state, timeout key, number).
        eligible.clear();
        for (c, class) in set.classes.iter().enumerate() {
            if class.size() > 0 && class.release <= start {
                let cost = if class.cold {
                    class.base
                } else {
                    class.base + m.idle_w * (start - class.release)
                };
                eligible.push((cost, class.rank, c as u32));
            }
        }
        eligible
            .sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        let mut chosen = Vec::with_capacity(r);
        for (c, take) in set.least(&eligible, r) {
            let id = set.split(c, take);
            set.classes[id].release = start + job.duration;
            chosen.extend(set.nodes(id));
        }
        seed.push((job.job, chosen, start));
        barrier = start;
    }
    // 2. EASY: each job behind the head backfills, keeps its slot, or slides.
    initial.members = set.members;
    let mut set = initial;
    let add = |set: &mut Set, c: usize, start: f64, d: f64| {
        set.classes[c].busy.insert(start, start + d);
    };
    for &c in &held {
        add(&mut set, c, head_start, first.duration);
    }
    let mut out: Entries = vec![(first.job, head_nodes, head_start)];
    for (k, (job, planned_nodes, planned_start)) in seed.into_iter().enumerate().skip(1) {
        let spec = &jobs[k];
        let d = spec.duration;
        let r = spec.nodes as usize;
        let fits = |set: &Set, nodes: &[u32], start: f64| {
            if windows.clear(start, d, spec.nodes) != start {
                return false;
            }
            let mut last = u32::MAX;
            nodes.iter().all(|&i| {
                let c = set.of[i as usize];
                if c == last {
                    return true;
                }
                last = c;
                set.classes[c as usize]
                    .busy
                    .gap(start)
                    .is_some_and(|(_, until)| start + d <= until + EPS)
            })
        };
        let early = if now + EPS < planned_start {
            gap_slot(&set, now, r, d, now, Some(planned_start), m, windows)
        } else {
            None
        };
        // A gap to take (backfill now, or slide later), or None: the planned slot still fits.
        let gap = match early {
            Some((takes, start)) if start + EPS < planned_start => Some((takes, start)),
            _ if fits(&set, &planned_nodes, planned_start) => None,
            _ => match gap_slot(&set, now, r, d, planned_start, None, m, windows) {
                Some(slot) => Some(slot),
                None => break,
            },
        };
        let (nodes, start) = match gap {
            Some((takes, start)) => {
                let mut nodes = Vec::with_capacity(r);
                for (c, take) in takes {
                    let id = set.split(c, take);
                    add(&mut set, id, start, d);
                    nodes.extend(set.nodes(id));
                }
                (nodes, start)
            }
            None => {
                for c in set.take_nodes(&planned_nodes, &mut mark) {
                    add(&mut set, c, planned_start, d);
                }
                (planned_nodes, planned_start)
            }
        };
        out.push((job, nodes, start));
    }
    out.sort_by(|a, b| a.2.total_cmp(&b.2));
    out
}

/// The earliest time in [`from`, `before`) — `from` itself or the end of a busy interval —
/// at which `r` nodes are free for `d` seconds, and the energy-aware choice of them then, as
/// (class, count) prefixes: the gap sweep of the plan node by node, a class's nodes counted
/// together.
#[allow(clippy::too_many_arguments)]
fn gap_slot(
    set: &Set,
    now: f64,
    r: usize,
    d: f64,
    from: f64,
    before: Option<f64>,
    m: &PowerModel,
    windows: &Windows,
) -> Option<(Vec<(usize, usize)>, f64)> {
    if before.is_some_and(|b| from + EPS >= b) || r == 0 {
        return None;
    }
    let limit = before.map_or(f64::INFINITY, |b| b - EPS);
    // (time, a usable range starts, nodes)
    let mut events: Vec<(f64, bool, usize)> = Vec::with_capacity(2 * set.classes.len());
    let mut usable_nodes = 0usize;
    for class in &set.classes {
        let size = class.size();
        if size == 0 {
            continue;
        }
        let before = events.len();
        class.busy.gaps(|a, e| {
            let lo = a.max(from);
            let hi = (e - d + EPS).min(e - EPS);
            if lo <= hi && lo < limit {
                events.push((lo, true, size));
                events.push((hi, false, size));
            }
        });
        if events.len() > before {
            usable_nodes += size;
        }
    }
    if usable_nodes < r {
        return None;
    }
    // Starts before ends at the same time: a range [t, t] is usable at t.
    events.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)));
    let mut usable = 0usize;
    let mut found = None;
    for &(t, start, size) in &events {
        if start {
            usable += size;
            if usable >= r {
                found = Some(t);
                break;
            }
        } else {
            usable -= size;
        }
    }
    let t = found?;
    let clear = windows.clear(t, d, r as u32);
    if clear > t {
        // It would run into a maintenance window: search again after it.
        return gap_slot(set, now, r, d, clear, before, m, windows);
    }
    let mut eligible: Vec<(f64, u8, u32)> = Vec::new();
    for (c, class) in set.classes.iter().enumerate() {
        if class.size() == 0 {
            continue;
        }
        let Some((since, until)) = class.busy.gap(t) else {
            continue;
        };
        if until - t <= EPS || until - t + EPS < d {
            continue;
        }
        let cost = if class.cold {
            class.base
        } else {
            class.base + m.idle_w * (t - since.max(now)).max(0.0)
        };
        eligible.push((cost, class.rank, c as u32));
    }
    eligible.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    Some((set.least(&eligible, r), t))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::power::easy_plan::{busy_now, easy_plan};
    use crate::power::plan::{agenda, plan};
    use crate::power::random_machine::{model, Lcg, Machine};

    /// 4000 random machines (states, shared transition starts and deadlines, tied, past and
    /// unknown job ends), queues, heads (planned on the agenda, or any nodes at any time, as a
    /// reservation decided on requested times gives) and maintenance windows: every entry (job,
    /// start, set of nodes) of the plan on classes equals the plan node by node's.
    #[test]
    fn the_easy_plan_on_classes_equals_the_plan_node_by_node() {
        let mut rng = Lcg(13);
        let mut planned_jobs = 0;
        for case in 0..4000u32 {
            let m = model(case);
            let n = 1 + rng.below(40) as usize;
            let now = 10_000.0;
            let machine = Machine::random(&mut rng, n, now, true);
            let nodes = &machine.nodes;
            let jobs: Vec<PlanJob> = (0..1 + rng.below(8))
                .map(|k| PlanJob {
                    job: 100 + k,
                    nodes: rng.below(n as u32 + 1).max(u32::from(k == 0)),
                    duration: [0.0, 100.0, 900.0, 5000.0, 1250.0][rng.below(5) as usize],
                })
                .collect();
            let windows = match rng.below(4) {
                0 => Windows::new(
                    vec![(now + 1500.0, now + 4000.0, 1 + rng.below(n as u32))],
                    n as u32,
                ),
                _ => Windows::default(),
            };
            let release = |j: u32| machine.release(j);
            let slots = agenda(now, nodes, &[m], &machine.deadlines, release);
            let head = if rng.below(3) == 0 {
                // any nodes, any time
                let mut all: Vec<u32> = (0..n as u32).collect();
                for k in (1..all.len()).rev() {
                    all.swap(k, rng.below(k as u32 + 1) as usize);
                }
                all.truncate(jobs[0].nodes as usize);
                (now + 100.0 * f64::from(rng.below(30)), all)
            } else {
                let mut scratch = slots.clone();
                match plan(now, &jobs[..1], &mut scratch, &[m], false, &windows).head {
                    Some(head) => head,
                    None => continue,
                }
            };
            let busy = busy_now(now, nodes, &slots);
            let slow = easy_plan(now, &jobs, head.clone(), &slots, busy, 1, &windows);
            let input = EasyInput {
                now,
                nodes,
                model: &m,
                index: &machine.index,
                idle_by_deadline: &machine.by_deadline,
                releases: &machine.releases,
            };
            let fast = easy_class_plan(&input, &jobs, head, &windows);
            let norm = |entries: &Entries| {
                entries
                    .iter()
                    .map(|(j, nodes, t)| {
                        let mut nodes = nodes.clone();
                        nodes.sort_unstable();
                        (*j, *t, nodes)
                    })
                    .collect::<Vec<_>>()
            };
            assert_eq!(norm(&fast), norm(&slow), "case {case}: {nodes:?} {jobs:?}");
            planned_jobs += slow.len();
        }
        assert!(planned_jobs > 8000, "{planned_jobs} jobs planned");
    }
}
