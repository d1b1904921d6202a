//! `aqmlab._core`: the Python face of the Rust crates. Thin: the simulator takes a JSON network
//! description and returns a JSON summary plus time series as little-endian f64 / u64 bytes.
//! Panics never cross into Python: they are caught and raised as `RuntimeError`.

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

pub mod pyaqm;

fn panic_msg(e: Box<dyn std::any::Any + Send>) -> PyErr {
    let m = e
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "unknown panic".into());
    PyRuntimeError::new_err(format!("internal error (please report): {m}"))
}

/// Error raised when an end-of-run invariant fails.
mod errors {
    pyo3::create_exception!(_core, InvariantError, pyo3::exceptions::PyRuntimeError);
    pyo3::create_exception!(_core, PythonAqmError, pyo3::exceptions::PyValueError);
}
use errors::{InvariantError, PythonAqmError};

fn sim_err(e: sim::SimError) -> PyErr {
    match e {
        sim::SimError::Config(m) => PyValueError::new_err(m),
        e @ sim::SimError::Invariant(_) => InvariantError::new_err(e.to_string()),
    }
}

/// Runs a simulation described by `config_json`.
///
/// `progress(now_s, end_s, events)` is called between chunks of `chunk_s` simulated seconds
/// (the GIL is released while Rust runs, unless Python AQMs run). Returns `(summary_json,
/// series)` where `series` maps a name to `(t_ns_bytes, {column: f64_bytes})`.
///
/// `python_aqms` maps an AQM name of the configuration (`python:N`) to `(label, name, make,
/// field)`: a link (or each flow queue of `fq` whose `queue_aqm` it is) with that AQM gets
/// `make(**link)` wrapped as a [`pyaqm::PyAqm`]; `field` names the table in a hook's error. A failed hook stops
/// the run with `PythonAqmError` (a `ValueError`) naming the file, class and hook.
#[pyfunction]
#[pyo3(signature = (config_json, progress=None, chunk_s=1.0, python_aqms=None))]
fn simulate<'py>(
    py: Python<'py>,
    config_json: &str,
    progress: Option<PyObject>,
    chunk_s: f64,
    python_aqms: Option<Bound<'py, PyDict>>,
) -> PyResult<(String, Bound<'py, PyDict>)> {
    let failure = Arc::new(pyaqm::Failure::default());
    let python = python_aqms.as_ref().is_some_and(|d| !d.is_empty());
    let parse = || -> PyResult<sim::Config> {
        serde_json::from_str(config_json)
            .map_err(|e| PyValueError::new_err(format!("configuration: {e}")))
    };
    let mut s = if let Some(specs) = python_aqms.as_ref().filter(|_| python) {
        // Python AQMs are built with the GIL held, and the run keeps holding it: each hook
        // call then costs no GIL hand-over (issue 23 item 3).
        let cfg = parse()?;
        let mut factory = |a: &sim::config::AqmConfig, ctx: &aqm::LinkContext| {
            let spec = specs.get_item(&a.name).ok().flatten()?;
            let built = spec
                .extract::<(String, String, Bound<'py, PyAny>, String)>()
                .map_err(|e| e.to_string())
                .and_then(|(label, name, make, field)| {
                    pyaqm::build(py, &make, (&label, &name, &field), ctx, &failure)
                        .map_err(|e| format!("python: {e}"))
                });
            Some(built.map_err(|e| aqm::ParamError::new("", e)))
        };
        catch_unwind(AssertUnwindSafe(|| sim::Sim::new_with(&cfg, &mut factory)))
            .map_err(panic_msg)?
            .map_err(sim_err)?
    } else {
        // Parsing and building a large network takes seconds: done without the GIL, so Python
        // threads (a progress line) run meanwhile. The description is dropped once built: the
        // run holds what it needs (issue 13, memory per flow).
        py.allow_threads(|| -> PyResult<sim::Sim> {
            let cfg = parse()?;
            catch_unwind(AssertUnwindSafe(|| sim::Sim::new(&cfg)))
                .map_err(panic_msg)?
                .map_err(sim_err)
        })?
    };
    let hook_failed = |f: &pyaqm::Failure| {
        f.take_interrupt()
            .or_else(|| f.get().map(PythonAqmError::new_err))
    };
    // Progress every `chunk_s` simulated seconds; signals (Ctrl-C) every STEP_WALL of wall time,
    // whatever the run's events per simulated second: the simulated step adapts to that.
    const STEP_WALL: f64 = 0.02;
    let report = ((chunk_s.max(1e-3)) * 1e9) as u64;
    let (mut until, mut next_report, mut step) = (0u64, report, 1_000_000u64);
    loop {
        until = until.saturating_add(step);
        let t0 = std::time::Instant::now();
        let done = if python {
            catch_unwind(AssertUnwindSafe(|| s.run_until(until))).map_err(panic_msg)?
        } else {
            py.allow_threads(|| catch_unwind(AssertUnwindSafe(|| s.run_until(until))))
                .map_err(panic_msg)?
        };
        if let Some(e) = hook_failed(&failure) {
            return Err(e);
        }
        let wall = t0.elapsed().as_secs_f64();
        if wall < STEP_WALL / 2.0 {
            step = step.saturating_mul(2).min(report);
        } else if wall > STEP_WALL * 2.0 {
            step = (step / 2).max(1_000);
        }
        if let Some(cb) = progress.as_ref().filter(|_| done || until >= next_report) {
            cb.call1(py, (s.now as f64 / 1e9, s.end as f64 / 1e9, s.events))?;
            next_report = until.saturating_add(report);
        }
        py.check_signals()?;
        if done {
            break;
        }
    }
    let res = catch_unwind(AssertUnwindSafe(|| s.finish()))
        .map_err(panic_msg)?
        .map_err(sim_err)?;
    if let Some(e) = hook_failed(&failure) {
        return Err(e); // a stats() or drop_prob() hook failed while the results were gathered
    }
    let summary = serde_json::to_string(&res.summary)
        .map_err(|e| PyRuntimeError::new_err(format!("summary: {e}")))?;
    let out = PyDict::new(py);
    for ns in &res.series {
        let t: Vec<u8> = ns.t.iter().flat_map(|x| x.to_le_bytes()).collect();
        let cols = PyDict::new(py);
        for (name, v) in &ns.cols {
            let b: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
            cols.set_item(name, PyBytes::new(py, &b))?;
        }
        out.set_item(&ns.name, (PyBytes::new(py, &t), cols))?;
    }
    Ok((summary, out))
}

/// The algorithms: a list of dicts with name, summary, source and params (name, kind, default,
/// help, choices).
#[pyfunction]
fn list_aqms(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    use aqm::params::{DefaultValue, ParamKind};
    let out = PyList::empty(py);
    let all = aqm::REGISTRY
        .iter()
        .map(|a| (a.name, a.summary, a.source, a.params))
        .chain(qdisc::sched::qdiscs().map(|q| (q.name, q.summary, q.source, q.params)));
    for (name, summary, source, params) in all {
        let d = PyDict::new(py);
        d.set_item("name", name)?;
        d.set_item("summary", summary)?;
        d.set_item("source", source)?;
        let ps = PyList::empty(py);
        for p in params {
            let pd = PyDict::new(py);
            pd.set_item("name", p.name)?;
            pd.set_item("kind", p.kind.label())?;
            if let ParamKind::Choice(opts) = p.kind {
                pd.set_item("choices", opts.to_vec())?;
            }
            match p.default {
                DefaultValue::Num(x) => pd.set_item("default", x)?,
                DefaultValue::Bool(b) => pd.set_item("default", b)?,
                DefaultValue::Str(s) => pd.set_item("default", s)?,
                DefaultValue::Auto => pd.set_item("default", "auto")?,
                DefaultValue::Required => pd.set_item("default", py.None())?,
            }
            pd.set_item("help", p.help)?;
            ps.append(pd)?;
        }
        d.set_item("params", ps)?;
        out.append(d)?;
    }
    Ok(out)
}

/// Builds AQM `name` with `params_json` (base units) for a link, raising `ValueError("param: msg")`
/// when a parameter is unknown, of the wrong kind or out of range.
#[pyfunction]
#[pyo3(signature = (name, params_json, rate_bps, buffer_pkts, buffer_bytes, mean_pkt_bytes))]
fn check_aqm(
    name: &str,
    params_json: &str,
    rate_bps: u64,
    buffer_pkts: Option<u32>,
    buffer_bytes: Option<u64>,
    mean_pkt_bytes: u32,
) -> PyResult<()> {
    let (cfg, m, ctx) = pyaqm::aqm_config(
        name,
        params_json,
        rate_bps,
        buffer_pkts,
        buffer_bytes,
        mean_pkt_bytes,
    )
    .map_err(PyValueError::new_err)?;
    let buffer = ctx.buffer;
    let built = catch_unwind(AssertUnwindSafe(|| {
        if qdisc::sched::is_scheduler(name) {
            let m =
                sim::network::fq_params(&cfg, buffer).map_err(|e| aqm::ParamError::new("", e))?;
            qdisc::sched::build::<sim::packet::Packet>(name, &m, &ctx)
                .expect("a registered scheduler")
                .map(|_| ())
        } else {
            aqm::build(name, &m, &ctx).map(|_| ())
        }
    }));
    built
        .map_err(panic_msg)?
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The compiled-in module.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(list_aqms, m)?)?;
    m.add_function(wrap_pyfunction!(check_aqm, m)?)?;
    m.add("InvariantError", m.py().get_type::<InvariantError>())?;
    m.add("PythonAqmError", m.py().get_type::<PythonAqmError>())?;
    m.add_class::<pyaqm::PacketView>()?;
    m.add_class::<pyaqm::QueueViewPy>()?;
    m.add_class::<pyaqm::RngView>()?;
    m.add_class::<pyaqm::BuiltinAqm>()?;
    m.add("HOOK_TIME_LIMIT_S", pyaqm::HOOK_TIME_LIMIT.as_secs_f64())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
