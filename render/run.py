"""Render a model on a device from plain settings: what ``hapticam render`` and :func:`hapticam.render_model`
both do.

:func:`render_on_device` checks the settings, reads the model file once (with the axis kind it declares:
linear, m and N, or rotary, rad and N m), checks that axis against the device's (the one the device's name
states before it opens; for a device that states its axis kind only when it opens, a serial device's
firmware, the one it states once open, so a model on the other axis kind is refused before the first tick),
passes the model through the render gate (:func:`hapticam.render.gate.check_for_device`), runs a
:class:`~hapticam.render.session.RenderSession` and closes the device. A run whose finish failed
(:class:`~hapticam.render.session.StopFailed`, a device that failed to close) still gives its statistics:
the failures are collected in :attr:`RenderOutcome.problems` beside the report, for the caller to tell
after the statistics. A bad setting raises :class:`~hapticam.errors.ParameterError` naming the setting's
field here; the command line says its flag instead. SI units throughout (m, N, s; on a rotary device rad and N m).
"""

from __future__ import annotations

import contextlib
import math
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterator

from hapticam.errors import HapticError, ParameterError
from hapticam.models.base import Model

if TYPE_CHECKING:
    from hapticam.devices.base import Device
    from hapticam.models.files import ModelDocument
    from hapticam.render.endpoints import Auth
    from hapticam.render.session import RenderSession, SessionReport

#: the simulated users at a simulated device's handle, with their period (s)
USER_PERIODS_S = {"press": 1.0, "sine": 1.0, "sweep": 4.0, "finger": 4.0}
#: the render's length on the simulated clock when none is given (s)
DEFAULT_SIMULATED_S = 2.0


@dataclass
class RenderSettings:
    """How to render ``model`` (a :class:`~hapticam.models.base.Model`, a model file, ``example:NAME`` or
    ``library:DIR/NAME``) on ``device`` (``NAME[:ADDRESS]``).

    ``duration_s``: how long (s; ``None``: until stopped in real time, :data:`DEFAULT_SIMULATED_S` on the
    simulated clock); ``rate_hz``: servo rate (Hz); ``realtime``: the wall clock, else a simulated clock
    (simulated devices only); ``user``, ``depth_m``: the simulated user at a simulated device's handle and
    its travel (m); ``record``: a capture file of every tick; ``max_force_N``: the safety layer's force limit
    (N; default the device's); ``passivity``: the passivity observer and controller; ``display``: ``auto`` or
    ``off`` (:class:`~hapticam.render.loop.LoopConfig`); ``allow_active``: render a model that is not passive;
    ``seed``: a simulated device's noise; ``axis``, ``origin_mm``: a 3-D device's rendering axis (its frame)
    and origin (mm); ``telemetry``, ``control``: ZeroMQ addresses to serve; ``record_dir``, ``model_dir``:
    the folders control requests may record into and load models from; ``auth``: credentials required of
    telemetry subscribers and control clients; ``source``: who rendered, in the recording's metadata.
    """

    model: Model | str | os.PathLike[str]
    device: str = "sim"
    duration_s: float | None = None
    rate_hz: float = 1000.0
    realtime: bool = True
    user: str = "press"
    depth_m: float = 4e-3
    record: str | os.PathLike[str] | None = None
    max_force_N: float | None = None
    passivity: bool = False
    display: str = "auto"
    allow_active: bool = False
    seed: int = 0
    axis: tuple[float, float, float] | None = None
    origin_mm: tuple[float, float, float] | None = None
    telemetry: str | None = None
    control: str | None = None
    record_dir: str | os.PathLike[str] = "."
    model_dir: str | os.PathLike[str] | None = None
    auth: Auth | None = None
    source: str = "hapticam.render_model"


@dataclass
class RenderOutcome:
    """What a render gave: the session's ``report`` (statistics, events, recording), the render gate's
    ``gate_warnings``, the ``problems`` of a finish that failed (one line each; empty if none), the
    ``device`` (closed) and how many of its ``notes`` were there before the run (``notes_before_run``)."""

    report: SessionReport
    gate_warnings: list[str]
    device: Device
    notes_before_run: int = 0
    problems: list[str] = field(default_factory=list)


def check_settings(settings: RenderSettings) -> float | None:
    """Refuse what cannot be rendered before anything is opened; the run's length (s) on its clock."""
    from hapticam.render.loop import MAX_SIMULATED_TICKS

    duration = settings.duration_s
    if duration is not None and not duration > 0:
        raise ParameterError("duration_s", f"must be > 0, got {duration:g}")
    if duration is not None and not (math.isfinite(duration) and duration <= 1e9):
        raise ParameterError("duration_s", f"must be a finite number of at most 1e+09, got {duration:g}")
    if duration is not None and not settings.realtime and duration * settings.rate_hz > MAX_SIMULATED_TICKS:
        raise ParameterError("duration_s", f"{duration:g} s at {settings.rate_hz:g} Hz on the simulated clock is "
                             f"more than {MAX_SIMULATED_TICKS:,} ticks (it holds every tick in memory, 88 bytes "
                             "each); render in real time to stream for longer")
    if settings.max_force_N is not None and not settings.max_force_N > 0:
        raise ParameterError("max_force_N", f"must be > 0, got {settings.max_force_N:g}")
    if settings.user not in USER_PERIODS_S:
        raise ParameterError("user", f"one of {', '.join(USER_PERIODS_S)}, got {settings.user!r}")
    if duration is None and not settings.realtime:
        return DEFAULT_SIMULATED_S
    return duration


