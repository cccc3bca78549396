//! The receiver's loss rate over a sliding window (the DCCP-BBR paper, eqs. 6 and 11):
//! LossRate = 1 − received / (newest sequence number − entry sequence number + 1), where the
//! entry is the first sequence number of the window. The window (10 s by default) slides in
//! ten steps: it is kept as ten slots, each with the entry sequence number of its start and
//! the packets received during it, so time and space are O(1). A late (reordered) packet is
//! counted in the slot it arrives in as long as it is not older than the window's entry, which
//! compensates the hole it left when the newer packet arrived.

use crate::units::{Dur, SimTime};
use std::collections::VecDeque;

const SLOTS: usize = 10;

#[derive(Debug, Clone, Copy)]
struct Slot {
    start: SimTime,
    entry: u64,
    received: u64,
}

#[derive(Debug, Clone)]
pub struct LossWindow {
    slot_len: Dur,
    slots: VecDeque<Slot>,
    /// Highest sequence number received.
    newest: Option<u64>,
}

impl LossWindow {
    pub fn new(window: Dur) -> LossWindow {
        LossWindow {
            slot_len: Dur((window.0 / SLOTS as u64).max(1)),
            slots: VecDeque::with_capacity(SLOTS + 1),
            newest: None,
        }
    }

    pub fn on_packet(&mut self, seq: u64, now: SimTime) {
        let next_entry = self.newest.map_or(seq, |n| n + 1);
        match self.slots.back() {
            Some(s) if now < s.start + self.slot_len => {}
            _ => {
                // Slots are aligned to the slot length after the first.
                let start = match self.slots.back() {
                    Some(s) => {
                        let k = now.since(s.start).0 / self.slot_len.0;
                        s.start + Dur(k * self.slot_len.0)
                    }
                    None => now,
                };
                self.slots.push_back(Slot { start, entry: next_entry.min(seq), received: 0 });
                // Drop slots that have left the window entirely.
                while self.slots.len() > SLOTS
                    || self
                        .slots
                        .front()
                        .is_some_and(|f| f.start + Dur(self.slot_len.0 * SLOTS as u64) <= now)
                {
                    if self.slots.len() == 1 {
                        break;
                    }
                    self.slots.pop_front();
                }
            }
        }
        let entry = self.slots.front().expect("a slot").entry;
        if seq >= entry {
            self.slots.back_mut().expect("a slot").received += 1;
        }
        self.newest = Some(self.newest.map_or(seq, |n| n.max(seq)));
    }

    /// The loss rate in [0, 1] (0 before any packet).
    pub fn rate(&self) -> f64 {
        let (Some(newest), Some(first)) = (self.newest, self.slots.front()) else { return 0.0 };
        if newest < first.entry {
            return 0.0;
        }
        let expected = newest - first.entry + 1;
        let received: u64 = self.slots.iter().map(|s| s.received).sum();
        (1.0 - received as f64 / expected as f64).clamp(0.0, 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimTime {
        SimTime(Dur::from_millis(x).0)
    }

    #[test]
    fn counts_holes_in_the_sequence_space() {
        let mut w = LossWindow::new(Dur::from_secs(10));
        assert_eq!(w.rate(), 0.0);
        // 100 packets, every fifth lost.
        for s in 1000..1100u64 {
            if s % 5 != 0 {
                w.on_packet(s, ms(s - 1000));
            }
        }
        // Sequence 1000 (the first) was lost, so the window starts at 1001: 80 of 99.
        assert!((w.rate() - (1.0 - 80.0 / 99.0)).abs() < 1e-12, "{}", w.rate());
    }

    #[test]
    fn reordered_packets_fill_their_hole() {
        let mut w = LossWindow::new(Dur::from_secs(10));
        for s in [1u64, 2, 4, 5, 3, 6] {
            w.on_packet(s, ms(s));
        }
        assert_eq!(w.rate(), 0.0);
    }

    #[test]
    fn old_losses_leave_the_window() {
        let mut w = LossWindow::new(Dur::from_secs(10));
        // First 10 s: half lost. Next 10 s: nothing lost.
        let mut seq = 0;
        for t in 0..10_000u64 {
            if t % 2 == 0 {
                w.on_packet(seq, ms(t));
            }
            seq += 1;
        }
        assert!((w.rate() - 0.5).abs() < 0.01, "{}", w.rate());
        for t in 10_000..20_500u64 {
            w.on_packet(seq, ms(t));
            seq += 1;
        }
        assert!(w.rate() < 1e-9, "{}", w.rate());
    }
}
