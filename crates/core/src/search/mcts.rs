//! The search: P independent seeded trees (root parallelism), merged by outcome.

use std::time::Instant;

use rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use rayon::prelude::*;

use crate::engine::{Engine, StopFlag};
use crate::sched::Decision;
use crate::sched::{Policy, QueuePolicy};
use crate::search::action::{Action, ActionSet, Branch};
use crate::search::reward::{Reward, RootReference};
use crate::search::rollout::{best_base_return, follow};
use crate::search::tree::{backup, rollout_return, select_child, Node, NO_PARENT};

/// How a rollout picks its actions.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Rollout {
    /// Uniform among the actions (the MARS paper): outcomes shared by many actions are picked
    /// more often.
    #[default]
    Actions,
    /// Uniform among the distinct outcomes at each step (costs every action's evaluation).
    Outcomes,
    /// The `guide` ordering (with EASY) with probability 1 - `epsilon`, else a uniform action.
    Guided { guide: Action, epsilon: f64 },
}

impl Rollout {
    /// The rollout policies' names, in the order of the variants.
    pub const NAMES: [&'static str; 3] = ["actions", "outcomes", "guided"];
}

/// How a decision's outcomes are valued.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Lookahead {
    /// Monte Carlo Tree Search over the outcomes of successive decisions (the MARS paper).
    #[default]
    Tree,
    /// Each outcome of this decision followed by each of the `bases` orderings (with EASY), in
    /// several sampled futures: see [`crate::search::rollout`].
    Rollout { bases: Vec<Action> },
}

impl Lookahead {
    /// The look-aheads' names, in the order of the variants.
    pub const NAMES: [&'static str; 2] = ["tree", "rollout"];
    /// The priors at expansion: none (the paper) or the `bases` rollout value.
    pub const PRIOR_NAMES: [&'static str; 2] = ["none", "rollout"];
}

/// Budgets and parameters of one decision's search.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchConfig {
    /// Iterations per tree (deterministic with a seed).
    pub iterations: Option<u32>,
    /// Wall-clock seconds per decision (every tree stops then).
    pub time_budget: Option<f64>,
    /// Horizon D: counted scheduling cycles (those that start a job) from the root.
    pub depth: u32,
    pub gamma: f64,
    /// c0 in `c = c0·(Qmax − Qmin)`.
    pub exploration: f64,
    /// P: independent trees (each on its own sampled scenario when the forward model samples).
    pub trees: u32,
    pub seed: u64,
    pub rollout: Rollout,
    pub lookahead: Lookahead,
    /// A prior at expansion (the tree only): each new child starts with one virtual visit
    /// worth the best of these orderings' returns after it, and the best is tried first.
    pub prior: Option<Vec<Action>>,
    /// Stops the search early when raised (an interrupted run's decisions are not kept).
    pub stop: StopFlag,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            // the command line's and the Python specs' defaults are read from here
            iterations: Some(100),
            time_budget: None,
            depth: 50,
            gamma: 0.99,
            exploration: 1.0,
            // P = the number of cores, as in the paper
            trees: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
            seed: 17,
            rollout: Rollout::Actions,
            lookahead: Lookahead::Tree,
            prior: None,
            stop: StopFlag::default(),
        }
    }
}

