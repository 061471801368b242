//! Sampled futures for the look-ahead: run times from the run-time history, arrivals from the
//! recent past. Honest by construction: a draw reads only jobs completed before the decision
//! (the history) and jobs submitted before it (`view.jobs[..view.submitted]`).

use rand_core::Rng;

use crate::engine::{Scenario, View};
use crate::estimate::RuntimeHistory;
use crate::model::Job;

/// Where the look-ahead takes run times from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RuntimeModel {
    /// Every job runs for its requested time (the MARS paper's forward model).
    #[default]
    Requested,
    /// Ratios actual / requested drawn from the jobs completed so far.
    History,
    /// As `History` for the running jobs (their remaining time, given the time run so far);
    /// waiting jobs run for their request.
    Running,
}

impl RuntimeModel {
    /// The names `from_name` takes (the options' one list: the Python layer and the CLI's help
    /// are checked against it).
    pub const NAMES: [&'static str; 3] = ["requested", "history", "running"];

    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "requested" => Some(RuntimeModel::Requested),
            "history" => Some(RuntimeModel::History),
            "running" => Some(RuntimeModel::Running),
            _ => None,
        }
    }
}

/// Where the look-ahead takes future submissions from.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum ArrivalModel {
    /// No job arrives (the MARS paper's forward model).
    #[default]
    None,
    /// A block of `horizon` seconds of past submissions, its start drawn uniformly within the
    /// last `window` seconds, replayed from now on (a block bootstrap: sizes, requests and the
    /// burstiness of real arrivals kept together).
    Recent { window: f64, horizon: f64 },
}

impl ArrivalModel {
    /// The arrival models' names, in the order of the variants (`none`, `recent`).
    pub const NAMES: [&'static str; 2] = ["none", "recent"];
}

/// How a scenario is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ScenarioModel {
    pub runtime: RuntimeModel,
    pub arrivals: ArrivalModel,
    /// Jobs are killed at their request (`--overrun kill`): no draw exceeds it.
    pub overrun_kill: bool,
}

impl ScenarioModel {
    /// The forward model of the paper: nothing is drawn.
    pub fn is_deterministic(&self) -> bool {
        self.runtime == RuntimeModel::Requested && self.arrivals == ArrivalModel::None
    }

    /// One future of the decision point `view`.
    pub fn sample<R: Rng>(&self, view: &View, history: &RuntimeHistory, rng: &mut R) -> Scenario {
        let queued_run_time = view
            .queue
            .iter()
            .map(|&j| self.run_time(view, history, j, rng))
            .collect();
        let running_end = view
            .running
            .iter()
            .map(|r| {
                let fallback = view.estimated_end(r);
                if self.runtime == RuntimeModel::Requested {
                    return fallback;
                }
                let job = view.jobs.get(r.job);
                history
                    .sample_remaining(
                        job.requested_time,
                        job.nodes,
                        view.jobs.user(r.job),
                        view.now - r.start,
                        self.cap(job.requested_time),
                        rng,
                    )
                    .map_or(fallback, |left| view.now + left)
            })
            .collect();
        let mut arrivals = Vec::new();
        if let ArrivalModel::Recent { window, horizon } = self.arrivals {
            if let Some((first, last, start)) = recent_block(view, window, horizon, rng) {
                for (k, index) in (first..last).enumerate() {
                    let past = view.jobs.get(index);
                    arrivals.push(Job {
                        id: -(k as i64) - 1,
                        submit: view.now + (past.submit - start),
                        run_time: self.run_time(view, history, index, rng),
                        requested_time: past.requested_time,
                        nodes: past.nodes,
                    });
                }
            }
        }
        Scenario {
            queued_run_time,
            running_end,
            arrivals,
        }
    }

    /// A run time for job `index` (waiting, or a past job replayed as an arrival).
    fn run_time<R: Rng>(
        &self,
        view: &View,
        history: &RuntimeHistory,
        index: u32,
        rng: &mut R,
    ) -> f64 {
        let job = view.jobs.get(index);
        if self.runtime != RuntimeModel::History {
            return job.requested_time;
        }
        history
            .sample_run_time(
                job.requested_time,
                job.nodes,
                view.jobs.user(index),
                self.cap(job.requested_time),
                rng,
            )
            .unwrap_or(job.requested_time)
    }

