"""The identification pipeline: capture -> segmented impedance model (seed 001 sections 3-6).

1. Derivatives, direction of travel and dropout exclusion (:mod:`hapticam.identify.preprocess`).
2. Identifiability: a dynamic term (``m`` needs acceleration, ``b`` velocity) is kept only if the capture
   excites it (:func:`excitation`); otherwise it is fixed to zero (or to the user's value), and the
   result and the model's provenance say so. Never a wild value for an unexcited term.
3. Per direction, samples sorted by position; EWLS over position with forgetting factor ``lam``
   (seed 001 Table 1, default 0.999 as in section 5) gives the parameter profile, resampled on the
   position grid (default 1 mm, section 5; ``ImpedanceFit.profiles``).
4. Segmentation of the grid (:mod:`hapticam.identify.impedance.segmentation`): the fewest constant- or
   linear-parameter segments whose excess RMS force error stays within the tolerance.
5. Segment parameters: EWLS with ``lam = 1`` restarted on each segment's samples, i.e. the segment's
   least-squares estimate (equal to the batch solution, :mod:`hapticam.identify.impedance.ewls`); it places steps
   such as a tactile click exactly at breakpoints, where the exponentially weighted profile lags by about
   ``1 / (1 - lam)`` samples. Uncertainty per segment: ``sqrt(diag(sigma^2 P))`` with ``P`` the EWLS
   covariance and ``sigma^2`` the segment's residual variance.
6. The fit of the model's force prediction along the captured path, with the renderer's kernel
   (:func:`predict_force`), by seed 003 eq. 53.

A capture that says where its switch actuates and releases (metadata ``actuation_m``, ``release_m``: an
Open-Switch-Curve-Meter record's electrical contact, :mod:`hapticam.capture_meter`) passes them on to the
model's provenance ``metrics`` in the model's frame (m; the release point moved by the backlash removed from
the releasing samples), where ``model show`` prints them and ``verify`` compares them.

The default grid is 1 mm whenever that gives at least 50 cells over the travel; shorter travel (a 4 mm
key switch) is gridded at ``travel / 200`` so its features stay resolved.
"""

from __future__ import annotations

import os
from typing import Any, Callable

import numpy as np
from hapticam.errors import IdentificationError
from hapticam.capture import Capture
from hapticam.identify.alignment import holdout_mask, remove_backlash
from hapticam.identify.impedance.ewls import ewls_fit
from hapticam.identify.metrics import fit_report
from hapticam.identify.impedance.result import DirectionFit, ImpedanceFit, stamp_passivity
from hapticam.identify.impedance.passive_fit import DirectionDesign, LinearDesign, fit_passive, with_held_ends
from hapticam.identify.preprocess import Prepared, prepare
from hapticam.identify.impedance.segment_params import constant_segments, linear_knots
from hapticam.identify.impedance.segmentation import MAX_CELLS, grid_edges, segment

TERMS = ("m", "b", "k", "F0")
_FIELDS = {"m": "m_kg", "b": "b_Nspm", "k": "k_Npm", "F0": "f0_N"}
_REGRESSOR = {"m": "acceleration", "b": "velocity"}
DEFAULT_GRID_M = 1e-3
MIN_GRID_CELLS = 50
SHORT_TRAVEL_CELLS = 200
#: a dynamic term is excited if its regressor keeps this fraction of its energy after projection on the
#: other regressors (1 / variance inflation factor) ...
MIN_EXCITATION = 1e-3
#: ... spread over the samples with at least this participation ratio (sum r^2)^2 / (N sum r^4): about
#: 0.67 for a sinusoid, 0.33 for Gaussian noise, 0.34-0.44 for seed 001's 1-4 Hz swept sine, but only
#: 0.03-0.07 for the acceleration and velocity of a quasi-static press (excited at the turnarounds only)
MIN_PARTICIPATION = 0.15
DIRECTIONS = ((1, "press"), (-1, "release"))
#: the capture loader's remarks that identification passes on (hapticam.capture_io)
LOADER_REMARKS = ("ignored ", "no time column", "columns separated by")
#: a held-out fit this many percentage points below the training fit drops a dynamic term
HOLDOUT_DROP_PERCENT = 5.0


