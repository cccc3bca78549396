//! Packet-loss repair for the video flow: the receiver's NACK list and the sender's history
//! of sent packets for retransmission (RTX).
//!
//! Sources (read for facts; the code is our own):
//! - RFC 4585 §6.2.1, generic NACK: a feedback message naming lost RTP sequence numbers of
//!   the media stream, each FCI entry a 16-bit PID and a 16-bit bitmask of the next 16
//!   (4 bytes), after the 12-byte common header (RTCP header, sender SSRC, media SSRC);
//! - RFC 4588, the RTX payload format: a retransmission travels on its own SSRC with its own
//!   sequence number and carries the original sequence number (OSN, 2 bytes) before the
//!   original payload (§4); "session multiplexing" keeps it on the same transport;
//! - libwebrtc `modules/video_coding/nack_requester.cc` (as vendored in DrKLO/Telegram,
//!   TMessagesProj/jni/voip/webrtc/): a packet newer than the newest seen puts every
//!   sequence number in between on the NACK list and NACKs them at once; a periodic
//!   process (every 20 ms, `kUpdateInterval`) NACKs again each entry whose last request is
//!   at least an RTT old; an entry is dropped after `kMaxNackRetries` = 10 requests; the
//!   list holds at most `kMaxNackPackets` = 1000 entries (more: it is cleared) and nothing
//!   older than `kMaxPacketAge` = 10 000 sequence numbers; the RTT is 100 ms until known
//!   (`kDefaultRtt`); a packet that arrives while listed is removed from the list;
//! - libwebrtc `modules/rtp_rtcp/source/rtp_packet_history.cc`: the sender keeps sent
//!   packets for at least max(1 s, 3 RTT) and does not resend a packet sent within the
//!   last RTT (a second NACK for it is still on its way).
//!
//! Simplified: no reordering histogram (our paths do not reorder, so a gap is a loss: NACK
//! at once, as libwebrtc does before it has reordering statistics); an entry is given up
//! one RTT after its 10th request (the last answer may still come) rather than at the
//! moment of the 10th request; a full list gives up its entries (libwebrtc also asks for a
//! key frame, which we do not model).

use crate::units::{Dur, SimTime};

/// libwebrtc's NACK rules (nack_requester.cc).
pub const MAX_RETRIES: u8 = 10;
pub const MAX_LIST: usize = 1000;
pub const MAX_AGE: u64 = 10_000;
pub const DEFAULT_RTT: Dur = Dur(100_000_000);
/// The period of the re-request process (libwebrtc's `kUpdateInterval`).
pub const PROCESS: Dur = Dur(20_000_000);
/// How long the sender keeps a packet for RTX at least (rtp_packet_history.cc).
pub const HISTORY_MIN: Dur = Dur(1_000_000_000);
/// Slots of the sender's ring of sent packets: 1 s of packets at 40 Mbit/s of MTU packets.
pub const HISTORY_SLOTS: usize = 4096;

#[derive(Debug, Clone, Copy)]
struct Missing {
    seq: u64,
    sent: Option<SimTime>,
    retries: u8,
}

/// What an arriving media packet is to the receiver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    /// A packet not seen before, in order or after a gap.
    New,
    /// A listed (missing) packet arrived: a repair (or a late original).
    Recovered,
    /// Seen before, or given up: it changes nothing.
    Duplicate,
}

/// The receiver's NACK list over the media stream's (extended) sequence numbers.
#[derive(Debug, Default)]
pub struct NackList {
    newest: Option<u64>,
    /// Missing packets in sequence order.
    list: Vec<Missing>,
}

impl NackList {
    pub fn new() -> NackList {
        NackList { newest: None, list: Vec::with_capacity(64) }
    }

