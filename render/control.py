"""Control: a ZeroMQ socket answering msgpack requests (docs/telemetry.md).

The interface and its permissions:

- ``status`` and ``stop`` are answered on the control thread at once (well within 100 ms), whatever
  else is in progress; ``stop`` only raises the loop's stop word, so the render always ends.
- ``load_model``, ``set_param``, ``record_start`` and ``record_stop`` run on a worker thread, one at a
  time, each with a deadline (``deadline_s``, 2 s) on its preparation (reading, validating, checking): a
  request still preparing then is answered with an error and abandoned; it can no longer change anything
  (its model is never installed), and until it returns, further such requests are answered "busy". Once a
  request commits (installs its model, starts or stops a recording) it is carried out and answered,
  which for a model swap may take up to the loop's own swap wait (2 s) more.
- Files are named, never given as paths: ``record_start`` writes only ``NAME`` inside the recording
  folder fixed at start, and never over an existing file; ``load_model`` reads only ``NAME`` inside the
  model folder fixed at start, or a bundled ``example:NAME``.
- A model swap and a parameter change pass ``check_model`` (the command line's: passive, no stiffer
  than the device renders stably) after validation like a model file; a refusal changes nothing.

The socket is a ROUTER (clients use REQ sockets), so one client's slow request does not hold up another
client's ``status``. Who can connect (by default only this user), and credentials beyond loopback:
:mod:`hapticam.render.endpoints`.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any, Callable

import msgpack
import zmq

from hapticam.errors import ControlError, HapticError
from hapticam.render.endpoints import Auth, ServerSecurity, prepare_bind, prepare_connect, secure_client
from hapticam.render.layout import K_RUNNING
from hapticam.render.loop import ServoLoop
from hapticam.render.recording import Recorder

MAX_REQUEST_BYTES = 64 * 1024
TRANSPORT_MAX_BYTES = 16 * 1024 * 1024  # larger messages are cut off by ZeroMQ (connection dropped)
COMMANDS = ("status", "load_model", "set_param", "record_start", "record_stop", "stop")
IMMEDIATE = ("status", "stop")
DEFAULT_DEADLINE_S = 2.0
POLL_S = 0.005


class Cancelled(ControlError):
    """A request abandoned at its deadline tried to change something."""


class _Job:
    """One worker request: its client envelope, deadline, and outcome."""

    def __init__(self, envelope: list[bytes], cmd: str, req: dict[str, Any], deadline: float) -> None:
        self.envelope, self.cmd, self.req, self.deadline = envelope, cmd, req, deadline
        self.reply: dict[str, Any] | None = None
        self.answered = False
        self.lock = threading.Lock()
        self.cancelled = False
        self.committed = False

    def commit(self) -> None:
        """Called just before a change is applied: refuses once the request was abandoned; after it, the
        request is no longer abandoned at its deadline (its reply waits for the change to be applied)."""
        with self.lock:
            if self.cancelled:
                raise Cancelled(f"{self.cmd}: abandoned at its deadline; nothing changed")
            self.committed = True


class ControlServer(threading.Thread):
    """Answers control requests for ``loop`` (module docstring).

    ``load_model(source)`` loads and validates a model (the CLI passes
    :func:`hapticam.models.files.load_model_only`); ``check_model(model)`` raises to refuse a swap.
    ``warning``: what to tell the user about who can connect (:func:`~hapticam.render.endpoints.prepare_bind`).
    """

    def __init__(self, address: str, loop: ServoLoop, recorder: Recorder,
                 load_model: Callable[[str], Any], status_extra: Callable[[], dict] | None = None,
                 context: zmq.Context | None = None, *, record_dir: str | os.PathLike[str] = ".",
                 model_dir: str | os.PathLike[str] | None = None,
                 check_model: Callable[[Any], None] | None = None, security: ServerSecurity | None = None,
                 deadline_s: float = DEFAULT_DEADLINE_S) -> None:
        super().__init__(name="hapticam-control", daemon=True)
        self.warning = prepare_bind(address, "control", None if security is None else security.auth)
        self.record_dir = Path(record_dir).resolve()
        self.model_dir = None if model_dir is None else Path(model_dir).resolve()
        if not self.record_dir.is_dir():
            raise ControlError(f"control: recording folder {self.record_dir} does not exist")
        if self.model_dir is not None and not self.model_dir.is_dir():
            raise ControlError(f"control: model folder {self.model_dir} does not exist")
        self.check_model = check_model or (lambda model: None)
        self.context = context or zmq.Context.instance()
        self.socket = self.context.socket(zmq.ROUTER)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.setsockopt(zmq.MAXMSGSIZE, TRANSPORT_MAX_BYTES)
        if security is not None:
            security.apply(self.socket)
        try:
            self.socket.bind(address)
        except zmq.ZMQError as exc:
            self.socket.close()
            raise ControlError(f"control: cannot bind {address}: {exc}") from exc
        self.address, self.loop, self.recorder, self.load_model = address, loop, recorder, load_model
        self.status_extra = status_extra or dict
        self.deadline_s = deadline_s
        self._halt = threading.Event()
        self._job: _Job | None = None
        self._worker: threading.Thread | None = None
        self.requests = 0
        self.errors = 0
        self.abandoned = 0

    # -- the control thread ---------------------------------------------------------------------------
    def run(self) -> None:
        poller = zmq.Poller()
        poller.register(self.socket, zmq.POLLIN)
        try:
            while not self._halt.is_set():
                self._answer_job()
                try:
                    if not poller.poll(POLL_S * 1000 if self._job is not None else 50):
                        continue
                    frames = self.socket.recv_multipart(zmq.NOBLOCK)
                except zmq.ZMQError:
                    continue
                if len(frames) < 3 or frames[-2] != b"":
                    continue                                  # not a REQ envelope: nothing to answer
                self._receive(frames[:-2], frames[-1])
        finally:
            self.socket.close()

    def _receive(self, envelope: list[bytes], data: bytes) -> None:
        self.requests += 1
        try:
            req = parse_request(data)
        except ControlError as exc:
            return self._send(envelope, self._error(exc))
        cmd = req["cmd"]
        if cmd in IMMEDIATE:
            return self._send(envelope, self.handle_request(req))
        if self._job is not None:
            self.errors += 1
            return self._send(envelope, {"ok": False, "error": f"busy: {self._job.cmd} is still running "
                                                             f"(answered or abandoned at its deadline); retry"})
        job = _Job(envelope, cmd, req, time.monotonic() + self.deadline_s)
        self._job = job
        self._worker = threading.Thread(target=self._work, args=(job,), name="hapticam-control-worker",
                                        daemon=True)
        self._worker.start()

    def _work(self, job: _Job) -> None:
        reply = self.handle_request(job.req, job)
        with job.lock:
            job.reply = reply

    def _answer_job(self) -> None:
        """Send a finished job's reply, or an error at its deadline; free the slot when it returned."""
        job = self._job
        if job is None:
            return
        with job.lock:
            done = job.reply is not None
            if not (job.answered or done or job.committed) and time.monotonic() > job.deadline:
                job.cancelled = True
                job.answered = True
                self.errors += 1
                self.abandoned += 1
                self._send(job.envelope, {"ok": False, "error": f"{job.cmd}: no result within "
                                                                f"{self.deadline_s:g} s; abandoned, nothing changed"})
        if done:
            if not job.answered:
                self._send(job.envelope, job.reply)
            self._job = None

    def _send(self, envelope: list[bytes], reply: dict[str, Any]) -> None:
        try:
            self.socket.send_multipart([*envelope, b"", msgpack.packb(reply, use_bin_type=True)], zmq.NOBLOCK)
        except zmq.ZMQError:
            pass

    def halt(self) -> None:
        """Stop answering (the worker, if stuck before it committed, is abandoned: it can change nothing any
        more; one that committed finishes its change, and the session's final ``Recorder.stop`` refuses a
        recording it would start late). The socket is closed, also when the thread never ran."""
        self._halt.set()
        job = self._job
        if job is not None:
            with job.lock:
                job.cancelled = not job.committed
        if self.is_alive():
            self.join()
        elif not self.socket.closed:
            self.socket.close()

    # -- requests -------------------------------------------------------------------------------------
    def handle(self, data: bytes) -> dict[str, Any]:
        """Answer one request synchronously (bytes in, reply mapping out); never raises."""
        try:
            req = parse_request(data)
        except ControlError as exc:
            return self._error(exc)
        return self.handle_request(req)

    def handle_request(self, req: dict[str, Any], job: _Job | None = None) -> dict[str, Any]:
        cmd = req["cmd"]
        try:
            reply = getattr(self, f"_cmd_{cmd}")(req, job or _Job([], cmd, req, float("inf")))
            return {"ok": True, "cmd": cmd, **reply}
        except Exception as exc:  # anything is only a bad request to the client
            return self._error(exc)

    def _error(self, exc: Exception) -> dict[str, Any]:
        self.errors += 1
        if isinstance(exc, (HapticError, ValueError, TypeError, KeyError, OSError)):
            return {"ok": False, "error": str(exc) or type(exc).__name__}
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}

    def _cmd_status(self, req: dict[str, Any], job: _Job) -> dict[str, Any]:
        loop = self.loop
        return {"ticks": loop.ticks, "rate_hz": loop.rate_hz, "running": bool(loop.ctl[K_RUNNING]),
                "model": getattr(loop.model, "kind", "compiled"), "stats": loop.stats().to_dict(),
                "recording": str(self.recorder.path) if self.recorder.active else None,
                "busy": None if self._job is None else self._job.cmd,
                "events": [e.to_dict() for e in loop.all_events()[-20:]], **self.status_extra()}

    def _cmd_stop(self, req: dict[str, Any], job: _Job) -> dict[str, Any]:
        self.loop.request_stop()
        return {"ticks": self.loop.ticks}

    def _cmd_load_model(self, req: dict[str, Any], job: _Job) -> dict[str, Any]:
        name = file_name(req)
        if name.startswith("example:"):
            source = name
        elif self.model_dir is None:
            raise ControlError("load_model: only bundled models (example:NAME) here; start the render with "
                               "--model-dir to allow model files")
        else:
            source = str(self.model_dir / name)
        model = self.load_model(source)
        self.check_model(model)
        job.commit()
        self.loop.load_model(model)
        return {"model": getattr(model, "kind", "compiled")}

    def _cmd_set_param(self, req: dict[str, Any], job: _Job) -> dict[str, Any]:
        name = string_field(req, "name")
        value = req.get("value")
        if not plain_value(value):
            raise ControlError("'value' must be a number, a string, or a list of numbers")

        def check(model: Any) -> None:
            self.check_model(model)
            job.commit()
        self.loop.set_parameter(name, value, check=check)
        return {"name": name}

    def _cmd_record_start(self, req: dict[str, Any], job: _Job) -> dict[str, Any]:
        path = self.record_dir / file_name(req)
        if path.exists():
            raise ControlError(f"record_start: {path.name} exists in the recording folder; choose another name")
        job.commit()
        return {"path": str(self.recorder.start(path, exclusive=True))}

    def _cmd_record_stop(self, req: dict[str, Any], job: _Job) -> dict[str, Any]:
        job.commit()
        done = self.recorder.stop()
        if done is None:
            raise ControlError("not recording")
        return {"path": str(done[0]), "ticks": done[1]}


