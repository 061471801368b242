//! `--policy slurm` when jobs share nodes (`sched::slurm::passes::shared`): schedules computed
//! by hand from Slurm 22.05's cons_tres and backfill (docs/slurm/cons_tres-22.05.md, §6 and the
//! live-checked examples of §7), on nodes of 4 CPUs, 8000 MB and 2 GPUs under CR_Core_Memory.
//! Default settings: backfill every 30 s, `bf_resolution` 60 s, priorities by submission.

use std::sync::Arc;

use crate::common::*;
use crate::shared::{
    all_nodes, job, node_sets, placements, resources, shared_inputs, starts, Shaped,
};
use hpcsched_core::model::{OverLimits, PartitionSpec, Request, SharedNodes};
use hpcsched_core::sched::slurm::{
    Association, PrioritySettings, Qos, SchedulerSettings, SlurmJobs, SlurmPolicy, SlurmSetup,
};
use hpcsched_core::{Calendar, Inputs, Machine, Overrun, RunLog};

/// Slurm's settings for `jobs` (one user, one QOS, every weight 0: submission order).
pub(crate) fn setup(jobs: &[Shaped], nodes: u32) -> SlurmSetup {
    let n = jobs.len();
    SlurmSetup {
        priority: PrioritySettings::default(),
        scheduler: SchedulerSettings::default(),
        associations: vec![
            Association {
                parent: None,
                shares: Some(1),
                user: false,
            },
            Association {
                parent: Some(0),
                shares: Some(1),
                user: true,
            },
        ],
        qos: vec![Qos::default()],
        tres: Vec::new(),
        jobs: SlurmJobs {
            association: vec![1; n],
            user: vec![0; n],
            qos: vec![0; n],
            nice: vec![0; n],
            cpus: jobs.iter().map(|j| j.2.cpus() as u32).collect(),
            requested_cpus: Vec::new(),
            billing: Vec::new(),
            tres_priority: Vec::new(),
            tres: Vec::new(),
        },
        cluster_cpus: u64::from(nodes * 4),
        cluster_nodes: nodes,
        partition_factors: vec![1],
        origin: 0.0,
    }
}

fn run_slurm(nodes: u32, jobs: &[Shaped]) -> RunLog {
    let mut policy = SlurmPolicy::new(Arc::new(setup(jobs, nodes)));
    run_inputs(shared_inputs(nodes, jobs), &mut policy)
}

fn run_easy(nodes: u32, jobs: &[Shaped]) -> RunLog {
    run_inputs(shared_inputs(nodes, jobs), &mut fcfs_easy())
}

#[test]
fn a_backfilled_job_keeps_off_a_node_reserved_whole_for_a_gpu_job() {
    // Example 3 of cons_tres-22.05.md, as the real cluster ran it. J1 takes both GPUs of n0
    // (limit 300), J2 one of n1. J3 needs 2 GPUs: it fails the main pass, and the backfill
    // cycle at 30 reserves n0 for it, whole, from J1's end (300). J4 (2 CPUs, limit 600) fails
    // to start in the main pass (its partition failed with J3), and the cycle at 30 finds its
    // run [30, 630] overlapping n0's reservation: it starts on n1 although n0 has 3 free CPUs
    // (the placement rule alone says n0: a tie at 3 free CPUs, first node).
    let jobs = [
        (0.0, 300.0, job(1, 1000, 2)),
        (1.0, 2000.0, job(1, 1000, 1)),
        (2.0, 100.0, job(1, 1000, 2)),
        (3.0, 600.0, job(2, 1000, 0)),
    ];
    let log = run_slurm(2, &jobs);
    assert_starts(&log, &[(0.0, P), (1.0, P), (300.0, P), (30.0, B)]);
    let on = placements(&log, 4);
    assert_eq!(on[0], [(0, 1, 1000, 2)]);
    assert_eq!(on[2], [(0, 1, 1000, 2)]);
    assert_eq!(on[3], [(1, 2, 1000, 0)]);
    // EASY on vectors reserves per resource: J4 fits beside J3 on n0 and starts at once there
    let log = run_easy(2, &jobs);
    assert_eq!(starts(&log)[3], 3.0);
    assert_eq!(placements(&log, 4)[3], [(0, 2, 1000, 0)]);
}