def load_for_device(model: Model | str | os.PathLike[str], device: str) -> tuple[Model, ModelDocument | None]:
    """The model itself (and no document), or the one a file names, read once, with its document (the axis kind
    the file declares). A file on the other axis kind than the one ``device``'s name states is refused here
    (:func:`~hapticam.models.files.check_axis`); on a device that states its axis only when it opens, check it once the device is open."""
    if isinstance(model, Model):
        return model, None
    from hapticam.devices.registry import device_axis
    from hapticam.models.files import check_axis, load_model

    loaded, doc = load_model(model)
    axis = device_axis(device)
    if axis is not None:
        check_axis(doc, axis)
    return loaded, doc


def make_device(settings: RenderSettings) -> Device:
    """The render's device (not opened), with the simulated user at its handle."""
    from hapticam.devices.registry import device_class, device_from_spec
    from hapticam.world.users import make_user

    given = "axis" if settings.axis is not None else "origin_mm" if settings.origin_mm is not None else None
    if given and not device_class(str(settings.device).partition(":")[0]).renders_along_axis:
        raise ParameterError(given, f"chooses the axis of a 3-D device (phantom); device {settings.device} has one")
    user = make_user(settings.user, USER_PERIODS_S[settings.user], settings.depth_m).repeating()
    return device_from_spec(settings.device, user=user, seed=settings.seed, axis=settings.axis,
                            origin_mm=settings.origin_mm)


def render_on_device(settings: RenderSettings,
                     before_run: Callable[[list[str], Device, RenderSession], None] | None = None) -> RenderOutcome:
    """Render ``settings.model`` on ``settings.device`` (module docstring); ``before_run(gate_warnings,
    device, session)`` is called once everything has been accepted, before the first tick."""
    from hapticam.devices.registry import device_axis
    from hapticam.render.gate import check_for_device, control_check
    from hapticam.render.loop import LoopConfig
    from hapticam.render.safety import SafetyConfig
    from hapticam.render.session import RenderSession, StopFailed

    duration_s = check_settings(settings)
    config = LoopConfig(rate_hz=settings.rate_hz, display=settings.display).checked()
    model, doc = load_for_device(settings.model, settings.device)
    axis_at_open = device_axis(settings.device) is None     # the device states it when it opens
    device = make_device(settings)
    safety = SafetyConfig(max_force_N=settings.max_force_N, passivity=settings.passivity)
    ticks = None if settings.realtime else int(round(duration_s * config.rate_hz))    # type: ignore[operator]
    problems: list[str] = []
    with _opened(device, problems):
        if axis_at_open:
            from hapticam.models.files import check_axis
            check_axis(doc, device.spec.axis)
        gate_warnings = check_for_device(model, device.spec, config.rate_hz, allow_active=settings.allow_active)
        if not settings.realtime and not device.servo_binding().simulated:
            raise ParameterError("realtime", f"the simulated clock needs a simulated device, not {settings.device}; "
                                 "hardware runs in real time")
        link = device.session_notes()
        session = RenderSession(model, device, config, safety, record=settings.record, telemetry=settings.telemetry,
                                control=settings.control, simulated_ticks=ticks, record_dir=settings.record_dir,
                                model_dir=settings.model_dir, auth=settings.auth,
                                check_model=control_check(lambda: session.loop.model, device.spec, config.rate_hz,
                                                          settings.allow_active),
                                metadata={"source": settings.source, "model": _model_name(settings.model, model),
                                          "device": settings.device, "rate_hz": settings.rate_hz,
                                          "user": settings.user, **({"device_link": link} if link else {})})
        if before_run is not None:
            before_run(gate_warnings, device, session)
        notes_before_run = len(getattr(device, "notes", None) or [])
        try:
            report = session.run(duration_s, realtime=settings.realtime)
        except StopFailed as exc:           # the run ended, a step of its finish failed: the statistics kept
            report = exc.report
            problems += exc.problems
    return RenderOutcome(report, gate_warnings, device, notes_before_run, problems)


def _model_name(given: Any, model: Model) -> str:
    """What the recording's metadata calls the model: the file or name given, else the model's kind."""
    return model.kind if isinstance(given, Model) else os.fspath(given)


@contextlib.contextmanager
def _opened(device: Device, problems: list[str]) -> Iterator[Device]:
    """``with device`` (open, then close: zero force and disable), except that closing it after a run that
    ended fails into ``problems`` rather than raising, so that the run's statistics are told first."""
    with contextlib.ExitStack() as failing:
        failing.enter_context(device)              # closed by the stack only if the body raises
        yield device
        failing.pop_all()
    try:
        device.close()
    except HapticError as exc:
        problems.append(str(exc))
