//! A site: named partitions over the machine's nodes (they may overlap), with their limits,
//! priority tiers and states, and each job's candidate partitions.
//!
//! Nodes within a partition are interchangeable, so the engine counts them: the machine is cut
//! into *atoms*, the largest sets of nodes that belong to exactly the same partitions, and a
//! job's nodes are a count taken from the atoms of the partition it starts in. Partitions that
//! share an atom, or that one job names together, form a *component*: an independent scheduler
//! (EASY keeps one reservation per component; docs/semantics.md, "Partitions").

use crate::error::{CoreError, Result};
use crate::model::{Downtime, Held, JobTable, Rejection};

/// A partition's state, as Slurm's `State=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PartitionState {
    /// Jobs are accepted and run.
    #[default]
    Up,
    /// Jobs are accepted but none starts.
    Down,
    /// No new job is accepted; queued ones still run.
    Drain,
}

impl PartitionState {
    pub const NAMES: [&'static str; 3] = ["up", "down", "drain"];

    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "up" => Some(PartitionState::Up),
            "down" => Some(PartitionState::Down),
            "drain" => Some(PartitionState::Drain),
            _ => None,
        }
    }
}

/// What becomes of a job that no candidate partition accepts (over its limits, or drained).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OverLimits {
    /// Refused at submission and counted (Slurm's `EnforcePartLimits`).
    #[default]
    Reject,
    /// Left pending for ever, and reported as never started.
    Hold,
}

impl OverLimits {
    pub const NAMES: [&'static str; 2] = ["reject", "hold"];

    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "reject" => Some(OverLimits::Reject),
            "hold" => Some(OverLimits::Hold),
            _ => None,
        }
    }
}

/// A partition as a platform file describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct PartitionSpec {
    pub name: String,
    /// Half-open ranges of node indices `[start, end)` over the machine.
    pub ranges: Vec<(u32, u32)>,
    pub max_time: Option<f64>,
    pub max_nodes: Option<u32>,
    pub min_nodes: u32,
    /// Slurm's PriorityTier: jobs of a higher tier are considered first.
    pub tier: u32,
    pub state: PartitionState,
}

impl PartitionSpec {
    /// A partition `name` over `ranges`, without limits, of tier 1, up.
    pub fn new(name: &str, ranges: &[(u32, u32)]) -> Self {
        PartitionSpec {
            name: name.into(),
            ranges: ranges.to_vec(),
            max_time: None,
            max_nodes: None,
            min_nodes: 1,
            tier: 1,
            state: PartitionState::Up,
        }
    }
}

/// A partition as the engine uses it.
#[derive(Debug, Clone, PartialEq)]
pub struct Partition {
    pub spec: PartitionSpec,
    /// Its nodes.
    pub size: u32,
    /// Its atoms, in the order its jobs take nodes from them: the least shared first (a job
    /// leaves the nodes other partitions may use for last), then by index.
    pub atoms: Box<[u32]>,
    pub component: u32,
}

/// The partitions, their atoms and components, and each job's candidates.
#[derive(Debug, Clone, PartialEq)]
pub struct Site {
    partitions: Vec<Partition>,
    /// Nodes in each atom.
    atom_sizes: Vec<u32>,
    /// `member[p * atoms + a]`: atom `a` belongs to partition `p`.
    member: Vec<bool>,
    components: u32,
    /// The component of each atom.
    atom_component: Vec<u32>,
    pub over_limits: OverLimits,
    /// Candidate partitions of job `j`: `candidates[offsets[j]..offsets[j + 1]]`, as named.
    offsets: Vec<u32>,
    candidates: Vec<u32>,
    /// The candidates that accept the job and are up: the same layout. (A job accepted only by
    /// partitions that are down waits.)
    usable_offsets: Vec<u32>,
    usable: Vec<u32>,
    /// Each job's tier: the highest of its usable candidates' (0 when none).
    tiers: Vec<u32>,
    /// Each job's (nodes, component), the component `components` when none is usable: what
    /// the scan reads of every waiting job, side by side.
    job_keys: Vec<(u32, u32)>,
    /// Why a job no candidate accepts is refused (`None`: accepted).
    rejections: Vec<Option<Rejection>>,
    /// Several tiers: the scan orders by tier first.
    tiered: bool,
    /// Node ranges downtime windows take down (sorted, distinct), and the atoms each covers:
    /// atoms are cut at their bounds, so an atom is wholly inside or outside each.
    cuts: Vec<(u32, u32)>,
    cut_atoms: Vec<Vec<u32>>,
    /// `(first, end, atom)`: the atom of each run of nodes, in node order (nodes of no
    /// partition are in none).
    node_atoms: Vec<(u32, u32, u32)>,
}

