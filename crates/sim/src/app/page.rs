//! The page application: a web page of `objects` objects, `size` bytes in all, loaded over
//! up to six persistent connections (HTTP/1.1 browsers' per-host limit) or over one
//! connection with every request in flight at once (`multiplex`, HTTP/2-like). The world runs
//! it (world/page.rs); this is its configuration and its object sizes.

use crate::units::Dur;

/// Default page: the HTTP Archive Web Almanac 2024 median page (October 2024 crawl:
/// 2,311 KB / 66 requests on mobile, 2,652 KB / 71 requests on desktop), rounded to 2 MB and
/// 70 objects; the HTML is that chapter's median HTML size, 18 KB (docs/latency-under-load.md).
pub const DEFAULT_OBJECTS: u32 = 70;
pub const DEFAULT_SIZE: u64 = 2_000_000;
pub const DEFAULT_HTML: u64 = 18_000;
/// HTTP/1.1 browsers open at most six connections per host (RFC 9112 sets no number; Chrome,
/// Firefox and Safari all use six).
pub const MAX_CONNECTIONS: u32 = 6;

/// A page flow's settings. The flow's `size` is the page's total; `request` bytes per request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageCfg {
    pub objects: u32,
    /// The HTML's size (object 0, fetched alone first).
    pub html: u64,
    pub connections: u32,
    pub multiplex: bool,
    pub request: u64,
    pub think: Dur,
    /// Pages to load (None: until the run ends).
    pub pages: Option<u32>,
}

impl PageCfg {
    /// The size of object `k` of a page of `total` bytes: the HTML first, the rest split
    /// evenly (the first ones a byte larger when it does not divide). A fixed split keeps the
    /// load time a hand calculation can check; with six connections the load time depends on
    /// the total and the round trips far more than on how the bytes are spread.
    pub fn object_size(&self, total: u64, k: u32) -> u64 {
        if k == 0 {
            return self.html.min(total);
        }
        let rest = total - self.html.min(total);
        let n = (self.objects - 1) as u64;
        rest / n + u64::from(((k - 1) as u64) < rest % n)
    }

    /// Connections a page opens: one when multiplexed, else at most one per object after the
    /// HTML (and at least the HTML's).
    pub fn conns_used(&self) -> u32 {
        if self.multiplex {
            1
        } else {
            self.connections.min((self.objects - 1).max(1))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_add_up_to_the_page() {
        let c = PageCfg {
            objects: 70,
            html: 18_000,
            connections: 6,
            multiplex: false,
            request: 400,
            think: Dur::ZERO,
            pages: None,
        };
        for total in [2_000_000u64, 18_000 + 69 * 7 + 5, 20_000] {
            let sum: u64 = (0..70).map(|k| c.object_size(total, k)).sum();
            assert_eq!(sum, total);
        }
        assert_eq!(c.object_size(2_000_000, 0), 18_000);
        assert_eq!(c.conns_used(), 6);
        assert_eq!(PageCfg { objects: 3, ..c }.conns_used(), 2);
        assert_eq!(PageCfg { multiplex: true, ..c }.conns_used(), 1);
    }
}
