//! MARS as a policy: at each invocation with at least two distinct outcomes, search the
//! consequences of the (heuristic, window) actions on the honest belief and start the most
//! visited outcome. The random baseline picks uniformly among the distinct non-empty outcomes.

use std::time::Instant;

use rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use crate::engine::{Belief, View};
use crate::engine::{Column, Decision, LogTable, Policy, StartKind};
use crate::error::{CoreError, Result};
use crate::estimate::{Completed, RuntimeHistory};
use crate::sched::slurm::SlurmPolicy;
use crate::sched::Heuristic;
use crate::search::action::{ActionSet, Branch};
use crate::search::config::Lookahead;
use crate::search::config::Rollout;
use crate::search::log::{CandidateRecord, DecisionRecord};
use crate::search::mcts::search_scenarios;
use crate::search::rollout::rollout_search;
use crate::search::Action;
use crate::search::{search, Reward, RuntimeModel, ScenarioModel, SearchConfig};

/// How the outcome is chosen among the distinct ones.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Chooser {
    Search(Reward),
    /// Uniform among the distinct outcomes that start at least one job.
    Random,
}

pub struct MarsPolicy {
    actions: ActionSet,
    chooser: Chooser,
    config: SearchConfig,
    /// How the look-ahead's futures are drawn (the paper's: nothing is).
    model: ScenarioModel,
    /// Completed jobs so far (read by a sampling model only).
    history: RuntimeHistory,
    pool: Option<rayon::ThreadPool>,
    rng: Pcg64Mcg,
    /// Jobs that waited through a drain: their start is recorded as `Drain`.
    drained: Vec<bool>,
    /// Decisions logged so far (the log itself may have been taken out to disk).
    decided: u64,
    records: Vec<DecisionRecord>,
    /// Keep every candidate of each decision (`candidates`)?
    detail: bool,
    candidates: Vec<CandidateRecord>,
    /// The last search's (visits, mean value) per branch, for the candidate log.
    last_stats: Vec<(u64, f64)>,
    /// Slurm's priorities kept beside the search, for the `slurm` ordering (an action, a base,
    /// a prior or a guide): every view the policy reads is ranked by them.
    slurm: Option<SlurmPolicy>,
    /// Each job's place in Slurm's order at this decision (kept between calls: see
    /// `SlurmPolicy::rank_queue`).
    ranks: Vec<u32>,
}

impl MarsPolicy {
    pub fn new(
        actions: ActionSet,
        chooser: Chooser,
        config: SearchConfig,
        model: ScenarioModel,
        threads: usize,
    ) -> Result<Self> {
        if let Chooser::Search(reward) = chooser {
            if !reward.is_valid() {
                return Err(CoreError::input(
                    "reward weights must be >= 0 with a positive sum",
                ));
            }
        }
        if config.trees == 0 || config.depth == 0 {
            return Err(CoreError::input("trees and depth must be at least 1"));
        }
        if !(config.gamma > 0.0 && config.gamma < 1.0) {
            return Err(CoreError::input("gamma must be in (0, 1)"));
        }
        if config.iterations.is_none() && config.time_budget.is_none() {
            return Err(CoreError::input(
                "give an iteration budget, a time budget, or both",
            ));
        }
        // No more threads than the machine runs at once (results never depend on the number):
        // `--trees 100000` runs its trees on this bounded pool, not a thread each.
        let threads = threads.min(std::thread::available_parallelism().map_or(1, |n| n.get()));
        let pool = if threads > 1 {
            Some(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .map_err(|e| {
                        CoreError::input(format!("cannot start {threads} threads: {e}"))
                    })?,
            )
        } else {
            None
        };
        let rng = Pcg64Mcg::seed_from_u64(config.seed);
        Ok(MarsPolicy {
            actions,
            chooser,
            config,
            model,
            history: RuntimeHistory::new(),
            pool,
            rng,
            drained: Vec::new(),
            decided: 0,
            records: Vec::new(),
            detail: false,
            candidates: Vec::new(),
            last_stats: Vec::new(),
            slurm: None,
            ranks: Vec::new(),
        })
    }

    /// The same policy ranking the queue by `slurm`'s priorities for its `slurm` ordering.
    pub fn with_slurm(mut self, slurm: SlurmPolicy) -> Self {
        self.slurm = Some(slurm);
        self
    }

