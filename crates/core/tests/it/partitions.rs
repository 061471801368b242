//! Partitions (`model::site`, `sched::site`): schedules computed by hand, and a one-partition
//! site scheduling exactly as one pool.

use std::sync::Arc;

use crate::common::*;
use hpcsched_core::model::{OverLimits, PartitionSpec, PartitionState, Rejection};
use hpcsched_core::{
    Backfill, Calendar, Downtime, DowntimeKind, Engine, Heuristic, Inputs, Machine, Overrun,
    Policy, QueuePolicy, RunLog, Snf,
};

/// A partition `name` over `ranges`, tier 1, no limits, up.
fn part(name: &str, ranges: &[(u32, u32)]) -> PartitionSpec {
    PartitionSpec::new(name, ranges)
}

/// Runs `specs` on `nodes` nodes cut into `partitions`, job `j` naming `candidates[j]`.
fn run_site(
    nodes: u32,
    specs: &[Spec],
    partitions: Vec<PartitionSpec>,
    candidates: &[&[u32]],
    over_limits: OverLimits,
    policy: &mut dyn Policy,
) -> RunLog {
    let calendar = Calendar::new(Vec::new(), 0.0).unwrap();
    run_site_with(
        nodes,
        specs,
        partitions,
        candidates,
        over_limits,
        calendar,
        policy,
    )
}

/// [`run_site`] with a downtime calendar.
fn run_site_with(
    nodes: u32,
    specs: &[Spec],
    partitions: Vec<PartitionSpec>,
    candidates: &[&[u32]],
    over_limits: OverLimits,
    calendar: Calendar,
    policy: &mut dyn Policy,
) -> RunLog {
    let inputs = site_inputs(nodes, specs, partitions, candidates, over_limits, calendar);
    let mut engine = Engine::new(Arc::new(inputs));
    engine.run(policy).unwrap();
    engine.into_log()
}

/// The inputs of [`run_site_with`].
fn site_inputs(
    nodes: u32,
    specs: &[Spec],
    partitions: Vec<PartitionSpec>,
    candidates: &[&[u32]],
    over_limits: OverLimits,
    calendar: Calendar,
) -> Inputs {
    let mut offsets = vec![0u32];
    let mut flat = Vec::new();
    for c in candidates {
        flat.extend_from_slice(c);
        offsets.push(flat.len() as u32);
    }
    Inputs::new(
        table(specs),
        Machine::new(nodes),
        calendar,
        Overrun::Continue,
    )
    .unwrap()
    .with_site(partitions, over_limits, offsets, flat)
    .unwrap()
}

/// The nodes `layout::site_nodes` names for each job's last start and each killed attempt,
/// of a run of `inputs`.
fn named_nodes(inputs: Inputs, log: &RunLog) -> (Vec<String>, Vec<String>) {
    let site = inputs.site.as_ref().unwrap();
    hpcsched_core::layout::site_nodes(site, inputs.calendar.windows(), log).unwrap()
}

/// Two disjoint partitions a = nodes 0-3 and b = 4-7 schedule on their own: b's jobs start
/// while a is full, and each has its own EASY reservation.
#[test]
fn disjoint_partitions_schedule_apart_each_with_its_reservation() {
    let specs = [
        (0.0, 100.0, 100.0, 4), // J1 a: fills a until 100
        (1.0, 100.0, 100.0, 2), // J2 b: starts at once (b is free)
        (2.0, 50.0, 50.0, 2),   // J3 a: a's top job, shadow 100, extra 2
        (3.0, 200.0, 200.0, 4), // J4 b: b's top job (2 free), shadow 101, extra 0
        (4.0, 10.0, 10.0, 2),   // J5 b: ends at 14 <= 101: backfills beside J2
        (5.0, 500.0, 500.0, 1), // J6 a: a is full until 100, then beside J3
    ];
    let parts = vec![part("a", &[(0, 4)]), part("b", &[(4, 8)])];
    let cands: [&[u32]; 6] = [&[0], &[1], &[0], &[1], &[1], &[0]];
    let log = run_site(
        8,
        &specs,
        parts,
        &cands,
        OverLimits::Reject,
        &mut fcfs_easy(),
    );
    assert_starts(
        &log,
        &[
            (0.0, P),
            (1.0, P),
            (100.0, P),
            (101.0, P),
            (4.0, B),
            (100.0, P),
        ],
    );
    assert_eq!(log.partition, vec![0, 1, 0, 1, 1, 0]);
    // one pool of 8 nodes: J3 would start at 2 on the 2 nodes left by J1 and J2
    let pool = run(8, &specs, &mut fcfs_easy());
    assert_eq!(pool.start[2], 2.0);
}

/// batch = nodes 0-7, debug = 6-7 (inside batch), gpu = 8-9 apart. J1 takes batch's own
/// nodes first (0-5), leaving debug's free; J2 needs all of batch: top job, shadow 100,
/// extra 0. J3 (debug, ends by 52) backfills; J4 (debug, 1 node, ends long after the shadow)
/// would take a node of the reservation (extra 0) and waits for J2; J5 on gpu starts at once.
#[test]
fn overlapping_partitions_share_nodes_and_one_reservation() {
    let specs = [
        (0.0, 100.0, 100.0, 6),
        (1.0, 10.0, 10.0, 8),
        (2.0, 50.0, 50.0, 2),
        (3.0, 500.0, 500.0, 1),
        (4.0, 1000.0, 1000.0, 2),
    ];
    let parts = vec![
        part("batch", &[(0, 8)]),
        part("debug", &[(6, 8)]),
        part("gpu", &[(8, 10)]),
    ];
    let cands: [&[u32]; 5] = [&[0], &[0], &[1], &[1], &[2]];
    let log = run_site(
        10,
        &specs,
        parts,
        &cands,
        OverLimits::Reject,
        &mut fcfs_easy(),
    );
    assert_starts(
        &log,
        &[(0.0, P), (100.0, P), (2.0, B), (110.0, P), (4.0, P)],
    );
    assert_eq!(log.partition, vec![0, 0, 1, 1, 2]);
    // named inside their atoms (batch only 0-5, batch and debug 6-7, gpu 8-9): J1 takes the
    // least shared atom first, J4 debug's first node once J2 has ended
    let inputs = site_inputs(
        10,
        &specs,
        vec![
            part("batch", &[(0, 8)]),
            part("debug", &[(6, 8)]),
            part("gpu", &[(8, 10)]),
        ],
        &cands,
        OverLimits::Reject,
        Calendar::new(Vec::new(), 0.0).unwrap(),
    );
    let (last, killed) = named_nodes(inputs, &log);
    assert_eq!(last, ["0-5", "0-7", "6-7", "6", "8-9"]);
    assert!(killed.is_empty());
}

