use std::sync::Arc;

use hpcsched_core::{Calendar, Engine, Inputs, Machine, Overrun};

use crate::common::*;

/// A zero-length job started at 0 completes at 0; its completion is a new event at the same
/// instant, and the invocation that follows starts the job waiting behind it, still at 0.
#[test]
fn zero_runtime_jobs_free_their_nodes_at_the_same_instant() {
    let specs = [(0.0, 0.0, 10.0, 2), (0.0, 5.0, 5.0, 2)];
    let log = run(2, &specs, &mut fcfs_easy());
    assert_starts(&log, &[(0.0, P), (0.0, P)]);
    assert_eq!(log.end, vec![0.0, 5.0]);
    assert_eq!(log.event_times, 3); // 0 (submissions), 0 (zero-length completion), 5
}

#[test]
fn overrun_continue_runs_the_full_trace_time() {
    let specs = [(0.0, 200.0, 100.0, 4), (10.0, 50.0, 50.0, 4)];
    let log = run(4, &specs, &mut fcfs_easy());
    assert_eq!(log.end, vec![200.0, 250.0]);
    assert_eq!(log.killed, vec![false, false]);
}

#[test]
fn overrun_kill_ends_jobs_at_their_requested_time() {
    let specs = [(0.0, 200.0, 100.0, 4), (10.0, 50.0, 50.0, 4)];
    let log = run_with(4, &specs, Vec::new(), 0.0, Overrun::Kill, &mut fcfs_easy());
    assert_eq!(log.start, vec![0.0, 100.0]);
    assert_eq!(log.end, vec![100.0, 150.0]);
    assert_eq!(log.killed, vec![true, false]);
}

#[test]
fn jobs_larger_than_the_machine_are_rejected() {
    let err = Inputs::new(
        table(&[(0.0, 1.0, 1.0, 5)]),
        Machine::new(4),
        Calendar::empty(),
        Overrun::Continue,
    )
    .unwrap_err();
    assert!(err.to_string().contains("more than the machine"), "{err}");
}

/// `run_until` in slices gives the same schedule as one `run`.
#[test]
fn running_in_slices_changes_nothing() {
    let specs: Vec<Spec> = (0..200)
        .map(|i| {
            let i = i as f64;
            (
                i * 7.0,
                (i * 37.0) % 113.0,
                (i * 53.0) % 150.0 + 1.0,
                1 + (i as u32 * 7) % 8,
            )
        })
        .collect();
    let whole = run(8, &specs, &mut fcfs_easy());
    let inputs = Inputs::new(
        table(&specs),
        Machine::new(8),
        Calendar::empty(),
        Overrun::Continue,
    )
    .unwrap();
    let mut engine = Engine::new(Arc::new(inputs));
    let mut policy = fcfs_easy();
    let mut t = 0.0;
    while engine.peek().is_some() {
        t += 97.0;
        engine.run_until(t, &mut policy).unwrap();
    }
    assert_eq!(engine.log().start, whole.start);
    assert_eq!(engine.log().end, whole.end);
}

/// A clone of the state taken mid-run continues exactly like the original: the state holds
/// everything that changes, and the shared inputs everything else.
#[test]
fn a_cloned_state_continues_like_the_original() {
    let specs: Vec<Spec> = (0..300)
        .map(|i| {
            let i = i as f64;
            (
                i * 5.0,
                (i * 41.0) % 97.0,
                (i * 29.0) % 130.0 + 1.0,
                1 + (i as u32 * 5) % 8,
            )
        })
        .collect();
    let inputs = Arc::new(
        Inputs::new(
            table(&specs),
            Machine::new(8),
            Calendar::empty(),
            Overrun::Continue,
        )
        .unwrap(),
    );
    let mut original = Engine::new(Arc::clone(&inputs));
    let mut policy = fcfs_easy();
    original.run_until(700.0, &mut policy).unwrap();
    let mut fork = Engine::with_state(Arc::clone(&inputs), original.state().clone());
    original.run(&mut policy).unwrap();
    fork.run(&mut fcfs_easy()).unwrap();
    let (a, b) = (original.log(), fork.log());
    let mut compared = 0;
    for j in 0..specs.len() {
        if !b.start[j].is_nan() {
            assert_eq!(a.start[j], b.start[j], "job {j}");
            assert_eq!(a.end[j], b.end[j], "job {j}");
            compared += 1;
        }
    }
    assert!(compared > 100, "the fork started {compared} jobs");
}
