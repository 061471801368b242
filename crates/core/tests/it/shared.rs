//! Jobs sharing nodes through the engine (`engine::shared`, `sched::shared`): schedules
//! computed by hand, on nodes of 4 CPUs, 8000 MB and 2 GPUs under CR_Core_Memory.

use std::sync::Arc;

use crate::common::*;
use hpcsched_core::model::{
    GresRequest, Memory, NodeSet, NodeShape, OverLimits, PartitionSpec, Request, Resources,
    SharedNodes, Sharing,
};
use hpcsched_core::packing::NodeLimits;
use hpcsched_core::{
    Backfill, Calendar, Engine, Heuristic, Inputs, Machine, Overrun, Policy, QueuePolicy, RunLog,
};

/// A job: (submit, run = requested time, request).
pub(crate) type Shaped = (f64, f64, Request);

pub(crate) fn resources(nodes: u32) -> Resources {
    let shape = NodeShape {
        cpus: 4,
        threads_per_core: 1,
        memory: 8000,
        gres: vec![2].into(),
        weight: 1,
    };
    Resources::new(
        Sharing::CoreMemory,
        vec!["gpu".into()],
        vec![shape],
        vec![0; nodes as usize],
    )
    .unwrap()
}

/// `-n tasks --mem=mb [--gres=gpu:gpus]`.
pub(crate) fn job(tasks: u32, mb: u64, gpus: u32) -> Request {
    let mut request = Request::tasks(tasks, Memory::PerNode(mb));
    if gpus > 0 {
        request.gres.push(GresRequest {
            kinds: vec![0].into(),
            count: gpus,
        });
    }
    request
}

pub(crate) fn inputs(nodes: u32, jobs: &[Shaped]) -> Inputs {
    inputs_under(nodes, jobs, Calendar::new(Vec::new(), 0.0).unwrap())
}

/// [`inputs`] under a downtime calendar.
pub(crate) fn inputs_under(nodes: u32, jobs: &[Shaped], calendar: Calendar) -> Inputs {
    let specs: Vec<Spec> = jobs
        .iter()
        .map(|(submit, run, r)| (*submit, *run, *run, r.nodes.unwrap_or(1)))
        .collect();
    Inputs::new(
        table(&specs),
        Machine::new(nodes),
        calendar,
        Overrun::Continue,
    )
    .unwrap()
}

pub(crate) fn shared(nodes: u32, jobs: &[Shaped], sets: Vec<NodeSet>) -> SharedNodes {
    let requests = jobs.iter().map(|j| j.2.clone()).collect();
    SharedNodes::new(resources(nodes), requests, sets).unwrap()
}

/// One node set per list of nodes, without limits.
pub(crate) fn node_sets(lists: &[&[u32]]) -> Vec<NodeSet> {
    (lists.iter())
        .map(|nodes| NodeSet {
            nodes: nodes.to_vec(),
            limits: NodeLimits::default(),
            max_mem_per_node: None,
        })
        .collect()
}

pub(crate) fn all_nodes(nodes: u32) -> Vec<NodeSet> {
    node_sets(&[&(0..nodes).collect::<Vec<u32>>()])
}

/// `jobs` on `nodes` shared nodes, one node set of them all.
pub(crate) fn shared_inputs(nodes: u32, jobs: &[Shaped]) -> Inputs {
    inputs(nodes, jobs)
        .with_shared_nodes(shared(nodes, jobs, all_nodes(nodes)))
        .unwrap()
}

fn run_shared(nodes: u32, jobs: &[Shaped], easy: bool) -> RunLog {
    let inputs = shared_inputs(nodes, jobs);
    let mut policy = if easy { fcfs_easy() } else { fcfs_none() };
    run_inputs(inputs, &mut policy)
}

/// Each job's (node, CPUs, MB, GPUs) per node, by job.
pub(crate) fn placements(log: &RunLog, jobs: usize) -> Vec<Vec<(u32, u32, u64, u32)>> {
    let mut out = vec![Vec::new(); jobs];
    for (job, a) in &log.allocations {
        out[*job as usize] = (0..a.nodes.len())
            .map(|i| (a.nodes[i], a.cpus[i], a.memory[i], a.gres[i]))
            .collect();
    }
    out
}

pub(crate) fn starts(log: &RunLog) -> Vec<f64> {
    log.start.clone()
}

