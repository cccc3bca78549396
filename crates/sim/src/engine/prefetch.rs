//! Asking the CPU to start loading memory the loop will touch one event from now. At
//! thousands of links and sockets, and millions of packets waiting in queues, most of an
//! event's time is spent waiting for the link, packet or socket it names to come from memory;
//! the event after the current one is known (the heap's top), so its state can be on its way
//! while the current event runs. A hint only: it never changes what the program computes.
//!
//! The crate's only `unsafe` (the prefetch instruction's intrinsic) is here, allowed for
//! this module alone. With the `no-prefetch` feature every function is a no-op.

/// Prefetches the first `max_lines` cache lines (64 bytes) of `*r` (at most 64) into all
/// cache levels.
#[inline(always)]
pub fn prefetch<T: ?Sized>(r: &T, max_lines: usize) {
    prefetch_lines(r, if max_lines >= 64 { u64::MAX } else { (1u64 << max_lines) - 1 });
}

/// Prefetches the cache lines of `*r` whose bits are set in `lines` (bit i: bytes 64·i to
/// 64·i + 63), for structures whose hot fields are not all at the front.
#[inline(always)]
pub fn prefetch_lines<T: ?Sized>(r: &T, mut lines: u64) {
    #[cfg(all(target_arch = "x86_64", not(feature = "no-prefetch")))]
    {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let base = r as *const T as *const i8;
        let n = std::mem::size_of_val(r).div_ceil(64);
        if n < 64 {
            lines &= (1u64 << n) - 1;
        }
        while lines != 0 {
            let i = lines.trailing_zeros() as usize;
            lines &= lines - 1;
            // SAFETY: SSE is part of the x86_64 baseline; a prefetch reads nothing the program
            // sees and never faults, and the line is inside `*r` anyway.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(base.wrapping_add(i * 64)) };
        }
    }
    #[cfg(not(all(target_arch = "x86_64", not(feature = "no-prefetch"))))]
    {
        let _ = (r, lines);
    }
}

/// Prefetches the cache line holding `p` (any address: a prefetch never faults).
#[inline(always)]
pub fn prefetch_addr(p: *const u8) {
    #[cfg(all(target_arch = "x86_64", not(feature = "no-prefetch")))]
    // SAFETY: as above; the address need not be valid.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
    };
    #[cfg(not(all(target_arch = "x86_64", not(feature = "no-prefetch"))))]
    let _ = p;
}

/// The bits of the cache lines that bytes `start .. start + len` of a structure fall in.
pub const fn line_span(start: usize, len: usize) -> u64 {
    let (first, last) = (start / 64, (start + len).div_ceil(64));
    let mut m = 0u64;
    let mut i = first;
    while i < last && i < 64 {
        m |= 1 << i;
        i += 1;
    }
    m
}
