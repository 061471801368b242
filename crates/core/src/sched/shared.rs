//! The scan and EASY backfilling when jobs share nodes (`model::SharedNodes`): what fits is
//! decided on each node's free CPUs, memory and generic resources by Slurm's cons_tres rule
//! (`packing::select`), and reservations are on those vectors.
//!
//! In the policy's order (by PriorityTier first on a site), a job starts in the first of its
//! partitions where it fits now. The first job of a component (partitions sharing nodes, as
//! `model::site`) that fits nowhere is its top job: without backfilling the component stops
//! there; with EASY the top job is planned at the earliest time it fits once the running jobs
//! end by their requests (its *shadow time*), on the nodes and resources the rule then gives
//! it, and later jobs of the component start now only if they fit beside that reservation:
//! a job ending by the shadow time must fit what is free now, one ending after it what is
//! free both now and at the shadow time once the top job has taken its reservation. A job
//! blocked by GPUs therefore holds back neither a job that needs only CPUs nor one ending
//! before it can start (docs/semantics.md, "Resources inside nodes").

use crate::engine::shared::window_nodes;
use crate::engine::{Backfill, Decision, Reserve, SharedView, Start, StartKind, View};
use crate::model::{Request, SharedNodes};
use crate::packing::select::{is_exclusive, node_needs, offer};
use crate::packing::usage::{open_bits, open_nodes};
use crate::packing::{select, Allocation, Free, Least, NodeFree, Sparse, Tallies, Usage};
use crate::sched::order::{order_window, Heuristic};

/// How a component stands in the scan.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    Primary,
    Blocked,
    /// Its top job is reserved at `shadow`.
    Backfill {
        shadow: f64,
    },
}

/// The scan's scratch space (kept by a policy from call to call). What is free is read
/// through layers over the engine's usage, which a scan never copies: `now` (what the scan's
/// starts took), `shadow` (on the nodes running jobs give back by a reservation's shadow time,
/// or the reservation takes, what is free then once it is taken) and `later` (the same while a
/// reservation is searched for); each with the tallies of its node sets.
#[derive(Debug, Clone, Default)]
pub struct SharedScan {
    /// The component of each node (`u32::MAX`: in no node set), for the model `model_id`.
    node_component: Vec<u32>,
    model_id: usize,
    phases: Vec<Phase>,
    /// Jobs started by this scan: (component, planned end, index in the decision's starts).
    started: Vec<(u32, f64, u32)>,
    tiered: Vec<(u32, u32)>,
    /// The heuristic's scores and order (scratch).
    order_scratch: (Vec<u128>, Vec<u32>),
    now: Sparse,
    shadow: Sparse,
    later: Sparse,
    now_tallies: Tallies,
    /// The tallies of what is free both now and at the shadow time.
    limit_tallies: Tallies,
    later_tallies: Tallies,
    /// (planned end, job, start index in the decision) of the jobs this scan started in the
    /// component being reserved.
    ends: Vec<(f64, u32, u32)>,
    /// The nodes given back at the release time being tried.
    released: Vec<u32>,
    scratch: Scratch,
    /// What the last scan in queue order found when it started nothing (see `Memo`).
    memo: Option<Memo>,
    /// The queue positions in scan order, and the components still open after the scan.
    positions: Vec<u32>,
    open: usize,
    /// By component, the last reservation planned there without starts of its scan in it.
    kept: Vec<Option<Kept>>,
    /// What the component being reserved runs (as `Kept::running`).
    running_key: Vec<(u64, u64)>,
    /// The announced downtime windows: (start, end, their nodes as bits).
    announced: Vec<(f64, f64, Vec<u64>)>,
    /// The nodes a job may not use (bits, scratch; see `exclusion`).
    excluded: Vec<u64>,
    /// The times a reservation's search passes windows' ends: (end, window, under way).
    window_ends: Vec<(f64, u32, bool)>,
    /// The values of a reservation's nodes before it is held (scratch).
    hold_scratch: (Vec<NodeFree>, Vec<u32>),
    /// By component, whether its reservation (its `kept` plan) is held in the shadow state:
    /// only once a job that may end after the shadow time may fit now (see `hold`).
    held: Vec<bool>,
}

