//! Replays an SWF trace under FCFS+EASY (or a named policy) and prints the engine's time:
//! a harness for profiling the engine without Python.
//!
//!     cargo run --release --example replay -- TRACE.swf.gz [POLICY] [WINDOW] [REPEAT]

use std::sync::Arc;
use std::time::Instant;

use hpcsched_core::io::swf::parse_swf_file;
use hpcsched_core::sched::build_policy;
use hpcsched_core::{Calendar, Engine, Inputs, Job, JobTable, Machine, Overrun};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .expect("usage: replay TRACE [POLICY] [WINDOW] [REPEAT]");
    let policy = args.get(2).map_or("fcfs", String::as_str);
    let window = args.get(3).and_then(|w| w.parse().ok());
    let repeat: usize = args.get(4).and_then(|r| r.parse().ok()).unwrap_or(5);

    let t0 = Instant::now();
    let raw = parse_swf_file(std::path::Path::new(path), false).expect("readable trace");
    let machine = raw
        .header
        .iter()
        .find(|(k, _)| k == "MaxProcs")
        .and_then(|(_, v)| v.split_whitespace().next()?.parse::<u32>().ok())
        .expect("MaxProcs in the header");
    let mut jobs: Vec<Job> = (0..raw.job_id.len())
        .filter_map(|i| {
            let procs = if raw.requested_procs[i] > 0.0 {
                raw.requested_procs[i]
            } else {
                raw.allocated_procs[i]
            };
            let (run, req) = (raw.run_time[i], raw.requested_time[i]);
            (run >= 0.0 && procs > 0.0 && procs as u32 <= machine).then(|| Job {
                id: raw.job_id[i],
                submit: raw.submit[i],
                run_time: run,
                requested_time: if req > 0.0 { req } else { run },
                nodes: procs as u32,
            })
        })
        .collect();
    jobs.sort_by(|a, b| a.submit.total_cmp(&b.submit).then(a.id.cmp(&b.id)));
    let origin = jobs[0].submit;
    jobs.iter_mut().for_each(|j| j.submit -= origin);
    let n = jobs.len();
    let inputs = Arc::new(
        Inputs::new(
            JobTable::new(jobs).unwrap(),
            Machine { nodes: machine },
            Calendar::empty(),
            Overrun::Continue,
        )
        .unwrap(),
    );
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
