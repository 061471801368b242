use std::sync::Arc;

use hpcsched_core::{
    Backfill, Calendar, Downtime, DowntimeKind, Engine, Heuristic, Inputs, Job, JobTable, Machine,
    Overrun, Policy, QueuePolicy, RunLog, StartKind,
};

/// (submit, run time, requested time, nodes); ids are 1, 2, ... in this order.
pub type Spec = (f64, f64, f64, u32);

pub fn table(specs: &[Spec]) -> JobTable {
    let jobs = specs
        .iter()
        .enumerate()
        .map(|(i, &(submit, run_time, requested_time, nodes))| Job {
            id: i as i64 + 1,
            submit,
            run_time,
            requested_time,
            nodes,
        })
        .collect();
    JobTable::new(jobs).unwrap()
}

pub fn run_with(
    nodes: u32,
    specs: &[Spec],
    windows: Vec<Downtime>,
    lead: f64,
    overrun: Overrun,
    policy: &mut dyn Policy,
) -> RunLog {
    let calendar = Calendar::new(windows, lead).unwrap();
    let inputs = Inputs::new(table(specs), Machine::new(nodes), calendar, overrun).unwrap();
    run_inputs(inputs, policy)
}

/// `policy` run over `inputs` to the end: its record.
pub fn run_inputs(inputs: Inputs, policy: &mut dyn Policy) -> RunLog {
    let mut engine = Engine::new(Arc::new(inputs));
    engine.run(policy).unwrap();
    engine.into_log()
}

pub fn run(nodes: u32, specs: &[Spec], policy: &mut dyn Policy) -> RunLog {
    run_with(nodes, specs, Vec::new(), 0.0, Overrun::Continue, policy)
}

pub fn fcfs_easy() -> QueuePolicy {
    QueuePolicy::new(Heuristic::Fcfs, usize::MAX, Backfill::Easy)
}

pub fn fcfs_none() -> QueuePolicy {
    QueuePolicy::new(Heuristic::Fcfs, usize::MAX, Backfill::None)
}

pub fn window(start: f64, end: f64, kind: DowntimeKind, nodes: Option<u32>) -> Downtime {
    Downtime {
        start,
        end,
        kind,
        nodes,
        back_asleep: false,
        partition: None,
        range: None,
    }
}

pub const P: StartKind = StartKind::Primary;
pub const B: StartKind = StartKind::Backfill;

/// Asserts (start, kind) per job.
pub fn assert_starts(log: &RunLog, expected: &[(f64, StartKind)]) {
    let got: Vec<(f64, StartKind)> = log
        .start
        .iter()
        .copied()
        .zip(log.start_kind.iter().copied())
        .collect();
    assert_eq!(got, expected);
}

/// A reproducible stream of draws (xorshift64) for random workloads.
pub struct Draws(pub u64);

impl Draws {
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }

    /// `jobs` rigid jobs: submitted below `gap` s apart, requesting 10 to 409 s, running 1 to
    /// 100 % of it, on 1 to `max_nodes` nodes.
    pub fn workload(&mut self, jobs: usize, gap: u64, max_nodes: u32) -> Vec<Spec> {
        let mut submit = 0.0;
        (0..jobs)
            .map(|_| {
                submit += self.below(gap) as f64;
                let requested = 10.0 + self.below(400) as f64;
                let run = (requested * (self.below(100) as f64 + 1.0) / 100.0).round();
                (
                    submit,
                    run,
                    requested,
                    1 + self.below(u64::from(max_nodes)) as u32,
                )
            })
            .collect()
    }
}
