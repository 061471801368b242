//! What is free on each node, read through views: the engine's [`Usage`], and sparse layers
//! over another view that differ from it on a few nodes only (what a scan takes now, what the
//! running jobs give back by a reservation's time). A scan thus never copies every node.

pub use crate::packing::usage::NodeFree;
use crate::packing::usage::{Allocation, Usage};

/// What is free on each node.
pub trait Free {
    /// Node `node`'s free CPUs, memory, holders and whether it is held whole.
    fn node(&self, node: u32) -> NodeFree;
    /// Node `node`'s free units of generic resource kind `kind`.
    fn gres(&self, node: u32, kind: u32) -> u32;
}

impl Free for Usage {
    #[inline]
    fn node(&self, node: u32) -> NodeFree {
        self.node_free(node)
    }
    #[inline]
    fn gres(&self, node: u32, kind: u32) -> u32 {
        self.free_gres(node, kind)
    }
}

/// The nodes where a layer differs from the view under it, with their values.
#[derive(Debug, Clone, Default)]
pub struct Sparse {
    /// Per node, its row (`u32::MAX`: as the view under it).
    slot: Vec<u32>,
    rows: Vec<NodeFree>,
    /// `gres[row * kinds + k]`.
    gres: Vec<u32>,
    kinds: usize,
    /// The nodes with a row, in the order they got one.
    touched: Vec<u32>,
}

impl Sparse {
    /// An empty layer for `nodes` nodes and `kinds` generic resource kinds (it keeps its
    /// buffers: [`Sparse::clear`] empties it again).
    pub fn reset(&mut self, nodes: usize, kinds: usize) {
        if self.slot.len() != nodes || self.kinds != kinds {
            self.slot = vec![u32::MAX; nodes];
            self.kinds = kinds;
            self.rows.clear();
            self.gres.clear();
            self.touched.clear();
        } else {
            self.clear();
        }
    }

    /// Every node as the view under it again.
    pub fn clear(&mut self) {
        for &n in &self.touched {
            self.slot[n as usize] = u32::MAX;
        }
        self.touched.clear();
        self.rows.clear();
        self.gres.clear();
    }

    /// The nodes where the layer differs (or may) from the view under it.
    pub fn touched(&self) -> &[u32] {
        &self.touched
    }

    /// The row of `node`, copied from `under` the first time.
    fn row(&mut self, node: u32, under: &impl Free) -> usize {
        let s = self.slot[node as usize];
        if s != u32::MAX {
            return s as usize;
        }
        let r = self.rows.len();
        self.rows.push(under.node(node));
        self.gres
            .extend((0..self.kinds as u32).map(|k| under.gres(node, k)));
        self.slot[node as usize] = r as u32;
        self.touched.push(node);
        r
    }

    /// Takes `allocation` from the layer (over `under`); it must fit.
    pub fn take(&mut self, under: &impl Free, allocation: &Allocation) {
        for i in 0..allocation.nodes.len() {
            let r = self.row(allocation.nodes[i], under);
            self.change(r, allocation, i, true);
        }
    }

    /// Gives `allocation` back to the layer (over `under`).
    pub fn give_back(&mut self, under: &impl Free, allocation: &Allocation) {
        for i in 0..allocation.nodes.len() {
            let r = self.row(allocation.nodes[i], under);
            self.change(r, allocation, i, false);
        }
    }

    /// Gives `allocation` back to the layer (over `under`), calling `each(i, before, after,
    /// gres)` with each of its nodes' index in it, its values before and after and its free
    /// generic resources after (what keeping tallies of the layer needs, in one look).
    pub fn give_back_each(
        &mut self,
        under: &impl Free,
        allocation: &Allocation,
        mut each: impl FnMut(usize, NodeFree, NodeFree, &[u32]),
    ) {
        let k = self.kinds;
        for i in 0..allocation.nodes.len() {
            let r = self.row(allocation.nodes[i], under);
            let before = self.rows[r];
            self.change(r, allocation, i, false);
            each(i, before, self.rows[r], &self.gres[r * k..(r + 1) * k]);
        }
    }

    /// Node `node`, down now (and held by no job), is up in the layer (over `under`);
    /// returns its values before and after, and its free generic resources.
    pub fn bring_up(&mut self, under: &impl Free, node: u32) -> (NodeFree, NodeFree, &[u32]) {
        let k = self.kinds;
        let r = self.row(node, under);
        let before = self.rows[r];
        self.rows[r].whole = false;
        (before, self.rows[r], &self.gres[r * k..(r + 1) * k])
    }

    /// Takes `allocation` on the nodes the layer has rows for only.
    pub fn take_where_touched(&mut self, allocation: &Allocation) {
        for (i, &node) in allocation.nodes.iter().enumerate() {
            let s = self.slot[node as usize];
            if s != u32::MAX {
                self.change(s as usize, allocation, i, true);
            }
        }
    }

