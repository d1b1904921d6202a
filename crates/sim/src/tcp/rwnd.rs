//! Linux 6.18's receive window (`[tcp] rwnd_model = "linux"`): the window a Linux receiver
//! with the default buffers (`net.ipv4.tcp_rmem` = 4096 131072 33554432, `tcp_moderate_rcvbuf`
//! on) advertises to a bulk sender whose every in-order byte the application reads at once.
//! Off by default: the receiver then advertises `[tcp] rwnd` from the first ACK.
//!
//! From the kernel's sources (net/ipv4/tcp_input.c and tcp_output.c; the 6.16 series "tcp:
//! receive side improvements" and 6.18-rc4's "tcp: fix too slow tcp_rcvbuf_grow() action"):
//!
//! - **Start** (`tcp_select_initial_window`, `tcp_init_buffer_space`): the SYN-ACK offers the
//!   whole MSS multiples in 64 KB (65,160 bytes at 1,448), window scale 10; then the window
//!   clamp is 64 KB less one MSS, `rcv_ssthresh` the same, the buffer 128 KB, and the first
//!   growth step's reference (`rcvq_space.space`) 10 MSS. The first data segment sets the
//!   scaling ratio (payload over the buffer's true size, `tcp_measure_rcv_mss`) and the clamp
//!   becomes buffer x ratio.
//! - **`rcv_ssthresh`** (`tcp_grow_window`) grows by 2 MSS per data segment received, in order
//!   or out of order (SACK), up to min(clamp, free space).
//! - **Once per receiver RTT** (`tcp_rcv_space_adjust`, at the first read a receiver RTT after
//!   the last step): `copied` = bytes read since; if above the last step's, `tcp_rcvbuf_grow`:
//!   rcvwin = 2 copied + 4 copied (copied - last) / last (the slow-start term) + the span held
//!   out of order; buffer = min(rcvwin / ratio, `tcp_rmem[2]`), never smaller; clamp = buffer x
//!   ratio. A queued out-of-order segment runs the same with copied = last (span term only).
//! - **Advertised** (`__tcp_select_window`, `tcp_select_window`): min(free space, `rcv_ssthresh`)
//!   rounded up to the scale unit (1 KB), free space = buffer x ratio less the out-of-order
//!   payload (its true size x ratio); the right edge never moves back (`tcp_shrink_window` 0).
//!
//! - **The receiver's RTT** (`tcp_rcv_rtt_measure_ts`, `tcp_rcv_rtt_update`): a data segment
//!   echoes the timestamp of the latest ACK its sender had; now - that ACK's send time is a
//!   sample, taken when the echo changes and not zero, latched down at once and raised by 1/8
//!   of the excess (the update with an empty receive queue). Here a data segment carries the
//!   cumulative ACK number its sender held (`Sender` puts it in the segment's `rwnd` field when
//!   this model is on), and the receiver takes the latest ACK it sent with that number no later
//!   than the segment left: that ACK's send time is the echo.
//!
//! Simplified (docs/transports.md, "Linux's receive window"): the scaling ratio is a constant,
//! [`SCALING_RATIO`] (single 1,448-byte segments; about 0.92 for whole GSO packets); bytes are
//! whole segments of the flow's MSS; the ACK is built after the segment is read (Linux's goes
//! out before the reader runs, with the segment still counted in the buffer: this window can
//! be one segment larger); memory pressure, `tcp_clamp_window` pruning and the half-full quick
//! path of `__tcp_select_window` are left out (a sender that obeys the window, with reads at
//! once, does not reach them). Window sizes are bytes; the advertised window is whole
//! segments.

use aqm::Time;
use std::collections::VecDeque;

/// `tcp_rmem[1]`: the buffer a connection starts with, bytes.
pub const RMEM_DEFAULT: u64 = 131_072;
/// `tcp_rmem[2]`: the largest buffer autotuning sets, bytes (32 MiB since 6.16).
pub const RMEM_MAX: u64 = 33_554_432;
/// `TCP_DEFAULT_SCALING_RATIO` (6.10 on): the ratio before the first data segment, /256.
pub const DEFAULT_RATIO: u64 = 128;
/// The scaling ratio the first data segment sets, /256: a single 1,448-byte segment's payload
/// over its buffer's true size (about 2.7 KB), an estimate (docs/transports.md).
pub const SCALING_RATIO: u64 = 135;
/// The window scale unit: 2^10 bytes (`rcv_wscale` 10 with `tcp_rmem[2]` = 32 MiB).
pub const SCALE_UNIT: u64 = 1024;

