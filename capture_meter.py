"""Captures read from the Open-Switch-Curve-Meter's own files.

bluepylons' Open-Switch-Curve-Meter (a stepper-driven probe, 5 um steps, an HX711 load cell; published
under CC-BY 4.0 in bluepylons/Open-Switch-Curve-Meter) leaves three kinds of files, all read here into a
:class:`~hapticam.capture.Capture` in SI units (microns and mm to m, gram-force to N at 9.80665e-3 N/gf),
one press then one release in stroke order:

* its spreadsheets (``.ods``, two layouts: :mod:`hapticam.capture_meter_sheet`);
* its first-generation firmware's serial stream and another build's CSV log (``.csv`` or ``.txt`` whose
  first line is the meter's header: :mod:`hapticam.capture_meter_log`).

Metadata
--------
``source``, ``credit``, ``license``: the six spreadsheets the author published (known by their SHA-256)
carry the same ``source`` line as the converted captures in tests/data/switch_curves and
``credit: bluepylons``; any other file names itself as the source and carries the ``credit`` the caller
gives. ``instrument`` always credits the meter's design. ``press_samples`` is the number of samples of
the press (the release follows). Where the record has an ``Actuated?`` column (the switch's electrical
contact), ``actuation_m`` and ``release_m`` are where the switch actuates on the press and releases on
the release (m, the capture's frame); a spreadsheet's own points, placed in the same frame, are kept as
``sheet_actuation_m`` and ``sheet_release_m`` and compared in the notes (they agree within one 5 um
step on the published sheets). A record without times has ``t_s`` at the nominal 10 samples a second the
converted captures assume; a log with irregular times is resampled and says so (``resampled: True``).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from hapticam.capture import Capture
from hapticam.capture_meter_log import header_kind, read_meter_log
from hapticam.capture_meter_sheet import read_meter_sheet
from hapticam.capture_meter_strokes import (NOMINAL_RATE_HZ, MeterRecord, check_one_press, compare_points,
                                            press_end, switch_points)
from hapticam.errors import CaptureError
from hapticam.fileio import open_regular

AUTHOR = "bluepylons"
LICENSE = "CC-BY 4.0"
REPOSITORY = "bluepylons/Open-Switch-Curve-Meter"
INSTRUMENT = f"Open-Switch-Curve-Meter, designed by {AUTHOR} ({REPOSITORY}, {LICENSE})"
#: the spreadsheets bluepylons published in the folder "Force curve measurements", by SHA-256
PUBLISHED = {
    "135f318b8018b8b027c52af6130a737a877482789ee781047f07f01d01416fd2": "AEBoards-Naevy-R1-5.ods",
    "f202807697ddffb37006251fea11abcbbe7861a6e175879985240fb32b3f5b68":
        "AdobauLabs-JWK-Bouquet-Sample-2-Measurement-1.ods",
    "6b80e70360746e2a81b2368d5ad437703f85bd9948367bbc2b9793f10852fc04": "Gateron-Brown.ods",
    "fde023c8b957fe7fa3bbe9217c3369360c217f3ff480ffa9abcf045556dc4ee3": "Gateron-Ink-Black.ods",
    "8d8c6b7014d63f04a0e148eb2ea4c0039f233208870998acae0d05b51279bc85":
        "Gazzew-Phoenix-In-Boba-Housing-With-MX-Clear-Spring.ods",
    "825fc68f223688e0a5c602d7835b4c009cfb8fa3d9025cb6de05fb7299a01650": "Naevy-Stem-In-Dusk-Panda.ods",
}
#: bytes read from the start of a text file to recognise a meter header
SNIFF_BYTES = 4096
_TEXT_SUFFIXES = (".csv", ".txt")


def is_meter_file(path: str | os.PathLike[str]) -> bool:
    """True for an ``.ods`` file, or a ``.csv``/``.txt`` file whose first non-blank line is one of the
    meter's headers. Reads at most ``SNIFF_BYTES``; a file that cannot be read is not a meter file (the
    ordinary reader then reports why)."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix == ".ods":
        return True
    if suffix not in _TEXT_SUFFIXES:
        return False
    try:
        fh, _size = open_regular(p, 1 << 62, error=CaptureError, what="capture file")
        with fh:
            head = fh.read(SNIFF_BYTES)
    except (CaptureError, OSError):
        return False
    for line in head.decode("utf-8", errors="replace").lstrip("\ufeff").splitlines():
        if line.strip():
            return header_kind(line) is not None
    return False


def load_meter_capture(path: str | os.PathLike[str], *, credit: str | None = None,
                       detect: bool = True) -> Capture:
    """The capture in a meter spreadsheet (``.ods``), serial stream or build log; ``credit`` names the
    measurement's author for a file other than the published ones; ``detect`` scans for force dropouts.

    Raises
    ------
    CaptureError
        With one message naming the file and the problem.
    """
    p = Path(path)
    where = os.fspath(p)
    if p.suffix.lower() == ".ods":
        record, sha = read_meter_sheet(p)
    elif p.suffix.lower() in _TEXT_SUFFIXES:
        record, sha = read_meter_log(p)
    else:
        raise CaptureError(f"{where}: not an Open-Switch-Curve-Meter file; use .ods, .csv or .txt")
    return _capture(where, record, sha, credit, detect)


def _capture(where: str, record: MeterRecord, sha: str, credit: str | None, detect: bool) -> Capture:
    """Validate a record (one press and release) and build its capture with provenance and switch points."""
    if record.x_m.size == 0:
        raise CaptureError(f"{where}: no samples")
    check_one_press(where, record.x_m)
    meta = _provenance(where, sha, credit)
    meta["capture"] = ("keyboard switch pressed by a stepper-driven probe against a load cell, press then release "
                       "in stroke order")
    meta.update(record.metadata)
    notes = list(record.notes)
    if record.t_s is None:
        t_s = np.arange(record.x_m.size) / NOMINAL_RATE_HZ
        notes.append(f"t_s assumes the meter's nominal {NOMINAL_RATE_HZ:g} samples per second (the record has no "
                     "times); x_m is probe travel into the switch; force_N is the tared force on the switch")
    else:
        t_s = record.t_s
    if record.actuated is not None:
        points, point_notes = switch_points(record.x_m, record.actuated)
        meta.update(points)
        notes += point_notes + compare_points(meta)
    meta["press_samples"] = press_end(record.x_m) + 1
    if meta.get("credit") is None:
        meta.pop("credit", None)
        notes.append(f"measured with the {INSTRUMENT}; credit the measurement's author where it is shown")
    return Capture.from_arrays(t_s, record.x_m, record.f_N, metadata=meta, notes=notes, name=where, sha256=sha,
                               detect=detect, copy=False)


def _provenance(where: str, sha: str, credit: str | None) -> dict[str, object]:
    """``source``, ``credit``, ``license`` and ``instrument`` of a file: the published spreadsheets are
    known by their SHA-256."""
    published = PUBLISHED.get(sha)
    if published is not None:
        return {"source": f"{REPOSITORY}, 'Force curve measurements/{published}', licensed {LICENSE}",
                "credit": credit or AUTHOR, "license": LICENSE, "instrument": INSTRUMENT}
    return {"source": f"{Path(where).name}, recorded with the Open-Switch-Curve-Meter", "credit": credit,
            "instrument": INSTRUMENT}
