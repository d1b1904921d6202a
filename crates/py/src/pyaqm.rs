//! The Python AQM bridge (issue 23): a [`PyAqm`] is a `Box<dyn Aqm>` whose hooks call the methods
//! of a Python object, so an algorithm written in Python runs inside the Rust simulator.
//!
//! Cost per hook call: one call into Python (the bound method is looked up once, at build), with
//! the packet, queue and RNG views reused (their fields are overwritten in place, so nothing is
//! allocated for them per packet). The only per-call Python objects are the argument tuple (from
//! CPython's free list) and the integer `now`. The run holds the GIL throughout (see `simulate`),
//! so `Python::with_gil` inside a hook only notes that it is held.
//!
//! A hook that raises, returns a wrong type or runs longer than [`HOOK_TIME_LIMIT`] fails the
//! run: the first error is kept in the shared [`Failure`], later hooks return at once (admit),
//! and the driver stops the run at its next check and raises the error as one line naming the
//! file, class and hook.

use aqm::params::{Buffer, LinkContext};
use aqm::{Aqm, AqmRng, PacketMeta, Precedence, QueueView, Time, Verdict};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyInt, PyTuple};
use std::collections::HashSet;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// A hook call that takes longer than this fails the run (issue 23: "a hook that takes 10 s").
/// A hook that never returns is not caught by it; Ctrl-C stops it (KeyboardInterrupt).
pub const HOOK_TIME_LIMIT: Duration = Duration::from_secs(1);

/// The packet as a Python AQM sees it: the fields of the Rust [`PacketMeta`], under its names.
#[pyclass(module = "aqmlab._core", name = "PacketView")]
pub struct PacketView {
    /// Flow identifier (index of the flow in the run).
    #[pyo3(get)]
    flow: u32,
    /// Size on the wire, bytes.
    #[pyo3(get)]
    size_bytes: u32,
    /// ECN-capable transport (ECT(0) or ECT(1)).
    #[pyo3(get)]
    ecn_capable: bool,
    /// The IP ECN codepoint (RFC 3168 s. 5): 0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE.
    #[pyo3(get)]
    ecn: u8,
    /// Drop precedence set by an edge marker: "in" or "out".
    in_profile: bool,
}

#[pymethods]
impl PacketView {
    /// Drop precedence set by an edge marker (RIO / ModRED): "in" or "out".
    #[getter]
    fn precedence(&self) -> &'static str {
        if self.in_profile {
            "in"
        } else {
            "out"
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "PacketView(flow={}, size_bytes={}, ecn={}, precedence={:?})",
            self.flow,
            self.size_bytes,
            self.ecn,
            self.precedence()
        )
    }
}

impl PacketView {
    fn set(&mut self, m: &PacketMeta) {
        self.flow = m.flow;
        self.size_bytes = m.size_bytes;
        self.ecn_capable = m.ecn_capable();
        // The two ECN bits of the IP header (RFC 3168 s. 5).
        self.ecn = m.ecn.bits();
        self.in_profile = m.precedence == Precedence::In;
    }
}

/// The queue as a Python AQM sees it: the fields of the Rust [`QueueView`], under its names.
#[pyclass(module = "aqmlab._core", name = "QueueView")]
pub struct QueueViewPy {
    /// Packets waiting (not counting the one being transmitted).
    #[pyo3(get)]
    len_pkts: u32,
    /// Bytes waiting.
    #[pyo3(get)]
    len_bytes: u64,
    /// When the queue is empty and the link idle: since when (ns); otherwise None.
    #[pyo3(get)]
    idle_since: Option<Time>,
}

#[pymethods]
impl QueueViewPy {
    fn __repr__(&self) -> String {
        format!(
            "QueueView(len_pkts={}, len_bytes={}, idle_since={:?})",
            self.len_pkts, self.len_bytes, self.idle_since
        )
    }
}

impl QueueViewPy {
    fn set(&mut self, q: &QueueView) {
        self.len_pkts = q.len_pkts;
        self.len_bytes = q.len_bytes;
        self.idle_since = q.idle_since;
    }
}

/// The simulator's random number generator, handed to a Python AQM as `self.rng`: the very
/// generator a built-in AQM on the same link draws from, so a run is reproducible from its seed
/// and a Python port draws the same numbers as the Rust original.
#[pyclass(module = "aqmlab._core", name = "Rng")]
pub struct RngView {
    rng: AqmRng,
}

