//! DCTCP (RFC 8257): the sender keeps α, a moving average of the fraction of bytes that came
//! back CE-marked, updated once per window of data (α ← (1 − g)·α + g·F), and on CE feedback
//! cuts cwnd to cwnd·(1 − α/2) at most once per window. Loss is answered like Reno (halving).
//! Growth is Reno's. With ECN negotiated it marks data ECT(0) (RFC 8257's data-centre use) or,
//! with `ect = "ect1"`, ECT(1): DCTCP is a scalable controller usable on an L4S queue.

use super::reno::{halve, reno_grow};
use super::{
    read_f64, AckSample, BuildCtx, CcBuild, CcEntry, CcKind, CcTransport, CongestionControl,
    CongestionEvent, EcnUse, Window,
};
use crate::net::Ecn;
use crate::params::{err, Res, Table};
use crate::wire::EcnMode;
use std::sync::Arc;

pub(super) const ENTRY: CcEntry = CcEntry {
    name: "dctcp",
    doc: "DCTCP (RFC 8257): cwnd cut by the fraction of CE-marked bytes, once per window",
    keys: &["g", "ect"],
    extra: CcKind { transport: CcTransport::Tcp, plus: None },
    parse: |t, _| Ok(Arc::new(DctcpParams::read(t)?)),
};

