"""``hapticam render``, ``hapticam monitor`` and ``hapticam bench render``."""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

from hapticam.commands.probe import seed_arg
from hapticam.errors import RenderError, UsageError, parameters_as_flags
from hapticam.fileio import check_output_file, json_safe, report_json

#: who can connect to the telemetry and control sockets (``render --help``, ``monitor --help``)
WHO_CONNECTS = ("without ADDRESS, only you (an ipc:// socket in a folder only you can enter); on an ipc:// path "
                "you name, whoever may enter its folder and open it; on a loopback tcp:// address, any user of "
                "this machine unless --auth-secret or --auth-curve is given (render warns); beyond this machine, "
                "only with --auth-secret or --auth-curve")


def register(sub: argparse._SubParsersAction, bench: argparse._SubParsersAction) -> None:
    """Add ``render``, ``monitor`` and ``bench render`` (``bench``: the ``hapticam bench`` group)."""
    from hapticam.devices.registry import EMULATED_ADAPTERS
    from hapticam.render.endpoints import default_endpoint

    p = sub.add_parser("render", help="render a model on a haptic device (1 kHz servo loop)",
                       description="Render MODEL (a model file or example:NAME) on a device. Prints loop "
                                   "statistics and safety interventions at the end; Ctrl-C stops with zero "
                                   "force and a complete recording.")
    p.add_argument("model", help="model file (.yaml/.msgpack) or example:NAME")
    p.add_argument("--device", default="sim", metavar="NAME[:ADDRESS]",
                   help="device adapter, e.g. sim (default); 'hapticam devices' lists them")
    p.add_argument("--rate", type=float, default=1000.0, help="servo rate in Hz, 100-10000 (default 1000)")
    p.add_argument("--duration", type=float, default=None,
                   help="seconds to run (default: until Ctrl-C in real time, 2 s on the simulated clock)")
    p.add_argument("--user", default="press", choices=("press", "sine", "sweep", "finger"),
                   help="simulated user at the handle (default press)")
    p.add_argument("--depth-mm", type=float, default=4.0, help="travel of the simulated user (mm, default 4)")
    p.add_argument("--record", metavar="FILE", help="record every tick to a capture CSV")
    p.add_argument("--telemetry", nargs="?", const=default_endpoint("telemetry"), default=None, metavar="ADDRESS",
                   type=_address, help=f"publish telemetry (default address {default_endpoint('telemetry')}). "
                                       f"Who can connect: {WHO_CONNECTS}")
    p.add_argument("--control", nargs="?", const=default_endpoint("control"), default=None, metavar="ADDRESS",
                   type=_address, help=f"answer control requests, which change what the device renders (default "
                                       f"address {default_endpoint('control')}). Who can connect: as for --telemetry")
    clock = p.add_mutually_exclusive_group()
    clock.add_argument("--realtime", dest="realtime", action="store_true", default=True,
                       help="run on the wall clock (default)")
    clock.add_argument("--simulated-clock", dest="realtime", action="store_false",
                       help="run on a simulated clock, as fast as possible (simulator only)")
    p.add_argument("--passivity", action="store_true", help="enable the passivity observer/controller")
    p.add_argument("--display", choices=("auto", "off"), default="auto",
                   help="auto (default): a model stiffer than the device displays passively is felt through a "
                        "virtual coupling, and render says what that gives up; off: the model at the handle as it "
                        "is (a stiff floor then chatters and saturates on a device that cannot hold it)")
    p.add_argument("--axis", type=_vector, default=None, metavar="X,Y,Z",
                   help="a 3-D device's rendering axis in its own frame (phantom; default 0,-1,0: a downward press)")
    p.add_argument("--origin", type=_vector, default=None, metavar="X,Y,Z",
                   help="the axis origin in the device's frame, mm (phantom; default the handle's position at start)")
    p.add_argument("--record-dir", metavar="DIR", default=".",
                   help="the folder control requests may record into, by file name (default: the working folder)")
    p.add_argument("--model-dir", metavar="DIR", default=None,
                   help="the folder control requests may load models from, by file name (default: bundled only)")
    _auth_options(p, "required of telemetry subscribers and control clients (needed to listen beyond loopback; "
                     "on a tcp:// address, what keeps other local users out)")
    p.add_argument("--allow-active", action="store_true",
                   help="render a model that is not passive (refused by default: it could push energy into the hand)")
    p.add_argument("--max-force", type=float, default=None, help="force limit below the device's (N)")
    p.add_argument("--seed", type=seed_arg, default=0, help="simulator noise seed")
    p.add_argument("--json", action="store_true",
                   help="print the run's statistics, events and recording as one JSON object (nothing else on stdout)")
    p.set_defaults(func=_cmd_render)

    m = sub.add_parser("monitor", help="print live telemetry of a running render",
                       description="Subscribe to a render's telemetry and print one line per batch (about 100 a "
                                   "second); in a terminal, one status line rewritten ten times a second, with "
                                   "each batch that carries safety events on a line of its own.")
    m.add_argument("address", nargs="?", default=default_endpoint("telemetry"), type=_address,
                   help=f"the render's --telemetry address (default {default_endpoint('telemetry')}, where a "
                        "render publishes that was given --telemetry without an address)")
    m.add_argument("--duration", type=float, default=None, help="stop after this many seconds")
    m.add_argument("--batches", type=int, default=None, help="stop after this many batches")
    _auth_options(m, "the render's credentials")
    m.set_defaults(func=_cmd_monitor)

    b = bench.add_parser(
        "render", help="servo loop timing: hapticam vs a plain Python loop, idle and under load",
        description="Run our loop and a plain Python loop (time.sleep pacing, NumPy model) at 1 kHz on the "
                    "simulated device, idle and with a busy Python thread; report lateness percentiles, "
                    "per-kind model tick time, and 10 kHz missed deadlines.")
    b.add_argument("--json", action="store_true", help="print the results as one JSON object (nothing else on stdout)")
    b.add_argument("--json-file", metavar="FILE", help="also write the results as JSON to FILE")
    b.add_argument("--seconds", type=float, default=10.0, help="seconds per run (default 10)")
    b.add_argument("--plot", metavar="PNG", default=None,
                   help="also draw the loops' lateness distributions (fraction of ticks later than each lateness)")
    b.add_argument("--device", choices=EMULATED_ADAPTERS, default=None,
                   help="time a device adapter on its emulator beside the simulator (tick gap, round trip, lateness)")
    b.set_defaults(func=_cmd_bench)