    /// Row `r` less (`take`) or plus what `allocation` holds on its `i`-th node.
    fn change(&mut self, r: usize, allocation: &Allocation, i: usize, take: bool) {
        let k = self.kinds;
        let row = &mut self.rows[r];
        let held = &allocation.gres[i * k..(i + 1) * k];
        if take {
            row.cpus -= allocation.cpus[i];
            row.memory -= allocation.memory[i];
            row.jobs += 1;
            row.whole |= allocation.exclusive;
            for (free, &units) in self.gres[r * k..(r + 1) * k].iter_mut().zip(held) {
                *free -= units;
            }
        } else {
            row.cpus += allocation.cpus[i];
            row.memory += allocation.memory[i];
            row.jobs -= 1;
            if allocation.exclusive {
                row.whole = false;
            }
            for (free, &units) in self.gres[r * k..(r + 1) * k].iter_mut().zip(held) {
                *free += units;
            }
        }
    }

    /// The rows of `nodes` (each must have one): their values and generic resources.
    pub fn rows_of(&self, nodes: &[u32]) -> (Vec<NodeFree>, Vec<u32>) {
        let k = self.kinds;
        let mut rows = Vec::with_capacity(nodes.len());
        let mut gres = Vec::with_capacity(nodes.len() * k);
        for &node in nodes {
            let r = self.slot[node as usize] as usize;
            rows.push(self.rows[r]);
            gres.extend_from_slice(&self.gres[r * k..(r + 1) * k]);
        }
        (rows, gres)
    }

    /// Sets the rows of `nodes` to `rows` and `gres` (as [`Sparse::rows_of`] gives them).
    pub fn put(&mut self, nodes: &[u32], rows: &[NodeFree], gres: &[u32]) {
        let k = self.kinds;
        for (i, &node) in nodes.iter().enumerate() {
            let values = &gres[i * k..(i + 1) * k];
            match self.slot[node as usize] {
                u32::MAX => {
                    self.slot[node as usize] = self.rows.len() as u32;
                    self.rows.push(rows[i]);
                    self.gres.extend_from_slice(values);
                    self.touched.push(node);
                }
                r => {
                    let r = r as usize;
                    self.rows[r] = rows[i];
                    self.gres[r * k..(r + 1) * k].copy_from_slice(values);
                }
            }
        }
    }

    /// The layer over `under`.
    pub fn over<'a, F: Free>(&'a self, under: &'a F) -> Layered<'a, F> {
        Layered {
            sparse: self,
            under,
        }
    }
}

/// A [`Sparse`] layer over a view.
#[derive(Clone, Copy)]
pub struct Layered<'a, F: Free> {
    sparse: &'a Sparse,
    under: &'a F,
}

impl<F: Free> Free for Layered<'_, F> {
    #[inline]
    fn node(&self, node: u32) -> NodeFree {
        match self.sparse.slot[node as usize] {
            u32::MAX => self.under.node(node),
            r => self.sparse.rows[r as usize],
        }
    }
    #[inline]
    fn gres(&self, node: u32, kind: u32) -> u32 {
        match self.sparse.slot[node as usize] {
            u32::MAX => self.under.gres(node, kind),
            r => self.sparse.gres[r as usize * self.sparse.kinds + kind as usize],
        }
    }
}

/// What is free both in a view and, on the nodes a [`Sparse`] layer has rows for, in that
/// layer: the least of each resource, idle only if idle in both, held whole if in either.
/// (Elsewhere the view alone: where the layer has no row it is never below the view.)
#[derive(Clone, Copy)]
pub struct Least<'a, F: Free> {
    pub view: &'a F,
    pub layer: &'a Sparse,
}

