//! Checks of the run-wide fields and of each flow's paths.

use super::error::{cfg_err, SimError};
use crate::config::Config;
use crate::link::Link;

/// Checks the run-wide fields.
pub(super) fn check_run(cfg: &Config) -> Result<(), SimError> {
    if cfg.duration_ns == 0 {
        return cfg_err("duration: must be > 0".into());
    }
    if cfg.warmup_ns >= cfg.duration_ns {
        return cfg_err(format!(
            "warmup: must be shorter than duration (got warmup {} ns >= duration {} ns)",
            cfg.warmup_ns, cfg.duration_ns
        ));
    }
    if cfg.sample_interval_ns == 0 {
        return cfg_err("sample_interval: must be > 0".into());
    }
    if cfg.flows.is_empty() {
        return cfg_err("flows: at least one flow is required".into());
    }
    Ok(())
}

/// Which upstream feeds each link: a link fed by one upstream only can be chained.
pub(super) struct Feeders {
    /// None = not yet seen; Some(k) with k = usize::MAX - host for hosts.
    pub(super) first: Vec<Option<usize>>,
    pub(super) multi: Vec<bool>,
}

impl Feeders {
    /// Checks that `path` leads from host `a` to host `b` over existing links, noting feeders.
    pub(super) fn walk(
        &mut self,
        links: &[Link],
        path: &[usize],
        (a, b): (usize, usize),
        field: &str,
    ) -> Result<(), SimError> {
        if path.is_empty() || path.len() > u16::MAX as usize {
            return cfg_err(format!("{field}: must hold 1 to 65535 links"));
        }
        let mut at = a;
        for (k, &l) in path.iter().enumerate() {
            if l >= links.len() || links[l].from != at {
                return cfg_err(format!(
                    "{field}[{k}]: link must start where the previous one ended"
                ));
            }
            let f = if k == 0 { usize::MAX - a } else { path[k - 1] };
            match self.first[l] {
                None => self.first[l] = Some(f),
                Some(g) if g != f => self.multi[l] = true,
                _ => {}
            }
            at = links[l].to;
        }
        if at != b {
            return cfg_err(format!("{field}: must end at its destination host"));
        }
        Ok(())
    }
}
