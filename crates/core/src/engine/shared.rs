//! Jobs sharing nodes (`model::SharedNodes`): each node's free resources and what each
//! running job holds, checked and changed only by the engine.

use crate::error::{CoreError, Result};
use crate::model::{Downtime, SharedNodes};
use crate::packing::select::{draw_gres, memory_charge};
use crate::packing::{Allocation, Free, NodeFree, Tallies, Usage};
use std::sync::atomic::{AtomicU64, Ordering};

/// The free resources of every node and the allocation of every running job.
#[derive(Debug, Clone)]
pub struct SharedState {
    pub(crate) usage: Usage,
    /// By job index: what it holds while it runs.
    held: Vec<Option<Box<Allocation>>>,
    /// What each node set has free in all.
    tallies: Tallies,
    /// Starts, ends and nodes going down or up so far (a policy predicts it after its own
    /// starts: one each).
    version: u64,
    /// A number unique in the process to the usage as it stands (each change draws a new one;
    /// a copy of the state keeps it): a scan may keep what it found while this stays the
    /// same, also across copies (a search's forward models).
    stamp: u64,
    /// By job index: the serial number of what it holds (see [`SharedState::serial`]).
    serials: Vec<u64>,
    /// Changes of the nodes down (see [`SharedState::downs`]).
    downs: u64,
    /// CPUs the running jobs hold, and CPUs of the nodes up: what a look-ahead's utilization
    /// counts where jobs share nodes.
    busy_cpus: u64,
    up_cpus: u64,
}

/// Serial numbers of allocations, unique in the process: a copy of a state (a search's
/// forward model) keeps its jobs' numbers, and every later start gets a new one.
static SERIALS: AtomicU64 = AtomicU64::new(1);

/// What a policy reads of shared nodes.
#[derive(Debug, Clone, Copy)]
pub struct SharedView<'a> {
    pub model: &'a SharedNodes,
    pub state: &'a SharedState,
    /// The site whose partitions are the node sets (`None`: one set of every node).
    pub site: Option<&'a crate::model::Site>,
    /// The calendar's downtime windows, and those under way (window, end, nodes).
    pub downtime: &'a [Downtime],
    pub active: &'a [(u32, f64, u32)],
}

impl SharedState {
    pub fn new(model: &SharedNodes, jobs: usize) -> Self {
        let usage = Usage::new(&model.resources);
        SharedState {
            tallies: Tallies::new(model, &usage),
            usage,
            held: vec![None; jobs],
            version: 0,
            stamp: 0,
            serials: vec![0; jobs],
            downs: 0,
            busy_cpus: 0,
            up_cpus: (0..model.resources.nodes())
                .map(|n| u64::from(model.resources.shape(n).cpus))
                .sum(),
        }
    }

    /// CPUs the running jobs hold.
    pub fn busy_cpus(&self) -> u64 {
        self.busy_cpus
    }

    /// CPUs of the nodes up (not taken by a downtime window).
    pub fn up_cpus(&self) -> u64 {
        self.up_cpus
    }

    pub fn usage(&self) -> &Usage {
        &self.usage
    }

    pub fn tallies(&self) -> &Tallies {
        &self.tallies
    }

    pub fn version(&self) -> u64 {
        self.version
    }

    /// See the field: equal stamps, equal usage (whatever copy of a state holds it).
    pub fn stamp(&self) -> u64 {
        self.stamp
    }

    /// The same nodes and allocations for a look-ahead whose job `k` is job `known[k]` here:
    /// what each known job holds moves to its new index.
    pub(crate) fn renumbered(&self, known: &[u32]) -> SharedState {
        let held = known
            .iter()
            .map(|&j| self.held[j as usize].clone())
            .collect();
        let serials = known.iter().map(|&j| self.serials[j as usize]).collect();
        SharedState {
            usage: self.usage.clone(),
            held,
            tallies: self.tallies.clone(),
            version: self.version,
            stamp: self.stamp,
            serials,
            downs: self.downs,
            busy_cpus: self.busy_cpus,
            up_cpus: self.up_cpus,
        }
    }

