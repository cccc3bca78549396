//! A compact log-linear histogram for delays (ns) with the bucket layout and quantile rule of
//! an HDR histogram at 3 significant digits, so every percentile it reports equals the one the
//! `hdrhistogram` crate gives for the same samples (a property test checks it against that
//! crate). What differs is storage: the ~25,000–34,000 counts of a 1 µs/1 ns – 1 h layout are
//! split into pages of 128 that are allocated on their first sample, so a histogram that has
//! seen nothing costs a few dozen bytes and a flow whose delays stay within a factor of two
//! touches a handful of 1 KB pages, instead of ~260 KB up front.

/// Counts per page (a power of two).
const PAGE_BITS: u32 = 7;
const PAGE: usize = 1 << PAGE_BITS;
/// "No page yet" in the page table.
const NONE: u16 = u16::MAX;
/// Samples held back before they are counted (see [`DelayHist::record`]).
const PENDING: usize = 8;
/// 3 significant digits: unit resolution up to 2·10³ needs 2^11 sub-buckets, half of them
/// (the upper half) per bucket after the first.
const SUB_BUCKET_MAG: u32 = 11;
const HALF_MAG: u32 = SUB_BUCKET_MAG - 1;
const HALF: u64 = 1 << HALF_MAG;

/// The layout: what the bounds (lowest discernible, highest trackable) of an HDR histogram
/// at 3 significant digits make of a value's index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Layout {
    unit_mag: u32,
    /// Number of counts (indices ≥ this are out of range, not recorded).
    len: u32,
}

impl Layout {
    fn new(low: u64, high: u64) -> Layout {
        assert!(low >= 1 && high >= 2 * low, "histogram bounds");
        let unit_mag = 63 - low.leading_zeros();
        assert!(unit_mag + SUB_BUCKET_MAG <= 63, "lowest value too large");
        // Buckets needed so that `high` is representable (each doubles the range).
        let mut untrackable = 1u64 << (SUB_BUCKET_MAG + unit_mag);
        let mut buckets = 1u32;
        while untrackable <= high {
            if untrackable > u64::MAX / 2 {
                buckets += 1;
                break;
            }
            untrackable <<= 1;
            buckets += 1;
        }
        Layout { unit_mag, len: (buckets + 1) << HALF_MAG }
    }

    /// The bucket (power-of-two range) of `v`.
    #[inline]
    fn bucket(&self, v: u64) -> u32 {
        let mask = ((1u64 << SUB_BUCKET_MAG) - 1) << self.unit_mag;
        (64 - self.unit_mag - SUB_BUCKET_MAG) - (v | mask).leading_zeros()
    }

    #[inline]
    fn index(&self, v: u64) -> usize {
        let b = self.bucket(v);
        let sub = v >> (b + self.unit_mag);
        (((b as u64 + 1) << HALF_MAG) + sub - HALF) as usize
    }

    /// The lowest value of the count at `index`.
    fn value_at(&self, index: usize) -> u64 {
        let mut b = (index >> HALF_MAG) as i64 - 1;
        let mut sub = (index as u64 & (HALF - 1)) + HALF;
        if b < 0 {
            sub -= HALF;
            b = 0;
        }
        sub << (b as u32 + self.unit_mag)
    }

    /// The highest value counted together with `v`.
    fn highest_equivalent(&self, v: u64) -> u64 {
        if v == u64::MAX {
            return u64::MAX;
        }
        let shift = self.bucket(v) + self.unit_mag;
        ((v >> shift) << shift).saturating_add(1u64 << shift) - 1
    }

    fn lowest_equivalent(&self, v: u64) -> u64 {
        let shift = self.bucket(v) + self.unit_mag;
        (v >> shift) << shift
    }
}

/// A delay histogram; see the module comment.
#[derive(Debug, Clone)]
pub struct DelayHist {
    layout: Layout,
    total: u64,
    /// The page the last sample went to and its slot: a flow's delays mostly stay within one
    /// page, so a sample usually goes straight to its count — one cache line, where the page
    /// table and a page pointer would be two more misses when thousands of flows take turns.
    hot_page: u32,
    hot_slot: u32,
    /// Page slot per page of the layout (`NONE`: no sample there yet); empty until the first
    /// sample.
    table: Vec<u16>,
    /// The pages' counts by slot, each page an allocation of its own: a page added never
    /// moves the others (with one vector of counts grown a page at a time, every new page
    /// copied the old ones to a fresh block and left the old block behind; at 10,000 flows
    /// those copies touched twice the memory the pages need, a page fault per 4 KB).
    #[allow(clippy::vec_box)] // the point: a page stays where it is when another is added
    counts: Vec<Box<[u64; PAGE]>>,
    /// Indices of samples already in `total` but not yet in `counts`: they are counted eight
    /// at a time, so a socket among thousands whose histogram's page has left the cache
    /// misses on it once per eight RTT samples, not on each. Readers see them counted.
    pending: [u32; PENDING],
    n_pending: u8,
}

