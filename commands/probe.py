"""``hapticam probe``: probe a simulated physical target and write the capture (and ``hapticam bench probe``);
``hapticam devices``: the registered device adapters, whether each one's driver is present, and how to
install what is missing.

::

    hapticam probe --list
    hapticam probe TARGET [--excitation sweep|sine|triangle|multisine|step] [--duration S]
                   [--amplitude-mm A] [--center-mm C] [--frequency-hz F] [--band-hz LO HI]
                   [--rate HZ] [--seed N] [--noise-mN SD] [--set NAME=VALUE ...] -o CAPTURE.csv
    hapticam probe --device serial:PORT|phantom --center-mm C --amplitude-mm A [--excitation ...]
                   [--duration S] [--rate HZ] [--force-limit-N F] -o CAPTURE.csv
    hapticam probe --device meter:PORT -o CAPTURE.csv

The default excitation range is the target's own travel (``Target.probe_range_m``): the probe starts
at rest at its low end. ``--amplitude-mm`` alone keeps that start and changes the reach.

``--device`` probes a real object instead (:mod:`hapticam.commands.probe_device`, whose ``PROBE_DEVICES``
lists the kinds): no TARGET, the stroke given in mm, the capture streamed to a ``.csv`` file.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
from pathlib import Path
from typing import Any

from hapticam.errors import UsageError
from hapticam.fileio import check_output_file, json_safe, report_json

#: ``hapticam.world.excitations.EXCITATION_KINDS``, named here so that building the command line imports
#: no simulation code (numba, scipy); ``tests/test_cli_startup.py`` keeps the two the same
EXCITATION_KINDS = ("sweep", "sine", "triangle", "multisine", "step", "spin-down", "turns")
_SUFFIXES = (".csv", ".npz")


def _finite(text: str) -> float:
    """argparse type: a finite float."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be finite, got {text!r}")
    return value


def _positive(text: str) -> float:
    value = _finite(text)
    if value <= 0.0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text!r}")
    return value


def _nonnegative(text: str) -> float:
    value = _finite(text)
    if value < 0.0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text!r}")
    return value


