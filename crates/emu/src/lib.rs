//! bloatlab-emu: a userspace bottleneck between network namespaces. It reads IP packets from a
//! TUN device on each side, runs them through the simulator's own queue disciplines, rate
//! models and ACK rewriters (`bloatlab_sim::{queue, gateway, net::rate_model}`) on the wall
//! clock, and writes them out on the other side. See docs/emulation.md.
//!
//! Layout: `packet` (IPv4/TCP parsing, never panics), `checksum` (RFC 1624), `rewrite` (window
//! scaling per connection, window rewriting), `slab` (preallocated packet buffers), `delay`
//! (delay lines), `access` (the access delay lines per RTT class), `shaper` (one direction: queue, serializer, loss, delays), `stats`,
//! `core` (both directions and the gateway, driven by explicit times), `config` (scenario →
//! emulation: validation, plan, parts), `clock`, `tun`, `pcap`, `bottleneck` (the I/O loop),
//! `sys` (the system calls outside std: the crate's only `unsafe`).

// System calls outside std live in `sys`, the only module allowed `unsafe`.
#![deny(unsafe_code)]

pub mod access;
pub mod checksum;
pub mod config;
pub mod core;
pub mod delay;
pub mod packet;
pub mod pcap;
pub mod rewrite;
pub mod shaper;
pub mod slab;
pub mod stats;

#[cfg(target_os = "linux")]
pub mod bottleneck;
#[cfg(target_os = "linux")]
pub mod clock;
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub mod sys;
#[cfg(target_os = "linux")]
pub mod tun;

#[cfg(target_os = "linux")]
pub use bottleneck::{run_json, EmuError};

use bloatlab_sim::ScenarioError;

/// Validates a scenario (JSON text) for emulation and returns the plan the controller runs
/// (expanded flows with start times, timing, the queue) as JSON text.
pub fn plan_json(scenario_json: &str) -> Result<String, ScenarioError> {
    let v: serde_json::Value = serde_json::from_str(scenario_json).map_err(|e| ScenarioError {
        path: String::new(),
        message: format!("malformed scenario JSON: {e}"),
    })?;
    let s = config::scenario(&v)?;
    Ok(config::plan(&s, &v).to_string())
}
