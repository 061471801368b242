//! Downtime in the step loop: windows announced, begun and ended at their boundaries, the
//! nodes they take down (with identities: which ones) and the jobs killed for capacity.

use std::sync::Arc;

use crate::engine::core::Engine;
use crate::engine::inputs::BoundaryKind;
use crate::engine::power::NodeState;
use crate::engine::state::Running;
use crate::engine::utilization::nodes_down;
use crate::model::{Downtime, DowntimeKind, SharedNodes};

impl Engine {
    pub(super) fn apply_boundaries(&mut self, t: f64) {
        let due = |e: &Self| {
            e.inputs
                .boundaries
                .get(e.state.next_boundary as usize)
                .is_some_and(|b| b.time <= t)
        };
        if !due(self) {
            return; // the common case: no Arc clone on the hot path
        }
        let inputs = Arc::clone(&self.inputs);
        while let Some(b) = inputs.boundaries.get(self.state.next_boundary as usize) {
            if b.time > t {
                break;
            }
            self.state.next_boundary += 1;
            if let Some(state) = self.state.site.as_mut() {
                state.changed(None); // announcements and windows change what may start
            }
            let window = inputs.calendar.windows()[b.window as usize];
            let nodes_down = window.nodes_down(inputs.machine.nodes);
            let s = &mut self.state;
            match b.kind {
                BoundaryKind::Announce => s.announced.push(window),
                BoundaryKind::Begin => {
                    if window.kind == DowntimeKind::Scheduled {
                        if let Some(pos) = s.announced.iter().position(|w| *w == window) {
                            s.announced.remove(pos);
                        }
                    }
                    s.active.push((b.window, window.end, nodes_down));
                    if let Some(model) = inputs.shared.as_ref() {
                        self.kill_on_shared_nodes(t, model, &window);
                        self.refresh_down();
                        continue;
                    }
                    if let Some(site) = inputs.site.as_ref() {
                        let atoms = site.window_atoms(&window);
                        self.kill_on_atoms(t, &atoms);
                        if let Some(state) = self.state.site.as_mut() {
                            state.take_down(&atoms, window);
                        }
                        self.refresh_down();
                        continue;
                    }
                    self.refresh_down();
                    self.kill_for_capacity(t);
                    self.take_nodes_down(b.window, &window, t);
                }
                BoundaryKind::End => {
                    if let Some(pos) = s.active.iter().position(|a| a.0 == b.window) {
                        s.active.remove(pos);
                    }
                    if let (Some(site), Some(state)) = (inputs.site.as_ref(), s.site.as_mut()) {
                        state.bring_up(&site.window_atoms(&window), site.atom_sizes(), &window);
                    }
                    if let (Some(model), Some(shared)) = (inputs.shared.as_ref(), s.shared.as_mut())
                    {
                        shared.bring_up(model, &window);
                    }
                    self.bring_nodes_up(b.window, t);
                    self.refresh_down();
                }
            }
        }
    }

    pub(crate) fn refresh_down(&mut self) {
        let n = self.inputs.machine.nodes;
        let s = &mut self.state;
        let total: u64 = s.active.iter().map(|a| u64::from(a.2)).sum();
        s.down = match (self.inputs.site.as_ref(), s.site.as_ref()) {
            // on shared nodes: the nodes down in some window
            _ if s.shared.is_some() => {
                let model = self.inputs.shared.as_ref().expect("shared nodes' model");
                s.shared
                    .as_ref()
                    .map_or(0, |shared| shared.nodes_down(model))
            }
            // on partitions: the nodes of the atoms down (all nodes under a whole-machine
            // window, those of no partition too)
            (Some(site), Some(state)) => {
                let whole = s.active.iter().any(|a| {
                    let w = &self.inputs.calendar.windows()[a.0 as usize];
                    w.partition.is_none() && w.range.is_none()
                });
                if whole {
                    n
                } else {
                    (0..site.atoms() as u32)
                        .filter(|&a| state.down(a).is_some())
                        .map(|a| site.atom_sizes()[a as usize])
                        .sum()
                }
            }
            _ => nodes_down(n, total),
        };
        s.down_windows.clear();
        s.down_windows.extend(s.active.iter().map(|a| (a.1, a.2)));
        s.down_windows.sort_by(|a, b| a.0.total_cmp(&b.0));
    }

    /// At a window's start, kills running jobs until the remaining nodes hold them: all of them
    /// for a whole-machine window, else the most recently started first. Killed jobs go back to
    /// the front of the queue, in FCFS order, with their original submit time.
    pub(super) fn kill_for_capacity(&mut self, t: f64) {
        let capacity = self.inputs.machine.nodes - self.state.down;
        if self.state.busy <= capacity {
            return;
        }
        let mut victims: Vec<Running> = self.state.running.clone();
        victims.sort_by(|a, b| b.start.total_cmp(&a.start).then(b.job.cmp(&a.job)));
        let mut busy = self.state.busy;
        let enough = (victims.iter())
            .take_while(|v| {
                let over = busy > capacity;
                busy -= if over { v.nodes } else { 0 };
                over
            })
            .count();
        self.kill(t, &victims[..enough]);
    }

