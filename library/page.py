"""``index.html``: the library as a page to work with, one static file (no server, no network, no framework).

One table row per key: its features with the unit in each column header, its force-travel plot (shown
360 px wide, a click opens it full size), links to the plot and the model file, and the data's author and
licence. Columns sort on a click (numbers as numbers, blanks last), a box filters rows by name, kind,
author or licence, and every number is explained twice: in its header's tooltip and in the legend under
the table. A page may be linked already sorted or filtered: ``index.html#sort=-hysteresis&q=tactile``
(a leading ``-`` sorts descending).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any, Callable
from urllib.parse import quote

from hapticam.render.verify.features import Thresholds
from hapticam.library.entry import (ACTUATION_TRAVEL_M, ACTUATION_WINDOW_M, CLICK_STEEPNESS_NPM,
                                                  STEEPNESS_WINDOW_M, kind_of)
from hapticam.library.page_text import LEGEND_TOP, PAGE, SCRIPT, STYLE

#: a capture's ``source`` naming a repository as OWNER/NAME, the way the switch captures credit theirs
REPOSITORY = re.compile(r"^\s*([A-Za-z0-9][\w.-]*)/([\w.-]+)")
#: most key names listed per source in the credits
CREDIT_NAMES = 30
LICENCE_URLS = {"CC-BY 4.0": "https://creativecommons.org/licenses/by/4.0/",
                "CC-BY-SA 4.0": "https://creativecommons.org/licenses/by-sa/4.0/",
                "CC0": "https://creativecommons.org/publicdomain/zero/1.0/",
                "MIT": "https://opensource.org/license/mit"}


@dataclass(frozen=True)
class Column:
    """A column of the table: ``key`` names it in a link (``#sort=KEY``); ``kind`` is ``num`` (sorted as
    numbers), ``text`` or ``none`` (not sortable); ``meaning`` is its tooltip and its legend entry."""

    key: str
    label: str
    kind: str
    meaning: str
    cell: Callable[[dict[str, Any]], tuple[str, float | str | None, str]]   # (html, sort value, tooltip)


def _number(feature: str, scale: float, digits: int, blank: str) -> Callable[[dict[str, Any]], tuple]:
    """A cell of ``entry["features"][feature] * scale`` to ``digits`` decimals; ``blank`` says why it is empty."""
    def cell(e: dict[str, Any]) -> tuple[str, float | None, str]:
        v = e["features"].get(feature)
        if v is None or (feature.startswith("bump_") and kind_of(e["features"]) == "linear"):
            return "&ndash;", None, blank
        return f"{v * scale:.{digits}f}", v * scale, ""
    return cell


def _fit(e: dict[str, Any]) -> tuple[str, float, str]:
    replay = f"replayed through the renderer: {e['verify_fit_percent']:.2f} %"
    verdict = "verification passed" if e.get("verify_passed") else "verification FAILED"
    held = e.get("holdout_fit_percent")
    held_text = "" if held is None else f"; on data held out of the fit: {held:.2f} %"
    return f"{e['fit_percent']:.2f}", e["fit_percent"], f"{replay} ({verdict}){held_text}"


def credit_of(e: dict[str, Any]) -> dict[str, str]:
    """``{"author", "work", "url", "licence", "licence_url"}`` of an entry's capture ('' where unknown);
    a ``source`` of the form ``OWNER/REPOSITORY, ...`` credits OWNER and links the GitHub repository."""
    source, licence = e.get("capture_source", ""), e.get("licence", "")
    m = REPOSITORY.match(source)
    author, work = (m.group(1), m.group(2)) if m else ("", source.strip())
    url = f"https://github.com/{author}/{work}" if m else ""
    return {"author": author, "work": work, "url": url, "licence": licence,
            "licence_url": next((u for name, u in LICENCE_URLS.items() if licence.startswith(name)), "")}


def _link(text: str, url: str) -> str:
    return f'<a href="{html.escape(url)}">{html.escape(text)}</a>' if url else html.escape(text)


def _data(e: dict[str, Any]) -> tuple[str, str, str]:
    c = credit_of(e)
    who = _link(c["author"], c["url"]) if c["author"] else html.escape(c["work"] or "source not recorded")
    text = f"{who}, {_link(c['licence'], c['licence_url'])}" if c["licence"] else who
    return text, f"{c['author']} {c['licence']}".strip(), e.get("capture_source", "")


def _href(path: str) -> str:
    """A library-relative file path as an attribute value (URL-quoted, then HTML-escaped)."""
    return html.escape(quote(path))


def _plot(e: dict[str, Any]) -> tuple[str, None, str]:
    if not e.get("thumbnail"):
        return "&ndash;", None, "no plot in this library"
    src, name = _href(e["thumbnail"]), html.escape(e["name"])
    return (f'<a href="{src}"><img src="{src}" width="360" height="262" loading="lazy" '
            f'alt="force against travel of {name}"></a>'), None, "open the plot full size"


def _files(e: dict[str, Any]) -> tuple[str, None, str]:
    plot = f'<a href="{_href(e["thumbnail"])}">plot</a><br>' if e.get("thumbnail") else ""
    return f'{plot}<a href="{_href(e["model"])}">model</a>', None, ""


_MM = f"{ACTUATION_TRAVEL_M * 1e3:g} mm"
COLUMNS = (
    Column("name", "key", "text", "The capture's file name.",
           lambda e: (html.escape(e["name"]), e["name"], e.get("source", ""))),
    Column("kind", "kind", "text",
           "linear: no bump. tactile: a bump, a drop of the pressing force a finger can feel (larger than the "
           f"force JND, {Thresholds().force_weber * 100:g} % of the peak). clicky: a bump whose force falls faster "
           f"than {CLICK_STEEPNESS_NPM:g} N/m over {STEEPNESS_WINDOW_M * 1e6:g} &micro;m: a snap.",
           lambda e: (kind_of(e["features"]), kind_of(e["features"]), "")),
    Column("preload", "preload (N)", "num",
           "Pressing force just after contact: the median over the first 0.3 mm of travel. Contact is where "
           "the pressing force first reaches 20 % of its mid-travel value; every travel here is measured from it.",
           _number("preload_N", 1.0, 3, "not measurable")),
    Column("actuation", "actuation force (N)", "num",
           f"Pressing force {_MM} past contact, where MX-style switches actuate: the median of the captured "
           f"pressing curve within &plusmn;{ACTUATION_WINDOW_M * 1e3:g} mm of that point (the green cross "
           f"in the plot). Blank when the key bottoms out before {_MM}.",
           _number("actuation_force_N", 1.0, 3, f"the key bottoms out before {_MM}")),
    Column("pretravel", "pre-travel (mm)", "num",
           "Travel from contact to the top of the tactile bump (the black triangle in the plot), where tactile "
           "and clicky switches actuate. Blank for a linear key: it actuates at an electrical contact, which "
           "a force curve does not show.",
           _number("pretravel_m", 1e3, 2, "no bump: a linear key's actuation point does not show in its force")),
    Column("travel", "total travel (mm)", "num",
           "Travel from contact to bottom-out, where the stem meets the housing: the start of the final steep "
           "rise of the pressing force (slope over 10 times the travel's median and over 2 N/mm; the dotted "
           "line in the plot).",
           _number("total_travel_m", 1e3, 2, "no bottom-out in the capture")),
    Column("bump", "bump peak (N)", "num",
           "The highest pressing force before the bump's drop. Blank for a linear key.",
           _number("bump_peak_N", 1.0, 3, "no bump")),
    Column("drop", "bump drop (N)", "num",
           "How far the pressing force falls after the bump's peak: the largest fall before bottom-out, read "
           "away from the turning points of the travel. Blank for a linear key.",
           _number("bump_drop_N", 1.0, 3, "no bump")),
    Column("hysteresis", "hysteresis (N)", "num",
           "Mean gap between the pressing and the releasing force: the area between the two curves (the energy "
           "a press and release loses, J) divided by the travel both cover (m).",
           _number("hysteresis_N", 1.0, 3, "the capture has no release over the travel")),
    Column("fit", "fit (%)", "num",
           "How much of the captured force the identified model explains: 100 (1 &minus; &Sigma;(F<sub>model"
           "</sub> &minus; F)&sup2; / &Sigma;(F &minus; mean F)&sup2;) over the capture's samples; 100 is "
           "exact. A cell's tooltip gives the same measure with the model replayed through the renderer "
           "(the verification) and on data held out of the fit.", _fit),
    Column("passive", "passive", "text",
           "yes: the identified model never gives out more energy than it takes in (the passivity check), so "
           "a haptic device renders it stably. NO: it can, and needs care.",
           lambda e: ("yes" if e.get("passive") else "NO", "yes" if e.get("passive") else "NO", "")),
    Column("data", "data", "text", "Who measured the capture, and its licence.", _data),
    Column("plot", "force&ndash;travel plot", "none",
           "Force against travel past contact: pressing blue, releasing orange; dots the capture, lines the "
           "identified model replayed through the renderer. Click a plot to open it full size.", _plot),
    Column("files", "files", "none", "The plot (PNG) and the identified model (YAML: <code>hapticam render "
           "FILE</code> plays it).", _files),
)


def render_html(entries: list[dict[str, Any]]) -> str:
    """The page (module notes) for the library's ``entries`` (index.json's, in its order)."""
    head, legend = header_cells(COLUMNS), legend_items(COLUMNS)
    rows = "\n".join(_row(e) for e in entries)
    failed = sum(e.get("status") != "ok" for e in entries)
    return (PAGE.replace("{{STYLE}}", STYLE).replace("{{SCRIPT}}", SCRIPT).replace("{{HEAD}}", head)
            .replace("{{ROWS}}", rows).replace("{{N}}", str(len(entries))).replace("{{FAILED}}", str(failed))
            .replace("{{LEGEND_TOP}}", LEGEND_TOP.replace("{{JND}}", _jnd_text())).replace("{{LEGEND}}", legend)
            .replace("{{CREDITS}}", credits_html(entries)))


def _row(e: dict[str, Any]) -> str:
    name = html.escape(e.get("name", ""))
    if e.get("status") != "ok":
        search = html.escape(f"{e.get('name', '')} failed".lower())
        return (f'<tr class="failed" data-text="{search}"><td>{name}</td><td colspan="{len(COLUMNS) - 1}">'
                f"failed: {html.escape(e.get('reason', ''))}</td></tr>")
    cells, search = [], [e["name"], kind_of(e["features"])]
    for c in COLUMNS:
        content, value, tip = c.cell(e)
        attrs = f' title="{html.escape(tip)}"' if tip else ""
        if c.kind == "num":
            attrs += f' data-v="{"" if value is None else repr(float(value))}"'
        else:
            attrs += ' class="text"'
        if c.key == "data":
            search.append(str(value))
        cells.append(f"<td{attrs}>{content}</td>")
    return f'<tr data-text="{html.escape(" ".join(search).lower())}">' + "".join(cells) + "</tr>"


def credits_html(entries: list[dict[str, Any]]) -> str:
    """Who measured the captures, per source: the attribution their licences ask for."""
    groups: dict[tuple[str, ...], tuple[dict[str, str], list[str]]] = {}
    for e in entries:
        if e.get("status") == "ok":
            c = credit_of(e)
            groups.setdefault((c["author"], c["work"], c["licence"]), (c, []))[1].append(e["name"])
    items = []
    for _, (c, names) in sorted(groups.items()):
        count = f"{len(names)} key{'s' if len(names) != 1 else ''}"
        licence = _link(c["licence"] or "licence not recorded", c["licence_url"])
        if c["author"]:
            who = (f"measured by <strong>{html.escape(c['author'])}</strong> with {_link(c['work'], c['url'])}, "
                   f"shared under {licence}; the models, features and plots here are derived from these "
                   "captures (identified and replayed by hapticam)")
        else:
            who = f"{html.escape(c['work'] or 'source not recorded')}, {licence}"
        more = len(names) - CREDIT_NAMES
        listed = ", ".join(names[:CREDIT_NAMES]) + (f" and {more} more" if more > 0 else "")
        items.append(f"<li>{count} ({html.escape(listed)}): {who}.</li>")
    return "<ul>" + "\n".join(items) + "</ul>" if items else "<p>No keys yet.</p>"


def _jnd_text() -> str:
    th = Thresholds()
    return (f"{th.force_weber * 100:g} % of a force (at least {th.force_floor_N:g} N), {th.stiffness_weber * 100:g} "
            f"% of a stiffness, {th.position_jnd_m * 1e3:g} mm of travel")


def header_cells(columns: tuple[Column, ...]) -> str:
    """The table's header cells: sortable unless a column's kind is ``none``, its meaning as the tooltip."""
    return "".join(f'<th data-key="{c.key}" data-type="{c.kind}" title="{_plain(c.meaning)}"'
                   f'{" tabindex=0" if c.kind != "none" else ""}>{c.label}</th>' for c in columns)


def legend_items(columns: tuple[Column, ...]) -> str:
    """The legend's ``<dt>``/``<dd>`` pairs: each column's label and what its number means."""
    return "\n".join(f"<dt>{c.label}</dt><dd>{c.meaning}</dd>" for c in columns)


def _plain(markup: str) -> str:
    """``markup`` as tooltip text: tags dropped, entities kept, quotes escaped."""
    return re.sub(r"<[^>]+>", "", markup).replace('"', "&quot;")
