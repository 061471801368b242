//! One run, as names and numbers: what a caller (the Python binding) hands the engine, and
//! the one place those names become the engine's types ([`RunSpec::build`]).
//!
//! Every name is read with the core's own tables (`from_name`, `NAMES`), and a wrong one is a
//! [`CoreError::input`] naming the option. A policy the caller drives itself (a Python
//! policy) is passed in already built; a learning agent is the policy name `agent`.

mod shared;

pub use shared::SharedSpec;

use std::sync::Arc;

use crate::engine::{Engine, Inputs, StopFlag};
use crate::error::{CoreError, Result};
use crate::model::{
    Calendar, Downtime, DowntimeKind, Job, JobTable, Machine, OverLimits, Overrun, PartitionSpec,
    PowerModel, MAX_NODES,
};
use crate::power::config::{manager_config, IconConfig};
use crate::sched::slurm::{SlurmPolicy, SlurmSetup};
use crate::sched::{build_policy, build_policy_estimated, build_snf, Policy};
use crate::search::{
    build_mars, build_search_policy, ActionSet, ArrivalModel, Lookahead, Reward, Rollout,
    RuntimeModel, ScenarioModel, SearchConfig, SearchOptions,
};

/// How much the decision logs keep: `compact` (each decision) or `full` (every candidate too).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogDetail {
    #[default]
    Compact,
    Full,
}

impl LogDetail {
    /// The names, in the order of the variants.
    pub const NAMES: [&'static str; 2] = ["compact", "full"];

    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "compact" => Some(LogDetail::Compact),
            "full" => Some(LogDetail::Full),
            _ => None,
        }
    }
}

/// The jobs, as columns in replay order (all of one length).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobColumns {
    pub id: Vec<i64>,
    pub submit: Vec<f64>,
    pub run_time: Vec<f64>,
    pub requested_time: Vec<f64>,
    pub nodes: Vec<i64>,
    /// Each job's user, when the trace names them.
    pub user: Option<Vec<i64>>,
}

/// The partitions of a site, and each job's candidates as a CSR list: the partitions of job
/// `j` are `candidates[offsets[j]..offsets[j + 1]]`.
#[derive(Debug, Clone, PartialEq)]
pub struct SiteSpec {
    pub partitions: Vec<PartitionSpec>,
    /// A name of `OverLimits::NAMES`.
    pub over_limits: String,
    pub offsets: Vec<u32>,
    pub candidates: Vec<u32>,
}

/// The downtime windows, as columns (all of one length): `nodes` 0 means the whole machine;
/// `asleep`: the window's nodes come back asleep.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DowntimeColumns {
    pub start: Vec<f64>,
    pub end: Vec<f64>,
    pub scheduled: Vec<bool>,
    pub nodes: Vec<i64>,
    pub asleep: Vec<bool>,
    /// The partition each window takes down (-1: none); may be empty (none at all).
    pub partition: Vec<i64>,
    /// The node range `[first, end)` each window takes down (first -1: none); both may be
    /// empty (none at all).
    pub range_first: Vec<i64>,
    pub range_end: Vec<i64>,
}

impl DowntimeColumns {
    /// The windows the columns describe; an error when the columns differ in length.
    pub fn windows(&self) -> Result<Vec<Downtime>> {
        let m = self.start.len();
        let lengths = [
            self.end.len(),
            self.scheduled.len(),
            self.nodes.len(),
            self.asleep.len(),
        ];
        let optional = [&self.partition, &self.range_first, &self.range_end];
        if lengths.iter().any(|&l| l != m)
            || optional.iter().any(|c| !(c.is_empty() || c.len() == m))
        {
            return Err(CoreError::input("downtime columns have different lengths"));
        }
        Ok((0..m)
            .map(|i| Downtime {
                start: self.start[i],
                end: self.end[i],
                kind: if self.scheduled[i] {
                    DowntimeKind::Scheduled
                } else {
                    DowntimeKind::Unscheduled
                },
                nodes: (self.nodes[i] > 0)
                    .then(|| u32::try_from(self.nodes[i]).unwrap_or(u32::MAX)),
                back_asleep: self.asleep[i],
                partition: (self.partition.get(i).copied().unwrap_or(-1) >= 0)
                    .then(|| u32::try_from(self.partition[i]).unwrap_or(u32::MAX)),
                range: (self.range_first.get(i).copied().unwrap_or(-1) >= 0).then(|| {
                    let node = |n: i64| u32::try_from(n.max(0)).unwrap_or(u32::MAX);
                    (
                        node(self.range_first[i]),
                        node(self.range_end.get(i).copied().unwrap_or(0)),
                    )
                }),
            })
            .collect())
    }
}

