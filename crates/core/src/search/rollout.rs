//! The rollout planner (Bertsekas, Tsitsiklis and Wu, "Rollout algorithms for combinatorial
//! optimization", 1997): each distinct outcome of the decision is followed by each of a few
//! base orderings (heuristics with EASY) to the horizon, in each of several sampled futures;
//! an outcome is worth the best base ordering's mean return after it (the "superheuristic"
//! form), and the outcome worth most is taken.
//!
//! Against the tree search it trades depth of choice for precision: every outcome is valued by
//! the same base policy over the same futures (common random numbers), so a difference between
//! two outcomes is their own, not the noise of random rollouts. In the forward model the choice
//! is never worse than any base ordering's own (each base's outcome is among those valued).

use rayon::prelude::*;

use crate::engine::{DecisionPoint, Engine};
use crate::sched::{Decision, Policy, QueuePolicy};
use crate::search::action::{outcome_of, Action, Branch};
use crate::search::config::{RootChild, SearchConfig, SearchOutcome};
use crate::search::reward::{Reward, RootReference};
use crate::search::tree::rollout_return;

/// Values every branch of `branches` in each of `scenarios` futures (`root_of(k)` is the belief
/// engine of future k: the same decision point, only the sampled future differs) by taking it,
/// then each of the `bases` orderings with EASY until `config.depth` cycles have started jobs:
/// a branch is worth the highest of the bases' mean returns. Picks the branch worth most; ties
/// go to the first base's own outcome, then to the earliest branch.
pub fn rollout_search(
    root_of: &(dyn Fn(u32) -> Engine + Sync),
    scenarios: u32,
    branches: &[Branch],
    bases: &[Action],
    reward: Reward,
    config: &SearchConfig,
    pool: Option<&rayon::ThreadPool>,
) -> SearchOutcome {
    // One work item per (future, branch): the returns of its bases, in the bases' order.
    let value_item = |item: usize| -> Vec<f64> {
        if config.stop.raised() {
            return vec![0.0; bases.len()];
        }
        let (k, b) = (item / branches.len(), item % branches.len());
        let mut root = root_of(k as u32);
        let reference = reward.reference_of(&root);
        reference.set_marks(&mut root);
        let start = reward.evaluate(&root, &reference);
        bases
            .iter()
            .map(|base| {
                let mut engine = root.fork();
                base_return(
                    &mut engine,
                    &branches[b].decision,
                    &mut base.policy(),
                    reward,
                    &reference,
                    config,
                    start,
                )
            })
            .collect()
    };
    let items = scenarios as usize * branches.len();
    let values: Vec<Vec<f64>> = match pool {
        Some(pool) => pool.install(|| (0..items).into_par_iter().map(value_item).collect()),
        None => (0..items).map(value_item).collect(),
    };
    let mut children: Vec<RootChild> = branches
        .iter()
        .map(|b| RootChild {
            action: b.action,
            outcome: b.outcome.clone(),
            visits: u64::from(scenarios),
            value: 0.0,
        })
        .collect();
    // Summed in the futures' order: the same totals for any number of threads.
    let mut sums = vec![0.0; branches.len() * bases.len()];
    for (item, returns) in values.iter().enumerate() {
        let b = item % branches.len();
        for (sum, v) in sums[b * bases.len()..].iter_mut().zip(returns) {
            *sum += v;
        }
    }
    let futures = f64::from(scenarios.max(1));
    for (child, per_base) in children.iter_mut().zip(sums.chunks(bases.len().max(1))) {
        child.value = per_base.iter().fold(f64::NEG_INFINITY, |a, &b| a.max(b)) / futures;
    }
    let base_outcome = {
        let root = root_of(0);
        let mut decision = Decision::default();
        if let Some(first) = bases.first() {
            first.policy().decide(&root.view(), &mut decision);
        }
        outcome_of(&decision)
    };
    let preferred = |i: usize| children[i].outcome == base_outcome;
    let mut chosen = 0;
    for i in 1..children.len() {
        let (a, b) = (children[i].value, children[chosen].value);
        if a > b || (a == b && preferred(i) && !preferred(chosen)) {
            chosen = i;
        }
    }
    SearchOutcome {
        children,
        chosen,
        iterations: u64::from(scenarios) * (branches.len() * bases.len()) as u64,
    }
}

/// The highest of the `bases` orderings' returns after taking `first` at `root`'s decision
/// point (the rollout look-ahead's value of one outcome in one future).
pub(crate) fn best_base_return(
    root: &Engine,
    first: &Decision,
    bases: &[Action],
    reward: Reward,
    reference: &RootReference,
    config: &SearchConfig,
    start: f64,
) -> f64 {
    bases
        .iter()
        .map(|base| {
            base_return(
                &mut root.fork(),
                first,
                &mut base.policy(),
                reward,
                reference,
                config,
                start,
            )
        })
        .fold(f64::NEG_INFINITY, f64::max)
}

/// The return (Eq. 4) of taking `first` at `engine`'s decision point, then `policy` at every
/// later one, over `config.depth` cycles that start jobs; `start` is the reward at the root.
fn base_return(
    engine: &mut Engine,
    first: &Decision,
    policy: &mut QueuePolicy,
    reward: Reward,
    reference: &RootReference,
    config: &SearchConfig,
    start: f64,
) -> f64 {
    follow(
        engine,
        config.depth as usize,
        start,
        reward,
        reference,
        config.gamma,
        &mut Decision::default(),
        |engine, decision, cycle| {
            if cycle == 0 {
                decision.clone_from(first);
            } else {
                decision.clear();
                let view = engine.view();
                if !view.starts_nothing() {
                    policy.decide(&view, decision); // (else it decides nothing that matters)
                }
            }
        },
    )
}

