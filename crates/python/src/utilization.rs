//! `utilization`: a finished run's utilization over uptime and before maintenance
//! (`hpcsched_core::engine::utilization`), from columns.

use hpcsched_core::engine::utilization::{overall_utilization as overall_by_attempt, Utilization};
use numpy::PyReadonlyArray1;
use pyo3::prelude::*;

use crate::error::IntoPyResult;
use hpcsched_core::spec::DowntimeColumns;

/// Utilization over uptime in `horizon`: (over the whole of it, per uptime period as
/// (from, to, utilization), in the 48 h before each scheduled maintenance as (window index,
/// from, utilization)); `None` where nothing was available. Attempts (jobs and attempts killed
/// by downtime) as columns, NaN start or end for those never started; windows as columns,
/// `down_nodes` 0 meaning the whole machine.
#[pyfunction]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
#[pyo3(signature = (
    start, end, nodes, machine_nodes, down_start, down_end, down_scheduled, down_nodes, horizon
))]
pub(crate) fn utilization(
    py: Python<'_>,
    start: PyReadonlyArray1<'_, f64>,
    end: PyReadonlyArray1<'_, f64>,
    nodes: PyReadonlyArray1<'_, f64>,
    machine_nodes: u32,
    down_start: PyReadonlyArray1<'_, f64>,
    down_end: PyReadonlyArray1<'_, f64>,
    down_scheduled: PyReadonlyArray1<'_, bool>,
    down_nodes: PyReadonlyArray1<'_, i64>,
    horizon: (f64, f64),
) -> PyResult<(
    Option<f64>,
    Vec<(f64, f64, Option<f64>)>,
    Vec<(usize, f64, Option<f64>)>,
)> {
    let (start, end, nodes) = (start.as_slice()?, end.as_slice()?, nodes.as_slice()?);
    check_lengths(start, end, nodes)?;
    let windows = windows(py, &down_start, &down_end, &down_scheduled, &down_nodes)?;
    let attempts = (0..start.len()).map(|i| (start[i], end[i], nodes[i]));
    let (a, b) = horizon;
    let report = py.detach(|| {
        Utilization::new(attempts, machine_nodes, &windows).report(machine_nodes, &windows, a, b)
    });
    Ok((
        report.overall_uptime,
        report
            .uptime_periods
            .iter()
            .map(|p| (p.from, p.to, p.utilization))
            .collect(),
        report
            .before_maintenance
            .iter()
            .map(|w| (w.window, w.from, w.utilization))
            .collect(),
    ))
}

/// Utilization over uptime over the whole of `horizon` alone (`None` where nothing was
/// available), by attempt: one pass, no sort. The same quantity as `utilization`'s first
/// value, up to the order of the additions; the same columns.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (
    start, end, nodes, machine_nodes, down_start, down_end, down_scheduled, down_nodes, horizon
))]
pub(crate) fn overall_utilization(
    py: Python<'_>,
    start: PyReadonlyArray1<'_, f64>,
    end: PyReadonlyArray1<'_, f64>,
    nodes: PyReadonlyArray1<'_, f64>,
    machine_nodes: u32,
    down_start: PyReadonlyArray1<'_, f64>,
    down_end: PyReadonlyArray1<'_, f64>,
    down_scheduled: PyReadonlyArray1<'_, bool>,
    down_nodes: PyReadonlyArray1<'_, i64>,
    horizon: (f64, f64),
) -> PyResult<Option<f64>> {
    let (start, end, nodes) = (start.as_slice()?, end.as_slice()?, nodes.as_slice()?);
    check_lengths(start, end, nodes)?;
    let windows = windows(py, &down_start, &down_end, &down_scheduled, &down_nodes)?;
    let attempts = (0..start.len()).map(|i| (start[i], end[i], nodes[i]));
    let (a, b) = horizon;
    Ok(py.detach(|| overall_by_attempt(attempts, machine_nodes, &windows, a, b)))
}

fn check_lengths(start: &[f64], end: &[f64], nodes: &[f64]) -> PyResult<()> {
    if end.len() != start.len() || nodes.len() != start.len() {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "start, end and nodes have different lengths",
        ));
    }
    Ok(())
}

/// The downtime windows from their columns (`down_nodes` 0: the whole machine).
fn windows(
    py: Python<'_>,
    down_start: &PyReadonlyArray1<'_, f64>,
    down_end: &PyReadonlyArray1<'_, f64>,
    down_scheduled: &PyReadonlyArray1<'_, bool>,
    down_nodes: &PyReadonlyArray1<'_, i64>,
) -> PyResult<Vec<hpcsched_core::model::Downtime>> {
    let ds = down_start.as_slice()?;
    DowntimeColumns {
        start: ds.to_vec(),
        end: down_end.as_slice()?.to_vec(),
        scheduled: down_scheduled.as_slice()?.to_vec(),
        nodes: down_nodes.as_slice()?.to_vec(),
        asleep: vec![false; ds.len()],
        partition: Vec::new(),
        range_first: Vec::new(),
        range_end: Vec::new(),
    }
    .windows()
    .py_result(py)
}
