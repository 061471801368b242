//! Which nodes are in which state, kept from the nodes' journal of changes (a batch merged
//! into each sorted list), so that the plans on classes of alike nodes need not scan every
//! node at every call.

use crate::engine::power::{Node, NodeState};

/// A node switching on or off, or down: (state, since, node). Nodes alike for the plan are
/// neighbours in the order of [`other_order`].
pub(crate) type Other = (NodeState, f64, u32);

fn other_order(a: &Other, b: &Other) -> std::cmp::Ordering {
    (a.0 as u8)
        .cmp(&(b.0 as u8))
        .then(a.1.total_cmp(&b.1))
        .then(a.2.cmp(&b.2))
}

/// Which nodes are in which state (idle nodes apart: the manager keeps them by deadline).
#[derive(Debug, Clone, Default)]
pub struct NodeIndex {
    /// The (state, job, since) of each node as last recorded.
    seen: Vec<(NodeState, u32, f64)>,
    /// Sleeping nodes, by number.
    pub(crate) sleeping: Vec<u32>,
    /// Switching on or off, or down, by (state, since, node).
    pub(crate) other: Vec<Other>,
    /// Computing nodes as (job, node), sorted.
    pub(crate) computing: Vec<(u32, u32)>,
}

impl NodeIndex {
    /// Rebuilds the index from every node.
    pub fn rebuild(&mut self, nodes: &[Node]) {
        self.seen.clear();
        self.sleeping.clear();
        self.other.clear();
        self.computing.clear();
        for (i, node) in nodes.iter().enumerate() {
            self.seen.push((node.state, node.job, node.since));
            let i = i as u32;
            match node.state {
                NodeState::Idle => {}
                NodeState::Sleeping => self.sleeping.push(i),
                NodeState::Computing => self.computing.push((node.job, i)),
                state => self.other.push((state, node.since, i)),
            }
        }
        self.computing.sort_unstable();
        self.other.sort_unstable_by(other_order);
    }

    /// Records the new state (and job) of node `i`.
    pub fn update(&mut self, i: u32, node: &Node) {
        let (state, job, since) = self.seen[i as usize];
        if state == node.state && job == node.job && since.to_bits() == node.since.to_bits() {
            return;
        }
        match state {
            NodeState::Idle => {}
            NodeState::Sleeping => remove(&mut self.sleeping, &i),
            NodeState::Computing => remove(&mut self.computing, &(job, i)),
            _ => {
                if let Ok(at) = self
                    .other
                    .binary_search_by(|e| other_order(e, &(state, since, i)))
                {
                    self.other.remove(at);
                }
            }
        }
        self.seen[i as usize] = (node.state, node.job, node.since);
        match node.state {
            NodeState::Idle => {}
            NodeState::Sleeping => insert(&mut self.sleeping, i),
            NodeState::Computing => insert(&mut self.computing, (node.job, i)),
            state => {
                let e = (state, node.since, i);
                if let Err(at) = self.other.binary_search_by(|x| other_order(x, &e)) {
                    self.other.insert(at, e);
                }
            }
        }
    }

    /// Records the new state of the nodes `changed` (listed once or more): node by node for a
    /// few, else as one batch merged into each list (O(n + k log k) for k changes, where a
    /// rebuild would sort every list again; the same lists: each is sorted on a unique key).
    pub fn update_many(&mut self, changed: &[u32], nodes: &[Node]) {
        if changed.len() <= 32 || self.seen.len() != nodes.len() {
            for &i in changed {
                self.update(i, &nodes[i as usize]);
            }
            return;
        }
        let mut moved: Vec<u32> = changed.to_vec();
        moved.sort_unstable();
        moved.dedup();
        let (mut gone, mut new) = (Lists::default(), Lists::default());
        for &i in &moved {
            let node = &nodes[i as usize];
            let (state, job, since) = self.seen[i as usize];
            if state == node.state && job == node.job && since.to_bits() == node.since.to_bits() {
                continue;
            }
            gone.add(i, state, job, since);
            new.add(i, node.state, node.job, node.since);
            self.seen[i as usize] = (node.state, node.job, node.since);
        }
        // (sleeping nodes come in node order already: `moved` is sorted)
        gone.computing.sort_unstable();
        new.computing.sort_unstable();
        gone.other.sort_unstable_by(other_order);
        new.other.sort_unstable_by(other_order);
        replace_sorted(&mut self.sleeping, &gone.sleeping, &new.sleeping, u32::cmp);
        replace_sorted(
            &mut self.computing,
            &gone.computing,
            &new.computing,
            Ord::cmp,
        );
        replace_sorted(&mut self.other, &gone.other, &new.other, other_order);
    }