impl DelayHist {
    /// A histogram for values in [low, high] at 3 significant digits (as
    /// `hdrhistogram::Histogram::new_with_bounds(low, high, 3)`).
    pub fn new(low: u64, high: u64) -> DelayHist {
        DelayHist {
            layout: Layout::new(low, high),
            total: 0,
            hot_page: u32::MAX,
            hot_slot: 0,
            table: Vec::new(),
            counts: Vec::new(),
            pending: [0; PENDING],
            n_pending: 0,
        }
    }

    /// Counts `v` once. A value beyond the layout's last count is not recorded (false), as
    /// `hdrhistogram`'s `record` refuses it.
    #[inline]
    pub fn record(&mut self, v: u64) -> bool {
        let i = self.layout.index(v);
        if i >= self.layout.len as usize {
            return false;
        }
        self.pending[self.n_pending as usize] = i as u32;
        self.n_pending += 1;
        if self.n_pending as usize == PENDING {
            self.count_pending();
        }
        self.total = self.total.saturating_add(1);
        true
    }

    /// Moves the held-back samples into their counts.
    fn count_pending(&mut self) {
        for k in 0..self.n_pending as usize {
            let i = self.pending[k] as usize;
            let p = (i >> PAGE_BITS) as u32;
            if p != self.hot_page {
                self.hot_slot = self.page_slot(p as usize) as u32;
                self.hot_page = p;
            }
            let c = &mut self.counts[self.hot_slot as usize][i & (PAGE - 1)];
            *c = c.saturating_add(1);
        }
        self.n_pending = 0;
    }

