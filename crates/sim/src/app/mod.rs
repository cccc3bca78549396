//! Applications: what drives a connection's sender and what its receiver expects.

use crate::config::AppKind;

/// Bytes an unlimited (bulk) source writes: effectively infinite, with headroom to add to.
pub const UNLIMITED: u64 = u64::MAX / 4;

/// What the sending application writes when the flow starts, and what the receiving
/// application waits for.
pub fn initial_write(kind: AppKind, size: Option<u64>) -> (u64, Option<u64>) {
    match kind {
        AppKind::Bulk => (UNLIMITED, None),
        AppKind::Cbr | AppKind::Probe | AppKind::Voip => (size.unwrap_or(UNLIMITED), size),
        AppKind::Web(_) => unreachable!("the world drives web flows request by request"),
        AppKind::File => {
            let s = size.expect("file flows are validated to have a size");
            (s, Some(s))
        }
    }
}
