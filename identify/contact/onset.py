"""Contact onset, the displacement datum and its effect on the stiffness (seed 004 secs. 3.2.3-3.2.4, 3.6.1).

The thesis takes the displacement datum as the probe position at the first "spike" of the force (its
Fig. 3-7) and notes that a wrong datum skews k about in proportion (sec. 3.6.1). Here:

- :func:`detect_onset`: the first sample whose force leaves the pre-contact baseline by more than
  ``n_sigma`` noise deviations (and a small fraction of the force range), and the last such sample (where
  contact ends). The baseline and noise are the median and MAD of the first samples.
- :func:`datum_effect`: refines the datum by fitting it (a constant force offset ``c = -k x0`` in the global
  least squares, so ``x0 = -c/k``), and reports k with the spike datum, k with the fitted datum, and k with
  the datum taken ``j`` samples early or late (the thesis's index study).
- :func:`normal_displacement`: 3-D probe positions to displacement along the wall normal, optionally
  corrected for the tool's orientation (a tilted tool moves its contact point; sec. 3.2.4).

References
----------
seed 004: Agar, secs. 3.2.3-3.2.4 (datum, orientation) and 3.6.1 (procedural error).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hapticam.errors import IdentificationError
from hapticam.identify.contact.batch import solve_ls
from hapticam.identify.contact.support import baseline_refusal, free_lead, is_quiet


@dataclass
class Onset:
    """Contact found in a force record: first and last contact sample, baseline and threshold (N)."""

    index: int
    end: int
    baseline_N: float
    noise_N: float
    threshold_N: float


def _baseline(f: np.ndarray, nb: int) -> tuple[float, float, float]:
    """Level, noise deviation and the force's rise above the level (N) with the first ``nb`` samples."""
    base = float(np.median(f[:nb]))
    noise = float(np.std(f[:nb]))  # noise deviation (a MAD would read 0 on a quantised, quiet sensor)
    return base, noise, float(np.max(f) - base)


