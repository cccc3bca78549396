//! Units as types: simulated time in integer nanoseconds, rates in bits per second, sizes in
//! bytes. Mixing them up is a compile error; conversions are explicit and exact where they can be.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

pub const NANOS_PER_SEC: u64 = 1_000_000_000;

/// An instant of simulated time, in nanoseconds since the start of the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct SimTime(pub u64);

/// A span of simulated time, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Dur(pub u64);

/// A data rate in bits per second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Rate(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);
    #[inline]
    pub fn secs_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_SEC as f64
    }
    /// Time elapsed since `earlier` (zero if `earlier` is later).
    #[inline]
    pub fn since(self, earlier: SimTime) -> Dur {
        Dur(self.0.saturating_sub(earlier.0))
    }
}

impl Dur {
    pub const ZERO: Dur = Dur(0);
    pub const MAX: Dur = Dur(u64::MAX);
    #[inline]
    pub const fn from_millis(ms: u64) -> Dur {
        Dur(ms * 1_000_000)
    }
    #[inline]
    pub const fn from_micros(us: u64) -> Dur {
        Dur(us * 1_000)
    }
    #[inline]
    pub const fn from_secs(s: u64) -> Dur {
        Dur(s * NANOS_PER_SEC)
    }
    #[inline]
    pub fn secs_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_SEC as f64
    }
    #[inline]
    pub fn millis_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
    #[inline]
    pub fn from_secs_f64(s: f64) -> Dur {
        Dur((s * NANOS_PER_SEC as f64).round().max(0.0) as u64)
    }
    #[inline]
    pub fn saturating_sub(self, o: Dur) -> Dur {
        Dur(self.0.saturating_sub(o.0))
    }
    #[inline]
    pub fn mul_f64(self, k: f64) -> Dur {
        Dur((self.0 as f64 * k).round().max(0.0) as u64)
    }
}

impl Rate {
    #[inline]
    pub fn bps(self) -> u64 {
        self.0
    }
    #[inline]
    pub fn mbps_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
    /// Bytes per second as a float (for controllers that compute with rates).
    #[inline]
    pub fn bytes_per_sec(self) -> f64 {
        self.0 as f64 / 8.0
    }
    #[inline]
    pub fn from_bytes_per_sec(bps: f64) -> Rate {
        Rate((bps * 8.0).round().max(0.0) as u64)
    }
    /// Time to serialize `bytes` at this rate, rounded up to the next nanosecond so a link
    /// never exceeds its rate.
    #[inline]
    pub fn tx_time(self, bytes: u64) -> Dur {
        debug_assert!(self.0 > 0);
        let bits = bytes as u128 * 8 * NANOS_PER_SEC as u128;
        Dur(bits.div_ceil(self.0 as u128) as u64)
    }
    /// Bytes carried in `d` at this rate (rounded down).
    #[inline]
    pub fn bytes_in(self, d: Dur) -> u64 {
        (self.0 as u128 * d.0 as u128 / (8 * NANOS_PER_SEC as u128)) as u64
    }
}

impl Add<Dur> for SimTime {
    type Output = SimTime;
    #[inline]
    fn add(self, d: Dur) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
}
impl AddAssign<Dur> for SimTime {
    #[inline]
    fn add_assign(&mut self, d: Dur) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Sub<SimTime> for SimTime {
    type Output = Dur;
    #[inline]
    fn sub(self, o: SimTime) -> Dur {
        debug_assert!(self.0 >= o.0, "negative time span");
        Dur(self.0 - o.0)
    }
}
impl Add for Dur {
    type Output = Dur;
    #[inline]
    fn add(self, o: Dur) -> Dur {
        Dur(self.0.saturating_add(o.0))
    }
}
impl AddAssign for Dur {
    #[inline]
    fn add_assign(&mut self, o: Dur) {
        self.0 = self.0.saturating_add(o.0);
    }
}
impl Sub for Dur {
    type Output = Dur;
    #[inline]
    fn sub(self, o: Dur) -> Dur {
        Dur(self.0.saturating_sub(o.0))
    }
}

impl fmt::Display for Dur {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.0;
        if ns == 0 {
            write!(f, "0s")
        } else if ns.is_multiple_of(NANOS_PER_SEC) {
            write!(f, "{}s", ns / NANOS_PER_SEC)
        } else if ns.is_multiple_of(1_000_000) {
            write!(f, "{}ms", ns / 1_000_000)
        } else if ns.is_multiple_of(1_000) {
            write!(f, "{}us", ns / 1_000)
        } else {
            write!(f, "{ns}ns")
        }
    }
}

