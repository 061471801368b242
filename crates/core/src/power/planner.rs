//! The manager's plans behind one interface: node by node ([`ByNode`]: `plan.rs`,
//! `easy_plan.rs`, any machine) or on classes of alike nodes ([`ByClass`]: `classes.rs`,
//! `easy_classes.rs`, one node group without nodes down, far faster on large machines). Both
//! decide the same; the conformance tests are `classes::tests`, `easy_classes::tests` (the
//! plans on random machines) and `tests/it/power_classes.rs` (whole runs under IPM and ICON,
//! with mean and sampled transitions, SNF and EASY policies).

use crate::engine::power::Node;
use crate::engine::View;
use crate::model::PowerModel;
use crate::power::classes::{class_plan, ClassInput, ClassScratch};
use crate::power::easy_classes::{easy_class_plan, EasyInput};
use crate::power::easy_plan::{busy_now, easy_plan, Entries};
use crate::power::node_index::NodeIndex;
use crate::power::plan::{agenda, plan, Plan, PlanJob, Slot, Windows};

/// How the waiting jobs are planned on the nodes at one call of the manager.
pub trait Planner {
    /// The queue in order without backfilling, up to the wake horizon: the sleeping nodes to
    /// wake now and when to plan again, and (with `needs`, where the planner keeps it apart)
    /// when each idle node is needed.
    fn wakes(&mut self, jobs: &[PlanJob], needs: bool) -> Plan;
    /// One job planned however far ahead (a reservation): its start and nodes, `None` when it
    /// cannot be planned. `started` lists idle nodes a start of this call took (release,
    /// node), marked in `taken`.
    fn head(
        &mut self,
        head: PlanJob,
        started: &[(f64, u32)],
        taken: &[bool],
    ) -> Option<(f64, Vec<u32>)>;
    /// The queue served with EASY, its first job held at `head` (start, nodes): each job's
    /// nodes and start.
    fn easy(&mut self, jobs: &[PlanJob], head: (f64, Vec<u32>)) -> Entries;
}

/// Node by node, on each node's agenda.
pub struct ByNode<'a> {
    now: f64,
    nodes: &'a [Node],
    models: &'a [PowerModel],
    slots: Vec<Slot>,
    windows: Windows,
}

impl<'a> ByNode<'a> {
    /// `deadlines`: each node's idle-timeout deadline; `releases`: each running job's expected
    /// release, sorted by job.
    pub fn new(view: &View<'a>, deadlines: &[f64], releases: &[(u32, f64)]) -> Self {
        let release = |job: u32| {
            releases
                .binary_search_by_key(&job, |&(j, _)| j)
                .map_or(f64::INFINITY, |i| releases[i].1)
        };
        ByNode {
            now: view.now,
            nodes: view.nodes,
            models: view.models,
            slots: agenda(view.now, view.nodes, view.models, deadlines, release),
            windows: Windows::of(view),
        }
    }
}

impl Planner for ByNode<'_> {
    fn wakes(&mut self, jobs: &[PlanJob], _needs: bool) -> Plan {
        let mut slots = self.slots.clone();
        plan(self.now, jobs, &mut slots, self.models, true, &self.windows)
    }

    fn head(
        &mut self,
        head: PlanJob,
        started: &[(f64, u32)],
        _taken: &[bool],
    ) -> Option<(f64, Vec<u32>)> {
        let mut slots = self.slots.clone();
        for &(release, i) in started {
            let slot = &mut slots[i as usize];
            slot.release = release;
            slot.rank = 1;
            slot.timeout_key = 0.0;
        }
        plan(
            self.now,
            &[head],
            &mut slots,
            self.models,
            false,
            &self.windows,
        )
        .head
    }

    fn easy(&mut self, jobs: &[PlanJob], head: (f64, Vec<u32>)) -> Entries {
        let busy = busy_now(self.now, self.nodes, &self.slots);
        let groups = self.models.len() as u16;
        easy_plan(
            self.now,
            jobs,
            head,
            &self.slots,
            busy,
            groups,
            &self.windows,
        )
    }
}

/// On classes of alike nodes (one node group, no node down, the node index up to date).
pub struct ByClass<'a> {
    now: f64,
    nodes: &'a [Node],
    model: &'a PowerModel,
    index: &'a NodeIndex,
    idle_by_deadline: &'a [(f64, u32)],
    releases: Vec<(u32, f64)>,
    windows: Windows,
    scratch: &'a mut ClassScratch,
}

impl<'a> ByClass<'a> {
    /// `idle_by_deadline`: idle nodes by (deadline, node); `releases`: each running job's
    /// expected release, sorted by job; `scratch`: kept between calls.
    pub fn new(
        view: &View<'a>,
        index: &'a NodeIndex,
        idle_by_deadline: &'a [(f64, u32)],
        releases: Vec<(u32, f64)>,
        scratch: &'a mut ClassScratch,
    ) -> Self {
        ByClass {
            now: view.now,
            nodes: view.nodes,
            model: &view.models[0],
            index,
            idle_by_deadline,
            releases,
            windows: Windows::of(view),
            scratch,
        }
    }

    fn input(&self) -> ClassInput<'_> {
        ClassInput {
            now: self.now,
            nodes: self.nodes,
            model: self.model,
            index: self.index,
            idle_by_deadline: self.idle_by_deadline,
            releases: &self.releases,
            needed_at: false,
            record: false,
            cut: false,
            taken: &[],
            taken_mark: &[],
        }
    }
}

impl Planner for ByClass<'_> {
    fn wakes(&mut self, jobs: &[PlanJob], needs: bool) -> Plan {
        let mut scratch = std::mem::take(self.scratch);
        let input = ClassInput {
            needed_at: needs,
            cut: true,
            ..self.input()
        };
        let out = class_plan(&input, jobs, &self.windows, &mut scratch);
        *self.scratch = scratch;
        out
    }

    fn head(
        &mut self,
        head: PlanJob,
        started: &[(f64, u32)],
        taken: &[bool],
    ) -> Option<(f64, Vec<u32>)> {
        let input = ClassInput {
            record: true,
            taken: started,
            taken_mark: if started.is_empty() { &[] } else { taken },
            ..self.input()
        };
        let mut scratch = ClassScratch::default();
        let out = class_plan(&input, &[head], &self.windows, &mut scratch);
        out.planned
            .into_iter()
            .next()
            .map(|(_, t, nodes)| (t, nodes))
    }

    fn easy(&mut self, jobs: &[PlanJob], head: (f64, Vec<u32>)) -> Entries {
        let input = EasyInput {
            now: self.now,
            nodes: self.nodes,
            model: self.model,
            index: self.index,
            idle_by_deadline: self.idle_by_deadline,
            releases: &self.releases,
        };
        easy_class_plan(&input, jobs, head, &self.windows)
    }
}