    /// A media packet `seq` arrived. Sequence numbers that it shows to be missing go on the
    /// list; those the list had to drop (too many, too old) are pushed to `gave_up`.
    pub fn on_packet(&mut self, seq: u64, gave_up: &mut Vec<u64>) -> Arrival {
        let Some(newest) = self.newest else {
            self.newest = Some(seq);
            return Arrival::New;
        };
        if seq <= newest {
            return match self.list.binary_search_by_key(&seq, |m| m.seq) {
                Ok(i) => {
                    self.list.remove(i);
                    Arrival::Recovered
                }
                Err(_) => Arrival::Duplicate,
            };
        }
        self.newest = Some(seq);
        let gap = seq - newest - 1;
        // Too old to be worth asking for.
        let keep_from = seq.saturating_sub(MAX_AGE);
        let old = self.list.partition_point(|m| m.seq < keep_from);
        gave_up.extend(self.list.drain(..old).map(|m| m.seq));
        if self.list.len() as u64 + gap > MAX_LIST as u64 {
            // libwebrtc clears the list (and asks for a key frame).
            gave_up.extend(self.list.drain(..).map(|m| m.seq));
            gave_up.extend(newest + 1..seq);
            return Arrival::New;
        }
        self.list.extend((newest + 1..seq).map(|s| Missing { seq: s, sent: None, retries: 0 }));
        Arrival::New
    }

    /// The sequence numbers to request now into `batch`: never requested ones, and those
    /// whose last request is at least `rtt` old; entries requested `MAX_RETRIES` times and
    /// unanswered for another `rtt` are given up into `gave_up`.
    pub fn due(&mut self, now: SimTime, rtt: Dur, batch: &mut Vec<u64>, gave_up: &mut Vec<u64>) {
        self.list.retain_mut(|m| {
            let waited = m.sent.is_none_or(|t| now.since(t) >= rtt);
            if !waited {
                return true;
            }
            if m.retries >= MAX_RETRIES {
                gave_up.push(m.seq);
                return false;
            }
            m.retries += 1;
            m.sent = Some(now);
            batch.push(m.seq);
            true
        });
    }

