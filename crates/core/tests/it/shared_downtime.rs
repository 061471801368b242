//! Downtime on shared nodes: schedules computed by hand, on nodes of 4 CPUs, 8000 MB and 2
//! GPUs under CR_Core_Memory (`shared::resources`). A window takes down named nodes; at its
//! start the jobs holding any of them are killed and requeued; an announced window's nodes are
//! used only by jobs that end before it starts.

use crate::common::*;
use crate::shared::{all_nodes, inputs_under, job, placements, shared, Shaped};
use hpcsched_core::{Calendar, Downtime, DowntimeKind, Inputs, Machine, Overrun, RunLog};

fn window(start: f64, end: f64, kind: DowntimeKind, range: Option<(u32, u32)>) -> Downtime {
    Downtime {
        start,
        end,
        kind,
        nodes: range.map(|(a, b)| b - a),
        back_asleep: false,
        partition: None,
        range,
    }
}

fn with_calendar(
    nodes: u32,
    jobs: &[Shaped],
    windows: Vec<Downtime>,
) -> hpcsched_core::Result<Inputs> {
    let calendar = Calendar::new(windows, 1000.0).unwrap();
    inputs_under(nodes, jobs, calendar).with_shared_nodes(shared(nodes, jobs, all_nodes(nodes)))
}

fn run(nodes: u32, jobs: &[Shaped], windows: Vec<Downtime>, easy: bool) -> RunLog {
    let inputs = with_calendar(nodes, jobs, windows).unwrap();
    let mut policy = if easy { fcfs_easy() } else { fcfs_none() };
    run_inputs(inputs, &mut policy)
}

#[test]
fn an_outage_kills_the_jobs_on_its_node_and_they_restart_on_another() {
    // both two-CPU jobs pack on n0 (best fit); n0 fails at 10 until 50
    let jobs = [
        (0.0, 100.0, job(2, 1000, 0)),
        (0.0, 100.0, job(2, 1000, 0)),
        (20.0, 100.0, job(4, 1000, 0)), // a whole node's CPUs: n0 once it is back
    ];
    let outage = window(10.0, 50.0, DowntimeKind::Unscheduled, Some((0, 1)));
    let log = run(2, &jobs, vec![outage], false);
    assert_eq!(log.start, [10.0, 10.0, 50.0]);
    let placed = placements(&log, 3);
    assert_eq!(placed[0], [(1, 2, 1000, 0)]);
    assert_eq!(placed[1], [(1, 2, 1000, 0)]);
    assert_eq!(placed[2], [(0, 4, 1000, 0)]);
    let mut lost: Vec<(u32, f64, f64)> = log.lost_attempts.clone();
    lost.sort_by_key(|a| a.0);
    assert_eq!(lost, [(0, 0.0, 10.0), (1, 0.0, 10.0)]);
}

#[test]
fn an_announced_window_is_kept_by_starts_and_by_easys_reservation() {
    // maintenance of n0 over [100, 200), announced from the start
    let mut one_node = job(4, 1000, 0);
    one_node.nodes = Some(1);
    let jobs = [
        (0.0, 50.0, job(1, 1000, 0)), // ends before it: n0 (first of two equal fits)
        (0.0, 150.0, job(1, 1000, 0)), // would run into it: n1
        (0.0, 500.0, one_node),       // top job: n0 frees at 50 but goes down at 100
        (0.0, 40.0, job(1, 1000, 0)), // backfilled, ends by the shadow time 150
    ];
    let maintenance = window(100.0, 200.0, DowntimeKind::Scheduled, Some((0, 1)));
    let log = run(2, &jobs, vec![maintenance], true);
    assert_eq!(log.start, [0.0, 0.0, 150.0, 0.0]);
    let placed = placements(&log, 4);
    assert_eq!(placed[0][0].0, 0);
    assert_eq!(placed[1][0].0, 1);
    assert_eq!(placed[2][0].0, 1);
    assert_eq!(placed[3][0].0, 0);
    assert_eq!(log.reservations[0], (0.0, 2, 150.0, 0));
    assert!(log.reservations.iter().all(|r| r.1 == 2 && r.2 == 150.0));
    assert!(log.lost_attempts.is_empty());
    // spread over nodes, the same job would fit now only with n0's CPUs: it runs into the
    // window, so it is skipped (no reservation) until n0 is down, then reserved on n1
    let mut spread = jobs.clone();
    spread[2].2 = job(4, 1000, 0);
    let log = run(2, &spread, vec![maintenance], true);
    assert_eq!(log.start, [0.0, 0.0, 150.0, 0.0]);
    assert_eq!(log.reservations, [(100.0, 2, 150.0, 0)]);
}