/// A reservation as planned (see `SharedScan::reserve`), and what it was planned from: the
/// top job and the running jobs of the component (their allocations' serial numbers and
/// estimated ends, in the view's order). With no start of the scan in the component, the
/// component's nodes are then as they were, the same ends free the same resources, and the
/// plan would come out the same.
#[derive(Debug, Clone)]
struct Kept {
    /// Whether it may be used again (planned with no start of the scan in the component).
    reusable: bool,
    job: u32,
    running: Vec<(u64, u64)>,
    /// The state's changes of nodes down then (`SharedState::downs`).
    downs: u64,
    /// The shadow time, the reservation, and its nodes at the shadow time once it is taken.
    plan: Option<(f64, Allocation, Vec<NodeFree>, Vec<u32>)>,
    /// What holding it changed in the tallies of the least of now and the shadow time, when
    /// no start of the scan was in the component (the same change again then).
    change: Option<Tallies>,
}

/// A scan in queue order that started nothing: while no job starts or ends and the queue only
/// grows at its end, and no running job is past its request or every shadow time is still
/// ahead, the next scan would find the same for those jobs (the same free resources, top jobs
/// and shadow times; time passing only makes a waiting job end later), so it scans the
/// arrivals alone, from the same state.
#[derive(Debug, Clone)]
struct Memo {
    model_id: usize,
    version: u64,
    running: usize,
    backfill: Backfill,
    queue: Vec<u32>,
    open: usize,
    reservation: Option<Reserve>,
}

impl SharedScan {
    /// Orders the queue (the heuristic sorts its first `window` jobs, the rest follow in
    /// queue order: nodes in use may still have room, so every waiting job is looked at) and
    /// scans it.
    pub fn scan_ordered(
        &mut self,
        view: &View,
        heuristic: Heuristic,
        window: usize,
        backfill: Backfill,
        decision: &mut Decision,
    ) {
        let (mut scores, mut order) = std::mem::take(&mut self.order_scratch);
        order_window(heuristic, window, view, &mut scores, &mut order);
        let sorted = order.len();
        let position = |k: usize| if k < sorted { order[k] } else { k as u32 };
        if sorted == 0 {
            self.scan_queue_order(view, backfill, decision);
        } else {
            self.memo = None;
            self.scan(view, view.queue.len(), position, backfill, decision);
        }
        self.order_scratch = (scores, order);
    }

    /// The scan in queue order, from where the last one stopped when it may (`Memo`).
    fn scan_queue_order(&mut self, view: &View, backfill: Backfill, decision: &mut Decision) {
        let Some(shared) = view.shared else {
            return;
        };
        let memo = self.memo.take();
        let id = shared.model as *const SharedNodes as usize;
        let queue = view.queue;
        // A running job past its request ends "now" by the estimate: the shadow times stay
        // while they are later than now (the jobs released by then are the same).
        let overdue = (view.running.first()).is_some_and(|r| r.requested_end < view.now);
        let phases = &self.phases;
        let shadows_ahead = || {
            phases.iter().all(|p| match *p {
                Phase::Backfill { shadow } => shadow > view.now,
                _ => true,
            })
        };
        let kept = memo.filter(|m| {
            m.model_id == id
                && m.version == shared.state.version()
                && m.running == view.running.len()
                && m.backfill == backfill
                && shared.site.is_none_or(|s| !s.tiered())
                && view.announced.is_empty()
                && (!overdue || shadows_ahead())
                && queue.get(..m.queue.len()) == Some(&m.queue[..])
        });
        match kept {
            Some(m) => {
                decision.reservation = m.reservation;
                self.positions.clear();
                self.positions.extend(0..queue.len() as u32);
                self.scan_from(view, shared, m.queue.len(), m.open, backfill, decision);
            }
            None => self.scan(view, queue.len(), |k| k as u32, backfill, decision),
        }
        // (an announced window stops more jobs as time passes)
        let still = view.announced.is_empty();
        if decision.starts.is_empty() && shared.site.is_none_or(|s| !s.tiered()) && still {
            self.memo = Some(Memo {
                model_id: id,
                version: shared.state.version(),
                running: view.running.len(),
                backfill,
                queue: queue.to_vec(),
                open: self.open,
                reservation: decision.reservation,
            });
        }
    }