#[pymethods]
impl RngView {
    /// A uniform float in [0, 1): 53 random bits, as Rust's `rng.random::<f64>()`.
    fn random(&mut self) -> f64 {
        use rand::Rng;
        self.rng.random::<f64>()
    }

    /// A uniform 64-bit unsigned integer.
    fn next_u64(&mut self) -> u64 {
        use rand::RngCore;
        self.rng.next_u64()
    }
}

/// The first error of a run's Python hooks, shared between the bridges and the driver.
#[derive(Debug, Default)]
pub struct Failure {
    msg: Mutex<Option<String>>,
    /// A hook was interrupted (Ctrl-C: KeyboardInterrupt, or SystemExit): not the hook's fault,
    /// the driver raises it again as it is.
    interrupt: Mutex<Option<PyErr>>,
}

impl Failure {
    /// The interruption a hook received, if any (taken: raised once).
    pub fn take_interrupt(&self) -> Option<PyErr> {
        self.interrupt.lock().ok().and_then(|mut g| g.take())
    }

    /// The error, if a hook failed.
    pub fn get(&self) -> Option<String> {
        self.msg.lock().map(|m| m.clone()).unwrap_or(None)
    }

    fn failed(&self) -> bool {
        self.msg.lock().map(|m| m.is_some()).unwrap_or(true)
    }

    fn set(&self, m: String) {
        if let Ok(mut g) = self.msg.lock() {
            g.get_or_insert(m);
        }
    }
}

/// A name that lives for the whole process (the `Aqm` trait names things with `&'static str`):
/// each distinct name is leaked once, however many runs use it.
fn intern(s: &str) -> &'static str {
    static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let set = NAMES.get_or_init(Default::default);
    let mut g = set.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(n) = g.get(s) {
        return n;
    }
    let n: &'static str = Box::leak(s.to_string().into_boxed_str());
    g.insert(n);
    n
}

/// One Python AQM instance guarding one queue.
pub struct PyAqm {
    label: String,
    /// The scenario field its errors name (`aqm.python`, `aqm.queue.python` for fq's queues).
    field: String,
    name: &'static str,
    enqueue: Py<PyAny>,
    on_overflow: Option<Py<PyAny>>,
    on_empty: Option<Py<PyAny>>,
    on_pushout: Option<Py<PyAny>>,
    dequeue: Option<Py<PyAny>>,
    next_update: Option<Py<PyAny>>,
    update: Option<Py<PyAny>>,
    drop_prob: Option<Py<PyAny>>,
    avg_queue: Option<Py<PyAny>>,
    stats: Option<Py<PyAny>>,
    pkt: Py<PacketView>,
    queue: Py<QueueViewPy>,
    rng: Py<RngView>,
    failure: Arc<Failure>,
}

impl std::fmt::Debug for PyAqm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PyAqm({})", self.label)
    }
}

fn method(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Option<Py<PyAny>>> {
    match obj.getattr(name) {
        Ok(m) if m.is_none() => Ok(None),
        Ok(m) if m.is_callable() => Ok(Some(m.unbind())),
        Ok(_) => Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "{name} is not a method"
        ))),
        Err(_) => Ok(None),
    }
}