    fn cap(&self, requested: f64) -> f64 {
        if self.overrun_kill {
            requested
        } else {
            f64::MAX
        }
    }
}

/// The past submissions to replay: job indices `first..last`, submitted from `start` on. The
/// block's start is uniform over the last `window` seconds that leave a whole `horizon`
/// before now; with less history than `horizon`, the whole past is the block.
fn recent_block<R: Rng>(
    view: &View,
    window: f64,
    horizon: f64,
    rng: &mut R,
) -> Option<(u32, u32, f64)> {
    let jobs = view.jobs;
    let known = view.submitted;
    if known == 0 || horizon <= 0.0 {
        return None;
    }
    let earliest = jobs.get(0).submit.max(view.now - window);
    let latest = view.now - horizon;
    let start = if latest > earliest {
        let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        earliest + u * (latest - earliest)
    } else {
        earliest
    };
    let end = (start + horizon).min(view.now);
    // Submissions are in submit order: two binary searches over the known jobs.
    let at = |t: f64| partition(known, |i| jobs.get(i).submit < t);
    let first = at(start);
    let last = partition(known, |i| jobs.get(i).submit <= end).max(first);
    (last > first).then_some((first, last, start))
}

/// The first index in `0..n` where `before` turns false (it is true, then false).
fn partition(n: u32, before: impl Fn(u32) -> bool) -> u32 {
    let (mut lo, mut hi) = (0u32, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if before(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

#[cfg(test)]
mod tests {
    use rand_core::SeedableRng;
    use rand_pcg::Pcg64Mcg;

    use super::*;
    use crate::engine::Running;
    use crate::estimate::Completed;
    use crate::model::JobTable;

    /// A history where every job ran a tenth of its request, a job running since 0 and two
    /// waiting jobs, at time 100: what each run-time model draws.
    fn draw(runtime: RuntimeModel) -> Scenario {
        let job = |id, requested_time| Job {
            id,
            submit: 0.0,
            run_time: 50.0,
            requested_time,
            nodes: 1,
        };
        let jobs = JobTable::new(vec![job(0, 1000.0), job(1, 1000.0), job(2, 400.0)]).unwrap();
        let mut history = RuntimeHistory::new();
        for _ in 0..64 {
            history.observe(Completed {
                requested: 1000.0,
                nodes: 1,
                user: -1,
                run_time: 100.0 + 1.0,
            });
        }
        let running = [Running {
            requested_end: 1000.0,
            job: 0,
            nodes: 1,
            start: 0.0,
        }];
        let view = View::anonymous(100.0, &jobs, 4, 3, &[1, 2], &running);
        let model = ScenarioModel {
            runtime,
            ..ScenarioModel::default()
        };
        model.sample(&view, &history, &mut Pcg64Mcg::seed_from_u64(3))
    }

    #[test]
    fn every_runtime_model_name_parses_to_its_own_model() {
        let models: Vec<RuntimeModel> = RuntimeModel::NAMES
            .iter()
            .map(|n| RuntimeModel::from_name(n).expect("a listed name parses"))
            .collect();
        assert_eq!(
            models,
            [
                RuntimeModel::Requested,
                RuntimeModel::History,
                RuntimeModel::Running
            ]
        );
        assert_eq!(RuntimeModel::from_name("sampled"), None);
    }

    #[test]
    fn the_running_model_draws_only_the_ends_of_running_jobs() {
        let requested = draw(RuntimeModel::Requested);
        assert_eq!(requested.queued_run_time, vec![1000.0, 400.0]);
        assert_eq!(requested.running_end, vec![1000.0]);
        // every ratio is 0.101: the running job (run 100 s of its 1000) ends just after now
        let history = draw(RuntimeModel::History);
        assert!(history.queued_run_time.iter().all(|&t| t < 150.0));
        assert!(history.running_end[0] > 100.0 && history.running_end[0] < 102.0);
        let running = draw(RuntimeModel::Running);
        assert_eq!(running.queued_run_time, requested.queued_run_time);
        assert_eq!(running.running_end, history.running_end);
    }
}