    /// Scans the first `len` entries of an order (`position(k)` = queue position of the k-th
    /// job), filling `decision` with the starts, their partitions and allocations, and the
    /// first reservation made.
    pub fn scan(
        &mut self,
        view: &View,
        len: usize,
        position: impl Fn(usize) -> u32,
        backfill: Backfill,
        decision: &mut Decision,
    ) {
        let Some(shared) = view.shared else {
            return;
        };
        let model = shared.model;
        let components = self.prepare(shared);
        self.phases.clear();
        self.phases.resize(components, Phase::Primary);
        self.started.clear();
        let (nodes, kinds) = (
            model.resources.nodes() as usize,
            model.resources.gres_names().len(),
        );
        self.now.reset(nodes, kinds);
        self.shadow.reset(nodes, kinds);
        self.later.reset(nodes, kinds);
        self.now_tallies.clone_from(shared.state.tallies());
        self.limit_tallies.clone_from(shared.state.tallies());
        self.announced.clear();
        for w in view.announced {
            let bits = open_bits(nodes, |_| false);
            let mut bits = bits;
            for n in window_nodes(model, w) {
                bits[n as usize / 64] |= 1 << (n % 64);
            }
            self.announced.push((w.start, w.end, bits));
        }
        // the queue positions in scan order: by tier first on a site of several
        self.positions.clear();
        self.positions.extend((0..len).map(&position));
        if let Some(site) = shared.site.filter(|s| s.tiered()) {
            self.tiered.clear();
            self.tiered.extend(
                self.positions
                    .iter()
                    .enumerate()
                    .map(|(k, &pos)| (u32::MAX - site.tier(view.queue[pos as usize]), k as u32)),
            );
            self.tiered.sort_unstable();
            let positions = &self.positions;
            let tiered: Vec<u32> = self
                .tiered
                .iter()
                .map(|&(_, k)| positions[k as usize])
                .collect();
            self.positions = tiered;
        }
        self.scan_from(view, shared, 0, components, backfill, decision);
    }

    /// The scan's loop over `positions[from..]` while `open` components may still start jobs
    /// (how many remain open is left in `open` after).
    fn scan_from(
        &mut self,
        view: &View,
        shared: SharedView,
        from: usize,
        components_open: usize,
        backfill: Backfill,
        decision: &mut Decision,
    ) {
        let model = shared.model;
        let base = shared.state.usage();
        let mut open = components_open;
        for i in from..self.positions.len() {
            if open == 0 {
                break;
            }
            let pos = self.positions[i];
            let job = view.queue[pos as usize];
            let sets = model.fitting(job);
            let Some(c) = sets.first().and_then(|&s| self.component_of_set(model, s)) else {
                continue; // held: no partition may start it
            };
            let est_end = view.now + view.jobs.get(job).requested_time;
            let request = &model.requests[job as usize];
            match self.phases[c as usize] {
                Phase::Blocked => continue,
                Phase::Primary => {
                    let windows = self.exclusion(view.now, est_end);
                    let now = self.now.over(base);
                    let place = Place {
                        base,
                        free: &now,
                        touched: [self.now.touched(), &[]],
                        tallies: &self.now_tallies,
                        excluded: windows.then_some(&self.excluded[..]),
                    };
                    if let Some((set, a)) = fit(model, &place, sets, request, &mut self.scratch) {
                        self.start(base, model, pos, job, c, set, est_end, a, None, decision);
                        continue;
                    }
                    let anyway = Place {
                        excluded: None,
                        ..place
                    };
                    if windows && fit(model, &anyway, sets, request, &mut self.scratch).is_some() {
                        // only an announced window stops it: skipped, it blocks nothing
                        continue;
                    }
                    self.phases[c as usize] = Phase::Blocked;
                    open -= 1;
                    if backfill == Backfill::None {
                        continue;
                    }
                    if let Some(shadow) = self.reserve(view, shared, job, c, sets, decision) {
                        self.phases[c as usize] = Phase::Backfill { shadow };
                        open += 1;
                        if decision.reservation.is_none() {
                            decision.reservation = Some(Reserve {
                                job,
                                shadow_time: shadow,
                                extra: 0,
                            });
                        }
                    }
                }
                Phase::Backfill { shadow } => {
                    let late = est_end > shadow;
                    if late {
                        // (what is free both now and then is at most what is free now)
                        if !sets
                            .iter()
                            .any(|&s| self.now_tallies.may_fit(model, s, request))
                        {
                            continue;
                        }
                        self.hold(base, model, c);
                    }
                    let windows = self.exclusion(view.now, est_end);
                    let excluded = windows.then_some(&self.excluded[..]);
                    let now = self.now.over(base);
                    let found = if late {
                        let limit = Least {
                            view: &now,
                            layer: &self.shadow,
                        };
                        let place = Place {
                            base,
                            free: &limit,
                            touched: [self.now.touched(), self.shadow.touched()],
                            tallies: &self.limit_tallies,
                            excluded,
                        };
                        fit(model, &place, sets, request, &mut self.scratch)
                    } else {
                        let place = Place {
                            base,
                            free: &now,
                            touched: [self.now.touched(), &[]],
                            tallies: &self.now_tallies,
                            excluded,
                        };
                        fit(model, &place, sets, request, &mut self.scratch)
                    };
                    if let Some((set, a)) = found {
                        let kind = Some(late);
                        self.start(base, model, pos, job, c, set, est_end, a, kind, decision);
                    }
                }
            }
        }
        self.open = open;
    }

