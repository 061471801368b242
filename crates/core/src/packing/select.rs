//! Slurm 22.05's `select/cons_tres` node selection, for one job on the nodes it may use now:
//! which nodes, and how many CPUs, how much memory and which generic resources on each.
//!
//! The rule, read from Slurm's source (docs/slurm/cons_tres-22.05.md, with file:function
//! citations, and docs/semantics.md "Resources inside nodes"):
//! 1. each candidate node offers the CPUs the job may use there: its free CPUs (all of an
//!    idle node for an exclusive job), cut to what free memory feeds at the job's memory per
//!    CPU, and none when it lacks the job's memory per node or generic resources, or fewer
//!    CPUs than the job's tasks per node need (`_allocate_sc`, `can_job_run_on_node`); a job
//!    with generic resources is offered no more than its tasks there take where its request
//!    fixes them (`_select_cores`, `gres_select_filter_sock_core`);
//! 2. the usable nodes, in index order, form runs of consecutive nodes of equal weight; the
//!    lowest weight wins, then among runs of equal weight the first big enough run with the
//!    fewest CPUs, else the biggest (`_eval_nodes`);
//! 3. inside the run, a job needing at most one more node takes the node with the fewest
//!    CPUs that covers it; else nodes in index order, each capped to what is still needed
//!    (`_cpus_to_use`); the next best run if more is needed;
//! 4. tasks go one per node, then round robin up to each node's share (`dist_tasks`); the job
//!    gets tasks x CPUs per task, memory per node or per CPU, and its generic resources by
//!    kind in order.

use crate::model::{Memory, Request, Resources, Sharing};
use crate::packing::free::Free;
use crate::packing::usage::Allocation;

/// A partition's rules on a job's placement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeLimits {
    /// `MinNodes`.
    pub min_nodes: u32,
    /// `MaxNodes` (`u32::MAX`: none).
    pub max_nodes: u32,
    /// `OverSubscribe=EXCLUSIVE`: every job takes whole nodes.
    pub exclusive: bool,
}

impl Default for NodeLimits {
    fn default() -> Self {
        NodeLimits {
            min_nodes: 1,
            max_nodes: u32::MAX,
            exclusive: false,
        }
    }
}

/// Slurm's cap on nodes a job without `-N` may spread over.
const MAX_SPREAD: u32 = 500_000;

/// A job's node counts and per-node minimum, as Slurm derives them from its request.
#[derive(Debug, Clone, Copy)]
struct Counts {
    min_nodes: u32,
    max_nodes: u32,
    /// CPUs every node must offer: its minimum tasks x CPUs per task.
    need: u32,
}

fn counts(request: &Request, limits: NodeLimits) -> Counts {
    let mut min_nodes = request.nodes.unwrap_or(1).max(limits.min_nodes);
    let mut max_nodes = match request.nodes {
        Some(k) => k,
        None => limits.max_nodes.min(MAX_SPREAD),
    };
    if request.tasks_per_node.is_none() && max_nodes > request.tasks {
        max_nodes = request.tasks.max(min_nodes);
    }
    if let Some(t) = request.tasks_per_node {
        min_nodes = min_nodes.max(request.tasks.div_ceil(t));
    }
    let tasks_per_node =
        request
            .tasks_per_node
            .unwrap_or(if max_nodes == 1 { request.tasks } else { 1 });
    Counts {
        min_nodes,
        max_nodes,
        need: tasks_per_node.saturating_mul(request.cpus_per_task),
    }
}

/// The CPUs node `node` offers the job now (0: it cannot use the node).
pub(crate) fn offer(
    resources: &Resources,
    usage: &impl Free,
    node: u32,
    request: &Request,
    exclusive: bool,
    need: u32,
) -> u32 {
    let free = usage.node(node);
    if free.whole || (exclusive && free.jobs > 0) {
        return 0;
    }
    let shape = resources.shape(node);
    let mut cpus = free.cpus;
    for gres in &request.gres {
        let free: u64 = (gres.kinds.iter())
            .map(|&k| u64::from(usage.gres(node, k)))
            .sum();
        if free < u64::from(gres.count) {
            return 0;
        }
    }
    let sharing = resources.sharing;
    if sharing.memory() {
        let free = free.memory;
        match request.memory {
            Memory::Whole if free < shape.memory => return 0,
            Memory::PerNode(m) if free < m => return 0,
            Memory::PerCpu(m) => {
                if free < m.saturating_mul(u64::from(need)) {
                    return 0;
                }
                if !exclusive && m > 0 {
                    let step = resources.cpu_step(node);
                    let fed = (free / m).min(u64::from(cpus)) as u32;
                    cpus = fed - fed % step;
                }
            }
            _ => {}
        }
    }
    if exclusive {
        return shape.cpus;
    }
    if !request.gres.is_empty() {
        // a job with generic resources uses no more CPUs of a node than its tasks there
        // take, where they are fixed (`gres_select_filter_sock_core`'s last cap)
        if let Some(tasks) = fixed_tasks_per_node(request) {
            cpus = cpus.min(tasks.saturating_mul(request.cpus_per_task));
        }
    }
    cpus -= cpus % request.cpus_per_task;
    if cpus < need.max(1) {
        0
    } else {
        cpus
    }
}