#[test]
fn jobs_of_mixed_cpus_memory_and_gpus_pack_on_one_node() {
    let jobs = [
        (0.0, 100.0, job(1, 2000, 1)),
        (0.0, 100.0, job(2, 4000, 0)),
        (0.0, 100.0, job(1, 2000, 1)),
        // no CPU left: waits for the first end
        (0.0, 100.0, job(1, 1000, 0)),
    ];
    let log = run_shared(1, &jobs, false);
    assert_eq!(starts(&log), [0.0, 0.0, 0.0, 100.0]);
    assert_eq!(
        placements(&log, 4),
        [
            vec![(0, 1, 2000, 1)],
            vec![(0, 2, 4000, 0)],
            vec![(0, 1, 2000, 1)],
            vec![(0, 1, 1000, 0)],
        ]
    );
}

#[test]
fn memory_binds_while_cpus_are_free_and_easy_backfills_on_it() {
    let jobs = [
        (0.0, 100.0, job(1, 6000, 0)),
        // 2000 MB free: the top job, reserved at 100 (1 CPU, 4000 MB)
        (0.0, 100.0, job(1, 4000, 0)),
        // ends by the shadow time: fits now
        (0.0, 50.0, job(2, 1000, 0)),
        // ends after it: 1000 MB are free now and at 100 beside the reservation
        (0.0, 500.0, job(1, 1000, 0)),
        // nothing free now; at 50 the third job's 1000 MB come back, and 3000 MB are free
        // at 100 beside the reservation and the fourth job
        (0.0, 500.0, job(1, 1000, 0)),
    ];
    let easy = run_shared(1, &jobs, true);
    assert_eq!(starts(&easy), [0.0, 100.0, 0.0, 0.0, 50.0]);
    assert_eq!(easy.start_kind[3], B);
    // in order only: each waits for the job before it
    let fcfs = run_shared(1, &jobs, false);
    assert_eq!(starts(&fcfs), [0.0, 100.0, 100.0, 100.0, 150.0]);
}

#[test]
fn gpus_bind_while_cores_are_free_and_a_backfill_may_not_take_the_reserved_gpus() {
    let jobs = [
        (0.0, 100.0, job(1, 1000, 1)),
        // one GPU free: the top job, reserved at 100 on 1 CPU and both GPUs
        (0.0, 100.0, job(1, 1000, 2)),
        // fits now in the free GPU but ends after 100, when the reservation needs it: refused
        (0.0, 500.0, job(1, 1000, 1)),
        // CPUs only: beside the reservation
        (0.0, 500.0, job(2, 1000, 0)),
        // the free GPU, given back by 100: started
        (0.0, 50.0, job(1, 1000, 1)),
    ];
    let easy = run_shared(1, &jobs, true);
    assert_eq!(starts(&easy), [0.0, 100.0, 200.0, 0.0, 0.0]);
    assert_eq!((easy.start_kind[3], easy.start_kind[4]), (B, B));
    assert_eq!(easy.reservations[0], (0.0, 1, 100.0, 0));
    let fcfs = run_shared(1, &jobs, false);
    assert_eq!(starts(&fcfs), [0.0, 100.0, 200.0, 200.0, 200.0]);
}

#[test]
fn an_exclusive_job_waits_for_an_idle_node_and_holds_it_whole() {
    let exclusive = Request {
        nodes: Some(1),
        exclusive: true,
        ..job(1, 1000, 0)
    };
    let jobs = [
        (0.0, 100.0, job(1, 1000, 0)),
        (0.0, 300.0, exclusive.clone()),
        // n1 is held whole: back to n0
        (0.0, 100.0, job(1, 1000, 0)),
        // no idle node until n0 empties at 100
        (0.0, 100.0, exclusive),
    ];
    let log = run_shared(2, &jobs, false);
    assert_eq!(starts(&log), [0.0, 0.0, 0.0, 100.0]);
    assert_eq!(
        placements(&log, 4),
        [
            vec![(0, 1, 1000, 0)],
            vec![(1, 4, 1000, 2)],
            vec![(0, 1, 1000, 0)],
            vec![(0, 4, 1000, 2)],
        ]
    );
}