    /// Starts `job` (queue position `pos`, component `c`) in node set `set` with
    /// `allocation`; `backfilled`: `None` in order, else whether it ends after the shadow time.
    #[allow(clippy::too_many_arguments)]
    fn start(
        &mut self,
        base: &Usage,
        model: &SharedNodes,
        pos: u32,
        job: u32,
        c: u32,
        set: u32,
        est_end: f64,
        allocation: Allocation,
        backfilled: Option<bool>,
        decision: &mut Decision,
    ) {
        self.count(base, model, &allocation.nodes, false);
        self.now.take(base, &allocation);
        if backfilled == Some(true) {
            self.shadow.take_where_touched(&allocation);
        }
        self.count(base, model, &allocation.nodes, true);
        self.started
            .push((c, est_end, decision.starts.len() as u32));
        decision.starts.push(Start {
            pos,
            job,
            kind: if backfilled.is_some() {
                StartKind::Backfill
            } else {
                StartKind::Primary
            },
        });
        let n = decision.starts.len() as u32;
        decision.site_starts.push((set, n));
        decision.allocations.push(allocation);
    }

    /// Adds (`add`) or removes `nodes` to or from the tallies of now and of the least of now
    /// and the shadow time.
    fn count(&mut self, base: &Usage, model: &SharedNodes, nodes: &[u32], add: bool) {
        let now = self.now.over(base);
        let limit = Least {
            view: &now,
            layer: &self.shadow,
        };
        for &node in nodes {
            self.now_tallies.count(model, node, &now, add);
            self.limit_tallies.count(model, node, &limit, add);
        }
    }