    /// Some node is down for maintenance (the class plans do not cover it).
    pub fn has_down(&self) -> bool {
        self.other.iter().any(|e| e.0 == NodeState::Down)
    }

    pub fn len(&self) -> usize {
        self.seen.len()
    }

    pub fn is_empty(&self) -> bool {
        self.seen.is_empty()
    }
}

/// Entries leaving or joining each list of a [`NodeIndex`] in one batch.
#[derive(Default)]
struct Lists {
    sleeping: Vec<u32>,
    computing: Vec<(u32, u32)>,
    other: Vec<Other>,
}

impl Lists {
    fn add(&mut self, i: u32, state: NodeState, job: u32, since: f64) {
        match state {
            NodeState::Idle => {}
            NodeState::Sleeping => self.sleeping.push(i),
            NodeState::Computing => self.computing.push((job, i)),
            state => self.other.push((state, since, i)),
        }
    }
}

/// `list` without the entries of `gone` and with those of `new` (all three sorted by `order`,
/// every key unique), in one pass.
fn replace_sorted<T: Copy>(
    list: &mut Vec<T>,
    gone: &[T],
    new: &[T],
    order: impl Fn(&T, &T) -> std::cmp::Ordering,
) {
    if gone.is_empty() && new.is_empty() {
        return;
    }
    let old = std::mem::take(list);
    list.reserve(old.len() + new.len());
    let (mut g, mut n) = (0, 0);
    for x in old {
        while g < gone.len() && order(&gone[g], &x).is_lt() {
            g += 1; // (not listed: nothing to remove)
        }
        if g < gone.len() && order(&gone[g], &x).is_eq() {
            g += 1;
            continue;
        }
        while n < new.len() && order(&new[n], &x).is_lt() {
            list.push(new[n]);
            n += 1;
        }
        list.push(x);
    }
    list.extend_from_slice(&new[n..]);
}

fn remove<T: Ord>(list: &mut Vec<T>, x: &T) {
    if let Ok(at) = list.binary_search(x) {
        list.remove(at);
    }
}

fn insert<T: Ord>(list: &mut Vec<T>, x: T) {
    if let Err(at) = list.binary_search(&x) {
        list.insert(at, x);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::power::random_machine::{Lcg, Machine};

    /// A batch of changes merged into the index gives the lists a rebuild from every node
    /// gives: 2000 random pairs of machines (before, after), with changes listed in any order,
    /// more than once, and nodes listed that did not change.
    #[test]
    fn a_batch_of_changes_gives_the_index_a_rebuild_gives() {
        let mut rng = Lcg(11);
        for case in 0..2000u32 {
            let n = 40 + rng.below(200) as usize;
            let before = Machine::random(&mut rng, n, 10_000.0, case % 2 == 0);
            let later = 10_000.0 + f64::from(rng.below(3));
            let after = Machine::random(&mut rng, n, later, true);
            // the nodes after: some as before, the rest from the other machine
            let nodes: Vec<Node> = (0..n)
                .map(|i| {
                    if rng.below(3) == 0 {
                        before.nodes[i]
                    } else {
                        after.nodes[i]
                    }
                })
                .collect();
            let mut changed: Vec<u32> = (0..n as u32).filter(|_| rng.below(4) != 0).collect();
            changed.extend((0..n as u32).filter(|_| rng.below(5) == 0)); // listed again
            changed.reverse();
            // every changed node is listed (what the journal guarantees)
            changed.extend((0..n as u32).filter(|&i| {
                let (a, b) = (&before.nodes[i as usize], &nodes[i as usize]);
                a.state != b.state || a.job != b.job || a.since.to_bits() != b.since.to_bits()
            }));
            let mut index = NodeIndex::default();
            index.rebuild(&before.nodes);
            index.update_many(&changed, &nodes);
            let mut rebuilt = NodeIndex::default();
            rebuilt.rebuild(&nodes);
            assert_eq!(index.sleeping, rebuilt.sleeping, "case {case}");
            assert_eq!(index.computing, rebuilt.computing, "case {case}");
            assert_eq!(format!("{:?}", index.other), format!("{:?}", rebuilt.other));
            assert_eq!(format!("{:?}", index.seen), format!("{:?}", rebuilt.seen));
        }
    }
}
