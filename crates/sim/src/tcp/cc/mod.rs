//! Congestion control: how the window grows on ACKs and what it falls to on a congestion event,
//! one algorithm per file behind [`CongestionControl`] (as Linux's `tcp_congestion_ops`,
//! `net/ipv4/tcp_cong.c`, and ns-3's `TcpCongestionOps` keep it apart from loss recovery),
//! chosen by name from [`REGISTRY`] (`[tcp] cc`). Windows are in segments.
//!
//! Adding an algorithm: one file here implementing the trait, and one line in [`REGISTRY`].

pub mod bbr;
pub mod bbr3;
pub mod bbr_common;
pub mod bbr_lt;
pub mod cubic;
pub mod dctcp;
pub mod ledbat;
pub mod prague;
pub mod reno;

pub use bbr::Bbr;
pub use bbr3::Bbr3;
pub use cubic::Cubic;
pub use dctcp::Dctcp;
pub use ledbat::Ledbat;
pub use prague::Prague;
pub use reno::Reno;

use super::accecn::EcnMode;
use super::rate::RateSample;
use aqm::Time;

/// What one ACK tells the congestion controller (in the spirit of Linux's `struct ack_sample`
/// and `struct rate_sample`: segments delivered, ECN feedback, RTT, and, for a controller that
/// asks for it ([`CongestionControl::wants_rate_sample`]), the delivery-rate sample of
/// [`super::rate`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct AckSample {
    /// Arrival time of the ACK.
    pub now: Time,
    /// Segments newly acknowledged cumulatively.
    pub acked: u32,
    /// Segments this ACK newly delivered, Linux's `tp->delivered` delta (`tcp_newly_delivered`,
    /// net/ipv4/tcp_input.c) and RFC 6937 s. 3's DeliveredData (delta snd.una + delta SACKd):
    /// with SACK, the cumulatively acknowledged segments not SACKed before plus the segments
    /// this ACK newly SACKs, so a segment counts once, when it first reaches the receiver (a
    /// segment SACKed on a duplicate ACK does not count again at the cumulative ACK that later
    /// covers it). Without SACK, the cumulative span, and one for a duplicate ACK (Linux's
    /// `tcp_add_reno_sack`). It feeds PRR's DeliveredData, the window growth of
    /// [`CongestionControl::on_ack`] (called only for an ACK that advances snd_una: Linux's
    /// `acked_sacked` passed to `tcp_cong_avoid` under `FLAG_DATA_ACKED`, ns-3.44's
    /// `currentDelivered` in `TcpSocketBase::ProcessAck`), DCTCP's and Prague's counts and the
    /// AccECN inference.
    pub delivered: u32,
    /// The ACK carried ECN-Echo (RFC 3168; under DCTCP's receiver, RFC 8257 s. 3.2, the CE
    /// state of the segments it acknowledges); in AccECN mode, `ce > 0`.
    pub ece: bool,
    /// Segments of this ACK known CE-marked: in AccECN mode the count inferred from the ACE
    /// field (RFC 9768 s. 3.2.2.5.2, [`super::accecn`]); under RFC 3168 or DCTCP feedback,
    /// `delivered` when the ACK carries ECE, else 0.
    pub ce: u32,
    /// Oldest unacknowledged segment after this ACK.
    pub snd_una: u32,
    /// Next new segment to send.
    pub snd_nxt: u32,
    /// Highest segment sent so far, plus one (ns-3's `m_highTxMark`; above `snd_nxt` after a
    /// timeout rewinds it).
    pub snd_max: u32,
    /// Smoothed RTT, ns (0 before the first sample).
    pub srtt_ns: f64,
    /// Smallest RTT sample, ns (0 before the first sample).
    pub min_rtt_ns: f64,
    /// The delivery-rate sample (Linux's `rate_sample`); the default (invalid, zero counts)
    /// unless the controller asked for it.
    pub rate: RateSample,
}