# -- prediction with the renderer's kernel ----------------------------------------------------------------
def predict_force(model: Any, x_m: np.ndarray, v_mps: np.ndarray, a_mps2: np.ndarray, dt_s: float = 1e-3
                  ) -> np.ndarray:
    """Force (N) the compiled ``model`` predicts along a path, sample by sample, state carried along.

    Runs :func:`hapticam.models.kernels.model_force`, the renderer's kernel, so the direction held in the
    dead band is exactly the renderer's.
    """
    from hapticam.identify.impedance._predict import predict_loop

    compiled = model.compile()
    state = compiled.reset_state()
    x = np.ascontiguousarray(x_m, dtype=np.float64)
    v = np.ascontiguousarray(v_mps, dtype=np.float64)
    a = np.ascontiguousarray(a_mps2, dtype=np.float64)
    if not (x.shape == v.shape == a.shape and x.ndim == 1):
        raise IdentificationError("predict_force: x, v and a must be 1-D arrays of one length")
    out = np.empty(x.size)
    predict_loop(compiled.params, state, x, v, a, float(dt_s), out)
    return out


# -- identifiability --------------------------------------------------------------------------------------
def excitation(column: np.ndarray, others: np.ndarray) -> tuple[float, float]:
    """``(energy fraction, participation ratio)`` of ``column`` after least-squares projection on ``others``.

    The energy fraction ``sum r^2 / sum c^2`` is 1 / the variance inflation factor: near 0 when the
    column is (nearly) a combination of the others, e.g. ``a = -w^2 (x - c)`` for a single-frequency
    sine, or a constant velocity beside the offset column. The participation ratio
    ``(sum r^2)^2 / (N sum r^4)`` is about 0.5 for a persistent signal and about ``k / N`` when only
    ``k`` samples carry it (the turnaround of a quasi-static press).
    """
    c = np.asarray(column, dtype=np.float64)
    energy = float(np.dot(c, c))
    if not energy > 0:
        return 0.0, 0.0
    coef, *_ = np.linalg.lstsq(others, c, rcond=None)
    r = c - others @ coef
    rr = float(np.dot(r, r))
    r4 = float(np.sum(r ** 4))
    pr = rr * rr / (c.size * r4) if r4 > 0 else 0.0
    return rr / energy, pr


# -- the pipeline -----------------------------------------------------------------------------------------
def choose_grid(span_m: float, grid_m: float | None) -> float:
    """The grid (m): ``grid_m`` if given, else 1 mm, or ``span / 200`` if 1 mm gives < 50 cells."""
    if grid_m is not None:
        g = float(grid_m)
        if not (np.isfinite(g) and g > 0):
            raise IdentificationError(f"grid must be a positive length, got {grid_m!r}")
        return g
    if span_m / DEFAULT_GRID_M >= MIN_GRID_CELLS:
        return DEFAULT_GRID_M
    return span_m / SHORT_TRAVEL_CELLS


def _check_fixed(fixed: dict[str, float] | None) -> dict[str, float]:
    out: dict[str, float] = {}
    for key, val in (fixed or {}).items():
        if key not in ("m", "b"):
            raise IdentificationError(f"only m and b can be fixed, got {key!r}")
        v = float(val)
        if not np.isfinite(v):
            raise IdentificationError(f"fixed {key} must be finite, got {val!r}")
        out[key] = v
    return out


