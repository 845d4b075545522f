"""The Mittag-Leffler function ``E_{a,b}`` and the Nussbaum gain of seed 003 (eqs. 11, 12, 21).

``E_{a,b}(z) = sum_n z^n / Gamma(a n + b)`` (seed 003 eq. 12). For ``a = 3, b = 1`` the series is the
"every third term" part of the exponential series, so with ``w = exp(2 pi i / 3)``::

    E_{3,1}(t^3) = (exp(t) + exp(w t) + exp(w^2 t)) / 3 = [exp(t) + 2 exp(-t/2) cos(sqrt(3) t / 2)] / 3

and the Nussbaum gain of eq. 21 (``lambda = 1``, ``alpha = 3``) is ``N(k) = E_{3,1}(-k^3)``::

    N(k) = [exp(-k) + 2 exp(k/2) cos(sqrt(3) k / 2)] / 3

which swings between signs with an envelope ``(2/3) exp(k/2)``: its running mean over ``[k0, k]`` has
supremum ``+inf`` and infimum ``-inf`` (eq. 11), as Li & Chen (2009) show for ``a`` in ``(2, 3]``.

The general series (:func:`mittag_leffler`) is summed term by term with log-Gamma weights; for large
negative arguments its terms cancel, so it refuses arguments where the largest term exceeds the sum by
more than ``1e8`` (use a closed form there). Closed forms here: ``a = 1`` (``exp``), ``a = 2, b = 1``
(``cosh`` / ``cos``), ``a = 3, b = 1`` (above).

References
----------
Wadi, Mukhopadhyay & Romdhane (seed 003), eqs. 11, 12, 21.
Li, Y., Chen, Y. (2009), "When is a Mittag-Leffler function a Nussbaum function?", Automatica 45(8),
1957-1959.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit
from scipy.special import gammaln

from hapticam.errors import IdentificationError

_SQRT3_2 = math.sqrt(3.0) / 2.0


@njit(cache=True, nogil=True)
def nussbaum_gain(k: float) -> float:
    """``N(k) = E_{3,1}(-k^3) = [exp(-k) + 2 exp(k/2) cos(sqrt(3) k/2)] / 3``  (seed 003 eqs. 12, 21)."""
    return (math.exp(-k) + 2.0 * math.exp(0.5 * k) * math.cos(_SQRT3_2 * k)) / 3.0


@njit(cache=True, nogil=True)
def ml3(z: float) -> float:
    """``E_{3,1}(z)`` for real ``z`` in closed form (module docstring), ``t = cbrt(z)``."""
    if z >= 0.0:
        t = z ** (1.0 / 3.0)
        return (math.exp(t) + 2.0 * math.exp(-0.5 * t) * math.cos(_SQRT3_2 * t)) / 3.0
    return nussbaum_gain((-z) ** (1.0 / 3.0))


def nussbaum_integral(k: np.ndarray, k0: float) -> np.ndarray:
    """``integral_{k0}^{k} N(s) ds`` in closed form (for eq. 11's running mean).

    With ``N = [e^{-s} + 2 Re e^{w s}] / 3``, ``w = 1/2 + i sqrt(3)/2``: the primitive is
    ``[-e^{-s} + 2 Re(e^{w s} / w)] / 3`` and ``e^{w s} / w = e^{s/2} e^{i (sqrt3 s/2 - pi/3)}``.
    """
    def prim(s: np.ndarray) -> np.ndarray:
        return (-np.exp(-s) + 2.0 * np.exp(0.5 * s) * np.cos(_SQRT3_2 * s - math.pi / 3.0)) / 3.0

    return prim(np.asarray(k, dtype=np.float64)) - prim(np.asarray(k0, dtype=np.float64))


def mittag_leffler(z: np.ndarray | float, alpha: float, beta: float = 1.0) -> np.ndarray:
    """``E_{alpha,beta}(z)`` for real ``z`` (seed 003 eq. 12).

    Closed forms for ``alpha = 1`` (``exp(z)`` for ``beta = 1``), ``alpha = 2, beta = 1`` and ``alpha = 3,
    beta = 1``; otherwise the series, which raises :class:`~hapticam.errors.IdentificationError` where
    cancellation would cost more than 8 of its 16 digits.
    """
    if not (alpha > 0.0 and beta > 0.0 and math.isfinite(alpha) and math.isfinite(beta)):
        raise IdentificationError(f"mittag_leffler: alpha and beta must be finite and > 0, got {alpha}, {beta}")
    zz = np.asarray(z, dtype=np.float64)
    if alpha == 3.0 and beta == 1.0:
        return np.vectorize(ml3, otypes=[np.float64])(zz)
    if alpha == 2.0 and beta == 1.0:
        r = np.sqrt(np.abs(zz))
        return np.where(zz >= 0.0, np.cosh(r), np.cos(r))  # E_{2,1}(z) = cosh(sqrt z)
    if alpha == 1.0 and beta == 1.0:
        return np.exp(zz)
    return np.vectorize(lambda x: _series(float(x), alpha, beta), otypes=[np.float64])(zz)


def _series(z: float, alpha: float, beta: float) -> float:
    """``sum_n z^n / Gamma(alpha n + beta)`` to double precision, with a cancellation guard."""
    if z == 0.0:
        return float(math.exp(-gammaln(beta)))
    lz, sign = math.log(abs(z)), (-1.0 if z < 0.0 else 1.0)
    total, largest, n = 0.0, 0.0, 0
    while True:
        term = math.exp(n * lz - gammaln(alpha * n + beta)) * sign ** n  # z^n / Gamma(alpha n + beta)
        total += term
        largest = max(largest, abs(term))
        if n > 2 and abs(term) < 1e-17 * max(abs(total), 1e-300) and alpha * n + beta > abs(z) ** (1 / alpha):
            break
        n += 1
        if n > 100_000:
            raise IdentificationError(f"mittag_leffler: the series did not converge at z = {z:g}")
    if largest > 1e8 * abs(total):
        raise IdentificationError(f"mittag_leffler: the series loses more than 8 digits to cancellation at "
                                  f"z = {z:g} (alpha = {alpha:g}); use a closed form")
    return total
