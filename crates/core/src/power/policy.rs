//! Power-managing policies: `fcfs-b+ipm` (PSAS+IPM), `snf+ipm` and SNF-ICON (Algorithm 1)
//! with its variants `-ng` (no arrival-recency gate), `-nf` (no Markovianity fallback), `-ngnf`.

use std::collections::VecDeque;

use crate::engine::power::{Node, NodeState, NO_JOB};
use crate::engine::View;
use crate::model::PowerModel;
use crate::power::plan::{plan, releases, Plan, PlanJob};
use crate::power::predict::RuntimePredictor;
use crate::power::screen::{screen, ScreenConfig, SeriesStats};
use crate::power::spare::{capped_horizon, optimise, SpareInput};
use crate::sched::{Decision, Policy, Start, StartKind};

/// Which queue order the immediate starts and the plan follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueOrder {
    /// Smallest need first: (nodes, requested time, id).
    Snf,
    /// FCFS with backfilling around the head job's planned reservation (PSAS).
    FcfsBackfill,
}

/// SNF-ICON parameters (SNF-ICON Table I).
#[derive(Debug, Clone, PartialEq)]
pub struct IconConfig {
    pub alpha: f64,
    pub beta: f64,
    pub initial_arrival_rate: f64,
    pub arrival_smoothing: f64,
    pub service_smoothing: f64,
    pub resource_smoothing: f64,
    pub sigma_floor: f64,
    pub min_spares: u32,
    /// `None`: the platform size.
    pub max_spares: Option<u32>,
    pub max_horizon: f64,
    pub recency_window: f64,
    /// Fall back to SNF+IPM when the screen rejects (off in the -nf variants).
    pub fallback: bool,
    /// The arrival-recency gate (off in the -ng variants).
    pub gate: bool,
    pub screen_window: f64,
    pub screen: ScreenConfig,
    pub require_service_samples: bool,
    pub stale_completion_shutdown: bool,
}

impl Default for IconConfig {
    fn default() -> Self {
        IconConfig {
            alpha: 5000.0,
            beta: 1.0,
            initial_arrival_rate: 1.0 / 3600.0,
            arrival_smoothing: 0.2,
            service_smoothing: 0.1,
            resource_smoothing: 0.1,
            sigma_floor: 0.25,
            min_spares: 1,
            max_spares: None,
            max_horizon: 24.0 * 3600.0,
            recency_window: 12.0 * 3600.0,
            fallback: true,
            gate: true,
            screen_window: 2.0 * 3600.0,
            screen: ScreenConfig::default(),
            require_service_samples: true,
            stale_completion_shutdown: true,
        }
    }
}

/// Mode of an invocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// IPM baselines (no ICON).
    Ipm,
    /// SNF-ICON with a rejected or data-sparse screen: SNF+IPM for this call.
    Fallback,
    Icon,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Ipm => "ipm",
            Mode::Fallback => "fallback",
            Mode::Icon => "icon",
        }
    }
}

/// One row of the power decision log.
#[derive(Debug, Clone, PartialEq)]
pub struct PowerRecord {
    pub time: f64,
    pub mode: Mode,
    /// Why the screen rejected ("" when accepted or not evaluated).
    pub rejection: String,
    pub arrivals: Option<SeriesStats>,
    pub service: Option<SeriesStats>,
    pub arrival_rate: f64,
    pub service_rate: f64,
    /// Median actual/requested runtime ratio (exp(m_Y)), NaN before any completion.
    pub runtime_ratio: f64,
    pub spare_planning: bool,
    pub gate_open: bool,
    /// Candidates (target, W, E, J) when spare planning ran.
    pub candidates: Vec<(u32, f64, f64, f64)>,
    pub target: Option<u32>,
    pub started: u32,
    pub wakes: u32,
    pub shutdowns: u32,
    pub queue_length: u32,
    /// Wall-clock time of the call (s).
    pub seconds: f64,
}