/// batch = nodes 0-3, debug = 2-3 inside it. When J1 ends at 100, J2 (batch, 3 nodes) and
/// J3 (debug, 2 nodes) wait. Same tier: FCFS starts J2 (its own 2 nodes, then 1 of debug's)
/// and J3 waits for it. Debug in a higher tier: J3 goes first (debug's 2 nodes) and J2 waits
/// for J3.
#[test]
fn a_higher_tier_is_considered_first() {
    let specs = [
        (0.0, 100.0, 100.0, 4),
        (1.0, 100.0, 100.0, 3),
        (2.0, 100.0, 100.0, 2),
    ];
    let cands: [&[u32]; 3] = [&[0], &[0], &[1]];
    let same = vec![part("batch", &[(0, 4)]), part("debug", &[(2, 4)])];
    let log = run_site(
        4,
        &specs,
        same.clone(),
        &cands,
        OverLimits::Reject,
        &mut fcfs_easy(),
    );
    assert_eq!(log.start, vec![0.0, 100.0, 200.0]);
    let mut tiered = same;
    tiered[1].tier = 2;
    let log = run_site(
        4,
        &specs,
        tiered,
        &cands,
        OverLimits::Reject,
        &mut fcfs_easy(),
    );
    assert_eq!(log.start, vec![0.0, 200.0, 100.0]);
}

/// A job naming a and b starts where it fits (b), and, when it fits nowhere, holds its
/// reservation in the candidate with the earliest shadow time (a, at 100 rather than b at
/// 101): a job of b may then backfill past that shadow time, taking none of a's nodes.
#[test]
fn a_job_naming_several_partitions_starts_in_the_earliest() {
    let specs = [
        (0.0, 100.0, 100.0, 4),   // J1 a
        (1.0, 100.0, 100.0, 3),   // J2 a or b: a is full, starts in b
        (2.0, 10.0, 10.0, 2),     // J3 a or b: fits in neither; a frees first (100)
        (3.0, 1000.0, 1000.0, 1), // J4 b: ends long after 100, takes nothing of a
    ];
    let parts = vec![part("a", &[(0, 4)]), part("b", &[(4, 8)])];
    let cands: [&[u32]; 4] = [&[0], &[0, 1], &[0, 1], &[1]];
    let log = run_site(
        8,
        &specs,
        parts,
        &cands,
        OverLimits::Reject,
        &mut fcfs_easy(),
    );
    assert_starts(&log, &[(0.0, P), (1.0, P), (100.0, P), (3.0, B)]);
    assert_eq!(log.partition, vec![0, 1, 0, 1]);
}

/// small = nodes 0-3 with MaxNodes 2 and MaxTime 50 s, big = 4-7. J2 (3 nodes in small) is
/// refused at submission; J3 (60 s in small or big) is over small's MaxTime and runs in big;
/// held instead of refused, J2 waits for ever and blocks nothing.
#[test]
fn jobs_over_a_partitions_limits_are_refused_or_held() {
    let specs = [
        (0.0, 40.0, 40.0, 1),
        (1.0, 10.0, 10.0, 3),
        (2.0, 60.0, 60.0, 2),
        (3.0, 10.0, 10.0, 2),
    ];
    let mut small = part("small", &[(0, 4)]);
    small.max_nodes = Some(2);
    small.max_time = Some(50.0);
    let parts = vec![small, part("big", &[(4, 8)])];
    let cands: [&[u32]; 4] = [&[0], &[0], &[0, 1], &[0]];
    let log = run_site(
        8,
        &specs,
        parts.clone(),
        &cands,
        OverLimits::Reject,
        &mut fcfs_none(),
    );
    assert!(log.start[1].is_nan());
    assert_eq!(log.rejected, vec![(1, Rejection::OverMaxNodes)]);
    assert_eq!((log.start[2], log.partition[2]), (2.0, 1));
    assert_eq!((log.start[3], log.partition[3]), (3.0, 0));
    let held = run_site(8, &specs, parts, &cands, OverLimits::Hold, &mut fcfs_none());
    assert!(held.start[1].is_nan() && held.rejected.is_empty());
    // without backfilling, a held job at the head still blocks nothing
    assert_eq!(held.start[3], 3.0);
}

/// A partition that is down starts nothing; its jobs wait, the others run.
#[test]
fn a_partition_that_is_down_starts_nothing() {
    let specs = [(0.0, 10.0, 10.0, 1), (1.0, 10.0, 10.0, 1)];
    let mut a = part("a", &[(0, 2)]);
    a.state = PartitionState::Down;
    let parts = vec![a, part("b", &[(2, 4)])];
    let cands: [&[u32]; 2] = [&[0], &[1]];
    let log = run_site(
        4,
        &specs,
        parts,
        &cands,
        OverLimits::Reject,
        &mut fcfs_easy(),
    );
    assert!(log.start[0].is_nan() && log.rejected.is_empty());
    assert_eq!(log.start[1], 1.0);
}

