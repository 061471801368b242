//! Slurm's cons_tres placement, on the hand-computed examples of
//! docs/slurm/cons_tres-22.05.md §7, each checked node by node and CPU by CPU on a real Slurm
//! 22.05.8 cons_tres cluster (§8 there): two nodes n1, n2 of 4 CPUs, 8000 MB and 2 GPUs,
//! CR_Core_Memory, one partition.

use hpcsched_core::model::{GresRequest, Memory, NodeShape, Request, Resources, Sharing};
use hpcsched_core::packing::{select, Allocation, NodeLimits, Usage};

/// Nodes of `cpus` CPUs (threads per core `tpc`), 8000 MB and 2 GPUs, of the given weights.
fn site(sharing: Sharing, weights: &[u32], cpus: u32, tpc: u32) -> Resources {
    let shapes = weights
        .iter()
        .map(|&weight| NodeShape {
            cpus,
            threads_per_core: tpc,
            memory: 8000,
            gres: vec![2].into(),
            weight,
        })
        .collect::<Vec<_>>();
    let node_shape = (0..weights.len() as u32).collect();
    Resources::new(sharing, vec!["gpu".into()], shapes, node_shape).unwrap()
}

/// `-n tasks --mem=mb`.
fn mem(tasks: u32, mb: u64) -> Request {
    Request::tasks(tasks, Memory::PerNode(mb))
}

fn gpus(mut request: Request, count: u32) -> Request {
    request.gres.push(GresRequest {
        kinds: vec![0].into(),
        count,
    });
    request
}

/// Places and takes `request` on every node; `None` when it does not fit now.
fn place(resources: &Resources, usage: &mut Usage, request: &Request) -> Option<Allocation> {
    let nodes: Vec<u32> = (0..resources.nodes()).collect();
    let allocation = select(resources, usage, &nodes, request, NodeLimits::default())?;
    usage.take(&allocation).unwrap();
    Some(allocation)
}

/// (node, CPUs, MB, GPUs) of each node of an allocation.
fn on(allocation: &Allocation) -> Vec<(u32, u32, u64, u32)> {
    (0..allocation.nodes.len())
        .map(|i| {
            (
                allocation.nodes[i],
                allocation.cpus[i],
                allocation.memory[i],
                allocation.gres[i],
            )
        })
        .collect()
}

#[test]
fn example_1_single_node_jobs_pack_by_best_fit() {
    let r = site(Sharing::CoreMemory, &[1, 1], 4, 1);
    let mut u = Usage::new(&r);
    let mut got = Vec::new();
    for (tasks, mb) in [(1, 1000), (2, 2000), (2, 1000), (1, 1000), (1, 1000)] {
        got.push(on(&place(&r, &mut u, &mem(tasks, mb)).unwrap()));
    }
    assert_eq!(
        got,
        vec![
            vec![(0, 1, 1000, 0)],
            vec![(0, 2, 2000, 0)], // n1 has 3, n2 4: the fewest that cover 2
            vec![(1, 2, 1000, 0)], // n1 has 1 < 2
            vec![(0, 1, 1000, 0)], // n1 fits exactly
            vec![(1, 1, 1000, 0)], // n1 is full
        ]
    );
    assert_eq!((u.free_cpus(0), u.free_memory(0)), (0, 4000));
    assert_eq!((u.free_cpus(1), u.free_memory(1)), (1, 6000));
}

#[test]
fn example_2_memory_binds_and_a_job_without_memory_takes_whole_nodes() {
    let r = site(Sharing::CoreMemory, &[1, 1], 4, 1);
    let mut u = Usage::new(&r);
    assert_eq!(
        on(&place(&r, &mut u, &mem(1, 7000)).unwrap()),
        [(0, 1, 7000, 0)]
    );
    // n1 has 1000 MB left: dropped
    assert_eq!(
        on(&place(&r, &mut u, &mem(1, 2000)).unwrap()),
        [(1, 1, 2000, 0)]
    );
    // n1's 3 free CPUs are cut to the 2 its 1000 MB feed at 500 MB each
    let per_cpu = Request::tasks(2, Memory::PerCpu(500));
    assert_eq!(on(&place(&r, &mut u, &per_cpu).unwrap()), [(0, 2, 1000, 0)]);
    // no memory asked, no default: the whole of a node with no memory allocated; none is
    assert_eq!(place(&r, &mut u, &Request::tasks(1, Memory::Whole)), None);
    assert_eq!((u.free_cpus(1), u.free_memory(1)), (3, 6000));
}