impl Site {
    /// The site of `partitions` on a machine of `machine_nodes` nodes, for `jobs`, whose
    /// candidates are `candidates[offsets[j]..offsets[j + 1]]` (partition indices).
    pub fn new(
        partitions: Vec<PartitionSpec>,
        machine_nodes: u32,
        over_limits: OverLimits,
        jobs: &JobTable,
        offsets: Vec<u32>,
        candidates: Vec<u32>,
    ) -> Result<Self> {
        let cuts = Vec::new();
        Site::with_cuts(
            partitions,
            machine_nodes,
            over_limits,
            jobs,
            offsets,
            candidates,
            cuts,
        )
    }

    /// [`Site::new`], with atoms also cut at the bounds of the node ranges `cuts` (those
    /// downtime windows take down).
    pub fn with_cuts(
        partitions: Vec<PartitionSpec>,
        machine_nodes: u32,
        over_limits: OverLimits,
        jobs: &JobTable,
        offsets: Vec<u32>,
        candidates: Vec<u32>,
        mut cuts: Vec<(u32, u32)>,
    ) -> Result<Self> {
        cuts.sort_unstable();
        cuts.dedup();
        if let Some(&(first, end)) = cuts.iter().find(|c| c.0 >= c.1 || c.1 > machine_nodes) {
            return Err(CoreError::input(format!(
                "a downtime window's nodes {first}..{end} are not within the machine's \
                 {machine_nodes}"
            )));
        }
        if partitions.is_empty() {
            return Err(CoreError::input("a site needs at least one partition"));
        }
        if partitions.len() > u32::MAX as usize / 2 {
            return Err(CoreError::input("too many partitions"));
        }
        let cut = atoms_of(&partitions, &cuts, machine_nodes)?;
        let (atom_sizes, memberships) = (cut.sizes, cut.partitions);
        let atoms = atom_sizes.len();
        let mut member = vec![false; partitions.len() * atoms];
        for (a, parts) in memberships.iter().enumerate() {
            for &p in parts {
                member[p as usize * atoms + a] = true;
            }
        }
        let sharing: Vec<usize> = memberships.iter().map(Vec::len).collect();
        check_candidates(jobs.len(), &offsets, &candidates, partitions.len())?;
        // components: partitions sharing an atom, or named together by one job
        let mut roots: Vec<u32> = (0..partitions.len() as u32).collect();
        for parts in &memberships {
            for w in parts.windows(2) {
                union(&mut roots, w[0], w[1]);
            }
        }
        for j in 0..jobs.len() {
            let named = &candidates[offsets[j] as usize..offsets[j + 1] as usize];
            for w in named.windows(2) {
                union(&mut roots, w[0], w[1]);
            }
        }
        let mut component_of_root = vec![u32::MAX; partitions.len()];
        let mut components = 0;
        let mut built = Vec::with_capacity(partitions.len());
        for (p, spec) in partitions.into_iter().enumerate() {
            let root = find(&mut roots, p as u32) as usize;
            if component_of_root[root] == u32::MAX {
                component_of_root[root] = components;
                components += 1;
            }
            let mut mine: Vec<u32> = (0..atoms as u32)
                .filter(|&a| member[p * atoms + a as usize])
                .collect();
            mine.sort_by_key(|&a| (sharing[a as usize], a));
            let size = mine.iter().map(|&a| atom_sizes[a as usize]).sum();
            built.push(Partition {
                spec,
                size,
                atoms: mine.into_boxed_slice(),
                component: component_of_root[root],
            });
        }
        let mut atom_component = vec![0; atoms];
        for part in &built {
            for &a in part.atoms.iter() {
                atom_component[a as usize] = part.component;
            }
        }
        let mut site = Site {
            atom_component,
            tiered: built.windows(2).any(|w| w[0].spec.tier != w[1].spec.tier),
            partitions: built,
            atom_sizes,
            member,
            components,
            over_limits,
            offsets,
            candidates,
            usable_offsets: Vec::new(),
            usable: Vec::new(),
            tiers: Vec::new(),
            job_keys: Vec::new(),
            rejections: Vec::new(),
            cuts,
            cut_atoms: cut.cut_atoms,
            node_atoms: cut.node_atoms,
        };
        site.screen(jobs);
        Ok(site)
    }

