//! The honest look-ahead model: an engine built only from what a scheduler knows at a decision.
//!
//! Built from a policy's [`View`], never from the real job table's future. By default waiting
//! jobs run for their requested time, running jobs end at their estimated end
//! `max(start + requested, now)` and no job arrives; a [`Scenario`] replaces these with sampled
//! run times, ends and arrivals (drawn by the caller from what was observable before `now`).
//! Scheduled maintenance is known only once announced, outages not at all (a window already in
//! progress is known, with its end). The scheduler inside still plans on requested times.
//! Everything else is the engine itself, so look-ahead obeys exactly the rules of the replay.

use std::sync::Arc;

use crate::engine::core::Engine;
use crate::engine::inputs::Inputs;
use crate::engine::power::{NodeState, Nodes, NO_JOB};
use crate::engine::record::RunLog;
use crate::engine::site::SiteState;
use crate::engine::state::{Completion, Running, SimState};
use crate::engine::view::View;
use crate::error::{CoreError, Result};
use crate::model::{
    Calendar, Downtime, DowntimeKind, Job, JobTable, Machine, Overrun, PowerModel, SharedNodes,
    Site,
};

/// An announced window is already known: its announcement lies far in the past.
const KNOWN_LONG_AGO: f64 = 1e18;

/// One sampled future of a decision point: what the deterministic belief assumes, replaced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scenario {
    /// Run time of each waiting job, in the view's queue order.
    pub queued_run_time: Vec<f64>,
    /// When each running job ends (at or after now), in the view's running order.
    pub running_end: Vec<f64>,
    /// Future submissions (submit after now, in submit order); their ids are negative.
    pub arrivals: Vec<Job>,
}

/// A look-ahead engine and the way back from its job indices to the real ones.
pub struct Belief {
    pub engine: Engine,
    /// Real job index of each belief job.
    pub real_index: Vec<u32>,
}

impl Belief {
    /// Builds the deterministic look-ahead engine at the decision point `view` describes.
    pub fn from_view(view: &View) -> Result<Belief> {
        Belief::build(view, None)
    }

    /// Builds the look-ahead engine of one sampled `scenario` of the decision point `view`.
    pub fn from_scenario(view: &View, scenario: &Scenario) -> Result<Belief> {
        Belief::build(view, Some(scenario))
    }

