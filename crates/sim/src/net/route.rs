//! Routes: the fixed sequence of links a flow's packets take in one direction, ending at an
//! endpoint. Routing is per flow (the builders' trees, a graph's static routes or shortest
//! paths with per-flow ECMP: config/topology/routes.rs), so a route per flow direction is
//! exact and saves a lookup per hop.

use crate::ids::{LinkId, SockId};

/// Enough for a fat-tree (host, edge, aggregation, core, aggregation, edge, host) and a
/// parking lot of six bottlenecks with its two access links.
pub const MAX_HOPS: usize = 8;

#[derive(Debug, Clone, Copy)]
pub struct Route {
    pub links: [LinkId; MAX_HOPS],
    pub len: u8,
    pub dst: SockId,
    /// The data direction (sender → receiver), as opposed to the ACK direction.
    pub forward: bool,
}

impl Route {
    pub fn new(path: &[LinkId], dst: SockId, forward: bool) -> Route {
        assert!(!path.is_empty() && path.len() <= MAX_HOPS);
        let mut links = [LinkId(0); MAX_HOPS];
        links[..path.len()].copy_from_slice(path);
        Route { links, len: path.len() as u8, dst, forward }
    }
}
