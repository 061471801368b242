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
use crate::sched::order::{order_window, Heuristic};

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

/// What a queue-order scan of a component found, when it started nothing.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Memo {
    /// The component's version then (`SiteState::version`).
    version: u64,
    /// Entries of its waiting list scanned (later ones are arrivals since).
    entries: usize,
    phase: Phase,
    /// The bound for the jobs after those (0: none may start).
    bound: u64,
    late_bound: u64,
    shadow: f64,
    /// Its reservation, if it has one.
    reservation: Option<Reserve>,
}

/// The scan's scratch space (kept by a policy from call to call).
#[derive(Debug, Clone, Default)]
pub struct SiteScan {
    free: Vec<u32>,
    /// Free nodes of each component.
    component_free: Vec<u64>,
    /// Per component (and one more for the jobs no partition may start), the job size from
    /// which its jobs need not be looked at: `u64::MAX` while it starts jobs in order, its
    /// free nodes + 1 while it backfills, 0 once blocked.
    bound: Vec<u64>,
    /// Per component, its waiting jobs not yet passed in this scan.
    remaining: Vec<u32>,
    /// The reservation of the component being scanned, if it made one.
    reserved: Option<Reserve>,
    /// Per component, what the last queue-order scan found when it started nothing, for the
    /// next scan of the same site (`memo_site`: its identity) if nothing but arrivals changes.
    memos: Vec<Option<Memo>>,
    memo_site: usize,
    /// Components still open in this scan.
    open: usize,
    /// The reservation recorded is the earliest top job's by index (components scanned one
    /// after the other), else the first made.
    by_index: bool,
    /// Per component while it backfills, the most nodes a job ending after the shadow time
    /// may take: the reservation's extra nodes and the free nodes outside the reserved
    /// partition.
    late_bound: Vec<u64>,
    /// Per atom, the start of the first maintenance announced ahead over its nodes (+inf:
    /// none): only jobs ending by then take its nodes.
    ahead: Vec<f64>,
    /// Per component, its reservation's shadow time (+inf when it has none).
    shadow: Vec<f64>,
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
        let open = self.prepare(&site, view);
        if open == 0 {
            return;
        }
        let by_tier = model.tiered();
        if by_tier {
            self.tiered.clear();
            self.tiered.extend((0..len as u32).map(|k| {
                let job = view.queue[position(k as usize) as usize];
                (u32::MAX - model.tier(job), k)
            }));
            self.tiered.sort_unstable();
        }
        self.open = open;
        self.by_index = false;
        for i in 0..len {
            if self.open == 0 {
                break;
            }
            let k = if by_tier {
                self.tiered[i].1 as usize
            } else {
                i
            };
            let pos = position(k);
            let index = view.queue[pos as usize];
            // (a job that cannot start is passed over here, cheaply: see scan_queue_order)
            let (nodes, c) = model.job_key(index);
            let (nodes, c) = (u64::from(nodes), c as usize);
            if nodes >= self.bound[c]
                || (nodes > self.late_bound[c]
                    && view.now + view.jobs.get(index).requested_time > self.shadow[c])
            {
                continue;
            }
            self.visit(&site, view, Some(pos), index, backfill, decision);
        }
        decision.takes.extend_from_slice(&self.takes);
    }

    /// The scan in queue order (FCFS) on a site of one tier, component by component over
    /// each one's own waiting jobs (`SiteState::waiting_jobs`): the same starts as `scan` in
    /// queue order, without passing over the jobs of components where nothing can start.
    pub fn scan_queue_order(&mut self, view: &View, backfill: Backfill, decision: &mut Decision) {
        let Some(site) = view.site else {
            return;
        };
        let open = self.prepare(&site, view);
        if open == 0 {
            return;
        }
        self.open = open;
        // (the reservation recorded is the one of the earliest top job, as in queue order)
        self.by_index = true;
        let identity = site.model as *const _ as usize;
        if self.memo_site != identity {
            self.memos.clear();
            self.memo_site = identity;
        }
        self.memos.resize(site.model.components() as usize, None);
        for c in 0..site.model.components() as usize {
            if self.bound[c] == 0 {
                continue; // closed before the scan: nothing to remember either
            }
            let overdue = self.overdue(&site, c, view.now);
            let entries = site.state.waiting_entries(c as u32);
            let from = match self.memos[c] {
                // Nothing changed in the component since the scan remembered but arrivals,
                // and no running job of it is past its request (its jobs' releases, so the
                // reservation and its extra nodes, are those of then; time passing only makes
                // a waiting job end later): the jobs then waiting would do as they did (start
                // nothing), so only the arrivals since are scanned, from where it stopped.
                Some(memo)
                    if !overdue
                        && memo.version == site.state.version(c as u32)
                        && memo.entries <= entries =>
                {
                    self.phases[c] = memo.phase;
                    self.bound[c] = memo.bound;
                    self.late_bound[c] = memo.late_bound;
                    self.shadow[c] = memo.shadow;
                    if let Some(reserve) = memo.reservation {
                        self.offer(reserve, decision);
                    }
                    memo.entries
                }
                _ => 0,
            };
            self.reserved = None;
            let started_before = decision.starts.len();
            for waiting in site.state.waiting_jobs(c as u32, from) {
                if self.bound[c] == 0 {
                    break;
                }
                // (most jobs behind a reservation cannot start: passed over here, cheaply)
                let (index, nodes) = (waiting.job, u64::from(waiting.nodes));
                let passed_over = nodes >= self.bound[c]
                    || (nodes > self.late_bound[c]
                        && view.now + waiting.requested > self.shadow[c]);
                if passed_over {
                    self.remaining[c] -= 1;
                    if self.remaining[c] == 0 {
                        self.bound[c] = 0;
                        self.open -= 1;
                    }
                    continue;
                }
                self.visit(&site, view, None, index, backfill, decision);
            }
            // what the scan found, for the next one if nothing but arrivals changes
            let carried = match self.memos[c] {
                Some(memo) if from > 0 => memo.reservation,
                _ => None,
            };
            self.memos[c] = (decision.starts.len() == started_before && !overdue).then(|| {
                let phase = self.phases[c];
                let free = self.component_free[c];
                Memo {
                    version: site.state.version(c as u32),
                    entries,
                    phase,
                    bound: match phase {
                        Phase::Blocked => 0,
                        _ if free == 0 => 0,
                        Phase::Primary => u64::MAX,
                        Phase::Backfill { .. } => free + 1,
                    },
                    late_bound: self.late_bound[c],
                    shadow: self.shadow[c],
                    reservation: self.reserved.or(carried),
                }
            });
        }
        decision.takes.extend_from_slice(&self.takes);
    }

    /// Whether a running job of component `c` is past its request at `now` (its release then
    /// moves with time: nothing found before may be reused).
    fn overdue(&self, site: &SiteView, c: usize, now: f64) -> bool {
        (0..site.model.atoms() as u32)
            .filter(|&a| site.model.atom_component(a) as usize == c)
            .any(|a| (site.state.running_in(a).first()).is_some_and(|&(end, _, _)| end <= now))
    }

    /// Records `reserve` as the decision's reservation if it is the first, or (components
    /// scanned one after the other) its top job comes before the one recorded.
    fn offer(&self, reserve: Reserve, decision: &mut Decision) {
        let earlier = match decision.reservation {
            None => true,
            Some(r) => self.by_index && reserve.job < r.job,
        };
        if earlier {
            decision.reservation = Some(reserve);
        }
    }

    /// The scan over the whole queue in the order of `order` (a heuristic on the first
    /// `window` jobs, the rest in queue order; `scratch` its scores and order): what ordering
    /// only the jobs that may matter reproduces, and the scan while maintenance is announced.
    pub fn scan_whole_queue(
        &mut self,
        view: &View,
        order: (Heuristic, usize),
        backfill: Backfill,
        scratch: (&mut Vec<u128>, &mut Vec<u32>),
        decision: &mut Decision,
    ) {
        let (scores, sorted) = scratch;
        order_window(order.0, order.1, view, scores, sorted);
        let (sorted, n) = (&*sorted, sorted.len());
        let position = |k: usize| if k < n { sorted[k] } else { k as u32 };
        self.scan(view, view.queue.len(), position, backfill, decision);
    }

    /// Free nodes of each component of the site now.
    pub fn component_free(&self, site: &SiteView) -> Vec<u64> {
        let mut free = Vec::new();
        sum_by_component(site, site.state.free(), &mut free);
        free
    }

    /// Starts the jobs `starts` names ((queue position, job, kind), in that order), each in the
    /// first of its candidates where its nodes are free, taken as the scan takes them: what a
    /// policy outside the engine decides (it names jobs, not nodes). Returns the first job
    /// that fits in none of its candidates.
    pub fn start_named(
        &mut self,
        view: &View,
        starts: &[(u32, u32, StartKind)],
        decision: &mut Decision,
    ) -> Result<(), u32> {
        let Some(site) = view.site else {
            return Ok(());
        };
        self.prepare(&site, view);
        for &(pos, index, kind) in starts {
            let job = view.jobs.get(index);
            let (nodes, est_end) = (job.nodes, view.now + job.requested_time);
            let fits = (site.model.usable(index).iter())
                .copied()
                .find(|&p| self.room(&site, p, est_end) >= nodes);
            let Some(p) = fits else {
                return Err(index);
            };
            self.take(&site, p, None, nodes, est_end);
            decision.starts.push(Start {
                pos,
                job: index,
                kind,
            });
            decision.site_starts.push((p, self.takes.len() as u32));
        }
        decision.takes.extend_from_slice(&self.takes);
        Ok(())
    }

    /// Job `index`, at queue position `pos` (found when it starts if `None`), in the scan:
    /// started, made its component's top job, or passed over; closes its component once
    /// nothing more can start in it.
    fn visit(
        &mut self,
        site: &SiteView,
        view: &View,
        pos: Option<u32>,
        index: u32,
        backfill: Backfill,
        decision: &mut Decision,
    ) {
        let (nodes, component) = site.model.job_key(index);
        let component = component as usize;
        if self.bound[component] == 0 {
            return; // closed (held jobs too: over their limits, or their partitions down)
        }
        self.remaining[component] -= 1;
        let last = self.remaining[component] == 0;
        let start = if u64::from(nodes) >= self.bound[component] {
            None
        } else {
            self.consider(site, view, index, component, backfill, decision)
        };
        if let Some((partition, kind)) = start {
            self.component_free[component] -= u64::from(nodes);
            if kind == StartKind::Backfill {
                self.bound[component] = self.component_free[component] + 1;
                self.late_bound[component] =
                    self.late_room(site, component, self.phases[component]);
            }
            let est_end = view.now + view.jobs.get(index).requested_time;
            let first = self.started.last().map_or(0, |s| s.2);
            self.started.push((est_end, first, self.takes.len() as u32));
            decision.starts.push(Start {
                pos: pos.unwrap_or_else(|| queue_position(view.queue, index)),
                job: index,
                kind,
            });
            decision
                .site_starts
                .push((partition, self.takes.len() as u32));
        }
        let done = self.phases[component] == Phase::Blocked || self.component_free[component] == 0;
        if last || done {
            self.bound[component] = 0;
            self.open -= 1;
        }
    }

    /// The scan's state for the view's site: free nodes, every component at its start;
    /// returns how many components are open.
    fn prepare(&mut self, site: &SiteView, view: &View) -> usize {
        let model = site.model;
        self.free.clear();
        self.free.extend_from_slice(site.state.free());
        self.phases.clear();
        self.phases
            .resize(model.components() as usize, Phase::Primary);
        self.started.clear();
        self.takes.clear();
        sum_by_component(site, &self.free, &mut self.component_free);
        // Components where a job may still start: with free nodes and waiting jobs, not
        // blocked, and not past their last waiting job in this order. A closed component's
        // jobs are passed over at once (bound 0); the scan ends when none is open.
        let components = model.components() as usize;
        self.remaining.clear();
        self.remaining.extend_from_slice(site.state.waiting());
        self.bound.clear();
        self.bound.resize(components, u64::MAX);
        self.bound.push(0); // (the jobs no partition may start)
        self.late_bound.clear();
        self.late_bound.resize(components, 0);
        self.shadow.clear();
        self.shadow.resize(components, f64::INFINITY);
        model.maintenance_ahead(view.announced, view.now, &mut self.ahead);
        let mut open = components;
        for c in 0..components {
            if self.component_free[c] == 0 || self.remaining[c] == 0 {
                self.bound[c] = 0;
                open -= 1;
            }
        }
        open
    }

    /// Job `index` of open `component`: where it starts (partition, kind), or `None`; as the
    /// component's top job, the component's reservation or its end.
    fn consider(
        &mut self,
        site: &SiteView,
        view: &View,
        index: u32,
        component: usize,
        backfill: Backfill,
        decision: &mut Decision,
    ) -> Option<(u32, StartKind)> {
        let usable = site.model.usable(index);
        let job = view.jobs.get(index);
        let est_end = view.now + job.requested_time;
        // (nodes under maintenance announced ahead take only jobs that end, by their request,
        // before it starts: `room`)
        match self.phases[component] {
            Phase::Blocked => None,
            Phase::Primary => {
                let fits =
                    (usable.iter().copied()).find(|&p| self.room(site, p, est_end) >= job.nodes);
                if let Some(p) = fits {
                    self.take(site, p, None, job.nodes, est_end);
                    return Some((p, StartKind::Primary));
                }
                if !usable
                    .iter()
                    .any(|&p| self.admitted(site, p, est_end, job.nodes))
                {
                    return None; // not admitted now: passed over, not the top job
                }
                let phase = self.top(site, view, usable, est_end, backfill, index, decision);
                self.phases[component] = phase;
                if phase != Phase::Blocked {
                    self.bound[component] = self.component_free[component] + 1;
                    self.late_bound[component] = self.late_room(site, component, phase);
                    if let Phase::Backfill { shadow, .. } = phase {
                        self.shadow[component] = shadow;
                    }
                }
                None
            }
            Phase::Backfill {
                partition,
                shadow,
                extra,
            } => {
                let late = est_end > shadow;
                if late && u64::from(job.nodes) > self.late_bound[component] {
                    return None; // it would delay the reservation wherever it started
                }
                for &p in usable {
                    if self.room(site, p, est_end) < job.nodes {
                        continue;
                    }
                    let from_reserved = self.plan(site, p, Some(partition), job.nodes, est_end);
                    if !late || from_reserved <= extra {
                        if late {
                            self.phases[component] = Phase::Backfill {
                                partition,
                                shadow,
                                extra: extra - from_reserved,
                            };
                        }
                        self.take(site, p, Some(partition), job.nodes, est_end);
                        return Some((p, StartKind::Backfill));
                    }
                }
                None
            }
        }
    }

    /// The most nodes a job of `component` ending after the shadow time may take in `phase`
    /// (see `late_bound`).
    fn late_room(&self, site: &SiteView, component: usize, phase: Phase) -> u64 {
        match phase {
            Phase::Backfill {
                partition, extra, ..
            } => {
                let inside = u64::from(site.free_in(partition, &self.free));
                u64::from(extra) + (self.component_free[component] - inside)
            }
            _ => 0,
        }
    }

    /// The phase of a component whose top job `index` fits nowhere now (with EASY, its
    /// reservation, the first of the invocation recorded in `decision`).
    #[allow(clippy::too_many_arguments)]
    fn top(
        &mut self,
        site: &SiteView,
        view: &View,
        usable: &[u32],
        est_end: f64,
        backfill: Backfill,
        index: u32,
        decision: &mut Decision,
    ) -> Phase {
        // (the top job's partitions may be full while others of its component are not: those
        // backfill around its reservation)
        let component = site.model.job_key(index).1 as usize;
        if backfill == Backfill::None || self.component_free[component] == 0 {
            return Phase::Blocked;
        }
        let nodes = view.jobs.get(index).nodes;
        let mut best: Option<(u32, f64, u32)> = None;
        for &p in usable {
            if !self.admitted(site, p, est_end, nodes) {
                continue; // it may not start there before the maintenance
            }
            if let Some((shadow, extra)) = self.reservation(site, view, p, nodes, est_end) {
                if best.is_none_or(|b| shadow < b.1) {
                    best = Some((p, shadow, extra));
                }
            }
        }
        let Some((partition, shadow, extra)) = best else {
            return Phase::Blocked;
        };
        let reserve = Reserve {
            job: index,
            shadow_time: shadow,
            extra,
        };
        self.reserved = Some(reserve);
        self.offer(reserve, decision);
        Phase::Backfill {
            partition,
            shadow,
            extra,
        }
    }

    /// EASY's (shadow time, extra nodes) for a job of `nodes` nodes in partition `p`: the
    /// releases of the nodes of `p` that running jobs (by their requested ends) and the jobs
    /// started in this scan hold, walked in time order from the nodes of `p` free now. Only
    /// the nodes open to the job (no maintenance announced over them before `est_end`, its
    /// end if it started now) count: the others could not hold it.
    fn reservation(
        &mut self,
        site: &SiteView,
        view: &View,
        p: u32,
        nodes: u32,
        est_end: f64,
    ) -> Option<(f64, u32)> {
        let mut releases = std::mem::take(&mut self.releases);
        let open = |a: u32| site.model.contains(p, a) && self.open_until(a, est_end);
        releases.clear();
        for &(end, first, last) in &self.started {
            let held: u32 = (self.takes[first as usize..last as usize].iter())
                .filter(|&&(atom, _)| open(atom))
                .map(|&(_, count)| count)
                .sum();
            if held > 0 {
                releases.push((end, held));
            }
        }
        let atoms = &site.model.partition(p).atoms;
        let all_open = atoms.iter().all(|&a| self.open_until(a, est_end));
        // the running jobs on the open nodes of `p`, by requested end: one atom's list as it
        // is, several atoms' merged (a job holding nodes of two counts once per atom: the same)
        let mut merged_running = Vec::new();
        let running: &[(f64, u32, u32)] = match &atoms[..] {
            [one] if all_open => site.state.running_in(*one),
            several => {
                for &a in several.iter().filter(|&&a| self.open_until(a, est_end)) {
                    merged_running.extend_from_slice(site.state.running_in(a));
                }
                merged_running.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                &merged_running
            }
        };
        // atoms down come back (all free) at the end of their windows
        for &a in atoms.iter().filter(|&&a| self.open_until(a, est_end)) {
            if let Some(back) = site.state.down(a) {
                releases.push((back, site.model.atom_sizes()[a as usize]));
            }
        }
        releases.sort_by(|a, b| a.0.total_cmp(&b.0));
        let now = view.now;
        let free = if all_open {
            site.free_in(p, &self.free)
        } else {
            self.room(site, p, est_end)
        };
        let running = running.iter().map(|&(end, _, count)| (end.max(now), count));
        let mut started = releases.iter().copied().peekable();
        let mut running = running.peekable();
        let merged = std::iter::from_fn(|| match (running.peek(), started.peek()) {
            (Some(r), Some(s)) if s.0 < r.0 => started.next(),
            (Some(_), _) => running.next(),
            (None, _) => started.next(),
        });
        let found = walk(merged, free, nodes).map(|r| (r.shadow_time, r.extra));
        self.releases = releases;
        found
    }

    /// Whether a job ending (by its request) at `est_end` may take atom `a`'s nodes: no
    /// maintenance announced ahead over them starts before.
    #[inline]
    fn open_until(&self, a: u32, est_end: f64) -> bool {
        est_end <= self.ahead[a as usize]
    }

    /// Free nodes of partition `p` a job ending at `est_end` may take now.
    #[inline]
    fn room(&self, site: &SiteView, p: u32, est_end: f64) -> u32 {
        (site.model.partition(p).atoms.iter())
            .filter(|&&a| self.open_until(a, est_end))
            .map(|&a| self.free[a as usize])
            .sum()
    }

    /// Whether a job of `nodes` nodes ending at `est_end` may start in `p` before maintenance
    /// announced ahead (the nodes of `p` open to it hold it), whatever else runs.
    fn admitted(&self, site: &SiteView, p: u32, est_end: f64, nodes: u32) -> bool {
        let open: u32 = (site.model.partition(p).atoms.iter())
            .filter(|&&a| self.open_until(a, est_end))
            .map(|&a| site.model.atom_sizes()[a as usize])
            .sum();
        open >= nodes
    }

    /// Nodes a job of `nodes` nodes in partition `p`, ending at `est_end`, would take from the
    /// atoms of `reserved` (it takes nodes outside them first).
    fn plan(
        &self,
        site: &SiteView,
        p: u32,
        reserved: Option<u32>,
        nodes: u32,
        est_end: f64,
    ) -> u32 {
        let Some(r) = reserved else {
            return 0;
        };
        let outside: u32 = (site.model.partition(p).atoms.iter())
            .filter(|&&a| !site.model.contains(r, a) && self.open_until(a, est_end))
            .map(|&a| self.free[a as usize])
            .sum();
        nodes.saturating_sub(outside)
    }

    /// Takes `nodes` nodes of partition `p` for a job ending at `est_end` (outside
    /// `reserved`'s atoms first, then in the partition's atom order; never nodes under
    /// maintenance announced before `est_end`) into `takes`.
    fn take(&mut self, site: &SiteView, p: u32, reserved: Option<u32>, nodes: u32, est_end: f64) {
        let atoms = &site.model.partition(p).atoms;
        let mut left = nodes;
        for pass in 0..2 {
            for &a in atoms.iter() {
                if left == 0 {
                    return;
                }
                let inside = reserved.is_some_and(|r| site.model.contains(r, a));
                if inside != (pass == 1) || !self.open_until(a, est_end) {
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

/// Free nodes `free` of each atom, summed by component into `out`.
fn sum_by_component(site: &SiteView, free: &[u32], out: &mut Vec<u64>) {
    out.clear();
    out.resize(site.model.components() as usize, 0);
    for (a, &f) in free.iter().enumerate() {
        out[site.model.atom_component(a as u32) as usize] += u64::from(f);
    }
}

/// The position of job `index` in `queue`: found by bisection, the queue holding jobs by
/// index on a site unless downtime requeued some at its front, else by a walk.
fn queue_position(queue: &[u32], index: u32) -> u32 {
    let at = queue.partition_point(|&j| j < index);
    if queue.get(at) == Some(&index) {
        return at as u32;
    }
    queue.iter().position(|&j| j == index).unwrap_or(at) as u32
}
