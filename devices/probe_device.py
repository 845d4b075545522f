"""Probing a physical object with a real device: the stroke, its safety and the streamed capture.

The loop is the same for every transport (:class:`ProbeLink`: the serial protocol's device-side position
servo, :mod:`hapticam.devices.serial_probe`; a Phantom's host-side one, :mod:`hapticam.devices.phantom_probe`):

1. **Approach**: from where the probe rests to the excitation's first position at ``approach_speed_mps``
   (not recorded), then hold ``settle_s``.
2. **Stroke**: one command per period of the link's rate, on absolute deadlines, each command the
   excitation's position clipped to the device's workspace; every sample streamed to the capture
   (:class:`~hapticam.devices.probe_capture.CaptureStream`).
3. **Retract** to the first position (not recorded), then the link's ``end``: force off.

Safety, as when rendering:

- **force limit**: the force on the object above ``force_limit_N`` stops the stroke (``stopped:
  force-limit``) and reverses it: the probe retracts to its start. The actuator's own force is bounded
  by the same figure plus the handle's needs (the link's ``actuator_limit_N``).
- **workspace**: commands are clipped to the device's workspace; a measured position more than
  ``workspace_margin_m`` outside it stops the run (``stopped: workspace``), with no retract.
A link whose device calls it every period (``paces_itself``: the Phantom's scheduler) may take the whole
path at once (``plan``) and follow it on the device's clock; each ``step`` then returns the next frame.

- **watchdog**: a link that does not answer in time raises :class:`ProbeFault` (its own watchdog: the
  serial firmware's, the Phantom amplifiers'); a host that falls ``watchdog_s`` behind its deadlines
  stops the run (``stopped: host-watchdog``).
- **zero force on any fault**: whatever ends the run (a fault, Ctrl-C, an exception), ``end`` turns the
  force off and the capture is completed with the samples before it, the reason in its metadata.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Callable, Protocol

import numpy as np

from hapticam.devices.probe_capture import PROBE_COLUMNS, CaptureStream
from hapticam.errors import DeviceError

#: rows gathered before they are handed to the capture stream
_BATCH = 64


class ProbeFault(DeviceError):
    """The device stopped answering, reported a fault, or hung up: the stroke ends with zero force."""


@dataclass(frozen=True)
class ProbeSample:
    """One sample: device time (s), probe position (m), force on the object along +x (N), the actuator's
    force (N), the switch's contact (1 closed, 0 open, -1 not measured), the transport's status bits."""

    t_s: float
    x_m: float
    force_N: float
    actuator_N: float
    contact: int
    status: int


class ProbeLink(Protocol):
    """A position-controlled probe on one transport. ``rate_hz``: commands per second; ``workspace_m``:
    (low, high) along the probe's axis (m); ``max_force_N``: the actuator's peak force (N)."""

    name: str
    rate_hz: float
    workspace_m: tuple[float, float]
    max_force_N: float

    def begin(self) -> ProbeSample: ...

    def step(self, x_cmd_m: float, actuator_limit_N: float) -> ProbeSample: ...

    def end(self) -> list[str]: ...


class ProbeOnDevice:
    """What a :class:`ProbeLink` reads from a device adapter it extends (a :class:`~hapticam.devices.base.Device`
    subclass): its name, workspace and peak force, from the device's specification."""

    spec: Any

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def workspace_m(self) -> tuple[float, float]:
        return self.spec.workspace_m

    @property
    def max_force_N(self) -> float:
        return self.spec.max_force_N


@dataclass(frozen=True)
class ProbeLimits:
    """Safety figures (SI): the force on the object that stops a stroke (N), the approach and retract
    speed (m/s), the hold before the stroke (s), how far outside the workspace a measured position may be
    (m), and how far behind its deadlines the host may fall (s)."""

    force_limit_N: float
    approach_speed_mps: float = 0.01
    settle_s: float = 0.05
    workspace_margin_m: float = 1e-3
    watchdog_s: float = 0.25


@dataclass
class ProbeOutcome:
    """How a run ended: samples recorded, ``stopped`` (``complete``, ``force-limit``, ``workspace``,
    ``host-watchdog``, ``fault``, ``interrupted``), the fault's text, the largest force on the object (N)
    and lateness of a command (us), the link's closing notes."""

    samples: int = 0
    stopped: str = "complete"
    fault: str | None = None
    peak_force_N: float = 0.0
    worst_lateness_us: float = 0.0
    notes: list[str] | None = None
    last_x_m: float = math.nan


class _Pacer:
    """Deadlines every ``1 / rate_hz`` s from the first call. ``wait`` returns ``(k, lateness_s)``: the index
    of the deadline it waited for and how late it returned. A host that fell more than a period behind
    moves its later deadlines back by as much: every command is sent, in order, none in a burst (the
    excitation runs a little slower; the capture's times are the device's). A link that ``paces_itself``
    (its device calls the host each period) gets every index, without waiting."""

    def __init__(self, link: ProbeLink) -> None:
        self.period_s = 1.0 / link.rate_hz
        self.free = bool(getattr(link, "paces_itself", False))
        self.start = time.perf_counter()
        self.k = -1

    def wait(self) -> tuple[int, float]:
        self.k += 1
        if self.free:
            return self.k, 0.0
        now = time.perf_counter()
        late = now - (self.start + self.k * self.period_s)
        if late > self.period_s:
            self.start += late                                        # this deadline is now
        deadline = self.start + self.k * self.period_s
        left = deadline - time.perf_counter()
        if left > 2e-3:
            time.sleep(left - 1e-3)
        while time.perf_counter() < deadline:
            pass
        return self.k, max(late, time.perf_counter() - deadline)


