//! Python values into the core's records: the one place the binding reads what Python hands
//! it (`hpcsched.run.native.NativeRun`, the search, power model and power manager options
//! Python validated). Names stay names: the core reads them ([`RunSpec::build`]).

use hpcsched_core::model::{PartitionSpec, PartitionState, PowerModel};
use hpcsched_core::power::config::IconConfig;
use hpcsched_core::power::screen::ScreenConfig;
use hpcsched_core::sched::slurm::{
    Association, FairShare, PrioritySettings, Qos, SchedulerSettings, Scope, SlurmJobs, SlurmSetup,
    TresLimit,
};
use hpcsched_core::search::Reward;
use hpcsched_core::spec::{
    DowntimeColumns, JobColumns, ManagerSpec, NamedManager, RunSpec, SearchSpec, SharedSpec,
    SiteSpec,
};
use numpy::PyReadonlyArray1;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// `hpcsched.run.native.NativeRun`, attribute by attribute.
#[derive(FromPyObject)]
struct NativeRun<'py> {
    job_id: PyReadonlyArray1<'py, i64>,
    submit: PyReadonlyArray1<'py, f64>,
    run_time: PyReadonlyArray1<'py, f64>,
    requested_time: PyReadonlyArray1<'py, f64>,
    nodes: PyReadonlyArray1<'py, i64>,
    user: Option<PyReadonlyArray1<'py, i64>>,
    machine_nodes: i64,
    power: Option<Bound<'py, PyDict>>,
    groups: Option<Vec<(u32, Bound<'py, PyDict>)>>,
    site: Option<Bound<'py, PyDict>>,
    shared: Option<Bound<'py, PyDict>>,
    down_start: PyReadonlyArray1<'py, f64>,
    down_end: PyReadonlyArray1<'py, f64>,
    down_scheduled: PyReadonlyArray1<'py, bool>,
    down_nodes: PyReadonlyArray1<'py, i64>,
    down_asleep: PyReadonlyArray1<'py, bool>,
    down_partition: PyReadonlyArray1<'py, i64>,
    down_range_first: PyReadonlyArray1<'py, i64>,
    down_range_end: PyReadonlyArray1<'py, i64>,
    announce_lead: f64,
    overrun: String,
    policy: String,
    window: Option<usize>,
    backfill: String,
    estimates: String,
    max_wait: Option<f64>,
    search: Option<Bound<'py, PyDict>>,
    manager: Option<Bound<'py, PyDict>>,
    python: Option<Py<PyAny>>,
    decision_log: String,
    slurm: Option<Bound<'py, PyDict>>,
}

/// A run as the core takes it, and the Python policy object when there is one.
pub struct Run {
    pub spec: RunSpec,
    pub python: Option<Py<PyAny>>,
}

/// Reads a `NativeRun`.
pub fn native_run(run: &Bound<'_, PyAny>) -> PyResult<Run> {
    let r: NativeRun<'_> = run.extract()?;
    let column = |a: &PyReadonlyArray1<'_, f64>| a.as_array().to_vec();
    let spec = RunSpec {
        jobs: JobColumns {
            id: r.job_id.as_array().to_vec(),
            submit: column(&r.submit),
            run_time: column(&r.run_time),
            requested_time: column(&r.requested_time),
            nodes: r.nodes.as_array().to_vec(),
            user: r.user.map(|u| u.as_array().to_vec()),
        },
        machine_nodes: r.machine_nodes,
        power: r.power.as_ref().map(power_model).transpose()?,
        groups: r
            .groups
            .map(|groups| {
                (groups.iter())
                    .map(|(count, d)| Ok((*count, power_model(d)?)))
                    .collect::<PyResult<Vec<_>>>()
            })
            .transpose()?,
        site: r.site.as_ref().map(site_spec).transpose()?,
        shared: r.shared.as_ref().map(shared_spec).transpose()?,
        downtime: DowntimeColumns {
            start: column(&r.down_start),
            end: column(&r.down_end),
            scheduled: r.down_scheduled.as_array().to_vec(),
            nodes: r.down_nodes.as_array().to_vec(),
            asleep: r.down_asleep.as_array().to_vec(),
            partition: r.down_partition.as_array().to_vec(),
            range_first: r.down_range_first.as_array().to_vec(),
            range_end: r.down_range_end.as_array().to_vec(),
        },
        announce_lead: r.announce_lead,
        overrun: r.overrun,
        policy: r.policy,
        window: r.window,
        backfill: r.backfill,
        estimates: r.estimates,
        max_wait: r.max_wait,
        search: r.search.as_ref().map(search_spec).transpose()?,
        manager: r.manager.as_ref().map(manager_spec).transpose()?,
        decision_log: r.decision_log,
        slurm: r.slurm.as_ref().map(slurm_setup).transpose()?,
    };
    Ok(Run {
        spec,
        python: r.python,
    })
}

