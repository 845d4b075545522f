"""``hapticam library build --catalogue``: rebuild the shipped switch catalogue from its captures.

Three steps, each resumable:

1. unpack ``switches/captures.tar.xz`` into a work folder (a capture already there with the same bytes is
   left alone);
2. build a library there (:func:`~hapticam.library.build.build_library`: parallel on local
   processes or Dask; an entry already built from the same bytes and settings is skipped, so a killed
   build goes on where it stopped);
3. export the catalogue: each switch's model (``models/NAME.yaml``, the capture's credit added to its
   provenance notes) and ``index.json``, the library index with the catalogue's fields (module notes of
   :mod:`~hapticam.library.switches`): per switch its kind, verification figures and
   failures, the switches measured again (siblings) and the credit. No thumbnails are drawn (the
   shipped catalogue holds models, not pictures; ``library page --catalogue`` draws its plots). A switch
   that fails to identify or verify is listed with the reason, never dropped.

:func:`pack_captures` writes the archive itself, reproducibly (sorted members, fixed times and owners).
"""

from __future__ import annotations

import io
import json
import math
import os
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from hapticam.errors import ParameterError, UsageError
from hapticam.fileio import atomic_write_bytes, atomic_write_text, json_safe, make_output_folder
from hapticam.library.build import BuildReport, build_library
from hapticam.library.catalogue import FORMAT, SCHEMA_VERSION, validate_index
from hapticam.library.entry import kind_of
from hapticam.library.switches import (CAPTURES_ARCHIVE, CATALOGUE_DIR, CREDIT, read_readme,
                                                     unpack_captures)

#: features described for a reader of ``index.json`` (a page, a script): name -> meaning with its unit
FEATURE_NOTES = {
    "preload_N": "pressing force just after contact (N)",
    "travel_stiffness_Npm": "slope of the pressing force over the travel (N/m)",
    "actuation_force_N": "pressing force 2 mm past contact, where MX-style switches actuate (N)",
    "pretravel_m": "contact to the top of the tactile bump (m); null without a bump",
    "total_travel_m": "contact to bottom-out (m)",
    "bump_peak_N": "the tactile bump's peak force (N); 0 without a bump",
    "bump_drop_N": "how far the force falls after the bump's peak (N); 0 without a bump",
    "hysteresis_N": "mean gap between pressing and releasing force (N)",
    "drop_steepness_Npm": "steepest fall of the pressing force (N/m): a click snaps, a bump rolls off",
}
#: the figures of an entry a catalogue keeps from the library's (others, e.g. thumbnails, stay behind)
KEPT = ("name", "key", "status", "reason", "licence", "capture_source", "samples", "fit_percent",
        "holdout_fit_percent", "verify_fit_percent", "verify_passed", "verify_rms_N", "verify_max_error_N",
        "verify_failures", "verify_features", "passive", "features", "curve")


@dataclass
class CatalogueReport:
    """A catalogue build: the library build's counts and where the catalogue was written."""

    build: BuildReport
    catalogue: Path
    work: Path
    switches: int
    verified: int


