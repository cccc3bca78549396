//! Measuring a run: the warm-up's end, time-series samples, the end-of-run conservation
//! checks and the measurements the summary is built from (metrics::measure). Reads the
//! endpoints' and links' own counters; changes nothing the packets see.

use super::{Endpoint, World};
use crate::metrics::{
    DelayMeasure, EngineMeasure, FlowMeasure, LinkMeasure, RunMeasure, VideoMeasure,
};
use crate::net::PacketPool;
use crate::queue::QueueDisc;
use crate::tcp::TcpSocket;
use crate::udp::video;
use crate::units::SimTime;

/// A flow's counters at one instant, whatever its transport (the summary and the time series
/// take differences of these).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Counters {
    pub(super) bytes_sent: u64,
    pub(super) bytes_retx: u64,
    pub(super) bytes_delivered: u64,
    pub(super) data_pkts_sent: u64,
    pub(super) rtt_sum_ns: f64,
    pub(super) rtt_n: u64,
    pub(super) owd_sum_ns: f64,
    pub(super) owd_n: u64,
    pub(super) retransmits: u64,
    pub(super) timeouts: u64,
    pub(super) recoveries: u64,
    /// Datagrams delivered to the receiving application (UDP, DCCP).
    pub(super) datagrams: u64,
}

impl Counters {
    /// A TCP socket pair's counters: sender-side from `server`, delivery at `client`.
    pub(super) fn tcp_pair(server: &TcpSocket, client: &TcpSocket) -> Counters {
        let c = server;
        Counters {
            bytes_sent: c.stats.bytes_sent,
            bytes_retx: c.stats.bytes_retx,
            bytes_delivered: client.stats.bytes_delivered,
            data_pkts_sent: c.stats.data_pkts_sent,
            rtt_sum_ns: c.stats.rtt_sum_ns,
            rtt_n: c.stats.rtt_n,
            owd_sum_ns: 0.0,
            owd_n: 0,
            retransmits: c.stats.retransmits,
            timeouts: c.stats.timeouts,
            recoveries: c.stats.recoveries,
            datagrams: 0,
        }
    }
}

impl World {
    pub(super) fn start_measuring(&mut self) {
        for f in self.flows.iter_mut() {
            if let Some(w) = f.web.as_mut() {
                w.start_measuring(self.now);
            }
            if let Some(p) = f.page.as_mut() {
                p.start_measuring(self.now);
            }
        }
        self.counting = true;
        let now = self.now;
        for l in self.links.iter_mut() {
            l.start_window(now);
        }
        if let Some(w) = self.wifi.as_mut() {
            w.bss.start_window(now);
        }
        for i in 0..self.flows.len() {
            let c = self.counters(i);
            self.flows[i].snap = c;
            self.pkts[i].w_data_drops = 0;
        }
    }

    /// A flow's counters now: sender-side from the client, delivery from the server.
    pub(super) fn counters(&self, i: usize) -> Counters {
        let f = &self.flows[i];
        let now = self.endpoint_counters(i);
        if f.web.is_some() {
            now.plus(&f.retired)
        } else if f.page.is_some() {
            self.page_counters(i)
        } else {
            now
        }
    }

    /// The counters of a flow's current endpoints.
    pub(super) fn endpoint_counters(&self, i: usize) -> Counters {
        let f = &self.flows[i];
        match (&self.eps[f.client.idx()], &self.eps[f.server.idx()]) {
            (Endpoint::Tcp(c), Endpoint::Tcp(s)) => Counters::tcp_pair(c, s),
            (Endpoint::Udp(c), Endpoint::Udp(s)) => Counters {
                bytes_sent: c.stats.bytes_sent,
                bytes_delivered: s.stats.bytes_received,
                data_pkts_sent: c.stats.pkts_sent,
                rtt_sum_ns: c.stats.rtt_sum_ns,
                rtt_n: c.stats.rtt_n,
                owd_sum_ns: s.stats.owd_sum_ns,
                owd_n: s.stats.owd_n,
                datagrams: s.stats.pkts_received,
                ..Counters::default()
            },
            (Endpoint::Dccp(c), Endpoint::Dccp(s)) => Counters {
                bytes_sent: c.stats.bytes_sent,
                bytes_delivered: s.stats.bytes_received,
                data_pkts_sent: c.stats.pkts_sent,
                rtt_sum_ns: c.stats.rtt_sum_ns,
                rtt_n: c.stats.rtt_n,
                owd_sum_ns: s.stats.owd_sum_ns,
                owd_n: s.stats.owd_n,
                timeouts: c.stats.timeouts,
                recoveries: c.stats.reductions,
                datagrams: s.stats.pkts_received,
                ..Counters::default()
            },
            _ => unreachable!("both ends of a flow use the same transport"),
        }
    }