    /// Which candidates accept each job, each job's tier, size and component, and the reason
    /// for the jobs none accepts.
    fn screen(&mut self, jobs: &JobTable) {
        let n = jobs.len();
        self.usable_offsets = Vec::with_capacity(n + 1);
        self.usable_offsets.push(0);
        self.tiers = Vec::with_capacity(n);
        self.job_keys = Vec::with_capacity(n);
        self.rejections = Vec::with_capacity(n);
        for (j, job) in jobs.iter().enumerate() {
            let (mut first_reason, mut accepted) = (None, false);
            // (the component of no partition: no candidate may start it)
            let (mut tier, mut component) = (0, self.components);
            for &p in &self.candidates[self.offsets[j] as usize..self.offsets[j + 1] as usize] {
                let part = &self.partitions[p as usize];
                match refusal(part, job.nodes, job.requested_time) {
                    Some(reason) => {
                        first_reason.get_or_insert(reason);
                    }
                    None if part.spec.state == PartitionState::Down => accepted = true,
                    None => {
                        accepted = true;
                        self.usable.push(p);
                        tier = tier.max(part.spec.tier);
                        component = part.component;
                    }
                }
            }
            self.usable_offsets.push(self.usable.len() as u32);
            self.tiers.push(tier);
            self.job_keys.push((job.nodes, component));
            self.rejections
                .push(if accepted { None } else { first_reason });
        }
    }

    pub fn partitions(&self) -> &[Partition] {
        &self.partitions
    }

    pub fn partition(&self, p: u32) -> &Partition {
        &self.partitions[p as usize]
    }

    pub fn atoms(&self) -> usize {
        self.atom_sizes.len()
    }

    pub fn atom_sizes(&self) -> &[u32] {
        &self.atom_sizes
    }

    pub fn components(&self) -> u32 {
        self.components
    }

    /// The component of atom `atom`.
    #[inline]
    pub fn atom_component(&self, atom: u32) -> u32 {
        self.atom_component[atom as usize]
    }

    /// The atoms a downtime window takes down: those of its node range or its partition, or
    /// all (the whole machine) when it names neither.
    pub fn window_atoms(&self, window: &Downtime) -> Vec<u32> {
        match (window.range, window.partition) {
            (Some(range), _) => match self.cuts.binary_search(&range) {
                Ok(c) => self.cut_atoms[c].clone(),
                // (a site is built with its calendar's ranges; any other range is a bug)
                Err(_) => panic!("node range {range:?} is not one of the site's cuts"),
            },
            (None, Some(p)) => self.partition(p).atoms.to_vec(),
            (None, None) => (0..self.atoms() as u32).collect(),
        }
    }

    /// The node ranges the site's atoms are cut at (besides the partitions' bounds).
    pub fn cuts(&self) -> &[(u32, u32)] {
        &self.cuts
    }

    /// The nodes of atom `atom`, ascending.
    pub fn atom_nodes(&self, atom: u32) -> Vec<u32> {
        (self.node_atoms.iter())
            .filter(|&&(_, _, a)| a == atom)
            .flat_map(|&(first, end, _)| first..end)
            .collect()
    }