def identify_impedance(capture: Capture, forgetting: float = 0.999, grid_m: float | None = None,
                       tolerance: float | None = None, max_segments: int = 60,
                       fixed: dict[str, float] | None = None, *, interpolation: str = "constant",
                       penalty: float | None = None, cutoff_hz: float | None = None,
                       dead_band_mps: float | None = None, allow_active: bool = False,
                       holdout: bool = True, correct_backlash: bool = True,
                       progress: Callable[[float, str], None] | None = None) -> ImpedanceFit:
    """Identify a :class:`~hapticam.models.impedance.SegmentedImpedance` from a capture (module notes).

    Parameters
    ----------
    capture : Capture
        Probe capture (dropouts already detected by the loader).
    forgetting : float
        EWLS forgetting factor ``lam`` in (0, 1] (seed 001 section 5: 0.999).
    grid_m : float, optional
        Position grid (m); default 1 mm, or travel / 200 for travel under 50 mm.
    tolerance : float, optional
        Largest excess RMS force error (N) the segmentation may add over the grid fit; default
        :func:`hapticam.identify.impedance.segmentation.default_tolerance` (unless ``penalty`` is given).
    max_segments : int
        Most segments per direction.
    fixed : dict, optional
        ``{"m": kg, "b": N s/m}``: terms to fix instead of estimating.
    interpolation : {"constant", "linear"}
        Segment parameters constant, or linear between breakpoints (continuous).
    penalty : float, optional
        Segmentation penalty (N^2 per segment) used instead of a tolerance.
    cutoff_hz, dead_band_mps : float, optional
        Override the derivative filter cutoff and the direction dead band.
    allow_active : bool
        Skip the passivity constraints (:mod:`hapticam.identify.impedance.passive_fit`, applied to either
        interpolation otherwise); the model is then marked active (``active: true``: its tables may hold
        negative m and b) and may generate energy on a device, and the result says so.
    holdout : bool
        Validate the model structure on held-out samples (the last cycle, or interleaved blocks of a
        single-stroke capture: :func:`hapticam.identify.alignment.holdout_mask`): when the fit without
        them predicts them far worse than it fits (:data:`HOLDOUT_DROP_PERCENT`), the dynamic terms are
        dropped (m first, then b) and the notes say so.
    correct_backlash : bool
        Estimate the probe's backlash from the two directions' contact points and remove it
        (:func:`hapticam.identify.alignment.remove_backlash`); the amount is noted and stored.
    progress : callable, optional
        Called as ``progress(fraction, stage)``.
    """
    settings = _check_settings(forgetting, interpolation, max_segments, tolerance, fixed, holdout)
    _check_force_varies(capture)
    report = progress or (lambda frac, stage: None)
    report(0.0, "preprocess")
    prep = prepare(capture, cutoff_hz=cutoff_hz, dead_band_mps=dead_band_mps)
    notes: list[str] = []
    grid = _grid(prep, grid_m, notes)                     # on the recorded travel, before any correction
    backlash = remove_backlash(prep) if correct_backlash else 0.0
    _capture_notes(capture, backlash, notes)
    identifiable, fixed_terms = _identifiability(prep, settings["fixed"], notes)
    opts = dict(lam=float(forgetting), grid=grid, tolerance=tolerance, penalty=penalty,
                max_segments=int(max_segments), interpolation=interpolation, allow_active=bool(allow_active))
    validation = None
    if holdout:
        report(0.1, "hold-out check")
        fixed_terms, validation = _holdout_check(prep, fixed_terms, opts, notes)
    report(0.4, "fit")
    model, dirs, passive = _fit_model(prep, fixed_terms, opts, notes)
    report(0.9, "predict")
    pred = predict_force(model, prep.x, prep.v, prep.a, dt_s=float(np.median(np.diff(prep.t))))
    metrics = {**_metrics(prep, pred, dirs), "dropouts": int(capture.dropouts.size),
               "passivity_cost_percent": passive["cost_percent"] if passive else None,
               "holdout_fit_percent": validation["fit_percent"] if validation else None,
               **switch_points_in_model_frame(capture, backlash)}
    settings = _settings_record(opts, prep, fixed_terms, identifiable, settings["holdout"], backlash,
                                forgetting=float(forgetting), tolerance_N=tolerance)
    provenance = _provenance(capture, settings, metrics, notes, allow_active)
    verdict = stamp_passivity(provenance, model)
    uncertainty = {name: _uncertainty_block(d) for name, d in dirs.items()}
    summary = {**_summary(capture, dirs, settings["identifiable"], metrics, settings, notes), "holdout": validation,
               "passive": verdict.passive, "passivity_issues": list(verdict.issues)}
    report(1.0, "done")
    return ImpedanceFit(model=model, provenance=provenance, uncertainty=uncertainty, summary=summary,
                        identifiable=settings["identifiable"], fixed=fixed_terms, directions=dirs, prepared=prep,
                        prediction_N=pred, notes=notes)


def _check_force_varies(capture: Capture) -> None:
    """Refuse a capture whose force never changes: no curve to fit (an all-zero force fitted 100 %)."""
    spread = capture.constant_force_spread()
    if spread is not None:
        raise IdentificationError(f"{capture.name}: the force never changes ({spread:g} N over the capture): "
                                  "there is no force curve to identify")