/// A Linux receiver's window state (bytes).
#[derive(Clone, Debug)]
pub struct LinuxRwnd {
    mss: u64,
    /// `tp->scaling_ratio`, /256.
    ratio: u64,
    /// `sk->sk_rcvbuf`.
    rcvbuf: u64,
    /// `tp->window_clamp`.
    clamp: u64,
    /// `tp->rcv_ssthresh`.
    ssthresh: u64,
    /// `tp->rcvq_space.space`: bytes read in the last growth step's interval.
    space: u64,
    /// `rcvq_space.seq`, segments: `rcv_nxt` at the last step.
    space_seq: u32,
    /// `rcvq_space.time`: the last step (`None` before the first data segment).
    space_time: Option<Time>,
    /// ACKs sent and not yet echoed past: (cumulative ACK number, send time), oldest first.
    sent_acks: VecDeque<(u32, Time)>,
    /// The send time of the ACK the last RTT sample was timed from.
    last_echo: Option<Time>,
    /// `rcv_rtt_est.rtt_us`, ns.
    rtt: Option<Time>,
    /// `rcv_wup + rcv_wnd`: the right edge advertised, bytes from the start.
    right_edge: u64,
}

impl LinuxRwnd {
    /// A receiver of `mss`-byte segments after the handshake (`tcp_init_buffer_space`).
    pub fn new(mss: u32) -> Self {
        let mss = u64::from(mss.max(1));
        let maxwin = RMEM_DEFAULT * DEFAULT_RATIO / 256;
        // "Reserve one segment" (tcp_app_win): clamp = max(2 MSS, maxwin - MSS).
        let clamp = (maxwin.saturating_sub(mss)).max(2 * mss);
        let ssthresh = Self::syn_ack_bytes(mss).min(clamp);
        LinuxRwnd {
            mss,
            ratio: DEFAULT_RATIO,
            rcvbuf: RMEM_DEFAULT,
            clamp,
            ssthresh,
            space: ssthresh.min(10 * mss),
            space_seq: 0,
            space_time: None,
            sent_acks: VecDeque::new(),
            last_echo: None,
            rtt: None,
            right_edge: Self::syn_ack_bytes(mss),
        }
    }

    /// The SYN-ACK's window (`tcp_select_initial_window`): whole segments in the default
    /// buffer's 64 KB (rounded down only when the space exceeds one MSS), at most 65,535 bytes
    /// (unscaled).
    fn syn_ack_bytes(mss: u64) -> u64 {
        let space = RMEM_DEFAULT * DEFAULT_RATIO / 256;
        let space = if space > mss {
            (space / mss) * mss
        } else {
            space
        };
        space.min(65_535)
    }

    /// The SYN-ACK's window, segments (the sender's window until the first ACK).
    pub fn initial_segments(mss: u32) -> u32 {
        let mss = u64::from(mss.max(1));
        (Self::syn_ack_bytes(mss) / mss) as u32
    }

    /// The free space (`tcp_space`) with nothing held: buffer x ratio. Data held out of order
    /// takes its payload from it (its true size x ratio).
    fn free(&self) -> u64 {
        self.rcvbuf * self.ratio / 256
    }

    /// An ACK with cumulative number `ack_no` leaves at `now` (the echo's source).
    pub fn on_ack_sent(&mut self, now: Time, ack_no: u32) {
        self.sent_acks.push_back((ack_no, now));
    }

    /// A data segment sent at `sent`, echoing cumulative ACK number `echo`, arrives at `now`
    /// with `ooo_bytes` of payload held out of order after it (itself included if it is
    /// held): the ratio (first segment), the receiver's RTT sample, `rcv_ssthresh`'s growth.
    pub fn on_segment(&mut self, now: Time, sent: Time, echo: u32, ooo_bytes: u64) {
        if self.space_time.is_none() {
            // tcp_measure_rcv_mss: the first data segment sets the ratio and the clamp.
            self.ratio = SCALING_RATIO;
            self.clamp = self.rcvbuf * self.ratio / 256;
            self.space_time = Some(now);
        }
        if let Some(t) = self.echoed(echo, sent) {
            if self.last_echo != Some(t) && now > t {
                self.last_echo = Some(t);
                let m = now - t;
                self.rtt = Some(match self.rtt {
                    None => m,
                    Some(r) if m < r => m,
                    Some(r) => r - r / 8 + m / 8,
                });
            }
        }
        // tcp_grow_window: 2 MSS a segment, up to min(clamp, free space).
        let cap = self.clamp.min(self.free().saturating_sub(ooo_bytes));
        if cap > self.ssthresh {
            self.ssthresh += (cap - self.ssthresh).min(2 * self.mss);
        }
    }

