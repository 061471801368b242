//! Slurm's QOS limits in TRES (`sched::slurm::limits`): GrpTRES, MaxTRESPerUser and
//! MaxTRESPerJob on memory and generic resources, on shared nodes of 4 CPUs, 8000 MB and 2
//! GPUs (CR_Core_Memory), schedules computed by hand from Slurm 22.05's `acct_policy.c`
//! (docs/semantics.md, "QOS limits in TRES"). Default settings: priorities by submission.

use std::sync::Arc;

use crate::common::*;
use crate::shared::{all_nodes, inputs, job, Shaped};
use hpcsched_core::model::{
    GresRequest, Memory, NodeShape, Request, Resources, SharedNodes, Sharing,
};
use hpcsched_core::sched::slurm::limits::{Scope, CPU, NODE};
use hpcsched_core::sched::slurm::{
    Association, PrioritySettings, Qos, SchedulerSettings, SlurmJobs, SlurmPolicy, SlurmSetup,
};
use hpcsched_core::RunLog;

/// One QOS `qos`, the TRES `tres` counted beyond nodes and CPUs, `amounts` of them per job
/// (row-major), job `j` of user `users[j]`.
fn setup(jobs: &[Shaped], users: &[u32], qos: Qos, tres: &[&str], amounts: &[u64]) -> SlurmSetup {
    let n = jobs.len();
    let user = |parent| Association {
        parent: Some(parent),
        shares: Some(1),
        user: true,
    };
    SlurmSetup {
        priority: PrioritySettings::default(),
        scheduler: SchedulerSettings::default(),
        associations: vec![
            Association {
                parent: None,
                shares: Some(1),
                user: false,
            },
            user(0),
            user(0),
        ],
        qos: vec![qos],
        tres: tres.iter().map(|t| t.to_string()).collect(),
        jobs: SlurmJobs {
            association: users.iter().map(|&u| 1 + u).collect(),
            user: users.to_vec(),
            qos: vec![0; n],
            nice: vec![0; n],
            cpus: jobs.iter().map(|j| j.2.cpus() as u32).collect(),
            requested_cpus: Vec::new(),
            billing: Vec::new(),
            tres_priority: Vec::new(),
            tres: amounts.to_vec(),
        },
        cluster_cpus: 8,
        cluster_nodes: 2,
        partition_factors: vec![1],
        origin: 0.0,
    }
}

/// `jobs` on `resources` under `setup`.
fn run_on(resources: Resources, jobs: &[Shaped], setup: SlurmSetup) -> RunLog {
    let nodes = resources.nodes();
    setup.validate(jobs.len(), 1).unwrap();
    let requests = jobs.iter().map(|j| j.2.clone()).collect();
    let model = SharedNodes::new(resources, requests, all_nodes(nodes)).unwrap();
    let inputs = inputs(nodes, jobs).with_shared_nodes(model).unwrap();
    run_inputs(inputs, &mut SlurmPolicy::new(Arc::new(setup)))
}

/// Nodes of 4 CPUs, 8000 MB and 2 GPUs of kind `gpu` (`gpu:a100` when `typed`).
fn nodes(count: u32, typed: bool) -> Resources {
    let shape = NodeShape {
        cpus: 4,
        threads_per_core: 1,
        memory: 8000,
        gres: vec![2].into(),
        weight: 1,
    };
    let kind = if typed { "gpu:a100" } else { "gpu" };
    Resources::new(
        Sharing::CoreMemory,
        vec![kind.into()],
        vec![shape],
        vec![0; count as usize],
    )
    .unwrap()
}

/// `-N1 --exclusive --mem=1000`: a whole node, its GPUs with it.
fn exclusive() -> Request {
    Request {
        nodes: Some(1),
        exclusive: true,
        ..job(1, 1000, 0)
    }
}

