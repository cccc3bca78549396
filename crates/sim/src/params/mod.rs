//! Reading parameters, the bottom layer every parameterised part reads its settings with: a
//! path-tracking reader over a JSON value and its error type. Every error names the key path
//! in the contract's form (`topology.bottleneck.rate`, `flows[0].cc`) and says what is
//! allowed, and every key a table does not consume is reported as unknown, with the allowed
//! keys listed. The algorithms (`cc`, `queue`, `gateway`, `tcp::rwnd`) parse their own keys
//! with it; `config` composes them into a scenario. It reads nothing above `units` and `wire`.

mod amounts;
pub mod plugin;

pub use amounts::{amount_bytes, dscp_by_name, fmt_num, positive_duration};

use crate::units::{self, Dur, Rate};
use serde_json::{Map, Value};
use std::fmt;

/// An invalid scenario: the key path (`flows[0].cc`) and what is wrong / allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    pub path: String,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

pub type Res<T> = Result<T, ScenarioError>;

pub fn err<T>(path: &str, message: impl Into<String>) -> Res<T> {
    Err(ScenarioError { path: path.to_string(), message: message.into() })
}

pub fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_string()
    } else {
        format!("{parent}.{key}")
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a float",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "a table",
    }
}

/// A table being read: remembers which keys were consumed.
pub struct Table<'a> {
    pub path: String,
    map: &'a Map<String, Value>,
    used: Vec<&'static str>,
}