/// A root outcome with its statistics merged over the trees.
#[derive(Debug, Clone, PartialEq)]
pub struct RootChild {
    pub action: u16,
    pub outcome: Vec<u32>,
    pub visits: u64,
    pub value: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SearchOutcome {
    /// One entry per root branch, in the branches' order.
    pub children: Vec<RootChild>,
    /// Index of the most visited child (ties: the earliest).
    pub chosen: usize,
    /// Iterations summed over the trees.
    pub iterations: u64,
}

/// Runs the search from `root` (a belief engine at a decision point whose distinct outcomes are
/// `branches`, at least two). Trees run on `pool` when given.
pub fn search(
    root: &Engine,
    branches: &[Branch],
    actions: &ActionSet,
    reward: Reward,
    config: &SearchConfig,
    pool: Option<&rayon::ThreadPool>,
) -> SearchOutcome {
    search_scenarios(&|_| root.fork(), branches, actions, reward, config, pool)
}

/// Runs the search with one root per tree: `root_of(tree)` is the belief engine of that tree's
/// scenario. Every root is the same decision point (same queue, same free nodes: the same
/// `branches`, in the same order); only the sampled future differs. Root children are merged
/// by outcome over the trees, the most visited wins.
pub fn search_scenarios(
    root_of: &(dyn Fn(u32) -> Engine + Sync),
    branches: &[Branch],
    actions: &ActionSet,
    reward: Reward,
    config: &SearchConfig,
    pool: Option<&rayon::ThreadPool>,
) -> SearchOutcome {
    let grow = |tree: u32| {
        if config.stop.raised() {
            return (Vec::new(), 0); // (merges as no visit)
        }
        let seed = config.seed ^ u64::from(tree).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let mut root = root_of(tree);
        let reference = reward.reference_of(&root);
        reference.set_marks(&mut root);
        Tree::new(
            &root,
            branches,
            actions.clone(),
            reward,
            reference,
            config,
            seed,
        )
        .grow()
    };
    let trees: Vec<(Vec<(u32, f64)>, u64)> = match pool {
        Some(pool) => pool.install(|| (0..config.trees).into_par_iter().map(grow).collect()),
        None => (0..config.trees).map(grow).collect(),
    };
    let mut children: Vec<RootChild> = branches
        .iter()
        .map(|b| RootChild {
            action: b.action,
            outcome: b.outcome.clone(),
            visits: 0,
            value: 0.0,
        })
        .collect();
    let mut iterations = 0;
    for (stats, count) in &trees {
        iterations += count;
        for (child, &(visits, q)) in children.iter_mut().zip(stats) {
            let total = child.visits + u64::from(visits);
            if total > 0 {
                child.value =
                    (child.value * child.visits as f64 + q * f64::from(visits)) / total as f64;
            }
            child.visits = total;
        }
    }
    let chosen = children
        .iter()
        .enumerate()
        .max_by(|(i, a), (j, b)| a.visits.cmp(&b.visits).then(j.cmp(i)))
        .map_or(0, |(i, _)| i);
    SearchOutcome {
        children,
        chosen,
        iterations,
    }
}

/// Whether a transition stopped at a decision point or ran out of events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    Decision,
    Terminal,
}

/// Advances `engine` to the next invocation offering at least two distinct outcomes, applying
/// the single outcome of every invocation in between (vertical merge). Returns how it stopped
/// and the cycles that started jobs on the way.
fn advance_to_decision(engine: &mut Engine, actions: &mut ActionSet) -> (Stop, u32) {
    let mut counted = 0;
    loop {
        if !engine.advance() {
            return (Stop::Terminal, counted);
        }
        let view = engine.view();
        if view.queue.is_empty() || view.free == 0 || view.starts_nothing() {
            continue; // a single outcome that starts nothing
        }
        let branches = actions.outcomes(&view, 2);
        if branches.len() >= 2 {
            return (Stop::Decision, counted);
        }
        if let Some(only) = branches.into_iter().next() {
            if !only.outcome.is_empty() {
                counted += 1;
                engine
                    .apply_decision(&only.decision)
                    .expect("an action's own decision is valid");
            }
        }
    }
}

struct Tree<'a> {
    nodes: Vec<Node>,
    actions: ActionSet,
    reward: Reward,
    reference: RootReference,
    config: &'a SearchConfig,
    rng: Pcg64Mcg,
    lowest: f64,
    highest: f64,
    seen: Vec<f64>,
    decision: Decision,
    /// The guided rollout's ordering (with EASY).
    guide: Option<(QueuePolicy, f64)>,
}

