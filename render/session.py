"""A render session: the loop plus recording, telemetry and control, as ``hapticam render`` runs it.

Real time: the loop runs on its own thread; a pump thread streams its ticks to the recorder and the
telemetry publisher; a control thread answers requests. Ctrl-C (SIGINT) and SIGTERM end a session the
same way: the loop stops, writing zero force as its last act, the pump drains the remaining ticks, the
recording is completed and renamed into place, and the statistics are returned (a second signal during
that short finish is noted, not obeyed). Every step of that finish is taken even if an earlier one
failed (a servo thread that failed, a recording cut short by a full disk): the session then raises
:class:`StopFailed`, which says what failed and carries the report with the statistics there are.
``kill -9`` leaves the recording's ``.partial`` file, valid up to its last flush
(:mod:`hapticam.render.recover`).

Simulated clock: the loop runs on the calling thread as fast as it can; the ring is sized to hold the
whole run, and recording and telemetry are served from it at the end of each chunk.
"""

from __future__ import annotations

import os
import signal
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from hapticam.devices.base import Device
from hapticam.errors import RenderError
from hapticam.fileio import remove_stale_temp_files
from hapticam.models.base import Model
from hapticam.render import clock
from hapticam.render.control import ControlServer
from hapticam.render.endpoints import Auth, ServerSecurity
from hapticam.render.loop import LoopConfig, ServoLoop
from hapticam.render.recording import Recorder
from hapticam.render.recover import partial_files
from hapticam.render.safety import SafetyConfig
from hapticam.render.stats import LoopStats, SafetyEvent
from hapticam.render.telemetry import Pump, TelemetryPublisher

STOP_SIGNALS = ("SIGINT", "SIGTERM")


@dataclass
class SessionReport:
    """What a session did: loop statistics, events, recording (path, ticks), telemetry counters (batches
    sent and dropped, subscriptions refused: :class:`~hapticam.render.telemetry.TelemetryPublisher`), the
    signal that ended it (``"SIGINT"``, ``"SIGTERM"`` or ``None``), real-time hygiene applied."""

    stats: LoopStats
    events: list[SafetyEvent]
    recording: tuple[Path, int] | None
    interrupted: bool
    telemetry_sent: int = 0
    telemetry_dropped: int = 0
    telemetry_refused_subscriptions: int = 0
    lost_ticks: int = 0
    signal: str | None = None
    hygiene: dict[str, str] = field(default_factory=dict)


class StopFailed(RenderError):
    """A session ended, but a step of its finish failed (module docstring): the message says what, one
    line each; ``report`` holds the statistics, events and counters there are."""

    def __init__(self, problems: list[str], report: SessionReport) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems
        self.report = report


class _Stopped(KeyboardInterrupt):
    """Raised in the main thread by SIGTERM (SIGINT raises KeyboardInterrupt itself)."""