def parse_request(data: bytes) -> dict[str, Any]:
    """A request's msgpack bytes as a mapping with a known ``cmd``; :class:`ControlError` otherwise."""
    if len(data) > MAX_REQUEST_BYTES:
        raise ControlError(f"request larger than {MAX_REQUEST_BYTES} bytes")
    try:
        req = msgpack.unpackb(data, raw=False, strict_map_key=True)
    except Exception as exc:
        raise ControlError(f"request is not valid msgpack ({type(exc).__name__})") from None
    if not isinstance(req, dict):
        raise ControlError("request must be a msgpack map with a 'cmd' field")
    cmd = req.get("cmd")
    if cmd not in COMMANDS:
        raise ControlError(f"unknown cmd {cmd!r}; expected one of {', '.join(COMMANDS)}")
    return req


def string_field(req: dict[str, Any], key: str) -> str:
    val = req.get(key)
    if not isinstance(val, str) or not val or len(val) > 4096 or "\x00" in val:
        raise ControlError(f"'{key}' must be a non-empty string")
    return val


def file_name(req: dict[str, Any]) -> str:
    """A file name (no folder, no '..', not hidden) or a bundled name: requests never name a path."""
    if "path" in req:
        raise ControlError("give the file's 'name' (inside the folder fixed at start), not a 'path'")
    name = string_field(req, "name")
    if name.startswith("example:"):
        return name
    if "/" in name or "\\" in name or name in (".", "..") or name.startswith("."):
        raise ControlError(f"'name' must be a plain file name, got {name!r}")
    return name