#[test]
fn a_one_task_gpu_job_takes_the_first_node_that_can_hold_it_not_the_fullest() {
    // Slurm caps what a node offers a job with generic resources at the CPUs of its tasks
    // there when those are fixed (`gres_select_filter_sock_core`): a one-task GPU job sees one
    // CPU on every node, and the tie goes to the lowest index (seen on the live cons_tres
    // cluster: benchmarks/slurm_tres_replay.py); a CPU job keeps the best fit
    let jobs = [
        (0.0, 100.0, job(1, 1000, 0)),
        // n0 lacks 7500 MB: n1, leaving it 1 CPU and 500 MB
        (0.0, 100.0, job(3, 7500, 0)),
        // n0 has 3 CPUs, n1 1: the first node, not the fullest
        (0.0, 100.0, job(1, 100, 1)),
        // n0 has 2 CPUs, n1 1: the best fit
        (0.0, 100.0, job(1, 100, 0)),
        // two tasks on as many nodes as they take: not capped, the best fit of 2 CPUs or more
        (0.0, 100.0, job(2, 100, 1)),
    ];
    let log = run_shared(3, &jobs, false);
    assert_eq!(starts(&log), [0.0; 5]);
    assert_eq!(
        placements(&log, 5),
        [
            vec![(0, 1, 1000, 0)],
            vec![(1, 3, 7500, 0)],
            vec![(0, 1, 100, 1)],
            vec![(1, 1, 100, 0)],
            vec![(0, 2, 100, 1)],
        ]
    );
}

#[test]
fn node_weights_steer_jobs_and_each_job_ends_freeing_what_it_took() {
    // n0 weight 10, n1 weight 1: the light node first, the heavy one for what is left
    let shapes = [10, 1].map(|weight| NodeShape {
        cpus: 4,
        threads_per_core: 1,
        memory: 8000,
        gres: vec![2].into(),
        weight,
    });
    let r = Resources::new(
        Sharing::CoreMemory,
        vec!["gpu".into()],
        shapes.into(),
        vec![0, 1],
    )
    .unwrap();
    let jobs = [
        (0.0, 100.0, job(1, 1000, 0)),
        (0.0, 200.0, job(4, 1000, 0)),
        (0.0, 100.0, job(4, 1000, 0)),
    ];
    let requests = jobs.iter().map(|j| j.2.clone()).collect();
    let model = SharedNodes::new(r, requests, all_nodes(2)).unwrap();
    let inputs = inputs(2, &jobs).with_shared_nodes(model).unwrap();
    let log = run_inputs(inputs, &mut fcfs_none());
    assert_eq!(starts(&log), [0.0, 0.0, 100.0]);
    let placed = placements(&log, 3);
    assert_eq!(placed[0], [(1, 1, 1000, 0)]);
    assert_eq!(placed[1], [(0, 1, 1000, 0), (1, 3, 1000, 0)]);
    // at 100 the first job is gone: n1 has 1 CPU, n0 3; the light node still goes first
    assert_eq!(placed[2], [(0, 3, 1000, 0), (1, 1, 1000, 0)]);
}

#[test]
fn partitions_place_jobs_on_their_own_nodes_and_reserve_apart() {
    // partition "cpu" = n0, "gpu" = n1; one reservation each
    let partitions = vec![
        PartitionSpec::new("cpu", &[(0, 1)]),
        PartitionSpec::new("gpu", &[(1, 2)]),
    ];
    let jobs = [
        (0.0, 100.0, job(4, 1000, 0)), // cpu
        (0.0, 100.0, job(1, 1000, 2)), // gpu
        (0.0, 100.0, job(1, 1000, 0)), // cpu: top job of its component
        (0.0, 100.0, job(1, 1000, 1)), // gpu: top job of its own
        (0.0, 50.0, job(3, 1000, 0)),  // gpu: CPUs free there, ends by 100
    ];
    let candidates: [&[u32]; 5] = [&[0], &[1], &[0], &[1], &[1]];
    let (mut offsets, mut flat) = (vec![0u32], Vec::new());
    for c in candidates {
        flat.extend_from_slice(c);
        offsets.push(flat.len() as u32);
    }
    let sets = node_sets(&[&[0], &[1]]);
    let inputs = inputs(2, &jobs)
        .with_site(partitions, OverLimits::Reject, offsets, flat)
        .unwrap()
        .with_shared_nodes(shared(2, &jobs, sets))
        .unwrap();
    let log = run_inputs(inputs, &mut fcfs_easy());
    assert_eq!(starts(&log), [0.0, 0.0, 100.0, 100.0, 0.0]);
    assert_eq!(log.partition, [0, 1, 0, 1, 1]);
    let placed = placements(&log, 5);
    assert_eq!(placed[4], [(1, 3, 1000, 0)]);
}