    /// The atom node `node` belongs to (`None`: no partition holds it).
    pub fn atom_of_node(&self, node: u32) -> Option<u32> {
        let i = self.node_atoms.partition_point(|&(_, end, _)| end <= node);
        (self.node_atoms.get(i)).and_then(|&(first, _, atom)| (first <= node).then_some(atom))
    }

    /// Per atom, into `out`, the start of the first of the `announced` maintenance windows
    /// still ahead of `now` that takes its nodes down (+inf: none): a job may take an atom's
    /// nodes only if it ends, by its request, by then (the scan admits by it, the engine
    /// checks starts by it).
    pub fn maintenance_ahead(&self, announced: &[Downtime], now: f64, out: &mut Vec<f64>) {
        out.clear();
        out.resize(self.atoms(), f64::INFINITY);
        for w in announced.iter().filter(|w| w.start > now) {
            for a in self.window_atoms(w) {
                let when = &mut out[a as usize];
                *when = when.min(w.start);
            }
        }
    }

    /// Whether atom `atom` belongs to partition `p`.
    #[inline]
    pub fn contains(&self, p: u32, atom: u32) -> bool {
        self.member[p as usize * self.atom_sizes.len() + atom as usize]
    }

    /// The partitions job `job` named (or was routed to).
    pub fn candidates(&self, job: u32) -> &[u32] {
        let j = job as usize;
        &self.candidates[self.offsets[j] as usize..self.offsets[j + 1] as usize]
    }

    /// The candidates that accept job `job` and are not down: where it may start.
    #[inline]
    pub fn usable(&self, job: u32) -> &[u32] {
        let j = job as usize;
        &self.usable[self.usable_offsets[j] as usize..self.usable_offsets[j + 1] as usize]
    }

    /// Why no candidate accepts job `job` (`None` when one does).
    pub fn rejection(&self, job: u32) -> Option<Rejection> {
        self.rejections[job as usize]
    }

    /// Why job `job`, once queued, can never start here (`None`: it may): no candidate accepts
    /// it (the first candidate's reason), or only candidates that are down do.
    pub fn held(&self, job: u32) -> Option<Held> {
        match self.rejection(job) {
            Some(reason) => Held::of(reason),
            None if self.usable(job).is_empty() && !self.candidates(job).is_empty() => {
                Some(Held::PartitionDown)
            }
            None => None,
        }
    }

    #[inline]
    pub fn tier(&self, job: u32) -> u32 {
        self.tiers[job as usize]
    }

    /// Whether partitions have different tiers (the queue is then considered tier by tier).
    pub fn tiered(&self) -> bool {
        self.tiered
    }

    /// Job `job`'s (nodes, component), the component [`Site::components`] when it has no
    /// usable candidate.
    #[inline]
    pub fn job_key(&self, job: u32) -> (u32, u32) {
        self.job_keys[job as usize]
    }
}

/// Why partition `part` refuses a job of `nodes` nodes requesting `requested` s.
fn refusal(part: &Partition, nodes: u32, requested: f64) -> Option<Rejection> {
    let spec = &part.spec;
    if spec.state == PartitionState::Drain {
        Some(Rejection::Drained)
    } else if nodes > part.size {
        Some(Rejection::LargerThanPartition)
    } else if spec.max_nodes.is_some_and(|m| nodes > m) {
        Some(Rejection::OverMaxNodes)
    } else if nodes < spec.min_nodes {
        Some(Rejection::UnderMinNodes)
    } else if spec.max_time.is_some_and(|m| requested > m) {
        Some(Rejection::OverMaxTime)
    } else {
        None
    }
}

fn check_candidates(jobs: usize, offsets: &[u32], candidates: &[u32], parts: usize) -> Result<()> {
    if offsets.len() != jobs + 1
        || offsets.first() != Some(&0)
        || offsets.last().map(|&o| o as usize) != Some(candidates.len())
        || offsets.windows(2).any(|w| w[0] > w[1])
    {
        return Err(CoreError::input(
            "job candidates: offsets must run from 0 to the number of candidates, one per job + 1",
        ));
    }
    if let Some(&p) = candidates.iter().find(|&&p| p as usize >= parts) {
        return Err(CoreError::input(format!(
            "job candidates: partition {p} does not exist ({parts} partitions)"
        )));
    }
    if let Some(j) = (0..jobs).find(|&j| offsets[j] == offsets[j + 1]) {
        return Err(CoreError::input(format!(
            "job index {j} has no candidate partition"
        )));
    }
    Ok(())
}

