"""The library's catalogue: ``index.json``, ``index.html``, and "feels like" by perceptual distance.

``index.json`` (schema ``hapticam-library`` version 1)::

    {"format": "hapticam-library", "schema_version": 1,
     "entries": [{"name": str, "key": str (24 hex), "source": str, "status": "ok" | "failed",
                  "reason": str (failed only), "licence": str, "capture_source": str,
                  "model": "models/NAME-KEY8.yaml", "thumbnail": "thumbs/NAME-KEY8.png",
                  "samples": int, "fit_percent": float, "holdout_fit_percent": float | null,
                  "verify_fit_percent": float, "verify_passed": bool, "passive": bool,
                  "features": {"preload_N", "actuation_force_N", "pretravel_m", "total_travel_m",
                               "bump_peak_N", "bump_drop_N", "hysteresis_N", "travel_stiffness_Npm",
                               "drop_steepness_Npm": float | null}}, ...]}

Paths are relative to the library folder. :func:`validate_index` checks a loaded index against this.

Perceptual distance between two keys: each feature's difference in units of its just-noticeable
difference, with the thresholds verification uses (:class:`~hapticam.render.verify.features.Thresholds`:
force 7 % Weber fraction with a 0.02 N floor, Jones 1989; stiffness 23 %, Jones & Hunter 1990; position
1 mm, Durlach et al. 1989), combined as the Euclidean norm. A feature with ``|difference| > 1 JND`` is one
a person would notice (:func:`compare`).
"""

from __future__ import annotations

import html
import json
import math
from pathlib import Path
from typing import Any

from hapticam.errors import ModelValidationError, UsageError
from hapticam.fileio import atomic_write_text, json_safe
from hapticam.models.validation import as_float
from hapticam.render.verify.features import Thresholds
from hapticam.render.verify.library.entry import load_entries

FORMAT = "hapticam-library"
SCHEMA_VERSION = 1
FEATURES = {"preload_N": "force", "actuation_force_N": "force", "bump_peak_N": "force", "bump_drop_N": "drop",
            "hysteresis_N": "gap", "travel_stiffness_Npm": "stiffness", "drop_steepness_Npm": "stiffness",
            "pretravel_m": "position", "total_travel_m": "position"}
_ENTRY_TYPES = {"name": str, "key": str, "source": str, "status": str}
_OK_TYPES = {"model": str, "thumbnail": str, "samples": int, "fit_percent": (int, float),
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
    """Read and validate ``LIBRARY/index.json``."""
    path = Path(library) / "index.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"{library}: not a library (no index.json; build one with 'hapticam library build')") from None
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path}: unreadable library index ({exc})") from exc
    validate_index(data)
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
        if e["status"] == "ok":
            for name in FEATURES:
                v = e["features"].get(name)
                if not (v is None or _finite_number(v)):
                    raise UsageError(f"{where}.features.{name}: must be a finite number or null")


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
    """Feature differences ``b - a`` in JND units, for the features both keys have."""
    th = th or Thresholds()
    out = {}
    for name in FEATURES:
        va, vb = a.get(name), b.get(name)
        if va is None or vb is None:
            continue
        out[name] = (vb - va) / feature_jnd(name, va, vb, th)
    return out


def distance(a: dict[str, Any], b: dict[str, Any], th: Thresholds | None = None) -> float:
    """Perceptual distance (JND units, Euclidean norm over the shared features)."""
    d = differences(a, b, th)
    return math.sqrt(sum(v * v for v in d.values())) if d else math.inf


def nearest(features: dict[str, Any], entries: list[dict[str, Any]], n: int = 5, exclude_key: str | None = None
            ) -> list[tuple[float, dict[str, Any]]]:
    """The ``n`` library entries closest to ``features`` in perceptual distance."""
    scored = [(distance(features, e["features"]), e) for e in entries
              if e.get("status") == "ok" and e.get("key") != exclude_key]
    return sorted(scored, key=lambda item: item[0])[:n]