    /// The send time of the ACK a segment sent at `sent` echoes: the latest ACK numbered `echo`
    /// sent no later than `sent` (older entries are dropped: later segments echo no less).
    fn echoed(&mut self, echo: u32, sent: Time) -> Option<Time> {
        while let Some(&(n, t)) = self.sent_acks.front() {
            let next_same = self
                .sent_acks
                .get(1)
                .is_some_and(|&(n2, t2)| n2 == echo && t2 <= sent);
            if n < echo || (n == echo && t <= sent && next_same) {
                self.sent_acks.pop_front();
            } else {
                break;
            }
        }
        match self.sent_acks.front() {
            Some(&(n, t)) if n == echo && t <= sent => Some(t),
            _ => None,
        }
    }

    /// The application has read up to `rcv_nxt` (segments) at `now`, `ooo_span` bytes from
    /// `rcv_nxt` to the end of the data held out of order: once per receiver RTT, the growth
    /// step (`tcp_rcv_space_adjust`).
    pub fn on_read(&mut self, now: Time, rcv_nxt: u32, ooo_span: u64) {
        let (Some(rtt), Some(t)) = (self.rtt, self.space_time) else {
            return;
        };
        if rtt == 0 || now.saturating_sub(t) < rtt {
            return;
        }
        let copied = u64::from(rcv_nxt.saturating_sub(self.space_seq)) * self.mss;
        if copied > self.space {
            self.grow(copied, ooo_span);
        }
        self.space_seq = rcv_nxt;
        self.space_time = Some(now);
    }

    /// A segment was queued out of order, `ooo_span` bytes from `rcv_nxt` to the end of the
    /// held data (`tcp_data_queue_ofo`: `tcp_rcvbuf_grow` with the last step's bytes).
    pub fn on_out_of_order(&mut self, ooo_span: u64) {
        self.grow(self.space, ooo_span);
    }

    /// `tcp_rcvbuf_grow(newval)` (6.18).
    fn grow(&mut self, newval: u64, ooo_span: u64) {
        let old = self.space.max(1);
        self.space = newval;
        let mut rcvwin = 2 * newval;
        if newval > old {
            // The slow-start term, divided before it is doubled as the kernel does.
            rcvwin += 2 * (rcvwin * (newval - old) / old);
        }
        rcvwin += ooo_span;
        let rcvbuf = (rcvwin * 256 / self.ratio).min(RMEM_MAX);
        if rcvbuf > self.rcvbuf {
            self.rcvbuf = rcvbuf;
            self.clamp = rcvbuf * self.ratio / 256;
        }
    }

    /// The window an ACK advertises (segments) with `rcv_nxt` (segments) and `ooo_bytes` of
    /// payload held out of order (`tcp_select_window`).
    pub fn advertise(&mut self, rcv_nxt: u32, ooo_bytes: u64) -> u32 {
        let free = self.free().saturating_sub(ooo_bytes);
        let mut win = free.min(self.ssthresh).div_ceil(SCALE_UNIT) * SCALE_UNIT;
        let left = u64::from(rcv_nxt) * self.mss;
        let promised = self.right_edge.saturating_sub(left);
        if win < promised {
            win = promised.div_ceil(SCALE_UNIT) * SCALE_UNIT;
        }
        self.right_edge = left + win;
        (win / self.mss) as u32
    }

    /// The window clamp, bytes (tests, traces).
    pub fn clamp(&self) -> u64 {
        self.clamp
    }

