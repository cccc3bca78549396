//! Queue-discipline settings: `topology.*_queue = { kind = ..., limit = ..., <params> }`.
//! Each discipline accepts only its own parameters; defaults and their sources are listed in
//! docs/gateway.md.

use super::reader::{self, err, Res, Table};
use super::{CodelParams, PieParams, QueueCfg, QueueKind, QueueLimit, RedParams, MTU_BYTES};
use crate::units::Dur;
use serde_json::Value;

const QUEUE_KINDS: &[&str] = &["droptail", "red", "ared", "codel", "pie"];
const DROPTAIL_KEYS: &[&str] = &["kind", "limit"];
const RED_KEYS: &[&str] = &["kind", "limit", "min_th", "max_th", "q_w", "max_p", "gentle", "ecn"];
const ARED_KEYS: &[&str] = &["kind", "limit", "min_th", "max_th", "q_w", "max_p", "gentle", "ecn", "interval"];
const CODEL_KEYS: &[&str] = &["kind", "limit", "target", "interval", "ecn"];
const PIE_KEYS: &[&str] = &["kind", "limit", "target", "t_update", "alpha", "beta", "max_burst", "ecn", "derandomize"];

/// The default limit of every queue (Linux's txqueuelen, CoDel's and PIE's default limit).
const DEFAULT_LIMIT: QueueLimit = QueueLimit::Packets(1000);

pub(super) fn queue(path: &str, v: Option<&Value>) -> Res<QueueCfg> {
    let default = QueueCfg { kind: QueueKind::DropTail, limit: DEFAULT_LIMIT };
    let Some(v) = v else { return Ok(default) };
    let mut t = Table::new(path, v)?;
    let kind_name = t.opt_choice("kind", "queue discipline", QUEUE_KINDS)?.unwrap_or("droptail");
    let limit = match t.get("limit") {
        None => DEFAULT_LIMIT,
        Some(lv) => queue_limit(&t.key_path("limit"), lv)?,
    };
    let (kind, keys) = match kind_name {
        "droptail" => (QueueKind::DropTail, DROPTAIL_KEYS),
        "red" => (QueueKind::Red(red(&mut t, limit, false)?), RED_KEYS),
        "ared" => (QueueKind::Red(red(&mut t, limit, true)?), ARED_KEYS),
        "codel" => (QueueKind::Codel(codel(&mut t)?), CODEL_KEYS),
        "pie" => (QueueKind::Pie(pie(&mut t)?), PIE_KEYS),
        _ => unreachable!("opt_choice() only returns known kinds"),
    };
    t.finish(keys)?;
    Ok(QueueCfg { kind, limit })
}

fn queue_limit(path: &str, v: &Value) -> Res<QueueLimit> {
    let s = reader::as_str(path, v)?;
    let limit = if let Some(n) = s.strip_suffix('p') {
        match n.trim().parse::<u64>() {
            Ok(p) => QueueLimit::Packets(p),
            Err(_) => return err(path, format!("invalid packet count \"{s}\" (expected e.g. \"500p\")")),
        }
    } else {
        QueueLimit::Bytes(reader::size(path, v).map_err(|mut e| {
            e.message = format!("{} or a packet count such as \"500p\"", e.message);
            e
        })?)
    };
    match limit {
        QueueLimit::Bytes(0) | QueueLimit::Packets(0) => err(path, format!("must be greater than 0 (got \"{s}\")")),
        l => Ok(l),
    }
}

/// An amount of queue: a size ("30KB") or a packet count ("20p", fractions allowed), in
/// bytes. Packets count MTU_BYTES each, as packet queue limits do.
pub(super) fn amount_bytes(path: &str, v: &Value) -> Res<f64> {
    let s = reader::as_str(path, v).map_err(|mut e| {
        e.message = "expected a size such as \"30KB\" or a packet count such as \"20p\"".into();
        e
    })?;
    if let Some(n) = s.strip_suffix('p') {
        match n.trim().parse::<f64>() {
            Ok(p) if p.is_finite() && p >= 0.0 => Ok(p * MTU_BYTES as f64),
            _ => err(path, format!("invalid packet count \"{s}\" (expected e.g. \"20p\")")),
        }
    } else {
        reader::size(path, v).map(|b| b as f64).map_err(|mut e| {
            e.message = format!("{} or a packet count such as \"20p\"", e.message);
            e
        })
    }
}

