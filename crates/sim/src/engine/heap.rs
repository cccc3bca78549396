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
        let mut m = c;
        for j in c + 1..(c + ARITY).min(n) {
            if h[j].key < h[m].key {
                m = j;
            }
        }
        if h[m].key >= s.key {
            break;
        }
        h[i] = h[m];
        i = m;
    }
    h[i] = s;
}