/// Without backfilling (SNF), a component stops at its first misfit; the other goes on.
#[test]
fn snf_stops_each_component_at_its_own_misfit() {
    let specs = [
        (0.0, 100.0, 100.0, 3), // J1 a
        (1.0, 10.0, 10.0, 2),   // J2 a: misfit (1 free) -> a stops
        (1.0, 10.0, 10.0, 1),   // J3 a: would fit, but sorts after... (1 node: first!)
        (1.0, 10.0, 10.0, 4),   // J4 b: fits b
    ];
    // at 1, SNF order: J3 (1 node), J2 (2), J4 (4). J3 fits a; J2 does not: a stops; J4 fits b.
    let parts = vec![part("a", &[(0, 4)]), part("b", &[(4, 8)])];
    let cands: [&[u32]; 4] = [&[0], &[0], &[0], &[1]];
    let log = run_site(
        8,
        &specs,
        parts,
        &cands,
        OverLimits::Reject,
        &mut Snf::default(),
    );
    assert_eq!(log.start, vec![0.0, 100.0, 1.0, 1.0]);
}

/// A site of one partition over the whole machine schedules exactly as one pool, for every
/// heuristic tried, with and without EASY, and SNF: starts and reservations, on random
/// workloads.
#[test]
fn one_partition_over_the_machine_schedules_as_one_pool() {
    let mut draws = Draws(0x9E37_79B9_7F4A_7C15u64);
    let heuristics = [
        Heuristic::Fcfs,
        Heuristic::Sjf,
        Heuristic::Wfp3,
        Heuristic::F1,
    ];
    let mut compared = 0;
    for _ in 0..40 {
        let nodes = 4 + draws.below(28) as u32;
        let specs = draws.workload(60, 50, nodes);
        let cands: Vec<&[u32]> = vec![&[0]; specs.len()];
        let mut policies: Vec<(Box<dyn Policy>, Box<dyn Policy>)> = Vec::new();
        for h in heuristics {
            for b in [Backfill::Easy, Backfill::None] {
                policies.push((
                    Box::new(QueuePolicy::new(h, usize::MAX, b)),
                    Box::new(QueuePolicy::new(h, usize::MAX, b)),
                ));
            }
        }
        policies.push((Box::new(Snf::default()), Box::new(Snf::default())));
        for (mut pool_policy, mut site_policy) in policies {
            let pool = run(nodes, &specs, pool_policy.as_mut());
            let site = run_site(
                nodes,
                &specs,
                vec![part("all", &[(0, nodes)])],
                &cands,
                OverLimits::Reject,
                site_policy.as_mut(),
            );
            let name = pool_policy.name();
            assert_eq!(pool.start, site.start, "{name}");
            assert_eq!(pool.start_kind, site.start_kind, "{name}");
            assert_eq!(pool.reservations, site.reservations, "{name}");
            compared += 1;
        }
    }
    assert_eq!(compared, 40 * 9);
}

/// FCFS scans each component's own waiting jobs (`scan_queue_order`, reusing what it found
/// where only arrivals changed); the general scan walks the whole queue. On random workloads over overlapping and disjoint partitions (and jobs
/// naming two), both start the same jobs at the same times in the same partitions. (An
/// unused partition of another tier sends FCFS through the general scan without changing
/// the order: no job is in it.)
#[test]
fn fcfs_component_by_component_equals_the_whole_queue_walk() {
    let mut draws = Draws(0x2545_F491_4F6C_DD1Du64);
    let choices: [&[u32]; 5] = [&[0], &[1], &[2], &[3], &[1, 3]];
    for trial in 0..120 {
        let mut specs = draws.workload(80, 40, 6);
        for spec in specs.iter_mut().step_by(5) {
            spec.1 = (spec.2 * 1.5).round(); // past its request: its release moves with time
        }
        let cands: Vec<&[u32]> = (0..specs.len())
            .map(|_| choices[draws.below(choices.len() as u64) as usize])
            .collect();
        // batch 0-11 with debug 8-11 inside it; gpu 12-17 and big 14-23 overlap; spare apart
        let parts = || {
            vec![
                part("batch", &[(0, 12)]),
                part("debug", &[(8, 12)]),
                part("gpu", &[(12, 18)]),
                part("big", &[(14, 24)]),
            ]
        };
        let mut spare = part("spare", &[(24, 26)]);
        spare.tier = 2;
        for backfill in [Backfill::Easy, Backfill::None] {
            let fast = run_site(
                26,
                &specs,
                parts(),
                &cands,
                OverLimits::Reject,
                &mut QueuePolicy::new(Heuristic::Fcfs, usize::MAX, backfill),
            );
            let mut with_spare = parts();
            with_spare.push(spare.clone());
            let walk = run_site(
                26,
                &specs,
                with_spare,
                &cands,
                OverLimits::Reject,
                &mut QueuePolicy::new(Heuristic::Fcfs, usize::MAX, backfill),
            );
            let what = format!("trial {trial} {backfill:?}");
            let bits = |log: &RunLog| log.start.iter().map(|s| s.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&fast), bits(&walk), "{what}");
            assert_eq!(fast.rejected, walk.rejected, "{what}");
            assert_eq!(fast.start_kind, walk.start_kind, "{what}");
            assert_eq!(fast.partition, walk.partition, "{what}");
            assert_eq!(fast.reservations, walk.reservations, "{what}");
        }
    }
}

/// MARS-CW with the paper's forward model, 2 trees of 16 iterations, one thread.
fn mars() -> Box<dyn Policy> {
    use hpcsched_core::search::{build_search_policy, Reward, SearchConfig, SearchOptions};
    build_search_policy(
        "mars",
        &SearchOptions {
            actions: "paper".into(),
            reward: Reward::CW,
            config: SearchConfig {
                iterations: Some(16),
                trees: 2,
                seed: 7,
                ..SearchConfig::default()
            },
            model: Default::default(),
            threads: 1,
        },
    )
    .unwrap()
}

