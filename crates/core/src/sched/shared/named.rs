//! Jobs an outside policy names (a Python policy, a learning agent) where jobs share nodes:
//! each placed by the cons_tres rule now, in the order named, among the nodes the policy
//! names for it when it names some; and where each waiting job would fit now, alone.

use super::place::{fit, Place};
use super::SharedScan;
use crate::engine::shared::window_bits;
use crate::engine::{Decision, SharedView, StartKind, View};
use crate::packing::Allocation;

impl SharedScan {
    /// Starts the `named` jobs ((queue position, job, kind)) now, in that order, each where
    /// the placement rule puts it on what the ones before it left free, among the nodes
    /// `among` names for it (`(job, nodes)`; every node of its partitions when it names none)
    /// and off the nodes of announced windows it would run into. `Err(job)`: the first job
    /// that fits nowhere so.
    pub fn start_named(
        &mut self,
        view: &View,
        named: &[(u32, u32, StartKind)],
        among: &[(u32, Vec<u32>)],
        decision: &mut Decision,
    ) -> Result<(), u32> {
        let Some(shared) = view.shared else {
            return Ok(());
        };
        self.begin(view, shared);
        let (model, base) = (shared.model, shared.state.usage());
        for &(pos, job, kind) in named {
            let sets = model.fitting(job);
            let Some(c) = sets.first().and_then(|&s| self.component_of_set(model, s)) else {
                return Err(job);
            };
            let est_end = view.now + view.jobs.get(job).requested_time;
            let chosen = among.iter().find(|(j, _)| *j == job).map(|(_, n)| &n[..]);
            let excluded = self.excluded_for(view.now, est_end, chosen, nodes_of(shared));
            let now = self.now.over(base);
            let place = Place {
                base,
                free: &now,
                touched: [self.now.touched(), &[]],
                tallies: &self.now_tallies,
                excluded: excluded.then_some(&self.excluded[..]),
            };
            let request = &model.requests[job as usize];
            let Some((set, a)) = fit(model, &place, sets, request, &mut self.scratch) else {
                return Err(job);
            };
            let backfilled = (kind == StartKind::Backfill).then_some(false);
            self.start(
                base, model, pos, job, c, set, est_end, a, backfilled, decision,
            );
        }
        Ok(())
    }

    /// Where each of the first `limit` waiting jobs (queue order) would start now if it were
    /// the only one started, off the nodes of announced windows it would run into (`None`:
    /// nowhere now).
    pub fn fits_alone(&mut self, view: &View, limit: usize) -> Vec<Option<Allocation>> {
        let Some(shared) = view.shared else {
            return vec![None; view.queue.len().min(limit)];
        };
        self.begin(view, shared);
        let (model, base) = (shared.model, shared.state.usage());
        let mut out = Vec::with_capacity(view.queue.len().min(limit));
        for &job in view.queue.iter().take(limit) {
            let est_end = view.now + view.jobs.get(job).requested_time;
            let excluded = self.excluded_for(view.now, est_end, None, nodes_of(shared));
            let place = Place {
                base,
                free: base,
                touched: [&[], &[]],
                tallies: shared.state.tallies(),
                excluded: excluded.then_some(&self.excluded[..]),
            };
            let request = &model.requests[job as usize];
            out.push(
                fit(
                    model,
                    &place,
                    model.fitting(job),
                    request,
                    &mut self.scratch,
                )
                .map(|f| f.1),
            );
        }
        out
    }

    /// Ready for starts on `shared` at `view`: nothing taken yet, the announced windows;
    /// returns how many components there are.
    pub(super) fn begin(&mut self, view: &View, shared: SharedView) -> usize {
        let model = shared.model;
        let components = self.prepare(shared);
        let (nodes, kinds) = (
            model.resources.nodes() as usize,
            model.resources.gres_names().len(),
        );
        self.now.reset(nodes, kinds);
        self.shadow.reset(nodes, kinds);
        self.later.reset(nodes, kinds);
        self.now_tallies.clone_from(shared.state.tallies());
        self.limit_tallies.clone_from(shared.state.tallies());
        self.started.clear();
        self.announced.clear();
        for w in view.announced {
            self.announced.push((w.start, w.end, window_bits(model, w)));
        }
        components
    }

    /// Fills `excluded` with the nodes a job running `[from, until)` may not use: those of the
    /// announced windows it would run into, and all but `chosen` when it names nodes; whether
    /// any is excluded.
    fn excluded_for(&mut self, from: f64, until: f64, chosen: Option<&[u32]>, n: usize) -> bool {
        let windows = self.exclusion(from, until);
        let Some(chosen) = chosen else {
            return windows;
        };
        let words = n.div_ceil(64);
        if !windows {
            self.excluded.clear();
            self.excluded.resize(words, 0);
        }
        let mut allowed = vec![0u64; words];
        for &node in chosen.iter().filter(|&&node| (node as usize) < n) {
            allowed[node as usize / 64] |= 1 << (node % 64);
        }
        for (e, a) in self.excluded.iter_mut().zip(&allowed) {
            *e |= !a;
        }
        true
    }
}

fn nodes_of(shared: SharedView) -> usize {
    shared.model.resources.nodes() as usize
}
