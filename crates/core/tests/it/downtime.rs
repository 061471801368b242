use hpcsched_core::{DowntimeKind, Overrun};

use crate::common::*;

const S: DowntimeKind = DowntimeKind::Scheduled;
const U: DowntimeKind = DowntimeKind::Unscheduled;

/// 4 nodes; whole-machine maintenance [1000, 2000) announced 500 s ahead (at 500).
/// - J2 starts at 450 although it requests past 1000: the window is not announced yet.
/// - J3 (est. end 1100) is ineligible after the announcement: skipped, it does not block J4.
/// - J5 (est. end exactly 1000) may start, overruns, is killed at 1000 and requeued at the
///   front of the queue, ahead of J3 (submitted earlier), and restarts from scratch at 2000.
#[test]
fn scheduled_maintenance_announces_skips_kills_and_requeues() {
    let specs = [
        (0.0, 300.0, 400.0, 4),
        (450.0, 100.0, 2000.0, 1),
        (600.0, 500.0, 500.0, 3),
        (600.0, 300.0, 300.0, 2),
        (610.0, 500.0, 390.0, 2),
    ];
    let windows = vec![window(1000.0, 2000.0, S, None)];
    let log = run_with(
        4,
        &specs,
        windows,
        500.0,
        Overrun::Continue,
        &mut fcfs_easy(),
    );
    assert_starts(
        &log,
        &[(0.0, P), (450.0, P), (2500.0, P), (600.0, P), (2000.0, P)],
    );
    assert_eq!(log.end, vec![300.0, 550.0, 3000.0, 900.0, 2500.0]);
    assert_eq!(log.requeues, vec![0, 0, 0, 0, 1]);
    assert_eq!(log.lost_attempts, vec![(4, 610.0, 1000.0)]);
    assert_eq!(log.lost_node_seconds(|_| 2), 780.0);
}

/// An outage is not known before it starts: both running jobs are killed at 100 and requeued
/// in FCFS order ahead of the job submitted during the outage.
#[test]
fn unscheduled_outage_kills_without_notice() {
    let specs = [
        (0.0, 150.0, 150.0, 2),
        (50.0, 300.0, 300.0, 2),
        (150.0, 10.0, 10.0, 1),
    ];
    let windows = vec![window(100.0, 200.0, U, None)];
    let log = run_with(
        4,
        &specs,
        windows,
        172800.0,
        Overrun::Continue,
        &mut fcfs_easy(),
    );
    assert_starts(&log, &[(200.0, P), (200.0, P), (350.0, P)]);
    assert_eq!(log.end, vec![350.0, 500.0, 360.0]);
    assert_eq!(log.requeues, vec![1, 1, 0]);
    assert_eq!(log.lost_node_seconds(|_| 2), 300.0);
}

/// A window taking 2 of 4 nodes kills only what no longer fits, most recent start first.
#[test]
fn partial_outage_kills_the_most_recent_starts_until_the_rest_fits() {
    let specs = [
        (0.0, 500.0, 500.0, 1),
        (10.0, 500.0, 500.0, 1),
        (20.0, 500.0, 500.0, 2),
    ];
    let windows = vec![window(100.0, 200.0, U, Some(2))];
    let log = run_with(4, &specs, windows, 0.0, Overrun::Continue, &mut fcfs_easy());
    assert_starts(&log, &[(0.0, P), (10.0, P), (200.0, P)]);
    assert_eq!(log.requeues, vec![0, 0, 1]);
}

/// A scheduled window taking 2 of 4 nodes leaves room for 2 nodes of jobs running into it.
#[test]
fn partial_maintenance_admits_what_the_window_leaves_room_for() {
    let specs = [
        (0.0, 1500.0, 1500.0, 2),
        (0.0, 1500.0, 1500.0, 1),
        (0.0, 500.0, 500.0, 1),
    ];
    let windows = vec![window(1000.0, 2000.0, S, Some(2))];
    let log = run_with(
        4,
        &specs,
        windows,
        2000.0,
        Overrun::Continue,
        &mut fcfs_easy(),
    );
    // J1 takes the window's 2 spare nodes; J2 would over-commit it: skipped until J1 ends.
    assert_starts(&log, &[(0.0, P), (1500.0, P), (0.0, P)]);
    assert_eq!(log.requeues, vec![0, 0, 0]);
}

/// Jobs submitted during a whole-machine window wait for its end, and an ineligible job gets
/// no reservation: the job behind it starts as primary, not as a backfill.
#[test]
fn ineligible_jobs_get_no_reservation() {
    let specs = [
        (0.0, 100.0, 100.0, 1),
        (10.0, 100.0, 5000.0, 4),
        (20.0, 50.0, 50.0, 2),
    ];
    let windows = vec![window(1000.0, 1100.0, S, None)];
    let log = run_with(
        4,
        &specs,
        windows,
        1000.0,
        Overrun::Continue,
        &mut fcfs_easy(),
    );
    assert_starts(&log, &[(0.0, P), (1100.0, P), (20.0, P)]);
}