class RenderSession:
    """Compose a :class:`ServoLoop` with recording, telemetry and control (each optional).

    ``hygiene``: lock memory, prefault the servo thread's stack and pin it to a core of its own while the
    loop runs in real time (:func:`hapticam.render.clock.enable_hygiene`). ``auth``: credentials required of telemetry subscribers and control clients
    (:mod:`hapticam.render.endpoints`; needed to listen beyond loopback). ``notes`` collects what the
    caller should tell the user at start (stale files of earlier crashes in the recording folders, and
    who can connect to a socket on ``tcp://`` without credentials: any local user).
    """

    def __init__(self, model: Model, device: Device, config: LoopConfig | None = None,
                 safety: SafetyConfig | None = None, *, record: str | os.PathLike[str] | None = None,
                 telemetry: str | None = None, control: str | None = None,
                 load_model: Callable[[str], Any] | None = None, metadata: dict[str, Any] | None = None,
                 simulated_ticks: int | None = None, record_dir: str | os.PathLike[str] = ".",
                 model_dir: str | os.PathLike[str] | None = None,
                 check_model: Callable[[Any], None] | None = None, auth: Auth | None = None,
                 hygiene: bool = True) -> None:
        config = config or LoopConfig()
        self.hygiene = hygiene and config.realtime
        if simulated_ticks is not None and config.ring_capacity <= simulated_ticks:
            config = replace(config, ring_capacity=simulated_ticks + 1)
        if control and check_model is None:     # control never swaps in what the command line would refuse
            from hapticam.render.gate import control_check

            check_model = control_check(lambda: self.loop.model, device.spec, config.rate_hz)
        if safety is not None and safety.passivity:
            _passivity_controller_check(model, device, config.rate_hz)     # the model to render now
            check_model = _with_passivity_check(check_model, device, config.rate_hz)
        self.loop = ServoLoop(model, device, config, safety)
        self.recorder = Recorder({**(metadata or {}), **({"axis": "rotary"} if device.spec.axis == "rotary" else {})})
        self.notes = self._stale_notes([Path(record).parent if record else None, Path(record_dir) if control else None])
        self.security = ServerSecurity(auth) if auth is not None and (telemetry or control) else None
        self.publisher = None
        self.control = None
        try:
            if telemetry:
                self.publisher = TelemetryPublisher(telemetry, self.loop.rate_hz, security=self.security)
            if load_model is None:             # a swap reads the model in the device's units (linear or rotary)
                from hapticam.models.files import load_model_to_render
                load_model = lambda source: load_model_to_render(source, device.spec.axis)  # noqa: E731
            if control:
                self.control = ControlServer(control, self.loop, self.recorder, load_model, record_dir=record_dir,
                                             model_dir=model_dir, check_model=check_model, security=self.security,
                                             status_extra=self._status_extra)
            if record is not None:
                self.recorder.start(record)
        except BaseException:
            self._close_sockets()
            raise
        self.notes += [s.warning for s in (self.publisher, self.control) if s is not None and s.warning]
        sinks = [lambda first, rows, events: self.recorder.add(first, rows)]
        if self.publisher is not None:
            sinks.append(self.publisher)
        self.pump = Pump(self.loop, sinks)
        if self.publisher is not None:
            self.publisher.reader_lost = lambda: self.pump.reader.lost

    @staticmethod
    def _stale_notes(folders: list[Path | None]) -> list[str]:
        notes = []
        for folder in {f.resolve() for f in folders if f is not None and f.is_dir()}:
            for p in remove_stale_temp_files(folder):
                notes.append(f"removed {p}: the temporary file of a write that was killed before it finished")
            for p in partial_files(folder):
                notes.append(f"{p}: a recording or capture interrupted earlier (kill -9, crash); complete it with "
                             f"'hapticam recover {p}'")
        return notes

    def _status_extra(self) -> dict[str, Any]:
        pub = self.publisher
        return {"telemetry": None if pub is None else {"seq": pub.seq, "sent": pub.sent, "dropped": pub.dropped,
                                                       "refused_subscriptions": pub.refused_subscriptions,
                                                       "resets": pub.resets},
                "lost_ticks": self.pump.reader.lost, "recorded_ticks": self.recorder.ticks,
                "recording_failure": self.recorder.failure}

    def _close_sockets(self) -> None:
        if self.control is not None:
            self.control.halt()
        if self.publisher is not None:
            self.publisher.close()
        if self.security is not None:
            self.security.close()

    def run(self, duration_s: float | None, realtime: bool = True) -> SessionReport:
        """Run for ``duration_s`` (``None``: until stopped by a signal or a control ``stop``). Raises
        :class:`StopFailed`, with the report, when a step of the finish failed."""
        got: list[str] = []
        problems: list[str] = []
        previous = _install_stop_handlers(got)
        stats = None
        recording = None
        try:
            if self.control is not None:
                self.control.start()
            try:
                self._run_loop(duration_s, realtime)
            except KeyboardInterrupt:
                if not got:
                    got.append("SIGINT")
            finally:
                _install_stop_handlers(got, quiet=True)          # the finish below is not interrupted
                try:
                    stats = self.loop.stop()
                except RenderError as exc:                       # the servo thread failed or hung
                    problems.append(str(exc))
                    stats = self.loop.stats()
                finally:
                    if realtime and self.pump.is_alive():
                        self.pump.halt()
                    else:
                        self.pump.drain()
                    self._close_sockets()
                    try:
                        recording = self.recorder.stop({"ticks_lost": self.pump.reader.lost,
                                                        "safety_interventions": self.loop.stats().interventions,
                                                        **({"stopped_by": got[0]} if got else {})}, final=True)
                    except RenderError as exc:                   # a full disk: cut short, the partial kept
                        problems.append(str(exc))
        finally:
            _restore_handlers(previous)
            hygiene = clock.release_hygiene()
        report = SessionReport(stats=stats, events=self.loop.all_events(), recording=recording,
                               interrupted=bool(got), signal=got[0] if got else None,
                               telemetry_sent=self.publisher.sent if self.publisher else 0,
                               telemetry_dropped=self.publisher.dropped if self.publisher else 0,
                               telemetry_refused_subscriptions=self.publisher.refused_subscriptions
                               if self.publisher else 0,
                               lost_ticks=self.pump.reader.lost, hygiene=hygiene)
        if problems:
            raise StopFailed(problems, report)
        return report

    def _run_loop(self, duration_s: float | None, realtime: bool) -> None:
        if realtime:
            if self.hygiene:
                clock.enable_hygiene()
            self.pump.start()
            self.loop.start(duration_s)
            while not self.loop.wait(0.1):
                pass
        else:
            n = None if duration_s is None else int(round(duration_s * self.loop.rate_hz))
            try:
                self.loop.run_simulated(n_ticks=n if n is not None else 0,
                                        on_ticks=lambda first, rows: self.pump.drain())
            finally:
                self.loop.finish_simulated()


def _passivity_controller_check(model: Any, device: Device, rate_hz: float) -> None:
    """The passivity controller's own limit (:func:`~hapticam.render.safety.check_passivity_controller`)."""
    from hapticam.render.safety import check_passivity_controller, rendered_stiffness_Npm

    if isinstance(model, Model):
        check_passivity_controller(rendered_stiffness_Npm(model, device.spec), device.spec, rate_hz)


def _with_passivity_check(check: Callable[[Any], None] | None, device: Device,
                          rate_hz: float) -> Callable[[Any], None]:
    """``check`` (a swap's, which compares with the loop's current model) plus the passivity controller's limit."""
    def checked(model: Any) -> None:
        if check is not None:
            check(model)
        _passivity_controller_check(model, device, rate_hz)
    return checked


def _install_stop_handlers(got: list[str], quiet: bool = False) -> dict[int, Any]:
    """SIGINT and SIGTERM handlers (main thread only): the first raises to end the run, later ones and
    any during the finish (``quiet``) are only noted in ``got``."""
    if threading.current_thread() is not threading.main_thread():
        return {}

    def handler(signum: int, _frame: Any) -> None:
        name = signal.Signals(signum).name
        first = not got
        got.append(name)
        if first and not quiet:
            raise _Stopped(name)
    previous = {}
    for name in STOP_SIGNALS:
        num = getattr(signal, name)
        previous[num] = signal.signal(num, handler)
    return previous


def _restore_handlers(previous: dict[int, Any]) -> None:
    for num, old in previous.items():
        signal.signal(num, old if old is not None else signal.SIG_DFL)
