//! Random machines for the tests that compare the plans on classes with the plans node by node.

use crate::engine::power::{Node, NodeState, NO_JOB};
use crate::model::PowerModel;
use crate::power::node_index::NodeIndex;

/// A small seeded generator (the tests need no more, and their cases stay put).
pub(crate) struct Lcg(pub u64);

impl Lcg {
    pub fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64) / ((1u64 << 53) as f64)
    }

    pub fn below(&mut self, n: u32) -> u32 {
        ((self.next() * f64::from(n)) as u32).min(n - 1)
    }
}

/// AOBA's powers (idle = switching on: many equal costs) for even `k`, and one with none equal.
pub(crate) fn model(k: u32) -> PowerModel {
    PowerModel {
        computing_w: 2100.0,
        idle_w: 600.0,
        sleeping_w: 60.0,
        switching_on_w: if k % 2 == 0 { 600.0 } else { 450.0 },
        switching_off_w: 600.0,
        switch_on_s: 1200.0,
        switch_on_std_s: 0.0,
        switch_off_s: 600.0,
        switch_off_std_s: 0.0,
    }
}

/// A machine at `now`: its nodes, the idle ones' deadlines (NaN for the others), the running
/// jobs' releases and the planners' indexes of them.
pub(crate) struct Machine {
    pub nodes: Vec<Node>,
    pub deadlines: Vec<f64>,
    pub releases: Vec<(u32, f64)>,
    pub index: NodeIndex,
    pub by_deadline: Vec<(f64, u32)>,
}

impl Machine {
    /// `n` nodes in random states, with shared transition starts, equal, expired and no
    /// deadlines, and five running jobs whose ends tie, are past or are unknown. With
    /// `together`, the nodes of a running job mostly started together.
    pub fn random(rng: &mut Lcg, n: usize, now: f64, together: bool) -> Self {
        let mut nodes = Vec::new();
        let mut deadlines = vec![f64::NAN; n];
        let sinces = [now - 100.0, now - 700.0, now - 1500.0, now];
        for deadline in deadlines.iter_mut() {
            let state = match rng.below(6) {
                0 => NodeState::Idle,
                1 | 2 => NodeState::Computing,
                3 => NodeState::SwitchingOn,
                4 => NodeState::SwitchingOff,
                _ => NodeState::Sleeping,
            };
            let job = |rng: &mut Lcg| {
                if state == NodeState::Computing {
                    rng.below(5)
                } else {
                    NO_JOB
                }
            };
            let (since, job) = if together {
                let job = job(rng);
                let since = if state == NodeState::Computing && rng.below(4) > 0 {
                    now - 300.0 * f64::from(job + 1)
                } else {
                    sinces[rng.below(4) as usize]
                };
                (since, job)
            } else {
                let since = sinces[rng.below(4) as usize];
                (since, job(rng))
            };
            if state == NodeState::Idle {
                // equal deadlines, expired ones, no timeout
                *deadline = match rng.below(5) {
                    0 => now - 50.0,
                    1 => f64::INFINITY,
                    k => now + 1000.0 * f64::from(k),
                };
            }
            nodes.push(Node {
                state,
                since,
                job,
                wake_when_asleep: false,
                back: f64::NAN,
                back_asleep: false,
                group: 0,
            });
        }
        // job ends: ties, already past, unknown
        let ends = [
            now + 300.0,
            now + 300.0,
            now + 2000.0,
            f64::INFINITY,
            now + 50.0,
        ];
        let releases = (0..5).map(|j| (j, ends[j as usize])).collect();
        let mut index = NodeIndex::default();
        index.rebuild(&nodes);
        let mut by_deadline: Vec<(f64, u32)> = deadlines
            .iter()
            .enumerate()
            .filter(|(_, d)| !d.is_nan())
            .map(|(i, &d)| (d, i as u32))
            .collect();
        by_deadline.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        Machine {
            nodes,
            deadlines,
            releases,
            index,
            by_deadline,
        }
    }

    /// Running job `j`'s release (unknown jobs never release).
    pub fn release(&self, j: u32) -> f64 {
        self.releases
            .iter()
            .find(|r| r.0 == j)
            .map_or(f64::INFINITY, |r| r.1)
    }
}