def _auth_options(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--auth-secret", metavar="FILE", default=None,
                   help=f"a shared secret (16-255 bytes, in a file only you can read), {what}")
    p.add_argument("--auth-curve", metavar="DIR", default=None,
                   help=f"CURVE keys (server.key_secret and clients/*.key; a client: server.key and "
                        f"client.key_secret), {what}")


def _vector(text: str) -> tuple[float, float, float]:
    """argparse type: three finite numbers separated by commas."""
    parts = text.split(",")
    try:
        values = tuple(float(v) for v in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected X,Y,Z numbers, got {text!r}") from None
    if len(values) != 3 or not all(math.isfinite(v) for v in values):
        raise argparse.ArgumentTypeError(f"expected three finite numbers X,Y,Z, got {text!r}")
    return values  # type: ignore[return-value]


def _positive(name: str, value: float | None) -> None:
    if value is not None and not value > 0:
        raise UsageError(f"{name}: must be > 0, got {value:g}")


def _finite(name: str, value: float | None, most: float = 1e9) -> None:
    if value is not None and not (math.isfinite(value) and value <= most):
        raise UsageError(f"{name}: must be a finite number of at most {most:g}, got {value:g}")


#: the render settings' fields (:class:`~hapticam.render.run.RenderSettings`) said as ``render``'s flags
RENDER_FLAGS = {"duration_s": "--duration", "max_force_N": "--max-force", "user": "--user", "axis": "--axis",
                "origin_mm": "--origin", "realtime": "--simulated-clock", "depth_m": "--depth-mm",
                "curve_dir": "--auth-curve"}


def _cmd_render(args: argparse.Namespace) -> int:
    from hapticam.render.run import RenderSettings, render_on_device

    settings = RenderSettings(args.model, args.device, duration_s=args.duration, rate_hz=args.rate,
                              realtime=args.realtime, user=args.user, depth_m=args.depth_mm * 1e-3,
                              record=args.record, max_force_N=args.max_force, passivity=args.passivity,
                              display=args.display, allow_active=args.allow_active, seed=args.seed,
                              axis=args.axis, origin_mm=args.origin, telemetry=args.telemetry,
                              control=args.control, record_dir=args.record_dir, model_dir=args.model_dir,
                              auth=_auth(args), source="hapticam render")
    info = sys.stderr if args.json else sys.stdout          # under --json, stdout holds only the JSON
    with parameters_as_flags(RENDER_FLAGS):
        outcome = render_on_device(settings, lambda gate_warnings, device, session: _say_before_run(
            args, gate_warnings, device, session, info))
    report = outcome.report
    if args.json:
        print(json.dumps(json_safe({"stats": report.stats.to_dict(), "events": [e.to_dict() for e in report.events],
                                    "recording": None if report.recording is None else {
                                        "path": str(report.recording[0]), "ticks": report.recording[1]},
                                    "telemetry_sent": report.telemetry_sent,
                                    "telemetry_dropped": report.telemetry_dropped,
                                    "interrupted": report.interrupted, "signal": report.signal,
                                    "hygiene": report.hygiene, "warnings": outcome.gate_warnings,
                                    "errors": outcome.problems})))
    else:
        _print_report(args, report, outcome.device)
    return _exit_code(report, outcome.problems, outcome.device, outcome.notes_before_run, info)


def _say_before_run(args: argparse.Namespace, gate_warnings: list[str], device: Any, session: Any, info: Any) -> None:
    """What a render says once every argument has been accepted, before its first tick: the gate's
    warnings, the endpoints, the device's and the session's notes, and what the display keeps."""
    for warning in gate_warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if args.telemetry:
        print(f"telemetry: {args.telemetry}", file=info)
    if args.control:
        print(f"control: {args.control}", file=info)
    for note in device.session_notes().get("notes", []):
        print(f"device: {note}", file=info)
    for note in session.notes:
        print(f"note: {note}", file=sys.stderr)
    print(f"display: {session.loop.display.summary()}", file=info)
    if args.realtime and args.duration is None:
        print("rendering; Ctrl-C to stop", file=info, flush=True)


def _print_report(args: argparse.Namespace, report: Any, device: Any) -> None:
    """The run's statistics, its first 20 safety events, telemetry, recording and how it stopped (stdout)."""
    print(report.stats.summary())
    if args.realtime and not report.stats.scheduling.startswith("SCHED_FIFO") and not device.external_clock:
        from hapticam.render.loop import REALTIME_HINT

        print("note: " + REALTIME_HINT.format(scheduling=report.stats.scheduling), file=sys.stderr)
    shown = [e for e in report.events if e.name not in ("ramp-in", "stop")]
    for e in shown[:20]:
        print(f"  tick {e.tick}: {e.name} ({_event_value(e, device)})")
    if len(shown) > 20:
        print(f"  ... {len(shown) - 20} more events")
    if args.telemetry:
        print(f"telemetry batches sent {report.telemetry_sent}, dropped {report.telemetry_dropped}")
    if report.recording is not None:
        print(f"recorded {report.recording[1]} ticks to {report.recording[0]}")
    if report.interrupted:
        print(f"stopped by {'Ctrl-C' if report.signal == 'SIGINT' else report.signal} (force zeroed)")


def _exit_code(report: Any, problems: list[str], device: Any, notes_shown: int, info: Any) -> int:
    """After the report: what the device said as it closed, then what failed as the run stopped (one line,
    exit code 2); else 1 if the loop stopped on a fault, 0 if not."""
    for note in list(getattr(device, "notes", None) or [])[notes_shown:]:
        print(f"device: {note}", file=info)
    if problems:
        raise RenderError("; ".join(problems))
    return 1 if report.stats.fault else 0


def _event_value(event: Any, device: Any = None) -> str:
    """An event's value with its unit: the model force (N), the position (m) or a device's fault: its cause
    in the words of ``device``'s adapter, the code in brackets."""
    if event.name == "workspace":
        return f"x = {event.value * 1e3:.4g} mm"
    if event.name in ("device-error", "device-fault"):
        if device is not None:
            return device.status_text(int(event.value))
        return f"device code {int(event.value):#06x}"
    if event.name in ("ramp-in", "model-swap", "set-param", "stop"):
        return f"{event.value:.4g}"
    return f"model force {event.value:.4g} N"


def _address(text: str) -> str:
    """A ZeroMQ endpoint for --telemetry/--control/monitor (tcp://HOST:PORT or ipc://PATH)."""
    if not (text.startswith("tcp://") or text.startswith("ipc://")):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an address (tcp://HOST:PORT or ipc://PATH; an option's address follows it, and "
            "for its default address put the option after the model)")
    from hapticam.devices.remote_server import port_problem

    if (problem := port_problem(text)) is not None:
        raise argparse.ArgumentTypeError(problem)
    return text


#: the parameters of :meth:`~hapticam.render.endpoints.Auth.from_options` said as the credential flags
AUTH_FLAGS = {"secret_file": "--auth-secret", "curve_dir": "--auth-curve"}


def _auth(args: argparse.Namespace) -> Any:
    from hapticam.render.endpoints import Auth

    if args.auth_secret and args.auth_curve:
        raise UsageError("give --auth-secret or --auth-curve, not both")
    with parameters_as_flags(AUTH_FLAGS):
        return Auth.from_options(args.auth_secret, args.auth_curve)


def _cmd_monitor(args: argparse.Namespace) -> int:
    from hapticam.render.telemetry import monitor

    _positive("--duration", args.duration)
    _finite("--duration", args.duration)
    if args.batches is not None and args.batches < 1:
        raise UsageError(f"--batches must be >= 1, got {args.batches}")
    try:
        counts = monitor(args.address, duration_s=args.duration, batches=args.batches, out=sys.stdout,
                         auth=_auth(args))
    except KeyboardInterrupt:
        return 0
    print(f"{counts['batches']} batches, {counts['ticks']} ticks, {counts['gaps']} ticks missing", file=sys.stderr)
    if counts["batches"] == 0:
        print(f"note: nothing was published at {args.address}: is a render running with --telemetry {args.address}?",
              file=sys.stderr)
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    from hapticam.commands.bench.render import format_table, run_bench

    _positive("--seconds", args.seconds)
    _finite("--seconds", args.seconds)
    if args.seconds > 3600.0:
        raise UsageError(f"--seconds: at most 3600 s a run, got {args.seconds:g}")
    check_output_file("--json-file", args.json_file)
    check_output_file("--plot", args.plot, (".png",), "the plot is a PNG; use a .png file name")
    if args.plot is not None and args.device is not None:
        raise UsageError("--plot draws the loop bench's distributions; it does not go with --device")
    from hapticam.render.clock import enable_hygiene

    enable_hygiene()                  # HAPTICAM_RT_HYGIENE selects parts (mlock, prefault, affinity)
    progress = lambda msg: print(msg, file=sys.stderr, flush=True)   # noqa: E731
    if args.device is not None:
        from hapticam.commands.bench.render import format_device_table, run_device_bench

        results = run_device_bench(args.device, args.seconds, progress=progress)
        report_json(results, args.json, args.json_file, format_device_table)
        return 0
    results = run_bench(seconds=args.seconds, progress=progress)
    if args.plot is not None:
        from hapticam.commands.bench.render_plot import plot_lateness

        results["plot"] = str(plot_lateness(results, args.plot))
    report_json(results, args.json, args.json_file, format_table)
    return 0
