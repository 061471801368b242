//! What learning agents need from the engine: decision points, observations, rewards.
//!
//! The gymnasium environment of the Python package drives an [`Engine`] through these: it
//! advances to the next decision point (`Engine::advance_to`), observes fixed-size features, applies the agent's
//! action as an [`ExternalDecision`] (or a MARS action), and
//! scores the state with the same named reward terms MARS uses.

use crate::engine::power::NodeState;
use crate::engine::{Engine, View};
use crate::error::Result;
use crate::sched::shared::SharedScan;
use crate::sched::{translate, Backfill, Decision, ExternalDecision};
use crate::search::{Reward, RootReference};

/// Features per queue slot: wait (h), requested time (h), nodes / machine, requested
/// node-hours / machine, fits in the free nodes now (0/1), would end before the next
/// announced maintenance (0/1), FCFS rank / slots, slot holds a job (0/1). Where jobs share
/// nodes, CPUs stand for nodes (CPUs asked / the machine's, CPU-hours / the machine's CPUs)
/// and "fits now" is the placement rule's answer on what is free.
pub const JOB_FEATURES: usize = 8;
/// Cluster features: free, busy, down, idle, switching, sleeping nodes (shares of the
/// machine), waiting jobs / slots, hours to the next announced maintenance (capped at 48 h,
/// 48 without one), hours since the first submission / 1000. Where jobs share nodes, free
/// and busy are shares of the CPUs.
pub const CLUSTER_FEATURES: usize = 9;
const HORIZON_HOURS: f64 = 48.0;

/// Writes the features of the first `slots` waiting jobs (FCFS order) into `jobs`
/// (`slots * JOB_FEATURES`, zero-padded) and of the cluster into `cluster`; `mask[i]` is whether
/// slot `i` holds a job.
pub fn observe(
    view: &View,
    slots: usize,
    jobs: &mut [f32],
    cluster: &mut [f32],
    mask: &mut [bool],
) {
    let machine = f64::from(view.machine_nodes.max(1));
    let now = view.now;
    let next_maintenance = view
        .announced
        .iter()
        .map(|w| w.start)
        .filter(|&s| s > now)
        .fold(f64::INFINITY, f64::min);
    jobs.fill(0.0);
    mask.fill(false);
    // where jobs share nodes: sizes in CPUs, and where each job fits now by the placement rule
    let shared = view.shared.map(|s| {
        let cpus = (0..s.model.resources.nodes())
            .map(|n| f64::from(s.model.resources.shape(n).cpus))
            .sum::<f64>()
            .max(1.0);
        let fits = SharedScan::default().fits_alone(view, slots);
        (s, cpus, fits)
    });
    for (slot, &j) in view.queue.iter().take(slots).enumerate() {
        let job = view.jobs.get(j);
        let f = &mut jobs[slot * JOB_FEATURES..(slot + 1) * JOB_FEATURES];
        let hours = job.requested_time / 3600.0;
        let (size, fits) = match &shared {
            Some((s, cpus, fits)) => (
                s.model.requests[j as usize].cpus() as f64 / cpus,
                fits[slot].is_some(),
            ),
            None => (f64::from(job.nodes) / machine, job.nodes <= view.free),
        };
        f[0] = ((now - job.submit).max(0.0) / 3600.0) as f32;
        f[1] = hours as f32;
        f[2] = size as f32;
        f[3] = (hours * size) as f32;
        f[4] = f32::from(u8::from(fits));
        f[5] = f32::from(u8::from(now + job.requested_time <= next_maintenance));
        f[6] = (slot as f64 / slots.max(1) as f64) as f32;
        f[7] = 1.0;
        mask[slot] = true;
    }
    let mut counts = [0u32; 5];
    for node in view.nodes {
        counts[node.state as usize] += 1;
    }
    let busy: u32 = view.running.iter().map(|r| r.nodes).sum();
    let down: u32 = view.down_windows.iter().map(|&(_, nodes)| nodes).sum();
    let share = |n: u32| (f64::from(n) / machine) as f32;
    cluster[0] = share(view.free);
    cluster[1] = share(busy);
    if let Some((s, cpus, _)) = &shared {
        let busy = s.state.busy_cpus() as f64;
        cluster[0] = ((s.state.up_cpus() as f64 - busy).max(0.0) / cpus) as f32;
        cluster[1] = (busy / cpus) as f32;
    }
    cluster[2] = share(down);
    cluster[3] = share(counts[NodeState::Idle as usize]);
    cluster[4] =
        share(counts[NodeState::SwitchingOn as usize] + counts[NodeState::SwitchingOff as usize]);
    cluster[5] = share(counts[NodeState::Sleeping as usize]);
    cluster[6] = (view.queue.len() as f64 / slots.max(1) as f64) as f32;
    cluster[7] = ((next_maintenance - now) / 3600.0).min(HORIZON_HOURS) as f32;
    cluster[8] = (now.max(0.0) / 3600.0 / 1000.0) as f32;
}

/// Applies the "pick a job" action: the waiting job in `slot` (FCFS order, among the first
/// `slots`) goes first and the engine scans the queue with EASY. An empty slot acts as slot 0
/// (FCFS); returns whether the slot was empty.
pub fn apply_slot(engine: &mut Engine, slot: usize, slots: usize) -> Result<bool> {
    let view = engine.view();
    let invalid = slot >= view.queue.len().min(slots);
    let head = view.queue.get(if invalid { 0 } else { slot }).copied();
    let external = ExternalDecision {
        order: Some(head.into_iter().collect()),
        backfill: Backfill::Easy,
        ..ExternalDecision::default()
    };
    let mut decision = Decision::default();
    translate(&view, &external, &mut decision)?;
    engine.apply_decision(&decision)?;
    Ok(invalid)
}

/// The named reward terms of MARS (`search::reward`: wait, bounded slowdown, utilization,
/// energy; each in [0, 1]) over the episode so far, `start` being the reference taken at the
/// episode's start.
pub fn episode_terms(engine: &Engine, start: &RootReference) -> [f64; 4] {
    // The paper's forms: the episode's own started jobs and its span so far.
    [
        Reward::CW_PAPER,
        Reward {
            bsld: 1.0,
            ..Reward::ZERO
        },
        Reward::CU_PAPER,
        Reward {
            energy: 1.0,
            ..Reward::ZERO
        },
    ]
    .map(|reward| reward.evaluate(engine, start))
}