#[test]
fn example_3_gpus_bind_while_cores_are_free() {
    let r = site(Sharing::CoreMemory, &[1, 1], 4, 1);
    let mut u = Usage::new(&r);
    let two = gpus(mem(1, 1000), 2);
    assert_eq!(on(&place(&r, &mut u, &two).unwrap()), [(0, 1, 1000, 2)]);
    let one = gpus(mem(1, 1000), 1);
    assert_eq!(on(&place(&r, &mut u, &one).unwrap()), [(1, 1, 1000, 1)]);
    // six cores are free, but no node has two free GPUs
    assert_eq!(place(&r, &mut u, &two), None);
    // a CPU job is not blocked by GPUs: by the selection rule alone it goes to n1 (tie)
    assert_eq!(
        on(&place(&r, &mut u, &mem(2, 1000)).unwrap()),
        [(0, 2, 1000, 0)]
    );
}

#[test]
fn example_4_an_exclusive_job_takes_an_idle_node_whole_but_only_its_memory() {
    let r = site(Sharing::CoreMemory, &[1, 1], 4, 1);
    let mut u = Usage::new(&r);
    let exclusive = Request {
        nodes: Some(1),
        exclusive: true,
        ..mem(1, 1000)
    };
    assert_eq!(
        on(&place(&r, &mut u, &mem(1, 1000)).unwrap()),
        [(0, 1, 1000, 0)]
    );
    let whole = place(&r, &mut u, &exclusive).unwrap();
    assert_eq!(on(&whole), [(1, 4, 1000, 2)]);
    assert!(whole.exclusive);
    // n2 is held whole: a one-CPU job goes to n1 although n2 has 7000 MB free
    assert_eq!(
        on(&place(&r, &mut u, &mem(1, 1000)).unwrap()),
        [(0, 1, 1000, 0)]
    );
    assert_eq!(place(&r, &mut u, &exclusive), None);
    // its end frees exactly what it took, and the node is shared again
    u.give_back(&whole);
    assert_eq!(
        (
            u.free_cpus(1),
            u.free_memory(1),
            u.free_gres(1, 0),
            u.idle(1)
        ),
        (4, 8000, 2, true)
    );
    // three CPUs: n1 has 2 left, the freed n2 covers them alone
    assert_eq!(
        on(&place(&r, &mut u, &mem(3, 1000)).unwrap()),
        [(1, 3, 1000, 0)]
    );
}

#[test]
fn example_5_six_tasks_spread_four_and_two_and_a_two_node_job_waits() {
    let r = site(Sharing::CoreMemory, &[1, 1], 4, 1);
    let mut u = Usage::new(&r);
    let six = Request::tasks(6, Memory::PerCpu(1000));
    assert_eq!(
        on(&place(&r, &mut u, &six).unwrap()),
        [(0, 4, 4000, 0), (1, 2, 2000, 0)]
    );
    let two_nodes = Request {
        nodes: Some(2),
        ..mem(2, 500)
    };
    assert_eq!(place(&r, &mut u, &two_nodes), None);
}

#[test]
fn example_6_weight_beats_fit() {
    let r = site(Sharing::CoreMemory, &[10, 1], 4, 1);
    let mut u = Usage::new(&r);
    assert_eq!(
        on(&place(&r, &mut u, &mem(1, 1000)).unwrap()),
        [(1, 1, 1000, 0)]
    );
    // the light run {n2} is too small and still goes first; n1 gives the last CPU
    assert_eq!(
        on(&place(&r, &mut u, &mem(4, 1000)).unwrap()),
        [(0, 1, 1000, 0), (1, 3, 1000, 0)]
    );
    assert_eq!(
        on(&place(&r, &mut u, &mem(1, 1000)).unwrap()),
        [(0, 1, 1000, 0)]
    );
}