    /// This histogram with every sample counted (a copy only while some are held back).
    fn settled(&self) -> std::borrow::Cow<'_, DelayHist> {
        if self.n_pending == 0 {
            return std::borrow::Cow::Borrowed(self);
        }
        let mut h = self.clone();
        h.count_pending();
        std::borrow::Cow::Owned(h)
    }

    /// The slot of page `p`, allocating it on first use.
    #[inline]
    fn page_slot(&mut self, p: usize) -> usize {
        if self.table.is_empty() {
            self.table = vec![NONE; (self.layout.len as usize).div_ceil(PAGE)];
        }
        match self.table[p] {
            NONE => self.new_page(p),
            s => s as usize,
        }
    }

    #[cold]
    fn new_page(&mut self, p: usize) -> usize {
        let s = self.counts.len();
        self.counts.push(Box::new([0; PAGE]));
        self.table[p] = s as u16;
        s
    }

    /// The counts of page slot `s`.
    fn page(&self, s: usize) -> &[u64] {
        &self.counts[s][..]
    }

    /// Samples counted.
    pub fn len(&self) -> u64 {
        self.total
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// Forgets every sample (keeps the pages for reuse).
    pub fn reset(&mut self) {
        for page in &mut self.counts {
            page.fill(0);
        }
        self.total = 0;
        self.n_pending = 0;
    }

    /// Adds the counts of `other` (same bounds).
    pub fn add(&mut self, other: &DelayHist) {
        assert_eq!(self.layout, other.layout, "histograms of different bounds");
        self.count_pending();
        let other = other.settled();
        for (p, &s) in other.table.iter().enumerate() {
            if s == NONE {
                continue;
            }
            let mine = self.page_slot(p);
            for (c, o) in self.counts[mine].iter_mut().zip(other.page(s as usize)) {
                *c = c.saturating_add(*o);
            }
        }
        self.total = self.total.saturating_add(other.total);
    }

    /// The value at quantile `q` (0..=1) under HDR's rule: the highest value equivalent to the
    /// count where the running total first reaches ⌈q·n⌉ (at least 1); the lowest equivalent
    /// value for q = 0; 0 when empty.
    pub fn value_at_quantile(&self, q: f64) -> u64 {
        let h = self.settled();
        let q = if q > 1.0 { 1.0 } else { q };
        let target = ((q * self.total as f64).ceil() as u64).max(1);
        let mut run = 0u64;
        for (p, &s) in h.table.iter().enumerate() {
            if s == NONE {
                continue;
            }
            let page = h.page(s as usize);
            let sum: u64 = page.iter().sum();
            if run + sum < target {
                run += sum;
                continue;
            }
            for (j, &c) in page.iter().enumerate() {
                run += c;
                if run >= target {
                    let v = self.layout.value_at((p << PAGE_BITS) + j);
                    return if q == 0.0 {
                        self.layout.lowest_equivalent(v)
                    } else {
                        self.layout.highest_equivalent(v)
                    };
                }
            }
        }
        0
    }

    /// Heap bytes held (pages and page table), the held-back samples' pages included.
    pub fn heap_bytes(&self) -> usize {
        let h = self.settled();
        h.table.capacity() * 2 + h.counts.capacity() * 8 + h.counts.len() * PAGE * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::Histogram;
    use proptest::prelude::*;

    const HIGH: u64 = 3_600_000_000_000;

    fn oracle(low: u64) -> Histogram<u64> {
        Histogram::new_with_bounds(low, HIGH, 3).unwrap()
    }

    const QS: [f64; 9] = [0.0, 0.01, 0.25, 0.5, 0.9, 0.95, 0.99, 0.999, 1.0];

    /// Values spread over many orders of magnitude, with repeats.
    fn values() -> impl Strategy<Value = Vec<u64>> {
        proptest::collection::vec(
            (0u32..43, any::<u64>())
                .prop_map(|(bits, r)| if bits == 0 { 0 } else { r >> (64 - bits) }),
            0..300,
        )
    }

    fn check(low: u64, vals: &[u64], clamp: bool) -> Result<(), TestCaseError> {
        let mut mine = DelayHist::new(low, HIGH);
        let mut theirs = oracle(low);
        for &v in vals {
            let v = if clamp { v.clamp(low, HIGH) } else { v.max(1) };
            prop_assert_eq!(mine.record(v), theirs.record(v).is_ok(), "record {}", v);
        }
        prop_assert_eq!(mine.len(), theirs.len());
        for q in QS {
            prop_assert_eq!(mine.value_at_quantile(q), theirs.value_at_quantile(q), "q {}", q);
        }
        Ok(())
    }

    proptest! {
        #[test]
        fn quantiles_equal_hdrhistogram_delay_bounds(vals in values()) {
            check(1_000, &vals, true)?;
        }

        #[test]
        fn quantiles_equal_hdrhistogram_unit_bounds(vals in values()) {
            check(1, &vals, false)?;
        }

        #[test]
        fn add_and_reset_equal_hdrhistogram(a in values(), b in values(), q in 0.0f64..1.0) {
            let (mut ma, mut mb) = (DelayHist::new(1_000, HIGH), DelayHist::new(1_000, HIGH));
            let (mut ta, mut tb) = (oracle(1_000), oracle(1_000));
            for &v in &a { ma.record(v.clamp(1_000, HIGH)); ta.record(v.clamp(1_000, HIGH)).unwrap(); }
            for &v in &b { mb.record(v.clamp(1_000, HIGH)); tb.record(v.clamp(1_000, HIGH)).unwrap(); }
            ma.add(&mb);
            ta.add(&tb).unwrap();
            prop_assert_eq!(ma.value_at_quantile(q), ta.value_at_quantile(q));
            ma.reset();
            ta.reset();
            prop_assert_eq!(ma.value_at_quantile(q), ta.value_at_quantile(q));
            prop_assert_eq!(ma.len(), 0);
        }
    }

    #[test]
    fn out_of_range_values_are_refused_like_hdrhistogram() {
        let mut mine = DelayHist::new(1, HIGH);
        let mut theirs = oracle(1);
        for v in [HIGH, HIGH + 1, 4_000_000_000_000, 1 << 42, (1 << 42) - 1, u64::MAX / 2, u64::MAX]
        {
            assert_eq!(mine.record(v), theirs.record(v).is_ok(), "{v}");
        }
        assert_eq!(mine.value_at_quantile(0.5), theirs.value_at_quantile(0.5));
    }

    #[test]
    fn an_empty_histogram_is_small_and_answers_zero() {
        let h = DelayHist::new(1_000, HIGH);
        assert_eq!(h.value_at_quantile(0.95), 0);
        assert_eq!(h.heap_bytes(), 0);
        let mut h = h;
        for v in 120_000_000..120_000_100u64 {
            h.record(v * 1000 / 1000);
        }
        assert!(h.heap_bytes() < 2_000, "{}", h.heap_bytes());
    }
}
