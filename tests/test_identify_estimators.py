"""EWLS (seed 001 Table 1), segmentation and fit metrics against closed-form references."""

from __future__ import annotations

import numpy as np
import pytest

from hapticam.errors import IdentificationError
from hapticam.identify.impedance.ewls import EWLS, ewls_fit
from hapticam.identify.metrics import fit_percent, fit_report, max_error, rms_error
from hapticam.identify.impedance.segmentation import grid_edges, segment


def _regression(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    t = np.arange(n) / 4000.0
    x = 0.025 + 0.025 * np.sin(2 * np.pi * (t + t * t / 60))
    phi = np.column_stack([rng.normal(0, 10, n), rng.normal(0, 0.3, n), x, np.ones(n)])
    theta = np.array([0.5, 5.0, 800.0, -3.0])
    y = phi @ theta + rng.normal(0, 0.05, n)
    return phi, y, theta


def _table1_reference(phi, y, lam, p0):
    """Seed 001 Table 1 written literally in NumPy (no scaling, no bound)."""
    n, p = phi.shape
    P = np.eye(p) * p0
    th = np.zeros(p)
    for i in range(n):
        f = phi[i]
        L = P @ f / (lam + f @ P @ f)  # Table 1a
        P = (P - np.outer(L, f) @ P) / lam  # Table 1b
        e = y[i] - f @ th  # Table 1c
        th = th + L * e  # Table 1d
    return th, P


def test_lambda_one_equals_batch_least_squares_over_360k_samples():
    phi, y, _ = _regression(360_000)
    res = ewls_fit(phi, y, 1.0)
    batch = np.linalg.lstsq(phi, y, rcond=None)[0]
    assert np.max(np.abs(res.theta - batch) / np.abs(batch)) < 1e-8


def test_matches_literal_table1_recursion_with_forgetting():
    phi, y, _ = _regression(3000, seed=3)
    ref, Pref = _table1_reference(phi, y, 0.99, 1e3)
    res = ewls_fit(phi, y, 0.99, p0=1e3, scale=None, p_max=1e12)
    np.testing.assert_allclose(res.theta, ref, rtol=1e-9)
    np.testing.assert_allclose(res.P, Pref, rtol=1e-7, atol=1e-14)
    assert np.array_equal(res.P, res.P.T)


def test_class_fed_in_blocks_equals_functional_form():
    phi, y, _ = _regression(20_000, seed=4)
    s = np.sqrt(np.mean(phi * phi, axis=0))
    fun = ewls_fit(phi, y, 0.999, scale=s)
    est = EWLS(4, 0.999, scale=s)
    for k in range(0, 20_000, 3_000):
        est.update(phi[k:k + 3000], y[k:k + 3000])
    np.testing.assert_allclose(est.theta, fun.theta, rtol=1e-12)
    np.testing.assert_allclose(est.P, fun.P, rtol=1e-10)
    assert est.n_seen == 20_000


def test_forgetting_tracks_a_parameter_step():
    rng = np.random.default_rng(5)
    n = 20_000
    phi = np.column_stack([rng.normal(size=n), np.ones(n)])
    k = np.where(np.arange(n) < n // 2, 100.0, 300.0)
    y = k * phi[:, 0] + 2.0 + rng.normal(0, 0.1, n)
    res = ewls_fit(phi, y, 0.999)
    # after 5 / (1 - lam) samples the estimate has forgotten the old value (e^-5 < 1 %)
    assert abs(res.theta_path[n // 2 + 5000, 0] - 300.0) < 3.0
    assert abs(res.theta_path[n // 2 - 1, 0] - 100.0) < 1.0


def test_unexcited_regressor_does_not_wind_up_the_covariance():
    rng = np.random.default_rng(6)
    n = 50_000
    v = np.concatenate([rng.normal(size=n // 2), np.zeros(n // 2)])  # velocity stops being excited
    phi = np.column_stack([v, rng.normal(size=n), np.ones(n)])
    y = phi @ np.array([8.0, 200.0, 1.0]) + rng.normal(0, 0.01, n)
    bounded = ewls_fit(phi, y, 0.999, scale=None, p_max=1.0)
    free = ewls_fit(phi, y, 0.999, scale=None, p_max=1e300)
    assert bounded.pdiag_path[-1, 0] <= 1.0 + 1e-12
    assert free.pdiag_path[-1, 0] > 1e6  # plain Table 1 winds up by 1/lam per step
    assert bounded.windup_steps > 0
    # the excited parameters keep tracking, and the unexcited one keeps its last good value
    np.testing.assert_allclose(bounded.theta, [8.0, 200.0, 1.0], rtol=1e-3)


@pytest.mark.parametrize("lam", [0.0, -0.5, 1.5, float("nan")])
def test_bad_forgetting_factor_raises(lam):
    phi, y, _ = _regression(100)
    with pytest.raises(IdentificationError, match="forgetting factor"):
        ewls_fit(phi, y, lam)


def test_nonfinite_inputs_raise():
    phi, y, _ = _regression(100)
    y[5] = np.nan
    with pytest.raises(IdentificationError, match="finite"):
        ewls_fit(phi, y, 0.999)


def _piecewise(seed=1):
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(0.0, 0.004, 1600))
    f = np.where(x < 0.001, 100 * x, np.where(x < 0.0021, 0.5 + 20 * (x - 0.001), 0.2 + 300 * (x - 0.0021)))
    return x, f + rng.normal(0, 1e-3, x.size)


def test_segmentation_finds_the_true_breakpoints_and_is_optimal():
    x, f = _piecewise()
    phi = np.column_stack([x, np.ones_like(x)])
    edges = grid_edges(0.0, 0.004, 1e-4)
    seg = segment(x, phi, f, edges, x_col=0, one_col=1, tolerance_N=2e-3)
    assert seg.n_segments == 3
    np.testing.assert_allclose(seg.breakpoints_m[1:-1], [0.001, 0.0021], atol=1e-9)
    # brute force over all 2-cut partitions on the 40-cell grid: the DP optimum is the true minimum
    def rss(lo, hi):
        sel = (x >= edges[lo]) & (x < edges[hi]) if hi < 40 else (x >= edges[lo])
        a = phi[sel]
        r = f[sel] - a @ np.linalg.lstsq(a, f[sel], rcond=None)[0]
        return r @ r
    best = min(rss(0, i) + rss(i, j) + rss(j, 40) for i in range(1, 39) for j in range(i + 1, 40))
    assert seg.rss_by_k[2] == pytest.approx(best, rel=1e-8)


def test_segmentation_respects_max_segments_and_reports_tolerance():
    x, f = _piecewise()
    phi = np.column_stack([x, np.ones_like(x)])
    seg = segment(x, phi, f, grid_edges(0.0, 0.004, 1e-4), x_col=0, one_col=1, tolerance_N=1e-6,
                  max_segments=2)
    assert seg.n_segments == 2 and not seg.tolerance_met


def test_linear_segments_fit_a_quadratic_force_exactly_with_one_segment():
    x = np.linspace(0.0, 0.01, 500)
    f = 3.0 + 200 * x + 5e4 * x * x  # k(x) x + F0(x) with linear k and F0 spans {1, x, x^2}
    phi = np.column_stack([x, np.ones_like(x)])
    seg = segment(x, phi, f, grid_edges(0.0, 0.01, 5e-4), x_col=0, one_col=1, mode="linear", tolerance_N=1e-6)
    assert seg.n_segments == 1
    spread = np.sum((f - f.mean()) ** 2)
    assert seg.rss_by_k[0] < 1e-12 * spread
    const = segment(x, phi, f, grid_edges(0.0, 0.01, 5e-4), x_col=0, one_col=1, tolerance_N=1e-6)
    assert const.rss_by_k[0] > 1e-4 * spread  # one straight line cannot


def test_too_fine_grid_is_refused():
    x, f = _piecewise()
    phi = np.column_stack([x, np.ones_like(x)])
    with pytest.raises(IdentificationError, match="coarser grid"):
        segment(x, phi, f, grid_edges(0.0, 0.004, 1e-7), x_col=0, one_col=1, tolerance_N=1e-3)


def test_fit_percent_is_seed003_eq53():
    ref = np.array([1.0, 2.0, 3.0, 4.0])
    est = np.array([1.1, 1.9, 3.2, 3.9])
    expected = 100 * (1 - np.sum((est - ref) ** 2) / np.sum((ref - ref.mean()) ** 2))
    assert fit_percent(ref, est) == pytest.approx(expected)
    assert fit_percent(ref, ref) == 100.0
    assert fit_percent(ref, np.full(4, ref.mean())) == pytest.approx(0.0)
    assert rms_error(ref, est) == pytest.approx(np.sqrt(np.mean((est - ref) ** 2)))
    assert max_error(ref, est) == pytest.approx(0.2)
    assert fit_report(ref, est)["samples"] == 4
    with pytest.raises(IdentificationError):
        fit_percent(ref, est[:3])