    pub(super) fn sample(&mut self) {
        let Some(mut series) = self.series.take() else { return };
        let t = self.now.secs_f64();
        let secs = self.interval.secs_f64();
        for i in 0..self.flows.len() {
            let now_c = self.counters(i);
            let f = &mut self.flows[i];
            series.f_t.push(t);
            series.f_flow.push(i as i64);
            series
                .f_throughput
                .push((now_c.bytes_sent - f.last.bytes_sent) as f64 * 8.0 / secs / 1e6);
            series
                .f_goodput
                .push((now_c.bytes_delivered - f.last.bytes_delivered) as f64 * 8.0 / secs / 1e6);
            f.last = now_c;
            match &mut self.eps[f.client.idx()] {
                Endpoint::Tcp(c) => {
                    series.f_cwnd.push(c.win.cwnd as i64);
                    series.f_ssthresh.push(if c.win.ssthresh >= i64::MAX as u64 {
                        -1
                    } else {
                        c.win.ssthresh as i64
                    });
                    series.f_inflight.push(c.in_flight() as i64);
                    series.f_rwnd.push(c.snd_wnd() as i64);
                    series.f_srtt_ms.push(c.rtt.srtt().map_or(f64::NAN, |d| d.millis_f64()));
                    series.f_rtt_ms.push(c.rtt.latest().map_or(f64::NAN, |d| d.millis_f64()));
                    series.f_pacing.push(c.pacing_rate().map_or(0.0, |r| r.mbps_f64()));
                    series.f_ca_state.push(c.ca.label().to_string());
                    series.f_cc_state.push(c.cc_state().to_string());
                }
                Endpoint::Udp(u) if u.video.is_some() => {
                    // A video sender: its controller's window (SCReAM; 0 for GCC), bytes in
                    // flight, target rate (in the pacing column) and state.
                    let Some(video::Video::Sender(v)) = &u.video else { unreachable!() };
                    series.f_cwnd.push(v.window() as i64);
                    series.f_ssthresh.push(0);
                    series.f_inflight.push(v.in_flight() as i64);
                    series.f_rwnd.push(0);
                    series.f_srtt_ms.push(f64::NAN);
                    series.f_rtt_ms.push(f64::NAN);
                    series.f_pacing.push(v.target_mbps());
                    series.f_ca_state.push(String::new());
                    series.f_cc_state.push(v.state().to_string());
                }
                Endpoint::Udp(u) => {
                    for col in [
                        &mut series.f_cwnd,
                        &mut series.f_ssthresh,
                        &mut series.f_inflight,
                        &mut series.f_rwnd,
                    ] {
                        col.push(0);
                    }
                    // Probes: the latest round trip, and the mean of this interval's (NaN
                    // without an echo; always NaN for one-way applications).
                    series.f_srtt_ms.push(u.latest_rtt.map_or(f64::NAN, |d| d.millis_f64()));
                    series.f_rtt_ms.push(if u.interval_rtt_n > 0 {
                        u.interval_rtt_sum_ns as f64 / u.interval_rtt_n as f64 / 1e6
                    } else {
                        f64::NAN
                    });
                    series.f_pacing.push(0.0);
                    series.f_ca_state.push(String::new());
                    series.f_cc_state.push(u.app_name().to_string());
                    u.interval_rtt_sum_ns = 0;
                    u.interval_rtt_n = 0;
                }
                Endpoint::Dccp(c) => {
                    // Windows in packets, reported in bytes of full data packets.
                    let w = c.data_wire_bytes();
                    series.f_cwnd.push(c.w.cwnd as i64);
                    series.f_ssthresh.push(if c.w.ssthresh / w < u32::MAX as u64 {
                        c.w.ssthresh as i64
                    } else {
                        -1
                    });
                    series.f_inflight.push((c.pipe * w) as i64);
                    series.f_rwnd.push(0);
                    series.f_srtt_ms.push(c.srtt().map_or(f64::NAN, |d| d.millis_f64()));
                    series.f_rtt_ms.push(c.latest_rtt.map_or(f64::NAN, |d| d.millis_f64()));
                    series
                        .f_pacing
                        .push(c.cc.pacing_bytes_per_sec().map_or(0.0, |r| r * 8.0 / 1e6));
                    series.f_ca_state.push(String::new());
                    series.f_cc_state.push(c.cc.state_label(&c.w).to_string());
                }
            }
        }
        let pair = [self.bottleneck, self.bottleneck_rev];
        let others = self.reported.iter().copied().filter(|l| !pair.contains(l));
        for l in pair.into_iter().chain(others) {
            let link = &mut self.links[l.idx()];
            let b = link.queue.backlog();
            series.q_t.push(t);
            series.q_link.push(link.name.clone());
            series.q_bytes.push(b.bytes as i64);
            series.q_pkts.push(b.pkts as i64);
            series.q_drops.push(link.stats.queue_drops() as i64);
            let (sojourn_ms, tx_bytes) = link.take_interval(self.now);
            series.q_sojourn_ms.push(sojourn_ms);
            series.q_tx_mbps.push(tx_bytes as f64 * 8.0 / secs / 1e6);
            series.q_aqm_state.push(link.queue.internal_state());
            series.q_capacity_mbps.push(link.rate.rate_at(self.now).mbps_f64());
            let gw = match self.gateway.as_ref() {
                Some(g) if l == self.bottleneck => g.internal_state(),
                _ => f64::NAN,
            };
            series.q_gateway_state.push(gw);
        }
        if let Some(w) = self.wifi.as_mut() {
            // One row per Wi-Fi station (docs/wifi.md): the AP's backlog for it, its
            // downlink throughput, its airtime fraction in the AQM-state column.
            w.bss.sample(|r| {
                series.q_t.push(t);
                series.q_link.push(format!("wifi:{}", r.name));
                series.q_bytes.push(r.bytes as i64);
                series.q_pkts.push(r.pkts as i64);
                series.q_drops.push(r.drops as i64);
                series.q_sojourn_ms.push(f64::NAN);
                series.q_tx_mbps.push(r.down_bytes as f64 * 8.0 / secs / 1e6);
                series.q_aqm_state.push(r.airtime_ns as f64 / 1e9 / secs);
                series.q_capacity_mbps.push(r.phy_bps / 1e6);
                series.q_gateway_state.push(f64::NAN);
            });
        }
        self.series = Some(series);
    }

