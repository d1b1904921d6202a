//! Links and the AQM (or FQ-CoDel queue discipline) guarding each, built from the configuration.

use super::error::{cfg_err, SimError};
use crate::config::{Config, LinkConfig};
use crate::link::Link;
use aqm::params::{Buffer, LinkContext};
use qdisc::rate::{Schedule, Trace, VarClock};

/// A queue discipline's parameters; its shared `limit` defaults to the link's buffer in packets.
pub fn fq_params(a: &crate::config::AqmConfig, buffer: Buffer) -> Result<aqm::ParamMap, String> {
    Ok(qdisc::sched::with_link_defaults(a.param_map()?, buffer))
}

/// Builds the AQM of a link in place of the registry (a Python AQM, issue 23): called with the
/// link's `[aqm]` configuration and context before the registry is asked; `None` leaves the link
/// to the registry. A plain function of the context, so a scheduler can call it once per queue.
pub type AqmFactory<'a> = dyn FnMut(
        &crate::config::AqmConfig,
        &LinkContext,
    ) -> Option<Result<Box<dyn aqm::Aqm>, aqm::ParamError>>
    + 'a;

/// The AQM (or the queue discipline) of a link.
type Guard = (
    Option<Box<dyn aqm::Aqm>>,
    Option<Box<crate::link::SchedQueue>>,
);

fn build_guard(
    lc: &LinkConfig,
    field: &str,
    ctx: &LinkContext,
    factory: &mut AqmFactory<'_>,
) -> Result<Guard, SimError> {
    let name_err = |e: aqm::ParamError| {
        if e.param.is_empty() {
            SimError::Config(format!("{field}.aqm: {}", e.msg))
        } else {
            SimError::Config(format!("{field}.aqm.{}: {}", e.param, e.msg))
        }
    };
    if let Some(built) = lc.aqm.as_ref().and_then(|a| factory(a, ctx)) {
        return Ok((Some(built.map_err(name_err)?), None));
    }
    match &lc.aqm {
        None => Ok((None, None)),
        Some(a) if a.name == "droptail" && a.params.is_empty() => Ok((None, None)),
        Some(a) if qdisc::sched::is_scheduler(&a.name) => {
            let m = fq_params(a, ctx.buffer)
                .map_err(|e| SimError::Config(format!("{field}.aqm.{e}")))?;
            let built = match queue_factory(a, &m, ctx, factory) {
                Some(b) => b,
                None => qdisc::sched::build(&a.name, &m, ctx).expect("a registered scheduler"),
            };
            Ok((None, Some(built.map_err(name_err)?)))
        }
        Some(a) => {
            let m = a
                .param_map()
                .map_err(|e| SimError::Config(format!("{field}.aqm.{e}")))?;
            Ok((Some(aqm::build(&a.name, &m, ctx).map_err(name_err)?), None))
        }
    }
}

/// `fq` whose `queue_aqm` the factory builds (a Python AQM, issue 23): one instance per flow
/// queue, each from the factory; `None` when the factory does not know that name (the
/// registry's AQMs), so the default path stays the registry's.
fn queue_factory(
    a: &crate::config::AqmConfig,
    m: &aqm::ParamMap,
    ctx: &LinkContext,
    factory: &mut AqmFactory<'_>,
) -> Option<Result<Box<crate::link::SchedQueue>, aqm::ParamError>> {
    let Some(aqm::ParamValue::Str(qname)) = m.get("queue_aqm") else {
        return None;
    };
    let qa = crate::config::AqmConfig {
        name: qname.clone(),
        params: Default::default(),
    };
    // The first queue's instance doubles as the probe: is this name the factory's?
    let mut first = Some(factory(&qa, ctx)?);
    let mut make = |_: &str, _: &aqm::ParamMap, l: &LinkContext| match first.take() {
        Some(built) => built,
        None => factory(&qa, l).unwrap_or_else(|| {
            Err(aqm::ParamError::new(
                "queue_aqm",
                "the factory stopped building this AQM",
            ))
        }),
    };
    qdisc::sched::fq::build_with(&a.name, m, ctx, &mut make).or_else(|| {
        Some(Err(aqm::ParamError::new(
            "queue_aqm",
            format!(
                "{} fixes its per-queue AQM; an AQM from outside the registry goes in `fq`",
                a.name
            ),
        )))
    })
}

