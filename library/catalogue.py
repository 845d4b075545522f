"""The library's catalogue: ``index.json``, ``index.html``, and "feels like" by perceptual distance.

``index.json`` (schema ``hapticam-library`` version 1)::

    {"format": "hapticam-library", "schema_version": 1,
     "entries": [{"name": str, "key": str (24 hex), "source": str, "status": "ok" | "failed",
                  "reason": str (failed only), "licence": str, "capture_source": str,
                  "model": "models/NAME-KEY8.yaml",
                  "thumbnail": "thumbs/NAME-KEY8.png" (the key's force-travel plot, 660 x 480 px;
                               optional: the shipped switch catalogue has none),
                  "samples": int, "fit_percent": float, "holdout_fit_percent": float | null,
                  "verify_fit_percent": float, "verify_passed": bool, "passive": bool,
                  "features": {"preload_N", "actuation_force_N", "pretravel_m", "total_travel_m",
                               "bump_peak_N", "bump_drop_N", "hysteresis_N", "travel_stiffness_Npm",
                               "drop_steepness_Npm": float | null}}, ...]}

Entries may hold more (not checked here): the verification's ``verify_rms_N``, ``verify_max_error_N``,
``verify_failures`` (why it did not pass) and ``verify_features`` (each feature captured against rendered,
with its JND), ``curve`` (the key's force curve: ``{"step_m": float, "press_N": [float | null, ...],
"release_N": [...]}``, the forces every ``step_m`` from contact, checked here when present), and the
switch catalogue's ``kind``, ``siblings`` and ``credit``
(:mod:`~hapticam.library.export`), beside a top-level ``catalogue`` object.

Paths are relative to the library folder; the features are those of
:mod:`~hapticam.library.entry` (null: not measurable, e.g. no pre-travel without a bump).
:func:`validate_index` checks a loaded index against this; :mod:`~hapticam.library.page`
draws ``index.html`` from the same entries.

Perceptual distance between two keys: each feature's difference in units of its just-noticeable
difference, with the thresholds verification uses (:class:`~hapticam.render.verify.features.Thresholds`:
force 7 % Weber fraction with a 0.02 N floor, Jones 1989; stiffness 23 %, Jones & Hunter 1990; position
1 mm, Durlach et al. 1989), combined as the Euclidean norm over the features both keys have. A feature
with ``|difference| > 1 JND`` is one a person would notice (:func:`compare`). Differences read "A against
B": A's value less B's, so "more" says A has more.

Distance along the force curves (:func:`curve_distance`): at each point of travel from contact,
pressing and releasing, the two keys' force difference in units of the force JND there, combined as the
root mean square over the points both curves reach. It compares what a finger meets at the same depth:
a key bottoming out earlier, a bump further down, a heavier spring each count as much as the force
difference they make, and a feature the meter reads unsteadily (the steepest drop over 25 um) no more.
Alone it dilutes what happens over a short stretch (a small bump), so :func:`nearest` ranks by both
(:func:`key_distance`): the curve's distance taken as one more difference beside the features', in the
Euclidean norm, all in JND and none weighted.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from hapticam.errors import ModelValidationError, UsageError
from hapticam.bounded_json import MAX_INDEX_BYTES, parse_index
from hapticam.fileio import atomic_write_text, json_safe, read_limited
from hapticam.models.validation import as_float
from hapticam.render.verify.features import Thresholds
from hapticam.library.entry import load_entries
from hapticam.library.page import render_html

FORMAT = "hapticam-library"
SCHEMA_VERSION = 1
FEATURES = {"preload_N": "force", "actuation_force_N": "force", "bump_peak_N": "force", "bump_drop_N": "drop",
            "hysteresis_N": "gap", "travel_stiffness_Npm": "stiffness", "drop_steepness_Npm": "stiffness",
            "pretravel_m": "position", "total_travel_m": "position"}
_ENTRY_TYPES = {"name": str, "key": str, "source": str, "status": str}
_OK_TYPES = {"model": str, "samples": int, "fit_percent": (int, float),
             "verify_fit_percent": (int, float), "verify_passed": bool, "passive": bool, "features": dict}


def write_index(library: Path) -> int:
    """Rebuild ``index.json`` and ``index.html`` from the entry files (atomically); return the count."""
    entries = sorted(load_entries(library), key=lambda e: (e.get("name", ""), e.get("key", "")))
    index = {"format": FORMAT, "schema_version": SCHEMA_VERSION, "entries": entries}
    validate_index(index)
    atomic_write_text(library / "index.json", json.dumps(json_safe(index), indent=1, sort_keys=True) + "\n")
    atomic_write_text(library / "index.html", render_html(entries))
    return len(entries)


def load_index(library: str | Path) -> dict[str, Any]:
    """Read and validate ``LIBRARY/index.json``: a regular file of at most ``MAX_INDEX_BYTES`` (a link to a
    device, a FIFO or a folder is refused before any read), nested at most :data:`MAX_INDEX_DEPTH` levels
    and holding at most :data:`MAX_INDEX_VALUES` values. Every problem is one
    :class:`~hapticam.errors.UsageError` naming the file."""
    path = Path(library) / "index.json"
    if not os.path.lexists(path):
        raise UsageError(f"{library}: not a library (no index.json; build one with 'hapticam library build')")
    data = parse_index(read_limited(path, MAX_INDEX_BYTES, error=UsageError, what="library index"), str(path),
                       UsageError)
    try:
        validate_index(data)
    except UsageError as exc:
        raise UsageError(f"{path}: {exc}") from None
    return data


def validate_index(data: Any) -> None:
    """Raise :class:`~hapticam.errors.UsageError` naming the first way ``data`` departs from the schema."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise UsageError(f"library index: 'format' must be {FORMAT!r}")
    if data.get("schema_version") != SCHEMA_VERSION:
        raise UsageError(f"library index: schema_version {data.get('schema_version')!r} is not {SCHEMA_VERSION}")
    if not isinstance(data.get("entries"), list):
        raise UsageError("library index: 'entries' must be a list")
    for i, e in enumerate(data["entries"]):
        where = f"library index: entries[{i}]"
        if not isinstance(e, dict):
            raise UsageError(f"{where} is not an object")
        types = {**_ENTRY_TYPES, **(_OK_TYPES if e.get("status") == "ok" else {"reason": str})}
        for k, t in types.items():
            if k == "key" and e.get("status") != "ok" and k not in e:
                continue
            if not isinstance(e.get(k), t) or isinstance(e.get(k), bool) and t in ((int, float), int):
                raise UsageError(f"{where}.{k}: missing or not {getattr(t, '__name__', 'a number')}")
            if t == (int, float) and not _finite_number(e[k]):
                raise UsageError(f"{where}.{k}: must be a finite number")
        if e["status"] == "ok" and not isinstance(e.get("thumbnail", ""), str):
            raise UsageError(f"{where}.thumbnail: not str")
        if e["status"] == "ok":
            for name in FEATURES:
                v = e["features"].get(name)
                if not (v is None or _finite_number(v)):
                    raise UsageError(f"{where}.features.{name}: must be a finite number or null")
            if e.get("curve") is not None:
                _validate_curve(e["curve"], f"{where}.curve")