def _provenance(capture: Capture, settings: dict[str, Any], metrics: dict[str, Any], notes: list[str],
                allow_active: bool) -> dict[str, Any]:
    """The model file's provenance block: the method, the settings, the source capture and the metrics."""
    from hapticam.models.files import make_provenance

    return make_provenance("ewls-segmented" + ("" if allow_active else "-passive"), settings=settings,
                           source_name=os.path.basename(capture.name), source_sha256=capture.sha256,
                           metrics=metrics, notes=notes)


def switch_points_in_model_frame(capture: Capture, backlash_m: float) -> dict[str, float]:
    """The capture's actuation and release points (metadata ``actuation_m``, ``release_m``, m) where the
    model has them: the release point moved by ``backlash_m``, as the releasing samples were. Points that
    are not finite numbers are left out."""
    points: dict[str, float] = {}
    for key, shift in (("actuation_m", 0.0), ("release_m", backlash_m)):
        value = capture.metadata.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and np.isfinite(value):
            points[key] = round(float(value) + shift, 9)
    return points


def _capture_notes(capture: Capture, backlash: float, notes: list[str]) -> None:
    """What was done to the capture before fitting: columns ignored, backlash removed, dropouts excluded."""
    notes.extend(n for n in capture.notes if n.startswith(LOADER_REMARKS))
    if backlash:
        notes.append(f"probe backlash {1e3 * backlash:.3g} mm (difference of the two directions' contact "
                     "points) removed from the releasing samples")
    if capture.dropouts.size:
        notes.append(f"{capture.dropouts.size} force dropout(s) detected and excluded "
                     f"(samples {', '.join(str(int(i)) for i in capture.dropouts[:10])}"
                     f"{', ...' if capture.dropouts.size > 10 else ''})")


def _settings_record(opts: dict[str, Any], prep: Prepared, fixed_terms: dict[str, float],
                     identifiable: dict[str, bool], holdout: bool, backlash: float, **extra: Any) -> dict[str, Any]:
    """The settings a model file records in its provenance."""
    return {**extra, "grid_m": opts["grid"], "penalty": opts["penalty"], "max_segments": opts["max_segments"],
            "interpolation": opts["interpolation"],
            "cutoff_hz": None if not np.isfinite(prep.cutoff_hz) else float(prep.cutoff_hz),
            "dead_band_mps": prep.dead_band_mps, "fixed": {k: float(v) for k, v in fixed_terms.items()},
            "identifiable": {t: identifiable[t] and t not in fixed_terms for t in identifiable},
            "passivity_constraints": not opts["allow_active"], "holdout": holdout, "backlash_m": backlash,
            "data_range_m": [float(prep.x[prep.valid].min()), float(prep.x[prep.valid].max())]}


def _check_settings(forgetting, interpolation, max_segments, tolerance, fixed, holdout) -> dict[str, Any]:
    if not (0.0 < float(forgetting) <= 1.0):
        raise IdentificationError(f"forgetting factor must be in (0, 1], got {forgetting}")
    if interpolation not in ("constant", "linear"):
        raise IdentificationError(f"interpolation must be 'constant' or 'linear', got {interpolation!r}")
    if int(max_segments) < 1:
        raise IdentificationError(f"max_segments must be >= 1, got {max_segments}")
    if tolerance is not None and not (np.isfinite(tolerance) and tolerance >= 0):
        raise IdentificationError(f"tolerance must be a non-negative force (N), got {tolerance}")
    return {"fixed": _check_fixed(fixed), "holdout": bool(holdout)}


def _identifiability(prep: Prepared, user_fixed: dict[str, float], notes: list[str]
                     ) -> tuple[dict[str, bool], dict[str, float]]:
    """Which dynamic terms the capture excites (module notes, step 2); the others are fixed."""
    regress = _regressors(prep)
    present = {name: idx for name, idx in ((n, prep.group(d)) for d, n in DIRECTIONS) if idx.size >= 20}
    if not present:
        raise IdentificationError(f"{prep.name}: fewer than 20 valid samples in either direction of travel")
    identifiable = {"k": True, "F0": True}
    fixed_terms = dict(user_fixed)
    for term, col in (("m", 0), ("b", 1)):
        if term in user_fixed:
            identifiable[term] = False
            notes.append(f"{term} fixed by the user to {user_fixed[term]:g}")
            continue
        worst = (1.0, 1.0)
        for idx in present.values():
            others = regress[idx][:, [j for j in range(4) if j != col]]
            e, pr = excitation(regress[idx, col], others)
            worst = (min(worst[0], e), min(worst[1], pr))
        ok = worst[0] >= MIN_EXCITATION and worst[1] >= MIN_PARTICIPATION
        identifiable[term] = ok
        if not ok:
            fixed_terms[term] = 0.0
            why = (f"the {_REGRESSOR[term]} is (nearly) a combination of the other regressors "
                   f"(energy fraction {worst[0]:.2g})" if worst[0] < MIN_EXCITATION else
                   f"the {_REGRESSOR[term]} is excited only in a few samples (participation {worst[1]:.2g})")
            notes.append(f"{term} is not identifiable from this capture ({why}); fixed to 0")
    return identifiable, fixed_terms


