"""``hapticam identify contact`` and ``hapticam reproduce`` (the papers' experiments)."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from hapticam.errors import UsageError
from hapticam.fileio import MODEL_HINT, MODEL_SUFFIXES, check_output_file, json_safe, make_output_folder
from hapticam.identify.estimators import CONTACT_ESTIMATORS

#: ``hapticam.identify.contact.fit.ESTIMATORS`` (the built-in estimators, read from their registry, which
#: imports none of them) and ``LAWS``, named here so that building the command line imports no estimator
#: (scipy); ``tests/test_cli_startup.py`` keeps them the same
ESTIMATORS = tuple(CONTACT_ESTIMATORS.builtins)
LAWS = ("linear", "hunt-crossley")


def register_contact(isub: argparse._SubParsersAction) -> None:
    """Add ``identify contact`` to the ``identify`` group."""
    c = isub.add_parser(
        "contact", help="contact stiffness and damping, F = k x + b x' or Hunt-Crossley (seed 004)",
        description="Fit a contact model (a wall, a key's bottom-out, a rubber dome) to a capture of probe "
                    "position and force with one of the nine estimators of seed 004, or all of them side by side.")
    c.add_argument("capture", help="capture file (.csv or .npz) reaching into the contact")
    c.add_argument("-o", "--output", required=True, help="model file to write (.yaml or .msgpack)")
    c.add_argument("--estimator", choices=(*CONTACT_ESTIMATORS.names(), "all"), default="gls",
                   help="estimator (default gls, global least squares; a plugin may add more); 'all' prints the "
                        "nine built-in ones side by side")
    c.add_argument("--law", choices=LAWS, default="linear", help="contact law (default linear)")
    c.add_argument("--probe-stiffness", type=float, default=None, metavar="N/m",
                   help="stiffness of the probe or rig in series with the contact, removed from the estimate")
    c.add_argument("--side", type=int, choices=(1, -1), default=1, help="+1: the wall is met pressing (default)")
    c.add_argument("--plot", metavar="PNG", help="write the estimators' convergence plot (estimate against time)")
    c.add_argument("--json", action="store_true", help="print the result as one JSON object")
    c.set_defaults(func=_cmd_contact)


def _cmd_contact(args: argparse.Namespace) -> int:
    from hapticam.capture_io import load_capture
    from hapticam.identify.contact.fit import fit_contact
    from hapticam.identify.contact.plot import convergence_figure
    from hapticam.models.files import make_provenance, save_model

    check_output_file("-o", args.output, MODEL_SUFFIXES, MODEL_HINT)
    out = Path(args.output)
    if args.probe_stiffness is not None and not (math.isfinite(args.probe_stiffness) and args.probe_stiffness > 0):
        raise UsageError(f"--probe-stiffness: a positive stiffness in N/m, got {args.probe_stiffness}")
    check_output_file("--plot", args.plot or None, (".png",), "the plot is a PNG; use a .png file name")
    capture = load_capture(args.capture)
    fit = fit_contact(capture.t_s[capture.valid], capture.x_m[capture.valid], capture.f_N[capture.valid],
                      estimator=args.estimator, law=args.law, probe_stiffness_Npm=args.probe_stiffness,
                      v_mps=None if capture.v_mps is None else capture.v_mps[capture.valid], side=args.side)
    model = fit.to_model()
    summary = {"capture": args.capture, "output": args.output, "law": fit.law, "estimator": fit.estimator,
               "x_c_m": fit.x_c_m, "k_Npm": fit.k_Npm, "k_se": fit.k_se, "b_Nspm": model.to_dict()["b_Nspm"],
               "b_se": fit.b_se, "b_identifiable": fit.b_identifiable, "b_verdict": fit.b_verdict, "n": fit.n,
               "probe_stiffness_Npm": fit.probe_stiffness_Npm, "k_uncorrected_Npm": fit.k_uncorrected_Npm,
               "estimators": {n: {"k_Npm": r.k_Npm, "b_Nspm": r.b_Nspm, "status": r.status}
                              for n, r in fit.results.items()}, "notes": list(fit.notes)}
    prov = make_provenance(f"contact-{fit.estimator}", settings={"law": fit.law, "estimator": args.estimator,
                                                                "probe_stiffness_Npm": args.probe_stiffness},
                           source_name=Path(args.capture).name, source_sha256=capture.sha256,
                           metrics={k: v for k, v in (("k_se_Npm", fit.k_se), ("b_se_Nspm", fit.b_se))
                                    if math.isfinite(v)},      # an estimator without standard errors (IA)
                           notes=[fit.b_verdict, *fit.notes])
    if args.plot:                                  # the figure first: a figure that cannot be written leaves no model
        convergence_figure(fit, args.plot)
        summary["plot"] = args.plot
    save_model(out, model, provenance=prov)
    if args.json:
        print(json.dumps(json_safe(summary)))
        return 0
    print(f"contact {fit.law} at x_c = {fit.x_c_m * 1e3:.4f} mm: k = {fit.k_Npm:.6g} +- {fit.k_se:.3g} "
          f"({'N/m' if fit.law == 'linear' else 'N/m^n'}), b = {summary['b_Nspm']:.5g} "
          f"{'N s/m' if fit.law == 'linear' else 'N s/m^(n+1)'}"
          + (f", n = {fit.n:.4g}" if fit.law != "linear" else "") + f" -> {args.output}")
    if args.estimator == "all":
        print(fit.table())
    else:
        print(f"damping: {fit.b_verdict}")
    for note in fit.notes:
        print(f"note: {note}")
    return 0


def register_reproduce(sub: argparse._SubParsersAction) -> None:
    """Add ``hapticam reproduce``."""
    r = sub.add_parser("reproduce", help="run a paper's experiment and compare with the paper's numbers",
                       description="Run an experiment of the papers hapticam implements, write its figures "
                                   "(PNG) and print our numbers beside the paper's. --list names them.")
    r.add_argument("names", nargs="*", metavar="NAME", help="experiments to run (default: all)")
    r.add_argument("--list", action="store_true", help="list the experiments")
    r.add_argument("-o", "--out", metavar="DIR", default="hapticam-reproduce", help="figures folder")
    r.add_argument("--quick", action="store_true", help="the reduced runs the test suite uses")
    r.add_argument("--json", action="store_true", help="print the tables as one JSON object")
    r.set_defaults(func=_cmd_reproduce)


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from hapticam.commands.reproduce.papers import experiments, format_result, run

    table = experiments()
    if args.list:
        for name, exp in table.items():
            print(f"{name:<28} {exp.title}")
        return 0
    names = args.names or list(table)
    unknown = [n for n in names if n not in table]
    if unknown:
        raise UsageError(f"unknown experiment {unknown[0]!r}; known: {', '.join(table)}")
    out = Path(args.out)
    make_output_folder("--out", out)
    results: dict[str, Any] = {}
    for name in names:
        res = run(name, out / name, quick=args.quick)
        results[name] = {"rows": [list(r) for r in res.rows], "figures": [str(p) for p in res.figures],
                         "notes": list(res.notes)}
        if not args.json:
            print(format_result(name, res))
    if args.json:
        print(json.dumps(json_safe(results)))
    return 0
