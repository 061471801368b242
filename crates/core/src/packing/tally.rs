//! Per node set, sums of what its nodes have free, kept incrementally: a scan rules out at
//! once the jobs that cannot fit (fewer free CPUs, idle nodes, memory or GPUs in all than
//! they ask for) before it runs the placement rule over the nodes.

use crate::model::{Memory, Request, SharedNodes};
use crate::packing::free::Free;
use crate::packing::select::{is_exclusive, node_needs};
use crate::packing::usage::NodeFree;

/// What a set's nodes have free in all (a node an exclusive job holds counts for nothing).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pub cpus: u64,
    /// Nodes with a free CPU.
    pub with_cpus: u32,
    pub idle: u32,
    pub memory: u64,
}

/// The tallies of every node set, and of each generic resource kind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tallies {
    sets: Vec<Tally>,
    /// `gres[set * kinds + k]`.
    gres: Vec<u64>,
    kinds: usize,
    /// `by_cpus[set * (most + 1) + c]`: the set's nodes with `c` free CPUs (not held whole),
    /// where no node has more than `most` (at most [`HISTOGRAM_CPUS`]; else empty).
    by_cpus: Vec<u32>,
    most: usize,
}

/// The most CPUs per node for which tallies keep how many nodes have each count free (a
/// one-node job fits only where some node has its CPUs free).
pub const HISTOGRAM_CPUS: u32 = 4096;

impl Tallies {
    /// The tallies of `model`'s sets with nodes as `free` has them.
    pub fn new(model: &SharedNodes, free: &impl Free) -> Self {
        let kinds = model.resources.gres_names().len();
        let most = (0..model.resources.nodes())
            .map(|n| model.resources.shape(n).cpus)
            .max()
            .unwrap_or(0);
        let histogram = most <= HISTOGRAM_CPUS;
        let most = if histogram { most as usize } else { 0 };
        let mut tallies = Tallies {
            sets: vec![Tally::default(); model.sets.len()],
            gres: vec![0; model.sets.len() * kinds],
            kinds,
            by_cpus: if histogram {
                vec![0; model.sets.len() * (most + 1)]
            } else {
                Vec::new()
            },
            most,
        };
        for node in 0..model.resources.nodes() {
            tallies.count(model, node, free, true);
        }
        tallies
    }

    /// Adds (`add`) or removes node `node`'s free resources, as `free` has them, to the
    /// tallies of its sets: remove before it changes, add after.
    pub fn count(&mut self, model: &SharedNodes, node: u32, free: &impl Free, add: bool) {
        let gres = |g: usize| free.gres(node, g as u32);
        self.count_values(model, node, free.node(node), gres, add);
    }

    /// [`Tallies::count`] with node `node`'s values in hand: `f`, and `gres(k)` free units
    /// of each generic resource kind.
    pub fn count_values(
        &mut self,
        model: &SharedNodes,
        node: u32,
        f: NodeFree,
        gres: impl Fn(usize) -> u32,
        add: bool,
    ) {
        if f.whole {
            return;
        }
        let (cpus, memory, idle) = (f.cpus, f.memory, f.jobs == 0);
        let k = self.kinds;
        let width = self.most + 1;
        for &s in model.node_sets(node) {
            let s = s as usize;
            if let Some(count) = self.by_cpus.get_mut(s * width + cpus as usize) {
                *count = if add { *count + 1 } else { *count - 1 };
            }
            let t = &mut self.sets[s];
            if add {
                t.cpus += u64::from(cpus);
                t.with_cpus += u32::from(cpus > 0);
                t.idle += u32::from(idle);
                t.memory += memory;
            } else {
                t.cpus -= u64::from(cpus);
                t.with_cpus -= u32::from(cpus > 0);
                t.idle -= u32::from(idle);
                t.memory -= memory;
            }
            for g in 0..k {
                let units = u64::from(gres(g));
                let total = &mut self.gres[s * k + g];
                *total = if add { *total + units } else { *total - units };
            }
        }
    }

