//! Outside policies and agents where jobs share nodes (`sched::external`, `sched::shared::
//! named`, `agent`): named starts placed by the rule, among named nodes, orders scanned on
//! vectors, where each job fits alone, and the agent's features in CPUs. One node of 4 CPUs,
//! 8000 MB and 2 GPUs: J0 (1 CPU) runs; J1 (4 CPUs) and J2 (1 CPU, 1 GPU) wait.

use std::sync::Arc;

use crate::common::*;
use crate::shared::{job, shared_inputs, Shaped};
use hpcsched_core::agent::{observe, CLUSTER_FEATURES, JOB_FEATURES};
use hpcsched_core::sched::shared::SharedScan;
use hpcsched_core::sched::{translate, ExternalDecision};
use hpcsched_core::{Decision, Engine};

fn jobs() -> Vec<Shaped> {
    vec![
        (0.0, 100.0, job(1, 2000, 0)),
        (0.0, 100.0, job(4, 1000, 0)),
        (0.0, 50.0, job(1, 1000, 1)),
    ]
}

/// The engine at t = 0 with J0 started by an outside decision, J1 and J2 waiting.
fn engine() -> Engine {
    let mut engine = Engine::new(Arc::new(shared_inputs(1, &jobs())));
    assert!(engine.advance());
    let external = ExternalDecision {
        start: vec![0],
        ..ExternalDecision::default()
    };
    let mut decision = Decision::default();
    translate(&engine.view(), &external, &mut decision).unwrap();
    engine.apply_decision(&decision).unwrap();
    assert_eq!(engine.view().queue, &[1, 2]);
    engine
}

fn decide(engine: &Engine, external: ExternalDecision) -> Result<Decision, String> {
    let mut decision = Decision::default();
    translate(&engine.view(), &external, &mut decision).map_err(|e| e.to_string())?;
    Ok(decision)
}

#[test]
fn named_starts_are_placed_by_the_rule_and_refused_where_they_do_not_fit() {
    let e = engine();
    let fits = decide(
        &e,
        ExternalDecision {
            start: vec![2],
            nodes: vec![(2, vec![0])],
            ..ExternalDecision::default()
        },
    )
    .unwrap();
    assert_eq!(fits.starts.len(), 1);
    assert_eq!(fits.allocations[0].nodes, [0]);
    assert_eq!(fits.allocations[0].cpus, [1]);
    assert_eq!(fits.allocations[0].gres, [1]);
    let err = decide(
        &e,
        ExternalDecision {
            start: vec![1],
            ..ExternalDecision::default()
        },
    )
    .unwrap_err();
    assert!(
        err.contains("job 2 fits in none of its partitions now"),
        "{err}"
    );
    assert!(!err.contains("among"), "{err}");
    // two starts: each sees what the one before it took (J2 then J1: 2 CPUs left)
    let err = decide(
        &e,
        ExternalDecision {
            start: vec![2, 1],
            ..ExternalDecision::default()
        },
    )
    .unwrap_err();
    assert!(err.contains("job 2 fits"), "{err}");
    // J1 names no nodes (J2 does): its refusal does not speak of named nodes
    let err = decide(
        &e,
        ExternalDecision {
            start: vec![2, 1],
            nodes: vec![(2, vec![0])],
            ..ExternalDecision::default()
        },
    )
    .unwrap_err();
    assert!(
        err.contains("job 2 fits") && !err.contains("among"),
        "{err}"
    );
    let err = decide(
        &e,
        ExternalDecision {
            start: vec![2],
            nodes: vec![(2, vec![1])],
            ..ExternalDecision::default()
        },
    )
    .unwrap_err();
    assert!(err.contains("given node 1 of a machine of 1"), "{err}");
    let err = decide(
        &e,
        ExternalDecision {
            start: vec![2],
            nodes: vec![(1, vec![0])],
            ..ExternalDecision::default()
        },
    )
    .unwrap_err();
    assert!(err.contains("does not start"), "{err}");
}

