"""``hapticam library list|show|nearest``: the shipped switch catalogue (or any library) on the command line.

They read the catalogue's ``index.json`` (:mod:`~hapticam.library.switches`), so they work
without a build. ``nearest`` and ``list`` take a person's wishes (:mod:`~hapticam.library.search`):
``--like "Gateron Brown" --lighter 20%``, ``--tactile --bump-above 0.6``. Every listing ends with the
captures' credit.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from hapticam.errors import UsageError, parameters_as_flags
from hapticam.fileio import json_safe
from hapticam.library.search import BOUNDS, KINDS, MAX_HEAVIER_PERCENT, bound_parameter

#: the columns of ``library list``: (header, feature, scale to the shown unit, format)
LIST_COLUMNS = (("actuation N", "actuation_force_N", 1.0, "{:.3f}"), ("bump N", "bump_peak_N", 1.0, "{:.3f}"),
                ("travel mm", "total_travel_m", 1e3, "{:.2f}"), ("hyst. N", "hysteresis_N", 1.0, "{:.3f}"))


def add_wish_options(p: argparse.ArgumentParser, *, scaling: bool) -> None:
    """The options a person says what they want with (kind, bounds; lighter or heavier with a reference)."""
    p.add_argument("--library", metavar="LIBRARY_DIR", default=None,
                   help="a library folder (default: the shipped switch catalogue)")
    kinds = p.add_mutually_exclusive_group()
    for kind in KINDS:
        kinds.add_argument(f"--{kind}", dest="kind", action="store_const", const=kind, help=f"only {kind} switches")
    for option, (_, _, unit, meaning) in BOUNDS.items():
        p.add_argument(f"--{option}-above", type=float, metavar=unit.upper(), help=f"{meaning} at least this ({unit})")
        p.add_argument(f"--{option}-below", type=float, metavar=unit.upper(), help=f"{meaning} at most this ({unit})")
    if scaling:
        p.add_argument("--lighter", metavar="PERCENT", help="like the reference with its force curve this much "
                       "lower, e.g. 20%% (forces and stiffnesses scaled; travels kept)")
        p.add_argument("--heavier", metavar="PERCENT", help="like the reference with its force curve this much "
                       f"higher, e.g. 20%% (at most {MAX_HEAVIER_PERCENT:g}%%)")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")


#: the parameters of :func:`~hapticam.library.search.make_wish` said as the wish options
WISH_FLAGS = {"lighter": "--lighter", "heavier": "--heavier",
              **{bound_parameter(o): f"--{o}-above/--{o}-below" for o in BOUNDS}}


def wish_of(args: argparse.Namespace) -> Any:
    """The :class:`~hapticam.library.search.Wish` the parsed options say."""
    from hapticam.library.search import make_wish

    lighter, heavier = getattr(args, "lighter", None), getattr(args, "heavier", None)
    if lighter is not None and heavier is not None:
        raise UsageError("--lighter and --heavier: give one of them")
    bounds = {o: (getattr(args, f"{o}_above"), getattr(args, f"{o}_below")) for o in BOUNDS}
    with parameters_as_flags(WISH_FLAGS):
        return make_wish(args.kind, lighter, heavier, bounds)


def entries_of(library: str | None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The entries and the catalogue header (``{}`` for a plain library) of ``library`` or the catalogue."""
    from hapticam.library.catalogue import load_index
    from hapticam.library.switches import load_catalogue

    index = load_catalogue() if library is None else load_index(library)
    return index["entries"], index.get("catalogue") or {}


def _credit(header: dict[str, Any]) -> str:
    credit = header.get("credit") or {}
    return f"data: {credit['text']}" if isinstance(credit, dict) and credit.get("text") else ""


def cmd_list(args: argparse.Namespace) -> int:
    """``library list``: the switches (that meet the wish), with their main features and verification."""
    from hapticam.library.search import passes

    entries, header = entries_of(args.library)
    wish = wish_of(args)
    wanted = [e for e in entries if passes(e, wish) or not wish.describe() or (args.failed and e["status"] != "ok")]
    listed = [e for e in wanted if not _verified(e)] if args.failed else wanted
    if args.json:
        print(json.dumps(json_safe({"wish": wish.describe(), "count": len(listed), "of": len(entries),
                                    "credit": header.get("credit"), "switches": listed})))
        return 0
    width = max([len(e["name"]) for e in listed] + [6]) + 2
    print(f"{'switch':<{width}}{'kind':<9}" + "".join(f"{h:>13}" for h, *_ in LIST_COLUMNS) + "   verification")
    for e in listed:
        print(_list_row(e, width))
    said = f" ({wish.describe()})" if wish.describe() else ""
    print(f"{len(listed)} of {len(entries)} switches{said}")
    _print_credit(header)
    return 0