def default_work_dir() -> Path:
    """Where a catalogue build keeps its unpacked captures and library (``$XDG_CACHE_HOME`` or ``~/.cache``)."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "hapticam" / "switch-catalogue"


def build_catalogue(out: str | os.PathLike[str] | None = None, work: str | os.PathLike[str] | None = None, *,
                    archive: str | os.PathLike[str] | None = None, jobs: int | None = None, dask: str | None = None,
                    retry_failed: bool = False, quiet: bool = False) -> CatalogueReport:
    """Rebuild the catalogue (module notes) into ``out`` (default: the shipped folder) from ``archive``
    (default: the shipped captures), working in ``work`` (default :func:`default_work_dir`)."""
    target = Path(out) if out is not None else CATALOGUE_DIR
    source = Path(archive) if archive is not None else CATALOGUE_DIR / CAPTURES_ARCHIVE
    if not source.is_file():
        raise UsageError(f"{source}: no captures archive to build the catalogue from")
    folder = Path(work) if work is not None else default_work_dir()
    make_output_folder("out", target / "models")                 # refused before the build, not after it
    if not os.access(target, os.W_OK):
        raise ParameterError("out", f"{target}: cannot write there (give a folder of your own)")
    make_output_folder("work", folder / "captures")
    captures = unpack_captures(folder / "captures", archive=source)
    report = build_library(captures, folder / "library", jobs=jobs, dask=dask, retry_failed=retry_failed,
                           quiet=quiet, thumbnails=False)
    index = export_catalogue(folder / "library", target, read_readme(source), {p.name for p in captures})
    ok = [e for e in index["entries"] if e["status"] == "ok"]
    return CatalogueReport(report, target, folder, len(index["entries"]), sum(bool(e["verify_passed"]) for e in ok))


def export_catalogue(library: Path, target: Path, readme: str = "", captures: set[str] | None = None
                     ) -> dict[str, Any]:
    """Write the catalogue of the library at ``library`` into ``target`` (module notes); return its index.
    ``captures``: the file names of the captures it holds (an entry of another, e.g. one the archive no
    longer has, is left out); default all."""
    from hapticam.library.catalogue import load_index
    from hapticam.library.search import sibling_groups

    entries = [e for e in load_index(library)["entries"] if captures is None or Path(e["source"]).name in captures]
    (target / "models").mkdir(parents=True, exist_ok=True)
    siblings = {name: group for group in sibling_groups([e["name"] for e in entries]) for name in group}
    shipped = []
    for e in entries:
        item = {k: e[k] for k in KEPT if k in e}
        item["source"] = f"{CAPTURES_ARCHIVE}:{Path(e['source']).name}"
        if "reason" in item:                      # said of the archive's member, not of this machine's file
            item["reason"] = item["reason"].replace(e["source"], item["source"])
        item["credit"] = f"{CREDIT['author']}, {CREDIT['work']}, {CREDIT['licence']}"
        item["siblings"] = [n for n in siblings.get(e["name"], []) if n != e["name"]]
        if e["status"] == "ok":
            item["kind"] = kind_of(e["features"])
            item["model"] = f"models/{e['name']}.yaml"
            _export_model(library / e["model"], target / item["model"])
        shipped.append(item)
    _remove_stale_models(target, {item.get("model") for item in shipped})
    index = {"format": FORMAT, "schema_version": SCHEMA_VERSION, "catalogue": _header(shipped, readme),
             "entries": shipped}
    validate_index(index)
    atomic_write_text(target / "index.json", index_text(index))
    return index


#: significant digits of the numbers in the catalogue's index (far finer than the captures resolve: 5 um
#: steps, about 1 mN of load-cell noise)
INDEX_DIGITS = 6


def rounded(value: Any, digits: int = INDEX_DIGITS) -> Any:
    """``value`` with every float inside rounded to ``digits`` significant digits (non-finite to None)."""
    if isinstance(value, float):
        return float(f"{value:.{digits}g}") if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: rounded(v, digits) for k, v in value.items()}
    if isinstance(value, list):
        return [rounded(v, digits) for v in value]
    return value


def index_text(index: dict[str, Any]) -> str:
    """The catalogue's ``index.json``: numbers to :data:`INDEX_DIGITS` digits, one line per switch (a
    rebuild's changes show switch by switch in a diff)."""
    data = rounded(json_safe(index))
    head = {k: v for k, v in data.items() if k != "entries"}
    lines = [json.dumps(e, sort_keys=True, ensure_ascii=False) for e in data["entries"]]
    text = json.dumps(head, indent=1, sort_keys=True, ensure_ascii=False)
    return text[:-2] + ',\n "entries": [\n  ' + ",\n  ".join(lines) + "\n ]\n}\n"


def _header(entries: list[dict[str, Any]], readme: str) -> dict[str, Any]:
    from hapticam._version import __version__

    ok = [e for e in entries if e["status"] == "ok"]
    return {"title": "hapticam switch catalogue", "credit": CREDIT, "captures": CAPTURES_ARCHIVE,
            "captures_readme": readme, "rebuild": "hapticam library build --catalogue",
            "hapticam_version": __version__, "switches": len(entries), "identified": len(ok),
            "verified": sum(bool(e["verify_passed"]) for e in ok), "feature_notes": FEATURE_NOTES,
            "play": "hapticam render library:CATALOGUE_DIR/NAME ('hapticam library show NAME' prints it)"}


def _export_model(source: Path, target: Path) -> None:
    """Copy a model file, the capture's credit added to its provenance notes."""
    from hapticam.models.files import load_model, save_document

    _, doc = load_model(source)
    notes = [n for n in doc.provenance.get("notes", []) if not n.startswith("capture: ")]
    doc.provenance["notes"] = notes + [f"capture: {CREDIT['text']}"]
    save_document(target, doc)


def _remove_stale_models(target: Path, kept: set[Any]) -> None:
    """Remove the model files of ``target/models`` that no entry names (a switch renamed or dropped)."""
    for path in (target / "models").glob("*.yaml"):
        if f"models/{path.name}" not in kept:
            path.unlink()


def pack_captures(folders: Iterable[str | os.PathLike[str]], archive: str | os.PathLike[str], readme: str) -> int:
    """Write every ``.csv`` of ``folders`` (not recursive; a name twice is refused) and ``readme`` as
    ``README.md`` into the xz-compressed tar ``archive``, reproducibly; return the number of captures."""
    files: dict[str, Path] = {}
    for folder in folders:
        for path in sorted(Path(folder).glob("*.csv")):
            if path.name in files:
                raise UsageError(f"{path.name}: in both {files[path.name].parent} and {path.parent}")
            files[path.name] = path
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:xz", preset=9) as tar:
        _add(tar, "README.md", readme.encode("utf-8"))
        for name in sorted(files):
            _add(tar, name, files[name].read_bytes())
    atomic_write_bytes(archive, buffer.getvalue(), error=UsageError)
    return len(files)


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.mode, info.uid, info.gid = len(data), 0, 0o644, 0, 0
    tar.addfile(info, io.BytesIO(data))
