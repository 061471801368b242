//! The site's nodes during a run: free nodes in each atom, and the nodes each running job
//! holds (`model::site` says what atoms are).

use std::collections::HashMap;

use crate::model::{Downtime, Site};

/// A waiting job as a component's list keeps it: what the scan tests of every job, side by
/// side in the order it walks them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Waiting {
    pub job: u32,
    pub nodes: u32,
    pub requested: f64,
}

/// No atom: a job that holds nodes of several atoms is looked up in `SiteState::spread`.
const SPREAD: u32 = u32::MAX;

/// Free nodes per atom and each running job's nodes, as (atom, count) pairs.
#[derive(Debug, Clone, Default)]
pub struct SiteState {
    free: Vec<u32>,
    /// (atom, count) of each job holding nodes of one atom (the common case), by job index;
    /// `(SPREAD, 0)` for a job holding several atoms' nodes, `(0, 0)` for one holding none.
    single: Vec<(u32, u32)>,
    spread: HashMap<u32, Box<[(u32, u32)]>>,
    /// Per atom, the running jobs holding its nodes: (requested end, job, count), sorted by
    /// (requested end, job) as the engine's running jobs are (EASY walks them by end).
    running: Vec<Vec<(f64, u32, u32)>>,
    /// Jobs that waited in each component, by index, started ones among them until the list
    /// is compacted (the scan passes over components without any waiting job, and scans in
    /// queue order component by component): removing a started job from the middle of a
    /// long list at each start would move the list each time.
    waiting: Vec<Vec<Waiting>>,
    /// Waiting jobs per component.
    counts: Vec<u32>,
    /// Started jobs still in their component's list, per component.
    stale: Vec<u32>,
    /// Whether each job has started (by index; the lists skip them).
    started: Vec<bool>,
    /// Per atom, the downtime windows holding it down now, and when the last of them ends.
    down: Vec<u32>,
    back: Vec<f64>,
    /// The downtime windows in progress (what a look-ahead from now must keep down).
    active: Vec<Downtime>,
    /// Per component, a value that changes at every change of it but an arrival (a start, a
    /// completion, a kill, a downtime boundary): a scan may reuse what it found while it
    /// stays the same (`sched::site`). Drawn from one counter for every state and its copies,
    /// so two states that diverged never share one; only compared for equality.
    versions: Vec<u64>,
}

/// The source of component versions (see `SiteState::versions`).
static NEXT_VERSION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

