//! The built-in queue policies (the contract they fill, a view in and a decision out, is the
//! engine's: `engine/policy.rs`).

use std::sync::Arc;

pub use crate::engine::{Backfill, Decision, Policy, QueueService, Reserve, Start, StartKind};
use crate::engine::{SiteView, View};
use crate::sched::order::{order_fitting, order_fitting_site, order_window, Heuristic};
use crate::sched::scan::{scan, Counts, Estimates};
use crate::sched::shared::SharedScan;
use crate::sched::site::SiteScan;

/// How a queue policy orders the queue.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum QueueOrder {
    /// Smallest need first: (nodes, requested time, id).
    Snf,
    /// SNF behind the jobs that have waited `max_wait` seconds or more (FCFS among them).
    SnfAged { max_wait: f64 },
    /// A heuristic on the first `window` jobs (`usize::MAX` = all), the rest in FCFS order.
    Heuristic { heuristic: Heuristic, window: usize },
}

/// How a queue policy serves the queue: what a power manager plans the waiting jobs by.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QueueRule {
    pub order: QueueOrder,
    pub backfill: Backfill,
}

impl QueueService for QueueRule {
    fn positions(&self, view: &View) -> Vec<u32> {
        QueueRule::positions(self, view)
    }

    fn backfill(&self) -> Backfill {
        self.backfill
    }
}

impl QueueRule {
    /// FCFS with EASY: until a policy says otherwise.
    pub const FCFS_EASY: QueueRule = QueueRule {
        order: QueueOrder::Heuristic {
            heuristic: Heuristic::Fcfs,
            window: usize::MAX,
        },
        backfill: Backfill::Easy,
    };

    /// SNF: no backfilling.
    pub const SNF: QueueRule = QueueRule {
        order: QueueOrder::Snf,
        backfill: Backfill::None,
    };

    /// The queue positions in this order.
    pub fn positions(&self, view: &View) -> Vec<u32> {
        let n = view.queue.len() as u32;
        let snf = |a: &u32, b: &u32| {
            let job = |p: u32| view.jobs.get(view.queue[p as usize]);
            let (x, y) = (job(*a), job(*b));
            x.nodes
                .cmp(&y.nodes)
                .then(x.requested_time.total_cmp(&y.requested_time))
                .then(x.id.cmp(&y.id))
                .then(a.cmp(b))
        };
        match self.order {
            QueueOrder::Snf => {
                let mut positions: Vec<u32> = (0..n).collect();
                positions.sort_by(snf);
                positions
            }
            QueueOrder::SnfAged { max_wait } => {
                let aged =
                    |p: u32| view.now - view.jobs.get(view.queue[p as usize]).submit >= max_wait;
                let (mut first, mut rest): (Vec<u32>, Vec<u32>) = (0..n).partition(|&p| aged(p));
                rest.sort_by(snf);
                first.extend(rest);
                first
            }
            QueueOrder::Heuristic { heuristic, window } => {
                let (mut scores, mut order) = (Vec::new(), Vec::new());
                order_window(heuristic, window, view, &mut scores, &mut order);
                let sorted = order.len() as u32;
                order.extend(sorted..n);
                order
            }
        }
    }
}

/// A production heuristic on a window of the queue, then the scan, then (optionally) EASY.
#[derive(Debug, Clone)]
pub struct QueuePolicy {
    pub heuristic: Heuristic,
    /// How many jobs at the head of the queue the heuristic sorts (`usize::MAX` = all).
    pub window: usize,
    pub backfill: Backfill,
    scores: Vec<u128>,
    order: Vec<u32>,
    started: Vec<(f64, u32)>,
    /// The scan's scratch on a platform with partitions.
    site_scan: SiteScan,
    /// The scan's scratch when jobs share nodes.
    shared_scan: SharedScan,
    misfits: Vec<(u32, u128)>,
    /// EASY on system-generated predictions instead of requested times (`None`: requested).
    predictions: Option<Predictions>,
    /// How the policy serves the queue, handed to a power manager with each decision.
    rule: Arc<QueueRule>,
}

impl QueuePolicy {
    pub fn new(heuristic: Heuristic, window: usize, backfill: Backfill) -> Self {
        let window = window.max(1);
        QueuePolicy {
            heuristic,
            window,
            backfill,
            rule: Arc::new(QueueRule {
                order: QueueOrder::Heuristic { heuristic, window },
                backfill,
            }),
            scores: Vec::new(),
            order: Vec::new(),
            started: Vec::new(),
            site_scan: SiteScan::default(),
            shared_scan: SharedScan::default(),
            misfits: Vec::new(),
            predictions: None,
        }
    }

