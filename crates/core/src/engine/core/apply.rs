//! Applying a decision: every start checked (it fits, it may run before announced
//! maintenance), placed on nodes, started; then the power layer's step and the node switches.

use crate::engine::admission::Admission;
use crate::engine::core::Engine;
use crate::engine::policy::Decision;
use crate::engine::power::{NodeState, Nodes};
use crate::engine::shared::{check_allocation, window_nodes};
use crate::engine::site::SiteState;
use crate::engine::state::{Completion, Running, Timer};
use crate::error::{CoreError, Result};
use crate::model::{Overrun, Site};

impl Engine {
    /// Validates and applies a decision: the only place jobs start.
    pub(super) fn apply(&mut self, decision: &Decision) -> Result<()> {
        if !decision.starts.is_empty() {
            self.apply_starts(decision)?;
        }
        self.log
            .record_reservation(self.state.now, decision.reservation);
        if self.state.manager.is_some()
            && !(decision.power_on.is_empty() && decision.power_off.is_empty())
        {
            return Err(CoreError::decision(
                "a power manager switches the nodes of this run; run without one to switch them",
            ));
        }
        self.apply_power(&decision.power_off, &decision.power_on, &decision.timers)?;
        if self.state.pending_act {
            self.act(decision)?;
        }
        Ok(())
    }

    /// The power manager's step after the instant's starts (see `PowerManager::act`).
    pub(super) fn act(&mut self, decision: &Decision) -> Result<()> {
        self.state.pending_act = false;
        let Some(mut manager) = self.state.manager.take() else {
            return Ok(());
        };
        let recording = self.log.is_recording();
        let changed = self.take_changed();
        let group_counts = self
            .state
            .nodes
            .as_ref()
            .map_or(&[][..], |n| n.group_counts());
        let actions = manager.act(&self.view(), decision, recording, &changed, group_counts);
        self.return_changed(changed);
        self.state.manager = Some(manager);
        self.apply_power(&actions.power_off, &actions.power_on, &actions.timers)
    }

    /// The journal of node changes since it was last taken (empty without node identities).
    pub(super) fn take_changed(&mut self) -> Vec<u32> {
        self.state
            .nodes
            .as_mut()
            .map(Nodes::take_changed)
            .unwrap_or_default()
    }

    pub(super) fn return_changed(&mut self, changed: Vec<u32>) {
        if let Some(nodes) = self.state.nodes.as_mut() {
            nodes.return_changed(changed);
        }
    }

    /// Switches nodes off, then on, and records timers.
    pub(super) fn apply_power(&mut self, off: &[u32], on: &[u32], timers: &[f64]) -> Result<()> {
        let now = self.state.now;
        if !(on.is_empty() && off.is_empty()) {
            let Some(nodes) = self.state.nodes.as_mut() else {
                return Err(CoreError::decision("this run does not manage node power"));
            };
            for &node in off {
                nodes.power_off(node, now)?;
            }
            for &node in on {
                nodes.power_on(node, now)?;
            }
        }
        for &t in timers {
            if t > now && t.is_finite() {
                self.state.timers.push(Timer(t));
            }
        }
        Ok(())
    }

    /// The nodes of each start, one list after the other: the decision's own, else the power
    /// manager's energy-aware choice, else the lowest-numbered idle nodes. Empty without node
    /// identities.
    pub(super) fn placements(&self, decision: &Decision) -> Result<Vec<u32>> {
        let Some(nodes) = self.state.nodes.as_ref() else {
            if !decision.nodes.is_empty() {
                return Err(CoreError::decision(
                    "this run's nodes have no identities: a decision cannot name them",
                ));
            }
            return Ok(Vec::new());
        };
        let jobs = &self.inputs.jobs;
        let total: usize = decision
            .starts
            .iter()
            .map(|s| jobs.get(s.job).nodes as usize)
            .sum();
        if !decision.nodes.is_empty() {
            if decision.nodes.len() != total {
                return Err(CoreError::decision(format!(
                    "the decision names {} nodes for starts that need {total}",
                    decision.nodes.len()
                )));
            }
            return Ok(decision.nodes.clone());
        }
        let view = self.view();
        let mut taken = vec![false; nodes.as_slice().len()];
        let mut placed = Vec::with_capacity(total);
        for start in &decision.starts {
            let count = jobs.get(start.job).nodes;
            let chosen = match view.manager {
                Some(manager) => manager.place(&view, count, &taken),
                None => (0..taken.len() as u32)
                    .filter(|&i| {
                        !taken[i as usize] && view.nodes[i as usize].state == NodeState::Idle
                    })
                    .take(count as usize)
                    .collect(),
            };
            for &i in &chosen {
                taken[i as usize] = true;
            }
            placed.extend(chosen);
        }
        Ok(placed)
    }

