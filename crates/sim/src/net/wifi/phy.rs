//! The 802.11 PHY facts the MAC needs: slot and SIFS times, the default EDCA parameters per
//! access category, the HT (802.11n) and VHT (802.11ac) data rates from MCS, streams, width and
//! guard interval, and how long a PPDU of a given length is on the air.
//!
//! Source: IEEE Std 802.11-2016. Clause numbers beside each constant. Simplified: 5 GHz
//! OFDM timings only (no 2.4 GHz DSSS/ERP slot); the PSDU duration uses the formula of
//! 19.4.3 / 21.4.3 with one BCC encoder (N_ES = 1, so 6 tail bits); STBC and LDPC are not
//! modelled.

use crate::units::Dur;

/// aSlotTime, 5 GHz OFDM: 9 µs (Table 19-25 HT PHY characteristics; Table 21-28 VHT).
pub const SLOT: Dur = Dur(9_000);
/// aSIFSTime, 5 GHz: 16 µs (Table 19-25; Table 21-28).
pub const SIFS: Dur = Dur(16_000);
/// Legacy (non-HT) preamble and SIGNAL: L-STF 8 µs + L-LTF 8 µs + L-SIG 4 µs (17.3.2.4, Table
/// 17-5: T_PREAMBLE 16 µs, T_SIGNAL 4 µs).
pub const LEGACY_PREAMBLE: Dur = Dur(20_000);
/// The basic rate a block ACK is sent at: 24 Mbit/s OFDM, the highest mandatory rate
/// (17.3.5.2 / 10.7.6.5.2: control responses at a basic rate not above the data's).
pub const BA_RATE_DBPS: u64 = 96; // N_DBPS of 24 Mbit/s (Table 17-4)
/// A compressed BlockAck frame: FC 2 + Duration 2 + RA 6 + TA 6 + BA Control 2 + Starting
/// Sequence Control 2 + bitmap 8 + FCS 4 = 32 octets (9.3.1.9.1, Figure 9-32, 9.3.1.9.3).
pub const BLOCK_ACK_BYTES: u64 = 32;
/// OFDM symbol: 4 µs with the long guard interval, 3.6 µs with the short one (Table 19-6,
/// T_SYM / T_SYMS).
pub const SYMBOL_LONG_GI: Dur = Dur(4_000);
pub const SYMBOL_SHORT_GI: Dur = Dur(3_600);
/// SERVICE field (16 bits) and the BCC tail (6 bits per encoder) added to the PSDU
/// (19.3.11.2, 17.3.5.2).
pub const SERVICE_TAIL_BITS: u64 = 16 + 6;

/// The on-air time of a BlockAck at 24 Mbit/s: 20 µs + ⌈(16 + 256 + 6)/96⌉ = 3 symbols = 32 µs.
pub fn block_ack_time() -> Dur {
    let syms = (SERVICE_TAIL_BITS + 8 * BLOCK_ACK_BYTES).div_ceil(BA_RATE_DBPS);
    Dur(LEGACY_PREAMBLE.0 + syms * SYMBOL_LONG_GI.0)
}

/// An EDCA access category (10.22.2; UP → AC mapping Table 10-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ac {
    Bk,
    Be,
    Vi,
    Vo,
}

pub const AC_NAMES: &[&str] = &["bk", "be", "vi", "vo"];