/// Starts nothing.
pub(crate) struct Idle;

impl hpcsched_core::Policy for Idle {
    fn name(&self) -> String {
        "idle".into()
    }
    fn decide(&mut self, _: &hpcsched_core::View, _: &mut hpcsched_core::Decision) {}
}

#[test]
fn a_decision_taking_more_than_asked_is_refused() {
    let more = hpcsched_core::packing::Allocation {
        nodes: vec![0],
        cpus: vec![1],
        memory: vec![2000],
        gres: vec![0],
        exclusive: false,
    };
    let err = decide(job(1, 1000, 0), more);
    assert!(
        err.contains("memory on a node is not what it asked for"),
        "{err}"
    );
}

#[test]
fn a_job_no_empty_node_could_hold_is_refused_at_submission_and_blocks_nothing() {
    let jobs = [
        (0.0, 100.0, job(4, 1000, 0)),
        // three GPUs on one node: nodes have two
        (0.0, 100.0, job(1, 1000, 3)),
        // more memory than a node has
        (0.0, 100.0, job(1, 9000, 0)),
        (0.0, 100.0, job(1, 1000, 0)),
    ];
    let log = run_shared(1, &jobs, false);
    assert_eq!(log.start[0], 0.0);
    assert!(log.start[1].is_nan() && log.start[2].is_nan());
    assert_eq!(log.start[3], 100.0);
    assert_eq!(log.rejected.iter().map(|r| r.0).collect::<Vec<_>>(), [1, 2]);
}

/// Random one-node jobs of 1 to 4 CPUs, 0 to 8000 MB, 0 to 2 GPUs, some exclusive, with run
/// times equal to their requests, on 3 nodes: each reservation EASY makes is kept (the top job
/// starts by its shadow time: backfilled jobs delay it in no resource), no node ever holds
/// more than it has (the engine's check at every start), and every job runs.
#[test]
fn easy_on_vectors_keeps_every_reservation_on_random_workloads() {
    for seed in 1..=60u64 {
        let mut draws = Draws(seed * 7919);
        let mut submit = 0.0;
        let jobs: Vec<Shaped> = (0..40)
            .map(|_| {
                submit += draws.below(30) as f64;
                let run = 10.0 + draws.below(200) as f64;
                let mut request = job(
                    1 + draws.below(4) as u32,
                    draws.below(8001),
                    draws.below(3) as u32,
                );
                request.nodes = Some(1);
                request.exclusive = draws.below(10) == 0;
                (submit, run, request)
            })
            .collect();
        let log = run_shared(3, &jobs, true);
        assert!(log.start.iter().all(|s| s.is_finite()), "seed {seed}");
        for &(at, job, shadow, _) in &log.reservations {
            let start = log.start[job as usize];
            assert!(
                start <= shadow,
                "seed {seed}: job {job} reserved at {at} for {shadow} started at {start}"
            );
        }
        assert!(
            !log.reservations.is_empty(),
            "seed {seed}: nothing was reserved"
        );
    }
}

#[test]
fn snf_on_shared_nodes_starts_the_fewest_cpus_first_and_stops_at_the_first_misfit() {
    let jobs = [
        (0.0, 100.0, job(3, 1000, 0)),
        (0.0, 100.0, job(2, 1000, 0)),
        (0.0, 100.0, job(1, 1000, 0)),
        // 4 CPUs: never fits beside the others; SNF does not backfill past it
        (0.0, 100.0, job(4, 1000, 0)),
    ];
    let log = run_inputs(shared_inputs(1, &jobs), &mut hpcsched_core::Snf::default());
    // J3 (1 CPU) and J2 (2) at 0; J1 (3) waits for them; J4 (4) for J1
    assert_eq!(starts(&log), [100.0, 0.0, 0.0, 200.0]);
    assert!(log.reservations.is_empty());
}