/// The queue limit in the unit RED measures the queue in (bytes or packets).
fn limit_units(limit: QueueLimit) -> f64 {
    match limit {
        QueueLimit::Bytes(b) => b as f64,
        QueueLimit::Packets(p) => p as f64,
    }
}

fn unit_name(limit: QueueLimit) -> &'static str {
    match limit {
        QueueLimit::Bytes(_) => "B",
        QueueLimit::Packets(_) => "p",
    }
}

/// A threshold key in the queue's unit (bytes converted to packets at MTU_BYTES if the limit
/// is in packets).
fn threshold(t: &mut Table, key: &'static str, limit: QueueLimit) -> Res<Option<f64>> {
    let p = t.key_path(key);
    let Some(v) = t.get(key) else { return Ok(None) };
    let bytes = amount_bytes(&p, v)?;
    Ok(Some(match limit {
        QueueLimit::Bytes(_) => bytes,
        QueueLimit::Packets(_) => bytes / MTU_BYTES as f64,
    }))
}

/// RED / ARED. Defaults are Linux's (`tc red` with only a limit): max_th = limit/4, min_th =
/// max_th/3 (= limit/12), q_w = 0.002, max_p = 0.02 — the values of Talau et al. 2019,
/// Table 3. With only one threshold given, tc's rules fill the other (max = 3·min, min = max/3).
fn red(t: &mut Table, limit: QueueLimit, adaptive: bool) -> Res<RedParams> {
    let lim = limit_units(limit);
    let unit = unit_name(limit);
    let min_given = threshold(t, "min_th", limit)?;
    let max_given = threshold(t, "max_th", limit)?;
    let (min_th, max_th) = match (min_given, max_given) {
        (Some(a), Some(b)) => (a, b),
        (Some(a), None) => (a, 3.0 * a),
        (None, Some(b)) => (b / 3.0, b),
        (None, None) => (lim / 12.0, lim / 4.0),
    };
    if min_th >= max_th {
        let key = if min_given.is_some() { "min_th" } else { "max_th" };
        return err(
            &t.key_path(key),
            format!("min_th ({}{unit}) must be below max_th ({}{unit})", fmt_num(min_th), fmt_num(max_th)),
        );
    }
    if max_th > lim {
        let key = if max_given.is_some() { "max_th" } else { "min_th" };
        return err(
            &t.key_path(key),
            format!("max_th ({}{unit}) must not exceed the queue limit ({}{unit})", fmt_num(max_th), fmt_num(lim)),
        );
    }
    let q_w = t.opt_f64("q_w", 0.0, 1.0, true)?.unwrap_or(0.002);
    if q_w == 0.0 {
        return err(&t.key_path("q_w"), "must be greater than 0 (got 0)");
    }
    let max_p = t.opt_f64("max_p", 0.0, 1.0, true)?.unwrap_or(0.02);
    let gentle = t.opt_bool("gentle")?.unwrap_or(true);
    let ecn = t.opt_bool("ecn")?.unwrap_or(false);
    let adapt_interval = if adaptive {
        let p = t.key_path("interval");
        Some(positive(&p, t.opt_duration("interval")?)?.unwrap_or(Dur::from_millis(500)))
    } else {
        None
    };
    Ok(RedParams { min_th, max_th, q_w, max_p, gentle, ecn, adapt_interval })
}

/// CoDel: RFC 8289 / Linux defaults target 5 ms, interval 100 ms, ECN off.
fn codel(t: &mut Table) -> Res<CodelParams> {
    let target = positive(&t.key_path("target"), t.opt_duration("target")?)?.unwrap_or(Dur::from_millis(5));
    let interval = positive(&t.key_path("interval"), t.opt_duration("interval")?)?.unwrap_or(Dur::from_millis(100));
    let ecn = t.opt_bool("ecn")?.unwrap_or(false);
    Ok(CodelParams { target, interval, ecn })
}

