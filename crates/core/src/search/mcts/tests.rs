//! The tree search on hand-built decision points.

use std::sync::Arc;

use super::*;
use crate::engine::{Belief, Inputs};
use crate::model::{Calendar, Downtime, DowntimeKind, Job, JobTable, Machine, Overrun};
use crate::sched::{Backfill, Heuristic, QueuePolicy};
use crate::search::action::Action;
use crate::search::fixtures::{drain_case, engine, engine_with};

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
        partition: None,
        range: None,
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