/// The atoms of a site: each atom's size and partitions, the atoms each cut covers, and the
/// atom of each run of nodes.
struct Atoms {
    sizes: Vec<u32>,
    partitions: Vec<Vec<u32>>,
    cut_atoms: Vec<Vec<u32>>,
    node_atoms: Vec<(u32, u32, u32)>,
}

/// The atoms of `partitions` over `machine` nodes, also cut at the bounds of `cuts`: the
/// largest sets of nodes in the same partitions and the same cuts. Nodes no partition holds
/// belong to no atom (no job can use them).
fn atoms_of(partitions: &[PartitionSpec], cuts: &[(u32, u32)], machine: u32) -> Result<Atoms> {
    // (node, enter, member) edges, swept in node order; members past the partitions are cuts
    let parts = partitions.len() as u32;
    let mut edges = Vec::new();
    for (p, spec) in partitions.iter().enumerate() {
        if spec.ranges.is_empty() {
            return Err(CoreError::input(format!(
                "partition {:?} has no nodes",
                spec.name
            )));
        }
        for &(start, end) in &spec.ranges {
            if start >= end || end > machine {
                return Err(CoreError::input(format!(
                    "partition {:?}: nodes {start}..{end} are not within the machine's {machine}",
                    spec.name
                )));
            }
            edges.push((start, p as u32, true));
            edges.push((end, p as u32, false));
        }
    }
    for (c, &(start, end)) in cuts.iter().enumerate() {
        edges.push((start, parts + c as u32, true));
        edges.push((end, parts + c as u32, false));
    }
    edges.sort_unstable();
    let members = parts as usize + cuts.len();
    let mut inside = vec![0u32; members];
    let mut atoms = Atoms {
        sizes: Vec::new(),
        partitions: Vec::new(),
        cut_atoms: vec![Vec::new(); cuts.len()],
        node_atoms: Vec::new(),
    };
    let mut keys: Vec<Vec<u32>> = Vec::new();
    let mut at = 0;
    let mut k = 0;
    while k < edges.len() {
        let node = edges[k].0;
        if node > at {
            let key: Vec<u32> = (0..members as u32)
                .filter(|&m| inside[m as usize] > 0)
                .collect();
            if key.first().is_some_and(|&m| m < parts) {
                let a = match keys.iter().position(|k| *k == key) {
                    Some(a) => {
                        atoms.sizes[a] += node - at;
                        a
                    }
                    None => {
                        let a = keys.len();
                        for &m in key.iter().filter(|&&m| m >= parts) {
                            atoms.cut_atoms[(m - parts) as usize].push(a as u32);
                        }
                        atoms
                            .partitions
                            .push(key.iter().copied().filter(|&m| m < parts).collect());
                        atoms.sizes.push(node - at);
                        keys.push(key);
                        a
                    }
                };
                atoms.node_atoms.push((at, node, a as u32));
            }
            at = node;
        }
        while k < edges.len() && edges[k].0 == node {
            let (_, m, enter) = edges[k];
            if enter {
                inside[m as usize] += 1;
            } else {
                inside[m as usize] -= 1;
            }
            k += 1;
        }
    }
    Ok(atoms)
}

fn find(roots: &mut [u32], mut x: u32) -> u32 {
    while roots[x as usize] != x {
        roots[x as usize] = roots[roots[x as usize] as usize];
        x = roots[x as usize];
    }
    x
}

