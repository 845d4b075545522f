"""``hapticam library page --catalogue``: the shipped switch catalogue as a site, searched, filtered, sorted
and opened in a real headless Chromium."""

from __future__ import annotations

import re
import subprocess
import sys
from urllib.parse import unquote

import pytest

from hapticam.errors import UsageError
from hapticam.library.catalogue_page import build_catalogue_page, select_entries
from hapticam.library.switches import CATALOGUE_DIR, load_catalogue

from headless_chromium import Chromium, find_chromium

@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The page for the first 5 switches whose name holds "gateron" (linear, tactile and clicky ones)."""
    out = tmp_path_factory.mktemp("catalogue-site")
    first = build_catalogue_page(out, name="gateron", only=5, jobs=1)
    entries = select_entries(load_catalogue()["entries"], "gateron", 5)
    assert first.switches == 5 and {e["kind"] for e in entries} == {"linear", "tactile", "clicky"}
    return out, entries


def test_the_site_holds_every_chosen_switch_with_its_plot_model_and_credit(site):
    out, entries = site
    page = (out / "index.html").read_text()
    rows = re.findall(r'<tr data-text="[^"]*" data-kind="(\w+)" data-verified="(yes|no)">', page)
    assert [k for k, _ in rows] == [e["kind"] for e in entries]                    # the index's kinds
    assert [v == "yes" for _, v in rows] == [bool(e["verify_passed"]) for e in entries]
    links = [unquote(h) for h in re.findall(r'<a href="(models/[^"]+)"', page)]
    assert len(links) == len(entries)
    for link, e in zip(links, entries):                                          # the shipped model, copied
        assert (out / link).read_bytes() == (CATALOGUE_DIR / e["model"]).read_bytes()
    assert "bluepylons" in page.split('<table id="lib">')[0]                      # credited above the table
    assert 'href="https://creativecommons.org/licenses/by/4.0/"' in page
    assert len(list((out / "plots").glob("*.png"))) == len(entries)


def test_choosing_switches_refuses_bad_input_with_one_message():
    entries = load_catalogue()["entries"]
    with pytest.raises(UsageError):
        select_entries(entries, "no-such-switch-anywhere", None)
    with pytest.raises(UsageError) as refused:
        select_entries(entries, None, 0)
    assert getattr(refused.value, "parameter", None) == "only"
    assert [e["name"] for e in select_entries(entries, "GATERON brown", None)] == \
        [e["name"] for e in entries if "gateron-brown" in e["name"].lower()]


def test_the_command_writes_the_site_and_says_so(tmp_path):
    done = subprocess.run([sys.executable, "-m", "hapticam", "library", "page", "--catalogue", "-o",
                           str(tmp_path), "--only", "1", "--jobs", "1"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "index.html").is_file() and len(list((tmp_path / "plots").glob("*.png"))) == 1
    bad = subprocess.run([sys.executable, "-m", "hapticam", "library", "page", "--catalogue", "-o",
                          str(tmp_path), "--name", "no-such-switch-anywhere"], capture_output=True, text=True,
                         timeout=60)
    assert bad.returncode != 0 and "Traceback" not in bad.stderr and bad.stderr.strip()


@pytest.fixture(scope="module")
def browser():
    binary = find_chromium()
    if binary is None:
        pytest.skip("no chromium on this machine (CI installs Debian's: apt-get install chromium)")
    with Chromium(binary, width=1400, height=900) as b:
        yield b


def _shown(browser, key):
    """(name, the cell of column ``key``: data-v for a number, else its text) per row shown, in order."""
    return browser.evaluate(f"""(() => {{
        const col = Array.from(document.querySelectorAll('#lib th')).findIndex(h => h.dataset.key === '{key}');
        return Array.from(document.querySelectorAll('#lib tbody tr')).filter(r => !r.hidden)
          .map(r => [r.cells[0].textContent, r.cells[col].dataset.v ?? r.cells[col].textContent]); }})()""")


def test_search_filter_sort_and_open_in_a_real_browser(site, browser):
    out, entries = site
    page = (out / "index.html").resolve()
    browser.open(page.as_uri())
    widths = browser.evaluate("Promise.all(Array.from(document.images).map(i => { i.loading = 'eager';"
                              " return i.decode().then(() => i.naturalWidth); }))")
    assert widths == [660] * len(entries)                                         # every plot loads
    browser.click("#filter")
    browser.type_text(entries[1]["name"].lower())                                 # search by a name
    assert [n for n, _ in _shown(browser, "name")] == [e["name"] for e in entries
                                                       if entries[1]["name"].lower() in e["name"].lower()]
    browser.evaluate("(() => { const f = document.getElementById('filter'); f.value = '';"
                     " f.dispatchEvent(new Event('input')); })()")
    browser.click('th[data-key="hysteresis"]')                                    # sort, then reverse
    browser.click('th[data-key="hysteresis"]')
    want = sorted(entries, key=lambda e: -e["features"]["hysteresis_N"])
    assert [n for n, _ in _shown(browser, "hysteresis")] == [e["name"] for e in want]
    kind = entries[0]["kind"]
    browser.open("about:blank")                                                   # a new load, not a jump
    browser.open(f"{page.as_uri()}#kind={kind}&verified=yes")                     # the filters, from a link
    assert sorted(n for n, _ in _shown(browser, "kind")) == sorted(
        e["name"] for e in entries if e["kind"] == kind and e["verify_passed"])
    assert browser.evaluate("document.getElementById('shown').textContent") == str(len(_shown(browser, "kind")))
    browser.click("#lib tbody tr:not([hidden]) img")                              # open the entry's plot
    browser.wait_for_event("Page.loadEventFired")
    assert unquote(browser.evaluate("location.href")).endswith(f"plots/{_shown_first(entries, kind)}.png")
    assert browser.evaluate("document.images[0].naturalWidth") == 660


def _shown_first(entries, kind):
    return next(e["name"] for e in entries if e["kind"] == kind and e["verify_passed"])
