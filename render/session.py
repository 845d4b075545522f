"""A render session: the loop plus recording, telemetry and control, as ``hapticam render`` runs it.

Real time: the loop runs on its own thread; a pump thread feeds the recorder and the telemetry
publisher; a control thread answers requests. Ctrl-C (``KeyboardInterrupt`` on the main thread) stops
the loop, which writes zero force as its last act, then the pump drains the remaining ticks so the
recording is complete, and the file is written atomically.

Simulated clock: the loop runs on the calling thread as fast as it can; the ring is sized to hold the
whole run, and recording and telemetry are served from it at the end of each chunk.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable


from hapticam.devices.base import Device
from hapticam.models.base import Model
from hapticam.render.loop import LoopConfig, ServoLoop
from hapticam.render.recording import Recorder
from hapticam.render.safety import SafetyConfig
from hapticam.render.stats import LoopStats, SafetyEvent
from hapticam.render.telemetry import ControlServer, Pump, TelemetryPublisher


@dataclass
class SessionReport:
    """What a session did: loop statistics, events, recording (path, ticks), telemetry counters."""

    stats: LoopStats
    events: list[SafetyEvent]
    recording: tuple[Path, int] | None
    interrupted: bool
    telemetry_sent: int = 0
    telemetry_dropped: int = 0
    lost_ticks: int = 0


class RenderSession:
    """Compose a :class:`ServoLoop` with recording, telemetry and control (each optional)."""

    def __init__(self, model: Model, device: Device, config: LoopConfig | None = None,
                 safety: SafetyConfig | None = None, *, record: str | os.PathLike[str] | None = None,
                 telemetry: str | None = None, control: str | None = None,
                 load_model: Callable[[str], Any] | None = None, metadata: dict[str, Any] | None = None,
                 simulated_ticks: int | None = None, record_dir: str | os.PathLike[str] = ".",
                 model_dir: str | os.PathLike[str] | None = None,
                 check_model: Callable[[Any], None] | None = None) -> None:
        config = config or LoopConfig()
        if simulated_ticks is not None and config.ring_capacity <= simulated_ticks:
            config = replace(config, ring_capacity=simulated_ticks + 1)
        self.loop = ServoLoop(model, device, config, safety)
        self.recorder = Recorder(metadata)
        if record is not None:
            self.recorder.start(record)
        self.publisher = TelemetryPublisher(telemetry, self.loop.rate_hz) if telemetry else None
        sinks = [lambda first, rows, events: self.recorder.add(first, rows)]
        if self.publisher is not None:
            sinks.append(self.publisher)
        self.pump = Pump(self.loop, sinks)
        if self.publisher is not None:
            self.publisher.reader_lost = lambda: self.pump.reader.lost
        if load_model is None:
            from hapticam.models.files import load_model_only as load_model
        self.control = None
        if control:
            try:
                self.control = ControlServer(control, self.loop, self.recorder, load_model, record_dir=record_dir,
                                             model_dir=model_dir, check_model=check_model)
            except Exception:
                if self.publisher is not None:
                    self.publisher.close()
                raise

    def run(self, duration_s: float | None, realtime: bool = True) -> SessionReport:
        """Run for ``duration_s`` (``None``: until stopped by Ctrl-C or a control ``stop``)."""
        interrupted = False
        if self.control is not None:
            self.control.start()
        try:
            if realtime:
                self.pump.start()
                self.loop.start(duration_s)
                try:
                    while not self.loop.wait(0.1):
                        pass
                except KeyboardInterrupt:
                    interrupted = True
            else:
                n = None if duration_s is None else int(round(duration_s * self.loop.rate_hz))
                try:
                    self.loop.run_simulated(n_ticks=n if n is not None else 0,
                                            on_ticks=lambda first, rows: self.pump.drain())
                except KeyboardInterrupt:
                    interrupted = True
                self.loop.finish_simulated()
        finally:
            stats = self.loop.stop()
            if realtime:
                self.pump.halt()
            else:
                self.pump.drain()
            if self.control is not None:
                self.control.halt()
            if self.publisher is not None:
                self.publisher.close()
        recording = self.recorder.stop({"ticks_lost": self.pump.reader.lost,
                                        "safety_interventions": stats.interventions})
        return SessionReport(stats=stats, events=self.loop.all_events(), recording=recording,
                             interrupted=interrupted,
                             telemetry_sent=self.publisher.sent if self.publisher else 0,
                             telemetry_dropped=self.publisher.dropped if self.publisher else 0,
                             lost_ticks=self.pump.reader.lost)
