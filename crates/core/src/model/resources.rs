//! Resources inside nodes (DESIGN.md §3.8): what each node has (CPUs as Slurm counts them,
//! memory, generic resources such as GPUs, a weight), how a site shares its nodes, and what a
//! job asks for. The placement rule that reads them is `packing`.

use crate::error::{CoreError, Result};

/// How jobs share nodes: Slurm's `SelectType` and `SelectTypeParameters`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sharing {
    /// Every job gets whole nodes (`select/linear`, or a platform that says nothing).
    #[default]
    Whole,
    /// `cons_tres` with `CR_CPU`: CPUs are consumable, memory is not.
    Cpu,
    /// `CR_Core`: whole cores are consumable (a job's CPUs on a node are a multiple of the
    /// node's threads per core), memory is not.
    Core,
    /// `CR_CPU_Memory`.
    CpuMemory,
    /// `CR_Core_Memory`.
    CoreMemory,
}

impl Sharing {
    /// The names, in the order of the variants.
    pub const NAMES: [&'static str; 5] = [
        "whole",
        "cr_cpu",
        "cr_core",
        "cr_cpu_memory",
        "cr_core_memory",
    ];

    pub fn from_name(name: &str) -> Option<Self> {
        let i = Self::NAMES.iter().position(|n| *n == name)?;
        Some(
            [
                Sharing::Whole,
                Sharing::Cpu,
                Sharing::Core,
                Sharing::CpuMemory,
                Sharing::CoreMemory,
            ][i],
        )
    }

    /// Memory is a consumable resource.
    pub fn memory(self) -> bool {
        matches!(self, Sharing::CpuMemory | Sharing::CoreMemory)
    }

    /// CPUs are allocated by whole cores.
    pub fn by_core(self) -> bool {
        matches!(self, Sharing::Core | Sharing::CoreMemory)
    }
}

/// What one kind of node has, as Slurm counts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeShape {
    /// CPUs a job may use: Slurm's `CPUs` less `CoreSpecCount` cores.
    pub cpus: u32,
    /// CPUs per core (1 unless `CPUs` counts hardware threads).
    pub threads_per_core: u32,
    /// Memory in MB a job may use: `RealMemory` less `MemSpecLimit`.
    pub memory: u64,
    /// Count of each generic resource kind (`Resources::gres_names` order).
    pub gres: Box<[u32]>,
    /// Slurm's `Weight`: nodes of the lowest weight are used first.
    pub weight: u32,
}

/// The resources of every node of a machine.
#[derive(Debug, Clone, PartialEq)]
pub struct Resources {
    pub sharing: Sharing,
    /// Generic resource kinds, `name` or `name:type` (`gpu`, `gpu:a100`): a node's count of
    /// a typed kind also counts under its name.
    gres_names: Vec<String>,
    shapes: Vec<NodeShape>,
    /// The shape of each node.
    node_shape: Vec<u32>,
}

/// The most CPUs, or units of one generic resource, a node may have.
pub const MAX_PER_NODE: u32 = 1 << 20;
/// The most memory (MB) a node may have: 2^40 MB, a exabyte.
pub const MAX_MEMORY: u64 = 1 << 40;

impl Resources {
    /// Nodes of shapes `shapes`, node `i` of shape `node_shape[i]`, with generic resource
    /// kinds `gres_names` (every shape lists one count per kind).
    pub fn new(
        sharing: Sharing,
        gres_names: Vec<String>,
        shapes: Vec<NodeShape>,
        node_shape: Vec<u32>,
    ) -> Result<Self> {
        for (k, name) in gres_names.iter().enumerate() {
            if name.is_empty() || gres_names[..k].contains(name) {
                return Err(CoreError::input(format!(
                    "generic resource {name:?} is empty or named twice"
                )));
            }
        }
        for (s, shape) in shapes.iter().enumerate() {
            let bad = |what: String| CoreError::input(format!("node shape {s}: {what}"));
            if shape.cpus == 0 || shape.cpus > MAX_PER_NODE {
                return Err(bad(format!("{} CPUs (1 to {MAX_PER_NODE})", shape.cpus)));
            }
            if shape.threads_per_core == 0 || shape.cpus % shape.threads_per_core != 0 {
                return Err(bad(format!(
                    "{} CPUs are not whole cores of {} threads",
                    shape.cpus, shape.threads_per_core
                )));
            }
            if shape.memory > MAX_MEMORY {
                return Err(bad(format!("{} MB of memory is over 2^40", shape.memory)));
            }
            if shape.gres.len() != gres_names.len() || shape.gres.iter().any(|&g| g > MAX_PER_NODE)
            {
                return Err(bad("one count of at most 2^20 per generic resource".into()));
            }
        }
        if let Some(&s) = node_shape.iter().find(|&&s| s as usize >= shapes.len()) {
            return Err(CoreError::input(format!("node shape {s} is not defined")));
        }
        Ok(Resources {
            sharing,
            gres_names,
            shapes,
            node_shape,
        })
    }

