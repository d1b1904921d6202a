//! The TCP sender: state shared by every variant (sequence space, window, RTT estimator and
//! retransmission timer, ECN), with the congestion controller ([`super::cc`]) and the loss
//! recovery ([`super::recovery`]) it delegates to.
//!
//! Retransmission timer: RFC 6298 (s. 2 estimator, s. 5 timer management, backoff). ECN: RFC 3168
//! s. 6.1 (one reduction per window, CWR/ECE), or AccECN (RFC 9768, [`super::accecn`]) when
//! negotiated: the CE count of each ACK from its ACE field, no CWR. RTT: every ACK of new data is a sample through the
//! echoed timestamp (RFC 7323 s. 4.1; the echo names the transmission, so retransmissions give
//! valid samples too).

use super::accecn::{self, AccEcnSender, EcnMode};
use super::cc::{AckSample, CongestionControl};
use super::recovery::{Recovery, Scoreboard};
use super::{Marker, SenderStats, RTT_BUCKETS, RTT_BUCKETS_PER_DECADE};
use crate::config::{EcnSupport, TcpConfig};
use crate::packet::{Kind, Packet, CWR, ECE, ECT, ECT1, RETX, SYN};
use aqm::{Precedence, Time};

/// A sender's settings, fixed for the flow's life (from [`TcpConfig`]).
#[derive(Clone, Debug)]
pub struct SenderParams {
    /// Bytes of a new data segment on the wire (the flow's `mss` plus [`SenderParams::header`],
    /// or the controller's [`CongestionControl::segment_payload`] plus it).
    pub pkt_size: u32,
    /// Bytes of headers and options on every data segment.
    pub header: u32,
    /// The flow's payload bytes per segment (`[tcp] mss`).
    pub mss: u32,
    /// ECN-capable transport (RFC 3168).
    pub ecn: bool,
    /// ECN-capable segments carry ECT(1) (RFC 9331) rather than ECT(0).
    pub ect1: bool,
    /// RTO lower bound, ns.
    pub min_rto: Time,
    /// RTO upper bound, ns.
    pub max_rto: Time,
    /// Clock granularity G of RFC 6298 s. 2, ns.
    pub granularity: Time,
    /// TCP timestamps on (RFC 7323): every ACK of new data is an RTT sample.
    pub timestamps: bool,
    /// Bytes of the SYN on the wire (header and options, no payload).
    pub syn_size: u32,
    /// Limited transmit on (RFC 3042).
    pub limited_transmit: bool,
    /// The ECN feedback this sender offers in its SYN (RFC 9768 Table 2).
    pub ecn_support: EcnSupport,
    /// `[tcp] ect1`: ECT(1) asked for by the configuration.
    pub cfg_ect1: bool,
    /// `[tcp] pacing`: pacing asked for by the configuration.
    pub cfg_pacing: bool,
    /// `[tcp] gso`: a paced sender sends GSO bursts ([`super::pacing::gso_segs`]).
    pub gso: bool,
    /// Data segments carry the cumulative ACK number the sender holds in their `rwnd` field
    /// (the echo that Linux's receiver times its RTT by, `[tcp] rwnd_model = "linux"`).
    pub echo_ack: bool,
    /// Outside fast recovery the window limits the segments in flight, SACKed ones not counted
    /// ([`super::recovery::Recovery::window_by_pipe`]; a controller that sets cwnd itself
    /// counts the flight from its rate state instead), instead of the span from snd_una.
    pub pipe_window: bool,
}