impl<'a> Table<'a> {
    pub fn new(path: &str, v: &'a Value) -> Res<Table<'a>> {
        match v {
            Value::Object(map) => Ok(Table { path: path.to_string(), map, used: Vec::new() }),
            other => err(path, format!("expected a table, got {}", type_name(other))),
        }
    }

    pub fn key_path(&self, key: &str) -> String {
        join(&self.path, key)
    }

    /// The raw value of `key`, if present (marks it as known).
    pub fn get(&mut self, key: &'static str) -> Option<&'a Value> {
        self.used.push(key);
        self.map.get(key)
    }

    pub fn has(&self, key: &str) -> bool {
        self.map.contains_key(key)
    }

    pub fn require(&mut self, key: &'static str) -> Res<&'a Value> {
        let p = self.key_path(key);
        self.get(key).map_or_else(|| err(&p, "missing required key"), Ok)
    }

    /// Fails on any key not consumed so far, listing `allowed` (all keys this table accepts).
    pub fn finish(self, allowed: &[&str]) -> Res<()> {
        let mut keys: Vec<&String> = self.map.keys().collect();
        keys.sort();
        for k in keys {
            if !self.used.iter().any(|u| u == k) {
                return err(
                    &self.key_path(k),
                    format!("unknown key (allowed: {})", allowed.join(", ")),
                );
            }
        }
        Ok(())
    }

    pub fn opt_str(&mut self, key: &'static str) -> Res<Option<&'a str>> {
        let p = self.key_path(key);
        match self.get(key) {
            None => Ok(None),
            Some(v) => as_str(&p, v).map(Some),
        }
    }

    pub fn opt_bool(&mut self, key: &'static str) -> Res<Option<bool>> {
        let p = self.key_path(key);
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(v) => err(&p, format!("expected true or false, got {}", type_name(v))),
        }
    }

    /// An integer in [min, max].
    pub fn opt_int(&mut self, key: &'static str, min: i64, max: i64) -> Res<Option<i64>> {
        let p = self.key_path(key);
        match self.get(key) {
            None => Ok(None),
            Some(v) => as_int(&p, v, min, max).map(Some),
        }
    }

    /// A float in [min, max) (or [min, max] when `max_inclusive`).
    pub fn opt_f64(
        &mut self,
        key: &'static str,
        min: f64,
        max: f64,
        max_inclusive: bool,
    ) -> Res<Option<f64>> {
        let p = self.key_path(key);
        match self.get(key) {
            None => Ok(None),
            Some(v) => {
                let x = match v {
                    Value::Number(n) => n.as_f64().unwrap_or(f64::NAN),
                    other => {
                        return err(&p, format!("expected a number, got {}", type_name(other)))
                    }
                };
                let above = if max_inclusive { x > max } else { x >= max };
                if !x.is_finite() || x < min || above {
                    let close = if max_inclusive { "]" } else { ")" };
                    return err(&p, format!("must be in [{min}, {max}{close} (got {x})"));
                }
                Ok(Some(x))
            }
        }
    }

    pub fn opt_duration(&mut self, key: &'static str) -> Res<Option<Dur>> {
        let p = self.key_path(key);
        match self.get(key) {
            None => Ok(None),
            Some(v) => duration(&p, v).map(Some),
        }
    }

    pub fn opt_rate(&mut self, key: &'static str) -> Res<Option<Rate>> {
        let p = self.key_path(key);
        match self.get(key) {
            None => Ok(None),
            Some(v) => rate(&p, v).map(Some),
        }
    }

    pub fn opt_size(&mut self, key: &'static str) -> Res<Option<u64>> {
        let p = self.key_path(key);
        match self.get(key) {
            None => Ok(None),
            Some(v) => size(&p, v).map(Some),
        }
    }

    /// A name from a fixed list.
    pub fn opt_choice(
        &mut self,
        key: &'static str,
        what: &str,
        known: &[&'static str],
    ) -> Res<Option<&'static str>> {
        let p = self.key_path(key);
        match self.get(key) {
            None => Ok(None),
            Some(v) => choice(&p, v, what, known).map(Some),
        }
    }
}

pub fn as_str<'a>(path: &str, v: &'a Value) -> Res<&'a str> {
    match v {
        Value::String(s) => Ok(s),
        other => err(path, format!("expected a string, got {}", type_name(other))),
    }
}

pub fn as_int(path: &str, v: &Value, min: i64, max: i64) -> Res<i64> {
    let n = match v {
        Value::Number(n) if n.is_i64() || n.is_u64() => n.as_i64().unwrap_or(i64::MAX),
        other => return err(path, format!("expected an integer, got {}", type_name(other))),
    };
    if n < min || n > max {
        return err(path, format!("must be an integer in [{min}, {max}] (got {n})"));
    }
    Ok(n)
}

pub fn choice(path: &str, v: &Value, what: &str, known: &[&'static str]) -> Res<&'static str> {
    let s = as_str(path, v)?;
    known.iter().find(|k| **k == s).copied().map_or_else(
        || err(path, format!("unknown {what} \"{s}\" (known: {})", known.join(", "))),
        Ok,
    )
}

pub fn duration(path: &str, v: &Value) -> Res<Dur> {
    let s = as_str(path, v).map_err(|_| ScenarioError {
        path: path.into(),
        message: format!(
            "expected a duration string with a unit ({}), e.g. \"20ms\"",
            units::TIME_UNITS
        ),
    })?;
    match units::parse_duration(s) {
        Some(ns) if ns >= 0.0 => Ok(Dur(ns.round() as u64)),
        Some(_) => err(path, format!("must not be negative (got \"{s}\")")),
        None => err(
            path,
            format!(
                "invalid duration \"{s}\" (expected a number and a unit: {}; e.g. \"20ms\")",
                units::TIME_UNITS
            ),
        ),
    }
}

pub fn rate(path: &str, v: &Value) -> Res<Rate> {
    let s = as_str(path, v).map_err(|_| ScenarioError {
        path: path.into(),
        message: format!(
            "expected a rate string with a unit ({}), e.g. \"10Mbps\"",
            units::RATE_UNITS
        ),
    })?;
    match units::parse_rate(s) {
        Some(bps) if bps >= 1.0 => Ok(Rate(bps.round() as u64)),
        Some(_) => err(path, format!("must be greater than 0 (got \"{s}\")")),
        None => err(
            path,
            format!(
                "invalid rate \"{s}\" (expected a number and a unit: {}; e.g. \"10Mbps\")",
                units::RATE_UNITS
            ),
        ),
    }
}

pub fn size(path: &str, v: &Value) -> Res<u64> {
    let s = as_str(path, v).map_err(|_| ScenarioError {
        path: path.into(),
        message: format!(
            "expected a size string with a unit ({}), e.g. \"500KB\"",
            units::SIZE_UNITS
        ),
    })?;
    match units::parse_size(s) {
        Some(b) if b >= 0.0 => Ok(b.round() as u64),
        Some(_) => err(path, format!("must not be negative (got \"{s}\")")),
        None => err(
            path,
            format!(
                "invalid size \"{s}\" (expected a number and a unit: {}; e.g. \"500KB\")",
                units::SIZE_UNITS
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_keys_are_named_with_their_path() {
        let v = json!({"rate": "1Mbps", "rait": 3});
        let mut t = Table::new("topology.bottleneck", &v).unwrap();
        t.opt_rate("rate").unwrap();
        let e = t.finish(&["rate", "delay"]).unwrap_err();
        assert_eq!(e.path, "topology.bottleneck.rait");
        assert!(e.message.contains("allowed: rate, delay"), "{}", e.message);
    }

    #[test]
    fn wrong_units_and_types_are_explained() {
        let e = rate("x", &json!("10Mbit")).unwrap_err();
        assert!(e.message.contains("Mbps"));
        let e = duration("d", &json!(5)).unwrap_err();
        assert!(e.message.contains("ms"));
        let e = rate("x", &json!("0Mbps")).unwrap_err();
        assert!(e.message.contains("greater than 0"));
        let e = choice("flows[0].cc", &json!("cubik"), "congestion control", &["reno", "newreno"])
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "flows[0].cc: unknown congestion control \"cubik\" (known: reno, newreno)"
        );
    }
}
