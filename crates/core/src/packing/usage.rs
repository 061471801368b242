//! What is free on each node, kept incrementally: a start takes exactly its [`Allocation`],
//! an end gives exactly that back.

use crate::error::{CoreError, Result};
use crate::model::Resources;

/// What one job holds: per node, CPUs, memory (MB) and units of each generic resource kind.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Allocation {
    /// Its nodes, ascending.
    pub nodes: Vec<u32>,
    pub cpus: Vec<u32>,
    pub memory: Vec<u64>,
    /// `gres[i * kinds + k]`: units of kind `k` on `nodes[i]`.
    pub gres: Vec<u32>,
    /// It holds its nodes alone (`--exclusive`).
    pub exclusive: bool,
}

impl Allocation {
    pub fn total_cpus(&self) -> u64 {
        self.cpus.iter().map(|&c| u64::from(c)).sum()
    }

    pub fn total_memory(&self) -> u64 {
        self.memory.iter().sum()
    }

    /// Units of kind `k` over its nodes (`kinds`: the site's generic resource kinds).
    pub fn total_gres(&self, k: usize, kinds: usize) -> u64 {
        (0..self.nodes.len())
            .map(|i| u64::from(self.gres[i * kinds + k]))
            .sum()
    }
}

/// One node's free CPUs and memory, the jobs holding part of it and whether one holds it
/// whole: what the placement rule reads of every node, in one look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeFree {
    pub cpus: u32,
    pub memory: u64,
    pub jobs: u32,
    pub whole: bool,
}

/// Each node's free CPUs, memory and generic resources, and how many jobs hold part of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Usage {
    /// By node: its free CPUs and memory, the jobs holding part of it, whether one holds it
    /// whole (together: a placement reads them all of each node it looks at).
    free: Vec<NodeFree>,
    /// `free_gres[node * kinds + k]`.
    free_gres: Vec<u32>,
    kinds: usize,
    /// By node: the downtime windows it is down in (a node down is held whole: it offers
    /// nothing).
    down: Vec<u32>,
    /// Bit `n`: node `n` has a free CPU and no exclusive job (the only nodes a placement can
    /// use), so a placement looks at those alone.
    open: Vec<u64>,
}

impl Usage {
    /// Every node of `resources` free.
    pub fn new(resources: &Resources) -> Self {
        let n = resources.nodes();
        let kinds = resources.gres_names().len();
        let mut free_gres = Vec::with_capacity(n as usize * kinds);
        for node in 0..n {
            free_gres.extend_from_slice(&resources.shape(node).gres);
        }
        Usage {
            free: (0..n)
                .map(|i| NodeFree {
                    cpus: resources.shape(i).cpus,
                    memory: resources.shape(i).memory,
                    jobs: 0,
                    whole: false,
                })
                .collect(),
            free_gres,
            kinds,
            down: vec![0; n as usize],
            open: open_bits(n as usize, |_| true),
        }
    }

    /// The nodes with a free CPU and no exclusive job, as bits (`open[n / 64] >> (n % 64)`).
    pub fn open(&self) -> &[u64] {
        &self.open
    }

    fn refresh_open(&mut self, n: usize) {
        let bit = 1u64 << (n % 64);
        if self.free[n].cpus > 0 && !self.free[n].whole {
            self.open[n / 64] |= bit;
        } else {
            self.open[n / 64] &= !bit;
        }
    }

    #[inline]
    pub fn free_cpus(&self, node: u32) -> u32 {
        self.free[node as usize].cpus
    }

    #[inline]
    pub fn free_memory(&self, node: u32) -> u64 {
        self.free[node as usize].memory
    }

    #[inline]
    pub fn free_gres(&self, node: u32, kind: u32) -> u32 {
        self.free_gres[node as usize * self.kinds + kind as usize]
    }

    /// Node `node`'s free CPUs and memory, holders, and whether it is held whole.
    #[inline]
    /// How many nodes it counts.
    pub fn nodes(&self) -> u32 {
        self.free.len() as u32
    }

    pub fn node_free(&self, node: u32) -> NodeFree {
        self.free[node as usize]
    }

    /// How many jobs hold part of it.
    #[inline]
    pub fn holders(&self, node: u32) -> u32 {
        self.free[node as usize].jobs
    }

    /// No job holds any of it.
    #[inline]
    pub fn idle(&self, node: u32) -> bool {
        self.free[node as usize].jobs == 0
    }

