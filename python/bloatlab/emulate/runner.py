"""The emulation controller: builds the namespaces, starts the bottleneck and the kernel TCP
endpoints, gives them a common time origin, collects their measurements and removes
everything it created — on success, on error, on Ctrl-C and on SIGTERM. (On SIGKILL its
children die with it through PR_SET_PDEATHSIG; ``bloatlab emulate --cleanup`` removes the
namespaces.)

Addresses: senders 10.0.0.1 (flow i from port 10000 + i), receivers 10.1.0.1 port 5001,
each namespace routing the other's /24 through its TUN device.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from .. import _core
from ..atomic import write_text
from ..errors import ScenarioError
from ..result import Result
from ..scenario import ScenarioLike, resolve, to_json
from . import netns
from .netns import EmulationError
from .summary import build as build_summary

SND_ADDR = "10.0.0.1"
RCV_ADDR = "10.1.0.1"
RCV_PORT = 5001
PCAP_SIDES = ("sender", "receiver")
#: Time for the endpoints to wrap up after the run's duration before they are killed.
GRACE_S = 20.0


def plan(doc: Mapping[str, Any]) -> dict[str, Any]:
    """Validates a resolved scenario for emulation (the simulator's parser plus the emulation's
    own limits); returns the plan. Raises :class:`bloatlab.ScenarioError`."""
    try:
        return json.loads(_core.emu_plan(to_json(doc)))
    except _core.ScenarioError as e:
        if isinstance(e, ScenarioError):
            raise
        raise ScenarioError.from_core(e) from None


def check_kernel(p: Mapping[str, Any]) -> None:
    """Every flow's congestion control must exist in this kernel (exit 2 otherwise)."""
    for f in p["flows"]:
        if f.get("transport") == "udp":
            continue
        if not netns.ensure_cc(f["kernel_cc"]):
            have = [c for c in netns.available_ccs() if c in _core.KERNEL_CCS]
            k = f["kernel_cc"]
            runs = "" if k == f["cc"] else f", which runs \"{f['cc']}\""
            raise ScenarioError(f"flows[{f['entry']}].cc",
                                f"this kernel has no \"{k}\" congestion control (module tcp_{k}{runs}; "
                                f"allowed: {', '.join(have) or 'none'})")


def _wait_file(path: Path, procs: Iterable[tuple[str, subprocess.Popen[bytes]]], timeout: float, work: Path) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        for name, pr in procs:
            if pr.poll() is not None:
                raise EmulationError(f"the {name} exited early (code {pr.returncode}): {_tail(work / f'{name}.err')}")
        if time.monotonic() > deadline:
            raise EmulationError(f"timed out waiting for {path.name}")
        time.sleep(0.005)


def _tail(path: Path, n: int = 600) -> str:
    try:
        text = path.read_text(errors="replace").strip()
    except OSError:
        return "(no output)"
    return text[-n:] if text else "(no output)"


class _Terminated(BaseException):
    """SIGTERM, turned into an exception so that the cleanup runs."""


def emulate(
    scenario: ScenarioLike,
    *,
    seed: int | None = None,
    set: Iterable[str] | Mapping[str, Any] | None = None,
    pcap: Iterable[str] = (),
    progress: Callable[[str], None] | None = None,
) -> Result:
    """Runs a scenario on real kernel TCP through the emulated bottleneck; returns a
    :class:`bloatlab.Result` whose summary has the simulator's fields (see docs/emulation.md).

    Raises :class:`bloatlab.ScenarioError` for invalid input (before anything is created),
    :class:`EmulationError` when the system refuses (not root, no TUN, a process failing).
    """
    doc = resolve(scenario, seed=seed, set=set)
    p = plan(doc)
    sides = list(dict.fromkeys(pcap))
    for s in sides:
        if s not in PCAP_SIDES:
            raise ScenarioError("--pcap", f"unknown side \"{s}\" (allowed: {', '.join(PCAP_SIDES)})")
    netns.check_environment()
    check_kernel(p)
    main_thread = threading.current_thread() is threading.main_thread()
    old = None
    if main_thread:
        def on_term(signum: int, frame: Any) -> None:
            raise _Terminated()
        old = signal.signal(signal.SIGTERM, on_term)
    try:
        return _run(doc, p, sides, progress or (lambda _m: None))
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, old)


