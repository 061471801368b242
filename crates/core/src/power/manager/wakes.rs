//! Wakes: the waiting jobs planned in the queue policy's order (sequentially, or served with
//! EASY behind the head's reservation) on the planner of the call (`power/planner.rs`), and
//! the sleeping nodes the plan needs woken, now or later.

use crate::engine::power::{NodeState, STATES};
use crate::engine::View;
use crate::power::classes::ClassScratch;
use crate::power::manager::{PowerManager, EPS};
use crate::power::plan::{Plan, PlanJob};
use crate::power::planner::{ByClass, ByNode, Planner};
use crate::sched::{Backfill, Decision};

impl PowerManager {
    /// When a running job is expected to end: its requested end under IPM (unknown once it
    /// overruns), the predictor's conditional mean in ICON mode (Eqs. 50-51; a job started now
    /// at the log-normal mean).
    pub(super) fn running_release(&self, view: &View, predicted: bool) -> Vec<(u32, f64)> {
        let mut out: Vec<(u32, f64)> = view
            .running
            .iter()
            .map(|r| {
                let t = match (&self.stats, predicted && self.icon_mode()) {
                    (Some(stats), true) => {
                        let job = view.jobs.get(r.job);
                        view.now
                            + stats
                                .predictor
                                .remaining(job.requested_time, view.now - r.start)
                    }
                    _ if r.requested_end > view.now => r.requested_end,
                    _ => f64::INFINITY,
                };
                (r.job, t)
            })
            .collect();
        out.sort_unstable_by_key(|&(job, _)| job);
        out
    }

    /// A waiting job's planned duration: requested (IPM), the predicted median (ICON, Eq. 46).
    pub(super) fn queued_duration(&self, requested: f64) -> f64 {
        match (&self.stats, self.icon_mode()) {
            (Some(stats), true) => stats.predictor.queued(requested),
            _ => requested,
        }
    }

    /// The plans run on classes of alike nodes: one node group, no node down, the node index
    /// up to date (a look-ahead's copy acts before its first `prepare`: its index is rebuilt
    /// then), and not asked to plan node by node.
    pub(super) fn by_classes(&self, view: &View) -> bool {
        view.models.len() == 1
            && self.index.len() == view.nodes.len()
            && !self.index.has_down()
            && !self.config.plan_by_node
    }

    /// The plan of one job (`head`, planned however far ahead: a reservation) on the agenda:
    /// its start and nodes, `None` when it cannot be planned. With `predicted`, running jobs
    /// end when the mode expects, else at their requested end; the idle nodes `started` (a
    /// start of this call took them, marked in `taken`) run until their given release. On
    /// one node group without nodes down, on classes of alike nodes (the same plan, see
    /// `classes`); otherwise node by node.
    pub(super) fn head_plan(
        &self,
        view: &View,
        head: PlanJob,
        predicted: bool,
        started: &[(f64, u32)],
        taken: &[bool],
    ) -> Option<(f64, Vec<u32>)> {
        let mut scratch = ClassScratch::default();
        let mut planner = self.planner(view, predicted, self.by_classes(view), &mut scratch);
        planner.head(head, started, taken)
    }

    /// The planner of this call: on classes of alike nodes (`classes`) or node by node; with
    /// `predicted`, running jobs end when the mode expects, else at their requested end.
    pub(super) fn planner<'p>(
        &'p self,
        view: &View<'p>,
        predicted: bool,
        classes: bool,
        scratch: &'p mut ClassScratch,
    ) -> Box<dyn Planner + 'p> {
        let releases = self.running_release(view, predicted);
        if classes {
            Box::new(ByClass::new(
                view,
                &self.index,
                &self.by_deadline,
                releases,
                scratch,
            ))
        } else {
            Box::new(ByNode::new(view, &self.deadlines, &releases))
        }
    }

    /// The sequential or EASY plan of the waiting jobs in the queue policy's order: what to
    /// wake now, when to plan again and (with `needs`) when each idle node is needed.
    pub(super) fn wake_plan(
        &mut self,
        view: &View,
        decision: &Decision,
        needs: bool,
        group_counts: &[[u32; STATES]],
    ) -> Plan {
        // The waiting jobs in the queue policy's order.
        let jobs: Vec<PlanJob> = self
            .rule
            .positions(view)
            .iter()
            .map(|&p| {
                let job = view.queue[p as usize];
                let j = view.jobs.get(job);
                PlanJob {
                    job,
                    nodes: j.nodes,
                    duration: self.queued_duration(j.requested_time),
                }
            })
            .collect();
        let down = group_counts.iter().any(|c| c[NodeState::Down as usize] > 0);
        if self.rule.backfill() != Backfill::None {
            self.easy_wakes(view, &jobs, decision, needs)
        } else {
            // (on classes of alike nodes where the plan allows it: see `planner`)
            let classes = view.models.len() == 1 && !down && !self.config.plan_by_node;
            let mut scratch = std::mem::take(&mut self.class_scratch);
            let out = self
                .planner(view, true, classes, &mut scratch)
                .wakes(&jobs, needs);
            self.class_scratch = scratch;
            out
        }
    }

    /// The wakes and needs of the EASY plan (see `easy_plan`): the head job keeps the
    /// reservation decided at this call, or is planned now. `needs` fills `needed_at` (only read
    /// for idle nodes past their timeout).
    pub(super) fn easy_wakes(
        &self,
        view: &View,
        jobs: &[PlanJob],
        decision: &Decision,
        needs: bool,
    ) -> Plan {
        let n = view.nodes.len();
        let mut out = Plan {
            needed_at: if needs {
                vec![f64::INFINITY; n]
            } else {
                Vec::new()
            },
            ..Plan::default()
        };
        let Some(first) = jobs.first() else {
            return out;
        };
        let head = match decision.reservation {
            Some(r) if r.job == first.job && !decision.held.is_empty() => {
                Some((r.shadow_time, decision.held.clone()))
            }
            _ => self.head_plan(view, *first, true, &[], &[]),
        };
        let Some(head) = head else {
            return out;
        };
        let mut scratch = ClassScratch::default();
        let entries = self
            .planner(view, true, self.by_classes(view), &mut scratch)
            .easy(jobs, head);
        // (node, when to wake it) for the sleeping nodes planned, then the earliest per node, by
        // node (listed as found rather than over every node: most calls plan few of them)
        let mut wake_at: Vec<(u32, f64)> = Vec::new();
        for (_, nodes, start) in &entries {
            for &i in nodes {
                if needs {
                    let at = &mut out.needed_at[i as usize];
                    *at = at.min(*start);
                }
                let node = &view.nodes[i as usize];
                // (a sleeping node planned for now can only be one that wakes at once: a zero
                // wake latency; it is woken now like any node whose wake time has come)
                if node.state == NodeState::Sleeping {
                    let wake_s = view.models[node.group as usize].switch_on_s;
                    wake_at.push((i, start - wake_s));
                }
            }
        }
        wake_at.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
        wake_at.dedup_by_key(|e| e.0);
        for (i, t) in wake_at {
            if t <= view.now + EPS {
                out.wake_now.push(i);
            } else if t.is_finite() {
                out.wake_times.push(t);
            }
        }
        out
    }
}
