//! Values the parameter tables of several algorithms share: amounts of queue (bytes or
//! packets), positive durations, DSCP names, and numbers as error messages print them.

use super::{as_str, err, size, Res, Table};
use crate::units::Dur;
use crate::wire::MTU_BYTES;
use serde_json::Value;

/// An amount of queue: a size ("30KB") or a packet count ("20p", fractions allowed), in
/// bytes. Packets count MTU_BYTES each, as packet queue limits do.
pub fn amount_bytes(path: &str, v: &Value) -> Res<f64> {
    let s = as_str(path, v).map_err(|mut e| {
        e.message = "expected a size such as \"30KB\" or a packet count such as \"20p\"".into();
        e
    })?;
    if let Some(n) = s.strip_suffix('p') {
        match n.trim().parse::<f64>() {
            Ok(p) if p.is_finite() && p >= 0.0 => Ok(p * MTU_BYTES as f64),
            _ => err(path, format!("invalid packet count \"{s}\" (expected e.g. \"20p\")")),
        }
    } else {
        size(path, v).map(|b| b as f64).map_err(|mut e| {
            e.message = format!("{} or a packet count such as \"20p\"", e.message);
            e
        })
    }
}

/// An optional duration key that must be greater than zero, with its default.
pub fn positive_duration(t: &mut Table, key: &'static str, default: Dur) -> Res<Dur> {
    let p = t.key_path(key);
    match t.opt_duration(key)? {
        Some(Dur(0)) => err(&p, "must be greater than 0 (got \"0s\")"),
        d => Ok(d.unwrap_or(default)),
    }
}

/// The codepoint of a DSCP name (RFC 2474, 2597, 3246, 5865, 8622).
pub fn dscp_by_name(s: &str) -> Option<u8> {
    let u = s.to_ascii_uppercase();
    match u.as_str() {
        "BE" | "DF" => return Some(0),
        "LE" => return Some(1),
        "EF" => return Some(46),
        "VA" => return Some(44),
        _ => {}
    }
    let digits = |r: &str| r.chars().map(|c| c.to_digit(10)).collect::<Option<Vec<u32>>>();
    if let Some(r) = u.strip_prefix("CS") {
        if let Some([x]) = digits(r).as_deref() {
            return (*x <= 7).then_some((*x * 8) as u8);
        }
    }
    if let Some(r) = u.strip_prefix("AF") {
        if let Some([x, y]) = digits(r).as_deref() {
            return ((1..=4).contains(x) && (1..=3).contains(y)).then_some((*x * 8 + *y * 2) as u8);
        }
    }
    None
}

/// A number without a useless fraction ("8083.33", "20").
pub fn fmt_num(x: f64) -> String {
    if (x - x.round()).abs() < 1e-9 {
        format!("{}", x.round() as i64)
    } else {
        format!("{x:.2}")
    }
}
