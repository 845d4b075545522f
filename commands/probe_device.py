"""``hapticam probe --device KIND[:ADDRESS]``: probe a real object and stream the capture.

:data:`PROBE_DEVICES` maps each ``KIND`` to the function that runs it, ``function(address, args) -> exit
code`` (``args``: the command line of ``hapticam probe``); a new backend is one entry. The position-
controlled ones (``serial:PORT``, ``phantom``) share :func:`probe_with`: the stroke of ``--excitation``
over ``--center-mm`` +- ``--amplitude-mm`` at ``--rate`` (default 1000 Hz), the force limit
``--force-limit-N``, progress on standard error, the capture streamed to ``-o CAPTURE.csv``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from typing import Any, Callable

from hapticam.errors import DeviceError, UsageError

#: ``--device`` kinds -> ``"module:function"`` run as ``function(address, args)``, returning the exit code
PROBE_DEVICES = {
    "serial": "hapticam.commands.probe_device:probe_serial",
    "phantom": "hapticam.commands.probe_device:probe_phantom",
    "meter": "hapticam.commands.probe_device:probe_meter",
}
#: the command rate of a device probe unless ``--rate`` says otherwise (Hz): the serial firmware's and the
#: Phantom scheduler's usual rate
DEVICE_RATE_HZ = 1000.0
#: the force on the object that stops a stroke unless ``--force-limit-N`` says otherwise (N)
DEFAULT_FORCE_LIMIT_N = 2.0


def run_device_probe(args: argparse.Namespace) -> int:
    """Dispatch ``--device KIND[:ADDRESS]`` to its backend (one line and exit code 2 for an unknown kind)."""
    kind, _, address = str(args.device).partition(":")
    if kind not in PROBE_DEVICES:
        known = ", ".join(f"{k}:PORT" if k in ("serial", "meter") else k for k in PROBE_DEVICES)
        raise UsageError(f"--device {args.device}: unknown probe device {kind!r} (one of {known})")
    if args.target:
        raise UsageError(f"--device probes a real object: drop TARGET {args.target!r} (simulated targets are probed "
                         "without --device)")
    module, _, name = PROBE_DEVICES[kind].partition(":")
    backend: Callable[[str, argparse.Namespace], int] = getattr(importlib.import_module(module), name)
    return backend(address, args)


def probe_serial(address: str, args: argparse.Namespace) -> int:
    """``serial:PORT``: an hsp device's own position servo, load cell and switch contact (its probing frames)."""
    from hapticam.devices.serial_probe import open_probe

    stroke = _stroke_args(args)
    return probe_with(open_probe(address, stroke["rate_hz"]), args, stroke, f"serial:{address}")


def probe_phantom(address: str, args: argparse.Namespace) -> int:
    """``phantom[:LIBRARY]``: a Phantom / Touch pressing the object under host-side position control."""
    from hapticam.devices.phantom_probe import open_probe

    stroke = _stroke_args(args)
    return probe_with(open_probe(address, stroke["rate_hz"]), args, stroke, "phantom")


def _stroke_args(args: argparse.Namespace) -> dict[str, Any]:
    """The stroke a device probe asks for, checked before any device is opened."""
    from hapticam.devices.probe_capture import check_stream_path

    if args.center_mm is None or args.amplitude_mm is None:
        raise UsageError("--device: give the stroke with --center-mm C --amplitude-mm A (mm along the probe's axis, "
                         "+x pressing the object)")
    if args.excitation in ("spin-down", "turns"):
        raise UsageError(f"--excitation {args.excitation} is for rotary targets; a device probe is linear")
    if args.frequency_hz is not None and args.excitation != "sine":
        raise UsageError("--frequency-hz applies to --excitation sine only")
    if args.band_hz is not None and args.excitation not in ("sweep", "multisine"):
        raise UsageError("--band-hz applies to --excitation sweep or multisine only")
    rate = DEVICE_RATE_HZ if args.rate is None else args.rate
    if not 10.0 <= rate <= 10000.0:
        raise UsageError(f"--rate {rate:g}: a device probe commands at 10 to 10000 Hz")
    return {"rate_hz": rate, "output": check_stream_path("-o", args.output),
            "force_limit_N": DEFAULT_FORCE_LIMIT_N if args.force_limit_N is None else args.force_limit_N}