impl<'a> Tree<'a> {
    fn new(
        root: &Engine,
        branches: &[Branch],
        actions: ActionSet,
        reward: Reward,
        reference: RootReference,
        config: &'a SearchConfig,
        seed: u64,
    ) -> Self {
        let mut tree = Tree {
            nodes: Vec::with_capacity(1024),
            actions,
            reward,
            reference,
            config,
            rng: Pcg64Mcg::seed_from_u64(seed),
            lowest: f64::INFINITY,
            highest: f64::NEG_INFINITY,
            seen: Vec::new(),
            decision: Decision::default(),
            guide: match config.rollout {
                Rollout::Guided { guide, epsilon } => Some((guide.policy(), epsilon)),
                _ => None,
            },
        };
        let mut node = Node::new(NO_PARENT, 0, Vec::new(), None, 0);
        node.state = Some(root.fork());
        tree.nodes.push(node);
        tree.add_children(0, branches.to_vec());
        tree
    }

    /// Grows the tree within its budget; returns (visits, Q) of each root child and the
    /// number of iterations.
    fn grow(mut self) -> (Vec<(u32, f64)>, u64) {
        let start = Instant::now();
        let max_iterations = self.config.iterations.map_or(u64::MAX, u64::from);
        let mut iterations = 0u64;
        while iterations < max_iterations
            && self
                .config
                .time_budget
                .is_none_or(|b| start.elapsed().as_secs_f64() < b)
            && !self.config.stop.raised()
        {
            self.iterate();
            iterations += 1;
        }
        let stats = self.nodes[0]
            .children
            .iter()
            .map(|&c| (self.nodes[c as usize].visits, self.nodes[c as usize].q))
            .collect();
        (stats, iterations)
    }

    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.rng.next_u64()) * n as u128) >> 64) as usize
    }

    fn add_children(&mut self, parent: u32, branches: Vec<Branch>) {
        let depth = self.nodes[parent as usize].depth;
        let mut ids = Vec::with_capacity(branches.len());
        for b in branches {
            let counted = depth + u32::from(!b.outcome.is_empty());
            ids.push(self.nodes.len() as u32);
            self.nodes.push(Node::new(
                parent,
                b.action,
                b.outcome,
                Some(b.decision),
                counted,
            ));
        }
        let mut untried = ids.clone();
        if let Some(bases) = &self.config.prior {
            // The prior: each child's value under the best base ordering, as one visit.
            let state = self.nodes[parent as usize]
                .state
                .as_ref()
                .expect("a node being expanded keeps its state");
            let start = self.reward.evaluate(state, &self.reference);
            let priors: Vec<f64> = ids
                .iter()
                .map(|&id| {
                    let decision = self.nodes[id as usize]
                        .decision
                        .as_ref()
                        .expect("an untried edge's decision");
                    best_base_return(
                        state,
                        decision,
                        bases,
                        self.reward,
                        &self.reference,
                        self.config,
                        start,
                    )
                })
                .collect();
            for (&id, prior) in ids.iter().zip(priors) {
                let node = &mut self.nodes[id as usize];
                node.q = prior;
                node.visits = 1;
            }
            // Tried best first (popped from the end); ties keep the outcomes' order.
            untried.sort_by(|&a, &b| {
                let (qa, qb) = (self.nodes[a as usize].q, self.nodes[b as usize].q);
                qa.total_cmp(&qb).then(b.cmp(&a))
            });
        } else {
            // Untried children are tried in a random order (popped from the end).
            for i in (1..untried.len()).rev() {
                let j = self.below(i + 1);
                untried.swap(i, j);
            }
        }
        let p = &mut self.nodes[parent as usize];
        p.children = ids;
        p.untried = untried;
        p.expanded = true;
    }

    fn exploration(&self) -> f64 {
        if self.highest > self.lowest {
            self.config.exploration * (self.highest - self.lowest)
        } else {
            0.0
        }
    }

    fn iterate(&mut self) {
        let horizon = self.config.depth;
        let gamma = self.config.gamma;
        let mut id = 0u32;
        loop {
            let node = &self.nodes[id as usize];
            if node.terminal || (id != 0 && node.depth >= horizon) {
                let padding = if node.terminal {
                    horizon.saturating_sub(node.depth) as usize
                } else {
                    0
                };
                let g = rollout_return(&[], node.reward, padding, gamma);
                self.backup(id, g);
                return;
            }
            if !node.expanded {
                let state = node
                    .state
                    .as_ref()
                    .expect("an unexpanded node keeps its state");
                let branches = self.actions.outcomes(&state.view(), usize::MAX);
                self.add_children(id, branches);
            }
            if let Some(child) = self.nodes[id as usize].untried.pop() {
                self.try_child(id, child);
                return;
            }
            id = select_child(&self.nodes, id, self.exploration());
        }
    }

    /// Builds a child's state from its parent's, rolls out from it and backs up.
    fn try_child(&mut self, parent: u32, child: u32) {
        let mut engine = self.nodes[parent as usize]
            .state
            .as_ref()
            .expect("parent state")
            .fork();
        if self.nodes[parent as usize].untried.is_empty() {
            self.nodes[parent as usize].state = None; // every child tried: the state is not needed
        }
        let decision = self.nodes[child as usize]
            .decision
            .take()
            .expect("edge decision");
        engine
            .apply_decision(&decision)
            .expect("an action's own decision is valid");
        let (stop, counted) = advance_to_decision(&mut engine, &mut self.actions);
        let reward = self.reward.evaluate(&engine, &self.reference);
        let horizon = self.config.depth;
        let node = &mut self.nodes[child as usize];
        node.depth += counted;
        node.reward = reward;
        node.terminal = stop == Stop::Terminal;
        let depth = node.depth;
        let g = if node.terminal {
            rollout_return(
                &[],
                reward,
                horizon.saturating_sub(depth) as usize,
                self.config.gamma,
            )
        } else if depth >= horizon {
            0.0
        } else {
            let rollout_engine = engine.fork();
            self.nodes[child as usize].state = Some(engine);
            self.rollout(rollout_engine, (horizon - depth) as usize, reward)
        };
        self.backup(child, g);
    }

    /// Random actions from a decision point until `remaining` counted cycles (Eq. 4).
    fn rollout(&mut self, mut engine: Engine, remaining: usize, last: f64) -> f64 {
        let (reward, reference, gamma) = (self.reward, self.reference, self.config.gamma);
        let mut decision = std::mem::take(&mut self.decision);
        let g = follow(
            &mut engine,
            remaining,
            last,
            reward,
            &reference,
            gamma,
            &mut decision,
            |engine, decision, _| self.rollout_decision(engine, decision),
        );
        self.decision = decision;
        g
    }

    /// The decision a rollout takes at `engine`'s decision point.
    fn rollout_decision(&mut self, engine: &Engine, decision: &mut Decision) {
        let view = engine.view();
        // Where nothing can start, every action decides nothing that matters here (the belief
        // records nothing): the draws are made all the same, so the random stream is unchanged.
        let idle = view.starts_nothing();
        match self.config.rollout {
            Rollout::Actions => {
                let action = self.below(self.actions.len());
                if idle {
                    decision.clear();
                } else {
                    self.actions.decide(action, &view, decision);
                }
            }
            Rollout::Outcomes => {
                if idle {
                    self.below(1);
                    decision.clear();
                } else {
                    let mut branches = self.actions.outcomes(&view, usize::MAX);
                    let pick = self.below(branches.len());
                    *decision = branches.swap_remove(pick).decision;
                }
            }
            Rollout::Guided { epsilon, .. } => {
                let explore = (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 <= epsilon;
                if explore {
                    let action = self.below(self.actions.len());
                    if idle {
                        decision.clear();
                    } else {
                        self.actions.decide(action, &view, decision);
                    }
                } else if let Some((guide, _)) = self.guide.as_mut() {
                    decision.clear();
                    if !idle {
                        guide.decide(&view, decision);
                    }
                }
            }
        }
    }

    fn backup(&mut self, node: u32, g: f64) {
        self.seen.clear();
        backup(&mut self.nodes, node, g, self.config.gamma, &mut self.seen);
        for &v in &self.seen {
            self.lowest = self.lowest.min(v);
            self.highest = self.highest.max(v);
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::engine::{Belief, Inputs};
    use crate::model::{Calendar, Downtime, DowntimeKind, Job, JobTable, Machine, Overrun};
    use crate::sched::{Backfill, Heuristic, QueuePolicy};

    /// (submit, run, requested, nodes)
    fn engine(nodes: u32, specs: &[(f64, f64, f64, u32)]) -> Engine {
        engine_with(nodes, specs, Calendar::empty())
    }

    /// [`engine`] with a downtime calendar.
    fn engine_with(nodes: u32, specs: &[(f64, f64, f64, u32)], calendar: Calendar) -> Engine {
        let jobs = specs
            .iter()
            .enumerate()
            .map(|(i, &(submit, run_time, requested_time, nodes))| Job {
                id: i as i64 + 1,
                submit,
                run_time,
                requested_time,
                nodes,
            })
            .collect();
        let inputs = Inputs::new(
            JobTable::new(jobs).unwrap(),
            Machine::new(nodes),
            calendar,
            Overrun::Continue,
        )
        .unwrap();
        Engine::new(Arc::new(inputs))
    }

    /// 4 nodes; three 1-node jobs run until 3600; the queue holds four long 1-node jobs and a
    /// short 4-node job L. Orderings either start one small job (FCFS, SJF on small windows,
    /// ...) or nothing, reserving the nodes for L (LRF, SJF with L in the window): two outcomes.
    pub(crate) fn drain_case() -> Engine {
        let mut specs = vec![(0.0, 3600.0, 3600.0, 1); 3];
        specs.extend([(10.0, 36000.0, 36000.0, 1); 4]);
        specs.push((20.0, 360.0, 360.0, 4));
        let mut e = engine(4, &specs);
        let mut fcfs = QueuePolicy::new(Heuristic::Fcfs, usize::MAX, Backfill::Easy);
        e.step(&mut fcfs).unwrap(); // t = 0: the three running jobs start
        e.advance(); // t = 10: the small jobs arrive ...
        e.invoke(&mut NoStart).unwrap();
        e.advance(); // t = 20: L arrives; decision point
        e
    }

    struct NoStart;
    impl crate::sched::Policy for NoStart {
        fn name(&self) -> String {
            "nothing".into()
        }
        fn decide(&mut self, _: &crate::engine::View, _: &mut Decision) {}
    }

    #[test]
    fn horizontal_merge_keeps_one_branch_per_outcome() {
        let e = drain_case();
        let mut actions = ActionSet::paper();
        let branches = actions.outcomes(&e.view(), usize::MAX);
        // Queue: S1..S4 (indices 3..6) then L (index 7); one free node.
        let outcomes: Vec<&Vec<u32>> = branches.iter().map(|b| &b.outcome).collect();
        assert_eq!(outcomes, vec![&vec![3], &vec![]]);
        // FCFS is the representative of the first; the first action putting L first for the
        // second: LCFS with a window of 2 or more (L is the last submitted).
        assert_eq!(
            actions.get(branches[0].action as usize).heuristic,
            Heuristic::Fcfs
        );
        assert_eq!(
            actions.get(branches[1].action as usize).heuristic,
            Heuristic::Lcfs
        );
    }

    #[test]
    fn vertical_merge_skips_invocations_with_a_single_outcome() {
        // After a drain at t=20, the next events are the three completions at 3600 (one
        // instant): there, every ordering either starts L or small jobs, a real decision.
        let mut e = drain_case();
        let mut actions = ActionSet::paper();
        let (stop, counted) = advance_to_decision(&mut e, &mut actions);
        assert_eq!((stop, counted, e.now()), (Stop::Decision, 0, 3600.0));
        // With only small jobs left, every later invocation has a single outcome: the
        // transition runs to the end.
        let only_small = engine(
            2,
            &[
                (0.0, 100.0, 100.0, 1),
                (0.0, 100.0, 100.0, 1),
                (5.0, 50.0, 50.0, 1),
            ],
        );
        let mut e = only_small;
        let mut fcfs = QueuePolicy::new(Heuristic::Fcfs, usize::MAX, Backfill::Easy);
        e.step(&mut fcfs).unwrap();
        let (stop, counted) = advance_to_decision(&mut e, &mut actions);
        assert_eq!((stop, counted), (Stop::Terminal, 1));
        assert!(e.state().queue().is_empty());
    }

    #[test]
    fn search_finds_the_drain_that_lowers_mean_wait() {
        let e = drain_case();
        let view = e.view();
        let belief = Belief::from_view(&view).unwrap();
        let mut actions = ActionSet::paper();
        let branches = actions.outcomes(&belief.engine.view(), usize::MAX);
        let config = SearchConfig {
            iterations: Some(300),
            trees: 2,
            ..SearchConfig::default()
        };
        let result = search(
            &belief.engine,
            &branches,
            &actions,
            Reward::CW,
            &config,
            None,
        );
        assert_eq!(result.children.len(), 2);
        assert!(
            result.children[result.chosen].outcome.is_empty(),
            "{result:?}"
        );
        assert_eq!(result.iterations, 600);
        // Same seed, same budget: the same tree, on threads or not.
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let threaded = search(
            &belief.engine,
            &branches,
            &actions,
            Reward::CW,
            &config,
            Some(&pool),
        );
        assert_eq!(threaded, result);
    }

    #[test]
    fn the_prior_seeds_each_outcome_and_tries_the_best_first() {
        // With FCFS and SJF as the prior's orderings, the drain is worth SJF's return after it
        // (L first), more than starting S1: it is tried first, so one iteration visits it
        // twice (the prior's virtual visit and the real one) and chooses it.
        let e = drain_case();
        let belief = Belief::from_view(&e.view()).unwrap();
        let mut actions = ActionSet::paper();
        let branches = actions.outcomes(&belief.engine.view(), usize::MAX);
        let bases = vec![
            Action {
                heuristic: Heuristic::Fcfs,
                window: 1,
            },
            Action {
                heuristic: Heuristic::Sjf,
                window: 256,
            },
        ];
        let config = SearchConfig {
            iterations: Some(1),
            trees: 1,
            prior: Some(bases.clone()),
            ..SearchConfig::default()
        };
        let result = search(
            &belief.engine,
            &branches,
            &actions,
            Reward::CW,
            &config,
            None,
        );
        let drain = result.children.iter().position(|c| c.outcome.is_empty());
        assert_eq!(Some(result.chosen), drain);
        let visits: Vec<u64> = result.children.iter().map(|c| c.visits).collect();
        assert_eq!(visits.iter().sum::<u64>(), 3, "{visits:?}");
        // The undrained outcome keeps its prior: the rollout look-ahead's value of it.
        let start = result
            .children
            .iter()
            .position(|c| !c.outcome.is_empty())
            .unwrap();
        let looked = crate::search::rollout::rollout_search(
            &|_| belief.engine.fork(),
            1,
            &branches,
            &bases,
            Reward::CW,
            &SearchConfig {
                prior: None,
                ..config.clone()
            },
            None,
        );
        assert_eq!(result.children[start].value, looked.children[start].value);
    }

    #[test]
    fn cw_and_cu_rewards_on_crafted_outcomes() {
        // One node; J1 runs 0-3600; J2 (submitted at 0) waits an hour, then runs an hour.
        let mut e = engine(1, &[(0.0, 3600.0, 3600.0, 1), (0.0, 3600.0, 3600.0, 1)]);
        let root = e.fork();
        let reference = Reward::reference(&root);
        let mut fcfs = QueuePolicy::new(Heuristic::Fcfs, usize::MAX, Backfill::Easy);
        e.run(&mut fcfs).unwrap();
        // Waits 0 s and 3600 s: mean 0.5 h, CW = 1 / 1.5 (both forms: nothing waits at the
        // end). Busy the whole 7200 s: the paper's CU = 1; over a day from the root, 1/12.
        assert!((Reward::CW.evaluate(&e, &reference) - 1.0 / 1.5).abs() < 1e-12);
        assert!((Reward::CW_PAPER.evaluate(&e, &reference) - 1.0 / 1.5).abs() < 1e-12);
        assert!((Reward::CU_PAPER.evaluate(&e, &reference) - 1.0).abs() < 1e-12);
        assert!((Reward::CU_HORIZON.evaluate(&e, &reference) - 1.0 / 12.0).abs() < 1e-12);
        let mixed = Reward {
            wait: 1.0,
            utilization_since_root: 3.0,
            ..Reward::ZERO
        };
        assert!((mixed.evaluate(&e, &reference) - (1.0 / 1.5 + 3.0) / 4.0).abs() < 1e-12);
        // Bounded slowdowns 1 and 2: mean 1.5, term 1/1.5.
        let bsld = Reward {
            bsld: 1.0,
            ..Reward::ZERO
        };
        assert!((bsld.evaluate(&e, &reference) - 1.0 / 1.5).abs() < 1e-12);
        // The longest wait, an hour: 1/2.
        let tail = Reward {
            max_wait: 1.0,
            ..Reward::ZERO
        };
        assert!((tail.evaluate(&e, &reference) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn jobs_still_waiting_count_and_idling_is_not_free() {
        // One node; J1 runs 0-3600; J2 (submitted at 0) waits. At t = 1800, nothing has
        // started since the root but J1 (wait 0) and J2 has waited half an hour.
        let mut e = engine(1, &[(0.0, 3600.0, 3600.0, 1), (0.0, 3600.0, 3600.0, 1)]);
        let mut fcfs = QueuePolicy::new(Heuristic::Fcfs, usize::MAX, Backfill::Easy);
        e.step(&mut fcfs).unwrap(); // t = 0: J1 starts, J2 waits
        let reference = Reward::reference(&e.fork());
        // A timer at 1800 s gives an event there: the state at half an hour.
        let mut at_half_hour = e.fork();
        let mut timer = Decision::default();
        timer.timers.push(1800.0);
        at_half_hour.apply_decision(&timer).unwrap();
        at_half_hour.advance();
        assert_eq!(at_half_hour.now(), 1800.0);
        // The paper's CW sees only J1, started at once: 1. The new CW also counts J2's half
        // hour: mean 0.25 h over the two: 1/1.25.
        assert!((Reward::CW_PAPER.evaluate(&at_half_hour, &reference) - 1.0).abs() < 1e-12);
        assert!((Reward::CW.evaluate(&at_half_hour, &reference) - 1.0 / 1.25).abs() < 1e-12);
        // The bsld term counts J2 too: J1 1, J2 (1800 + 3600) / 3600 = 1.5 so far: 1/1.25.
        let bsld = Reward {
            bsld: 1.0,
            ..Reward::ZERO
        };
        assert!((bsld.evaluate(&at_half_hour, &reference) - 1.0 / 1.25).abs() < 1e-12);
        // CU over a day: 1800 node-s done + J1's committed 1800 s, over 86400 node-s.
        let cu = Reward::CU_HORIZON.evaluate(&at_half_hour, &reference);
        assert!((cu - 3600.0 / 86400.0).abs() < 1e-12, "{cu}");
    }

    #[test]
    fn maintenance_utilization_is_measured_to_the_announced_window() {
        // Two nodes; a maintenance [10000, 13600) announced from the start. J1 (2 nodes,
        // 8000 s) fits before it and runs 0-8000; J2 (1 node, 20000 s) does not and waits
        // for 13600. Before the window: 16,000 busy of 20,000 up node-seconds, 0.8.
        let jobs = [(0.0, 8000.0, 8000.0, 2), (0.0, 20000.0, 20000.0, 1)];
        let maintenance = Downtime {
            start: 10000.0,
            end: 13600.0,
            kind: DowntimeKind::Scheduled,
            nodes: None,
            back_asleep: false,
        };
        // The utilization horizon (5000 s) ends before the window: its own mark, busy all
        // along (1); the maintenance term reads the other mark, at the window's start.
        let reward = Reward {
            utilization: 1.0,
            horizon: 5000.0,
            ..Reward::ZERO
        };
        let maintenance_term = Reward {
            maintenance_utilization: 1.0,
            ..Reward::ZERO
        };
        let calendar = Calendar::new(vec![maintenance], 86400.0).unwrap();
        let mut e = engine_with(2, &jobs, calendar);
        e.advance(); // t = 0: the jobs arrive, the window is known
        let reference = reward.reference_of(&e);
        assert_eq!((reference.until, reference.maintenance), (5000.0, 10000.0));
        reference.set_marks(&mut e);
        let mut fcfs = QueuePolicy::new(Heuristic::Fcfs, usize::MAX, Backfill::Easy);
        e.invoke(&mut fcfs).unwrap();
        e.run(&mut fcfs).unwrap();
        assert_eq!(e.now(), 33600.0, "J2 ran after the window");
        assert!((reward.evaluate(&e, &reference) - 1.0).abs() < 1e-12);
        assert!((maintenance_term.evaluate(&e, &reference) - 0.8).abs() < 1e-12);
        // Both terms, equal weights: the mean of the two.
        let both = Reward {
            utilization: 1.0,
            maintenance_utilization: 1.0,
            ..reward
        };
        assert!((both.evaluate(&e, &reference) - 0.9).abs() < 1e-12);
        // Without a maintenance announced nothing is lost for good: the term is 1 whatever
        // the schedule (here J2 waits for nothing and the machine is half idle after 8000).
        let mut free = engine(2, &jobs);
        free.advance();
        let reference = maintenance_term.reference_of(&free);
        assert!(reference.maintenance.is_infinite());
        reference.set_marks(&mut free);
        free.invoke(&mut fcfs).unwrap();
        free.run(&mut fcfs).unwrap();
        assert_eq!(maintenance_term.evaluate(&free, &reference), 1.0);
    }

    #[test]
    fn energy_reward_is_the_computing_share_of_the_energy() {
        // Two nodes (computing 100 W, idle 10 W); one 1-node job runs 100 s: 10,000 J
        // computing, 1,000 J idle; the energy term is 10/11 (utilization would be 1/2).
        let model = crate::model::PowerModel {
            computing_w: 100.0,
            idle_w: 10.0,
            sleeping_w: 1.0,
            switching_on_w: 20.0,
            switching_off_w: 30.0,
            switch_on_s: 5.0,
            switch_on_std_s: 0.0,
            switch_off_s: 5.0,
            switch_off_std_s: 0.0,
        };
        let jobs = JobTable::new(vec![Job {
            id: 1,
            submit: 0.0,
            run_time: 100.0,
            requested_time: 100.0,
            nodes: 1,
        }])
        .unwrap();
        let machine = Machine {
            nodes: 2,
            power: Some(model),
        };
        let inputs = Inputs::new(jobs, machine, Calendar::empty(), Overrun::Continue).unwrap();
        let mut e = Engine::new(Arc::new(inputs));
        let reference = Reward::reference(&e.fork());
        e.run(&mut QueuePolicy::new(
            Heuristic::Fcfs,
            usize::MAX,
            Backfill::Easy,
        ))
        .unwrap();
        let energy = Reward {
            energy: 1.0,
            ..Reward::ZERO
        };
        assert!((energy.evaluate(&e, &reference) - 10.0 / 11.0).abs() < 1e-12);
        assert!((Reward::CU_PAPER.evaluate(&e, &reference) - 0.5).abs() < 1e-12);
    }
}
