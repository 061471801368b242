//! The scan and EASY backfilling on a site (partitions; `model::site`).
//!
//! The queue is considered by tier (the highest PriorityTier of a job's candidates first),
//! then in the policy's order. Each component of the site (partitions sharing nodes, or named
//! together by a job) is scheduled on its own, as the one-pool scan schedules the machine: in
//! order, a job starts in the first of its candidates where it fits; the first job of a
//! component that fits nowhere is the component's top job, and the component stops there
//! without backfilling. With EASY the top job gets one reservation, in the candidate offering
//! the earliest shadow time (walking the releases of the nodes of that partition), and later
//! jobs of the component start if they end by the shadow time, or if the nodes they take from
//! the reserved partition fit in its extra nodes (they take nodes outside it first). One
//! reservation per component: jobs of other components are never held back by it, and
//! overlapping partitions cannot backfill into nodes the reservation counts on.

use crate::engine::site::SiteView;
use crate::engine::{Backfill, Decision, Reserve, Start, StartKind, View};
use crate::sched::easy::walk;

/// How a component stands in the scan.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    /// Jobs start in order while they fit.
    Primary,
    /// Its top job fits nowhere and nothing more starts in it.
    Blocked,
    /// Its top job holds a reservation in `partition`; later jobs backfill.
    Backfill {
        partition: u32,
        shadow: f64,
        extra: u32,
    },
}

/// The scan's scratch space (kept by a policy from call to call).
#[derive(Debug, Clone, Default)]
pub struct SiteScan {
    free: Vec<u32>,
    phases: Vec<Phase>,
    /// The order's indices, by tier.
    tiered: Vec<(u32, u32)>,
    /// Jobs started by this scan: (planned end, first take, end of takes).
    started: Vec<(f64, u32, u32)>,
    takes: Vec<(u32, u32)>,
    releases: Vec<(f64, u32)>,
}

impl SiteScan {
    /// Scans the first `len` entries of an order (`position(k)` = queue position of the k-th
    /// job) on the view's site, filling `decision` (starts, each start's partition and nodes,
    /// the first reservation made).
    pub fn scan(
        &mut self,
        view: &View,
        len: usize,
        position: impl Fn(usize) -> u32,
        backfill: Backfill,
        decision: &mut Decision,
    ) {
        let Some(site) = view.site else {
            return;
        };
        let model = site.model;
        self.free.clear();
        self.free.extend_from_slice(site.state.free());
        self.phases.clear();
        self.phases
            .resize(model.components() as usize, Phase::Primary);
        self.started.clear();
        self.takes.clear();
        let mut total_free: u64 = self.free.iter().map(|&f| u64::from(f)).sum();
        let mut open = model.components();
        let by_tier = model.tiered();
        if by_tier {
            self.tiered.clear();
            self.tiered.extend((0..len as u32).map(|k| {
                let job = view.queue[position(k as usize) as usize];
                (u32::MAX - model.tier(job), k)
            }));
            self.tiered.sort_unstable();
        }
        for i in 0..len {
            if total_free == 0 || open == 0 {
                break;
            }
            let k = if by_tier {
                self.tiered[i].1 as usize
            } else {
                i
            };
            let pos = position(k);
            let index = view.queue[pos as usize];
            let usable = model.usable(index);
            if usable.is_empty() {
                continue; // held: over its partitions' limits, or they are down
            }
            let component = model.job_component(index) as usize;
            let job = view.jobs.get(index);
            let est_end = view.now + job.requested_time;
            let start = match self.phases[component] {
                Phase::Blocked => continue,
                Phase::Primary => {
                    let fits = (usable.iter())
                        .find(|&&p| site.free_in(p, &self.free) >= job.nodes)
                        .copied();
                    match fits {
                        Some(p) => {
                            self.take(&site, p, None, job.nodes);
                            Some((p, StartKind::Primary))
                        }
                        None => {
                            self.phases[component] =
                                self.top(&site, view, usable, backfill, index, decision);
                            if let Phase::Blocked = self.phases[component] {
                                open -= 1;
                            }
                            None
                        }
                    }
                }
                Phase::Backfill {
                    partition,
                    shadow,
                    extra,
                } => {
                    let mut chosen = None;
                    for &p in usable {
                        if site.free_in(p, &self.free) < job.nodes {
                            continue;
                        }
                        let from_reserved = self.plan(&site, p, Some(partition), job.nodes);
                        if est_end <= shadow || from_reserved <= extra {
                            if est_end > shadow {
                                self.phases[component] = Phase::Backfill {
                                    partition,
                                    shadow,
                                    extra: extra - from_reserved,
                                };
                            }
                            self.take(&site, p, Some(partition), job.nodes);
                            chosen = Some((p, StartKind::Backfill));
                            break;
                        }
                    }
                    chosen
                }
            };
            if let Some((partition, kind)) = start {
                total_free -= u64::from(job.nodes);
                let first = self.started.last().map_or(0, |s| s.2);
                self.started.push((est_end, first, self.takes.len() as u32));
                decision.starts.push(Start {
                    pos,
                    job: index,
                    kind,
                });
                decision
                    .site_starts
                    .push((partition, self.takes.len() as u32));
            }
        }
        decision.takes.extend_from_slice(&self.takes);
    }

