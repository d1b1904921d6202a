//! Property tests of the frame parser and rewrites over arbitrary bytes: no panic, no read past
//! the frame, and rewrites keep checksums that were right before right after (checked from scratch).
//! 20,000 cases per property by default; `FWD_FUZZ_CASES=N` runs N (the count in docs/testbed.md).

use fwd::frame::{self, Transport, ETH_HLEN};
use proptest::prelude::*;

fn checksums_ok(f: &[u8], p: &frame::Ipv4) -> (bool, bool) {
    let hdr = &f[ETH_HLEN..ETH_HLEN + p.ihl];
    let ip = u16::from_be_bytes([hdr[10], hdr[11]]) == frame::ipv4_checksum(hdr);
    let tcp = match p.l4 {
        Transport::Tcp { off, .. } => {
            let seg = &f[off..ETH_HLEN + p.total_len];
            u16::from_be_bytes([seg[16], seg[17]]) == frame::tcp_checksum(p.src, p.dst, seg)
        }
        _ => false,
    };
    (ip, tcp)
}

/// A valid TCP/IPv4 frame whose header bytes the strategy then perturbs.
fn valid_frame(payload: &[u8], tos: u8, window: u16) -> Vec<u8> {
    let total = 40 + payload.len();
    let mut f = vec![0u8; 12];
    f.extend_from_slice(&[0x08, 0x00, 0x45, tos]);
    f.extend_from_slice(&(total as u16).to_be_bytes());
    f.extend_from_slice(&[0, 1, 0x40, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 1, 1]);
    let c = frame::ipv4_checksum(&f[ETH_HLEN..ETH_HLEN + 20]);
    f[24..26].copy_from_slice(&c.to_be_bytes());
    let mut t = vec![0x30, 0x39, 0x14, 0x51, 0, 0, 0, 9, 0, 0, 0, 7, 0x50, 0x10];
    t.extend_from_slice(&window.to_be_bytes());
    t.extend_from_slice(&[0, 0, 0, 0]);
    t.extend_from_slice(payload);
    let c = frame::tcp_checksum(0x0a00_0001, 0x0a00_0101, &t);
    t[16..18].copy_from_slice(&c.to_be_bytes());
    f.extend_from_slice(&t);
    f
}

fn exercise(mut f: Vec<u8>, max: u32, ws: u8) {
    let Ok(p) = frame::parse(&f) else { return };
    assert!(ETH_HLEN + p.total_len <= f.len() && p.ihl >= 20 && p.ihl <= p.total_len);
    if let Transport::Tcp { off, hlen, .. } = p.l4 {
        assert!(off + hlen <= ETH_HLEN + p.total_len);
        let _ = frame::syn_window_scale(&f, off, hlen);
    }
    let before = checksums_ok(&f, &p);
    frame::mark_ce(&mut f, &p);
    let q = frame::parse(&f).expect("a marked frame still parses");
    frame::clamp_window(&mut f, &q, max, ws);
    let q = frame::parse(&f).expect("a clamped frame still parses");
    let after = checksums_ok(&f, &q);
    assert!(!before.0 || after.0, "IPv4 checksum broken by a rewrite");
    assert!(!before.1 || after.1, "TCP checksum broken by a rewrite");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("FWD_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(20_000)
    ))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200),
                                   max in any::<u32>(), ws in any::<u8>()) {
        exercise(bytes, max, ws);
    }

    #[test]
    fn perturbed_valid_frames_never_panic_and_keep_checksums(
        payload in proptest::collection::vec(any::<u8>(), 0..64),
        tos in any::<u8>(), window in any::<u16>(),
        edits in proptest::collection::vec((0usize..120, any::<u8>()), 0..4),
        cut in 0usize..140, max in any::<u32>(), ws in 0u8..16,
    ) {
        let mut f = valid_frame(&payload, tos, window);
        for (i, v) in edits {
            if i < f.len() { f[i] = v; }
        }
        if cut < f.len() && cut % 3 == 0 { f.truncate(cut); }
        exercise(f, max, ws);
    }
}