/// The tasks job `request` runs on each of its nodes when its request fixes them, as Slurm's
/// `_select_cores` reads it: `--ntasks-per-node`; all of them on a job of one node (`-N 1`);
/// one for a job of one task or of as many tasks as nodes; `None` otherwise (as many as the
/// node's CPUs take).
fn fixed_tasks_per_node(request: &Request) -> Option<u32> {
    if let Some(t) = request.tasks_per_node {
        return Some(t);
    }
    match request.nodes {
        Some(1) => Some(request.tasks),
        _ if request.tasks == 1 || request.nodes == Some(request.tasks) => Some(1),
        _ => None,
    }
}

/// The job takes whole nodes: it asks for them, its partition gives only whole nodes, or no
/// node is shared.
#[inline]
pub(crate) fn is_exclusive(resources: &Resources, request: &Request, limits: NodeLimits) -> bool {
    request.exclusive || limits.exclusive || resources.sharing == Sharing::Whole
}

/// The fewest and most nodes `request` may take under `limits`, and the CPUs each must
/// offer.
pub(crate) fn node_needs(request: &Request, limits: NodeLimits) -> (u32, u32, u32) {
    let c = counts(request, limits);
    (c.min_nodes, c.max_nodes, c.need)
}

/// A run of consecutive usable candidates of equal weight: `offers[first..end]`.
#[derive(Debug, Clone, Copy)]
struct Run {
    first: usize,
    end: usize,
    cpus: u64,
    weight: u32,
}

/// Whether `run` replaces `best` as the run to take nodes from (`_eval_nodes`): a lower
/// weight; at equal weight a big enough run over one that is not, the smaller of two big
/// enough runs, and, as Slurm does, a bigger run that is not big enough over any.
fn better(run: &Run, sufficient: bool, best: &Run, best_sufficient: bool) -> bool {
    if run.weight != best.weight {
        return run.weight < best.weight;
    }
    if sufficient {
        !best_sufficient || run.cpus < best.cpus
    } else {
        run.cpus > best.cpus
    }
}

/// The nodes and resources job `request` gets now on `candidates` (node indices, ascending:
/// the up nodes of its partition), or `None` when it does not fit now.
pub fn select(
    resources: &Resources,
    usage: &impl Free,
    candidates: &[u32],
    request: &Request,
    limits: NodeLimits,
) -> Option<Allocation> {
    let exclusive = is_exclusive(resources, request, limits);
    let c = counts(request, limits);
    if c.min_nodes > c.max_nodes {
        return None;
    }
    let offers: Vec<u32> = (candidates.iter())
        .map(|&n| offer(resources, usage, n, request, exclusive, c.need))
        .collect();
    let mut runs: Vec<Run> = Vec::new();
    for (i, &cpus) in offers.iter().enumerate() {
        if cpus == 0 {
            continue;
        }
        let weight = resources.shape(candidates[i]).weight;
        match runs.last_mut() {
            Some(run)
                if run.end == i
                    && candidates[i - 1] + 1 == candidates[i]
                    && run.weight == weight =>
            {
                run.end = i + 1;
                run.cpus += u64::from(cpus);
            }
            _ => runs.push(Run {
                first: i,
                end: i + 1,
                cpus: u64::from(cpus),
                weight,
            }),
        }
    }
    let per_core = |node: u32| i64::from(resources.cpu_step(node));
    let mut rem_cpus = request.cpus() as i64;
    let mut rem_max_cpus = rem_cpus;
    let mut rem_nodes = i64::from(c.min_nodes);
    let mut min_rem_nodes = i64::from(c.min_nodes);
    let mut max_nodes = c.max_nodes;
    // (index into candidates, CPUs given)
    let mut chosen: Vec<(usize, u32)> = Vec::new();
    let mut used = vec![false; runs.len()];
    let mut done = false;
    while max_nodes > 0 {
        let sufficient =
            |run: &Run| run.cpus as i64 >= rem_cpus && (run.end - run.first) as i64 >= rem_nodes;
        let mut best: Option<usize> = None;
        for (r, run) in runs.iter().enumerate() {
            if used[r] {
                continue;
            }
            let replace = match best {
                None => true,
                Some(b) => better(run, sufficient(run), &runs[b], sufficient(&runs[b])),
            };
            if replace {
                best = Some(r);
            }
        }
        let Some(b) = best else { break };
        let run = runs[b];
        let mut range = run.first..run.end;
        if rem_nodes <= 1 {
            // best fit: the node with the fewest CPUs that covers the rest (first on ties)
            let mut fit: Option<usize> = None;
            for i in run.first..run.end {
                let a = i64::from(offers[i]);
                if a >= rem_cpus && fit.is_none_or(|f| a < i64::from(offers[f])) {
                    fit = Some(i);
                    if a == rem_cpus {
                        break;
                    }
                }
            }
            if let Some(f) = fit {
                range = f..f + 1;
            }
        }
        for i in range {
            if max_nodes == 0 || (rem_nodes <= 0 && rem_cpus <= 0) {
                break;
            }
            let a = offers[i];
            if max_nodes == 1 && i64::from(a) < rem_cpus {
                continue;
            }
            let give = if exclusive {
                a
            } else {
                let node = candidates[i];
                let limit = rem_max_cpus - (min_rem_nodes - 1).max(0) * per_core(node);
                if i64::from(a) > limit {
                    let step = per_core(node);
                    let capped = limit.max(i64::from(c.need));
                    // (whole cores: round up, never past what the node offers)
                    let capped = (capped + step - 1) / step * step;
                    capped.min(i64::from(a)) as u32
                } else {
                    a
                }
            };
            chosen.push((i, give));
            rem_cpus -= i64::from(give);
            rem_max_cpus -= i64::from(give);
            rem_nodes -= 1;
            min_rem_nodes -= 1;
            max_nodes -= 1;
        }
        used[b] = true;
        if rem_nodes <= 0 && rem_cpus <= 0 {
            done = true;
            break;
        }
    }
    // (the last run may end short of nodes once every CPU is found)
    let enough = done || (rem_cpus <= 0 && chosen.len() as u32 >= c.min_nodes);
    if !enough {
        return None;
    }
    chosen.sort_unstable_by_key(|&(i, _)| i);
    allocate(resources, usage, candidates, request, exclusive, &chosen)
}