#[test]
fn a_job_only_a_window_stops_is_skipped_and_blocks_nothing() {
    let jobs = [
        (0.0, 300.0, job(4, 1000, 0)), // n1: n0 goes down at 100
        (0.0, 300.0, job(4, 1000, 0)), // would fit n0 but run into the window: skipped
        (0.0, 50.0, job(2, 1000, 0)),  // starts on n0 at once (no backfilling here)
    ];
    let maintenance = window(100.0, 200.0, DowntimeKind::Scheduled, Some((0, 1)));
    let log = run(2, &jobs, vec![maintenance], false);
    assert_eq!(log.start, [0.0, 200.0, 0.0]);
    let placed = placements(&log, 3);
    assert_eq!(placed[0][0].0, 1);
    assert_eq!(placed[1][0].0, 0);
    assert_eq!(placed[2][0].0, 0);
}

#[test]
fn easy_reserves_on_a_node_coming_back_from_an_outage() {
    // n0 is down over [0, 100); n1 runs a job to 400: the top job is reserved at 100 on n0
    // (no running job's end makes room: the node coming back does), and a job ending long
    // after that is backfilled on n1's two free CPUs, which the reservation does not need
    let jobs = [
        (0.0, 400.0, job(2, 1000, 0)), // n1
        (1.0, 300.0, job(4, 1000, 0)), // top job: n0 at 100
        (2.0, 500.0, job(2, 1000, 0)), // fits n1's two free CPUs, beside the reservation
    ];
    let outage = window(0.0, 100.0, DowntimeKind::Unscheduled, Some((0, 1)));
    let log = run(2, &jobs, vec![outage], true);
    assert_eq!(log.start, [0.0, 100.0, 2.0]);
    assert_eq!(log.reservations[0], (1.0, 1, 100.0, 0));
    let placed = placements(&log, 3);
    assert_eq!(placed[1][0].0, 0);
    assert_eq!(placed[2][0].0, 1);
}

#[test]
fn a_window_of_part_of_the_machine_names_its_nodes_on_shared_nodes() {
    let jobs = [(0.0, 10.0, job(1, 1000, 0))];
    let mut counted = window(5.0, 9.0, DowntimeKind::Unscheduled, None);
    counted.nodes = Some(1);
    let err = with_calendar(2, &jobs, vec![counted])
        .unwrap_err()
        .to_string();
    assert!(err.contains("names its nodes"), "{err}");
    let beyond = window(5.0, 9.0, DowntimeKind::Unscheduled, Some((1, 3)));
    let err = with_calendar(2, &jobs, vec![beyond])
        .unwrap_err()
        .to_string();
    assert!(err.contains("of a machine of 2"), "{err}");
    let last = window(5.0, 9.0, DowntimeKind::Unscheduled, Some((1, 2)));
    assert!(with_calendar(2, &jobs, vec![last]).is_ok());
}

/// What the engine says of job 0 (one CPU, 1000 MB, asking 100 s) started at 0 on `node`,
/// with maintenance of node 0 over `[from, until)` announced.
fn start_on(node: u32, from: f64, until: f64) -> String {
    let jobs = [(0.0, 100.0, job(1, 1000, 0))];
    let maintenance = window(from, until, DowntimeKind::Scheduled, Some((0, 1)));
    let inputs = with_calendar(2, &jobs, vec![maintenance]).unwrap();
    let mut engine = hpcsched_core::Engine::new(std::sync::Arc::new(inputs));
    engine.run_until(0.0, &mut crate::shared::Idle).unwrap();
    let mut decision = hpcsched_core::Decision::default();
    decision.starts.push(hpcsched_core::Start {
        pos: 0,
        job: 0,
        kind: P,
    });
    decision.site_starts.push((0, 1));
    decision
        .allocations
        .push(hpcsched_core::packing::Allocation {
            nodes: vec![node],
            cpus: vec![1],
            memory: vec![1000],
            gres: vec![0],
            exclusive: false,
        });
    match engine.apply_decision(&decision) {
        Ok(()) => "accepted".into(),
        Err(e) => e.to_string(),
    }
}

