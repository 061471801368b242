//! The future plan of a queue served with EASY (PSAS), for wakes and timeouts.
//!
//! The head job holds its reservation (planned start and nodes). The jobs behind it are first
//! planned in queue order as if no backfilling happened (each no earlier than the one before,
//! on the nodes the earlier ones leave); then, in the same order, each one moves to the
//! earliest slot before that start where its nodes stay free for its whole duration (a
//! backfill), keeps its slot if its nodes are still free then, or slides to the earliest slot
//! after it. Each node keeps a sorted list of busy intervals (running jobs until their
//! requested end, transitions, planned jobs), and a job's nodes are chosen by the energy-aware
//! order of Definition 6 among those free long enough.

use crate::engine::power::{Node, NodeState};
use crate::power::plan::{choose, PlanJob, Slot, Windows};

const EPS: f64 = 1e-9;

/// One node's busy intervals (a few: what it does now, then planned jobs), by start. The first
/// lives inline: most nodes never need an allocation.
#[derive(Debug, Clone, Default)]
pub struct Busy {
    first: Option<(f64, f64)>,
    more: Vec<(f64, f64)>,
}

impl Busy {
    pub fn new(interval: Option<(f64, f64)>) -> Self {
        Busy {
            first: interval,
            more: Vec::new(),
        }
    }

    pub(crate) fn insert(&mut self, start: f64, end: f64) {
        match self.first {
            None => self.first = Some((start, end)),
            Some(first) if start < first.0 => {
                self.more.insert(0, first);
                self.first = Some((start, end));
            }
            Some(_) => {
                let at = self.more.partition_point(|&(s, _)| s <= start);
                self.more.insert(at, (start, end));
            }
        }
    }

    fn intervals(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.first.into_iter().chain(self.more.iter().copied())
    }

    /// Calls `f(a, b)` for each free gap [a, b) (from minus to plus infinity around the busy
    /// intervals).
    pub(crate) fn gaps(&self, mut f: impl FnMut(f64, f64)) {
        let mut free_from = f64::NEG_INFINITY;
        for (s, e) in self.intervals() {
            if s > free_from {
                f(free_from, s);
            }
            free_from = free_from.max(e);
        }
        if free_from < f64::INFINITY {
            f(free_from, f64::INFINITY);
        }
    }

    /// The free gap around `t`: (free since, free until), or `None` if busy at `t`.
    pub(crate) fn gap(&self, t: f64) -> Option<(f64, f64)> {
        let mut since = f64::NEG_INFINITY;
        for (s, e) in self.intervals() {
            if s > t {
                return Some((since, s));
            }
            if e > t {
                return None;
            }
            since = since.max(e);
        }
        Some((since, f64::INFINITY))
    }
}

/// Each node's busy intervals now: none when idle, else from when its state began (a sleeping
/// node: now) until its release on the agenda.
pub fn busy_now(now: f64, nodes: &[Node], slots: &[Slot]) -> Vec<Busy> {
    nodes
        .iter()
        .zip(slots)
        .map(|(node, slot)| match node.state {
            NodeState::Idle => Busy::default(),
            state => {
                let from = if state == NodeState::Sleeping {
                    now
                } else {
                    node.since.min(now)
                };
                Busy::new(Some((from, slot.release)))
            }
        })
        .collect()
}

/// The plan: (job, nodes, start), by start.
pub type Entries = Vec<(u32, Vec<u32>, f64)>;

/// Plans `jobs` (queue order, the first being the head held at `head`) from `now`. `slots`
/// give each node's release, committed energy and rank; `busy` its busy intervals.
pub fn easy_plan(
    now: f64,
    jobs: &[PlanJob],
    head: (f64, Vec<u32>),
    slots: &[Slot],
    mut busy: Vec<Busy>,
    groups: u16,
    windows: &Windows,
) -> Entries {
    let Some(first) = jobs.first() else {
        return Vec::new();
    };
    let mut candidates = Vec::new();
    // 1. Queue order without backfilling, behind the head (the barrier rule).
    let mut release: Vec<f64> = slots.iter().map(|s| s.release).collect();
    let (head_start, head_nodes) = head;
    for &i in &head_nodes {
        release[i as usize] = head_start + first.duration;
    }
    let mut seed = vec![(first.job, head_nodes.clone(), head_start)];
    let mut barrier = head_start;
    let mut known: Vec<f64> = Vec::with_capacity(slots.len());
    for job in &jobs[1..] {
        let r = job.nodes as usize;
        if r == 0 {
            break;
        }
        // The group where it starts earliest (ties: lowest computing power, first group).
        let mut best: Option<(f64, f64, u16)> = None;
        for g in 0..groups {
            known.clear();
            known.extend(
                (0..slots.len())
                    .filter(|&i| slots[i].group == g && release[i].is_finite())
                    .map(|i| release[i]),
            );
            if known.len() < r {
                continue;
            }
            known.select_nth_unstable_by(r - 1, f64::total_cmp);
            let start = windows.clear(barrier.max(known[r - 1]), job.duration, job.nodes);
            let computing = group_computing_w(slots, g);
            if best
                .is_none_or(|(s, c, _)| start.total_cmp(&s).then(computing.total_cmp(&c)).is_lt())
            {
                best = Some((start, computing, g));
            }
        }
        let Some((start, _, group)) = best else {
            break;
        };
        let chosen = choose(
            r,
            start,
            slots,
            |i| release[i],
            Some(group),
            &mut candidates,
        );
        for &i in &chosen {
            release[i as usize] = start + job.duration;
        }
        seed.push((job.job, chosen, start));
        barrier = start;
    }
    // 2. EASY: each job behind the head backfills, keeps its slot, or slides.
    let add = |busy: &mut [Busy], nodes: &[u32], start: f64, d: f64| {
        for &i in nodes {
            busy[i as usize].insert(start, start + d);
        }
    };
    add(&mut busy, &head_nodes, head_start, first.duration);
    let mut out: Entries = vec![(first.job, head_nodes, head_start)];
    for (k, (job, planned_nodes, planned_start)) in seed.into_iter().enumerate().skip(1) {
        let spec = &jobs[k];
        let d = spec.duration;
        let r = spec.nodes as usize;
        let fits = |busy: &[Busy], nodes: &[u32], start: f64| {
            windows.clear(start, d, spec.nodes) == start
                && nodes.iter().all(|&i| {
                    busy[i as usize]
                        .gap(start)
                        .is_some_and(|(_, until)| start + d <= until + EPS)
                })
        };
        let early = if now + EPS < planned_start {
            gap_slot(
                now,
                r,
                d,
                now,
                Some(planned_start),
                slots,
                &busy,
                groups,
                windows,
            )
        } else {
            None
        };
        let (nodes, start) = match early {
            Some((nodes, start)) if start + EPS < planned_start => (nodes, start),
            _ if fits(&busy, &planned_nodes, planned_start) => (planned_nodes, planned_start),
            _ => match gap_slot(
                now,
                r,
                d,
                planned_start,
                None,
                slots,
                &busy,
                groups,
                windows,
            ) {
                Some(slot) => slot,
                None => break,
            },
        };
        add(&mut busy, &nodes, start, d);
        out.push((job, nodes, start));
    }
    out.sort_by(|a, b| a.2.total_cmp(&b.2));
    out
}