/// Slurm's settings, tree, QOS and job attributes (`hpcsched.slurm_policy.native_setup`).
pub fn slurm_setup(d: &Bound<'_, PyDict>) -> PyResult<SlurmSetup> {
    let p: Bound<'_, PyDict> = get_item(d, "priority")?;
    let fair_share: String = get_item(&p, "fair_share")?;
    let priority = PrioritySettings {
        weight_age: get_item(&p, "weight_age")?,
        weight_fairshare: get_item(&p, "weight_fairshare")?,
        weight_job_size: get_item(&p, "weight_job_size")?,
        weight_partition: get_item(&p, "weight_partition")?,
        weight_qos: get_item(&p, "weight_qos")?,
        weight_assoc: get_item(&p, "weight_assoc")?,
        max_age: get_item(&p, "max_age")?,
        decay_half_life: get_item(&p, "decay_half_life")?,
        calc_period: get_item(&p, "calc_period")?,
        favor_small: get_item(&p, "favor_small")?,
        small_relative_to_time: get_item(&p, "small_relative_to_time")?,
        fair_share: match fair_share.as_str() {
            "fair_tree" => FairShare::FairTree,
            "classic" => FairShare::Classic,
            other => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "unknown fair-share {other:?}"
                )))
            }
        },
        dampening: get_item(&p, "dampening")?,
        charge_at_end: get_item(&p, "charge_at_end")?,
    };
    let q: Bound<'_, PyDict> = get_item(d, "scheduler")?;
    let scheduler = SchedulerSettings {
        sched_interval: get_item(&q, "sched_interval")?,
        default_queue_depth: get_item(&q, "default_queue_depth")?,
        bf_interval: get_item(&q, "bf_interval")?,
        bf_window: get_item(&q, "bf_window")?,
        bf_resolution: get_item(&q, "bf_resolution")?,
        bf_max_job_test: get_item(&q, "bf_max_job_test")?,
        bf_max_job_user: get_item(&q, "bf_max_job_user")?,
        bf_continue: get_item(&q, "bf_continue")?,
    };
    let parents: Vec<i64> = get_item(d, "assoc_parent")?;
    let shares: Vec<i64> = get_item(d, "assoc_shares")?;
    let users: Vec<bool> = get_item(d, "assoc_user")?;
    let associations = (parents.iter().zip(&shares).zip(&users))
        .map(|((&parent, &share), &user)| Association {
            parent: u32::try_from(parent).ok(),
            shares: u32::try_from(share).ok(),
            user,
        })
        .collect();
    let qos_dicts: Vec<Bound<'_, PyDict>> = get_item(d, "qos")?;
    let qos = (qos_dicts.iter())
        .map(|q| {
            let limits: Vec<(String, u32, u64)> = get_item(q, "tres_limits")?;
            let tres = (limits.into_iter())
                .map(|(scope, tres, most)| {
                    let scope = match scope.as_str() {
                        "per_user" => Scope::PerUser,
                        "group" => Scope::Group,
                        "per_job" => Scope::PerJob,
                        other => {
                            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                                "unknown QOS limit scope {other:?}"
                            )))
                        }
                    };
                    Ok(TresLimit { scope, tres, most })
                })
                .collect::<PyResult<Vec<_>>>()?;
            Ok(Qos {
                priority: get_item(q, "priority")?,
                max_jobs_per_user: get_item(q, "max_jobs_per_user")?,
                grp_jobs: get_item(q, "grp_jobs")?,
                max_submit_jobs_per_user: get_item(q, "max_submit_jobs_per_user")?,
                tres,
            })
        })
        .collect::<PyResult<Vec<_>>>()?;
    let u32s = |key: &str| -> PyResult<Vec<u32>> {
        let a: PyReadonlyArray1<'_, i64> = get_item(d, key)?;
        (a.as_array().iter())
            .map(|&v| {
                u32::try_from(v).map_err(|_| {
                    pyo3::exceptions::PyValueError::new_err(format!("{key}: {v} out of range"))
                })
            })
            .collect()
    };
    let nice: PyReadonlyArray1<'_, i64> = get_item(d, "job_nice")?;
    // (optional columns: none given, none used)
    let f64s = |key: &str| -> PyResult<Vec<f64>> {
        match d.get_item(key)? {
            Some(v) => Ok(v
                .extract::<PyReadonlyArray1<'_, f64>>()?
                .as_array()
                .to_vec()),
            None => Ok(Vec::new()),
        }
    };
    Ok(SlurmSetup {
        priority,
        scheduler,
        associations,
        qos,
        jobs: SlurmJobs {
            association: u32s("job_association")?,
            user: u32s("job_user")?,
            qos: u32s("job_qos")?,
            nice: nice.as_array().to_vec(),
            cpus: u32s("job_cpus")?,
            requested_cpus: u32s("job_requested_cpus")?,
            billing: f64s("job_billing")?,
            tres_priority: f64s("job_tres_priority")?,
            tres: match d.get_item("job_tres")? {
                Some(v) => (v.extract::<PyReadonlyArray1<'_, i64>>()?.as_array().iter())
                    .map(|&a| {
                        u64::try_from(a).map_err(|_| {
                            pyo3::exceptions::PyValueError::new_err(format!(
                                "job_tres: {a} out of range"
                            ))
                        })
                    })
                    .collect::<PyResult<Vec<_>>>()?,
                None => Vec::new(),
            },
        },
        tres: match d.get_item("tres")? {
            Some(v) => v.extract()?,
            None => Vec::new(),
        },
        cluster_cpus: get_item(d, "cluster_cpus")?,
        cluster_nodes: get_item(d, "cluster_nodes")?,
        partition_factors: get_item(d, "partition_factors")?,
        origin: get_item(d, "origin")?,
    })
}

