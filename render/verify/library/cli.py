"""``hapticam library build|nearest|compare`` and ``hapticam bench library``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from hapticam.errors import UsageError, missing_subcommand
from hapticam.fileio import MODEL_SUFFIXES, json_safe

#: most copies of each capture the build bench writes (each is a file in a temporary folder)
MAX_COPIES = 100


def register(sub: argparse._SubParsersAction, bench: argparse._SubParsersAction) -> None:
    """Add ``library build|nearest|compare`` and ``bench library`` (``bench``: the ``hapticam bench`` group)."""
    lib = sub.add_parser("library", help="a library of identified keys: build, nearest, compare",
                         description="Identify and verify many captures into a browsable library, and find "
                                     "the keys that feel alike.")
    lsub = lib.add_subparsers(dest="library_command", metavar="ACTION", parser_class=type(lib))
    b = lsub.add_parser("build", help="identify and verify every capture into LIBRARY_DIR (resumable)",
                        description="Identify (passive) and verify every capture (files or folders) in "
                                    "parallel; captures already in the library are skipped; writes "
                                    "index.json and index.html. Exit 1 when a capture could not be built "
                                    "(its entry is marked failed).")
    b.add_argument("captures", nargs="+", metavar="CAPTURE", help="capture files or folders of them")
    b.add_argument("-o", "--output", required=True, metavar="LIBRARY_DIR", help="library folder (created)")
    b.add_argument("--jobs", type=int, default=None, help="local worker processes (default: all cores)")
    b.add_argument("--dask", metavar="ADDRESS", default=None,
                   help="run on an existing Dask cluster, e.g. tcp://scheduler:8786 (pip install 'hapticam[dask]')")
    b.add_argument("--retry-failed", action="store_true", help="try again the captures that failed before")
    b.add_argument("--quiet", action="store_true", help="no progress bar")
    b.add_argument("--json", action="store_true", help="print the build report as one JSON object")
    b.set_defaults(func=_cmd_build)
    n = lsub.add_parser("nearest", help="the library entries that feel most like a model or capture",
                        description="Rank library entries by perceptual distance (feature differences in "
                                    "just-noticeable differences) to MODEL or CAPTURE.")
    n.add_argument("library", metavar="LIBRARY_DIR")
    n.add_argument("query", metavar="MODEL|CAPTURE")
    n.add_argument("-n", type=int, default=5, help="how many (default 5)")
    n.add_argument("--json", action="store_true", help="print the ranking as one JSON object")
    n.set_defaults(func=_cmd_nearest)
    c = lsub.add_parser("compare", help="the features a person would notice between two keys, A against B",
                        description="A and B are model files, captures, or library entry names "
                                    "(LIBRARY_DIR/NAME). Differences read A against B: 'more' says A has "
                                    "more than B.")
    c.add_argument("a", metavar="A")
    c.add_argument("b", metavar="B")
    c.add_argument("--json", action="store_true", help="print the comparison as one JSON object")
    c.set_defaults(func=_cmd_compare)
    lib.set_defaults(func=lambda args: missing_subcommand(lib.prog))

    bl = bench.add_parser("library", help="library build throughput: 1 process, all cores, a Dask LocalCluster",
                          description="Captures per second of a library build with one process, with every "
                                      "local core, and on a dask.distributed LocalCluster of the same size.")
    bl.add_argument("captures", nargs="*", metavar="CAPTURE",
                    help="captures or folders (default: the repository's switch captures)")
    bl.add_argument("--copies", type=int, default=2, help="times each capture is built (default 2)")
    bl.add_argument("--json", action="store_true", help="print the results as one JSON object")
    bl.set_defaults(func=_cmd_bench)


def _cmd_build(args: argparse.Namespace) -> int:
    from hapticam.render.verify.library.build import build_library

    report = build_library(args.captures, args.output, jobs=args.jobs, dask=args.dask,
                           retry_failed=args.retry_failed, quiet=args.quiet or args.json)
    data = {"library": args.output, "done": report.done, "failed": report.failed, "skipped": report.skipped,
            "entries": report.entries, "failures": [{"capture": c, "reason": r} for c, r in report.failures],
            "duplicates": [{"capture": c, "same_as": first} for c, first in report.duplicates]}
    if args.json:
        print(json.dumps(data))
    else:
        print(f"library {args.output}: {report.done} built, {report.failed} failed, {report.skipped} already "
              f"there; {report.entries} entries; see {Path(args.output) / 'index.html'}")
        for cap, reason in report.failures:
            print(f"  failed: {cap}: {reason}")
        for cap, first in report.duplicates:
            print(f"  skipped: {cap}: the same capture as {first}")
    if report.failed:                       # the entries that failed are in the library, marked failed
        print(f"hapticam: {report.failed} of the captures could not be built (listed above)", file=sys.stderr)
    return 1 if report.failed else 0


#: what a key's comparison needs read from both sides (a distance over fewer features says too little)
CORE_FEATURES = ("actuation_force_N", "total_travel_m")


def features_of(spec: str) -> tuple[str, dict[str, Any]]:
    """``(name, perceptual features)`` of a model file, a capture, or a library entry ``DIR/NAME``; refused
    when the key's core features (:data:`CORE_FEATURES`) cannot be read from it."""
    name, features = _features_of(spec)
    missing = [k for k in CORE_FEATURES if features.get(k) is None]
    if missing:
        raise UsageError(f"{spec}: no {' or '.join(m.rsplit('_', 1)[0].replace('_', ' ') for m in missing)} can be "
                         "read from it (a whole press onto the bottom is needed to compare keys)")
    return name, features