/// MARS-CW (the paper's forward model, 2 trees of 16 iterations, one thread): its forward
/// model is the engine, partitions included. On one partition over the whole machine it
/// schedules exactly as on one pool; on two disjoint partitions every job runs in its own.
#[test]
fn mars_schedules_partitions_as_its_forward_model_does() {
    let mut draws = Draws(0x51_7CC1_B727_220Au64);
    let specs = draws.workload(60, 30, 8);
    let pool = run(16, &specs, mars().as_mut());
    let one: Vec<&[u32]> = vec![&[0]; specs.len()];
    let site = run_site(
        16,
        &specs,
        vec![part("all", &[(0, 16)])],
        &one,
        OverLimits::Reject,
        mars().as_mut(),
    );
    let bits = |log: &RunLog| log.start.iter().map(|s| s.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&pool), bits(&site));
    assert_eq!(pool.start_kind, site.start_kind);
    // two partitions of 8, jobs alternating: each ran in its own (the engine refuses a start
    // beyond the free nodes of a partition)
    let halves: Vec<&[u32]> = (0..specs.len())
        .map(|j| if j % 2 == 0 { &[0u32][..] } else { &[1u32][..] })
        .collect();
    let parts = vec![part("a", &[(0, 8)]), part("b", &[(8, 16)])];
    let split = run_site(
        16,
        &specs,
        parts,
        &halves,
        OverLimits::Reject,
        mars().as_mut(),
    );
    assert!(split.start.iter().all(|s| !s.is_nan()));
    for (j, &p) in split.partition.iter().enumerate() {
        assert_eq!(p, (j % 2) as u32);
    }
    // the schedule differs from one pool's: the partitions bind
    assert_ne!(bits(&split), bits(&pool));
}

/// The heuristic's order over the whole queue, scanned on the site: what `QueuePolicy` does
/// with only the jobs that may matter (`order_fitting_site`) must decide the same.
struct WholeQueue {
    heuristic: Heuristic,
    window: usize,
    backfill: Backfill,
    scores: Vec<u128>,
    order: Vec<u32>,
    scan: hpcsched_core::sched::site::SiteScan,
}

impl Policy for WholeQueue {
    fn name(&self) -> String {
        "whole-queue".into()
    }

    fn decide(&mut self, view: &hpcsched_core::View, decision: &mut hpcsched_core::Decision) {
        self.scan.scan_whole_queue(
            view,
            (self.heuristic, self.window),
            self.backfill,
            (&mut self.scores, &mut self.order),
            decision,
        );
    }
}

/// On random workloads over overlapping partitions of two tiers (and jobs naming two), every
/// heuristic tried, windowed or not, with EASY or not, starts the same jobs at the same times
/// in the same partitions whether it orders the whole queue or only the jobs that may matter.
#[test]
fn ordering_only_what_may_matter_on_a_site_decides_as_the_whole_queue() {
    let mut draws = Draws(0xD1B5_4A32_D192_ED03u64);
    let choices: [&[u32]; 5] = [&[0], &[1], &[2], &[3], &[1, 3]];
    let mut compared = 0;
    for trial in 0..6 {
        let specs = draws.workload(70, 40, 8);
        let cands: Vec<&[u32]> = (0..specs.len())
            .map(|_| choices[draws.below(choices.len() as u64) as usize])
            .collect();
        let parts = || {
            let mut debug = part("debug", &[(8, 12)]);
            debug.tier = 2;
            vec![
                part("batch", &[(0, 12)]),
                debug,
                part("gpu", &[(12, 18)]),
                part("big", &[(14, 24)]),
            ]
        };
        for h in [
            Heuristic::Sjf,
            Heuristic::Wfp3,
            Heuristic::F1,
            Heuristic::Lcfs,
        ] {
            for window in [usize::MAX, 8] {
                for backfill in [Backfill::Easy, Backfill::None] {
                    let mut fast = QueuePolicy::new(h, window, backfill);
                    let mut slow = WholeQueue {
                        heuristic: h,
                        window,
                        backfill,
                        scores: Vec::new(),
                        order: Vec::new(),
                        scan: Default::default(),
                    };
                    let a = run_site(24, &specs, parts(), &cands, OverLimits::Reject, &mut fast);
                    let b = run_site(24, &specs, parts(), &cands, OverLimits::Reject, &mut slow);
                    let what = format!("trial {trial} {} w={window} {backfill:?}", h.name());
                    let bits =
                        |log: &RunLog| log.start.iter().map(|s| s.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(&a), bits(&b), "{what}");
                    assert_eq!(a.partition, b.partition, "{what}");
                    assert_eq!(a.reservations, b.reservations, "{what}");
                    compared += 1;
                }
            }
        }
    }
    assert_eq!(compared, 6 * 4 * 2 * 2);
}

