//! What is free on each node, read through views: the engine's [`Usage`], and sparse layers
//! over another view that differ from it on a few nodes only (what a scan takes now, what the
//! running jobs give back by a reservation's time). A scan thus never copies every node.

use crate::packing::usage::{Allocation, Usage};

/// One node's free CPUs and memory, the jobs holding part of it and whether one holds it
/// whole: what the placement rule reads of every node, in one look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeFree {
    pub cpus: u32,
    pub memory: u64,
    pub jobs: u32,
    pub whole: bool,
}

/// What is free on each node.
pub trait Free {
    /// Node `node`'s free CPUs, memory, holders and whether it is held whole.
    #[inline]
    fn node(&self, node: u32) -> NodeFree {
        NodeFree {
            cpus: self.cpus(node),
            memory: self.memory(node),
            jobs: self.jobs(node),
            whole: self.whole(node),
        }
    }
    fn cpus(&self, node: u32) -> u32;
    fn memory(&self, node: u32) -> u64;
    fn gres(&self, node: u32, kind: u32) -> u32;
    /// Jobs holding part of the node.
    fn jobs(&self, node: u32) -> u32;
    /// An exclusive job holds the node.
    fn whole(&self, node: u32) -> bool;
    #[inline]
    fn idle(&self, node: u32) -> bool {
        self.jobs(node) == 0
    }
}

impl Free for Usage {
    #[inline]
    fn cpus(&self, node: u32) -> u32 {
        self.free_cpus(node)
    }
    #[inline]
    fn memory(&self, node: u32) -> u64 {
        self.free_memory(node)
    }
    #[inline]
    fn gres(&self, node: u32, kind: u32) -> u32 {
        self.free_gres(node, kind)
    }
    #[inline]
    fn jobs(&self, node: u32) -> u32 {
        self.holders(node)
    }
    #[inline]
    fn whole(&self, node: u32) -> bool {
        self.held_whole(node)
    }
}

type Row = NodeFree;

/// The nodes where a layer differs from the view under it, with their values.
#[derive(Debug, Clone, Default)]
pub struct Sparse {
    /// Per node, its row (`u32::MAX`: as the view under it).
    slot: Vec<u32>,
    rows: Vec<Row>,
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

    #[inline]
    pub fn has(&self, node: u32) -> bool {
        self.slot[node as usize] != u32::MAX
    }

    /// The row of `node`, copied from `under` the first time.
    fn row(&mut self, node: u32, under: &impl Free) -> usize {
        let s = self.slot[node as usize];
        if s != u32::MAX {
            return s as usize;
        }
        let r = self.rows.len();
        self.rows.push(Row {
            cpus: under.cpus(node),
            memory: under.memory(node),
            jobs: under.jobs(node),
            whole: under.whole(node),
        });
        self.gres
            .extend((0..self.kinds as u32).map(|k| under.gres(node, k)));
        self.slot[node as usize] = r as u32;
        self.touched.push(node);
        r
    }

    /// Takes `allocation` from the layer (over `under`); it must fit.
    pub fn take(&mut self, under: &impl Free, allocation: &Allocation) {
        let k = self.kinds;
        for (i, &node) in allocation.nodes.iter().enumerate() {
            let r = self.row(node, under);
            let row = &mut self.rows[r];
            row.cpus -= allocation.cpus[i];
            row.memory -= allocation.memory[i];
            row.jobs += 1;
            row.whole |= allocation.exclusive;
            for g in 0..k {
                self.gres[r * k + g] -= allocation.gres[i * k + g];
            }
        }
    }

    /// Gives `allocation` back to the layer (over `under`).
    pub fn give_back(&mut self, under: &impl Free, allocation: &Allocation) {
        let k = self.kinds;
        for (i, &node) in allocation.nodes.iter().enumerate() {
            let r = self.row(node, under);
            let row = &mut self.rows[r];
            row.cpus += allocation.cpus[i];
            row.memory += allocation.memory[i];
            row.jobs -= 1;
            if allocation.exclusive {
                row.whole = false;
            }
            for g in 0..k {
                self.gres[r * k + g] += allocation.gres[i * k + g];
            }
        }
    }

    /// Takes `allocation` on the nodes the layer has rows for only.
    pub fn take_where_touched(&mut self, allocation: &Allocation) {
        let k = self.kinds;
        for (i, &node) in allocation.nodes.iter().enumerate() {
            let s = self.slot[node as usize];
            if s == u32::MAX {
                continue;
            }
            let r = s as usize;
            let row = &mut self.rows[r];
            row.cpus -= allocation.cpus[i];
            row.memory -= allocation.memory[i];
            row.jobs += 1;
            row.whole |= allocation.exclusive;
            for g in 0..k {
                self.gres[r * k + g] -= allocation.gres[i * k + g];
            }
        }
    }

    /// Copies `other`'s rows into this layer (the rows of nodes it touched).
    pub fn absorb(&mut self, other: &Sparse, under: &impl Free) {
        let k = self.kinds;
        for &node in &other.touched {
            let from = other.slot[node as usize] as usize;
            let r = self.row(node, under);
            self.rows[r] = other.rows[from];
            self.gres[r * k..(r + 1) * k].copy_from_slice(&other.gres[from * k..(from + 1) * k]);
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
    fn cpus(&self, node: u32) -> u32 {
        match self.sparse.slot[node as usize] {
            u32::MAX => self.under.cpus(node),
            r => self.sparse.rows[r as usize].cpus,
        }
    }
    #[inline]
    fn memory(&self, node: u32) -> u64 {
        match self.sparse.slot[node as usize] {
            u32::MAX => self.under.memory(node),
            r => self.sparse.rows[r as usize].memory,
        }
    }
    #[inline]
    fn gres(&self, node: u32, kind: u32) -> u32 {
        match self.sparse.slot[node as usize] {
            u32::MAX => self.under.gres(node, kind),
            r => self.sparse.gres[r as usize * self.sparse.kinds + kind as usize],
        }
    }
    #[inline]
    fn jobs(&self, node: u32) -> u32 {
        match self.sparse.slot[node as usize] {
            u32::MAX => self.under.jobs(node),
            r => self.sparse.rows[r as usize].jobs,
        }
    }
    #[inline]
    fn whole(&self, node: u32) -> bool {
        match self.sparse.slot[node as usize] {
            u32::MAX => self.under.whole(node),
            r => self.sparse.rows[r as usize].whole,
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
    fn cpus(&self, node: u32) -> u32 {
        match self.layer.slot[node as usize] {
            u32::MAX => self.view.cpus(node),
            r => self.view.cpus(node).min(self.layer.rows[r as usize].cpus),
        }
    }
    #[inline]
    fn memory(&self, node: u32) -> u64 {
        match self.layer.slot[node as usize] {
            u32::MAX => self.view.memory(node),
            r => self
                .view
                .memory(node)
                .min(self.layer.rows[r as usize].memory),
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
    #[inline]
    fn jobs(&self, node: u32) -> u32 {
        match self.layer.slot[node as usize] {
            u32::MAX => self.view.jobs(node),
            r => self.view.jobs(node).max(self.layer.rows[r as usize].jobs),
        }
    }
    #[inline]
    fn whole(&self, node: u32) -> bool {
        match self.layer.slot[node as usize] {
            u32::MAX => self.view.whole(node),
            r => self.view.whole(node) || self.layer.rows[r as usize].whole,
        }
    }
}
