//! Loads an SWF trace into engine inputs the way `hpcsched.load_workload` does by default
//! (processors are nodes, machine = MaxProcs), for the examples that run without Python.

use std::sync::Arc;

use hpcsched_core::io::swf::parse_swf_file;
use hpcsched_core::{Calendar, Inputs, Job, JobTable, Machine, Overrun};

pub fn load(path: &str) -> Arc<Inputs> {
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
    Arc::new(
        Inputs::new(
            JobTable::new(jobs).unwrap(),
            Machine::new(machine),
            Calendar::empty(),
            Overrun::Continue,
        )
        .unwrap(),
    )
}