#[test]
fn example_7_a_partition_default_memory_per_cpu() {
    // DefMemPerCPU=1500: a job that gives no memory asks 1500 MB per CPU
    let r = site(Sharing::CoreMemory, &[1, 1], 4, 1);
    let mut u = Usage::new(&r);
    let default = |tasks| Request::tasks(tasks, Memory::PerCpu(1500));
    assert_eq!(
        on(&place(&r, &mut u, &default(2)).unwrap()),
        [(0, 2, 3000, 0)]
    );
    // n1 offers 2 CPUs, n2 4: the fewest that cover 4
    assert_eq!(
        on(&place(&r, &mut u, &default(4)).unwrap()),
        [(1, 4, 6000, 0)]
    );
    assert_eq!(
        on(&place(&r, &mut u, &default(1)).unwrap()),
        [(0, 1, 1500, 0)]
    );
}

#[test]
fn a_job_on_n_nodes_leaves_a_cpu_for_each_node_to_come() {
    let r = site(Sharing::CoreMemory, &[1, 1, 1], 4, 1);
    let mut u = Usage::new(&r);
    let job = |nodes, tasks| Request {
        nodes: Some(nodes),
        ..mem(tasks, 100)
    };
    // -N2 -n6: n1 capped at 6 - 1 = 5, gives its 4; n2 the 2 left
    assert_eq!(
        on(&place(&r, &mut u, &job(2, 6)).unwrap()),
        [(0, 4, 100, 0), (1, 2, 100, 0)]
    );
    // -N2 -n2 on n2 (2 free) and n3 (4): index order, one CPU each
    assert_eq!(
        on(&place(&r, &mut u, &job(2, 2)).unwrap()),
        [(1, 1, 100, 0), (2, 1, 100, 0)]
    );
    // -N1 -n4: the one node must hold all four; n3 has 3
    assert_eq!(place(&r, &mut u, &job(1, 4)), None);
}

#[test]
fn under_cr_core_a_job_gets_whole_cores_and_under_cr_cpu_single_threads() {
    // nodes of 8 CPUs as 4 cores of 2 threads
    let core = site(Sharing::Core, &[1], 8, 2);
    let mut u = Usage::new(&core);
    for _ in 0..4 {
        assert_eq!(
            on(&place(&core, &mut u, &mem(1, 10)).unwrap()),
            [(0, 2, 0, 0)]
        );
    }
    assert_eq!(place(&core, &mut u, &mem(1, 10)), None);
    let cpu = site(Sharing::Cpu, &[1], 8, 2);
    let mut u = Usage::new(&cpu);
    for _ in 0..8 {
        assert_eq!(
            on(&place(&cpu, &mut u, &mem(1, 10)).unwrap()),
            [(0, 1, 0, 0)]
        );
    }
    assert_eq!(place(&cpu, &mut u, &mem(1, 10)), None);
}

#[test]
fn runs_are_broken_by_nodes_outside_the_candidates_and_the_smallest_big_enough_run_wins() {
    // five equal nodes; candidates n1, n2, n4 (n3 is in another partition)
    let r = site(Sharing::Cpu, &[1, 1, 1, 1, 1], 4, 1);
    let mut u = Usage::new(&r);
    let candidates = [0, 1, 3];
    let limits = NodeLimits::default();
    // 3 CPUs: runs {n1,n2} (8 CPUs) and {n4} (4): the smaller big-enough run is {n4}
    let a = select(&r, &u, &candidates, &mem(3, 1), limits).unwrap();
    assert_eq!(on(&a), [(3, 3, 0, 0)]);
    u.take(&a).unwrap();
    // 6 CPUs: {n4} has 1 left, too small; {n1, n2} takes them, 4 + 2
    let a = select(&r, &u, &candidates, &mem(6, 1), limits).unwrap();
    assert_eq!(on(&a), [(0, 4, 0, 0), (1, 2, 0, 0)]);
    u.take(&a).unwrap();
    // a partition's MaxNodes=1 keeps a 3-task job on one node: only n2's 2 remain
    let one = NodeLimits {
        max_nodes: 1,
        ..limits
    };
    assert_eq!(select(&r, &u, &candidates, &mem(3, 1), one), None);
    assert_eq!(
        on(&select(&r, &u, &candidates, &mem(3, 1), limits).unwrap()),
        [(1, 2, 0, 0), (3, 1, 0, 0)]
    );
}

