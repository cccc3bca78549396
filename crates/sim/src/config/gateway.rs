//! Gateway ACK-rewriter settings: `topology.gateway = { kind = "ewt" | "ewa" | "awm", ... }`.
//! Sizes accept bytes ("29KB") or packets ("20p", 1500 B each); defaults that depend on the
//! buffer are resolved here against the forward bottleneck queue's capacity B. Defaults and
//! their sources: docs/gateway.md.

use super::queue::amount_bytes;
use super::reader::{err, Res, Table};
use super::{AwmParams, EwaParams, EwtParams, GatewayCfg, QueueCfg, MTU_BYTES};
use crate::units::Dur;
use serde_json::Value;

const GATEWAY_KINDS: &[&str] = &["ewt", "ewa", "awm"];
const EWT_KEYS: &[&str] = &["kind", "start"];
const EWA_KEYS: &[&str] = &["kind", "alpha", "g", "interval", "low", "high", "w_up", "w_down"];
const AWM_KEYS: &[&str] = &["kind", "alpha", "target", "flows"];

/// Reads the gateway table; `fwd_queue` is the forward bottleneck queue it reads from.
pub(super) fn gateway(path: &str, v: &Value, fwd_queue: &QueueCfg) -> Res<GatewayCfg> {
    let mut t = Table::new(path, v)?;
    let b = crate::queue::capacity_bytes(fwd_queue.limit);
    let (cfg, keys) = match t.opt_choice("kind", "gateway", GATEWAY_KINDS)? {
        None => return err(&t.key_path("kind"), format!("missing required key (known: {})", GATEWAY_KINDS.join(", "))),
        Some("ewt") => (GatewayCfg::Ewt(ewt(&mut t, b)?), EWT_KEYS),
        Some("ewa") => (GatewayCfg::Ewa(ewa(&mut t, b)?), EWA_KEYS),
        Some("awm") => (GatewayCfg::Awm(awm(&mut t, b)?), AWM_KEYS),
        Some(_) => unreachable!("opt_choice() only returns known kinds"),
    };
    t.finish(keys)?;
    Ok(cfg)
}

/// A size key (bytes or packets) that must lie within the buffer B.
fn within_buffer(t: &mut Table, key: &'static str, b: u64) -> Res<Option<u64>> {
    let p = t.key_path(key);
    let Some(v) = t.get(key) else { return Ok(None) };
    let bytes = amount_bytes(&p, v)?.round() as u64;
    if bytes > b {
        return err(
            &p,
            format!("{bytes}B is above the forward bottleneck buffer ({b}B, topology.bottleneck_queue.limit)"),
        );
    }
    Ok(Some(bytes))
}

/// EWT: S_t defaults to 30 % of the buffer (Talau 2019: 29 kB of 97 kB in Table 3, 30 kB of
/// 100 kB in Table 1).
fn ewt(t: &mut Table, b: u64) -> Res<EwtParams> {
    let start = within_buffer(t, "start", b)?.unwrap_or((b as f64 * 0.3).round() as u64);
    Ok(EwtParams { start })
}

