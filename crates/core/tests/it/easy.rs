use crate::common::*;
use hpcsched_core::Snf;

/// 10 nodes. J1 (6 nodes) runs 0-100. J2 (8 nodes) is the top job: shadow 100, extra 10-8=2.
/// J3 (2 nodes, 500 s) ends after the shadow but fits in `extra`; J4 (2 nodes, 50 s) ends
/// before the shadow; J5 (1 node, 200 s) would delay J2 (extra is used up) and waits.
const EXTRA_CASE: [Spec; 5] = [
    (0.0, 100.0, 100.0, 6),
    (1.0, 50.0, 50.0, 8),
    (2.0, 500.0, 500.0, 2),
    (3.0, 50.0, 50.0, 2),
    (4.0, 200.0, 200.0, 1),
];

#[test]
fn easy_admits_through_extra_and_before_the_shadow_time() {
    let log = run(10, &EXTRA_CASE, &mut fcfs_easy());
    assert_starts(
        &log,
        &[(0.0, P), (100.0, P), (2.0, B), (3.0, B), (150.0, P)],
    );
    assert_eq!(log.end, vec![100.0, 150.0, 502.0, 53.0, 350.0]);
}

#[test]
fn no_backfill_stops_at_the_top_job() {
    let log = run(10, &EXTRA_CASE, &mut fcfs_none());
    assert_starts(
        &log,
        &[(0.0, P), (100.0, P), (100.0, P), (150.0, P), (150.0, P)],
    );
}

/// Two running jobs end (by estimate) at the same time as the shadow: both release their nodes
/// into `extra` (2 + 4 + 4 - 6 = 4), so a long 2-node job backfills.
#[test]
fn ties_of_estimated_ends_all_count_toward_extra() {
    let specs = [
        (0.0, 100.0, 100.0, 4),
        (0.0, 100.0, 100.0, 4),
        (1.0, 10.0, 10.0, 6),
        (2.0, 1000.0, 1000.0, 2),
    ];
    let log = run(10, &specs, &mut fcfs_easy());
    assert_starts(&log, &[(0.0, P), (0.0, P), (100.0, P), (2.0, B)]);
}

/// A job that would end after the shadow time and does not fit in `extra` must wait even
/// though nodes are free; here `extra` is 0.
#[test]
fn backfill_never_delays_the_reservation() {
    let specs = [
        (0.0, 100.0, 100.0, 3),
        (1.0, 10.0, 10.0, 4),
        (2.0, 101.0, 101.0, 1),
        (3.0, 97.0, 97.0, 1),
    ];
    let log = run(4, &specs, &mut fcfs_easy());
    // J3 would end at 103 > 100: waits. J4 ends at 100 = shadow: backfills.
    assert_starts(&log, &[(0.0, P), (100.0, P), (110.0, P), (3.0, B)]);
}

/// A running job past its requested time is estimated to end now: the shadow time is `now`.
#[test]
fn overrunning_jobs_are_estimated_to_end_now() {
    // J1 (3 nodes) requested 100 s but runs 200 s. At 150, J3 (1 node, estimate 0 s) arrives:
    // the top job J2's shadow is max(100, 150) = 150 and J3 ends by 150, so it backfills.
    let specs = [
        (0.0, 200.0, 100.0, 3),
        (10.0, 50.0, 50.0, 4),
        (150.0, 5.0, 0.0, 1),
    ];
    let log = run(4, &specs, &mut fcfs_easy());
    assert_starts(&log, &[(0.0, P), (200.0, P), (150.0, B)]);
}

/// SNF: key (nodes, requested time, id), start while they fit, stop at the first misfit.
#[test]
fn snf_starts_smallest_need_first_and_stops_at_first_misfit() {
    let specs = [
        (0.0, 100.0, 100.0, 10),
        (1.0, 50.0, 50.0, 5),
        (2.0, 80.0, 80.0, 3),
        (3.0, 20.0, 20.0, 3),
        (4.0, 10.0, 10.0, 8),
    ];
    let log = run(10, &specs, &mut Snf::default());
    // At 100: J4 (3, 20 s), J2 (3, 80 s) start; J1 (5) does not fit -> stop (J5 not tried).
    // At 120: J1 starts. At 180: J5 (8 nodes) finally fits.
    assert_starts(
        &log,
        &[(0.0, P), (120.0, P), (100.0, P), (100.0, P), (180.0, P)],
    );
}

#[test]
fn snf_breaks_ties_by_requested_time_then_id() {
    // Three 2-node jobs wait behind a full machine; only two fit when it frees.
    let specs = [
        (0.0, 10.0, 10.0, 4),
        (1.0, 30.0, 30.0, 2),
        (2.0, 30.0, 30.0, 2),
        (3.0, 5.0, 5.0, 2),
    ];
    let log = run(4, &specs, &mut Snf::default());
    assert_starts(&log, &[(0.0, P), (10.0, P), (15.0, P), (10.0, P)]);
}