impl PyAqm {
    /// Wraps `obj` (an instance of a Python AQM class) for a link; `label` names it in errors
    /// (`file.py:Class`). `obj.rng` is set to the RNG view. Fails with a one-line message when
    /// the object lacks `enqueue` or has only one of `next_update` / `update`.
    pub fn new(
        py: Python<'_>,
        obj: &Bound<'_, PyAny>,
        label: &str,
        name: &str,
        failure: Arc<Failure>,
    ) -> Result<PyAqm, String> {
        let err = |e: PyErr| format!("{label}: {e}");
        let enqueue = method(obj, "enqueue")
            .map_err(err)?
            .ok_or_else(|| format!("{label}: the class has no enqueue(pkt, queue, now) method"))?;
        let next_update = method(obj, "next_update").map_err(err)?;
        let update = method(obj, "update").map_err(err)?;
        if next_update.is_some() != update.is_some() {
            return Err(format!(
                "{label}: define both next_update() and update(queue, now), or neither"
            ));
        }
        let pkt = Py::new(
            py,
            PacketView {
                flow: 0,
                size_bytes: 0,
                ecn_capable: false,
                ecn: 0,
                in_profile: false,
            },
        )
        .map_err(err)?;
        let queue = Py::new(
            py,
            QueueViewPy {
                len_pkts: 0,
                len_bytes: 0,
                idle_since: None,
            },
        )
        .map_err(err)?;
        let rng = Py::new(
            py,
            RngView {
                rng: aqm::rng_from_seed(0),
            },
        )
        .map_err(err)?;
        obj.setattr("rng", rng.clone_ref(py)).map_err(err)?;
        Ok(PyAqm {
            label: label.to_string(),
            field: "aqm.python".to_string(),
            name: intern(name),
            enqueue,
            on_overflow: method(obj, "on_overflow").map_err(err)?,
            on_empty: method(obj, "on_empty").map_err(err)?,
            on_pushout: method(obj, "on_pushout").map_err(err)?,
            dequeue: method(obj, "dequeue").map_err(err)?,
            next_update,
            update,
            drop_prob: method(obj, "drop_prob").map_err(err)?,
            avg_queue: method(obj, "avg_queue").map_err(err)?,
            stats: method(obj, "stats").map_err(err)?,
            pkt,
            queue,
            rng,
            failure,
        })
    }

    /// Calls hook `hook` with `args`, timing it; `None` once any hook of the run has failed.
    fn call<'py>(
        &self,
        py: Python<'py>,
        hook: &str,
        f: &Py<PyAny>,
        args: impl IntoPyObject<'py, Target = PyTuple>,
    ) -> Option<Bound<'py, PyAny>> {
        if self.failure.failed() {
            return None;
        }
        let t0 = Instant::now();
        let r = f.bind(py).call1(args);
        let dt = t0.elapsed();
        match r {
            Ok(v) if dt <= HOOK_TIME_LIMIT => Some(v),
            Ok(_) => {
                self.fail(
                    hook,
                    format!(
                        "took {:.1} s (a hook may take at most {} s)",
                        dt.as_secs_f64(),
                        HOOK_TIME_LIMIT.as_secs_f64()
                    ),
                );
                None
            }
            Err(e) if !e.is_instance_of::<pyo3::exceptions::PyException>(py) => {
                // KeyboardInterrupt, SystemExit: the user's, not a fault of the hook.
                if let Ok(mut g) = self.failure.interrupt.lock() {
                    g.get_or_insert(e);
                }
                self.failure
                    .set(format!("{}: {} interrupted", self.field, self.label));
                None
            }
            Err(e) => {
                let t = e.get_type(py);
                let ty = t.name().map(|n| n.to_string()).unwrap_or_default();
                let msg = e.value(py).to_string();
                let line = msg.lines().next().unwrap_or("").to_string();
                self.fail(hook, format!("raised {ty}: {line}"));
                None
            }
        }
    }

    fn fail(&self, hook: &str, what: String) {
        self.failure
            .set(format!("{}: {}.{hook} {what}", self.field, self.label));
    }

    fn verdict(&self, hook: &str, v: Option<Bound<'_, PyAny>>) -> Verdict {
        let Some(v) = v else {
            return Verdict::Admit;
        };
        let n = if v.is_instance_of::<PyBool>() {
            None
        } else {
            v.downcast::<PyInt>()
                .ok()
                .and_then(|i| i.extract::<u8>().ok())
        };
        match n {
            Some(0) => Verdict::Admit,
            Some(1) => Verdict::Drop,
            Some(2) => Verdict::Mark,
            Some(3) => Verdict::Throttle,
            _ => {
                let shown = v
                    .repr()
                    .map(|r| r.to_string())
                    .unwrap_or_else(|_| "?".into());
                self.fail(
                    hook,
                    format!(
                        "returned {shown}; it must return a Verdict (ADMIT, DROP, MARK or THROTTLE)"
                    ),
                );
                Verdict::Admit
            }
        }
    }

    fn set_views(&self, py: Python<'_>, pkt: &PacketMeta, q: &QueueView, rng: &AqmRng) {
        self.pkt.bind(py).borrow_mut().set(pkt);
        self.queue.bind(py).borrow_mut().set(q);
        self.rng.bind(py).borrow_mut().rng = rng.clone();
    }

    fn opt_f64(&self, hook: &str, f: &Option<Py<PyAny>>) -> Option<f64> {
        let f = f.as_ref()?;
        Python::with_gil(|py| {
            let v = self.call(py, hook, f, ())?;
            if v.is_none() {
                return None;
            }
            match v.extract::<f64>() {
                Ok(x) => Some(x),
                Err(_) => {
                    self.fail(hook, "returned a value that is not a number".into());
                    None
                }
            }
        })
    }
}