    /// An exclusive job holds it.
    #[inline]
    pub fn held_whole(&self, node: u32) -> bool {
        self.free[node as usize].whole
    }

    /// Takes `allocation`; an error (and nothing taken) when a node lacks any of it.
    pub fn take(&mut self, allocation: &Allocation) -> Result<()> {
        let k = self.kinds;
        for (i, &node) in allocation.nodes.iter().enumerate() {
            let n = node as usize;
            let f = self.free[n];
            let short = allocation.cpus[i] > f.cpus
                || allocation.memory[i] > f.memory
                || (0..k).any(|g| allocation.gres[i * k + g] > self.free_gres[n * k + g])
                || f.whole
                || (allocation.exclusive && f.jobs > 0);
            if short {
                return Err(CoreError::decision(format!(
                    "node {node} does not have the resources the start takes"
                )));
            }
        }
        for (i, &node) in allocation.nodes.iter().enumerate() {
            let n = node as usize;
            let f = &mut self.free[n];
            f.cpus -= allocation.cpus[i];
            f.memory -= allocation.memory[i];
            f.jobs += 1;
            f.whole |= allocation.exclusive;
            for g in 0..k {
                self.free_gres[n * k + g] -= allocation.gres[i * k + g];
            }
            self.refresh_open(n);
        }
        Ok(())
    }

    /// Node `node` goes down (in one more window): it offers nothing until it is up again.
    /// No job may hold it.
    pub fn take_down(&mut self, node: u32) {
        let n = node as usize;
        debug_assert_eq!(
            self.free[n].jobs, 0,
            "the jobs on a node going down were killed"
        );
        self.down[n] += 1;
        self.free[n].whole = true;
        self.refresh_open(n);
    }

    /// Node `node` comes back from one of its windows (up once it is back from all).
    pub fn bring_up(&mut self, node: u32) {
        let n = node as usize;
        self.down[n] -= 1;
        self.free[n].whole = self.down[n] > 0;
        self.refresh_open(n);
    }

    /// Node `node` is down.
    #[inline]
    pub fn is_down(&self, node: u32) -> bool {
        self.down[node as usize] > 0
    }

    /// Gives back `allocation` (taken before).
    pub fn give_back(&mut self, allocation: &Allocation) {
        let k = self.kinds;
        for (i, &node) in allocation.nodes.iter().enumerate() {
            let n = node as usize;
            let f = &mut self.free[n];
            f.cpus += allocation.cpus[i];
            f.memory += allocation.memory[i];
            f.jobs -= 1;
            if allocation.exclusive {
                f.whole = self.down[n] > 0;
            }
            for g in 0..k {
                self.free_gres[n * k + g] += allocation.gres[i * k + g];
            }
            self.refresh_open(n);
        }
    }
}

/// `n` bits, bit `i` set when `on(i)`.
pub fn open_bits(n: usize, on: impl Fn(usize) -> bool) -> Vec<u64> {
    let mut bits = vec![0u64; n.div_ceil(64)];
    for i in (0..n).filter(|&i| on(i)) {
        bits[i / 64] |= 1 << (i % 64);
    }
    bits
}

/// The nodes of a set (its bits, `set`) that a view `free` over `base` has open (a free CPU,
/// no exclusive job), ascending, into `out`: `base`'s open nodes, corrected on the nodes the
/// view's layers touched.
pub fn open_nodes(
    base: &Usage,
    free: &impl crate::packing::Free,
    set: &[u64],
    touched: &[&[u32]],
    scratch: &mut Vec<u64>,
    out: &mut Vec<u32>,
) {
    scratch.clear();
    scratch.extend(base.open.iter().zip(set).map(|(a, b)| a & b));
    for &node in touched.iter().flat_map(|t| t.iter()) {
        let (w, bit) = (node as usize / 64, 1u64 << (node % 64));
        if set[w] & bit == 0 {
            continue;
        }
        let f = free.node(node);
        if f.cpus > 0 && !f.whole {
            scratch[w] |= bit;
        } else {
            scratch[w] &= !bit;
        }
    }
    out.clear();
    for (w, &word) in scratch.iter().enumerate() {
        let mut bits = word;
        while bits != 0 {
            out.push((w * 64) as u32 + bits.trailing_zeros());
            bits &= bits - 1;
        }
    }
}