/// Parse a number with a unit suffix from a table of (suffix, multiplier). The number may be
/// fractional; the result is rounded to the nearest integer of the base unit.
fn parse_scaled(s: &str, table: &[(&str, f64)]) -> Option<f64> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let unit = unit.trim();
    let mult = table.iter().find(|(u, _)| *u == unit)?.1;
    if num.is_empty() {
        return None;
    }
    let v: f64 = num.parse().ok()?;
    if !v.is_finite() {
        return None;
    }
    Some(v * mult)
}

pub const RATE_UNITS: &str = "bps, Kbps, Mbps, Gbps";
pub const TIME_UNITS: &str = "ns, us, ms, s";
pub const SIZE_UNITS: &str = "B, KB, MB, GB (x1000), KiB, MiB, GiB (x1024)";

/// Parses "10Mbps", "2.5Gbps", "64Kbps" (also lowercase k). Negative values parse (and are
/// rejected by the caller with a "must be > 0" message).
pub fn parse_rate(s: &str) -> Option<f64> {
    parse_scaled(s, &[("bps", 1.0), ("Kbps", 1e3), ("kbps", 1e3), ("Mbps", 1e6), ("Gbps", 1e9)])
}

/// Parses "20ms", "1.5s", "250us", "10ns" into nanoseconds.
pub fn parse_duration(s: &str) -> Option<f64> {
    parse_scaled(s, &[("ns", 1.0), ("us", 1e3), ("ms", 1e6), ("s", 1e9)])
}

/// Parses "500KB", "64KiB", "1448B", "5MB" into bytes.
pub fn parse_size(s: &str) -> Option<f64> {
    parse_scaled(
        s,
        &[
            ("B", 1.0),
            ("KB", 1e3),
            ("MB", 1e6),
            ("GB", 1e9),
            ("KiB", 1024.0),
            ("MiB", 1024.0 * 1024.0),
            ("GiB", 1024.0 * 1024.0 * 1024.0),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units() {
        assert_eq!(parse_rate("10Mbps"), Some(10e6));
        assert_eq!(parse_rate("2.5Gbps"), Some(2.5e9));
        assert_eq!(parse_rate("64kbps"), Some(64e3));
        assert_eq!(parse_rate("10Mbit"), None);
        assert_eq!(parse_rate("Mbps"), None);
        assert_eq!(parse_duration("20ms"), Some(20e6));
        assert_eq!(parse_duration("1.5s"), Some(1.5e9));
        assert_eq!(parse_duration("20"), None);
        assert_eq!(parse_size("500KB"), Some(500e3));
        assert_eq!(parse_size("64KiB"), Some(65536.0));
        assert_eq!(parse_size("500p"), None);
    }

    #[test]
    fn tx_time_rounds_up_and_is_exact_for_round_rates() {
        assert_eq!(Rate(400_000_000).tx_time(1500), Dur(30_000));
        assert_eq!(Rate(2_000_000).tx_time(1500), Dur::from_millis(6));
        assert_eq!(Rate(3).tx_time(1), Dur(2_666_666_667));
        assert_eq!(Rate(8_000).bytes_in(Dur::from_secs(1)), 1000);
    }

    #[test]
    fn duration_display_round_trips() {
        for s in ["0s", "5s", "20ms", "250us", "7ns"] {
            let d = Dur(parse_duration(s).unwrap() as u64);
            assert_eq!(d.to_string(), s);
        }
    }
}