impl<F: Free> Free for Least<'_, F> {
    #[inline]
    fn node(&self, node: u32) -> NodeFree {
        let v = self.view.node(node);
        match self.layer.slot[node as usize] {
            u32::MAX => v,
            r => {
                let l = self.layer.rows[r as usize];
                NodeFree {
                    cpus: v.cpus.min(l.cpus),
                    memory: v.memory.min(l.memory),
                    jobs: v.jobs.max(l.jobs),
                    whole: v.whole || l.whole,
                }
            }
        }
    }
    #[inline]
    fn gres(&self, node: u32, kind: u32) -> u32 {
        match self.layer.slot[node as usize] {
            u32::MAX => self.view.gres(node, kind),
            r => self
                .view
                .gres(node, kind)
                .min(self.layer.gres[r as usize * self.layer.kinds + kind as usize]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{NodeShape, Resources, Sharing};

    /// `nodes` nodes of 4 CPUs and 8000 MB with `gres` units of each generic resource kind.
    fn machine(nodes: usize, gres: &[u32]) -> Resources {
        let shape = NodeShape {
            cpus: 4,
            threads_per_core: 1,
            memory: 8000,
            gres: gres.into(),
            weight: 1,
        };
        let names = (0..gres.len()).map(|k| format!("g{k}")).collect();
        Resources::new(Sharing::CoreMemory, names, vec![shape], vec![0; nodes]).unwrap()
    }

    fn allocation(nodes: &[u32], gres: &[u32]) -> Allocation {
        Allocation {
            nodes: nodes.to_vec(),
            cpus: vec![1; nodes.len()],
            memory: vec![100; nodes.len()],
            gres: gres.to_vec(),
            exclusive: false,
        }
    }

    #[test]
    fn a_layer_keeps_each_nodes_units_of_each_kind_apart() {
        // Three nodes of 2 units of g0 and 3 of g1. B takes g0 2 and g1 1 on node 1; A takes
        // g0 1 on node 0 and g1 3 on node 2: rows 0 (node 1), 1 (node 0), 2 (node 2).
        let base = Usage::new(&machine(3, &[2, 3]));
        let mut layer = Sparse::default();
        layer.reset(3, 2);
        let b = allocation(&[1], &[2, 1]);
        let a = allocation(&[0, 2], &[1, 0, 0, 3]);
        layer.take(&base, &b);
        layer.take(&base, &a);
        let units = |layer: &Sparse, n| {
            let view = layer.over(&base);
            (view.gres(n, 0), view.gres(n, 1))
        };
        let all = [units(&layer, 0), units(&layer, 1), units(&layer, 2)];
        assert_eq!(all, [(1, 3), (0, 2), (2, 0)]);
        assert_eq!(layer.over(&base).node(2).cpus, 3);
        let (rows, gres) = layer.rows_of(&[2, 0]);
        assert_eq!((rows[0].memory, gres), (7900, vec![2, 0, 1, 3]));
        // giving A back: each node's own units, in its order
        let mut seen = Vec::new();
        layer.give_back_each(&base, &a, |i, before, after, gres| {
            seen.push((i, before.jobs, after.jobs, gres.to_vec()));
        });
        assert_eq!(seen, [(0, 1, 0, vec![2, 3]), (1, 1, 0, vec![2, 3])]);
        let (_, after, gres) = layer.bring_up(&base, 2);
        assert_eq!((after.whole, gres), (false, &[2, 3][..]));
        // rows put back as they were, then A taken again where the layer has rows only
        layer.put(&[2, 0], &rows, &[2, 0, 1, 3]);
        assert_eq!(units(&layer, 2), (2, 0));
        layer.give_back(&base, &a);
        layer.take_where_touched(&a);
        let view = layer.over(&base);
        assert_eq!((view.gres(2, 1), view.gres(0, 0)), (0, 1));
        // an exclusive job holds its node whole until it gives it back
        let whole = Allocation {
            exclusive: true,
            ..allocation(&[1], &[2, 3])
        };
        layer.reset(3, 2);
        layer.take(&base, &whole);
        assert!(layer.over(&base).node(1).whole);
        layer.give_back(&base, &whole);
        assert_eq!(layer.over(&base).node(1), base.node(1));
    }

    #[test]
    fn the_least_of_a_view_and_a_layer_takes_each_resource_and_hold_from_either() {
        // the layer takes g0 1 and g1 2 on node 2 (its second row) and node 1 whole; the view
        // under it (the engine's usage) has node 0's one CPU taken
        let mut base = Usage::new(&machine(3, &[2, 3]));
        base.take(&allocation(&[0], &[0, 0])).unwrap();
        let mut layer = Sparse::default();
        layer.reset(3, 2);
        let whole = Allocation {
            exclusive: true,
            ..allocation(&[1], &[0, 0])
        };
        layer.take(&base, &whole);
        layer.take(&base, &allocation(&[2], &[1, 2]));
        let least = Least {
            view: &base,
            layer: &layer,
        };
        assert_eq!((least.gres(2, 0), least.gres(2, 1)), (1, 1));
        assert_eq!((least.gres(1, 1), least.gres(0, 1)), (3, 3));
        assert!(least.node(1).whole && !least.node(2).whole);
        assert_eq!((least.node(0).cpus, least.node(2).cpus), (3, 3));
    }

    #[test]
    fn a_layer_reset_for_another_machine_starts_afresh() {
        let mut layer = Sparse::default();
        let two_kinds = Usage::new(&machine(3, &[2, 3]));
        layer.reset(3, 2);
        layer.take(&two_kinds, &allocation(&[2], &[1, 1]));
        // more nodes: node 4 is read from the view under it
        let five = Usage::new(&machine(5, &[2, 3]));
        layer.reset(5, 2);
        assert_eq!(layer.over(&five).gres(4, 1), 3);
        assert!(layer.touched().is_empty());
        // as many nodes, one kind: rows of one unit count each
        let one_kind = Usage::new(&machine(5, &[4]));
        layer.reset(5, 1);
        layer.take(&one_kind, &allocation(&[3, 4], &[1, 2]));
        let view = layer.over(&one_kind);
        assert_eq!((view.gres(3, 0), view.gres(4, 0)), (3, 2));
    }
}
