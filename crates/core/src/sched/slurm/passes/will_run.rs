//! Slurm's will-run test on shared nodes (`_will_run_test` of cons_tres): whether a job fits
//! now on the nodes a backfill cycle offers it, else when, as the running jobs end by their
//! requests in batches.

use std::hash::{Hash, Hasher};

use super::shared::{SharedSlurm, Tested, RUNNING, WINDOW};
use crate::engine::{Decision, SharedView, View};
use crate::packing::select::{is_exclusive, node_needs, offer};
use crate::packing::usage::open_nodes;
use crate::packing::{select, Allocation};
use crate::sched::slurm::clock;
use crate::sched::slurm::node_map::bit;
use crate::sched::slurm::passes::running_end;

impl SharedSlurm {
    /// Slurm's will-run test (`_will_run_test`) of `job` in set `set` on the nodes of
    /// `self.avail`: now if it fits there now; else the running jobs on those nodes end by
    /// their requests in batches (those ending within a window of the first end rounded up to
    /// 30 s; the window doubling after each batch), and the start is the end of the last job of
    /// the batch after which it fits (a job already past its end: Slurm's guess,
    /// `running_end`), with the allocation the rule gives it then.
    ///
    /// Within one invocation its answer depends only on the job's request, the set, the
    /// nodes tested and the starts made so far: a test already made is answered again.
    pub(super) fn will_run(
        &mut self,
        view: &View,
        shared: SharedView,
        job: u32,
        set: u32,
        decision: &Decision,
        origin: f64,
    ) -> Option<(f64, Allocation)> {
        if !self.keep_tests {
            return self.will_run_afresh(view, shared, job, set, decision, origin);
        }
        let request = &shared.model.requests[job as usize];
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        (request, set, self.starts, &self.avail).hash(&mut hasher);
        let key = hasher.finish();
        let same = |t: &Tested| {
            t.set == set
                && t.starts == self.starts
                && t.request == *request
                && t.avail == self.avail
        };
        if let Some(t) = self
            .tested
            .get(&key)
            .and_then(|v| v.iter().find(|t| same(t)))
        {
            return t.answer.clone();
        }
        let answer = self.will_run_afresh(view, shared, job, set, decision, origin);
        let tested = Tested {
            request: request.clone(),
            set,
            starts: self.starts,
            avail: self.avail.clone(),
            answer: answer.clone(),
        };
        self.tested.entry(key).or_default().push(tested);
        answer
    }

    fn will_run_afresh(
        &mut self,
        view: &View,
        shared: SharedView,
        job: u32,
        set: u32,
        decision: &Decision,
        origin: f64,
    ) -> Option<(f64, Allocation)> {
        let now = view.now;
        let model = shared.model;
        let base = shared.state.usage();
        let request = &model.requests[job as usize];
        let limits = model.sets[set as usize].limits;
        let (min_nodes, max_nodes, need) = node_needs(request, limits);
        let exclusive = is_exclusive(&model.resources, request, limits);
        let avail = std::mem::take(&mut self.avail);
        // the open nodes tested and what they offer the job now, in all and at most on one:
        // the placement is tried only when they could cover it
        let (mut offered, mut offering, mut most) = (0u64, 0u32, 0u32);
        let now_view = self.now.over(base);
        let touched: [&[u32]; 1] = [self.now.touched()];
        open_nodes(
            base,
            &now_view,
            &avail,
            &touched,
            &mut self.bits,
            &mut self.nodes,
        );
        for &n in &self.nodes {
            let o = offer(&model.resources, &now_view, n, request, exclusive, need);
            offered += u64::from(o);
            offering += u32::from(o > 0);
            most = most.max(o);
        }
        let covered = if max_nodes == 1 {
            most >= need.max(1)
        } else {
            offered >= request.cpus() && offering >= min_nodes
        };
        let fits_now = if covered {
            select(&model.resources, &now_view, &self.nodes, request, limits)
        } else {
            None
        };
        let found = match fits_now {
            Some(a) => Some((now, a)),
            None => {
                let room = (offered, offering);
                self.release(view, shared, job, set, &avail, decision, origin, room)
            }
        };
        self.avail = avail;
        found
    }