def _move(link: ProbeLink, x_from: float, x_to: float, limits: ProbeLimits, actuator_limit_N: float, *,
          approach: bool) -> None:
    """Drive the probe from ``x_from`` to ``x_to`` at the approach speed and hold ``settle_s`` (not
    recorded). On an ``approach`` the force limit applies; a retract leaves the object, whatever the force."""
    n = max(1, math.ceil(abs(x_to - x_from) / limits.approach_speed_mps * link.rate_hz))
    hold = max(1, round(limits.settle_s * link.rate_hz))
    path = np.concatenate([np.linspace(x_from, x_to, n + 1)[1:], np.full(hold, x_to)])
    pacer = _Pacer(link)
    _plan(link, path)
    while (k := pacer.wait()[0]) < len(path):
        sample = link.step(float(path[k]), actuator_limit_N)
        if approach and abs(sample.force_N) > limits.force_limit_N:
            raise ProbeFault(f"the force on the object reached {sample.force_N:.3g} N (limit "
                             f"{limits.force_limit_N:g} N) before the stroke began")


def run_probe(link: ProbeLink, excitation: Any, open_stream: Callable[[], CaptureStream], limits: ProbeLimits, *,
              progress: Callable[[float, ProbeSample], None] | None = None) -> ProbeOutcome:
    """Approach, stroke and retract along ``excitation`` (``position(t_s)`` in m, ``duration_s``), streaming
    the stroke to the capture ``open_stream()`` opens once the device answered, and closing it with the
    outcome (module docstring); a device that cannot be opened raises and leaves no capture.
    ``progress(fraction, sample)`` is called about ten times a second. The link's force is off when this
    returns or raises."""
    out = ProbeOutcome()
    try:
        first = link.begin()                             # the device's workspace and force are known from here
        stream = open_stream()
    except BaseException:
        link.end()
        raise
    try:
        lo, hi = link.workspace_m
        n = max(1, int(round(excitation.duration_s * link.rate_hz)))
        x_cmd = np.clip(excitation.position(np.arange(n) / link.rate_hz), lo, hi)
        actuator_limit = min(link.max_force_N, 2.0 * limits.force_limit_N + 0.5)
        _move(link, first.x_m, float(x_cmd[0]), limits, actuator_limit, approach=True)
        _stroke(link, x_cmd, stream, limits, actuator_limit, out, progress)
        if out.stopped in ("complete", "force-limit"):                  # reverse: back to the start
            _move(link, out.last_x_m, float(x_cmd[0]), limits, actuator_limit, approach=False)
    except ProbeFault as exc:
        out.stopped, out.fault = "fault", str(exc)
    except KeyboardInterrupt:
        out.stopped = "interrupted"
    except BaseException as exc:                         # force off and the capture kept, then raised
        out.stopped, out.fault = "error", f"{type(exc).__name__}: {exc}"
        raise
    finally:
        out.notes = link.end()
        stream.close(_metadata(out))
    return out


def _stroke(link: ProbeLink, x_cmd: np.ndarray, stream: CaptureStream, limits: ProbeLimits, actuator_limit: float,
            out: ProbeOutcome, progress: Callable[[float, ProbeSample], None] | None) -> None:
    """The recorded stroke: one command per period; ends early on the force limit, the workspace or the
    host's watchdog (``out.stopped``)."""
    rows = np.zeros((_BATCH, len(PROBE_COLUMNS)))
    lo, hi = link.workspace_m
    pacer, t0, used, every, shown = _Pacer(link), None, 0, max(1, int(link.rate_hz / 10)), -1
    _plan(link, x_cmd)
    try:
        while True:
            k, late = pacer.wait()
            if k >= len(x_cmd):
                return
            x = float(x_cmd[k])
            s = link.step(x, actuator_limit)
            t0 = s.t_s if t0 is None else t0
            rows[used] = (s.t_s - t0, s.x_m, s.force_N, x, s.actuator_N, s.contact, s.status, 1e6 * late)
            used += 1
            out.samples, out.last_x_m = out.samples + 1, s.x_m
            out.peak_force_N = max(out.peak_force_N, abs(s.force_N))
            out.worst_lateness_us = max(out.worst_lateness_us, 1e6 * late)
            if used == _BATCH:
                stream.add(rows)
                used = 0
            if progress is not None and k // every > shown:
                shown = k // every
                progress((k + 1) / len(x_cmd), s)
            if abs(s.force_N) > limits.force_limit_N:
                out.stopped = "force-limit"
            elif not lo - limits.workspace_margin_m <= s.x_m <= hi + limits.workspace_margin_m:
                out.stopped = "workspace"
            elif late > limits.watchdog_s:
                out.stopped = "host-watchdog"
            if out.stopped != "complete":
                return
    finally:
        stream.add(rows[:used])


def _plan(link: ProbeLink, path_m: np.ndarray) -> None:
    """Hand the whole path to a link whose device runs it on its own clock (``plan``), if it can."""
    if callable(getattr(link, "plan", None)):
        link.plan(path_m)                                # type: ignore[attr-defined]


def _metadata(out: ProbeOutcome) -> dict[str, Any]:
    meta: dict[str, Any] = {"stopped": out.stopped, "peak_force_N": round(out.peak_force_N, 6),
                            "worst_lateness_us": round(out.worst_lateness_us, 1)}
    if out.fault:
        meta["fault"] = out.fault
    return meta
