//! Node power states (SNF-ICON Definition 1), for runs whose policy manages power.
//!
//! Nodes are identified (policies switch specific nodes on and off). Jobs start only on idle
//! nodes, the lowest-numbered ones first. Switching on ends idle; switching off ends asleep; a
//! node asked to wake while switching off wakes as soon as it is asleep. Transitions take the
//! platform's mean latencies, or Normal(mean, std) draws clipped at 0 when sampled (one
//! generator, one draw per transition in the order they are requested).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use crate::error::{CoreError, Result};
use crate::model::PowerModel;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum NodeState {
    Idle = 0,
    Computing = 1,
    SwitchingOn = 2,
    SwitchingOff = 3,
    Sleeping = 4,
}

impl NodeState {
    pub const ALL: [NodeState; 5] = [
        NodeState::Idle,
        NodeState::Computing,
        NodeState::SwitchingOn,
        NodeState::SwitchingOff,
        NodeState::Sleeping,
    ];

    pub fn name(self) -> &'static str {
        match self {
            NodeState::Idle => "idle",
            NodeState::Computing => "computing",
            NodeState::SwitchingOn => "switching_on",
            NodeState::SwitchingOff => "switching_off",
            NodeState::Sleeping => "sleeping",
        }
    }
}

/// One node as policies see it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Node {
    pub state: NodeState,
    /// End of the transition in progress (switching on or off), NaN otherwise.
    pub until: f64,
    /// The job it runs when computing (`u32::MAX` otherwise).
    pub job: u32,
    /// Asked to wake while switching off: switches on as soon as it is asleep.
    pub wake_when_asleep: bool,
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
    counts: [u32; 5],
    transitions: BinaryHeap<Transition>,
    model: PowerModel,
    sampler: Option<Pcg64Mcg>,
}

impl Nodes {
    /// `count` nodes, all idle and awake.
    pub fn new(count: u32, model: PowerModel, sample_seed: Option<u64>) -> Self {
        let idle = Node {
            state: NodeState::Idle,
            until: f64::NAN,
            job: NO_JOB,
            wake_when_asleep: false,
        };
        let mut counts = [0; 5];
        counts[NodeState::Idle as usize] = count;
        Nodes {
            nodes: vec![idle; count as usize],
            counts,
            transitions: BinaryHeap::new(),
            model,
            sampler: sample_seed.map(Pcg64Mcg::seed_from_u64),
        }
    }

    pub fn as_slice(&self) -> &[Node] {
        &self.nodes
    }

    pub fn count(&self, state: NodeState) -> u32 {
        self.counts[state as usize]
    }

    pub fn counts(&self) -> [u32; 5] {
        self.counts
    }

    fn set(&mut self, node: u32, state: NodeState) {
        let n = &mut self.nodes[node as usize];
        self.counts[n.state as usize] -= 1;
        self.counts[state as usize] += 1;
        n.state = state;
    }

    /// Gives `count` idle nodes (lowest numbers first) to `job`.
    pub fn allocate(&mut self, job: u32, count: u32) {
        let mut left = count;
        for i in 0..self.nodes.len() {
            if left == 0 {
                break;
            }
            if self.nodes[i].state == NodeState::Idle {
                self.set(i as u32, NodeState::Computing);
                self.nodes[i].job = job;
                left -= 1;
            }
        }
        debug_assert_eq!(left, 0, "the engine checked the job fits");
    }

    /// Returns the nodes of `job` to idle.
    pub fn release(&mut self, job: u32) {
        for i in 0..self.nodes.len() {
            if self.nodes[i].job == job {
                self.nodes[i].job = NO_JOB;
                self.set(i as u32, NodeState::Idle);
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
                let until = now + self.latency(self.model.switch_on_s, self.model.switch_on_std_s);
                self.set(node, NodeState::SwitchingOn);
                self.nodes[node as usize].until = until;
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
                let until =
                    now + self.latency(self.model.switch_off_s, self.model.switch_off_std_s);
                self.set(node, NodeState::SwitchingOff);
                self.nodes[node as usize].until = until;
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
                NodeState::SwitchingOn => {
                    self.set(node, NodeState::Idle);
                    self.nodes[node as usize].until = f64::NAN;
                }
                NodeState::SwitchingOff => {
                    self.set(node, NodeState::Sleeping);
                    self.nodes[node as usize].until = f64::NAN;
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
