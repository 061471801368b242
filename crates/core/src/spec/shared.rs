//! Jobs sharing nodes as names and columns: what a caller hands the engine of a platform
//! whose nodes jobs share (DESIGN.md §3.8), and the engine's model built from it.

use crate::error::{CoreError, Result};
use crate::model::{
    GresRequest, Memory, NodeSet, NodeShape, Request, Resources, SharedNodes, Sharing,
};
use crate::packing::NodeLimits;

/// Jobs sharing nodes, as names and columns: the nodes' shapes, the node sets (the site's
/// partitions in order, or one of every node) and each job's request.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SharedSpec {
    /// A name of `Sharing::NAMES`.
    pub sharing: String,
    /// Generic resource kinds (`gpu`, `gpu:a100`), the order of `shape_gres`.
    pub gres_names: Vec<String>,
    pub shape_cpus: Vec<u32>,
    pub shape_threads_per_core: Vec<u32>,
    pub shape_memory: Vec<u64>,
    /// `shape_gres[s * kinds + k]`.
    pub shape_gres: Vec<u32>,
    pub shape_weight: Vec<u32>,
    /// The shape of each node.
    pub node_shape: Vec<u32>,
    /// Set `s` is `set_nodes[set_offsets[s]..set_offsets[s + 1]]`.
    pub set_offsets: Vec<u32>,
    pub set_nodes: Vec<u32>,
    pub set_min_nodes: Vec<u32>,
    /// `u32::MAX`: no limit.
    pub set_max_nodes: Vec<u32>,
    pub set_exclusive: Vec<bool>,
    /// `MaxMemPerNode` in MB (0: none); empty: none anywhere.
    pub set_max_mem_per_node: Vec<u64>,
    /// Per job: `-N` (0: not given), tasks, CPUs per task, the memory's kind (0 per node, 1
    /// per CPU, 2 the whole node) and MB, `--exclusive`.
    pub nodes: Vec<u32>,
    pub tasks: Vec<u32>,
    pub cpus_per_task: Vec<u32>,
    pub memory_kind: Vec<u8>,
    pub memory: Vec<u64>,
    pub exclusive: Vec<bool>,
    /// Job `j` asks, per node, `gres_count[i]` of `gres_request_names[gres_name[i]]` for `i`
    /// in `gres_offsets[j]..gres_offsets[j + 1]`.
    pub gres_request_names: Vec<String>,
    pub gres_offsets: Vec<u32>,
    pub gres_name: Vec<u32>,
    pub gres_count: Vec<u32>,
}

impl SharedSpec {
    /// The engine's model of `jobs` jobs sharing the nodes.
    pub fn build(self, jobs: usize) -> Result<SharedNodes> {
        let sharing = Sharing::from_name(&self.sharing).ok_or_else(|| {
            CoreError::input(format!(
                "unknown sharing {:?} ({})",
                self.sharing,
                Sharing::NAMES.join(", ")
            ))
        })?;
        let kinds = self.gres_names.len();
        let shapes = self.shape_cpus.len();
        let shape_columns = [
            self.shape_threads_per_core.len(),
            self.shape_memory.len(),
            self.shape_weight.len(),
        ];
        if shape_columns.iter().any(|&l| l != shapes) || self.shape_gres.len() != shapes * kinds {
            return Err(CoreError::input(
                "node shape columns have different lengths",
            ));
        }
        let shape_list = (0..shapes)
            .map(|s| NodeShape {
                cpus: self.shape_cpus[s],
                threads_per_core: self.shape_threads_per_core[s],
                memory: self.shape_memory[s],
                gres: self.shape_gres[s * kinds..(s + 1) * kinds].into(),
                weight: self.shape_weight[s],
            })
            .collect();
        let resources = Resources::new(sharing, self.gres_names, shape_list, self.node_shape)?;
        let sets = self.set_min_nodes.len();
        let set_columns = [self.set_max_nodes.len(), self.set_exclusive.len()];
        let caps = &self.set_max_mem_per_node;
        if set_columns.iter().any(|&l| l != sets)
            || !(caps.is_empty() || caps.len() == sets)
            || !csr_ok(&self.set_offsets, sets, self.set_nodes.len())
        {
            return Err(CoreError::input("node set columns have different lengths"));
        }
        let set_list = (0..sets)
            .map(|s| NodeSet {
                nodes: self.set_nodes
                    [self.set_offsets[s] as usize..self.set_offsets[s + 1] as usize]
                    .to_vec(),
                limits: NodeLimits {
                    min_nodes: self.set_min_nodes[s],
                    max_nodes: self.set_max_nodes[s],
                    exclusive: self.set_exclusive[s],
                },
                max_mem_per_node: caps.get(s).copied().filter(|&m| m > 0),
            })
            .collect();
        let job_columns = [
            self.tasks.len(),
            self.cpus_per_task.len(),
            self.memory_kind.len(),
            self.memory.len(),
            self.exclusive.len(),
        ];
        if self.nodes.len() != jobs
            || job_columns.iter().any(|&l| l != jobs)
            || !csr_ok(&self.gres_offsets, jobs, self.gres_name.len())
            || self.gres_count.len() != self.gres_name.len()
        {
            return Err(CoreError::input("request columns have different lengths"));
        }
        let mut drawn = Vec::with_capacity(self.gres_request_names.len());
        for name in &self.gres_request_names {
            let kinds = resources.gres_kinds(name);
            if kinds.is_empty() {
                return Err(CoreError::input(format!(
                    "jobs ask for generic resource {name:?}, which no node has"
                )));
            }
            drawn.push(kinds.into_boxed_slice());
        }
        let mut requests = Vec::with_capacity(jobs);
        for j in 0..jobs {
            let memory = match self.memory_kind[j] {
                0 => Memory::PerNode(self.memory[j]),
                1 => Memory::PerCpu(self.memory[j]),
                _ => Memory::Whole,
            };
            let mut gres = Vec::new();
            for i in self.gres_offsets[j] as usize..self.gres_offsets[j + 1] as usize {
                let kinds = drawn.get(self.gres_name[i] as usize).ok_or_else(|| {
                    CoreError::input(format!("job index {j} names an unknown resource"))
                })?;
                gres.push(GresRequest {
                    kinds: kinds.clone(),
                    count: self.gres_count[i],
                });
            }
            requests.push(Request {
                nodes: (self.nodes[j] > 0).then_some(self.nodes[j]),
                tasks: self.tasks[j],
                cpus_per_task: self.cpus_per_task[j],
                tasks_per_node: None,
                memory,
                gres,
                exclusive: self.exclusive[j],
            });
        }
        SharedNodes::new(resources, requests, set_list)
    }
}

/// A CSR offsets column for `rows` rows over `len` entries: `rows + 1` ascending offsets
/// from 0 to `len`.
fn csr_ok(offsets: &[u32], rows: usize, len: usize) -> bool {
    offsets.len() == rows + 1
        && offsets.first() == Some(&0)
        && offsets.last().map(|&l| l as usize) == Some(len)
        && offsets.windows(2).all(|w| w[0] <= w[1])
}
