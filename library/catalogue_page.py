"""``hapticam library page --catalogue -o DIR``: the shipped switch catalogue as a static site to browse.

``DIR/index.html`` lists the switches of :mod:`~hapticam.library.switches` with the columns of
:mod:`~hapticam.library.page` (units in their headers, sortable on a click, a search box)
plus filters by kind (linear, tactile, clicky) and by verification (passed or not). Each row shows the
switch's force-travel plot (:func:`~hapticam.library.plot.key_plot`: pressing and releasing,
the capture as dots and the model replayed through the renderer as lines, travel in mm, force in N) and
links its model file, copied to ``DIR/models/``. The plots are drawn when the page is built, from the
shipped models and captures, in parallel processes. A link may carry the view:
``index.html#sort=-hysteresis&q=gateron&kind=tactile&verified=yes``. The page credits the captures'
author (:data:`~hapticam.library.switches.CREDIT`).
"""

from __future__ import annotations

import html
import os
import shutil
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hapticam.errors import ParameterError, UsageError
from hapticam.fileio import atomic_write_text
from hapticam.library.entry import ACTUATION_TRAVEL_M, kind_of
from hapticam.library.page import COLUMNS, Column, credits_html, header_cells, legend_items
from hapticam.library.page_text import SCRIPT, STYLE

PLOTS = "plots"
MODELS = "models"


def _verified(e: dict[str, Any]) -> bool:
    return e.get("status") == "ok" and bool(e.get("verify_passed"))


VERIFIED_COLUMN = Column(
    "verified", "verified", "text",
    "yes: the model, replayed through the renderer along the capture's own travel, reproduces the captured "
    "force without a difference a person would notice. NO: it does not (the cell's tooltip says why).",
    lambda e: ("yes" if _verified(e) else "NO", "yes" if _verified(e) else "NO",
               "; ".join(e.get("verify_failures") or [])))
CATALOGUE_COLUMNS = COLUMNS[:2] + (VERIFIED_COLUMN,) + COLUMNS[2:]