    /// Index of the branch to take among `branches` (at least two).
    fn choose(&mut self, view: &View, branches: &[Branch]) -> (usize, u64) {
        match self.chooser {
            Chooser::Random => {
                let starting: Vec<usize> = (0..branches.len())
                    .filter(|&i| !branches[i].outcome.is_empty())
                    .collect();
                if starting.is_empty() {
                    return (0, 0);
                }
                let pick =
                    ((u128::from(self.rng.next_u64()) * starting.len() as u128) >> 64) as usize;
                (starting[pick], 0)
            }
            Chooser::Search(reward) => {
                let futures = self.futures(branches.len());
                // Every belief has the same queue and free nodes: the same branches, in the
                // same order, with job indices of the belief. The others are built when a
                // tree or future needs them (memory bounded by the threads, not the trees).
                let first = match self.belief(view, 0) {
                    Ok(first) => first,
                    Err(_) => return (0, 0), // cannot happen with a valid view; FCFS order then
                };
                let belief_branches = self.actions.outcomes(&first.engine.view(), usize::MAX);
                debug_assert_eq!(belief_branches.len(), branches.len());
                let root_of = |tree: u32| {
                    let k = tree % futures;
                    if k == 0 {
                        return first.engine.fork();
                    }
                    self.belief(view, k)
                        .expect("a belief of a view that gave one")
                        .engine
                };
                let result = match &self.config.lookahead {
                    Lookahead::Rollout { bases } => rollout_search(
                        &root_of,
                        futures,
                        &belief_branches,
                        bases,
                        reward,
                        &self.config,
                        self.pool.as_ref(),
                    ),
                    Lookahead::Tree if futures == 1 => search(
                        &first.engine,
                        &belief_branches,
                        &self.actions,
                        reward,
                        &self.config,
                        self.pool.as_ref(),
                    ),
                    Lookahead::Tree => search_scenarios(
                        &root_of,
                        &belief_branches,
                        &self.actions,
                        reward,
                        &self.config,
                        self.pool.as_ref(),
                    ),
                };
                if self.detail {
                    self.last_stats.clear();
                    self.last_stats
                        .extend(result.children.iter().map(|c| (c.visits, c.value)));
                }
                let chosen = &result.children[result.chosen];
                let real: Vec<u32> = {
                    let mut r: Vec<u32> = chosen
                        .outcome
                        .iter()
                        .map(|&b| first.real_index[b as usize])
                        .collect();
                    r.sort_unstable();
                    r
                };
                let index = branches.iter().position(|b| b.outcome == real).unwrap_or(0);
                (index, result.iterations)
            }
        }
    }

    /// How many sampled futures a decision with `branches` outcomes looks at: one per tree for
    /// the tree search; for the rollout planner, as many per tree as the iteration budget
    /// values every outcome in (at least one). One when nothing is sampled.
    fn futures(&self, branches: usize) -> u32 {
        if self.model.is_deterministic() {
            return 1;
        }
        match &self.config.lookahead {
            Lookahead::Tree => self.config.trees,
            Lookahead::Rollout { bases } => {
                let per_future = branches.max(1) * bases.len().max(1);
                let per_tree = self
                    .config
                    .iterations
                    .map_or(1, |i| (i as usize / per_future).max(1) as u32);
                self.config.trees.saturating_mul(per_tree)
            }
        }
    }