/// EWA: g = 1/128 (Talau 2019 §3.1); the rest are bloatlab's choices (the original values
/// were not available): α0 makes the window equal to B when the buffer is empty, T = 500 ms,
/// T_l = B/4, T_h = B/2, W_up = α0/32, W_down = α0/8.
fn ewa(t: &mut Table, b: u64) -> Res<EwaParams> {
    let pkts = (b as f64 / MTU_BYTES as f64).max(2.0);
    let alpha0 = b as f64 / pkts.log2();
    let alpha = t.opt_f64("alpha", 0.0, f64::MAX, true)?.unwrap_or(alpha0);
    let g = t.opt_f64("g", 0.0, 1.0, true)?.unwrap_or(1.0 / 128.0);
    if g == 0.0 {
        return err(&t.key_path("g"), "must be greater than 0 (got 0)");
    }
    let ip = t.key_path("interval");
    let interval = match t.opt_duration("interval")? {
        Some(Dur(0)) => return err(&ip, "must be greater than 0 (got \"0s\")"),
        Some(d) => d,
        None => Dur::from_millis(500),
    };
    let low_given = within_buffer(t, "low", b)?;
    let high_given = within_buffer(t, "high", b)?;
    let low = low_given.unwrap_or(b / 4);
    let high = high_given.unwrap_or(b / 2);
    if low >= high {
        let key = if low_given.is_some() { "low" } else { "high" };
        return err(&t.key_path(key), format!("low ({low}B) must be below high ({high}B)"));
    }
    let w_up = t.opt_f64("w_up", 0.0, f64::MAX, true)?.unwrap_or(alpha0 / 32.0);
    let w_down = t.opt_f64("w_down", 0.0, f64::MAX, true)?.unwrap_or(alpha0 / 8.0);
    Ok(EwaParams { alpha, g, interval, low, high, w_up, w_down })
}

/// AWM: N (`flows`) is required — the scheme divides queue changes among the flows and a
/// wrong N makes it unstable; α = 1e-4 per queue event and target = B/4 are bloatlab's
/// choices (the original values were not available).
fn awm(t: &mut Table, b: u64) -> Res<AwmParams> {
    let alpha = t.opt_f64("alpha", 0.0, 1.0, true)?.unwrap_or(1e-4);
    let target = within_buffer(t, "target", b)?.unwrap_or(b / 4);
    let fp = t.key_path("flows");
    let flows = match t.opt_int("flows", 1, 1_000_000)? {
        Some(n) => n as u32,
        None => {
            return err(
                &fp,
                "missing required key: AWM needs N, the number of flows sharing the gateway (e.g. flows = 17)",
            )
        }
    };
    Ok(AwmParams { alpha, target, flows })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::QueueLimit;
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
            GatewayCfg::Ewt(EwtParams { start: 29_000 })
        );
        assert_eq!(
            parse(json!({ "kind": "ewt", "start": "10p" })).unwrap(),
            GatewayCfg::Ewt(EwtParams { start: 15_000 })
        );
        assert_eq!(parse(json!({ "kind": "ewt" })).unwrap(), GatewayCfg::Ewt(EwtParams { start: 29_100 }));
        // A packet-limited queue counts 1500 B per packet.
        let g = gateway("topology.gateway", &json!({ "kind": "ewt" }), &fwd(QueueLimit::Packets(100))).unwrap();
        assert_eq!(g, GatewayCfg::Ewt(EwtParams { start: 45_000 }));
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
        assert_eq!(error_of(json!({ "kind": "awm", "flows": 3, "start": "1KB" })).0, "topology.gateway.start");
        assert_eq!(error_of(json!({ "kind": "ewa", "target": "1KB" })).0, "topology.gateway.target");
    }

    #[test]
    fn ewa_defaults_and_checks() {
        let GatewayCfg::Ewa(p) = parse(json!({ "kind": "ewa" })).unwrap() else { panic!() };
        // α0·log2(B / 1500 B) = B: an empty buffer leaves windows up to B.
        assert!((p.alpha * (97_000.0f64 / 1500.0).log2() - 97_000.0).abs() < 1e-6);
        assert_eq!((p.g, p.interval, p.low, p.high), (1.0 / 128.0, Dur::from_millis(500), 24_250, 48_500));
        assert_eq!((p.w_up, p.w_down), (p.alpha / 32.0, p.alpha / 8.0));
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
        assert_eq!(error_of(json!({ "kind": "awm", "flows": 4, "alpha": 2 })).0, "topology.gateway.alpha");
        assert_eq!(error_of(json!({ "kind": "awm", "flows": 4, "target": "1MB" })).0, "topology.gateway.target");
        let g = parse(json!({ "kind": "awm", "flows": 17 })).unwrap();
        assert_eq!(g, GatewayCfg::Awm(AwmParams { alpha: 1e-4, target: 24_250, flows: 17 }));
    }
}
