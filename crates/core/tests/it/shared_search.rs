//! Look-ahead search where jobs share nodes (`engine::belief`, `search::policy`): MARS's
//! forward model carries each node's free resources and each running job's allocation, on a
//! site of two partitions, and decides a drain of one partition while the other runs.

use std::sync::Arc;

use crate::common::*;
use crate::shared::{job, node_sets, placements, shared, Shaped};
use hpcsched_core::model::{OverLimits, PartitionSpec};
use hpcsched_core::search::{build_search_policy, Reward, SearchConfig, SearchOptions};
use hpcsched_core::{
    Belief, Calendar, Engine, Inputs, Machine, Overrun, Policy, RunLog, StartKind,
};

/// Partition a = node 0, b = node 1 (4 CPUs, 8000 MB each). In a: three 1-CPU jobs run
/// until 3600; at 10 four 10-hour 1-CPU jobs and a short 4-CPU job L arrive. In b: a 2-CPU
/// job arrives at 10 and a 4-CPU one at 20.
fn site_jobs() -> (Vec<Shaped>, Vec<u32>) {
    let mut jobs: Vec<Shaped> = vec![(0.0, 3600.0, job(1, 1000, 0)); 3];
    jobs.extend(vec![(10.0, 36000.0, job(1, 1000, 0)); 4]);
    jobs.push((10.0, 360.0, job(4, 4000, 0)));
    jobs.push((10.0, 100.0, job(2, 1000, 0)));
    jobs.push((20.0, 50.0, job(4, 1000, 0)));
    let partition = vec![0, 0, 0, 0, 0, 0, 0, 0, 1, 1];
    (jobs, partition)
}

fn site_inputs(jobs: &[Shaped], partition: &[u32]) -> Inputs {
    let offsets: Vec<u32> = (0..=jobs.len() as u32).collect();
    crate::shared::inputs(2, jobs)
        .with_site(
            vec![
                PartitionSpec::new("a", &[(0, 1)]),
                PartitionSpec::new("b", &[(1, 2)]),
            ],
            OverLimits::Reject,
            offsets,
            partition.to_vec(),
        )
        .unwrap()
        .with_shared_nodes(shared(2, jobs, node_sets(&[&[0], &[1]])))
        .unwrap()
}

fn mars_cw() -> Box<dyn Policy> {
    build_search_policy(
        "mars",
        &SearchOptions {
            actions: "paper".into(),
            reward: Reward::CW,
            config: SearchConfig {
                iterations: Some(64),
                trees: 2,
                seed: 3,
                ..SearchConfig::default()
            },
            model: Default::default(),
            threads: 1,
        },
    )
    .unwrap()
}

fn run(policy: &mut dyn Policy) -> RunLog {
    let (jobs, partition) = site_jobs();
    run_inputs(site_inputs(&jobs, &partition), policy)
}

/// FCFS+EASY gives a's free CPU to a long job at 10 and the three others as the short jobs
/// end at 3600, and L waits for them all (39600). MARS-CW
/// leaves that CPU idle (a drain of partition a: no heuristic would) and starts L at 3600 on
/// the four CPUs of node 0, the long jobs after it at 3960; in b the 2-CPU job starts at 10 in
/// every outcome, the 4-CPU one at 110.
#[test]
fn mars_drains_one_partition_of_shared_nodes_while_the_other_runs() {
    let greedy = run(&mut fcfs_easy());
    assert_eq!(greedy.start[3], 10.0);
    assert_eq!(greedy.start[7], 39600.0);
    let log = run(&mut *mars_cw());
    assert_eq!(log.start[7], 3600.0);
    assert_eq!(log.start_kind[7], StartKind::Drain);
    assert_eq!(&log.start[3..7], &[3960.0; 4]);
    assert_eq!((log.start[8], log.start[9]), (10.0, 110.0));
    assert_eq!(log.start_kind[8], StartKind::Primary); // b was not drained
    assert_eq!(&log.start_kind[..3], &[StartKind::Primary; 3]); // t = 0: one outcome
    let placed = placements(&log, 10);
    assert_eq!(placed[7], [(0, 4, 4000, 0)]);
    assert_eq!(placed[9], [(1, 4, 1000, 0)]);
    let mean = |l: &RunLog| {
        let (jobs, _) = site_jobs();
        (jobs.iter().zip(&l.start))
            .map(|(j, s)| s - j.0)
            .sum::<f64>()
            / jobs.len() as f64
    };
    assert!(mean(&log) < mean(&greedy));
}

