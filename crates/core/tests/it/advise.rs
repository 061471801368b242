//! Plans from a live snapshot, worked by hand.

use hpcsched_core::advise::{plan, PendingJob, Plan, Planner, RunningJob, Snapshot, SnapshotSite};
use hpcsched_core::model::{PartitionSpec, Rejection};
use hpcsched_core::sched::slurm::{
    Association, PrioritySettings, Qos, SchedulerSettings, SlurmJobs, SlurmSetup,
};
use hpcsched_core::search::SearchOptions;
use hpcsched_core::search::{Reward, SearchConfig};

fn pending(id: i64, submit: f64, nodes: u32, limit: f64) -> PendingJob {
    PendingJob {
        id,
        submit,
        nodes,
        limit,
    }
}

fn queue(name: &str, window: Option<usize>) -> Planner {
    Planner::Queue {
        name: name.into(),
        window,
        backfill: "easy".into(),
    }
}

fn mars_cw(iterations: u32, trees: u32) -> Planner {
    Planner::Search {
        name: "mars".into(),
        options: Box::new(SearchOptions {
            actions: "paper".into(),
            reward: Reward::CW,
            config: SearchConfig {
                iterations: Some(iterations),
                trees,
                ..SearchConfig::default()
            },
            model: Default::default(),
            threads: 1,
        }),
    }
}

/// 4 nodes at t = 100; R (2 nodes) started at 0 with a 200 s limit; A needs the whole machine,
/// B and C two nodes each.
fn cluster(c_limit: f64) -> Snapshot {
    Snapshot {
        now: 100.0,
        machine_nodes: 4,
        down_nodes: 0,
        pending: vec![
            pending(11, 10.0, 4, 100.0),
            pending(12, 20.0, 2, 50.0),
            pending(13, 30.0, 2, c_limit),
        ],
        running: vec![RunningJob {
            id: 1,
            start: 0.0,
            nodes: 2,
            limit: 200.0,
        }],
        maintenance: vec![],
        site: None,
        slurm: None,
    }
}

#[test]
fn fcfs_plan_backfills_behind_the_reserved_head() {
    // A waits for R's limit (200); B (ends 150 <= 200) backfills now; C (ends 600) cannot.
    let p = plan(&cluster(500.0), &queue("fcfs", None)).unwrap();
    assert_eq!(p.planned_start, vec![200.0, 100.0, 300.0]);
    assert_eq!(
        (p.heuristic.as_str(), p.window, p.drain),
        ("fcfs", None, false)
    );
    // With C short (20 s): B backfills now; C backfills at 150 when B ends (ends 170 <= 200).
    let p = plan(&cluster(20.0), &queue("fcfs", None)).unwrap();
    assert_eq!(p.planned_start, vec![200.0, 100.0, 150.0]);
}

#[test]
fn sjf_plan_follows_its_own_order() {
    // SJF order C (20), B (50), A (100): C now, B when C ends (120), A at R's limit.
    let p = plan(&cluster(20.0), &queue("sjf", None)).unwrap();
    assert_eq!(p.planned_start, vec![200.0, 120.0, 100.0]);
    // A window of 1 sorts only the head: FCFS then, A stays first.
    let p = plan(&cluster(20.0), &queue("sjf", Some(1))).unwrap();
    assert_eq!(p.planned_start, vec![200.0, 100.0, 150.0]);
    assert_eq!(p.window, Some(1));
}

#[test]
fn announced_maintenance_and_down_nodes_shape_the_plan() {
    // The whole machine is in maintenance over [50, 150): a 100 s job cannot finish before it.
    let mut s = Snapshot {
        now: 0.0,
        machine_nodes: 4,
        pending: vec![pending(1, 0.0, 4, 100.0), pending(2, 0.0, 1, 40.0)],
        maintenance: vec![(50.0, 150.0, None)],
        site: None,
        ..Snapshot::default()
    };
    let p = plan(&s, &queue("fcfs", None)).unwrap();
    assert_eq!(p.planned_start, vec![150.0, 0.0]); // the short job fits before it
                                                   // Two nodes drained until further notice: the 4-node job's start is "never" in practice,
                                                   // and EASY still lets the small job run now.
    s.maintenance.clear();
    s.down_nodes = 2;
    let p = plan(&s, &queue("fcfs", None)).unwrap();
    assert!(p.planned_start[0] > 1e10);
    assert_eq!(p.planned_start[1], 0.0);
}