pub struct PowerPolicy {
    order: QueueOrder,
    idle_timeout: f64,
    icon: Option<IconConfig>,
    /// Idle-timeout deadline of each node (NaN while it is not idle).
    deadlines: Vec<f64>,
    /// Job each node ran at the previous call (to see which nodes a completion released).
    previous_jobs: Vec<u32>,
    first_call: bool,
    // Statistics of SNF-ICON.
    last_arrival: Option<f64>,
    arrival_gaps: VecDeque<(f64, f64)>,
    service_times: VecDeque<(f64, f64)>,
    mean_gap: f64,
    mean_service: Option<f64>,
    mean_requested: Option<f64>,
    size_weights: Vec<f64>,
    predictor: RuntimePredictor,
    scratch: Vec<f64>,
    series: Vec<f64>,
    /// Expected release of each running job (reset after each call; sized to the job table).
    release_of: Vec<f64>,
    records: Vec<PowerRecord>,
}

impl PowerPolicy {
    pub fn new(order: QueueOrder, idle_timeout: f64, icon: Option<IconConfig>) -> Self {
        let (mean_gap, predictor) = match &icon {
            Some(c) => (
                1.0 / c.initial_arrival_rate,
                RuntimePredictor::new(c.service_smoothing, c.sigma_floor),
            ),
            None => (3600.0, RuntimePredictor::new(0.1, 0.25)),
        };
        PowerPolicy {
            order,
            idle_timeout,
            icon,
            deadlines: Vec::new(),
            previous_jobs: Vec::new(),
            first_call: true,
            last_arrival: None,
            arrival_gaps: VecDeque::new(),
            service_times: VecDeque::new(),
            mean_gap,
            mean_service: None,
            mean_requested: None,
            size_weights: Vec::new(),
            predictor,
            scratch: Vec::new(),
            series: Vec::new(),
            release_of: Vec::new(),
            records: Vec::new(),
        }
    }

    /// Consumes the arrivals and completions of this instant (Algorithm 1, line 1).
    fn observe(&mut self, view: &View, config: &IconConfig) {
        let n = view.machine_nodes as usize;
        if self.size_weights.len() != n + 1 {
            self.size_weights = vec![0.0; n + 1];
        }
        for &job in view.arrived {
            let j = view.jobs.get(job);
            if let Some(last) = self.last_arrival {
                let gap = (view.now - last).max(0.0);
                self.arrival_gaps.push_back((view.now, gap));
                self.mean_gap = config.arrival_smoothing * gap
                    + (1.0 - config.arrival_smoothing) * self.mean_gap;
            }
            self.last_arrival = Some(view.now);
            let size = (j.nodes as usize).min(n);
            if self.size_weights.iter().all(|&w| w == 0.0) {
                self.size_weights[size] = 1.0;
            } else {
                let r = config.resource_smoothing;
                for w in &mut self.size_weights {
                    *w *= 1.0 - r;
                }
                self.size_weights[size] += r;
                let total: f64 = self.size_weights.iter().sum();
                for w in &mut self.size_weights {
                    if *w < 1e-12 {
                        *w = 0.0;
                    } else {
                        *w /= total;
                    }
                }
                if self.size_weights.iter().all(|&w| w == 0.0) {
                    self.size_weights[1.min(n)] = 1.0;
                }
            }
            let req = j.requested_time;
            if req > 0.0 {
                let s = config.service_smoothing;
                self.mean_requested =
                    Some(self.mean_requested.map_or(req, |m| s * req + (1.0 - s) * m));
            }
        }
        for &(job, start, end) in view.completed {
            let run = end - start;
            let requested = view.jobs.get(job).requested_time;
            self.predictor.observe(run, requested);
            if run > 0.0 {
                self.service_times.push_back((end, run));
                let s = config.service_smoothing;
                self.mean_service =
                    Some(self.mean_service.map_or(run, |m| s * run + (1.0 - s) * m));
            }
        }
        let horizon = view.now - config.screen_window;
        for series in [&mut self.arrival_gaps, &mut self.service_times] {
            while series.front().is_some_and(|&(t, _)| t < horizon) {
                series.pop_front();
            }
            while series.len() > config.screen.max_samples {
                series.pop_front();
            }
        }
    }

