"""Network namespaces, devices and processes of an emulation run, and their removal.

Everything a run creates is named with its prefix ``blemu-<controller pid>-``: the namespaces
``<prefix>snd`` (senders), ``<prefix>rcv`` (receivers) and ``<prefix>link`` (the bottleneck
process), the TUN devices ``<prefix>s`` / ``<prefix>r`` and the work directory
``/tmp/<prefix>*``. :func:`cleanup_leftovers` finds leftovers by that prefix, so a run killed
with SIGKILL can be cleaned up afterwards (``bloatlab emulate --cleanup``).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

PREFIX = "blemu-"
NETNS_DIR = Path("/run/netns")
_PREFIX_RE = re.compile(r"^blemu-(\d+)-")

_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
PR_SET_PDEATHSIG = 1
CLONE_NEWNET = 0x40000000


class EmulationError(RuntimeError):
    """The system refused something the emulation needs (exit code 1)."""


def run_prefix(pid: int | None = None) -> str:
    return f"{PREFIX}{os.getpid() if pid is None else pid}-"


def ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Runs ``ip ARGS``; a failure raises :class:`EmulationError` with ip's message."""
    r = subprocess.run(["ip", *args], check=False, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise EmulationError(f"ip {' '.join(args)}: {r.stderr.strip() or 'failed'}")
    return r


def preexec(netns: str | None, *, own_session: bool = True):
    """A ``preexec_fn``: die with the parent (PR_SET_PDEATHSIG), enter ``netns``.

    The child gets SIGKILL when the controller dies, however it dies; with its own session
    a terminal's Ctrl-C reaches only the controller, which then stops the children itself.
    """

    def fn() -> None:
        if own_session:
            os.setsid()
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if netns is not None:
            fd = os.open(str(NETNS_DIR / netns), os.O_RDONLY)
            try:
                if _libc.setns(fd, CLONE_NEWNET) != 0:
                    raise OSError(ctypes.get_errno(), f"setns {netns}")
            finally:
                os.close(fd)

    return fn


def check_environment() -> None:
    """Root, /dev/net/tun and the ``ip`` tool: raises EmulationError naming what is missing."""
    if os.geteuid() != 0:
        raise EmulationError(
            "bloatlab emulate needs root (it creates network namespaces and TUN devices); "
            "run it as root, e.g. with sudo"
        )
    if not os.path.exists("/dev/net/tun"):
        raise EmulationError("/dev/net/tun is missing: the kernel needs TUN support (modprobe tun)")
    if shutil.which("ip") is None:
        raise EmulationError("the `ip` command (iproute2) is not installed")


def available_ccs() -> list[str]:
    try:
        return Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
    except OSError:
        return []


def ensure_cc(name: str) -> bool:
    """Whether the kernel has congestion control ``name`` (loading its module if needed)."""
    if name in available_ccs():
        return True
    try:
        subprocess.run(["modprobe", f"tcp_{name}"], check=False, capture_output=True)
    except OSError:  # no modprobe (a kernel without modules): only what is built in
        return False
    return name in available_ccs()


# The TCP buffer limits of the emulated hosts, written into both end namespaces: the
# values the simulator models (`tcp.rcvbuf_auto`'s largest window, `tcp.sndbuf`) and every
# stored Linux run in docs/ was measured with. New namespaces copy the host's, and hosts
# differ — Linux 6.16 raised tcp_rmem[2] from 6 MiB to 32 MiB (commit 572be9bf9d0d), which
# changes the window scale and how long autotuning keeps opening the window —, so they are
# pinned here rather than inherited.
TCP_RMEM = (4096, 131072, 6291456)
TCP_WMEM = (4096, 16384, 4194304)


class Namespaces:
    """The three namespaces of one run; ``close`` removes them and their processes."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.snd = prefix + "snd"
        self.rcv = prefix + "rcv"
        self.link = prefix + "link"
        self.created: list[str] = []

    def create(self) -> None:
        for ns in (self.link, self.snd, self.rcv):
            ip("netns", "add", ns)
            self.created.append(ns)
            ip("-n", ns, "link", "set", "lo", "up")
        for ns in (self.snd, self.rcv):
            # No IPv6 chatter (router solicitations) through the bottleneck.
            _sysctl(ns, "net.ipv6.conf.all.disable_ipv6", "1")
            _sysctl(ns, "net.ipv6.conf.default.disable_ipv6", "1")
            _sysctl(ns, "net.ipv4.tcp_rmem", _triple(TCP_RMEM))
            _sysctl(ns, "net.ipv4.tcp_wmem", _triple(TCP_WMEM))

    def raise_send_buffers(self, window: int) -> None:
        """A scenario that sizes its receive window (``tcp.rcvbuf``) means that window to bind,
        and the simulator then leaves the send buffer unlimited: raise both ends' send-buffer
        cap (``tcp_wmem[2]``, pinned to TCP_WMEM at creation) to twice the window, so
        Linux's sender, which writes while at most 2/3 of its buffer is queued, always has data
        beyond the window."""
        low, default, cap = TCP_WMEM
        for ns in (self.snd, self.rcv):
            _sysctl(ns, "net.ipv4.tcp_wmem", _triple((low, default, max(cap, 2 * window))))

    def close(self) -> None:
        for ns in reversed(self.created):
            delete_netns(ns)
        self.created.clear()


def _triple(values: tuple[int, int, int]) -> str:
    return "'" + " ".join(str(v) for v in values) + "'"


def _sysctl(ns: str, key: str, value: str) -> None:
    path = "/proc/sys/" + key.replace(".", "/")
    r = subprocess.run(["ip", "netns", "exec", ns, "sh", "-c", f"echo {value} > {path}"], check=False,
                       capture_output=True, text=True)
    if r.returncode != 0 and "ipv6" not in key:
        raise EmulationError(f"sysctl {key}={value} in {ns}: {r.stderr.strip()}")


def netns_pids(ns: str) -> list[int]:
    r = ip("netns", "pids", ns, check=False)
    return [int(x) for x in r.stdout.split() if x.isdigit()]


def kill_pids(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def delete_netns(ns: str) -> None:
    """Kills every process inside ``ns`` and deletes it (its devices go with it)."""
    for _ in range(50):
        pids = netns_pids(ns)
        if not pids:
            break
        kill_pids(pids)
        time.sleep(0.02)
    ip("netns", "del", ns, check=False)


def _controller_alive(pid: int) -> bool:
    """Whether ``pid`` is a live bloatlab emulation controller (so its run is not a leftover)."""
    if pid == os.getpid():
        return False
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
    except OSError:
        return False
    return b"emulate" in cmd or b"compare" in cmd


def _leftover(name: str, include_live: bool) -> bool:
    m = _PREFIX_RE.match(name)
    if not m:
        return False
    return include_live or not _controller_alive(int(m.group(1)))


def list_netns() -> list[str]:
    try:
        return sorted(p.name for p in NETNS_DIR.iterdir())
    except OSError:
        return []


def list_links() -> list[str]:
    r = ip("-o", "link", "show", check=False)
    names = []
    for line in r.stdout.splitlines():
        parts = line.split(":", 2)
        if len(parts) >= 2:
            names.append(parts[1].strip().split("@")[0])
    return names


def emulation_processes() -> list[tuple[int, str]]:
    """Processes started by an emulation (bottleneck and endpoints), with their run prefix."""
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        text = [c.decode(errors="replace") for c in cmd]
        if any(t.startswith("bloatlab.emulate.") for t in text):
            for t in text:
                m = re.search(r"(blemu-\d+-)", t)
                if m:
                    found.append((int(d.name), m.group(1)))
                    break
    return found


def cleanup_leftovers(include_live: bool = False) -> list[str]:
    """Removes what killed runs left behind: namespaces (and the processes and devices in
    them), ``blemu-*`` devices in this namespace, emulation processes and work directories.
    Runs whose controller is still alive are left alone unless ``include_live``.
    Returns what was removed."""
    removed: list[str] = []
    for pid, prefix in emulation_processes():
        if _leftover(prefix, include_live) and pid != os.getpid():
            kill_pids([pid])
            removed.append(f"process {pid}")
    for ns in list_netns():
        if _leftover(ns, include_live):
            delete_netns(ns)
            removed.append(f"netns {ns}")
    for link in list_links():
        if _leftover(link, include_live):
            ip("link", "del", link, check=False)
            removed.append(f"device {link}")
    tmp = Path(tempfile.gettempdir())
    for d in tmp.glob(PREFIX + "*"):
        if d.is_dir() and _leftover(d.name, include_live):
            shutil.rmtree(d, ignore_errors=True)
            removed.append(f"directory {d}")
    return removed


def leftovers(prefix: str = PREFIX) -> list[str]:
    """Everything named with ``prefix`` that exists now (for tests and checks)."""
    out = [f"netns {n}" for n in list_netns() if n.startswith(prefix)]
    out += [f"device {n}" for n in list_links() if n.startswith(prefix)]
    out += [f"process {p}" for p, pre in emulation_processes() if pre.startswith(prefix)]
    return out