#[test]
fn overdue_running_jobs_are_expected_to_end_now() {
    // R has run past its limit: the honest estimate is "now", so A plans to start now.
    let mut s = cluster(20.0);
    s.now = 250.0;
    let p = plan(&s, &queue("fcfs", None)).unwrap();
    assert_eq!(p.planned_start, vec![250.0, 350.0, 350.0]);
}

#[test]
fn mars_chooses_an_action_and_plans_it_deterministically() {
    let planner = mars_cw(64, 2);
    let snapshot = cluster(20.0);
    let first: Plan = plan(&snapshot, &planner).unwrap();
    let again = plan(&snapshot, &planner).unwrap();
    assert_eq!(
        Plan {
            seconds: 0.0,
            ..first.clone()
        },
        Plan {
            seconds: 0.0,
            ..again
        }
    );
    assert!(first.outcomes >= 2 && first.iterations > 0);
    // Whatever it chose, the plan is that action's schedule: here every action starts one of
    // the short jobs now, so nothing waits past R's limit and A keeps its 200 s start.
    assert_eq!(first.planned_start[0], 200.0);
    assert!(first
        .planned_start
        .iter()
        .all(|t| (100.0..=200.0).contains(t)));
    let replay = plan(
        &snapshot,
        &queue(&first.heuristic, first.window.map(|w| w as usize)),
    );
    assert_eq!(replay.unwrap().planned_start, first.planned_start);
}

#[test]
fn mars_with_no_free_node_decides_when_one_frees() {
    // R holds the whole machine until 200: nothing can start now; MARS decides at 200.
    let mut snapshot = cluster(20.0);
    snapshot.running[0].nodes = 4;
    let planner = mars_cw(32, 1);
    let p = plan(&snapshot, &planner).unwrap();
    assert_eq!(p.decided_at, 200.0);
    assert!(p.planned_start.iter().all(|&t| t >= 200.0));
    let fcfs = plan(&snapshot, &queue("fcfs", None)).unwrap();
    assert_eq!(fcfs.decided_at, 100.0);
    // FCFS: A at 200, then B and C together at 300
    assert_eq!(fcfs.planned_start, vec![200.0, 300.0, 300.0]);
}

#[test]
fn bad_snapshots_are_refused() {
    let mut s = cluster(20.0);
    s.running[0].nodes = 5;
    assert!(plan(&s, &queue("fcfs", None)).is_err());
    let mut s = cluster(20.0);
    s.pending[0].limit = f64::INFINITY;
    assert!(plan(&s, &queue("fcfs", None)).is_err());
    let mut s = cluster(20.0);
    s.running[0].start = 1000.0;
    assert!(plan(&s, &queue("fcfs", None)).is_err());
}

/// 6 nodes at t = 100: batch = nodes 0-5 (tier 1), debug = nodes 4-5 (tier 2, at most 2 nodes
/// and 100 s). R1 runs on nodes 0-1 until 300, R2 (debug) on node 4 until 150; node 3 is
/// down. Pending, in submit order: A (batch, 3 nodes, 100 s), B (debug, 1, 50 s), C (debug,
/// 2, 500 s: over debug's MaxTime), D (batch or debug, 1, 30 s), E (batch, 1, 400 s).
fn two_tier_site() -> Snapshot {
    let mut debug = PartitionSpec::new("debug", &[(4, 6)]);
    (debug.tier, debug.max_nodes, debug.max_time) = (2, Some(2), Some(100.0));
    Snapshot {
        now: 100.0,
        machine_nodes: 6,
        down_nodes: 0,
        pending: vec![
            pending(11, 10.0, 3, 100.0),
            pending(12, 20.0, 1, 50.0),
            pending(13, 30.0, 2, 500.0),
            pending(14, 40.0, 1, 30.0),
            pending(15, 50.0, 1, 400.0),
        ],
        running: vec![
            RunningJob {
                id: 1,
                start: 0.0,
                nodes: 2,
                limit: 300.0,
            },
            RunningJob {
                id: 2,
                start: 50.0,
                nodes: 1,
                limit: 100.0,
            },
        ],
        maintenance: vec![],
        site: Some(SnapshotSite {
            partitions: vec![PartitionSpec::new("batch", &[(0, 6)]), debug],
            pending_offsets: vec![0, 1, 2, 3, 5, 6],
            pending_candidates: vec![0, 1, 1, 0, 1, 0],
            running_offsets: vec![0, 2, 3],
            running_nodes: vec![0, 1, 4],
            down: vec![(3, 4)],
            maintenance: vec![],
        }),
        slurm: None,
    }
}

