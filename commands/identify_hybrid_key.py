"""``hapticam identify hybrid-key CAPTURE... -o MODEL``: the piano-like key's hybrid model from probe captures.

What each capture identifies (a capture's role comes from the excitation its metadata names, else from its
motion) is printed with the result; see :mod:`hapticam.identify.hybrid_key.fit`.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from hapticam.errors import UsageError
from hapticam.fileio import MODEL_HINT, MODEL_SUFFIXES, check_output_file, json_safe

#: The simulated device the coupling is chosen for by default (``hapticam.world.sim.SimParams``).
DEVICE_DAMPING_NSPM, RENDER_RATE_HZ = 2.0, 1000.0
#: The simulated device's handle mass (kg), for the rendered friction's width (``SimParams.handle_mass_kg``).
HANDLE_MASS_KG = 0.05


def register_hybrid_key(isub: argparse._SubParsersAction) -> None:
    """Add ``identify hybrid-key`` to the ``identify`` group."""
    c = isub.add_parser(
        "hybrid-key", help="piano-like key: hybrid key/hammer model from probe captures (seed 000)",
        description="Fit the hybrid-key model (key, jack, let-off, backcheck, string, keybed) to probe captures of "
                    "a piano-like key, position and force only: a slow press and release past let-off onto the "
                    "keybed (required), strokes at graded speeds, an oscillation below let-off, a long periodic "
                    "excitation, a tap (the key held past let-off and rocked by micrometres on the probe's resting "
                    "tip: the felt's stiffness; the piano demo records one). Writes the model with standard errors "
                    "(uncertainty) and what was fixed; Coulomb friction and a let-off bump the slow stroke shows "
                    "are written beside the key (a composite with friction and contact components); the force "
                    "pulses the captures show at the hammer's impacts beyond the model's own force are written "
                    "as event-based transients.")
    c.add_argument("captures", nargs="+", metavar="CAPTURE", help="capture files (.csv or .npz), >= 10 kHz for strokes")
    c.add_argument("-o", "--output", required=True, help="model file to write (.yaml or .msgpack)")
    c.add_argument("--probe-stiffness", type=float, default=None, metavar="N/m",
                   help="stiffness of the probe's tip on the key (with --probe-damping): the key's recoil in the contact fit "
                        "(default: the one-sided tip the captures name, if any; a key the captures say rests on its tip has its "
                        "mass read through the tip either way)")
    c.add_argument("--probe-damping", type=float, default=0.0, metavar="N s/m", help="damping of the probe's tip")
    c.add_argument("--device-damping", type=float, default=DEVICE_DAMPING_NSPM, metavar="N s/m",
                   help="physical damping of the device the model will be rendered on (default 2, the simulator)")
    c.add_argument("--render-rate", type=float, default=RENDER_RATE_HZ, metavar="HZ",
                   help="servo rate the coupling is chosen for (default 1000)")
    c.add_argument("--json", action="store_true", help="print the result as one JSON object")
    c.set_defaults(func=_cmd_hybrid_key)


def _positive(name: str, value: float | None, allow_zero: bool = False) -> None:
    if value is not None and not (math.isfinite(value) and (value >= 0 if allow_zero else value > 0)):
        raise UsageError(f"{name}: a {'non-negative' if allow_zero else 'positive'} finite number, got {value}")


def _kind(capture: Any) -> str | None:
    """The excitation kind a simulated probe recorded in the capture's metadata, if any."""
    exc = capture.metadata.get("excitation")
    if isinstance(exc, str):
        try:
            exc = json.loads(exc)
        except ValueError:
            return None
    return exc.get("kind") if isinstance(exc, dict) else None


def _resting_tip(metadata: list[dict]) -> tuple[float, float] | None:
    """The tip (stiffness N/m, Hunt-Crossley alpha s/m) every capture names as a one-sided pad the key rests
    on (its ``probe`` metadata), or None."""
    from hapticam.render.verify.probe_tip import capture_probe

    probes = [capture_probe(m) for m in metadata]
    if not probes or any(p is None for p in probes) or len({(p.tip_k_Npm, p.tip_alpha_spm) for p in probes}) != 1:
        return None
    return (probes[0].tip_k_Npm, probes[0].tip_alpha_spm)