impl Ac {
    pub fn from_name(s: &str) -> Option<Ac> {
        Some(match s {
            "bk" => Ac::Bk,
            "be" => Ac::Be,
            "vi" => Ac::Vi,
            "vo" => Ac::Vo,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        AC_NAMES[self as usize]
    }

    /// (AIFSN, CWmin, CWmax) of the default EDCA parameter set for a non-AP STA with the
    /// OFDM PHY's aCWmin = 15, aCWmax = 1023 (Table 9-155 in 9.4.2.29; the AP uses the same
    /// values here except AIFSN, see [`Ac::aifsn_ap`]).
    pub fn edca(self) -> (u32, u32, u32) {
        match self {
            Ac::Bk => (7, 15, 1023),
            Ac::Be => (3, 15, 1023),
            Ac::Vi => (2, 7, 15),
            Ac::Vo => (2, 3, 7),
        }
    }

    /// AIFS[AC] = AIFSN[AC] × aSlotTime + aSIFSTime (10.22.2.4).
    pub fn aifs(self) -> Dur {
        Dur(self.edca().0 as u64 * SLOT.0 + SIFS.0)
    }
}

/// PHY generation of a station's MCS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PhyKind {
    Ht,
    Vht,
}

/// How a station's data frames are sent: bits per symbol, symbol time and the preamble.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PhyRate {
    /// Data bits per OFDM symbol, all streams (N_DBPS; fractional when a rate is given
    /// directly rather than by MCS).
    pub dbps: f64,
    pub symbol: Dur,
    pub preamble: Dur,
}

impl PhyRate {
    /// A rate given directly (bit/s): long-GI symbols, the one-stream HT-mixed preamble.
    pub fn direct(bps: u64) -> PhyRate {
        PhyRate {
            dbps: bps as f64 * SYMBOL_LONG_GI.0 as f64 / 1e9,
            symbol: SYMBOL_LONG_GI,
            preamble: ht_preamble(1),
        }
    }

    /// The data rate in bit/s.
    pub fn bps(&self) -> f64 {
        self.dbps / (self.symbol.0 as f64 / 1e9)
    }

    /// The PPDU's on-air time for a PSDU (A-MPDU) of `bytes` octets:
    /// preamble + ⌈(16 + 8·L + 6)/N_DBPS⌉ · T_SYM (19.4.3 equation 19-92; 21.4.3).
    pub fn ppdu_time(&self, bytes: u64) -> Dur {
        let bits = (SERVICE_TAIL_BITS + 8 * bytes) as f64;
        let syms = (bits / self.dbps).ceil() as u64;
        Dur(self.preamble.0 + syms * self.symbol.0)
    }
}

/// HT-mixed preamble: L-STF 8 + L-LTF 8 + L-SIG 4 + HT-SIG 8 + HT-STF 4 + 4 µs per HT-LTF
/// (19.3.2 Figure 19-1; 19.4.3: N_LTF = 1, 2, 4, 4 for 1–4 streams, Table 19-13).
pub fn ht_preamble(streams: u32) -> Dur {
    let n_ltf = [1u64, 2, 4, 4][(streams.clamp(1, 4) - 1) as usize];
    Dur((32 + 4 * n_ltf) * 1000)
}

/// VHT preamble: L-STF 8 + L-LTF 8 + L-SIG 4 + VHT-SIG-A 8 + VHT-STF 4 + 4 µs per VHT-LTF +
/// VHT-SIG-B 4 (21.3.2 Figure 21-4, Table 21-5; N_VHTLTF = 1, 2, 4, 4, 6, 6, 8, 8, Table 21-13).
pub fn vht_preamble(streams: u32) -> Dur {
    let n_ltf = [1u64, 2, 4, 4, 6, 6, 8, 8][(streams.clamp(1, 8) - 1) as usize];
    Dur((36 + 4 * n_ltf) * 1000)
}

/// Bits per subcarrier and coding rate (numerator, denominator) of MCS 0–9 (Tables 19-27 ff.
/// and 21-30 ff.: BPSK 1/2, QPSK 1/2, QPSK 3/4, 16-QAM 1/2, 16-QAM 3/4, 64-QAM 2/3, 3/4, 5/6,
/// 256-QAM 3/4, 5/6).
const MCS: [(u64, u64, u64); 10] = [
    (1, 1, 2),
    (2, 1, 2),
    (2, 3, 4),
    (4, 1, 2),
    (4, 3, 4),
    (6, 2, 3),
    (6, 3, 4),
    (6, 5, 6),
    (8, 3, 4),
    (8, 5, 6),
];

