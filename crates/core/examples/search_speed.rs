//! Speed of one MARS search from a Theta-scale state: replays a trace under FCFS+EASY to the
//! first decision with at least `MIN_QUEUE` waiting jobs and two distinct outcomes, then runs
//! one tree (one core) at depth 50 over the paper's 161 actions and reports iterations/s: with
//! the paper's forward model and rewards, with the rewards without blind spots, and with the
//! stochastic forward model (run times drawn from the jobs completed before the state, a day of
//! recent arrivals), whose scenario is drawn and built inside the timed part; then the rollout
//! look-ahead (each outcome followed by six base orderings) over as many sampled futures as
//! the iteration budget pays for, every future drawn and built inside the timed part.
//!
//!     cargo run --release --example search_speed -- ALCF-Theta-2022.swf.gz [ITERATIONS] [MIN_QUEUE] [DEPTH]
//!
//! With `SEARCH_SPEED_PARTITION=1` the machine is one partition of all its nodes (the same
//! schedule as one pool, scheduled by the engine's partitions code): the trees only (sampled
//! arrivals do not run on partitions). With `SEARCH_SPEED_CORES=C` jobs share nodes of `C`
//! cores (`CR_Core`, memory not a resource), each asking its nodes' cores as one-CPU tasks
//! (`sbatch -n`), placed by the cons_tres rule: the trees only, as on partitions.

use std::time::Instant;

use hpcsched_core::estimate::{Completed, RuntimeHistory};
use hpcsched_core::model::{OverLimits, PartitionSpec};
use hpcsched_core::search::mcts::search_scenarios;
use hpcsched_core::search::rollout::rollout_search;
use hpcsched_core::search::{
    search, ActionSet, ArrivalModel, Reward, RuntimeModel, ScenarioModel, SearchConfig,
};
use hpcsched_core::{Backfill, Belief, Engine, Heuristic, QueuePolicy};
use rand_core::SeedableRng;