#[test]
fn a_typed_gpu_request_draws_only_its_type_and_an_untyped_one_any() {
    let shapes = vec![NodeShape {
        cpus: 8,
        threads_per_core: 1,
        memory: 1000,
        gres: vec![1, 2].into(),
        weight: 1,
    }];
    let names = vec!["gpu:a100".to_string(), "gpu:v100".to_string()];
    let r = Resources::new(Sharing::Cpu, names, shapes, vec![0]).unwrap();
    assert_eq!(r.gres_kinds("gpu"), [0, 1]);
    assert_eq!(r.gres_kinds("gpu:v100"), [1]);
    let mut u = Usage::new(&r);
    let want = |kinds: Vec<u32>, count| Request {
        gres: vec![GresRequest {
            kinds: kinds.into(),
            count,
        }],
        ..mem(1, 1)
    };
    let a100 = place(&r, &mut u, &want(vec![0], 1)).unwrap();
    assert_eq!(a100.gres, [1, 0]);
    assert_eq!(place(&r, &mut u, &want(vec![0], 1)), None);
    // two of any type: the two v100s
    assert_eq!(
        place(&r, &mut u, &want(vec![0, 1], 2)).unwrap().gres,
        [0, 2]
    );
    u.give_back(&a100);
    assert_eq!((u.free_gres(0, 0), u.free_gres(0, 1)), (1, 0));
}

#[test]
fn taking_more_than_a_node_has_is_refused_and_leaves_the_usage_unchanged() {
    let r = site(Sharing::CoreMemory, &[1, 1], 4, 1);
    let mut u = Usage::new(&r);
    let before = u.clone();
    let too_much = Allocation {
        nodes: vec![0, 1],
        cpus: vec![4, 5],
        memory: vec![10, 10],
        gres: vec![0, 0],
        exclusive: false,
    };
    assert!(u.take(&too_much).is_err());
    assert_eq!(u, before);
}

#[test]
fn memory_per_cpu_cuts_what_a_node_offers_and_steers_best_fit() {
    let r = site(Sharing::CoreMemory, &[1, 1], 4, 1);
    let mut u = Usage::new(&r);
    // n0 keeps 3 CPUs but 2000 MB: at 1500 MB a CPU it offers 1, so n1 covers the 2 CPUs
    assert_eq!(
        on(&place(&r, &mut u, &mem(1, 6000)).unwrap()),
        [(0, 1, 6000, 0)]
    );
    let per_cpu = Request::tasks(2, Memory::PerCpu(1500));
    assert_eq!(on(&place(&r, &mut u, &per_cpu).unwrap()), [(1, 2, 3000, 0)]);
}

#[test]
fn a_node_whose_memory_feeds_exactly_the_cpus_a_node_needs_is_kept() {
    let r = site(Sharing::CoreMemory, &[1], 4, 1);
    let mut u = Usage::new(&r);
    place(&r, &mut u, &mem(1, 6000)).unwrap();
    // -N1 -n2 at 1000 MB a CPU: 2000 MB left feed exactly its 2 CPUs
    let two = Request {
        nodes: Some(1),
        ..Request::tasks(2, Memory::PerCpu(1000))
    };
    assert_eq!(on(&place(&r, &mut u, &two).unwrap()), [(0, 2, 2000, 0)]);
    // no memory per CPU at all: it takes none
    let free = Request::tasks(1, Memory::PerCpu(0));
    assert_eq!(on(&place(&r, &mut u, &free).unwrap()), [(0, 1, 0, 0)]);
}

#[test]
fn under_cr_core_memory_cuts_cpus_by_whole_cores() {
    // one node of 8 CPUs as 4 cores of 2 threads: 8000 MB at 2500 MB a CPU feed 3 CPUs,
    // one whole core and a half: 2 CPUs, too few for 3 tasks on one node
    let r = site(Sharing::CoreMemory, &[1], 8, 2);
    let mut u = Usage::new(&r);
    let three = Request::tasks(3, Memory::PerCpu(2500));
    assert_eq!(place(&r, &mut u, &three), None);
    let two = Request::tasks(2, Memory::PerCpu(2500));
    assert_eq!(on(&place(&r, &mut u, &two).unwrap()), [(0, 2, 5000, 0)]);
}

