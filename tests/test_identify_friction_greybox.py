"""Grey-box identification of the pendulum friction (Table III truth, 35 s, the paper's noise) and the naive
baseline of seed 003 sec. IV-C."""

from __future__ import annotations

import numpy as np
import pytest

from hapticam.errors import IdentificationError
from hapticam.identify.friction import furuta, greybox, paper, shooting

TRUTH = paper.combinations(paper.TRUTH)


@pytest.fixture(scope="module")
def record() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    t, X = furuta.simulate(paper.SIM_X0, TRUTH)
    rng = np.random.default_rng(3)
    Xm = X.copy()
    Xm[:, :2] += rng.normal(0, paper.NOISE_ANGLE_RAD, (t.size, 2))
    Xm[:, 2:] += rng.normal(0, paper.NOISE_RATE_RADPS, (t.size, 2))
    return t, X, Xm


@pytest.fixture(scope="module")
def fit(record) -> greybox.GreyBoxFit:
    t, _, Xm = record
    return greybox.fit_greybox(t, Xm[:, :2], Xm[:, 2:])


def test_identifiable_combinations_within_5_percent(fit: greybox.GreyBoxFit) -> None:
    err = fit.combos / TRUTH - 1
    assert np.all(np.abs(err) < 0.05), err
    assert np.all(np.abs(err) < 3 * fit.std_errors / TRUTH)  # consistent with its own standard errors
    assert fit.sigma2 == pytest.approx(1.0, abs=0.02)  # residuals at the noise level: the model fits
    z = fit.params10  # mu_d, mu_s recovered through the known F_n; F_nt fixed
    np.testing.assert_allclose(z[[0, 1, 5, 6]], paper.TRUTH[[0, 1, 5, 6]], rtol=0.02)
    assert fit.fixed["F_nt0"] == paper.TRUTH_FNT[0]


def test_fit_beats_the_papers_table5(record, fit: greybox.GreyBoxFit) -> None:
    t, _, Xm = record
    _, Xs = furuta.simulate(fit.x0, fit.combos)
    arm, pend = (greybox.fit_percent(Xs[:, j], Xm[:, j]) for j in range(2))
    assert arm >= paper.TABLE5_SIM["uas_fit_pct"][0] and pend >= paper.TABLE5_SIM["uas_fit_pct"][1]


def test_standard_errors_match_the_spread_over_noise_draws() -> None:
    """The reported standard errors against the spread of fits over 8 noise draws (35 s records)."""
    t, X = furuta.simulate(paper.SIM_X0, TRUTH)
    est, ses = [], []
    for seed in range(8):
        rng = np.random.default_rng(100 + seed)
        q = X[:, :2] + rng.normal(0, paper.NOISE_ANGLE_RAD, (t.size, 2))
        w = X[:, 2:] + rng.normal(0, paper.NOISE_RATE_RADPS, (t.size, 2))
        f = greybox.fit_greybox(t, q, w)
        assert f.sigma2 == pytest.approx(1.0, abs=0.02)  # every draw reaches the noise floor
        est.append(f.combos)
        ses.append(f.std_errors)
    ratio = np.std(est, axis=0, ddof=1) / np.mean(ses, axis=0)
    keep = [0, 1, 2, 3, 4, 6, 7]  # c2_1 (~4 % SE) is the most nonlinear: its linearised SE is pessimistic
    assert np.all((ratio[keep] > 0.4) & (ratio[keep] < 2.0)), ratio
    assert np.all(np.abs(np.mean(est, axis=0) / TRUTH - 1) < 0.03)  # no bias beyond the noise


def test_shooting_jacobian_is_the_derivative_of_the_simulation(record) -> None:
    t, _, Xm = record
    n = 600
    meas = np.ascontiguousarray(Xm[:n])
    starts = np.array([0, 300, n], dtype=np.int64)
    x0s = np.ascontiguousarray(meas[starts[:-1]])
    w = np.ones(4)
    c = furuta.coefficients()
    res, jac = np.empty(4 * n), np.empty((4 * n, shooting.NC))
    args = (c, TRUTH, True, x0s, starts, 1e-3, meas, w, np.ones(4))
    assert shooting.shooting_kernel(*args, res, jac, np.empty((0, 13, 13))) == 0
    gram = np.empty((2, 13, 13))
    shooting.shooting_kernel(*args, np.empty(0), np.empty((0, 12)), gram)
    m = np.column_stack([jac[:1200, :4], jac[:1200, 4:] * TRUTH, res[:1200]])
    np.testing.assert_allclose(gram[0], m.T @ m, rtol=1e-9, atol=1e-9)
    for i in (0, 3, 4 + 1, 4 + 6):  # an initial angle, an initial rate, c2_0, v_t1
        r2 = np.empty(4 * n)
        if i < 4:
            h = 1e-7
            xp, xm = x0s.copy(), x0s.copy()
            xp[:, i] += h
            xm[:, i] -= h
            pp, pm = TRUTH, TRUTH
        else:
            h = 1e-4 * TRUTH[i - 4]
            pp, pm = TRUTH.copy(), TRUTH.copy()
            pp[i - 4] += h
            pm[i - 4] -= h
            xp = xm = x0s
        shooting.shooting_kernel(c, pp, True, xp, starts, 1e-3, meas, w, np.ones(4), res.copy(), jac.copy(),
                                 np.empty((0, 13, 13)))
        r1 = np.empty(4 * n)
        j1 = np.empty((4 * n, 12))
        shooting.shooting_kernel(c, pp, True, xp, starts, 1e-3, meas, w, np.ones(4), r1, j1, np.empty((0, 13, 13)))
        shooting.shooting_kernel(c, pm, True, xm, starts, 1e-3, meas, w, np.ones(4), r2, j1, np.empty((0, 13, 13)))
        fd = (r1 - r2) / (2 * h)
        np.testing.assert_allclose(jac[:, i], fd, rtol=1e-3, atol=1e-4 * np.max(np.abs(fd)))


def test_naive_baseline_is_worse_and_slower(record, fit: greybox.GreyBoxFit) -> None:
    """All ten parameters by Nelder-Mead on the simulation error (a small budget in the test)."""
    t, _, Xm = record
    naive = greybox.fit_naive(t, Xm[:, :2], Xm[0], max_nfev=60)
    _, Xs = furuta.simulate(Xm[0], paper.combinations(naive.params10))
    _, Xg = furuta.simulate(fit.x0, fit.combos)
    for j in range(2):
        assert greybox.fit_percent(Xs[:, j], Xm[:, j]) < greybox.fit_percent(Xg[:, j], Xm[:, j])
    assert naive.nfev >= 50


def test_bad_inputs() -> None:
    t = np.arange(100) * 1e-3
    with pytest.raises(IdentificationError, match="angles"):
        greybox.fit_greybox(t, np.zeros((99, 2)))
    with pytest.raises(IdentificationError, match="finite"):
        greybox.fit_greybox(t, np.full((100, 2), np.nan))
    with pytest.raises(IdentificationError, match="guess"):
        greybox.fit_greybox(t, np.zeros((100, 2)), guess=np.ones(7))
