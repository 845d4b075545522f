"""Mittag-Leffler function and the Nussbaum gain of seed 003 (eqs. 11, 12, 21) against mpmath series."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from scipy.integrate import quad

from hapticam.errors import IdentificationError
from hapticam.identify.friction.mittag_leffler import (mittag_leffler, ml3, nussbaum_gain, nussbaum_integral)


def series(z: float, a: float, b: float) -> mp.mpf:
    """E_{a,b}(z) = sum z^n / Gamma(a n + b) in 60-digit arithmetic (seed 003 eq. 12)."""
    with mp.workdps(60):
        return mp.nsum(lambda n: mp.mpf(z) ** n / mp.gamma(a * n + b), [0, mp.inf])


def test_closed_form_matches_series_to_1e_12_for_k_up_to_20() -> None:
    worst = 0.0
    for k in np.linspace(0.0, 20.0, 161):
        ref = series(-mp.mpf(float(k)) ** 3, 3, 1)
        worst = max(worst, float(abs((nussbaum_gain(float(k)) - ref) / ref)))
    assert worst < 1e-12


@pytest.mark.parametrize("z", [-30.0, -2.5, 0.0, 0.7, 8.0, 64.0])
def test_ml3_any_real_argument(z: float) -> None:
    ref = series(z, 3, 1)
    assert ml3(z) == pytest.approx(float(ref), rel=1e-12)
    assert float(mittag_leffler(z, 3.0)) == pytest.approx(float(ref), rel=1e-12)


@pytest.mark.parametrize("z, a, b", [(-2.0, 2.5, 1.0), (1.5, 0.5, 1.0), (-1.0, 0.8, 1.3), (3.0, 2.0, 1.0),
                                     (-3.0, 2.0, 1.0), (0.4, 1.0, 1.0)])
def test_general_series_and_closed_forms(z: float, a: float, b: float) -> None:
    assert float(mittag_leffler(z, a, b)) == pytest.approx(float(series(z, a, b)), rel=1e-12)


def test_series_refuses_catastrophic_cancellation() -> None:
    with pytest.raises(IdentificationError, match="cancellation"):
        mittag_leffler(-1e4, 2.5, 1.0)
    with pytest.raises(IdentificationError, match="alpha and beta"):
        mittag_leffler(1.0, 0.0, 1.0)


def test_nussbaum_integral_closed_form_and_eq11() -> None:
    """The primitive against quadrature; the running mean of eq. 11 reaches both large signs."""
    for k in (0.5, 3.0, 7.0, 12.0):
        ref, _ = quad(nussbaum_gain, 0.01, k, limit=200)
        assert float(nussbaum_integral(k, 0.01)) == pytest.approx(ref, rel=1e-10)
    k = np.linspace(0.02, 40.0, 20001)
    mean = nussbaum_integral(k, 0.01) / (k - 0.01)
    assert mean.max() > 1e6 and mean.min() < -1e6  # sup = +inf, inf = -inf (eq. 11)
    assert nussbaum_gain(0.0) == pytest.approx(1.0, abs=1e-15) and nussbaum_gain(3.0) < 0.0
    assert math.isfinite(nussbaum_gain(20.0))