    /// Plans top job `job` of component `c`: the earliest time it fits once running jobs (and
    /// those this scan started) of the component end by their requests, with the allocation
    /// it then gets taken from the shadow state; `None` when no end makes room.
    fn reserve(
        &mut self,
        view: &View,
        shared: SharedView,
        job: u32,
        c: u32,
        sets: &[u32],
        decision: &Decision,
    ) -> Option<f64> {
        let model = shared.model;
        let base = shared.state.usage();
        let component = &self.node_component;
        // (a plan is kept only without announced windows: which nodes they stop depends on
        // the time)
        let fresh = !self.started.iter().any(|e| e.0 == c) && self.announced.is_empty();
        let downs = shared.state.downs();
        if fresh {
            self.running_key.clear();
            for r in view.running {
                let Some(a) = shared.state.allocation(r.job) else {
                    continue;
                };
                if component[a.nodes[0] as usize] == c {
                    let end = view.estimated_end(r).to_bits();
                    self.running_key.push((shared.state.serial(r.job), end));
                }
            }
            let same = |k: &Kept| {
                k.reusable && k.job == job && k.downs == downs && k.running == self.running_key
            };
            if let Some(k) = self.kept[c as usize].as_ref().filter(|k| same(k)) {
                self.held[c as usize] = false;
                return k.plan.as_ref().map(|p| p.0);
            }
        }
        // the jobs this scan started in the component, by planned end (the running jobs are
        // in that order already: `View::running`)
        self.ends.clear();
        for &(sc, end, i) in &self.started {
            if sc == c {
                self.ends.push((end, decision.starts[i as usize].job, i));
            }
        }
        self.ends
            .sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let mut running = (view.running.iter())
            .filter_map(|r| {
                let a = shared.state.allocation(r.job)?;
                (component[a.nodes[0] as usize] == c).then(|| (view.estimated_end(r), a))
            })
            .peekable();
        let request = &model.requests[job as usize];
        self.later.clear();
        // (a job that takes one node in each of its sets fits once a node given back offers
        // all it needs: no tallies needed to see it)
        let one_node =
            (sets.iter()).all(|&s| node_needs(request, model.sets[s as usize].limits).1 == 1);
        if !one_node {
            self.later_tallies.clone_from(&self.now_tallies);
        }
        // the ends of the windows under way (their nodes come back) and announced (their
        // nodes may be used again)
        self.window_ends.clear();
        for &(w, end, _) in shared.active {
            self.window_ends.push((end, w, true));
        }
        for (i, &(_, end, _)) in self.announced.iter().enumerate() {
            self.window_ends.push((end, i as u32, false));
        }
        (self.window_ends).sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let mut next_window = 0;
        let run_time = view.jobs.get(job).requested_time;
        let mut next_started = 0;
        let mut found = None;
        let mut t = f64::NAN;
        loop {
            let next_running = running.peek().map(|r| r.0);
            let next_own = self.ends.get(next_started).map(|e| e.0);
            let next_end = self.window_ends.get(next_window).map(|e| e.0);
            t = match [next_running, next_own, next_end]
                .into_iter()
                .flatten()
                .reduce(f64::min)
            {
                Some(t) => t,
                None => break,
            };
            self.released.clear();
            // windows ending at t
            while let Some(&(end, w, active)) = self.window_ends.get(next_window) {
                if end != t {
                    break;
                }
                next_window += 1;
                if active {
                    let downtime = shared.downtime;
                    let window = &downtime[w as usize];
                    for node in window_nodes(model, window) {
                        // (up once every window it is down in has ended)
                        let still = (shared.active.iter()).any(|&(v, e, _)| {
                            e > t && window_nodes(model, &downtime[v as usize]).contains(&node)
                        });
                        if !still {
                            let now = self.now.over(base);
                            let tallies = (!one_node).then_some(&mut self.later_tallies);
                            self.later.bring_up(&now, node, tallies, model);
                            self.released.push(node);
                        }
                    }
                } else {
                    let bits = &self.announced[w as usize].2;
                    let set = (0..nodes_of(bits)).filter(|&n| bit(bits, n));
                    self.released.extend(set);
                }
            }
            // release every job ending at t
            loop {
                let a = if running.peek().is_some_and(|r| r.0 == t) {
                    running.next().map(|r| r.1)
                } else if self.ends.get(next_started).is_some_and(|e| e.0 == t) {
                    next_started += 1;
                    Some(&decision.allocations[self.ends[next_started - 1].2 as usize])
                } else {
                    None
                };
                let Some(a) = a else { break };
                let now = self.now.over(base);
                if one_node {
                    self.later.give_back(&now, a);
                } else {
                    (self.later).give_back_counted(&now, a, &mut self.later_tallies, model);
                }
                self.released.extend_from_slice(&a.nodes);
            }
            let windows = exclusion(&self.announced, &mut self.excluded, t, t + run_time);
            let now = self.now.over(base);
            let later = self.later.over(&now);
            let released = &self.released;
            let place = Place {
                base,
                free: &later,
                touched: [self.now.touched(), self.later.touched()],
                tallies: &self.later_tallies,
                excluded: windows.then_some(&self.excluded[..]),
            };
            let scratch = &mut self.scratch;
            found = sets.iter().find_map(|&s| {
                let set = &model.sets[s as usize];
                let (_, max_nodes, need) = node_needs(request, set.limits);
                let room = if max_nodes == 1 {
                    // one node: it fits only once a node given back offers all it needs
                    let exclusive = is_exclusive(&model.resources, request, set.limits);
                    released.iter().any(|&n| {
                        model.node_sets(n).contains(&s)
                            && offer(&model.resources, &later, n, request, exclusive, need)
                                >= need.max(1)
                    })
                } else {
                    self.later_tallies.may_fit(model, s, request)
                };
                if !room {
                    return None;
                }
                place_in(model, &place, s, request, scratch)
            });
            if found.is_some() {
                break;
            }
        }
        let plan = found.map(|allocation| {
            // the reservation's nodes at the shadow time once it is taken
            let now = self.now.over(base);
            self.later.take(&now, &allocation);
            let (rows, gres) = self.later.rows_of(&allocation.nodes);
            (t, allocation, rows, gres)
        });
        let shadow = plan.as_ref().map(|p| p.0);
        self.kept[c as usize] = Some(Kept {
            reusable: fresh,
            job,
            downs,
            running: if fresh {
                std::mem::take(&mut self.running_key)
            } else {
                Vec::new()
            },
            plan,
            change: None,
        });
        self.held[c as usize] = false;
        shadow
    }