/// The look-ahead's options (`mars`, `random`), as names and numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchSpec {
    /// Action set, as `ActionSet::parse` reads it.
    pub actions: String,
    /// Weights of `Reward::TERMS`, in that order.
    pub reward: [f64; Reward::TERMS.len()],
    pub horizon: f64,
    /// A name of `RuntimeModel::NAMES`.
    pub runtime_model: String,
    /// A name of `ArrivalModel::NAMES`; `recent` reads the window and horizon.
    pub arrivals: String,
    pub arrival_window: f64,
    pub arrival_horizon: f64,
    pub overrun_kill: bool,
    /// A name of `Rollout::NAMES`; `guided` reads the guide and epsilon.
    pub rollout: String,
    pub guide: String,
    pub epsilon: f64,
    pub iterations: Option<u32>,
    pub time_budget: Option<f64>,
    pub depth: u32,
    pub gamma: f64,
    pub exploration: f64,
    pub trees: u32,
    pub seed: u64,
    /// A name of `Lookahead::NAMES`; `rollout` reads the bases.
    pub lookahead: String,
    /// A name of `Lookahead::PRIOR_NAMES`; `rollout` reads the bases.
    pub prior: String,
    /// The base orderings, as `ActionSet::parse` reads them.
    pub bases: String,
    pub threads: usize,
}

/// A power manager by name (`MANAGER_NAMES`) with its idle timeout and SNF-ICON's parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedManager {
    pub name: String,
    pub idle_timeout: f64,
    pub icon: IconConfig,
}

/// Node power states: under a named power manager, or (without one) for an agent or a
/// Python policy, which switch nodes themselves.
#[derive(Debug, Clone, PartialEq)]
pub struct ManagerSpec {
    pub manager: Option<NamedManager>,
    /// Seed for drawing transition latencies (mean latencies when `None`).
    pub sample_transitions: Option<u64>,
}

/// One run: the workload, the machine, the downtime calendar and the policy, by name.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSpec {
    pub jobs: JobColumns,
    /// The machine's size, as given (checked against `MAX_NODES`).
    pub machine_nodes: i64,
    /// The machine's power model, when known.
    pub power: Option<PowerModel>,
    /// Node groups (count, power model) of a heterogeneous platform.
    pub groups: Option<Vec<(u32, PowerModel)>>,
    /// The partitions of a site (`None`: one pool).
    pub site: Option<SiteSpec>,
    /// Jobs sharing nodes (`None`: whole nodes).
    pub shared: Option<SharedSpec>,
    pub downtime: DowntimeColumns,
    /// How long before a scheduled window it is announced (s).
    pub announce_lead: f64,
    /// A name of `Overrun::NAMES`.
    pub overrun: String,
    /// A built-in policy's name, `agent` (a learning agent drives the engine) or `python` (the
    /// policy given to [`RunSpec::build`]).
    pub policy: String,
    pub window: Option<usize>,
    pub backfill: String,
    /// EASY's run-time estimates (`sched::registry::ESTIMATES`).
    pub estimates: String,
    /// SNF's maximum wait (s).
    pub max_wait: Option<f64>,
    pub search: Option<SearchSpec>,
    pub manager: Option<ManagerSpec>,
    /// A name of `LogDetail::NAMES`.
    pub decision_log: String,
    /// Slurm's settings, tree, QOS and the jobs' attributes, for the policy `slurm`.
    pub slurm: Option<SlurmSetup>,
}