    /// The release loop of [`SharedSlurm::will_run`].
    #[allow(clippy::too_many_arguments)]
    fn release(
        &mut self,
        view: &View,
        shared: SharedView,
        job: u32,
        set: u32,
        avail: &[u64],
        decision: &Decision,
        origin: f64,
        room: (u64, u32),
    ) -> Option<(f64, Allocation)> {
        let model = shared.model;
        let base = shared.state.usage();
        let request = &model.requests[job as usize];
        let limits = model.sets[set as usize].limits;
        let (min_nodes, max_nodes, need) = node_needs(request, limits);
        let exclusive = is_exclusive(&model.resources, request, limits);
        self.future.clear();
        self.released.clear();
        // What the nodes tested offer the job in all, and how many offer anything (`room`, as
        // they stand now), kept as jobs end: it fits only once they cover its CPUs and nodes
        // (the placement is tried then only).
        let (mut offered, mut offering) = room;
        let cpus_asked = request.cpus();
        let held = |k: u32, j: u32| -> &Allocation {
            if k == RUNNING {
                shared
                    .state
                    .allocation(j)
                    .expect("a running job holds its allocation")
            } else {
                &decision.allocations[k as usize]
            }
        };
        let mut anchor: Option<f64> = None;
        let mut window = WINDOW;
        let mut i = 0;
        let ends = std::mem::take(&mut self.ends);
        let mut found = None;
        'batches: loop {
            let mut last: Option<f64> = None;
            let mut removed = 0;
            let mut more = true;
            let mut tested = true;
            loop {
                let Some(&(end, j, k)) = ends.get(i) else {
                    more = false;
                    break;
                };
                i += 1;
                let a = held(k, j);
                if !a.nodes.iter().any(|&n| bit(avail, n)) {
                    continue; // it holds none of the nodes tested
                }
                // (on the wall clock: `origin` is the replay clock's 0 there)
                let anchor = *anchor.get_or_insert_with(|| {
                    clock::at_or_before(end + origin, WINDOW) + WINDOW - origin
                });
                last = Some(end);
                let now_view = self.now.over(base);
                for &n in a.nodes.iter().filter(|&&n| bit(avail, n)) {
                    let future = self.future.over(&now_view);
                    let o = offer(&model.resources, &future, n, request, exclusive, need);
                    offered -= u64::from(o);
                    offering -= u32::from(o > 0);
                }
                self.future.give_back(&now_view, a);
                for &n in a.nodes.iter().filter(|&&n| bit(avail, n)) {
                    let future = self.future.over(&now_view);
                    let o = offer(&model.resources, &future, n, request, exclusive, need);
                    offered += u64::from(o);
                    offering += u32::from(o > 0);
                }
                self.released.extend_from_slice(&a.nodes);
                match ends.get(i) {
                    None => {
                        more = false;
                        break;
                    }
                    Some(next) if next.0 > anchor + window => break,
                    Some(_) => {}
                }
                // (Slurm tests again only after 200 removals: then on without a test)
                removed += 1;
                if removed > 201 {
                    tested = false;
                    break;
                }
            }
            if tested {
                let Some(last_end) = last else { break };
                let anchor = anchor.expect("set with the first job removed");
                let next = ends.get(i).map(|e| e.0);
                loop {
                    window *= 2.0;
                    if next.is_none_or(|t| t <= anchor + window) {
                        break;
                    }
                }
                let now_view = self.now.over(base);
                let future = self.future.over(&now_view);
                // one node: it fits only on a node given back that offers all it needs
                let room = if max_nodes == 1 {
                    self.released.iter().any(|&n| {
                        bit(avail, n)
                            && offer(&model.resources, &future, n, request, exclusive, need)
                                >= need.max(1)
                    })
                } else {
                    offered >= cpus_asked && offering >= min_nodes
                };
                if room {
                    let touched: [&[u32]; 2] = [self.now.touched(), self.future.touched()];
                    open_nodes(
                        base,
                        &future,
                        avail,
                        &touched,
                        &mut self.bits,
                        &mut self.nodes,
                    );
                    if let Some(a) = select(&model.resources, &future, &self.nodes, request, limits)
                    {
                        found = Some((running_end(last_end, view.now), a));
                        break 'batches;
                    }
                }
                self.released.clear();
            }
            if !more {
                break;
            }
        }
        self.ends = ends;
        found
    }
}