    /// Closes the time integrals at the end of the run.
    pub(super) fn close_windows(&mut self) {
        let now = self.now;
        for l in self.links.iter_mut() {
            l.close_window(now);
        }
    }

    /// Every packet ever sent is delivered, dropped (and counted where) or still in the
    /// network: per flow, per link, and for the pool as a whole.
    /// `others`: the packet pools of a parallel run's other partitions.
    pub(super) fn check_conservation(&self, others: &[PacketPool]) -> Result<(), String> {
        let mut live = vec![0u64; self.flows.len()];
        let pools = || std::iter::once(&self.pool).chain(others);
        pools().for_each(|pool| pool.for_each_live(|p| live[p.flow.idx()] += 1));
        let pool_live: u64 = pools().map(|p| p.live() as u64).sum();
        for (i, f) in self.pkts.iter().enumerate() {
            if f.sent != f.delivered + f.dropped + live[i] {
                return Err(format!(
                    "conservation violated for flow {i}: sent {} != delivered {} + dropped {} + in flight {}",
                    f.sent, f.delivered, f.dropped, live[i]
                ));
            }
        }
        let mut in_links = 0u64;
        for l in &self.links {
            l.check_conservation()?;
            in_links += l.inside();
        }
        in_links += self.wifi.as_ref().map_or(0, |w| w.bss.inside());
        if in_links != pool_live {
            return Err(format!(
                "conservation violated: {pool_live} packets alive in the pool but {in_links} inside links"
            ));
        }
        for ep in &self.eps {
            if let Endpoint::Tcp(s) = ep {
                if !s.check_invariants() {
                    return Err(format!("TCP scoreboard inconsistent at endpoint {}", s.id.0));
                }
            }
        }
        Ok(())
    }

