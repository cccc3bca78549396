//! TUN devices (IFF_TUN | IFF_NO_PI: one raw IP packet per read/write, no extra header, and
//! without IFF_VNET_HDR the kernel never hands over GSO super-packets or unchecksummed ones).
//! The device is created by opening it; it disappears when the last descriptor closes, so a
//! killed bottleneck leaves no device behind.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;

pub struct Tun {
    file: File,
    pub name: String,
}

impl Tun {
    /// Creates (and attaches to) TUN device `name`, non-blocking.
    pub fn open(name: &str) -> io::Result<Tun> {
        if name.is_empty() || name.len() >= libc::IFNAMSIZ || name.contains('/') {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("bad device name {name:?} (1 to 15 bytes)"),
            ));
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open("/dev/net/tun")?;
        crate::sys::tun_set_iff(file.as_raw_fd(), name)?;
        Ok(Tun { file, name: name.to_string() })
    }

    pub fn fd(&self) -> RawFd {
        self.file.as_raw_fd()
    }

    /// One packet into `buf`; Ok(None) when none is waiting.
    #[inline]
    pub fn read(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        // One read(2) (std's `File::read` does not retry on EINTR either).
        match (&self.file).read(buf) {
            Ok(n) => Ok(Some(n)),
            Err(e)
                if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted) =>
            {
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// Injects one packet into the device's network stack.
    #[inline]
    pub fn write(&self, pkt: &[u8]) -> io::Result<()> {
        // One write(2): a TUN device takes a packet whole or not at all.
        let _written = (&self.file).write(pkt)?;
        Ok(())
    }
}