    /// Only the never-requested entries (a new gap, NACKed at once), into `batch`.
    pub fn due_fresh(&mut self, now: SimTime, batch: &mut Vec<u64>) {
        for m in self.list.iter_mut().filter(|m| m.sent.is_none()) {
            m.retries = 1;
            m.sent = Some(now);
            batch.push(m.seq);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}

/// The wire size of a generic NACK (RFC 4585 §6.1, §6.2.1) for sorted sequence numbers:
/// 12 bytes of header and 4 per FCI entry, one entry per run of a PID and the 16 after it.
pub fn nack_bytes(seqs: &[u64]) -> u32 {
    let mut entries = 0u32;
    let mut pid: Option<u64> = None;
    for &s in seqs {
        if pid.is_none_or(|p| s > p + 16) {
            pid = Some(s);
            entries += 1;
        }
    }
    12 + 4 * entries
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    seq: u64,
    frame: u64,
    len: u32,
    first_sent: SimTime,
    last_sent: SimTime,
}

/// The sender's history of sent media packets: a ring of fixed size allocated once, indexed
/// by sequence number (no allocation per packet).
pub struct RtxHistory {
    slots: Vec<Option<Slot>>,
}

impl Default for RtxHistory {
    fn default() -> RtxHistory {
        RtxHistory::new()
    }
}

impl RtxHistory {
    pub fn new() -> RtxHistory {
        RtxHistory { slots: vec![None; HISTORY_SLOTS] }
    }

    /// Media packet `seq` of `frame` (payload `len`) was sent (first time or again).
    pub fn sent(&mut self, seq: u64, frame: u64, len: u32, now: SimTime) {
        let slot = &mut self.slots[seq as usize % HISTORY_SLOTS];
        match slot {
            Some(s) if s.seq == seq => s.last_sent = now,
            _ => *slot = Some(Slot { seq, frame, len, first_sent: now, last_sent: now }),
        }
    }

    /// A NACK asks for `seq`: its (frame, payload) if it may be resent now — still held,
    /// no older than max(1 s, 3 RTT), and not sent within the last RTT.
    pub fn request(&self, seq: u64, now: SimTime, rtt: Dur) -> Option<(u64, u32)> {
        let s = self.slots[seq as usize % HISTORY_SLOTS].filter(|s| s.seq == seq)?;
        let keep = HISTORY_MIN.max(Dur(3 * rtt.0));
        (now.since(s.first_sent) <= keep && now.since(s.last_sent) >= rtt)
            .then_some((s.frame, s.len))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn a_gap_is_nacked_at_once_then_every_rtt_and_given_up_after_ten() {
        let mut n = NackList::new();
        let (mut batch, mut gone) = (Vec::new(), Vec::new());
        for s in [0, 1, 2, 5] {
            assert_eq!(n.on_packet(s, &mut gone), Arrival::New);
        }
        let rtt = Dur(40 * MS);
        n.due(SimTime(0), rtt, &mut batch, &mut gone);
        assert_eq!(batch, [3, 4], "the gap is requested at once");
        // 20 ms later: not yet an RTT since the request.
        batch.clear();
        n.due(SimTime(20 * MS), rtt, &mut batch, &mut gone);
        assert!(batch.is_empty());
        // 3 arrives (repaired); 4 is requested again at 40 ms.
        assert_eq!(n.on_packet(3, &mut gone), Arrival::Recovered);
        assert_eq!(n.on_packet(3, &mut gone), Arrival::Duplicate);
        n.due(SimTime(40 * MS), rtt, &mut batch, &mut gone);
        assert_eq!(batch, [4]);
        // Requests 3..10 every RTT, then one RTT of waiting for the 10th's answer.
        for k in 2..=9u64 {
            batch.clear();
            n.due(SimTime(40 * k * MS), rtt, &mut batch, &mut gone);
            assert_eq!(batch, [4], "request {}", k + 1);
        }
        assert!(gone.is_empty());
        batch.clear();
        n.due(SimTime(400 * MS), rtt, &mut batch, &mut gone);
        assert!(batch.is_empty());
        assert_eq!(gone, [4], "given up after 10 requests");
        assert!(n.is_empty());
        // A late arrival of a given-up packet changes nothing.
        assert_eq!(n.on_packet(4, &mut gone), Arrival::Duplicate);
    }

    #[test]
    fn the_list_is_bounded_in_size_and_age() {
        let mut n = NackList::new();
        let mut gone = Vec::new();
        n.on_packet(0, &mut gone);
        n.on_packet(600, &mut gone);
        assert!(gone.is_empty());
        // 599 + 600 missing > 1000: the list is cleared.
        n.on_packet(1201, &mut gone);
        assert_eq!(gone.len(), 599 + 600);
        assert!(n.is_empty());
        // One packet in 20 missing: after 10 000 more, the oldest entries age out.
        let mut n = NackList::new();
        gone.clear();
        for s in (0..10_031).filter(|s| s % 20 != 10) {
            n.on_packet(s, &mut gone);
        }
        assert_eq!(gone, [10], "older than 10 000 sequence numbers");
    }

    #[test]
    fn nack_size_counts_one_fci_per_17_sequence_numbers() {
        assert_eq!(nack_bytes(&[7]), 16);
        assert_eq!(nack_bytes(&[7, 8, 23]), 16, "PID 7 and bits for 8..23");
        assert_eq!(nack_bytes(&[7, 24]), 20);
    }

    #[test]
    fn history_resends_once_per_rtt_and_forgets_old_or_overwritten_packets() {
        let mut h = RtxHistory::new();
        let rtt = Dur(40 * MS);
        h.sent(5, 1, 1200, SimTime(0));
        assert_eq!(h.request(5, SimTime(10 * MS), rtt), None, "sent within the RTT");
        assert_eq!(h.request(5, SimTime(50 * MS), rtt), Some((1, 1200)));
        h.sent(5, 1, 1200, SimTime(50 * MS));
        assert_eq!(h.request(5, SimTime(60 * MS), rtt), None, "just resent");
        assert_eq!(h.request(5, SimTime(1_001 * MS), rtt), None, "older than max(1 s, 3 RTT)");
        assert_eq!(h.request(6, SimTime(100 * MS), rtt), None, "never sent");
        h.sent(5 + HISTORY_SLOTS as u64, 9, 100, SimTime(100 * MS));
        assert_eq!(h.request(5, SimTime(200 * MS), rtt), None, "overwritten by a newer packet");
    }
}