/// The search options Python validated (`hpcsched.policies.SearchSpec.to_native`).
pub fn search_spec(d: &Bound<'_, PyDict>) -> PyResult<SearchSpec> {
    let weights: Bound<'_, PyDict> = get_item(d, "reward")?;
    let mut reward = [0.0; Reward::TERMS.len()];
    for (w, term) in reward.iter_mut().zip(Reward::TERMS) {
        if let Some(value) = weights.get_item(term)? {
            *w = value.extract()?;
        }
    }
    Ok(SearchSpec {
        actions: get_item(d, "actions")?,
        reward,
        horizon: get_item(d, "horizon")?,
        runtime_model: get_item(d, "runtime_model")?,
        arrivals: get_item(d, "arrivals")?,
        arrival_window: get_item(d, "arrival_window")?,
        arrival_horizon: get_item(d, "arrival_horizon")?,
        overrun_kill: get_item(d, "overrun_kill")?,
        rollout: get_item(d, "rollout")?,
        guide: get_item(d, "guide")?,
        epsilon: get_item(d, "epsilon")?,
        iterations: get_item(d, "iterations")?,
        time_budget: get_item(d, "time_budget")?,
        depth: get_item(d, "depth")?,
        gamma: get_item(d, "gamma")?,
        exploration: get_item(d, "exploration")?,
        trees: get_item(d, "trees")?,
        seed: get_item(d, "seed")?,
        lookahead: get_item(d, "lookahead")?,
        prior: get_item(d, "prior")?,
        bases: get_item(d, "bases")?,
        threads: get_item(d, "threads")?,
    })
}

/// A site Python validated (`hpcsched.run.native.site_options`): its partitions, the
/// over-limits rule and the jobs' candidates (CSR arrays).
fn site_spec(d: &Bound<'_, PyDict>) -> PyResult<SiteSpec> {
    let partitions = partition_specs(d)?;
    let offsets: PyReadonlyArray1<'_, u32> = get_item(d, "offsets")?;
    let candidates: PyReadonlyArray1<'_, u32> = get_item(d, "candidates")?;
    Ok(SiteSpec {
        partitions,
        over_limits: get_item(d, "over_limits")?,
        offsets: offsets.as_array().to_vec(),
        candidates: candidates.as_array().to_vec(),
    })
}

/// Jobs sharing nodes, as Python described them (`hpcsched.run.shared.native_shared`).
fn shared_spec(d: &Bound<'_, PyDict>) -> PyResult<SharedSpec> {
    fn array<T: numpy::Element + Copy + 'static>(
        d: &Bound<'_, PyDict>,
        key: &str,
    ) -> PyResult<Vec<T>> {
        let a: PyReadonlyArray1<'_, T> = get_item(d, key)?;
        Ok(a.as_array().to_vec())
    }
    Ok(SharedSpec {
        sharing: get_item(d, "sharing")?,
        gres_names: get_item(d, "gres_names")?,
        shape_cpus: array(d, "shape_cpus")?,
        shape_threads_per_core: array(d, "shape_threads_per_core")?,
        shape_memory: array(d, "shape_memory")?,
        shape_gres: array(d, "shape_gres")?,
        shape_weight: array(d, "shape_weight")?,
        node_shape: array(d, "node_shape")?,
        set_offsets: array(d, "set_offsets")?,
        set_nodes: array(d, "set_nodes")?,
        set_min_nodes: array(d, "set_min_nodes")?,
        set_max_nodes: array(d, "set_max_nodes")?,
        set_exclusive: array(d, "set_exclusive")?,
        set_max_mem_per_node: array(d, "set_max_mem_per_node")?,
        nodes: array(d, "nodes")?,
        tasks: array(d, "tasks")?,
        cpus_per_task: array(d, "cpus_per_task")?,
        memory_kind: array(d, "memory_kind")?,
        memory: array(d, "memory")?,
        exclusive: array(d, "exclusive")?,
        gres_request_names: get_item(d, "gres_request_names")?,
        gres_offsets: array(d, "gres_offsets")?,
        gres_name: array(d, "gres_name")?,
        gres_count: array(d, "gres_count")?,
    })
}