def _cmd_hybrid_key(args: argparse.Namespace) -> int:
    from hapticam.capture_io import load_capture
    from hapticam.identify.hybrid_key.fit import POOR_FIT_PERCENT, identify_hybrid_key
    from hapticam.identify.hybrid_key.params import describe_roles
    from hapticam.models.files import make_provenance, save_model

    check_output_file("-o", args.output, MODEL_SUFFIXES, MODEL_HINT)
    out = Path(args.output)
    _positive("--probe-stiffness", args.probe_stiffness)
    _positive("--probe-damping", args.probe_damping, allow_zero=True)
    _positive("--device-damping", args.device_damping)
    _positive("--render-rate", args.render_rate)
    if args.device_damping > 1000.0 or not 100.0 <= args.render_rate <= 100_000.0:
        raise UsageError("--device-damping: at most 1000 N s/m, and --render-rate from 100 to 100000 Hz (the "
                         f"coupling is sized by them), got {args.device_damping:g} and {args.render_rate:g}")
    captures, paths, metadata = [], {}, []     # paths: the name each capture is known by -> the path given
    for path in args.captures:
        if any(Path(path).resolve() == Path(p).resolve() for p in paths.values()):
            raise UsageError(f"{path}: given twice (each capture counts once)")
        cap = load_capture(path)
        name = Path(path).name if Path(path).name not in paths else path
        paths[name] = path
        # every sample, on the capture's uniform clock: what the dropout check flags in a key's capture is
        # most often a landing's spike, and the fit's time base needs the samples evenly spaced
        captures.append((name, cap.t_s, cap.x_m, cap.f_N, _kind(cap)))
        metadata.append(cap.metadata)
    tip = None if args.probe_stiffness is None else (args.probe_stiffness, args.probe_damping)
    resting = _resting_tip(metadata)       # the captures' own one-sided tip: the key's mass is read through it
    fit = identify_hybrid_key(captures, probe_tip=tip or (None if resting is None else (resting[0], 0.0)),
                              key_on_tip=resting is not None, tip_alpha_spm=None if resting is None else resting[1])
    kc, bc = fit.coupling(args.device_damping, args.render_rate)
    from hapticam.identify.transients import identify_transients

    model = fit.to_model(args.device_damping, args.render_rate, HANDLE_MASS_KG)
    model.transients, transient_notes = identify_transients(model, captures)
    roles = describe_roles()
    notes = [f"{name}: {role}: {roles[role]}" for name, role in fit.roles.items()]
    notes += [f"fixed {k}: {why}" for k, why in fit.fixed.items()] + fit.notes + transient_notes
    notes.append(f"rendering: key coupled to the handle, k_c = {kc:g} N/m, b_c = {bc:g} N s/m (device damping "
                 f"{args.device_damping:g} N s/m at {args.render_rate:g} Hz: b > k_c T / 2 + b_c)")
    prov = make_provenance("hybrid-key", settings={"probe_tip": tip, "device_damping_Nspm": args.device_damping,
                                                   "render_rate_hz": args.render_rate},
                           source_name=", ".join(paths), metrics={"fit_percent_100Hz": fit.fit_percent}, notes=notes)
    save_model(out, model, provenance=prov,
               uncertainty=fit.uncertainty() if not fit.extra else {"hybrid-key": fit.uncertainty()})
    summary = {"captures": fit.roles, "output": str(out), "parameters": model.to_dict(), "std_errors": fit.std_errors,
               "beside_the_key": fit.extra,
               "fixed": fit.fixed, "fit_percent_100Hz": fit.fit_percent, "coupling": {"k_Npm": kc, "b_Nspm": bc},
               "transients": [t.to_dict() for t in model.transients], "notes": fit.notes + transient_notes}
    poor = {name: pct for name, pct in fit.fit_percent.items() if not pct >= POOR_FIT_PERCENT}
    for name, pct in poor.items():
        print(f"warning: {name}: the model reproduces this capture at {pct:.1f} % (100 Hz, below "
              f"{POOR_FIT_PERCENT:g} %): check it with 'hapticam verify {out} {paths.get(name, name)}' before "
              "rendering; a key's impacts need captures at 10 kHz or more", file=sys.stderr)
    summary["poor_fits"] = poor
    if args.json:
        print(json.dumps(json_safe(summary)))
        return 0
    print(f"hybrid-key from {len(captures)} capture(s) -> {out}")
    for name, role in fit.roles.items():
        print(f"  {name}: {role} ({roles[role]}); fit (100 Hz) {fit.fit_percent[name]:.1f} %")
    for name, se in fit.std_errors.items():
        print(f"  {name:<20} {fit.values[name]:>12.6g} +- {se:.3g}")
    for name, value in fit.extra.items():
        print(f"  beside the key: {name:<12} {value:>12.6g}")
    for name, why in fit.fixed.items():
        print(f"  fixed {name}: {why}")
    for t in model.transients:
        sd = "" if t.gain_sd is None else f" +- {t.gain_sd:.3g}"
        print(f"  transient at {t.event}: gain {t.gain_N_per_mps:.4g}{sd} N/(m/s), {t.frequency_hz:.4g} Hz, decay "
              f"{t.decay_s * 1e3:.3g} ms ({t.samples} impacts)")
    for note in fit.notes + transient_notes:
        print(f"note: {note}")
    return 0