fn next_version() -> u64 {
    NEXT_VERSION.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl SiteState {
    pub fn new(site: &Site, jobs: usize) -> Self {
        SiteState {
            free: site.atom_sizes().to_vec(),
            single: vec![(0, 0); jobs],
            spread: HashMap::new(),
            running: vec![Vec::new(); site.atoms()],
            waiting: vec![Vec::new(); site.components() as usize],
            counts: vec![0; site.components() as usize],
            stale: vec![0; site.components() as usize],
            started: vec![false; jobs],
            down: vec![0; site.atoms()],
            back: vec![f64::NEG_INFINITY; site.atoms()],
            active: Vec::new(),
            versions: (0..site.components()).map(|_| next_version()).collect(),
        }
    }

    /// Free nodes of each atom.
    #[inline]
    pub fn free(&self) -> &[u32] {
        &self.free
    }

    /// The (atom, count) pairs of the nodes job `job` holds (empty when it holds none).
    #[inline]
    pub fn holdings(&self, job: u32) -> &[(u32, u32)] {
        let j = job as usize;
        match self.single[j] {
            (SPREAD, _) => &self.spread[&job],
            (_, 0) => &[],
            _ => std::slice::from_ref(&self.single[j]),
        }
    }

    /// How many jobs wait in each component.
    #[inline]
    pub fn waiting(&self) -> &[u32] {
        &self.counts
    }

    /// The jobs waiting in `component`, by index, from entry `from` of its list on (entries
    /// only ever join its end while the component's version stays the same).
    #[inline]
    pub fn waiting_jobs(&self, component: u32, from: usize) -> impl Iterator<Item = Waiting> + '_ {
        (self.waiting[component as usize][from..].iter())
            .copied()
            .filter(|w| !self.started[w.job as usize])
    }

    /// The length of `component`'s list of waiting jobs (started ones not yet compacted
    /// out included).
    #[inline]
    pub fn waiting_entries(&self, component: u32) -> usize {
        self.waiting[component as usize].len()
    }

    /// `component`'s version (see `SiteState::versions`).
    #[inline]
    pub fn version(&self, component: u32) -> u64 {
        self.versions[component as usize]
    }

    /// `component` changed (a start, a completion, a kill); `None`: every component (a
    /// downtime boundary).
    pub(crate) fn changed(&mut self, component: Option<u32>) {
        match component {
            Some(c) => {
                if let Some(v) = self.versions.get_mut(c as usize) {
                    *v = next_version();
                }
            }
            None => self.versions.iter_mut().for_each(|v| *v = next_version()),
        }
    }

    /// Job `job` of `component` joins the end of the queue (`component` past the last: a job
    /// no partition may start, not kept): arrivals in index order, or a look-ahead's queue in
    /// its order (jobs downtime requeued first).
    pub(crate) fn enqueue(&mut self, job: u32, component: u32, nodes: u32, requested: f64) {
        if let Some(list) = self.waiting.get_mut(component as usize) {
            list.push(Waiting {
                job,
                nodes,
                requested,
            });
            self.counts[component as usize] += 1;
        }
    }

    /// Job `job` of `component` leaves the queue (it starts).
    pub(crate) fn dequeue(&mut self, job: u32, component: u32) {
        let c = component as usize;
        if c < self.waiting.len() {
            self.started[job as usize] = true;
            self.counts[c] -= 1;
            self.stale[c] += 1;
            if self.stale[c] as usize * 8 > self.waiting[c].len() {
                self.compact(c);
            }
        }
    }

    /// Component `c`'s list without its started jobs.
    fn compact(&mut self, c: usize) {
        let started = &self.started;
        self.waiting[c].retain(|w| !started[w.job as usize]);
        self.stale[c] = 0;
    }

    /// Whether atom `atom` is down, and when it comes back (the end of the last window over
    /// it).
    #[inline]
    pub fn down(&self, atom: u32) -> Option<f64> {
        (self.down[atom as usize] > 0).then(|| self.back[atom as usize])
    }

    /// The downtime windows in progress, in the order they began.
    pub fn active(&self) -> &[Downtime] {
        &self.active
    }

    /// `window` takes `atoms` down (their running jobs were killed: every node of them is
    /// free).
    pub(crate) fn take_down(&mut self, atoms: &[u32], window: Downtime) {
        self.active.push(window);
        for &a in atoms {
            let a = a as usize;
            self.down[a] += 1;
            self.back[a] = self.back[a].max(window.end);
            self.free[a] = 0;
        }
    }

    /// `window`, over `atoms`, ends; those no other window holds come back (all free), with
    /// the sizes `sizes` of the site's atoms.
    pub(crate) fn bring_up(&mut self, atoms: &[u32], sizes: &[u32], window: &Downtime) {
        if let Some(pos) = self.active.iter().position(|w| w == window) {
            self.active.remove(pos);
        }
        for &a in atoms {
            let a = a as usize;
            self.down[a] -= 1;
            if self.down[a] == 0 {
                self.free[a] = sizes[a];
                self.back[a] = f64::NEG_INFINITY;
            }
        }
    }

    /// Killed jobs go back to the front of their components' waiting lists, in the order
    /// given (by index, as the engine's queue takes them back): (job, component, nodes,
    /// requested time) each.
    pub(crate) fn requeue(&mut self, jobs: &[(u32, u32, u32, f64)]) {
        for c in 0..self.waiting.len() {
            let mine: Vec<Waiting> = (jobs.iter())
                .filter(|j| j.1 as usize == c)
                .map(|&(job, _, nodes, requested)| Waiting {
                    job,
                    nodes,
                    requested,
                })
                .collect();
            if mine.is_empty() {
                continue;
            }
            self.compact(c); // (their entries of the first wait, started since, leave first)
            for w in &mine {
                self.started[w.job as usize] = false;
            }
            self.counts[c] += mine.len() as u32;
            self.waiting[c].splice(0..0, mine);
        }
    }

    /// The running jobs holding nodes of atom `atom`: (requested end, job, count), by
    /// (requested end, job).
    #[inline]
    pub fn running_in(&self, atom: u32) -> &[(f64, u32, u32)] {
        &self.running[atom as usize]
    }

    /// Job `job`, ending by its request at `requested_end`, takes `takes` ((atom, count)
    /// pairs, each within the atom's free nodes).
    pub(crate) fn take(&mut self, job: u32, takes: &[(u32, u32)], requested_end: f64) {
        for &(atom, count) in takes {
            self.free[atom as usize] -= count;
            let list = &mut self.running[atom as usize];
            list.insert(
                by_end(list, requested_end, job),
                (requested_end, job, count),
            );
        }
        match takes {
            [one] => self.single[job as usize] = *one,
            _ => {
                self.single[job as usize] = (SPREAD, 0);
                self.spread.insert(job, takes.into());
            }
        }
    }

    /// Job `job`, which was to end by its request at `requested_end`, gives its nodes back.
    pub(crate) fn release(&mut self, job: u32, requested_end: f64) {
        match std::mem::take(&mut self.single[job as usize]) {
            (SPREAD, _) => {
                for (atom, count) in self.spread.remove(&job).into_iter().flatten() {
                    self.give_back(job, requested_end, atom, count);
                }
            }
            (_, 0) => {}
            (atom, count) => self.give_back(job, requested_end, atom, count),
        }
    }

    /// `count` nodes of atom `atom` that job `job` (ending by its request at `requested_end`)
    /// held are free again.
    fn give_back(&mut self, job: u32, requested_end: f64, atom: u32, count: u32) {
        self.free[atom as usize] += count;
        let list = &mut self.running[atom as usize];
        let at = by_end(list, requested_end, job);
        debug_assert_eq!(list.get(at).map(|r| r.1), Some(job));
        list.remove(at);
    }
}

/// Where (requested end, job) stands in an atom's list of running jobs, sorted by them.
#[inline]
fn by_end(list: &[(f64, u32, u32)], requested_end: f64, job: u32) -> usize {
    list.partition_point(|&(end, j, _)| end.total_cmp(&requested_end).then(j.cmp(&job)).is_lt())
}

/// The site as a policy sees it: the partitions and the nodes free and held now.
#[derive(Debug, Clone, Copy)]
pub struct SiteView<'a> {
    pub model: &'a Site,
    pub state: &'a SiteState,
}

impl SiteView<'_> {
    /// Free nodes of partition `p` given the free count of each atom.
    #[inline]
    pub fn free_in(&self, p: u32, free: &[u32]) -> u32 {
        (self.model.partition(p).atoms.iter())
            .map(|&a| free[a as usize])
            .sum()
    }
}