    /// The look-ahead engine of future `k` of this decision: the deterministic belief, or its
    /// own sampled scenario (seeded by the decision's number and the future's: the same for any
    /// number of threads).
    fn belief(&self, view: &View, k: u32) -> Result<Belief> {
        if self.model.is_deterministic() {
            return Belief::from_view(view);
        }
        let decision = self.decided.wrapping_mul(0xD1B5_4A32_D192_ED03);
        let seed =
            self.config.seed ^ decision ^ u64::from(k + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        let scenario = self.model.sample(view, &self.history, &mut rng);
        Belief::from_scenario(view, &scenario)
    }

    /// Learns from the jobs completed since the last call.
    fn observe(&mut self, view: &View) {
        if !self.observes_events() {
            return;
        }
        for &(job, start, end) in view.completed {
            let known = view.jobs.get(job);
            self.history.observe(Completed {
                requested: known.requested_time,
                nodes: known.nodes,
                user: view.jobs.user(job),
                run_time: end - start,
            });
        }
    }

    /// The decision at `view` (ranked by Slurm's priorities when the policy keeps them).
    fn decide_ranked(&mut self, view: &View, decision: &mut Decision) {
        if !view.has_room() || view.queue.is_empty() {
            return;
        }
        let started_at = Instant::now();
        self.last_stats.clear();
        let branches = self.actions.outcomes(view, usize::MAX);
        let (chosen, iterations) = if branches.len() >= 2 {
            self.choose(view, &branches)
        } else {
            (0, 0)
        };
        let Some(branch) = branches.get(chosen) else {
            return;
        };
        let drained = drained_components(view, &branches, chosen);
        let drain = !drained.is_empty();
        if self.drained.len() < view.jobs.len() {
            self.drained.resize(view.jobs.len(), false);
        }
        if drain {
            let component = component_of(view);
            for &job in view.queue {
                if drained.contains(&component(job)) {
                    self.drained[job as usize] = true;
                }
            }
        }
        decision
            .starts
            .extend(branch.decision.starts.iter().map(|s| {
                let mut s = *s;
                if self.drained[s.job as usize] {
                    s.kind = StartKind::Drain;
                }
                s
            }));
        decision.reservation = branch.decision.reservation;
        // On partitions: each start's partition and nodes.
        decision
            .site_starts
            .extend_from_slice(&branch.decision.site_starts);
        decision.takes.extend_from_slice(&branch.decision.takes);
        // On shared nodes: the nodes and resources of each start.
        (decision.allocations).extend_from_slice(&branch.decision.allocations);
        // Under a power manager: the nodes it placed the jobs on, and the queue rule it plans by.
        decision.nodes.extend_from_slice(&branch.decision.nodes);
        decision.held.extend_from_slice(&branch.decision.held);
        decision.rule.clone_from(&branch.decision.rule);
        let action = self.actions.get(usize::from(branch.action));
        let first = self.candidates.len() as u32;
        if self.detail {
            for (i, b) in branches.iter().enumerate() {
                let (visits, value) = self.last_stats.get(i).copied().unwrap_or((0, f64::NAN));
                self.candidates.push(CandidateRecord {
                    best: self.actions.get(usize::from(b.best)),
                    actions: b.actions,
                    started: b.outcome.len() as u32,
                    visits,
                    value: if visits == 0 { f64::NAN } else { value },
                    chosen: i == chosen,
                });
            }
        }
        self.decided += 1;
        self.records.push(DecisionRecord {
            time: view.now,
            queue_length: view.queue.len() as u32,
            outcomes: branches.len() as u32,
            iterations,
            heuristic: action.heuristic,
            window: action.window,
            actions: branch.actions,
            best: self.actions.get(usize::from(branch.best)),
            started: branch.outcome.len() as u32,
            drain,
            seconds: started_at.elapsed().as_secs_f64(),
            candidates: first..self.candidates.len() as u32,
        });
    }
}

impl Policy for MarsPolicy {
    fn name(&self) -> String {
        match self.chooser {
            Chooser::Random => "random".to_string(),
            Chooser::Search(r) => format!(
                "mars(wait={}, bsld={}, utilization={}, depth={}, gamma={}, trees={})",
                r.wait,
                r.bsld,
                r.utilization,
                self.config.depth,
                self.config.gamma,
                self.config.trees
            ),
        }
    }

    fn observes_events(&self) -> bool {
        self.model.runtime != RuntimeModel::Requested || self.slurm.is_some()
    }

    fn decide(&mut self, view: &View, decision: &mut Decision) {
        self.observe(view);
        let Some(slurm) = self.slurm.as_mut() else {
            return self.decide_ranked(view, decision);
        };
        // Slurm keeps its priorities whatever starts the jobs (usage, recalculations)
        let mut ranks = std::mem::take(&mut self.ranks);
        slurm.rank_queue(view, &mut ranks);
        let ranked = View {
            ranks: &ranks,
            ..*view
        };
        self.decide_ranked(&ranked, decision);
        self.ranks = ranks;
    }

    fn set_decision_detail(&mut self, on: bool) {
        self.detail = on;
    }

    fn log_rows(&self) -> usize {
        self.records.len() + self.candidates.len()
    }

