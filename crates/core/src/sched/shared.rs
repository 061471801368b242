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

use crate::engine::{Backfill, Decision, Reserve, SharedView, Start, StartKind, View};
use crate::model::{Request, SharedNodes};
use crate::packing::{select, Allocation, Usage};
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

/// The scan's scratch space (kept by a policy from call to call).
#[derive(Debug, Clone, Default)]
pub struct SharedScan {
    /// The component of each node (`u32::MAX`: in no node set), and the nodes of each
    /// component, for the model `model_id` (its address).
    node_component: Vec<u32>,
    component_nodes: Vec<Vec<u32>>,
    model_id: usize,
    phases: Vec<Phase>,
    /// Jobs started by this scan: (component, planned end, index in the decision's starts).
    started: Vec<(u32, f64, u32)>,
    tiered: Vec<(u32, u32)>,
    /// The heuristic's scores and order (scratch).
    order_scratch: (Vec<u128>, Vec<u32>),
}

/// The three states a scan works on: free now, free at each component's shadow time once its
/// top job has taken its reservation, and the least of both (what a job ending after the
/// shadow time may take).
struct Working {
    now: Usage,
    shadow: Option<(Usage, Usage)>,
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
        self.scan(view, view.queue.len(), position, backfill, decision);
        self.order_scratch = (scores, order);
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
        self.prepare(shared);
        let components = self.component_nodes.len();
        self.phases.clear();
        self.phases.resize(components, Phase::Primary);
        self.started.clear();
        let tiered = shared.site.is_some_and(|s| s.tiered());
        if let (true, Some(site)) = (tiered, shared.site) {
            self.tiered.clear();
            self.tiered.extend((0..len as u32).map(|k| {
                let job = view.queue[position(k as usize) as usize];
                (u32::MAX - site.tier(job), k)
            }));
            self.tiered.sort_unstable();
        }
        let mut work = Working {
            now: shared.state.usage().clone(),
            shadow: None,
        };
        let mut open = components;
        for i in 0..len {
            if open == 0 {
                break;
            }
            let k = if tiered { self.tiered[i].1 as usize } else { i };
            let pos = position(k);
            let job = view.queue[pos as usize];
            let sets = shared.model.fitting(job);
            let Some(c) = sets
                .first()
                .and_then(|&s| self.component_of_set(shared.model, s))
            else {
                continue; // held: no partition may start it
            };
            let est_end = view.now + view.jobs.get(job).requested_time;
            let request = &shared.model.requests[job as usize];
            match self.phases[c as usize] {
                Phase::Blocked => continue,
                Phase::Primary => {
                    if let Some((set, a)) = fit(shared.model, &work.now, sets, request) {
                        self.start(&mut work, pos, job, c, set, est_end, a, None, decision);
                        continue;
                    }
                    self.phases[c as usize] = Phase::Blocked;
                    open -= 1;
                    if backfill == Backfill::None {
                        continue;
                    }
                    let planned = self.reserve(view, shared, &mut work, job, c, sets, decision);
                    if let Some(shadow) = planned {
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
                    let (limit, _) = work.shadow.as_ref().expect("reserved");
                    let free = if late { limit } else { &work.now };
                    if let Some((set, a)) = fit(shared.model, free, sets, request) {
                        let kind = Some(late);
                        self.start(&mut work, pos, job, c, set, est_end, a, kind, decision);
                    }
                }
            }
        }
    }

    /// Starts `job` (queue position `pos`, component `c`) in node set `set` with
    /// `allocation`; `backfilled`: `None` in order, else whether it ends after the shadow time.
    #[allow(clippy::too_many_arguments)]
    fn start(
        &mut self,
        work: &mut Working,
        pos: u32,
        job: u32,
        c: u32,
        set: u32,
        est_end: f64,
        allocation: Allocation,
        backfilled: Option<bool>,
        decision: &mut Decision,
    ) {
        work.now.take(&allocation).expect("fits what is free now");
        if let Some((limit, shadow)) = work.shadow.as_mut() {
            if backfilled == Some(true) {
                shadow.take(&allocation).expect("fits at the shadow time");
            }
            for &node in &allocation.nodes {
                limit.set_least(node, &work.now, shadow);
            }
        }
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

    /// Plans top job `job` of component `c`: the earliest time it fits once running jobs (and
    /// those this scan started) of the component end by their requests, with the allocation
    /// it then gets taken from the shadow state; `None` when no end makes room.
    #[allow(clippy::too_many_arguments)]
    fn reserve(
        &mut self,
        view: &View,
        shared: SharedView,
        work: &mut Working,
        job: u32,
        c: u32,
        sets: &[u32],
        decision: &Decision,
    ) -> Option<f64> {
        let model = shared.model;
        // (planned end, job, what it holds)
        let mut ends: Vec<(f64, u32, &Allocation)> = Vec::new();
        for r in view.running {
            if let Some(a) = shared.state.allocation(r.job) {
                if self.node_component[a.nodes[0] as usize] == c {
                    ends.push((view.estimated_end(r), r.job, a));
                }
            }
        }
        for &(sc, end, i) in &self.started {
            if sc == c {
                let i = i as usize;
                ends.push((end, decision.starts[i].job, &decision.allocations[i]));
            }
        }
        ends.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let mut later = work.now.clone();
        let request = &model.requests[job as usize];
        let mut i = 0;
        while i < ends.len() {
            let t = ends[i].0;
            while i < ends.len() && ends[i].0 == t {
                later.give_back(ends[i].2);
                i += 1;
            }
            if let Some((_, a)) = fit(model, &later, sets, request) {
                later.take(&a).expect("fits at the shadow time");
                let (limit, shadow) = work
                    .shadow
                    .get_or_insert_with(|| (work.now.clone(), work.now.clone()));
                for &node in &self.component_nodes[c as usize] {
                    shadow.copy_node(node, &later);
                    limit.set_least(node, &work.now, shadow);
                }
                return Some(t);
            }
        }
        None
    }

    /// Caches the components' nodes of `model` (the site's components, or one).
    fn prepare(&mut self, shared: SharedView) {
        let model = shared.model;
        let id = model as *const SharedNodes as usize;
        if self.model_id == id && !self.component_nodes.is_empty() {
            return;
        }
        self.model_id = id;
        let n = model.resources.nodes() as usize;
        self.node_component = vec![u32::MAX; n];
        let components = shared.site.map_or(1, |s| s.components()) as usize;
        self.component_nodes = vec![Vec::new(); components];
        for (p, set) in model.sets.iter().enumerate() {
            let c = (shared.site).map_or(0, |s| s.partition(p as u32).component);
            for &node in &set.nodes {
                if self.node_component[node as usize] == u32::MAX {
                    self.node_component[node as usize] = c;
                    self.component_nodes[c as usize].push(node);
                }
            }
        }
        for nodes in &mut self.component_nodes {
            nodes.sort_unstable();
        }
    }

    fn component_of_set(&self, model: &SharedNodes, set: u32) -> Option<u32> {
        let first = *model.sets[set as usize].nodes.first()?;
        Some(self.node_component[first as usize])
    }
}

/// The first of `sets` where `request` fits on `free`, and what it takes there.
fn fit(
    model: &SharedNodes,
    free: &Usage,
    sets: &[u32],
    request: &Request,
) -> Option<(u32, Allocation)> {
    sets.iter().find_map(|&p| {
        let set = &model.sets[p as usize];
        select(&model.resources, free, &set.nodes, request, set.limits).map(|a| (p, a))
    })
}