#[test]
fn grp_tres_on_gpus_holds_a_third_gpu_job_while_a_cpu_job_of_the_qos_starts() {
    // GrpTRES gres/gpu=2. J1 and J2 take a GPU each; J3's GPU would make 3: it waits, passed
    // over (its partition does not fail), and J4, asking no GPU, starts at its arrival.
    // J1 ends at 100: 1 GPU in use, J3 starts.
    let jobs = [
        (0.0, 100.0, job(1, 1000, 1)),
        (1.0, 100.0, job(1, 1000, 1)),
        (2.0, 100.0, job(1, 1000, 1)),
        (3.0, 100.0, job(1, 1000, 0)),
    ];
    let qos = Qos::default().with(Scope::Group, 2, 2);
    let s = setup(
        &jobs,
        &[0, 1, 0, 1],
        qos.clone(),
        &["gres/gpu"],
        &[1, 1, 1, 0],
    );
    let log = run_on(nodes(2, false), &jobs, s);
    assert_starts(&log, &[(0.0, P), (1.0, P), (100.0, P), (3.0, P)]);
    // at 3 GPUs the limit lets J3 through at once
    let qos = Qos::default().with(Scope::Group, 2, 3);
    let s = setup(&jobs, &[0, 1, 0, 1], qos, &["gres/gpu"], &[1, 1, 1, 0]);
    assert_eq!(
        run_on(nodes(2, false), &jobs, s).start,
        [0.0, 1.0, 2.0, 3.0]
    );
}

#[test]
fn max_tres_per_user_on_memory_binds_each_user_apart() {
    // One node of 8000 MB; MaxTRESPerUser mem=3000. a's J1 holds 2000 MB, so a's J2 (2000
    // more) waits; b's J3 (2000) starts at once; a's J4 (2 CPUs at 500 MB a CPU: 1000 MB,
    // 3000 with J1) starts too. J4 ends at 53 (a: 2000 MB, J2 would make 4000); J1 at 100 (a:
    // none): J2 starts then.
    let jobs = [
        (0.0, 100.0, job(1, 2000, 0)),
        (1.0, 100.0, job(1, 2000, 0)),
        (2.0, 100.0, job(1, 2000, 0)),
        (3.0, 50.0, Request::tasks(2, Memory::PerCpu(500))),
    ];
    let qos = Qos::default().with(Scope::PerUser, 2, 3000);
    let s = setup(
        &jobs,
        &[0, 0, 1, 0],
        qos,
        &["mem"],
        &[2000, 2000, 2000, 1000],
    );
    let log = run_on(nodes(1, false), &jobs, s);
    assert_eq!(log.start, [0.0, 100.0, 2.0, 3.0]);
}

#[test]
fn typed_gpus_count_toward_gres_gpu_and_an_exclusive_job_holds_its_nodes_gpus() {
    // Nodes of 2 gpu:a100 each; GrpTRES gres/gpu=2. J1 (--gres=gpu:a100:1) holds one: it
    // counts toward gres/gpu. J2 (-N1 --exclusive, no GPU asked) passes on what it asks, but
    // the node it gets holds 2 GPUs, 3 with J1's: it waits (Slurm tests a start on what its
    // allocation holds), and J3 (one CPU) starts. J1 ends at 100: J2 gets n1 and its 2 GPUs.
    let typed = GresRequest {
        kinds: vec![0].into(),
        count: 1,
    };
    let mut j1 = job(1, 1000, 0);
    j1.gres.push(typed);
    let jobs = [
        (0.0, 100.0, j1),
        (1.0, 200.0, exclusive()),
        (2.0, 300.0, job(1, 1000, 0)),
    ];
    let qos = Qos::default().with(Scope::Group, 2, 2);
    let s = setup(&jobs, &[0, 0, 0], qos, &["gres/gpu"], &[1, 0, 0]);
    let log = run_on(nodes(2, true), &jobs, s);
    assert_eq!(log.start, [0.0, 100.0, 2.0]);
    // a third GPU in the limit: J2 starts at its arrival
    let qos = Qos::default().with(Scope::Group, 2, 3);
    let s = setup(&jobs, &[0, 0, 0], qos, &["gres/gpu"], &[1, 0, 0]);
    assert_eq!(run_on(nodes(2, true), &jobs, s).start, [0.0, 1.0, 2.0]);
}

#[test]
fn max_tres_per_job_holds_a_job_asking_more_for_good() {
    // MaxTRESPerJob cpu=2: J1 (3 CPUs) never starts; J2 (2 CPUs) starts at its arrival.
    let jobs = [(0.0, 10.0, job(3, 1000, 0)), (1.0, 10.0, job(2, 1000, 0))];
    let qos = Qos::default().with(Scope::PerJob, CPU, 2);
    let log = run_on(nodes(1, false), &jobs, setup(&jobs, &[0, 0], qos, &[], &[]));
    assert!(log.start[0].is_nan());
    assert_eq!(log.start[1], 1.0);
}