def _features_of(spec: str) -> tuple[str, dict[str, Any]]:
    from hapticam.identify.plot import static_curve
    from hapticam.render.verify.features import FxCurves, fx_curves, key_features
    from hapticam.render.verify.library.catalogue import load_index
    from hapticam.capture_columns import require_linear
    from hapticam.render.verify.library.entry import LINEAR_ONLY, perceptual_features

    p = Path(spec)
    if not p.exists() and (p.parent / "index.json").exists():
        for e in load_index(p.parent)["entries"]:
            if e.get("name") == p.name and e.get("status") == "ok":
                return e["name"], e["features"]
        raise UsageError(f"{spec}: no entry {p.name!r} in the library {p.parent}")
    if spec.startswith("example:") or p.suffix.lower() in MODEL_SUFFIXES:
        from hapticam.models.files import load_model
        from hapticam.render.gate import require_tick_budget

        model, doc = load_model(spec)
        require_tick_budget(model, 1000.0, name=spec)       # static_curve steps it in 1 ms ticks, 8000 of them
        lo, hi = (doc.provenance.get("settings") or {}).get("data_range_m") or [0.0, 5e-3]
        xs = np.linspace(lo, hi, 4000)
        curves = FxCurves(xs, static_curve(model, xs, 1), static_curve(model, xs, -1))
        return p.name, perceptual_features(key_features(curves), curves)
    from hapticam.capture_io import load_capture
    from hapticam.identify.preprocess import prepare

    cap = load_capture(spec)
    require_linear(cap, spec, LINEAR_ONLY)
    prep = prepare(cap)
    step = float(np.median(np.abs(np.diff(cap.x_m)))) if cap.n > 1 else 0.0
    curves = fx_curves(cap.x_m[cap.valid], cap.f_N[cap.valid], prep.direction[cap.valid].astype(int),
                       max(1e-5, 2.0 * step))
    return p.name, perceptual_features(key_features(curves), curves)


def _cmd_nearest(args: argparse.Namespace) -> int:
    from hapticam.render.verify.library.catalogue import compare, load_index, nearest

    if args.n < 1:
        raise UsageError(f"-n must be >= 1, got {args.n}")
    entries = load_index(args.library)["entries"]
    name, feats = features_of(args.query)
    ranked = nearest(feats, entries, args.n)
    if args.json:
        ranking = [{"name": e["name"], "distance_jnd": d, "noticeable": compare(e["features"], feats)}
                   for d, e in ranked]
        print(json.dumps(json_safe({"query": name, "reading": f"each key against {name}: its value less the query's",
                                    "nearest": ranking})))
        return 0
    print(f"keys that feel most like {name} (distance in just-noticeable differences; each key against {name}):")
    for d, e in ranked:
        noticed = compare(e["features"], feats)
        print(f"  {d:7.2f}  {e['name']:<36} {'; '.join(noticed[:3]) or 'no difference a person would notice'}")
    return 0


def _cmd_compare(args: argparse.Namespace) -> int:
    from hapticam.render.verify.library.catalogue import compare, differences, distance

    na, fa = features_of(args.a)
    nb, fb = features_of(args.b)
    noticed = compare(fa, fb)
    if args.json:
        print(json.dumps(json_safe({"a": na, "b": nb, "reading": "A against B: each difference is A's value less B's",
                                    "distance_jnd": distance(fa, fb), "differences_jnd": differences(fa, fb),
                                    "noticeable": noticed, "features_a": fa, "features_b": fb})))
        return 0
    print(f"{na} against {nb}: distance {distance(fa, fb):.2f} JND")
    for line in noticed or ["no difference a person would notice"]:
        print(f"  {line}")
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    from hapticam.render.verify.library.bench import format_table, run_bench

    if not 1 <= args.copies <= MAX_COPIES:
        raise UsageError(f"--copies must be from 1 to {MAX_COPIES}, got {args.copies}")
    results = run_bench(args.captures, copies=args.copies, progress=lambda m: print(m, file=sys.stderr))
    print(json.dumps(json_safe(results)) if args.json else format_table(results))
    return 0
