"""An emulator of the Open-Switch-Curve-Meter's serial stream on a pseudo-terminal.

bluepylons' Open-Switch-Curve-Meter (CC-BY 4.0, bluepylons/Open-Switch-Curve-Meter) presses a keyboard switch
with a stepper-driven probe against an HX711 load cell. When its Start button is pressed, its first-generation
firmware prints the header ``Raw X (microns),Raw Force (gf),Actuated?`` and then, once a loop, reads the load
cell and the switch's electrical contact, moves one 5 um step and prints ``position, force,actuated`` (an
integer in microns, gram-force with two decimals, 0 or 1), pressing until a reading passes the reverse limit
(110 gf by default), then releasing back to 0, where it stops. What this emulator reproduces of it:

* the press prints the position where the reading was taken; the release moves first and prints the position
  it arrived at, so each release reading is labelled one step shallower than where it was taken and the
  deepest press position is printed twice (the second time with the reading over the limit);
* the load cell's offset (its reading with nothing on it), its noise, and its occasional drop-outs: an
  isolated reading near -207 gf (the meter's README reports one in roughly ten measurements);
* the switch: a :class:`SwitchCurve` (a closed-form tactile switch: free travel, preload, spring, bump,
  bottom-out; the release lower by its friction), and its contact, closed from ``actuation_um`` on the press
  until the travel is back to ``release_um`` on the release.

:class:`MeterEmulator` serves one measurement on a fresh pseudo-terminal (``os.openpty``, raw mode) each time
a host opens its slave: opening the real meter's port restarts its Arduino, and the measurement starts
``start_delay_s`` later (the Start button). Faults for tests: bytes before the header (``preamble``), no
header at all, lines of garbage among the data (``garbage``: text by data-line index), silence after a
number of data lines (``stall_after``) and a hang-up (``hangup_after``: the cable pulled).

Run ``python -m hapticam.devices.meter_emulator`` to serve measurements until Ctrl-C; it prints the port's
path (``--help`` for the curve and the faults).
"""

from __future__ import annotations

import argparse
import os
import select
import sys
import threading
import time
import tty
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

HEADER = "Raw X (microns),Raw Force (gf),Actuated?"
#: the firmware's defaults: microns per loop, reverse limit (gf)
STEP_UM = 5
REVERSE_LIMIT_GF = 110.0
#: where an HX711 drop-out reads (gf), and its spread
DROPOUT_GF = -207.0
DROPOUT_SPREAD_GF = 0.5
#: from the last line sent to the hang-up (s)
HANGUP_DELAY_S = 1.0
#: the deepest a measurement goes (um) before the emulator refuses the curve (the probe would crush it)
MAX_TRAVEL_UM = 20_000


@dataclass(frozen=True)
class SwitchCurve:
    """A tactile keyboard switch's force on the probe (gf) against its travel (um), in closed form.

    Free travel up to ``contact_um``; the preload ``preload_gf`` taken up over ``ramp_um``; the spring
    (``spring_gf_per_mm``); a tactile bump (a Gaussian of height ``bump_gf`` at ``bump_um``, width
    ``bump_width_um``); bottom-out from ``bottom_um`` (``bottom_gf_per_um2`` times the square of the travel
    past it). The release runs ``release_drop_gf`` lower (friction) with its bump scaled by
    ``release_bump_fraction``, never below 0. The contact closes at ``actuation_um`` on the press and opens
    at ``release_um`` on the release."""

    contact_um: float = 400.0
    ramp_um: float = 40.0
    preload_gf: float = 30.0
    spring_gf_per_mm: float = 10.0
    bump_gf: float = 18.0
    bump_um: float = 1500.0
    bump_width_um: float = 300.0
    bottom_um: float = 3400.0
    bottom_gf_per_um2: float = 0.004
    release_drop_gf: float = 6.0
    release_bump_fraction: float = 0.5
    actuation_um: float = 2000.0
    release_um: float = 1900.0

    def force_gf(self, x_um: np.ndarray | float, pressing: bool) -> np.ndarray:
        """Force on the probe (gf) at travel ``x_um`` (um) on the press (``pressing``) or the release."""
        x = np.asarray(x_um, dtype=np.float64)
        past = x - self.contact_um
        engaged = np.clip(past / self.ramp_um, 0.0, 1.0)
        bump = self.bump_gf * (1.0 if pressing else self.release_bump_fraction)
        force = (self.preload_gf + self.spring_gf_per_mm * 1e-3 * np.maximum(past, 0.0)
                 + bump * np.exp(-((x - self.bump_um) / self.bump_width_um) ** 2)
                 + self.bottom_gf_per_um2 * np.maximum(x - self.bottom_um, 0.0) ** 2)
        if not pressing:
            force = np.maximum(force - self.release_drop_gf, 0.0)
        return engaged * force

    def actuated(self, x_um: float, pressing: bool) -> bool:
        """The switch's contact at travel ``x_um`` (um): closed from ``actuation_um`` on the press, until
        the travel is back to ``release_um`` on the release."""
        return bool(x_um >= self.actuation_um) if pressing else bool(x_um > self.release_um)


