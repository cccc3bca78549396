//! Sampled time series in long format: one row per flow (or link) per sample.

/// One column of a time-series table.
#[derive(Debug, Clone, PartialEq)]
pub enum Column {
    F64(Vec<f64>),
    I64(Vec<i64>),
    Str(Vec<String>),
}

/// A named table in long format (one row per sample per entity).
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub name: String,
    pub columns: Vec<(String, Column)>,
}

#[derive(Debug, Default)]
pub struct Series {
    // flows table
    pub f_t: Vec<f64>,
    pub f_flow: Vec<i64>,
    pub f_cwnd: Vec<i64>,
    pub f_ssthresh: Vec<i64>,
    pub f_inflight: Vec<i64>,
    pub f_rwnd: Vec<i64>,
    pub f_srtt_ms: Vec<f64>,
    pub f_rtt_ms: Vec<f64>,
    pub f_throughput: Vec<f64>,
    pub f_goodput: Vec<f64>,
    pub f_pacing: Vec<f64>,
    pub f_ca_state: Vec<String>,
    pub f_cc_state: Vec<String>,
    // queues table
    pub q_t: Vec<f64>,
    pub q_link: Vec<String>,
    pub q_bytes: Vec<i64>,
    pub q_pkts: Vec<i64>,
    pub q_drops: Vec<i64>,
    pub q_sojourn_ms: Vec<f64>,
    pub q_tx_mbps: Vec<f64>,
    pub q_aqm_state: Vec<f64>,
    pub q_capacity_mbps: Vec<f64>,
    pub q_gateway_state: Vec<f64>,
}

impl Series {
    pub fn into_tables(self) -> Vec<Table> {
        fn f(n: &str, v: Vec<f64>) -> (String, Column) {
            (n.to_string(), Column::F64(v))
        }
        fn i(n: &str, v: Vec<i64>) -> (String, Column) {
            (n.to_string(), Column::I64(v))
        }
        fn s(n: &str, v: Vec<String>) -> (String, Column) {
            (n.to_string(), Column::Str(v))
        }
        vec![
            Table {
                name: "flows".into(),
                columns: vec![
                    f("t_s", self.f_t),
                    i("flow", self.f_flow),
                    i("cwnd_bytes", self.f_cwnd),
                    i("ssthresh_bytes", self.f_ssthresh),
                    i("inflight_bytes", self.f_inflight),
                    i("rwnd_bytes", self.f_rwnd),
                    f("srtt_ms", self.f_srtt_ms),
                    f("rtt_ms", self.f_rtt_ms),
                    f("throughput_mbps", self.f_throughput),
                    f("goodput_mbps", self.f_goodput),
                    f("pacing_mbps", self.f_pacing),
                    s("ca_state", self.f_ca_state),
                    s("cc_state", self.f_cc_state),
                ],
            },
            Table {
                name: "queues".into(),
                columns: vec![
                    f("t_s", self.q_t),
                    s("link", self.q_link),
                    i("backlog_bytes", self.q_bytes),
                    i("backlog_pkts", self.q_pkts),
                    i("drops", self.q_drops),
                    f("sojourn_ms", self.q_sojourn_ms),
                    f("tx_mbps", self.q_tx_mbps),
                    f("aqm_state", self.q_aqm_state),
                    f("capacity_mbps", self.q_capacity_mbps),
                    f("gateway_state", self.q_gateway_state),
                ],
            },
        ]
    }
}