    /// The screen (Definition 4): both series must pass.
    fn screen(&mut self, config: &IconConfig) -> (bool, String, SeriesStats, SeriesStats) {
        self.series.clear();
        self.series
            .extend(self.arrival_gaps.iter().map(|&(_, g)| g));
        let arrivals = screen(&self.series, &config.screen, &mut self.scratch);
        self.series.clear();
        self.series
            .extend(self.service_times.iter().map(|&(_, d)| d));
        let service = screen(&self.series, &config.screen, &mut self.scratch);
        let mut reasons = Vec::new();
        for (name, s) in [("arrivals", &arrivals), ("service", &service)] {
            if name == "service" && !config.require_service_samples {
                continue;
            }
            if s.n < config.screen.min_samples {
                reasons.push(format!("{name}: {} samples", s.n));
            } else if !s.accepted {
                if (s.cv - 1.0).abs() > config.screen.cv_tolerance {
                    reasons.push(format!("{name}: cv {:.2}", s.cv));
                }
                if s.autocorrelation.abs() > config.screen.max_autocorrelation {
                    reasons.push(format!("{name}: lag-1 r {:.2}", s.autocorrelation));
                }
                if s.ks_distance > s.ks_threshold {
                    reasons.push(format!(
                        "{name}: ks {:.3} > {:.3}",
                        s.ks_distance, s.ks_threshold
                    ));
                }
            }
        }
        (reasons.is_empty(), reasons.join("; "), arrivals, service)
    }

    fn service_rate(&self) -> f64 {
        match (self.mean_service, self.mean_requested) {
            (Some(m), _) => 1.0 / m.max(1e-9),
            (None, Some(r)) => 1.0 / r.max(1e-9),
            (None, None) => 0.0,
        }
    }
}

/// The queue in the order the policy serves it, as (queue position, job).
fn ordered_queue(view: &View, order: QueueOrder) -> Vec<(u32, u32)> {
    let mut queue: Vec<(u32, u32)> = view
        .queue
        .iter()
        .enumerate()
        .map(|(p, &j)| (p as u32, j))
        .collect();
    if order == QueueOrder::Snf {
        queue.sort_by(|a, b| {
            let (x, y) = (view.jobs.get(a.1), view.jobs.get(b.1));
            x.nodes
                .cmp(&y.nodes)
                .then(x.requested_time.total_cmp(&y.requested_time))
                .then(x.id.cmp(&y.id))
                .then(a.0.cmp(&b.0))
        });
    }
    queue
}

impl Policy for PowerPolicy {
    fn power_records(&self) -> &[PowerRecord] {
        &self.records
    }

    fn name(&self) -> String {
        let order = match self.order {
            QueueOrder::Snf => "snf",
            QueueOrder::FcfsBackfill => "fcfs-b",
        };
        match &self.icon {
            None => format!("{order}+ipm(timeout={})", self.idle_timeout),
            Some(c) => format!("snf-icon(gate={}, fallback={})", c.gate, c.fallback),
        }
    }