    pub fn nodes(&self) -> u32 {
        self.node_shape.len() as u32
    }

    #[inline]
    pub fn shape(&self, node: u32) -> &NodeShape {
        &self.shapes[self.node_shape[node as usize] as usize]
    }

    /// The CPUs a job's count on node `node` is a multiple of: whole cores under CR_Core,
    /// single CPUs otherwise.
    #[inline]
    pub fn cpu_step(&self, node: u32) -> u32 {
        if self.sharing.by_core() {
            self.shape(node).threads_per_core
        } else {
            1
        }
    }

    pub fn gres_names(&self) -> &[String] {
        &self.gres_names
    }

    /// The generic resource kinds a request for `name` (`gpu` or `gpu:a100`) may draw from:
    /// the kind itself, and for an untyped name every typed kind of that name.
    pub fn gres_kinds(&self, name: &str) -> Vec<u32> {
        let prefix = format!("{name}:");
        (0..self.gres_names.len() as u32)
            .filter(|&k| {
                let kind = &self.gres_names[k as usize];
                kind == name || (!name.contains(':') && kind.starts_with(&prefix))
            })
            .collect()
    }
}

/// The memory a job asks for on each of its nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Memory {
    /// MB per node (`--mem`).
    PerNode(u64),
    /// MB per allocated CPU (`--mem-per-cpu`).
    PerCpu(u64),
    /// All the memory of each node: a job that gives none on a site without a default (Slurm
    /// reads `--mem=0` and no request alike). It only goes to nodes with no memory allocated.
    Whole,
}

/// One generic resource a job asks for on each node: `count` units drawn from `kinds`
/// (`Resources::gres_kinds`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GresRequest {
    pub kinds: Box<[u32]>,
    pub count: u32,
}

/// What a job asks for, as Slurm's `sbatch` options say it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Request {
    /// `-N`: the nodes it needs (`None`: as few as its tasks take, from 1).
    pub nodes: Option<u32>,
    /// `-n`: tasks.
    pub tasks: u32,
    /// `-c`: CPUs per task.
    pub cpus_per_task: u32,
    /// `--ntasks-per-node`.
    pub tasks_per_node: Option<u32>,
    pub memory: Memory,
    /// Per node (`--gres`).
    pub gres: Vec<GresRequest>,
    /// `--exclusive`: whole idle nodes (every CPU and generic resource, the memory asked).
    pub exclusive: bool,
}

impl Request {
    /// `tasks` one-CPU tasks on as few nodes as they fit, with `memory`.
    pub fn tasks(tasks: u32, memory: Memory) -> Self {
        Request {
            nodes: None,
            tasks,
            cpus_per_task: 1,
            tasks_per_node: None,
            memory,
            gres: Vec::new(),
            exclusive: false,
        }
    }

    /// The CPUs it asks for: tasks x CPUs per task.
    pub fn cpus(&self) -> u64 {
        u64::from(self.tasks) * u64::from(self.cpus_per_task)
    }

