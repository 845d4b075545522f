"""``hapticam identify ...`` (fit models to probe captures) and ``hapticam bench identify``.

``hapticam identify impedance CAPTURE -o MODEL.yaml`` fits a segmented impedance model (seed 001) and
prints a summary table (or ``--json``): per direction the number of segments, parameter ranges, the
identifiable terms, and the fit of the model's force prediction (seed 003 eq. 53, RMS and max error)
on the training capture and, with ``--validate``, on another capture. Every input is checked before
anything is written; the model file is written atomically at the end.
"""

from __future__ import annotations

import argparse
import json
import math
from typing import Any

import numpy as np

from hapticam.errors import UsageError, missing_subcommand
from hapticam.fileio import MODEL_HINT, MODEL_SUFFIXES, check_output_file, json_safe, report_json
from hapticam.commands.identify_more import register_contact, register_reproduce
from hapticam.commands.identify_hybrid_key import register_hybrid_key
from hapticam.commands.identify_friction import register_friction


def register(sub: argparse._SubParsersAction, bench: argparse._SubParsersAction) -> None:
    """Add ``hapticam identify ...`` and ``bench identify`` (``bench``: the ``hapticam bench`` group)."""
    p = sub.add_parser("identify", help="identify models from probe captures",
                       description="Identify models of real objects from probe captures.")
    isub = p.add_subparsers(dest="identify_command", metavar="MODEL", parser_class=type(p))
    imp = isub.add_parser(
        "impedance", help="segmented impedance model (seed 001, EWLS)",
        description="Fit a position- and direction-dependent impedance model F = m a + b v + k x + F0 "
                    "(Colton & Hollerbach) to a capture (.csv or .npz) and write it as a model file.")
    imp.add_argument("capture", help="capture file (.csv with t_s,x_m,force_N columns, or .npz)")
    imp.add_argument("-o", "--output", required=True, help="model file to write (.yaml or .msgpack)")
    imp.add_argument("--forgetting", type=float, default=0.999, help="EWLS forgetting factor (default 0.999)")
    imp.add_argument("--grid-mm", type=float, default=None,
                     help="position grid in mm (default 1, or travel/200 when the travel is under 50 mm)")
    imp.add_argument("--tolerance", type=float, default=None,
                     help="largest RMS force error in N that merging into segments may add (default: "
                          "half the grid fit's residual, at least 0.2 %% of the force spread)")
    imp.add_argument("--max-segments", type=int, default=60, help="most segments per direction (default 60)")
    imp.add_argument("--interpolation", choices=("constant", "linear"), default="constant",
                     help="parameters constant per segment (default) or linear between breakpoints")
    imp.add_argument("--fix", action="append", default=[], metavar="TERM=VALUE",
                     help="fix m (kg) or b (N s/m) instead of estimating it, e.g. --fix m=0.01")
    imp.add_argument("--cutoff-hz", type=float, default=None,
                     help="low-pass cutoff for differentiating position (default: from the excitation band)")
    imp.add_argument("--validate", metavar="OTHER_CAPTURE", help="also report the fit on another capture")
    imp.add_argument("--allow-active", action="store_true",
                     help="fit without the passivity constraints (the model may generate energy on a device; "
                          "every command that uses it warns)")
    imp.add_argument("--plot", action="store_true",
                     help="also write the fit plot (capture and model, F-x per direction) beside the model as .png")
    imp.add_argument("--no-holdout", dest="holdout", action="store_false",
                     help="do not validate on held-out samples (default: last cycle, or every fifth sample)")
    imp.add_argument("--no-backlash", dest="backlash", action="store_false",
                     help="do not estimate and remove the probe's backlash")
    imp.add_argument("--bottom-out", action="store_true",
                     help="fit the steep end of the press stroke as a Hunt-Crossley floor and write it as a contact "
                          "wall beyond the table (the capture must reach the floor)")
    imp.add_argument("--probe-stiffness", type=float, default=None, metavar="N_PER_M",
                     help="with --bottom-out: the probe tip's (or rig's) stiffness in series, removed first")
    imp.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    imp.add_argument("--quiet", action="store_true", help="no progress bar")
    imp.set_defaults(func=_cmd_impedance)
    register_contact(isub)
    register_hybrid_key(isub)
    register_friction(isub)
    p.set_defaults(func=lambda args: missing_subcommand(p.prog))
    register_reproduce(sub)

    b = bench.add_parser(
        "identify", help="EWLS core vs padasip RLS and numpy batch least squares (360,000 samples)",
        description="Time hapticam's compiled EWLS (seed 001 Table 1) on seed 001's 90 s at 4 kHz, and on "
                    "the same data padasip's FilterRLS and numpy.linalg.lstsq; report times and ratios.")
    b.add_argument("--json", action="store_true", help="print the results as one JSON object (nothing else on stdout)")
    b.add_argument("--json-file", metavar="FILE", help="also write the results as JSON to FILE")
    b.add_argument("--plot", metavar="PNG", default=None,
                   help="also draw the pipeline's time and fit per capture")
    b.add_argument("--samples", type=int, default=360_000, help="samples (default 360000)")
    b.add_argument("--repeat", type=int, default=3, help="timing repeats, best kept (default 3)")
    b.add_argument("--captures", metavar="PATH", nargs="+", default=None,
                   help="capture files or folders to time the whole pipeline on (default: the repository's switch "
                        "captures, or from an installed wheel slow presses made from the bundled example models)")
    b.set_defaults(func=_cmd_bench)