/// The belief at a decision point is the engine's own state where jobs share nodes: run to
/// the end under FCFS+EASY, it gives exactly the real run's starts and nodes (every run time
/// is its request here).
#[test]
fn the_belief_of_shared_nodes_runs_on_as_the_engine_does() {
    let (jobs, partition) = site_jobs();
    let inputs = Arc::new(site_inputs(&jobs, &partition));
    let mut real = Engine::new(Arc::clone(&inputs));
    let mut policy = fcfs_easy();
    // to t = 20: J0-J2 and J3 hold node 0, J8 node 1; J9 arrives
    for _ in 0..3 {
        real.step(&mut policy).unwrap();
    }
    assert_eq!(real.now(), 20.0);
    let belief = Belief::from_view(&real.view()).unwrap();
    // (the nodes some job holds part of: none free of a's, b's held by J8)
    assert_eq!(belief.engine.view().free, real.view().free);
    let index = belief.real_index.clone();
    // (a belief's own log keeps counters only: the same state under a recording engine)
    let mut recording = Engine::with_state(
        Arc::clone(belief.engine.inputs()),
        belief.engine.state().clone(),
    );
    recording.run(&mut fcfs_easy()).unwrap();
    let log = recording.into_log();
    let mut whole = Engine::new(inputs);
    whole.run(&mut fcfs_easy()).unwrap();
    let full = whole.into_log();
    assert!(index.len() >= 6 && log.start.iter().filter(|s| s.is_finite()).count() >= 5);
    for (b, &r) in index.iter().enumerate() {
        if log.start[b].is_finite() {
            assert_eq!(log.start[b], full.start[r as usize], "job {r}");
        }
    }
    let mine = placements(&log, index.len());
    let theirs = placements(&full, jobs.len());
    for (b, &r) in index.iter().enumerate() {
        if !mine[b].is_empty() {
            assert_eq!(mine[b], theirs[r as usize], "job {r}");
        }
    }
}

/// The utilization terms count CPUs where jobs share nodes: a 2-CPU job on a node of 4 for
/// 100 s of a 200 s horizon is a quarter of the horizon's CPU-seconds (a half of its
/// node-seconds), and half of the CPU-seconds since the root, at the root (2 of 4 busy) as
/// after its end.
#[test]
fn utilization_rewards_count_cpus_where_jobs_share_nodes() {
    let jobs = [
        (0.0, 100.0, job(2, 1000, 0)),
        (200.0, 10.0, job(1, 1000, 0)),
    ];
    let mut engine = Engine::new(Arc::new(crate::shared::shared_inputs(1, &jobs)));
    engine.step(&mut fcfs_easy()).unwrap(); // t = 0: the job starts
    let term = |k: usize| {
        let mut w = [0.0; 8];
        w[k] = 1.0;
        Reward::from_weights(w, 200.0)
    };
    let (horizon, since) = (term(2), term(5));
    let (at_horizon, at_since) = (horizon.reference_of(&engine), since.reference_of(&engine));
    assert_eq!(horizon.evaluate(&engine, &at_horizon), 0.25);
    assert_eq!(since.evaluate(&engine, &at_since), 0.5);
    engine.step(&mut fcfs_easy()).unwrap(); // t = 100: it ends
    assert_eq!(engine.now(), 100.0);
    assert_eq!(horizon.evaluate(&engine, &at_horizon), 0.25);
    assert_eq!(since.evaluate(&engine, &at_since), 0.5);
    // nothing runs from 100 to the next job at 200: 200 of 800 CPU-seconds
    engine.step(&mut fcfs_easy()).unwrap();
    assert_eq!(engine.now(), 200.0);
    assert_eq!(since.evaluate(&engine, &at_since), 0.25);
    // a horizon from 200 (J1 started, 1 CPU until 210) to 400, over this engine's totals
    // since 0 (a look-ahead's belief starts its own at its root): 200 + 10 of 800 + 800
    let later = horizon.reference_of(&engine);
    assert_eq!(horizon.evaluate(&engine, &later), 210.0 / 1600.0);
}

/// On whole nodes the same term counts nodes: a 2-node job on 4 is half the machine at the
/// root.
#[test]
fn on_whole_nodes_the_utilization_at_the_root_counts_nodes() {
    let inputs = hpcsched_core::Inputs::new(
        table(&[(0.0, 100.0, 100.0, 2)]),
        Machine::new(4),
        Calendar::empty(),
        Overrun::Continue,
    )
    .unwrap();
    let mut engine = Engine::new(Arc::new(inputs));
    engine.step(&mut fcfs_easy()).unwrap();
    let mut w = [0.0; 8];
    w[5] = 1.0;
    let since = Reward::from_weights(w, 200.0);
    let root = since.reference_of(&engine);
    assert_eq!(since.evaluate(&engine, &root), 0.5);
}

