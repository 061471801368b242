//! `plan_snapshot`: the advisor's plan for a live cluster's snapshot. Bindings only.

use hpcsched_core::advise::{plan, PendingJob, Planner, RunningJob, Snapshot, SnapshotSite};
use hpcsched_core::model::Rejection;
use numpy::{IntoPyArray, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::{get_item, partition_specs, search_spec, slurm_setup};
use crate::error::IntoPyResult;

/// Plans the pending jobs of a snapshot (columns; times in seconds on any one clock).
/// `maint_nodes` 0 means every node. `search` (mars, random) as for `Simulation`.
/// `slurm` (`hpcsched.slurm_policy.slurm_inputs(...).native`: the pending jobs' attributes,
/// then the running jobs') adds Slurm's order at `now` and the starts under it
/// (`slurm_rank`, -1 for none, and `slurm_start`), and lets `policy` be `slurm`.
/// Returns the planned start of each pending job and the decision behind the plan.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (
    now, machine_nodes, down_nodes,
    pending_id, pending_submit, pending_nodes, pending_limit,
    running_id, running_start, running_nodes, running_limit,
    maint_start, maint_end, maint_nodes,
    policy, window, backfill, search=None, site=None, slurm=None
))]
pub fn plan_snapshot<'py>(
    py: Python<'py>,
    now: f64,
    machine_nodes: u32,
    down_nodes: u32,
    pending_id: PyReadonlyArray1<'py, i64>,
    pending_submit: PyReadonlyArray1<'py, f64>,
    pending_nodes: PyReadonlyArray1<'py, i64>,
    pending_limit: PyReadonlyArray1<'py, f64>,
    running_id: PyReadonlyArray1<'py, i64>,
    running_start: PyReadonlyArray1<'py, f64>,
    running_nodes: PyReadonlyArray1<'py, i64>,
    running_limit: PyReadonlyArray1<'py, f64>,
    maint_start: PyReadonlyArray1<'py, f64>,
    maint_end: PyReadonlyArray1<'py, f64>,
    maint_nodes: PyReadonlyArray1<'py, i64>,
    policy: &str,
    window: Option<usize>,
    backfill: &str,
    search: Option<&Bound<'py, PyDict>>,
    site: Option<&Bound<'py, PyDict>>,
    slurm: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyDict>> {
    let nodes = |n: i64| u32::try_from(n).unwrap_or(0); // 0 is refused by the core
    let pending = (pending_id.as_array().iter())
        .zip(pending_submit.as_array().iter())
        .zip(pending_nodes.as_array().iter())
        .zip(pending_limit.as_array().iter())
        .map(|(((&id, &submit), &n), &limit)| PendingJob {
            id,
            submit,
            nodes: nodes(n),
            limit,
        })
        .collect();
    let running = (running_id.as_array().iter())
        .zip(running_start.as_array().iter())
        .zip(running_nodes.as_array().iter())
        .zip(running_limit.as_array().iter())
        .map(|(((&id, &start), &n), &limit)| RunningJob {
            id,
            start,
            nodes: nodes(n),
            limit,
        })
        .collect();
    let maintenance = (maint_start.as_array().iter())
        .zip(maint_end.as_array().iter())
        .zip(maint_nodes.as_array().iter())
        .map(|((&start, &end), &n)| (start, end, (n > 0).then(|| nodes(n))))
        .collect();
    let snapshot = Snapshot {
        now,
        machine_nodes,
        down_nodes,
        pending,
        running,
        maintenance,
        site: site.map(snapshot_site).transpose()?,
        slurm: slurm.map(slurm_setup).transpose()?,
    };
    let planner = match search {
        Some(options) => Planner::Search {
            name: policy.to_string(),
            options: Box::new(search_spec(options)?.options().py_result(py)?),
        },
        None => Planner::Queue {
            name: policy.to_string(),
            window,
            backfill: backfill.to_string(),
        },
    };
    // The search can take its whole time budget: let other Python threads run meanwhile.
    let result = py.detach(|| plan(&snapshot, &planner)).py_result(py)?;
    let out = PyDict::new(py);
    out.set_item("planned_start", result.planned_start.into_pyarray(py))?;
    out.set_item("heuristic", result.heuristic)?;
    out.set_item("window", result.window)?;
    out.set_item("decided_at", result.decided_at)?;
    out.set_item("drain", result.drain)?;
    out.set_item("iterations", result.iterations)?;
    out.set_item("outcomes", result.outcomes)?;
    out.set_item("seconds", result.seconds)?;
    if slurm.is_some() {
        let rank: Vec<i64> = (result.slurm_rank.iter())
            .map(|r| r.map_or(-1, i64::from))
            .collect();
        out.set_item("slurm_rank", rank.into_pyarray(py))?;
        out.set_item("slurm_start", result.slurm_start.into_pyarray(py))?;
    }
    if site.is_some() {
        let partition: Vec<i64> = (result.partition.iter())
            .map(|p| p.map_or(-1, i64::from))
            .collect();
        out.set_item("partition", partition.into_pyarray(py))?;
        out.set_item("tier", result.tier.into_pyarray(py))?;
        let names: Vec<Option<&str>> = (result.rejection.iter())
            .map(|r| r.map(|r| Rejection::NAMES[r as usize]))
            .collect();
        out.set_item("rejection", names)?;
    }
    Ok(out)
}

/// A snapshot's partitions (`hpcsched.advise.plan`): the scope's partitions over node
/// indices, each pending job's candidates and each running job's nodes (ragged arrays), the
/// node ranges down, and maintenance as (start, end, first node, end node).
fn snapshot_site(d: &Bound<'_, PyDict>) -> PyResult<SnapshotSite> {
    let column = |key: &str| -> PyResult<Vec<u32>> {
        let values: PyReadonlyArray1<'_, u32> = get_item(d, key)?;
        Ok(values.as_array().to_vec())
    };
    let maintenance: Vec<(f64, f64, u32, u32)> = get_item(d, "maintenance")?;
    Ok(SnapshotSite {
        partitions: partition_specs(d)?,
        pending_offsets: column("pending_offsets")?,
        pending_candidates: column("pending_candidates")?,
        running_offsets: column("running_offsets")?,
        running_nodes: column("running_nodes")?,
        down: get_item(d, "down")?,
        maintenance: (maintenance.into_iter())
            .map(|(start, end, first, last)| (start, end, (first, last)))
            .collect(),
    })
}
