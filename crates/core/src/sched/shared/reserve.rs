//! EASY's reservation on shared nodes: the earliest time the top job fits once running jobs
//! end by their requests (nodes down coming back, announced windows avoided), kept from scan
//! to scan while nothing in its component changed, and held in the shadow state only when a
//! job may need it.

use super::place::{bit, exclusion, nodes_of, place_in, Place};
use super::SharedScan;
use crate::engine::shared::{window_bits, window_nodes};
use crate::engine::{Decision, SharedView, View};
use crate::model::SharedNodes;
use crate::packing::select::{is_exclusive, node_needs, offer};
use crate::packing::{Allocation, Free, Least, NodeFree, Tallies, Usage};

/// A reservation as planned (see `SharedScan::reserve`), and what it was planned from: the
/// top job and the running jobs of the component (their allocations' serial numbers and
/// estimated ends, in the view's order). With no start of the scan in the component, the
/// component's nodes are then as they were, the same ends free the same resources, and the
/// plan would come out the same.
#[derive(Debug, Clone)]
pub(super) struct Kept {
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

impl SharedScan {
    /// Plans top job `job` of component `c`: the earliest time it fits once running jobs (and
    /// those this scan started) of the component end by their requests, with the allocation
    /// it then gets taken from the shadow state; `None` when no end makes room.
    pub(super) fn reserve(
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
        let kinds = model.resources.gres_names().len();
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
                    // (a node is up once every window it is down in has ended: the nodes of
                    // those ending later, once, as bits)
                    let mut still = vec![0u64; (model.resources.nodes() as usize).div_ceil(64)];
                    for &(v, _, _) in shared.active.iter().filter(|a| a.1 > t) {
                        let bits = window_bits(model, &downtime[v as usize]);
                        for (s, b) in still.iter_mut().zip(&bits) {
                            *s |= b;
                        }
                    }
                    for node in window_nodes(model, &downtime[w as usize]) {
                        if !bit(&still, node) {
                            let now = self.now.over(base);
                            let (before, after, gres) = self.later.bring_up(&now, node);
                            if !one_node {
                                let tallies = &mut self.later_tallies;
                                tallies.count_values(model, node, before, |g| gres[g], false);
                                tallies.count_values(model, node, after, |g| gres[g], true);
                            }
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
                    let (tallies, k) = (&mut self.later_tallies, kinds);
                    self.later
                        .give_back_each(&now, a, |i, before, after, gres| {
                            let (node, units) = (a.nodes[i], &a.gres[i * k..]);
                            let was = |g: usize| gres[g] - units[g];
                            if before.whole == after.whole {
                                let gres = |g: usize| (was(g), gres[g]);
                                tallies.shift(model, node, before, after, gres);
                            } else {
                                // (an exclusive job given back: the node counts again)
                                tallies.count_values(model, node, before, was, false);
                                tallies.count_values(model, node, after, |g| gres[g], true);
                            }
                        });
                }
                self.released.extend_from_slice(&a.nodes);
            }
            #[cfg(debug_assertions)]
            if !one_node {
                let now = self.now.over(base);
                let later = self.later.over(&now);
                debug_assert_eq!(self.later_tallies, Tallies::new(model, &later));
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
    pub(super) fn hold(&mut self, base: &Usage, model: &SharedNodes, c: u32) {
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
        // (the tallies of the least of now and the shadow time are those of that view)
        #[cfg(debug_assertions)]
        {
            let now = self.now.over(base);
            let limit = Least {
                view: &now,
                layer: &self.shadow,
            };
            debug_assert_eq!(self.limit_tallies, Tallies::new(model, &limit));
        }
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
}