@dataclass
class Measurement:
    """One press and release as the firmware prints it, and the same without noise and drop-outs.

    ``position_um`` (printed labels, um), ``reading_gf`` (printed, two decimals), ``actuated`` (0/1),
    ``exact_gf`` (the curve's force plus the load cell's offset, gf, at the position of each reading),
    ``dropouts`` (indices of the drop-out readings)."""

    position_um: np.ndarray
    reading_gf: np.ndarray
    actuated: np.ndarray
    exact_gf: np.ndarray
    dropouts: np.ndarray

    def lines(self) -> list[str]:
        """The data lines, as the firmware prints them (no line ending)."""
        return [f"{int(x)}, {f:.2f},{int(a)}" for x, f, a in zip(self.position_um, self.reading_gf, self.actuated)]

    def exact_lines(self) -> list[str]:
        """The data lines with the exact force (no noise, no drop-outs, no rounding)."""
        return [f"{int(x)}, {float(f)!r},{int(a)}" for x, f, a in zip(self.position_um, self.exact_gf, self.actuated)]


@dataclass
class MeterFirmware:
    """The first-generation firmware's measurement loop on a :class:`SwitchCurve` (module notes).

    ``offset_gf``: the load cell's reading with no load (gf); ``noise_gf``: its standard deviation (gf);
    ``dropout_rate``: the chance that a reading after the first is a drop-out; ``dropout_at``: data-line
    indices that are drop-outs in any case; ``seed``: of the noise and drop-outs."""

    curve: SwitchCurve = field(default_factory=SwitchCurve)
    step_um: int = STEP_UM
    reverse_limit_gf: float = REVERSE_LIMIT_GF
    offset_gf: float = 0.4
    noise_gf: float = 0.15
    dropout_rate: float = 1e-4
    dropout_at: Sequence[int] = ()
    seed: int = 0

    def measure(self) -> Measurement:
        """Run the loop once: readings, labels, contact (module notes)."""
        rng = np.random.default_rng(self.seed)
        labels: list[int] = []
        readings: list[float] = []
        exact: list[float] = []
        contact: list[int] = []
        drops: list[int] = []
        position, reverse = 0, False
        while True:
            pressing = not reverse
            true_gf = float(self.curve.force_gf(position, pressing)) + self.offset_gf
            index = len(labels)
            dropout = index in self.dropout_at or (index > 0 and rng.random() < self.dropout_rate)
            reading = (DROPOUT_GF + rng.normal(0.0, DROPOUT_SPREAD_GF) if dropout
                       else true_gf + rng.normal(0.0, self.noise_gf))
            reverse = reverse or reading > self.reverse_limit_gf
            closed = int(self.curve.actuated(position, pressing))
            if not reverse:
                label = position
                position += self.step_um
            else:
                position -= self.step_um
                label = position
            labels.append(label)
            readings.append(round(reading, 2))
            exact.append(true_gf)
            contact.append(closed)
            if dropout:
                drops.append(index)
            if reverse and position <= 0:
                break
            if position > MAX_TRAVEL_UM:
                raise ValueError(f"the curve never passes the {self.reverse_limit_gf:g} gf reverse limit within "
                                 f"{MAX_TRAVEL_UM / 1000:g} mm")
        return Measurement(np.array(labels), np.array(readings), np.array(contact), np.array(exact),
                           np.array(drops, dtype=np.int64))