    /// Checks what placement relies on.
    pub fn check(&self) -> Result<()> {
        if self.tasks == 0 || self.cpus_per_task == 0 {
            return Err(CoreError::input("a job needs at least one task of one CPU"));
        }
        if self.nodes == Some(0) || self.tasks_per_node == Some(0) {
            return Err(CoreError::input(
                "a job needs at least one node and task per node",
            ));
        }
        if self.cpus() > u64::from(u32::MAX) {
            return Err(CoreError::input("a job asks for more than 2^32 CPUs"));
        }
        if let Some(nodes) = self.nodes {
            if nodes > self.tasks && self.tasks_per_node.is_none() {
                // (as sbatch: -N k -n t with t < k is refused)
                return Err(CoreError::input(format!(
                    "a job of {} tasks cannot use {nodes} nodes",
                    self.tasks
                )));
            }
        }
        Ok(())
    }
}

/// A set of nodes jobs start on together (a partition, or the whole machine), as placement
/// sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeSet {
    /// Its nodes, ascending.
    pub nodes: Vec<u32>,
    /// `MinNodes`, `MaxNodes`, `OverSubscribe=EXCLUSIVE`.
    pub limits: crate::packing::NodeLimits,
    /// `MaxMemPerNode` (MB; `None`: no cap): a job asking more memory per node is never
    /// started in the set.
    pub max_mem_per_node: Option<u64>,
}

/// Jobs sharing nodes: the nodes' resources, each job's request and the node sets (the site's
/// partitions in order, or one set of every node) jobs start on.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedNodes {
    pub resources: Resources,
    /// By job index.
    pub requests: Vec<Request>,
    pub sets: Vec<NodeSet>,
    /// The sets each job fits once they are empty, among those it may start in (the site's
    /// usable candidates, or the one set): `fit_sets[fit_offsets[j]..fit_offsets[j + 1]]`.
    /// Set by `Inputs::with_shared_nodes`; a job that fits none never starts.
    fit_offsets: Vec<u32>,
    fit_sets: Vec<u32>,
    /// The sets of node `n`: `node_set_list[node_set_offsets[n]..node_set_offsets[n + 1]]`.
    node_set_offsets: Vec<u32>,
    node_set_list: Vec<u32>,
    /// By job: its first candidate set refuses it for `MaxMemPerNode` (set by `screen`).
    capped: Vec<bool>,
    /// Each set's nodes as bits.
    set_bits: Vec<Vec<u64>>,
}

impl SharedNodes {
    /// Checks the requests and sets against `jobs` and the nodes.
    pub fn new(resources: Resources, requests: Vec<Request>, sets: Vec<NodeSet>) -> Result<Self> {
        let n = resources.nodes();
        for (j, request) in requests.iter().enumerate() {
            request
                .check()
                .map_err(|e| CoreError::input(format!("job index {j}: {e}")))?;
            let kinds = resources.gres_names().len() as u32;
            if request
                .gres
                .iter()
                .any(|g| g.kinds.iter().any(|&k| k >= kinds))
            {
                return Err(CoreError::input(format!(
                    "job index {j} asks for an undefined generic resource"
                )));
            }
        }
        if sets.is_empty() {
            return Err(CoreError::input("jobs share nodes of no node set"));
        }
        for set in &sets {
            if set.nodes.windows(2).any(|w| w[0] >= w[1])
                || set.nodes.last().is_some_and(|&l| l >= n)
            {
                return Err(CoreError::input(format!(
                    "a node set's nodes must be ascending and below {n}"
                )));
            }
        }
        let mut of_node: Vec<Vec<u32>> = vec![Vec::new(); n as usize];
        for (s, set) in sets.iter().enumerate() {
            for &node in &set.nodes {
                of_node[node as usize].push(s as u32);
            }
        }
        let mut node_set_offsets = Vec::with_capacity(n as usize + 1);
        node_set_offsets.push(0);
        let mut node_set_list = Vec::new();
        for list in of_node {
            node_set_list.extend(list);
            node_set_offsets.push(node_set_list.len() as u32);
        }
        let set_bits = (sets.iter())
            .map(|set| {
                let mut bits = vec![0u64; (n as usize).div_ceil(64)];
                for &node in &set.nodes {
                    bits[node as usize / 64] |= 1 << (node % 64);
                }
                bits
            })
            .collect();
        Ok(SharedNodes {
            resources,
            requests,
            sets,
            fit_offsets: Vec::new(),
            fit_sets: Vec::new(),
            node_set_offsets,
            node_set_list,
            set_bits,
            capped: Vec::new(),
        })
    }

