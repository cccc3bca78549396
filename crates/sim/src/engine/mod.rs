//! The discrete-event core: a time-ordered event queue with deterministic tie-breaking and
//! per-component random streams.

// The prefetch intrinsic is the crate's one `unsafe`: see the module's SAFETY notes.
mod event;
mod heap;
mod lane;
#[allow(unsafe_code)]
mod prefetch;
mod queue;
mod rng;
mod timers;

pub use event::{Actors, Event, TimerKind};
pub use prefetch::{line_span, prefetch, prefetch_addr, prefetch_lines};
pub use queue::EventQueue;
pub use rng::{SimRng, Stream};