#[test]
fn an_order_runs_the_shared_scan_and_fits_alone_says_where_each_job_would_go() {
    let e = engine();
    // J1 first: it does not fit and is reserved at 100; J2 ends at 50, before: backfilled
    let ordered = decide(
        &e,
        ExternalDecision {
            order: Some(vec![1, 2]),
            ..ExternalDecision::default()
        },
    )
    .unwrap();
    assert_eq!(ordered.starts.len(), 1);
    assert_eq!(ordered.starts[0].job, 2);
    assert_eq!(ordered.starts[0].kind, B);
    assert_eq!(ordered.reservation.unwrap().shadow_time, 100.0);
    let fits = SharedScan::default().fits_alone(&e.view(), 10);
    assert_eq!(fits.len(), 2);
    assert!(fits[0].is_none());
    assert_eq!(fits[1].as_ref().unwrap().nodes, [0]);
    assert_eq!(SharedScan::default().fits_alone(&e.view(), 1).len(), 1);
}

#[test]
fn agent_features_speak_of_cpus_where_jobs_share_nodes() {
    let e = engine();
    let slots = 4;
    let mut jobs = vec![0.0f32; slots * JOB_FEATURES];
    let mut cluster = vec![0.0f32; CLUSTER_FEATURES];
    let mut mask = vec![false; slots];
    observe(&e.view(), slots, &mut jobs, &mut cluster, &mut mask);
    assert_eq!(mask, [true, true, false, false]);
    let slot = |k: usize| &jobs[k * JOB_FEATURES..(k + 1) * JOB_FEATURES];
    // J1: 4 of 4 CPUs, 100 s; does not fit now (3 CPUs free)
    assert_eq!(slot(0)[2], 1.0);
    assert_eq!(slot(0)[3], (100.0f64 / 3600.0) as f32);
    assert_eq!(slot(0)[4], 0.0);
    // J2: 1 of 4 CPUs, 50 s; fits
    assert_eq!(slot(1)[2], 0.25);
    assert_eq!(slot(1)[3], (50.0f64 / 3600.0 * 0.25) as f32);
    assert_eq!(slot(1)[4], 1.0);
    // the cluster: 3 of 4 CPUs free, 1 busy
    assert_eq!((cluster[0], cluster[1]), (0.75, 0.25));
}

/// A driver's decision point where jobs share nodes is an instant with jobs waiting and a node
/// with a free CPU, even when no node is free: J0 (2 of 4 CPUs) runs from 0; J1 (1 CPU)
/// arrives at 10, J2 (4 CPUs) at 20 behind it; J1 starts at 10 on the free CPUs; then
/// nothing has room until J0 and J1 end.
#[test]
fn a_decision_point_is_where_a_node_has_a_free_cpu() {
    use hpcsched_core::engine::DecisionPoint;
    let jobs = vec![
        (0.0, 100.0, job(2, 1000, 0)),
        (10.0, 30.0, job(1, 1000, 0)),
        (20.0, 10.0, job(4, 1000, 0)),
    ];
    let mut engine = Engine::new(Arc::new(shared_inputs(1, &jobs)));
    let mut fcfs = fcfs_easy();
    engine.step(&mut fcfs).unwrap(); // t = 0: J0 starts
    assert!(engine.advance_to(DecisionPoint::JobsAndNodes));
    assert_eq!(engine.now(), 10.0); // no free node, two free CPUs
    engine.invoke(&mut fcfs).unwrap(); // J1 starts
                                       // t = 20: J2 waits and one CPU is free (room, though J2 cannot use it)
    assert!(engine.advance_to(DecisionPoint::JobsAndNodes));
    assert_eq!(engine.now(), 20.0);
    engine.invoke(&mut fcfs).unwrap();
    // t = 40: J1 ends (two CPUs free) and J2 still waits: the next point
    assert!(engine.advance_to(DecisionPoint::JobsAndNodes));
    assert_eq!(engine.now(), 40.0);
    engine.invoke(&mut fcfs).unwrap();
    // t = 100: J0 ends and J2 starts; then no job waits: no point left
    assert!(engine.advance_to(DecisionPoint::JobsAndNodes));
    assert_eq!(engine.now(), 100.0);
    engine.invoke(&mut fcfs).unwrap();
    assert!(!engine.advance_to(DecisionPoint::JobsAndNodes));
}