def compare(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """The features a person would notice between two keys (``|difference| > 1 JND``), largest first."""
    d = differences(a, b)
    noticed = sorted((name for name, v in d.items() if abs(v) > 1.0), key=lambda k: -abs(d[k]))
    return [f"{name}: {'more' if d[name] > 0 else 'less'} by {abs(d[name]):.1f} JND" for name in noticed]


def render_html(entries: list[dict[str, Any]]) -> str:
    """A static page: one sortable table row per entry, with its F-x thumbnail (no server, no network)."""
    cols = [("name", "key"), ("kind", "text"), ("actuation force (N)", "num"), ("pre-travel (mm)", "num"),
            ("total travel (mm)", "num"), ("bump peak (N)", "num"), ("bump drop (N)", "num"),
            ("hysteresis (N)", "num"), ("fit %", "num"), ("passive", "text"), ("licence", "text"),
            ("F-x", "none")]
    head = "".join(f'<th data-type="{t}" onclick="sortBy({i})">{html.escape(n)}</th>' for i, (n, t) in enumerate(cols))
    rows = []
    for e in entries:
        if e.get("status") != "ok":
            rows.append(f"<tr class=failed><td>{html.escape(e.get('name', ''))}</td>"
                        f"<td colspan={len(cols) - 1}>failed: {html.escape(e.get('reason', ''))}</td></tr>")
            continue
        f = e["features"]
        cells = [html.escape(e["name"]), kind_of(f),
                 _num(f.get("actuation_force_N")), _num(f.get("pretravel_m"), 1e3), _num(f.get("total_travel_m"), 1e3),
                 _num(f.get("bump_peak_N")), _num(f.get("bump_drop_N")), _num(f.get("hysteresis_N")),
                 _num(e.get("fit_percent")), "yes" if e.get("passive") else "NO", html.escape(e.get("licence", "")),
                 f'<img src="{html.escape(e["thumbnail"])}" alt="F-x of {html.escape(e["name"])}">']
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return _PAGE.replace("{{HEAD}}", head).replace("{{ROWS}}", "\n".join(rows)).replace("{{N}}", str(len(entries)))


#: a drop steeper than this (N/m) is a click: clicky switches snap over tens of um
CLICK_STEEPNESS_NPM = 1500.0


def kind_of(features: dict[str, Any]) -> str:
    """``"linear"``, ``"tactile"`` or ``"clicky"`` from the features (a bump; a bump that snaps)."""
    if not (features.get("bump_drop_N") or 0.0) > 0.0:
        return "linear"
    return "clicky" if (features.get("drop_steepness_Npm") or 0.0) > CLICK_STEEPNESS_NPM else "tactile"


def _num(v: Any, scale: float = 1.0) -> str:
    return "" if v is None else f"{v * scale:.3f}"


_PAGE = r"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>hapticam key library</title>
<style>
body { font: 14px sans-serif; margin: 1.5em; }
table { border-collapse: collapse; }
th, td { border: 1px solid #bbb; padding: 3px 6px; text-align: right; }
th { background: #eee; cursor: pointer; } td:first-child, th:first-child { text-align: left; }
tr.failed td { color: #D55E00; text-align: left; }
</style></head><body>
<h1>hapticam key library</h1>
<p>{{N}} entries. Click a column header to sort (or open the page as <code>index.html#sort=COLUMN</code>). Models are in <code>models/</code>; features in SI units as
labelled; "fit %" is the identified model's fit to its capture (seed 003 eq. 53).</p>
<table id="lib"><thead><tr>{{HEAD}}</tr></thead><tbody>
{{ROWS}}
</tbody></table>
<script>
let dir = {};
function sortBy(col) {
  const body = document.querySelector('#lib tbody');
  const type = document.querySelectorAll('#lib th')[col].dataset.type;
  if (type === 'none') return;
  dir[col] = -(dir[col] || -1);
  const rows = Array.from(body.rows);
  rows.sort((a, b) => {
    const x = a.cells[col] ? a.cells[col].textContent : '', y = b.cells[col] ? b.cells[col].textContent : '';
    const nx = parseFloat(x), ny = parseFloat(y);
    const c = (type === 'num' && !isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);
    return dir[col] * c;
  });
  rows.forEach(r => body.appendChild(r));
}
// a link may open the page sorted: index.html#sort=COLUMN (descending: #sort=-COLUMN)
const m = /sort=(-?)(\d+)/.exec(location.hash);
if (m) { if (m[1]) { dir[+m[2]] = 1; } sortBy(+m[2]); }
</script></body></html>
"""