impl RunSpec {
    /// The engine and the policy of this run. `outside` is the policy of `policy` "python"
    /// (built by the caller); `stop` ends a search at once when raised.
    pub fn build(
        mut self,
        outside: Option<Box<dyn Policy>>,
        stop: StopFlag,
    ) -> Result<(Engine, Box<dyn Policy>)> {
        let detail = LogDetail::from_name(&self.decision_log).ok_or_else(|| {
            CoreError::input(format!(
                "unknown decision log {:?} ({})",
                self.decision_log,
                LogDetail::NAMES.join(", ")
            ))
        })? == LogDetail::Full;
        let outside_driven = outside.is_some();
        let (policy_name, window, max_wait) = (self.policy.clone(), self.window, self.max_wait);
        let (backfill, estimates) = (self.backfill.clone(), self.estimates.clone());
        let search = self.search.take();
        let slurm = self.slurm.take();
        let partitions = self.site.as_ref().map_or(1, |s| s.partitions.len());
        let job_count = self.jobs.id.len();
        let managed = self.manager.is_some();
        if self.site.is_some() {
            let unsupported = if self.manager.is_some() {
                Some("node power management")
            } else if estimates != "requested" {
                Some("EASY on predicted run times")
            } else {
                None
            };
            if let Some(what) = unsupported {
                return Err(CoreError::input(format!(
                    "partitions with {what}: not yet (heuristics, with or without EASY, SNF, \
                     Slurm's scheduler, MARS, random, Python policies and learning agents run \
                     on partitions)"
                )));
            }
        }
        if self.shared.is_some() {
            let queue_policy = crate::sched::Heuristic::from_name(&policy_name).is_some()
                || (policy_name.eq_ignore_ascii_case("snf") && max_wait.is_none())
                || policy_name == "slurm"
                || policy_name == "python"
                || policy_name == "agent"
                || search.is_some();
            let unsupported = if !queue_policy {
                Some(format!("policy {policy_name:?}"))
            } else if estimates != "requested" {
                Some("EASY on predicted run times".into())
            } else if managed {
                Some("node power management".into())
            } else {
                None
            };
            if let Some(what) = unsupported {
                return Err(CoreError::input(format!(
                    "jobs sharing nodes with {what}: not yet (the queue heuristics, with or \
                     without EASY, SNF without a maximum wait, Slurm's scheduler, the \
                     look-aheads MARS and random, Python policies and agents run on shared \
                     nodes)"
                )));
            }
        }
        let mut inputs = self.inputs()?;
        let mut policy: Box<dyn Policy> = match policy_name.as_str() {
            // A learning agent drives the engine step by step; no policy decides.
            "agent" => build_policy("fcfs", None, "none")?,
            "python" => {
                outside.ok_or_else(|| CoreError::input("policy 'python' needs the object"))?
            }
            "slurm" => {
                let setup = slurm.ok_or_else(|| {
                    CoreError::input("policy 'slurm' needs Slurm's settings (a slurm.conf)")
                })?;
                if search.is_some() || managed {
                    return Err(CoreError::input(
                        "policy 'slurm' runs alone: not under a look-ahead or a power manager",
                    ));
                }
                setup.validate(job_count, partitions)?;
                if let Some(limits) = setup.submit_limits() {
                    // slurmctld refuses such submissions whatever schedules them
                    inputs = inputs.with_submit_limits(limits)?;
                }
                Box::new(SlurmPolicy::new(Arc::new(setup)))
            }
            name => match search {
                Some(search) => {
                    let mut options = search.options()?;
                    options.config.stop = stop;
                    if options.orders_by_slurm()? {
                        // MARS ranks the queue by Slurm's priorities, kept beside it
                        let setup = slurm.ok_or_else(|| {
                            CoreError::input(
                                "the ordering 'slurm' needs Slurm's settings (a slurm.conf)",
                            )
                        })?;
                        setup.validate(job_count, partitions)?;
                        let keeper = SlurmPolicy::new(Arc::new(setup));
                        Box::new(build_mars(name, &options)?.with_slurm(keeper))
                    } else {
                        build_search_policy(name, &options)?
                    }
                }
                None if name == "snf" && max_wait.is_some() => build_snf(max_wait)?,
                None => build_policy_estimated(name, window, &backfill, &estimates)?,
            },
        };
        policy.set_decision_detail(detail);
        let mut engine = Engine::new(Arc::new(inputs));
        engine.set_candidate_detail(detail);
        if outside_driven || policy.observes_events() {
            engine.record_events();
        }
        Ok((engine, policy))
    }

