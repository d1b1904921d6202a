//! The run assembled from a [`Config`]: links, flows, chaining, the first events.

use super::flow::{build_flow, link_sessions};
use super::links::{build_link, AqmFactory};
use super::validate::{check_run, Feeders};
use super::{Sim, SimError};
use crate::config::Config;
use crate::event::{Event, EventQueue};
use aqm::Time;

/// The packet-trace taps of the links that ask for one (`pcap_path`).
fn attach_pcap(
    cfg: &Config,
    links: &mut [crate::link::Link],
    flows: &[super::flow::Flow],
) -> Result<(), SimError> {
    if cfg.links.iter().all(|l| l.pcap_path.is_none()) {
        return Ok(());
    }
    let table: Vec<crate::pcap::FlowAddr> = flows
        .iter()
        .map(|f| crate::pcap::FlowAddr {
            src: f.src,
            dst: f.dst,
            mss: f.mss,
            tcp: f.tcp().is_some(),
        })
        .collect();
    let table = std::sync::Arc::new(table);
    for (lc, link) in cfg.links.iter().zip(links.iter_mut()) {
        if let Some(path) = &lc.pcap_path {
            let tap = crate::pcap::PcapTap::create(path, table.clone())
                .map_err(|e| SimError::Config(format!("output.pcap ({}): {e}", lc.name)))?;
            link.pcap = Some(Box::new(tap));
        }
    }
    Ok(())
}

impl Sim {
    /// Builds a run, checking the configuration.
    pub fn new(cfg: &Config) -> Result<Sim, SimError> {
        Sim::new_with(cfg, &mut |_, _| None)
    }

    /// Builds a run whose links ask `factory` for their AQM before the registry (issue 23: an
    /// AQM written in Python); see [`AqmFactory`].
    pub fn new_with(cfg: &Config, factory: &mut AqmFactory<'_>) -> Result<Sim, SimError> {
        check_run(cfg)?;
        let mut links = Vec::with_capacity(cfg.links.len());
        for (i, lc) in cfg.links.iter().enumerate() {
            links.push(build_link(cfg, i, lc, factory)?);
        }
        let mut flows = Vec::with_capacity(cfg.flows.len());
        let mut feeders = Feeders {
            first: vec![None; links.len()],
            multi: vec![false; links.len()],
        };
        for (i, fc) in cfg.flows.iter().enumerate() {
            let flow = build_flow(cfg, i, fc)?;
            let field = format!("flows[{i}] ({})", fc.name);
            feeders.walk(&links, &fc.path, (fc.src, fc.dst), &format!("{field}.path"))?;
            if flow.source().is_none() || !fc.rev_path.is_empty() {
                let f = format!("{field}.rev_path");
                feeders.walk(&links, &fc.rev_path, (fc.dst, fc.src), &f)?;
            }
            // Address resolution enters the middle links straight from the hosts: a second
            // feeder, so those links are never chained.
            for p in [&flow.resolve.0, &flow.resolve.1] {
                if let Some(&l) = p.first() {
                    feeders.multi[l as usize] = true;
                }
            }
            flows.push(flow);
        }
        link_sessions(cfg, &mut flows)?;
        attach_pcap(cfg, &mut links, &flows)?;
        for (l, link) in links.iter_mut().enumerate() {
            let timer = link.aqm().is_some_and(|a| a.next_update().is_some());
            link.chained = feeders.first[l].is_some() && !feeders.multi[l] && !link.real && !timer;
        }
        let mut sim = Sim {
            node_names: cfg.nodes.iter().map(|n| n.name.clone()).collect(),
            links,
            flows,
            ev: EventQueue::default(),
            now: 0,
            end: cfg.duration_ns,
            warmup: cfg.warmup_ns,
            seed: cfg.seed,
            out: Vec::new(),
            injected: 0,
            delivered: 0,
            dropped: 0,
            beyond: 0,
            events: 0,
            violations: Vec::new(),
        };
        for (f, flow) in sim.flows.iter().enumerate() {
            if cfg.flows[f].after.is_none() {
                sim.ev.push(flow.start, Event::FlowStart(f as u32));
            }
            if flow.stop != Time::MAX {
                sim.ev.push(flow.stop, Event::FlowStop(f as u32));
            }
        }
        for (l, link) in sim.links.iter().enumerate() {
            let sched_update = || link.sched.as_ref().and_then(|s| s.next_update());
            if let Some(t) = link
                .aqm()
                .and_then(|a| a.next_update())
                .or_else(sched_update)
            {
                sim.ev.push(t, Event::AqmUpdate(l as u32));
            }
        }
        Ok(sim)
    }

    /// Replaces the AQM of link `l` before the run starts (tests use scripted droppers).
    pub fn replace_aqm(&mut self, l: usize, aqm: Box<dyn aqm::Aqm>) {
        let link = &mut self.links[l];
        let timer = aqm.next_update().is_some();
        link.real = aqm.wants_dequeue();
        if link.real || timer {
            link.chained = false;
        }
        if let Some(t) = aqm.next_update() {
            self.ev.push(t, Event::AqmUpdate(l as u32));
        }
        link.set_aqm(Some(aqm));
    }
}
