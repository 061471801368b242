//! The 17 queue-ordering heuristics of MARS Table II.
//!
//! Jobs are sorted by ascending score; ties keep FCFS order. Inputs: `r` requested time (s),
//! `n` nodes, `s` submit time (s since the trace start), `w` current wait (s), `N` machine size.
//!
//! Guards for the undefined cases (documented in docs/semantics.md):
//! - `r` is floored at 1 s (a request of 0 s would divide by zero or take log10(0));
//! - `s` is floored at 1 s inside `log10(s)` (the first job is submitted at 0);
//! - UNICEF's `log2(n/N)` is 0 when `n = N`: the score tends to +inf as `n -> N`, so a
//!   whole-machine job scores +inf (sorted last, ties by FCFS).

use crate::engine::admission::Admission;
use crate::engine::{KnownJob, View};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Heuristic {
    Fcfs,
    Lcfs,
    Sjf,
    Ljf,
    Srf,
    Lrf,
    Scf,
    Lcf,
    Fcsj,
    Wfp1,
    Wfp3,
    Fat,
    Unicef,
    F1,
    F2,
    F3,
    F4,
    /// Slurm's multifactor priority order (`--policy slurm`'s), as the view's outside ranks
    /// give it (`View::ranks`): not one of MARS Table II, so not in [`Heuristic::ALL`]. Jobs
    /// without a rank follow in FCFS order.
    Slurm,
}

impl Heuristic {
    /// All heuristics, FCFS first, in the order of MARS Table II.
    pub const ALL: [Heuristic; 17] = [
        Heuristic::Fcfs,
        Heuristic::Lcfs,
        Heuristic::Sjf,
        Heuristic::Ljf,
        Heuristic::Srf,
        Heuristic::Lrf,
        Heuristic::Scf,
        Heuristic::Lcf,
        Heuristic::Fcsj,
        Heuristic::Wfp1,
        Heuristic::Wfp3,
        Heuristic::Fat,
        Heuristic::Unicef,
        Heuristic::F1,
        Heuristic::F2,
        Heuristic::F3,
        Heuristic::F4,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Heuristic::Fcfs => "fcfs",
            Heuristic::Lcfs => "lcfs",
            Heuristic::Sjf => "sjf",
            Heuristic::Ljf => "ljf",
            Heuristic::Srf => "srf",
            Heuristic::Lrf => "lrf",
            Heuristic::Scf => "scf",
            Heuristic::Lcf => "lcf",
            Heuristic::Fcsj => "fcsj",
            Heuristic::Wfp1 => "wfp1",
            Heuristic::Wfp3 => "wfp3",
            Heuristic::Fat => "fat",
            Heuristic::Unicef => "unicef",
            Heuristic::F1 => "f1",
            Heuristic::F2 => "f2",
            Heuristic::F3 => "f3",
            Heuristic::F4 => "f4",
            Heuristic::Slurm => "slurm",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        let lower = name.to_ascii_lowercase();
        Heuristic::ALL.into_iter().find(|h| h.name() == lower)
    }

    /// [`Heuristic::from_name`], or `slurm`: the orderings a look-ahead may branch on and
    /// follow (Slurm's needs the Slurm settings that rank the jobs).
    pub fn ordering_from_name(name: &str) -> Option<Self> {
        Heuristic::from_name(name).or_else(|| {
            name.eq_ignore_ascii_case("slurm")
                .then_some(Heuristic::Slurm)
        })
    }

    /// Score of `job` at time `now` on a machine of `machine_nodes`; lower goes first.
    #[inline]
    pub fn score(self, job: KnownJob, now: f64, machine_nodes: u32) -> f64 {
        let logs = (
            job.requested_time.max(1.0).log10(),
            job.submit.max(1.0).log10(),
        );
        self.score_with_logs(job, logs, now, machine_nodes)
    }

    /// Whether the score depends on the job alone (not on the time or the machine): the order
    /// of a whole job table can then be computed once.
    pub fn is_static(self) -> bool {
        !matches!(
            self,
            Heuristic::Fcfs
                | Heuristic::Fcsj
                | Heuristic::Wfp1
                | Heuristic::Wfp3
                | Heuristic::Fat
                | Heuristic::Unicef
                | Heuristic::Slurm // (the ranks change with every recalculation)
        )
    }