fn union(roots: &mut [u32], a: u32, b: u32) {
    let (ra, rb) = (find(roots, a), find(roots, b));
    if ra != rb {
        roots[ra.max(rb) as usize] = ra.min(rb);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Job;

    fn spec(name: &str, ranges: &[(u32, u32)]) -> PartitionSpec {
        PartitionSpec::new(name, ranges)
    }

    fn jobs(sizes: &[u32]) -> JobTable {
        let jobs = sizes
            .iter()
            .enumerate()
            .map(|(i, &nodes)| Job {
                id: i as i64,
                submit: 0.0,
                run_time: 10.0,
                requested_time: 100.0,
                nodes,
            })
            .collect();
        JobTable::new(jobs).unwrap()
    }

    #[test]
    fn overlapping_partitions_cut_into_atoms_and_one_component() {
        // batch: nodes 0..10; debug: 6..10 (a subset); gpu: 10..12 (apart)
        let parts = vec![
            spec("batch", &[(0, 10)]),
            spec("debug", &[(6, 10)]),
            spec("gpu", &[(10, 12)]),
        ];
        let table = jobs(&[2, 1, 1]);
        let site = Site::new(
            parts,
            12,
            OverLimits::Reject,
            &table,
            vec![0, 1, 2, 3],
            vec![0, 1, 2],
        )
        .unwrap();
        // atoms: {batch} 6 nodes, {batch, debug} 4, {gpu} 2
        assert_eq!(site.atom_sizes(), &[6, 4, 2]);
        assert_eq!(site.partition(0).size, 10);
        assert_eq!(&*site.partition(0).atoms, &[0, 1]); // its own atom before the shared one
        assert_eq!(&*site.partition(1).atoms, &[1]);
        assert_eq!(site.partition(0).component, site.partition(1).component);
        assert_ne!(site.partition(0).component, site.partition(2).component);
        assert_eq!(site.components(), 2);
    }

    #[test]
    fn a_job_naming_two_partitions_joins_their_components() {
        let parts = vec![spec("a", &[(0, 4)]), spec("b", &[(4, 8)])];
        let table = jobs(&[1, 1]);
        let site = Site::new(
            parts,
            8,
            OverLimits::Reject,
            &table,
            vec![0, 2, 3],
            vec![0, 1, 1],
        )
        .unwrap();
        assert_eq!(site.components(), 1);
        assert_eq!(site.candidates(0), &[0, 1]);
    }

    #[test]
    fn limits_and_states_decide_the_usable_candidates() {
        let mut small = spec("small", &[(0, 4)]);
        small.max_nodes = Some(2);
        small.max_time = Some(50.0);
        let mut drained = spec("drained", &[(4, 8)]);
        drained.state = PartitionState::Drain;
        let mut big = spec("big", &[(0, 8)]);
        big.min_nodes = 3;
        big.tier = 2;
        let table = jobs(&[2, 6, 2]);
        // job 0: small (over MaxTime 50 s: requests 100), big (under MinNodes) -> refused,
        // by the first reason; job 1: drained, big -> big; job 2: big -> under MinNodes
        let site = Site::new(
            vec![small, drained, big],
            8,
            OverLimits::Reject,
            &table,
            vec![0, 2, 4, 5],
            vec![0, 2, 1, 2, 2],
        )
        .unwrap();
        assert_eq!(site.rejection(0), Some(Rejection::OverMaxTime));
        assert_eq!(site.usable(1), &[2]);
        assert_eq!(site.tier(1), 2);
        assert_eq!(site.rejection(1), None);
        assert_eq!(site.rejection(2), Some(Rejection::UnderMinNodes));
        assert!(site.tiered());
        // held once queued: by the first candidate's reason, or never (job 1 may start)
        assert_eq!(site.held(0), Some(Held::OverMaxTime));
        assert_eq!(site.held(1), None);
        assert_eq!(site.held(2), Some(Held::UnderMinNodes));
    }

    #[test]
    fn bad_sites_are_refused() {
        let table = jobs(&[1]);
        let over = Site::new(
            vec![spec("a", &[(0, 9)])],
            8,
            OverLimits::Reject,
            &table,
            vec![0, 1],
            vec![0],
        );
        assert!(over.unwrap_err().to_string().contains("within the machine"));
        let none = Site::new(
            vec![spec("a", &[(0, 8)])],
            8,
            OverLimits::Reject,
            &table,
            vec![0, 0],
            vec![],
        );
        assert!(none.unwrap_err().to_string().contains("no candidate"));
    }
}