    fn decide(&mut self, view: &View, decision: &mut Decision) {
        let Some(&model) = view.power else { return };
        let nodes = view.nodes;
        let n = nodes.len();
        if self.deadlines.len() != n {
            self.deadlines = vec![f64::NAN; n];
            self.previous_jobs = vec![NO_JOB; n];
        }
        let epoch = self.first_call || !view.arrived.is_empty() || !view.completed.is_empty();
        self.first_call = false;

        // Mode (Algorithm 1, lines 1-6).
        let mut record = PowerRecord {
            time: view.now,
            mode: Mode::Ipm,
            rejection: String::new(),
            arrivals: None,
            service: None,
            arrival_rate: f64::NAN,
            service_rate: f64::NAN,
            runtime_ratio: f64::NAN,
            spare_planning: false,
            gate_open: false,
            candidates: Vec::new(),
            target: None,
            started: 0,
            wakes: 0,
            shutdowns: 0,
            queue_length: view.queue.len() as u32,
            seconds: 0.0,
        };
        let started_at = std::time::Instant::now();
        let icon = self.icon.clone();
        if let Some(config) = &icon {
            self.observe(view, config);
            let (accepted, why, arrivals, service) = self.screen(config);
            record.mode = if accepted || !config.fallback {
                Mode::Icon
            } else {
                Mode::Fallback
            };
            record.rejection = why;
            record.arrivals = Some(arrivals);
            record.service = Some(service);
            record.arrival_rate = 1.0 / self.mean_gap.max(1e-9);
            record.service_rate = self.service_rate();
            record.runtime_ratio = self
                .predictor
                .log_moments()
                .map_or(f64::NAN, |(m, _)| m.exp());
        }
        let icon_mode = record.mode == Mode::Icon;

        // Idle-timeout deadlines: set when a call first sees a node idle.
        for (i, node) in nodes.iter().enumerate() {
            if node.state == NodeState::Idle {
                if self.deadlines[i].is_nan() {
                    self.deadlines[i] = view.now + self.idle_timeout;
                }
            } else {
                self.deadlines[i] = f64::NAN;
            }
        }

        // Expected release of running jobs: requested ends (IPM), predictions (ICON).
        let mut release_of = std::mem::take(&mut self.release_of);
        if release_of.len() != view.jobs.len() {
            release_of = vec![f64::INFINITY; view.jobs.len()];
        }
        let mut predicted_remaining: Vec<f64> = Vec::new();
        for r in view.running {
            let t = if icon_mode {
                let job = view.jobs.get(r.job);
                let remaining = self
                    .predictor
                    .remaining(job.requested_time, view.now - r.start);
                predicted_remaining.push(remaining);
                view.now + remaining
            } else if r.requested_end >= view.now {
                r.requested_end
            } else {
                f64::INFINITY // overrunning: no known release
            };
            release_of[r.job as usize] = t;
        }

        // Immediate starts (Algorithm 1, line 8).
        let order = if icon.is_some() {
            QueueOrder::Snf
        } else {
            self.order
        };
        let queue = ordered_queue(view, order);
        let mut idle = view.free;
        let mut started = vec![false; queue.len()];
        let mut first_blocked = None;
        for (k, &(pos, job)) in queue.iter().enumerate() {
            let size = view.jobs.get(job).nodes;
            if size <= idle {
                idle -= size;
                started[k] = true;
                decision.starts.push(Start {
                    pos,
                    job,
                    kind: StartKind::Primary,
                });
            } else {
                first_blocked = Some(k);
                break;
            }
        }
        let duration = |job: u32| {
            let req = view.jobs.get(job).requested_time;
            if icon_mode {
                self.predictor.queued(req)
            } else {
                req
            }
        };
        let mut agenda = releases(view.now, nodes, &model, |job| release_of[job as usize]);
        // Nodes taken by this call's starts run them from now on.
        let taken = occupy(nodes, &decision.starts, view, &duration, &mut agenda);
        let mut used = taken.clone();
        let mut plan_out = Plan::default();
        if let Some(head) = first_blocked {
            if order == QueueOrder::FcfsBackfill {
                let head_job = queue[head].1;
                let job = PlanJob {
                    job: head_job,
                    nodes: view.jobs.get(head_job).nodes,
                    duration: duration(head_job),
                };
                let mut head_agenda = agenda.clone();
                let head_plan = plan(
                    view.now,
                    &[job],
                    nodes,
                    &mut head_agenda,
                    &self.deadlines,
                    &model,
                    true,
                );
                backfill_around_head(
                    view,
                    &queue,
                    head,
                    head_plan.head,
                    &taken,
                    idle,
                    &mut started,
                    decision,
                );
            }
            let rest: Vec<PlanJob> = queue
                .iter()
                .enumerate()
                .filter(|(k, _)| !started[*k])
                .map(|(_, &(_, job))| PlanJob {
                    job,
                    nodes: view.jobs.get(job).nodes,
                    duration: duration(job),
                })
                .collect();
            used = occupy(nodes, &decision.starts, view, &duration, &mut agenda);
            // SNF plans in order (the barrier rule); FCFS/B plans the head job first and lets
            // the others use what its reservation leaves, as backfilling does.
            let barrier_rule = order == QueueOrder::Snf;
            plan_out = plan(
                view.now,
                &rest,
                nodes,
                &mut agenda,
                &self.deadlines,
                &model,
                barrier_rule,
            );
        }
        record.started = decision.starts.len() as u32;
        for &i in &used {
            self.deadlines[i] = f64::NAN; // computing from now on
        }
        let queue_empty = started.iter().all(|&s| s);

        // Wakes for planned jobs (Definition 6, Eq. 16).
        let mut wake: Vec<u32> = plan_out.wake_now.clone();
        if let Some(t) = plan_out.next_wake {
            decision.timers.push(t);
        }
        let mut off: Vec<u32> = Vec::new();

        // Power for future jobs (Algorithm 1, lines 10-19) or the IPM timeout.
        let expired: Vec<bool> = (0..n)
            .map(|i| {
                nodes[i].state == NodeState::Idle
                    && !used.contains(&i)
                    && self.deadlines[i] <= view.now
            })
            .collect();
        let soon = view.now + model.switch_off_s + model.switch_on_s;
        let keep_for_plan = |i: usize| plan_out.needed_at.get(i).is_some_and(|&t| t < soon);
        let apply_timeout = |off: &mut Vec<u32>| {
            let due = expired
                .iter()
                .enumerate()
                .filter(|&(i, &e)| e && !keep_for_plan(i));
            off.extend(due.map(|(i, _)| i as u32));
        };
        match (&icon, icon_mode) {
            (Some(config), true) => {
                let gate_open = !config.gate
                    || self
                        .last_arrival
                        .is_some_and(|t| view.now - t <= config.recency_window);
                record.gate_open = gate_open;
                if queue_empty && epoch {
                    if gate_open {
                        record.spare_planning = true;
                        let choice = self.spares(
                            view,
                            &model,
                            config,
                            &expired,
                            &used,
                            &predicted_remaining,
                        );
                        record.candidates = choice
                            .candidates
                            .iter()
                            .map(|c| (c.target, c.waiting, c.energy, c.cost))
                            .collect();
                        record.target = Some(choice.chosen.target);
                        wake.extend(choice.wake);
                        off.extend(choice.switch_off);
                    } else if config.stale_completion_shutdown && !view.completed.is_empty() {
                        // Stale-completion shutdown: nodes this completion released, unused.
                        for (i, (node, &previous)) in
                            nodes.iter().zip(&self.previous_jobs).enumerate()
                        {
                            let released = previous != NO_JOB
                                && view.completed.iter().any(|c| c.0 == previous);
                            if released && node.state == NodeState::Idle && !used.contains(&i) {
                                off.push(i as u32);
                            }
                        }
                    }
                }
                if queue_empty {
                    apply_timeout(&mut off);
                }
            }
            _ => apply_timeout(&mut off),
        }
        off.sort_unstable();
        off.dedup();
        wake.sort_unstable();
        wake.dedup();
        // Never switch off a node this call uses, nor wake one it switches off.
        off.retain(|i| !used.contains(&(*i as usize)));
        wake.retain(|i| !off.contains(i));
        record.wakes = wake.len() as u32;
        record.shutdowns = off.len() as u32;
        for &i in &off {
            self.deadlines[i as usize] = f64::NAN;
        }
        decision.power_on = wake;
        decision.power_off = off;
        // Be called back at the next idle timeout of a node that stays idle.
        let next_timeout = (0..n)
            .filter(|&i| {
                nodes[i].state == NodeState::Idle
                    && !used.contains(&i)
                    && !decision.power_off.contains(&(i as u32))
            })
            .map(|i| self.deadlines[i])
            .filter(|&t| t > view.now)
            .fold(f64::INFINITY, f64::min);
        if next_timeout.is_finite() {
            decision.timers.push(next_timeout);
        }
        for (i, node) in nodes.iter().enumerate() {
            self.previous_jobs[i] = node.job;
        }
        for r in view.running {
            release_of[r.job as usize] = f64::INFINITY;
        }
        self.release_of = release_of;
        record.seconds = started_at.elapsed().as_secs_f64();
        self.records.push(record);
    }
}