    /// [`Heuristic::score`] with the job's `(log10 r, log10 s)` already known.
    #[inline]
    pub fn score_with_logs(
        self,
        job: KnownJob,
        (log_r, log_s): (f64, f64),
        now: f64,
        machine_nodes: u32,
    ) -> f64 {
        let r = job.requested_time.max(1.0);
        let n = f64::from(job.nodes);
        let s = job.submit;
        let w = (now - s).max(0.0);
        match self {
            Heuristic::Fcfs => s,
            Heuristic::Lcfs => -s,
            Heuristic::Sjf => r,
            Heuristic::Ljf => -r,
            Heuristic::Srf => n,
            Heuristic::Lrf => -n,
            Heuristic::Scf => r * n,
            Heuristic::Lcf => -(r * n),
            Heuristic::Fcsj => -w / r,
            Heuristic::Wfp1 => -(w / r) * n,
            Heuristic::Wfp3 => -(w / r).powi(3) * n,
            Heuristic::Fat => -(w / r) * (n / f64::from(machine_nodes)).powi(3),
            Heuristic::Unicef => {
                if job.nodes >= machine_nodes {
                    f64::INFINITY
                } else {
                    -w / ((n / f64::from(machine_nodes)).log2() * r)
                }
            }
            Heuristic::F1 => log_r * n + 870.0 * log_s,
            Heuristic::F2 => r.sqrt() * n + 2.56e4 * log_s,
            Heuristic::F3 => r * n + 6.86e6 * log_s,
            Heuristic::F4 => r * n.sqrt() + 5.30e5 * log_s,
            // the rank is the view's (`score_key`); without one, FCFS
            Heuristic::Slurm => s,
        }
    }
}

/// Writes into `out` the queue positions of the first `window` jobs in the order `heuristic`
/// gives them (nothing when that is queue order); the positions `out.len()..queue.len()`
/// follow in FCFS order. `scores` is scratch.
pub fn order_window(
    heuristic: Heuristic,
    window: usize,
    view: &View,
    scores: &mut Vec<u128>,
    out: &mut Vec<u32>,
) {
    out.clear();
    let queue = view.queue;
    let w = window.min(queue.len());
    if heuristic == Heuristic::Fcfs || w <= 1 {
        return; // queue order: every position follows implicitly
    }
    let jobs = view.jobs;
    // A time-independent order over a small table (a look-ahead's belief): walk the table's
    // order once instead of sorting the window. Equal scores tie by job index, which is the
    // queue order when the window is in index order (no job requeued to the front).
    if heuristic.is_static()
        && jobs.len() <= STATIC_WALK_FACTOR * w
        && queue[..w].windows(2).all(|p| p[0] < p[1])
    {
        let order = jobs.static_order(heuristic as usize, || table_order(heuristic, view));
        // scratch: position + 1 of each job of the window, 0 for the others
        scores.clear();
        scores.resize(jobs.len(), 0);
        for (pos, &j) in queue[..w].iter().enumerate() {
            scores[j as usize] = pos as u128 + 1;
        }
        for &j in order {
            let pos = scores[j as usize];
            if pos != 0 {
                out.push((pos - 1) as u32);
                if out.len() == w {
                    break;
                }
            }
        }
        return;
    }
    sort_window(heuristic, w, view, scores, out);
}

