//! Node power states (SNF-ICON Definition 1), for runs whose nodes have identities: under a
//! power manager, or for a policy that switches nodes itself.
//!
//! Jobs start only on idle nodes: the ones a decision names, else the lowest-numbered. Switching
//! on ends idle; switching off ends asleep; a node asked to wake while switching off wakes as
//! soon as it is asleep. Transitions take the platform's mean latencies, or Normal(mean, std)
//! draws clipped at 0 when sampled (one generator, one draw per transition in the order they
//! are requested). Policies see when a transition began (`since`), never when it will end: a
//! real power manager knows only the mean. Nodes taken by a downtime window are `Down`: neither
//! computing nor sleeping, drawing nothing.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use crate::error::{CoreError, Result};
use crate::model::PowerModel;

/// How many node states there are (the length of a counts array).
pub const STATES: usize = 6;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum NodeState {
    Idle = 0,
    Computing = 1,
    SwitchingOn = 2,
    SwitchingOff = 3,
    Sleeping = 4,
    /// Taken by a downtime window.
    Down = 5,
}

impl NodeState {
    pub const ALL: [NodeState; STATES] = [
        NodeState::Idle,
        NodeState::Computing,
        NodeState::SwitchingOn,
        NodeState::SwitchingOff,
        NodeState::Sleeping,
        NodeState::Down,
    ];

    pub fn name(self) -> &'static str {
        match self {
            NodeState::Idle => "idle",
            NodeState::Computing => "computing",
            NodeState::SwitchingOn => "switching_on",
            NodeState::SwitchingOff => "switching_off",
            NodeState::Sleeping => "sleeping",
            NodeState::Down => "down",
        }
    }
}

/// One node as policies see it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Node {
    pub state: NodeState,
    /// When the node entered its current state (the start of a transition in progress).
    pub since: f64,
    /// The job it runs when computing (`NO_JOB` otherwise).
    pub job: u32,
    /// Asked to wake while switching off: switches on as soon as it is asleep.
    pub wake_when_asleep: bool,
    /// Down: when its window ends (announced with the window), NaN otherwise.
    pub back: f64,
    /// Down: it comes back asleep (else idle).
    pub back_asleep: bool,
    /// Its node group (index into the platform's groups; 0 on a homogeneous machine).
    pub group: u16,
}

pub const NO_JOB: u32 = u32::MAX;

#[derive(Debug, Clone, Copy, PartialEq)]
struct Transition {
    until: f64,
    node: u32,
}

impl Eq for Transition {}

impl Ord for Transition {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .until
            .total_cmp(&self.until)
            .then(other.node.cmp(&self.node))
    }
}

impl PartialOrd for Transition {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The machine's nodes and their power states.
#[derive(Debug, Clone)]
pub struct Nodes {
    nodes: Vec<Node>,
    counts: [u32; STATES],
    /// Node counts per state in each group.
    group_counts: Vec<[u32; STATES]>,
    transitions: BinaryHeap<Transition>,
    /// The power model of each group.
    models: Vec<PowerModel>,
    sampler: Option<Pcg64Mcg>,
    /// Nodes whose state or job changed since the journal was last taken (a power manager
    /// updates its per-node bookkeeping from it instead of scanning every node).
    changed: Vec<u32>,
}

impl Nodes {
    /// `count` nodes, all idle and awake since `now`.
    pub fn new(count: u32, model: PowerModel, sample_seed: Option<u64>, now: f64) -> Self {
        Nodes::with_groups(&[(count, model)], sample_seed, now)
    }

    /// Groups of (count, model) nodes, numbered in order, all idle and awake since `now`.
    pub fn with_groups(groups: &[(u32, PowerModel)], sample_seed: Option<u64>, now: f64) -> Self {
        let mut nodes = Vec::new();
        let mut group_counts = Vec::with_capacity(groups.len());
        for (g, &(count, _)) in groups.iter().enumerate() {
            let idle = Node {
                state: NodeState::Idle,
                since: now,
                job: NO_JOB,
                wake_when_asleep: false,
                back: f64::NAN,
                back_asleep: false,
                group: g as u16,
            };
            nodes.extend(std::iter::repeat_n(idle, count as usize));
            let mut c = [0; STATES];
            c[NodeState::Idle as usize] = count;
            group_counts.push(c);
        }
        let mut counts = [0; STATES];
        counts[NodeState::Idle as usize] = nodes.len() as u32;
        Nodes {
            nodes,
            counts,
            group_counts,
            transitions: BinaryHeap::new(),
            models: groups.iter().map(|g| g.1).collect(),
            sampler: sample_seed.map(Pcg64Mcg::seed_from_u64),
            changed: Vec::new(),
        }
    }