def seed_arg(text: str) -> int:
    """argparse type: a seed from 0 to 2^63 - 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if not 0 <= value < 2 ** 63:
        raise argparse.ArgumentTypeError(f"must be from 0 to 2^63 - 1, got {text!r}")
    return value


def register(sub: argparse._SubParsersAction, bench: argparse._SubParsersAction) -> None:
    """Add ``hapticam probe`` and ``bench probe`` (``bench``: the ``hapticam bench`` group)."""
    p = sub.add_parser("probe", help="probe a simulated target, or a real object with a device, and write a capture",
                       description="Drive a simulated physical target with the simulated position-controlled "
                                   "probe along an excitation and write the measured capture (t_s, x_m, "
                                   "force_N; CSV or .npz by suffix); with --device, press a real object with a "
                                   "device and stream the capture to a CSV file.")
    p.add_argument("target", nargs="?", metavar="TARGET", help="target name (see --list)")
    p.add_argument("--device", metavar="KIND[:ADDRESS]",
                   help="probe a real object with a device instead of a simulated TARGET: serial:PORT (hsp "
                        "firmware with its probing frames) or phantom (a Phantom / Touch), which need "
                        "--center-mm and --amplitude-mm; or meter:PORT (the Open-Switch-Curve-Meter's own "
                        "stroke, recorded from its serial port)")
    p.add_argument("--force-limit-N", type=_positive, metavar="F",
                   help="with --device: the force on the object that stops the stroke and retracts (default 2)")
    p.add_argument("--list", action="store_true", help="list the targets with one-line descriptions")
    p.add_argument("--params", action="store_true", help="print TARGET's parameters as JSON and exit")
    p.add_argument("--excitation", choices=EXCITATION_KINDS, default="sweep",
                   help="commanded trajectory (default: sweep, seed 001's 1-4 Hz swept sine)")
    p.add_argument("--duration", type=_positive, metavar="S",
                   help="length in s (defaults: sweep 90, sine 10, triangle 4, multisine 20, step 9.4)")
    p.add_argument("--amplitude-mm", type=_positive, metavar="A",
                   help="half the peak-to-peak travel in mm (default: half the target's travel)")
    p.add_argument("--center-mm", type=_finite, metavar="C",
                   help="centre of the travel in mm (default: start of the target's travel + amplitude)")
    p.add_argument("--frequency-hz", type=_positive, metavar="F", help="sine frequency (default 2 Hz)")
    p.add_argument("--band-hz", type=_positive, nargs=2, metavar=("LO", "HI"),
                   help="sweep or multisine band (defaults 1 4 and 0.5 8)")
    p.add_argument("--rate", type=_positive, metavar="HZ", help="sample rate (default 4000; 1000 with --device)")
    p.add_argument("--seed", type=seed_arg, default=0, metavar="N", help="seed of sensor noise and multisine phases")
    p.add_argument("--noise-mN", type=_nonnegative, metavar="SD",
                   help="force sensor noise standard deviation in mN (default 2)")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="override a target parameter (SI units; lists as a,b,c); repeatable")
    p.add_argument("-o", "--output", metavar="CAPTURE", help="output capture file (.csv or .npz)")
    p.add_argument("--json", action="store_true",
                   help="print what was written (target, excitation, samples, force range) as one JSON object")
    p.set_defaults(func=_cmd_probe)

    d = sub.add_parser("devices", help="list the device adapters, whether their drivers are present, how to install them",
                       description="List the device adapters --device accepts, whether each one's driver (Python "
                                   "package, vendor library) is present here, and how to install what is missing.")
    d.add_argument("--json", action="store_true", help="print the list as one JSON object (nothing else on stdout)")
    d.set_defaults(func=_cmd_devices)

    b = bench.add_parser(
        "probe", help="compiled probe simulation vs the same loop in pure Python (90 s sweep, 4 kHz)",
        description="Time the simulated probe on seed 001's 90 s, 1-4 Hz swept sine at 4 kHz for every "
                    "target, and the same code with numba disabled on a short stretch of it; report "
                    "times per sample and the ratio.")
    b.add_argument("--json", action="store_true", help="print the results as one JSON object (nothing else on stdout)")
    b.add_argument("--json-file", metavar="FILE", help="also write the results as JSON to FILE")
    b.add_argument("--duration", type=_positive, default=90.0, metavar="S", help="sweep length (default 90)")
    b.add_argument("--peer-seconds", type=_positive, default=0.25, metavar="S",
                   help="sweep length run in pure Python (default 0.25)")
    b.add_argument("--no-python", action="store_true", help="skip the pure-Python peer")
    b.set_defaults(func=_cmd_bench)


def _parse_sets(items: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise UsageError(f"--set {item!r}: expected NAME=VALUE")
        if name == "name":
            raise UsageError("--set name: the target's name cannot be changed")
        try:
            if "," in text:
                value: Any = tuple(_finite(v) for v in text.split(",") if v.strip())
            else:
                value = _finite(text)
        except argparse.ArgumentTypeError as exc:
            raise UsageError(f"--set {name}: {exc}") from None
        out[name] = value
    return out


def _check_output(path_text: str | None) -> Path:
    if not path_text:
        raise UsageError("probe: -o CAPTURE is required (a .csv or .npz file)")
    path = Path(path_text)
    if path.suffix.lower() not in _SUFFIXES:
        raise UsageError(f"-o {path}: unknown capture type {path.suffix or '(none)'!r}; use .csv or .npz")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(f"-o {path}: folder {parent} does not exist")
    if path.is_dir():
        raise UsageError(f"-o {path}: is a folder")
    if not os.access(parent, os.W_OK):
        raise UsageError(f"-o {path}: folder {parent} is not writable")
    return path


def _cmd_probe(args: argparse.Namespace) -> int:
    if args.device is not None and not args.list:
        from hapticam.commands.probe_device import run_device_probe

        return run_device_probe(args)
    if args.force_limit_N is not None:
        raise UsageError("--force-limit-N applies with --device only (the simulated probe has its motor's limit)")
    from hapticam.world.targets import TARGETS, get_target

    if args.list:
        width = max(len(n) for n in TARGETS)
        for name, factory in sorted(TARGETS.items()):
            print(f"{name:<{width}}  {factory().summary}")
        return 0
    if not args.target:
        raise UsageError("probe: name a TARGET (see 'hapticam probe --list')")
    target = get_target(args.target, **_parse_sets(args.set))
    if args.params:
        print(json.dumps(target.to_dict(), indent=2))
        return 0
    out = _check_output(args.output)
    if args.frequency_hz is not None and args.excitation != "sine":
        raise UsageError("--frequency-hz applies to --excitation sine only")
    if args.band_hz is not None and args.excitation not in ("sweep", "multisine"):
        raise UsageError("--band-hz applies to --excitation sweep or multisine only")

    from hapticam.world.excitations import make_excitation
    from hapticam.world.probe import ProbeSpec, simulate
    from hapticam.capture_io import save_capture

    lo, hi = target.probe_range_m()
    rotary = getattr(target, "axis", "linear") == "rotary"
    if rotary and (args.amplitude_mm is not None or args.center_mm is not None):
        raise UsageError(f"{target.name} is rotary (rad): --amplitude-mm and --center-mm do not apply; "
                         "its range is one turn, or set it with --set")
    if rotary and args.excitation not in ("spin-down", "turns"):
        raise UsageError(f"{target.name} is rotary: use --excitation spin-down or turns (a position-controlled "
                         f"{args.excitation} brakes the knob until the drive lets go)")
    if not rotary and args.excitation in ("spin-down", "turns"):
        raise UsageError(f"--excitation {args.excitation} is for rotary targets (knob)")
    amp = 0.5 * (hi - lo) if args.amplitude_mm is None else 1e-3 * args.amplitude_mm
    centre = lo + amp if args.center_mm is None else 1e-3 * args.center_mm
    if not rotary and (amp > 1.0 or abs(centre) > 1.0):
        raise UsageError(f"travel of {2e3 * amp:g} mm around {1e3 * centre:g} mm is beyond the probe's 1 m reach")
    excitation = make_excitation(args.excitation, centre - amp, centre + amp, args.duration,
                                 frequency_hz=args.frequency_hz,
                                 band_hz=None if args.band_hz is None else tuple(args.band_hz), seed=args.seed)
    rate = 4000.0 if args.rate is None else args.rate
    spec = ProbeSpec(sample_rate_hz=rate)
    if args.noise_mN is not None:
        spec = dataclasses.replace(spec, force_noise_N=1e-3 * args.noise_mN)
    run = simulate(target, excitation, spec, seed=args.seed)
    capture = run.to_capture()
    save_capture(out, capture)
    if args.json:
        print(json.dumps(json_safe({"target": target.name, "excitation": excitation.metadata(), "output": str(out),
                                    "samples": capture.n, "sample_rate_hz": rate,
                                    "force_range_N": [float(capture.f_N.min()), float(capture.f_N.max())],
                                    "saturated_steps": run.metadata["saturated_steps"],
                                    "compute_s": run.metadata["compute_s"]})))
        return 0
    scale, unit, fu = (1.0, "rad", "N m") if rotary else (1e3, "mm", "N")
    print(f"{target.name}: {excitation.metadata()['kind']} over {scale * (centre - amp):.3g} to "
          f"{scale * (centre + amp):.3g} {unit}, {capture.n} samples at {rate:g} Hz ({excitation.duration_s:g} s), "
          f"{'torque' if rotary else 'force'} {capture.f_N.min():.4g} to {capture.f_N.max():.4g} {fu}, simulated in "
          f"{run.metadata['compute_s']:.2f} s -> {out}")
    if run.metadata["saturated_steps"] and args.excitation != "spin-down":     # a spin-down's drive lets go by design
        print(f"note: the probe's motor hit its {spec.force_limit_N:g} N limit in {run.metadata['saturated_steps']} "
              f"internal steps; the probe did not follow the command there")
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    from hapticam.commands.bench.probe import format_table, run_bench

    if args.duration > 3600.0 or args.peer_seconds > 60.0:
        raise UsageError("bench probe: --duration at most 3600 s, --peer-seconds at most 60 s")
    check_output_file("--json-file", args.json_file)
    results = run_bench(duration_s=args.duration, peer_seconds=args.peer_seconds, python_peer=not args.no_python)
    report_json(results, args.json, args.json_file, format_table)
    return 0


def device_drivers() -> list[dict[str, Any]]:
    """One entry per registered adapter, built in or a plugin's: name, class, pip extra, whether its driver
    is present, what was found or is missing, and how to install it (the adapter's ``driver_status()``).
    A plugin that cannot be loaded is listed as missing, with the reason."""
    from hapticam.devices.registry import ADAPTERS, available_devices, device_class
    from hapticam.errors import DependencyMissingError, DeviceError
    from hapticam.plugins import DEVICE_GROUP, origin, plugins

    plugged = {name: entry for name, entry in plugins(DEVICE_GROUP).items() if name not in ADAPTERS}
    out = []
    for name in available_devices():
        target, extra = ADAPTERS[name] if name in ADAPTERS else (plugged[name].value, "")
        entry: dict[str, Any] = {"name": name, "adapter": target, "extra": extra or None, "plugin": name in plugged}
        pip_hint = f"pip install 'hapticam[{extra}]'" if extra else ""
        try:
            cls = device_class(name)
        except (DependencyMissingError, DeviceError) as exc:
            entry.update(present=False, detail=str(exc), install=pip_hint)
        else:
            present, detail, install = cls.driver_status()
            source = f"plugin from {origin(plugged[name])}" if name in plugged else "installed" if extra else "built in"
            entry.update(present=present, detail=detail or source, install=install or ("" if present else pip_hint))
        out.append(entry)
    return out


def _devices_table(data: dict[str, Any]) -> str:
    width = max([9] + [len(d["name"]) + 2 for d in data["devices"]])      # a plugin's name may be longer
    lines = [f"{'device':<{width}}{'driver':<9}details"]
    for d in data["devices"]:
        lines.append(f"{d['name']:<{width}}{'present' if d['present'] else 'MISSING':<9}{d['detail']}")
        if not d["present"] and d["install"]:
            lines.append(f"{'':<{width + 9}}install: {d['install']}")
    return "\n".join(lines)


def _cmd_devices(args: argparse.Namespace) -> int:
    report_json({"devices": device_drivers()}, args.json, None, _devices_table)
    return 0