#[test]
fn the_engine_refuses_a_start_on_nodes_of_a_window_it_would_run_into() {
    assert!(start_on(0, 50.0, 80.0).contains("announced maintenance window on its nodes"));
    assert_eq!(start_on(1, 50.0, 80.0), "accepted");
    // (job 0 asks 100 s: a window from 100 on its node is not run into)
    assert_eq!(start_on(0, 100.0, 150.0), "accepted");
}

#[test]
fn slurms_scheduler_keeps_off_maintenance_announced_on_shared_nodes() {
    // maintenance of n0 over [100, 200), announced from the start; Slurm's defaults
    // (submission order, a backfill cycle every 30 s). J0 (-N1 -n4, 300 s) would run into it
    // on n0: the main pass gives it n1. J1 (the same) fits nowhere else and fails the
    // partition. J2 (1 CPU, 50 s) ends before the maintenance: the backfill cycle at 0 finds
    // n0 free over its run and starts it there. J1 is tried again from the maintenance's end:
    // it starts at 200 on n0, when n0 is back.
    let mut whole_node = job(4, 1000, 0);
    whole_node.nodes = Some(1);
    let jobs = [
        (0.0, 300.0, whole_node.clone()),
        (0.0, 300.0, whole_node),
        (0.0, 50.0, job(1, 1000, 0)),
    ];
    let maintenance = window(100.0, 200.0, DowntimeKind::Scheduled, Some((0, 1)));
    let inputs = with_calendar(2, &jobs, vec![maintenance]).unwrap();
    let setup = crate::slurm_shared::setup(&jobs, 2);
    let mut policy = hpcsched_core::sched::slurm::SlurmPolicy::new(std::sync::Arc::new(setup));
    let log = run_inputs(inputs, &mut policy);
    assert_eq!(log.start, [0.0, 200.0, 0.0]);
    let placed = placements(&log, 3);
    assert_eq!(placed[0][0].0, 1);
    assert_eq!(placed[1][0].0, 0);
    assert_eq!(placed[2][0].0, 0);
    assert_eq!(log.start_kind[2], B);
}

#[test]
fn a_node_down_in_two_windows_comes_back_when_both_have_ended() {
    // n1 fails over [10, 50) and is under maintenance over [30, 80): one node down from 10
    // to 80; the job needing a whole node of CPUs while n0 is busy starts on n1 at 80
    let jobs = [
        (0.0, 200.0, job(4, 1000, 0)), // n0 (first of two idle nodes)
        (5.0, 20.0, job(4, 1000, 0)),  // n1 (ends before the maintenance) until the outage
    ];
    let windows = vec![
        window(10.0, 50.0, DowntimeKind::Unscheduled, Some((1, 2))),
        window(30.0, 80.0, DowntimeKind::Scheduled, Some((1, 2))),
    ];
    let inputs = with_calendar(2, &jobs, windows).unwrap();
    let mut engine = hpcsched_core::Engine::new(std::sync::Arc::new(inputs));
    let mut policy = fcfs_easy();
    for (t, down) in [(20.0, 1), (40.0, 1), (60.0, 1), (90.0, 0)] {
        engine.run_until(t, &mut policy).unwrap();
        assert_eq!(engine.state().down_nodes(), down, "at {t}");
    }
    engine.run(&mut policy).unwrap();
    let log = engine.into_log();
    assert_eq!(log.start, [0.0, 80.0]);
    assert_eq!(placements(&log, 2)[1][0].0, 1);
    // its reservation, once killed: n1 is back at 80 (the outage's end at 50 leaves it down
    // in the maintenance, which it would run into before that)
    assert!(!log.reservations.is_empty());
    assert!(
        log.reservations.iter().all(|r| r.1 == 1 && r.2 == 80.0),
        "{:?}",
        log.reservations
    );
    assert_eq!(log.lost_attempts, [(1, 5.0, 10.0)]);
}