/// The queue positions a scan with EASY can act on, in the order of `heuristic` on the first
/// `window` jobs (the rest in FCFS order): every job that fits the free nodes, and the first job
/// in the order that does not. Only those can matter: free nodes only shrink during a call, so
/// a wider job never starts; the first of them is the top job if the scan reaches it, and EASY
/// passes over the others. With announced maintenance ahead the scan skips jobs it does not
/// admit, so the misfits it may stop at are those admitted now (admission only narrows as jobs
/// start), up to the first that ends before every window (admitted whatever starts before it).
/// Exact for the scan and EASY when nodes are anonymous (no power manager placing them):
/// callers check. The order is `out[..n]`, `n` returned; `keys` is scratch. Both keep their
/// high-water size (no clearing: a call is a look-ahead's innermost step).
pub fn order_fitting(
    heuristic: Heuristic,
    window: usize,
    view: &View,
    keys: &mut Vec<u128>,
    out: &mut Vec<u32>,
) -> usize {
    let (queue, jobs, free) = (view.queue, view.jobs, view.free);
    let len = queue.len();
    if out.len() < len + 1 {
        out.resize(len + 1, 0);
    }
    let mut kept = 0;
    // announced maintenance ahead: which misfits the scan may stop at
    let admission = Admission::constrains(view).then(|| Admission::new(view));
    let first_start = admission
        .as_ref()
        .map_or(f64::INFINITY, Admission::first_start);
    let mut w = window.min(len);
    if heuristic == Heuristic::Fcfs || w <= 1 {
        w = 0;
    }
    // whether a misfit the scan surely stops at (if it gets there) is in the order already
    let mut misfit_seen = false;
    if w > 0 {
        // (score, position) keys as in `sort_window`, or the table's rank for a
        // time-independent order (equal scores tie by job index, which is the queue order when
        // the window is in index order): the fitting jobs' keys and the least misfit's.
        let ranks = (heuristic.is_static() && queue[..w].windows(2).all(|p| p[0] < p[1]))
            .then(|| jobs.static_rank(heuristic as usize, || table_order(heuristic, view)));
        if keys.len() < w + 1 {
            keys.resize(w + 1, 0);
        }
        let (mut fitting, mut least_misfit) = (0, u128::MAX);
        let key_of = |pos: usize, j: u32| fitting_key(heuristic, ranks, view, pos, j);
        if let Some(admission) = &admission {
            for (pos, &j) in queue[..w].iter().enumerate() {
                let key = key_of(pos, j);
                let job = jobs.get(j);
                let end = view.now + job.requested_time;
                if job.nodes <= free || (end > first_start && admission.admits(end, job.nodes)) {
                    keys[fitting] = key; // (a misfit the scan may stop at, or skip)
                    fitting += 1;
                } else if end <= first_start {
                    least_misfit = least_misfit.min(key);
                }
            }
            // the scan never passes the first misfit admitted whatever starts before it
            let mut kept_keys = 0;
            for i in 0..fitting {
                let key = keys[i];
                if key < least_misfit || jobs.get(queue[key as u32 as usize]).nodes <= free {
                    keys[kept_keys] = key;
                    kept_keys += 1;
                }
            }
            fitting = kept_keys;
        } else {
            for (pos, &j) in queue[..w].iter().enumerate() {
                let key = key_of(pos, j);
                // branch-free: whether a job fits is as good as random
                let fits = jobs.get(j).nodes <= free;
                keys[fitting] = key;
                fitting += usize::from(fits);
                least_misfit = if fits {
                    least_misfit
                } else {
                    least_misfit.min(key)
                };
            }
        }
        if least_misfit != u128::MAX {
            keys[fitting] = least_misfit;
            fitting += 1;
            misfit_seen = true;
        }
        kept = sort_keys(keys, fitting, ranks.is_some(), jobs.len(), out);
    }
    // the rest in queue order: its fitting jobs, and its first misfit if none came before
    if let Some(admission) = &admission {
        for (pos, &j) in queue.iter().enumerate().skip(w) {
            let job = jobs.get(j);
            let end = view.now + job.requested_time;
            let keep = job.nodes <= free
                || (!misfit_seen && (end <= first_start || admission.admits(end, job.nodes)));
            if keep {
                out[kept] = pos as u32;
                kept += 1;
                misfit_seen |= job.nodes > free && end <= first_start;
            }
        }
        return kept;
    }
    for (pos, &j) in queue.iter().enumerate().skip(w) {
        let fits = jobs.get(j).nodes <= free;
        out[kept] = pos as u32;
        kept += usize::from(fits || !misfit_seen);
        misfit_seen |= !fits;
    }
    kept
}

/// A job's key in `order_fitting`: its rank in a time-independent order, else its score; then
/// its queue position.
#[inline(always)]
fn fitting_key(
    heuristic: Heuristic,
    ranks: Option<&[u32]>,
    view: &View,
    pos: usize,
    j: u32,
) -> u128 {
    match ranks {
        Some(ranks) => (u128::from(ranks[j as usize]) << 32) | pos as u128,
        None => score_key(heuristic, view, pos, j),
    }
}