/// a = nodes 0-3, b = 4-7. Maintenance of a from 100 to 200, announced from the start; an
/// outage of b from 250 to 260. J1 (a, ends at 50) and J4 (a, ends at 41) start before the
/// maintenance; J2 (a, would end at 150) may not start in a before it, is passed over (not a
/// top job: J4 starts behind it) and starts when a comes back at 200. J3 (b) runs from 0 and
/// is killed by b's outage at 250, requeued at the front, and starts again at 260; J5 (b,
/// submitted during the outage) waits behind it until 560.
#[test]
fn maintenance_of_one_partition_and_an_outage_of_another() {
    let specs = [
        (0.0, 50.0, 50.0, 2),
        (0.0, 150.0, 150.0, 2),
        (0.0, 300.0, 300.0, 4),
        (1.0, 40.0, 40.0, 1),
        (255.0, 10.0, 10.0, 1),
    ];
    let down = |start: f64, end: f64, kind: DowntimeKind, partition: u32| Downtime {
        start,
        end,
        kind,
        nodes: Some(4),
        back_asleep: false,
        partition: Some(partition),
        range: None,
    };
    let calendar = Calendar::new(
        vec![
            down(100.0, 200.0, DowntimeKind::Scheduled, 0),
            down(250.0, 260.0, DowntimeKind::Unscheduled, 1),
        ],
        1000.0,
    )
    .unwrap();
    let parts = vec![part("a", &[(0, 4)]), part("b", &[(4, 8)])];
    let cands: [&[u32]; 5] = [&[0], &[0], &[1], &[0], &[1]];
    let inputs = site_inputs(8, &specs, parts, &cands, OverLimits::Reject, calendar);
    let mut engine = Engine::new(Arc::new(inputs.clone()));
    engine.run(&mut fcfs_easy()).unwrap();
    let log = engine.into_log();
    assert_eq!(log.start, vec![0.0, 200.0, 260.0, 1.0, 560.0]);
    assert_eq!(log.requeues, vec![0, 0, 1, 0, 0]);
    assert_eq!(log.lost_attempts, vec![(2, 0.0, 250.0)]);
    assert_eq!(log.partition, vec![0, 0, 1, 0, 1]);
    // a's window holds 0-3 over [100, 200) and J2 takes 0-1 as it ends; J3 killed on b's
    // 4-7 at 250 and back on them at 260, after b's window
    let (last, killed) = named_nodes(inputs, &log);
    assert_eq!(last, ["0-1", "0-1", "4-7", "2", "4"]);
    assert_eq!(killed, ["4-7"]);
}

/// MARS shares its action policies across the copies of its forward model: FCFS's memo of its
/// last scan (reused while only arrivals change) must never carry over from one copy to
/// another. On three overlapping and disjoint partitions with overrunning jobs, MARS decides
/// exactly as when FCFS cannot use its memo (an unused partition of another tier over
/// batch's nodes sends FCFS through the whole-queue scan, changing no order and no node).
#[test]
fn mars_decides_the_same_whether_fcfs_remembers_its_scans_or_not() {
    let mut draws = Draws(0x3C6E_F372_FE94_F82Bu64);
    let mut specs = draws.workload(80, 25, 6);
    for spec in specs.iter_mut().step_by(4) {
        spec.1 = (spec.2 * 1.4).round();
    }
    let choices: [&[u32]; 4] = [&[0], &[1], &[2], &[1, 2]];
    let cands: Vec<&[u32]> = (0..specs.len())
        .map(|_| choices[draws.below(choices.len() as u64) as usize])
        .collect();
    let parts = vec![
        part("batch", &[(0, 10)]),
        part("debug", &[(6, 10)]),
        part("gpu", &[(10, 16)]),
    ];
    let remembered = run_site(
        16,
        &specs,
        parts.clone(),
        &cands,
        OverLimits::Reject,
        mars().as_mut(),
    );
    let mut tiered = parts;
    let mut shadow = part("shadow", &[(0, 10)]);
    shadow.tier = 2;
    tiered.push(shadow);
    let walked = run_site(
        16,
        &specs,
        tiered,
        &cands,
        OverLimits::Reject,
        mars().as_mut(),
    );
    let bits = |log: &RunLog| log.start.iter().map(|s| s.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&remembered), bits(&walked));
    assert_eq!(remembered.partition, walked.partition);
    assert_eq!(remembered.start_kind, walked.start_kind);
}

/// A downtime window over a node range, not a partition or the whole machine.
fn range_window(start: f64, end: f64, kind: DowntimeKind, range: (u32, u32)) -> Downtime {
    Downtime {
        start,
        end,
        kind,
        nodes: None, // (the calendar counts the range's nodes)
        back_asleep: false,
        partition: None,
        range: Some(range),
    }
}

/// a = nodes 0-3, b = 4-7; an outage of nodes 2-5 (half of each) from 100 to 200. Each job
/// takes its partition's atoms in node order: J0 (a, 2 nodes) nodes 0-1 and J3 (b, 2) nodes
/// 6-7 run through the outage; J1 (a, 2) on nodes 2-3 is killed at 100, requeued, and starts
/// again at 200; J2 (b, 2) on 4-5 ended at 50. J4 (b, 1, at 120) waits for b's nodes 4-5 to
/// come back at 200; J5 (a, 1, at 130) finds a full at 200 (J0 and J1) and starts when J1
/// ends at 350. A window over the partitions would have killed J0 and J3 as well.
#[test]
fn an_outage_of_a_node_range_takes_only_those_nodes_down() {
    let specs = [
        (0.0, 500.0, 500.0, 2),
        (0.0, 150.0, 150.0, 2),
        (0.0, 50.0, 50.0, 2),
        (0.0, 300.0, 300.0, 2),
        (120.0, 10.0, 10.0, 1),
        (130.0, 10.0, 10.0, 1),
    ];
    let outage = range_window(100.0, 200.0, DowntimeKind::Unscheduled, (2, 6));
    let calendar = Calendar::new(vec![outage], 0.0).unwrap();
    assert_eq!(calendar.windows()[0].nodes, Some(4));
    let parts = vec![part("a", &[(0, 4)]), part("b", &[(4, 8)])];
    let cands: [&[u32]; 6] = [&[0], &[0], &[1], &[1], &[1], &[0]];
    let log = run_site_with(
        8,
        &specs,
        parts,
        &cands,
        OverLimits::Reject,
        calendar,
        &mut fcfs_easy(),
    );
    assert_eq!(log.start, vec![0.0, 200.0, 0.0, 0.0, 200.0, 350.0]);
    assert_eq!(log.requeues, vec![0, 1, 0, 0, 0, 0]);
    assert_eq!(log.lost_attempts, vec![(1, 0.0, 100.0)]);
}