    /// The receiver's RTT estimate, ns.
    pub fn rtt(&self) -> Option<Time> {
        self.rtt
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Time = 1_000_000;
    const MSS: u32 = 1448;

    /// tcp_select_initial_window / tcp_init_buffer_space by hand at MSS 1,448: the SYN-ACK
    /// offers 45 x 1,448 = 65,160 bytes; the clamp is 65,536 - 1,448 = 64,088. The first ACK
    /// would offer min(65,536, 64,088) rounded up to 1 KB = 64,512, but the right edge may not
    /// move back from 65,160: ALIGN(65,160, 1,024) = 65,536 bytes = 45 segments.
    #[test]
    fn the_handshake_offers_64_kb() {
        assert_eq!(LinuxRwnd::initial_segments(MSS), 45);
        let mut l = LinuxRwnd::new(MSS);
        assert_eq!(l.clamp(), 64_088);
        assert_eq!(l.advertise(0, 0), 45);
        // The first data segment sets the ratio: clamp = 131,072 x 135 / 256 = 69,120.
        l.on_segment(20 * MS, 0, 0, 0);
        assert_eq!(l.clamp(), 69_120);
    }

    /// The worked example (40 ms, a flight doubling from 10 segments, reads at once), by hand
    /// from tcp_rcvbuf_grow (6.18): at 40 ms after the first segment, 11 segments read =
    /// 15,928 bytes > 14,480: rcvwin = 31,856 + 2 x (31,856 x 1,448 / 14,480 = 3,185) = 38,226,
    /// a buffer of 72,487 < 131,072: no change. 40 ms later 20 more (28,960): rcvwin = 57,920 +
    /// 2 x (57,920 x 13,032 / 15,928 = 47,389) = 152,698; buffer 152,698 x 256 / 135 = 289,560;
    /// clamp 289,560 x 135 / 256 = 152,697.
    #[test]
    fn the_clamp_grows_once_per_rtt_with_the_slow_start_term() {
        let mut l = LinuxRwnd::new(MSS);
        // An ACK numbered 0 left at -20 ms (the handshake's); the segment sent at 0 echoes it
        // and arrives at 20 ms: the receiver's RTT is 40 ms.
        l.on_ack_sent(0, 0);
        l.on_segment(40 * MS, 20 * MS, 0, 0);
        assert_eq!(l.rtt(), Some(40 * MS));
        let mut l = LinuxRwnd::new(MSS);
        l.on_ack_sent(0, 0);
        l.on_segment(20 * MS, 0, 0, 0);
        l.rtt = Some(40 * MS); // the worked example's RTT from here on
        l.on_read(20 * MS, 1, 0);
        l.on_read(59 * MS, 10, 0); // less than a receiver RTT since the first: no step
        assert_eq!(l.clamp(), 69_120);
        l.on_read(60 * MS, 11, 0);
        assert_eq!(l.clamp(), 69_120);
        l.on_read(100 * MS, 31, 0);
        assert_eq!(l.clamp(), 152_697);
        // Reads within the next RTT change nothing.
        l.on_read(120 * MS, 51, 0);
        assert_eq!(l.clamp(), 152_697);
    }

    /// Data held out of order takes its payload from the free space, and the right edge does
    /// not move back: with rcv_ssthresh grown to the clamp (69,120) and 30 segments (43,440
    /// bytes) held, the free space is 69,120 - 43,440 = 25,680 (26,624 rounded up), but the
    /// edge promised at rcv_nxt 10 (10 x 1,448 + 69,632 = 84,112) holds: the window is
    /// 84,112 - 14,480 = 69,632 bytes, 48 segments.
    #[test]
    fn held_data_narrows_the_free_space_but_not_the_promised_edge() {
        let mut l = LinuxRwnd::new(MSS);
        for i in 0..10 {
            l.on_segment((20 + i) * MS, i * MS, 0, 0);
        }
        assert_eq!(l.advertise(10, 0), 69_632 / 1448);
        let held = 30 * u64::from(MSS);
        l.on_segment(40 * MS, 20 * MS, 0, held);
        assert_eq!(l.advertise(10, held), 69_632 / 1448);
        // Once the held data is read the window is the free space again: 69,632 bytes from
        // rcv_nxt 41, beyond the old edge.
        assert_eq!(l.advertise(41, 0), 69_632 / 1448);
    }

    /// The receiver's RTT: from the send time of the ACK a segment echoes (the latest with
    /// its number sent before the segment left), sampled when the echo changes, latched down at
    /// once and raised by an eighth of the excess (tcp_rcv_rtt_update, empty receive queue).
    #[test]
    fn the_receiver_rtt_is_timed_from_the_echoed_ack() {
        let mut l = LinuxRwnd::new(MSS);
        l.on_ack_sent(10 * MS, 5); // ACK 5 at 10 ms
        l.on_ack_sent(12 * MS, 5); // a duplicate of it at 12 ms
        l.on_ack_sent(30 * MS, 7); // ACK 7 at 30 ms
                                   // Sent at 11 ms: only the first ACK 5 had left: 70 - 10 = 60 ms.
        l.on_segment(70 * MS, 11 * MS, 5, 0);
        assert_eq!(l.rtt(), Some(60 * MS));
        // Sent at 20 ms echoing 5: the duplicate (12 ms): 62 - 12 = 50 ms, latched down.
        l.on_segment(62 * MS, 20 * MS, 5, 0);
        assert_eq!(l.rtt(), Some(50 * MS));
        // The same echo again: no sample.
        l.on_segment(90 * MS, 21 * MS, 5, 0);
        assert_eq!(l.rtt(), Some(50 * MS));
        // Echoing ACK 7 (30 ms), arriving at 100 ms: 70 ms > 50: 50 - 6.25 + 8.75 = 52.5 ms.
        l.on_segment(100 * MS, 40 * MS, 7, 0);
        assert_eq!(l.rtt(), Some(52_500_000));
        // An echo of an ACK never sent (or already dropped): no sample.
        l.on_segment(110 * MS, 50 * MS, 9, 0);
        assert_eq!(l.rtt(), Some(52_500_000));
    }
}
