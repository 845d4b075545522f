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
    return furuta.noisy_record()  # Table III's truth, 35 s at 1 kHz, the paper's noise (paper.RECORD_SEED)


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


def _sensitivity_error(h: float, span_s: float = 0.6) -> np.ndarray:
    """Per column, |J - finite differences| / |finite differences| of the shooting kernel's sensitivities
    over two segments of the first ``span_s`` of the swing (friction reversals included), at step ``h``."""
    n = int(round(span_s / h)) + 1
    _, X = furuta.simulate(paper.SIM_X0, TRUTH, duration_s=span_s, dt_s=h)
    meas = np.zeros((n, 4))  # residual = the state itself: its finite differences are the simulation's
    starts = np.array([0, n // 2, n], dtype=np.int64)
    x0s = np.ascontiguousarray(X[starts[:-1]])
    c, w, none = furuta.coefficients(), np.ones(4), np.empty((0, 13, 13))
    res, jac = np.empty(4 * n), np.empty((4 * n, shooting.NC))
    assert shooting.shooting_kernel(c, TRUTH, True, x0s, starts, h, meas, w, np.ones(4), res, jac, none) == 0
    err = np.empty(shooting.NC)
    for i in range(shooting.NC):
        xp, xm, pp, pm = x0s.copy(), x0s.copy(), TRUTH.copy(), TRUTH.copy()
        if i < 4:
            d = 1e-6
            xp[:, i] += d
            xm[:, i] -= d
        else:
            d = 1e-5 * TRUTH[i - 4]
            pp[i - 4] += d
            pm[i - 4] -= d
        r1, r2, scratch = np.empty(4 * n), np.empty(4 * n), np.empty((4 * n, shooting.NC))
        shooting.shooting_kernel(c, pp, True, xp, starts, h, meas, w, np.ones(4), r1, scratch, none)
        shooting.shooting_kernel(c, pm, True, xm, starts, h, meas, w, np.ones(4), r2, scratch, none)
        fd = (r1 - r2) / (2 * d)
        err[i] = np.linalg.norm(jac[:, i] - fd) / np.linalg.norm(fd)
    return err


def test_shooting_sensitivities_match_finite_differences_and_gram_matches_jacobian(record) -> None:
    """The Gram matrices are [J | r]^T [J | r] of the residual mode; the sensitivities (exact RK4
    derivatives near reversals, one midpoint Jacobian per step elsewhere) agree with finite differences of
    the simulation over the first 0.6 s of the swing (both joints reverse there, every column matters)."""
    t, _, Xm = record
    n = 600
    meas = np.ascontiguousarray(Xm[:n])
    starts = np.array([0, 300, n], dtype=np.int64)
    args = (furuta.coefficients(), TRUTH, True, np.ascontiguousarray(meas[starts[:-1]]), starts, 1e-3, meas,
            np.ones(4), np.ones(4))
    res, jac = np.empty(4 * n), np.empty((4 * n, shooting.NC))
    assert shooting.shooting_kernel(*args, res, jac, np.empty((0, 13, 13))) == 0
    gram = np.empty((2, 13, 13))
    shooting.shooting_kernel(*args, np.empty(0), np.empty((0, 12)), gram)
    m = np.column_stack([jac[:1200, :4], jac[:1200, 4:] * TRUTH, res[:1200]])
    np.testing.assert_allclose(gram[0], m.T @ m, rtol=1e-9, atol=1e-9)
    err = _sensitivity_error(1e-3)
    assert np.all(err < 5e-3), err  # relative, per column (finite differences themselves: ~1e-6 here)


def test_optimum_is_that_of_scipy_least_squares_on_the_plain_simulation(record, fit: greybox.GreyBoxFit) -> None:
    """The same multiple-shooting problem (log-combinations and every segment's initial state, residuals in
    noise units), built from the plain RK4 simulation and solved by scipy's least_squares with
    finite-difference Jacobians from fit_greybox's answer, does not move it: it is the optimum (within the
    stopping rule's sqrt(0.1) standard errors; in fact far closer)."""
    from scipy.optimize import least_squares
    from scipy.sparse import lil_matrix

    t, _, Xm = record
    starts, n = fit.segment_starts, t.size
    sigma = np.array([paper.NOISE_ANGLE_RAD] * 2 + [paper.NOISE_RATE_RADPS] * 2)
    c, out = furuta.coefficients(), np.empty((np.max(np.diff(starts)), 4))

    def residuals(v: np.ndarray) -> np.ndarray:
        fr, x0s, r = np.exp(v[:8]), v[8:].reshape(-1, 4) * sigma, []
        for s in range(starts.size - 1):
            o = out[:starts[s + 1] - starts[s]]
            assert furuta.simulate_kernel(c, fr, True, x0s[s], 1e-3, o) == 0
            r.append(((o - Xm[starts[s]:starts[s + 1]]) / sigma).ravel())
        return np.concatenate(r)

    v0 = np.concatenate([np.log(fit.combos), (fit.x0_segments / sigma).ravel()])
    sparsity = lil_matrix((4 * n, v0.size), dtype=int)  # a segment's residuals: the 8 combinations, its own state
    sparsity[:, :8] = 1
    for s in range(starts.size - 1):
        sparsity[4 * starts[s]:4 * starts[s + 1], 8 + 4 * s:12 + 4 * s] = 1
    assert 0.5 * np.sum(residuals(v0) ** 2) == pytest.approx(fit.cost, rel=1e-9)  # the same problem
    sol = least_squares(residuals, v0, method="trf", x_scale="jac", jac_sparsity=sparsity, max_nfev=30)
    assert fit.cost - sol.cost < 0.05  # |r|^2 / 2: less than the stopping rule's 0.1 / 2 left to gain
    moved = (np.exp(sol.x[:8]) - fit.combos) / fit.std_errors
    assert np.all(np.abs(moved) < 0.1), moved


def test_scipy_least_squares_on_the_same_problem_agrees(record, fit: greybox.GreyBoxFit) -> None:
    """solver="scipy" (least_squares, trf/lsmr on the same sparse sensitivities) lands on the same optimum,
    with the same standard errors, after many more simulations."""
    t, _, Xm = record
    peer = greybox.fit_greybox(t, Xm[:, :2], Xm[:, 2:], solver="scipy")
    assert np.all(np.abs(peer.combos - fit.combos) < 0.1 * fit.std_errors), (peer.combos - fit.combos) / fit.std_errors
    np.testing.assert_allclose(peer.std_errors, fit.std_errors, rtol=0.01)
    assert abs(peer.cost - fit.cost) < 0.05 and peer.nfev > 3 * fit.nfev
    with pytest.raises(IdentificationError, match="solver"):
        greybox.fit_greybox(t[:100], Xm[:100, :2], solver="newton")


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


@pytest.mark.parametrize("settings, message", [
    ({"n": 100}, "shorter than one shooting segment"),              # 100 ms against SEGMENT_S
    ({"n": 900, "angles_only": True}, "shorter than one shooting segment"),
    ({"segment_s": float("nan")}, "segment_s must be a positive number"),
    ({"sigma_q": 0.0}, "sigma_q must be a positive number"),
    ({"sigma_w": -1e-3}, "sigma_w must be a positive number"),
])
def test_settings_and_records_the_fit_cannot_use_are_refused(record, settings, message) -> None:
    t, _, Xm = record
    n = settings.pop("n", 2000)
    rates = None if settings.pop("angles_only", False) else Xm[:n, 2:]
    with pytest.raises(IdentificationError, match=message):
        greybox.fit_greybox(t[:n], Xm[:n, :2], rates, **settings)


def test_a_fit_that_does_not_converge_is_an_error_not_a_result(record) -> None:
    """From 30x the truth without a pilot fit, 40 iterations end with residuals ~280x the noise: refused."""
    t, _, Xm = record
    guess = TRUTH * 30.0
    guess[[2, 6]] = TRUTH[[2, 6]]
    with pytest.raises(IdentificationError, match="did not converge"):
        greybox.fit_greybox(t[:10000], Xm[:10000, :2], Xm[:10000, 2:], guess=guess, pilot=False)


def test_naive_fit_needs_the_four_initial_states(record) -> None:
    t, _, Xm = record
    with pytest.raises(IdentificationError, match="4 finite initial states"):
        greybox.fit_naive(t[:200], Xm[:200, :2], Xm[0, :2], max_nfev=5)


def test_angles_only_as_the_encoders_measure(record) -> None:
    """Without measured rates (the experiment's encoders give angles only) the fit uses longer segments and
    a pilot; the eight combinations still come within 5 % of the truth, inside three standard errors."""
    t, _, Xm = record
    f = greybox.fit_greybox(t, Xm[:, :2])
    err = f.combos / TRUTH - 1
    assert np.all(np.abs(err) < 0.05), err
    assert np.all(np.abs(err) < 3 * f.std_errors / TRUTH)
    assert f.sigma2 == pytest.approx(1.0, abs=0.02)
