"""``hapticam render``, ``hapticam monitor`` and ``hapticam bench render``."""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import sys
from typing import Any, Iterator

from hapticam.devices.cli import seed_arg
from hapticam.errors import HapticError, RenderError, UsageError
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


def _device(args: argparse.Namespace) -> Any:
    """The render's device (not opened) from ``--device`` and the options adapters take."""
    from hapticam.devices.registry import device_class, device_from_spec
    from hapticam.devices.users import make_user

    axis_given = args.axis is not None or args.origin is not None
    if axis_given and not device_class(str(args.device).partition(":")[0]).renders_along_axis:
        raise UsageError(f"--axis and --origin choose the axis of a 3-D device (phantom); --device {args.device} has one")
    user = make_user(args.user, 1.0 if args.user in ("press", "sine") else 4.0, args.depth_mm * 1e-3).repeating()
    return device_from_spec(args.device, user=user, seed=args.seed, axis=args.axis, origin_mm=args.origin)


def _device_axis(device: str) -> str:
    """The axis kind (linear or rotary) of the ``--device`` value's adapter: the units render reads the model in."""
    from hapticam.devices.registry import device_axis

    return device_axis(device)


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


def _cmd_render(args: argparse.Namespace) -> int:
    from hapticam.models.files import load_model_to_render
    from hapticam.render.loop import MAX_SIMULATED_TICKS, LoopConfig
    from hapticam.render.safety import SafetyConfig
    from hapticam.render.session import RenderSession, StopFailed

    _positive("--duration", args.duration)
    _finite("--duration", args.duration)
    if args.duration is not None and not args.realtime and args.duration * args.rate > MAX_SIMULATED_TICKS:
        raise UsageError(f"--duration {args.duration:g} s at {args.rate:g} Hz on the simulated clock is more than "
                         f"{MAX_SIMULATED_TICKS:,} ticks (it holds every tick in memory, 88 bytes each); "
                         "render in real time to stream for longer")
    _positive("--max-force", args.max_force)
    config = LoopConfig(rate_hz=args.rate, display=args.display).checked()
    model = load_model_to_render(args.model, axis=_device_axis(args.device))    # rad and N m on a rotary device
    from hapticam.render.gate import check_for_device, control_check
    if args.duration is None and not args.realtime:
        args.duration = 2.0
    device = _device(args)
    safety = SafetyConfig(max_force_N=args.max_force, passivity=args.passivity)
    n = None if args.realtime else int(round(args.duration * config.rate_hz))
    problems: list[str] = []                    # what failed as the run stopped: said after the statistics
    with _opened(device, problems):
        gate_warnings = check_for_device(model, device.spec, config.rate_hz, allow_active=args.allow_active)
        if not args.realtime and not device.servo_binding().simulated:
            raise UsageError(f"--device {args.device}: --simulated-clock needs a simulated device; "
                             "hardware runs in real time")
        session = RenderSession(model, device, config, safety, record=args.record, telemetry=args.telemetry,
                                control=args.control, simulated_ticks=n, record_dir=args.record_dir,
                                model_dir=args.model_dir, auth=_auth(args),
                                check_model=control_check(lambda: session.loop.model, device.spec, config.rate_hz,
                                                           args.allow_active),
                                metadata={"source": "hapticam render", "model": args.model,
                                          "device": args.device, "rate_hz": args.rate, "user": args.user,
                                          **({"device_link": link} if (link := device.session_notes()) else {})})
        info = sys.stderr if args.json else sys.stdout          # under --json, stdout holds only the JSON
        _say_before_run(args, gate_warnings, device, session, info)
        notes_shown = len(getattr(device, "notes", None) or [])
        try:
            report = session.run(args.duration, realtime=args.realtime)
        except StopFailed as exc:           # the run ended, a step of its finish failed: statistics first
            report = exc.report
            problems += exc.problems
    if args.json:
        print(json.dumps(json_safe({"stats": report.stats.to_dict(), "events": [e.to_dict() for e in report.events],
                                    "recording": None if report.recording is None else {
                                        "path": str(report.recording[0]), "ticks": report.recording[1]},
                                    "telemetry_sent": report.telemetry_sent,
                                    "telemetry_dropped": report.telemetry_dropped,
                                    "interrupted": report.interrupted, "signal": report.signal,
                                    "hygiene": report.hygiene, "warnings": gate_warnings, "errors": problems})))
        return _exit_code(report, problems, device, notes_shown, info)
    _print_report(args, report, device)
    return _exit_code(report, problems, device, notes_shown, info)


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


@contextlib.contextmanager
def _opened(device: Any, problems: list[str]) -> Iterator[Any]:
    """``with device`` (open, then close: zero force and disable), except that closing it after a run that
    ended fails into ``problems`` rather than raising, so that the run's statistics are printed first."""
    with contextlib.ExitStack() as failing:
        failing.enter_context(device)              # closed by the stack only if the body raises
        yield device
        failing.pop_all()
    try:
        device.close()
    except HapticError as exc:
        problems.append(str(exc))


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


def _auth(args: argparse.Namespace) -> Any:
    from hapticam.render.endpoints import Auth

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
    from hapticam.render.bench import format_table, run_bench

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
        from hapticam.render.bench import format_device_table, run_device_bench

        results = run_device_bench(args.device, args.seconds, progress=progress)
        report_json(results, args.json, args.json_file, format_device_table)
        return 0
    results = run_bench(seconds=args.seconds, progress=progress)
    if args.plot is not None:
        from hapticam.render.bench_plot import plot_lateness

        results["plot"] = str(plot_lateness(results, args.plot))
    report_json(results, args.json, args.json_file, format_table)
    return 0