    /// Keeps, of the sets each job may start in (`allowed(j)`), those it fits when they are
    /// empty (one placement per distinct request and set).
    pub fn screen<'a>(&mut self, allowed: impl Fn(u32) -> &'a [u32]) {
        use std::collections::HashMap;
        let empty = crate::packing::Usage::new(&self.resources);
        let mut memo: HashMap<(u32, &Request), bool> = HashMap::new();
        let mut offsets = Vec::with_capacity(self.requests.len() + 1);
        let mut fit = Vec::new();
        offsets.push(0);
        let mut capped = vec![false; self.requests.len()];
        for (j, request) in self.requests.iter().enumerate() {
            for (k, &s) in allowed(j as u32).iter().enumerate() {
                let set = &self.sets[s as usize];
                if set
                    .max_mem_per_node
                    .is_some_and(|cap| memory_per_node(request, set, &self.resources) > cap)
                {
                    // (its first candidate's reason is the job's)
                    capped[j] |= k == 0;
                    continue;
                }
                let fits = *memo.entry((s, request)).or_insert_with(|| {
                    crate::packing::select(&self.resources, &empty, &set.nodes, request, set.limits)
                        .is_some()
                });
                if fits {
                    fit.push(s);
                }
            }
            offsets.push(fit.len() as u32);
        }
        self.fit_offsets = offsets;
        self.fit_sets = fit;
        self.capped = capped;
    }

    /// Why job `job` fits none of its sets: over its first candidate's `MaxMemPerNode`, or
    /// larger than its partitions (`None` when it fits one).
    pub fn refusal(&self, job: u32) -> Option<crate::model::Rejection> {
        use crate::model::Rejection;
        if !self.fitting(job).is_empty() {
            return None;
        }
        Some(if self.capped.get(job as usize) == Some(&true) {
            Rejection::OverMaxMemPerNode
        } else {
            Rejection::LargerThanPartition
        })
    }

    /// Set `set`'s nodes as bits.
    #[inline]
    pub fn set_bits(&self, set: u32) -> &[u64] {
        &self.set_bits[set as usize]
    }

    /// The sets node `node` belongs to.
    #[inline]
    pub fn node_sets(&self, node: u32) -> &[u32] {
        let n = node as usize;
        &self.node_set_list
            [self.node_set_offsets[n] as usize..self.node_set_offsets[n + 1] as usize]
    }

    /// The sets job `job` may start in and fits (see [`SharedNodes::screen`]).
    #[inline]
    pub fn fitting(&self, job: u32) -> &[u32] {
        let j = job as usize;
        match self.fit_offsets.get(j..j + 2) {
            Some(&[a, b]) => &self.fit_sets[a as usize..b as usize],
            _ => &[],
        }
    }
}

/// The memory per node `request` asks in `set`, as Slurm compares it with `MaxMemPerNode`
/// (`job_mgr.c: _valid_pn_min_mem`): its memory per node; per CPU, times the CPUs it takes a
/// node (an exclusive job or partition: the set's fewest CPUs a node; else its tasks per node,
/// or its tasks over its `-N`, at least one, times its CPUs per task); 0 for a job asking a
/// whole node's memory (checked against nothing).
pub fn memory_per_node(request: &Request, set: &NodeSet, resources: &Resources) -> u64 {
    match request.memory {
        Memory::PerNode(m) => m,
        Memory::PerCpu(m) => {
            let cpus = if request.exclusive || set.limits.exclusive {
                (set.nodes.iter())
                    .map(|&n| resources.shape(n).cpus)
                    .min()
                    .unwrap_or(1)
            } else {
                let per_node = match request.nodes {
                    Some(n) if n > 0 => request.tasks.div_ceil(n),
                    _ => 1,
                };
                request.tasks_per_node.unwrap_or(1).max(per_node) * request.cpus_per_task
            };
            m.saturating_mul(u64::from(cpus))
        }
        Memory::Whole => 0,
    }
}