#[test]
fn a_job_over_several_nodes_holds_its_gpus_per_node_on_each() {
    // GrpTRES gres/gpu=2, three nodes. J1 (-n8 --gres=gpu:1, no -N) asks one GPU on its one
    // node, but takes n0 and n1 whole by CPUs: it holds a GPU on each, 2. J2 (one GPU) would
    // make 3: it waits until J1 ends at 100 (on what it asked, 1, it would start at once).
    let jobs = [(0.0, 100.0, job(8, 1000, 1)), (1.0, 100.0, job(1, 1000, 1))];
    let qos = Qos::default().with(Scope::Group, 2, 2);
    let s = setup(&jobs, &[0, 0], qos, &["gres/gpu"], &[1, 1]);
    assert_eq!(run_on(nodes(3, false), &jobs, s).start, [0.0, 100.0]);
    // -N2 -n2 --gres=gpu:1 asks 2 and holds 2: under gres/gpu=3 a one-GPU job starts beside
    let mut two = job(2, 1000, 1);
    two.nodes = Some(2);
    let jobs = [(0.0, 100.0, two), (1.0, 100.0, job(1, 1000, 1))];
    let qos = Qos::default().with(Scope::Group, 2, 3);
    let s = setup(&jobs, &[0, 0], qos, &["gres/gpu"], &[2, 1]);
    assert_eq!(run_on(nodes(3, false), &jobs, s).start, [0.0, 1.0]);
}

#[test]
fn an_untyped_gpu_request_counts_toward_no_typed_tres() {
    // Nodes of 2 gpu:a100; GrpTRES gres/gpu:a100=1. J1 (--gres=gpu:1, untyped) gets an a100
    // but counts nothing toward gres/gpu:a100 (Slurm counts a typed TRES by the request's
    // type); J2 (--gres=gpu:a100:1) starts beside it. J3 (typed too) would make 2: it waits.
    let typed = || {
        let mut j = job(1, 1000, 0);
        j.gres.push(GresRequest {
            kinds: vec![0].into(),
            count: 1,
        });
        j
    };
    let jobs = [
        (0.0, 100.0, job(1, 1000, 1)),
        (1.0, 100.0, typed()),
        (2.0, 50.0, typed()),
    ];
    let qos = Qos::default().with(Scope::Group, 2, 1);
    let s = setup(&jobs, &[0, 0, 0], qos, &["gres/gpu:a100"], &[0, 1, 1]);
    assert_eq!(run_on(nodes(1, true), &jobs, s).start, [0.0, 1.0, 101.0]);
}

#[test]
fn a_users_jobs_packed_on_one_node_count_one_node_against_its_limit() {
    // Two nodes of 4 CPUs; MaxTRESPerUser node=2. a's J1 and J2 (one CPU each) pack on n0:
    // a holds one node (Slurm counts each node once, `_add_usage_node_bitmap`), so J3 (one
    // CPU, asking one node: 1 + 1 <= 2) starts at its arrival, on n0 too. J4 (-N2, two
    // nodes: 1 + 2 > 2) waits until J1, J2 and J3 have ended (100), though its nodes are
    // free at 5 beside them. Counted per job, J3 would wait for J1's end.
    let jobs = [
        (0.0, 100.0, job(1, 1000, 0)),
        (1.0, 100.0, job(1, 1000, 0)),
        (2.0, 50.0, job(1, 1000, 0)),
        (
            3.0,
            10.0,
            Request {
                nodes: Some(2),
                ..Request::tasks(2, Memory::PerNode(1000))
            },
        ),
    ];
    let qos = Qos::default().with(Scope::PerUser, NODE, 2);
    let s = setup(&jobs, &[0, 0, 0, 0], qos, &[], &[]);
    let log = run_on(nodes(2, false), &jobs, s);
    assert_eq!(log.start, [0.0, 1.0, 2.0, 101.0]);
    assert_eq!(log.start_kind[2], P);
}