#[path = "common/trace.rs"]
mod trace;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .expect("usage: search_speed TRACE [ITERATIONS] [MIN_QUEUE] [DEPTH]");
    let iterations: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(2000);
    let min_queue: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(200);
    let depth: u32 = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(50);

    let mut inputs = trace::load(path);
    let one_partition = std::env::var("SEARCH_SPEED_PARTITION").is_ok_and(|v| v == "1");
    if one_partition {
        let owned = (*inputs).clone();
        let (machine, jobs) = (owned.machine.nodes, owned.jobs.len() as u32);
        let all = PartitionSpec::new("all", &[(0, machine)]);
        let offsets = (0..=jobs).collect();
        let site = owned.with_site(
            vec![all],
            OverLimits::Reject,
            offsets,
            vec![0; jobs as usize],
        );
        inputs = std::sync::Arc::new(site.unwrap());
        println!("one partition of all {machine} nodes");
    }
    let cores: Option<u32> = std::env::var("SEARCH_SPEED_CORES")
        .ok()
        .and_then(|v| v.parse().ok());
    if let Some(cores) = cores {
        inputs = std::sync::Arc::new(as_cores((*inputs).clone(), cores));
        println!("jobs sharing nodes of {cores} cores");
    }
    let one_partition = one_partition || cores.is_some();
    let mut engine = Engine::new(inputs);
    engine.record_events();
    let mut history = RuntimeHistory::new();
    let mut fcfs = QueuePolicy::new(Heuristic::Fcfs, usize::MAX, Backfill::Easy);
    let mut actions = ActionSet::paper();
    loop {
        assert!(
            engine.advance(),
            "no state with {min_queue} waiting jobs and a choice"
        );
        let view = engine.view();
        for &(job, start, end) in view.completed {
            let known = view.jobs.get(job);
            history.observe(Completed {
                requested: known.requested_time,
                nodes: known.nodes,
                user: -1,
                run_time: end - start,
            });
        }
        if view.queue.len() >= min_queue && view.has_room() && actions.outcomes(&view, 2).len() >= 2
        {
            break;
        }
        engine.invoke(&mut fcfs).unwrap();
    }
    let view = engine.view();
    println!(
        "state: t = {:.0} s, {} nodes, {} free, {} waiting, {} running",
        view.now,
        view.machine_nodes,
        view.free,
        view.queue.len(),
        view.running.len()
    );
    let belief = Belief::from_view(&view).unwrap();
    let branches = actions.outcomes(&belief.engine.view(), usize::MAX);
    println!("distinct root outcomes: {}", branches.len());
    let config = SearchConfig {
        iterations: Some(iterations),
        trees: 1,
        depth,
        ..SearchConfig::default()
    };
    // SEARCH_SPEED_ONLY=rollout measures the rollout look-ahead alone, =sampled-tree the tree
    // search on sampled futures alone (for profiling them).
    let only = std::env::var("SEARCH_SPEED_ONLY").unwrap_or_default();
    let (only_rollout, only_sampled_tree) = (only == "rollout", only == "sampled-tree");
    let tree_rewards = if only_rollout || only_sampled_tree {
        0
    } else {
        4
    };
    for (name, reward) in [
        ("CW, the paper's", Reward::CW_PAPER),
        ("CU, the paper's", Reward::CU_PAPER),
        ("CW", Reward::CW),
        ("CU", Reward::CU),
    ]
    .into_iter()
    .take(tree_rewards)
    {
        let start = Instant::now();
        let result = search(&belief.engine, &branches, &actions, reward, &config, None);
        let seconds = start.elapsed().as_secs_f64();
        println!(
            "MARS-{name} (depth {depth}): {} iterations in {seconds:.3} s: {:.0} iterations/s on one core",
            result.iterations,
            result.iterations as f64 / seconds
        );
    }
    let model = ScenarioModel {
        runtime: RuntimeModel::History,
        arrivals: ArrivalModel::Recent {
            window: 7.0 * 86400.0,
            horizon: 86400.0,
        },
        overrun_kill: false,
    };
    println!("history: {} completed jobs", history.len());
    let sampled_rewards = if only_rollout || one_partition { 0 } else { 2 };
    for (name, reward) in [("CW", Reward::CW), ("CU", Reward::CU)]
        .into_iter()
        .take(sampled_rewards)
    {
        let start = Instant::now();
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(5);
        let scenario = model.sample(&view, &history, &mut rng);
        let sampled = Belief::from_scenario(&view, &scenario).unwrap();
        let result = search_scenarios(
            &|_| sampled.engine.fork(),
            &branches,
            &actions,
            reward,
            &config,
            None,
        );
        let seconds = start.elapsed().as_secs_f64();
        println!(
            "MARS-{name}, sampled run times and {} arrivals (depth {depth}): {} iterations in \
             {seconds:.3} s: {:.0} iterations/s on one core",
            scenario.arrivals.len(),
            result.iterations,
            result.iterations as f64 / seconds
        );
    }
    if only_sampled_tree || one_partition {
        return;
    }
    let set = ActionSet::parse("f1:256,f2:256,sjf:256,wfp3:256,unicef:256,fcfs").unwrap();
    let bases: Vec<_> = (0..set.len()).map(|i| set.get(i)).collect();
    let futures = (iterations as usize / (branches.len() * bases.len())).max(1) as u32;
    for (name, reward) in [("CW", Reward::CW), ("CU", Reward::CU)] {
        let start = Instant::now();
        let beliefs: Vec<Belief> = (0..futures)
            .map(|k| {
                let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(5 + u64::from(k));
                let scenario = model.sample(&view, &history, &mut rng);
                Belief::from_scenario(&view, &scenario).unwrap()
            })
            .collect();
        let result = rollout_search(
            &|k| beliefs[k as usize].engine.fork(),
            futures,
            &branches,
            &bases,
            reward,
            &config,
            None,
        );
        let seconds = start.elapsed().as_secs_f64();
        println!(
            "MARS-{name} rollout look-ahead, {futures} sampled futures x {} outcomes x {} bases \
             (depth {depth}): {} rollouts in {seconds:.3} s: {:.0} iterations/s on one core",
            branches.len(),
            bases.len(),
            result.iterations,
            result.iterations as f64 / seconds
        );
    }
}

/// `inputs` with jobs sharing nodes of `cores` cores: each job asks for its nodes' cores as
/// one-CPU tasks.
fn as_cores(inputs: hpcsched_core::Inputs, cores: u32) -> hpcsched_core::Inputs {
    use hpcsched_core::model::{
        Memory, NodeSet, NodeShape, Request, Resources, SharedNodes, Sharing,
    };
    let machine = inputs.machine.nodes;
    let shape = NodeShape {
        cpus: cores,
        threads_per_core: 1,
        memory: 1,
        gres: Vec::new().into(),
        weight: 1,
    };
    let resources = Resources::new(
        Sharing::Core,
        Vec::new(),
        vec![shape],
        vec![0; machine as usize],
    )
    .unwrap();
    let requests = (0..inputs.jobs.len() as u32)
        .map(|j| Request::tasks(inputs.jobs.get(j).nodes * cores, Memory::PerNode(0)))
        .collect();
    let all = NodeSet {
        nodes: (0..machine).collect(),
        limits: Default::default(),
        max_mem_per_node: None,
    };
    let shared = SharedNodes::new(resources, requests, vec![all]).unwrap();
    inputs.with_shared_nodes(shared).unwrap()
}