    /// The run's measurements over the window, for the summary builder.
    pub(super) fn measure(&self, wall_s: f64) -> RunMeasure {
        let mut flows = Vec::with_capacity(self.flows.len());
        for (i, f) in self.flows.iter().enumerate() {
            let (done, rtt_p95, owd_p95, jitter) =
                match (&self.eps[f.client.idx()], &self.eps[f.server.idx()]) {
                    (Endpoint::Tcp(c), Endpoint::Tcp(_)) if f.web.is_some() => {
                        // A web flow never "ends": its RTTs span all its connections.
                        let mut h = f.web.as_ref().unwrap().rtt_hist.clone();
                        h.add(&c.rtt_hist);
                        (None, h.value_at_quantile(0.95), 0, None)
                    }
                    (Endpoint::Tcp(_), Endpoint::Tcp(_)) if f.page.is_some() => {
                        (None, self.page_rtt_p95(i), 0, None)
                    }
                    (Endpoint::Tcp(c), Endpoint::Tcp(s)) => {
                        (s.completed_at, c.rtt_hist.value_at_quantile(0.95), 0, None)
                    }
                    (Endpoint::Udp(c), Endpoint::Udp(s)) => (
                        s.completed_at,
                        c.rtt_hist.value_at_quantile(0.95),
                        s.owd_hist.value_at_quantile(0.95),
                        (s.stats.owd_n > 0).then(|| s.jitter.jitter_ns / 1e6),
                    ),
                    (Endpoint::Dccp(c), Endpoint::Dccp(s)) => (
                        None,
                        c.rtt_hist.value_at_quantile(0.95),
                        s.owd_hist.value_at_quantile(0.95),
                        None,
                    ),
                    _ => unreachable!("both ends of a flow use the same transport"),
                };
            let now_c = self.counters(i);
            let w = |a: u64, b: u64| a - b;
            let from = f.start.max(self.warmup);
            let to = done.unwrap_or(self.end).min(self.end);
            let delays = |n: u64, sum: f64, p95: u64| DelayMeasure { n, sum_ns: sum, p95_ns: p95 };
            flows.push(FlowMeasure {
                id: i as u32,
                group: f.group.clone(),
                transport: f.transport.to_string(),
                cc: f.cc.to_string(),
                start_s: f.start.secs_f64(),
                end_s: done.map(|t| t.secs_f64()),
                fct_s: done.map(|t| t.since(f.start).secs_f64()),
                active_s: if to > from { to.since(from).secs_f64() } else { 0.0 },
                bytes_sent: w(now_c.bytes_sent, f.snap.bytes_sent),
                bytes_retrans: w(now_c.bytes_retx, f.snap.bytes_retx),
                bytes_delivered: w(now_c.bytes_delivered, f.snap.bytes_delivered),
                data_pkts: w(now_c.data_pkts_sent, f.snap.data_pkts_sent),
                data_drops: self.pkts[i].w_data_drops,
                rtt: delays(
                    w(now_c.rtt_n, f.snap.rtt_n),
                    now_c.rtt_sum_ns - f.snap.rtt_sum_ns,
                    rtt_p95,
                ),
                owd: delays(
                    w(now_c.owd_n, f.snap.owd_n),
                    now_c.owd_sum_ns - f.snap.owd_sum_ns,
                    owd_p95,
                ),
                base_rtt_ms: f.base_rtt.millis_f64(),
                retransmits: w(now_c.retransmits, f.snap.retransmits),
                timeouts: w(now_c.timeouts, f.snap.timeouts),
                recoveries: Some(w(now_c.recoveries, f.snap.recoveries)),
                responses: f.web.as_ref().map(|wr| wr.times.clone()),
                pages: f.page.as_ref().map(|p| p.times.clone()),
                datagrams_delivered: (f.transport != "tcp")
                    .then(|| w(now_c.datagrams, f.snap.datagrams)),
                jitter_ms: jitter,
                video: self.video_measure(i, from),
            });
        }
        let bn = &self.links[self.bottleneck.idx()];
        let bottleneck = bn.measure(self.end);
        let engine = EngineMeasure {
            wall_s,
            events: self.events.processed() + self.events_extra,
            bottleneck_packets: bn.transmitted_by(self.end),
            setup_s: 0.0, // the caller times the build (api::run_value)
            transmissions: Some(self.links.iter().map(|l| l.transmitted_by(self.end)).sum()),
        };
        let links = self
            .reported
            .iter()
            .map(|l| LinkMeasure {
                name: self.links[l.idx()].name.clone(),
                queue: self.links[l.idx()].measure(self.end),
            })
            .collect();
        let responsiveness = self.rpm_summary();
        RunMeasure {
            name: self.name.clone(),
            seed: self.seed,
            duration_s: self.end.secs_f64(),
            flows,
            bottleneck,
            links,
            engine,
            responsiveness,
            wifi: self.wifi.as_ref().map(|w| w.bss.measure(self.end)),
        }
    }

    /// A video flow's frames over the window (None for other flows).
    fn video_measure(&self, i: usize, from: SimTime) -> Option<VideoMeasure> {
        let f = &self.flows[i];
        let Endpoint::Udp(s) = &self.eps[f.server.idx()] else { return None };
        let Some(video::Video::Receiver(r)) = &s.video else { return None };
        let h = &r.frame_delay;
        let st = r.frame_stats(from, self.end);
        let rtx_packets = match &self.eps[f.client.idx()] {
            Endpoint::Udp(c) => match &c.video {
                Some(video::Video::Sender(v)) => v.rtx_packets,
                _ => 0,
            },
            _ => 0,
        };
        Some(VideoMeasure {
            frames: h.len(),
            p50_ns: h.value_at_quantile(0.50),
            p95_ns: h.value_at_quantile(0.95),
            p99_ns: h.value_at_quantile(0.99),
            judged: st.judged,
            lost: st.lost,
            freezes: r.freezes,
            repaired: st.repaired,
            rtx_packets,
        })
    }
}