/// (score, position) of job `j` at queue position `pos` as one integer ordered like
/// (score.total_cmp, position): integer keys sort about twice as fast as a comparator on pairs
/// (sorting them is a look-ahead's hot spot).
#[inline(always)]
fn score_key(heuristic: Heuristic, view: &View, pos: usize, j: u32) -> u128 {
    let (jobs, now, machine) = (view.jobs, view.now, view.machine_nodes);
    if heuristic == Heuristic::Slurm {
        // ties (jobs without a rank) by queue position: FCFS
        return (u128::from(view.rank(j)) << 32) | pos as u128;
    }
    // `+ 0.0` folds -0.0 into 0.0 so that they tie.
    let score = heuristic.score_with_logs(jobs.get(j), jobs.logs(j), now, machine) + 0.0;
    (u128::from(monotone(score)) << 32) | pos as u128
}

/// The window's order by sorting its scores.
fn sort_window(
    heuristic: Heuristic,
    w: usize,
    view: &View,
    scores: &mut Vec<u128>,
    out: &mut Vec<u32>,
) {
    scores.clear();
    scores.extend(
        view.queue[..w]
            .iter()
            .enumerate()
            .map(|(pos, &j)| score_key(heuristic, view, pos, j)),
    );
    scores.sort_unstable();
    out.extend(scores.iter().map(|&key| key as u32));
}

/// A table at most this many times the window walks its static order instead of sorting.
const STATIC_WALK_FACTOR: usize = 8;

/// `order_fitting` reads ranks from buckets rather than sorting once the keys to order are
/// more than the table's size over this (a sort costs about this many steps a key).
const BUCKET_FACTOR: usize = 8;

/// Writes the queue positions of `keys[..fitting]` (each `(rank or score) << 32 | position`)
/// into `out` in key order; returns `fitting`. Many keys of distinct ranks (`ranked`) over a
/// table of `table` jobs are placed each at its rank and read in order (a small table's walk,
/// as in `order_window`) rather than sorted. `keys` keeps its high-water size.
fn sort_keys(
    keys: &mut Vec<u128>,
    fitting: usize,
    ranked: bool,
    table: usize,
    out: &mut [u32],
) -> usize {
    if ranked && fitting * BUCKET_FACTOR > table {
        if keys.len() < fitting + table {
            keys.resize(fitting + table, 0);
        }
        let (found, buckets) = keys.split_at_mut(fitting);
        let buckets = &mut buckets[..table];
        buckets.fill(0);
        for &key in found.iter() {
            buckets[(key >> 32) as usize] = (key & 0xffff_ffff) + 1;
        }
        let mut kept = 0;
        for &b in buckets.iter() {
            if b != 0 {
                out[kept] = (b - 1) as u32;
                kept += 1;
                if kept == fitting {
                    break;
                }
            }
        }
        kept
    } else {
        let keys = &mut keys[..fitting];
        keys.sort_unstable();
        for (slot, &key) in out.iter_mut().zip(keys.iter()) {
            *slot = key as u32;
        }
        fitting
    }
}

/// Every job of the view's table in the order of a time-independent `heuristic` (ties by index).
fn table_order(heuristic: Heuristic, view: &View) -> Box<[u32]> {
    let jobs = view.jobs;
    let mut keys: Vec<u128> = (0..jobs.len() as u32)
        .map(|j| {
            let score =
                heuristic.score_with_logs(jobs.get(j), jobs.logs(j), 0.0, view.machine_nodes) + 0.0;
            (u128::from(monotone(score)) << 32) | u128::from(j)
        })
        .collect();
    keys.sort_unstable();
    keys.into_iter().map(|k| k as u32).collect()
}

/// The bits of `x` as an integer ordered like `f64::total_cmp`.
#[inline]
fn monotone(x: f64) -> u64 {
    let bits = x.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    }
}

