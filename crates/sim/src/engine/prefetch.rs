//! Asking the CPU to start loading memory the loop will touch one event from now. At
//! thousands of links and sockets, and millions of packets waiting in queues, most of an
//! event's time is spent waiting for the link, packet or socket it names to come from memory;
//! the event after the current one is known (the heap's top), so its state can be on its way
//! while the current event runs. A hint only: it never changes what the program computes.

/// Prefetches the first `max_lines` cache lines (64 bytes) of `*r` into all cache levels.
#[inline(always)]
pub fn prefetch<T>(r: &T, max_lines: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let base = r as *const T as *const i8;
        let lines = std::mem::size_of::<T>().div_ceil(64).min(max_lines);
        for i in 0..lines {
            // SAFETY: SSE is part of the x86_64 baseline; a prefetch reads nothing the program
            // sees and never faults, and the address is inside (or just past) `*r` anyway.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(base.wrapping_add(i * 64)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (r, max_lines);
    }
}