/// What the sender tells its congestion controller and what it asks of it.
pub trait CongestionControl: std::fmt::Debug + Send {
    /// Registry name.
    fn name(&self) -> &'static str;
    /// Every ACK, in or out of recovery, before the window is touched (ECN feedback
    /// accounting, Linux's `in_ack_event`).
    fn on_ack_event(&mut self, _s: &AckSample) {}
    /// An ACK of new data outside loss recovery; returns the new window (Linux's
    /// `cong_avoid`).
    fn on_ack(&mut self, cwnd: f64, ssthresh: f64, s: &AckSample) -> f64;
    /// A loss (fast retransmit or timeout) with window `cwnd` and `flight` segments
    /// outstanding; returns the new ssthresh (Linux's `ssthresh`).
    fn on_congestion(&mut self, cwnd: f64, flight: u32, now: Time) -> f64;
    /// An ECN echo (at most once per window, RFC 3168 s. 6.1.2); returns the new ssthresh and
    /// window. By default the response to a loss.
    fn on_ecn(&mut self, cwnd: f64, flight: u32, now: Time) -> f64 {
        self.on_congestion(cwnd, flight, now)
    }
    /// A delay sample, ns, with `[tcp] timestamps` on: from the transmission whose timestamp an
    /// ACK of new data echoes to the ACK's arrival (RFC 7323 s. 4.1; LEDBAT's one-way delay
    /// stand-in, see [`ledbat`]). Called before [`CongestionControl::on_ack`].
    fn on_delay_sample(&mut self, _owd_ns: f64, _now: Time) {}
    /// A retransmission timeout (after [`CongestionControl::on_congestion`]).
    fn on_timeout(&mut self) {}
    /// The handshake is done (`[tcp] handshake`): the first window `cwnd` is about to leave
    /// and `srtt_ns` is the SYN's round trip (0 when it was not sampled: a SYN sent again
    /// without timestamps). Linux initialises the congestion control here
    /// (`tcp_init_transfer` -> `tcp_init_congestion_control`, net/ipv4/tcp_input.c), after
    /// the SYN-ACK's RTT sample.
    fn on_connected(&mut self, _cwnd: f64, _srtt_ns: f64, _now: Time) {}
    /// The receiver is to echo CE packet by packet as DCTCP's receiver (RFC 8257 s. 3.2)
    /// instead of RFC 3168's latch until CWR.
    fn per_packet_ce_echo(&self) -> bool {
        false
    }
    /// The controller reacts to ECN marks only: the network builder refuses it without
    /// `[tcp] ecn` (by default, a controller whose receiver echoes CE packet by packet).
    fn needs_ecn(&self) -> bool {
        self.per_packet_ce_echo()
    }
    /// The controller needs delay samples ([`CongestionControl::on_delay_sample`]): the network
    /// builder refuses it without `[tcp] timestamps`.
    fn needs_timestamps(&self) -> bool {
        false
    }
    /// The controller's estimate of the fraction of segments CE-marked (DCTCP's alpha), for
    /// tests and traces; `None` when it keeps none.
    fn ecn_alpha(&self) -> Option<f64> {
        None
    }
    /// The algorithm's own pacing rate, segments per second (`None`: the sender's default,
    /// Linux's `tcp_update_pacing_rate`, when pacing is on).
    fn pacing_rate(&self) -> Option<f64> {
        None
    }
    /// The sender is to keep per-segment send records and fill [`AckSample::rate`]
    /// ([`super::rate`]).
    fn wants_rate_sample(&self) -> bool {
        false
    }
    /// The fewest segments of a GSO burst (`[tcp] gso`): Linux's `ca_ops->min_tso_segs`, else
    /// the `tcp_min_tso_segs` sysctl, 2 (`tcp_tso_segs`, net/ipv4/tcp_output.c).
    fn min_tso_segs(&self) -> u32 {
        2
    }
    /// The sender is to pace whatever `[tcp] pacing` says (BBR: Linux's `SK_PACING_NEEDED`).
    fn needs_pacing(&self) -> bool {
        false
    }
    /// The controller sets the window itself on every ACK, in and out of recovery (Linux's
    /// `cong_control`): the sender then leaves cwnd alone (no PRR, no deflation to ssthresh,
    /// no ECN halving) and calls [`CongestionControl::cong_control`] instead of
    /// [`CongestionControl::on_ack`].
    fn controls_cwnd(&self) -> bool {
        false
    }
    /// Linux's `cong_control`: on every ACK after loss detection, the new window from the
    /// current `cwnd` and the sample (whose `rate.in_flight` and `rate.in_recovery` are those
    /// after the ACK). Only called when [`CongestionControl::controls_cwnd`].
    fn cong_control(&mut self, cwnd: f64, _s: &AckSample) -> f64 {
        cwnd
    }
    /// After [`CongestionControl::cong_control`]: the sender is to mark the current flight
    /// application-limited (BBR's PROBE_RTT sets Linux's `tp->app_limited`); asking clears it.
    fn asks_app_limited(&mut self) -> bool {
        false
    }
    /// The sender is to count a SACKed retransmission in flight until the cumulative ACK, as
    /// ns-3.44's `TcpTxBuffer::BytesInFlight` does (`cc = "bbr-ns3:rtxsack"`, a cross-check
    /// model; [`super::recovery::sack::Ns3RetransSacked`]).
    fn counts_sacked_retransmissions(&self) -> bool {
        false
    }
    /// The sender's rate state is to keep the sample's start across ACKs as ns-3.44's
    /// `TcpRateLinux` does (`cc = "bbr-ns3:ratestart"`, a cross-check model;
    /// [`super::rate::RateState::ns3_keep_start`]).
    fn keeps_rate_sample_start(&self) -> bool {
        false
    }
    /// In SACK fast recovery only the first partial ACK restarts the retransmission timer, as
    /// ns-3.44's `TcpSocketBase` (`cc = "bbr-ns3:rtofirst"`, a cross-check model; RFC 6298 s.
    /// 5.3 and Linux restart it on every ACK of new data).
    fn restarts_rto_on_first_partial_ack_only(&self) -> bool {
        false
    }
    /// The flow's segment size, told once when the sender is made: `mss` payload bytes and
    /// `header` bytes of headers and options on the wire (Linux's `mss_cache` and
    /// `tcp_mss_to_mtu`); `resizable`: the sender honours
    /// [`CongestionControl::segment_payload`] (a bulk flow; a finite one keeps its segment
    /// count, so it does not). Returns whether the controller may ever answer
    /// [`CongestionControl::segment_payload`] with a size: the sender asks only then, so the
    /// controllers that never resize pay no call per ACK.
    fn on_segment_size(&mut self, _mss: u32, _header: u32, _resizable: bool) -> bool {
        false
    }
    /// The payload bytes of each new segment the controller asks for from now on (TCP Prague
    /// 0.7's `tcp_sync_mss` from `prague_update_alpha`), asked after each
    /// [`CongestionControl::cong_control`]; `None`: the flow's `mss`. Segments already sent
    /// keep their size when retransmitted.
    fn segment_payload(&self) -> Option<u32> {
        None
    }
    /// On each partial ACK of SACK fast recovery, one segment goes out before PRR's own
    /// sending and outside its window, unless the new head of the queue was retransmitted
    /// already, as ns-3.44's `TcpSocketBase::ProcessAck` does (`DoRetransmit`, tcp-socket-base.cc
    /// l. 2099-2103; `cc = "ledbat-ns3"`, `"newreno-ns3"`, `"bbr-ns3:partialrtx"`, cross-check
    /// models; [`crate::tcp::recovery::sack::Sack`]). RFC 6675 and Linux send in recovery only
    /// what the window allows.
    fn sends_on_partial_ack(&self) -> bool {
        false
    }
    /// In SACK fast recovery the sending rate is ns-3.44's `TcpPrrRecovery`, with its double
    /// count of duplicate ACKs, its 32-bit product and PRR-CRB below ssthresh (`cc =
    /// "ledbat-ns3"`, `"newreno-ns3"`, cross-check models; [`super::recovery::prr::Ns3Prr`]),
    /// instead of RFC 6937's PRR-SSRB.
    fn uses_ns3_prr(&self) -> bool {
        false
    }
    /// After a timeout, until snd_una passes the data outstanding at it, the sender resends a
    /// segment the timeout marked lost only below the highest SACKed segment (or when none is
    /// SACKed), and new data otherwise, as ns-3.44's `TcpTxBuffer::NextSeg` (`cc =
    /// "bbr-ns3:rtotail"`, a cross-check model; Linux without RACK resends every segment the
    /// timeout marked lost; [`super::recovery::sack::Ns3RtoTail`]).
    fn resends_below_highest_sack_after_rto(&self) -> bool {
        false
    }
    /// The controller itself, for tests and traces that read its state (`None`: not offered).
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        None
    }

    // L4S (TCP Prague):

    /// The sender marks its ECN-capable segments ECT(1), the L4S identifier (RFC 9331 s. 4.1),
    /// whatever `[tcp] ecn` says beyond being on.
    fn l4s(&self) -> bool {
        false
    }

    /// The controller needs AccECN feedback (Linux's `TCP_CONG_NEEDS_ACCECN`): with `[tcp] ecn`
    /// on, the sender asks for it in its SYN unless `[tcp] accecn = false`.
    fn wants_accecn(&self) -> bool {
        false
    }

    /// The ECN feedback mode the handshake negotiated (RFC 9768 Table 2); returns the mode the
    /// sender is to use (a controller may refuse RFC 3168 feedback, as Linux's
    /// `TCP_CONG_NO_FALLBACK_RFC3168`, and change its own behaviour). By default, as negotiated.
    fn on_ecn_mode(&mut self, mode: EcnMode) -> EcnMode {
        mode
    }
}