def _regressors(prep: Prepared) -> np.ndarray:
    return np.column_stack([prep.a, prep.v, prep.x, np.ones(prep.x.size)])   # [a, v, x, 1] (seed 001 eq. 7)


def _grid(prep: Prepared, grid_m: float | None, notes: list[str]) -> float:
    x_valid = prep.x[prep.valid]
    span = float(x_valid.max() - x_valid.min())
    grid = choose_grid(span, grid_m)
    if span / grid > MAX_CELLS:
        raise IdentificationError(f"a {1e3 * grid:.3g} mm grid gives {span / grid:.0f} cells over the "
                                  f"{1e3 * span:.3g} mm travel, more than {MAX_CELLS}; use a coarser grid")
    if grid_m is None and grid != DEFAULT_GRID_M:
        notes.append(f"travel {1e3 * span:.3g} mm is under {MIN_GRID_CELLS} mm: grid refined from 1 mm to "
                     f"{1e3 * grid:.3g} mm")
    return grid


def _metrics(prep: Prepared, pred: np.ndarray, dirs: dict[str, "DirectionFit"]) -> dict[str, Any]:
    metrics = fit_report(prep.f[prep.valid], pred[prep.valid])
    for d, name in DIRECTIONS:
        if name in dirs:
            sel = prep.group(d)
            metrics[f"{name}_fit_percent"] = fit_report(prep.f[sel], pred[sel])["fit_percent"]
    return metrics


def _fit_model(prep: Prepared, fixed_terms: dict[str, float], opts: dict[str, Any], notes: list[str]
               ) -> tuple[Any, dict[str, "DirectionFit"], dict[str, Any] | None]:
    """Segment each direction, fit the parameters (jointly and passive unless ``allow_active``), build
    the model. Returns the model, the per-direction fits and the passivity-cost summary (or None)."""
    from hapticam.models.impedance import ImpedanceTable, SegmentedImpedance

    regress = _regressors(prep)
    present = {name: idx for name, idx in ((n, prep.group(d)) for d, n in DIRECTIONS) if idx.size >= 20}
    if not present:
        raise IdentificationError(f"{prep.name}: fewer than 20 valid samples in either direction of travel")
    free = [j for j, t in enumerate(TERMS) if t not in fixed_terms]
    fixed_vec = np.array([fixed_terms.get(t, 0.0) for t in TERMS])
    dirs: dict[str, DirectionFit] = {}
    designs: dict[str, DirectionDesign] = {}
    for name, idx in present.items():
        dirs[name], designs[name] = _fit_direction(name, prep, regress, idx, free, fixed_vec, opts)
    for name in ("press", "release"):
        if name not in present:
            notes.append(f"no {name} samples: the {'release' if name == 'press' else 'press'} table serves "
                         f"both directions")
    passive = None
    hold = opts["grid"]
    if opts["allow_active"]:
        tables = {n: with_held_ends(designs[n].bp, d.theta, hold) for n, d in dirs.items()}
        notes.append("fitted without passivity constraints (allow_active): the model may generate energy")
    else:
        pf = fit_passive(designs, hold)
        tables = {n: (pf.breakpoints[n], pf.theta[n]) for n in dirs}
        sst = float(np.sum((prep.f[prep.valid] - prep.f[prep.valid].mean()) ** 2))
        cost = 100.0 * pf.rss_increase_N2 / sst if sst > 0 else 0.0
        passive = {"active_constraints": pf.active_constraints, "cost_percent": cost}
        if pf.active_constraints:
            notes.append(f"passivity constraints bind at {pf.active_constraints} point(s); they cost "
                         f"{cost:.3g} % of fit (seed 003 eq. 53)")
    for name, d in dirs.items():
        d.theta = tables[name][1]
        d.std = np.vstack([d.std[:1], d.std, d.std[-1:]])    # end segments copy m, b, F0 of their neighbour
        d.std[0, 2] = d.std[-1, 2] = 0.0                        # ... and hold k = 0 exactly
        d.residual_rms_N = np.concatenate([[0.0], d.residual_rms_N, [0.0]])
        d.segment_samples = np.concatenate([[0], d.segment_samples, [0]])
    built = {n: ImpedanceTable(bp, th[:, 0], th[:, 1], th[:, 2], th[:, 3], where=n) for n, (bp, th) in tables.items()}
    press = built.get("press", built.get("release"))
    release = built.get("release") if "press" in built else None
    model = SegmentedImpedance(press, release, interpolation=opts["interpolation"],
                               dead_band_mps=prep.dead_band_mps, active=opts["allow_active"])
    return model, dirs, passive


