//! What completed jobs tell about run times, learned online and honestly: only from jobs that
//! have completed, in the order they completed.
//!
//! Two uses:
//! - **Sampling** (the stochastic look-ahead of MARS): the ratio actual / requested run time of
//!   a job is drawn from the most recent ratios of the most specific group of similar jobs with
//!   enough history: the same user, else the same requested-time and size class, else the same
//!   requested-time class, else every job. Before `min_history` completions, nothing is drawn
//!   (the caller keeps requested times). A running job's draw is conditioned on the time it has
//!   already run (only ratios that outlast it).
//! - **Point prediction** (EASY with system-generated estimates, Tsafrir, Etsion and Feitelson
//!   2007): the mean run time of the user's last two completed jobs, never above the request;
//!   the request itself until the user has two.

use std::collections::{HashMap, VecDeque};

use rand_core::Rng;

/// What a completed job tells: its request, size, user and actual run time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Completed {
    pub requested: f64,
    pub nodes: u32,
    /// The trace's user id (`-1` unknown: such jobs form no user group).
    pub user: i64,
    pub run_time: f64,
}

/// Most recent ratios kept per group: the model follows drift in a trace.
pub const KEEP: usize = 64;
/// Ratios a group needs before it is used.
pub const MIN_GROUP: usize = 8;
/// Completions before any ratio is drawn.
pub const MIN_HISTORY: usize = 32;

/// A request shorter than a minute counts as a minute (classes of requested time).
const MIN_REQUEST: f64 = 60.0;

#[derive(Debug, Clone, Default)]
struct Recent(VecDeque<f64>);

impl Recent {
    fn push(&mut self, ratio: f64) {
        if self.0.len() == KEEP {
            self.0.pop_front();
        }
        self.0.push_back(ratio);
    }

    fn len(&self) -> usize {
        self.0.len()
    }
}

/// Requested-time class: powers of two of minutes.
fn request_class(requested: f64) -> u8 {
    (requested.max(MIN_REQUEST) / MIN_REQUEST)
        .log2()
        .floor()
        .clamp(0.0, 40.0) as u8
}

/// Size class: powers of two of nodes.
fn size_class(nodes: u32) -> u8 {
    (31 - nodes.max(1).leading_zeros()) as u8
}

/// The run-time history of one run, fed with completions as they happen.
#[derive(Debug, Clone, Default)]
pub struct RuntimeHistory {
    completions: usize,
    all: Recent,
    by_request: HashMap<u8, Recent>,
    by_class: HashMap<(u8, u8), Recent>,
    by_user: HashMap<i64, Recent>,
    /// Run times of each user's last two completed jobs, most recent first.
    last_two: HashMap<i64, (f64, Option<f64>)>,
}

impl RuntimeHistory {
    pub fn new() -> Self {
        RuntimeHistory::default()
    }

    /// Completions observed so far.
    pub fn len(&self) -> usize {
        self.completions
    }

    pub fn is_empty(&self) -> bool {
        self.completions == 0
    }

    /// Records a completed job. Jobs with an unknown or zero request tell nothing about ratios
    /// (their estimate was their run time) but still count for the user's last two.
    pub fn observe(&mut self, job: Completed) {
        self.completions += 1;
        if job.user >= 0 {
            match self.last_two.get_mut(&job.user) {
                Some(entry) => *entry = (job.run_time, Some(entry.0)),
                None => {
                    self.last_two.insert(job.user, (job.run_time, None));
                }
            }
        }
        if !(job.requested > 0.0 && job.run_time.is_finite()) {
            return;
        }
        let ratio = job.run_time.max(0.0) / job.requested;
        let class = request_class(job.requested);
        self.all.push(ratio);
        self.by_request.entry(class).or_default().push(ratio);
        self.by_class
            .entry((class, size_class(job.nodes)))
            .or_default()
            .push(ratio);
        if job.user >= 0 {
            self.by_user.entry(job.user).or_default().push(ratio);
        }
    }

    /// The most specific group with enough ratios for a job like this one, from the user's
    /// own down to every job; `None` before enough history.
    fn groups(&self, requested: f64, nodes: u32, user: i64) -> [Option<&Recent>; 4] {
        if self.all.len() < MIN_HISTORY {
            return [None; 4];
        }
        fn enough(r: Option<&Recent>) -> Option<&Recent> {
            r.filter(|r| r.len() >= MIN_GROUP)
        }
        let class = request_class(requested);
        [
            enough(if user >= 0 {
                self.by_user.get(&user)
            } else {
                None
            }),
            enough(self.by_class.get(&(class, size_class(nodes)))),
            enough(self.by_request.get(&class)),
            Some(&self.all),
        ]
    }

    /// A run time drawn for a job that has not started, or `None` before enough history.
    /// `cap` bounds it (the request under `--overrun kill`).
    pub fn sample_run_time(
        &self,
        requested: f64,
        nodes: u32,
        user: i64,
        cap: f64,
        rng: &mut impl Rng,
    ) -> Option<f64> {
        let group = self
            .groups(requested, nodes, user)
            .into_iter()
            .flatten()
            .next()?;
        let ratio = group.0[below(rng, group.len())];
        Some((ratio * requested).min(cap))
    }

