//! Decision points built by hand, for the search's tests.

use std::sync::Arc;

use crate::engine::{Decision, Engine, Inputs, Policy};
use crate::model::{Calendar, Job, JobTable, Machine, Overrun};
use crate::sched::{Backfill, Heuristic, QueuePolicy};

/// (submit, run, requested, nodes)
pub(crate) fn engine(nodes: u32, specs: &[(f64, f64, f64, u32)]) -> Engine {
    engine_with(nodes, specs, Calendar::empty())
}

/// [`engine`] with a downtime calendar.
pub(crate) fn engine_with(
    nodes: u32,
    specs: &[(f64, f64, f64, u32)],
    calendar: Calendar,
) -> Engine {
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
    let inputs = Inputs::new(
        JobTable::new(jobs).unwrap(),
        Machine::new(nodes),
        calendar,
        Overrun::Continue,
    )
    .unwrap();
    Engine::new(Arc::new(inputs))
}

/// 4 nodes; three 1-node jobs run until 3600; the queue holds four long 1-node jobs and a
/// short 4-node job L. Orderings either start one small job (FCFS, SJF on small windows,
/// ...) or nothing, reserving the nodes for L (LRF, SJF with L in the window): two outcomes.
pub(crate) fn drain_case() -> Engine {
    let mut specs = vec![(0.0, 3600.0, 3600.0, 1); 3];
    specs.extend([(10.0, 36000.0, 36000.0, 1); 4]);
    specs.push((20.0, 360.0, 360.0, 4));
    let mut e = engine(4, &specs);
    let mut fcfs = QueuePolicy::new(Heuristic::Fcfs, usize::MAX, Backfill::Easy);
    e.step(&mut fcfs).unwrap(); // t = 0: the three running jobs start
    e.advance(); // t = 10: the small jobs arrive ...
    e.invoke(&mut NoStart).unwrap();
    e.advance(); // t = 20: L arrives; decision point
    e
}

pub(crate) struct NoStart;
impl Policy for NoStart {
    fn name(&self) -> String {
        "nothing".into()
    }
    fn decide(&mut self, _: &crate::engine::View, _: &mut Decision) {}
}