    /// Holds component `c`'s reservation in the shadow state (once): its nodes as they are
    /// at the shadow time once it is taken. The shadow state differs from now only there: on
    /// the other nodes given back, what is free at the shadow time is at least what is free
    /// now, so a job must fit now there anyway. Only those nodes change the tallies of the
    /// least of now and the shadow time; until a job that may end after the shadow time may
    /// fit now, nothing reads them.
    fn hold(&mut self, base: &Usage, model: &SharedNodes, c: u32) {
        if std::mem::replace(&mut self.held[c as usize], true) {
            return;
        }
        let Some(mut kept) = self.kept[c as usize].take() else {
            return;
        };
        if let Some((_, allocation, rows, gres)) = kept.plan.as_ref() {
            let untouched = kept.reusable && !self.started.iter().any(|e| e.0 == c);
            match kept.change.as_ref().filter(|_| untouched) {
                Some(change) => {
                    self.limit_tallies.add_change(change);
                    self.shadow.put(&allocation.nodes, rows, gres);
                }
                None => {
                    let before = untouched.then(|| self.limit_tallies.clone());
                    self.hold_plan(base, model, allocation, rows, gres);
                    if let Some(before) = before {
                        kept.change = Some(self.limit_tallies.change_since(&before));
                    }
                }
            }
        }
        self.kept[c as usize] = Some(kept);
    }

    fn hold_plan(
        &mut self,
        base: &Usage,
        model: &SharedNodes,
        allocation: &Allocation,
        rows: &[NodeFree],
        gres: &[u32],
    ) {
        let k = model.resources.gres_names().len();
        let now = self.now.over(base);
        let limit = Least {
            view: &now,
            layer: &self.shadow,
        };
        // what is free both now and at the shadow time on the reservation's nodes, before
        let (was, was_gres) = (&mut self.hold_scratch.0, &mut self.hold_scratch.1);
        was.clear();
        was_gres.clear();
        for &node in &allocation.nodes {
            was.push(limit.node(node));
            was_gres.extend((0..k as u32).map(|g| limit.gres(node, g)));
        }
        self.shadow.put(&allocation.nodes, rows, gres);
        let limit = Least {
            view: &now,
            layer: &self.shadow,
        };
        for (i, &node) in allocation.nodes.iter().enumerate() {
            let (before, after) = (was[i], limit.node(node));
            if before.whole == after.whole {
                let gres = |g: usize| (was_gres[i * k + g], limit.gres(node, g as u32));
                self.limit_tallies.shift(model, node, before, after, gres);
            } else {
                // (held whole on one side: the node counts on the other side only)
                let was = |g: usize| was_gres[i * k + g];
                (self.limit_tallies).count_values(model, node, before, was, false);
                let is = |g: usize| limit.gres(node, g as u32);
                (self.limit_tallies).count_values(model, node, after, is, true);
            }
        }
    }

