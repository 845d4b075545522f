"""``hapticam verify MODEL CAPTURE``: probe the rendered model as the real object was probed."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from hapticam.capture_columns import AXIS_UNITS, axis_of
from hapticam.errors import UsageError, parameters_as_flags
from hapticam.fileio import MODEL_SUFFIXES, check_output_file, json_safe, make_output_folder
from hapticam.render.verify.features import POSITION_JND_M, Thresholds

EXIT_FAILED = 1


def register(sub: argparse._SubParsersAction, bench: argparse._SubParsersAction) -> None:
    """Add ``hapticam verify``."""
    p = sub.add_parser(
        "verify", help="replay a capture's probe trajectory on the rendered model and compare forces",
        description="Drive the simulated device's handle along CAPTURE's probe trajectory, render MODEL through "
                    "the real servo loop and safety layer, and compare rendered with captured forces: fit "
                    "(seed 003 eq. 53), RMS and max error per direction, force-displacement features and "
                    "perceptual verdicts. The replay is ideal (a stiff probe on an ideal device, the model at the "
                    "handle) unless --device replays it through a device as displayed. Exit 0 when every metric "
                    "is within its threshold, 1 when not, 2 on bad input.")
    p.add_argument("model", metavar="MODEL", help="model file (.yaml/.msgpack) or example:NAME")
    p.add_argument("capture", metavar="CAPTURE", help="capture file (.csv or .npz)")
    p.add_argument("--report", metavar="DIR", help="write verify.png and verify.json into DIR (created)")
    p.add_argument("--json", action="store_true", help="print the comparison as one JSON object")
    p.add_argument("--rate", type=float, default=1000.0, help="servo rate in Hz (default 1000)")
    p.add_argument("--fit-threshold", type=float, default=95.0, help="minimum fit in percent (default 95)")
    p.add_argument("--force-weber", type=float, default=Thresholds.force_weber,
                   help="force JND as a Weber fraction (default 0.07, Jones 1989)")
    p.add_argument("--force-floor", type=float, default=Thresholds.force_floor_N,
                   help="smallest force JND in N (default 0.02)")
    p.add_argument("--stiffness-weber", type=float, default=Thresholds.stiffness_weber,
                   help="stiffness JND as a Weber fraction (default 0.23, Jones & Hunter 1990)")
    p.add_argument("--position-jnd-mm", type=float, default=POSITION_JND_M * 1e3,
                   help="position JND in mm (default 1, Durlach et al. 1989)")
    p.add_argument("--speedup", type=float, default=None,
                   help="replay speed factor (default: automatic; faster only for quasi-static models and captures)")
    p.add_argument("--max-force", type=float, default=None, help="device force limit in N (default: sized to the capture)")
    p.add_argument("--device", metavar="NAME", default=None,
                   help="replay through this device as displayed (sim, or phantom, serial, zmq in real time on their "
                        "emulators): its force limit, damping and handle, the display's coupling, the transients")
    p.add_argument("--repeat", metavar="CAPTURE", action="append", default=[],
                   help="another press of the same key along the same strokes (repeatable): a press with impacts "
                        "then has its onsets judged within the key's own repeatability; the strict item stays "
                        "in the report")
    p.add_argument("--x-offset-mm", type=float, default=None,
                   help="shift the capture by this much (mm) instead of aligning its contact point on the model's")
    p.set_defaults(func=_cmd_verify)

    q = sub.add_parser("plot", help="plot captures, recordings and models (F-x per direction, F and x against time)",
                       description="Draw captures and recordings (.csv, .npz) as points and models (.yaml, "
                                   ".msgpack, example:NAME) as their quasi-static curves on the same force-"
                                   "displacement axes, with force and position against time for the captures.")
    q.add_argument("files", nargs="+", metavar="FILE", help="captures, recordings and model files")
    q.add_argument("-o", "--output", default="hapticam-plot.png", help="PNG to write (default hapticam-plot.png)")
    q.set_defaults(func=_cmd_plot)


def _positive(name: str, value: float) -> float:
    if not (math.isfinite(value) and value > 0):
        raise UsageError(f"{name}: must be a positive number, got {value}")
    return value


#: the parameters of :func:`~hapticam.render.verify.compare.verify` and its device check, said as ``verify``'s flags
VERIFY_FLAGS = {"device": "--device", "max_force_N": "--max-force", "rate_hz": "--rate", "speedup": "--speedup"}


def _cmd_verify(args: argparse.Namespace) -> int:
    with parameters_as_flags(VERIFY_FLAGS):
        return _verify(args)


def _verify(args: argparse.Namespace) -> int:
    from hapticam.capture_io import load_capture
    from hapticam.models.files import load_model
    from hapticam.render.verify.compare import verify
    from hapticam.render.verify.device_replay import check_device
    from hapticam.render.gate import require_tick_budget
    from hapticam.render.loop import LoopConfig
    from hapticam.render.verify.report import write_figure, write_json

    check_device(args.device, max_force_N=args.max_force)      # before any file is read

    th = Thresholds(fit_percent=args.fit_threshold, force_weber=_positive("--force-weber", args.force_weber),
                    force_floor_N=_positive("--force-floor", args.force_floor),
                    stiffness_weber=_positive("--stiffness-weber", args.stiffness_weber),
                    position_jnd_m=_positive("--position-jnd-mm", args.position_jnd_mm) * 1e-3)
    if not (math.isfinite(args.fit_threshold) and 0.0 <= args.fit_threshold <= 100.0):
        raise UsageError(f"--fit-threshold: a percentage from 0 to 100, got {args.fit_threshold:g}")
    if args.max_force is not None:
        _positive("--max-force", args.max_force)
    x_offset = None
    if args.x_offset_mm is not None:
        if not math.isfinite(args.x_offset_mm):
            raise UsageError(f"--x-offset-mm: must be a number, got {args.x_offset_mm}")
        x_offset = args.x_offset_mm * 1e-3
    model, doc = load_model(args.model)
    LoopConfig(rate_hz=_positive("--rate", args.rate)).checked()          # the rate's own refusal first
    require_tick_budget(model, args.rate, name=str(args.model))             # before a long replay
    capture = load_capture(args.capture)
    if doc.axis != axis_of(capture.metadata):
        raise UsageError(f"{args.model} is a {doc.axis} model and {args.capture} a {axis_of(capture.metadata)} capture; "
                         "verify compares like with like")
    repeats = [load_capture(path) for path in args.repeat]
    for path, repeat in zip(args.repeat, repeats):
        if axis_of(repeat.metadata) != axis_of(capture.metadata):
            raise UsageError(f"--repeat {path}: a {axis_of(repeat.metadata)} capture, and {args.capture} a "
                             f"{axis_of(capture.metadata)} one; a repeat is another press of the same key")
    report_dir = None
    if args.report:
        report_dir = _report_folder(Path(args.report))
    rate = _positive("--rate", args.rate)
    result = verify(model, capture, model_name=str(args.model), rate_hz=rate,
                    thresholds=th, speedup=args.speedup, max_force_N=args.max_force, x_offset_m=x_offset,
                    device=args.device, model_switch_points=doc.provenance.get("metrics"), repeats=repeats)
    data = result.to_dict()
    if report_dir is not None:
        write_figure(report_dir / "verify.png", result)      # the figure, the likelier to fail, first
        write_json(report_dir / "verify.json", data)
    if args.json:
        print(json.dumps(json_safe(data), indent=2))
    else:
        print(summary_table(result))
        if report_dir is not None:
            print(f"report: {report_dir / 'verify.png'}, {report_dir / 'verify.json'}")
    return 0 if result.passed else EXIT_FAILED


def _report_folder(folder: Path) -> Path:
    """``--report``: a folder that exists or is made now, before the replay, where both files can be written."""
    make_output_folder("--report", folder)
    for name in ("verify.png", "verify.json"):
        check_output_file("--report", folder / name)
    return folder


def summary_table(result) -> str:
    """One table: overall and per-direction force metrics, then each feature with its verdict."""
    lines = [f"verify {result.model_name} against {result.capture_name} ({result.axis} axis: "
             f"{AXIS_UNITS[result.axis]['position']}, {AXIS_UNITS[result.axis]['force']})",
             f"  replay: {result.replay['ticks']} ticks at {result.replay['rate_hz']:g} Hz, "
             f"speed x{result.replay['speedup']:.3g}; safety events: "
             + (", ".join(f"{k} {v}" for k, v in sorted(result.safety_events.items())) or "none"),
             f"  alignment: backlash {result.replay.get('backlash_m', 0.0) * 1e3:.3g} mm removed from the releasing "
             f"samples, capture shifted by {result.replay.get('x_offset_m', 0.0) * 1e3:+.3g} mm onto the model's "
             "contact point",
             "",
             f"  {'metric':<30} {'captured':>12} {'rendered':>12} {'difference':>12} {'threshold':>12}  verdict"]

    def row(name: str, ref: str, ren: str, diff: str, thr: str, ok: bool) -> None:
        lines.append(f"  {name:<30} {ref:>12} {ren:>12} {diff:>12} {thr:>12}  {'ok' if ok else 'FAIL'}")

    th = result.thresholds
    impacts = result.impacts
    if impacts is not None:
        lines.insert(3, f"  {impacts.summary()}")
    if result.device is not None:
        lines[3:3] = _device_lines(result.device)
    if impacts is not None and impacts.has_impacts:        # the verdict reads the fit outside the impacts
        lines.append(f"  {'fit, all (%)':<30} {'':>12} {result.fit_percent:>12.2f} {'':>12} {'':>12}  "
                     "(information: judged outside the impacts)")
        for name, ref, ren, diff, thr, ok in impacts.table_rows():
            row(name, ref, ren, diff, thr, ok)
    else:
        row("fit, all (%)", "", f"{result.fit_percent:.2f}", "", f">= {th.fit_percent:g}",
            result.fit_percent >= th.fit_percent)
    lines.append(f"  {'fit, NRMSE (%)':<30} {'':>12} {result.nrmse_fit_percent:>12.2f} {'':>12} {'':>12}  "
                 "(information: 1 - |e|/|F - mean F|)")
    for name, m in result.per_direction.items():          # shown, not judged
        lines.append(f"  {f'fit, {name} (%)':<30} {'':>12} {m['fit_percent']:>12.2f} {'':>12} {'':>12}  "
                     "(information)")
    row("passive", "", "yes" if result.passive else "no", "", "yes", result.passive)
    units = AXIS_UNITS[result.axis]                       # rotary: N m, rad (docs/architecture.md, Conventions)
    force = units["force"]
    lines.append(f"  {f'RMS error ({force})':<30} {'':>12} {result.rms_N:>12.4f} {'':>12} {'':>12}  (information)")
    lines.append(f"  {f'max error ({force})':<30} {'':>12} {result.max_error_N:>12.4f} {'':>12} {'':>12}  (information)")
    for v in result.features.verdicts:
        scale, unit = (1e3, "mm") if v.unit == "m" else (1.0, v.unit)
        if result.axis == "rotary":
            scale, unit = 1.0, {"m": "rad", "N": "N m", "N/m": "N m/rad"}.get(v.unit, v.unit)

        def fmt(x: float | None) -> str:
            return "-" if x is None else f"{x * scale:.4g}"

        thr = "-" if v.threshold is None else f"{v.threshold * scale:.3g} {unit}"
        row(f"{v.name} ({unit})", fmt(v.reference), fmt(v.rendered), fmt(v.difference), thr, not v.noticeable)
    lines.append("")
    if impacts is not None:
        lines += [f"  set aside: {line}" for line in impacts.set_aside()]
    lines.append("  PASSED: no difference a user could feel" if result.passed
                 else "  FAILED: " + "; ".join(result.failures))
    return "\n".join(lines)


def _device_lines(section: dict[str, Any]) -> list[str]:
    """The summary table's lines for a ``device`` section."""
    if section.get("name") is None:
        return [f"  device: {section['note']}"]
    spec = section["spec"]
    return [f"  device: {section['name']} ({section['clock']} clock, {section['run_s']:.3g} s): force limit "
             f"{spec['max_force_N']:g} N, damping {spec['damping_N_s_per_m']:g} N s/m, handle "
             f"{1e3 * spec['apparent_mass_kg']:g} g",
             f"  display: {section['display_summary']}",
             f"  saturated ticks {section['saturated_ticks']}; energy out into the hand "
             f"{1e3 * section['energy_out_J']:.3g} mJ; transients {section['transients']}"]


def _cmd_plot(args: argparse.Namespace) -> int:
    from hapticam.capture_io import load_capture
    from hapticam.models.files import load_model
    from hapticam.identify.plot import plot

    check_output_file("-o", args.output, (".png",), "the plot is a PNG; use a .png file name")
    out = Path(args.output)
    captures, models = [], []
    for name in args.files:
        if name.startswith("example:") or Path(name).suffix.lower() in MODEL_SUFFIXES:
            model, doc = load_model(name)
            models.append((Path(name).name, model, doc.provenance))
        else:
            captures.append((Path(name).name, load_capture(name)))
    plot(captures, models, out)
    print(f"wrote {out}")
    return 0
