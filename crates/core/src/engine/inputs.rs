//! The immutable inputs of a run (jobs, machine, calendar, power layer), shared by every
//! clone of its state, and the downtime boundaries the step loop walks.

use std::sync::Arc;

use crate::engine::layer::LayerSpec;
use crate::engine::submit_limit::SubmitLimits;
use crate::error::{CoreError, Result};
use crate::model::{
    Calendar, DowntimeKind, JobTable, Machine, OverLimits, Overrun, PartitionSpec, PowerModel,
    SharedNodes, Site, MAX_NODES,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum BoundaryKind {
    End,
    Announce,
    Begin,
}

impl BoundaryKind {
    /// Ends come before announcements and starts at the same instant.
    pub(crate) fn rank(self) -> u8 {
        match self {
            BoundaryKind::End => 0,
            BoundaryKind::Announce | BoundaryKind::Begin => 1,
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Boundary {
    pub(crate) time: f64,
    pub(crate) kind: BoundaryKind,
    pub(crate) window: u32,
}

/// The immutable inputs of a run, shared by every clone of its state.
#[derive(Debug, Clone)]
pub struct Inputs {
    pub jobs: JobTable,
    pub machine: Machine,
    pub calendar: Calendar,
    pub overrun: Overrun,
    pub(crate) boundaries: Vec<Boundary>,
    /// The policy switches nodes on and off: nodes get identities and power states.
    pub power_managed: bool,
    /// Seed for drawing transition latencies (mean latencies when `None`).
    pub sample_transitions: Option<u64>,
    /// The power manager under the queue policy, if any (it needs node power states).
    pub manager: Option<Arc<dyn LayerSpec>>,
    /// Node groups (count, power model) of a heterogeneous platform; empty: one group of the
    /// machine's power model.
    pub groups: Vec<(u32, PowerModel)>,
    /// On a site whose node groups have their own power models: the groups (count, model),
    /// set before the site (its atoms are cut at their bounds), and each atom's model then:
    /// what its nodes draw computing and idle (nodes are counted per atom, not named).
    pub site_groups: Vec<(u32, PowerModel)>,
    pub atom_power: Vec<PowerModel>,
    /// The partitions of a site, and each job's candidates (`None`: one pool).
    pub site: Option<Site>,
    /// Each job's place in an outside priority order, handed to every view (`View::ranks`):
    /// a look-ahead's belief keeps Slurm's order at its root. Empty: none.
    pub ranks: Vec<u32>,
    /// Caps on the jobs a group may have pending or running (`None`: none): a submission over
    /// its group's cap is refused.
    pub submit_limits: Option<SubmitLimits>,
    /// Jobs share nodes by CPUs, memory and generic resources (`None`: whole nodes).
    pub shared: Option<SharedNodes>,
}

impl Inputs {
    /// Turns on node power states: for a power manager, or a policy that switches nodes itself.
    pub fn with_power_management(mut self, sample_transitions: Option<u64>) -> Result<Self> {
        if self.machine.power.is_none() {
            return Err(CoreError::input(
                "power management needs a platform with a power model",
            ));
        }
        if self.site.is_some() || self.shared.is_some() {
            return Err(CoreError::input(
                "partitions or shared nodes with node power states: not yet",
            ));
        }
        self.power_managed = true;
        self.sample_transitions = sample_transitions;
        Ok(self)
    }

    /// Node groups of a heterogeneous platform (counts summing to the machine's size); jobs
    /// run within one group. They need node identities (a power manager places the jobs).
    pub fn with_groups(mut self, groups: Vec<(u32, PowerModel)>) -> Result<Self> {
        let total: u64 = groups.iter().map(|g| u64::from(g.0)).sum();
        if total != u64::from(self.machine.nodes) || groups.iter().any(|g| g.0 == 0) {
            return Err(CoreError::input(format!(
                "node groups of {total} nodes in all for a machine of {}",
                self.machine.nodes
            )));
        }
        let largest = groups.iter().map(|g| g.0).max().unwrap_or(0);
        if let Some(job) = self.jobs.iter().find(|j| j.nodes > largest) {
            return Err(CoreError::input(format!(
                "job {} needs {} nodes, more than the largest node group ({largest})",
                job.id, job.nodes
            )));
        }
        for (_, model) in &groups {
            model.validate()?;
        }
        self.groups = groups;
        Ok(self)
    }

    /// The node groups of a site (counts summing to the machine's size) with their power
    /// models, for the energy its nodes draw: set before the site. Jobs are placed by the
    /// site's partitions, not by groups; each atom of the site then lies in one group.
    pub fn with_site_groups(mut self, groups: Vec<(u32, PowerModel)>) -> Result<Self> {
        let total: u64 = groups.iter().map(|g| u64::from(g.0)).sum();
        if total != u64::from(self.machine.nodes) || groups.iter().any(|g| g.0 == 0) {
            return Err(CoreError::input(format!(
                "node groups of {total} nodes in all for a machine of {}",
                self.machine.nodes
            )));
        }
        for (_, model) in &groups {
            model.validate()?;
        }
        self.site_groups = groups;
        Ok(self)
    }

    /// Caps on the jobs each group may have pending or running (Slurm's QOS
    /// `MaxSubmitJobsPerUser`): a submission over its group's cap is refused.
    pub fn with_submit_limits(mut self, limits: SubmitLimits) -> Result<Self> {
        limits.validate(self.jobs.len())?;
        self.submit_limits = Some(limits);
        Ok(self)
    }

    /// Partitions over the machine's nodes, and each job's candidate partitions
    /// (`candidates[offsets[j]..offsets[j + 1]]`). Downtime windows take down a partition's
    /// nodes, a range of nodes or the whole machine. Node power states and node groups of their own power do not
    /// combine with partitions yet: they are refused.
    pub fn with_site(
        self,
        partitions: Vec<PartitionSpec>,
        over_limits: OverLimits,
        offsets: Vec<u32>,
        candidates: Vec<u32>,
    ) -> Result<Self> {
        for w in self.calendar.windows() {
            if let Some(p) = w.partition {
                if p as usize >= partitions.len() {
                    return Err(CoreError::input(format!(
                        "a downtime window names partition {p} of {}",
                        partitions.len()
                    )));
                }
            } else if w.nodes.is_some() && w.range.is_none() {
                return Err(CoreError::input(
                    "on a platform with partitions a window of part of the machine names its \
                     partition or its nodes",
                ));
            }
        }
        let cuts = self
            .calendar
            .windows()
            .iter()
            .filter_map(|w| w.range)
            .collect();
        self.with_site_cut(partitions, over_limits, offsets, candidates, cuts)
    }

    /// [`Inputs::with_site`] with the site's atoms cut at `cuts` (node ranges), which must
    /// hold every range the calendar's windows take down (a look-ahead keeps its engine's).
    pub fn with_site_cut(
        mut self,
        partitions: Vec<PartitionSpec>,
        over_limits: OverLimits,
        offsets: Vec<u32>,
        candidates: Vec<u32>,
        cuts: Vec<(u32, u32)>,
    ) -> Result<Self> {
        if self.power_managed || !self.groups.is_empty() {
            return Err(CoreError::input(
                "partitions with node power states or node groups placing jobs: not yet",
            ));
        }
        // (each atom in one node group: its nodes' power is that group's)
        let mut cuts = cuts;
        let mut first = 0;
        for &(count, _) in &self.site_groups {
            cuts.push((first, first + count));
            first += count;
        }
        let site = Site::with_cuts(
            partitions,
            self.machine.nodes,
            over_limits,
            &self.jobs,
            offsets,
            candidates,
            cuts,
        )?;
        self.atom_power = (0..site.atoms() as u32)
            .filter(|_| !self.site_groups.is_empty())
            .map(|a| {
                let node = site.atom_nodes(a).first().copied().unwrap_or(0);
                let mut end = 0;
                let group = (self.site_groups.iter()).find(|g| {
                    end += g.0;
                    node < end
                });
                group.map_or(self.site_groups[0].1, |g| g.1)
            })
            .collect();
        if let Some(w) = (self.calendar.windows().iter()).find(|w| {
            w.range
                .is_some_and(|r| site.cuts().binary_search(&r).is_err())
        }) {
            return Err(CoreError::input(format!(
                "a downtime window takes down nodes {:?} the site is not cut at",
                w.range
            )));
        }
        self.site = Some(site);
        Ok(self)
    }

    /// Jobs share nodes: each node's resources and each job's request, and the node sets
    /// (the site's partitions, in order, or one set of every node). Set after the site.
    /// Downtime windows take down named nodes (a range, a partition or every node); node power
    /// states do not combine with shared nodes yet: they are refused.
    /// Jobs that fit none of their partitions' nodes even when empty are refused at
    /// submission, or held pending for ever as the site says (`OverLimits`), as larger than
    /// their partition.
    pub fn with_shared_nodes(mut self, shared: SharedNodes) -> Result<Self> {
        if shared.resources.nodes() != self.machine.nodes {
            return Err(CoreError::input(format!(
                "resources of {} nodes for a machine of {}",
                shared.resources.nodes(),
                self.machine.nodes
            )));
        }
        if shared.requests.len() != self.jobs.len() {
            return Err(CoreError::input("one resource request per job"));
        }
        let sets = self.site.as_ref().map_or(1, |site| site.partitions().len());
        if shared.sets.len() != sets {
            return Err(CoreError::input(format!(
                "{} node sets for {sets} partitions",
                shared.sets.len()
            )));
        }
        if self.power_managed || !self.groups.is_empty() {
            return Err(CoreError::input(
                "jobs sharing nodes with node power states or node groups of their own power: \
                 not yet",
            ));
        }
        for w in self.calendar.windows() {
            // (a window takes down named nodes: the jobs on them are the ones it kills)
            if w.nodes.is_some() && w.range.is_none() && w.partition.is_none() {
                return Err(CoreError::input(
                    "on shared nodes a downtime window of part of the machine names its nodes \
                     (a node range or a partition)",
                ));
            }
            if w.range.is_some_and(|(_, end)| end > self.machine.nodes) {
                return Err(CoreError::input(format!(
                    "a downtime window takes down nodes {:?} of a machine of {}",
                    w.range, self.machine.nodes
                )));
            }
        }
        let mut shared = shared;
        match self.site.as_ref() {
            Some(site) => shared.screen(|j| site.usable(j)),
            None => shared.screen(|_| &[0]),
        }
        self.shared = Some(shared);
        Ok(self)
    }

    /// Puts a power manager under the queue policy.
    pub fn with_manager(
        self,
        spec: impl LayerSpec + 'static,
        sample_transitions: Option<u64>,
    ) -> Result<Self> {
        self.with_layer(Arc::new(spec), sample_transitions)
    }

    /// Puts the power layer `spec` builds under the queue policy.
    pub fn with_layer(
        self,
        spec: Arc<dyn LayerSpec>,
        sample_transitions: Option<u64>,
    ) -> Result<Self> {
        spec.validate()?;
        let mut inputs = self.with_power_management(sample_transitions)?;
        inputs.manager = Some(spec);
        Ok(inputs)
    }

    /// How many downtime boundaries fall at or before `t` (already applied at a decision at t).
    pub(crate) fn boundaries_through(&self, t: f64) -> u32 {
        self.boundaries.partition_point(|b| b.time <= t) as u32
    }

    pub fn new(
        jobs: JobTable,
        machine: Machine,
        calendar: Calendar,
        overrun: Overrun,
    ) -> Result<Self> {
        if machine.nodes == 0 || machine.nodes > MAX_NODES {
            return Err(CoreError::input(format!(
                "the machine has {} nodes; the engine takes 1 to {MAX_NODES}",
                machine.nodes
            )));
        }
        if let Some(job) = jobs.iter().find(|j| j.nodes > machine.nodes) {
            return Err(CoreError::input(format!(
                "job {} needs {} nodes, more than the machine's {}",
                job.id, job.nodes, machine.nodes
            )));
        }
        // Nothing happens before the run starts: a window announced (or begun) earlier is
        // applied at the start, one over by then is left out.
        let start = jobs.iter().next().map_or(0.0, |j| j.submit.min(0.0));
        let mut boundaries = Vec::with_capacity(calendar.windows().len() * 3);
        for (i, w) in calendar.windows().iter().enumerate() {
            let window = i as u32;
            if w.end <= start {
                continue;
            }
            if w.kind == DowntimeKind::Scheduled {
                let time = calendar.announced_at(w).max(start);
                boundaries.push(Boundary {
                    time,
                    kind: BoundaryKind::Announce,
                    window,
                });
            }
            boundaries.push(Boundary {
                time: w.start.max(start),
                kind: BoundaryKind::Begin,
                window,
            });
            boundaries.push(Boundary {
                time: w.end,
                kind: BoundaryKind::End,
                window,
            });
        }
        boundaries.sort_by(|a, b| {
            a.time
                .total_cmp(&b.time)
                .then(a.kind.rank().cmp(&b.kind.rank()))
                .then(a.window.cmp(&b.window))
                .then(a.kind.cmp(&b.kind))
        });
        Ok(Inputs {
            jobs,
            machine,
            calendar,
            overrun,
            boundaries,
            power_managed: false,
            sample_transitions: None,
            manager: None,
            groups: Vec::new(),
            site_groups: Vec::new(),
            atom_power: Vec::new(),
            site: None,
            ranks: Vec::new(),
            submit_limits: None,
            shared: None,
        })
    }
}