/// Job 0 (`request`) queued on a 2-node machine (partition: both nodes), and the engine's
/// answer to a decision that starts it with `allocation`.
fn decide(request: Request, allocation: hpcsched_core::packing::Allocation) -> String {
    let jobs = [(0.0, 100.0, request)];
    let mut engine = Engine::new(Arc::new(shared_inputs(2, &jobs)));
    engine.run_until(0.0, &mut Idle).unwrap();
    assert!(engine.log().start[0].is_nan());
    let mut decision = hpcsched_core::Decision::default();
    decision.starts.push(hpcsched_core::Start {
        pos: 0,
        job: 0,
        kind: P,
    });
    decision.site_starts.push((0, 1));
    decision.allocations.push(allocation);
    match engine.apply_decision(&decision) {
        Ok(()) => "accepted".into(),
        Err(e) => e.to_string(),
    }
}

#[test]
fn the_engine_checks_every_part_of_an_allocation() {
    use hpcsched_core::packing::Allocation;
    let alloc = |nodes: Vec<u32>, cpus: Vec<u32>, memory: Vec<u64>, gres: Vec<u32>| Allocation {
        nodes,
        cpus,
        memory,
        gres,
        exclusive: false,
    };
    let two = job(2, 1000, 1);
    // what the rule would give: accepted
    assert_eq!(
        decide(two.clone(), alloc(vec![0], vec![2], vec![1000], vec![1])),
        "accepted"
    );
    // two nodes of one CPU each, memory and a GPU per node: accepted too
    let spread = alloc(vec![0, 1], vec![1, 1], vec![1000, 1000], vec![1, 1]);
    assert_eq!(decide(two.clone(), spread), "accepted");
    let says = |a: Allocation, what: &str| {
        let got = decide(two.clone(), a);
        assert!(got.contains(what), "{got:?} should say {what:?}");
    };
    let shape = "not one entry per distinct node, ascending";
    says(alloc(vec![], vec![], vec![], vec![]), shape);
    says(alloc(vec![0], vec![1, 1], vec![1000], vec![1]), shape);
    says(alloc(vec![0], vec![2], vec![1000, 1], vec![1]), shape);
    says(alloc(vec![0], vec![2], vec![1000], vec![1, 0]), shape);
    says(
        alloc(vec![1, 0], vec![1, 1], vec![1000, 1000], vec![1, 1]),
        shape,
    );
    says(
        alloc(vec![0, 0], vec![1, 1], vec![1000, 1000], vec![1, 1]),
        shape,
    );
    says(
        alloc(vec![2], vec![2], vec![1000], vec![1]),
        "outside its partition",
    );
    says(
        alloc(vec![0], vec![1], vec![1000], vec![1]),
        "fewer CPUs than it asked",
    );
    says(
        alloc(vec![0, 1], vec![2, 0], vec![1000, 1000], vec![1, 1]),
        "fewer CPUs",
    );
    says(
        alloc(vec![0], vec![2], vec![500], vec![1]),
        "memory on a node",
    );
    says(
        alloc(vec![0], vec![2], vec![1000], vec![0]),
        "fewer generic resources",
    );
    says(
        alloc(vec![0], vec![2], vec![1000], vec![2]),
        "generic resources it did not ask for",
    );
    let mut whole = alloc(vec![0], vec![2], vec![1000], vec![1]);
    whole.exclusive = true;
    says(whole, "not exclusive as its request says");
    // -N1: one node only
    let one = Request {
        nodes: Some(1),
        ..two.clone()
    };
    let got = decide(
        one,
        alloc(vec![0, 1], vec![1, 1], vec![1000, 1000], vec![1, 1]),
    );
    assert!(got.contains("another number of nodes"), "{got}");
    // an exclusive job takes every CPU and GPU of its node, and only its memory
    let exclusive = Request {
        exclusive: true,
        ..two
    };
    let mut all = alloc(vec![0], vec![4], vec![1000], vec![2]);
    all.exclusive = true;
    assert_eq!(decide(exclusive.clone(), all.clone()), "accepted");
    let mut short = all.clone();
    short.cpus = vec![2];
    assert!(decide(exclusive.clone(), short).contains("every CPU of its nodes"));
    let mut gpus = all;
    gpus.gres = vec![1];
    assert!(decide(exclusive, gpus).contains("every generic resource"));
}

