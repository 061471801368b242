//! Placement: the queue policy's scan on nodes with identities (the scan itself is
//! `sched/scan.rs`), each start on the first idle nodes of the energy-aware order, and the
//! head job's planned nodes held for EASY.

use crate::engine::power::NodeState;
use crate::engine::{KnownJob, View};
use crate::power::manager::PowerManager;
use crate::power::plan::PlanJob;
use crate::sched::scan::{scan, Placement};
use crate::sched::{Backfill, Decision};

impl PowerManager {
    /// Step 2: the scan of a queue policy on nodes with identities. Starts jobs in the order of
    /// `positions` while they fit in the idle nodes, each on the first idle nodes of the
    /// energy-aware order; with EASY, the first job that does not fit is planned on the agenda
    /// and holds its planned nodes until its planned start (PSAS): a later job may start on
    /// idle nodes it does not hold, or on nodes it holds if it ends (by request) before then.
    pub fn scan(
        &self,
        view: &View,
        positions: &[u32],
        backfill: Backfill,
        decision: &mut Decision,
    ) {
        if view.power.is_none() {
            return;
        }
        // No idle node to place a job on (none, or the smallest waiting job does not fit) and
        // no reservation to plan: nothing starts (a job of no nodes would).
        if backfill == Backfill::None
            && self.idle_order.is_empty()
            && positions
                .iter()
                .all(|&p| view.jobs.get(view.queue[p as usize]).nodes > 0)
        {
            return;
        }
        let n = view.nodes.len();
        let mut placement = Identities {
            manager: self,
            taken: vec![false; n],
            first_taken: decision.nodes.len(),
            idle_left: view.free,
            busy_until: vec![f64::NAN; n],
            holds: Vec::new(),
            unheld_left: 0,
            shadow: f64::NAN,
        };
        let len = positions.len();
        scan(
            view,
            len,
            |k| positions[k],
            backfill,
            &mut placement,
            decision,
        );
    }

    /// `count` idle nodes not yet `taken` and `allowed`, within one node group, first in the
    /// energy-aware order (longest remaining idle timeout), marked taken; `None` if no group
    /// has that many. Among groups that can hold the job: the lowest computing power, then the
    /// first group.
    pub(super) fn take(
        &self,
        view: &View,
        count: u32,
        allowed: &dyn Fn(u32) -> bool,
        taken: &mut [bool],
    ) -> Option<Vec<u32>> {
        let usable = |i: u32| !taken[i as usize] && allowed(i);
        let group = if view.models.len() <= 1 {
            let available = self.idle_order.iter().filter(|&&i| usable(i)).count();
            (available >= count as usize).then_some(0u16)?
        } else {
            let mut available = vec![0u32; view.models.len()];
            for &i in &self.idle_order {
                if usable(i) {
                    available[view.nodes[i as usize].group as usize] += 1;
                }
            }
            (0..view.models.len() as u16)
                .filter(|&g| available[g as usize] >= count)
                .min_by(|&a, &b| {
                    let w = |g: u16| view.models[g as usize].computing_w;
                    w(a).total_cmp(&w(b)).then(a.cmp(&b))
                })?
        };
        let chosen: Vec<u32> = self
            .idle_order
            .iter()
            .copied()
            .filter(|&i| usable(i) && view.nodes[i as usize].group == group)
            .take(count as usize)
            .collect();
        for &i in &chosen {
            taken[i as usize] = true;
        }
        Some(chosen)
    }

    /// The energy-aware choice of `count` idle nodes for a job a decision did not place (within
    /// one node group); empty when no group has that many.
    pub fn place(&self, view: &View, count: u32, taken: &[bool]) -> Vec<u32> {
        let mut taken = taken.to_vec();
        let idle = |i: u32| view.nodes[i as usize].state == NodeState::Idle;
        self.take(view, count, &idle, &mut taken)
            .unwrap_or_default()
    }
}