/// a = nodes 0-3, maintenance of nodes 2-3 from 100 to 200, announced from the start. J0 (2
/// nodes, 300 s) may not take nodes 2-3 and starts on 0-1; J1 (2 nodes, ends at 50) starts on
/// 2-3 before the maintenance. J2 (2 nodes, 80 s, at 60) would run into it: it starts when
/// nodes 2-3 come back at 200. J3 (1 node, 30 s, at 61) ends before the maintenance and
/// before J2's reserved start: it backfills on node 2 at 61.
#[test]
fn maintenance_of_a_node_range_admits_only_jobs_ending_before_it() {
    let specs = [
        (0.0, 300.0, 300.0, 2),
        (0.0, 50.0, 50.0, 2),
        (60.0, 80.0, 80.0, 2),
        (61.0, 30.0, 30.0, 1),
    ];
    let maintenance = range_window(100.0, 200.0, DowntimeKind::Scheduled, (2, 4));
    let calendar = Calendar::new(vec![maintenance], 1000.0).unwrap();
    let log = run_site_with(
        4,
        &specs,
        vec![part("a", &[(0, 4)])],
        &[&[0], &[0], &[0], &[0]],
        OverLimits::Reject,
        calendar,
        &mut fcfs_easy(),
    );
    assert_eq!(log.start, vec![0.0, 0.0, 200.0, 61.0]);
    assert_eq!(log.requeues, vec![0, 0, 0, 0]);
}

/// Atoms are cut at a window's node range, whatever partitions it crosses: node ranges map
/// to the atoms a window takes down, and nodes of no partition to none.
#[test]
fn a_node_range_cuts_the_atoms_it_crosses() {
    use hpcsched_core::model::Site;
    let jobs = table(&[(0.0, 1.0, 1.0, 1)]);
    let parts = vec![part("a", &[(0, 6)]), part("b", &[(4, 8)])];
    let site = Site::with_cuts(
        parts,
        10,
        OverLimits::Reject,
        &jobs,
        vec![0, 1],
        vec![0],
        vec![(2, 5)],
    )
    .unwrap();
    // a only 0-1 | a + cut 2-3 | a, b + cut 4 | a, b 5 | b only 6-7 | none 8-9
    assert_eq!(site.atom_sizes(), &[2, 2, 1, 1, 2]);
    let atoms: Vec<Option<u32>> = (0..10).map(|n| site.atom_of_node(n)).collect();
    let expected = [0, 0, 1, 1, 2, 3, 4, 4].map(Some);
    assert_eq!(&atoms[..8], &expected);
    assert_eq!(&atoms[8..], &[None, None]);
    let w = range_window(0.0, 1.0, DowntimeKind::Unscheduled, (2, 5));
    assert_eq!(site.window_atoms(&w), vec![1, 2]);
    // a's least shared atoms first (the cut does not count as sharing)
    assert_eq!(&*site.partition(0).atoms, &[0, 1, 2, 3]);
    assert_eq!(&*site.partition(1).atoms, &[4, 2, 3]);
    assert_eq!(site.components(), 1);
}

/// MARS's look-ahead keeps the windows in progress on partitions as they are (not as a count
/// of nodes): with whole-machine outages and maintenance, one partition over the machine
/// schedules exactly as one pool; with outages of node ranges crossing two partitions and a
/// partition's maintenance, every start is one the engine accepts (it checks each against
/// the nodes down and the maintenance ahead) and every job runs.
#[test]
fn mars_looks_ahead_through_downtime_on_partitions() {
    let mut draws = Draws(0x2545_F491_4F6C_DD1Du64);
    let specs = draws.workload(60, 30, 8);
    let whole = vec![
        window(200.0, 400.0, DowntimeKind::Unscheduled, None),
        window(700.0, 900.0, DowntimeKind::Scheduled, None),
    ];
    let pool = run_with(
        16,
        &specs,
        whole.clone(),
        300.0,
        Overrun::Continue,
        mars().as_mut(),
    );
    let one: Vec<&[u32]> = vec![&[0]; specs.len()];
    let site = run_site_with(
        16,
        &specs,
        vec![part("all", &[(0, 16)])],
        &one,
        OverLimits::Reject,
        Calendar::new(whole, 300.0).unwrap(),
        mars().as_mut(),
    );
    let bits = |log: &RunLog| log.start.iter().map(|s| s.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&pool), bits(&site));
    assert_eq!(pool.requeues, site.requeues);

    let mut maintenance = range_window(500.0, 800.0, DowntimeKind::Scheduled, (0, 1));
    (maintenance.range, maintenance.partition) = (None, Some(1));
    let calendar = Calendar::new(
        vec![
            range_window(100.0, 450.0, DowntimeKind::Unscheduled, (6, 10)),
            range_window(300.0, 350.0, DowntimeKind::Unscheduled, (0, 3)),
            maintenance,
        ],
        300.0,
    )
    .unwrap();
    let halves: Vec<&[u32]> = (0..specs.len())
        .map(|j| match (j % 3, j % 2) {
            (0, _) => &[0u32, 1][..],
            (_, 0) => &[0u32][..],
            _ => &[1u32][..],
        })
        .collect();
    let parts = vec![part("a", &[(0, 8)]), part("b", &[(8, 16)])];
    let log = run_site_with(
        16,
        &specs,
        parts,
        &halves,
        OverLimits::Reject,
        calendar,
        mars().as_mut(),
    );
    assert!(log.start.iter().all(|s| s.is_finite()));
    assert!(log.requeues.iter().sum::<u32>() > 0); // the outages killed jobs
}