/// The computing power of a group's nodes (its slots carry it).
fn group_computing_w(slots: &[Slot], group: u16) -> f64 {
    slots
        .iter()
        .find(|s| s.group == group)
        .map_or(f64::INFINITY, |s| s.computing_w)
}

/// The earliest time in [`from`, `before`) — `from` itself or the end of a busy interval —
/// at which `r` nodes of one group are free for `d` seconds, and the energy-aware choice of
/// them then (the group where that time comes first; ties: lowest computing power, first
/// group).
///
/// A sweep per group: each free gap [a, b) of a node makes it usable from `max(a, from)` to
/// `b - d`; the usable count only grows at the start of such a range (an interval's end, or
/// `from`), so the first time it reaches `r` is the answer. O(N log N) whatever the number of
/// busy intervals' ends.
#[allow(clippy::too_many_arguments)]
fn gap_slot(
    now: f64,
    r: usize,
    d: f64,
    from: f64,
    before: Option<f64>,
    slots: &[Slot],
    busy: &[Busy],
    groups: u16,
    windows: &Windows,
) -> Option<(Vec<u32>, f64)> {
    if before.is_some_and(|b| from + EPS >= b) || r == 0 {
        return None;
    }
    let limit = before.map_or(f64::INFINITY, |b| b - EPS);
    let mut best: Option<(f64, f64, u16)> = None;
    let mut events: Vec<(f64, bool)> = Vec::with_capacity(2 * slots.len());
    for g in 0..groups {
        events.clear();
        // (nodes usable at some time: fewer than `r` and the sweep cannot succeed)
        let mut usable_nodes = 0usize;
        for (b, slot) in busy.iter().zip(slots) {
            if slot.group != g {
                continue;
            }
            let before = events.len();
            b.gaps(|a, e| {
                let lo = a.max(from);
                let hi = (e - d + EPS).min(e - EPS);
                if lo <= hi && lo < limit {
                    events.push((lo, true));
                    events.push((hi, false));
                }
            });
            usable_nodes += usize::from(events.len() > before);
        }
        if usable_nodes < r {
            continue;
        }
        // Starts before ends at the same time: a range [t, t] is usable at t.
        events.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)));
        let mut usable = 0usize;
        for &(t, start) in &events {
            if start {
                usable += 1;
                if usable >= r {
                    let computing = group_computing_w(slots, g);
                    if best.is_none_or(|(s, c, _)| {
                        t.total_cmp(&s).then(computing.total_cmp(&c)).is_lt()
                    }) {
                        best = Some((t, computing, g));
                    }
                    break;
                }
            } else {
                usable -= 1;
            }
        }
    }
    let (t, _, group) = best?;
    let clear = windows.clear(t, d, r as u32);
    if clear > t {
        // It would run into a maintenance window: search again after it.
        return gap_slot(now, r, d, clear, before, slots, busy, groups, windows);
    }
    let mut pool: Vec<(f64, u8, f64, u32)> = Vec::with_capacity(slots.len());
    for (i, slot) in slots.iter().enumerate() {
        if slot.group != group {
            continue;
        }
        let Some((since, until)) = busy[i].gap(t) else {
            continue;
        };
        if until - t <= EPS || until - t + EPS < d {
            continue;
        }
        let cost = if slot.cold {
            slot.base
        } else {
            slot.base + slot.idle_w * (t - since.max(now)).max(0.0)
        };
        pool.push((cost, slot.rank, slot.timeout_key, i as u32));
    }
    let key = |a: &(f64, u8, f64, u32), b: &(f64, u8, f64, u32)| {
        a.0.total_cmp(&b.0)
            .then(a.1.cmp(&b.1))
            .then(a.2.total_cmp(&b.2))
            .then(a.3.cmp(&b.3))
    };
    if pool.len() > r {
        pool.select_nth_unstable_by(r - 1, key);
        pool.truncate(r);
    }
    pool.sort_unstable_by(key);
    Some((pool.iter().map(|c| c.3).collect(), t))
}
