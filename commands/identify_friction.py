"""``hapticam identify friction CAPTURE... -o MODEL --law coulomb-viscous|stribeck|lugre [--method ls|uas]``.

Two experiments (``--experiment``, chosen from the captures by default):

* ``spin-down``: a knob or flywheel spun up and let go, angle only (:mod:`.spin_down`); the inertia is
  given (``--inertia``) or identified from a second spin-down with a known added inertia
  (``--added-inertia``, one value per capture). Writes a ``friction`` model.
* ``speeds``: a key or slider pressed and released (a knob turned both ways) at several constant speeds,
  force and position (:mod:`.press_speeds`). A linear capture's model is the composite of the fitted
  spring (a position table) and the friction; a rotary one's is the friction, with the knob's detents (an angle table) beside it when it has them.

``--method ls`` (default) is least squares with standard errors (:mod:`.product`); ``--method uas`` runs
seed 003's observer and says that its output is not identified friction (:mod:`.product_uas`). The methods
are the ``friction`` family of :mod:`hapticam.identify.estimators` (:mod:`.methods`), which a plugin extends.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from hapticam.errors import UsageError
from hapticam.fileio import MODEL_HINT, MODEL_SUFFIXES, check_output_file, json_safe
from hapticam.identify.estimators import FRICTION_METHODS

EXPERIMENTS = ("auto", "spin-down", "speeds")
#: ``hapticam.identify.friction.product.LAWS``, named here so that building the command line imports no
#: fitting code (scipy); ``tests/test_cli_startup.py`` keeps the two the same
LAWS = ("coulomb-viscous", "stribeck", "lugre")


def register_friction(isub: argparse._SubParsersAction) -> None:
    """Add ``identify friction`` to the ``identify`` group."""
    f = isub.add_parser(
        "friction", help="friction law from spin-downs (angle only) or presses at several speeds",
        description="Fit a friction law (Coulomb-viscous, Stribeck as Brown & McPhee, LuGre) by least squares with "
                    "standard errors, from spin-downs of a knob or flywheel (J theta'' = -f(theta')) or from a key, "
                    "slider or knob moved at several constant speeds, and write it as a model file.")
    f.add_argument("captures", nargs="+", metavar="CAPTURE", help="capture files (.csv or .npz)")
    f.add_argument("-o", "--output", required=True, help="model file to write (.yaml or .msgpack)")
    f.add_argument("--law", default="stribeck", help=f"friction law: {', '.join(LAWS)} (default stribeck)")
    f.add_argument("--method", choices=FRICTION_METHODS.names(), default="ls",
                   help="ls: least squares with standard errors (default); uas: seed 003's observer (not identified "
                        "friction: its adaptation law ignores the data); a plugin may add more")
    f.add_argument("--experiment", choices=EXPERIMENTS, default="auto",
                   help="spin-down or speeds (default: spin-down when the motion is one launch and a coast, for "
                        "angle-only captures or with --inertia / --added-inertia, else speeds)")
    f.add_argument("--inertia", type=float, metavar="KGM2", help="the knob's moment of inertia J (kg m^2), if known")
    f.add_argument("--added-inertia", type=float, nargs="+", metavar="KGM2",
                   help="inertia added to each capture's knob (one per capture; J is then identified)")
    f.add_argument("--window-ms", type=float, default=None,
                   help="differentiation window in ms (default: 5, longer where a spin-down's encoder is coarse)")
    f.add_argument("--add-to", metavar="MODEL",
                   help="write the friction added to this model (e.g. an identified impedance model) as a composite")
    f.add_argument("--json", action="store_true", help="print the result as one JSON object")
    f.set_defaults(func=_cmd_friction)


#: the largest moment of inertia the spin-down fit takes (kg m^2: a 1 m, 100 kg flywheel; a knob's is 1e-6)
MAX_INERTIA_KGM2 = 100.0


def _check_args(args: argparse.Namespace) -> None:
    check_output_file("-o", args.output, MODEL_SUFFIXES, MODEL_HINT)
    if args.law not in LAWS:
        raise UsageError(f"--law {args.law}: unknown friction law; choose one of {', '.join(LAWS)}")
    if args.inertia is not None and not (math.isfinite(args.inertia) and 0.0 < args.inertia <= MAX_INERTIA_KGM2):
        raise UsageError(f"--inertia: a moment of inertia in (0, {MAX_INERTIA_KGM2:g}] kg m^2, got {args.inertia:g}")
    if args.added_inertia is not None:
        if len(args.added_inertia) != len(args.captures):
            raise UsageError(f"--added-inertia: one value per capture ({len(args.captures)}), got "
                             f"{len(args.added_inertia)}")
        if any(not (math.isfinite(a) and 0.0 <= a <= MAX_INERTIA_KGM2) for a in args.added_inertia):
            raise UsageError(f"--added-inertia: each value in [0, {MAX_INERTIA_KGM2:g}] kg m^2")
    if args.window_ms is not None and not (math.isfinite(args.window_ms) and 0.0 < args.window_ms <= 1000.0):
        raise UsageError(f"--window-ms: from 0 to 1000 ms, got {args.window_ms:g}")


def _load(args: argparse.Namespace) -> tuple[list[Any], str, str]:
    from hapticam.capture_columns import axis_of
    from hapticam.capture_io import load_capture

    captures = [load_capture(p) for p in args.captures]
    axes = {axis_of(c.metadata) for c in captures}
    if len(axes) > 1:
        raise UsageError("the captures mix linear and rotary axes; fit one axis at a time")
    experiment = args.experiment
    if experiment == "auto":
        from hapticam.identify.friction.experiment import detect_experiment

        experiment = detect_experiment(captures, inertia_given=args.inertia is not None or bool(args.added_inertia))
    return captures, axes.pop(), experiment


def _fit(args: argparse.Namespace, captures: list[Any], axis: str, experiment: str) -> Any:
    """The ``--method``'s :class:`~hapticam.identify.friction.methods.FrictionEstimate`."""
    estimate = FRICTION_METHODS.get(args.method)
    return estimate(captures, args.law, experiment=experiment, axis=axis, inertia=args.inertia,
                    added_inertia=args.added_inertia, window_s=None if args.window_ms is None else args.window_ms * 1e-3)


