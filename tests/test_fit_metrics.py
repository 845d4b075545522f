"""The two fits reported side by side: seed 003 eq. 53 and the NRMSE fit, against their closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hapticam.identify.metrics import fit_percent, fit_report, nrmse_fit_percent


def test_nrmse_fit_is_one_minus_the_norm_ratio():
    ref = np.array([0.0, 1.0, 2.0, 3.0])                 # mean 1.5, |ref - mean| = sqrt(5)
    est = ref + np.array([0.5, -0.5, 0.5, -0.5])         # |e| = 1
    assert nrmse_fit_percent(ref, est) == pytest.approx(100.0 * (1.0 - 1.0 / math.sqrt(5.0)), rel=1e-12)
    assert fit_percent(ref, est) == pytest.approx(100.0 * (1.0 - 1.0 / 5.0), rel=1e-12)


@pytest.mark.parametrize("r2", [99.78, 95.0, 32.6, -50.0])
def test_the_two_fits_are_related_by_a_square_root(r2):
    rng = np.random.default_rng(3)
    ref = rng.normal(size=2000)
    noise = rng.normal(size=2000)
    noise *= math.sqrt((1.0 - r2 / 100.0) * np.sum((ref - ref.mean()) ** 2) / np.sum(noise ** 2))
    est = ref + noise
    assert fit_percent(ref, est) == pytest.approx(r2, abs=1e-9)
    assert nrmse_fit_percent(ref, est) == pytest.approx(100.0 * (1.0 - math.sqrt(1.0 - r2 / 100.0)), abs=1e-9)


def test_the_nrmse_fit_is_the_stricter_reading_of_a_good_fit():
    # 99.78 % of variance explained is 95.3 % by the NRMSE fit
    assert 100.0 * (1.0 - math.sqrt(1.0 - 0.9978)) == pytest.approx(95.3, abs=0.05)


def test_constant_reference_and_report():
    assert nrmse_fit_percent([2.0, 2.0], [2.0, 2.0]) == 100.0
    assert nrmse_fit_percent([2.0, 2.0], [2.0, 2.1]) == float("-inf")
    report = fit_report([0.0, 1.0, 2.0], [0.0, 1.0, 2.5])
    assert set(report) >= {"fit_percent", "nrmse_fit_percent", "rms_N", "max_N", "samples"}