impl PowerPolicy {
    /// Spare-target optimisation at a spare-planning point (Eqs. 20-39).
    fn spares(
        &self,
        view: &View,
        model: &PowerModel,
        config: &IconConfig,
        expired: &[bool],
        used: &[usize],
        predicted_remaining: &[f64],
    ) -> crate::power::spare::SpareChoice {
        let n = view.nodes.len();
        let arrival_rate = 1.0 / self.mean_gap.max(1e-9);
        let nearest = predicted_remaining
            .iter()
            .copied()
            .filter(|&r| r > 0.0 && r.is_finite())
            .fold(f64::INFINITY, f64::min);
        let completion_rate = if nearest.is_finite() {
            1.0 / nearest
        } else {
            view.running.len() as f64 * self.service_rate()
        };
        let event_rate = arrival_rate + completion_rate;
        let arrival_probability = if event_rate > 0.0 {
            arrival_rate / event_rate
        } else {
            0.0
        };
        let to_timeout = (0..n)
            .filter(|&i| {
                view.nodes[i].state == NodeState::Idle && !expired[i] && !used.contains(&i)
            })
            .map(|i| self.deadlines[i] - view.now)
            .filter(|&d| d >= 0.0)
            .fold(config.max_horizon, f64::min);
        let horizon = capped_horizon(event_rate, config.max_horizon.min(to_timeout));
        let total: f64 = self.size_weights.iter().sum();
        let mut pmf: Vec<f64> = if total > 0.0 {
            self.size_weights[1..].iter().map(|w| w / total).collect()
        } else {
            let mut p = vec![0.0; n];
            if n > 0 {
                p[0] = 1.0;
            }
            p
        };
        pmf.resize(n, 0.0);
        // Nodes this call starts jobs on are computing from now on.
        let nodes: Vec<Node> = view
            .nodes
            .iter()
            .enumerate()
            .map(|(i, node)| {
                if used.contains(&i) {
                    Node {
                        state: NodeState::Computing,
                        ..*node
                    }
                } else {
                    *node
                }
            })
            .collect();
        let input = SpareInput {
            now: view.now,
            nodes: &nodes,
            model: *model,
            expired,
            pmf: &pmf,
            event_rate,
            arrival_probability,
            horizon,
            alpha: config.alpha,
            beta: config.beta,
            min_spares: config.min_spares,
            max_spares: config.max_spares.unwrap_or(n as u32),
        };
        optimise(&input)
    }
}

