//! Per-component random streams. Each component derives its own generator from the run seed and
//! a stable stream key, so adding a flow does not change the numbers another component draws.

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

#[derive(Debug, Clone)]
pub struct SimRng(Xoshiro256PlusPlus);

/// Stream families; combined with an index to form a stream key.
#[derive(Debug, Clone, Copy)]
pub enum Stream {
    LinkLoss = 1,
    FlowStart = 2,
    Queue = 3,
    Endpoint = 4,
    LinkRate = 5,
}

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl SimRng {
    pub fn new(run_seed: u64, stream: Stream, index: u64) -> SimRng {
        let key = splitmix(splitmix(run_seed) ^ splitmix(((stream as u64) << 48) ^ index));
        SimRng(Xoshiro256PlusPlus::seed_from_u64(key))
    }

    /// Uniform in [0, 1).
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        (self.0.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `p`.
    #[inline]
    pub fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && self.uniform() < p
    }

    /// Uniform integer in [lo, hi] (inclusive).
    pub fn range_u64(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        lo + (self.uniform() * ((hi - lo) as f64 + 1.0)).floor().min((hi - lo) as f64) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_independent() {
        let a: Vec<f64> = (0..5)
            .map({
                let mut r = SimRng::new(7, Stream::LinkLoss, 0);
                move |_| r.uniform()
            })
            .collect();
        let b: Vec<f64> = (0..5)
            .map({
                let mut r = SimRng::new(7, Stream::LinkLoss, 0);
                move |_| r.uniform()
            })
            .collect();
        let c: Vec<f64> = (0..5)
            .map({
                let mut r = SimRng::new(7, Stream::LinkLoss, 1);
                move |_| r.uniform()
            })
            .collect();
        let d: Vec<f64> = (0..5)
            .map({
                let mut r = SimRng::new(8, Stream::LinkLoss, 0);
                move |_| r.uniform()
            })
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
        assert!(a.iter().all(|x| (0.0..1.0).contains(x)));
    }

    #[test]
    fn chance_matches_probability() {
        let mut r = SimRng::new(1, Stream::LinkLoss, 3);
        let hits = (0..100_000).filter(|_| r.chance(0.01)).count();
        // Binomial(1e5, 0.01): sd ≈ 31; 5 sd.
        assert!((850..=1150).contains(&hits), "{hits}");
    }
}
