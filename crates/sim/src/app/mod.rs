//! Applications: what drives a connection's sender and what its receiver expects.

pub mod rpm;

use crate::units::Dur;

pub mod page;
pub use page::PageCfg;
pub mod video;
pub use video::VideoCfg;

/// Bytes an unlimited (bulk) source writes: effectively infinite, with headroom to add to.
pub const UNLIMITED: u64 = u64::MAX / 4;

/// What the sending application writes when the flow starts, and what the receiving
/// application waits for.
pub fn initial_write(kind: AppKind, size: Option<u64>) -> (u64, Option<u64>) {
    match kind {
        AppKind::Bulk => (UNLIMITED, None),
        AppKind::Cbr | AppKind::Probe | AppKind::Voip | AppKind::Video(_) => {
            (size.unwrap_or(UNLIMITED), size)
        }
        AppKind::Web(_) => unreachable!("the world drives web flows request by request"),
        AppKind::Page(_) => unreachable!("the world drives page flows object by object"),
        AppKind::File => {
            let s = size.expect("file flows are validated to have a size");
            (s, Some(s))
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppKind {
    Bulk,
    File,
    /// Constant bit rate (UDP).
    Cbr,
    /// Echoed latency probes (UDP).
    Probe,
    /// Voice-like frames (UDP).
    Voip,
    /// Request/response over a new connection each time, with think time (TCP).
    Web(WebCfg),
    /// Web pages of many objects over persistent parallel connections (TCP, app/page.rs).
    Page(PageCfg),
    /// Interactive video with a rate controller (UDP, app/video/, udp/video.rs).
    Video(VideoCfg),
}

/// The web application: the receiving side connects and sends `request` bytes, the sending
/// side answers `size` (the flow's size) bytes; after `think` the next request starts on a new
/// connection; `requests` of them (None: until the run ends).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WebCfg {
    pub request: u64,
    pub think: Dur,
    pub requests: Option<u32>,
}