/// A named start keeps off an announced maintenance it would run into: node 0 goes down at
/// 30 (announced), and J (1 CPU, 50 s) named at 0 would still run then: refused; a 20 s one
/// fits before it.
#[test]
fn a_named_start_may_not_run_into_an_announced_window() {
    use hpcsched_core::{Calendar, Downtime, DowntimeKind};
    let jobs = vec![(0.0, 50.0, job(1, 1000, 0)), (0.0, 20.0, job(1, 1000, 0))];
    let window = Downtime {
        start: 30.0,
        end: 60.0,
        kind: DowntimeKind::Scheduled,
        nodes: Some(1),
        back_asleep: false,
        partition: None,
        range: Some((0, 1)),
    };
    let calendar = Calendar::new(vec![window], 1000.0).unwrap();
    let inputs = crate::shared::inputs_under(1, &jobs, calendar)
        .with_shared_nodes(crate::shared::shared(1, &jobs, crate::shared::all_nodes(1)))
        .unwrap();
    let mut engine = Engine::new(Arc::new(inputs));
    assert!(engine.advance());
    let long = decide(
        &engine,
        ExternalDecision {
            start: vec![0],
            ..ExternalDecision::default()
        },
    );
    assert!(long
        .unwrap_err()
        .contains("fits in none of its partitions now"));
    let short = decide(
        &engine,
        ExternalDecision {
            start: vec![1],
            ..ExternalDecision::default()
        },
    );
    assert_eq!(short.unwrap().starts.len(), 1);
    let alone = SharedScan::default().fits_alone(&engine.view(), 10);
    assert!(alone[0].is_none() && alone[1].is_some());
}

/// Named nodes past the first word of the bit sets: 72 nodes; J0 named to node 70 goes
/// there, J1 named to 71 there, J2 named to none where the rule puts it on the whole machine
/// (70, the first of the fullest that cover it), recorded as backfilled as the decision says.
#[test]
fn named_nodes_anywhere_on_the_machine_place_the_job_among_them() {
    let jobs = vec![
        (0.0, 10.0, job(1, 1000, 0)),
        (0.0, 10.0, job(1, 1000, 0)),
        (0.0, 10.0, job(1, 1000, 0)),
    ];
    let mut engine = Engine::new(Arc::new(shared_inputs(72, &jobs)));
    assert!(engine.advance());
    let decision = decide(
        &engine,
        ExternalDecision {
            start: vec![0, 1],
            backfilled: vec![2],
            nodes: vec![(0, vec![70]), (1, vec![71])],
            ..ExternalDecision::default()
        },
    )
    .unwrap();
    let nodes: Vec<Vec<u32>> = decision
        .allocations
        .iter()
        .map(|a| a.nodes.clone())
        .collect();
    assert_eq!(nodes, [vec![70], vec![71], vec![70]]);
    let kinds: Vec<_> = decision.starts.iter().map(|s| s.kind).collect();
    assert_eq!(kinds, [P, P, B]);
}

/// No decision point while no CPU is free: J0 takes all 4 CPUs from 0; J1 (1 CPU) waits from
/// 10; the next point is J0's end at 100.
#[test]
fn no_decision_point_while_every_cpu_is_taken() {
    use hpcsched_core::engine::DecisionPoint;
    let jobs = vec![(0.0, 100.0, job(4, 1000, 0)), (10.0, 10.0, job(1, 1000, 0))];
    let mut engine = Engine::new(Arc::new(shared_inputs(1, &jobs)));
    engine.step(&mut fcfs_easy()).unwrap();
    assert!(engine.advance_to(DecisionPoint::JobsAndNodes));
    assert_eq!(engine.now(), 100.0);
}