#[test]
fn a_reservation_of_two_nodes_holds_back_a_one_cpu_job_that_fits_beside_it() {
    // Example 5. J1 (-n6 --mem-per-cpu=1000, limit 300) spreads 4 + 2 CPUs over n0 and n1.
    // J2 (-N2 -n2 --mem=500) needs a CPU on each: the cycle at 30 reserves both nodes whole
    // from 300 to 360 (its end, 400, floored). J3 (-n1 --mem=500, limit 600) fits on n1 now,
    // but its run overlaps the reservation on every node: Slurm tries again from the
    // reservation's end, 360, and reserves it there; J1 ends at 300, and the main pass then
    // starts J2 and J3 together. (EASY on vectors starts J3 at once: it fits now and, beside
    // J2, at 300.)
    let mut j2 = job(2, 500, 0);
    j2.nodes = Some(2);
    let jobs = [
        (
            0.0,
            300.0,
            Request::tasks(6, hpcsched_core::model::Memory::PerCpu(1000)),
        ),
        (1.0, 100.0, j2),
        (2.0, 600.0, job(1, 500, 0)),
    ];
    let log = run_slurm(2, &jobs);
    assert_starts(&log, &[(0.0, P), (300.0, P), (300.0, P)]);
    let on = placements(&log, 3);
    assert_eq!(on[0], [(0, 4, 4000, 0), (1, 2, 2000, 0)]);
    assert_eq!(on[1], [(0, 1, 500, 0), (1, 1, 500, 0)]);
    assert_eq!(starts(&run_easy(2, &jobs)), [0.0, 300.0, 2.0]);
}

/// `-N nodes --exclusive`: whole nodes.
fn whole(nodes: u32) -> Request {
    Request {
        nodes: Some(nodes),
        tasks: nodes,
        cpus_per_task: 1,
        tasks_per_node: None,
        memory: hpcsched_core::model::Memory::Whole,
        gres: Vec::new(),
        exclusive: true,
    }
}

#[test]
fn a_reservation_names_its_nodes_and_may_take_the_one_a_backfill_needed() {
    // Whole nodes, 4 of them. J1 (2 nodes, limit 10) takes n0 and n1 and ends at 10; J2 (2
    // nodes, limit 100) holds n2 and n3. J3 (3 nodes) is reserved at 100, on the nodes the rule
    // gives it then: the first three of the run n0..n3, so n0 and n1, free now, are reserved
    // from 60 (100 floored). J4 (1 node, limit 500) would fit on n0 now, and by counts of nodes
    // beside the reservation too (2 free now, 4 at 100, J3 needs 3); but every node free now
    // is reserved: it waits, and starts with J3 when J2 ends.
    let jobs = [
        (0.0, 10.0, whole(2)),
        (1.0, 100.0, whole(2)),
        (20.0, 100.0, whole(3)),
        (21.0, 500.0, whole(1)),
    ];
    let log = run_slurm(4, &jobs);
    assert_starts(&log, &[(0.0, P), (1.0, P), (101.0, P), (101.0, P)]);
    let nodes: Vec<Vec<u32>> = (placements(&log, 4).iter())
        .map(|p| p.iter().map(|n| n.0).collect())
        .collect();
    assert_eq!(nodes, [vec![0, 1], vec![2, 3], vec![0, 1, 2], vec![3]]);
}

