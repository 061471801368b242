//! `parse_swf`: the SWF tokenizer, returning numpy columns.

use std::path::PathBuf;

use hpcsched_core::io::swf::{
    parse_swf as core_parse_swf, parse_swf_file as core_parse_swf_file, SwfTable,
};
use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use crate::error::to_py_err;

/// Parses SWF text. Returns a dict with `header` (list of (key, value)), `comments` (list of the
/// other comment lines' text), `malformed` (list of (line, field or None, reason)) and one numpy
/// array per column.
#[pyfunction]
#[pyo3(signature = (data, path, lenient=false))]
pub fn parse_swf<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyBytes>,
    path: &str,
    lenient: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let bytes = data.as_bytes();
    let table = py
        .detach(|| core_parse_swf(bytes, lenient))
        .map_err(|e| to_py_err(py, e, Some(path)))?;
    into_dict(py, table)
}

/// Reads and parses an SWF file (plain or gzip); same result as `parse_swf`.
#[pyfunction]
#[pyo3(signature = (path, lenient=false))]
pub fn parse_swf_file<'py>(
    py: Python<'py>,
    path: PathBuf,
    lenient: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let table = py
        .detach(|| core_parse_swf_file(&path, lenient))
        .map_err(|e| to_py_err(py, e, Some(&path.to_string_lossy())))?;
    into_dict(py, table)
}

fn into_dict(py: Python<'_>, table: SwfTable) -> PyResult<Bound<'_, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("header", PyList::new(py, table.header)?)?;
    out.set_item("comments", PyList::new(py, table.comments)?)?;
    let malformed: Vec<(u64, Option<String>, String)> = table
        .malformed
        .into_iter()
        .map(|m| (m.line, m.field, m.reason))
        .collect();
    out.set_item("malformed", PyList::new(py, malformed)?)?;
    out.set_item("job_id", table.job_id.into_pyarray(py))?;
    out.set_item("submit", table.submit.into_pyarray(py))?;
    out.set_item("wait", table.wait.into_pyarray(py))?;
    out.set_item("run_time", table.run_time.into_pyarray(py))?;
    out.set_item("allocated_procs", table.allocated_procs.into_pyarray(py))?;
    out.set_item("requested_procs", table.requested_procs.into_pyarray(py))?;
    out.set_item("requested_time", table.requested_time.into_pyarray(py))?;
    out.set_item("requested_memory", table.requested_memory.into_pyarray(py))?;
    out.set_item("status", table.status.into_pyarray(py))?;
    out.set_item("user", table.user.into_pyarray(py))?;
    out.set_item("group", table.group.into_pyarray(py))?;
    out.set_item("queue", table.queue.into_pyarray(py))?;
    out.set_item("partition", table.partition.into_pyarray(py))?;
    out.set_item("line", table.line.into_pyarray(py))?;
    Ok(out)
}