impl Aqm for PyAqm {
    fn name(&self) -> &'static str {
        self.name
    }

    fn enqueue(&mut self, pkt: &PacketMeta, q: &QueueView, now: Time, rng: &mut AqmRng) -> Verdict {
        Python::with_gil(|py| {
            self.set_views(py, pkt, q, rng);
            let args = (self.pkt.bind(py), self.queue.bind(py), now);
            let v = self.call(py, "enqueue", &self.enqueue, args);
            *rng = self.rng.bind(py).borrow().rng.clone();
            self.verdict("enqueue", v)
        })
    }

    fn on_overflow(&mut self, pkt: &PacketMeta, q: &QueueView, now: Time) {
        let Some(f) = &self.on_overflow else {
            return;
        };
        Python::with_gil(|py| {
            self.pkt.bind(py).borrow_mut().set(pkt);
            self.queue.bind(py).borrow_mut().set(q);
            let args = (self.pkt.bind(py), self.queue.bind(py), now);
            self.call(py, "on_overflow", f, args);
        })
    }

    /// A scheduler found this queue empty (fq's flow queues: RFC 8289 s. 5.5, no packet).
    fn on_empty(&mut self, now: Time) {
        let Some(f) = &self.on_empty else {
            return;
        };
        Python::with_gil(|py| {
            self.call(py, "on_empty", f, (now,));
        })
    }

    /// A scheduler pushed `n` packets of this queue out on overflow (fq's fattest-queue drop).
    fn on_pushout(&mut self, n: u32, now: Time) {
        let Some(f) = &self.on_pushout else {
            return;
        };
        Python::with_gil(|py| {
            self.call(py, "on_pushout", f, (n, now));
        })
    }

    fn wants_dequeue(&self) -> bool {
        self.dequeue.is_some()
    }

    fn dequeue(
        &mut self,
        pkt: &PacketMeta,
        sojourn: Time,
        q: &QueueView,
        now: Time,
        rng: &mut AqmRng,
    ) -> Verdict {
        let Some(f) = &self.dequeue else {
            return Verdict::Admit;
        };
        Python::with_gil(|py| {
            self.set_views(py, pkt, q, rng);
            let args = (self.pkt.bind(py), sojourn, self.queue.bind(py), now);
            let v = self.call(py, "dequeue", f, args);
            *rng = self.rng.bind(py).borrow().rng.clone();
            self.verdict("dequeue", v)
        })
    }

    fn next_update(&self) -> Option<Time> {
        let f = self.next_update.as_ref()?;
        Python::with_gil(|py| {
            let v = self.call(py, "next_update", f, ())?;
            if v.is_none() {
                return None;
            }
            match v.extract::<Time>() {
                Ok(t) => Some(t),
                Err(_) => {
                    self.fail(
                        "next_update",
                        "returned a value that is not a time in ns (an int >= 0) or None".into(),
                    );
                    None
                }
            }
        })
    }

    fn update(&mut self, q: &QueueView, now: Time) {
        let Some(f) = &self.update else {
            return;
        };
        Python::with_gil(|py| {
            self.queue.bind(py).borrow_mut().set(q);
            self.call(py, "update", f, (self.queue.bind(py), now));
        })
    }

    fn drop_prob(&self) -> Option<f64> {
        self.opt_f64("drop_prob", &self.drop_prob)
    }

    fn avg_queue(&self) -> Option<f64> {
        self.opt_f64("avg_queue", &self.avg_queue)
    }

    fn stats(&self) -> Vec<(&'static str, f64)> {
        let Some(f) = &self.stats else {
            return Vec::new();
        };
        Python::with_gil(|py| {
            let Some(v) = self.call(py, "stats", f, ()) else {
                return Vec::new();
            };
            let Ok(d) = v.downcast::<PyDict>() else {
                self.fail("stats", "must return a dict of name -> number".into());
                return Vec::new();
            };
            let mut out = Vec::with_capacity(d.len());
            for (k, x) in d.iter() {
                match (k.extract::<String>(), x.extract::<f64>()) {
                    (Ok(k), Ok(x)) => out.push((intern(&k), x)),
                    _ => {
                        self.fail("stats", "must return a dict of name -> number".into());
                        return Vec::new();
                    }
                }
            }
            out
        })
    }
}