def _cmd_friction(args: argparse.Namespace) -> int:
    from hapticam.models.files import make_provenance, save_model

    _check_args(args)
    captures, axis, experiment = _load(args)
    base = _base_model(args.add_to, axis) if args.add_to else None
    estimate = _fit(args, captures, axis, experiment)
    model, fit, detail, uncertainty = estimate.to_model(), estimate.fit, estimate.detail, estimate.uncertainty
    if base is not None:
        if uncertainty is not None and model.kind == "friction":
            uncertainty = {"friction": uncertainty}              # the friction is a part of the composite
        model, detail = _add_to(args.add_to, base, model, fit, detail)
    summary = _summary(args, axis, experiment, model, fit, detail, estimate.identified)
    names = [Path(p).name for p in args.captures]
    prov = make_provenance(f"friction-{experiment}-{args.method}",
                           settings={"law": args.law, "method": args.method, "experiment": experiment,
                                     "inertia_kgm2": args.inertia, "added_inertia_kgm2": args.added_inertia,
                                     "window_ms": args.window_ms, "captures": names},
                           source_name=", ".join(names), source_sha256=captures[0].sha256 if len(captures) == 1 else None,
                           metrics={"fit_percent": fit.fit_percent, "rms": fit.rms, "levels": fit.levels,
                                    "levels_se": fit.se, "extra": fit.extra, "extra_se": fit.extra_se},
                           notes=list(fit.notes))
    save_model(args.output, model, provenance=json_safe(prov), uncertainty=uncertainty, axis=axis)
    if args.json:
        print(json.dumps(json_safe(summary)))
    else:
        print(_table(summary))
    return 0


def _base_model(source: str, axis: str) -> Any:
    """The model ``--add-to`` names, checked before any work: it must be on the captures' axis kind."""
    from hapticam.models.files import load_model

    base, doc = load_model(source)
    if doc.axis != axis:
        raise UsageError(f"--add-to {source}: a {doc.axis} model; the captures are {axis}")
    return base


def _add_to(source: str, base: Any, friction: Any, fit: Any, detail: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """The identified friction added to ``base`` (the model in ``source``) as a composite of both."""
    from hapticam.models.composite import Composite

    law = [m for m in friction.components() if m.kind == "friction"]
    fit.notes.append(f"friction added to {source}; if that model's own direction-dependent force already holds "
                     "friction (an impedance model identified from presses does), the sum counts it twice")
    return Composite([base, *law]), {**detail, "added_to": source}


def _summary(args: argparse.Namespace, axis: str, experiment: str, model: Any, fit: Any,
             detail: dict[str, Any], identified: bool) -> dict[str, Any]:
    from hapticam.capture_columns import AXIS_UNITS

    return {"captures": list(args.captures), "output": args.output, "law": args.law, "method": args.method,
            "experiment": experiment, "axis": axis, "units": AXIS_UNITS[axis], "model_kind": model.kind,
            "identified": identified, "levels": fit.levels, "levels_se": fit.se, "extra": fit.extra,
            "extra_se": fit.extra_se, "fit_percent": fit.fit_percent, "rms": fit.rms, "samples": fit.samples,
            "speed_range": list(fit.speed_range), "parameters": model.to_dict(), "notes": list(fit.notes),
            **detail}


def _table(s: dict[str, Any]) -> str:
    u = s["units"]
    rows = [("Coulomb level", "coulomb", u["force"]), ("Stribeck peak (above Coulomb)", "stribeck_peak", u["force"]),
            ("Stribeck / smoothing speed", "shape_speed", u["velocity"]),
            ("viscous", "viscous", f"{u['force']} s/{u['position']}" if s["axis"] == "rotary" else u["damping"])]
    lines = [f"friction ({s['law']}, {s['method']}, {s['experiment']}) on a {s['axis']} axis from "
             f"{len(s['captures'])} capture(s) -> {s['output']} ({s['model_kind']})"]
    if not s["identified"]:
        lines.append(f"warning: {s['statement']}")
    for label, key, unit in rows:
        se = s["levels_se"].get(key)
        pm = f" +- {se:.2g}" if se is not None and math.isfinite(se) and s["identified"] else ""
        lines.append(f"  {label:<30} {s['levels'][key]:.6g}{pm} {unit}")
    inertia_unit = u["mass"]
    for name, value in s["extra"].items():
        if name.startswith(("inertia", "mass")):
            se = s["extra_se"].get(name, 0.0)
            pm = f" +- {se:.2g}" if se and math.isfinite(se) else " (given)"
            lines.append(f"  {'inertia' if s['axis'] == 'rotary' else 'mass':<30} {value:.6g}{pm} {inertia_unit}")
    if s["identified"]:
        lines.append(f"  fit {s['fit_percent']:.2f} % (seed 003 eq. 53) over {s['samples']} samples, RMS "
                     f"{s['rms']:.3g} {u['force']}; speeds {s['speed_range'][0]:.3g} to {s['speed_range'][1]:.3g} "
                     f"{u['velocity']}")
    for note in s["notes"]:
        lines.append(f"note: {note}")
    return "\n".join(lines)