    pub(super) fn apply_starts(&mut self, decision: &Decision) -> Result<()> {
        self.scratch.clear();
        self.scratch.extend(decision.starts.iter().map(|s| s.pos));
        self.scratch.sort_unstable();
        if self.scratch.windows(2).any(|w| w[0] == w[1]) {
            return Err(CoreError::decision(
                "the same queue position is started twice",
            ));
        }
        let view = self.view();
        let mut admission = Admission::new(&view);
        let mut free = view.free;
        let now = self.state.now;
        let inputs = &*self.inputs;
        let placed = self.placements(decision)?;
        let mut offset = 0;
        let on_site = inputs.site.is_some();
        // (on partitions: when the nodes of each atom go down for maintenance announced ahead;
        // empty when none is)
        let mut ahead = Vec::new();
        if let (Some(site), false) = (inputs.site.as_ref(), self.state.announced.is_empty()) {
            site.maintenance_ahead(&self.state.announced, now, &mut ahead);
        }
        let shared = inputs.shared.is_some();
        if shared && decision.allocations.len() != decision.starts.len() {
            return Err(CoreError::decision(
                "on shared nodes each start names what it takes",
            ));
        }
        if on_site && decision.site_starts.len() != decision.starts.len() {
            return Err(CoreError::decision(
                "on a platform with partitions each start names its partition and nodes",
            ));
        }
        for (i, start) in decision.starts.iter().enumerate() {
            // (on a site of node groups of their own power: what this start's nodes draw)
            let mut site_watts: Option<f64> = None;
            let queued = self.state.queue.as_slice().get(start.pos as usize).copied();
            if queued != Some(start.job) {
                return Err(CoreError::decision(format!(
                    "job index {} is not at queue position {}",
                    start.job, start.pos
                )));
            }
            let job = inputs.jobs.get(start.job);
            let requested_end = now + job.requested_time;
            if !shared && job.nodes > free {
                return Err(CoreError::decision(format!(
                    "job {} needs {} nodes but only {free} are free",
                    job.id, job.nodes
                )));
            }
            // (on partitions, maintenance is checked against the start's partition below)
            // (on shared nodes, against the nodes of the start below)
            if !on_site && !shared && !admission.admits(requested_end, job.nodes) {
                return Err(CoreError::decision(format!(
                    "job {} would run into an announced maintenance window",
                    job.id
                )));
            }
            admission.commit(requested_end, job.nodes);
            free = free.saturating_sub(job.nodes);
            let mut newly_busy = job.nodes;
            if let (Some(model), Some(state)) = (inputs.shared.as_ref(), self.state.shared.as_mut())
            {
                let set = if on_site {
                    decision.site_starts[i].0
                } else {
                    0
                };
                if on_site
                    && !inputs
                        .site
                        .as_ref()
                        .is_some_and(|s| s.usable(start.job).contains(&set))
                {
                    return Err(CoreError::decision(format!(
                        "job {} may not start in partition {set} (not a candidate that accepts it)",
                        job.id
                    )));
                }
                let allocation = &decision.allocations[i];
                check_allocation(model, set, start.job, job.id, allocation)?;
                let into = (self.state.announced.iter()).find(|w| {
                    w.start < requested_end && {
                        let down = window_nodes(model, w);
                        (allocation.nodes.iter()).any(|n| down.binary_search(n).is_ok())
                    }
                });
                if into.is_some() {
                    return Err(CoreError::decision(format!(
                        "job {} would run into an announced maintenance window on its nodes",
                        job.id
                    )));
                }
                newly_busy = state.start(model, start.job, allocation.clone())?;
                if on_site {
                    self.log.record_partition(start.job, set, inputs.jobs.len());
                }
                self.log.record_allocation(start.job, allocation);
            }
            if let (Some(site), Some(state)) = (inputs.site.as_ref(), self.state.site.as_mut()) {
                let (p, end) = decision.site_starts[i];
                let begin = i.checked_sub(1).map_or(0, |b| decision.site_starts[b].1);
                let takes = (decision.takes)
                    .get(begin as usize..end as usize)
                    .ok_or_else(|| CoreError::decision("a start's nodes are out of range"))?;
                check_site_start(site, state, start.job, job.id, job.nodes, p, takes)?;
                // (the nodes it takes must stay up until it ends, by its request)
                if (takes.iter())
                    .any(|&(a, _)| ahead.get(a as usize).is_some_and(|&t| requested_end > t))
                {
                    return Err(CoreError::decision(format!(
                        "job {} would run into maintenance announced on its nodes",
                        job.id
                    )));
                }
                let component = site.job_key(start.job).1;
                state.take(start.job, takes, requested_end);
                self.log.record_takes(start.job, now, takes);
                if !inputs.atom_power.is_empty() {
                    // (each atom's nodes draw their group's power)
                    let atom_watts = |&(a, n): &(u32, u32)| {
                        f64::from(n) * inputs.atom_power[a as usize].computing_w
                    };
                    site_watts = Some(takes.iter().map(atom_watts).sum());
                }
                state.dequeue(start.job, component);
                state.changed(Some(component));
                self.log.record_partition(start.job, p, inputs.jobs.len());
            }
            let killed = inputs.overrun == Overrun::Kill && job.run_time > job.requested_time;
            let end = now
                + if killed {
                    job.requested_time
                } else {
                    job.run_time
                };
            self.log
                .record_start(start.job, now, end, start.kind, killed);
            self.state.metrics.on_start(now - job.submit, job.run_time);
            self.state.insert_running(Running {
                requested_end,
                job: start.job,
                nodes: job.nodes,
                start: now,
            });
            self.state.completions.push(Completion {
                end,
                job: start.job,
                nodes: job.nodes,
                requested_end,
            });
            self.state.busy += newly_busy;
            let mut watts = site_watts
                .take()
                .or_else(|| (inputs.machine.power).map(|m| f64::from(job.nodes) * m.computing_w));
            if let Some(nodes) = self.state.nodes.as_mut() {
                let k = job.nodes as usize;
                let these = placed.get(offset..offset + k).ok_or_else(|| {
                    CoreError::decision(format!("no idle nodes left for job {}", job.id))
                })?;
                let group = |i: u32| nodes.as_slice().get(i as usize).map(|n| n.group);
                if these.iter().any(|&i| group(i) != group(these[0])) {
                    return Err(CoreError::decision(format!(
                        "job {} would run on nodes of several groups",
                        job.id
                    )));
                }
                nodes.allocate(start.job, these, now)?;
                watts = Some(these.iter().map(|&i| nodes.model_of(i).computing_w).sum());
                offset += k;
            }
            if let Some(watts) = watts {
                // the computing energy of this attempt (its nodes' groups' power)
                self.log.record_energy(start.job, watts * (end - now));
            }
        }
        // `scratch` holds the started positions, sorted and distinct (checked above).
        self.state.queue.remove_sorted(&self.scratch);
        Ok(())
    }
}