/// A TCP sender.
#[derive(Debug)]
pub struct Sender {
    /// Settings fixed for the flow's life.
    pub params: SenderParams,
    /// Loss recovery (`[tcp] recovery`, [`super::recovery::build`]); `None` only while it is
    /// processing an ACK or a timeout (it is lent the sender).
    recovery: Option<Box<dyn Recovery>>,
    /// Oldest unacknowledged segment.
    pub snd_una: u32,
    /// Next segment to send.
    pub snd_nxt: u32,
    /// One past the highest segment ever sent.
    pub snd_max: u32,
    /// Congestion window, segments.
    pub cwnd: f64,
    /// Slow-start threshold, segments.
    pub ssthresh: f64,
    /// Peer's advertised window, segments.
    pub snd_wnd: u32,
    pub(crate) dupacks: u32,
    /// In fast recovery.
    pub in_recovery: bool,
    pub(crate) ecn_recover: u32,
    cwr_pending: bool,
    srtt: f64,
    rttvar: f64,
    min_rtt: f64,
    /// Current retransmission timeout, ns.
    pub rto: Time,
    has_rtt: bool,
    /// When the retransmission timer expires (`None`: stopped).
    pub rto_deadline: Option<Time>,
    /// Time of the pending timer event, if any (one event per flow at a time).
    pub rto_event: Option<Time>,
    limit: Option<u32>,
    /// Time the last segment was acknowledged (finite flows).
    pub done_at: Option<Time>,
    marker: Option<Marker>,
    /// Congestion controller (`[tcp] cc`, from [`super::cc::REGISTRY`]).
    pub cc: Box<dyn CongestionControl>,
    /// SACK scoreboard (when the recovery uses SACK).
    pub sb: Option<Scoreboard>,
    /// Each outstanding segment's last transmission (when the recovery keeps it: RACK).
    pub rack_sent: Option<super::recovery::rack::SentRecord>,
    /// Counters.
    pub stats: SenderStats,
    /// Without timestamps: the next RTT sample is taken from the ACK that covers this segment
    /// (one timed segment per round trip, RFC 6298 s. 3).
    timed_until: u32,
    /// Waiting for the SYN-ACK (`[tcp] handshake`): no data before it arrives.
    pub connecting: bool,
    /// Times the SYN was sent again after its timer expired.
    pub(crate) syn_retries: u32,
    /// Resolving the receiver's address (`[tcp] resolve`): the SYNs held until the reply;
    /// `None` once resolved, or without it.
    pub(crate) unresolved: Option<Vec<Packet>>,
    /// Segments sent by limited transmit since the last ACK of new data (left out of the
    /// FlightSize that sets ssthresh: RFC 5681 s. 3.2 step 2).
    pub(crate) lt_sent: u32,
    /// Pacing clock (`[tcp] pacing`).
    pub pacer: super::pacing::Pacer,
    /// Per-segment send records and delivery state for the delivery-rate sample
    /// ([`super::rate`]), kept when the controller asks for it.
    pub rate: Option<super::rate::RateState>,
    /// ns-3.44's SACKed retransmissions still counted in flight (`cc = "bbr-ns3:rtxsack"` over
    /// SACK recovery; [`super::recovery::sack::Ns3RetransSacked`]).
    pub ns3_rtx_sacked: Option<super::recovery::sack::Ns3RetransSacked>,
    /// ns-3.44's choice of segment after a timeout (`cc = "bbr-ns3:rtotail"` over SACK
    /// recovery; [`super::recovery::sack::Ns3RtoTail`]).
    pub ns3_rto_tail: Option<super::recovery::sack::Ns3RtoTail>,
    /// The ECN feedback mode negotiated ([`super::accecn`]).
    pub ecn_mode: EcnMode,
    /// AccECN's s.cep, in AccECN mode.
    pub accecn: Option<AccEcnSender>,
    /// AccECN: an ACK has reported CE marks not yet answered by [`Sender::on_ecn_echo`].
    ce_pending: bool,
    /// Without SACK: duplicate ACKs counted as one delivered segment each and not yet covered
    /// by a cumulative ACK (Linux's `sacked_out` under `tcp_add_reno_sack`).
    dup_delivered: u32,
    /// [`Sender::send_allowed`] resent the head (snd_una, below snd_max) of a sender that keeps
    /// send times (RACK), not yet told to the recovery ([`Recovery::head_retransmitted`]).
    pub(crate) head_resent: bool,
    /// Since when the receive window has been what stopped new data (Linux's
    /// TCP_CHRONO_RWND_LIMITED, running), `None` while it is not.
    rwnd_limited_since: Option<Time>,
    /// The payload size of the segments from each index on, `(first segment, bytes)` in
    /// increasing order, once the controller has changed it
    /// ([`CongestionControl::segment_payload`]); empty while every segment carries `mss`.
    pub seg_sizes: Vec<(u32, u32)>,
    /// The payload bytes below each entry of [`Sender::seg_sizes`] (prefix sums, so
    /// [`Sender::bytes_below`] is a binary search, not a walk, per delivery).
    seg_bytes: Vec<u64>,
    /// The controller may change the segment size
    /// ([`CongestionControl::on_segment_size`]'s answer, read once): only then is it asked
    /// for [`CongestionControl::segment_payload`] after each ACK.
    resizes: bool,
}

impl SenderParams {
    /// The settings a sender keeps from its configuration; `l4s`: the controller asks for ECT(1)
    /// (TCP Prague, DCTCP under L4S); `pipe_window`: the window counts the segments in flight.
    fn new(cfg: &TcpConfig, ecn_support: EcnSupport, l4s: bool, pipe_window: bool) -> Self {
        SenderParams {
            pkt_size: cfg.mss + cfg.header_bytes + cfg.option_bytes(),
            header: cfg.header_bytes + cfg.option_bytes(),
            mss: cfg.mss,
            ecn: cfg.ecn,
            ect1: cfg.ecn && (cfg.ect1 || l4s),
            min_rto: cfg.min_rto_ns,
            max_rto: cfg.max_rto_ns,
            granularity: cfg.granularity_ns,
            timestamps: cfg.timestamps,
            syn_size: cfg.header_bytes + cfg.option_bytes(),
            limited_transmit: cfg.limited_transmit,
            ecn_support,
            cfg_ect1: cfg.ect1,
            cfg_pacing: cfg.pacing,
            gso: cfg.gso,
            echo_ack: cfg.linux_rwnd,
            pipe_window,
        }
    }
}

/// The window a sender starts with: the SYN-ACK's (without a simulated handshake the flow starts
/// with it): Linux's 64 KB under `[tcp] rwnd_model = "linux"`, else `rwnd`.
fn initial_window(cfg: &TcpConfig) -> u32 {
    if cfg.linux_rwnd {
        super::rwnd::LinuxRwnd::initial_segments(cfg.mss)
    } else {
        cfg.rwnd_segments
    }
}

/// The parts a sender is built from: its controller and recovery, and what they ask for.
struct Parts {
    cc: Box<dyn CongestionControl>,
    resizes: bool,
    recovery: Box<dyn super::recovery::Recovery>,
    sb: Option<Scoreboard>,
    rate: Option<super::rate::RateState>,
    rack_sent: Option<super::recovery::rack::SentRecord>,
    ecn_support: EcnSupport,
    pipe_window: bool,
    ns3_rtx_sacked: Option<super::recovery::sack::Ns3RetransSacked>,
    ns3_rto_tail: Option<super::recovery::sack::Ns3RtoTail>,
}