def _print_credit(header: dict[str, Any]) -> None:
    if _credit(header):
        print(_credit(header))


def _verified(e: dict[str, Any]) -> bool:
    return e.get("status") == "ok" and bool(e.get("verify_passed"))


def _list_row(e: dict[str, Any], width: int) -> str:
    from hapticam.library.entry import kind_of

    if e.get("status") != "ok":
        return f"{e['name']:<{width}}{'-':<9}" + " " * 13 * len(LIST_COLUMNS) + f"   not identified: {e.get('reason', '')}"
    f = e["features"]
    cells = []
    for _, name, scale, fmt in LIST_COLUMNS:
        blank = f.get(name) is None or (name.startswith("bump_") and kind_of(f) == "linear")
        cells.append(f"{'-' if blank else fmt.format(f[name] * scale):>13}")
    verdict = f"{'passed' if e.get('verify_passed') else 'FAILED'} (fit {e['verify_fit_percent']:.1f} %)"
    return f"{e['name']:<{width}}{kind_of(f):<9}" + "".join(cells) + f"   {verdict}"


def cmd_show(args: argparse.Namespace) -> int:
    """``library show NAME``: one switch's features, verification, siblings, credit and how to play it."""
    from hapticam.library.switches import find_entry, model_reference

    entries, header = entries_of(args.library)
    e = find_entry(entries, args.name)
    play = f"hapticam render {model_reference(e, args.library)}" if e.get("status") == "ok" else None
    if args.json:
        print(json.dumps(json_safe({**e, "play": play, "credit_text": _credit(header)})))
        return 0
    print("\n".join(show_lines(e, play)))
    _print_credit(header)
    return 0


#: ``show``'s feature lines: (label, feature, scale, unit)
SHOW_FEATURES = (("preload", "preload_N", 1.0, "N"), ("travel stiffness", "travel_stiffness_Npm", 1.0, "N/m"),
                 ("actuation force (2 mm)", "actuation_force_N", 1.0, "N"),
                 ("pre-travel (to the bump)", "pretravel_m", 1e3, "mm"), ("bump peak", "bump_peak_N", 1.0, "N"),
                 ("bump drop", "bump_drop_N", 1.0, "N"), ("bottom-out (total travel)", "total_travel_m", 1e3, "mm"),
                 ("hysteresis", "hysteresis_N", 1.0, "N"), ("steepest drop", "drop_steepness_Npm", 1.0, "N/m"))


def show_lines(e: dict[str, Any], play: str | None) -> list[str]:
    """The text of ``library show`` for entry ``e``."""
    from hapticam.library.entry import kind_of

    if e.get("status") != "ok":
        return [f"{e['name']}: not identified: {e.get('reason', '')}", f"  capture: {e.get('source', '')}"]
    f = e["features"]
    lines = [f"{e['name']} ({kind_of(f)})"]
    for label, name, scale, unit in SHOW_FEATURES:
        v = f.get(name)
        lines.append(f"  {label:<27}{'not measurable' if v is None else f'{v * scale:.3f} {unit}'}")
    held = e.get("holdout_fit_percent")
    lines.append(f"  identified: fit {e['fit_percent']:.2f} %" + ("" if held is None else f", held out {held:.2f} %")
                 + f"; {'passive' if e.get('passive') else 'NOT passive'}")
    lines.append(f"  verified (replayed through the renderer): fit {e['verify_fit_percent']:.2f} %, "
                 + ("passed" if e.get("verify_passed") else "FAILED"))
    lines += [f"    - {why}" for why in e.get("verify_failures") or []]
    lines += [f"    {_verdict_text(v)}" for v in e.get("verify_features") or [] if v.get("noticeable")]
    if e.get("siblings"):
        lines.append(f"  measured again as: {', '.join(e['siblings'])}")
    lines.append(f"  capture: {e.get('source', '')} ({e.get('capture_source', '')})")
    if play:
        lines.append(f"  play it: {play}")
    return lines


def _verdict_text(v: dict[str, Any]) -> str:
    """A noticed feature difference of the verification with its figures (lengths in mm)."""
    scale, unit = (1e3, "mm") if v.get("unit") == "m" else (1.0, v.get("unit", ""))

    def num(x: Any) -> str:
        return "-" if x is None else f"{x * scale:.3g} {unit}"
    return (f"{v['name']}: captured {num(v.get('reference'))}, rendered {num(v.get('rendered'))} "
            f"(noticeable beyond {num(v.get('threshold'))})")