#[test]
fn max_mem_per_node_is_held_against_the_memory_a_node_gets_as_slurm_counts_it() {
    // job_mgr.c `_valid_pn_min_mem`: memory per node as asked; per CPU times the CPUs a node
    // gets (one without -N or --ntasks-per-node; tasks over -N; an exclusive job's nodes
    // whole); a job asking a whole node's memory is not checked
    use hpcsched_core::model::memory_per_node;
    let resources = resources(2);
    let set = &all_nodes(2)[0];
    let per_cpu = |tasks: u32| Request::tasks(tasks, Memory::PerCpu(1500));
    assert_eq!(memory_per_node(&job(1, 7000, 0), set, &resources), 7000);
    assert_eq!(memory_per_node(&per_cpu(4), set, &resources), 1500);
    let mut one_node = per_cpu(4);
    one_node.nodes = Some(1);
    assert_eq!(memory_per_node(&one_node, set, &resources), 6000);
    let mut two_nodes = per_cpu(3);
    two_nodes.nodes = Some(2);
    assert_eq!(memory_per_node(&two_nodes, set, &resources), 3000);
    let mut per_node_tasks = per_cpu(2);
    per_node_tasks.tasks_per_node = Some(2);
    per_node_tasks.cpus_per_task = 2;
    assert_eq!(memory_per_node(&per_node_tasks, set, &resources), 6000);
    let mut exclusive = per_cpu(1);
    exclusive.exclusive = true;
    assert_eq!(memory_per_node(&exclusive, set, &resources), 6000);
    let whole = Request::tasks(1, Memory::Whole);
    assert_eq!(memory_per_node(&whole, set, &resources), 0);
}

/// A queue policy made afresh at each decision: nothing kept from one scan to the next.
struct Afresh(Heuristic);

impl Policy for Afresh {
    fn name(&self) -> String {
        "afresh".into()
    }
    fn decide(&mut self, view: &hpcsched_core::View, decision: &mut hpcsched_core::Decision) {
        let mut policy = QueuePolicy::new(self.0, usize::MAX, Backfill::Easy);
        policy.decide(view, decision);
    }
}

/// Random jobs of 1 to 12 tasks (up to three nodes), some with GPUs, some exclusive, ending before, at or
/// after their requests, on a site of two partitions of 3 nodes each: a policy that keeps its
/// reservations from scan to scan (a component's plan while nothing in it changed, held in
/// the shadow state only once a later job may use it) decides exactly as one made afresh at
/// every decision, under FCFS and under SJF.
#[test]
fn reservations_kept_between_scans_decide_as_scans_made_afresh() {
    let partitions = vec![
        PartitionSpec::new("a", &[(0, 3)]),
        PartitionSpec::new("b", &[(3, 6)]),
    ];
    let mut kept_any = 0;
    for seed in 1..=400u64 {
        let mut draws = Draws(seed * 104_729);
        let mut submit = 0.0;
        let mut specs = Vec::new();
        let mut jobs: Vec<Shaped> = Vec::new();
        let (mut offsets, mut flat) = (vec![0u32], Vec::new());
        for _ in 0..60 {
            submit += draws.below(20) as f64;
            let requested = 20.0 + draws.below(300) as f64;
            // ends early, on time or late (continues past its request)
            let run = match draws.below(3) {
                0 => requested * 0.3,
                1 => requested,
                _ => requested * 1.5,
            };
            let mut request = job(
                1 + draws.below(12) as u32,
                draws.below(4001),
                draws.below(4).saturating_sub(2) as u32,
            );
            request.exclusive = draws.below(8) == 0;
            specs.push((submit, run, requested, request.nodes.unwrap_or(1)));
            flat.push(draws.below(2) as u32);
            offsets.push(flat.len() as u32);
            jobs.push((submit, requested, request));
        }
        let sets = node_sets(&[&[0, 1, 2], &[3, 4, 5]]);
        let make = || {
            Inputs::new(
                table(&specs),
                Machine::new(6),
                Calendar::new(Vec::new(), 0.0).unwrap(),
                Overrun::Continue,
            )
            .unwrap()
            .with_site(
                partitions.clone(),
                OverLimits::Reject,
                offsets.clone(),
                flat.clone(),
            )
            .unwrap()
            .with_shared_nodes(shared(6, &jobs, sets.clone()))
            .unwrap()
        };
        for heuristic in [Heuristic::Fcfs, Heuristic::Sjf] {
            let mut kept = QueuePolicy::new(heuristic, usize::MAX, Backfill::Easy);
            let log = run_inputs(make(), &mut kept);
            let fresh = run_inputs(make(), &mut Afresh(heuristic));
            assert_eq!(log.start, fresh.start, "seed {seed} {heuristic:?}");
            assert_eq!(
                log.allocations, fresh.allocations,
                "seed {seed} {heuristic:?}"
            );
            assert_eq!(
                log.reservations, fresh.reservations,
                "seed {seed} {heuristic:?}"
            );
            kept_any += usize::from(log.reservations.len() > 1);
        }
    }
    assert!(kept_any > 40, "too few runs with reservations: {kept_any}");
}