/// A constructor of a congestion controller.
pub type Builder = fn() -> Box<dyn CongestionControl>;

/// The congestion controllers by name (`[tcp] cc`).
pub const REGISTRY: &[(&str, Builder)] = &[
    ("reno", || Box::new(Reno)),
    ("cubic", || Box::new(Cubic::default())),
    ("dctcp", || Box::new(Dctcp::default())),
    ("bbr", || Box::new(Bbr::default())),
    ("bbr1", || Box::new(Bbr::default())),
    ("bbr-ns3", || Box::new(Bbr::ns3_44(bbr::Ns3Model::ALL))),
    ("bbr3", || Box::new(Bbr3::default())),
    ("ledbat", || Box::new(Ledbat::default())),
    ("ledbat-ns3", || Box::new(Ledbat::ns3_44())),
    ("newreno-ns3", || Box::new(reno::RenoNs3)),
    ("prague", || Box::new(Prague::new(prague::Params::V07))),
    ("prague-0.6", || Box::new(Prague::v06())),
    ("prague-0.7", || Box::new(Prague::new(prague::Params::V07))),
];

/// The controller registered as `name`, or BBR v1 with some of ns-3.44's departures
/// (`bbr-ns3:NAME+NAME`, [`bbr::Ns3Model::parse`]).
pub fn build(name: &str) -> Result<Box<dyn CongestionControl>, String> {
    if let Some(names) = name.strip_prefix("bbr-ns3:") {
        let m = bbr::Ns3Model::parse(names)?;
        return Ok(Box::new(Bbr::ns3_44(m)));
    }
    REGISTRY
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, b)| b())
        .ok_or_else(|| format!("must be one of {} (got {name:?})", names().join(", ")))
}

/// The registered names.
pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|(n, _)| *n).collect()
}