/// Data subcarriers N_SD by channel width in MHz (Table 19-6 for HT; Table 21-5 for VHT).
fn data_subcarriers(width: u32) -> Option<u64> {
    Some(match width {
        20 => 52,
        40 => 108,
        80 => 234,
        160 => 468,
        _ => return None,
    })
}

/// The rate of an HT or VHT MCS (per-stream index 0–7 for HT, 0–9 for VHT; an HT index
/// 0–31 may also be given with the streams it implies), or why it does not exist.
pub fn mcs_rate(
    kind: PhyKind,
    mcs: u32,
    streams: u32,
    width: u32,
    short_gi: bool,
) -> Result<PhyRate, String> {
    let (max_ss, max_mcs, widths): (u32, u32, &[u32]) = match kind {
        PhyKind::Ht => (4, 7, &[20, 40]),
        PhyKind::Vht => (8, 9, &[20, 40, 80, 160]),
    };
    if !widths.contains(&width) {
        return Err(format!("width {width} MHz does not exist for this PHY (allowed: {widths:?})"));
    }
    if streams == 0 || streams > max_ss {
        return Err(format!("{streams} spatial streams: allowed 1..={max_ss}"));
    }
    if mcs > max_mcs {
        return Err(format!("MCS {mcs} does not exist (allowed 0..={max_mcs} per stream)"));
    }
    // VHT MCS that the standard leaves out because N_DBPS would not split evenly across the
    // encoders (21.5, the "not valid" rows of Tables 21-30 to 21-61).
    let invalid = kind == PhyKind::Vht
        && matches!(
            (width, mcs, streams),
            (20, 9, 1 | 2 | 4 | 5 | 7 | 8) | (80, 6, 3 | 7) | (80, 9, 6) | (160, 9, 3)
        );
    if invalid {
        return Err(format!(
            "VHT MCS {mcs} with {streams} stream(s) at {width} MHz is not a valid combination \
             (IEEE 802.11-2016 21.5)"
        ));
    }
    let (bpscs, num, den) = MCS[mcs as usize];
    let n_sd = data_subcarriers(width).expect("width checked");
    let dbps = (n_sd * bpscs * num * streams as u64) as f64 / den as f64;
    Ok(PhyRate {
        dbps,
        symbol: if short_gi { SYMBOL_SHORT_GI } else { SYMBOL_LONG_GI },
        preamble: match kind {
            PhyKind::Ht => ht_preamble(streams),
            PhyKind::Vht => vht_preamble(streams),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The standard's rate tables: HT MCS 7 at 20 MHz 65 / 72.2 Mbit/s (Table 19-27), MCS 15
    /// (2 streams) 130 / 144.4, MCS 0 6.5; VHT MCS 9, 80 MHz, 1 stream, short GI 433.3
    /// (Table 21-40).
    #[test]
    fn rates_match_the_tables() {
        let r = |k, m, s, w, g| mcs_rate(k, m, s, w, g).unwrap().bps() / 1e6;
        assert!((r(PhyKind::Ht, 7, 1, 20, false) - 65.0).abs() < 0.01);
        assert!((r(PhyKind::Ht, 7, 1, 20, true) - 72.22).abs() < 0.01);
        assert!((r(PhyKind::Ht, 7, 2, 20, true) - 144.44).abs() < 0.01);
        assert!((r(PhyKind::Ht, 0, 1, 20, false) - 6.5).abs() < 0.01);
        assert!((r(PhyKind::Vht, 9, 1, 80, true) - 433.33).abs() < 0.01);
        assert!(mcs_rate(PhyKind::Vht, 9, 1, 20, false).is_err());
        assert!(mcs_rate(PhyKind::Vht, 9, 3, 20, false).is_ok());
        assert!(mcs_rate(PhyKind::Ht, 8, 1, 20, false).is_err());
        assert!(mcs_rate(PhyKind::Ht, 7, 1, 80, false).is_err());
    }

    #[test]
    fn timings() {
        assert_eq!(block_ack_time(), Dur(32_000));
        assert_eq!(Ac::Be.aifs(), Dur(43_000));
        assert_eq!(ht_preamble(2), Dur(40_000));
    }
}