    /// On partitions, a window's start kills every running job holding nodes of the atoms it
    /// takes down; they go back to the front of the queue as `kill` says, and of their
    /// components' waiting lists.
    pub(super) fn kill_on_atoms(&mut self, t: f64, atoms: &[u32]) {
        let Some(state) = self.state.site.as_ref() else {
            return;
        };
        let victims: Vec<Running> = (self.state.running.iter())
            .filter(|r| (state.holdings(r.job).iter()).any(|&(a, _)| atoms.contains(&a)))
            .copied()
            .collect();
        if victims.is_empty() {
            return;
        }
        let killed = self.kill(t, &victims);
        let inputs = Arc::clone(&self.inputs);
        let (Some(site), jobs) = (inputs.site.as_ref(), &inputs.jobs) else {
            return;
        };
        let back: Vec<(u32, u32, u32, f64)> = (killed.iter())
            .map(|&j| {
                let job = jobs.get(j);
                (j, site.job_key(j).1, job.nodes, job.requested_time)
            })
            .collect();
        if let Some(state) = self.state.site.as_mut() {
            state.requeue(&back);
        }
    }

    /// On shared nodes, a window's start kills every running job holding any of its nodes
    /// (back to the front of the queue as `kill` says), then takes its nodes down.
    fn kill_on_shared_nodes(&mut self, t: f64, model: &SharedNodes, window: &Downtime) {
        let Some(shared) = self.state.shared.as_ref() else {
            return;
        };
        let running: Vec<u32> = self.state.running.iter().map(|r| r.job).collect();
        let holding = shared.holding(model, window, &running);
        let victims: Vec<Running> = (self.state.running.iter())
            .filter(|r| holding.contains(&r.job))
            .copied()
            .collect();
        if !victims.is_empty() {
            self.kill(t, &victims);
        }
        if let Some(shared) = self.state.shared.as_mut() {
            shared.take_down(model, window);
        }
    }

    /// Kills the running jobs `victims` at `t`: their nodes are free (node identities and a
    /// site's counts too), their attempts recorded as lost, and they go back to the front of
    /// the queue in FCFS order with their original submit time. Returns them, sorted.
    fn kill(&mut self, t: f64, victims: &[Running]) -> Vec<u32> {
        let mut killed = Vec::with_capacity(victims.len());
        for v in victims {
            self.state.remove_running(v.job, v.requested_end);
            self.state.busy -= match (self.inputs.shared.as_ref(), self.state.shared.as_mut()) {
                (Some(model), Some(shared)) => shared.end(model, v.job),
                _ => v.nodes,
            };
            if let Some(nodes) = self.state.nodes.as_mut() {
                nodes.release(v.job, t);
            }
            if let Some(site) = self.state.site.as_mut() {
                site.release(v.job, v.requested_end);
            }
            self.log.record_kill(v.job, v.start, t);
            killed.push(v.job);
        }
        self.state.completions.retain(|c| !killed.contains(&c.job));
        killed.sort_unstable();
        self.state.queue.push_front(&killed);
        killed
    }

    /// With node identities, a window's start takes its nodes down: those asleep first, then
    /// switching off, idle, switching on (lowest numbers first); running jobs were killed
    /// before as needed. They come back at its end in the state the calendar says.
    pub(super) fn take_nodes_down(&mut self, window: u32, w: &crate::model::Downtime, t: f64) {
        let machine = self.inputs.machine.nodes;
        let Some(nodes) = self.state.nodes.as_mut() else {
            return;
        };
        let already = nodes.count(NodeState::Down);
        let want = w.nodes_down(machine).min(machine - already) as usize;
        let rank = |state: NodeState| match state {
            NodeState::Sleeping => 0,
            NodeState::SwitchingOff => 1,
            NodeState::Idle => 2,
            NodeState::SwitchingOn => 3,
            NodeState::Computing | NodeState::Down => 4,
        };
        let mut candidates: Vec<(u8, u32)> = nodes
            .as_slice()
            .iter()
            .enumerate()
            .map(|(i, n)| (rank(n.state), i as u32))
            .filter(|&(r, _)| r < 4)
            .collect();
        candidates.sort_unstable();
        let chosen: Vec<u32> = candidates.iter().take(want).map(|&(_, i)| i).collect();
        debug_assert_eq!(chosen.len(), want, "jobs were killed to make room");
        for &i in &chosen {
            nodes.take_down(i, t, w.end, w.back_asleep);
        }
        self.state.taken_down.push((window, chosen));
    }

    pub(super) fn bring_nodes_up(&mut self, window: u32, t: f64) {
        let Some(pos) = self.state.taken_down.iter().position(|d| d.0 == window) else {
            return;
        };
        let (_, chosen) = self.state.taken_down.remove(pos);
        if let Some(nodes) = self.state.nodes.as_mut() {
            for i in chosen {
                nodes.bring_up(i, t);
            }
        }
    }
}
