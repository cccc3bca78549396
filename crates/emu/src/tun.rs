//! TUN devices (IFF_TUN | IFF_NO_PI: one raw IP packet per read/write, no extra header, and
//! without IFF_VNET_HDR the kernel never hands over GSO super-packets or unchecksummed ones).
//! The device is created by opening it; it disappears when the last descriptor closes, so a
//! killed bottleneck leaves no device behind.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;

const IFF_TUN: libc::c_short = 0x0001;
const IFF_NO_PI: libc::c_short = 0x1000;
/// _IOW('T', 202, int)
const TUNSETIFF: libc::c_ulong = 0x4004_54ca;

#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

pub struct Tun {
    file: File,
    pub name: String,
}

impl Tun {
    /// Creates (and attaches to) TUN device `name`, non-blocking.
    pub fn open(name: &str) -> io::Result<Tun> {
        if name.is_empty() || name.len() >= libc::IFNAMSIZ || name.contains('/') {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("bad device name {name:?} (1 to 15 bytes)")));
        }
        let file = OpenOptions::new().read(true).write(true).custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC).open("/dev/net/tun")?;
        let mut req = IfReq { name: [0; libc::IFNAMSIZ], flags: IFF_TUN | IFF_NO_PI, _pad: [0; 22] };
        req.name[..name.len()].copy_from_slice(name.as_bytes());
        // SAFETY: TUNSETIFF reads and writes a `struct ifreq`, which IfReq lays out (40 bytes).
        let rc = unsafe { libc::ioctl(file.as_raw_fd(), TUNSETIFF as _, &mut req as *mut IfReq) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Tun { file, name: name.to_string() })
    }

    pub fn fd(&self) -> RawFd {
        self.file.as_raw_fd()
    }

    /// One packet into `buf`; Ok(None) when none is waiting.
    #[inline]
    pub fn read(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        // SAFETY: writes at most buf.len() bytes into buf.
        let n = unsafe { libc::read(self.fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n >= 0 {
            return Ok(Some(n as usize));
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(None),
            _ => Err(e),
        }
    }

    /// Injects one packet into the device's network stack.
    #[inline]
    pub fn write(&self, pkt: &[u8]) -> io::Result<()> {
        // SAFETY: reads pkt.len() bytes from pkt.
        let n = unsafe { libc::write(self.fd(), pkt.as_ptr().cast(), pkt.len()) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}