#[test]
fn cpus_per_task_count_in_whole_tasks() {
    let r = site(Sharing::Cpu, &[1, 1], 4, 1);
    let mut u = Usage::new(&r);
    // n0 keeps 3 CPUs free, n1 2
    let held = Allocation {
        nodes: vec![0, 1],
        cpus: vec![1, 2],
        memory: vec![0, 0],
        gres: vec![0, 0],
        exclusive: false,
    };
    u.take(&held).unwrap();
    // one task of 2 CPUs: n0's 3 free CPUs hold one task (2), as n1's 2 do: the first wins
    let task = Request {
        cpus_per_task: 2,
        ..mem(1, 1)
    };
    assert_eq!(on(&place(&r, &mut u, &task).unwrap()), [(0, 2, 0, 0)]);
}

#[test]
fn a_job_without_memory_takes_a_whole_untouched_node() {
    let r = site(Sharing::CoreMemory, &[1, 1], 4, 1);
    let mut u = Usage::new(&r);
    place(&r, &mut u, &mem(1, 1000)).unwrap();
    let whole = Request::tasks(1, Memory::Whole);
    assert_eq!(on(&place(&r, &mut u, &whole).unwrap()), [(1, 1, 8000, 0)]);
    assert_eq!(place(&r, &mut u, &whole), None);
}

#[test]
fn an_exclusive_partition_or_whole_sharing_gives_every_job_whole_nodes() {
    let exclusive = NodeLimits {
        exclusive: true,
        ..NodeLimits::default()
    };
    let nodes = [0, 1];
    for (r, limits) in [
        (site(Sharing::CoreMemory, &[1, 1], 4, 1), exclusive),
        (site(Sharing::Whole, &[1, 1], 4, 1), NodeLimits::default()),
    ] {
        let mut u = Usage::new(&r);
        let one = mem(1, 1000);
        let a = select(&r, &u, &nodes, &one, limits).unwrap();
        assert_eq!(
            on(&a),
            [(0, 4, if r.sharing.memory() { 1000 } else { 0 }, 2)]
        );
        assert!(a.exclusive);
        u.take(&a).unwrap();
        let b = select(&r, &u, &nodes, &one, limits).unwrap();
        assert_eq!(b.nodes, [1]);
        u.take(&b).unwrap();
        assert_eq!(select(&r, &u, &nodes, &one, limits), None);
    }
}

#[test]
fn between_equal_runs_the_first_wins() {
    // n1 full: runs {n0} and {n2} of 4 CPUs each
    let r = site(Sharing::Cpu, &[1, 1, 1], 4, 1);
    let mut u = Usage::new(&r);
    let full = Allocation {
        nodes: vec![1],
        cpus: vec![4],
        memory: vec![0],
        gres: vec![0],
        exclusive: false,
    };
    u.take(&full).unwrap();
    let nodes = [0, 1, 2];
    let limits = NodeLimits::default();
    // both big enough for 2 CPUs: the first
    assert_eq!(
        on(&select(&r, &u, &nodes, &mem(2, 1), limits).unwrap()),
        [(0, 2, 0, 0)]
    );
    // neither big enough for 6: the first of the biggest gives 4, the other the rest
    assert_eq!(
        on(&select(&r, &u, &nodes, &mem(6, 1), limits).unwrap()),
        [(0, 4, 0, 0), (2, 2, 0, 0)]
    );
}

