"""The fixed text of ``index.html`` (:mod:`hapticam.library.page` fills in the rows): the page's
frame, its style, the legend's introduction, and its script (sort on a header click, filter as you type,
``#sort=KEY&q=WORDS`` in the address)."""

PAGE = r"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>hapticam key library</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>{{STYLE}}</style></head><body>
<h1>hapticam key library</h1>
<p>{{N}} keys ({{FAILED}} failed), each identified from a force capture and verified by replaying it.
Click a column header to sort (again to reverse); hover over a header for what its number means, or read
the <a href="#legend">legend</a>. Units are in the column headers.</p>
<p><label for="filter">Filter</label> <input id="filter" type="search" size="40"
 placeholder="name, kind, author or licence, e.g. tactile gateron" autocomplete="off">
 <span id="count"><span id="shown">{{N}}</span> of {{N}} shown</span></p>
<table id="lib"><thead><tr>{{HEAD}}</tr></thead><tbody>
{{ROWS}}
</tbody></table>
<h2 id="legend">What the numbers mean</h2>
{{LEGEND_TOP}}
<dl>
{{LEGEND}}
</dl>
<h2 id="credits">Data and credits</h2>
{{CREDITS}}
<script>{{SCRIPT}}</script></body></html>
"""

STYLE = r"""
body { font: 14px/1.4 sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; }
th, td { border: 1px solid #bbb; padding: 3px 6px; text-align: right; vertical-align: middle; }
th { background: #eee; position: sticky; top: 0; z-index: 1; }
th[data-type="num"], th[data-type="text"] { cursor: pointer; }
th[aria-sort="ascending"]::after { content: " \25B2"; }
th[aria-sort="descending"]::after { content: " \25BC"; }
td.text, th[data-type="text"], th[data-type="none"], td[colspan] { text-align: left; }
td a { white-space: nowrap; }
td img { display: block; }
tr.failed td { color: #D55E00; }
dt { font-weight: bold; margin-top: 0.6em; }
dd { margin-left: 1.5em; max-width: 60em; }
#count { color: #555; margin-left: 1em; }
"""

LEGEND_TOP = r"""<p>Every number is read off the capture's force&ndash;travel curves: the force binned by position,
separately while the key goes down (pressing) and comes back up (releasing). Travels are measured from
contact and forces are those on the key, in newtons; a blank cell is a feature the key does not have.
The plots show the same curves, so each column can be checked against its plot. <code>hapticam library
nearest</code> and <code>compare</code> weigh these features in just-noticeable differences: {{JND}}.</p>"""

SCRIPT = r"""
const table = document.getElementById('lib');
const body = table.tBodies[0];
const heads = Array.from(table.tHead.rows[0].cells);
const filter = document.getElementById('filter');

// Sort the rows by the column named KEY (numbers as numbers); blank cells and failed keys stay last.
function sortBy(key, descending) {
  const col = heads.findIndex(h => h.dataset.key === key);
  if (col < 0 || heads[col].dataset.type === 'none') return;
  const numeric = heads[col].dataset.type === 'num';
  const value = row => {
    const cell = row.classList.contains('failed') ? null : row.cells[col];
    if (!cell) return null;
    if (!numeric) return cell.textContent.trim();
    return cell.dataset.v === '' ? null : Number(cell.dataset.v);
  };
  const sign = descending ? -1 : 1;
  const rows = Array.from(body.rows);
  rows.sort((a, b) => {
    const x = value(a), y = value(b);
    if (x === null || y === null) return (x === null) - (y === null);
    return sign * (numeric ? x - y : x.localeCompare(y));
  });
  rows.forEach(r => body.appendChild(r));
  heads.forEach(h => h.removeAttribute('aria-sort'));
  heads[col].setAttribute('aria-sort', descending ? 'descending' : 'ascending');
  remember();
}

// Show only the rows whose name, kind, author or licence hold every word typed.
function applyFilter() {
  const words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
  let shown = 0;
  for (const row of body.rows) {
    row.hidden = !words.every(w => row.dataset.text.includes(w));
    shown += row.hidden ? 0 : 1;
  }
  document.getElementById('shown').textContent = shown;
  remember();
}

// The view in the address, so a link opens the page sorted and filtered alike.
function remember() {
  const sorted = heads.find(h => h.hasAttribute('aria-sort'));
  const parts = [];
  if (sorted) parts.push('sort=' + (sorted.getAttribute('aria-sort') === 'descending' ? '-' : '') + sorted.dataset.key);
  if (filter.value) parts.push('q=' + encodeURIComponent(filter.value));
  try {
    history.replaceState(null, '', location.href.split('#')[0] + (parts.length ? '#' + parts.join('&') : ''));
  } catch (e) { /* a browser that keeps a local page's address fixed: the view still changes */ }
}

for (const h of heads) {
  if (h.dataset.type === 'none') continue;
  const toggle = () => sortBy(h.dataset.key, h.getAttribute('aria-sort') === 'ascending');
  h.addEventListener('click', toggle);
  h.addEventListener('keydown', ev => { if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); toggle(); } });
}
filter.addEventListener('input', applyFilter);

const wanted = new URLSearchParams(location.hash.slice(1));
if (wanted.get('q')) { filter.value = wanted.get('q'); applyFilter(); }
const sortKey = wanted.get('sort');
if (sortKey) sortBy(sortKey.replace(/^-/, ''), sortKey.startsWith('-'));
"""
