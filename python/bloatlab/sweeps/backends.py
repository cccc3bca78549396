"""Where the runs of a sweep execute: ``serial``, ``local`` (a process pool) or ``ray``.

Every back end calls :func:`execute` on a task (a run_id and the scenario JSON) and
hands the result back to the sweep driver, the only process that writes the store:
workers need no shared file system (Ray workers may be on other machines). A result
carries the run's output files as bytes, Parquet already encoded by the worker.

A back end's ``run(tasks)`` yields results as they finish, in any order; a run that
raises is a result with ``status = "error"``, never an exception, so one failing run
does not stop the others.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
import traceback
from collections import deque
from collections.abc import Iterable, Iterator
from typing import Any

from ..errors import ScenarioError

BACKENDS = ("local", "ray", "serial")
RAY_INSTALL = "pip install 'bloatlab[ray]'"

Task = dict[str, Any]  # {"run_id": str, "scenario_json": str, "capture": bool, "series": bool (default true)}
Outcome = dict[str, Any]


# --------------------------------------------------------------------------- the work of one run


def _error(exc: BaseException, *, with_traceback: bool) -> dict[str, Any]:
    from .. import _core

    if isinstance(exc, _core.ScenarioError):
        args = exc.args
        path, msg = (str(args[0]), str(args[1])) if len(args) == 2 else ("", " ".join(map(str, args)))
        return {"type": "ScenarioError", "path": path, "message": msg}
    out: dict[str, Any] = {"type": type(exc).__name__, "message": str(exc).strip() or type(exc).__name__}
    if with_traceback:
        out["traceback"] = "".join(traceback.format_exception(exc))
    return out


def execute(task: Task) -> Outcome:
    """Runs one scenario; returns its outcome with the output files as bytes. Never raises
    (but KeyboardInterrupt/SystemExit)."""
    import io

    from .. import _core
    from ..result import Result
    from ..simcore import __version__, call_core

    t0 = time.perf_counter()
    out: Outcome = {
        "run_id": task["run_id"],
        "worker": {"host": socket.gethostname(), "pid": os.getpid(), "bloatlab": __version__},
    }
    capture_dir = tempfile.mkdtemp(prefix="bloatlab-pcap-") if task.get("capture") else None
    try:
        series = task.get("series", True)
        summary_json, tables = call_core(task["scenario_json"], series=series, capture_dir=capture_dir)
        t_sim = time.perf_counter() - t0
        files: dict[str, bytes] = {
            "summary.json": (summary_json if summary_json.endswith("\n") else summary_json + "\n").encode("utf-8")
        }
        if series:  # without series (a summary is all the caller wants) no Parquet either
            result = Result(summary_json, tables, {})
            for filename, table in (("timeseries.parquet", "flows"), ("queues.parquet", "queues")):
                buf = io.BytesIO()
                result.write_parquet(table, buf)
                files[filename] = buf.getvalue()
        if capture_dir is not None:
            for name in sorted(os.listdir(capture_dir)):
                if name.endswith(".pcap"):
                    with open(os.path.join(capture_dir, name), "rb") as f:
                        files[name] = f.read()
        out.update(status="ok", error=None, files=files, sim_s=t_sim)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # noqa: BLE001 - recorded with the run (Rust panics are BaseException)
        simulated = isinstance(e, (_core.ScenarioError, _core.SimulationError))
        out.update(status="error", error=_error(e, with_traceback=not simulated), files={})
    finally:
        if capture_dir is not None:
            shutil.rmtree(capture_dir, ignore_errors=True)
    out["elapsed_s"] = time.perf_counter() - t0
    return out


def failed(task: Task, message: str, kind: str = "WorkerError") -> Outcome:
    return {"run_id": task["run_id"], "status": "error", "files": {}, "elapsed_s": None,
            "error": {"type": kind, "message": message}, "worker": None}


# --------------------------------------------------------------------------- back ends


class Backend:
    name = "?"
    workers = 1

    def start(self) -> None:
        """Connects / checks the back end; raises ScenarioError on bad input (nothing written yet)."""

    def run(self, tasks: Iterable[Task]) -> Iterator[Outcome]:
        raise NotImplementedError

    def close(self) -> None:
        """Stops workers (also after an interrupt)."""

    def describe(self) -> str:
        return self.name


class SerialBackend(Backend):
    """In this process, one run after another (Ctrl-C still stops it at once)."""

    name = "serial"

    def run(self, tasks: Iterable[Task]) -> Iterator[Outcome]:
        for task in tasks:
            box: dict[str, Any] = {}
            # the thread is joined below, before the loop rebinds box and task
            t = threading.Thread(target=lambda: box.setdefault("out", _safe(task)),  # noqa: B023
                                 daemon=True, name="bloatlab-run")
            t.start()
            while t.is_alive():
                t.join(0.1)  # the main thread stays responsive to KeyboardInterrupt
            yield box["out"]

    def describe(self) -> str:
        return "serial (this process)"


def _safe(task: Task) -> Outcome:
    try:
        return execute(task)
    except BaseException as e:  # noqa: BLE001
        return failed(task, f"{type(e).__name__}: {e}")


# -- local process pool


class WorkerDied(RuntimeError):
    pass


class _Worker:
    """One ``python -m bloatlab.sweeps.worker`` process."""

    def __init__(self) -> None:
        import subprocess

        # The worker imports this very bloatlab, also when it is not on the default path.
        pkg_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        boot = ("import sys; p = sys.argv.pop(1)\n"
                "if p not in sys.path: sys.path.append(p)\n"
                "from bloatlab.sweeps.worker import main; sys.exit(main(sys.argv[1:]))")
        self.proc = subprocess.Popen(
            [sys.executable, "-c", boot, pkg_parent, str(os.getpid())],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        )
        self.started = False

    def _read(self) -> Any:
        from .wire import read_msg

        try:
            msg = read_msg(self.proc.stdout)  # type: ignore[arg-type]
        except Exception as e:  # noqa: BLE001 - a truncated or garbled message
            raise WorkerDied(f"unreadable answer from the worker: {e}") from None
        if msg is None:
            raise WorkerDied(self._death())
        return msg

    def _death(self) -> str:
        try:
            code = self.proc.wait(timeout=5)
        except Exception:  # noqa: BLE001
            return "the worker process stopped answering"
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return f"the worker process was killed by {name} while running this scenario"
        return f"the worker process exited with status {code} while running this scenario"

    def call(self, task: Task) -> Outcome:
        from .wire import write_msg

        if not self.started:
            self._read()  # {"ready": pid}
            self.started = True
        try:
            write_msg(self.proc.stdin, task)  # type: ignore[arg-type]
        except (BrokenPipeError, OSError):
            raise WorkerDied(self._death()) from None
        return self._read()

    def kill(self) -> None:
        p = self.proc
        for stream in (p.stdin, p.stdout):
            try:
                stream.close()  # type: ignore[union-attr]
            except Exception:  # noqa: BLE001
                pass
        if p.poll() is None:
            try:
                p.kill()
            except OSError:
                pass
        try:
            p.wait(timeout=5)
        except Exception:  # noqa: BLE001
            pass


class LocalBackend(Backend):
    """Worker processes on this machine (``python -m bloatlab.sweeps.worker``), one per core by default.

    Each worker runs one task at a time, so when a worker dies (killed, out of memory,
    a crash in the simulator) the driver knows which run it was: that run is retried
    once in a fresh worker, and recorded as failed if its worker dies again.
    """

    name = "local"
    MAX_ATTEMPTS = 2

    def __init__(self, jobs: int | None = None) -> None:
        if jobs is not None and jobs < 1:
            raise ScenarioError("--jobs", f"must be at least 1 (got {jobs})")
        self.workers = jobs or os.cpu_count() or 1
        self._live: list[_Worker] = []
        self._lock = threading.Lock()

    def describe(self) -> str:
        return f"local ({self.workers} worker process{'es' if self.workers != 1 else ''})"

    def run(self, tasks: Iterable[Task]) -> Iterator[Outcome]:
        import queue

        todo: deque[Task] = deque(tasks)
        attempts: dict[str, int] = {}
        results: queue.Queue[tuple[str, Any, Any]] = queue.Queue()
        lock = self._lock

        def next_task() -> Task | None:
            with lock:
                return todo.popleft() if todo else None

        def loop(w: _Worker) -> None:
            while True:
                task = next_task()
                if task is None:
                    results.put(("idle", w, None))
                    return
                try:
                    out = w.call(task)
                except WorkerDied as e:
                    results.put(("died", w, (task, str(e))))
                    return
                except BaseException as e:  # noqa: BLE001
                    results.put(("died", w, (task, f"{type(e).__name__}: {e}")))
                    return
                results.put(("done", w, out))

        def spawn() -> None:
            w = _Worker()
            with lock:
                self._live.append(w)
            threading.Thread(target=loop, args=(w,), daemon=True, name="bloatlab-worker-io").start()

        active = 0
        try:
            for _ in range(min(self.workers, len(todo))):
                spawn()
                active += 1
            while active:
                try:
                    kind, w, payload = results.get(timeout=0.5)
                except queue.Empty:
                    continue
                if kind == "done":
                    yield payload
                    continue
                active -= 1
                self._retire(w)
                if kind == "died":
                    task, why = payload
                    n = attempts[task["run_id"]] = attempts.get(task["run_id"], 0) + 1
                    if n >= self.MAX_ATTEMPTS:
                        yield failed(task, f"{why} (tried {n} times)")
                    else:
                        with lock:
                            todo.appendleft(task)
                    with lock:
                        more = bool(todo)
                    if more:
                        spawn()
                        active += 1
        finally:
            self.close()

    def _retire(self, w: _Worker) -> None:
        with self._lock:
            if w in self._live:
                self._live.remove(w)
        w.kill()

    def close(self) -> None:
        with self._lock:
            live, self._live = self._live, []
        for w in live:
            w.kill()


# -- Ray


def _check_address(address: str) -> None:
    """Fails fast (ScenarioError) when nothing listens at a host:port Ray address.

    ``ray.init`` itself retries an unreachable address for minutes.
    """
    if address in ("auto", "local"):
        return
    hostport = address.split("://", 1)[1] if "://" in address else address
    hostport = hostport.split("/", 1)[0]
    host, sep, port_s = hostport.rpartition(":")
    if not sep or not host or not port_s.isdigit():
        raise ScenarioError("--address", f'"{address}" is not a Ray address: expected HOST:PORT '
                            '(e.g. 10.0.0.5:6379), ray://HOST:PORT or "auto"')
    host = host.strip("[]")
    try:
        with socket.create_connection((host, int(port_s)), timeout=5):
            pass
    except OSError as e:
        why = e.strerror or str(e) or type(e).__name__
        raise ScenarioError("--address", f"cannot reach a Ray cluster at {address}: {why}") from None


class RayBackend(Backend):
    """Each run is a Ray task on an existing cluster (``address``) or on a local Ray
    instance started here (no address; stopped at the end). If Ray is already
    initialized in this process, that session is used and left running."""

    name = "ray"

    def __init__(self, address: str | None = None, jobs: int | None = None) -> None:
        if jobs is not None and jobs < 1:
            raise ScenarioError("--jobs", f"must be at least 1 (got {jobs})")
        self.address = address
        self.jobs = jobs
        self.workers = jobs or 1
        self._owned = False
        self._ray: Any = None

    def describe(self) -> str:
        where = self.address or "a local Ray instance"
        return f"ray ({where}, {self.workers} CPUs)"

    def start(self) -> None:
        try:
            import ray
        except ImportError:
            raise ScenarioError("--backend",
                                f"the ray back end needs Ray, which is not installed: {RAY_INSTALL}") from None
        self._ray = ray
        if not ray.is_initialized():
            if self.address:
                _check_address(self.address)
            self._init(ray)
            self._owned = True
        try:
            cpus = int(ray.cluster_resources().get("CPU", 1))
        except Exception:  # noqa: BLE001
            cpus = 1
        self.workers = self.jobs or max(cpus, 1)

    def _init(self, ray: Any) -> None:
        import logging

        kwargs: dict[str, Any] = {"logging_level": logging.WARNING, "log_to_driver": False,
                                  "configure_logging": True}
        if self.address:
            kwargs["address"] = self.address
        else:
            kwargs["include_dashboard"] = False
            if self.jobs:
                kwargs["num_cpus"] = self.jobs
        # In the main thread (Ray installs signal handlers there). An unreachable address was
        # caught by _check_address; Ray gives up on a port that is not Ray after its own timeout.
        try:
            ray.init(**kwargs)
        except Exception as e:  # noqa: BLE001
            msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            if self.address:
                raise ScenarioError("--address", f"cannot connect to Ray at {self.address}: {msg}") from None
            raise RuntimeError(f"cannot start a local Ray instance: {msg}") from e

    def run(self, tasks: Iterable[Task]) -> Iterator[Outcome]:
        ray = self._ray
        remote = ray.remote(num_cpus=1, max_retries=2)(execute)
        todo = deque(tasks)
        window = max(2 * self.workers, 1) if not self.jobs else self.jobs
        inflight: dict[Any, Task] = {}
        try:
            while todo or inflight:
                while todo and len(inflight) < window:
                    task = todo.popleft()
                    inflight[remote.remote(task)] = task
                ready, _ = ray.wait(list(inflight), num_returns=1, timeout=0.5)
                for ref in ready:
                    task = inflight.pop(ref)
                    try:
                        yield ray.get(ref)
                    except Exception as e:  # noqa: BLE001 - a worker or node that died, a missing package
                        msg = str(e).strip().splitlines()
                        yield failed(task, f"{type(e).__name__}: {msg[-1] if msg else ''}".strip(), "RayError")
        finally:
            for ref in inflight:
                try:
                    ray.cancel(ref, force=True)
                except Exception:  # noqa: BLE001
                    pass

    def close(self) -> None:
        if self._owned and self._ray is not None:
            try:
                self._ray.shutdown()
            except Exception:  # noqa: BLE001
                pass
            self._owned = False


def make_backend(name: str, *, jobs: int | None = None, address: str | None = None) -> Backend:
    if name == "local":
        if address:
            raise ScenarioError("--address", "only the ray back end takes an address (add --backend ray)")
        return LocalBackend(jobs)
    if name == "serial":
        if address:
            raise ScenarioError("--address", "only the ray back end takes an address (add --backend ray)")
        return SerialBackend()
    if name == "ray":
        return RayBackend(address, jobs)
    raise ScenarioError("--backend", f'unknown back end "{name}" (known: {", ".join(BACKENDS)})')