/// Six jobs a real Slurm 22.05.8 placed (tests/fixtures/sacct_tres/cr_cpu-22.05.8.sacct: 4
/// nodes of 4 CPUs, CR_CPU, jobs submitted at once and taken by priority, job size first: J4,
/// J6, J2, J1, J3, then J5 once J1 ended): the rule puts each where `NodeList` says.
#[test]
fn a_real_cr_cpu_record_is_placed_as_slurm_placed_it() {
    let r = site(Sharing::Cpu, &[1, 1, 1, 1], 4, 1);
    let mut u = Usage::new(&r);
    let n = |tasks| Request::tasks(tasks, Memory::PerNode(0));
    let j4 = Request {
        nodes: Some(2),
        ..n(2)
    };
    let nodes = |a: &Allocation| (a.nodes.clone(), a.cpus.clone());
    // J4 -N2 -n2: c1, c2
    assert_eq!(
        nodes(&place(&r, &mut u, &j4).unwrap()),
        (vec![0, 1], vec![1, 1])
    );
    // J6 -n5: no node has 5; index order, c1 3 and c2 2
    assert_eq!(
        nodes(&place(&r, &mut u, &n(5)).unwrap()),
        (vec![0, 1], vec![3, 2])
    );
    // J2 -n3: the fewest CPUs covering 3: c3
    assert_eq!(
        nodes(&place(&r, &mut u, &n(3)).unwrap()),
        (vec![2], vec![3])
    );
    // J1 -n2: c2 and c3 have 1 left: c4
    let j1 = place(&r, &mut u, &n(2)).unwrap();
    assert_eq!(nodes(&j1), (vec![3], vec![2]));
    // J3 -n1: c2's last CPU (an exact fit)
    assert_eq!(
        nodes(&place(&r, &mut u, &n(1)).unwrap()),
        (vec![1], vec![1])
    );
    // J5 --exclusive -N1: no idle node until J1 ends, then c4 whole
    let j5 = Request {
        nodes: Some(1),
        exclusive: true,
        ..n(1)
    };
    assert_eq!(place(&r, &mut u, &j5), None);
    u.give_back(&j1);
    assert_eq!(nodes(&place(&r, &mut u, &j5).unwrap()), (vec![3], vec![4]));
}

/// Usage with node `i` holding `held[i]` CPUs (4-CPU nodes, CR_CPU).
fn held(held: &[u32]) -> (Resources, Usage) {
    let r = site(Sharing::Cpu, &vec![1; held.len()], 4, 1);
    let mut u = Usage::new(&r);
    let nodes: Vec<u32> = (0..held.len() as u32)
        .filter(|&i| held[i as usize] > 0)
        .collect();
    let taken = Allocation {
        cpus: nodes.iter().map(|&i| held[i as usize]).collect(),
        memory: vec![0; nodes.len()],
        gres: vec![0; nodes.len()],
        nodes,
        exclusive: false,
    };
    u.take(&taken).unwrap();
    (r, u)
}

fn placed(r: &Resources, u: &Usage, request: &Request) -> Vec<(u32, u32)> {
    let all: Vec<u32> = (0..r.nodes()).collect();
    let a = select(r, u, &all, request, NodeLimits::default()).unwrap();
    a.nodes
        .iter()
        .copied()
        .zip(a.cpus.iter().copied())
        .collect()
}

#[test]
fn a_run_of_several_nodes_counts_all_their_cpus_and_just_enough_is_enough() {
    // runs {n0, n1} of 1 + 1 free and {n3} of 3: both hold 2 CPUs, the first has fewer
    let (r, u) = held(&[3, 3, 4, 1]);
    assert_eq!(placed(&r, &u, &mem(2, 1)), [(0, 1), (1, 1)]);
}

#[test]
fn a_run_too_short_in_nodes_is_not_big_enough() {
    // -N2 -n2: {n0, n1} (2 + 2 free) has the two nodes; {n3} (3 free, one node) has not
    let (r, u) = held(&[2, 2, 4, 1, 4]);
    let two = Request {
        nodes: Some(2),
        ..mem(2, 1)
    };
    assert_eq!(placed(&r, &u, &two), [(0, 1), (1, 1)]);
}

#[test]
fn best_fit_looks_past_a_first_node_that_would_do() {
    // n0 4 free, n1 2 free: two CPUs go to n1, the tighter fit
    let (r, u) = held(&[0, 2]);
    assert_eq!(placed(&r, &u, &mem(2, 1)), [(1, 2)]);
}

#[test]
fn nodes_are_taken_only_while_cpus_are_missing() {
    // three nodes of 1 free CPU: two CPUs take two of them, not three
    let (r, u) = held(&[3, 3, 3]);
    assert_eq!(placed(&r, &u, &mem(2, 1)), [(0, 1), (1, 1)]);
}

#[test]
fn each_node_leaves_a_cpu_for_every_node_still_to_come() {
    // -N2 -n4 on two empty nodes: 3 + 1, as -N2 -n6 gives 4 + 2
    let (r, u) = held(&[0, 0]);
    let job = |tasks| Request {
        nodes: Some(2),
        ..mem(tasks, 1)
    };
    assert_eq!(placed(&r, &u, &job(4)), [(0, 3), (1, 1)]);
    assert_eq!(placed(&r, &u, &job(6)), [(0, 4), (1, 2)]);
}
