//! The search: P independent seeded trees (root parallelism), merged by outcome.

use std::time::Instant;

use rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use rayon::prelude::*;

use crate::engine::{Decision, Engine, Policy};
use crate::sched::QueuePolicy;
use crate::search::action::{ActionSet, Branch};
use crate::search::config::{Rollout, RootChild, SearchConfig, SearchOutcome};
use crate::search::reward::{Reward, RootReference};
use crate::search::rollout::{best_base_return, follow};
use crate::search::tree::{backup, rollout_return, select_child, Node, NO_PARENT};

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
    let reached = engine.advance_until(|engine| {
        let branches = {
            let view = engine.view();
            if view.queue.is_empty() || !view.has_room() || view.starts_nothing() {
                return false; // a single outcome that starts nothing
            }
            actions.outcomes(&view, 2)
        };
        if branches.len() >= 2 {
            return true;
        }
        if let Some(only) = branches.into_iter().next() {
            if !only.outcome.is_empty() {
                counted += 1;
                engine
                    .apply_decision(&only.decision)
                    .expect("an action's own decision is valid");
            }
        }
        false
    });
    let stop = if reached {
        Stop::Decision
    } else {
        Stop::Terminal
    };
    (stop, counted)
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
mod tests;
