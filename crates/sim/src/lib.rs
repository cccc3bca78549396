//! bloatlab-sim: a deterministic discrete-event packet simulator for bufferbloat studies.
//!
//! Data flows one way: scenario (JSON/TOML) → validated [`config::Scenario`] → [`world::World`]
//! (topology, endpoints, flows) → event loop → metrics → [`RunOutput`] (summary JSON and
//! time-series tables). Layout: `units` (time, rate, size types), `engine` (event queue,
//! random streams), `net` (packets, links, routes), `queue` (disciplines), `tcp` (the
//! protocol), `udp` and `dccp` (datagram transports), `cc` (congestion controls), `app`
//! (traffic sources), `metrics`, `world`.

// No `unsafe` but the prefetch hints' (engine/prefetch.rs, allowed there alone).
#![deny(unsafe_code)]

pub mod api;
pub mod app;
pub mod cc;
pub mod config;
pub mod dccp;
pub mod engine;
pub mod gateway;
pub mod ids;
pub mod metrics;
pub mod net;
pub mod packetdrill;
pub mod queue;
pub mod tcp;
pub mod udp;
pub mod units;
pub mod world;

pub use api::{run_json, run_toml, validate_json, Column, RunError, RunOptions, RunOutput, ScenarioError, Table};
