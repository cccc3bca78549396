//! The DCCP Ack Vector (RFC 4340 §11.4): a run-length list of packet states, read from the
//! Acknowledgement Number downwards. Each byte holds a 2-bit state (0 received, 1 received
//! ECN-marked, 3 not yet received) and a 6-bit run length L covering L + 1 consecutive
//! sequence numbers. The vector lives inline in the (Copy) packet header, bounded to
//! [`ACKVEC_MAX`] bytes; what does not fit is left out (the older history was reported by
//! earlier ACKs).

/// Most Ack Vector bytes one ACK carries (an option holds at most 253).
pub const ACKVEC_MAX: usize = 40;
pub const STATE_RECEIVED: u8 = 0;
pub const STATE_ECN_MARKED: u8 = 1;
pub const STATE_NOT_RECEIVED: u8 = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AckVector {
    pub bytes: [u8; ACKVEC_MAX],
    pub len: u8,
}

impl Default for AckVector {
    fn default() -> Self {
        AckVector { bytes: [0; ACKVEC_MAX], len: 0 }
    }
}

impl AckVector {
    /// Encodes the states of sequence numbers `ack`, `ack - 1`, ..., down to `low` (inclusive,
    /// `low <= ack`), stopping early when the vector is full. `state(seq)` gives each state.
    pub fn encode(ack: u64, low: u64, mut state: impl FnMut(u64) -> u8) -> AckVector {
        let mut v = AckVector::default();
        let mut seq = ack;
        loop {
            let st = state(seq) & 3;
            let mut run = 0u8; // extra packets beyond the first
            while run < 63 && seq > low && state(seq - 1) & 3 == st {
                seq -= 1;
                run += 1;
            }
            v.bytes[v.len as usize] = (st << 6) | run;
            v.len += 1;
            if seq == low || v.len as usize == ACKVEC_MAX {
                return v;
            }
            seq -= 1;
        }
    }

    /// The (state, run length + 1) pairs, newest first.
    pub fn runs(&self) -> impl Iterator<Item = (u8, u64)> + '_ {
        self.bytes[..self.len as usize].iter().map(|b| (b >> 6, (b & 63) as u64 + 1))
    }

    /// Calls `f(seq, state)` for every sequence number the vector covers, from `ack` down.
    pub fn for_each(&self, ack: u64, mut f: impl FnMut(u64, u8)) {
        let mut seq = ack;
        for (st, n) in self.runs() {
            for _ in 0..n {
                f(seq, st);
                if seq == 0 {
                    return;
                }
                seq -= 1;
            }
        }
    }

    /// Sequence numbers covered.
    pub fn span(&self) -> u64 {
        self.runs().map(|(_, n)| n).sum()
    }

    /// Bytes of the Ack Vector option on the wire (type, length, vector).
    pub fn option_bytes(&self) -> u32 {
        if self.len == 0 {
            0
        } else {
            2 + self.len as u32
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_runs_and_decodes_back() {
        // Received 100..=110 except 104 and 105.
        let got = |s: u64| if s == 104 || s == 105 { STATE_NOT_RECEIVED } else { STATE_RECEIVED };
        let v = AckVector::encode(110, 100, got);
        let runs: Vec<_> = v.runs().collect();
        assert_eq!(runs, vec![(0, 5), (3, 2), (0, 4)]);
        // The RFC 4340 byte form: state << 6 | (run length - 1).
        assert_eq!(&v.bytes[..3], &[4, 0xC1, 3]);
        let mut seen = Vec::new();
        v.for_each(110, |s, st| seen.push((s, st)));
        assert_eq!(seen.len(), 11);
        for (s, st) in seen {
            assert_eq!(st, got(s), "seq {s}");
        }
        assert_eq!(v.option_bytes(), 5);
    }

    #[test]
    fn long_runs_split_at_64_packets() {
        let v = AckVector::encode(1_000, 1_000 - 199, |_| STATE_RECEIVED);
        let runs: Vec<_> = v.runs().collect();
        assert_eq!(runs, vec![(0, 64), (0, 64), (0, 64), (0, 8)]);
        assert_eq!(v.bytes[0], 63);
        assert_eq!(v.span(), 200);
    }

    #[test]
    fn vector_is_bounded_and_keeps_the_newest_history() {
        // Alternating received / lost: one byte per packet, so only ACKVEC_MAX packets fit.
        let v = AckVector::encode(5_000, 0, |s| {
            if s % 2 == 0 {
                STATE_RECEIVED
            } else {
                STATE_NOT_RECEIVED
            }
        });
        assert_eq!(v.len as usize, ACKVEC_MAX);
        assert_eq!(v.span(), ACKVEC_MAX as u64);
        let mut first = None;
        v.for_each(5_000, |s, st| {
            first.get_or_insert((s, st));
        });
        assert_eq!(first, Some((5_000, STATE_RECEIVED)));
    }

    #[test]
    fn single_packet_vector() {
        let v = AckVector::encode(7, 7, |_| STATE_RECEIVED);
        assert_eq!(v.runs().collect::<Vec<_>>(), vec![(0, 1)]);
    }
}
