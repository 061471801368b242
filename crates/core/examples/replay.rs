//! Replays an SWF trace under FCFS+EASY (or a named policy) and prints the engine's time:
//! a harness for profiling the engine without Python.
//!
//!     cargo run --release --example replay -- TRACE.swf.gz [POLICY] [WINDOW] [REPEAT]

use std::sync::Arc;
use std::time::Instant;

use hpcsched_core::sched::build_policy;
use hpcsched_core::Engine;

#[path = "common/trace.rs"]
mod trace;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .expect("usage: replay TRACE [POLICY] [WINDOW] [REPEAT]");
    let policy = args.get(2).map_or("fcfs", String::as_str);
    let window = args.get(3).and_then(|w| w.parse().ok());
    let repeat: usize = args.get(4).and_then(|r| r.parse().ok()).unwrap_or(5);

    let t0 = Instant::now();
    let inputs = trace::load(path);
    let n = inputs.jobs.len();
    let machine = inputs.machine.nodes;
    println!(
        "loaded {n} jobs on {machine} nodes in {:.3} s",
        t0.elapsed().as_secs_f64()
    );
    for _ in 0..repeat {
        let mut policy = build_policy(policy, window, "easy").unwrap();
        let mut engine = Engine::new(Arc::clone(&inputs));
        let t = Instant::now();
        engine.run(policy.as_mut()).unwrap();
        let log = engine.log();
        let mean_wait: f64 = (0..n)
            .map(|i| log.start[i] - inputs.jobs.get(i as u32).submit)
            .sum::<f64>()
            / n as f64;
        println!(
            "{}: {:.4} s, mean wait {mean_wait:.3} s, {} invocations",
            policy.name(),
            t.elapsed().as_secs_f64(),
            log.invocations
        );
    }
}