CATALOGUE_PAGE = r"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{TITLE}}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>{{STYLE}}
#choices select { margin-right: 1em; }
.credit { background: #f4f4f4; border-left: 4px solid #0072B2; padding: 0.4em 0.8em; max-width: 70em; }
</style></head><body>
<h1>{{TITLE}}</h1>
<p class="credit" id="credit">{{CREDIT}}</p>
<p>{{N}} switches ({{VERIFIED}} verified). Click a column header to sort (again to reverse); hover over a
header for what its number means, or read the <a href="#legend">legend</a>. Click a plot to open it full
size; <em>model</em> is the identified model (<code>hapticam render FILE</code> plays it).</p>
<p id="choices"><label for="filter">Search</label> <input id="filter" type="search" size="36"
 placeholder="name, kind or author, e.g. gateron brown" autocomplete="off">
 <label for="kind">kind</label> <select id="kind"><option value="">any</option><option>linear</option>
 <option>tactile</option><option>clicky</option></select>
 <label for="verified">verified</label> <select id="verified"><option value="">either</option>
 <option value="yes">yes</option><option value="no">no</option></select>
 <span id="count"><span id="shown">{{N}}</span> of {{N}} shown</span></p>
<table id="lib"><thead><tr>{{HEAD}}</tr></thead><tbody>
{{ROWS}}
</tbody></table>
<h2 id="legend">What the columns mean</h2>
<dl>
{{LEGEND}}
</dl>
<h2 id="credits">Data and credits</h2>
{{CREDITS}}
<script>{{SCRIPT}}</script></body></html>
"""

#: read before the shared script rewrites the address; then every change refilters by words, kind and verdict
CHOICES_FIRST = r"""const chosen = new URLSearchParams(location.hash.slice(1));
"""
CHOICES_SCRIPT = r"""
const kindBox = document.getElementById('kind'), verifiedBox = document.getElementById('verified');
function applyChoices() {
  const words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
  let shown = 0;
  for (const row of body.rows) {
    const keep = words.every(w => row.dataset.text.includes(w))
      && (!kindBox.value || row.dataset.kind === kindBox.value)
      && (!verifiedBox.value || row.dataset.verified === verifiedBox.value);
    row.hidden = !keep;
    shown += keep ? 1 : 0;
  }
  document.getElementById('shown').textContent = shown;
}
for (const box of [kindBox, verifiedBox]) box.addEventListener('change', applyChoices);
filter.addEventListener('input', applyChoices);
if (chosen.get('kind')) kindBox.value = chosen.get('kind');
if (chosen.get('verified')) verifiedBox.value = chosen.get('verified');
applyChoices();
"""


@dataclass(frozen=True)
class PageReport:
    """What a page build wrote: the page, how many switches, plots drawn, and the wall time (s)."""

    page: Path
    switches: int
    plots: int
    seconds: float


def select_entries(entries: list[dict[str, Any]], name: str | None, only: int | None) -> list[dict[str, Any]]:
    """The entries whose name holds ``name`` (case, spaces, hyphens ignored), the first ``only`` of them."""
    from hapticam.library.switches import key_of

    if only is not None and only < 1:
        raise ParameterError("only", f"must be >= 1, got {only}")
    chosen = [e for e in entries if not name or key_of(name) in key_of(str(e.get("name", "")))]
    if not chosen:
        raise UsageError(f"no switch of the catalogue has {name!r} in its name")
    return chosen[:only] if only is not None else chosen


def build_catalogue_page(out_dir: str | os.PathLike[str], *, name: str | None = None, only: int | None = None,
                         jobs: int | None = None, folder: str | os.PathLike[str] | None = None) -> PageReport:
    """Write the site (module notes) for the catalogue at ``folder`` (default: the shipped one) into
    ``out_dir``; ``name``/``only`` choose the switches (:func:`select_entries`); ``jobs``: plotting processes
    (default: the machine's cores)."""
    from hapticam.library.switches import catalogue_dir, load_catalogue, unpack_captures

    started = time.monotonic()
    source = catalogue_dir(folder)
    index = load_catalogue(folder)
    entries = [dict(e) for e in select_entries(index["entries"], name, only)]
    out = Path(out_dir)
    (out / MODELS).mkdir(parents=True, exist_ok=True)
    (out / PLOTS).mkdir(parents=True, exist_ok=True)
    ok = [e for e in entries if e.get("status") == "ok"]
    for e in ok:
        e["model"] = f"{MODELS}/{Path(e['model']).name}"
        shutil.copyfile(source / MODELS / Path(e["model"]).name, out / e["model"])
    with tempfile.TemporaryDirectory(prefix="catalogue-captures-") as work:
        stems = {_capture_stem(e) for e in ok}
        captures = {p.stem: p for p in unpack_captures(work, stems, source / "captures.tar.xz")}
        tasks = [(str(captures[_capture_stem(e)]), str(out / e["model"]), e["features"],
                  str(out / PLOTS / f"{e['name']}.png"), e["name"]) for e in ok if _capture_stem(e) in captures]
        workers = max(1, min(jobs or os.cpu_count() or 1, len(tasks) or 1))
        if workers == 1:
            drawn = [_draw(*t) for t in tasks]
        else:
            with ProcessPoolExecutor(max_workers=workers) as pool:
                drawn = list(pool.map(_draw, *zip(*tasks)))
    plotted = {Path(p).stem for p in drawn if p}
    for e in ok:
        if e["name"] in plotted:
            e["thumbnail"] = f"{PLOTS}/{e['name']}.png"
    page = out / "index.html"
    atomic_write_text(page, catalogue_html(entries, index.get("catalogue") or {}))
    return PageReport(page, len(entries), len(plotted), time.monotonic() - started)


def _capture_stem(e: dict[str, Any]) -> str:
    """The capture file's stem of an entry (``source`` is ``captures.tar.xz:NAME.csv``)."""
    return Path(str(e.get("source", "")).split(":", 1)[-1]).stem or str(e["name"])


def _draw(capture_path: str, model_path: str, features: dict[str, Any], png_path: str, title: str) -> str:
    """Replay the model along the capture and save its force-travel plot at ``png_path``; '' on failure."""
    from hapticam.capture_io import load_capture
    from hapticam.errors import HapticError
    from hapticam.models.files import load_model_only
    from hapticam.render.verify.compare import verify
    from hapticam.library.plot import key_plot

    try:
        result = verify(load_model_only(model_path), load_capture(capture_path), model_name=Path(model_path).name)
        key_plot(result, features, result.features.reference.onset_m or 0.0, ACTUATION_TRAVEL_M, Path(png_path),
                 title)
    except HapticError:
        return ""
    return png_path


def catalogue_html(entries: list[dict[str, Any]], header: dict[str, Any]) -> str:
    """The page (module notes) for the chosen ``entries``; ``header`` is the index's ``catalogue`` object."""
    from hapticam.library.switches import CREDIT

    credit = header.get("credit") if isinstance(header.get("credit"), dict) else CREDIT
    credit_html = (f'Force curves measured by <strong>{html.escape(credit["author"])}</strong> with '
                   f'<a href="{html.escape(credit["url"])}">{html.escape(credit["work"])}</a>, shared under '
                   f'<a href="{html.escape(credit["licence_url"])}">{html.escape(credit["licence"])}</a>; the '
                   "models, features and plots here are derived from them by hapticam.")
    head, legend = header_cells(CATALOGUE_COLUMNS), legend_items(CATALOGUE_COLUMNS)
    title = html.escape(str(header.get("title") or "Switch catalogue"))
    fills = {"TITLE": title, "STYLE": STYLE, "CREDIT": credit_html, "N": str(len(entries)),
             "VERIFIED": str(sum(_verified(e) for e in entries)), "HEAD": head,
             "ROWS": "\n".join(_row(e) for e in entries), "LEGEND": legend, "CREDITS": credits_html(entries),
             "SCRIPT": CHOICES_FIRST + SCRIPT + CHOICES_SCRIPT}
    text = CATALOGUE_PAGE
    for key, value in fills.items():
        text = text.replace("{{" + key + "}}", value)
    return text


def _row(e: dict[str, Any]) -> str:
    """One table row: cells of :data:`CATALOGUE_COLUMNS`, with the words the search box matches, the kind
    and the verdict the filters read."""
    name = html.escape(str(e.get("name", "")))
    if e.get("status") != "ok":
        text = html.escape(f"{e.get('name', '')} failed".lower())
        return (f'<tr class="failed" data-text="{text}" data-kind="" data-verified="no"><td>{name}</td>'
                f'<td colspan="{len(CATALOGUE_COLUMNS) - 1}">not identified: {html.escape(e.get("reason", ""))}</td></tr>')
    kind = kind_of(e["features"])
    cells, words = [], [e["name"], kind]
    for c in CATALOGUE_COLUMNS:
        content, value, tip = c.cell(e)
        attrs = f' title="{html.escape(tip)}"' if tip else ""
        attrs += (f' data-v="{"" if value is None else repr(float(value))}"' if c.kind == "num" else ' class="text"')
        if c.key == "data":
            words.append(str(value))
        cells.append(f"<td{attrs}>{content}</td>")
    return (f'<tr data-text="{html.escape(" ".join(words).lower())}" data-kind="{kind}" '
            f'data-verified="{"yes" if _verified(e) else "no"}">' + "".join(cells) + "</tr>")