/// Two copies of one engine (a search's forward models) whose running jobs have the same
/// requests and start times but other nodes: one policy deciding for both in turn decides
/// for each as a policy made afresh does (what it keeps from a scan, its memo or a
/// reservation, is not mistaken for the other copy's). n0 has 4 CPUs, n1 8. J0 (2 CPUs, to
/// 100) and J2 (4 CPUs, to 200) run on n0 and n1 in one copy, on n1 and n0 in the other. J1
/// (7 CPUs on one node) fits only n1: reserved at 200 in the first copy, at 100 in the other.
#[test]
fn one_policy_deciding_for_two_copies_of_an_engine_keeps_them_apart() {
    let shape = |cpus| NodeShape {
        cpus,
        threads_per_core: 1,
        memory: 8000,
        gres: vec![2].into(),
        weight: 1,
    };
    let resources = Resources::new(
        Sharing::CoreMemory,
        vec!["gpu".into()],
        vec![shape(4), shape(8)],
        vec![0, 1],
    )
    .unwrap();
    let on_one = |tasks| {
        let mut request = job(tasks, 1000, 0);
        request.nodes = Some(1);
        request
    };
    let jobs = [
        (0.0, 100.0, on_one(2)),
        (0.0, 100.0, on_one(7)),
        (0.0, 200.0, on_one(4)),
    ];
    let requests = jobs.iter().map(|j| j.2.clone()).collect();
    let model = SharedNodes::new(resources, requests, all_nodes(2)).unwrap();
    let inputs = inputs(2, &jobs).with_shared_nodes(model).unwrap();
    let mut engine = Engine::new(Arc::new(inputs));
    engine.run_until(0.0, &mut Idle).unwrap();
    let alloc = |node: u32, cpus: u32| hpcsched_core::packing::Allocation {
        nodes: vec![node],
        cpus: vec![cpus],
        memory: vec![1000],
        gres: vec![0],
        exclusive: false,
    };
    let copies: Vec<Engine> = [(0, 1), (1, 0)]
        .iter()
        .map(|&(first, second)| {
            let mut copy = engine.fork();
            let mut decision = hpcsched_core::Decision::default();
            for (k, (job, node, cpus)) in [(0u32, first, 2u32), (2, second, 4)].iter().enumerate() {
                decision.starts.push(hpcsched_core::Start {
                    pos: *job,
                    job: *job,
                    kind: P,
                });
                decision.site_starts.push((0, k as u32 + 1));
                decision.allocations.push(alloc(*node, *cpus));
            }
            copy.apply_decision(&decision).unwrap();
            copy
        })
        .collect();
    let mut one_policy = fcfs_easy();
    for (copy, shadow) in copies.iter().zip([200.0, 100.0]) {
        let mut kept = hpcsched_core::Decision::default();
        one_policy.decide(&copy.view(), &mut kept);
        let mut fresh = hpcsched_core::Decision::default();
        fcfs_easy().decide(&copy.view(), &mut fresh);
        assert!(kept.starts.is_empty() && fresh.starts.is_empty());
        assert_eq!(fresh.reservation.map(|r| r.shadow_time), Some(shadow));
        assert_eq!(kept.reservation.map(|r| r.shadow_time), Some(shadow));
    }
}

#[test]
fn a_reservation_counts_a_node_an_exclusive_job_gives_back() {
    // J0 holds n0 whole to 100, J1 two CPUs of n1 to 200; J2 (-N2, a task on each) is reserved
    // at 100, when n0 counts again in what the nodes have free
    let mut exclusive = job(1, 1000, 0);
    exclusive.exclusive = true;
    let mut spread = job(2, 1000, 0);
    spread.nodes = Some(2);
    let jobs = [
        (0.0, 100.0, exclusive),
        (0.0, 200.0, job(2, 1000, 0)),
        (1.0, 100.0, spread),
    ];
    let log = run_shared(2, &jobs, true);
    assert_eq!(log.reservations[0], (1.0, 2, 100.0, 0));
    assert_eq!(log.start[2], 100.0);
}