    fn take_log(&mut self) -> LogTable {
        let r = std::mem::take(&mut self.records);
        let c = std::mem::take(&mut self.candidates);
        let mut t = LogTable::default();
        t.add("time", &r, |r| r.time, Column::F64);
        t.add("queue_length", &r, |r| r.queue_length, Column::U32);
        t.add("outcomes", &r, |r| r.outcomes, Column::U32);
        t.add("iterations", &r, |r| r.iterations, Column::U64);
        t.add(
            "heuristic",
            &r,
            |r| r.heuristic.name().to_string(),
            Column::Text,
        );
        let window = |r: &DecisionRecord| {
            if r.window == u32::MAX {
                -1
            } else {
                i64::from(r.window)
            }
        };
        t.add("window", &r, window, Column::I64);
        t.add("actions", &r, |r| r.actions, Column::U32);
        t.add("name", &r, |r| r.best.name(), Column::Text);
        t.add("started", &r, |r| r.started, Column::U32);
        t.add("drain", &r, |r| r.drain, Column::Bool);
        t.add("seconds", &r, |r| r.seconds, Column::F64);
        // `--decision-log full`: every distinct outcome of each decision, flat, with offsets
        if self.detail {
            let mut offsets = Vec::with_capacity(r.len() + 1);
            offsets.push(0u64);
            offsets.extend(r.iter().map(|r| u64::from(r.candidates.end)));
            t.push("candidate_offsets", Column::U64(offsets));
            t.add("candidate_names", &c, |c| c.best.name(), Column::Text);
            t.add("candidate_actions", &c, |c| c.actions, Column::U32);
            t.add("candidate_started", &c, |c| c.started, Column::U32);
            t.add("candidate_visits", &c, |c| c.visits, Column::U64);
            t.add("candidate_values", &c, |c| c.value, Column::F64);
            t.add("candidate_chosen", &c, |c| c.chosen, Column::Bool);
        }
        t
    }
}

impl MarsPolicy {
    /// The decisions logged so far (taken out by `take_log`).
    pub fn records(&self) -> &[DecisionRecord] {
        &self.records
    }
}

/// What `mars` and `random` need beyond a name.
#[derive(Debug, Clone)]
pub struct SearchOptions {
    /// Action set, as `ActionSet::parse` reads it.
    pub actions: String,
    pub reward: Reward,
    pub config: SearchConfig,
    /// How the look-ahead's futures are drawn.
    pub model: ScenarioModel,
    pub threads: usize,
}

impl SearchOptions {
    /// Whether an ordering of the search is Slurm's (an action, a base ordering, a prior or
    /// the guide): the policy then needs Slurm's settings to rank the queue.
    pub fn orders_by_slurm(&self) -> Result<bool> {
        let slurm = |a: &Action| a.heuristic == Heuristic::Slurm;
        let actions = ActionSet::parse(&self.actions)?;
        let mut any = (0..actions.len()).any(|i| slurm(&actions.get(i)));
        if let Lookahead::Rollout { bases } = &self.config.lookahead {
            any |= bases.iter().any(slurm);
        }
        if let Some(prior) = &self.config.prior {
            any |= prior.iter().any(slurm);
        }
        if let Rollout::Guided { guide, .. } = &self.config.rollout {
            any |= slurm(guide);
        }
        Ok(any)
    }
}

/// Builds `mars` (search) or `random` (the random baseline).
pub fn build_search_policy(name: &str, options: &SearchOptions) -> Result<Box<dyn Policy>> {
    Ok(Box::new(build_mars(name, options)?))
}

/// [`build_search_policy`], as its own type (its decision log is then readable as records).
pub fn build_mars(name: &str, options: &SearchOptions) -> Result<MarsPolicy> {
    let actions = ActionSet::parse(&options.actions)?;
    let chooser = match name {
        "mars" => Chooser::Search(options.reward),
        "random" => Chooser::Random,
        other => {
            return Err(CoreError::input(format!(
                "{other:?} is not a search policy"
            )))
        }
    };
    MarsPolicy::new(
        actions,
        chooser,
        options.config.clone(),
        options.model,
        options.threads,
    )
}

/// The component of each job (a set of partitions sharing nodes; 0 on one pool).
fn component_of<'a>(view: &View<'a>) -> impl Fn(u32) -> u32 + 'a {
    let site = (view.site.map(|s| s.model)).or(view.shared.and_then(|s| s.site));
    move |job| site.map_or(0, |s| s.job_key(job).1)
}

/// The components the chosen outcome drains: it starts none of their jobs while another
/// outcome starts some (on one pool: the chosen outcome is empty and another is not).
fn drained_components(view: &View, branches: &[Branch], chosen: usize) -> Vec<u32> {
    let component = component_of(view);
    let served: Vec<u32> = branches[chosen]
        .outcome
        .iter()
        .map(|&j| component(j))
        .collect();
    let mut drained = Vec::new();
    for (i, branch) in branches.iter().enumerate() {
        for &job in branch.outcome.iter().filter(|_| i != chosen) {
            let c = component(job);
            if !served.contains(&c) && !drained.contains(&c) {
                drained.push(c);
            }
        }
    }
    drained
}
