//! Windowed running maximum (Kathleen Nichols' algorithm, as used by Linux `lib/minmax.c` for
//! BBR's bandwidth filter): the best, second-best and third-best samples of the window are
//! kept, each newer than the one before, so the maximum over a sliding window costs O(1)
//! memory and time. Time is an abstract counter (BBR uses its round-trip count).

#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Sample {
    t: u64,
    v: f64,
}

#[derive(Debug, Clone, Default)]
pub struct MaxFilter {
    s: [Sample; 3],
}

impl MaxFilter {
    /// The current windowed maximum (0 before any sample).
    pub fn get(&self) -> f64 {
        self.s[0].v
    }

    /// Forgets everything and starts over with one sample.
    pub fn reset(&mut self, t: u64, v: f64) -> f64 {
        let x = Sample { t, v };
        self.s = [x; 3];
        v
    }

    /// Feeds a sample taken at `t`; `win` is the window length in the same units.
    pub fn update(&mut self, win: u64, t: u64, v: f64) -> f64 {
        let x = Sample { t, v };
        if v >= self.s[0].v || t.saturating_sub(self.s[2].t) > win {
            return self.reset(t, v); // a new best, or nothing left in the window
        }
        if v >= self.s[1].v {
            self.s[1] = x;
            self.s[2] = x;
        } else if v >= self.s[2].v {
            self.s[2] = x;
        }
        self.subwin_update(win, x)
    }

    /// Ages the kept samples: when the best has left the window, the others move up; a
    /// second (third) best that is as old as the best is refreshed after a quarter (half)
    /// window, so the filter always holds samples from different parts of the window.
    fn subwin_update(&mut self, win: u64, x: Sample) -> f64 {
        let dt = x.t.saturating_sub(self.s[0].t);
        if dt > win {
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = x;
            if x.t.saturating_sub(self.s[0].t) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = x;
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            self.s[1] = x;
            self.s[2] = x;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            self.s[2] = x;
        }
        self.s[0].v
    }
}

/// Exact windowed maximum over the last `N` rounds: one slot per round holding that round's
/// best sample. DCCP-BBR's bandwidth filter (its results were made with it; [`MaxFilter`]'s
/// three samples can lag the exact maximum by a sub-window).
#[derive(Debug, Clone)]
pub struct RoundMax<const N: usize> {
    slots: [(u64, f64); N],
    newest: u64,
}

impl<const N: usize> Default for RoundMax<N> {
    fn default() -> Self {
        RoundMax { slots: [(0, 0.0); N], newest: 0 }
    }
}

impl<const N: usize> RoundMax<N> {
    pub fn update(&mut self, round: u64, v: f64) {
        let s = &mut self.slots[(round % N as u64) as usize];
        if s.0 != round {
            *s = (round, v);
        } else if v > s.1 {
            s.1 = v;
        }
        self.newest = round;
    }

    /// The maximum over the rounds (newest − N, newest] (0 before any sample).
    pub fn get(&self) -> f64 {
        self.slots.iter().filter(|(r, _)| *r + N as u64 > self.newest).fold(0.0, |m, &(_, v)| {
            if v > m {
                v
            } else {
                m
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_max_for_the_window_then_forgets_it() {
        let mut f = MaxFilter::default();
        f.update(10, 0, 100.0);
        for t in 1..=10 {
            assert_eq!(f.update(10, t, 50.0 + t as f64), 100.0, "t={t}");
        }
        // The 100 sample (t=0) is older than the window at t=11: the best later one remains.
        assert_eq!(f.update(10, 11, 40.0), 60.0);
        // A new maximum takes over at once.
        assert_eq!(f.update(10, 12, 500.0), 500.0);
    }

    #[test]
    fn matches_a_brute_force_window_max_on_a_decreasing_sequence() {
        let mut f = MaxFilter::default();
        let vals: Vec<f64> = (0..50).map(|i| 1000.0 - 7.0 * i as f64).collect();
        for (t, &v) in vals.iter().enumerate() {
            let got = f.update(10, t as u64, v);
            // On a decreasing sequence the window max is the oldest sample still inside, and
            // the three-sample filter can lag by at most one sub-window; it is never below the
            // newest sample and never above the true window max.
            let lo = t.saturating_sub(10);
            let exact = vals[lo..=t].iter().cloned().fold(f64::MIN, f64::max);
            assert!(got <= exact && got >= v, "t={t}: got {got}, exact {exact}");
        }
    }
}
