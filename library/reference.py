"""What a key feels like, from wherever it is named: the perceptual features and the force curve
(:func:`~hapticam.library.entry.force_curve`) of a model file, a capture, a library entry
(``LIBRARY_DIR/NAME``) or a switch of the shipped catalogue (``switch:NAME`` or its bare name,
:mod:`~hapticam.library.switches`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from hapticam.errors import UsageError
from hapticam.fileio import MODEL_SUFFIXES

#: what a key's comparison needs read from both sides (a distance over fewer features says too little)
CORE_FEATURES = ("actuation_force_N", "total_travel_m")


def features_of(spec: str) -> tuple[str, dict[str, Any]]:
    """``(name, perceptual features)`` of a model file, a capture, a library entry ``DIR/NAME`` or a catalogue
    switch (module notes); refused when the key's core features (:data:`CORE_FEATURES`) cannot be read."""
    name, features, _ = features_and_curve_of(spec)
    return name, features


def features_and_curve_of(spec: str) -> tuple[str, dict[str, Any], dict[str, Any] | None]:
    """``(name, perceptual features, force curve)`` of a key named as :func:`features_of` takes it (the curve
    None for an entry of a library built without curves)."""
    name, features, curve = _key_of(spec)
    missing = [k for k in CORE_FEATURES if features.get(k) is None]
    if missing:
        raise UsageError(f"{spec}: no {' or '.join(m.rsplit('_', 1)[0].replace('_', ' ') for m in missing)} can be "
                         "read from it (a whole press onto the bottom is needed to compare keys)")
    return name, features, curve


def _key_of(spec: str) -> tuple[str, dict[str, Any], dict[str, Any] | None]:
    from hapticam.identify.plot import static_curve
    from hapticam.render.verify.features import FxCurves, fx_curves
    from hapticam.library.catalogue import load_index
    from hapticam.capture_columns import require_linear
    from hapticam.library.entry import LINEAR_ONLY
    from hapticam.library.switches import find_entry, is_catalogue_name, load_catalogue

    p = Path(spec)
    if not p.exists() and (p.parent / "index.json").exists():
        for e in load_index(p.parent)["entries"]:
            if e.get("name") == p.name and e.get("status") == "ok":
                return e["name"], e["features"], e.get("curve")
        raise UsageError(f"{spec}: no entry {p.name!r} in the library {p.parent}")
    if is_catalogue_name(spec):
        e = find_entry(load_catalogue()["entries"], spec)
        if e.get("status") != "ok":
            raise UsageError(f"{e['name']} was not identified ({e.get('reason', '')}): it has no features")
        return e["name"], e["features"], e.get("curve")
    if spec.startswith(("example:", "library:")) or p.suffix.lower() in MODEL_SUFFIXES:
        from hapticam.models.files import load_model
        from hapticam.render.gate import require_tick_budget

        model, doc = load_model(spec)
        require_tick_budget(model, 1000.0, name=spec)       # static_curve steps it in 1 ms ticks, 8000 of them
        lo, hi = (doc.provenance.get("settings") or {}).get("data_range_m") or [0.0, 5e-3]
        xs = np.linspace(lo, hi, 4000)
        curves = FxCurves(xs, static_curve(model, xs, 1), static_curve(model, xs, -1))
        return p.name, *_features_and_curve(curves)
    from hapticam.capture_io import load_capture
    from hapticam.identify.preprocess import prepare

    cap = load_capture(spec)
    require_linear(cap, spec, LINEAR_ONLY)
    prep = prepare(cap)
    step = float(np.median(np.abs(np.diff(cap.x_m)))) if cap.n > 1 else 0.0
    curves = fx_curves(cap.x_m[cap.valid], cap.f_N[cap.valid], prep.direction[cap.valid].astype(int),
                       max(1e-5, 2.0 * step))
    return p.name, *_features_and_curve(curves)


def _features_and_curve(curves: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The perceptual features and the force curve read off force-position ``curves``."""
    from hapticam.render.verify.features import key_features
    from hapticam.library.entry import force_curve, perceptual_features

    found = key_features(curves)
    return perceptual_features(found, curves), force_curve(curves, found.onset_m or 0.0)