    /// Nodes some job holds part of.
    pub fn busy_nodes(&self) -> u32 {
        let n = self.usage.nodes();
        (0..n).filter(|&node| self.usage.holders(node) > 0).count() as u32
    }

    /// What running job `job` holds.
    pub fn allocation(&self, job: u32) -> Option<&Allocation> {
        self.held.get(job as usize)?.as_deref()
    }

    /// The serial number of what running job `job` holds: two states whose running jobs have
    /// the same numbers hold the same allocations (whatever each state went through).
    pub fn serial(&self, job: u32) -> u64 {
        self.serials[job as usize]
    }

    /// Job `job` takes `allocation`; returns how many of its nodes were idle.
    pub(crate) fn start(
        &mut self,
        model: &SharedNodes,
        job: u32,
        allocation: Allocation,
    ) -> Result<u32> {
        let idle = (allocation.nodes.iter())
            .filter(|&&n| self.usage.idle(n))
            .count() as u32;
        self.recount(model, &allocation, false, |usage| usage.take(&allocation))?;
        self.busy_cpus += allocation.total_cpus();
        self.held[job as usize] = Some(Box::new(allocation));
        self.serials[job as usize] = SERIALS.fetch_add(1, Ordering::Relaxed);
        self.version += 1;
        self.stamp = SERIALS.fetch_add(1, Ordering::Relaxed);
        Ok(idle)
    }

    /// The nodes of `window` (a node range, a partition's nodes or every node) go down; the
    /// jobs holding any of them were killed before.
    pub(crate) fn take_down(&mut self, model: &SharedNodes, window: &Downtime) {
        for node in window_nodes(model, window) {
            if !self.usage.is_down(node) {
                self.up_cpus -= u64::from(model.resources.shape(node).cpus);
            }
            self.tallies.count(model, node, &self.usage, false);
            self.usage.take_down(node);
            self.tallies.count(model, node, &self.usage, true);
        }
        self.version += 1;
        self.stamp = SERIALS.fetch_add(1, Ordering::Relaxed);
        self.downs = SERIALS.fetch_add(1, Ordering::Relaxed);
    }

    /// The nodes of `window` come back from it.
    pub(crate) fn bring_up(&mut self, model: &SharedNodes, window: &Downtime) {
        for node in window_nodes(model, window) {
            self.tallies.count(model, node, &self.usage, false);
            self.usage.bring_up(node);
            self.tallies.count(model, node, &self.usage, true);
            if !self.usage.is_down(node) {
                self.up_cpus += u64::from(model.resources.shape(node).cpus);
            }
        }
        self.version += 1;
        self.stamp = SERIALS.fetch_add(1, Ordering::Relaxed);
        self.downs = SERIALS.fetch_add(1, Ordering::Relaxed);
    }

    /// Changes of the nodes down so far: what a node offers stays the same while this does
    /// (and no job starts or ends on it).
    pub fn downs(&self) -> u64 {
        self.downs
    }

    /// How many nodes are down.
    pub fn nodes_down(&self, model: &SharedNodes) -> u32 {
        (0..model.resources.nodes())
            .filter(|&n| self.usage.is_down(n))
            .count() as u32
    }

    /// The running jobs holding any node of `window`, of `running`.
    pub(crate) fn holding(
        &self,
        model: &SharedNodes,
        window: &Downtime,
        running: &[u32],
    ) -> Vec<u32> {
        let nodes = window_nodes(model, window);
        (running.iter())
            .copied()
            .filter(|&j| {
                self.allocation(j)
                    .is_some_and(|a| a.nodes.iter().any(|n| nodes.binary_search(n).is_ok()))
            })
            .collect()
    }

    /// Job `job` ends and gives back what it held; returns how many of its nodes it leaves
    /// idle.
    pub(crate) fn end(&mut self, model: &SharedNodes, job: u32) -> u32 {
        let Some(allocation) = self.held[job as usize].take() else {
            return 0;
        };
        let given = self.recount(model, &allocation, true, |usage| {
            usage.give_back(&allocation);
            Ok(())
        });
        debug_assert!(given.is_ok());
        self.busy_cpus -= allocation.total_cpus();
        self.version += 1;
        self.stamp = SERIALS.fetch_add(1, Ordering::Relaxed);
        (allocation.nodes.iter())
            .filter(|&&n| self.usage.idle(n))
            .count() as u32
    }
}