def _holdout_check(prep: Prepared, fixed_terms: dict[str, float], opts: dict[str, Any], notes: list[str]
                   ) -> tuple[dict[str, float], dict[str, Any]]:
    """Fit without the held-out samples (:func:`hapticam.identify.alignment.holdout_mask`), predict them;
    drop m, then b, while the held-out fit stays far below the training fit. Returns the fixed terms to
    use and the validation summary."""
    held, how = holdout_mask(prep)
    train, test = prep.masked(~held, "training part"), prep.masked(held, "held-out part")
    fixed_now = dict(fixed_terms)
    result: dict[str, Any] = {}
    for drop in [None] + [t for t in ("m", "b") if t not in fixed_terms]:
        if drop is not None:
            fixed_now[drop] = 0.0
        try:
            model, _d, _p = _fit_model(train, fixed_now, opts, [])
        except IdentificationError as exc:
            return fixed_terms, {"fit_percent": None, "note": f"hold-out check skipped: {exc}"}
        fit_tr = _fit_of(model, train)
        fit_te = _fit_of(model, test)
        result = {"held_out": how, "training_fit_percent": fit_tr, "fit_percent": fit_te,
                  "fixed": sorted(t for t in fixed_now if t in ("m", "b"))}
        if fit_te >= fit_tr - HOLDOUT_DROP_PERCENT:
            break
        if drop is None and all(t in fixed_now for t in ("m", "b")):
            break
    if result["fit_percent"] < result["training_fit_percent"] - HOLDOUT_DROP_PERCENT:
        notes.append(f"held-out fit {result['fit_percent']:.2f} % is far below the training fit "
                     f"{result['training_fit_percent']:.2f} % even with m and b fixed: this excitation does not "
                     "support the model; probe with a slow triangle (quasi-static) or a 1-4 Hz swept sine")
    dropped = [t for t in ("m", "b") if t in fixed_now and t not in fixed_terms]
    for t in dropped:
        notes.append(f"{t} fixed to 0: with it the held-out part of the capture was predicted far worse than "
                     "the fitted part (the excitation does not support it)")
    return fixed_now, result


def _fit_of(model: Any, prep: Prepared) -> float:
    pred = predict_force(model, prep.x, prep.v, prep.a, dt_s=float(np.median(np.diff(prep.t))))
    return float(fit_report(prep.f[prep.valid], pred[prep.valid])["fit_percent"])


