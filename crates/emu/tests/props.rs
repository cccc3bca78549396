//! Property tests: the packet parser and the window rewriter never panic, never touch bytes
//! other than the window and the checksum, never raise a window and always leave a valid
//! checksum valid — on arbitrary bytes, truncated packets, lying length fields and TCP options
//! of every kind (well-formed, unknown, zero-length, overlong).

use bloatlab_emu::checksum::{fill_ipv4, fill_tcp, ipv4_ok, tcp_ok};
use bloatlab_emu::packet::{self, Parsed, ACK, SYN};
use bloatlab_emu::rewrite::{rewrite_ack, ConnTable, Outcome};
use bloatlab_sim::config::EwtParams;
use bloatlab_sim::gateway::{AckRewriter, Ewt, QueueView};
use bloatlab_sim::queue::Backlog;
use bloatlab_sim::units::SimTime;
use proptest::prelude::*;

/// A TCP option: every kind Linux sends, unknown kinds, and malformed lengths.
fn option() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(vec![0]),                                                                 // EOL
        Just(vec![1]),                                                                 // NOP
        any::<u16>().prop_map(|m| vec![2, 4, (m >> 8) as u8, m as u8]),                // MSS
        any::<u8>().prop_map(|s| vec![3, 3, s]), // window scale (any shift)
        Just(vec![4, 2]),                        // SACK permitted
        prop::collection::vec(any::<u8>(), 8).prop_map(|b| [vec![8, 10], b].concat()), // timestamps
        (1usize..=4).prop_flat_map(|n| prop::collection::vec(any::<u8>(), 8 * n)).prop_map(|b| [
            vec![5, (2 + b.len()) as u8],
            b
        ]
        .concat()), // SACK blocks
        (9u8..=254, prop::collection::vec(any::<u8>(), 0..6)).prop_map(|(k, b)| [
            vec![k, (2 + b.len()) as u8],
            b
        ]
        .concat()), // unknown kinds
        (2u8..=254, any::<u8>()).prop_map(|(k, l)| vec![k, l]), // lying lengths (0, 1, overlong)
    ]
}

fn options() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(option(), 0..6).prop_map(|v| {
        let mut o: Vec<u8> = v.concat();
        o.truncate(40);
        while !o.len().is_multiple_of(4) {
            o.push(1);
        }
        o
    })
}

