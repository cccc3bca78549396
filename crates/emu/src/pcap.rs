//! pcap capture of the packets as they cross a device (classic libpcap, LINKTYPE_RAW,
//! nanosecond timestamps since the run's origin). Buffered: recording a packet copies it into
//! the writer's buffer, nothing is allocated per packet.

use bloatlab_sim::net::pcap::{write_file_header, write_record_header, Resolution};
use bloatlab_sim::units::SimTime;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

pub struct Pcap {
    out: BufWriter<File>,
    snaplen: u32,
}

impl Pcap {
    pub fn create(path: &Path, snaplen: u32) -> io::Result<Pcap> {
        let mut out = BufWriter::with_capacity(1 << 20, File::create(path)?);
        write_file_header(&mut out, Resolution::Nano, snaplen)?;
        Ok(Pcap { out, snaplen })
    }

    #[inline]
    pub fn record(&mut self, at: SimTime, pkt: &[u8]) -> io::Result<()> {
        let cap = pkt.len().min(self.snaplen as usize);
        write_record_header(&mut self.out, Resolution::Nano, at, cap as u32, pkt.len() as u32)?;
        self.out.write_all(&pkt[..cap])
    }

    pub fn finish(mut self) -> io::Result<()> {
        self.out.flush()
    }
}