    /// Moves node `node` in the tallies of its sets from `before` to `after` (held whole in
    /// both or neither), its free units of each generic resource kind `k` from `gres(k).0` to
    /// `gres(k).1`: what [`Tallies::count`] does twice around a change, with the node's values
    /// in hand.
    pub fn shift(
        &mut self,
        model: &SharedNodes,
        node: u32,
        before: NodeFree,
        after: NodeFree,
        gres: impl Fn(usize) -> (u32, u32),
    ) {
        // (a node held whole counts for nothing; only an exclusive job changes that, and such
        // a change goes through `count`)
        debug_assert_eq!(before.whole, after.whole);
        if before.whole {
            return;
        }
        let k = self.kinds;
        let width = self.most + 1;
        for &s in model.node_sets(node) {
            let s = s as usize;
            if !self.by_cpus.is_empty() {
                self.by_cpus[s * width + before.cpus as usize] -= 1;
                self.by_cpus[s * width + after.cpus as usize] += 1;
            }
            let t = &mut self.sets[s];
            t.cpus = t.cpus - u64::from(before.cpus) + u64::from(after.cpus);
            t.with_cpus = t.with_cpus - u32::from(before.cpus > 0) + u32::from(after.cpus > 0);
            t.idle = t.idle - u32::from(before.jobs == 0) + u32::from(after.jobs == 0);
            t.memory = t.memory - before.memory + after.memory;
            for g in 0..k {
                let (was, is) = gres(g);
                let total = &mut self.gres[s * k + g];
                *total = *total - u64::from(was) + u64::from(is);
            }
        }
    }

    /// What changed from `before` to these tallies (of the same sets), in wrapping
    /// arithmetic: [`Tallies::add_change`] makes `before` these again, or makes the same
    /// change to tallies that were as `before` on the nodes it concerns.
    pub fn change_since(&self, before: &Tallies) -> Tallies {
        let sub64 =
            |a: &[u64], b: &[u64]| a.iter().zip(b).map(|(x, y)| x.wrapping_sub(*y)).collect();
        Tallies {
            sets: (self.sets.iter().zip(&before.sets))
                .map(|(a, b)| Tally {
                    cpus: a.cpus.wrapping_sub(b.cpus),
                    with_cpus: a.with_cpus.wrapping_sub(b.with_cpus),
                    idle: a.idle.wrapping_sub(b.idle),
                    memory: a.memory.wrapping_sub(b.memory),
                })
                .collect(),
            gres: sub64(&self.gres, &before.gres),
            kinds: self.kinds,
            by_cpus: (self.by_cpus.iter().zip(&before.by_cpus))
                .map(|(a, b)| a.wrapping_sub(*b))
                .collect(),
            most: self.most,
        }
    }

    /// Makes the change `change` (from [`Tallies::change_since`]).
    pub fn add_change(&mut self, change: &Tallies) {
        for (a, d) in self.sets.iter_mut().zip(&change.sets) {
            a.cpus = a.cpus.wrapping_add(d.cpus);
            a.with_cpus = a.with_cpus.wrapping_add(d.with_cpus);
            a.idle = a.idle.wrapping_add(d.idle);
            a.memory = a.memory.wrapping_add(d.memory);
        }
        for (a, d) in self.gres.iter_mut().zip(&change.gres) {
            *a = a.wrapping_add(*d);
        }
        for (a, d) in self.by_cpus.iter_mut().zip(&change.by_cpus) {
            *a = a.wrapping_add(*d);
        }
    }

    pub fn get(&self, set: u32) -> Tally {
        self.sets[set as usize]
    }

    /// Whether `request` may fit set `set` by its tallies (a necessary condition: `false`
    /// means it does not fit).
    pub fn may_fit(&self, model: &SharedNodes, set: u32, request: &Request) -> bool {
        let limits = model.sets[set as usize].limits;
        let (min_nodes, max_nodes, need) = node_needs(request, limits);
        let t = self.sets[set as usize];
        if is_exclusive(&model.resources, request, limits) {
            return t.idle >= min_nodes;
        }
        if t.cpus < request.cpus() || t.with_cpus < min_nodes {
            return false;
        }
        if max_nodes == 1 && !self.by_cpus.is_empty() {
            // one node must have all its CPUs free
            let width = self.most + 1;
            let row = &self.by_cpus[set as usize * width..(set as usize + 1) * width];
            if row
                .get(need as usize..)
                .is_none_or(|r| r.iter().all(|&c| c == 0))
            {
                return false;
            }
        }
        if model.resources.sharing.memory() {
            let need = match request.memory {
                Memory::PerNode(m) => m.saturating_mul(u64::from(min_nodes)),
                Memory::PerCpu(m) => m.saturating_mul(request.cpus()),
                Memory::Whole => 0,
            };
            if t.memory < need {
                return false;
            }
        }
        let k = self.kinds;
        request.gres.iter().all(|want| {
            let free: u64 = (want.kinds.iter())
                .map(|&g| self.gres[set as usize * k + g as usize])
                .sum();
            free >= u64::from(want.count) * u64::from(min_nodes)
        })
    }
}