/// Nodes with identities, as the power manager places jobs: each start on the first idle
/// nodes of the energy-aware order; with EASY, the head job is planned on the agenda and holds
/// its planned nodes until its planned start (PSAS): a later job may start on idle nodes it
/// does not hold, or on nodes it holds if it ends (by request) before then.
struct Identities<'m> {
    manager: &'m PowerManager,
    /// Nodes taken by a start of this scan.
    taken: Vec<bool>,
    /// Where this scan's starts begin in `decision.nodes`.
    first_taken: usize,
    idle_left: u32,
    /// When each node taken by a start here is free again at the latest (its request).
    busy_until: Vec<f64>,
    /// Nodes the head job holds, and the idle nodes left that it does not.
    holds: Vec<bool>,
    unheld_left: u32,
    shadow: f64,
}

impl Placement for Identities<'_> {
    fn free(&self) -> u32 {
        self.idle_left
    }

    fn start(
        &mut self,
        view: &View,
        _: u32,
        job: KnownJob,
        est_end: f64,
        decision: &mut Decision,
    ) -> bool {
        // (`take` would not find more idle nodes than are left: `idle_order` lists them all
        // whenever a waiting job fits)
        let Some(nodes) = self
            .manager
            .take(view, job.nodes, &|_| true, &mut self.taken)
        else {
            return false;
        };
        for &i in &nodes {
            self.busy_until[i as usize] = est_end; // (by request: see the reservation)
        }
        decision.nodes.extend_from_slice(&nodes);
        self.idle_left -= job.nodes;
        true
    }

    fn reserve(
        &mut self,
        view: &View,
        index: u32,
        job: KnownJob,
        decision: &mut Decision,
    ) -> Option<(f64, u32)> {
        let manager = self.manager;
        // The head job's plan on the agenda, the nodes started above running from now. A
        // reservation is a promise: planned on requested times (upper bounds) in every mode,
        // so that it never slips because a prediction was short.
        let head = PlanJob {
            job: index,
            nodes: job.nodes,
            duration: manager.queued_duration(job.requested_time),
        };
        let mut started: Vec<(f64, u32)> = decision.nodes[self.first_taken..]
            .iter()
            .map(|&i| (self.busy_until[i as usize], i))
            .collect();
        started.sort_unstable_by_key(|e| e.1);
        // Without a plan (a node it needs has no known release: a job overran its request) the
        // head job could start any moment: nothing is backfilled (as PSAS does).
        let (shadow, held) = manager.head_plan(view, head, false, &started, &self.taken)?;
        self.holds = vec![false; view.nodes.len()];
        for &i in &held {
            self.holds[i as usize] = true;
        }
        let free_left = manager
            .idle_order
            .iter()
            .filter(|&&i| !self.taken[i as usize] && !self.holds[i as usize])
            .count() as u32;
        decision.held.clone_from(&held);
        // Idle nodes left that the head does not hold (none to look for when fewer than a job
        // needs: the head holds most of them while its own nodes wake).
        self.unheld_left = free_left;
        self.shadow = shadow;
        Some((shadow, free_left))
    }

    fn backfill(
        &mut self,
        view: &View,
        _: u32,
        job: KnownJob,
        est_end: f64,
        decision: &mut Decision,
    ) -> bool {
        let manager = self.manager;
        // Nodes the head does not hold, else (if it ends by the head's start) any.
        let holds = &self.holds;
        let not_held = |i: u32| !holds[i as usize];
        let unheld = if job.nodes <= self.unheld_left {
            manager.take(view, job.nodes, &not_held, &mut self.taken)
        } else {
            None
        };
        let nodes = match unheld {
            Some(nodes) => nodes,
            None if est_end <= self.shadow => {
                match manager.take(view, job.nodes, &|_| true, &mut self.taken) {
                    Some(nodes) => nodes,
                    None => return false,
                }
            }
            None => return false,
        };
        self.unheld_left -= nodes.iter().filter(|&&i| !self.holds[i as usize]).count() as u32;
        decision.nodes.extend_from_slice(&nodes);
        self.idle_left -= job.nodes;
        true
    }
}