def plain_value(value: Any, depth: int = 0) -> bool:
    """A parameter value: a number, a string or a flat list of numbers (never a boolean)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float, str)):
        return True
    if isinstance(value, list) and depth == 0 and len(value) <= 1_000_000:
        return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
    return False


def request(address: str, message: dict[str, Any], timeout_s: float = 5.0,
            context: zmq.Context | None = None, auth: Auth | None = None) -> dict[str, Any]:
    """Send one control request and return the reply (a REQ socket per call)."""
    ctx = context or zmq.Context.instance()
    prepare_connect(address)
    sock = ctx.socket(zmq.REQ)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVTIMEO, int(timeout_s * 1000))
    sock.setsockopt(zmq.SNDTIMEO, int(timeout_s * 1000))
    try:
        secure_client(sock, auth)
        sock.connect(address)
        sock.send(msgpack.packb(message, use_bin_type=True))
        raw = sock.recv()
    except zmq.Again:
        raise ControlError(f"no reply from {address} within {timeout_s:g} s") from None
    except zmq.ZMQError as exc:
        raise ControlError(f"control {address}: {exc}") from None
    finally:
        sock.close()
    try:
        reply = msgpack.unpackb(raw, raw=False)
    except (ValueError, TypeError) as exc:       # msgpack's unpacking errors are ValueErrors
        raise ControlError(f"control {address}: the reply is not a msgpack message ({exc})") from None
    if not isinstance(reply, dict):
        raise ControlError(f"control {address}: the reply is not a mapping")
    return reply
