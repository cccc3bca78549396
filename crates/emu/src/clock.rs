//! The wall clock as the simulator's time: nanoseconds of CLOCK_MONOTONIC since a shared origin
//! `t0` (the controller picks it; the endpoints use the same clock, which network namespaces
//! do not change).

use bloatlab_sim::units::SimTime;

pub use crate::sys::monotonic_ns;

#[derive(Debug, Clone, Copy)]
pub struct Clock {
    pub t0_ns: u64,
}

impl Clock {
    /// Time since the origin; before it, zero (nothing is sent before the flows start).
    #[inline]
    pub fn now(&self) -> SimTime {
        SimTime(monotonic_ns().saturating_sub(self.t0_ns))
    }

    /// The absolute monotonic time of `t`.
    pub fn abs(&self, t: SimTime) -> u64 {
        self.t0_ns.saturating_add(t.0)
    }
}