/// The CPUs up leave out a node while a window has it down: 2 nodes of 4 CPUs, J0 (2 CPUs)
/// over [0, 300), node 1 down over [100, 200): 600 CPU-seconds held of 8 x 100 + 4 x 100 +
/// 8 x 100 = 2,000 up.
#[test]
fn the_cpus_up_leave_out_the_nodes_down() {
    use hpcsched_core::{Calendar, Downtime, DowntimeKind};
    let jobs = [
        (0.0, 300.0, job(2, 1000, 0)),
        (300.0, 10.0, job(1, 1000, 0)),
    ];
    let window = Downtime {
        start: 100.0,
        end: 200.0,
        kind: DowntimeKind::Unscheduled,
        nodes: Some(1),
        back_asleep: false,
        partition: None,
        range: Some((1, 2)),
    };
    let inputs = crate::shared::inputs_under(2, &jobs, Calendar::new(vec![window], 0.0).unwrap())
        .with_shared_nodes(shared(2, &jobs, crate::shared::all_nodes(2)))
        .unwrap();
    let mut engine = Engine::new(Arc::new(inputs));
    let mut fcfs = fcfs_easy();
    engine.step(&mut fcfs).unwrap(); // t = 0
    let mut w = [0.0; 8];
    w[5] = 1.0;
    let since = Reward::from_weights(w, 200.0);
    let root = since.reference_of(&engine);
    assert_eq!(since.evaluate(&engine, &root), 0.25); // 2 of 8 CPUs at the root
    while engine.now() < 300.0 {
        engine.step(&mut fcfs).unwrap();
    }
    assert_eq!(engine.now(), 300.0);
    assert_eq!(since.evaluate(&engine, &root), 0.3);
}

/// A sampled future where jobs share nodes: run times and ends drawn are taken; arrivals are
/// refused (their requests are not known).
#[test]
fn a_scenario_without_arrivals_builds_and_one_with_arrivals_is_refused() {
    let (jobs, partition) = site_jobs();
    let mut real = Engine::new(Arc::new(site_inputs(&jobs, &partition)));
    let mut policy = fcfs_easy();
    for _ in 0..2 {
        real.step(&mut policy).unwrap();
    }
    let view = real.view();
    let drawn = hpcsched_core::Scenario {
        queued_run_time: vec![10.0; view.queue.len()],
        running_end: vec![view.now + 5.0; view.running.len()],
        arrivals: Vec::new(),
    };
    let belief = Belief::from_scenario(&view, &drawn).unwrap();
    assert_eq!(belief.engine.view().queue.len(), view.queue.len());
    let arriving = hpcsched_core::Scenario {
        arrivals: vec![hpcsched_core::Job {
            id: -1,
            submit: view.now + 1.0,
            run_time: 10.0,
            requested_time: 10.0,
            nodes: 1,
        }],
        ..drawn
    };
    let refused = Belief::from_scenario(&view, &arriving)
        .err()
        .unwrap()
        .to_string();
    assert!(refused.contains("future arrivals on"), "{refused}");
}

/// On whole nodes the horizon's capacity leaves out the nodes down: 4 nodes, 2 of them down
/// over [0, 1000), a 2-node job over [0, 100): the machine up is fully used to 100.
#[test]
fn on_whole_nodes_the_horizon_counts_the_nodes_up() {
    use hpcsched_core::{Downtime, DowntimeKind};
    let window = Downtime {
        start: 0.0,
        end: 1000.0,
        kind: DowntimeKind::Unscheduled,
        nodes: Some(2),
        back_asleep: false,
        partition: None,
        range: None,
    };
    let inputs = hpcsched_core::Inputs::new(
        table(&[(0.0, 100.0, 100.0, 2)]),
        Machine::new(4),
        Calendar::new(vec![window], 0.0).unwrap(),
        Overrun::Continue,
    )
    .unwrap();
    let mut engine = Engine::new(Arc::new(inputs));
    engine.step(&mut fcfs_easy()).unwrap();
    let mut w = [0.0; 8];
    w[2] = 1.0;
    let horizon = Reward::from_weights(w, 100.0);
    let root = horizon.reference_of(&engine);
    assert_eq!(horizon.evaluate(&engine, &root), 1.0);
}

/// A belief's free nodes are those no job holds any part of: J0 (2 CPUs) holds node 0 of 2.
#[test]
fn a_beliefs_free_nodes_are_those_no_job_holds() {
    let jobs = vec![(0.0, 100.0, job(2, 1000, 0))];
    let mut engine = Engine::new(Arc::new(crate::shared::shared_inputs(2, &jobs)));
    engine.step(&mut fcfs_easy()).unwrap();
    assert_eq!(engine.view().free, 1);
    let belief = Belief::from_view(&engine.view()).unwrap();
    assert_eq!(belief.engine.view().free, 1);
}