    fn build(view: &View, scenario: Option<&Scenario>) -> Result<Belief> {
        let now = view.now;
        // Waiting and running jobs, in replay order (the job table's requirement).
        let mut known: Vec<u32> = view
            .queue
            .iter()
            .chain(view.running.iter().map(|r| &r.job))
            .copied()
            .collect();
        known.sort_unstable();
        let belief_of = |real: u32| known.binary_search(&real).expect("known job") as u32;
        let mut jobs: Vec<Job> = known
            .iter()
            .map(|&real| {
                let job = view.jobs.get(real);
                Job {
                    id: job.id,
                    submit: job.submit,
                    // The estimate is all the scheduler has (a scenario replaces it below).
                    run_time: job.requested_time,
                    requested_time: job.requested_time,
                    nodes: job.nodes,
                }
            })
            .collect();
        if let Some(scenario) = scenario {
            for (&real, &run_time) in view.queue.iter().zip(&scenario.queued_run_time) {
                jobs[belief_of(real) as usize].run_time = run_time;
            }
            jobs.extend(scenario.arrivals.iter().copied());
        }
        let mut windows: Vec<Downtime> = view
            .announced
            .iter()
            .copied()
            .filter(|w| w.start > now)
            .collect();
        match (view.site, view.shared) {
            // on partitions: the windows in progress themselves (their nodes are not a count)
            (Some(site), _) => windows.extend(site.state.active().iter().map(|w| Downtime {
                start: now,
                kind: DowntimeKind::Unscheduled,
                ..*w
            })),
            // on shared nodes: the calendar's windows under way, which name their nodes
            (None, Some(shared)) => {
                windows.extend(shared.active.iter().map(|&(w, _, _)| Downtime {
                    start: now,
                    kind: DowntimeKind::Unscheduled,
                    ..shared.downtime[w as usize]
                }))
            }
            (None, None) => {
                windows.extend(view.down_windows.iter().map(|&(end, nodes)| Downtime {
                    start: now,
                    end,
                    kind: DowntimeKind::Unscheduled,
                    nodes: Some(nodes),
                    back_asleep: false,
                    partition: None,
                    range: None,
                }))
            }
        }
        let calendar = Calendar::new(windows, KNOWN_LONG_AGO)?;
        let mut inputs = Inputs::new(
            JobTable::new(jobs)?,
            Machine {
                nodes: view.machine_nodes,
                power: view.power.copied(),
            },
            calendar,
            Overrun::Continue,
        )?;
        if let Some(manager) = view.manager {
            // The power manager is part of the forward model (transitions at their mean).
            inputs = inputs.with_layer(manager.spec(), None)?;
        } else if !view.nodes.is_empty() {
            inputs = inputs.with_power_management(None)?;
        }
        // (with shared nodes the site's partitions are the node sets: no atom counts)
        if let Some(site) = view
            .site
            .map(|s| s.model)
            .or(view.shared.and_then(|s| s.site))
        {
            inputs = site_inputs(inputs, site, &known, scenario)?;
        }
        if let Some(shared) = view.shared {
            inputs = inputs.with_shared_nodes(shared_inputs(shared.model, &known, scenario)?)?;
        }
        if !view.ranks.is_empty() {
            // the outside order as it stands now (arrivals have none: FCFS behind)
            inputs.ranks = known.iter().map(|&real| view.rank(real)).collect();
        }
        let mut state = SimState {
            now,
            ..SimState::default()
        };
        state.next_submit = known.len() as u32; // no arrivals
        state.next_boundary = inputs.boundaries_through(now);
        for (i, w) in inputs.calendar.windows().iter().enumerate() {
            if w.start <= now {
                state
                    .active
                    .push((i as u32, w.end, w.nodes_down(view.machine_nodes)));
            } else if w.kind == DowntimeKind::Scheduled {
                state.announced.push(*w);
            }
        }
        for &real in view.queue {
            state.queue.push(belief_of(real));
        }
        if let Some(shared) = view.shared {
            // each node's free resources and each running job's allocation, as they stand
            let nodes = shared.state.renumbered(&known);
            state.busy = nodes.busy_nodes();
            state.shared = Some(nodes);
        }
        for (i, r) in view.running.iter().enumerate() {
            let job = belief_of(r.job);
            state.insert_running(Running { job, ..*r });
            let end = scenario
                .and_then(|s| s.running_end.get(i).copied())
                .unwrap_or(r.requested_end)
                .max(now);
            state.completions.push(Completion {
                end,
                job,
                nodes: r.nodes,
                requested_end: r.requested_end,
            });
            if view.shared.is_none() {
                state.busy += r.nodes;
            }
        }
        if let (Some(model), false) = (view.power, view.nodes.is_empty()) {
            power_state(view, &mut state, *model, &belief_of, &inputs.calendar);
        }
        if let (Some(site), Some(belief_site)) = (view.site, inputs.site.as_ref()) {
            // the partitions' nodes as they are: each running job's, each waiting job's turn
            let mut nodes = SiteState::new(belief_site, inputs.jobs.len());
            for r in view.running {
                nodes.take(
                    belief_of(r.job),
                    site.state.holdings(r.job),
                    r.requested_end,
                );
            }
            for w in inputs.calendar.windows().iter().filter(|w| w.start <= now) {
                nodes.take_down(&belief_site.window_atoms(w), *w);
            }
            for &real in view.queue {
                let job = belief_of(real);
                let held = inputs.jobs.get(job);
                nodes.enqueue(
                    job,
                    belief_site.job_key(job).1,
                    held.nodes,
                    held.requested_time,
                );
            }
            state.site = Some(nodes);
        }
        let mut engine = Engine::from_parts(Arc::new(inputs), state, RunLog::counters_only());
        engine.refresh_down();
        Ok(Belief {
            engine,
            real_index: known,
        })
    }
}

