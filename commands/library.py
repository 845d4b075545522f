"""``hapticam library build|list|show|page|nearest|compare`` and ``hapticam bench library``.

``list``, ``show`` and ``nearest`` are :mod:`~hapticam.commands.catalogue`'s; without a
library folder they read the shipped switch catalogue, and a switch of it is named ``switch:NAME`` or by
its bare name wherever a key is (``compare "Gateron Brown" Cherry-MX-Red``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from hapticam.errors import UsageError, missing_subcommand, parameters_as_flags
from hapticam.fileio import json_safe
from hapticam.library.reference import features_and_curve_of, features_of  # noqa: F401 (api)

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
                                    "(its entry is marked failed). With --catalogue: rebuild the switch "
                                    "catalogue from its shipped captures (resumable; into the shipped "
                                    "folder unless -o).")
    b.add_argument("captures", nargs="*", metavar="CAPTURE", help="capture files or folders of them")
    b.add_argument("-o", "--output", metavar="LIBRARY_DIR", help="library folder (created)")
    b.add_argument("--catalogue", action="store_true",
                   help="rebuild the switch catalogue from its captures (switches/captures.tar.xz)")
    b.add_argument("--work", metavar="DIR", default=None,
                   help="with --catalogue: the folder of the unpacked captures and the library it keeps "
                        "between runs (default ~/.cache/hapticam/switch-catalogue)")
    b.add_argument("--jobs", type=int, default=None, help="local worker processes (default: all cores)")
    b.add_argument("--dask", metavar="ADDRESS", default=None,
                   help="run on an existing Dask cluster, e.g. tcp://scheduler:8786 (pip install 'hapticam[dask]')")
    b.add_argument("--retry-failed", action="store_true", help="try again the captures that failed before")
    b.add_argument("--quiet", action="store_true", help="no progress bar")
    b.add_argument("--json", action="store_true", help="print the build report as one JSON object")
    b.set_defaults(func=_cmd_build)
    _register_catalogue(lsub)
    c = lsub.add_parser("compare", help="the features a person would notice between two keys, A against B",
                        description="A and B are model files, captures, library entry names "
                                    "(LIBRARY_DIR/NAME) or switches of the catalogue (NAME or switch:NAME). "
                                    "Differences read A against B: 'more' says A has more than B.")
    c.add_argument("a", metavar="A")
    c.add_argument("b", metavar="B")
    c.add_argument("--json", action="store_true", help="print the comparison as one JSON object")
    c.set_defaults(func=_cmd_compare)
    lib.set_defaults(func=lambda args: missing_subcommand(lib.prog))

    bl = bench.add_parser("library", help="catalogue rebuild throughput: 1 and 2 processes, a Dask LocalCluster",
                          description="Captures per second of the switch catalogue rebuilt from its captures "
                                      "(as 'library build --catalogue' does) with one process, with --workers "
                                      "local processes and on a dask.distributed LocalCluster of --workers "
                                      "workers, in one run; or of a library build of the CAPTUREs given.")
    bl.add_argument("captures", nargs="*", metavar="CAPTURE",
                    help="captures or folders (default: the switch catalogue's captures)")
    bl.add_argument("--only", type=int, metavar="N", default=None,
                    help="only N captures, spread evenly over them (default: all)")
    bl.add_argument("--workers", type=int, metavar="N", default=2,
                    help="local processes and Dask workers of the parallel rows (default 2)")
    bl.add_argument("--copies", type=int, default=1, help="with CAPTURE: times each capture is built (default 1)")
    bl.add_argument("--json", action="store_true", help="print the results as one JSON object")
    bl.set_defaults(func=_cmd_bench)


def _register_catalogue(lsub: argparse._SubParsersAction) -> None:
    """``library list``, ``show`` and ``nearest`` (:mod:`~hapticam.commands.catalogue`)."""
    from hapticam.commands import catalogue as cc

    ls = lsub.add_parser("list", help="the switches of the catalogue (or a library), with their features",
                         description="List the switches with their kind, main features and verification "
                                     "verdict; the options keep those a person asks for.")
    cc.add_wish_options(ls, scaling=False)
    ls.add_argument("--failed", action="store_true", help="only the switches that did not identify or verify")
    ls.set_defaults(func=cc.cmd_list)
    sh = lsub.add_parser("show", help="one switch: features, verification, credit, how to play it",
                         description="A switch of the catalogue (or of --library): its features, verification "
                                     "figures and failures, the switches measured again, and its credit.")
    sh.add_argument("name", metavar="NAME", help="the switch's name, e.g. Gateron-Brown or 'gateron brown'")
    sh.add_argument("--library", metavar="LIBRARY_DIR", default=None,
                    help="a library folder (default: the shipped switch catalogue)")
    sh.add_argument("--json", action="store_true", help="print the entry as one JSON object")
    sh.set_defaults(func=cc.cmd_show)
    n = lsub.add_parser("nearest", help="the keys that feel most like a reference, under a person's wishes",
                        description="Rank the switches of the catalogue (or LIBRARY_DIR) by perceptual distance "
                                    "to a reference (a catalogue name, a capture or a model): the force "
                                    "difference along the travel in just-noticeable differences (JND), or the "
                                    "feature differences in JND for a key without its force curve; each "
                                    "listed with the differences a person would notice. Wishes: --lighter "
                                    "20%, --tactile, --bump-above 0.6 (N), --travel-below 3.5 (mm), ... Exit 1 "
                                    "when no switch meets them.")
    n.add_argument("where", nargs="*", metavar="[LIBRARY_DIR] QUERY",
                   help="the reference (and before it, optionally, a library folder)")
    n.add_argument("--like", metavar="KEY", help="the reference, e.g. 'Gateron Brown'")
    n.add_argument("-n", type=int, default=5, help="how many (default 5)")
    cc.add_wish_options(n, scaling=True)
    n.set_defaults(func=cc.cmd_nearest)
    pg = lsub.add_parser("page", help="the switch catalogue as a static site: search, filters, sorting, plots",
                         description="Write DIR/index.html for the shipped switch catalogue: a search box, kind "
                                     "and verification filters, sortable columns, each switch's force-travel "
                                     "plot (drawn now from its model and capture) and its model file.")
    pg.add_argument("--catalogue", action="store_true", required=True, help="the shipped switch catalogue")
    pg.add_argument("-o", "--output", required=True, metavar="DIR", help="the folder to write the site into")
    pg.add_argument("--name", metavar="WORDS", help="only the switches whose name holds this, e.g. gateron")
    pg.add_argument("--only", type=int, metavar="N", help="only the first N switches (of those named)")
    pg.add_argument("--jobs", type=int, default=None, help="plotting processes (default: all cores)")
    pg.set_defaults(func=_cmd_page)


#: the parameters of the library's build and page functions said as ``library build|page``'s flags
LIBRARY_FLAGS = {"jobs": "--jobs", "dask": "--dask", "only": "--only", "out": "-o", "work": "--work"}


def _cmd_build(args: argparse.Namespace) -> int:
    from hapticam.library.build import build_library

    if args.catalogue:
        return _cmd_build_catalogue(args)
    if not args.captures or not args.output:
        raise UsageError("library build needs CAPTURE... and -o LIBRARY_DIR (or --catalogue)")
    if args.work:
        raise UsageError("--work is for --catalogue builds")
    with parameters_as_flags(LIBRARY_FLAGS):
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


def _cmd_build_catalogue(args: argparse.Namespace) -> int:
    from hapticam.library.export import build_catalogue

    if args.captures:
        raise UsageError("--catalogue builds from the shipped captures: give no CAPTURE")
    with parameters_as_flags(LIBRARY_FLAGS):
        result = build_catalogue(args.output, args.work, jobs=args.jobs, dask=args.dask,
                                 retry_failed=args.retry_failed, quiet=args.quiet or args.json)
    report = result.build
    data = {"catalogue": str(result.catalogue), "work": str(result.work), "switches": result.switches,
            "verified": result.verified, "done": report.done, "failed": report.failed, "skipped": report.skipped,
            "failures": [{"capture": c, "reason": r} for c, r in report.failures]}
    if args.json:
        print(json.dumps(data))
    else:
        print(f"switch catalogue {result.catalogue}: {result.switches} switches, {result.verified} verified; "
              f"{report.done} built, {report.failed} failed, {report.skipped} already built in {result.work}")
        for cap, reason in report.failures:
            print(f"  failed: {Path(cap).name}: {reason}")
    return 0


def _cmd_page(args: argparse.Namespace) -> int:
    from hapticam.library.catalogue_page import build_catalogue_page

    if args.jobs is not None and args.jobs < 1:
        raise UsageError(f"--jobs must be >= 1, got {args.jobs}")
    with parameters_as_flags(LIBRARY_FLAGS):
        report = build_catalogue_page(args.output, name=args.name, only=args.only, jobs=args.jobs)
    print(f"{report.page}: {report.switches} switches, {report.plots} plots, {report.seconds:.1f} s")
    return 0


def _cmd_compare(args: argparse.Namespace) -> int:
    from hapticam.library.catalogue import compare, curve_distance, differences, distance

    na, fa, ca = features_and_curve_of(args.a)
    nb, fb, cb = features_and_curve_of(args.b)
    noticed = compare(fa, fb)
    along = curve_distance(ca, cb) if ca is not None and cb is not None and ca["step_m"] == cb["step_m"] else None
    if args.json:
        print(json.dumps(json_safe({"a": na, "b": nb, "reading": "A against B: each difference is A's value less B's",
                                    "distance_jnd": distance(fa, fb), "curve_distance_jnd": along,
                                    "differences_jnd": differences(fa, fb),
                                    "noticeable": noticed, "features_a": fa, "features_b": fb})))
        return 0
    print(f"{na} against {nb}: distance {distance(fa, fb):.2f} JND over the features"
          + ("" if along is None else f", {along:.2f} JND along the force curves"))
    for line in noticed or ["no difference a person would notice"]:
        print(f"  {line}")
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    from hapticam.commands.bench.library import format_table, run_bench

    from hapticam.library.build import MAX_JOBS

    if not 1 <= args.copies <= MAX_COPIES:
        raise UsageError(f"--copies must be from 1 to {MAX_COPIES}, got {args.copies}")
    if args.copies != 1 and not args.captures:
        raise UsageError("--copies is for CAPTUREs given: the catalogue's captures are built once each")
    if args.only is not None and args.only < 1:
        raise UsageError(f"--only must be >= 1, got {args.only}")
    if not 1 <= args.workers <= MAX_JOBS:
        raise UsageError(f"--workers must be from 1 to {MAX_JOBS}, got {args.workers}")
    results = run_bench(args.captures, copies=args.copies, only=args.only, workers=args.workers,
                        progress=lambda m: print(m, file=sys.stderr))
    print(json.dumps(json_safe(results)) if args.json else format_table(results))
    return 0
