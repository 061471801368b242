//! The search tree: plain data in an arena, with the two formulas of MARS §III-D.
//!
//! - Selection (Eq. 2): `UCT = Q + c·sqrt(2 ln N / n)`, with `c = c0·(Qmax − Qmin)` over the
//!   values backed up so far in this search.
//! - Return (Eq. 4): `G = (1 − γ)·Σ_i γ^i·R_i` over the rollout's counted states.
//! - Backup (Eq. 5): from the expanded node up to the root's child, `v ← (1 − γ)·R(node) + γ·v`
//!   and `Q(node) ← Q + (v − Q)/n`.

use crate::engine::Engine;
use crate::sched::Decision;

pub const NO_PARENT: u32 = u32::MAX;

pub struct Node {
    pub parent: u32,
    /// Representative action (index in the action set) of the edge into this node.
    pub action: u16,
    /// Jobs the edge into this node starts (job-table indices of the belief), sorted.
    pub outcome: Vec<u32>,
    /// The edge's decision, kept until the node's state is built.
    pub decision: Option<Decision>,
    /// Engine at this node's decision point; dropped once every child has been tried.
    pub state: Option<Engine>,
    pub children: Vec<u32>,
    /// Children not yet visited, in the (shuffled) order they will be tried.
    pub untried: Vec<u32>,
    pub expanded: bool,
    /// No decision is left after this node (the belief runs out of events).
    pub terminal: bool,
    /// Counted depth: edges that started at least one job, from the root.
    pub depth: u32,
    pub visits: u32,
    pub q: f64,
    /// Immediate reward R(s) of this node's state.
    pub reward: f64,
}

impl Node {
    pub fn new(
        parent: u32,
        action: u16,
        outcome: Vec<u32>,
        decision: Option<Decision>,
        depth: u32,
    ) -> Self {
        Node {
            parent,
            action,
            outcome,
            decision,
            state: None,
            children: Vec::new(),
            untried: Vec::new(),
            expanded: false,
            terminal: false,
            depth,
            visits: 0,
            q: 0.0,
            reward: 0.0,
        }
    }
}

/// Eq. 2 for a child visited `visits` times, with value `q`, under a parent visited
/// `parent_visits` times.
#[inline]
pub fn uct(q: f64, visits: u32, parent_visits: u32, c: f64) -> f64 {
    if visits == 0 {
        return f64::INFINITY;
    }
    q + c * (2.0 * f64::from(parent_visits.max(1)).ln() / f64::from(visits)).sqrt()
}

/// Eq. 4: the discounted, normalised return of rewards `rewards` (in order), padded with
/// `pad` for `padding` more counted steps (an episode that ended before the horizon stays in
/// its last state).
pub fn rollout_return(rewards: &[f64], pad: f64, padding: usize, gamma: f64) -> f64 {
    let mut total = 0.0;
    let mut discount = 1.0;
    for &r in rewards {
        total += discount * r;
        discount *= gamma;
    }
    for _ in 0..padding {
        total += discount * pad;
        discount *= gamma;
    }
    (1.0 - gamma) * total
}

/// Eq. 5 from `node` up to (not including) the root; returns the values backed up, from the
/// node upwards (the search widens its exploration scale with them).
pub fn backup(nodes: &mut [Node], mut node: u32, rollout: f64, gamma: f64, seen: &mut Vec<f64>) {
    let mut v = rollout;
    while node != NO_PARENT {
        let n = &mut nodes[node as usize];
        if n.parent == NO_PARENT {
            n.visits += 1; // the root counts visits, its value is never used
            break;
        }
        v = (1.0 - gamma) * n.reward + gamma * v;
        n.visits += 1;
        n.q += (v - n.q) / f64::from(n.visits);
        seen.push(v);
        node = n.parent;
    }
}