/// PSAS backfilling (FCFS/B+IPM): the blocked head job (queue index `head`) reserves its
/// planned nodes; later jobs start on the idle nodes it does not reserve, or on reserved ones if
/// they end (by request) before its planned start. Without a plan for the head job (a node it
/// needs has no known release) nothing is reserved: every idle node may be backfilled.
#[allow(clippy::too_many_arguments)]
fn backfill_around_head(
    view: &View,
    queue: &[(u32, u32)],
    head: usize,
    head_plan: Option<(f64, Vec<u32>)>,
    taken: &[usize],
    mut idle: u32,
    started: &mut [bool],
    decision: &mut Decision,
) {
    let (shadow, reserved) = head_plan.unwrap_or((f64::INFINITY, Vec::new()));
    let reserved_idle = reserved
        .iter()
        .filter(|&&i| {
            view.nodes[i as usize].state == NodeState::Idle && !taken.contains(&(i as usize))
        })
        .count() as u32;
    let mut spare = idle.saturating_sub(reserved_idle);
    for (k, &(pos, job)) in queue.iter().enumerate().skip(head + 1) {
        let j = view.jobs.get(job);
        if j.nodes > idle {
            continue;
        }
        let ends_in_time = view.now + j.requested_time <= shadow;
        if j.nodes <= spare || ends_in_time {
            if j.nodes <= spare {
                spare -= j.nodes;
            }
            idle -= j.nodes;
            spare = spare.min(idle);
            started[k] = true;
            decision.starts.push(Start {
                pos,
                job,
                kind: StartKind::Backfill,
            });
        }
    }
}

/// Marks the idle nodes the engine gives to `starts` (the lowest-numbered, in order) as busy
/// until each job's expected end; returns them.
fn occupy(
    nodes: &[Node],
    starts: &[Start],
    view: &View,
    duration: &dyn Fn(u32) -> f64,
    agenda: &mut [f64],
) -> Vec<usize> {
    let mut idle = nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.state == NodeState::Idle)
        .map(|(i, _)| i);
    let mut taken = Vec::new();
    for start in starts {
        let end = view.now + duration(start.job);
        for i in idle.by_ref().take(view.jobs.get(start.job).nodes as usize) {
            agenda[i] = end;
            taken.push(i);
        }
    }
    taken
}