#[test]
fn a_reservation_is_planned_again_when_an_idle_node_goes_down() {
    // n0 runs J0 to 100, n1 J1 to 200, n2 is idle. J2 needs 8 CPUs: reserved at 100 on n0
    // and n2. At 50 n2 fails (no job on it: the running jobs are the same): the plan is
    // made again, at 200 on n0 and n1.
    let jobs = [
        (0.0, 100.0, job(4, 1000, 0)),
        (0.0, 200.0, job(4, 1000, 0)),
        (1.0, 500.0, job(8, 1000, 0)),
    ];
    let outage = window(50.0, 1000.0, DowntimeKind::Unscheduled, Some((2, 3)));
    let log = run(3, &jobs, vec![outage], true);
    let at = |t: f64| log.reservations.iter().find(|r| r.0 == t).map(|r| r.2);
    assert_eq!(at(1.0), Some(100.0));
    assert_eq!(at(50.0), Some(200.0));
    assert_eq!(log.start[2], 200.0);
}

#[test]
fn a_partitions_window_takes_down_its_nodes_only() {
    // partitions a = n0, b = n1; maintenance of b over [10, 20) kills b's job only
    use hpcsched_core::model::{OverLimits, PartitionSpec};
    let partitions = vec![
        PartitionSpec::new("a", &[(0, 1)]),
        PartitionSpec::new("b", &[(1, 2)]),
    ];
    let jobs = [(0.0, 100.0, job(2, 1000, 0)), (0.0, 100.0, job(2, 1000, 0))];
    let specs: Vec<Spec> = (jobs.iter())
        .map(|(submit, run, r)| (*submit, *run, *run, r.nodes.unwrap_or(1)))
        .collect();
    let mut maintenance = window(10.0, 20.0, DowntimeKind::Unscheduled, None);
    maintenance.partition = Some(1);
    maintenance.nodes = Some(1);
    let sets = crate::shared::node_sets(&[&[0], &[1]]);
    let inputs = Inputs::new(
        table(&specs),
        Machine::new(2),
        Calendar::new(vec![maintenance], 0.0).unwrap(),
        Overrun::Continue,
    )
    .unwrap()
    .with_site(partitions, OverLimits::Reject, vec![0, 1, 2], vec![0, 1])
    .unwrap()
    .with_shared_nodes(shared(2, &jobs, sets))
    .unwrap();
    let log = run_inputs(inputs, &mut fcfs_easy());
    assert_eq!(log.start, [0.0, 20.0]);
    assert_eq!(log.lost_attempts, [(1, 0.0, 10.0)]);
}

#[test]
fn shared_nodes_with_node_power_states_or_power_groups_are_refused() {
    let jobs = [(0.0, 10.0, job(1, 1000, 0))];
    let specs: Vec<Spec> = vec![(0.0, 10.0, 10.0, 1)];
    let model = crate::power_classes::model();
    let machine = Machine {
        nodes: 2,
        power: Some(model),
    };
    let base = || {
        Inputs::new(
            table(&specs),
            machine,
            Calendar::new(Vec::new(), 0.0).unwrap(),
            Overrun::Continue,
        )
        .unwrap()
    };
    let managed = base().with_power_management(None).unwrap();
    let grouped = base().with_groups(vec![(1, model), (1, model)]).unwrap();
    for inputs in [managed, grouped] {
        let err = inputs
            .with_shared_nodes(shared(2, &jobs, all_nodes(2)))
            .unwrap_err()
            .to_string();
        assert!(err.contains("node power states or node groups"), "{err}");
    }
}

#[test]
fn a_window_after_the_reserved_run_does_not_bar_its_nodes() {
    // n0 runs J0 to 50, n1 J1 to 60; J2 (a whole node's CPUs, 100 s) is reserved at 50 on
    // n0: the maintenance of n0 at [1000, 1100) comes long after its run
    let mut whole_node = job(4, 1000, 0);
    whole_node.nodes = Some(1);
    let jobs = [
        (0.0, 50.0, job(4, 1000, 0)),
        (0.0, 60.0, job(4, 1000, 0)),
        (1.0, 100.0, whole_node),
    ];
    let later = window(1000.0, 1100.0, DowntimeKind::Scheduled, Some((0, 1)));
    let log = run(2, &jobs, vec![later], true);
    assert_eq!(log.reservations[0], (1.0, 2, 50.0, 0));
    assert_eq!(log.start[2], 50.0);
    assert_eq!(placements(&log, 3)[2][0].0, 0);
}
