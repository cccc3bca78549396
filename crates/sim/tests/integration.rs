//! The simulator's integration tests, one module per mechanism (its file beside this one).
//!
//! They build as one test binary rather than one per file: each binary links the whole
//! simulator with link-time optimisation, and 41 such links were most of CI's Rust build
//! (README.md, "Developing"). Run one mechanism's tests with a module filter, e.g.
//! `cargo test --release -p bloatlab-sim --test integration wifi::`.

mod cc_util;
mod common;

mod aqm_cake;
mod aqm_delay;
mod aqm_dualpi2;
mod aqm_fq_codel;
mod bbr3;
mod cc_bbr;
mod cc_cubic;
mod cc_delayed;
mod cc_l4s;
mod cc_vegas_westwood;
mod cellular;
mod conservation;
mod dccp_delay;
mod dccp_loss;
mod dccp_protocol;
mod determinism;
mod gateway_combos;
mod gateway_talau;
mod latency_under_load;
mod layers;
mod ledbat;
mod leo;
mod packetdrill_scripts;
mod page_load;
mod parallel;
mod rate_models;
mod rcvbuf_autotune;
mod registry_docs;
mod responsiveness;
mod tcp_ack_timing;
mod tcp_recovery;
mod tcp_sndbuf;
mod tcp_theory;
mod topology;
mod topology_errors;
mod udp_cbr;
mod video;
mod web;
mod wifi;
mod wifi_graph;
mod wifi_station;
