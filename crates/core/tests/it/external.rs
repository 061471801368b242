//! Decisions from outside the engine (Python policies, agents): translation, validation, the
//! events since the last call, and the agent's decision points.

use std::sync::Arc;

use hpcsched_core::agent::{observe, CLUSTER_FEATURES, JOB_FEATURES};
use hpcsched_core::engine::DecisionPoint;
use hpcsched_core::sched::{translate, ExternalDecision};
use hpcsched_core::{Backfill, Calendar, Decision, Engine, Inputs, Machine, Overrun, Policy, View};

use crate::common::{fcfs_easy, run, table, Spec};

fn engine(nodes: u32, specs: &[Spec]) -> Engine {
    let inputs = Inputs::new(
        table(specs),
        Machine::new(nodes),
        Calendar::new(Vec::new(), 0.0).unwrap(),
        Overrun::Continue,
    )
    .unwrap();
    Engine::new(Arc::new(inputs))
}

/// A policy that answers with an external decision built from the view.
struct Outside<F: FnMut(&View) -> ExternalDecision + Send + Sync> {
    build: F,
    events: Vec<(f64, Vec<u32>, Vec<u32>)>,
}

impl<F: FnMut(&View) -> ExternalDecision + Send + Sync> Policy for Outside<F> {
    fn name(&self) -> String {
        "outside".into()
    }
    fn decide(&mut self, view: &View, decision: &mut Decision) {
        self.events.push((
            view.now,
            view.arrived.to_vec(),
            view.completed.iter().map(|c| c.0).collect(),
        ));
        let external = (self.build)(view);
        translate(view, &external, decision).unwrap();
    }
}

const SPECS: &[Spec] = &[
    (0.0, 100.0, 100.0, 2),
    (1.0, 50.0, 60.0, 4),
    (2.0, 30.0, 40.0, 1),
    (3.0, 500.0, 500.0, 2),
    (4.0, 10.0, 20.0, 1),
];

#[test]
fn an_fcfs_order_with_easy_is_the_built_in_fcfs_easy() {
    let built_in = run(4, SPECS, &mut fcfs_easy());
    let mut outside = Outside {
        build: |view: &View| ExternalDecision {
            order: Some(view.queue.to_vec()),
            backfill: Backfill::Easy,
            ..ExternalDecision::default()
        },
        events: Vec::new(),
    };
    let mut e = engine(4, SPECS);
    e.run(&mut outside).unwrap();
    assert_eq!(e.log().start, built_in.start);
    assert_eq!(e.log().start_kind, built_in.start_kind);
}

#[test]
fn exact_starts_and_the_events_since_the_last_call() {
    // Start whatever fits, smallest first, by hand.
    let mut outside = Outside {
        build: |view: &View| {
            let mut jobs: Vec<u32> = view.queue.to_vec();
            jobs.sort_by_key(|&j| view.jobs.get(j).nodes);
            let mut free = view.free;
            let start = jobs
                .into_iter()
                .filter(|&j| {
                    let n = view.jobs.get(j).nodes;
                    let fits = n <= free;
                    if fits {
                        free -= n;
                    }
                    fits
                })
                .collect();
            ExternalDecision {
                start,
                ..ExternalDecision::default()
            }
        },
        events: Vec::new(),
    };
    // 1 node: A (0..10), B arrives at 20 when nothing waits in between.
    let mut e = engine(1, &[(0.0, 10.0, 10.0, 1), (20.0, 5.0, 5.0, 1)]);
    e.record_events();
    e.run(&mut outside).unwrap();
    assert_eq!(e.log().start, vec![0.0, 20.0]);
    // at 10 A ends but nothing waits: no call; at 20 the call sees A's end and B's arrival
    assert_eq!(
        outside.events,
        vec![(0.0, vec![0], vec![]), (20.0, vec![1], vec![0])]
    );
}

#[test]
fn bad_external_decisions_name_the_job() {
    let mut e = engine(4, SPECS);
    assert!(e.advance_to(DecisionPoint::JobsAndNodes));
    let view = e.view();
    let mut d = Decision::default();
    let unknown = ExternalDecision {
        start: vec![3],
        ..ExternalDecision::default()
    };
    let err = translate(&view, &unknown, &mut d).unwrap_err().to_string();
    assert!(err.contains("job 4 (index 3) is not waiting"), "{err}");
    let twice = ExternalDecision {
        order: Some(vec![0, 0]),
        ..ExternalDecision::default()
    };
    assert!(translate(&view, &twice, &mut d)
        .unwrap_err()
        .to_string()
        .contains("twice"));
    let both = ExternalDecision {
        start: vec![0],
        order: Some(vec![0]),
        ..ExternalDecision::default()
    };
    assert!(translate(&view, &both, &mut d).is_err());
    // a job that does not fit: translation passes, the engine refuses it
    let mut e = engine(2, &[(0.0, 10.0, 10.0, 1), (0.0, 10.0, 10.0, 2)]);
    assert!(e.advance_to(DecisionPoint::JobsAndNodes));
    let both_jobs = ExternalDecision {
        start: vec![0, 1],
        ..ExternalDecision::default()
    };
    translate(&e.view(), &both_jobs, &mut d).unwrap();
    let err = e.apply_decision(&d).unwrap_err().to_string();
    assert!(
        err.contains("job 2 needs 2 nodes but only 1 are free"),
        "{err}"
    );
}

#[test]
fn decision_points_and_observations() {
    let mut e = engine(4, SPECS);
    let (mut jobs, mut cluster, mut mask) = (
        vec![0.0f32; 3 * JOB_FEATURES],
        vec![0.0f32; CLUSTER_FEATURES],
        vec![false; 3],
    );
    assert!(e.advance_to(DecisionPoint::JobsAndNodes));
    assert_eq!(e.now(), 0.0);
    observe(&e.view(), 3, &mut jobs, &mut cluster, &mut mask);
    assert_eq!(mask, vec![true, false, false]);
    // job 1: 100 s requested on 2 of 4 nodes, fits
    assert_eq!(
        &jobs[..JOB_FEATURES],
        &[
            0.0,
            100.0 / 3600.0,
            0.5,
            100.0 / 3600.0 * 0.5,
            1.0,
            1.0,
            0.0,
            1.0
        ]
    );
    assert_eq!(cluster[0], 1.0); // all free
                                 // start it, then the next decision point is t = 1 (job 2 arrives, 2 nodes free)
    let start = ExternalDecision {
        start: vec![0],
        ..ExternalDecision::default()
    };
    let mut d = Decision::default();
    translate(&e.view(), &start, &mut d).unwrap();
    e.apply_decision(&d).unwrap();
    assert!(e.advance_to(DecisionPoint::JobsAndNodes));
    assert_eq!(e.now(), 1.0);
    observe(&e.view(), 3, &mut jobs, &mut cluster, &mut mask);
    assert_eq!((cluster[0], cluster[1]), (0.5, 0.5));
    assert_eq!(jobs[4], 0.0); // job 2 needs 4 nodes: does not fit
}