/// Deals the job's tasks over its chosen nodes and charges their resources.
fn allocate(
    resources: &Resources,
    usage: &impl Free,
    candidates: &[u32],
    request: &Request,
    exclusive: bool,
    chosen: &[(usize, u32)],
) -> Option<Allocation> {
    let cpt = request.cpus_per_task;
    let caps: Vec<u32> = (chosen.iter())
        .map(|&(_, give)| {
            let cap = give / cpt;
            request.tasks_per_node.map_or(cap, |t| cap.min(t))
        })
        .collect();
    let mut tasks = vec![0u32; chosen.len()];
    let mut left = request.tasks;
    for (t, &cap) in tasks.iter_mut().zip(&caps) {
        if left > 0 && cap > 0 {
            *t = 1;
            left -= 1;
        }
    }
    while left > 0 {
        let mut dealt = false;
        for (t, &cap) in tasks.iter_mut().zip(&caps) {
            if left > 0 && *t < cap {
                *t += 1;
                left -= 1;
                dealt = true;
            }
        }
        if !dealt {
            return None;
        }
    }
    let kinds = resources.gres_names().len();
    let mut allocation = Allocation {
        exclusive,
        ..Allocation::default()
    };
    for (j, &(i, _)) in chosen.iter().enumerate() {
        let node = candidates[i];
        let shape = resources.shape(node);
        let cpus = if exclusive {
            shape.cpus
        } else {
            let step = resources.cpu_step(node);
            (tasks[j] * cpt).div_ceil(step) * step
        };
        let memory = memory_charge(resources, request, node, cpus);
        let mut gres: Vec<u32> = (0..kinds as u32).map(|k| usage.gres(node, k)).collect();
        let mut taken = vec![0u32; kinds];
        if exclusive {
            taken.copy_from_slice(&gres);
        } else if !draw_gres(request, &mut gres, &mut taken) {
            return None;
        }
        allocation.nodes.push(node);
        allocation.cpus.push(cpus);
        allocation.memory.push(memory);
        allocation.gres.extend_from_slice(&taken);
    }
    Some(allocation)
}

/// The memory (MB) job `request` is charged on node `node` where it holds `cpus` CPUs: per
/// node, per CPU (at most the node's), or the whole node; 0 where memory is not a resource.
pub fn memory_charge(resources: &Resources, request: &Request, node: u32, cpus: u32) -> u64 {
    if !resources.sharing.memory() {
        return 0;
    }
    let shape = resources.shape(node);
    match request.memory {
        Memory::PerNode(m) => m,
        Memory::PerCpu(m) => m.saturating_mul(u64::from(cpus)).min(shape.memory),
        Memory::Whole => shape.memory,
    }
}

/// Draws the generic resources job `request` asks for on one node from `free` (units by
/// kind, each request from its kinds in order) into `taken`; `false` when some are missing.
pub fn draw_gres(request: &Request, free: &mut [u32], taken: &mut [u32]) -> bool {
    for want in &request.gres {
        let mut left = want.count;
        for &k in want.kinds.iter() {
            let t = left.min(free[k as usize]);
            free[k as usize] -= t;
            taken[k as usize] += t;
            left -= t;
        }
        if left > 0 {
            return false;
        }
    }
    true
}
