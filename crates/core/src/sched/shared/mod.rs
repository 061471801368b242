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

mod named;
mod place;
mod reserve;

use place::{exclusion, fit, Place, Scratch};
use reserve::Kept;

use crate::engine::{Backfill, Decision, Reserve, SharedView, Start, StartKind, View};
use crate::model::SharedNodes;
use crate::packing::{Allocation, Least, NodeFree, Sparse, Tallies, Usage};
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

/// A scan in queue order that started nothing: while no job starts or ends and the queue only
/// grows at its end, and no running job is past its request or every shadow time is still
/// ahead, the next scan would find the same for those jobs (the same free resources, top jobs
/// and shadow times; time passing only makes a waiting job end later), so it scans the
/// arrivals alone, from the same state.
#[derive(Debug, Clone)]
struct Memo {
    model_id: usize,
    stamp: u64,
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
                && m.stamp == shared.state.stamp()
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
                stamp: shared.state.stamp(),
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
        let components = self.begin(view, shared);
        self.phases.clear();
        self.phases.resize(components, Phase::Primary);
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
