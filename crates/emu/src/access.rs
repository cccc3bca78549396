//! The access links of one side of a direction, one delay line per RTT class: a flow with its
//! own base RTT (`flows[i].rtt`) gets the simulator's access delay for it, (rtt / 2 −
//! bottleneck delay) / 2 on each side, and the flows sharing a delay share a line (a FIFO, as
//! its delay is constant). Packets of no known flow use class 0, the topology's access delay.

use crate::delay::DelayLine;
use bloatlab_sim::ids::PacketId;
use bloatlab_sim::units::{Dur, SimTime};

pub struct AccessLines {
    lines: Vec<DelayLine>,
    /// Flow index → class (line) index.
    class: Vec<u8>,
}

impl AccessLines {
    /// `delays[c]` is class c's delay; `class[f]` flow f's class. Each line reserves room for
    /// `capacity` packets (any class may hold them all).
    pub fn new(delays: &[Dur], class: Vec<u8>, capacity: usize) -> AccessLines {
        assert!(!delays.is_empty() && class.iter().all(|&c| (c as usize) < delays.len()));
        AccessLines { lines: delays.iter().map(|&d| DelayLine::new(d, capacity)).collect(), class }
    }

    #[inline]
    pub fn push(&mut self, t: SimTime, id: PacketId, flow: u16) {
        let c = self.class.get(flow as usize).map_or(0, |&c| c as usize);
        self.lines[c].push(t, id);
    }

    /// When the earliest head leaves (and its line).
    #[inline]
    fn head(&self) -> Option<(SimTime, usize)> {
        let mut best: Option<(SimTime, usize)> = None;
        for (i, l) in self.lines.iter().enumerate() {
            if let Some(t) = l.next() {
                if best.is_none_or(|b| t < b.0) {
                    best = Some((t, i));
                }
            }
        }
        best
    }

    #[inline]
    pub fn next(&self) -> Option<SimTime> {
        self.head().map(|h| h.0)
    }

    /// The earliest head, if it has left by `now`, with its exit time.
    #[inline]
    pub fn pop_ready(&mut self, now: SimTime) -> Option<(SimTime, PacketId)> {
        let (t, i) = self.head()?;
        if t > now {
            return None;
        }
        self.lines[i].pop_ready(now)
    }

    pub fn len(&self) -> usize {
        self.lines.iter().map(DelayLine::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_leave_in_time_order_across_classes() {
        // Flow 0 in class 0 (10 ms), flow 1 in class 1 (2 ms), unknown flows in class 0.
        let mut a = AccessLines::new(&[Dur::from_millis(10), Dur::from_millis(2)], vec![0, 1], 8);
        a.push(SimTime(0), PacketId(1), 0);
        a.push(SimTime(1_000_000), PacketId(2), 1);
        a.push(SimTime(1_000_000), PacketId(3), u16::MAX);
        assert_eq!(a.next(), Some(SimTime(3_000_000)));
        assert_eq!(a.pop_ready(SimTime(2_999_999)), None);
        assert_eq!(a.pop_ready(SimTime(20_000_000)), Some((SimTime(3_000_000), PacketId(2))));
        assert_eq!(a.pop_ready(SimTime(20_000_000)), Some((SimTime(10_000_000), PacketId(1))));
        assert_eq!(a.pop_ready(SimTime(20_000_000)), Some((SimTime(11_000_000), PacketId(3))));
        assert!(a.is_empty());
    }
}
