//! The power manager's wake plan on classes of alike nodes against the plan node by node
//! (`ManagerConfig::plan_by_node`), with sampled transitions: every transition ends at its own
//! instant, each a call of the queue policy and the manager, and both plans must decide the
//! same at every one of them.

use std::sync::Arc;

use hpcsched_core::model::PowerModel;
use hpcsched_core::power::config::{manager_config, IconConfig};
use hpcsched_core::power::log::PowerRecord;
use hpcsched_core::power::manager::PowerManager;
use hpcsched_core::sched::{build_policy, build_snf};
use hpcsched_core::{Calendar, Engine, Inputs, Machine, Overrun, RunLog};

use crate::common::{table, Spec};

const IDLE: usize = 0;
const SWITCHING_ON: usize = 2;
const SWITCHING_OFF: usize = 3;

pub(crate) fn model() -> PowerModel {
    PowerModel {
        computing_w: 100.0,
        idle_w: 10.0,
        sleeping_w: 1.0,
        switching_on_w: 20.0,
        switching_off_w: 20.0,
        switch_on_s: 50.0,
        switch_on_std_s: 10.0,
        switch_off_s: 40.0,
        switch_off_std_s: 8.0,
    }
}

fn run(
    nodes: u32,
    specs: &[Spec],
    manager: &str,
    timeout: f64,
    seed: Option<u64>,
    by_node: bool,
) -> Run {
    run_policy(nodes, specs, manager, timeout, seed, by_node, None)
}

/// `run` under SNF (`policy` None) or a heuristic with EASY (`Some(name)`), or SNF with the
/// starvation guard (`Some("snf-guard")`: a bound of 2 h).
fn run_policy(
    nodes: u32,
    specs: &[Spec],
    manager: &str,
    timeout: f64,
    seed: Option<u64>,
    by_node: bool,
    policy: Option<&str>,
) -> Run {
    let machine = Machine {
        nodes,
        power: Some(model()),
    };
    let calendar = Calendar::new(Vec::new(), 0.0).unwrap();
    let mut config = manager_config(manager, timeout, IconConfig::default()).unwrap();
    config.plan_by_node = by_node;
    let inputs = Inputs::new(table(specs), machine, calendar, Overrun::Continue)
        .unwrap()
        .with_manager(config, seed)
        .unwrap();
    let mut engine = Engine::new(Arc::new(inputs));
    let mut policy = match policy {
        None => build_snf(None).unwrap(),
        Some("snf-guard") => build_snf(Some(7200.0)).unwrap(),
        Some(name) => build_policy(name, None, "easy").unwrap(),
    };
    engine.run(policy.as_mut()).unwrap();
    let manager = engine.power_layer().unwrap().as_any();
    let power_records = manager
        .downcast_ref::<PowerManager>()
        .unwrap()
        .records()
        .to_vec();
    Run {
        log: engine.into_log(),
        power_records,
    }
}

/// A run's record and its power manager's log.
struct Run {
    log: RunLog,
    power_records: Vec<PowerRecord>,
}

impl std::ops::Deref for Run {
    type Target = RunLog;
    fn deref(&self) -> &RunLog {
        &self.log
    }
}

/// Everything a run decides and records, but the wall-clock seconds of each call.
fn outcome(log: &Run) -> String {
    let records: Vec<_> = log
        .power_records
        .iter()
        .map(|r| {
            let mut r = r.clone();
            r.seconds = 0.0;
            r
        })
        .collect();
    format!(
        "{:?}",
        (
            &log.start,
            &log.end,
            &log.energy_j,
            &log.timeline,
            &log.timeline_power_w,
            records,
            log.invocations,
            log.event_times,
        )
    )
}

/// Instants at which the count of nodes in `state` went down, within (from, to].
fn decreases(log: &RunLog, state: usize, from: f64, to: f64) -> Vec<f64> {
    log.timeline
        .windows(2)
        .filter(|w| w[1].0 > from && w[1].0 <= to && w[1].1[state] < w[0].1[state])
        .map(|w| w[1].0)
        .collect()
}

