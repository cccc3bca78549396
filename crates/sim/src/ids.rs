//! Typed indices into the world's vectors. Events and packets carry these, never pointers.

macro_rules! id_type {
    ($($(#[$m:meta])* $name:ident),*) => {$(
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub u32);
        impl $name {
            #[inline]
            pub fn idx(self) -> usize { self.0 as usize }
        }
    )*};
}

id_type!(
    /// A one-direction link.
    LinkId,
    /// A transport endpoint (one side of a connection).
    SockId,
    /// A flow: a connection between two endpoints, as listed in the scenario.
    FlowId,
    /// A packet slot in the pool.
    PacketId,
    /// A precomputed path through the topology.
    RouteId
);
