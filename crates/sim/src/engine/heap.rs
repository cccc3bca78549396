//! The two steps of a 4-ary min-heap on slot keys, shared by the event heap (queue.rs) and
//! the timers' heap (timers.rs): Williams' binary heap (J. W. J. Williams, "Algorithm 232:
//! Heapsort", CACM 7(6), 1964) with four children a node, half as deep as a binary one, a
//! node's children side by side (two cache lines).

use super::event::Slot;

/// Children per node.
pub(super) const ARITY: usize = 4;

/// Appends `s` and sifts it up: parents with a larger key move down (usually none or one:
/// most events are scheduled after most pending ones).
#[inline(always)]
pub(super) fn push(heap: &mut Vec<Slot>, s: Slot) {
    let mut i = heap.len();
    heap.push(s);
    let h = &mut heap[..];
    while i > 0 {
        let p = (i - 1) / ARITY;
        if h[p].key <= s.key {
            break;
        }
        h[i] = h[p];
        i = p;
    }
    h[i] = s;
}

/// Puts `s` at `i`, a hole, and sinks it: the smallest child moves up while it is smaller.
#[inline]
pub(super) fn sift_down(h: &mut [Slot], mut i: usize, s: Slot) {
    let n = h.len();
    loop {
        let c = ARITY * i + 1;
        if c >= n {
            break;
        }
        let m = if c + ARITY <= n {
            min_of_four(h, c)
        } else {
            let mut m = c;
            for j in c + 1..n {
                if h[j].key < h[m].key {
                    m = j;
                }
            }
            m
        };
        if h[m].key >= s.key {
            break;
        }
        h[i] = h[m];
        i = m;
    }
    h[i] = s;
}

/// The index of the smallest of `h[c..c + 4]` (the first of equals), by arithmetic on the
/// comparisons rather than branches: which child is smallest is a coin toss to the branch
/// predictor, and a heap of thousands of timers sifts through several levels a pop.
#[inline(always)]
fn min_of_four(h: &[Slot], c: usize) -> usize {
    let a = c + usize::from(h[c + 1].key < h[c].key);
    let b = c + 2 + usize::from(h[c + 3].key < h[c + 2].key);
    let b_smaller = usize::from(h[b].key < h[a].key);
    a + (b - a) * b_smaller
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Event;

    /// Every assignment of four keys from four values, ties included: the arithmetic picks
    /// what a scan in order picks (the first of the smallest).
    #[test]
    fn min_of_four_is_the_first_smallest() {
        for code in 0..256u32 {
            let keys: Vec<u128> = (0..4).map(|i| u128::from((code >> (2 * i)) & 3)).collect();
            let h: Vec<Slot> = std::iter::once(u128::MAX)
                .chain(keys.iter().copied())
                .map(|key| Slot { key, ev: Event::Sample })
                .collect();
            let scan = 1 + (0..4).fold(0, |m, j| if keys[j] < keys[m] { j } else { m });
            assert_eq!(min_of_four(&h, 1), scan, "keys {keys:?}");
        }
    }
}