#[test]
fn sampled_transitions_end_apart_and_both_plans_decide_the_same() {
    // 4 nodes. A (4 nodes, 10 s) runs from 0 to 10; its nodes time out at 110 and switch off,
    // each for its own draw around 40 s. B (4 nodes) arrives at 1000 with every node asleep:
    // the plan needs all four at 1000 + 50 s, so it wakes them at once; each wakes after its
    // own draw around 50 s, and B starts when the last one is idle.
    let specs = [(0.0, 10.0, 10.0, 4), (1000.0, 10.0, 10.0, 4)];
    let log = run(4, &specs, "ipm", 100.0, Some(7), false);
    assert_eq!((log.start[0], log.end[0]), (0.0, 10.0));
    let at_timeout = log.power_records.iter().find(|r| r.time == 110.0).unwrap();
    assert_eq!(at_timeout.shutdowns, 4);
    let asleep = decreases(&log, SWITCHING_OFF, 110.0, 1000.0);
    assert_eq!(asleep.len(), 4, "four switch-offs ending apart: {asleep:?}");
    assert!(asleep.iter().all(|&t| t > 110.0 && t < 110.0 + 80.0));
    let at_arrival = log.power_records.iter().find(|r| r.time == 1000.0).unwrap();
    assert_eq!(at_arrival.wakes, 4);
    let awake = decreases(&log, SWITCHING_ON, 1000.0, f64::INFINITY);
    assert_eq!(awake.len(), 4, "four switch-ons ending apart: {awake:?}");
    assert!(awake.iter().all(|&t| t > 1000.0 && t < 1000.0 + 100.0));
    // Each switch-on end is a call (the first three start nothing, the last starts B).
    let last = *awake.last().unwrap();
    assert_eq!(log.start[1], last);
    for &t in &awake[..3] {
        let call = log.power_records.iter().find(|r| r.time == t).unwrap();
        assert_eq!((call.started, call.wakes, call.shutdowns), (0, 0, 0));
        let idle = log.timeline.iter().find(|e| e.0 == t).unwrap().1[IDLE];
        assert!((1..4).contains(&idle));
    }
    // The plan node by node decides exactly the same.
    let reference = run(4, &specs, "ipm", 100.0, Some(7), true);
    assert_eq!(outcome(&log), outcome(&reference));
}

/// A deterministic pseudo-random workload: bursts of arrivals, sizes 1..=nodes skewed small,
/// run times below or above the request.
fn workload(nodes: u32, count: usize, seed: u64) -> Vec<Spec> {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 11) as f64) / ((1u64 << 53) as f64)
    };
    let mut t = 0.0;
    (0..count)
        .map(|_| {
            let gap = -(1.0 - next()).ln() * if next() < 0.3 { 30.0 } else { 1800.0 };
            t += gap;
            let size = ((nodes as f64).powf(next() * next()).round() as u32).clamp(1, nodes);
            let requested = 60.0 + 7200.0 * next();
            let run = requested * (0.1 + 1.1 * next());
            (t, run.round(), requested.round(), size)
        })
        .collect()
}

#[test]
fn the_class_plan_decides_as_the_plan_node_by_node() {
    for (manager, timeout) in [("ipm", 600.0), ("icon", 900.0), ("icon-nf", 300.0)] {
        for seed in [None, Some(1), Some(2), Some(3)] {
            let specs = workload(48, 400, seed.unwrap_or(0) + 11);
            let fast = run(48, &specs, manager, timeout, seed, false);
            let reference = run(48, &specs, manager, timeout, seed, true);
            assert!(fast.start.iter().all(|s| s.is_finite()));
            assert!(fast.power_records.iter().any(|r| r.wakes > 0));
            assert_eq!(
                outcome(&fast),
                outcome(&reference),
                "{manager}, transition seed {seed:?}"
            );
        }
    }
}

/// The EASY wake plan and the reservations on classes of alike nodes against node by node:
/// FCFS and SJF with EASY under IPM and ICON, and SNF's starvation guard (an aged head holds a
/// reservation), with mean and sampled transitions.
#[test]
fn the_easy_plans_on_classes_decide_as_the_plans_node_by_node() {
    for policy in ["fcfs", "sjf", "snf-guard"] {
        for (manager, timeout) in [("ipm", 600.0), ("icon", 900.0)] {
            for seed in [None, Some(1), Some(2)] {
                let specs = workload(48, 400, seed.unwrap_or(0) + 23);
                let p = Some(policy);
                let fast = run_policy(48, &specs, manager, timeout, seed, false, p);
                let reference = run_policy(48, &specs, manager, timeout, seed, true, p);
                assert!(fast.start.iter().all(|s| s.is_finite()));
                assert!(fast.power_records.iter().any(|r| r.wakes > 0));
                assert_eq!(
                    outcome(&fast),
                    outcome(&reference),
                    "{policy} {manager}, transition seed {seed:?}"
                );
            }
        }
    }
}