    /// The same policy with EASY on predicted run times (Tsafrir, Etsion and Feitelson 2007):
    /// each job's prediction is made when it is first seen waiting, from the jobs completed
    /// before; a running job that outlives its prediction is expected to end at its request.
    pub fn with_predictions(mut self) -> Self {
        self.predictions = Some(Predictions::default());
        self
    }
}

/// System-generated run-time predictions for EASY.
#[derive(Debug, Clone, Default)]
pub struct Predictions {
    history: crate::estimate::RuntimeHistory,
    /// Predicted run time of each job seen so far (NaN: not seen yet), by job index.
    predicted: Vec<f64>,
    /// Predicted releases of the running jobs, sorted (scratch).
    releases: Vec<(f64, u32)>,
}

impl Predictions {
    /// Learns from the completions since the last call and predicts the jobs newly waiting.
    fn update(&mut self, view: &View) {
        for &(job, start, end) in view.completed {
            let known = view.jobs.get(job);
            self.history.observe(crate::estimate::Completed {
                requested: known.requested_time,
                nodes: known.nodes,
                user: view.jobs.user(job),
                run_time: end - start,
            });
        }
        if self.predicted.len() < view.jobs.len() {
            self.predicted.resize(view.jobs.len(), f64::NAN);
        }
        for &job in view.queue {
            if self.predicted[job as usize].is_nan() {
                let known = view.jobs.get(job);
                self.predicted[job as usize] = self
                    .history
                    .predict(known.requested_time, view.jobs.user(job));
            }
        }
        self.releases.clear();
        for r in view.running {
            let predicted = self
                .predicted
                .get(r.job as usize)
                .copied()
                .unwrap_or(f64::NAN);
            let mut end = if predicted.is_nan() {
                r.requested_end
            } else {
                r.start + predicted
            };
            if end <= view.now {
                end = r.requested_end; // outlived its prediction: the request, then now
            }
            self.releases.push((end.max(view.now), r.nodes));
        }
        self.releases
            .sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    }
}

impl Policy for QueuePolicy {
    fn name(&self) -> String {
        let window = if self.window == usize::MAX {
            "all".to_string()
        } else {
            self.window.to_string()
        };
        let backfill = match self.backfill {
            Backfill::Easy => "easy",
            Backfill::None => "none",
        };
        format!(
            "{}(window={window}, backfill={backfill})",
            self.heuristic.name()
        )
    }

    fn decide(&mut self, view: &View, decision: &mut Decision) {
        let queue = view.queue;
        // (read by a power manager only: no shared count touched in a look-ahead's rollouts)
        if view.manager.is_some() {
            decision.rule = Some(self.rule.clone());
        }
        if view.shared.is_some() && !queue.is_empty() {
            let (h, w, b) = (self.heuristic, self.window, self.backfill);
            self.shared_scan.scan_ordered(view, h, w, b, decision);
            return;
        }
        if view.free == 0 || queue.is_empty() {
            if let Some(p) = self.predictions.as_mut() {
                p.update(view); // completions are seen once: learn from them now
            }
            return;
        }
        if let Some(site) = view.site {
            if let Some(free) = one_set_of_nodes(&site, view) {
                // One set of nodes that every waiting job may start in, one tier: the site's
                // scan is the one-pool scan on that set's free nodes (its jobs then take them).
                let pool = View {
                    free,
                    site: None,
                    ..*view
                };
                if free > 0 {
                    self.decide_pool(&pool, decision);
                }
                for (i, start) in decision.starts.iter().enumerate() {
                    let partition = site.model.usable(start.job)[0];
                    decision.site_starts.push((partition, i as u32 + 1));
                    decision.takes.push((0, view.jobs.get(start.job).nodes));
                }
                return;
            }
            if !view.announced.is_empty() {
                // maintenance announced: jobs that may not start now are passed over, so the
                // whole queue is ordered
                let order = (self.heuristic, self.window);
                self.site_scan.scan_whole_queue(
                    view,
                    order,
                    self.backfill,
                    (&mut self.scores, &mut self.order),
                    decision,
                );
                return;
            }
            if self.heuristic == Heuristic::Fcfs && !site.model.tiered() {
                // queue order: each component's own waiting jobs, in order
                self.site_scan
                    .scan_queue_order(view, self.backfill, decision);
                return;
            }
            // Each component of the site has its own top job: the jobs that fit their
            // component's free nodes and each component's first misfit, ordered.
            let component_free = self.site_scan.component_free(&site);
            let len = order_fitting_site(
                self.heuristic,
                self.window,
                view,
                &component_free,
                &mut self.scores,
                &mut self.misfits,
                &mut self.order,
            );
            let order = &self.order;
            self.site_scan
                .scan(view, len, |k| order[k], self.backfill, decision);
            return;
        }
        self.decide_pool(view, decision);
    }