/// Tier 2 first: B starts now on debug's free node 5, D now on batch's free node 2 (its first
/// candidate). A (tier 1) is then the top job: batch has no free node, so nothing backfills;
/// when D ends (130) A is reserved at 150 (R2 and B free debug's nodes), and E (ending long
/// after) may not take the one free node; A starts at 150, E when A ends (250). C is over
/// debug's MaxTime: it never starts (Slurm keeps it pending), tier 0. Node 3 stays down.
#[test]
fn a_plan_on_two_tiers_of_overlapping_partitions_as_computed_by_hand() {
    let p = plan(&two_tier_site(), &queue("fcfs", None)).unwrap();
    let starts: Vec<String> = p.planned_start.iter().map(|s| format!("{s}")).collect();
    assert_eq!(starts, ["150", "100", "NaN", "100", "250"]);
    assert_eq!(p.partition, vec![Some(0), Some(1), None, Some(0), Some(0)]);
    assert_eq!(p.tier, vec![1, 2, 0, 2, 1]);
    assert_eq!(p.rejection[2], Some(Rejection::OverMaxTime));
    assert!(p
        .rejection
        .iter()
        .enumerate()
        .all(|(k, r)| k == 2 || r.is_none()));
}

/// Maintenance of debug's nodes (4-5) from 160 to 400, announced: B ends by then (150) and
/// starts now on node 5, D now on batch's node 2. A may not take nodes 4-5 (it would end after
/// 160): it starts on nodes 0-2 when R1 ends at 300. E finds batch full until A ends and
/// debug's nodes back, both at 400.
#[test]
fn maintenance_over_a_node_range_shapes_a_plan_on_partitions() {
    let mut snapshot = two_tier_site();
    snapshot.site.as_mut().unwrap().maintenance = vec![(160.0, 400.0, (4, 6))];
    let p = plan(&snapshot, &queue("fcfs", None)).unwrap();
    let starts: Vec<String> = p.planned_start.iter().map(|s| format!("{s}")).collect();
    assert_eq!(starts, ["300", "100", "NaN", "100", "400"]);
}

/// MARS plans on partitions through the engine's own site: the plan is deterministic for a
/// seed, every job a partition accepts starts, and C (over every limit) never does.
#[test]
fn mars_plans_on_partitions() {
    let first = plan(&two_tier_site(), &mars_cw(30, 2)).unwrap();
    let mut again = plan(&two_tier_site(), &mars_cw(30, 2)).unwrap();
    again.seconds = first.seconds; // (the time it took)
    assert_eq!(format!("{first:?}"), format!("{again:?}")); // (NaN starts: not PartialEq)
    let started: Vec<bool> = first.planned_start.iter().map(|s| s.is_finite()).collect();
    assert_eq!(started, [true, true, false, true, true]);
}

/// A site whose columns disagree with the jobs is refused, not planned.
#[test]
fn bad_snapshot_sites_are_refused() {
    let mut held_twice = two_tier_site();
    held_twice.site.as_mut().unwrap().running_nodes = vec![0, 1, 1];
    let mut down_under_a_job = two_tier_site();
    down_under_a_job.site.as_mut().unwrap().down = vec![(1, 2)];
    let mut miscounted = two_tier_site();
    miscounted.running[0].nodes = 3;
    for bad in [held_twice, down_under_a_job, miscounted] {
        assert!(plan(&bad, &queue("fcfs", None)).is_err());
    }
}