/// a = nodes 0-3, b = 4-7. J1 fills a until 100, J2 takes 3 of b's nodes until `j2_end`. J3 (4
/// nodes) names a and b in `named` order and fits in neither; J4 (b, 1 node, 1000 s) comes at
/// 3, when b has one node free.
fn reserve_across(named: &'static [u32], j2_end: f64) -> RunLog {
    let specs = [
        (0.0, 100.0, 100.0, 4),               // J1 a
        (1.0, j2_end - 1.0, j2_end - 1.0, 3), // J2 b
        (2.0, 10.0, 10.0, 4),                 // J3 a or b
        (3.0, 1000.0, 1000.0, 1),             // J4 b
    ];
    let parts = vec![part("a", &[(0, 4)]), part("b", &[(4, 8)])];
    let cands: [&[u32]; 4] = [&[0], &[1], named, &[1]];
    run_site(
        8,
        &specs,
        parts,
        &cands,
        OverLimits::Reject,
        &mut fcfs_easy(),
    )
}

/// J2 holds b until 201: J3's reservation goes to a, whose nodes free first (shadow 100, no
/// extra node), whichever it names first. J4 then backfills on b's free node at 3: a
/// reservation in b (until 201, no extra node) would keep it waiting until J3 started at 100.
#[test]
fn a_job_naming_several_partitions_reserves_where_nodes_free_first() {
    for named in [&[0, 1][..], &[1, 0]] {
        let log = reserve_across(named, 201.0);
        assert_starts(&log, &[(0.0, P), (1.0, P), (100.0, P), (3.0, B)]);
        assert_eq!(log.partition, vec![0, 1, 0, 1]);
        // J3 (index 2) reserved at 2 and again at 3, both times in a from 100
        assert_eq!(
            log.reservations,
            vec![(2.0, 2, 100.0, 0), (3.0, 2, 100.0, 0)],
            "J3 names {named:?}"
        );
    }
}

/// J2 holds b until 100 too: a tie, and the reservation goes to the partition J3 names first.
/// In a, J4 backfills at 3 as above; in b (no extra node) J4 waits, J3 starts in b at 100 (the
/// first it names) and J4 after it, at 110.
#[test]
fn a_tie_between_partitions_reserves_in_the_first_named() {
    let log = reserve_across(&[0, 1], 100.0);
    assert_starts(&log, &[(0.0, P), (1.0, P), (100.0, P), (3.0, B)]);
    assert_eq!(log.partition, vec![0, 1, 0, 1]);
    let log = reserve_across(&[1, 0], 100.0);
    assert_starts(&log, &[(0.0, P), (1.0, P), (100.0, P), (110.0, P)]);
    assert_eq!(log.partition, vec![0, 1, 1, 1]);
}

/// A reservation counts the jobs started earlier in the same scan, by their requested ends,
/// and only on its own partition's nodes. a = nodes 0-3, b = 4-7; J1 holds 2 of a's nodes
/// until 100. At 5 arrive J2 (a, 1 node, until 15), J3 (b, 2 nodes, until 10) and J4 (a, 2
/// nodes): J2 and J3 start; J4 has 1 node of a free and gets J2's at 15: shadow 15, no extra
/// node (J3's nodes of b, free at 10, are not a's; J1's, at 100, come after J2's). J4 starts
/// when J2 ends. (J5, naming both partitions, makes them one component: one scan.)
#[test]
fn a_reservation_counts_this_scans_starts_on_its_own_nodes_in_time_order() {
    let specs = [
        (0.0, 100.0, 100.0, 2), // J1 a
        (5.0, 10.0, 10.0, 1),   // J2 a
        (5.0, 5.0, 5.0, 2),     // J3 b
        (5.0, 10.0, 10.0, 2),   // J4 a
        (200.0, 1.0, 1.0, 1),   // J5 a or b
    ];
    let parts = vec![part("a", &[(0, 4)]), part("b", &[(4, 8)])];
    let cands: [&[u32]; 5] = [&[0], &[0], &[1], &[0], &[0, 1]];
    let log = run_site(
        8,
        &specs,
        parts,
        &cands,
        OverLimits::Reject,
        &mut fcfs_easy(),
    );
    assert_eq!(log.reservations[0], (5.0, 3, 15.0, 0));
    assert_starts(&log, &[(0.0, P), (5.0, P), (5.0, P), (15.0, P), (200.0, P)]);
}

/// Each limit at its edge: small = nodes 0-3 with MaxNodes 2, MinNodes 2 and MaxTime 50 s,
/// big = 4-7. A job of exactly 2 nodes asking for exactly 50 s runs in small (Slurm refuses
/// only past a limit); 51 s, 3 nodes or 1 node is refused, each for its reason; a job of all
/// of big's 4 nodes runs there, 5 are refused. Held instead, none of them ever starts.
#[test]
fn a_job_exactly_at_a_partitions_limits_runs_and_one_past_them_does_not() {
    let specs = [
        (0.0, 50.0, 50.0, 2), // J1 small: at MaxTime, MaxNodes and MinNodes
        (0.0, 51.0, 51.0, 2), // J2 small: 1 s over MaxTime
        (0.0, 10.0, 10.0, 3), // J3 small: 1 node over MaxNodes
        (0.0, 10.0, 10.0, 1), // J4 small: 1 node under MinNodes
        (1.0, 10.0, 10.0, 4), // J5 big: the whole partition
        (1.0, 10.0, 10.0, 5), // J6 big: larger than it
    ];
    let mut small = part("small", &[(0, 4)]);
    small.max_nodes = Some(2);
    small.min_nodes = 2;
    small.max_time = Some(50.0);
    let parts = vec![small, part("big", &[(4, 8)])];
    let cands: [&[u32]; 6] = [&[0], &[0], &[0], &[0], &[1], &[1]];
    let log = run_site(
        8,
        &specs,
        parts.clone(),
        &cands,
        OverLimits::Reject,
        &mut fcfs_easy(),
    );
    assert_eq!((log.start[0], log.partition[0]), (0.0, 0));
    assert_eq!((log.start[4], log.partition[4]), (1.0, 1));
    assert_eq!(
        log.rejected,
        vec![
            (1, Rejection::OverMaxTime),
            (2, Rejection::OverMaxNodes),
            (3, Rejection::UnderMinNodes),
            (5, Rejection::LargerThanPartition),
        ]
    );
    let held = run_site(8, &specs, parts, &cands, OverLimits::Hold, &mut fcfs_easy());
    assert!(held.rejected.is_empty());
    assert_eq!((held.start[0], held.start[4]), (0.0, 1.0));
    assert!([1, 2, 3, 5].iter().all(|&j| held.start[j].is_nan()));
}