/// A random mixed workload on 3 nodes: `-n 1..6` tasks with 0..8000 MB per node, GPUs on a
/// third, some on one node, some exclusive; limits above the run times.
fn mixed(draws: &mut Draws, jobs: usize) -> (Vec<Spec>, Vec<Shaped>) {
    let mut submit = 0.0;
    let mut specs = Vec::new();
    let mut shaped = Vec::new();
    for _ in 0..jobs {
        submit += draws.below(40) as f64;
        let requested = 10.0 + draws.below(400) as f64;
        let run = (requested * (draws.below(100) as f64 + 1.0) / 100.0).round();
        let tasks = 1 + draws.below(6) as u32;
        let mut request = job(tasks, 1 + draws.below(8000), (draws.below(3) == 0) as u32);
        if draws.below(4) == 0 {
            request.nodes = Some(1);
            request.tasks = request.tasks.min(4);
        }
        request.exclusive = draws.below(10) == 0;
        specs.push((submit, run, requested, request.nodes.unwrap_or(1)));
        shaped.push((submit, requested, request));
    }
    (specs, shaped)
}

fn mixed_inputs(specs: &[Spec], shaped: &[Shaped]) -> Inputs {
    let requests = shaped.iter().map(|j| j.2.clone()).collect();
    Inputs::new(
        table(specs),
        Machine::new(3),
        Calendar::new(Vec::new(), 0.0).unwrap(),
        Overrun::Continue,
    )
    .unwrap()
    .with_shared_nodes(SharedNodes::new(resources(3), requests, all_nodes(3)).unwrap())
    .unwrap()
}

#[test]
fn cycles_cut_short_on_shared_nodes_start_the_same_jobs_as_whole_ones() {
    // The backfill cycle stops past the last job that fits what is free, and timers are set
    // only while a waiting job may fit: against every cycle run over every job and every
    // timer set, no start changes, on random mixed workloads (every start checked by the
    // engine against its request).
    let mut draws = Draws(0x5107_5a3d);
    for round in 0..60 {
        let (specs, shaped) = mixed(&mut draws, 50);
        let policy = || SlurmPolicy::new(Arc::new(setup(&shaped, 3)));
        let cut = run_inputs(mixed_inputs(&specs, &shaped), &mut policy());
        let whole = run_inputs(mixed_inputs(&specs, &shaped), &mut policy().exhaustive());
        assert!(cut.start.iter().all(|s| s.is_finite()), "round {round}");
        assert_eq!(cut.start, whole.start, "round {round}");
        assert_eq!(cut.start_kind, whole.start_kind, "round {round}");
        assert_eq!(cut.allocations, whole.allocations, "round {round}");
        let backfilled = (cut.start_kind.iter()).filter(|&&k| k == B).count();
        assert!(backfilled > 0, "round {round}: nothing backfilled");
    }
}

#[test]
fn a_partition_failing_the_main_pass_closes_its_nodes_to_a_partition_over_them() {
    // Partitions "all" (n0, n1) and "one" (n1). J1 fills n0 and J2 takes 2 CPUs of n1 (limits
    // 1000). J3 (all, 4 CPUs) fits nowhere: "all" fails the main pass and its nodes close to the
    // rest of the pass, so J4 (one, 1 CPU) does not start at its arrival although n1 has room;
    // the backfill cycle at 30 reserves n0 for J3 and starts J4 on n1.
    let jobs = [
        (0.0, 1000.0, job(4, 1000, 0)),
        (1.0, 1000.0, job(2, 1000, 0)),
        (2.0, 100.0, job(4, 1000, 0)),
        (3.0, 100.0, job(1, 1000, 0)),
    ];
    let partitions = vec![
        PartitionSpec::new("all", &[(0, 2)]),
        PartitionSpec::new("one", &[(1, 2)]),
    ];
    let candidates: [u32; 4] = [0, 0, 0, 1];
    let sets = node_sets(&[&[0, 1], &[1]]);
    let requests = jobs.iter().map(|j| j.2.clone()).collect();
    let inputs = shared_site_inputs(&jobs, partitions, &candidates)
        .with_shared_nodes(SharedNodes::new(resources(2), requests, sets).unwrap())
        .unwrap();
    let mut s = setup(&jobs, 2);
    s.partition_factors = vec![1, 1];
    let log = run_inputs(inputs, &mut SlurmPolicy::new(Arc::new(s)));
    assert_starts(&log, &[(0.0, P), (1.0, P), (1000.0, P), (30.0, B)]);
    assert_eq!(log.partition, [0, 0, 0, 1]);
    assert_eq!(placements(&log, 4)[3], [(1, 1, 1000, 0)]);
}