impl SharedState {
    /// Changes the usage on `allocation`'s nodes by `change` (a take, or a give back when
    /// `gained`; a refused change changes nothing), keeping the tallies: an exclusive job
    /// changes whether its nodes count at all, so they are counted out and in again; any other
    /// moves each node once.
    fn recount(
        &mut self,
        model: &SharedNodes,
        allocation: &Allocation,
        gained: bool,
        change: impl FnOnce(&mut Usage) -> Result<()>,
    ) -> Result<()> {
        if allocation.exclusive {
            for &node in &allocation.nodes {
                self.tallies.count(model, node, &self.usage, false);
            }
            let done = change(&mut self.usage);
            for &node in &allocation.nodes {
                self.tallies.count(model, node, &self.usage, true);
            }
            return done;
        }
        let before: Vec<NodeFree> = (allocation.nodes.iter())
            .map(|&n| self.usage.node(n))
            .collect();
        change(&mut self.usage)?;
        let k = model.resources.gres_names().len();
        for (i, (&node, &was)) in allocation.nodes.iter().zip(&before).enumerate() {
            let (units, usage) = (&allocation.gres[i * k..], &self.usage);
            let gres = |g: usize| {
                let now = usage.free_gres(node, g as u32);
                (
                    if gained {
                        now - units[g]
                    } else {
                        now + units[g]
                    },
                    now,
                )
            };
            let now = usage.node(node);
            self.tallies.shift(model, node, was, now, gres);
        }
        Ok(())
    }
}

/// The nodes a downtime window takes down on shared nodes, ascending: its node range, its
/// partition's nodes (node set), or every node.
pub fn window_nodes(model: &SharedNodes, window: &Downtime) -> Vec<u32> {
    match (window.range, window.partition) {
        (Some((first, end)), _) => (first..end).collect(),
        (None, Some(p)) => {
            let mut nodes = model.sets[p as usize].nodes.clone();
            nodes.sort_unstable();
            nodes
        }
        (None, None) => (0..model.resources.nodes()).collect(),
    }
}

/// [`window_nodes`] as bits (`bits[n / 64] >> (n % 64)`).
pub fn window_bits(model: &SharedNodes, window: &Downtime) -> Vec<u64> {
    let mut bits = vec![0u64; (model.resources.nodes() as usize).div_ceil(64)];
    for n in window_nodes(model, window) {
        bits[n as usize / 64] |= 1 << (n % 64);
    }
    bits
}