impl Parts {
    /// # Panics
    /// When `cfg.cc` names no registered controller (the network builder checks it first).
    fn new(cfg: &TcpConfig, limit_segments: Option<u32>) -> Self {
        // The network builder checks the name first (a configuration error, not a panic).
        let mut cc =
            super::cc::build(cfg.cc_name()).expect("tcp.cc checked by the network builder");
        let resizes = cc.on_segment_size(
            cfg.mss,
            cfg.header_bytes + cfg.option_bytes(),
            limit_segments.is_none(),
        );
        let recovery = super::recovery::build(cfg.recovery_kind());
        let sb = recovery.uses_sack().then(Scoreboard::default);
        let mut rate = cc.wants_rate_sample().then(super::rate::RateState::default);
        if let Some(r) = rate.as_mut() {
            r.external_losses = recovery.marks_losses();
            r.ns3_keep_start = cc.keeps_rate_sample_start();
        }
        let rack_sent = recovery.keeps_send_times().then(Default::default);
        let ecn_support = match (cfg.ecn, cfg.accecn.unwrap_or(cc.wants_accecn())) {
            (false, _) => EcnSupport::Off,
            (true, true) => EcnSupport::AccEcn,
            (true, false) => EcnSupport::Ecn,
        };
        // A controller that sets cwnd itself (BBR, TCP Prague) counts the flight from its rate
        // state instead (`by_flight`: its window rules are its own, docs/transports.md); the
        // pipe window still serves it if it stops setting cwnd (Prague's fallback to Reno).
        // `sack_window = "span"` keeps ns-2 Sack1's window (docs/scenarios.md).
        let pipe_window = recovery.window_by_pipe() && !cfg.sack_window_span;
        let ns3_rtx_sacked = (sb.is_some() && rate.is_some() && cc.counts_sacked_retransmissions())
            .then(Default::default);
        let ns3_rto_tail = (sb.is_some()
            && rate.is_some()
            && cc.controls_cwnd()
            && cc.resends_below_highest_sack_after_rto())
        .then(Default::default);
        Parts {
            cc,
            resizes,
            recovery,
            sb,
            rate,
            rack_sent,
            ecn_support,
            pipe_window,
            ns3_rtx_sacked,
            ns3_rto_tail,
        }
    }
}

impl Sender {
    /// A sender for `cfg`; `limit_segments` bounds a finite flow.
    ///
    /// # Panics
    /// When `cfg.cc` names no registered controller: the network builder checks it first and
    /// refuses the configuration with the field's name.
    pub fn new(cfg: &TcpConfig, limit_segments: Option<u32>, marker: Option<Marker>) -> Self {
        let Parts {
            cc,
            resizes,
            recovery,
            sb,
            rate,
            rack_sent,
            ecn_support,
            pipe_window,
            ns3_rtx_sacked,
            ns3_rto_tail,
        } = Parts::new(cfg, limit_segments);
        let pace = cfg.pacing || cc.needs_pacing();
        let mut s = Sender {
            params: SenderParams::new(cfg, ecn_support, cc.l4s(), pipe_window),
            recovery: Some(recovery),
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            cwnd: cfg.init_cwnd,
            ssthresh: cfg.init_ssthresh.unwrap_or(f64::INFINITY),
            snd_wnd: initial_window(cfg),
            dupacks: 0,
            in_recovery: false,
            ecn_recover: 0,
            cwr_pending: false,
            srtt: 0.0,
            rttvar: 0.0,
            min_rtt: 0.0,
            rto: cfg.init_rto_ns,
            has_rtt: false,
            rto_deadline: None,
            rto_event: None,
            limit: limit_segments,
            done_at: None,
            marker,
            cc,
            sb,
            rack_sent,
            stats: SenderStats::default(),
            timed_until: 0,
            connecting: cfg.handshake,
            syn_retries: 0,
            unresolved: (cfg.handshake && cfg.resolve).then(Vec::new),
            lt_sent: 0,
            pacer: super::pacing::Pacer {
                on: pace,
                credit: cfg.pacing_credit,
                ..Default::default()
            },
            rate,
            ns3_rtx_sacked,
            ns3_rto_tail,
            ecn_mode: EcnMode::Classic,
            accecn: None,
            ce_pending: false,
            dup_delivered: 0,
            head_resent: false,
            rwnd_limited_since: None,
            seg_sizes: Vec::new(),
            seg_bytes: Vec::new(),
            resizes,
        };
        // Without the handshake, the mode the SYN exchange would have given (the SYN-ACK sets it
        // again when the handshake is simulated).
        s.set_ecn_mode(accecn::negotiate(ecn_support, cfg.receiver_ecn).0);
        s
    }

    /// Enters the ECN feedback mode `mode` (negotiated in the handshake, RFC 9768 Table 2): the
    /// congestion controller may refuse a mode (TCP Prague takes no RFC 3168 feedback); ECT only
    /// in an ECN mode (s. 3.1.5), ECT(1) when configured or the controller is L4S.
    pub fn set_ecn_mode(&mut self, mode: EcnMode) {
        let mode = self.cc.on_ecn_mode(mode);
        self.ecn_mode = mode;
        self.params.ecn = mode != EcnMode::Off;
        self.params.ect1 = self.params.ecn && (self.params.cfg_ect1 || self.cc.l4s());
        self.pacer.on = self.params.cfg_pacing || self.cc.needs_pacing();
        self.accecn = (mode == EcnMode::AccEcn).then(AccEcnSender::default);
    }

    /// The pacing rate, segments per second: the controller's own, else Linux's default
    /// ([`super::pacing::linux_rate`]); `None`: unpaced.
    pub fn pacing_rate(&self) -> Option<f64> {
        self.cc.pacing_rate().or_else(|| {
            super::pacing::linux_rate(self.cwnd, self.ssthresh, self.flight(), self.srtt)
        })
    }

    /// A paced segment leaves at `now`: the pacing clock moves on by its gap, and with `[tcp]
    /// gso` it may open a GSO burst ([`Sender::gso_burst`]).
    // Always inlined: called once per paced segment from `send_allowed`, where the compiler
    // stopped inlining it once `Pacer::sent` grew by the credit's test (0.7 % more
    // instructions per packet in `sim_dumbbell bbr`).
    #[inline(always)]
    pub(crate) fn pace_sent(&mut self, now: Time) {
        let rate = self.pacing_rate();
        // The burst's size matters only to the segment that opens it.
        let burst = if self.params.gso && self.pacer.opens_burst(now) {
            self.gso_burst(rate)
        } else {
            1
        };
        self.pacer.sent(now, rate, burst);
    }