/// PIE: RFC 8033 / Linux defaults target 15 ms, T_UPDATE 15 ms, α 0.125, β 1.25,
/// MAX_BURST 150 ms, de-randomisation on, ECN off.
fn pie(t: &mut Table) -> Res<PieParams> {
    let target = positive(&t.key_path("target"), t.opt_duration("target")?)?.unwrap_or(Dur::from_millis(15));
    let t_update = positive(&t.key_path("t_update"), t.opt_duration("t_update")?)?.unwrap_or(Dur::from_millis(15));
    let alpha = t.opt_f64("alpha", 0.0, 100.0, true)?.unwrap_or(0.125);
    let beta = t.opt_f64("beta", 0.0, 100.0, true)?.unwrap_or(1.25);
    let max_burst = t.opt_duration("max_burst")?.unwrap_or(Dur::from_millis(150));
    let ecn = t.opt_bool("ecn")?.unwrap_or(false);
    let derandomize = t.opt_bool("derandomize")?.unwrap_or(true);
    Ok(PieParams { target, t_update, alpha, beta, max_burst, ecn, derandomize })
}

fn positive(path: &str, d: Option<Dur>) -> Res<Option<Dur>> {
    match d {
        Some(Dur(0)) => err(path, "must be greater than 0 (got \"0s\")"),
        d => Ok(d),
    }
}