/// Checks a start on a site: partition `p` is one where job `index` (id `id`) may start, and
/// `takes` are `nodes` free nodes of its atoms.
fn check_site_start(
    site: &Site,
    state: &SiteState,
    index: u32,
    id: i64,
    nodes: u32,
    p: u32,
    takes: &[(u32, u32)],
) -> Result<()> {
    if !site.usable(index).contains(&p) {
        return Err(CoreError::decision(format!(
            "job {id} may not start in partition {p} (not a candidate that accepts it)"
        )));
    }
    let mut total = 0u64;
    for &(atom, count) in takes {
        if atom as usize >= site.atoms() || !site.contains(p, atom) {
            return Err(CoreError::decision(format!(
                "job {id} takes nodes outside partition {:?}",
                site.partition(p).spec.name
            )));
        }
        if count > state.free()[atom as usize] {
            return Err(CoreError::decision(format!(
                "job {id} takes {count} nodes of a set with {} free",
                state.free()[atom as usize]
            )));
        }
        total += u64::from(count);
    }
    if total != u64::from(nodes)
        || (takes.iter().enumerate()).any(|(i, a)| takes[..i].iter().any(|b| b.0 == a.0))
    {
        return Err(CoreError::decision(format!(
            "job {id} needs {nodes} nodes, its start names {total} (each set of nodes once)"
        )));
    }
    Ok(())
}
