//! The system calls the emulator makes outside `std`, each behind a safe function: the
//! crate's only `unsafe` (allowed in this module alone; lib.rs denies it everywhere else).
//! Every call checks its return value; none keeps a pointer past the call.

use std::io;
use std::os::fd::RawFd;

/// CLOCK_MONOTONIC in nanoseconds (the clock the controller and the endpoints share).
#[inline]
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec, which `ts` is.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

const IFF_TUN: libc::c_short = 0x0001;
const IFF_NO_PI: libc::c_short = 0x1000;
/// _IOW('T', 202, int)
const TUNSETIFF: libc::c_ulong = 0x4004_54ca;

/// `struct ifreq` as TUNSETIFF reads it: the name and the flags (40 bytes).
#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// Attaches the open /dev/net/tun descriptor `fd` to TUN device `name` (created if it does
/// not exist), one raw IP packet per read or write (IFF_TUN | IFF_NO_PI). `name` must be
/// 1 to 15 bytes.
pub fn tun_set_iff(fd: RawFd, name: &str) -> io::Result<()> {
    if name.is_empty() || name.len() >= libc::IFNAMSIZ {
        let msg = format!("bad device name {name:?} (1 to 15 bytes)");
        return Err(io::Error::new(io::ErrorKind::InvalidInput, msg));
    }
    let mut req = IfReq { name: [0; libc::IFNAMSIZ], flags: IFF_TUN | IFF_NO_PI, _pad: [0; 22] };
    req.name[..name.len()].copy_from_slice(name.as_bytes());
    // SAFETY: TUNSETIFF reads and writes a `struct ifreq`, which IfReq lays out.
    let rc = unsafe { libc::ioctl(fd, TUNSETIFF as _, &mut req as *mut IfReq) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Timer slack of `ns` for this thread: wake-ups as precise as the kernel can make them.
pub fn set_timer_slack_ns(ns: u64) {
    // SAFETY: prctl with integer arguments.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong, 0, 0, 0) };
}

/// Puts this thread under SCHED_FIFO at `priority`; whether it took effect (root only).
pub fn set_sched_fifo(priority: i32) -> bool {
    let p = libc::sched_param { sched_priority: priority };
    // SAFETY: sched_setscheduler on this thread (pid 0) with a valid sched_param.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) == 0 }
}

/// epoll over some descriptors and a timerfd: sleeps until one is readable or a deadline.
pub struct Poller {
    ep: i32,
    timer: i32,
}

impl Poller {
    pub fn new(fds: &[i32]) -> io::Result<Poller> {
        // SAFETY: plain syscalls on descriptors we own; every return value is checked.
        unsafe {
            let ep = libc::epoll_create1(libc::EPOLL_CLOEXEC);
            if ep < 0 {
                return Err(io::Error::last_os_error());
            }
            let timer =
                libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC);
            if timer < 0 {
                libc::close(ep);
                return Err(io::Error::last_os_error());
            }
            let p = Poller { ep, timer };
            for &fd in fds.iter().chain([timer].iter()) {
                let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: fd as u64 };
                if libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, fd, &mut ev) < 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            Ok(p)
        }
    }

    /// Sleeps until a device is readable or the absolute monotonic time `at_ns`.
    pub fn wait(&self, at_ns: u64) -> io::Result<()> {
        let spec = libc::itimerspec {
            it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
            it_value: libc::timespec {
                tv_sec: (at_ns / 1_000_000_000) as _,
                tv_nsec: (at_ns % 1_000_000_000) as _,
            },
        };
        let mut evs = [libc::epoll_event { events: 0, u64: 0 }; 4];
        // SAFETY: valid descriptors and buffers of the stated sizes.
        unsafe {
            if libc::timerfd_settime(
                self.timer,
                libc::TFD_TIMER_ABSTIME,
                &spec,
                std::ptr::null_mut(),
            ) < 0
            {
                return Err(io::Error::last_os_error());
            }
            let n = libc::epoll_wait(self.ep, evs.as_mut_ptr(), evs.len() as i32, 1000);
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
            let mut ticks = 0u64;
            libc::read(self.timer, (&mut ticks as *mut u64).cast(), 8);
        }
        Ok(())
    }
}

impl Drop for Poller {
    fn drop(&mut self) {
        // SAFETY: closing descriptors this struct owns.
        unsafe {
            libc::close(self.timer);
            libc::close(self.ep);
        }
    }
}