/// A number without a useless fraction ("8083.33", "20").
fn fmt_num(x: f64) -> String {
    if (x - x.round()).abs() < 1e-9 {
        format!("{}", x.round() as i64)
    } else {
        format!("{x:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: Value) -> Res<QueueCfg> {
        queue("topology.bottleneck_queue", Some(&v))
    }

    fn error_of(v: Value) -> (String, String) {
        let e = parse(v).unwrap_err();
        (e.path, e.message)
    }

    fn red_params(v: Value) -> RedParams {
        match parse(v).unwrap().kind {
            QueueKind::Red(p) => p,
            k => panic!("not RED: {k:?}"),
        }
    }

    #[test]
    fn red_defaults_are_linux_like() {
        // Talau 2019 Table 3: memory 97 kB, min_th = memory/12, max_th = memory/4.
        let p = red_params(json!({ "kind": "red", "limit": "97KB" }));
        assert!((p.min_th - 97_000.0 / 12.0).abs() < 1e-9);
        assert!((p.max_th - 97_000.0 / 4.0).abs() < 1e-9);
        assert_eq!((p.q_w, p.max_p, p.gentle, p.ecn, p.adapt_interval), (0.002, 0.02, true, false, None));
        let a = red_params(json!({ "kind": "ared", "limit": "97KB" }));
        assert_eq!(a.adapt_interval, Some(Dur::from_millis(500)));
    }

    #[test]
    fn red_thresholds_in_bytes_or_packets() {
        // Byte limit: packets convert at 1500 B.
        let p = red_params(json!({ "kind": "red", "limit": "150KB", "min_th": "5p", "max_th": "30KB" }));
        assert_eq!((p.min_th, p.max_th), (7500.0, 30_000.0));
        // Packet limit: the queue is counted in packets, bytes convert at 1500 B.
        let p = red_params(json!({ "kind": "red", "limit": "100p", "min_th": "15KB" }));
        assert_eq!((p.min_th, p.max_th), (10.0, 30.0));
        let p = red_params(json!({ "kind": "red", "limit": "120p" }));
        assert_eq!((p.min_th, p.max_th), (10.0, 30.0));
    }

    #[test]
    fn red_bad_thresholds_name_their_key() {
        let (p, m) = error_of(json!({ "kind": "red", "limit": "100KB", "min_th": "20KB", "max_th": "10KB" }));
        assert_eq!(p, "topology.bottleneck_queue.min_th");
        assert!(m.contains("must be below max_th"), "{m}");
        let (p, _) = error_of(json!({ "kind": "red", "limit": "100KB", "min_th": "10KB", "max_th": "10KB" }));
        assert_eq!(p, "topology.bottleneck_queue.min_th");
        let (p, m) = error_of(json!({ "kind": "red", "limit": "100KB", "max_th": "200KB" }));
        assert_eq!(p, "topology.bottleneck_queue.max_th");
        assert!(m.contains("queue limit"), "{m}");
        let (p, _) = error_of(json!({ "kind": "red", "limit": "100KB", "min_th": "lots" }));
        assert_eq!(p, "topology.bottleneck_queue.min_th");
    }

    #[test]
    fn probabilities_outside_zero_one_are_rejected() {
        let (p, m) = error_of(json!({ "kind": "red", "max_p": 1.5 }));
        assert_eq!(p, "topology.bottleneck_queue.max_p");
        assert!(m.contains("[0, 1]"), "{m}");
        assert_eq!(error_of(json!({ "kind": "ared", "max_p": -0.1 })).0, "topology.bottleneck_queue.max_p");
        assert_eq!(error_of(json!({ "kind": "red", "q_w": 0.0 })).0, "topology.bottleneck_queue.q_w");
        assert_eq!(error_of(json!({ "kind": "red", "q_w": 2 })).0, "topology.bottleneck_queue.q_w");
    }

    #[test]
    fn each_kind_accepts_only_its_own_keys() {
        let (p, m) = error_of(json!({ "kind": "codel", "max_p": 0.1 }));
        assert_eq!(p, "topology.bottleneck_queue.max_p");
        assert!(m.contains("allowed: kind, limit, target, interval, ecn"), "{m}");
        let (p, m) = error_of(json!({ "kind": "red", "interval": "1s" }));
        assert_eq!(p, "topology.bottleneck_queue.interval");
        assert!(m.contains("allowed: kind, limit, min_th"), "{m}");
        assert_eq!(error_of(json!({ "kind": "droptail", "target": "5ms" })).0, "topology.bottleneck_queue.target");
        assert_eq!(error_of(json!({ "target": "5ms" })).0, "topology.bottleneck_queue.target");
        assert_eq!(error_of(json!({ "kind": "pie", "gentle": true })).0, "topology.bottleneck_queue.gentle");
        let (p, m) = error_of(json!({ "kind": "fq_codel" }));
        assert_eq!(p, "topology.bottleneck_queue.kind");
        assert!(m.contains("known: droptail, red, ared, codel, pie"), "{m}");
    }

    #[test]
    fn codel_and_pie_defaults_and_checks() {
        match parse(json!({ "kind": "codel" })).unwrap() {
            QueueCfg { kind: QueueKind::Codel(c), limit } => {
                assert_eq!(limit, QueueLimit::Packets(1000));
                assert_eq!(c, CodelParams { target: Dur::from_millis(5), interval: Dur::from_millis(100), ecn: false });
            }
            q => panic!("{q:?}"),
        }
        match parse(json!({ "kind": "pie", "ecn": true })).unwrap().kind {
            QueueKind::Pie(p) => {
                assert_eq!(
                    (p.target, p.t_update, p.max_burst),
                    (Dur::from_millis(15), Dur::from_millis(15), Dur::from_millis(150))
                );
                assert_eq!((p.alpha, p.beta, p.ecn, p.derandomize), (0.125, 1.25, true, true));
            }
            k => panic!("{k:?}"),
        }
        assert_eq!(error_of(json!({ "kind": "codel", "target": "0ms" })).0, "topology.bottleneck_queue.target");
        assert_eq!(error_of(json!({ "kind": "pie", "alpha": -1 })).0, "topology.bottleneck_queue.alpha");
        assert_eq!(error_of(json!({ "kind": "pie", "t_update": "0s" })).0, "topology.bottleneck_queue.t_update");
        assert_eq!(error_of(json!({ "kind": "ared", "interval": "0s" })).0, "topology.bottleneck_queue.interval");
    }
}