    /// The engine's inputs: jobs, machine (with its node groups and power manager), calendar.
    fn inputs(self) -> Result<Inputs> {
        let jobs = &self.jobs;
        let n = jobs.id.len();
        let lengths = [
            jobs.submit.len(),
            jobs.run_time.len(),
            jobs.requested_time.len(),
            jobs.nodes.len(),
        ];
        if lengths.iter().any(|&l| l != n) {
            return Err(CoreError::input("job columns have different lengths"));
        }
        let table: Vec<Job> = (0..n)
            .map(|i| Job {
                id: jobs.id[i],
                submit: jobs.submit[i],
                run_time: jobs.run_time[i],
                requested_time: jobs.requested_time[i],
                // past u32: more than any machine, refused below as larger than the machine
                nodes: u32::try_from(jobs.nodes[i].max(0)).unwrap_or(u32::MAX),
            })
            .collect();
        let windows = self.downtime.windows()?;
        let machine_nodes = u32::try_from(self.machine_nodes)
            .ok()
            .filter(|n| (1..=MAX_NODES).contains(n))
            .ok_or_else(|| {
                CoreError::input(format!(
                    "the machine has {} nodes; the engine takes 1 to {MAX_NODES}",
                    self.machine_nodes
                ))
            })?;
        let overrun = Overrun::from_name(&self.overrun).ok_or_else(|| {
            CoreError::input(format!(
                "unknown overrun policy {:?} ({})",
                self.overrun,
                Overrun::NAMES.join(", ")
            ))
        })?;
        let mut table = JobTable::new(table)?;
        if let Some(users) = self.jobs.user {
            table = table.with_users(users)?;
        }
        let calendar = Calendar::new(windows, self.announce_lead)?;
        if let Some(model) = &self.power {
            model.validate()?;
        }
        let machine = Machine {
            nodes: machine_nodes,
            power: self.power,
        };
        let mut inputs = Inputs::new(table, machine, calendar, overrun)?;
        if let Some(groups) = self.groups {
            // on a site the partitions place jobs: the groups only say what their nodes draw
            inputs = if self.site.is_some() {
                inputs.with_site_groups(groups)?
            } else {
                inputs.with_groups(groups)?
            };
        }
        let partition_windows = inputs
            .calendar
            .windows()
            .iter()
            .any(|w| w.partition.is_some() || w.range.is_some());
        if partition_windows && self.site.is_none() {
            return Err(CoreError::input(
                "a downtime window names a partition or a node range, and the platform has no \
                 partitions",
            ));
        }
        if let Some(site) = self.site {
            let over_limits = OverLimits::from_name(&site.over_limits).ok_or_else(|| {
                CoreError::input(format!(
                    "unknown over-limits rule {:?} ({})",
                    site.over_limits,
                    OverLimits::NAMES.join(", ")
                ))
            })?;
            inputs =
                inputs.with_site(site.partitions, over_limits, site.offsets, site.candidates)?;
        }
        if let Some(shared) = self.shared {
            let model = shared.build(inputs.jobs.len())?;
            inputs = inputs.with_shared_nodes(model)?;
        }
        // Node power states: under a power manager, or for an agent or a Python policy on a
        // platform with a power model (they switch nodes themselves).
        if let Some(options) = self.manager {
            let sample = options.sample_transitions;
            inputs = match options.manager {
                Some(named) => {
                    let config = manager_config(&named.name, named.idle_timeout, named.icon)
                        .ok_or_else(|| {
                            CoreError::input(format!("{:?} is not a power manager", named.name))
                        })?;
                    inputs.with_manager(config, sample)?
                }
                None if self.policy == "agent" || self.policy == "python" => {
                    inputs.with_power_management(sample)?
                }
                None => inputs,
            };
        }
        Ok(inputs)
    }
}