    /// The remaining run time drawn for a job that has run `elapsed` seconds: only ratios that
    /// outlast it, from the most specific group that has one. `None` before enough history or
    /// when no completed job ever ran that long relative to its request.
    pub fn sample_remaining(
        &self,
        requested: f64,
        nodes: u32,
        user: i64,
        elapsed: f64,
        cap: f64,
        rng: &mut impl Rng,
    ) -> Option<f64> {
        if elapsed >= cap {
            return None;
        }
        let floor = elapsed / requested;
        for group in self.groups(requested, nodes, user).into_iter().flatten() {
            // A few draws usually land; else count the candidates and draw among them.
            for _ in 0..8 {
                let ratio = group.0[below(rng, group.len())];
                if ratio > floor {
                    return Some((ratio * requested).min(cap) - elapsed);
                }
            }
            let outlasting = group.0.iter().filter(|&&r| r > floor).count();
            if outlasting > 0 {
                let pick = below(rng, outlasting);
                let ratio = group.0.iter().filter(|&&r| r > floor).nth(pick)?;
                return Some((ratio * requested).min(cap) - elapsed);
            }
        }
        None
    }

    /// Tsafrir's prediction: the mean of the user's last two run times, at most the request;
    /// the request until the user has completed two jobs (or when the user is unknown).
    pub fn predict(&self, requested: f64, user: i64) -> f64 {
        match self.last_two.get(&user) {
            Some(&(last, Some(before))) if user >= 0 => (0.5 * (last + before)).min(requested),
            _ => requested,
        }
    }
}

/// Uniform in `0..n` (n > 0) from one 64-bit draw.
#[inline]
pub fn below(rng: &mut impl Rng, n: usize) -> usize {
    ((u128::from(rng.next_u64()) * n as u128) >> 64) as usize
}

#[cfg(test)]
mod tests {
    use rand_core::SeedableRng;
    use rand_pcg::Pcg64Mcg;

    use super::*;

    fn job(requested: f64, nodes: u32, user: i64, run_time: f64) -> Completed {
        Completed {
            requested,
            nodes,
            user,
            run_time,
        }
    }

    #[test]
    fn nothing_is_drawn_before_enough_history() {
        let mut h = RuntimeHistory::new();
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        for _ in 0..MIN_HISTORY - 1 {
            h.observe(job(3600.0, 4, 1, 1800.0));
        }
        assert_eq!(h.sample_run_time(3600.0, 4, 1, f64::MAX, &mut rng), None);
        h.observe(job(3600.0, 4, 1, 1800.0));
        assert_eq!(
            h.sample_run_time(7200.0, 4, 1, f64::MAX, &mut rng),
            Some(3600.0)
        );
    }

    #[test]
    fn the_users_own_ratios_come_first_then_the_class() {
        let mut h = RuntimeHistory::new();
        let mut rng = Pcg64Mcg::seed_from_u64(2);
        for _ in 0..MIN_HISTORY {
            h.observe(job(3600.0, 4, 1, 900.0)); // user 1: a quarter of the request
            h.observe(job(3600.0, 4, 2, 3600.0)); // user 2: all of it
        }
        for _ in 0..20 {
            assert_eq!(
                h.sample_run_time(3600.0, 4, 1, f64::MAX, &mut rng),
                Some(900.0)
            );
            assert_eq!(
                h.sample_run_time(3600.0, 4, 2, f64::MAX, &mut rng),
                Some(3600.0)
            );
        }
        // an unknown user: the class (both users' ratios), each drawn sometimes
        let draws: Vec<f64> = (0..200)
            .filter_map(|_| h.sample_run_time(3600.0, 4, 9, f64::MAX, &mut rng))
            .collect();
        assert!(draws.contains(&900.0) && draws.contains(&3600.0));
        // the cap (overrun kill) bounds a draw
        h.observe(job(3600.0, 4, 3, 7200.0));
        for _ in 0..MIN_GROUP {
            h.observe(job(3600.0, 4, 3, 7200.0));
        }
        assert_eq!(
            h.sample_run_time(3600.0, 4, 3, 3600.0, &mut rng),
            Some(3600.0)
        );
    }

    #[test]
    fn a_running_job_only_draws_ratios_that_outlast_it() {
        let mut h = RuntimeHistory::new();
        let mut rng = Pcg64Mcg::seed_from_u64(3);
        for i in 0..MIN_HISTORY {
            // ratios 0.1, 0.2, ..., 0.8 repeated
            h.observe(job(1000.0, 1, -1, 100.0 * (1 + i % 8) as f64));
        }
        for _ in 0..100 {
            let left = h
                .sample_remaining(1000.0, 1, -1, 650.0, f64::MAX, &mut rng)
                .unwrap();
            assert!(left == 50.0 || left == 150.0, "{left}");
        }
        assert_eq!(
            h.sample_remaining(1000.0, 1, -1, 800.0, f64::MAX, &mut rng),
            None
        );
    }

    #[test]
    fn tsafrir_predicts_from_the_users_last_two_jobs() {
        let mut h = RuntimeHistory::new();
        assert_eq!(h.predict(3600.0, 7), 3600.0);
        h.observe(job(3600.0, 1, 7, 100.0));
        assert_eq!(h.predict(3600.0, 7), 3600.0); // one job is not enough
        h.observe(job(3600.0, 1, 7, 300.0));
        assert_eq!(h.predict(3600.0, 7), 200.0);
        h.observe(job(3600.0, 1, 7, 5000.0));
        assert_eq!(h.predict(3600.0, 7), 2650.0);
        assert_eq!(h.predict(1000.0, 7), 1000.0); // never above the request
        assert_eq!(h.predict(1000.0, -1), 1000.0);
    }
}