def probe_with(link: Any, args: argparse.Namespace, stroke: dict[str, Any], device: str) -> int:
    """Run the stroke on ``link`` (a :class:`~hapticam.devices.probe_device.ProbeLink`), stream the capture,
    print one summary line; a fault ends it with zero force, the capture kept, and a :class:`DeviceError`."""
    from hapticam.world.excitations import make_excitation
    from hapticam.devices.probe_capture import CaptureStream
    from hapticam.devices.probe_device import ProbeLimits, run_probe

    c, a = 1e-3 * args.center_mm, 1e-3 * args.amplitude_mm
    excitation = make_excitation(args.excitation, c - a, c + a, args.duration, frequency_hz=args.frequency_hz,
                                 band_hz=None if args.band_hz is None else tuple(args.band_hz), seed=args.seed)
    limits = ProbeLimits(force_limit_N=stroke["force_limit_N"])
    out = stroke["output"]
    meta = {"source": "hapticam probe --device", "device": device, "sample_rate_hz": stroke["rate_hz"],
            "force_limit_N": limits.force_limit_N, "excitation": excitation.metadata()}
    outcome = run_probe(link, excitation, lambda: CaptureStream(out, {**meta, "device": link.name}), limits,
                        progress=_progress_line(excitation.duration_s))
    sys.stderr.write("\n" if sys.stderr.isatty() else "")
    summary = (f"{device}: {outcome.samples} samples at {stroke['rate_hz']:g} Hz, peak force "
               f"{outcome.peak_force_N:.4g} N, stopped: {outcome.stopped} -> {out}")
    if outcome.stopped in ("fault", "workspace", "host-watchdog", "interrupted"):
        why = f": {outcome.fault}" if outcome.fault else ""
        raise DeviceError(f"probe stopped ({outcome.stopped}{why}); force off; {summary}")
    if args.json:
        print(json.dumps({"device": link.name, "output": str(out), "samples": outcome.samples,
                          "sample_rate_hz": stroke["rate_hz"], "stopped": outcome.stopped,
                          "peak_force_N": outcome.peak_force_N, "worst_lateness_us": outcome.worst_lateness_us}))
    else:
        print(summary)
    if outcome.stopped == "force-limit":
        print(f"note: the force on the object passed {limits.force_limit_N:g} N (--force-limit-N): the stroke was "
              "stopped and the probe retracted", file=sys.stderr)
    return 0


def _progress_line(duration_s: float) -> Callable[[float, Any], None]:
    """Progress on standard error about ten times a second: share of the stroke, position, force, contact
    (one line rewritten in a terminal; a line per 10 % otherwise)."""
    tty = sys.stderr.isatty()
    shown = [-1]

    def show(fraction: float, sample: Any) -> None:
        contact = {1: ", contact closed", 0: ", contact open"}.get(sample.contact, "")
        text = (f"probe: {100 * fraction:3.0f} % of {duration_s:g} s, x {1e3 * sample.x_m:.3f} mm, "
                f"force {sample.force_N:.3f} N{contact}")
        if tty:
            sys.stderr.write("\r" + text.ljust(72))
        elif int(10 * fraction) > shown[0]:
            shown[0] = int(10 * fraction)
            sys.stderr.write(text + "\n")
        sys.stderr.flush()

    return show


def meter_probe(address: str, output: str | os.PathLike[str], *, as_json: bool = False, timeout_s: float = 5.0,
                header_timeout_s: float = 60.0) -> int:
    """``hapticam probe --device meter:PORT -o OUTPUT``: record (timeouts in s: :func:`record_meter`), print one
    line (or ``as_json``, one JSON object) and return the exit status: 0 complete, 1 cut short (the partial
    record is kept). A port that cannot be opened or sends no header raises
    :class:`~hapticam.errors.DeviceError` (exit status 2)."""
    port = address[len("meter:"):] if address.startswith("meter:") else address
    if not port:
        raise UsageError("--device meter:PORT: name the meter's serial port (e.g. meter:/dev/ttyUSB0)")
    from hapticam.devices.meter_port import record_meter
    from hapticam.progress import shown

    result = record_meter(port, output, timeout_s=timeout_s, header_timeout_s=header_timeout_s,
                          progress=sys.stderr if shown() else None)
    if as_json:
        print(json.dumps(result.to_dict()))
    else:
        print(result.describe() if result.complete else f"hapticam: {result.describe()}",
              file=sys.stdout if result.complete else sys.stderr)
    return 0 if result.complete else 1


def probe_meter(address: str, args: Any) -> int:
    """``hapticam probe --device meter:PORT -o OUTPUT [--json]`` as a ``--device`` backend (``address``: the
    port; ``args``: the command's options). The meter strokes by itself (5 um steps to its own reverse
    limit), so a stroke given on the command line is refused."""
    for option, name in (("--center-mm", "center_mm"), ("--amplitude-mm", "amplitude_mm")):
        if getattr(args, name, None) is not None:
            raise UsageError(f"--device meter: drop {option}: the meter presses in 5 um steps up to its own reverse "
                             "limit and back")
    if not getattr(args, "output", None):
        raise UsageError("--device meter:PORT needs -o CAPTURE (a .csv or .npz file)")
    return meter_probe(address, args.output, as_json=bool(getattr(args, "json", False)))