/// A well-formed IPv4/TCP packet with correct checksums.
#[allow(clippy::too_many_arguments)]
fn tcp(
    src: [u8; 4],
    dst: [u8; 4],
    sport: u16,
    dport: u16,
    flags: u8,
    window: u16,
    opts: &[u8],
    payload: usize,
) -> Vec<u8> {
    let th = 20 + opts.len();
    let total = 20 + th + payload;
    let mut b = vec![0u8; total];
    b[0] = 0x45;
    b[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    b[8] = 64;
    b[9] = 6;
    b[12..16].copy_from_slice(&src);
    b[16..20].copy_from_slice(&dst);
    b[20..22].copy_from_slice(&sport.to_be_bytes());
    b[22..24].copy_from_slice(&dport.to_be_bytes());
    b[32] = ((th / 4) as u8) << 4;
    b[33] = flags;
    b[34..36].copy_from_slice(&window.to_be_bytes());
    b[40..40 + opts.len()].copy_from_slice(opts);
    for (i, x) in b[20 + th..].iter_mut().enumerate() {
        *x = (i * 7) as u8;
    }
    fill_ipv4(&mut b);
    fill_tcp(&mut b);
    b
}

const S: [u8; 4] = [10, 0, 0, 1];
const R: [u8; 4] = [10, 1, 0, 1];

fn view(used: u64, cap: u64) -> QueueView {
    QueueView {
        now: SimTime(0),
        backlog: Backlog { bytes: used, pkts: used / 1500 },
        capacity_bytes: cap,
    }
}

/// Only the window (bytes 14..16) and the checksum (16..18) of the TCP header may change.
fn only_window_and_checksum_changed(before: &[u8], after: &[u8]) -> bool {
    let Parsed::Tcp(v) = packet::parse(before) else { return before == after };
    before.len() == after.len()
        && before
            .iter()
            .zip(after)
            .enumerate()
            .all(|(i, (a, b))| a == b || (v.ip_hlen + 14..v.ip_hlen + 18).contains(&i))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn parse_never_panics_and_stays_inside(bytes in prop::collection::vec(any::<u8>(), 0..120)) {
        match packet::parse(&bytes) {
            Parsed::Tcp(v) => {
                prop_assert!(v.total_len <= bytes.len());
                prop_assert_eq!(v.ip_hlen + v.tcp_hlen + v.payload_len, v.total_len);
                let _ = packet::syn_options(&bytes, &v);
            }
            Parsed::OtherIpv4 { total_len } => prop_assert!(total_len <= bytes.len()),
            Parsed::Invalid => {}
        }
        let mut b = bytes.clone();
        packet::mark_ce(&mut b);
        prop_assert_eq!(b.len(), bytes.len());
    }

    #[test]
    fn arbitrary_bytes_offered_as_acks_are_never_corrupted(
        mut bytes in prop::collection::vec(any::<u8>(), 0..120), used in 0u64..100_000,
    ) {
        // Make the prefix look like IPv4 now and then, so deeper paths are reached.
        if bytes.len() > 20 && bytes[0] & 1 == 0 {
            bytes[0] = 0x45;
            bytes[9] = 6;
        }
        let mut conns = ConnTable::new(16);
        conns.learn_forward(&bytes);
        conns.learn_reverse(&bytes);
        let mut ewt = Ewt::new(EwtParams { start: 0 });
        let before = bytes.clone();
        let was_ok = packet::parse(&before) != Parsed::Invalid && tcp_ok(&before);
        let _ = rewrite_ack(&mut bytes, &mut conns, &mut ewt, &view(used, 100_000));
        prop_assert!(only_window_and_checksum_changed(&before, &bytes));
        if was_ok {
            prop_assert!(tcp_ok(&bytes));
        }
    }

    #[test]
    fn rewritten_acks_keep_valid_checksums_and_never_grow(
        syn_opts in options(), synack_opts in options(), ack_opts in options(),
        window in any::<u16>(), payload in 0usize..64, used in 0u64..=100_000, start in 0u64..50_000,
        sport in any::<u16>(), dport in any::<u16>(),
    ) {
        let mut conns = ConnTable::new(64);
        let syn = tcp(S, R, sport, dport, SYN, 64240, &syn_opts, 0);
        let synack = tcp(R, S, dport, sport, SYN | ACK, 65160, &synack_opts, 0);
        conns.learn_forward(&syn);
        conns.learn_reverse(&synack);
        let mut ack = tcp(R, S, dport, sport, ACK, window, &ack_opts, payload);
        let before = ack.clone();
        let mut ewt = Ewt::new(EwtParams { start });
        let out = rewrite_ack(&mut ack, &mut conns, &mut ewt, &view(used, 100_000));
        prop_assert!(tcp_ok(&ack), "checksum broken: {:?}", out);
        prop_assert!(ipv4_ok(&ack));
        prop_assert!(only_window_and_checksum_changed(&before, &ack));
        let new = u16::from_be_bytes([ack[34], ack[35]]);
        prop_assert!(new <= window);
        // The expected field: EWT on the scaled window, rounded up, capped at the original.
        let so = packet::syn_options(&syn, match &packet::parse(&syn) { Parsed::Tcp(v) => v, _ => unreachable!() });
        let ao = packet::syn_options(&synack, match &packet::parse(&synack) { Parsed::Tcp(v) => v, _ => unreachable!() });
        let shift = match (so.wscale, ao.wscale) { (Some(_), Some(r)) => r.min(14) as u32, _ => 0 };
        let mss = (so.mss.unwrap_or(536).saturating_sub(if so.timestamps { 12 } else { 0 })).max(1) as u64;
        let w = (window as u64) << shift;
        let want = Ewt::new(EwtParams { start }).rewrite(w, mss, &view(used, 100_000)).min(w);
        let field = want.div_ceil(1 << shift).min(window as u64) as u16;
        prop_assert_eq!(new, field);
        prop_assert_eq!(out == Outcome::Lowered, field < window);
    }

    #[test]
    fn truncated_and_lying_packets_are_left_alone(
        opts in options(), window in any::<u16>(), payload in 0usize..40, cut in 0usize..200,
        lie in prop::option::of(any::<u16>()), doff in prop::option::of(0u8..16),
    ) {
        let mut conns = ConnTable::new(16);
        conns.learn_forward(&tcp(S, R, 10_000, 5001, SYN, 1000, &[3, 3, 7, 1], 0));
        conns.learn_reverse(&tcp(R, S, 5001, 10_000, SYN | ACK, 1000, &[3, 3, 7, 1], 0));
        let mut p = tcp(R, S, 5001, 10_000, ACK, window, &opts, payload);
        if let Some(l) = lie {
            p[2..4].copy_from_slice(&l.to_be_bytes());
        }
        if let Some(d) = doff {
            p[32] = d << 4;
        }
        let cut = cut.min(p.len());
        let mut q = p[..cut].to_vec();
        let before = q.clone();
        let mut ewt = Ewt::new(EwtParams { start: 0 });
        let out = rewrite_ack(&mut q, &mut conns, &mut ewt, &view(90_000, 100_000));
        prop_assert!(only_window_and_checksum_changed(&before, &q));
        if out == Outcome::Lowered {
            // Only a packet whose headers are consistent with the bytes at hand is rewritten.
            let Parsed::Tcp(v) = packet::parse(&before) else { panic!("rewrote an unparsable packet") };
            prop_assert!(v.total_len <= cut);
        }
    }
}