/// The child of `node` with the highest UCT score (ties: the earliest child).
pub fn select_child(nodes: &[Node], node: u32, c: f64) -> u32 {
    let parent = &nodes[node as usize];
    let mut best = parent.children[0];
    let mut best_score = f64::NEG_INFINITY;
    for &child in &parent.children {
        let ch = &nodes[child as usize];
        let score = uct(ch.q, ch.visits, parent.visits, c);
        if score > best_score {
            best = child;
            best_score = score;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(parent: u32, reward: f64) -> Node {
        let mut n = Node::new(parent, 0, Vec::new(), None, 0);
        n.reward = reward;
        n
    }

    #[test]
    fn uct_matches_eq_2() {
        // Q = 0.5, n = 4, N = 16, c = 2: 0.5 + 2*sqrt(2 ln 16 / 4)
        let expected = 0.5 + 2.0 * (2.0 * 16f64.ln() / 4.0).sqrt();
        assert!((uct(0.5, 4, 16, 2.0) - expected).abs() < 1e-12);
        assert_eq!(uct(0.9, 0, 16, 2.0), f64::INFINITY);
        assert_eq!(uct(0.9, 3, 16, 0.0), 0.9);
    }

    #[test]
    fn rollout_return_matches_eq_4_with_padding() {
        let g = 0.5;
        // (1 - g) * (1 + g*0.5 + g^2*0.25) = 0.5 * (1 + 0.25 + 0.0625)
        assert!((rollout_return(&[1.0, 0.5, 0.25], 0.0, 0, g) - 0.65625).abs() < 1e-12);
        // padding repeats the last value: (1 - g)(0.8 + g*0.8 + g^2*0.8)
        assert!((rollout_return(&[0.8], 0.8, 2, g) - 0.5 * 0.8 * 1.75).abs() < 1e-12);
        // an infinitely padded constant return tends to the constant
        assert!((rollout_return(&[], 0.3, 5000, 0.99) - 0.3).abs() < 1e-9);
    }

    #[test]
    fn backup_follows_eq_5_on_a_hand_built_path() {
        // root -> a (R = 0.2) -> b (R = 0.6); rollout return 0.4; gamma 0.5.
        let mut nodes = vec![node(NO_PARENT, 0.0), node(0, 0.2), node(1, 0.6)];
        nodes[0].children = vec![1];
        nodes[1].children = vec![2];
        let mut seen = Vec::new();
        backup(&mut nodes, 2, 0.4, 0.5, &mut seen);
        // b: v = 0.5*0.6 + 0.5*0.4 = 0.5; a: v = 0.5*0.2 + 0.5*0.5 = 0.35
        assert!((nodes[2].q - 0.5).abs() < 1e-12);
        assert!((nodes[1].q - 0.35).abs() < 1e-12);
        assert_eq!(
            (nodes[0].visits, nodes[1].visits, nodes[2].visits),
            (1, 1, 1)
        );
        assert_eq!(seen, vec![0.5, 0.35]);
        // A second backup through b averages: b: v = 0.3 + 0.5*0.0 = 0.3, Q = (0.5+0.3)/2
        backup(&mut nodes, 2, 0.0, 0.5, &mut seen);
        assert!((nodes[2].q - 0.4).abs() < 1e-12);
        // a: v = 0.1 + 0.5*0.3 = 0.25, Q = (0.35 + 0.25)/2
        assert!((nodes[1].q - 0.3).abs() < 1e-12);
    }

    #[test]
    fn selection_prefers_unvisited_then_uct() {
        let mut nodes = vec![
            node(NO_PARENT, 0.0),
            node(0, 0.0),
            node(0, 0.0),
            node(0, 0.0),
        ];
        nodes[0].children = vec![1, 2, 3];
        nodes[0].visits = 10;
        (nodes[1].q, nodes[1].visits) = (0.9, 5);
        (nodes[2].q, nodes[2].visits) = (0.5, 5);
        assert_eq!(select_child(&nodes, 0, 1.0), 3); // unvisited first
        (nodes[3].q, nodes[3].visits) = (0.1, 1);
        // c = 0: greedy on Q
        assert_eq!(select_child(&nodes, 0, 0.0), 1);
        // large c: the rarely visited child wins
        assert_eq!(select_child(&nodes, 0, 10.0), 3);
    }
}