    /// Segments of a GSO burst at the pacing rate `rate` (segments per second), Linux's
    /// `tcp_tso_autosize` ([`super::pacing::gso_segs`]) with the controller's minimum.
    pub(crate) fn gso_burst(&self, rate: Option<f64>) -> u32 {
        rate.map_or(1, |r| {
            super::pacing::gso_segs(
                r * f64::from(self.params.mss),
                self.min_rtt,
                self.params.mss,
                self.cc.min_tso_segs(),
            )
        })
    }

    /// Segments in flight (RFC 5681's FlightSize, in segments).
    #[inline]
    pub fn flight(&self) -> u32 {
        self.snd_max - self.snd_una
    }

    /// Smoothed RTT, ns (0 before the first sample).
    pub fn srtt_ns(&self) -> f64 {
        self.srtt
    }

    /// Smallest RTT sample, ns (0 before the first sample).
    pub fn min_rtt_ns(&self) -> f64 {
        self.min_rtt
    }

    /// ssthresh after a congestion event: max(FlightSize / 2, 2 segments) (RFC 5681 eq. 4).
    #[inline]
    pub fn halve(flight: u32) -> f64 {
        super::cc::reno::halve(flight)
    }

    /// RFC 6298 s. 2.2-2.3: the estimator after a sample `r` (ns).
    pub fn rtt_sample(&mut self, r: f64) {
        if self.has_rtt {
            self.rttvar = 0.75 * self.rttvar + 0.25 * (self.srtt - r).abs();
            self.srtt = 0.875 * self.srtt + 0.125 * r;
            self.min_rtt = self.min_rtt.min(r);
        } else {
            self.srtt = r;
            self.rttvar = r / 2.0;
            self.min_rtt = r;
            self.has_rtt = true;
        }
        // A sender that samples every ACK as Linux does (RACK: `Rack::rtt_of_ack`) takes
        // Linux's RTO, SRTT + max(4 RTTVAR, rto_min): net/ipv4/tcp_input.c `tcp_rtt_estimator`
        // never lets `rttvar_us` fall below `tcp_rto_min_us` and `__tcp_set_rto` adds it to
        // SRTT. With RFC 6298's gains per ACK, RTTVAR shrinks within a round trip (RFC 7323
        // App. G), and max(rto_min, SRTT + 4 RTTVAR) would leave the long-RTT flows' timer a
        // few tens of ms above SRTT.
        let var = if self.rack_sent.is_some() {
            (self.params.min_rto as f64).max(4.0 * self.rttvar)
        } else {
            (self.params.granularity as f64).max(4.0 * self.rttvar)
        };
        let rto = self.srtt + var;
        self.rto = (rto.round() as Time).clamp(self.params.min_rto, self.params.max_rto);
        let s = &mut self.stats;
        s.rtt_n += 1;
        s.rtt_sum += r;
        s.rtt_min = if s.rtt_n == 1 { r } else { s.rtt_min.min(r) };
        s.rtt_max = s.rtt_max.max(r);
        let b = ((r.max(1e3) / 1e3).log10() * RTT_BUCKETS_PER_DECADE) as usize;
        s.rtt_hist.add(b.min(RTT_BUCKETS - 1));
    }

    /// Sends no new data from now on (a flow group's stop time); what was sent is still
    /// recovered and acknowledged.
    pub fn stop_new_data(&mut self) {
        self.limit = Some(self.limit.map_or(self.snd_max, |l| l.min(self.snd_max)));
    }

    pub(crate) fn more_data(&self, seg: u32) -> bool {
        self.limit.is_none_or(|l| seg < l)
    }

    pub(crate) fn make_segment(&mut self, seg: u32, now: Time) -> Packet {
        let mut flags = match (self.params.ecn, self.params.ect1) {
            (false, _) => 0,
            (true, false) => ECT,
            (true, true) => ECT | ECT1,
        };
        if seg < self.snd_max {
            flags |= RETX;
            self.stats.retransmits += 1;
        }
        if self.cwr_pending && flags & RETX == 0 {
            flags |= CWR;
            self.cwr_pending = false;
        }
        self.stats.segs_sent += 1;
        if let Some(r) = self.rate.as_mut() {
            r.on_send(seg, now, self.snd_max - self.snd_una);
        }
        if let Some(r) = self.rack_sent.as_mut() {
            r.sent(seg, now, flags & RETX != 0);
        }
        // A segment sent again keeps the size it was first sent with.
        let size = if seg < self.snd_max && !self.seg_sizes.is_empty() {
            self.payload_of(seg) + self.params.header
        } else {
            self.params.pkt_size
        };
        let precedence = match &mut self.marker {
            Some(m) => m.colour(size, now),
            None => Precedence::Out,
        };
        Packet {
            flow: 0,
            seq: seg,
            size,
            hop: 0,
            kind: Kind::Data,
            flags,
            precedence,
            ts: now,
            rwnd: if self.params.echo_ack {
                self.snd_una
            } else {
                0
            },
            sack: [(0, 0); 3],
            enq_time: 0,
        }
    }

    /// The payload bytes of segment `seg`.
    pub fn payload_of(&self, seg: u32) -> u32 {
        match self.seg_sizes.partition_point(|&(first, _)| first <= seg) {
            0 => self.params.mss,
            i => self.seg_sizes[i - 1].1,
        }
    }

    /// The payload bytes of the segments below `seg` (the in-order data a receiver whose next
    /// expected segment is `seg` has delivered): a binary search of the size changes and the
    /// bytes below each (`Sender::seg_bytes`).
    pub fn bytes_below(&self, seg: u64) -> f64 {
        let mss = u64::from(self.params.mss);
        let i = self
            .seg_sizes
            .partition_point(|&(first, _)| u64::from(first) <= seg);
        if i == 0 {
            return (seg * mss) as f64;
        }
        let (first, payload) = self.seg_sizes[i - 1];
        (self.seg_bytes[i - 1] + (seg - u64::from(first)) * u64::from(payload)) as f64
    }

