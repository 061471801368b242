//! Decisions made outside the engine (a Python policy, a learning agent), in their own terms:
//! jobs named by job-table index, a priority order to scan, timers and power switches.
//! [`translate`] turns them into the engine's [`Decision`]; the engine then validates it like
//! any other (a job that does not fit, a node in the wrong state: an error naming the job).

use std::collections::HashMap;

use crate::engine::View;
use crate::error::{CoreError, Result};
use crate::sched::policy::{scan_with_backfill, Backfill, Decision, Start, StartKind};
use crate::sched::shared::SharedScan;
use crate::sched::site::SiteScan;

/// What an outside policy decides at one invocation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExternalDecision {
    /// Waiting jobs (job-table indices) to start now, exactly these, in this order.
    pub start: Vec<u32>,
    /// More jobs to start now, recorded as backfilled (started behind a job that waits).
    pub backfilled: Vec<u32>,
    /// Or a priority order (job-table indices; waiting jobs not named follow in FCFS order) that
    /// the engine scans, starting jobs while they fit, then backfills behind the first that
    /// does not (with EASY) or stops there.
    pub order: Option<Vec<u32>>,
    pub backfill: Backfill,
    /// Times at which to be invoked again.
    pub timers: Vec<f64>,
    /// Nodes to switch on and off (platforms with a power model).
    pub power_on: Vec<u32>,
    pub power_off: Vec<u32>,
    /// Where jobs share nodes: the nodes a job of `start` or `backfilled` is placed among
    /// (job, nodes); the others are placed on every node of their partitions.
    pub nodes: Vec<(u32, Vec<u32>)>,
}

/// Fills `decision` from `external`, naming unknown or repeated jobs in the error.
pub fn translate(view: &View, external: &ExternalDecision, decision: &mut Decision) -> Result<()> {
    decision.clear();
    // queue position of each waiting job, built once: orders may name the whole queue
    let positions: HashMap<u32, u32> = view
        .queue
        .iter()
        .enumerate()
        .map(|(p, &j)| (j, p as u32))
        .collect();
    let position = |job: u32| -> Result<u32> {
        positions.get(&job).copied().ok_or_else(|| {
            let what = if (job as usize) < view.jobs.len() {
                format!("job {} (index {job}) is not waiting", view.jobs.get(job).id)
            } else {
                format!("there is no job index {job}")
            };
            CoreError::decision(what)
        })
    };
    if external.order.is_some() && !(external.start.is_empty() && external.backfilled.is_empty()) {
        return Err(CoreError::decision(
            "give either jobs to start or an order to scan, not both",
        ));
    }
    let mut named = vec![false; view.queue.len()];
    let mut name = |pos: u32, job: u32| -> Result<()> {
        if std::mem::replace(&mut named[pos as usize], true) {
            return Err(CoreError::decision(format!(
                "job {} is named twice",
                view.jobs.get(job).id
            )));
        }
        Ok(())
    };
    let starts = (external.start.iter().map(|&j| (j, StartKind::Primary))).chain(
        external
            .backfilled
            .iter()
            .map(|&j| (j, StartKind::Backfill)),
    );
    let mut named_starts = Vec::new();
    for (job, kind) in starts {
        let pos = position(job)?;
        name(pos, job)?;
        named_starts.push((pos, job, kind));
    }
    if let Some((job, _)) = external
        .nodes
        .iter()
        .find(|(j, _)| !(external.start.contains(j) || external.backfilled.contains(j)))
    {
        return Err(CoreError::decision(format!(
            "nodes are named for job index {job}, which the decision does not start"
        )));
    }
    if let Some(shared) = view.shared {
        // the placement rule puts each job now, among the nodes named for it if any
        let machine = shared.model.resources.nodes();
        if let Some((job, node)) = (external.nodes.iter())
            .find_map(|(j, nodes)| nodes.iter().find(|&&n| n >= machine).map(|&n| (*j, n)))
        {
            return Err(CoreError::decision(format!(
                "job {} is given node {node} of a machine of {machine}",
                view.jobs.get(job).id
            )));
        }
        let mut scan = SharedScan::default();
        if let Err(job) = scan.start_named(view, &named_starts, &external.nodes, decision) {
            let among = if external.nodes.iter().any(|(j, _)| *j == job) {
                " among the nodes named for it"
            } else {
                ""
            };
            return Err(CoreError::decision(format!(
                "job {} fits in none of its partitions now{among}",
                view.jobs.get(job).id
            )));
        }
    } else if !external.nodes.is_empty() {
        return Err(CoreError::decision(
            "a policy names nodes only where jobs share nodes: on whole nodes the engine \
             counts them (name none)",
        ));
    } else if view.site.is_some() {
        // on partitions the engine finds each job's partition and nodes
        let placed = SiteScan::default().start_named(view, &named_starts, decision);
        if let Err(job) = placed {
            return Err(CoreError::decision(format!(
                "job {} fits in none of its partitions now",
                view.jobs.get(job).id
            )));
        }
    } else {
        (decision.starts).extend(named_starts.iter().map(|&(pos, job, kind)| Start {
            pos,
            job,
            kind,
        }));
    }
    if let Some(order) = &external.order {
        let mut positions = Vec::with_capacity(view.queue.len());
        for &job in order {
            let pos = position(job)?;
            name(pos, job)?;
            positions.push(pos);
        }
        positions.extend((0..view.queue.len() as u32).filter(|&p| !named[p as usize]));
        if view.shared.is_some() {
            let len = positions.len();
            SharedScan::default().scan(view, len, |k| positions[k], external.backfill, decision);
        } else if view.site.is_some() {
            let len = positions.len();
            SiteScan::default().scan(view, len, |k| positions[k], external.backfill, decision);
        } else {
            let mut started = Vec::new();
            scan_with_backfill(
                view,
                |k| positions[k],
                external.backfill,
                &mut started,
                decision,
            );
        }
    }
    decision.timers.extend_from_slice(&external.timers);
    decision.power_on.extend_from_slice(&external.power_on);
    decision.power_off.extend_from_slice(&external.power_off);
    Ok(())
}
