//! Links and the AQM (or FQ-CoDel queue discipline) guarding each, built from the configuration.

use super::error::{cfg_err, SimError};
use crate::config::{Config, LinkConfig};
use crate::link::Link;
use aqm::params::{Buffer, LinkContext};

/// A queue discipline's parameters; its shared `limit` defaults to the link's buffer in packets.
pub fn fq_params(a: &crate::config::AqmConfig, buffer: Buffer) -> Result<aqm::ParamMap, String> {
    Ok(qdisc::sched::with_link_defaults(a.param_map()?, buffer))
}

/// The AQM (or the queue discipline) of a link.
type Guard = (
    Option<Box<dyn aqm::Aqm>>,
    Option<Box<crate::link::SchedQueue>>,
);

fn build_guard(lc: &LinkConfig, field: &str, ctx: &LinkContext) -> Result<Guard, SimError> {
    let name_err = |e: aqm::ParamError| {
        if e.param.is_empty() {
            SimError::Config(format!("{field}.aqm: {}", e.msg))
        } else {
            SimError::Config(format!("{field}.aqm.{}: {}", e.param, e.msg))
        }
    };
    match &lc.aqm {
        None => Ok((None, None)),
        Some(a) if a.name == "droptail" && a.params.is_empty() => Ok((None, None)),
        Some(a) if qdisc::sched::is_scheduler(&a.name) => {
            let m = fq_params(a, ctx.buffer)
                .map_err(|e| SimError::Config(format!("{field}.aqm.{e}")))?;
            let built = qdisc::sched::build(&a.name, &m, ctx).expect("a registered scheduler");
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

/// Link `i` of the configuration, checked.
pub(super) fn build_link(cfg: &Config, i: usize, lc: &LinkConfig) -> Result<Link, SimError> {
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
    let (aqm, fq) = build_guard(lc, &field, &ctx)?;
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
    Ok(link)
}
