//! Queue-discipline settings: `topology.*_queue = { kind = ..., limit = ..., <params> }`.
//! Each discipline accepts only its own parameters.

use super::reader::{self, err, Res, Table};
use super::{QueueCfg, QueueKind, QueueLimit};
use serde_json::Value;

const QUEUE_KEYS: &[&str] = &["kind", "limit"];
const QUEUE_KINDS: &[&str] = &["droptail"];

pub(super) fn queue(path: &str, v: Option<&Value>) -> Res<QueueCfg> {
    let default = QueueCfg { kind: QueueKind::DropTail, limit: QueueLimit::Packets(1000) };
    let Some(v) = v else { return Ok(default) };
    let mut t = Table::new(path, v)?;
    let kind = match t.opt_choice("kind", "queue discipline", QUEUE_KINDS)? {
        None | Some("droptail") => QueueKind::DropTail,
        Some(_) => unreachable!("choice() only returns known kinds"),
    };
    let limit = match t.get("limit") {
        None => default.limit,
        Some(lv) => queue_limit(&t.key_path("limit"), lv)?,
    };
    t.finish(QUEUE_KEYS)?;
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