/// A rollout from `engine`'s decision point (Eq. 4): at each cycle `decide(engine, decision,
/// cycle)` writes the decision, which is applied before the engine advances to the next
/// invocation with waiting jobs; until `remaining` cycles have started jobs, the events run
/// out, or a hard cap on cycles. `last` is the reward repeated when nothing is counted.
#[allow(clippy::too_many_arguments)]
pub(crate) fn follow(
    engine: &mut Engine,
    remaining: usize,
    mut last: f64,
    reward: Reward,
    reference: &RootReference,
    gamma: f64,
    decision: &mut Decision,
    mut decide: impl FnMut(&Engine, &mut Decision, usize),
) -> f64 {
    let mut rewards = Vec::with_capacity(remaining);
    let cap = 20 * remaining + 100; // hard cap on cycles, counted or not
    let mut cycles = 0;
    while rewards.len() < remaining && cycles < cap {
        decide(engine, decision, cycles);
        cycles += 1;
        engine
            .apply_decision(decision)
            .expect("an ordering's own decision is valid");
        let started = !decision.starts.is_empty();
        let terminal = !engine.advance_to(DecisionPoint::JobsWaiting);
        if started || terminal {
            last = reward.evaluate(engine, reference);
        }
        if started {
            rewards.push(last);
        }
        if terminal {
            break;
        }
    }
    let padding = remaining.saturating_sub(rewards.len());
    rollout_return(&rewards, last, padding, gamma)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Belief;
    use crate::sched::Heuristic;
    use crate::search::action::ActionSet;
    use crate::search::fixtures::drain_case;

    const FCFS: Action = Action {
        heuristic: Heuristic::Fcfs,
        window: 1,
    };
    const SJF: Action = Action {
        heuristic: Heuristic::Sjf,
        window: 256,
    };

    /// The CW reward of a mean wait of `seconds`.
    fn cw(seconds: f64) -> f64 {
        1.0 / (1.0 + seconds / 3600.0)
    }

    /// Eq. 4 written out (γ = 0.99, horizon 50): `rewards`, then the last repeated.
    fn discounted(rewards: &[f64]) -> f64 {
        let gamma: f64 = 0.99;
        let last = *rewards.last().unwrap();
        (0..50)
            .map(|i| gamma.powi(i) * rewards.get(i as usize).copied().unwrap_or(last))
            .sum::<f64>()
            * (1.0 - gamma)
    }

    /// The drain case (see `fixtures::drain_case`): at t = 20, one node is free; S1..S4
    /// (1 node, 36000 s, submitted at 10) and L (4 nodes, 360 s, submitted at 20) wait; three
    /// 1-node jobs run until 3600. Outcomes: start S1, or nothing.
    fn values(bases: &[Action]) -> (SearchOutcome, usize, usize) {
        let e = drain_case();
        let belief = Belief::from_view(&e.view()).unwrap();
        let branches = ActionSet::paper().outcomes(&belief.engine.view(), usize::MAX);
        let config = SearchConfig {
            trees: 1,
            ..SearchConfig::default()
        };
        let root = |_: u32| belief.engine.fork();
        let result = rollout_search(&root, 1, &branches, bases, Reward::CW, &config, None);
        let start = branches.iter().position(|b| !b.outcome.is_empty()).unwrap();
        let drain = branches.iter().position(|b| b.outcome.is_empty()).unwrap();
        (result, start, drain)
    }

    #[test]
    fn fcfs_after_each_outcome_by_hand() {
        let (result, start, drain) = values(&[FCFS]);
        // Start S1, then FCFS. At 3600 (first counted cycle's end): S1 waited 10 s, S2..S4
        // 3590 s and L 3580 s so far. S2..S4 start at 3600; at 36020 (S1 ends) L has waited
        // 36000 s. L starts at 39600, waits 39580 s, and the belief runs out.
        let start_value = discounted(&[
            cw((10.0 + 3.0 * 3590.0 + 3580.0) / 5.0),
            cw((10.0 + 3.0 * 3590.0 + 36000.0) / 5.0),
            cw((10.0 + 3.0 * 3590.0 + 39580.0) / 5.0),
        ]);
        // Start nothing, then FCFS: S1..S4 start at 3600 (3590 s each), L at 39600.
        let drain_value = discounted(&[cw((4.0 * 3590.0 + 39580.0) / 5.0)]);
        assert!((result.children[start].value - start_value).abs() < 1e-12);
        assert!((result.children[drain].value - drain_value).abs() < 1e-12);
        assert_eq!(result.chosen, start);
        assert_eq!(result.iterations, 2);
    }

    #[test]
    fn a_second_base_values_the_drain_by_its_best_continuation() {
        let (result, start, drain) = values(&[FCFS, SJF]);
        // After the drain, SJF starts L at 3600 (waited 3580 s) and S1..S4 at 3960 (3950 s
        // each): the same mean at both counted cycles. FCFS after the drain is worse, and SJF
        // after starting S1 waits for S1's end before L: FCFS's value stands for that branch.
        let drain_value = discounted(&[cw((3580.0 + 4.0 * 3950.0) / 5.0)]);
        assert!((result.children[drain].value - drain_value).abs() < 1e-12);
        let (fcfs_only, _, _) = values(&[FCFS]);
        assert_eq!(
            result.children[start].value,
            fcfs_only.children[start].value
        );
        assert_eq!(result.chosen, drain);
        assert_eq!(result.iterations, 4);
    }
}