/// Link `i` of the configuration, checked.
pub(super) fn build_link(
    cfg: &Config,
    i: usize,
    lc: &LinkConfig,
    factory: &mut AqmFactory<'_>,
) -> Result<Link, SimError> {
    let n_nodes = cfg.nodes.len();
    let field = format!("links[{i}] ({})", lc.name);
    if lc.from >= n_nodes || lc.to >= n_nodes {
        return cfg_err(format!(
            "{field}: from/to must name one of the {n_nodes} nodes"
        ));
    }
    if lc.rate_bps == 0 {
        return cfg_err(format!("{field}.rate: must be > 0 bit/s"));
    }
    let buffer = match (lc.buffer_pkts, lc.buffer_bytes) {
        (Some(p), None) if p > 0 => Buffer::Packets(p),
        (None, Some(b)) if b > 0 => Buffer::Bytes(b),
        _ => {
            return cfg_err(format!(
                "{field}.buffer: give exactly one positive buffer, in packets or in bytes"
            ))
        }
    };
    if lc.mean_pkt_bytes == 0 {
        return cfg_err(format!("{field}.mean_pkt_bytes: must be > 0"));
    }
    let ctx = LinkContext {
        rate_bps: lc.rate_bps,
        buffer,
        mean_pkt_bytes: lc.mean_pkt_bytes,
    };
    let (aqm, mut fq) = build_guard(lc, &field, &ctx, factory)?;
    if let Some(s) = fq.as_mut() {
        // Per-host fairness (CAKE): each flow's source and destination nodes.
        let hosts: Vec<(u32, u32)> = cfg
            .flows
            .iter()
            .map(|f| (f.src as u32, f.dst as u32))
            .collect();
        s.set_flow_hosts(&hosts);
    }
    let rng = aqm::rng_from_seed(cfg.seed ^ (0x9E37_79B9_7F4A_7C15u64.wrapping_mul(i as u64 + 1)));
    let mut link = Link::new(
        lc.name.clone(),
        lc.from,
        lc.to,
        lc.rate_bps,
        lc.delay_ns,
        buffer,
        aqm,
        rng,
        lc.monitor,
        cfg.warmup_ns,
        cfg.duration_ns,
        cfg.sample_interval_ns,
        cfg.max_samples,
    );
    if fq.is_some() {
        link.sched = fq;
        link.real = true;
    }
    link.clock = var_clock(lc, &field)?.map(Box::new);
    if let Some(path) = &lc.events_path {
        let log = crate::events::EventLog::create(path)
            .map_err(|e| SimError::Config(format!("output.events ({}): {e}", lc.name)))?;
        link.events = Some(Box::new(log));
    }
    Ok(link)
}

/// The clock of a link whose capacity varies, checked (`None`: a fixed rate).
fn var_clock(lc: &LinkConfig, field: &str) -> Result<Option<VarClock>, SimError> {
    let named = |e: String| SimError::Config(format!("{field}.{e}"));
    if lc.rate_repeat_ns.is_some() && lc.rate_schedule.is_none() {
        return cfg_err(format!(
            "{field}.rate_repeat: only with a rate schedule (a list of {{ at, rate }} steps)"
        ));
    }
    match (&lc.rate_schedule, &lc.trace_ms) {
        (Some(_), Some(_)) => cfg_err(format!(
            "{field}: give a rate schedule or a trace, not both"
        )),
        (Some(steps), None) => Ok(Some(VarClock::Schedule(
            Schedule::new(steps.clone(), lc.rate_repeat_ns).map_err(named)?,
        ))),
        (None, Some(ms)) => Ok(Some(VarClock::Trace(
            Trace::new(ms.clone()).map_err(named)?,
        ))),
        (None, None) => Ok(None),
    }
}
