"""``fit_contact``: a contact record (time, probe position, force) to a ``contact`` model with uncertainty.

Steps (seed 004 chapters 2-3):

1. contact onset from the force spike and the end of contact (:func:`~.onset.detect_onset`);
2. optional series-compliance removal (a probe or rig of known stiffness, sec. 3.5, applied per sample);
3. the datum: the spike's (thesis) or fitted (default), with its effect on k reported (sec. 3.6.1);
4. the linear law ``F = k x + b x'`` (eq. 2.1) by one of the nine estimators or all of them side by side,
   or the Hunt-Crossley law ``F = k d^n (1 + b' d')`` by nonlinear least squares;
5. the damping verdict: b is *identifiable* when the global least-squares standard error is at most
   ``b_rel_se_max`` (10 %) of the estimate; otherwise it is reported as not identifiable (with its standard
   error) and the model gets ``b = 0`` rather than an invented value;
6. what the capture supports (:mod:`~.support`): a wall inside the captured travel, standard errors that
   are finite; each estimate's status says which it lacks, and no model is made from a wall outside the data.

Force is taken positive into the wall: with ``side = -1`` (a wall below) both position and force are
mirrored (docs/architecture.md, section Conventions: sign).

References
----------
seed 004: Agar, chapters 2-3.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

import hapticam.identify.contact.recursive as recursive
from hapticam.errors import IdentificationError
from hapticam.identify.contact.batch import gls
from hapticam.identify.contact.mechanics import remove_series_compliance, series_stiffness
from hapticam.identify.contact.onset import DatumEffect, Onset, datum_effect, detect_onset
from hapticam.identify.contact.power_law import PowerLawFit, fit_power_law
from hapticam.identify.contact.result import EstimateResult, as_signal, sample_times
from hapticam.identify.contact.support import mark_statuses, wall_outside_statement
from hapticam.identify.estimators import CONTACT_ESTIMATORS
from hapticam.models.contact import Contact

#: the built-in estimators of the linear law (:data:`hapticam.identify.estimators.CONTACT_ESTIMATORS` adds
#: those of other distributions); ``estimator="all"`` runs these side by side
ESTIMATORS = tuple(CONTACT_ESTIMATORS.builtins)
LAWS = ("linear", "hunt-crossley")


@dataclass
class ContactSettings:
    """Estimator settings; defaults are the thesis's (seed 004 sec. 3.2.5) where it gives them.

    ``p_max`` bounds the RLS/ILS covariance diagonal (1e3 P0) so that holds without motion cannot wind it up
    to overflow; ``onset_*`` go to :func:`~.onset.detect_onset`; ``datum`` is ``"fit"`` or ``"spike"``; ``n_freq``, ``f_max_Hz``, ``freqs_Hz`` and ``derivative``
    go to the frequency-domain estimators.
    """

    k0_Npm: float = recursive.K0_NPM
    b0_Nspm: float = recursive.B0_NSPM
    m0_kg: float = 0.0
    lam: float = recursive.LAMBDA
    p0: float = recursive.P0
    p_max: float | None = 1e3 * recursive.P0
    gamma: Any = recursive.GAMMA
    kalman_r_N2: float | None = None
    kalman_q: Any = 0.0
    freqs_Hz: Any = None
    n_freq: int = 30
    f_max_Hz: float | None = None
    derivative: str = "velocity"
    onset_threshold_N: float | None = None
    onset_baseline_samples: int | None = None
    datum: str = "fit"
    b_rel_se_max: float = 0.1


@dataclass
class ContactFit:
    """The fitted contact: the chosen estimate, its uncertainty, every estimator run, and diagnostics.

    ``k_Npm`` is N/m (N/m^n for Hunt-Crossley), ``b_Nspm`` N s/m (the model's ``k b'`` for Hunt-Crossley);
    ``x_c_m`` the wall position in the record's coordinates; ``t_s`` the contact samples' times.
    """

    law: str
    estimator: str
    side: int
    x_c_m: float
    k_Npm: float
    b_Nspm: float
    n: float
    k_se: float
    b_se: float
    b_identifiable: bool
    b_verdict: str
    onset: Onset
    t_s: np.ndarray
    results: dict[str, EstimateResult] = field(default_factory=dict)
    datum: DatumEffect | None = None
    power_law: PowerLawFit | None = None
    probe_stiffness_Npm: float | None = None
    k_uncorrected_Npm: float | None = None
    notes: list[str] = field(default_factory=list)
    unsupported: str | None = None

    def to_model(self) -> Contact:
        """The ``contact`` model; unidentifiable (or negative) damping is written as 0. Refused when the
        capture does not support a wall (``unsupported`` says why)."""
        if self.unsupported:
            raise IdentificationError(self.unsupported)
        if not (np.isfinite(self.k_Npm) and self.k_Npm > 0):
            raise IdentificationError(f"the fitted stiffness {self.k_Npm:.4g} is not positive: no model")
        b = max(self.b_Nspm, 0.0) if self.b_identifiable else 0.0
        n = 1.0 if self.law == "linear" else self.n
        return Contact(law=self.law, x_c_m=self.x_c_m, k_Npm=self.k_Npm, b_Nspm=b, n=n, side=self.side)

    def force_at(self, x_m: float) -> float:
        """The fitted static force (N, into the wall) at the position ``x_m`` (m)."""
        return self.k_Npm * max(self.side * (x_m - self.x_c_m), 0.0) ** self.n

    def table(self) -> str:
        """The estimators side by side (as the thesis's Tables 3-2, 3-3)."""
        lines = [f"{'estimator':<9}{'k (N/m)':>14}{'se k':>11}{'b (N s/m)':>13}{'se b':>11}{'iter':>6}  status",
                 "-" * 72]
        for name, r in self.results.items():
            se = r.se if r.se is not None else np.full(2, np.nan)
            status = r.status if r.k_Npm > 0 and r.b_Nspm >= 0 else "not physical (k <= 0 or b < 0)"
            lines.append(f"{name:<9}{r.k_Npm:>14.6g}{se[0]:>11.3g}{r.b_Nspm:>13.5g}{se[1]:>11.3g}"
                         f"{r.iterations:>6}  {status}")
        lines.append(f"damping: {self.b_verdict}")
        return "\n".join(lines)


def _check(t_s: Any, x_m: Any, f_N: Any, v_mps: Any, estimator: str, law: str, side: int,
           probe: float | None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    x = as_signal("x_m", x_m)
    f = as_signal("f_N", f_N, x.size)
    t, dt = sample_times(t_s, x.size)
    if estimator != "all" and not CONTACT_ESTIMATORS.knows(estimator):
        raise IdentificationError(f"estimator: expected one of {', '.join(CONTACT_ESTIMATORS.names())} or all, "
                                  f"got {estimator!r}")
    if law not in LAWS:
        raise IdentificationError(f"law: expected linear or hunt-crossley, got {law!r}")
    if law == "hunt-crossley" and estimator != "gls":
        raise IdentificationError("the nine estimators fit the linear law; hunt-crossley is fitted by nonlinear "
                                  "least squares (leave estimator at its default)")
    if isinstance(side, bool) or side not in (1, -1):
        raise IdentificationError(f"side: expected +1 or -1, got {side!r}")
    if probe is not None and not (np.isfinite(probe) and probe > 0):
        raise IdentificationError(f"probe_stiffness_Npm must be positive, got {probe!r}")
    v = np.gradient(x, dt) if v_mps is None else as_signal("v_mps", v_mps, x.size)
    return t, x, f, v, dt


def damping_verdict(res: EstimateResult, rel_se_max: float = 0.1) -> tuple[bool, str]:
    """Is b identified by this record? From a result with a covariance (normally the global LS)."""
    se = res.se
    b = res.b_Nspm
    if se is None or not (np.isfinite(se[1]) and np.isfinite(b)):
        return False, "not identifiable: no standard error for b"
    if se[1] <= rel_se_max * abs(b):
        return True, f"identified: b = {b:.5g} +- {se[1]:.2g} N s/m"
    return False, (f"not identifiable: b = {b:.4g} +- {se[1]:.3g} N s/m; the velocity is not excited enough "
                   f"for a standard error within {rel_se_max:.0%} of the value (b set to 0 in the model)")


def _linear(fit: ContactFit, t: np.ndarray, d: np.ndarray, vd: np.ndarray, f: np.ndarray, names: tuple[str, ...],
            s: ContactSettings) -> None:
    """Run the linear-law estimators on the contact samples and fill ``fit``."""
    base = gls(t, d, f, vd)
    fit.b_identifiable, fit.b_verdict = damping_verdict(base, s.b_rel_se_max)
    for name in names:
        try:
            fit.results[name] = base if name == "gls" else CONTACT_ESTIMATORS.get(name)(t, d, f, vd, s)
        except IdentificationError as exc:
            if len(names) == 1:
                raise
            fit.notes.append(f"{name}: {exc}")
    for r in fit.results.values():
        own_ok = r.se is None or (np.isfinite(r.se[1]) and r.se[1] <= s.b_rel_se_max * abs(r.b_Nspm))
        r.extra["b_identifiable"] = bool(fit.b_identifiable and own_ok)
    chosen = fit.results.get(fit.estimator)
    if chosen is None:
        raise IdentificationError(f"{fit.estimator} failed on this record: {'; '.join(fit.notes)}")
    fit.k_Npm, fit.b_Nspm = chosen.k_Npm, chosen.b_Nspm
    se = chosen.se if chosen.se is not None else np.full(2, np.nan)
    fit.k_se, fit.b_se = float(se[0]), float(se[1])
    fit.b_identifiable = bool(chosen.extra["b_identifiable"])


def _hunt_crossley(fit: ContactFit, d: np.ndarray, vd: np.ndarray, f: np.ndarray) -> None:
    """Fit ``F = k d^n (1 + b' d')``; if ``b'`` is not identifiable, refit the static law and keep b' = 0."""
    pl = fit_power_law(d, f, vd, fit_damping=True, fit_datum=True)
    if not pl.b_identifiable:
        verdict = pl.b_verdict
        pl = fit_power_law(d, f, None, fit_damping=False, fit_datum=True)
        pl.b_verdict = verdict
        pl.se["b_prime_spm"] = float("nan")
    fit.power_law = pl
    fit.x_c_m += fit.side * pl.datum_shift_m
    fit.k_Npm, fit.n, fit.b_Nspm = pl.k, pl.n, pl.b_Nspm
    fit.k_se = pl.se["k"]
    fit.b_se = float(np.hypot(pl.k * pl.se["b_prime_spm"], pl.b_prime_spm * pl.se["k"]))
    fit.b_identifiable, fit.b_verdict = pl.b_identifiable, pl.b_verdict


def fit_contact(t_s: Any, x_m: Any, f_N: Any, estimator: str = "gls", law: str = "linear",
                probe_stiffness_Npm: float | None = None, *, v_mps: Any = None, side: int = 1,
                settings: ContactSettings | None = None) -> ContactFit:
    """Fit a ``contact`` model to a record of probe position and force.

    Parameters
    ----------
    t_s, x_m, f_N : array_like
        Uniform sample times (s), probe position (m) and force along +x (N), free approach included.
    estimator : str
        One of ``rls, ils, ia, kalman, gls, etfe, oem, eem, gmle`` or ``all`` (the nine side by side; the
        model then takes the global LS estimate, the one with an exact covariance).
    law : {"linear", "hunt-crossley"}
    probe_stiffness_Npm : float, optional
        Stiffness of a probe/rig in series with the wall (removed per sample, seed 004 sec. 3.5).
    v_mps : array_like, optional
        Measured velocity (m/s); None differentiates ``x_m`` (RLS always differentiates, as the thesis's).
    side : {+1, -1}
        +1: the wall resists ``x > x_c``; -1: ``x < x_c``.
    settings : ContactSettings, optional

    Returns
    -------
    ContactFit
    """
    s = settings or ContactSettings()
    t, x, f, v, dt = _check(t_s, x_m, f_N, v_mps, estimator, law, side, probe_stiffness_Npm)
    fc = side * f
    on = detect_onset(fc, threshold_N=s.onset_threshold_N, baseline_samples=s.onset_baseline_samples,
                      x_m=side * x)
    if on.end - on.index + 1 < 20:
        raise IdentificationError(f"contact lasts {on.end - on.index + 1} samples; at least 20 are needed")
    fw = fc - on.baseline_N
    xw, vw = x, v
    if probe_stiffness_Npm is not None:
        dw, dvw = remove_series_compliance(np.zeros_like(x), np.zeros_like(v), fw, probe_stiffness_Npm, dt)
        xw, vw = x + side * dw, v + side * dvw  # wall-side position: x - side F / k_p
    sl = slice(on.index, on.end + 1)
    fit = ContactFit(law, "gls" if estimator == "all" else estimator, side, float(xw[on.index]), float("nan"),
                     float("nan"), 1.0, float("nan"), float("nan"), False, "", on, t[sl].copy(),
                     probe_stiffness_Npm=probe_stiffness_Npm)
    if law == "linear":
        fit.datum = datum_effect(xw, vw, fc, on, side)
        if s.datum == "fit":
            fit.x_c_m = fit.datum.x_fit_m
        elif s.datum != "spike":
            raise IdentificationError(f"datum: expected 'fit' or 'spike', got {s.datum!r}")
    d, vd = side * (xw[sl] - fit.x_c_m), side * vw[sl]
    if law == "linear":
        _linear(fit, t[sl], d, vd, fw[sl], ESTIMATORS if estimator == "all" else (estimator,), s)
        if probe_stiffness_Npm is not None:
            raw = gls(t[sl], side * (x[sl] - fit.x_c_m), fw[sl], side * v[sl])
            fit.k_uncorrected_Npm = raw.k_Npm
            if raw.k_Npm < probe_stiffness_Npm:
                fit.notes.append(f"eq. 3.4 on the uncorrected estimate: k = "
                                 f"{series_stiffness(raw.k_Npm, probe_stiffness_Npm):.6g} N/m")
    else:
        _hunt_crossley(fit, d, vd, fw[sl])
    fit.unsupported = wall_outside_statement(fit.x_c_m, xw, on.index, fit.force_at)
    mark_statuses(fit.results, fit.unsupported is not None, fit.x_c_m)
    return fit