impl CcBuild for DctcpParams {
    fn build(&self, _ctx: BuildCtx) -> Box<dyn CongestionControl> {
        Box::new(Dctcp::new(*self))
    }
    /// DCTCP needs ECN (RFC 8257 §3) and asks for it itself, as Linux's module does.
    fn ecn_needs(&self) -> Option<EcnMode> {
        Some(EcnMode::Classic)
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DctcpParams {
    /// EWMA gain of α (RFC 8257 §4.2 recommends 1/16).
    pub g: f64,
    /// Codepoint of data packets once ECN is negotiated: ECT(0) or ECT(1).
    pub ect: Ecn,
}

impl Default for DctcpParams {
    fn default() -> Self {
        DctcpParams { g: 1.0 / 16.0, ect: Ecn::Ect0 }
    }
}

impl DctcpParams {
    pub(super) fn read(t: &mut Table) -> Res<DctcpParams> {
        let d = DctcpParams::default();
        let g = read_f64(t, "g", 0.0, true, 1.0, false)?.unwrap_or(d.g);
        let ect = match t.opt_str("ect")? {
            None | Some("ect0") => Ecn::Ect0,
            Some("ect1") => Ecn::Ect1,
            Some(s) => {
                return err(
                    &t.key_path("ect"),
                    format!("unknown ECN codepoint \"{s}\" (known: ect0, ect1)"),
                )
            }
        };
        Ok(DctcpParams { g, ect })
    }
}

pub struct Dctcp {
    p: DctcpParams,
    /// RFC 8257's DCTCP.Alpha, in [0, 1]; starts at 1 so the first mark halves (§3.3).
    alpha: f64,
    /// Bytes acknowledged and bytes reported CE in the current observation window.
    acked: u64,
    marked: u64,
    /// The window ends when SND.UNA passes this (SND.NXT when it began).
    window_end: u64,
    /// No new reduction until SND.UNA passes this (one per window of data).
    cwr_end: u64,
    credit: u64,
    /// The peer negotiated ECN: otherwise DCTCP is plain Reno (no marks can arrive).
    ecn: bool,
}

impl Dctcp {
    pub fn new(p: DctcpParams) -> Dctcp {
        Dctcp {
            p,
            alpha: 1.0,
            acked: 0,
            marked: 0,
            window_end: 0,
            cwr_end: 0,
            credit: 0,
            ecn: false,
        }
    }

    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// RFC 8257 §3.3 steps 3–7: accumulate, and once a window of data has been acknowledged
    /// fold its marked fraction into α.
    fn update_alpha(&mut self, a: &AckSample) {
        self.acked += a.acked_bytes;
        self.marked += a.ce_bytes;
        if a.snd_una <= self.window_end {
            return;
        }
        if self.acked > 0 {
            let f = (self.marked as f64 / self.acked as f64).min(1.0);
            self.alpha = (1.0 - self.p.g) * self.alpha + self.p.g * f;
        }
        self.acked = 0;
        self.marked = 0;
        self.window_end = a.snd_nxt;
    }
}

impl CongestionControl for Dctcp {
    fn name(&self) -> &'static str {
        "dctcp"
    }

    fn ecn_setup(&mut self, feedback: EcnMode) -> EcnUse {
        self.ecn = feedback.is_on();
        EcnUse { ect: self.p.ect, scalable: self.ecn }
    }

    fn on_ack(&mut self, w: &mut Window, a: &AckSample) {
        if self.ecn {
            self.update_alpha(a);
            if a.ce_bytes > 0 && a.snd_una >= self.cwr_end {
                // §3.3 step 8: cwnd ← cwnd·(1 − α/2), once per window of data.
                let cut = (w.cwnd as f64 * (1.0 - self.alpha / 2.0)) as u64;
                w.ssthresh = cut.max(2 * w.mss);
                w.cwnd = w.ssthresh;
                self.cwr_end = a.snd_nxt;
                self.credit = 0;
                return;
            }
        }
        reno_grow(w, &mut self.credit, a);
    }

    fn on_congestion_event(&mut self, w: &mut Window, e: &CongestionEvent) {
        // §3.4: loss is answered as standard TCP does (the core's RFC 3168 ECN event never
        // reaches a scalable controller).
        let _ = e;
        w.ssthresh = halve(w);
        self.credit = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::SimTime;
    use serde_json::json;

    fn ack(una: u64, nxt: u64, bytes: u64, ce: u64) -> AckSample {
        let mut a = AckSample::test(SimTime(0), bytes, None);
        a.snd_una = una;
        a.snd_nxt = nxt;
        a.ce_bytes = ce;
        a
    }

    fn dctcp() -> Dctcp {
        let mut d = Dctcp::new(DctcpParams::default());
        d.ecn_setup(EcnMode::Classic);
        d
    }

    #[test]
    fn alpha_follows_the_marked_fraction_once_per_window() {
        let mss = 1000;
        let mut w = Window { cwnd: 10 * mss, ssthresh: 10 * mss, mss };
        let mut d = dctcp();
        // Window 1 ends at the first ACK past window_end = 0: alpha(1) folds F = 0.
        d.on_ack(&mut w, &ack(1000, 10_000, 1000, 0));
        assert!((d.alpha - 15.0 / 16.0).abs() < 1e-12, "{}", d.alpha);
        // Window 2: 10 ACKs of 1000 B, 5 of them marked, ending when una passes 10_000. The
        // reduction happens on the first marked ACK only.
        let mut una = 1000;
        for i in 0..10 {
            una += 1000;
            d.on_ack(&mut w, &ack(una, 20_000, 1000, if i % 2 == 0 { 1000 } else { 0 }));
        }
        let want = (15.0 / 16.0) * (15.0 / 16.0) + 1.0 / 16.0 * 0.5;
        assert!((d.alpha - want).abs() < 1e-12, "alpha {} want {want}", d.alpha);
    }

    #[test]
    fn reduction_is_once_per_window_and_scaled_by_alpha() {
        let mss = 1000;
        let mut w = Window { cwnd: 100 * mss, ssthresh: 100 * mss, mss };
        let mut d = dctcp();
        d.alpha = 0.5;
        d.window_end = u64::MAX; // keep alpha fixed
        d.on_ack(&mut w, &ack(1000, 100_000, 1000, 1000));
        assert_eq!(w.cwnd, 75 * mss, "cwnd·(1 − α/2)");
        // More marks within the same window: no further cut (growth may resume).
        for i in 0..50 {
            d.on_ack(&mut w, &ack(2000 + i * 1000, 100_000, 1000, 1000));
        }
        assert!(w.cwnd >= 75 * mss && w.cwnd <= 76 * mss, "{}", w.cwnd);
        // Past the window: the next mark cuts again.
        let before = w.cwnd;
        d.on_ack(&mut w, &ack(100_001, 200_000, 1000, 1000));
        assert_eq!(w.cwnd, (before as f64 * 0.75) as u64);
    }

    #[test]
    fn without_ecn_it_is_reno() {
        let mss = 1000;
        let mut w = Window { cwnd: 10 * mss, ssthresh: 5 * mss, mss };
        let mut d = Dctcp::new(DctcpParams::default());
        assert_eq!(d.ecn_setup(EcnMode::Off), EcnUse { ect: Ecn::Ect0, scalable: false });
        d.on_ack(&mut w, &ack(1000, 10_000, 1000, 1000));
        assert_eq!(w.cwnd, 10 * mss, "marks ignored, CA growth credit only");
    }

    #[test]
    fn params_are_checked() {
        let p = |v: serde_json::Value| {
            let mut t = Table::new("flows[0].cc_params", &v).unwrap();
            DctcpParams::read(&mut t)
        };
        assert_eq!(
            p(json!({"g": 0.25, "ect": "ect1"})).unwrap(),
            DctcpParams { g: 0.25, ect: Ecn::Ect1 }
        );
        let e = p(json!({"g": 0})).unwrap_err();
        assert_eq!(e.to_string(), "flows[0].cc_params.g: must be in (0, 1] (got 0)");
        let e = p(json!({"ect": "ce"})).unwrap_err();
        assert_eq!(e.path, "flows[0].cc_params.ect");
        assert!(e.message.contains("ect0, ect1"), "{e}");
        let e = p(json!({"ect": 1})).unwrap_err();
        assert_eq!(e.path, "flows[0].cc_params.ect");
    }
}