    fn observes_events(&self) -> bool {
        self.predictions.is_some()
    }
}

impl QueuePolicy {
    /// The decision on one pool of anonymous nodes (or nodes a power manager places).
    fn decide_pool(&mut self, view: &View, decision: &mut Decision) {
        let queue = view.queue;
        // Without a power manager placing jobs only the jobs that fit (and the first that does
        // not, or with maintenance announced the misfits the scan may stop at) can matter:
        // order those alone (`order_fitting`).
        let (sorted, len) = if view.manager.is_none() {
            let n = order_fitting(
                self.heuristic,
                self.window,
                view,
                &mut self.scores,
                &mut self.order,
            );
            (n, n)
        } else {
            order_window(
                self.heuristic,
                self.window,
                view,
                &mut self.scores,
                &mut self.order,
            );
            (self.order.len(), queue.len())
        };
        let order = &self.order;
        let position = |k: usize| if k < sorted { order[k] } else { k as u32 };
        let estimates = match self.predictions.as_mut() {
            Some(p) => {
                p.update(view);
                Estimates {
                    predicted: Some(&p.predicted),
                    releases: Some(&p.releases),
                }
            }
            None => Estimates::REQUESTED,
        };
        scan_order(
            view,
            len,
            position,
            self.backfill,
            estimates,
            &mut self.started,
            decision,
        );
    }
}

/// The free nodes of a site that is one set of nodes for the scan: one atom, one tier, and
/// every waiting job may start in it (none held); `None` otherwise.
fn one_set_of_nodes(site: &SiteView, view: &View) -> Option<u32> {
    let model = site.model;
    (model.atoms() == 1
        && !model.tiered()
        && view.announced.is_empty()
        && view.down_windows.is_empty()
        && site
            .state
            .waiting()
            .first()
            .is_some_and(|&w| w as usize == view.queue.len()))
    .then(|| site.state.free()[0])
}

/// The scan and EASY, for a queue order given as `position(k)` = queue position of the k-th
/// job in that order (k over the whole queue): start in order while jobs fit; the first
/// eligible job that does not fit is the top job; with EASY, later jobs that delay neither its
/// reservation nor an announced maintenance backfill. `started` is scratch space.
pub fn scan_with_backfill(
    view: &View,
    position: impl Fn(usize) -> u32,
    backfill: Backfill,
    started: &mut Vec<(f64, u32)>,
    decision: &mut Decision,
) {
    scan_with_backfill_estimated(
        view,
        position,
        backfill,
        Estimates::REQUESTED,
        started,
        decision,
    );
}

/// [`scan_with_backfill`] with EASY's reservation and backfill on `estimates`. Announced
/// maintenance is always respected on requested times (a job runs until its request at most).
pub fn scan_with_backfill_estimated(
    view: &View,
    position: impl Fn(usize) -> u32,
    backfill: Backfill,
    estimates: Estimates,
    started: &mut Vec<(f64, u32)>,
    decision: &mut Decision,
) {
    let len = view.queue.len();
    scan_order(view, len, position, backfill, estimates, started, decision);
}

/// The scan and EASY over the first `len` entries of an order (`position(k)`, k < `len`): on
/// the nodes a power manager chooses when one manages them, else on anonymous counts.
fn scan_order(
    view: &View,
    len: usize,
    position: impl Fn(usize) -> u32,
    backfill: Backfill,
    estimates: Estimates,
    started: &mut Vec<(f64, u32)>,
    decision: &mut Decision,
) -> Option<usize> {
    if let Some(manager) = view.manager {
        // Nodes have identities: the power manager places each job (and plans the blocked
        // head job's nodes for EASY).
        let positions: Vec<u32> = (0..len).map(&position).collect();
        manager.scan(view, &positions, backfill, decision);
        return None;
    }
    let mut counts = Counts::new(view, estimates, started);
    scan(view, len, position, backfill, &mut counts, decision)
}

