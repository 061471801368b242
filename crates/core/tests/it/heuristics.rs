use hpcsched_core::sched::order::order_window;
use hpcsched_core::{Heuristic, Job, View};

use crate::common::*;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

/// r = 100 s, n = 4, s = 1000 s, now = 1500 s (so w = 500 s), N = 16. Each expected value is
/// the Table II formula worked by hand.
#[test]
fn every_heuristic_scores_as_table_ii() {
    let job = Job {
        id: 7,
        submit: 1000.0,
        run_time: 1.0,
        requested_time: 100.0,
        nodes: 4,
    };
    let expected = [
        (Heuristic::Fcfs, 1000.0),
        (Heuristic::Lcfs, -1000.0),
        (Heuristic::Sjf, 100.0),
        (Heuristic::Ljf, -100.0),
        (Heuristic::Srf, 4.0),
        (Heuristic::Lrf, -4.0),
        (Heuristic::Scf, 400.0),
        (Heuristic::Lcf, -400.0),
        (Heuristic::Fcsj, -5.0),                  // -500/100
        (Heuristic::Wfp1, -20.0),                 // -(5)*4
        (Heuristic::Wfp3, -500.0),                // -(5^3)*4
        (Heuristic::Fat, -5.0 / 64.0),            // -(5)*(4/16)^3
        (Heuristic::Unicef, 2.5),                 // -500/(log2(1/4)*100) = -500/-200
        (Heuristic::F1, 2.0 * 4.0 + 870.0 * 3.0), // log10(100)*4 + 870*log10(1000)
        (Heuristic::F2, 10.0 * 4.0 + 2.56e4 * 3.0),
        (Heuristic::F3, 400.0 + 6.86e6 * 3.0),
        (Heuristic::F4, 100.0 * 2.0 + 5.30e5 * 3.0),
    ];
    assert_eq!(expected.len(), Heuristic::ALL.len());
    for (h, value) in expected {
        let got = h.score((&job).into(), 1500.0, 16);
        assert!(
            close(got, value),
            "{}: got {got}, expected {value}",
            h.name()
        );
    }
}

#[test]
fn guards_cover_the_undefined_cases() {
    // r = 0 is floored at 1 s; s = 0 is floored at 1 s inside log10; n = N makes UNICEF +inf.
    let job = Job {
        id: 1,
        submit: 0.0,
        run_time: 0.0,
        requested_time: 0.0,
        nodes: 16,
    };
    assert_eq!(Heuristic::Sjf.score((&job).into(), 10.0, 16), 1.0);
    assert_eq!(Heuristic::Fcsj.score((&job).into(), 10.0, 16), -10.0);
    assert_eq!(Heuristic::F1.score((&job).into(), 10.0, 16), 0.0);
    assert_eq!(Heuristic::F3.score((&job).into(), 10.0, 16), 16.0);
    assert_eq!(
        Heuristic::Unicef.score((&job).into(), 10.0, 16),
        f64::INFINITY
    );
    for h in Heuristic::ALL {
        assert!(
            !h.score((&job).into(), 0.0, 16).is_nan(),
            "{} gives NaN",
            h.name()
        );
    }
}

#[test]
fn names_round_trip() {
    for h in Heuristic::ALL {
        assert_eq!(Heuristic::from_name(h.name()), Some(h));
        assert_eq!(Heuristic::from_name(&h.name().to_uppercase()), Some(h));
    }
    assert_eq!(Heuristic::from_name("wfp2"), None);
}

/// Queue of five jobs at now = 1000 on 100 nodes, as (submit, requested, nodes):
/// A (100, 3600, 10), B (200, 600, 50), C (300, 7200, 1), D (400, 60, 100), E (500, 10, 1).
fn queue_order(h: Heuristic, window: usize) -> String {
    let specs = [
        (100.0, 1.0, 3600.0, 10),
        (200.0, 1.0, 600.0, 50),
        (300.0, 1.0, 7200.0, 1),
        (400.0, 1.0, 60.0, 100),
        (500.0, 1.0, 10.0, 1),
    ];
    let jobs = table(&specs);
    let queue: Vec<u32> = (0..5).collect();
    let (mut scores, mut out) = (Vec::new(), Vec::new());
    let view = View::anonymous(1000.0, &jobs, 100, 0, &queue, &[]);
    order_window(h, window, &view, &mut scores, &mut out);
    let mut order: Vec<u32> = out.clone();
    order.extend(out.len() as u32..5);
    order.iter().map(|&p| (b'A' + p as u8) as char).collect()
}

#[test]
fn heuristics_order_a_hand_computed_queue() {
    use Heuristic::*;
    // Waits: A 900, B 800, C 700, D 600, E 500.
    let cases = [
        (Fcfs, "ABCDE"),
        (Lcfs, "EDCBA"),
        (Sjf, "EDBAC"), // r: 10, 60, 600, 3600, 7200
        (Ljf, "CABDE"),
        (Srf, "CEABD"), // n: 1 (C before E by FCFS), 1, 10, 50, 100
        (Lrf, "DBACE"),
        (Scf, "EDCBA"), // r*n: E 10, D 6000, C 7200, B 30000, A 36000
        (Lcf, "ABCDE"),
        (Fcsj, "EDBAC"),   // -w/r: E -50, D -10, B -1.33, A -0.25, C -0.097
        (Wfp1, "DBEAC"),   // -(w/r)n: D -1000, B -66.7, E -50, A -2.5, C -0.097
        (Wfp3, "EDBAC"),   // -(w/r)^3 n: E -125000, D -100000, B -118.5, A -0.156, C ~0
        (Fat, "DBAEC"),    // -(w/r)(n/N)^3: D -10, B -0.167, A -2.5e-4, E -5e-5, C ~0
        (Unicef, "CABED"), // C 0.0146, A 0.0753, B 1.333, E 7.53, D +inf (n = N)
        (F1, "ABCED"),     // A 1775.6, B 2140.8, C 2159.0, E 2349.1, D 2441.6
        (F2, "ABCDE"),     // A 51800, B 60131, C 63499, D 67387, E 69097
        (F3, "ABCDE"),     // the 6.86e6*log10(s) term dominates here
        (F4, "ABCDE"),
    ];
    for (h, expected) in cases {
        assert_eq!(queue_order(h, usize::MAX), expected, "{}", h.name());
    }
}

#[test]
fn window_sorts_only_the_head_of_the_queue() {
    // SJF on the first 3 (A 3600, B 600, C 7200) -> B A C, then D E in FCFS order.
    assert_eq!(queue_order(Heuristic::Sjf, 3), "BACDE");
    assert_eq!(queue_order(Heuristic::Sjf, 1), "ABCDE");
}
