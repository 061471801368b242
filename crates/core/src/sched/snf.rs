//! Smallest need first (SNF, the SNF-ICON paper's queue policy), with its optional
//! starvation guard; on shared nodes by the CPUs each job asks for.

use std::sync::Arc;

use crate::engine::{Backfill, Decision, Policy, View};
use crate::sched::policy::{scan_with_backfill, QueueOrder, QueueRule};
use crate::sched::scan::{scan, Counts, Estimates};
use crate::sched::shared::SharedScan;
use crate::sched::site::SiteScan;

/// Smallest need first: key (nodes, requested time, id); start while jobs fit, stop at the
/// first that does not; no backfilling.
///
/// With `max_wait` (a starvation guard, off by default): jobs that have waited that long go
/// first, in FCFS order; when one of them does not fit it holds an EASY reservation and the
/// other jobs start only if they do not delay it.
#[derive(Debug, Clone)]
pub struct Snf {
    pub max_wait: Option<f64>,
    candidates: Vec<(u32, f64, i64, u32)>,
    started: Vec<(f64, u32)>,
    site_scan: SiteScan,
    shared_scan: SharedScan,
    /// How it serves the queue: without backfilling, and (with `max_wait`) with EASY behind
    /// an aged head.
    rule: Arc<QueueRule>,
    aged_easy: Arc<QueueRule>,
}

impl Default for Snf {
    fn default() -> Self {
        Snf::with_max_wait(None)
    }
}

impl Snf {
    pub fn with_max_wait(max_wait: Option<f64>) -> Self {
        let aged = |backfill| {
            Arc::new(QueueRule {
                order: QueueOrder::SnfAged {
                    max_wait: max_wait.unwrap_or(f64::INFINITY),
                },
                backfill,
            })
        };
        Snf {
            max_wait,
            candidates: Vec::new(),
            started: Vec::new(),
            site_scan: SiteScan::default(),
            shared_scan: SharedScan::default(),
            rule: match max_wait {
                None => Arc::new(QueueRule::SNF),
                Some(_) => aged(Backfill::None),
            },
            aged_easy: aged(Backfill::Easy),
        }
    }

    /// The candidates by need, then requested time, id and queue position.
    fn sort_candidates(&mut self) {
        self.candidates.sort_unstable_by(|a, b| {
            a.0.cmp(&b.0)
                .then(a.1.total_cmp(&b.1))
                .then(a.2.cmp(&b.2))
                .then(a.3.cmp(&b.3))
        });
    }

    /// The aged jobs first (FCFS), then the others by SNF; and whether the first job that does
    /// not fit is an aged one (it then holds a reservation).
    fn aged_order(&self, view: &View, max_wait: f64) -> Option<(Vec<u32>, Backfill)> {
        let rule = QueueRule {
            order: QueueOrder::SnfAged { max_wait },
            backfill: Backfill::None,
        };
        let positions = rule.positions(view);
        let aged = positions
            .iter()
            .take_while(|&&p| {
                let job = view.jobs.get(view.queue[p as usize]);
                view.now - job.submit >= max_wait
            })
            .count();
        if aged == 0 {
            return None;
        }
        // The scan's first eligible job that does not fit (by count: starts follow the order).
        let (mut dry, mut started) = (Decision::default(), Vec::new());
        let mut counts = Counts::new(view, Estimates::REQUESTED, &mut started);
        let top = scan(
            view,
            positions.len(),
            |k| positions[k],
            Backfill::None,
            &mut counts,
            &mut dry,
        )
        .unwrap_or(positions.len());
        let backfill = if top < aged {
            Backfill::Easy
        } else {
            Backfill::None
        };
        Some((positions, backfill))
    }
}

impl Policy for Snf {
    fn name(&self) -> String {
        match self.max_wait {
            None => "snf".to_string(),
            Some(w) => format!("snf(max_wait={w})"),
        }
    }

    fn decide(&mut self, view: &View, decision: &mut Decision) {
        if view.manager.is_some() {
            decision.rule = Some(self.rule.clone());
        }
        if let Some(shared) = view.shared {
            // Jobs share nodes: the need is the CPUs a job asks for, and every waiting job may
            // fit a node in use.
            self.candidates.clear();
            for (pos, &j) in view.queue.iter().enumerate() {
                let job = view.jobs.get(j);
                let cpus = shared.model.requests[j as usize].cpus() as u32;
                (self.candidates).push((cpus, job.requested_time, job.id, pos as u32));
            }
            self.sort_candidates();
            let candidates = &self.candidates;
            let len = candidates.len();
            (self.shared_scan).scan(view, len, |k| candidates[k].3, Backfill::None, decision);
            return;
        }
        if let Some(max_wait) = self.max_wait {
            if view.free == 0 {
                return;
            }
            if let Some((positions, backfill)) = self.aged_order(view, max_wait) {
                // (a power manager plans its wakes as the scan goes: EASY behind an aged head)
                if backfill == Backfill::Easy && view.manager.is_some() {
                    decision.rule = Some(self.aged_easy.clone());
                }
                if view.site.is_some() {
                    let len = positions.len();
                    self.site_scan
                        .scan(view, len, |k| positions[k], backfill, decision);
                    return;
                }
                let mut started = Vec::new();
                scan_with_backfill(view, |k| positions[k], backfill, &mut started, decision);
                return;
            }
        }
        if view.free == 0 {
            return;
        }
        // Jobs wider than the free nodes sort after every job that could start and can never
        // start in this call (free only shrinks), so leaving them out is exact.
        self.candidates.clear();
        for (pos, &j) in view.queue.iter().enumerate() {
            let job = view.jobs.get(j);
            if job.nodes <= view.free {
                self.candidates
                    .push((job.nodes, job.requested_time, job.id, pos as u32));
            }
        }
        self.sort_candidates();
        if let Some(manager) = view.manager {
            let positions: Vec<u32> = self.candidates.iter().map(|c| c.3).collect();
            manager.scan(view, &positions, Backfill::None, decision);
            return;
        }
        let candidates = &self.candidates;
        if view.site.is_some() {
            // (a job wider than every free node of the machine sorts after the jobs of its
            // component that may start, and cannot start: leaving it out is exact here too)
            self.site_scan.scan(
                view,
                candidates.len(),
                |k| candidates[k].3,
                Backfill::None,
                decision,
            );
            return;
        }
        let mut counts = Counts::new(view, Estimates::REQUESTED, &mut self.started);
        scan(
            view,
            candidates.len(),
            |k| candidates[k].3,
            Backfill::None,
            &mut counts,
            decision,
        );
    }
}