    /// Nodes in the given states with transitions at their mean latency (a look-ahead's
    /// belief: it knows when each transition began, not when it will end; an overdue one ends
    /// at `now`).
    pub fn from_states(nodes: Vec<Node>, models: Vec<PowerModel>, now: f64) -> Self {
        let mut counts = [0; STATES];
        let mut group_counts = vec![[0; STATES]; models.len()];
        let mut transitions = BinaryHeap::new();
        for (i, n) in nodes.iter().enumerate() {
            counts[n.state as usize] += 1;
            group_counts[n.group as usize][n.state as usize] += 1;
            let model = &models[n.group as usize];
            let mean = match n.state {
                NodeState::SwitchingOn => model.switch_on_s,
                NodeState::SwitchingOff => model.switch_off_s,
                _ => continue,
            };
            transitions.push(Transition {
                until: (n.since + mean).max(now),
                node: i as u32,
            });
        }
        Nodes {
            nodes,
            counts,
            group_counts,
            transitions,
            models,
            sampler: None,
            changed: Vec::new(),
        }
    }

    pub fn as_slice(&self) -> &[Node] {
        &self.nodes
    }

    /// The power model of each group.
    pub fn models(&self) -> &[PowerModel] {
        &self.models
    }

    pub fn count(&self, state: NodeState) -> u32 {
        self.counts[state as usize]
    }

    pub fn counts(&self) -> [u32; STATES] {
        self.counts
    }

    /// Node counts per state in each group.
    pub fn group_counts(&self) -> &[[u32; STATES]] {
        &self.group_counts
    }

    /// Takes the journal of nodes whose state or job changed (in order, possibly repeated);
    /// give the buffer back with [`Nodes::return_changed`].
    pub fn take_changed(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.changed)
    }

    /// Empties the journal of node changes (when nobody reads it).
    pub fn clear_changed(&mut self) {
        self.changed.clear();
    }

    /// Gives back a buffer taken by [`Nodes::take_changed`], emptied (keeps its capacity when
    /// nothing was recorded in between).
    pub fn return_changed(&mut self, mut buffer: Vec<u32>) {
        if self.changed.is_empty() {
            buffer.clear();
            self.changed = buffer;
        }
    }

    /// Power drawn now by the nodes in each state (W); nodes down draw nothing.
    pub fn power_by_state(&self) -> [f64; STATES] {
        let mut out = [0.0; STATES];
        for (counts, m) in self.group_counts.iter().zip(&self.models) {
            let per_state = m.per_state_w();
            for s in 0..STATES {
                out[s] += f64::from(counts[s]) * per_state[s];
            }
        }
        out
    }

    /// Power drawn by all nodes now (W).
    pub fn power_w(&self) -> f64 {
        self.power_by_state().iter().sum()
    }

    /// The power model of node `i`.
    pub fn model_of(&self, i: u32) -> &PowerModel {
        &self.models[self.nodes[i as usize].group as usize]
    }

    fn set(&mut self, node: u32, state: NodeState, now: f64) {
        let n = &mut self.nodes[node as usize];
        self.counts[n.state as usize] -= 1;
        self.counts[state as usize] += 1;
        let group = &mut self.group_counts[n.group as usize];
        group[n.state as usize] -= 1;
        group[state as usize] += 1;
        n.state = state;
        n.since = now;
        self.changed.push(node);
    }

    /// Gives `nodes` (idle, distinct) to `job`.
    pub fn allocate(&mut self, job: u32, nodes: &[u32], now: f64) -> Result<()> {
        for &i in nodes {
            match self.nodes.get(i as usize).map(|n| n.state) {
                Some(NodeState::Idle) => {}
                Some(other) => {
                    return Err(CoreError::decision(format!(
                        "node {i} cannot run a job: it is {}",
                        other.name()
                    )))
                }
                None => return Err(CoreError::decision(format!("no node {i}"))),
            }
            self.set(i, NodeState::Computing, now);
            self.nodes[i as usize].job = job;
        }
        Ok(())
    }

    /// Gives `count` idle nodes (lowest numbers first) to `job`.
    pub fn allocate_lowest(&mut self, job: u32, count: u32, now: f64) {
        let mut left = count;
        for i in 0..self.nodes.len() {
            if left == 0 {
                break;
            }
            if self.nodes[i].state == NodeState::Idle {
                self.set(i as u32, NodeState::Computing, now);
                self.nodes[i].job = job;
                left -= 1;
            }
        }
        debug_assert_eq!(left, 0, "the engine checked the job fits");
    }