    /// The phase of a component whose top job `index` fits nowhere now (with EASY, its
    /// reservation, the first of the invocation recorded in `decision`).
    fn top(
        &mut self,
        site: &SiteView,
        view: &View,
        usable: &[u32],
        backfill: Backfill,
        index: u32,
        decision: &mut Decision,
    ) -> Phase {
        if backfill == Backfill::None || usable.iter().all(|&p| site.free_in(p, &self.free) == 0) {
            return Phase::Blocked;
        }
        let nodes = view.jobs.get(index).nodes;
        let mut best: Option<(u32, f64, u32)> = None;
        for &p in usable {
            if let Some((shadow, extra)) = self.reservation(site, view, p, nodes) {
                if best.is_none_or(|b| shadow < b.1) {
                    best = Some((p, shadow, extra));
                }
            }
        }
        let Some((partition, shadow, extra)) = best else {
            return Phase::Blocked;
        };
        decision.reservation.get_or_insert(Reserve {
            job: index,
            shadow_time: shadow,
            extra,
        });
        Phase::Backfill {
            partition,
            shadow,
            extra,
        }
    }

    /// EASY's (shadow time, extra nodes) for a job of `nodes` nodes in partition `p`: the
    /// releases of the nodes of `p` that running jobs (by their requested ends) and the jobs
    /// started in this scan hold, walked in time order from the nodes of `p` free now.
    fn reservation(
        &mut self,
        site: &SiteView,
        view: &View,
        p: u32,
        nodes: u32,
    ) -> Option<(f64, u32)> {
        self.releases.clear();
        for &(end, first, last) in &self.started {
            let held: u32 = (self.takes[first as usize..last as usize].iter())
                .filter(|&&(atom, _)| site.model.contains(p, atom))
                .map(|&(_, count)| count)
                .sum();
            if held > 0 {
                self.releases.push((end, held));
            }
        }
        self.releases.sort_by(|a, b| a.0.total_cmp(&b.0));
        let running = (view.running.iter())
            .map(|r| (view.estimated_end(r), site.held_in(p, r.job)))
            .filter(|&(_, held)| held > 0);
        let mut started = self.releases.iter().copied().peekable();
        let mut running = running.peekable();
        let merged = std::iter::from_fn(|| match (running.peek(), started.peek()) {
            (Some(r), Some(s)) if s.0 < r.0 => started.next(),
            (Some(_), _) => running.next(),
            (None, _) => started.next(),
        });
        let free = site.free_in(p, &self.free);
        walk(merged, free, nodes).map(|r| (r.shadow_time, r.extra))
    }

    /// Nodes a job of `nodes` nodes in partition `p` would take from the atoms of `reserved`
    /// (it takes nodes outside them first).
    fn plan(&self, site: &SiteView, p: u32, reserved: Option<u32>, nodes: u32) -> u32 {
        let Some(r) = reserved else {
            return 0;
        };
        let outside: u32 = (site.model.partition(p).atoms.iter())
            .filter(|&&a| !site.model.contains(r, a))
            .map(|&a| self.free[a as usize])
            .sum();
        nodes.saturating_sub(outside)
    }

    /// Takes `nodes` nodes of partition `p` (outside `reserved`'s atoms first, then in the
    /// partition's atom order) into `takes`.
    fn take(&mut self, site: &SiteView, p: u32, reserved: Option<u32>, nodes: u32) {
        let atoms = &site.model.partition(p).atoms;
        let mut left = nodes;
        for pass in 0..2 {
            for &a in atoms.iter() {
                if left == 0 {
                    return;
                }
                let inside = reserved.is_some_and(|r| site.model.contains(r, a));
                if inside != (pass == 1) {
                    continue;
                }
                let count = left.min(self.free[a as usize]);
                if count > 0 {
                    self.free[a as usize] -= count;
                    self.takes.push((a, count));
                    left -= count;
                }
            }
        }
    }
}