def _run(doc: dict[str, Any], p: dict[str, Any], sides: list[str], progress: Callable[[str], None]) -> Result:
    prefix = netns.run_prefix()
    work = Path(tempfile.mkdtemp(prefix=prefix))
    ns = netns.Namespaces(prefix)
    procs: list[tuple[str, subprocess.Popen[bytes]]] = []
    pcap_dir: Path | None = None
    wall0 = time.monotonic()
    try:
        ns.create()
        windows = [f["rcvbuf"] for f in p["flows"] if f.get("rcvbuf")]
        if windows:
            ns.raise_send_buffers(max(windows))
        tun_s, tun_r = prefix + "s", prefix + "r"
        go = work / "go"
        cfg: dict[str, Any] = {
            "scenario": doc, "go_file": str(go), "ready_file": str(work / "bottleneck.ready"),
            "stop_file": str(work / "stop"), "tun_senders": tun_s, "tun_receivers": tun_r,
        }
        if sides:
            pcap_dir = Path(tempfile.mkdtemp(prefix="bloatlab-pcap-"))
            for s in sides:
                cfg[f"pcap_{s}s"] = str(pcap_dir / f"{s}.pcap")
        (work / "bottleneck.json").write_text(json.dumps(cfg))
        procs.append(("bottleneck", _spawn(["bloatlab.emulate.bottleneck", str(work / "bottleneck.json"),
                                            str(work / "bottleneck.out.json")], ns.link, work / "bottleneck.err")))
        _wait_file(work / "bottleneck.ready", procs, 30, work)
        progress("network namespaces and the bottleneck are up")
        for tun, where, addr, other in ((tun_s, ns.snd, SND_ADDR, RCV_ADDR), (tun_r, ns.rcv, RCV_ADDR, SND_ADDR)):
            netns.ip("-n", ns.link, "link", "set", tun, "netns", where)
            netns.ip("-n", where, "addr", "add", f"{addr}/24", "dev", tun)
            netns.ip("-n", where, "link", "set", tun, "mtu", str(p["mtu"]), "txqueuelen", "10000", "up")
            netns.ip("-n", where, "route", "add", other.rsplit(".", 2)[0] + ".0.0/24", "dev", tun)
        fwd = [f for f in p["flows"] if not f["reverse"]]
        rev = [f for f in p["flows"] if f["reverse"]]
        for role, where in (("receiver", ns.rcv), ("sender", ns.snd)):
            here, there = (RCV_ADDR, SND_ADDR) if role == "receiver" else (SND_ADDR, RCV_ADDR)
            common = {
                "duration_ns": p["duration_ns"], "warmup_ns": p["warmup_ns"], "interval_ns": p["interval_ns"],
                "rcv_port": RCV_PORT, "tun": tun_r if role == "receiver" else tun_s,
                # Early end when every transfer is done: the forward senders' end knows (not
                # with reverse flows, whose senders are at the other end).
                "stop_file": str(work / "stop") if not rev else None,
            }
            sends, recvs = (rev, fwd) if role == "receiver" else (fwd, rev)
            spec = {
                "go_file": str(go), "ready_file": str(work / f"{role}.ready"),
                "out_file": str(work / f"{role}.out.json"),
                "send": {**common, "flows": sends, "snd_addr": here, "rcv_addr": there} if sends else None,
                "recv": {**common, "flows": recvs, "rcv_addr": here, "snd_addr": there} if recvs else None,
            }
            (work / f"{role}.json").write_text(json.dumps(spec))
            procs.append((role, _spawn(["bloatlab.emulate.endpoint", role, str(work / f"{role}.json")], where,
                                       work / f"{role}.err")))
        for role in ("receiver", "sender"):
            _wait_file(work / f"{role}.ready", procs, 60, work)
        t0 = time.monotonic_ns() + 50_000_000
        write_text(go, f"{t0}\n")
        progress(f"running {p['name']} for {p['duration_ns'] / 1e9:g} s on the wall clock ...")
        end = t0 / 1e9 + p["duration_ns"] / 1e9 + GRACE_S
        for name, pr in procs:
            left = end - time.monotonic()
            try:
                pr.wait(timeout=max(left, 0.1))
            except subprocess.TimeoutExpired:
                raise EmulationError(f"the {name} did not finish in time: {_tail(work / f'{name}.err')}") from None
        for name, pr in procs:
            if pr.returncode != 0:
                raise EmulationError(f"the {name} failed (code {pr.returncode}): {_tail(work / f'{name}.err')}")
        outs = {name: json.loads((work / f"{name}.out.json").read_text()) for name, _ in procs}
        wall_s = time.monotonic() - wall0
        snd, rcv = _by_flow(p, outs["sender"], outs["receiver"])
        summary, tables = build_summary(doc, p, outs["bottleneck"], snd, rcv, wall_s)
        result = Result(json.dumps(summary, indent=2) + "\n", tables, doc)
        if pcap_dir is not None:
            result._adopt_capture_dir(pcap_dir)
            pcap_dir = None
        return result
    finally:
        for _, pr in procs:
            if pr.poll() is None:
                pr.kill()
        for _, pr in procs:
            try:
                pr.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        ns.close()
        shutil.rmtree(work, ignore_errors=True)
        if pcap_dir is not None:
            shutil.rmtree(pcap_dir, ignore_errors=True)


def _by_flow(p: Mapping[str, Any], at_snd: Mapping[str, Any],
             at_rcv: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Each flow's sender and receiver measurements in the plan's order, from whichever end
    host ran them (a reverse flow's sender is at the receivers' end); the device readings of
    the senders' and the receivers' side."""
    fwd = [f["id"] for f in p["flows"] if not f["reverse"]]
    rev = [f["id"] for f in p["flows"] if f["reverse"]]
    sent: dict[int, Any] = {}
    got: dict[int, Any] = {}
    rows: list[dict[str, Any]] = []
    for part, ids, into in ((at_snd["send"], fwd, sent), (at_rcv["send"], rev, sent),
                            (at_rcv["recv"], fwd, got), (at_snd["recv"], rev, got)):
        if part:
            into.update(zip(ids, part["flows"], strict=True))
            rows += part.get("rows", [])
    rows.sort(key=lambda r: (r["t_s"], r["flow"]))

    def device(host: Mapping[str, Any]) -> Any:
        return next((x["device"] for x in (host["send"], host["recv"]) if x and x.get("device")), None)

    ids = [f["id"] for f in p["flows"]]
    return ({"flows": [sent[i] for i in ids], "rows": rows, "device": device(at_snd)},
            {"flows": [got.get(i) for i in ids], "device": device(at_rcv)})


def _spawn(args: list[str], where: str, err: Path) -> subprocess.Popen[bytes]:
    with open(err, "wb") as e:
        return subprocess.Popen([sys.executable, "-m", *args], stdin=subprocess.DEVNULL, stdout=e, stderr=e,
                                preexec_fn=netns.preexec(where),
                                close_fds=True)  # noqa: PLW1509 - setns + PDEATHSIG must run in the child before exec