/// Slurm's settings for [`cluster`]: one account, one user; `PriorityWeightJobSize=100`
/// (favouring large jobs, 1 CPU a node), `PriorityWeightQOS=1000` with C in QOS `high`
/// (priority 10, the largest) and B at nice -100. Attributes: A, B, C, then R.
fn slurm_setup() -> SlurmSetup {
    let node = |parent: Option<u32>, user: bool| Association {
        parent,
        shares: Some(1),
        user,
    };
    SlurmSetup {
        priority: PrioritySettings {
            weight_job_size: 100.0,
            weight_qos: 1000.0,
            ..PrioritySettings::default()
        },
        scheduler: SchedulerSettings::default(),
        associations: vec![node(None, false), node(Some(0), false), node(Some(1), true)],
        qos: vec![
            Qos::default(),
            Qos {
                priority: 10,
                ..Qos::default()
            },
        ],
        tres: Vec::new(),
        jobs: SlurmJobs {
            association: vec![2; 4],
            user: vec![0; 4],
            qos: vec![0, 0, 1, 0],
            nice: vec![0, -100, 0, 0],
            cpus: vec![4, 2, 2, 2],
            requested_cpus: Vec::new(),
            billing: Vec::new(),
            tres_priority: Vec::new(),
            tres: Vec::new(),
        },
        cluster_cpus: 4,
        cluster_nodes: 4,
        partition_factors: vec![1],
        origin: 0.0,
    }
}

#[test]
fn slurm_order_beside_the_plan_as_computed_by_hand() {
    // Priorities: A job size (4/4 + 4/4) / 2 = 1: 100; B (2/4 + 2/4) / 2 * 100 + 100 (nice
    // -100) = 150; C 50 + 1000 (QOS) = 1050. Slurm's order C, B, A (FCFS's is A, B, C).
    // Followed with EASY: C starts now on the 2 free nodes (ends 600); B is the head, reserved
    // at R's limit (200), starts then (ends 250); A waits for C: 600.
    let mut s = cluster(500.0);
    s.slurm = Some(slurm_setup());
    let p = plan(&s, &queue("fcfs", None)).unwrap();
    assert_eq!(p.planned_start, vec![200.0, 100.0, 300.0]); // the plan is FCFS's, as before
    assert_eq!(p.slurm_rank, vec![Some(2), Some(1), Some(0)]);
    assert_eq!(p.slurm_start, vec![600.0, 200.0, 100.0]);
    // `slurm` as the planned order itself: the same starts
    let p = plan(&s, &queue("slurm", None)).unwrap();
    assert_eq!(p.planned_start, vec![600.0, 200.0, 100.0]);
    assert_eq!(p.heuristic, "slurm");
    // Without Slurm's settings there is no Slurm order, and `slurm` cannot plan.
    let p = plan(&cluster(500.0), &queue("fcfs", None)).unwrap();
    assert!(p.slurm_rank.is_empty() && p.slurm_start.is_empty());
    let err = plan(&cluster(500.0), &queue("slurm", None)).unwrap_err();
    assert!(err.to_string().contains("slurm.conf"), "{err}");
    // Attributes for every job (3 pending + 1 running) or the snapshot is refused.
    let mut bad = slurm_setup();
    bad.jobs.nice.pop();
    s.slurm = Some(bad);
    assert!(plan(&s, &queue("fcfs", None)).is_err());
}

#[test]
fn slurm_order_on_partitions_ranks_tiers_first() {
    // On the two-tier site, with every weight 0 (every priority 1): Slurm's order is tier
    // first, then submission. Tier 2 (debug): B (12), D (14, batch or debug: its highest
    // tier); then tier 1: A (11), E (15); C (13) is over debug's MaxTime, no partition
    // accepts it: no place. Followed with EASY it is the plan FCFS gives on tiers.
    let mut s = two_tier_site();
    let mut setup = slurm_setup();
    setup.priority = PrioritySettings::default();
    setup.jobs = SlurmJobs {
        association: vec![2; 7],
        user: vec![0; 7],
        qos: vec![0; 7],
        nice: vec![0; 7],
        cpus: vec![3, 1, 2, 1, 1, 2, 1],
        requested_cpus: Vec::new(),
        billing: Vec::new(),
        tres_priority: Vec::new(),
        tres: Vec::new(),
    };
    (setup.cluster_cpus, setup.cluster_nodes) = (6, 6);
    setup.partition_factors = vec![1, 1];
    s.slurm = Some(setup);
    let p = plan(&s, &queue("fcfs", None)).unwrap();
    assert_eq!(p.slurm_rank, vec![Some(2), Some(0), None, Some(1), Some(3)]);
    let start = |v: &[f64]| {
        v.iter()
            .map(|t| t.is_finite().then_some(*t))
            .collect::<Vec<_>>()
    };
    assert_eq!(start(&p.slurm_start), start(&p.planned_start));
}
