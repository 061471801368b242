//! Speed of one MARS search from a Theta-scale state: replays a trace under FCFS+EASY to the
//! first decision with at least `MIN_QUEUE` waiting jobs and two distinct outcomes, then runs
//! one tree (one core) at depth 50 over the paper's 161 actions and reports iterations/s.
//!
//!     cargo run --release --example search_speed -- ALCF-Theta-2022.swf.gz [ITERATIONS] [MIN_QUEUE] [DEPTH]

use std::time::Instant;

use hpcsched_core::search::{search, ActionSet, Reward, SearchConfig};
use hpcsched_core::{Backfill, Belief, Engine, Heuristic, QueuePolicy};

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

    let inputs = trace::load(path);
    let mut engine = Engine::new(inputs);
    let mut fcfs = QueuePolicy::new(Heuristic::Fcfs, usize::MAX, Backfill::Easy);
    let mut actions = ActionSet::paper();
    loop {
        assert!(
            engine.advance(),
            "no state with {min_queue} waiting jobs and a choice"
        );
        let view = engine.view();
        if view.queue.len() >= min_queue && view.free > 0 && actions.outcomes(&view, 2).len() >= 2 {
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
    for (name, reward) in [("CW", Reward::CW), ("CU", Reward::CU)] {
        let config = SearchConfig {
            iterations: Some(iterations),
            trees: 1,
            depth,
            ..SearchConfig::default()
        };
        let start = Instant::now();
        let result = search(&belief.engine, &branches, &actions, reward, &config, None);
        let seconds = start.elapsed().as_secs_f64();
        println!(
            "MARS-{name} (depth {depth}): {} iterations in {seconds:.3} s: {:.0} iterations/s on one core",
            result.iterations,
            result.iterations as f64 / seconds
        );
    }
}