impl SearchSpec {
    /// The search's options, every name read (the stop flag is the caller's to set).
    pub fn options(&self) -> Result<SearchOptions> {
        let invalid =
            |what: &str, value: &str| CoreError::input(format!("unknown {what} {value:?}"));
        let actions_of = |what: &str, spec: &str| -> Result<Vec<_>> {
            let set = ActionSet::parse(spec).map_err(|e| invalid(what, &e.to_string()))?;
            Ok((0..set.len()).map(|i| set.get(i)).collect())
        };
        let model = ScenarioModel {
            runtime: RuntimeModel::from_name(&self.runtime_model)
                .ok_or_else(|| invalid("runtime model", &self.runtime_model))?,
            arrivals: match self.arrivals.as_str() {
                "none" => ArrivalModel::None,
                "recent" => ArrivalModel::Recent {
                    window: self.arrival_window,
                    horizon: self.arrival_horizon,
                },
                other => return Err(invalid("arrival model", other)),
            },
            overrun_kill: self.overrun_kill,
        };
        let rollout = match self.rollout.as_str() {
            "actions" => Rollout::Actions,
            "outcomes" => Rollout::Outcomes,
            "guided" => {
                let set =
                    ActionSet::parse(&self.guide).map_err(|e| invalid("guide", &e.to_string()))?;
                Rollout::Guided {
                    guide: set.get(0),
                    epsilon: self.epsilon,
                }
            }
            other => return Err(invalid("rollout", other)),
        };
        let lookahead = match self.lookahead.as_str() {
            "tree" => Lookahead::Tree,
            "rollout" => Lookahead::Rollout {
                bases: actions_of("bases", &self.bases)?,
            },
            other => return Err(invalid("lookahead", other)),
        };
        let prior = match self.prior.as_str() {
            "none" => None,
            "rollout" => Some(actions_of("bases", &self.bases)?),
            other => return Err(invalid("prior", other)),
        };
        Ok(SearchOptions {
            actions: self.actions.clone(),
            reward: Reward::from_weights(self.reward, self.horizon),
            config: SearchConfig {
                iterations: self.iterations,
                time_budget: self.time_budget,
                depth: self.depth,
                gamma: self.gamma,
                exploration: self.exploration,
                trees: self.trees,
                seed: self.seed,
                stop: StopFlag::default(),
                rollout,
                lookahead,
                prior,
            },
            model,
            threads: self.threads,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(policy: &str) -> RunSpec {
        RunSpec {
            jobs: JobColumns {
                id: vec![1, 2],
                submit: vec![0.0, 10.0],
                run_time: vec![100.0, 50.0],
                requested_time: vec![200.0, 60.0],
                nodes: vec![2, 4],
                user: None,
            },
            machine_nodes: 4,
            power: None,
            groups: None,
            site: None,
            shared: None,
            downtime: DowntimeColumns::default(),
            announce_lead: 0.0,
            overrun: "continue".into(),
            policy: policy.into(),
            window: None,
            backfill: "easy".into(),
            estimates: "requested".into(),
            max_wait: None,
            search: None,
            manager: None,
            decision_log: "compact".into(),
            slurm: None,
        }
    }

    fn search() -> SearchSpec {
        SearchSpec {
            actions: "fcfs,sjf".into(),
            reward: [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
            horizon: 86400.0,
            runtime_model: "requested".into(),
            arrivals: "none".into(),
            arrival_window: 1.0,
            arrival_horizon: 1.0,
            overrun_kill: false,
            rollout: "actions".into(),
            guide: "f1:256".into(),
            epsilon: 0.1,
            iterations: Some(10),
            time_budget: None,
            depth: 2,
            gamma: 0.99,
            exploration: 1.0,
            trees: 1,
            seed: 0,
            lookahead: "tree".into(),
            prior: "none".into(),
            bases: "fcfs".into(),
            threads: 1,
        }
    }

    fn refused(spec: RunSpec) -> String {
        match spec.build(None, StopFlag::default()) {
            Ok(_) => panic!("built"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_run_by_names_runs() {
        let (mut engine, mut policy) = run("fcfs").build(None, StopFlag::default()).unwrap();
        engine.run(policy.as_mut()).unwrap();
        assert_eq!(engine.log().end, vec![100.0, 150.0]);
        let mut mars = run("mars");
        mars.search = Some(search());
        let (mut engine, mut policy) = mars.build(None, StopFlag::default()).unwrap();
        engine.run(policy.as_mut()).unwrap();
        assert_eq!(engine.submitted(), 2);
    }

    /// Two one-CPU jobs on 4 nodes of 4 cores shared by cores.
    fn shared(policy: &str) -> RunSpec {
        let mut spec = run(policy);
        spec.shared = Some(SharedSpec {
            sharing: "cr_core".into(),
            shape_cpus: vec![4],
            shape_threads_per_core: vec![1],
            shape_memory: vec![0],
            shape_weight: vec![1],
            node_shape: vec![0; 4],
            set_offsets: vec![0, 4],
            set_nodes: vec![0, 1, 2, 3],
            set_min_nodes: vec![1],
            set_max_nodes: vec![u32::MAX],
            set_exclusive: vec![false],
            nodes: vec![0, 0],
            tasks: vec![1, 1],
            cpus_per_task: vec![1, 1],
            memory_kind: vec![0, 0],
            memory: vec![0, 0],
            exclusive: vec![false, false],
            gres_offsets: vec![0, 0, 0],
            ..SharedSpec::default()
        });
        spec
    }

    #[test]
    fn what_runs_where_jobs_share_nodes_is_built_and_the_rest_refused() {
        for name in ["fcfs", "snf", "python", "agent"] {
            let spec = shared(name);
            let outside: Option<Box<dyn Policy>> = (name == "python")
                .then(|| crate::sched::registry::build_policy("fcfs", None, "easy").unwrap());
            assert!(spec.build(outside, StopFlag::default()).is_ok(), "{name}");
        }
        let mut mars = shared("mars");
        mars.search = Some(search());
        let (mut engine, mut policy) = mars.build(None, StopFlag::default()).unwrap();
        engine.run(policy.as_mut()).unwrap();
        assert_eq!(engine.log().start, vec![0.0, 10.0]);
        let mut guarded = shared("snf");
        guarded.max_wait = Some(3600.0);
        assert!(refused(guarded).contains("jobs sharing nodes with policy \"snf\""));
        let mut predicted = shared("fcfs");
        predicted.estimates = "history".into();
        assert!(refused(predicted).contains("EASY on predicted run times"));
    }

    #[test]
    fn a_wrong_name_is_named() {
        let mut spec = run("fcfs");
        spec.decision_log = "some".into();
        assert!(refused(spec).contains("unknown decision log \"some\" (compact, full)"));
        let mut spec = run("fcfs");
        spec.overrun = "pause".into();
        assert!(refused(spec).contains("unknown overrun policy \"pause\" (continue, kill)"));
        let mut spec = run("fcfs");
        spec.machine_nodes = 0;
        assert!(refused(spec).contains("the machine has 0 nodes"));
        let mut spec = run("fcfs");
        spec.jobs.nodes.pop();
        assert!(refused(spec).contains("job columns have different lengths"));
        let mut spec = run("fcfs");
        spec.downtime.start.push(5.0);
        assert!(refused(spec).contains("downtime columns have different lengths"));
        let mut spec = run("python");
        assert!(refused(spec.clone()).contains("needs the object"));
        spec.policy = "fcfs".into();
        spec.manager = Some(ManagerSpec {
            manager: Some(NamedManager {
                name: "nap".into(),
                idle_timeout: 1.0,
                icon: IconConfig::default(),
            }),
            sample_transitions: None,
        });
        assert!(refused(spec).contains("\"nap\" is not a power manager"));
        for (field, text) in [
            ("runtime_model", "unknown runtime model \"x\""),
            ("arrivals", "unknown arrival model \"x\""),
            ("rollout", "unknown rollout \"x\""),
            ("lookahead", "unknown lookahead \"x\""),
            ("prior", "unknown prior \"x\""),
        ] {
            let mut options = search();
            match field {
                "runtime_model" => options.runtime_model = "x".into(),
                "arrivals" => options.arrivals = "x".into(),
                "rollout" => options.rollout = "x".into(),
                "lookahead" => options.lookahead = "x".into(),
                _ => options.prior = "x".into(),
            }
            let message = options.options().unwrap_err().to_string();
            assert!(message.contains(text), "{message}");
        }
    }
}