    /// New segments from `snd_max` on carry `payload` bytes (the controller's
    /// [`CongestionControl::segment_payload`]); those already sent keep theirs.
    pub(crate) fn resize_segments(&mut self, payload: u32) {
        if payload == self.params.pkt_size - self.params.header {
            return;
        }
        let at = self.snd_max;
        if self.seg_sizes.last().is_some_and(|&(first, _)| first == at) {
            self.seg_sizes.pop();
            self.seg_bytes.pop();
        }
        if self.payload_of(at) != payload {
            self.seg_bytes.push(self.bytes_below(u64::from(at)) as u64);
            self.seg_sizes.push((at, payload));
        }
        self.params.pkt_size = payload + self.params.header;
    }

    /// RFC 6298 s. 5.1: start the timer if it is not running.
    pub(crate) fn arm_if_stopped(&mut self, now: Time) {
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rto);
        }
    }

    /// Whether the window limits the packets in flight as the rate state counts them (a
    /// controller that sets cwnd itself and keeps rate samples: BBR), not the span from snd_una.
    fn by_flight(&self) -> bool {
        self.cc.controls_cwnd() && self.rate.is_some()
    }

    /// Segments counted in flight beyond the rate state's count: ns-3.44's SACKed
    /// retransmissions under `bbr-ns3:rtxsack` (0 otherwise).
    pub(crate) fn ns3_held(&self) -> u32 {
        self.ns3_rtx_sacked.as_ref().map_or(0, |h| h.count())
    }

    /// Sends what the window allows into `out` (skipping segments the receiver has SACKed, as
    /// after a timeout: RFC 6675 s. 5.1).
    ///
    /// With [`SenderParams::pipe_window`] (SACK recovery) the window limits the segments in
    /// flight, not the span from snd_una: the unSACKed segments below snd_nxt, as Linux's
    /// `tcp_packets_in_flight` (packets_out - sacked_out - lost_out + retrans_out) and ns-3's
    /// `TcpTxBuffer::BytesInFlight` count them in every state. Before the third duplicate ACK
    /// this is RFC 6675 s. 5 step (3) (each SACKed segment lets one new segment out, so a loss
    /// in a small window still gets its three duplicate ACKs); after a timeout the segments from
    /// snd_nxt up are lost (Linux's `tcp_enter_loss`, ns-3's `SetSentListLost`) and the
    /// go-back-N's retransmissions are what is in flight. New segments sent beyond the span
    /// while the window is open only by SACKs are left out of the FlightSize that sets ssthresh,
    /// as limited-transmit segments (RFC 5681 s. 3.2 step 2).
    pub fn send_allowed(&mut self, now: Time, out: &mut Vec<Packet>) {
        if self.send_ns3_after_rto(now, out) {
            self.check_app_limited();
            return;
        }
        // `x as u32` truncates toward zero and saturates (NaN to 0): for every f64 the same
        // as `x.floor() as u32` (a negative x floors to 0 or less, saturating to 0 too), without
        // the call to libm's floor that the baseline x86-64 target makes.
        let win = (self.cwnd as u32).min(self.snd_wnd).max(1);
        // Under a controller that sets cwnd itself (BBR as in Linux, over RACK or SACK
        // recovery), the window limits the packets in flight, not the span from snd_una
        // (Linux's tcp_cwnd_test in every state: SACKed and lost segments do not count; ns-3's
        // AvailableWindow, cwnd - BytesInFlight). Over SACK recovery until 2026-11-28 the span
        // from snd_una: after a timeout each hole more than cwnd above snd_una waited a round
        // trip (docs/crosscheck-ns3.md s. 1.5).
        let by_flight = self.by_flight();
        let cwnd = (self.cwnd as u32).max(1); // = floor (above)
        let mut pipe = match self.sb.as_ref() {
            Some(b) if self.params.pipe_window && !by_flight => {
                let sacked = b.sacked_below(self.snd_nxt) - b.sacked_below(self.snd_una);
                Some((self.snd_nxt - self.snd_una).saturating_sub(sacked))
            }
            _ => None,
        };
        while self.more_data(self.snd_nxt)
            && if by_flight {
                self.rate
                    .as_ref()
                    .is_some_and(|r| r.in_flight + self.ns3_held() < cwnd)
                    && self.snd_nxt < self.snd_una + self.snd_wnd.max(1)
            } else if let Some(p) = pipe {
                p < win && self.snd_nxt < self.snd_una + self.snd_wnd.max(1)
            } else {
                self.snd_nxt < self.snd_una + win
            }
        {
            if self.sb.as_ref().is_some_and(|b| b.is_sacked(self.snd_nxt)) {
                self.snd_nxt += 1;
                continue;
            }
            // Resending below snd_max (after a timeout) under RACK: only segments marked lost and
            // not retransmitted since (Linux's tcp_xmit_retransmit_queue); a recently sent one
            // left in flight by the timeout is not sent again.
            if self.snd_nxt < self.snd_max
                && self
                    .rack_sent
                    .as_ref()
                    .is_some_and(|r| !r.resend_due(self.snd_nxt))
            {
                self.snd_nxt += 1;
                continue;
            }
            if let Some(p) = pipe.as_mut() {
                *p += 1;
                if self.snd_nxt >= self.snd_una + win && self.snd_nxt == self.snd_max {
                    self.lt_sent += 1;
                    self.stats.limited_transmits += 1;
                }
            }
            if !self.pacer.allows(now) {
                break;
            }
            if self.pacer.on {
                self.pace_sent(now);
            }
            if self.snd_nxt == self.snd_una && self.snd_nxt < self.snd_max {
                self.head_resent |= self.rack_sent.is_some();
            }
            let p = self.make_segment(self.snd_nxt, now);
            out.push(p);
            self.snd_nxt += 1;
            if self.snd_nxt > self.snd_max {
                self.snd_max = self.snd_nxt;
            }
            self.arm_if_stopped(now);
        }
        self.check_app_limited();
    }

    /// From when the receive window, and nothing before it, holds back new data: in Linux's
    /// `tcp_write_xmit` order, new data to send, the pacing check passed, the congestion window
    /// open (`tcp_cwnd_test`: Linux's in-flight count, or the SACK pipe, below cwnd), the send
    /// window full (`tcp_snd_wnd_test` failed). Linux checks pacing first and arms its pacing
    /// timer whatever the windows say; the timer's `tcp_write_xmit` then finds the window full:
    /// so from the pacer's next departure time when that is later than `now`. `None`: the
    /// window does not hold the sender back.
    fn rwnd_blocks(&self, now: Time) -> Option<Time> {
        // The window's test first: the cheapest, and false nearly always.
        if self.snd_max < self.snd_una + self.snd_wnd.max(1) || !self.more_data(self.snd_max) {
            return None;
        }
        let cwnd = (self.cwnd as u32).max(1);
        // Linux's in-flight count where the rate state keeps it, else the span less what was
        // SACKed (0 without SACK).
        let in_flight = match self.rate.as_ref() {
            Some(r) => r.in_flight + self.ns3_held(),
            None => self
                .flight()
                .saturating_sub(self.sacked_between(self.snd_una, self.snd_max)),
        };
        (in_flight < cwnd).then(|| self.pacer.next_allowed(now))
    }

    /// After the first window, an ACK or a pacing wake-up, when Linux runs `tcp_write_xmit` (the
    /// application's write, `tcp_data_snd_check`, the pacing timer): starts or stops the
    /// receive-window chrono.
    pub(super) fn after_send_attempt(&mut self, now: Time) {
        let from = self.rwnd_blocks(now);
        self.time_rwnd_limited(now, from);
    }

    /// Linux's chrono (`tcp_chrono_start` / `tcp_chrono_stop` of TCP_CHRONO_RWND_LIMITED after
    /// each `tcp_write_xmit`): the time from a send attempt stopped by the receive window to the
    /// next one that was not. `from`: since when the window holds the sender back (`None`: it
    /// does not). A `from` later than `now` is pacing holding the sender now: Linux's
    /// `tcp_write_xmit` stops the chrono here and its pacing timer starts it again then.
    fn time_rwnd_limited(&mut self, now: Time, from: Option<Time>) {
        let running = self.rwnd_limited_since;
        if let Some(t) = running.filter(|_| from != Some(now)) {
            self.stats.rwnd_limited_ns += now.saturating_sub(t);
            self.rwnd_limited_since = None;
        }
        if self.rwnd_limited_since.is_none() {
            self.rwnd_limited_since = from;
        }
    }

    /// The time the receive window limited the sender up to `end` (ns): Linux's
    /// `tcpi_rwnd_limited`, whole connection.
    pub fn rwnd_limited_ns(&self, end: Time) -> u64 {
        self.stats.rwnd_limited_ns + self.rwnd_limited_since.map_or(0, |t| end.saturating_sub(t))
    }

    /// After sending: nothing more to send and room in the window marks the flight
    /// application-limited (Linux's `tcp_rate_check_app_limited`).
    fn check_app_limited(&mut self) {
        if self.rate.is_some() && !self.more_data(self.snd_nxt) {
            // tcp_rate_check_app_limited: nothing more to send and room in the window.
            let cwnd = self.cwnd;
            if let Some(r) = self.rate.as_mut().filter(|r| (r.in_flight as f64) < cwnd) {
                r.mark_app_limited();
            }
        }
    }

    /// The pacing clock's call: what [`Sender::send_allowed`] allows, or, in recovery under a
    /// controller that sets cwnd itself, what the recovery chooses (RACK: lost segments first)
    /// or, for SACK recovery, RFC 6675 NextSeg.
    pub fn send_paced(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.send_paced_inner(now, out);
        self.after_send_attempt(now);
    }

    fn send_paced_inner(&mut self, now: Time, out: &mut Vec<Packet>) {
        if self.in_recovery && self.cc.controls_cwnd() {
            let sent = self.with_recovery(|r, s| r.send_paced_in_recovery(s, now, out));
            if sent {
                return;
            }
        }
        if self.in_recovery && self.sb.is_some() && self.cc.controls_cwnd() {
            self.send_by_next_seg(now, out);
        } else {
            self.send_allowed(now, out);
            self.tell_head_resent(now);
        }
    }

    /// Calls the recovery with the sender (taken out while it runs, put back after).
    fn with_recovery<T>(&mut self, f: impl FnOnce(&mut dyn Recovery, &mut Sender) -> T) -> T {
        let mut r = self
            .recovery
            .take()
            .expect("recovery is back after each call");
        let v = f(r.as_mut(), self);
        self.recovery = Some(r);
        v
    }

    /// Tells the recovery that [`Sender::send_allowed`] resent the head, if it did (RACK restarts
    /// the RTO then: Linux's `tcp_xmit_retransmit_queue`).
    fn tell_head_resent(&mut self, now: Time) {
        if std::mem::take(&mut self.head_resent) {
            self.with_recovery(|r, s| r.head_retransmitted(s, now));
        }
    }

    pub(crate) fn retransmit_head(&mut self, now: Time, out: &mut Vec<Packet>) {
        let p = self.make_segment(self.snd_una, now);
        out.push(p);
        self.arm_if_stopped(now);
    }

    /// Processes an ACK; segments to send go to `out`.
    pub fn on_ack(&mut self, ack: &Packet, now: Time, out: &mut Vec<Packet>) {
        if self.connecting || ack.flags & SYN != 0 {
            self.on_synack(ack, now, out);
        } else {
            self.with_recovery(|r, s| r.on_ack(s, ack, now, out));
        }
        self.after_send_attempt(now);
    }

    /// The loss recovery's name (`[tcp] recovery`).
    pub fn recovery_name(&self) -> &'static str {
        self.recovery.as_ref().map_or("", |r| r.name())
    }

    /// What an ACK of `acked` segments (cumulative) newly delivering `delivered` segments
    /// ([`AckSample::delivered`]: each segment once) tells the congestion controller; with send records, the ACK's SACK blocks are delivered and
    /// the delivery-rate sample taken ([`super::rate`]).
    #[inline]
    pub(crate) fn ack_sample(
        &mut self,
        ack: &Packet,
        acked: u32,
        delivered: u32,
        now: Time,
    ) -> AckSample {
        let mut rate = super::rate::RateSample::default();
        let held_before = self.ns3_held();
        if let Some(r) = self.rate.as_mut() {
            if let Some(sb) = self.sb.as_ref() {
                if let Some(h) = self.ns3_rtx_sacked.as_mut() {
                    h.on_sack(&ack.sack, self.snd_una, self.snd_max, |seg| {
                        r.record(seg).is_some_and(|x| x.retrans && !x.acked)
                    });
                }
                // The scoreboard has just applied this ACK's blocks (SACK and RACK recovery).
                let (runs, top) = sb.last_sacks();
                r.on_new_sacks(runs, top);
            }
            rate = r.gen(now, self.min_rtt);
            rate.prior_in_flight += held_before;
            rate.in_recovery = self.in_recovery;
            // tcp_ack_update_rtt: no (S)ACK timing sample (Karn: only retransmissions were
            // delivered), but the cumulative ACK moved (FLAG_ACKED) and timestamps are on: the
            // rate sample's RTT is the echo's, on the millisecond TS clock.
            if rate.rtt_ns < 0 && acked > 0 && self.params.timestamps {
                rate.rtt_ns = linux_ts_rtt(now, ack.ts) as i64;
            }
        }
        let (ece, ce) = if self.accecn.is_some() {
            let n = self.accecn_ce(ack, delivered);
            (n > 0, n)
        } else {
            let e = ack.flags & ECE != 0;
            (e, if e { delivered } else { 0 })
        };
        AckSample {
            rate,
            now,
            acked,
            delivered,
            ce,
            ece,
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
            snd_max: self.snd_max,
            srtt_ns: self.srtt,
            min_rtt_ns: self.min_rtt,
        }
    }

    /// Without SACK, the segments an ACK newly delivered, as Linux counts `tp->delivered` for
    /// a Reno connection (net/ipv4/tcp_input.c): a duplicate ACK delivers one segment
    /// (`tcp_add_reno_sack`; none once all but one outstanding segment are counted, the
    /// hole the duplicates point at: `tcp_limit_reno_sacked`); an ACK of `acked` new segments delivers those not already
    /// counted by duplicate ACKs, at least one (`tcp_remove_reno_sacks`: max(acked -
    /// sacked_out, 1)).
    pub(crate) fn reno_delivered(&mut self, acked: u32) -> u32 {
        if acked == 0 {
            let outstanding = self.snd_max.saturating_sub(self.snd_una);
            let n = u32::from(self.dup_delivered + 1 < outstanding);
            self.dup_delivered += n;
            n
        } else {
            let covered = self.dup_delivered.min(acked);
            self.dup_delivered -= covered;
            (acked - covered).max(1)
        }
    }

    /// AccECN (RFC 9768 s. 3.2.2.5.2): the packets newly CE-marked that an ACK's ACE field
    /// reports, inferred with the number of packets it newly delivered ([`AckSample::delivered`],
    /// Linux's `tp->delivered` delta).
    fn accecn_ce(&mut self, ack: &Packet, delivered: u32) -> u32 {
        let a = self.accecn.as_mut().expect("AccECN mode");
        let n = a.on_ack(
            accecn::ace_of(ack.flags),
            delivered,
            None,
            self.params.pkt_size,
        );
        self.ce_pending |= n > 0;
        n
    }

    /// A controller that sets the window itself ([`CongestionControl::controls_cwnd`]): its
    /// window after this ACK, given the flight and recovery state the ACK left.
    pub(crate) fn cc_control(&mut self, sample: &mut AckSample) {
        if let Some(r) = self.rate.as_ref() {
            sample.rate.in_flight = r.in_flight + self.ns3_held();
        }
        sample.rate.in_recovery = self.in_recovery;
        sample.rate.high_data = self.snd_max;
        sample.rate.edt = self.pacer.next_send;
        self.cwnd = self.cc.cong_control(self.cwnd, sample).max(1.0);
        if self.resizes {
            if let Some(payload) = self.cc.segment_payload() {
                self.resize_segments(payload);
            }
        }
        if self.cc.asks_app_limited() {
            if let Some(r) = self.rate.as_mut() {
                r.mark_app_limited();
            }
        }
    }

    /// Segments in `lo..hi` the scoreboard holds as SACKed (0 without one).
    pub(crate) fn sacked_between(&self, lo: u32, hi: u32) -> u32 {
        self.sb
            .as_ref()
            .filter(|_| hi > lo)
            .map_or(0, |b| b.sacked_below(hi) - b.sacked_below(lo))
    }

    /// Takes an RTT sample and moves `snd_una` for an ACK of new data up to `a`.
    pub(crate) fn advance_una(&mut self, a: u32, ts: Time, now: Time) {
        // With timestamps (RFC 7323 s. 4) every ACK of new data is a sample, retransmissions
        // included (the echo names the transmission). Without them a sender times one segment per
        // round trip and never a retransmitted one (RFC 6298 s. 3, Karn): sampling every ACK with
        // RFC 6298's gains would shrink RTTVAR within a round trip (RFC 7323 App. G) and make the
        // RTO fire on queueing delay (docs/reproductions.md, seed 004: 306 timeouts instead of
        // ns-2's 54 on the same network).
        //
        // A sender whose recovery keeps each segment's send time (RACK) samples as Linux does,
        // from those times, SACKs included (`Rack::rtt_of_ack`), not here.
        let by_send_times = self.rack_sent.is_some();
        if self.params.timestamps {
            let r = now.saturating_sub(ts) as f64;
            if !by_send_times {
                self.rtt_sample(r);
            }
            self.cc.on_delay_sample(r, now);
        } else if a > self.timed_until && !by_send_times {
            if !self.in_recovery {
                self.rtt_sample(now.saturating_sub(ts) as f64);
            }
            self.timed_until = self.snd_nxt.max(a);
        }
        if let Some(r) = self.rate.as_mut() {
            r.on_cum_ack(self.snd_una, a);
        }
        if let Some(h) = self.ns3_rtx_sacked.as_mut() {
            h.advance(a);
        }
        if self.ns3_rto_tail.as_mut().is_some_and(|t| t.advance(a)) {
            // NextSeg chose every segment since the timeout: no walk from snd_nxt is pending.
            self.snd_nxt = self.snd_max;
        }
        self.snd_una = a;
        self.lt_sent = 0;
        if self.snd_nxt < a {
            self.snd_nxt = a;
        }
    }

    /// After an ACK of new data: RFC 6298 s. 5.2-5.3 timer (stopped when all is acknowledged,
    /// else restarted when `restart`), and the completion time of a finite flow.
    pub(crate) fn after_new_ack(&mut self, restart: bool, now: Time) {
        if self.snd_una >= self.snd_max {
            self.rto_deadline = None;
        } else if restart {
            self.rto_deadline = Some(now + self.rto);
        }
        if self.limit.is_some_and(|l| self.snd_una >= l) && self.done_at.is_none() {
            self.done_at = Some(now);
        }
    }

    /// RFC 3168 s. 6.1.2: on an ECN echo, at most one reduction per window of data. In AccECN
    /// mode the echo is any CE count reported since the last call (RFC 9768 s. 3.1.5: the same
    /// response), and no CWR is sent.
    pub(crate) fn on_ecn_echo(&mut self, ack: &Packet, now: Time) {
        let echo = if self.accecn.is_some() {
            std::mem::take(&mut self.ce_pending)
        } else {
            ack.flags & ECE != 0
        };
        if echo && self.params.ecn && !self.in_recovery && self.snd_una > self.ecn_recover {
            self.ssthresh = self.cc.on_ecn(self.cwnd, self.flight(), now);
            if !self.cc.controls_cwnd() {
                self.cwnd = self.ssthresh.max(1.0);
            }
            self.ecn_recover = self.snd_max;
            self.cwr_pending = self.accecn.is_none();
            self.stats.ecn_reductions += 1;
        }
    }

    /// The retransmission timer expired at `now` (RFC 6298 s. 5.4-5.6, RFC 5681 s. 3.1 eq. 4).
    pub fn on_timeout(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.rto_deadline = None;
        if self.connecting {
            self.syn_timeout(now, out);
            return;
        }
        if self.snd_una >= self.snd_max {
            return;
        }
        let handled = self.with_recovery(|r, s| r.on_timer(s, now, out));
        if handled {
            return; // the recovery's own timer (RACK's reordering timer, TLP's probe)
        }
        self.stats.timeouts += 1;
        // RFC 5681 s. 3.1 eq. 4: ssthresh no more than max(FlightSize / 2, 2). During NewReno
        // fast recovery the flight includes data sent under the "artificially inflated" window
        // (RFC 6582 s. 3.2 step 4), so a timeout there keeps the ssthresh already chosen for this
        // congestion event when that is lower: a timeout never raises ssthresh.
        let reduced = self.cc.on_congestion(self.cwnd, self.flight(), now);
        self.cc.on_timeout();
        self.ssthresh = if self.in_recovery {
            reduced.min(self.ssthresh)
        } else {
            reduced
        };
        self.cwnd = 1.0;
        self.in_recovery = false;
        self.dupacks = 0;
        self.lt_sent = 0;
        self.dup_delivered = 0;
        self.snd_nxt = self.snd_una;
        // A recovery that marks losses itself (RACK) marks them in the rate state too.
        if let Some(h) = self.ns3_rtx_sacked.as_mut() {
            h.clear();
        }
        if let Some(t) = self.ns3_rto_tail.as_mut() {
            t.on_timeout(self.snd_max);
        }
        if let Some(r) = self.rate.as_mut().filter(|r| !r.external_losses) {
            r.on_timeout();
        }
        self.with_recovery(|r, s| r.on_timeout(s, now));
        // Linux's tcp_enter_loss (net/ipv4/tcp_input.c): cwnd = tcp_packets_in_flight + 1 after
        // tcp_timeout_mark_lost, which leaves RACK's recently sent segments in flight (over SACK
        // recovery every unSACKed segment is lost: cwnd 1). Only where the window counts the
        // packets in flight (BBR, Linux's tcp_cwnd_test); a window over the span from snd_una
        // would let in flight + 1 retransmissions go at once.
        if self.by_flight() {
            self.cwnd = f64::from(self.rate.as_ref().map_or(0, |r| r.in_flight) + 1);
        }
        self.rto = (self.rto * 2).min(self.params.max_rto);
        self.send_allowed(now, out);
        self.tell_head_resent(now);
    }
}

/// Linux's RTT from a timestamp echo without microsecond timestamps (`tcp_rtt_tsopt_us` with
/// `min_delta` 1, net/ipv4/tcp_input.c): the TS clock ticks in milliseconds
/// (`tcp_time_stamp_ms`: the socket's clock over 10^6, as each segment's TSval is its
/// departure time's), so the sample is whole milliseconds, floor(now) - floor(sent), and
/// 1 ms when that is 0. It can be up to 1 ms below the true RTT.
pub fn linux_ts_rtt(now: Time, echo: Time) -> Time {
    ts_ticks(now, echo).max(1) * 1_000_000
}

/// Whole ticks of a millisecond timestamp clock between a segment sent at `echo` and an ACK at
/// `now` (ns): floor(now) - floor(echo) in milliseconds, as Linux and ns-3 read an echo.
pub fn ts_ticks(now: Time, echo: Time) -> Time {
    const MS: Time = 1_000_000;
    (now / MS).saturating_sub(echo / MS)
}