#[cfg(test)]
mod tests {
    use rand_core::{Rng, SeedableRng};
    use rand_pcg::Pcg64Mcg;

    use super::*;
    use crate::engine::Running;
    use crate::model::{Downtime, DowntimeKind, Job, JobTable};

    /// The scan and EASY over the whole queue in the action's order: the reference the
    /// fitting-only order (`order_fitting`) must reproduce.
    fn whole_queue(policy: &QueuePolicy, view: &View) -> Decision {
        let mut decision = Decision::default();
        if view.free == 0 || view.queue.is_empty() {
            return decision;
        }
        let (mut scores, mut order) = (Vec::new(), Vec::new());
        order_window(
            policy.heuristic,
            policy.window,
            view,
            &mut scores,
            &mut order,
        );
        let sorted = order.len();
        let position = |k: usize| if k < sorted { order[k] } else { k as u32 };
        scan_with_backfill(
            view,
            position,
            policy.backfill,
            &mut Vec::new(),
            &mut decision,
        );
        decision
    }

    #[test]
    fn ordering_only_the_jobs_that_fit_decides_as_the_whole_queue() {
        let mut rng = Pcg64Mcg::seed_from_u64(23);
        let mut draw = |n: u64| rng.next_u64() % n;
        let machine = 64;
        let jobs: Vec<Job> = (0..400)
            .map(|i| Job {
                id: i,
                submit: (i * 30) as f64,
                run_time: 1.0,
                // few distinct values: many ties in every heuristic
                requested_time: (600 * (1 + draw(5))) as f64,
                nodes: 1 + draw(u64::from(machine)) as u32 / (1 + draw(4) as u32),
            })
            .collect();
        let table = JobTable::new(jobs).unwrap();
        let (mut compared, mut idle) = (0, 0);
        for trial in 0..300u64 {
            let now = 12_000.0 + (trial * 7) as f64;
            let mut queue: Vec<u32> = (0..400).filter(|_| draw(4) == 0).collect();
            queue.truncate(1 + draw(120) as usize);
            if draw(3) == 0 {
                let last = queue.len() - 1;
                queue.swap(0, last); // a requeued job out of index order
            }
            let free = draw(u64::from(machine) + 1) as u32;
            let mut running: Vec<Running> = (0..draw(6))
                .map(|r| Running {
                    requested_end: now + (300 * (1 + draw(20))) as f64,
                    job: 399 - r as u32,
                    nodes: 1 + draw(16) as u32,
                    start: now - 100.0,
                })
                .collect();
            running.sort_by(|a, b| a.requested_end.total_cmp(&b.requested_end));
            // maintenance announced ahead in two trials of three: whole-machine or partial
            let announced: Vec<Downtime> = (0..draw(3).min(2))
                .map(|k| Downtime {
                    start: now + (600 * (1 + draw(8) + 8 * k)) as f64,
                    end: now + (600 * (10 + draw(8) + 8 * k)) as f64,
                    kind: DowntimeKind::Scheduled,
                    nodes: (draw(2) == 0).then(|| draw(u64::from(machine)) as u32),
                    back_asleep: false,
                    partition: None,
                    range: None,
                })
                .collect();
            let view = View {
                announced: &announced,
                ..View::anonymous(now, &table, machine, free, &queue, &running)
            };
            for h in Heuristic::ALL {
                for window in [2usize, 5, 16, 64, usize::MAX] {
                    for backfill in [Backfill::Easy, Backfill::None] {
                        let mut policy = QueuePolicy::new(h, window, backfill);
                        let mut fast = Decision::default();
                        policy.decide(&view, &mut fast);
                        let slow = whole_queue(&policy, &view);
                        let what = format!("{} w={window} {backfill:?} trial {trial}", h.name());
                        assert_eq!(fast.starts, slow.starts, "{what}");
                        assert_eq!(fast.reservation, slow.reservation, "{what}");
                        // what a look-ahead's rollouts skip (`View::starts_nothing`)
                        if view.starts_nothing() {
                            assert!(slow.starts.is_empty(), "{what}");
                        }
                        compared += usize::from(!slow.starts.is_empty());
                        idle += usize::from(view.starts_nothing());
                    }
                }
            }
        }
        assert!(
            compared > 1000,
            "too few decisions started jobs: {compared}"
        );
        assert!(idle > 100, "too few calls could start nothing: {idle}");
    }
}