def detect_onset(f_N: np.ndarray, *, threshold_N: float | None = None, n_sigma: float = 6.0,
                 baseline_samples: int | None = None, x_m: np.ndarray | None = None) -> Onset:
    """First and last samples of contact in a force record ``f_N`` (N, positive into the wall).

    The baseline is the first ``baseline_samples``; by default 1 % of the record, or, when those reach into
    the contact (their spread puts the threshold above half the force's rise), the quiet samples before the
    force first departs (:func:`~hapticam.identify.contact.support.free_lead`). Refused, with the reason
    (:func:`~hapticam.identify.contact.support.baseline_refusal`), when even those are no free-space baseline.

    Parameters
    ----------
    threshold_N : float, optional
        Force above the baseline that means contact; default ``max(n_sigma * noise, 1e-3 * range)``.
    n_sigma : float
        Noise deviations for the default threshold.
    baseline_samples : int, optional
        Leading samples that are certainly free of contact (default: 1 % of the record, 10 at least).
    x_m : numpy.ndarray, optional
        Probe positions (m), to say whether the first samples' force follows the probe.
    """
    f = np.asarray(f_N, dtype=np.float64)
    n = f.size
    nb = max(10, n // 100) if baseline_samples is None else int(baseline_samples)
    if not 3 <= nb < n:
        raise IdentificationError(f"baseline_samples: expected 3..{n - 1}, got {nb}")
    base, noise, span = _baseline(f, nb)
    if not span > 0:
        raise IdentificationError("no contact: the force never rises above its starting level")
    if threshold_N is None and baseline_samples is None and not is_quiet(noise, span, n_sigma):
        nb = free_lead(f, nb, n_sigma)
        base, noise, span = _baseline(f, nb)
        refusal = baseline_refusal(f, nb, noise, span, n_sigma, x_m)
        if refusal:
            raise IdentificationError(refusal)
    thr = max(n_sigma * noise, 1e-3 * span) if threshold_N is None else float(threshold_N)
    if not thr > 0:
        raise IdentificationError(f"threshold_N must be positive, got {threshold_N}")
    above = np.nonzero(f[nb:] - base > thr)[0]
    if above.size == 0:
        raise IdentificationError(f"no contact: the force never exceeds the baseline by {thr:.3g} N (its largest "
                                  f"rise is {span:.3g} N)")
    return Onset(int(nb + above[0]), int(nb + above[-1]), base, noise, thr)


@dataclass
class DatumEffect:
    """How the displacement datum moves the stiffness.

    ``x_spike_m``: the thesis's datum (probe position at the onset sample); ``x_fit_m``: the fitted datum;
    ``k_spike_Npm`` / ``k_fit_Npm``: global LS stiffness with each; ``shifts``: rows
    ``(samples, datum_m, k_Npm, relative change)`` for the datum taken that many samples late (+) or early (-).
    """

    x_spike_m: float
    x_fit_m: float
    k_spike_Npm: float
    k_fit_Npm: float
    dk_dx0_Npm2: float
    shifts: list[tuple[int, float, float, float]] = field(default_factory=list)

    @property
    def relative_change(self) -> float:
        """``(k_spike - k_fit) / k_fit``."""
        return (self.k_spike_Npm - self.k_fit_Npm) / self.k_fit_Npm


def _k_with_datum(x: np.ndarray, v: np.ndarray, f: np.ndarray, side: int, x0: float) -> float:
    d = side * (x - x0)
    theta, *_ = solve_ls(np.column_stack([d, side * v]), f)  # F = k d + b d'  (seed 004 eq. 2.1)
    return float(theta[0])


def datum_effect(x_m: np.ndarray, v_mps: np.ndarray, f_N: np.ndarray, onset: Onset, side: int = 1,
                 shifts: tuple[int, ...] = (-2, -1, 1, 2)) -> DatumEffect:
    """Fit the datum and report its effect on k (module docstring); arrays are the whole record."""
    sl = slice(onset.index, onset.end + 1)
    x, v, f = x_m[sl], v_mps[sl], f_N[sl] - onset.baseline_N
    if x.size < 4:
        raise IdentificationError(f"contact lasts {x.size} samples; at least 4 are needed")
    x_spike = float(x_m[onset.index])
    d = side * (x - x_spike)
    theta, _, _, rank = solve_ls(np.column_stack([d, side * v, np.ones_like(d)]), f)  # F = k d + b d' + c
    if rank < 3 or not theta[0] > 0:
        x_fit = x_spike  # no spread in displacement: the spike datum stands
    else:
        x_fit = x_spike + side * (-theta[2] / theta[0])  # c = -k x0  ->  x0 = -c / k
    k_spike = _k_with_datum(x, v, f, side, x_spike)
    k_fit = _k_with_datum(x, v, f, side, x_fit)
    rows = []
    for j in shifts:
        i = onset.index + j
        if 0 <= i < x_m.size:
            x0 = float(x_m[i])
            kj = _k_with_datum(x, v, f, side, x0)
            rows.append((j, x0, kj, (kj - k_spike) / k_spike))
    h = 1e-3 * float(np.ptp(x)) or 1e-12
    dk = (_k_with_datum(x, v, f, side, x_fit + side * h) - _k_with_datum(x, v, f, side, x_fit - side * h)) / (2 * h)
    return DatumEffect(x_spike, x_fit, k_spike, k_fit, dk, rows)


def normal_displacement(position_m: Any, normal: Any, *, rotation: Any = None, tip_offset_m: Any = None) -> np.ndarray:
    """Displacement (m) along the unit wall normal of 3-D probe positions (n x 3).

    With ``rotation`` (n x 3 x 3, tool frame to world) and ``tip_offset_m`` (3, the contact point in the tool
    frame) the contact point ``p + R r`` is used instead of the tool origin: the orientation correction of
    seed 004 sec. 3.2.4. The datum is not subtracted (``fit_contact`` does that at the onset).
    """
    p = np.asarray(position_m, dtype=np.float64)
    nvec = np.asarray(normal, dtype=np.float64).reshape(-1)
    if p.ndim != 2 or p.shape[1] != 3 or nvec.size != 3:
        raise IdentificationError(f"position_m must be (n, 3) and normal (3,), got {p.shape} and {nvec.shape}")
    norm = float(np.linalg.norm(nvec))
    if not norm > 0 or not np.all(np.isfinite(p)):
        raise IdentificationError("normal must be non-zero and positions finite")
    if rotation is not None:
        R = np.asarray(rotation, dtype=np.float64)
        r = np.asarray(tip_offset_m, dtype=np.float64).reshape(3) if tip_offset_m is not None else None
        if R.shape != (p.shape[0], 3, 3) or r is None:
            raise IdentificationError("rotation must be (n, 3, 3) and tip_offset_m (3,) is required with it")
        p = p + np.einsum("nij,j->ni", R, r)  # contact point = tool origin + R r_tip
    return p @ (nvec / norm)