/// Windows of one partition that overlap hold its nodes once, from the first start to the
/// last end; apart, each its own time: a = nodes 0-1 down over [10, 20) and [15, 30), then
/// [40, 50); J1 (a, both nodes), waiting from 25, runs over [30, 35) on nodes 0-1.
#[test]
fn overlapping_windows_of_a_partition_hold_its_nodes_once() {
    let down = |start: f64, end: f64| Downtime {
        start,
        end,
        kind: DowntimeKind::Unscheduled,
        nodes: Some(2),
        back_asleep: false,
        partition: Some(0),
        range: None,
    };
    let calendar = Calendar::new(
        vec![down(10.0, 20.0), down(15.0, 30.0), down(40.0, 50.0)],
        0.0,
    )
    .unwrap();
    let specs = [(0.0, 100.0, 100.0, 1), (25.0, 5.0, 5.0, 2)];
    let parts = vec![part("a", &[(0, 2)]), part("b", &[(2, 4)])];
    let cands: [&[u32]; 2] = [&[1], &[0]];
    let inputs = site_inputs(4, &specs, parts, &cands, OverLimits::Reject, calendar);
    let mut engine = Engine::new(Arc::new(inputs.clone()));
    engine.run(&mut fcfs_easy()).unwrap();
    let log = engine.into_log();
    assert_eq!(log.start, vec![0.0, 30.0]);
    let (last, killed) = named_nodes(inputs, &log);
    assert_eq!(last, ["2", "0-1"]);
    assert!(killed.is_empty());
}

/// On a site whose node groups draw their own power (batch: 2 nodes at 100 W computing,
/// 10 W idle; gpu: 1 node at 400 W and 50 W), each atom counts at its group's power: J0 holds
/// both batch nodes over [0, 100), J1 the GPU node over [0, 50), J2 a batch node over
/// [100, 160). Jobs: 20,000, 20,000 and 6,000 J; in all 46,000 J computing and
/// (60 x 10 + 110 x 50) = 6,100 J idle up to the last end.
#[test]
fn each_atom_of_a_site_draws_its_own_groups_power() {
    let cpu = hpcsched_core::model::PowerModel {
        computing_w: 100.0,
        idle_w: 10.0,
        ..crate::power_classes::model()
    };
    let gpu = hpcsched_core::model::PowerModel {
        computing_w: 400.0,
        idle_w: 50.0,
        ..cpu
    };
    let specs = [
        (0.0, 100.0, 100.0, 2),
        (0.0, 50.0, 50.0, 1),
        (0.0, 60.0, 60.0, 1),
    ];
    let machine = Machine {
        nodes: 3,
        power: Some(cpu),
    };
    let inputs = Inputs::new(table(&specs), machine, Calendar::empty(), Overrun::Continue)
        .unwrap()
        .with_site_groups(vec![(2, cpu), (1, gpu)])
        .unwrap()
        .with_site(
            vec![part("batch", &[(0, 2)]), part("gpu", &[(2, 3)])],
            OverLimits::Reject,
            vec![0, 1, 2, 3],
            vec![0, 1, 0],
        )
        .unwrap();
    assert_eq!(inputs.atom_power, [cpu, gpu]);
    let mut engine = Engine::new(Arc::new(inputs));
    // the totals at 50 (a look-ahead's mark): J0's 2 nodes and J1's GPU node computing
    engine.set_mark(0, 50.0);
    engine.run(&mut fcfs_easy()).unwrap();
    let at_mark = engine.state().metrics_at_mark(0).unwrap().energy(&cpu);
    assert_eq!((at_mark.computing_j, at_mark.idle_j), (30_000.0, 0.0));
    let log = engine.into_log();
    assert_eq!(log.start, vec![0.0, 0.0, 100.0]);
    assert_eq!(log.energy_j, vec![20_000.0, 20_000.0, 6_000.0]);
    let energy = log.at_last_completion.energy(&cpu);
    assert_eq!(energy.computing_j, 46_000.0);
    assert_eq!(energy.idle_j, 6_100.0);
    // groups that do not add up to the machine are refused
    let wrong = Inputs::new(table(&specs), machine, Calendar::empty(), Overrun::Continue)
        .unwrap()
        .with_site_groups(vec![(2, cpu)]);
    assert!(wrong
        .unwrap_err()
        .to_string()
        .contains("node groups of 2 nodes in all"));
}

/// In one pool of one power model, a job draws its nodes' computing power over its run.
#[test]
fn one_pool_jobs_draw_the_machines_computing_power() {
    let cpu = crate::power_classes::model();
    let machine = Machine {
        nodes: 4,
        power: Some(cpu),
    };
    let inputs = Inputs::new(
        table(&[(0.0, 100.0, 100.0, 2)]),
        machine,
        Calendar::empty(),
        Overrun::Continue,
    )
    .unwrap();
    let mut engine = Engine::new(Arc::new(inputs));
    engine.run(&mut fcfs_easy()).unwrap();
    assert_eq!(engine.log().energy_j, vec![2.0 * 100.0 * cpu.computing_w]);
}