#: the EWLS bench's largest run: 10 million samples (seed 001's capture is 360,000)
MAX_BENCH_SAMPLES = 10_000_000


#: the largest mass (kg) and damping (N s/m) --fix takes (a key's are grams and a few N s/m)
MAX_FIX = {"m": 100.0, "b": 1.0e5}


def _parse_fix(items: list[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    for item in items:
        key, sep, val = item.partition("=")
        key = key.strip()
        if not sep or key not in ("m", "b"):
            raise UsageError(f"--fix {item!r}: expected m=VALUE or b=VALUE")
        try:
            out[key] = float(val)
        except ValueError:
            raise UsageError(f"--fix {item!r}: {val!r} is not a number") from None
        if not (math.isfinite(out[key]) and 0.0 <= out[key] <= MAX_FIX[key]):
            raise UsageError(f"--fix {item!r}: a value from 0 to {MAX_FIX[key]:g} (a negative mass or damping "
                             "generates energy)")
    return out


def _check_args(args: argparse.Namespace) -> None:
    if not (math.isfinite(args.forgetting) and 0.0 < args.forgetting <= 1.0):
        raise UsageError(f"--forgetting must be in (0, 1], got {args.forgetting}")
    if args.grid_mm is not None and not (math.isfinite(args.grid_mm) and args.grid_mm > 0):
        raise UsageError(f"--grid-mm must be a positive number, got {args.grid_mm}")
    if args.tolerance is not None and not (math.isfinite(args.tolerance) and args.tolerance >= 0):
        raise UsageError(f"--tolerance must be a non-negative force in N, got {args.tolerance}")
    if args.max_segments < 1:
        raise UsageError(f"--max-segments must be >= 1, got {args.max_segments}")
    if args.cutoff_hz is not None and not (math.isfinite(args.cutoff_hz) and args.cutoff_hz > 0):
        raise UsageError(f"--cutoff-hz must be a positive number, got {args.cutoff_hz}")
    check_output_file("-o", args.output, MODEL_SUFFIXES, MODEL_HINT)


class _Progress:
    """A progress bar on stderr (tqdm): shown on a terminal, off when stderr is not one or with --quiet."""

    def __init__(self, quiet: bool = False) -> None:
        from tqdm import tqdm

        self.bar = tqdm(total=100, unit="%", desc="identify", disable=quiet or None, leave=False,
                        bar_format="{desc}: {bar} {n:.0f}% {postfix}")

    def __call__(self, fraction: float, stage: str) -> None:
        self.bar.n = round(100 * min(max(fraction, 0.0), 1.0))
        self.bar.set_postfix_str(stage)

    def close(self) -> None:
        self.bar.close()


def _cmd_impedance(args: argparse.Namespace) -> int:
    from hapticam.capture_io import load_capture
    from hapticam.identify.impedance.fit import identify_impedance, validate_model
    from hapticam.models.passivity import check_passivity

    _check_args(args)
    fixed = _parse_fix(args.fix)
    if args.probe_stiffness is not None and not (args.bottom_out and math.isfinite(args.probe_stiffness)
                                                  and args.probe_stiffness > 0):
        raise UsageError("--probe-stiffness: a positive stiffness in N/m, used with --bottom-out")
    capture = load_capture(args.capture)
    other = load_capture(args.validate) if args.validate else None
    from hapticam.capture_columns import require_linear

    for option, cap in (("CAPTURE", capture), ("--validate", other)):
        if cap is not None:
            require_linear(cap, f"{option} {cap.name}", "identify impedance fits keys pressed along a line "
                                                        "(a knob: hapticam identify friction)")
    if other is not None and not np.ptp(other.f_N[other.valid]) > 0.0:
        raise UsageError(f"--validate {other.name}: its force never changes; there is nothing to validate against")
    bottom = None
    if args.bottom_out:
        from hapticam.identify.contact.bottom_out import split_at_bottom_out

        full = capture
        bottom, capture = split_at_bottom_out(capture, args.probe_stiffness)
    bar = _Progress(quiet=args.quiet or args.json)
    try:
        fit = identify_impedance(capture, forgetting=args.forgetting,
                                 grid_m=None if args.grid_mm is None else args.grid_mm * 1e-3,
                                 tolerance=args.tolerance, max_segments=args.max_segments, fixed=fixed,
                                 interpolation=args.interpolation, cutoff_hz=args.cutoff_hz,
                                 allow_active=args.allow_active, holdout=args.holdout,
                                 correct_backlash=args.backlash, progress=bar)
        summary = dict(fit.summary)
        if bottom is not None:
            _add_bottom_out(fit, bottom, summary)
            whole = validate_model(fit.model, full)
            summary["bottom_out"]["fit_percent_whole_capture"] = whole["fit_percent"]
            tip = ("; the wall is the key's without the probe's compliance, so the probe's own capture "
                   "reads softer" if bottom.probe_stiffness_Npm is not None else "")
            summary["notes"].append(f"with the floor, the model fits the whole capture (floor included) at "
                                    f"{whole['fit_percent']:.2f} %, RMS {whole['rms_N']:.3g} N{tip}")
        verdict = check_passivity(fit.model)
        summary["passive"] = verdict.passive
        summary["passivity_issues"] = verdict.issues
        if other is not None:
            val = validate_model(fit.model, other)
            summary["validate"] = {"capture": other.name, **val}
            if val["fit_percent"] < summary["fit_percent"] - 5.0:
                summary["notes"] = [*summary["notes"], f"warning: the fit on {other.name} "
                                    f"({val['fit_percent']:.1f} %) is far below the training fit: the training "
                                    "excitation does not support this model; identify from a slow triangle "
                                    "(quasi-static) or a 1-4 Hz swept sine"]
            summary["validate_fit_percent"] = val["fit_percent"]
            fit.provenance["metrics"]["validate_fit_percent"] = val["fit_percent"]
            fit.provenance["metrics"]["validate_rms_N"] = val["rms_N"]
    finally:
        bar.close()
    fit.save(args.output)
    summary["output"] = args.output
    if args.plot:
        from pathlib import Path

        from hapticam.identify.plot import plot

        png = Path(args.output).with_suffix(".png")
        plot([(Path(args.capture).name, capture)], [(Path(args.output).name, fit.model, fit.provenance)], png)
        summary["plot"] = str(png)
    if args.json:
        print(json.dumps(json_safe(summary), sort_keys=True))
    else:
        print(_table(summary))
    return 0


def _add_bottom_out(fit: Any, bottom: Any, summary: dict[str, Any]) -> None:
    """Compose the fitted table with the floor's contact wall (the table ends at the floor's datum)."""
    from hapticam.models.composite import Composite

    fit.model = Composite([fit.model, bottom.contact()])
    fit.provenance.setdefault("settings", {})["bottom_out"] = {"probe_stiffness_Npm": bottom.probe_stiffness_Npm}
    fit.provenance.setdefault("metrics", {})["bottom_out"] = {k: v for k, v in bottom.to_dict().items() if k != "notes"}
    summary["bottom_out"] = bottom.to_dict()
    summary["notes"] = [*summary["notes"], *bottom.notes,
                        f"bottom-out at {bottom.x_b_m * 1e3:.3f} mm: Hunt-Crossley k = {bottom.k:.4g} N/m^n "
                        f"(+-{bottom.se['k']:.2g}), n = {bottom.n:.3f} (+-{bottom.se['n']:.2g}), fitted over "
                        f"{bottom.depth_m * 1e6:.0f} um of the floor; the table ends there and the wall takes over"]


def _cmd_bench(args: argparse.Namespace) -> int:
    from hapticam.commands.bench.identify import format_table, run_identify_bench

    if not 1000 <= args.samples <= MAX_BENCH_SAMPLES:    # about 300 bytes a sample across the peers
        raise UsageError(f"--samples must be from 1000 to {MAX_BENCH_SAMPLES:,}, got {args.samples}")
    if not 1 <= args.repeat <= 100:
        raise UsageError(f"--repeat must be from 1 to 100, got {args.repeat}")
    check_output_file("--json-file", args.json_file)
    check_output_file("--plot", args.plot, (".png",), "the plot is a PNG; use a .png file name")
    results = run_identify_bench(n=args.samples, repeat=args.repeat, captures=args.captures)
    if args.plot is not None and results.get("pipeline"):
        from hapticam.commands.bench.identify_plot import plot_pipeline

        results["plot"] = str(plot_pipeline(results["pipeline"], args.plot))
    report_json(results, args.json, args.json_file, format_table)
    return 0

def _fmt(v: float) -> str:
    return f"{v:.4g}"


def _table(s: dict[str, Any]) -> str:
    lines = [f"capture   {s['capture']}  ({s['samples']} samples, {s['dropouts']} dropout(s) excluded)",
             f"model     {s['output']}",
             "identifiable: " + ", ".join(f"{t} {'yes' if ok else 'no (fixed ' + _fmt(s['settings']['fixed'].get(t, 0.0)) + ')'}"
                                          for t, ok in s["identifiable"].items())]
    head = f"{'direction':<10}{'segments':>9}  {'m kg':>19}  {'b N s/m':>19}  {'k N/m':>21}  {'F0 N':>19}  {'fit %':>7}"
    lines += ["", head, "-" * len(head)]
    for name, d in s["directions"].items():
        cells = []
        for key in ("m_kg", "b_Nspm", "k_Npm", "f0_N"):
            lo, hi = d["parameter_ranges"][key]
            cells.append(f"{_fmt(lo)}..{_fmt(hi)}")
        fitp = d["fit_percent"]
        lines.append(f"{name:<10}{d['segments']:>9}  {cells[0]:>19}  {cells[1]:>19}  {cells[2]:>21}  {cells[3]:>19}  "
                     f"{fitp:7.2f}")
    lines += ["", f"training fit {s['fit_percent']:.2f} % (seed 003 eq. 53), RMS {_fmt(s['rms_N'])} N, "
                  f"max {_fmt(s['max_N'])} N"]
    if (s.get("holdout") or {}).get("fit_percent") is not None:
        h = s["holdout"]
        lines.append(f"held-out fit {h['fit_percent']:.2f} % on {h['held_out']} (fitted without them: "
                     f"{h['training_fit_percent']:.2f} %)")
    cost = s.get("passivity_cost_percent")
    lines.append("passive: yes" + (f" (the constraints cost {cost:.3g} % of fit)" if cost else "")
                 if s.get("passive") else "passive: NO -- " + "; ".join(s.get("passivity_issues", [])[:3]))
    lo, hi = s["settings"]["data_range_m"]
    lines.append(f"data from {1e3 * lo:.3f} to {1e3 * hi:.3f} mm; beyond it the force holds its end value")
    if "validate" in s:
        v = s["validate"]
        lines.append(f"validation fit {v['fit_percent']:.2f} % on {v['capture']}, RMS {_fmt(v['rms_N'])} N, "
                     f"max {_fmt(v['max_N'])} N")
    for note in s.get("notes", []):
        lines.append(f"note: {note}")
    return "\n".join(lines)
