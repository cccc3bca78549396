//! bloatlab-sim: a deterministic discrete-event packet simulator for bufferbloat studies.
//!
//! Data flows one way: scenario (JSON/TOML) → validated [`config::Scenario`] → [`world::World`]
//! (topology, endpoints, flows) → event loop → metrics → [`RunOutput`] (summary JSON and
//! time-series tables). Layout, bottom layer first (each module uses only those below it;
//! tests/layers.rs checks it): `units` (time, rate, size types), `ids`, `wire` (ECN,
//! header sizes, the 5-tuple, DCCP's header), `linux` (Linux's defaults and names), `params`
//! (the parameter reader and `ScenarioError`), `engine` (event queue, random streams),
//! `metrics`, `queue` (disciplines), `gateway` (ACK rewriters), `cc` (congestion controls),
//! `net` (packets, links, routes), `tcp` (the protocol), `udp` and `dccp` (datagram
//! transports), `app` (traffic sources), `packetdrill`, `config` (the scenario, composing the
//! registries), `world`, `api`.

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
pub mod linux;
pub mod metrics;
pub mod net;
pub mod packetdrill;
pub mod params;
pub mod queue;
pub mod tcp;
pub mod udp;
pub mod units;
pub mod wire;
pub mod world;

pub use api::{
    run_json, run_toml, validate_json, Column, RunError, RunOptions, RunOutput, ScenarioError,
    Table,
};