#: how ``nearest`` ranks, as its JSON says
RANKING = ("by ranked_by_jnd: the distance over the features (distance_jnd) and the distance along the force "
           "curves (the root mean square of the force difference in JND over the travel, pressing and releasing) "
           "combined as sqrt(features**2 + curves**2); over the features alone for a key without its curve")


def cmd_nearest(args: argparse.Namespace) -> int:
    """``library nearest``: the switches that feel most like a reference, under the wish (module notes)."""
    from hapticam.library.catalogue import compare, distance, key_distance
    from hapticam.library.search import rank, scaled, scaled_curve

    library, query = _nearest_sources(args)
    if args.n < 1:
        raise UsageError(f"-n must be >= 1, got {args.n}")
    entries, header = entries_of(library)
    wish = wish_of(args)
    name, features, curve, own = reference_of(query, entries, library)
    target, target_curve = scaled(features, wish.force_factor), scaled_curve(curve, wish.force_factor)
    ranked, passed = rank(target, entries, wish, args.n, exclude=own, curve=target_curve)
    said = f"{name}, {wish.describe()}" if wish.describe() else name
    itself = distance(features, target)              # the reference against its wish: 0 without scaling
    itself_ranked = key_distance(target, target_curve, {"features": features, "curve": curve})
    if args.json:
        ranking = [{"name": e["name"], "kind": e.get("kind"), "distance_jnd": distance(e["features"], target),
                    "ranked_by_jnd": d, "noticeable": compare(e["features"], target)} for d, e in ranked]
        print(json.dumps(json_safe({"query": name, "wish": wish.describe(), "target_features": target,
                                    "reading": f"each key against {said}: its value less the target's",
                                    "ranking": RANKING, "reference_distance_jnd": itself,
                                    "reference_ranked_by_jnd": itself_ranked, "candidates": passed,
                                    "nearest": ranking, "credit": header.get("credit")})))
        return 0 if ranked else 1
    if not ranked:
        print(f"no switch of the {len(entries)} is {wish.describe() or 'identified'}")
        return 1
    print(f"keys that feel most like {said} ({passed} of {len(entries)} considered), nearest first; distances "
          "in just-noticeable differences (JND): over the features and along the force curves together, then "
          "over the features alone; each key against it:")
    for d, e in ranked:
        noticed = compare(e["features"], target)
        print(f"  {d:6.2f} {distance(e['features'], target):6.2f}  {e['name']:<44} "
              f"{'; '.join(noticed[:3]) or 'no difference a person would notice'}")
    if itself > 0.0 and ranked[0][0] >= itself_ranked:
        print(f"  (none is nearer to it than {name} itself, at {itself:.2f} JND over the features, "
              f"{itself_ranked:.2f} with the curves)")
    _print_credit(header)
    return 0


def _nearest_sources(args: argparse.Namespace) -> tuple[str | None, str]:
    """``(library folder or None for the catalogue, query)`` from ``[LIBRARY_DIR] QUERY``, ``--library`` and
    ``--like``."""
    words, library = list(args.where), args.library
    if len(words) > 2:
        raise UsageError(f"nearest takes [LIBRARY_DIR] QUERY, got {len(words)} words: {' '.join(words)}")
    if len(words) == 2 or (len(words) == 1 and args.like and (Path(words[0]) / "index.json").exists()):
        if library is not None:
            raise UsageError("give the library once: LIBRARY_DIR or --library")
        library = words.pop(0)
    if words and args.like:
        raise UsageError(f"give the key to be near once: {words[0]!r} or --like {args.like!r}")
    query = words[0] if words else args.like
    if not query:
        raise UsageError("nearest needs a key to be near: a catalogue name, a capture or a model (or --like NAME); "
                         "'hapticam library list' takes the same wishes without one")
    return library, query


def reference_of(spec: str, entries: list[dict[str, Any]], library: str | None
                 ) -> tuple[str, dict[str, Any], dict[str, Any] | None, str | None]:
    """``(name, features, force curve (None: not known), the entry's own name when ``spec`` names one of
    ``entries``)``."""
    from hapticam.library.reference import features_and_curve_of
    from hapticam.library.switches import SWITCH_PREFIX, find_entry, is_catalogue_name

    if (library is None and is_catalogue_name(spec)) or (library is not None and not Path(spec).exists()
                                                          and "/" not in spec and not spec.startswith(SWITCH_PREFIX)):
        e = find_entry(entries, spec)
        if e.get("status") != "ok":
            raise UsageError(f"{e['name']} was not identified ({e.get('reason', '')}): nothing to be near")
        return e["name"], e["features"], e.get("curve"), e["name"]
    name, features, curve = features_and_curve_of(spec)
    return name, features, curve, None