/// Node power states and the power manager in the look-ahead, with job indices of the belief;
/// nodes down belong to the belief's windows in progress (matched by end).
fn power_state(
    view: &View,
    state: &mut SimState,
    model: PowerModel,
    belief_of: &dyn Fn(u32) -> u32,
    calendar: &Calendar,
) {
    let nodes: Vec<_> = view
        .nodes
        .iter()
        .map(|n| {
            let mut n = *n;
            if n.job != NO_JOB {
                n.job = belief_of(n.job);
            }
            n
        })
        .collect();
    let mut assigned = vec![false; nodes.len()];
    for (i, w) in calendar.windows().iter().enumerate() {
        if w.start > view.now {
            continue;
        }
        let want = w.nodes_down(view.machine_nodes) as usize;
        let ids: Vec<u32> = (0..nodes.len())
            .filter(|&k| {
                nodes[k].state == NodeState::Down && nodes[k].back == w.end && !assigned[k]
            })
            .take(want)
            .map(|k| k as u32)
            .collect();
        for &k in &ids {
            assigned[k as usize] = true;
        }
        state.taken_down.push((i as u32, ids));
    }
    let models = if view.models.is_empty() {
        vec![model]
    } else {
        view.models.to_vec()
    };
    state.nodes = Some(Nodes::from_states(nodes, models, view.now));
    if let Some(manager) = view.manager {
        // Jobs that ended at this instant are not in the belief: any index other than NO_JOB
        // still says "its nodes were computing".
        let ended = NO_JOB - 1;
        state.manager = Some(manager.for_belief(&|j| {
            if view.running.iter().any(|r| r.job == j) {
                belief_of(j)
            } else {
                ended
            }
        }));
        // The real engine prepared this instant: the look-ahead acts on it first.
        state.pending_act = true;
    }
}

/// The belief's shared nodes: the same nodes and node sets, each known job with its request
/// (the jobs of a scenario's arrivals, whose requests are not known, are refused).
fn shared_inputs(
    model: &SharedNodes,
    known: &[u32],
    scenario: Option<&Scenario>,
) -> Result<SharedNodes> {
    if scenario.is_some_and(|s| !s.arrivals.is_empty()) {
        return Err(CoreError::input(
            "a look-ahead with future arrivals on shared nodes: not yet (their requests are \
             unknown)",
        ));
    }
    let requests = known
        .iter()
        .map(|&real| model.requests[real as usize].clone())
        .collect();
    SharedNodes::new(model.resources.clone(), requests, model.sets.clone())
}

/// The belief's site: the same partitions, each known job with its candidates (the jobs of a
/// scenario's arrivals, whose partitions are not known, are refused).
fn site_inputs(
    inputs: Inputs,
    site: &Site,
    known: &[u32],
    scenario: Option<&Scenario>,
) -> Result<Inputs> {
    if scenario.is_some_and(|s| !s.arrivals.is_empty()) {
        return Err(CoreError::input(
            "a look-ahead with future arrivals on partitions: not yet (their partitions are unknown)",
        ));
    }
    let partitions = (site.partitions().iter()).map(|p| p.spec.clone()).collect();
    let mut offsets = Vec::with_capacity(known.len() + 1);
    let mut candidates = Vec::new();
    offsets.push(0);
    for &real in known {
        candidates.extend_from_slice(site.candidates(real));
        offsets.push(candidates.len() as u32);
    }
    let cuts = site.cuts().to_vec();
    inputs.with_site_cut(partitions, site.over_limits, offsets, candidates, cuts)
}
