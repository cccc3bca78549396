//! pcap capture of the packets as they cross a device (classic libpcap, LINKTYPE_RAW,
//! nanosecond timestamps since the run's origin). Buffered: recording a packet copies it into
//! the writer's buffer, nothing is allocated per packet.

use bloatlab_sim::units::SimTime;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

const LINKTYPE_RAW: u32 = 101;
/// The nanosecond-resolution pcap magic.
const MAGIC_NS: u32 = 0xa1b2_3c4d;

pub struct Pcap {
    out: BufWriter<File>,
    snaplen: u32,
}

impl Pcap {
    pub fn create(path: &Path, snaplen: u32) -> io::Result<Pcap> {
        let mut out = BufWriter::with_capacity(1 << 20, File::create(path)?);
        out.write_all(&MAGIC_NS.to_le_bytes())?;
        out.write_all(&2u16.to_le_bytes())?;
        out.write_all(&4u16.to_le_bytes())?;
        out.write_all(&0i32.to_le_bytes())?;
        out.write_all(&0u32.to_le_bytes())?;
        out.write_all(&snaplen.to_le_bytes())?;
        out.write_all(&LINKTYPE_RAW.to_le_bytes())?;
        Ok(Pcap { out, snaplen })
    }

    #[inline]
    pub fn record(&mut self, at: SimTime, pkt: &[u8]) -> io::Result<()> {
        let cap = pkt.len().min(self.snaplen as usize);
        self.out.write_all(&((at.0 / 1_000_000_000) as u32).to_le_bytes())?;
        self.out.write_all(&((at.0 % 1_000_000_000) as u32).to_le_bytes())?;
        self.out.write_all(&(cap as u32).to_le_bytes())?;
        self.out.write_all(&(pkt.len() as u32).to_le_bytes())?;
        self.out.write_all(&pkt[..cap])
    }

    pub fn finish(mut self) -> io::Result<()> {
        self.out.flush()
    }
}