/// The inputs of `jobs` on a site of `partitions`, job `j` in partition `candidates[j]`.
fn shared_site_inputs(
    jobs: &[Shaped],
    partitions: Vec<PartitionSpec>,
    candidates: &[u32],
) -> Inputs {
    let specs: Vec<Spec> = (jobs.iter())
        .map(|(submit, run, r)| (*submit, *run, *run, r.nodes.unwrap_or(1)))
        .collect();
    Inputs::new(
        table(&specs),
        Machine::new(2),
        Calendar::new(Vec::new(), 0.0).unwrap(),
        Overrun::Continue,
    )
    .unwrap()
    .with_site(
        partitions,
        OverLimits::Reject,
        (0..=candidates.len() as u32).collect(),
        candidates.to_vec(),
    )
    .unwrap()
}

#[test]
fn an_events_main_pass_on_shared_nodes_tests_default_queue_depth_plus_one_jobs() {
    // One node of 4 CPUs, no backfill: J1 (3 CPUs) runs until 100 beside J2 (1 CPU, until
    // 1000); J3, J4, J5 (1 CPU each) wait. At J1's end the event's pass tests depth + 1
    // entries: with depth 1, J3 and J4 start at 100 and J5 at the full pass at 120; with
    // depth 2 all three at 100. (A full pass tests every entry.)
    let jobs = [
        (0.0, 100.0, job(3, 100, 0)),
        (0.0, 1000.0, job(1, 100, 0)),
        (1.0, 50.0, job(1, 100, 0)),
        (2.0, 50.0, job(1, 100, 0)),
        (3.0, 50.0, job(1, 100, 0)),
    ];
    let starts_with = |depth: usize| {
        let mut s = setup(&jobs, 1);
        s.scheduler.bf_interval = None;
        s.scheduler.default_queue_depth = depth;
        starts(&run_inputs(
            shared_inputs(1, &jobs),
            &mut SlurmPolicy::new(Arc::new(s)),
        ))
    };
    assert_eq!(starts_with(1), [0.0, 0.0, 100.0, 100.0, 120.0]);
    assert_eq!(starts_with(2), [0.0, 0.0, 100.0, 100.0, 100.0]);
}

#[test]
fn a_failed_partition_is_counted_once_and_the_others_pass_goes_on() {
    // Partitions "a" (n0) and "b" (n1). J1 fills n0 (until 1000); J2 (a) fits nowhere: "a"
    // fails. J3 (a, later) is not tested again (its partition failed), so the pass goes on to
    // J4 (b), which starts at its arrival on n1 without waiting for a backfill cycle.
    let jobs = [
        (0.0, 1000.0, job(4, 100, 0)),
        (1.0, 100.0, job(1, 100, 0)),
        (2.0, 100.0, job(1, 100, 0)),
        (3.0, 100.0, job(1, 100, 0)),
    ];
    let partitions = vec![
        PartitionSpec::new("a", &[(0, 1)]),
        PartitionSpec::new("b", &[(1, 2)]),
    ];
    let sets = node_sets(&[&[0], &[1]]);
    let requests = jobs.iter().map(|j| j.2.clone()).collect();
    let inputs = shared_site_inputs(&jobs, partitions, &[0, 0, 0, 1])
        .with_shared_nodes(SharedNodes::new(resources(2), requests, sets).unwrap())
        .unwrap();
    let mut s = setup(&jobs, 2);
    s.partition_factors = vec![1, 1];
    s.scheduler.bf_interval = None;
    let log = run_inputs(inputs, &mut SlurmPolicy::new(Arc::new(s)));
    assert_starts(&log, &[(0.0, P), (1000.0, P), (1000.0, P), (3.0, P)]);
}

