//! Gateway ACK-rewriter settings: `topology.gateway = { kind = "ewt" | "ewa" | "awm", ... }`;
//! each rewriter reads its own keys (gateway/<kind>.rs).
//! Sizes accept bytes ("29KB") or packets ("20p", 1500 B each); defaults that depend on the
//! buffer are resolved here against the forward bottleneck queue's capacity B. Defaults and
//! their sources: docs/gateway.md.

use super::QueueCfg;
use crate::gateway::{GatewayCfg, RewriterCtx, REWRITERS};
use crate::params::{err, Res, Table};
use serde_json::Value;

/// Reads the gateway table; `fwd_queue` is the forward bottleneck queue it reads from. The
/// `kind` names an entry of the rewriter registry ([`REWRITERS`]), which reads the rest.
pub(super) fn gateway(path: &str, v: &Value, fwd_queue: &QueueCfg) -> Res<GatewayCfg> {
    let mut t = Table::new(path, v)?;
    let ctx = RewriterCtx { capacity_bytes: crate::queue::capacity_bytes(fwd_queue.limit) };
    let known: Vec<&'static str> = REWRITERS.iter().map(|e| e.name).collect();
    let Some(kind) = t.opt_choice("kind", "gateway", &known)? else {
        return err(
            &t.key_path("kind"),
            format!("missing required key (known: {})", known.join(", ")),
        );
    };
    let entry =
        REWRITERS.iter().find(|e| e.name == kind).expect("opt_choice() only returns known kinds");
    let params = (entry.parse)(&mut t, &ctx)?;
    let mut allowed = vec!["kind"];
    allowed.extend_from_slice(entry.keys);
    t.finish(&allowed)?;
    Ok(GatewayCfg::new(entry, params))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{AwmParams, EwaParams, EwtParams, QueueLimit};
    use crate::gateway::RewriterBuild;
    use crate::units::Dur;
    use std::sync::Arc;

    /// The configuration a registered rewriter with these parameters has.
    fn cfg(name: &str, p: impl RewriterBuild + 'static) -> GatewayCfg {
        GatewayCfg::new(REWRITERS.iter().find(|e| e.name == name).unwrap(), Arc::new(p))
    }
    use serde_json::json;

    fn fwd(limit: QueueLimit) -> QueueCfg {
        QueueCfg::droptail(limit)
    }

    fn parse(v: Value) -> Res<GatewayCfg> {
        gateway("topology.gateway", &v, &fwd(QueueLimit::Bytes(97_000)))
    }

    fn error_of(v: Value) -> (String, String) {
        let e = parse(v).unwrap_err();
        (e.path, e.message)
    }

    #[test]
    fn ewt_start_in_bytes_or_packets_with_a_default() {
        assert_eq!(
            parse(json!({ "kind": "ewt", "start": "29KB" })).unwrap(),
            cfg("ewt", EwtParams { start: 29_000 })
        );
        assert_eq!(
            parse(json!({ "kind": "ewt", "start": "10p" })).unwrap(),
            cfg("ewt", EwtParams { start: 15_000 })
        );
        assert_eq!(
            parse(json!({ "kind": "ewt" })).unwrap(),
            cfg("ewt", EwtParams { start: 29_100 })
        );
        // A packet-limited queue counts 1500 B per packet.
        let g =
            gateway("topology.gateway", &json!({ "kind": "ewt" }), &fwd(QueueLimit::Packets(100)))
                .unwrap();
        assert_eq!(g, cfg("ewt", EwtParams { start: 45_000 }));
    }

    #[test]
    fn ewt_start_above_the_memory_is_rejected() {
        let (p, m) = error_of(json!({ "kind": "ewt", "start": "98KB" }));
        assert_eq!(p, "topology.gateway.start");
        assert!(m.contains("97000B"), "{m}");
        assert_eq!(error_of(json!({ "kind": "ewt", "start": 29000 })).0, "topology.gateway.start");
    }

    #[test]
    fn unknown_kinds_and_keys_are_named() {
        let (p, m) = error_of(json!({ "kind": "pink" }));
        assert_eq!(p, "topology.gateway.kind");
        assert!(m.contains("known: ewt, ewa, awm"), "{m}");
        assert_eq!(error_of(json!({ "start": "1KB" })).0, "topology.gateway.kind");
        let (p, m) = error_of(json!({ "kind": "ewt", "alpha": 1 }));
        assert_eq!(p, "topology.gateway.alpha");
        assert!(m.contains("allowed: kind, start"), "{m}");
        assert_eq!(
            error_of(json!({ "kind": "awm", "flows": 3, "start": "1KB" })).0,
            "topology.gateway.start"
        );
        assert_eq!(
            error_of(json!({ "kind": "ewa", "target": "1KB" })).0,
            "topology.gateway.target"
        );
    }

    #[test]
    fn ewa_defaults_and_checks() {
        let g = parse(json!({ "kind": "ewa" })).unwrap();
        // α0·log2(B / 1500 B) = B: an empty buffer leaves windows up to B.
        let alpha = 97_000.0 / (97_000.0f64 / 1500.0).log2();
        assert!((alpha * (97_000.0f64 / 1500.0).log2() - 97_000.0).abs() < 1e-6);
        let (interval, low, high) = (Dur::from_millis(500), 24_250, 48_500);
        let want = EwaParams {
            alpha,
            g: 1.0 / 128.0,
            interval,
            low,
            high,
            w_up: alpha / 32.0,
            w_down: alpha / 8.0,
        };
        assert_eq!(g, cfg("ewa", want));
        assert_eq!(error_of(json!({ "kind": "ewa", "low": "60KB" })).0, "topology.gateway.low");
        assert_eq!(error_of(json!({ "kind": "ewa", "high": "100KB" })).0, "topology.gateway.high");
        assert_eq!(error_of(json!({ "kind": "ewa", "g": 1.5 })).0, "topology.gateway.g");
        assert_eq!(error_of(json!({ "kind": "ewa", "alpha": -2 })).0, "topology.gateway.alpha");
    }

    #[test]
    fn awm_needs_the_number_of_flows() {
        let (p, m) = error_of(json!({ "kind": "awm" }));
        assert_eq!(p, "topology.gateway.flows");
        assert!(m.contains("number of flows"), "{m}");
        assert_eq!(error_of(json!({ "kind": "awm", "flows": 0 })).0, "topology.gateway.flows");
        assert_eq!(
            error_of(json!({ "kind": "awm", "flows": 4, "alpha": 2 })).0,
            "topology.gateway.alpha"
        );
        assert_eq!(
            error_of(json!({ "kind": "awm", "flows": 4, "target": "1MB" })).0,
            "topology.gateway.target"
        );
        let g = parse(json!({ "kind": "awm", "flows": 17 })).unwrap();
        assert_eq!(g, cfg("awm", AwmParams { alpha: 1e-4, target: 24_250, flows: 17 }));
    }
}