/// The partitions of a site Python described (`d["partitions"]`: `Site.to_native`'s).
pub fn partition_specs(d: &Bound<'_, PyDict>) -> PyResult<Vec<PartitionSpec>> {
    let raw: Vec<Bound<'_, PyDict>> = get_item(d, "partitions")?;
    let mut partitions = Vec::with_capacity(raw.len());
    for p in &raw {
        let state: String = get_item(p, "state")?;
        partitions.push(PartitionSpec {
            name: get_item(p, "name")?,
            ranges: (get_item::<Vec<[u32; 2]>>(p, "ranges")?.into_iter())
                .map(|[start, end]| (start, end))
                .collect(),
            max_time: get_item(p, "max_time")?,
            max_nodes: get_item(p, "max_nodes")?,
            min_nodes: get_item(p, "min_nodes")?,
            tier: get_item(p, "tier")?,
            state: PartitionState::from_name(&state).ok_or_else(|| {
                pyo3::exceptions::PyValueError::new_err(format!(
                    "unknown partition state {state:?}"
                ))
            })?,
        });
    }
    Ok(partitions)
}

/// A power model Python validated (`hpcsched.platform.PowerModel.to_dict`).
fn power_model(d: &Bound<'_, PyDict>) -> PyResult<PowerModel> {
    let get = |key: &str| get_item::<f64>(d, key);
    Ok(PowerModel {
        computing_w: get("computing")?,
        idle_w: get("idle")?,
        sleeping_w: get("sleeping")?,
        switching_on_w: get("switching_on")?,
        switching_off_w: get("switching_off")?,
        switch_on_s: get("switch_on")?,
        switch_on_std_s: get("switch_on_std")?,
        switch_off_s: get("switch_off")?,
        switch_off_std_s: get("switch_off_std")?,
    })
}

/// Power-manager options Python validated (`hpcsched.policies.PowerSpec.to_native`): a
/// manager by `name`, or (without one) only node power states, `sample_transitions` alone.
fn manager_spec(d: &Bound<'_, PyDict>) -> PyResult<ManagerSpec> {
    let name: Option<String> = match d.get_item("name")? {
        Some(value) => value.extract()?,
        None => None,
    };
    let manager = match name {
        Some(name) => Some(NamedManager {
            name,
            idle_timeout: get_item(d, "idle_timeout")?,
            icon: icon_config(d)?,
        }),
        None => None,
    };
    Ok(ManagerSpec {
        manager,
        sample_transitions: get_item(d, "sample_transitions")?,
    })
}

/// SNF-ICON's parameters among a power manager's options.
fn icon_config(d: &Bound<'_, PyDict>) -> PyResult<IconConfig> {
    let screen = ScreenConfig {
        min_samples: get_item(d, "screen_min_samples")?,
        max_samples: get_item(d, "screen_max_samples")?,
        cv_tolerance: get_item(d, "cv_tolerance")?,
        max_autocorrelation: get_item(d, "max_autocorrelation")?,
        ks_multiplier: get_item(d, "ks_multiplier")?,
        ks_scale: get_item(d, "ks_scale")?,
    };
    Ok(IconConfig {
        alpha: get_item(d, "alpha")?,
        beta: get_item(d, "beta")?,
        initial_arrival_rate: get_item(d, "initial_arrival_rate")?,
        arrival_smoothing: get_item(d, "arrival_smoothing")?,
        service_smoothing: get_item(d, "service_smoothing")?,
        resource_smoothing: get_item(d, "resource_smoothing")?,
        sigma_floor: get_item(d, "sigma_floor")?,
        min_spares: get_item(d, "min_spares")?,
        max_spares: get_item(d, "max_spares")?,
        max_horizon: get_item(d, "max_horizon")?,
        recency_window: get_item(d, "recency_window")?,
        screen_window: get_item(d, "screen_window")?,
        screen,
        require_service_samples: get_item(d, "require_service_samples")?,
        stale_completion_shutdown: get_item(d, "stale_completion_shutdown")?,
        ..IconConfig::default()
    })
}

/// `d[key]`, extracted; a missing key is a KeyError.
pub fn get_item<'py, T: pyo3::conversion::FromPyObjectOwned<'py>>(
    d: &Bound<'py, PyDict>,
    key: &str,
) -> PyResult<T> {
    d.get_item(key)?
        .ok_or_else(|| pyo3::exceptions::PyKeyError::new_err(key.to_string()))?
        .extract()
        .map_err(Into::into)
}
