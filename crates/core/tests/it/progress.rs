//! A run always ends: nodes that wake at once are woken, and a run where jobs wait with only
//! timers left is stopped with an error instead of advancing time for ever.

use std::sync::Arc;

use hpcsched_core::engine::STALLED_CALLS;
use hpcsched_core::model::PowerModel;
use hpcsched_core::power::config::{manager_config, IconConfig};
use hpcsched_core::sched::build_policy;
use hpcsched_core::{
    Calendar, CoreError, Decision, Engine, Inputs, Machine, Overrun, Policy, View,
};

use crate::common::{table, Spec};

fn instant_wake() -> PowerModel {
    PowerModel {
        computing_w: 100.0,
        idle_w: 10.0,
        sleeping_w: 1.0,
        switching_on_w: 20.0,
        switching_off_w: 20.0,
        switch_on_s: 0.0,
        switch_on_std_s: 0.0,
        switch_off_s: 40.0,
        switch_off_std_s: 0.0,
    }
}

/// Nodes asleep since t = 140 (idle timeout 100 s, 40 s to switch off): a job needing both at
/// t = 1000 wakes them at once and starts then, under IPM with FCFS and EASY. (Before, the
/// EASY wake plan never woke a node planned for now, and time grew by timers for ever.)
#[test]
fn nodes_that_wake_at_once_are_woken_for_the_job_that_needs_them() {
    let specs: &[Spec] = &[
        (0.0, 10.0, 10.0, 1),
        (1000.0, 10.0, 10.0, 2),
        (1001.0, 5.0, 5.0, 1),
    ];
    for policy in ["fcfs", "sjf"] {
        let machine = Machine {
            nodes: 2,
            power: Some(instant_wake()),
        };
        let config = manager_config("ipm", 100.0, IconConfig::default()).unwrap();
        let inputs = Inputs::new(
            table(specs),
            machine,
            Calendar::new(Vec::new(), 0.0).unwrap(),
            Overrun::Continue,
        )
        .unwrap()
        .with_manager(config, None)
        .unwrap();
        let mut engine = Engine::new(Arc::new(inputs));
        let mut built = build_policy(policy, None, "easy").unwrap();
        engine.run(built.as_mut()).unwrap();
        let log = engine.into_log();
        assert_eq!(log.start, vec![0.0, 1000.0, 1010.0], "{policy}");
    }
}

/// Starts nothing and asks to be called back in half an hour, for ever.
struct Procrastinator;

impl Policy for Procrastinator {
    fn name(&self) -> String {
        "procrastinator".into()
    }
    fn decide(&mut self, view: &View, decision: &mut Decision) {
        decision.timers.push(view.now + 1800.0);
    }
}

#[test]
fn a_run_with_jobs_waiting_and_only_timers_left_stops_with_the_cause() {
    let inputs = Inputs::new(
        table(&[(0.0, 10.0, 10.0, 1), (5.0, 10.0, 10.0, 2)]),
        Machine::new(4),
        Calendar::new(Vec::new(), 0.0).unwrap(),
        Overrun::Continue,
    )
    .unwrap();
    let mut engine = Engine::new(Arc::new(inputs));
    let err = engine.run(&mut Procrastinator).unwrap_err();
    let CoreError::InvalidInput { reason, .. } = err else {
        panic!("an input error, not {err:?}");
    };
    assert!(reason.contains("cannot go on"), "{reason}");
    assert!(
        reason.contains("2 jobs wait (the first, job 1, needs 1 of 4"),
        "{reason}"
    );
    // the first call at t = 0, the second at 5, then every timer: the guard counts the calls
    // after the last submission
    assert_eq!(engine.log().invocations, 1 + u64::from(STALLED_CALLS));
}

/// A policy that waits on timers while something may still happen is not stopped: the same
/// procrastinator with a job running for longer than the guard's calls span.
#[test]
fn timers_while_a_job_runs_are_not_a_stall() {
    struct UntilLate;
    impl Policy for UntilLate {
        fn name(&self) -> String {
            "until-late".into()
        }
        fn decide(&mut self, view: &View, decision: &mut Decision) {
            // starts the long job at once, the other only after it ends
            if view.now == 0.0 || view.running.is_empty() {
                decision.starts.push(hpcsched_core::Start {
                    pos: 0,
                    job: view.queue[0],
                    kind: hpcsched_core::StartKind::Primary,
                });
            } else {
                decision.timers.push(view.now + 1.0);
            }
        }
    }
    let long = 3.0 * f64::from(STALLED_CALLS);
    let inputs = Inputs::new(
        table(&[(0.0, long, long, 4), (1.0, 10.0, 10.0, 1)]),
        Machine::new(4),
        Calendar::new(Vec::new(), 0.0).unwrap(),
        Overrun::Continue,
    )
    .unwrap();
    let mut engine = Engine::new(Arc::new(inputs));
    engine.run(&mut UntilLate).unwrap();
    assert_eq!(engine.log().start, vec![0.0, long]);
}