    /// Returns the nodes of `job` to idle.
    pub fn release(&mut self, job: u32, now: f64) {
        for i in 0..self.nodes.len() {
            if self.nodes[i].job == job {
                self.nodes[i].job = NO_JOB;
                self.set(i as u32, NodeState::Idle, now);
            }
        }
    }

    fn latency(&mut self, mean: f64, std: f64) -> f64 {
        match &mut self.sampler {
            None => mean,
            Some(rng) => (mean + std * standard_normal(rng)).max(0.0),
        }
    }

    pub fn power_on(&mut self, node: u32, now: f64) -> Result<()> {
        let state = self.nodes.get(node as usize).map(|n| n.state);
        match state {
            Some(NodeState::Sleeping) => {
                let m = *self.model_of(node);
                let until = now + self.latency(m.switch_on_s, m.switch_on_std_s);
                self.set(node, NodeState::SwitchingOn, now);
                self.transitions.push(Transition { until, node });
                Ok(())
            }
            Some(NodeState::SwitchingOff) => {
                self.nodes[node as usize].wake_when_asleep = true;
                Ok(())
            }
            Some(NodeState::SwitchingOn) => Ok(()), // already waking
            Some(other) => Err(CoreError::decision(format!(
                "cannot switch on node {node}: it is {}",
                other.name()
            ))),
            None => Err(CoreError::decision(format!("no node {node}"))),
        }
    }

    pub fn power_off(&mut self, node: u32, now: f64) -> Result<()> {
        match self.nodes.get(node as usize).map(|n| n.state) {
            Some(NodeState::Idle) => {
                let m = *self.model_of(node);
                let until = now + self.latency(m.switch_off_s, m.switch_off_std_s);
                self.set(node, NodeState::SwitchingOff, now);
                self.transitions.push(Transition { until, node });
                Ok(())
            }
            Some(other) => Err(CoreError::decision(format!(
                "cannot switch off node {node}: it is {}",
                other.name()
            ))),
            None => Err(CoreError::decision(format!("no node {node}"))),
        }
    }

    /// Takes a node that runs no job down for maintenance until `back` (a transition in
    /// progress is abandoned); it will come back asleep or idle.
    pub fn take_down(&mut self, node: u32, now: f64, back: f64, asleep: bool) {
        let n = self.nodes[node as usize];
        debug_assert!(
            n.job == NO_JOB,
            "jobs on a node are killed before it goes down"
        );
        if matches!(n.state, NodeState::SwitchingOn | NodeState::SwitchingOff) {
            self.transitions.retain(|t| t.node != node);
        }
        self.set(node, NodeState::Down, now);
        let n = &mut self.nodes[node as usize];
        n.wake_when_asleep = false;
        n.back = back;
        n.back_asleep = asleep;
    }

    /// Brings a node back from maintenance, in the state its window said.
    pub fn bring_up(&mut self, node: u32, now: f64) {
        let n = self.nodes[node as usize];
        debug_assert_eq!(n.state, NodeState::Down);
        let state = if n.back_asleep {
            NodeState::Sleeping
        } else {
            NodeState::Idle
        };
        self.set(node, state, now);
        let n = &mut self.nodes[node as usize];
        n.back = f64::NAN;
        n.back_asleep = false;
    }

    /// When the next transition ends.
    pub fn next_transition(&self) -> Option<f64> {
        self.transitions.peek().map(|t| t.until)
    }

    /// Ends the transitions due at `t`; returns whether any did.
    pub fn complete_transitions(&mut self, t: f64) -> bool {
        let mut any = false;
        while let Some(&tr) = self.transitions.peek() {
            if tr.until > t {
                break;
            }
            self.transitions.pop();
            any = true;
            let node = tr.node;
            match self.nodes[node as usize].state {
                NodeState::SwitchingOn => self.set(node, NodeState::Idle, t),
                NodeState::SwitchingOff => {
                    self.set(node, NodeState::Sleeping, t);
                    if std::mem::take(&mut self.nodes[node as usize].wake_when_asleep) {
                        self.power_on(node, t).expect("a sleeping node can wake");
                    }
                }
                _ => unreachable!("transitions end only nodes in transition"),
            }
        }
        any
    }
}

/// A standard normal draw (Box-Muller on two uniform draws in (0, 1]).
fn standard_normal(rng: &mut Pcg64Mcg) -> f64 {
    let uniform = |rng: &mut Pcg64Mcg| ((rng.next_u64() >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
    let (u1, u2) = (uniform(rng), uniform(rng));
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}
