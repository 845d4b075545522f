"""One library entry: identify a capture, verify the model against it, read off what a person feels.

:func:`process_capture` is the unit of work of a library build: a top-level function of plain
arguments, so it runs the same in this process, in a local process pool or on a Dask worker. It writes
the entry's files (model, thumbnail unless told not to, entry JSON) atomically under the library folder
and returns the entry; a capture that cannot be identified or verified gives an entry with ``status:
"failed"`` and the reason, never an exception. The thumbnail (a force-travel plot) is about 40 % of an
entry's time; a build whose pictures nobody looks at (the switch catalogue's) goes without.

Features (SI units; the perceptual distance of :mod:`hapticam.library.catalogue` uses them;
positions along the travel are measured from contact, where the pressing force first reaches 20 % of
its mid-travel value):

- ``preload_N``: pressing force just after contact (median over its first 0.3 mm);
- ``actuation_force_N``: pressing force :data:`ACTUATION_TRAVEL_M` past contact (where MX-style
  switches actuate), read off the pressing curve (median over +-:data:`ACTUATION_WINDOW_M`); None
  when the curve does not reach that far or the key bottoms out before it;
- ``total_travel_m``: contact to bottom-out; ``pretravel_m``: contact to the top of the tactile bump,
  where tactile and clicky switches actuate; None without a bump (a linear key actuates at an
  electrical contact that no force curve shows);
- ``bump_peak_N``, ``bump_drop_N``: the tactile peak and the drop after it (0 without a bump);
- ``hysteresis_N``: mean gap between pressing and releasing force over the travel;
- ``travel_stiffness_Npm``: slope of the pressing force over the travel;
- ``drop_steepness_Npm``: the steepest fall of the pressing force (over :data:`STEEPNESS_WINDOW_M`):
  a click snaps (thousands of N/m), a tactile bump rolls off (hundreds), a linear key has none (0).

Beside the features, an entry keeps its force curve (:func:`force_curve`): the pressing and the releasing
force (N) every :data:`CURVE_STEP_M` from contact to :data:`CURVE_TRAVEL_M` past it, which
:func:`~hapticam.library.catalogue.curve_distance` compares keys by.
"""

from __future__ import annotations

import hashlib
import json
import traceback
from pathlib import Path
from typing import Any

import numpy as np

from hapticam.capture_columns import require_linear
from hapticam.errors import HapticError
from hapticam.fileio import atomic_write_text, json_safe

ACTUATION_TRAVEL_M = 2.0e-3
#: half-width (m) of the stretch of pressing curve the actuation force is the median of
ACTUATION_WINDOW_M = 50e-6
STEEPNESS_WINDOW_M = 25e-6
#: spacing (m) of the force curve an entry keeps, and how far past contact it goes (beyond any key's travel)
CURVE_STEP_M = 50e-6
CURVE_TRAVEL_M = 4.6e-3
#: the curve's forces are kept to this (N): a tenth of the meter's load-cell noise of about 1 mN
CURVE_RESOLUTION_N = 1e-4
#: an entry file of another schema is built again (its features were read another way)
SCHEMA = "hapticam-library-entry/4"


def entry_key(data: bytes, settings: dict[str, Any]) -> str:
    """Content hash of a capture's bytes and the build settings (hex, 24 digits)."""
    h = hashlib.sha256(data)
    h.update(json.dumps(settings, sort_keys=True).encode())
    return h.hexdigest()[:24]