/// The link an AQM is built for, as the Python factory receives it (keyword arguments).
pub fn link_kwargs<'py>(py: Python<'py>, ctx: &LinkContext) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("rate_bps", ctx.rate_bps)?;
    let (p, b) = match ctx.buffer {
        Buffer::Packets(n) => (Some(n), None),
        Buffer::Bytes(n) => (None, Some(n)),
    };
    d.set_item("buffer_pkts", p)?;
    d.set_item("buffer_bytes", b)?;
    d.set_item("mean_pkt_bytes", ctx.mean_pkt_bytes)?;
    Ok(d)
}

/// Builds a Python AQM for a link: calls `make(**link)` (the Python side's factory, which returns
/// a fresh instance of the user's class) and wraps the instance. The plain function of a link
/// context a scheduler calls once per flow queue. `field` names the scenario table in a failed
/// hook's message (`aqm.python`; `aqm.queue.python` for fq's per-queue AQM).
pub fn build(
    py: Python<'_>,
    make: &Bound<'_, PyAny>,
    (label, name, field): (&str, &str, &str),
    ctx: &LinkContext,
    failure: &Arc<Failure>,
) -> Result<Box<dyn Aqm>, String> {
    let kw = link_kwargs(py, ctx).map_err(|e| e.to_string())?;
    let obj = make.call((), Some(&kw)).map_err(|e| {
        let msg = e.value(py).to_string();
        msg.lines().next().unwrap_or("").to_string()
    })?;
    let mut aqm = PyAqm::new(py, &obj, label, name, failure.clone())?;
    aqm.field = field.to_string();
    Ok(Box::new(aqm))
}

/// An AQM's configuration as Python passes it (name, parameters as JSON in base units, the
/// link): the parsed configuration, its parameter map and the link context; the error starts
/// with the parameter's name (or ": " when the JSON itself is bad).
pub fn aqm_config(
    name: &str,
    params_json: &str,
    rate_bps: u64,
    buffer_pkts: Option<u32>,
    buffer_bytes: Option<u64>,
    mean_pkt_bytes: u32,
) -> Result<(sim::config::AqmConfig, aqm::ParamMap, LinkContext), String> {
    let cfg = sim::config::AqmConfig {
        name: name.to_string(),
        params: serde_json::from_str(params_json).map_err(|e| format!(": {e}"))?,
    };
    let m = cfg.param_map()?;
    let buffer = match (buffer_pkts, buffer_bytes) {
        (Some(p), _) => Buffer::Packets(p),
        (None, Some(b)) => Buffer::Bytes(b),
        _ => Buffer::Packets(u32::MAX),
    };
    let ctx = LinkContext {
        rate_bps: rate_bps.max(1),
        buffer,
        mean_pkt_bytes: mean_pkt_bytes.max(1),
    };
    Ok((cfg, m, ctx))
}

/// A built-in AQM driven from Python, hook by hook (`_core.BuiltinAqm`): how a test puts a
/// Python AQM and a Rust one side by side on the same packets (a recorder wraps this and logs
/// each verdict), and how a Rust port is pointed at its Python prototype's equality test.
#[pyclass(module = "aqmlab._core", name = "BuiltinAqm")]
pub struct BuiltinAqm {
    // A Mutex only because a pyclass must be Sync; Python calls it from one thread at a time.
    inner: Mutex<Box<dyn Aqm>>,
}

fn meta(p: &PacketView) -> PacketMeta {
    PacketMeta {
        flow: p.flow,
        size_bytes: p.size_bytes,
        ecn: aqm::Ecn::from_bits(p.ecn),
        precedence: if p.in_profile {
            Precedence::In
        } else {
            Precedence::Out
        },
    }
}

fn qview(q: &QueueViewPy) -> QueueView {
    QueueView {
        len_pkts: q.len_pkts,
        len_bytes: q.len_bytes,
        idle_since: q.idle_since,
    }
}