/// Utilization integrated online by the engine (`Metrics`: busy and up node-seconds, what the
/// rewards and energy read) and after the fact over any interval (`engine::utilization`, what
/// the summary reports) agree, on a hand-computed case. 4 nodes; an outage takes 2 nodes over
/// [100, 200), a maintenance the whole machine over [400, 500).
/// - J1 holds 2 nodes over [0, 300); J2 2 nodes from 10, killed at 100 (the most recent start
///   no longer fits), restarted at 200 to 350; J3 (4 nodes, 200 s) would run into the
///   maintenance at 350: it starts at 500, ends at 700.
/// - busy: 600 + 180 (the killed attempt) + 300 + 800 = 1880 node-seconds; available:
///   4 x 700 - 2 x 100 - 4 x 100 = 2200.
#[test]
fn online_and_after_the_fact_utilization_agree() {
    use hpcsched_core::engine::utilization::{BeforeMaintenance, Period, Utilization};
    use hpcsched_core::{Calendar, Engine, Inputs, Machine};
    use std::sync::Arc;

    let specs = [
        (0.0, 300.0, 300.0, 2),
        (10.0, 150.0, 150.0, 2),
        (350.0, 200.0, 200.0, 4),
    ];
    let windows = vec![
        window(100.0, 200.0, U, Some(2)),
        window(400.0, 500.0, S, None),
    ];
    let calendar = Calendar::new(windows.clone(), 1000.0).unwrap();
    let inputs = Inputs::new(table(&specs), Machine::new(4), calendar, Overrun::Continue).unwrap();
    let mut engine = Engine::new(Arc::new(inputs));
    engine.run(&mut fcfs_easy()).unwrap();
    // the last event is the last completion: the totals cover [0, 700]
    let online = *engine.state().metrics();
    let log = engine.into_log();
    assert_eq!(log.start, vec![0.0, 200.0, 500.0]);
    assert_eq!(log.end, vec![300.0, 350.0, 700.0]);
    assert_eq!(log.lost_attempts, vec![(1, 10.0, 100.0)]);

    let nodes = |job: u32| f64::from(specs[job as usize].3);
    let attempts = (0..specs.len() as u32)
        .map(|j| (log.start[j as usize], log.end[j as usize], nodes(j)))
        .chain(log.lost_attempts.iter().map(|&(j, s, e)| (s, e, nodes(j))));
    let after = Utilization::new(attempts, 4, &windows);

    assert_eq!(online.elapsed, 700.0);
    assert_eq!(online.busy_node_seconds, 1880.0);
    assert_eq!(online.up_node_seconds, 2200.0);
    assert_eq!(online.down_node_seconds, 600.0);
    assert_eq!(after.busy.over(0.0, 700.0), online.busy_node_seconds);
    assert_eq!(after.available.over(0.0, 700.0), online.up_node_seconds);

    let report = after.report(4, &windows, 0.0, 700.0);
    assert_eq!(report.overall_uptime, Some(1880.0 / 2200.0));
    assert_eq!(
        report.uptime_periods,
        vec![
            Period {
                from: 0.0,
                to: 400.0,
                utilization: Some(1080.0 / 1400.0),
            },
            Period {
                from: 500.0,
                to: 700.0,
                utilization: Some(1.0),
            },
        ]
    );
    assert_eq!(
        report.before_maintenance,
        vec![BeforeMaintenance {
            window: 1,
            from: 0.0,
            utilization: Some(1080.0 / 1400.0),
        }]
    );
}

/// The engine refuses, on one pool of whole nodes, a start that would run into announced
/// maintenance of the whole machine (and accepts one that ends as it begins).
#[test]
fn the_engine_refuses_a_start_into_announced_maintenance() {
    let specs = [(0.0, 100.0, 100.0, 1)];
    for (start, refused) in [(50.0, true), (100.0, false)] {
        let inputs = hpcsched_core::Inputs::new(
            table(&specs),
            hpcsched_core::Machine::new(2),
            hpcsched_core::Calendar::new(vec![window(start, 200.0, S, None)], 1000.0).unwrap(),
            Overrun::Continue,
        )
        .unwrap();
        let mut engine = hpcsched_core::Engine::new(std::sync::Arc::new(inputs));
        engine.run_until(0.0, &mut crate::shared::Idle).unwrap();
        let mut decision = hpcsched_core::Decision::default();
        decision.starts.push(hpcsched_core::Start {
            pos: 0,
            job: 0,
            kind: P,
        });
        let applied = engine.apply_decision(&decision);
        assert_eq!(
            applied.is_err(),
            refused,
            "window from {start}: {applied:?}"
        );
    }
}