/// Example 3's jobs (see the first test) with J5 (2 CPUs, limit 240) arriving at 4.
fn example_3_and_a_short_job() -> Vec<Shaped> {
    vec![
        (0.0, 300.0, job(1, 1000, 2)),
        (1.0, 2000.0, job(1, 1000, 1)),
        (2.0, 100.0, job(1, 1000, 2)),
        (3.0, 600.0, job(2, 1000, 0)),
        (4.0, 240.0, job(2, 1000, 0)),
    ]
}

#[test]
fn a_reservation_is_floored_on_the_wall_clock_and_a_run_ending_before_it_backfills() {
    // The replay clock's 0 is 17 s past a wall-clock minute. J3's reservation on n0 at 300
    // begins at its start floored to the minute on the wall clock (317 -> 300, so 283 here).
    // J4's run [30, 630] overlaps it: n1, as before. J5 needs 2 CPUs, which only n0 has; its
    // run [30, 270] ends before 283: it starts on n0 (on the replay clock's own minutes the
    // reservation would begin at 240 and J5 would wait).
    let jobs = example_3_and_a_short_job();
    let mut s = setup(&jobs, 2);
    s.origin = 17.0;
    let log = run_inputs(shared_inputs(2, &jobs), &mut SlurmPolicy::new(Arc::new(s)));
    assert_starts(
        &log,
        &[(0.0, P), (1.0, P), (300.0, P), (30.0, B), (30.0, B)],
    );
    let on = placements(&log, 5);
    assert_eq!(on[3], [(1, 2, 1000, 0)]);
    assert_eq!(on[4], [(0, 2, 1000, 0)]);
    // a limit of 260 ends J5's run at 290, past the reservation's floored start: it waits
    let mut jobs = jobs;
    jobs[4].1 = 260.0;
    let mut s = setup(&jobs, 2);
    s.origin = 17.0;
    let log = run_inputs(shared_inputs(2, &jobs), &mut SlurmPolicy::new(Arc::new(s)));
    assert!(log.start[4] > 30.0, "J5 started at {}", log.start[4]);
}

#[test]
fn bf_max_job_test_and_bf_max_job_user_cut_a_cycle_on_shared_nodes() {
    // Example 3: with one job tested a cycle (bf_max_job_test 1, or one a user with
    // bf_max_job_user 1: every job is the same user's), J3 takes the test and J4 is never
    // backfilled: it starts with J3 at 300, in the main pass, on n1. Another user's J4 is
    // tested beside J3 under bf_max_job_user 1, and backfilled at 30.
    let jobs = &example_3_and_a_short_job()[..4];
    for (max_test, max_user, other_user) in [(1, 0, false), (500, 1, false), (500, 1, true)] {
        let mut s = setup(jobs, 2);
        s.scheduler.bf_max_job_test = max_test;
        s.scheduler.bf_max_job_user = max_user;
        if other_user {
            s.jobs.user[3] = 1;
        }
        let log = run_inputs(shared_inputs(2, jobs), &mut SlurmPolicy::new(Arc::new(s)));
        let j4 = if other_user { (30.0, B) } else { (300.0, P) };
        assert_starts(&log, &[(0.0, P), (1.0, P), (300.0, P), j4]);
    }
}

#[test]
fn a_job_retries_from_the_end_of_a_hold_that_keeps_it_off_a_node() {
    // Whole nodes n0-n2, bf_window 10 min. J1 holds n0 until 400, J2 n1 until 5000. J3 (3
    // nodes) fails the main pass and gets no reservation (its start, 5000, is past the
    // window). J4 (exclusive, limit 100) is backfilled on n2 at 30, which the cycle's map then
    // holds until 120 (130 floored). J5 (1 node, limit 1000) overlaps that hold: on n0 and n1
    // it would start at 400; but n2 comes back at 120, earlier, so Slurm tries again from
    // there (`later_start`) and finds n2 once J4 ends: its reservation, the cycle's first,
    // is at 130. (Every cycle run in full: cut short, the cycle stops once no job left can
    // start now, before J5, whose reservation nothing would read.)
    let jobs = [
        (0.0, 400.0, whole(1)),
        (0.0, 5000.0, whole(1)),
        (1.0, 100.0, whole(3)),
        (2.0, 100.0, whole(1)),
        (3.0, 1000.0, whole(1)),
    ];
    let mut s = setup(&jobs, 3);
    s.scheduler.bf_window = 600.0;
    let mut policy = SlurmPolicy::new(Arc::new(s)).exhaustive();
    let log = run_inputs(shared_inputs(3, &jobs), &mut policy);
    assert_eq!(log.start[3], 30.0);
    let first_at_30 = log.reservations.iter().find(|r| r.0 == 30.0);
    assert_eq!(first_at_30, Some(&(30.0, 4, 130.0, 0)));
}