    /// Fills `excluded` with the nodes of the announced windows a job running from `from` to
    /// `until` would run into (they go down before it ends); whether there are any.
    fn exclusion(&mut self, from: f64, until: f64) -> bool {
        exclusion(&self.announced, &mut self.excluded, from, until)
    }

    /// Caches the component of each node of `shared`'s model (the site's components, or
    /// one); returns how many there are.
    fn prepare(&mut self, shared: SharedView) -> usize {
        let model = shared.model;
        let components = shared.site.map_or(1, |s| s.components()) as usize;
        let id = model as *const SharedNodes as usize;
        if self.model_id == id && !self.node_component.is_empty() {
            return components;
        }
        self.model_id = id;
        self.kept = vec![None; components];
        self.held = vec![false; components];
        self.node_component = vec![u32::MAX; model.resources.nodes() as usize];
        for (p, set) in model.sets.iter().enumerate() {
            let c = (shared.site).map_or(0, |s| s.partition(p as u32).component);
            for &node in &set.nodes {
                self.node_component[node as usize] = c;
            }
        }
        components
    }

    fn component_of_set(&self, model: &SharedNodes, set: u32) -> Option<u32> {
        let first = *model.sets[set as usize].nodes.first()?;
        Some(self.node_component[first as usize])
    }
}

/// A view of what is free (over the engine's usage `base`, differing on the nodes of
/// `touched`), with its sets' tallies.
struct Place<'a, F: Free> {
    base: &'a Usage,
    free: &'a F,
    touched: [&'a [u32]; 2],
    tallies: &'a Tallies,
    /// Nodes the job may not use (bits): those of announced windows it would run into.
    excluded: Option<&'a [u64]>,
}

impl<F: Free> Clone for Place<'_, F> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<F: Free> Copy for Place<'_, F> {}

/// Scratch for the open nodes of a set.
#[derive(Debug, Clone, Default)]
struct Scratch {
    bits: Vec<u64>,
    nodes: Vec<u32>,
}

/// Slurm's placement of `request` in set `set` of `place`, on the set's open nodes alone
/// (full nodes and nodes held whole offer nothing: they only end runs, as gaps do).
fn place_in<F: Free>(
    model: &SharedNodes,
    place: &Place<F>,
    set: u32,
    request: &Request,
    scratch: &mut Scratch,
) -> Option<Allocation> {
    let bits = model.set_bits(set);
    open_nodes(
        place.base,
        place.free,
        bits,
        &place.touched,
        &mut scratch.bits,
        &mut scratch.nodes,
    );
    if let Some(excluded) = place.excluded {
        scratch.nodes.retain(|&n| !bit(excluded, n));
    }
    let limits = model.sets[set as usize].limits;
    select(
        &model.resources,
        place.free,
        &scratch.nodes,
        request,
        limits,
    )
}

/// The first of `sets` where `request` fits `place`, and what it takes there.
fn fit<F: Free>(
    model: &SharedNodes,
    place: &Place<F>,
    sets: &[u32],
    request: &Request,
    scratch: &mut Scratch,
) -> Option<(u32, Allocation)> {
    sets.iter().find_map(|&p| {
        if !place.tallies.may_fit(model, p, request) {
            return None;
        }
        place_in(model, place, p, request, scratch).map(|a| (p, a))
    })
}

/// Whether bit `n` is set.
#[inline]
fn bit(bits: &[u64], n: u32) -> bool {
    bits[n as usize / 64] >> (n % 64) & 1 == 1
}

/// The nodes a bit set may hold.
fn nodes_of(bits: &[u64]) -> u32 {
    bits.len() as u32 * 64
}

/// [`SharedScan::exclusion`] on `announced` windows, into `excluded`.
fn exclusion(
    announced: &[(f64, f64, Vec<u64>)],
    excluded: &mut Vec<u64>,
    from: f64,
    until: f64,
) -> bool {
    let mut any = false;
    for (start, end, bits) in announced {
        if *start < until && *end > from {
            if !any {
                excluded.clear();
                excluded.resize(bits.len(), 0);
                any = true;
            }
            for (e, b) in excluded.iter_mut().zip(bits) {
                *e |= b;
            }
        }
    }
    any
}
