//! The receiver's out-of-order store: disjoint byte ranges above RCV.NXT, and the SACK blocks
//! built from them (RFC 2018: the block holding the most recent arrival first, then the
//! others by recency).

use crate::net::SackBlocks;

#[derive(Debug, Default)]
pub struct Reassembly {
    /// Sorted, disjoint, non-adjacent ranges [start, end) with a recency stamp.
    ranges: Vec<(u64, u64, u64)>,
    clock: u64,
}

impl Reassembly {
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// The end of the highest range held, if any.
    pub fn end(&self) -> Option<u64> {
        self.ranges.last().map(|r| r.1)
    }

    /// Bytes held out of order.
    pub fn bytes(&self) -> u64 {
        self.ranges.iter().map(|r| r.1 - r.0).sum()
    }

    /// Is [start, end) already held entirely (a duplicate, reported by D-SACK)?
    pub fn covers(&self, start: u64, end: u64) -> bool {
        let i = self.ranges.partition_point(|r| r.1 < end);
        self.ranges.get(i).is_some_and(|r| r.0 <= start && end <= r.1)
    }

    /// Stores [start, end), merging with overlapping or adjacent ranges.
    pub fn insert(&mut self, start: u64, end: u64) {
        self.clock += 1;
        let (mut s, mut e) = (start, end);
        let first = self.ranges.partition_point(|r| r.1 < s);
        let mut last = first;
        while last < self.ranges.len() && self.ranges[last].0 <= e {
            s = s.min(self.ranges[last].0);
            e = e.max(self.ranges[last].1);
            last += 1;
        }
        self.ranges.splice(first..last, [(s, e, self.clock)]);
    }

    /// Given the new RCV.NXT, absorbs ranges it reaches and returns the advanced RCV.NXT.
    pub fn advance(&mut self, mut nxt: u64) -> u64 {
        let mut n = 0;
        while n < self.ranges.len() && self.ranges[n].0 <= nxt {
            nxt = nxt.max(self.ranges[n].1);
            n += 1;
        }
        self.ranges.drain(..n);
        nxt
    }

    /// Up to three SACK blocks, most recently updated first.
    pub fn sack_blocks(&self) -> SackBlocks {
        let mut out = SackBlocks::default();
        let mut taken = [usize::MAX; 3];
        for slot in 0..3 {
            let best = (0..self.ranges.len())
                .filter(|i| !taken.contains(i))
                .max_by_key(|&i| self.ranges[i].2);
            match best {
                Some(i) => {
                    taken[slot] = i;
                    out.push((self.ranges[i].0, self.ranges[i].1));
                }
                None => break,
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn merges_and_advances() {
        let mut r = Reassembly::default();
        r.insert(20, 30);
        r.insert(40, 50);
        r.insert(30, 40);
        assert_eq!(r.ranges.len(), 1);
        assert_eq!(r.advance(10), 10);
        assert_eq!(r.advance(20), 50);
        assert!(r.is_empty());
    }

    #[test]
    fn sack_blocks_most_recent_first() {
        let mut r = Reassembly::default();
        r.insert(10, 20);
        r.insert(30, 40);
        r.insert(50, 60);
        r.insert(70, 80);
        r.insert(32, 41);
        let b = r.sack_blocks();
        assert_eq!(b.as_slice(), &[(30, 41), (70, 80), (50, 60)]);
    }

    #[test]
    fn covers_only_what_is_held() {
        let mut r = Reassembly::default();
        r.insert(20, 30);
        assert!(r.covers(20, 30) && r.covers(22, 25));
        assert!(!r.covers(15, 25) && !r.covers(25, 35) && !r.covers(40, 50));
    }

    proptest! {
        #[test]
        fn ranges_stay_sorted_and_disjoint(ins in proptest::collection::vec((0u64..1000, 1u64..50), 0..100)) {
            let mut r = Reassembly::default();
            let mut covered = std::collections::BTreeSet::new();
            for (s, l) in ins {
                r.insert(s, s + l);
                covered.extend(s..s + l);
            }
            for w in r.ranges.windows(2) {
                prop_assert!(w[0].1 < w[1].0);
            }
            prop_assert_eq!(r.bytes(), covered.len() as u64);
        }
    }
}