#: most points a force curve of an entry may hold per direction
MAX_CURVE_POINTS = 2000


def _validate_curve(curve: Any, where: str) -> None:
    """Raise :class:`~hapticam.errors.UsageError` unless ``curve`` is a force curve (module notes)."""
    if not isinstance(curve, dict) or not _finite_number(curve.get("step_m")) or not curve["step_m"] > 0:
        raise UsageError(f"{where}: must be an object with a positive step_m")
    for direction in ("press_N", "release_N"):
        values = curve.get(direction)
        if not isinstance(values, list) or len(values) > MAX_CURVE_POINTS:
            raise UsageError(f"{where}.{direction}: must be a list of at most {MAX_CURVE_POINTS} forces")
        if not all(v is None or _finite_number(v) for v in values):
            raise UsageError(f"{where}.{direction}: each force must be a finite number or null")


def _finite_number(v: Any) -> bool:
    """Whether ``v`` is a number (not a bool) that a float holds finitely (:func:`as_float`'s test: JSON
    integers have no bound, and one past the float range is refused, not raised on)."""
    try:
        as_float("", v)
    except ModelValidationError:
        return False
    return True


def feature_jnd(name: str, a: float, b: float, th: Thresholds) -> float:
    """The just-noticeable difference of feature ``name`` between values ``a`` and ``b`` (module notes)."""
    kind = FEATURES[name]
    level = 0.5 * (abs(a) + abs(b))
    if kind == "position":
        return th.position_jnd_m
    if kind == "stiffness":
        return max(th.stiffness_weber * level, th.force_floor_N / 2e-3)  # as verification judges it
    return th.force_jnd(level)


