//! Step marking, the AQM DCTCP assumes (RFC 8257 §3.1): an ECN-capable packet is marked CE
//! when the queue it finds on arrival is longer than a threshold K; below K nothing happens.
//! Packets that are not ECN-capable are never dropped early, only when the buffer is full.
//!
//! K is the instantaneous queue at arrival (not yet counting the arriving packet), given as
//! a time (`threshold = "1ms"`: the backlog the link drains in that time at its nominal
//! rate), a size (`"30KB"`) or a packet count (`"20p"`). This file is also the one-file
//! example of how a discipline registers itself (docs/extending.md).

use super::{
    Backlog, BuildCx, Dequeued, DropReason, Fifo, QEntry, QueueBuild, QueueDisc, QueueEntry,
    Verdict,
};
use crate::params::fmt_num;
use crate::params::{err, Res, Table};
use crate::queue::QueueLimit;
use crate::units::{self, Dur, SimTime};

/// K, as the scenario gave it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Threshold {
    /// Converted to bytes at the link's nominal rate when the queue is built.
    Time(Dur),
    Bytes(u64),
    Packets(u64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepParams {
    pub threshold: Threshold,
}

pub const DEF: QueueEntry = QueueEntry {
    name: "step",
    doc: "a step marker: ECN-marks (or drops) every packet above a queue threshold",
    keys: &["threshold"],
    extra: super::DEFAULT_LIMIT,
    parse: |t, &limit| Ok(super::share(StepParams { threshold: parse_threshold(t, limit)? })),
};

impl QueueBuild for StepParams {
    fn build(&self, cx: BuildCx) -> Box<dyn QueueDisc> {
        Box::new(Step::new(cx.limit, self.threshold, cx.rate))
    }
}

/// The L4S step of RFC 9332 (1 ms) is the default: DCTCP-style senders keep the queue near it.
const DEFAULT_THRESHOLD: Threshold = Threshold::Time(Dur(1_000_000));

const THRESHOLD_FORMS: &str =
    "a time such as \"1ms\", a size such as \"30KB\" or a packet count such as \"20p\"";

fn parse_threshold(t: &mut Table, limit: QueueLimit) -> Res<Threshold> {
    let path = t.key_path("threshold");
    let s = match t.opt_str("threshold") {
        Ok(None) => return Ok(DEFAULT_THRESHOLD),
        Ok(Some(s)) => s,
        Err(_) => return err(&path, format!("expected {THRESHOLD_FORMS}")),
    };
    let k = if let Some(n) = s.strip_suffix('p') {
        match n.trim().parse::<u64>() {
            Ok(p) => Threshold::Packets(p),
            Err(_) => {
                return err(
                    &path,
                    format!("invalid packet count \"{s}\" (expected {THRESHOLD_FORMS})"),
                )
            }
        }
    } else if let Some(ns) = units::parse_duration(s) {
        if ns.is_nan() || ns < 0.0 {
            return err(&path, format!("must not be negative (got \"{s}\")"));
        }
        Threshold::Time(Dur(ns.round() as u64))
    } else if let Some(b) = units::parse_size(s) {
        if b.is_nan() || b < 0.0 {
            return err(&path, format!("must not be negative (got \"{s}\")"));
        }
        Threshold::Bytes(b.round() as u64)
    } else {
        return err(&path, format!("invalid threshold \"{s}\" (expected {THRESHOLD_FORMS})"));
    };
    if matches!(k, Threshold::Time(Dur(0)) | Threshold::Bytes(0) | Threshold::Packets(0)) {
        return err(&path, format!("must be greater than 0 (got \"{s}\")"));
    }
    // A threshold the buffer cannot exceed would never mark.
    let (k_units, lim_units, unit) = match (k, limit) {
        (Threshold::Bytes(b), QueueLimit::Bytes(l)) => (b as f64, l as f64, "B"),
        (Threshold::Packets(p), QueueLimit::Packets(l)) => (p as f64, l as f64, "p"),
        (Threshold::Bytes(b), QueueLimit::Packets(l)) => {
            (b as f64, (l * crate::wire::MTU_BYTES) as f64, "B")
        }
        (Threshold::Packets(p), QueueLimit::Bytes(l)) => {
            (p as f64, l as f64 / crate::wire::MTU_BYTES as f64, "p")
        }
        (Threshold::Time(_), _) => (0.0, 1.0, ""),
    };
    if k_units >= lim_units {
        return err(
            &path,
            format!(
                "must be below the queue limit ({}{unit} ≥ {}{unit})",
                fmt_num(k_units),
                fmt_num(lim_units)
            ),
        );
    }
    Ok(k)
}

/// K in the unit the queue is compared in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum K {
    Bytes(u64),
    Packets(u64),
}