impl BuiltinAqm {
    fn aqm(&self) -> std::sync::MutexGuard<'_, Box<dyn Aqm>> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn verdict_int(v: Verdict) -> u8 {
    match v {
        Verdict::Admit => 0,
        Verdict::Drop => 1,
        Verdict::Mark => 2,
        Verdict::Throttle => 3,
    }
}

#[pymethods]
impl BuiltinAqm {
    /// Builds registry AQM `name` with `params_json` (base units) for a link (the keyword
    /// arguments a Python AQM's factory receives); `ValueError("param: msg")` when refused.
    #[new]
    #[pyo3(signature = (name, params_json, rate_bps, buffer_pkts, buffer_bytes, mean_pkt_bytes))]
    fn new(
        name: &str,
        params_json: &str,
        rate_bps: u64,
        buffer_pkts: Option<u32>,
        buffer_bytes: Option<u64>,
        mean_pkt_bytes: u32,
    ) -> PyResult<Self> {
        let err = |e: String| pyo3::exceptions::PyValueError::new_err(e);
        let (_, m, ctx) = aqm_config(
            name,
            params_json,
            rate_bps,
            buffer_pkts,
            buffer_bytes,
            mean_pkt_bytes,
        )
        .map_err(err)?;
        let inner = aqm::build(name, &m, &ctx).map_err(|e| err(e.to_string()))?;
        Ok(BuiltinAqm {
            inner: Mutex::new(inner),
        })
    }

    /// The registry name.
    #[getter]
    fn name(&self) -> &'static str {
        self.aqm().name()
    }

    /// True when `dequeue` must be called for every departure.
    fn wants_dequeue(&self) -> bool {
        self.aqm().wants_dequeue()
    }

    /// `Aqm::enqueue`, drawing from `rng` (a Python AQM's `self.rng`); the verdict as an int.
    fn enqueue(
        &mut self,
        pkt: PyRef<'_, PacketView>,
        queue: PyRef<'_, QueueViewPy>,
        now: Time,
        mut rng: PyRefMut<'_, RngView>,
    ) -> u8 {
        verdict_int(
            self.aqm()
                .enqueue(&meta(&pkt), &qview(&queue), now, &mut rng.rng),
        )
    }

    /// `Aqm::on_overflow`.
    fn on_overflow(
        &mut self,
        pkt: PyRef<'_, PacketView>,
        queue: PyRef<'_, QueueViewPy>,
        now: Time,
    ) {
        self.aqm().on_overflow(&meta(&pkt), &qview(&queue), now)
    }

    /// `Aqm::dequeue`; the verdict as an int.
    fn dequeue(
        &mut self,
        pkt: PyRef<'_, PacketView>,
        sojourn: Time,
        queue: PyRef<'_, QueueViewPy>,
        now: Time,
        mut rng: PyRefMut<'_, RngView>,
    ) -> u8 {
        verdict_int(
            self.aqm()
                .dequeue(&meta(&pkt), sojourn, &qview(&queue), now, &mut rng.rng),
        )
    }

    /// `Aqm::on_empty`: a flow-queueing scheduler found this queue empty (a wrapper used as
    /// fq's per-queue AQM forwards it, as the built-in gets it).
    fn on_empty(&mut self, now: Time) {
        self.aqm().on_empty(now)
    }

    /// `Aqm::on_pushout`: a flow-queueing scheduler pushed `n` packets of this queue out.
    fn on_pushout(&mut self, n: u32, now: Time) {
        self.aqm().on_pushout(n, now)
    }

    /// `Aqm::next_update`.
    fn next_update(&self) -> Option<Time> {
        self.aqm().next_update()
    }

    /// `Aqm::update`.
    fn update(&mut self, queue: PyRef<'_, QueueViewPy>, now: Time) {
        self.aqm().update(&qview(&queue), now)
    }

    /// `Aqm::drop_prob`.
    fn drop_prob(&self) -> Option<f64> {
        self.aqm().drop_prob()
    }

    /// `Aqm::avg_queue`.
    fn avg_queue(&self) -> Option<f64> {
        self.aqm().avg_queue()
    }

    /// `Aqm::stats`, as a dict.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in self.aqm().stats() {
            d.set_item(k, v)?;
        }
        Ok(d)
    }
}