def process_capture(path: str, library_dir: str, settings: dict[str, Any], thumbnail: bool = True) -> dict[str, Any]:
    """Identify and verify the capture at ``path``; write the entry (with its thumbnail unless not
    ``thumbnail``) under ``library_dir``; return it."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        return {"schema": SCHEMA, "source": str(p), "name": p.stem, "status": "failed",
                "reason": f"cannot read: {exc.strerror or exc}"}
    key = entry_key(data, settings)
    entry: dict[str, Any] = {"schema": SCHEMA, "key": key, "name": p.stem, "source": str(p), "status": "ok"}
    try:
        entry.update(_identify_and_verify(p, Path(library_dir), key, settings, thumbnail))
    except HapticError as exc:
        entry.update(status="failed", reason=str(exc))
    except Exception as exc:  # a bug must not stop the batch: record it with its type and place
        where = traceback.extract_tb(exc.__traceback__)[-1]
        entry.update(status="failed", reason=f"{type(exc).__name__}: {exc} ({Path(where.filename).name}:{where.lineno})")
    write_entry(Path(library_dir), entry)
    return entry


#: why the library refuses a rotary capture (:func:`hapticam.capture_columns.require_linear`)
LINEAR_ONLY = "the library holds keys pressed along a line"


def write_entry(library: Path, entry: dict[str, Any]) -> None:
    """Write ``entries/KEY.json`` (or ``entries/failed-NAME.json`` without a key) atomically."""
    folder = library / "entries"
    folder.mkdir(parents=True, exist_ok=True)
    name = entry.get("key") or f"failed-{entry['name']}"
    atomic_write_text(folder / f"{name}.json", json.dumps(json_safe(entry), indent=1, sort_keys=True) + "\n")


def _identify_and_verify(path: Path, library: Path, key: str, settings: dict[str, Any], thumbnail: bool = True
                         ) -> dict[str, Any]:
    from hapticam.capture_io import load_capture
    from hapticam.identify.impedance.fit import identify_impedance
    from hapticam.models.passivity import check_passivity
    from hapticam.render.verify.compare import verify
    from hapticam.library.plot import key_plot

    capture = load_capture(path)
    require_linear(capture, path.name, LINEAR_ONLY)
    fit = identify_impedance(capture, allow_active=bool(settings.get("allow_active", False)))
    model_rel = Path("models") / f"{path.stem}-{key[:8]}.yaml"
    (library / "models").mkdir(parents=True, exist_ok=True)
    fit.save(library / model_rel)
    result = verify(fit.model, capture, model_name=str(model_rel))
    features = perceptual_features(result.features.reference, result.curves_reference)
    thumb_rel = Path("thumbs") / f"{path.stem}-{key[:8]}.png"
    if thumbnail:
        (library / "thumbs").mkdir(parents=True, exist_ok=True)
        key_plot(result, features, result.features.reference.onset_m or 0.0, ACTUATION_TRAVEL_M,
                 library / thumb_rel, path.stem)
    meta = capture.metadata
    return {"model": model_rel.as_posix(), **({"thumbnail": thumb_rel.as_posix()} if thumbnail else {}),
            "licence": _licence(meta), "capture_source": str(meta.get("source", "")),
            "samples": capture.n, "fit_percent": fit.summary["fit_percent"],
            "holdout_fit_percent": (fit.summary.get("holdout") or {}).get("fit_percent"),
            "verify_fit_percent": result.fit_percent, "verify_passed": result.passed,
            "verify_rms_N": result.rms_N, "verify_max_error_N": result.max_error_N,
            "verify_failures": list(result.failures),
            "verify_features": [verdict_record(v) for v in result.features.verdicts],
            "passive": check_passivity(fit.model).passive, "features": features,
            "curve": force_curve(result.curves_reference, result.features.reference.onset_m or 0.0)}


def force_curve(curves: Any, onset_m: float) -> dict[str, Any]:
    """The pressing and releasing force (N) of ``curves`` every :data:`CURVE_STEP_M` from contact at
    ``onset_m`` (m) to :data:`CURVE_TRAVEL_M` past it, interpolated between the curves' bins; None where
    the curve has no samples on both sides (``{"step_m", "press_N", "release_N"}``), each force rounded
    to :data:`CURVE_RESOLUTION_N`."""
    at = onset_m + CURVE_STEP_M * np.arange(int(round(CURVE_TRAVEL_M / CURVE_STEP_M)) + 1)
    out: dict[str, Any] = {"step_m": CURVE_STEP_M}
    for name in ("press_N", "release_N"):
        force = np.asarray(getattr(curves, name), dtype=float)
        ok = np.isfinite(force)
        sampled = (np.interp(at, curves.x_m[ok], force[ok], left=np.nan, right=np.nan) if ok.sum() >= 2
                   else np.full(at.shape, np.nan))
        kept = np.round(sampled / CURVE_RESOLUTION_N) * CURVE_RESOLUTION_N
        out[name] = [round(float(v), 6) if np.isfinite(v) else None for v in kept]
    return out


def verdict_record(verdict: Any) -> dict[str, Any]:
    """A verification verdict of one feature as an entry keeps it: its name, the captured and the rendered
    value and the just-noticeable difference (in ``unit``), and whether a person would notice it."""
    record = {k: getattr(verdict, k) for k in ("name", "reference", "rendered", "threshold", "unit", "noticeable")}
    return {**record, "note": verdict.note} if verdict.note else record


def _licence(meta: dict[str, Any]) -> str:
    text = " ".join(str(v) for v in meta.values())
    for name in ("CC-BY-SA 4.0", "CC-BY 4.0", "CC0", "MIT"):
        if name in text:
            return name
    return str(meta.get("licence", meta.get("license", "unknown")))


def drop_steepness(curves: Any) -> float:
    """The steepest fall (N/m) of the pressing force over :data:`STEEPNESS_WINDOW_M` (0 if it never falls)."""
    x, f = curves.x_m, curves.press_N
    ok = np.isfinite(f)
    if ok.sum() < 3:
        return 0.0
    x, f = x[ok], f[ok]
    step = max(float(np.median(np.diff(x))), 1e-9)
    lag = max(1, int(round(STEEPNESS_WINDOW_M / step)))
    if f.size <= lag:
        return 0.0
    fall = (f[:-lag] - f[lag:]) / (x[lag:] - x[:-lag])          # -dF/dx over the window
    return float(max(np.max(fall), 0.0))


def perceptual_features(f: Any, curves: Any) -> dict[str, float | None]:
    """The catalogue's features (module notes) from :class:`~hapticam.render.verify.features.KeyFeatures`
    and the pressing/releasing curves they were read from."""
    onset = f.onset_m or 0.0
    bump = f.bump_peak_N is not None and f.bump_drop_N is not None
    span = f.hysteresis_span_m or 0.0
    out = {"preload_N": f.preload_N, "travel_stiffness_Npm": f.travel_stiffness_Npm,
           "bump_peak_N": f.bump_peak_N if bump else 0.0, "bump_drop_N": f.bump_drop_N if bump else 0.0,
           "pretravel_m": (f.bump_position_m - onset) if bump and f.bump_position_m is not None else None,
           "total_travel_m": (f.bottom_out_m - onset) if f.bottom_out_m is not None else None,
           "hysteresis_N": (f.hysteresis_J / span) if (f.hysteresis_J is not None and span > 0) else None,
           "drop_steepness_Npm": drop_steepness(curves) if bump else 0.0,
           "actuation_force_N": actuation_force(curves, onset, f.bottom_out_m)}
    return {k: (None if v is None or not np.isfinite(v) else float(v)) for k, v in out.items()}


def actuation_force(curves: Any, onset_m: float, bottom_out_m: float | None) -> float | None:
    """The pressing force (N) :data:`ACTUATION_TRAVEL_M` past contact at ``onset_m`` (m): the median of the
    pressing curve within +-:data:`ACTUATION_WINDOW_M` of it; None when the curve has no sample there or
    the key bottoms out (at ``bottom_out_m``) before it."""
    at = onset_m + ACTUATION_TRAVEL_M
    if bottom_out_m is not None and bottom_out_m <= at:
        return None
    near = np.isfinite(curves.press_N) & (np.abs(curves.x_m - at) <= ACTUATION_WINDOW_M)
    return float(np.median(curves.press_N[near])) if near.any() else None


#: a drop steeper than this (N/m) is a click: clicky switches snap over tens of um
CLICK_STEEPNESS_NPM = 1500.0


def kind_of(features: dict[str, Any]) -> str:
    """``"linear"``, ``"tactile"`` or ``"clicky"`` from the features (a bump; a bump that snaps)."""
    if not (features.get("bump_drop_N") or 0.0) > 0.0:
        return "linear"
    return "clicky" if (features.get("drop_steepness_Npm") or 0.0) > CLICK_STEEPNESS_NPM else "tactile"


def read_entry(path: Path) -> dict[str, Any] | None:
    """An entry file's contents, or None when it is missing, unreadable, not an entry (no ``status``
    string) or of another :data:`SCHEMA`: such a file is rewritten on build and left out of the index."""
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    is_entry = isinstance(entry, dict) and isinstance(entry.get("status"), str) and entry.get("schema") == SCHEMA
    return entry if is_entry else None


def load_entries(library: Path) -> list[dict[str, Any]]:
    """Every entry under ``library/entries`` that :func:`read_entry` reads."""
    entries = (read_entry(p) for p in sorted((library / "entries").glob("*.json")))
    return [e for e in entries if e is not None]