pub struct Step {
    q: Fifo,
    k: K,
}

impl Step {
    pub fn new(limit: QueueLimit, threshold: Threshold, rate: units::Rate) -> Step {
        let k = match threshold {
            Threshold::Time(d) => K::Bytes(rate.bytes_in(d)),
            Threshold::Bytes(b) => K::Bytes(b),
            Threshold::Packets(p) => K::Packets(p),
        };
        Step { q: Fifo::new(limit), k }
    }

    /// K in bytes (packets count as MTUs), for reports.
    pub fn threshold_bytes(&self) -> u64 {
        match self.k {
            K::Bytes(b) => b,
            K::Packets(p) => p * crate::wire::MTU_BYTES,
        }
    }
}

impl QueueDisc for Step {
    fn name(&self) -> &'static str {
        "step"
    }

    #[inline]
    fn enqueue(
        &mut self,
        e: QEntry,
        _now: SimTime,
        _dropped: &mut Vec<(QEntry, DropReason)>,
    ) -> Verdict {
        if self.q.overflows(&e) {
            return Verdict::Dropped(DropReason::Overflow);
        }
        let above = match self.k {
            K::Bytes(b) => self.q.bytes() > b,
            K::Packets(p) => self.q.len() as u64 > p,
        };
        self.q.push(e);
        if above && e.ect() {
            Verdict::Marked
        } else {
            Verdict::Queued
        }
    }

    #[inline]
    fn dequeue(
        &mut self,
        _now: SimTime,
        _dropped: &mut Vec<(QEntry, DropReason)>,
    ) -> Option<Dequeued> {
        self.q.pop().map(Dequeued::plain)
    }

    fn backlog(&self) -> Backlog {
        self.q.backlog()
    }

    fn capacity_bytes(&self) -> u64 {
        self.q.capacity_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::entry;
    use super::*;
    use crate::units::Rate;
    use crate::wire::Ecn;

    fn e(i: u32, ecn: Ecn) -> QEntry {
        entry(i, 1500, SimTime(0), ecn)
    }

    #[test]
    fn marks_ect_above_k_and_never_drops_early() {
        // 1 ms at 12 Mbit/s = 1500 B: marks once more than one packet waits.
        let mut q = Step::new(
            QueueLimit::Packets(5),
            Threshold::Time(Dur::from_millis(1)),
            Rate(12_000_000),
        );
        assert_eq!(q.threshold_bytes(), 1500);
        let t = SimTime(0);
        assert_eq!(q.enqueue(e(0, Ecn::Ect1), t, &mut Vec::new()), Verdict::Queued); // finds 0 B
        assert_eq!(q.enqueue(e(1, Ecn::Ect1), t, &mut Vec::new()), Verdict::Queued); // finds 1500 B = K
        assert_eq!(q.enqueue(e(2, Ecn::Ect1), t, &mut Vec::new()), Verdict::Marked); // finds 3000 B > K
        assert_eq!(q.enqueue(e(3, Ecn::Ect0), t, &mut Vec::new()), Verdict::Marked);
        assert_eq!(q.enqueue(e(4, Ecn::NotEct), t, &mut Vec::new()), Verdict::Queued);
        assert_eq!(
            q.enqueue(e(5, Ecn::Ect1), t, &mut Vec::new()),
            Verdict::Dropped(DropReason::Overflow)
        );
        let mut d = Vec::new();
        assert_eq!(q.dequeue(t, &mut d).unwrap(), Dequeued::plain(e(0, Ecn::Ect1)));
        // Packet threshold: more than 2 packets waiting.
        let mut q = Step::new(QueueLimit::Packets(100), Threshold::Packets(2), Rate(1));
        let v: Vec<Verdict> =
            (0..4).map(|i| q.enqueue(e(i, Ecn::Ce), t, &mut Vec::new())).collect();
        assert_eq!(v, [Verdict::Queued, Verdict::Queued, Verdict::Queued, Verdict::Marked]);
    }
}