class MeterEmulator:
    """The meter on a pseudo-terminal: one measurement each time a host opens the port (module notes).

    ``start_delay_s``: from the host's open to the header (s); ``line_period_s``: between data lines (s; the
    real meter takes about 17 ms a loop in the HX711's 80 Hz mode). Faults: ``preamble`` (bytes sent before
    the header), ``header`` (False: none, and no data), ``garbage`` (data-line index -> bytes sent before that
    line, a line ending included or not), ``stall_after`` (data lines sent before the meter falls silent, the
    port left open), ``hangup_after`` (data lines sent before the pseudo-terminal is closed)."""

    def __init__(self, firmware: MeterFirmware | None = None, *, start_delay_s: float = 0.3,
                 line_period_s: float = 0.0, preamble: bytes = b"", header: bool = True,
                 garbage: dict[int, bytes] | None = None, stall_after: int | None = None,
                 hangup_after: int | None = None, repeat: bool = False) -> None:
        self.firmware = firmware or MeterFirmware()
        self.measurement = self.firmware.measure()
        self.start_delay_s = start_delay_s
        self.line_period_s = line_period_s
        self.preamble = preamble
        self.header = header
        self.garbage = dict(garbage or {})
        self.stall_after = stall_after
        self.hangup_after = hangup_after
        self.repeat = repeat
        self.port: str | None = None
        self.sent_lines = 0
        self.measurements = 0
        self._master: int | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> str:
        """Open the pseudo-terminal and serve in a thread; returns the port's path (the slave)."""
        master, slave = os.openpty()
        tty.setraw(slave)
        self.port = os.ttyname(slave)
        os.close(slave)                    # the master reads "hung up" until a host opens the slave
        os.set_blocking(master, False)
        self._master = master
        self._thread = threading.Thread(target=self._serve, name="meter-emulator", daemon=True)
        self._thread.start()
        return self.port

    def stop(self, timeout_s: float = 5.0) -> None:
        """Stop serving and close the pseudo-terminal."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout_s)
            self._thread = None
        self._close()

    @property
    def serving(self) -> bool:
        """True while the emulator's thread runs."""
        return self._thread is not None and self._thread.is_alive()

    def __enter__(self) -> "MeterEmulator":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- serving ----------------------------------------------------------------------------------------
    def _close(self) -> None:
        master, self._master = self._master, None
        if master is not None:
            os.close(master)

    def _host_present(self) -> bool:
        """True while a host holds the slave open (the master does not read as hung up)."""
        if self._master is None:
            return False
        poller = select.poll()
        poller.register(self._master, select.POLLHUP)
        return not any(event & select.POLLHUP for _fd, event in poller.poll(0))

    def _wait(self, opened: bool) -> bool:
        """Wait until a host has the port ``opened`` (or closed it); False when stopped first."""
        while not self._stop.is_set():
            if self._master is None:
                return False
            if self._host_present() == opened:
                return True
            self._stop.wait(0.01)
        return False

    def _send(self, data: bytes) -> bool:
        """Write all of ``data`` (waiting while the host does not read); False when stopped or closed."""
        view = memoryview(data)
        while view and not self._stop.is_set() and self._master is not None:
            try:
                view = view[os.write(self._master, view):]
            except BlockingIOError:
                select.select([], [self._master], [], 0.01)
            except OSError:
                return False
        return not view

    def _serve(self) -> None:
        while self._wait(opened=True):
            if self._stop.wait(self.start_delay_s) or not self._measure_once():
                return
            self.measurements += 1
            if not self.repeat or not self._wait(opened=False):
                break
        while not self._stop.wait(0.05):       # keep the line up (a silent meter) until stopped
            pass

    def _await_drained(self) -> None:
        """Give the host ``HANGUP_DELAY_S`` to read what was sent: closing the master drops what the slave
        still holds, where a real cable pulled after a line has delivered it."""
        self._stop.wait(HANGUP_DELAY_S)

    def _measure_once(self) -> bool:
        """Send one measurement with its faults; False when the line was closed or the emulator stopped."""
        if self.preamble and not self._send(self.preamble):
            return False
        if not self.header:
            return True
        if not self._send((HEADER + "\n").encode()):
            return False
        for index, line in enumerate(self.measurement.lines()):
            if index == self.hangup_after:
                self._await_drained()
                self._close()
                return False
            if index == self.stall_after:
                return True
            if index in self.garbage and not self._send(self.garbage[index]):
                return False
            if not self._send((line + "\n").encode()):
                return False
            self.sent_lines += 1
            if self.line_period_s and self._stop.wait(self.line_period_s):
                return False
        return True


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m hapticam.devices.meter_emulator",
                                description="Emulate the Open-Switch-Curve-Meter's serial stream (first-generation "
                                            "firmware) on a pseudo-terminal; prints the port's path and serves one "
                                            "measurement each time a host opens it, until Ctrl-C.")
    p.add_argument("--seed", type=int, default=0, help="seed of the load cell's noise and drop-outs")
    p.add_argument("--line-period-ms", type=float, default=17.0, help="time between lines (default 17, the HX711's "
                                                                      "80 Hz mode)")
    p.add_argument("--noise-gf", type=float, default=0.15, help="load cell noise, standard deviation (gf)")
    p.add_argument("--dropout-rate", type=float, default=1e-4,
                   help="chance of a drop-out per reading (default 1e-4: one in about seven measurements)")
    p.add_argument("--reverse-limit-gf", type=float, default=REVERSE_LIMIT_GF, help="reverse limit (gf)")
    p.add_argument("--stall-after", type=int, help="fall silent after this many data lines")
    p.add_argument("--hangup-after", type=int, help="close the port after this many data lines")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Serve measurements until Ctrl-C (module notes)."""
    args = _parse(argv)
    firmware = MeterFirmware(seed=args.seed, noise_gf=args.noise_gf, dropout_rate=args.dropout_rate,
                             reverse_limit_gf=args.reverse_limit_gf)
    emulator = MeterEmulator(firmware, line_period_s=1e-3 * args.line_period_ms, stall_after=args.stall_after,
                             hangup_after=args.hangup_after, repeat=True)
    print(emulator.start(), flush=True)
    print(f"{len(emulator.measurement.lines())} data lines a measurement; Ctrl-C to stop", file=sys.stderr)
    try:
        while emulator.serving:
            time.sleep(0.2)
    except KeyboardInterrupt:
        pass
    finally:
        emulator.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