/// Checks that `allocation` is what job `job` asked for on nodes of set `set`: its CPUs
/// (all of each node when exclusive), its memory per node or per CPU, its generic resources
/// on each node, its node count.
pub fn check_allocation(
    model: &SharedNodes,
    set: u32,
    job: u32,
    id: i64,
    allocation: &Allocation,
) -> Result<()> {
    let bad = |what: &str| Err(CoreError::decision(format!("job {id}: {what}")));
    let Some(nodes_set) = model.sets.get(set as usize) else {
        return bad("its start names no node set");
    };
    let request = &model.requests[job as usize];
    let resources = &model.resources;
    let kinds = resources.gres_names().len();
    let n = allocation.nodes.len();
    if n == 0
        || allocation.cpus.len() != n
        || allocation.memory.len() != n
        || allocation.gres.len() != n * kinds
        || allocation.nodes.windows(2).any(|w| w[0] >= w[1])
    {
        return bad("its allocation is not one entry per distinct node, ascending");
    }
    if (allocation.nodes.iter()).any(|node| nodes_set.nodes.binary_search(node).is_err()) {
        return bad("it would run on nodes outside its partition");
    }
    if request.nodes.is_some_and(|k| k as usize != n) {
        return bad("it would run on another number of nodes than it asked for");
    }
    let exclusive = request.exclusive
        || nodes_set.limits.exclusive
        || resources.sharing == crate::model::Sharing::Whole;
    if allocation.exclusive != exclusive {
        return bad("its allocation is not exclusive as its request says");
    }
    let cpus = allocation.total_cpus();
    if exclusive {
        let all: u64 = (allocation.nodes.iter())
            .map(|&node| u64::from(resources.shape(node).cpus))
            .sum();
        if cpus != all {
            return bad("an exclusive job takes every CPU of its nodes");
        }
    } else if cpus < request.cpus() || allocation.cpus.contains(&0) {
        return bad("it would get fewer CPUs than it asked for");
    }
    for i in 0..n {
        let node = allocation.nodes[i];
        let shape = resources.shape(node);
        if allocation.memory[i] != memory_charge(resources, request, node, allocation.cpus[i]) {
            return bad("its memory on a node is not what it asked for");
        }
        let gres = &allocation.gres[i * kinds..(i + 1) * kinds];
        if exclusive {
            if gres != &shape.gres[..] {
                return bad("an exclusive job takes every generic resource of its nodes");
            }
            continue;
        }
        let mut left: Vec<u32> = gres.to_vec();
        if !draw_gres(request, &mut left, &mut vec![0; kinds]) {
            return bad("it would get fewer generic resources than it asked for");
        }
        if left.iter().any(|&l| l > 0) {
            return bad("it would get generic resources it did not ask for");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{GresRequest, Memory, NodeSet, NodeShape, Request, Resources, Sharing};
    use crate::packing::{select, NodeLimits, Tallies};

    /// The tallies kept start by start and end by end are those counted afresh from the
    /// nodes, whatever starts and ends (random requests on two node sets, GPUs on some).
    #[test]
    fn tallies_kept_incrementally_equal_tallies_counted_afresh() {
        let shape = |cpus, gpus| NodeShape {
            cpus,
            threads_per_core: 1,
            memory: 8000,
            gres: vec![gpus, 1].into(),
            weight: 1,
        };
        // (two kinds: a node's units of each are found by its place in an allocation)
        let resources = Resources::new(
            Sharing::CoreMemory,
            vec!["gpu".into(), "fpga".into()],
            vec![shape(4, 0), shape(8, 2)],
            vec![0, 0, 0, 1, 1],
        )
        .unwrap();
        let mut draws = 12345u64;
        let mut draw = |n: u64| {
            draws ^= draws << 13;
            draws ^= draws >> 7;
            draws ^= draws << 17;
            draws % n
        };
        let requests: Vec<Request> = (0..200)
            .map(|_| Request {
                exclusive: draw(8) == 0,
                gres: match draw(4) {
                    0 | 1 => vec![GresRequest {
                        kinds: vec![draw(2) as u32].into(),
                        count: 1,
                    }],
                    _ => Vec::new(),
                },
                ..Request::tasks(1 + draw(6) as u32, Memory::PerCpu(1 + draw(2000)))
            })
            .collect();
        let sets = vec![
            NodeSet {
                nodes: vec![0, 1, 2, 3, 4],
                limits: NodeLimits::default(),
                max_mem_per_node: None,
            },
            NodeSet {
                nodes: vec![3, 4],
                limits: NodeLimits::default(),
                max_mem_per_node: None,
            },
        ];
        let model = SharedNodes::new(resources, requests, sets).unwrap();
        let mut state = SharedState::new(&model, 200);
        let mut running = Vec::new();
        for job in 0..200u32 {
            if !running.is_empty() && draw(3) == 0 {
                let k = draw(running.len() as u64) as usize;
                state.end(&model, running.swap_remove(k));
            }
            let set = &model.sets[draw(2) as usize];
            let request = &model.requests[job as usize];
            if let Some(a) = select(
                &model.resources,
                state.usage(),
                &set.nodes,
                request,
                set.limits,
            ) {
                state.start(&model, job, a).unwrap();
                running.push(job);
            }
            assert_eq!(
                state.tallies(),
                &Tallies::new(&model, state.usage()),
                "job {job}"
            );
        }
        assert!(running.len() > 3, "the nodes were busy: {}", running.len());
    }
}