#[test]
fn a_will_run_start_is_the_last_end_of_its_release_batch() {
    // Whole nodes n0-n3. J1 holds n0 and n1 until 100, J2 n2 until 130. J3 (3 nodes) fits
    // once J1 ends, but Slurm's will-run test releases the running jobs in batches: those
    // ending within 30 s past the first end rounded up to 30 s (120 + 30) go together, so J3
    // starts at 130 in its estimate, on the nodes the rule then gives it: n0-n2, held from 120.
    // J4 (1 node, limit 80) fits on n3 beside that reservation and backfills at 30. (Released
    // one by one, J3 would be reserved at 100 on n0, n1 and n3, the one node free now, and J4
    // would wait.) J4 leaves n3 at 110: J3 starts then, on n0, n1 and n3.
    let jobs = [
        (0.0, 100.0, whole(2)),
        (0.0, 130.0, whole(1)),
        (1.0, 100.0, whole(3)),
        (2.0, 80.0, whole(1)),
    ];
    let log = run_slurm(4, &jobs);
    assert_starts(&log, &[(0.0, P), (0.0, P), (110.0, P), (30.0, B)]);
    let nodes: Vec<Vec<u32>> = (placements(&log, 4).iter())
        .map(|p| p.iter().map(|n| n.0).collect())
        .collect();
    assert_eq!(nodes[3], [3]);
    assert_eq!(nodes[2], [0, 1, 3]);
    // The batches are cut on the wall clock: 17 s past a minute at the replay clock's 0, the
    // first end (100, so 117) rounds up to 120 (103 here) and the batch ends at 133; J2 ending
    // at 134 is then a batch of its own: J3 is reserved at 100, on n0, n1 and n3, and J4 waits
    // for J3 to start (134, once J2 ends: n0, n1 and n2) and n3 to be free again.
    let shifted = |j2_end: f64| {
        let mut jobs = jobs.clone();
        jobs[1].1 = j2_end;
        let mut s = setup(&jobs, 4);
        s.origin = 17.0;
        run_inputs(shared_inputs(4, &jobs), &mut SlurmPolicy::new(Arc::new(s))).start[3]
    };
    assert!(shifted(134.0) > 30.0);
    // (J2 ending at 130 is still in the batch: J4 backfills as before)
    assert_eq!(shifted(130.0), 30.0);
}

#[test]
fn the_release_window_doubles_after_each_batch() {
    // Whole nodes n0-n4; n0-n3 held until 100, 245, 270 and 5000, n4 free. J5 (3 nodes): the
    // first batch (J1, up to 120 + 30) leaves it short; the window then doubles until it
    // reaches the next end (60, 120, 240: 245 <= 120 + 240), so the second batch takes J2
    // and J3 (270 <= 360): J5 is reserved at 270, on n0-n2 (the run that covers it). J6 (1
    // node, limit 300) backfills on n4 at 30. (With J2 alone in its batch J5 would be
    // reserved at 245 on n0, n1 and n4, and J6 would wait.)
    let jobs = [
        (0.0, 100.0, whole(1)),
        (0.0, 245.0, whole(1)),
        (0.0, 270.0, whole(1)),
        (0.0, 5000.0, whole(1)),
        (1.0, 100.0, whole(3)),
        (2.0, 300.0, whole(1)),
    ];
    let log = run_slurm(5, &jobs);
    assert_eq!(log.start[5], 30.0);
    assert_eq!(placements(&log, 6)[5][0].0, 4);
}
