//! Gateway ACK-rewriter settings: `topology.gateway = { kind = "ewt" | "ewa" | "awm", ... }`.

use super::reader::{err, Res, Table};
use super::{GatewayCfg, QueueCfg};
use serde_json::Value;

const GATEWAY_KINDS: &[&str] = &[];

/// Reads the gateway table; `fwd_queue` is the forward bottleneck queue it reads from.
pub(super) fn gateway(path: &str, v: &Value, _fwd_queue: &QueueCfg) -> Res<GatewayCfg> {
    let mut t = Table::new(path, v)?;
    match t.opt_choice("kind", "gateway", GATEWAY_KINDS)? {
        None => err(&t.key_path("kind"), "missing required key"),
        Some(_) => unreachable!("no gateway kinds yet"),
    }
}