def _fit_direction(name, prep, regress, idx, free, fixed_vec, opts):
    """One direction: EWLS profile, segmentation, unconstrained segment parameters and their std."""
    lam, grid, interpolation = opts["lam"], opts["grid"], opts["interpolation"]
    x = prep.x[idx]
    phi_all = regress[idx]
    y = prep.f[idx] - phi_all @ fixed_vec  # F - (fixed terms)
    phi = np.ascontiguousarray(phi_all[:, free])
    x_col, one_col = free.index(2), free.index(3)
    edges = grid_edges(float(x.min()), float(x.max()), grid)
    centers = 0.5 * (edges[:-1] + edges[1:])
    # EWLS profile over position (seed 001 Table 1), recorded at the sample nearest each cell centre
    rec = np.unique(np.clip(np.searchsorted(x, centers), 0, x.size - 1))
    prof = ewls_fit(phi, y, lam, record_idx=rec)
    p_theta = np.tile(fixed_vec, (rec.size, 1))
    p_std = np.zeros((rec.size, 4))
    p_theta[:, free] = prof.theta_path[rec]
    p_std[:, free] = np.sqrt(np.maximum(prof.sigma2 * np.diagonal(prof.P_recorded, axis1=1, axis2=2), 0.0))
    seg = segment(x, phi, y, edges, x_col=x_col, one_col=one_col, mode=interpolation,
                  tolerance_N=opts["tolerance"], penalty=opts["penalty"], max_segments=opts["max_segments"])
    bp = seg.breakpoints_m.copy()
    bp[0], bp[-1] = x.min(), x.max()          # the grid's end cells hold no data beyond the samples
    if interpolation == "constant":
        theta, std, rms, counts = constant_segments(x, phi, y, bp, free, fixed_vec, x_col, one_col)
    else:
        theta, std, rms, counts = linear_knots(x, phi, y, bp, free, fixed_vec, x_col, one_col,
                                                prof.theta_path, lam)
    fit = DirectionFit(name=name, samples=int(idx.size), segmentation=seg, theta=theta, std=std,
                       residual_rms_N=rms, segment_samples=counts, profile_x_m=x[rec], profile_theta=p_theta,
                       profile_std=p_std, tolerance_N=seg.tolerance_N,
                       windup_steps=prof.windup_steps)
    if interpolation == "constant":
        design = DirectionDesign(bp=bp, x=x, phi=phi_all, y=y, free=list(free), fixed=fixed_vec)
    else:                          # the passive fit keeps the unconstrained knots' mean stiffness (gauge)
        design = LinearDesign(bp=bp, x=x, phi=phi_all, y=y, free=list(free), fixed=fixed_vec,
                              k_gauge_Npm=float(np.mean(theta[:, 2])), hold_m=grid)
    return fit, design


def _uncertainty_block(d: DirectionFit) -> dict[str, Any]:
    out: dict[str, Any] = {_FIELDS[t]: d.std[:, j].tolist() for j, t in enumerate(TERMS)}
    out["residual_rms_N"] = d.residual_rms_N.tolist()
    out["samples"] = [int(c) for c in d.segment_samples]
    return out


def _summary(capture, dirs, identifiable, metrics, settings, notes) -> dict[str, Any]:
    per_dir = {}
    for name, d in dirs.items():
        ranges = {_FIELDS[t]: [float(d.theta[:, j].min()), float(d.theta[:, j].max())] for j, t in enumerate(TERMS)}
        per_dir[name] = {"segments": d.segmentation.n_segments, "samples": d.samples,
                         "x_range_m": [float(d.segmentation.breakpoints_m[0]),
                                       float(d.segmentation.breakpoints_m[-1])],
                         "parameter_ranges": ranges,
                         "fit_percent": metrics.get(f"{name}_fit_percent"),
                         "tolerance_N": d.tolerance_N, "tolerance_met": d.segmentation.tolerance_met,
                         "excess_rms_N": d.segmentation.excess_rms_N()}
    return {"capture": capture.name, "samples": capture.n, "dropouts": int(capture.dropouts.size),
            "fit_percent": metrics["fit_percent"], "nrmse_fit_percent": metrics["nrmse_fit_percent"],
            "rms_N": metrics["rms_N"], "max_N": metrics["max_N"],
            "passivity_cost_percent": metrics.get("passivity_cost_percent"),
            "segments": {name: d["segments"] for name, d in per_dir.items()},
            "identifiable": dict(identifiable), "directions": per_dir,
            "settings": {k: v for k, v in settings.items() if k not in ("identifiable",)}, "notes": list(notes)}


def validate_model(model: Any, capture: Capture, *, cutoff_hz: float | None = None) -> dict[str, float]:
    """Fit report (seed 003 eq. 53, RMS and max error in N) of ``model``'s force along ``capture``'s path.

    Derivatives come from the capture as in identification; dropouts are excluded from the metrics.
    """
    prep = prepare(capture, cutoff_hz=cutoff_hz, dead_band_mps=0.0)
    pred = predict_force(model, prep.x, prep.v, prep.a, dt_s=float(np.median(np.diff(prep.t))))
    return fit_report(prep.f[prep.valid], pred[prep.valid])