/// [`order_fitting`] on a site (partitions, `sched::site`): the queue positions the site scan
/// can act on, in the order of `heuristic` on the first `window` jobs (the rest in FCFS
/// order): every job no wider than its component's free nodes, and in each component its
/// first wider job in the order of the scan (by tier, then the order): the component's top
/// job if the scan reaches it. A component's free nodes only shrink during a call, so a wider
/// job never starts, and EASY passes over all but the first. Sites have no announced
/// maintenance (calendars do not run on partitions). The order is `out[..n]`, `n` returned;
/// `keys` and `misfits` are scratch.
pub fn order_fitting_site(
    heuristic: Heuristic,
    window: usize,
    view: &View,
    component_free: &[u64],
    keys: &mut Vec<u128>,
    misfits: &mut Vec<(u32, u128)>,
    out: &mut Vec<u32>,
) -> usize {
    let Some(site) = view.site else {
        return 0;
    };
    let model = site.model;
    let queue = view.queue;
    let mut w = window.min(queue.len());
    if heuristic == Heuristic::Fcfs || w <= 1 {
        w = 0;
    }
    // per component (and one more for held jobs), the least (tier first, key) misfit so far
    misfits.clear();
    misfits.resize(component_free.len() + 1, (u32::MAX, u128::MAX));
    keys.clear();
    let ranks = (w > 0 && heuristic.is_static() && queue[..w].windows(2).all(|p| p[0] < p[1]))
        .then(|| {
            view.jobs
                .static_rank(heuristic as usize, || table_order(heuristic, view))
        });
    for (pos, &j) in queue[..w].iter().enumerate() {
        let (nodes, c) = model.job_key(j);
        let c = c as usize;
        if c >= component_free.len() {
            continue; // held: no partition may start it
        }
        let key = fitting_key(heuristic, ranks, view, pos, j);
        if u64::from(nodes) <= component_free[c] {
            keys.push(key);
        } else {
            let tier_key = (u32::MAX - model.tier(j), key);
            if tier_key < misfits[c] {
                misfits[c] = tier_key;
            }
        }
    }
    keys.extend(misfits.iter().filter(|m| m.1 != u128::MAX).map(|m| m.1));
    if out.len() < queue.len() {
        out.resize(queue.len(), 0);
    }
    let fitting = keys.len();
    let mut kept = sort_keys(keys, fitting, ranks.is_some(), view.jobs.len(), out);
    // the rest in queue order: its fitting jobs, and per component its first misfit if none
    // of a tier as high came before (the scan's order is by tier first)
    for (pos, &j) in queue.iter().enumerate().skip(w) {
        let (nodes, c) = model.job_key(j);
        let c = c as usize;
        if c >= component_free.len() {
            continue;
        }
        let keep = if u64::from(nodes) <= component_free[c] {
            true
        } else {
            let tier = u32::MAX - model.tier(j);
            // a misfit after the window: kept when no kept misfit of its component comes
            // before it in the scan's order (a higher or equal tier kept already does)
            let first = tier < misfits[c].0;
            if first {
                misfits[c] = (tier, u128::MAX);
            }
            first
        };
        if keep {
            out[kept] = pos as u32;
            kept += 1;
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use rand_core::{Rng, SeedableRng};
    use rand_pcg::Pcg64Mcg;

    use super::*;
    use crate::model::{Job, JobTable};

    #[test]
    fn walking_a_static_order_equals_sorting_the_window() {
        let mut rng = Pcg64Mcg::seed_from_u64(9);
        let mut draw = |n: u64| rng.next_u64() % n;
        let jobs: Vec<Job> = (0..300)
            .map(|i| Job {
                id: i,
                submit: (i * 10) as f64,
                run_time: 1.0,
                // few distinct values: many ties
                requested_time: (60 * (1 + draw(6))) as f64,
                nodes: 1 + draw(8) as u32,
            })
            .collect();
        let table = JobTable::new(jobs).unwrap();
        for trial in 0..40 {
            let mut queue: Vec<u32> = (0..300).filter(|_| draw(3) == 0).collect();
            queue.truncate(40 + trial);
            let view = View::anonymous(5000.0, &table, 16, 4, &queue, &[]);
            for h in Heuristic::ALL.into_iter().filter(|h| h.is_static()) {
                for window in [2usize, 7, 32, usize::MAX] {
                    let (mut scratch, mut walked, mut sorted) =
                        (Vec::new(), Vec::new(), Vec::new());
                    order_window(h, window, &view, &mut scratch, &mut walked);
                    sort_window(h, window.min(queue.len()), &view, &mut scratch, &mut sorted);
                    assert_eq!(walked, sorted, "{} w={window}", h.name());
                }
            }
        }
    }
}