def differences(a: dict[str, Any], b: dict[str, Any], th: Thresholds | None = None) -> dict[str, float]:
    """Feature differences of key ``a`` against key ``b`` (``a - b``) in JND units, for the features both have."""
    th = th or Thresholds()
    out = {}
    for name in FEATURES:
        va, vb = a.get(name), b.get(name)
        if va is None or vb is None:
            continue
        out[name] = (va - vb) / feature_jnd(name, va, vb, th)
    return out


def distance(a: dict[str, Any], b: dict[str, Any], th: Thresholds | None = None) -> float:
    """Perceptual distance (JND units, Euclidean norm over the shared features)."""
    d = differences(a, b, th)
    return math.sqrt(sum(v * v for v in d.values())) if d else math.inf


def curve_distance(a: dict[str, Any], b: dict[str, Any], th: Thresholds | None = None) -> float:
    """Distance (JND units) between the force curves ``a`` and ``b`` of two keys (module notes): the root
    mean square, over the points of travel both reach, pressing and releasing, of the force difference
    over the force JND at the pair's mean force; inf when they share no point."""
    th = th or Thresholds()
    total, count = 0.0, 0
    for direction in ("press_N", "release_N"):
        for fa, fb in zip(a[direction], b[direction]):
            if fa is None or fb is None:
                continue
            total += ((fa - fb) / th.force_jnd(0.5 * (abs(fa) + abs(fb)))) ** 2
            count += 1
    return math.sqrt(total / count) if count else math.inf


def key_distance(features: dict[str, Any], curve: dict[str, Any] | None, entry: dict[str, Any]) -> float:
    """A key's distance (JND units) to a library entry (module notes): over the features
    (:func:`distance`) and, when both have their force curves sampled alike, along them
    (:func:`curve_distance`), the two combined as ``sqrt(features**2 + curve**2)``."""
    over_features = distance(features, entry["features"])
    theirs = entry.get("curve")
    if curve is None or theirs is None or theirs["step_m"] != curve["step_m"]:
        return over_features
    return math.hypot(over_features, curve_distance(curve, theirs))


def nearest(features: dict[str, Any], entries: list[dict[str, Any]], n: int = 5, exclude_key: str | None = None,
            curve: dict[str, Any] | None = None) -> list[tuple[float, dict[str, Any]]]:
    """The ``n`` library entries closest to the key of ``features`` (and force ``curve``, when given:
    :func:`key_distance`), with their distances in JND units."""
    scored = [(key_distance(features, curve, e), e) for e in entries
              if e.get("status") == "ok" and e.get("key") != exclude_key]
    return sorted(scored, key=lambda item: item[0])[:n]


def compare(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """The features a person would notice between keys ``a`` and ``b`` (``|difference| > 1 JND``), largest
    first, each read as A against B: "more" when A has more."""
    d = differences(a, b)
    noticed = sorted((name for name, v in d.items() if abs(v) > 1.0), key=lambda k: -abs(d[k]))
    return [f"{name}: {'more' if d[name] > 0 else 'less'} by {abs(d[name]):.1f} JND "
            f"({_value(name, a[name])} against {_value(name, b[name])})" for name in noticed]


#: the features that are 0 for a key without a bump (so that a bump counts in the distance)
BUMP_FEATURES = ("bump_peak_N", "bump_drop_N", "drop_steepness_Npm")


def _value(name: str, v: float) -> str:
    """A feature's value with its unit: forces in N, travels in mm, stiffnesses in N/m ("no bump" for a bump
    feature of a key without one)."""
    if name in BUMP_FEATURES and v == 0.0:
        return "no bump"
    if name.endswith("_m"):
        return f"{v * 1e3:.2f} mm"
    return f"{v:.0f} N/m" if name.endswith("_Npm") else f"{v:.3f} N"
