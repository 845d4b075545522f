"""Prediction-error identification of the hopper (seed 002 Figs. 2-3) against the truth that made the data."""

from __future__ import annotations

import numpy as np
import pytest

from hapticam.identify.hopper.model import HopperParams, poincare_map
from hapticam.identify.hopper.fit import (
    cost, fit_lm, fit_steepest, from_paper_coordinates, paper_problem, predict, standard_errors, state_at, synthetic)

PAPER = HopperParams()


def _clean(theta, data):
    return predict(theta, data.names, data.params, data.tau_s, data.y_m.size, h=1e-4)


def test_paper_coordinates_round_trip():
    truth, _ = paper_problem(False)
    assert state_at(truth, ("t", "y", "yd"), PAPER) == pytest.approx([4.7, 1.6, 1.0], abs=1e-8)
    with pytest.raises(ValueError, match="before the section"):
        from_paper_coordinates(1.0, 1.6, 1.0, PAPER)


def test_fig2_noise_free_finds_the_trajectory_or_its_one_period_shift():
    truth, guess = paper_problem(False)
    data = synthetic(truth, False, 40, 0.0)
    fit = fit_lm(data, guess)
    assert np.max(np.abs(_clean(fit.theta, data) - data.y_clean_m)) < 1e-6
    t, zeta = fit.theta[0], fit.theta[1:]
    shifts = round((t - truth[0]) / PAPER.period_s)
    for _ in range(shifts):                  # (t + T, P^-1 zeta) gives the same data as (t, zeta)
        t, zeta = t - PAPER.period_s, poincare_map(PAPER, zeta)
    assert np.concatenate([[t], zeta]) == pytest.approx(truth, abs=1e-6)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fig2_with_the_papers_noise_reaches_the_truths_cost_and_trajectory(seed):
    truth, guess = paper_problem(False)
    data = synthetic(truth, False, 40, 0.2, seed=seed)          # "variance 0.2" is standard deviation 0.2
    fit = fit_lm(data, guess)
    c_truth = cost(truth, data)
    assert fit.cost_start > 5 * c_truth                         # the guess is far off (seed 002: 0.30 vs 0.040)
    assert fit.cost <= c_truth + 0.002
    rms = np.sqrt(np.mean((_clean(fit.theta, data) - data.y_clean_m) ** 2))
    assert rms < 2 * 0.2 * np.sqrt(3 / 40)                      # twice the rms a 3-unknown fit leaves
    if seed == 1:
        steep = fit_steepest(data, guess, max_iterations=300)   # the paper's method also gets there on Fig. 2
        assert steep.cost <= fit.cost + 1e-4


@pytest.fixture(scope="module")
def fig3():
    return paper_problem(True)


@pytest.fixture(scope="module")
def fig3_noise_free(fig3):
    data = synthetic(fig3[0], True, 400, 0.0)
    return data, fit_lm(data, fig3[1])


def test_fig3_noise_free_recovers_every_parameter(fig3, fig3_noise_free):
    fit = fig3_noise_free[1]
    assert fit.theta[3:] == pytest.approx(fig3[0][3:], rel=1e-4)
    assert fit.converged


def test_fig3_low_noise_within_two_percent_and_three_standard_errors(fig3):
    truth, guess = fig3
    fit = fit_lm(synthetic(truth, True, 400, 0.02, seed=1), guess)
    assert fit.theta[3:] == pytest.approx(truth[3:], rel=0.02)
    assert np.all(np.abs(fit.theta - truth) < 3 * fit.std_errors)


def test_fig3_papers_noise_beats_the_truths_cost_and_lands_within_three_standard_errors(fig3):
    truth, guess = fig3
    data = synthetic(truth, True, 400, 0.2, seed=1)
    fit = fit_lm(data, guess)
    assert fit.cost <= cost(truth, data)
    assert np.all(np.abs(fit.theta - truth) < 3 * fit.std_errors)
    rel = fit.std_errors[3:] / fit.theta[3:]
    assert 0.08 < rel[0] < 0.4 and 0.04 < rel[2] < 0.3         # m and b only weakly identifiable at this noise


def test_steepest_descent_crawls_on_fig3_where_lm_converges_on_the_same_budget(fig3, fig3_noise_free):
    truth, guess = fig3
    data, lm = fig3_noise_free
    sd = fit_steepest(data, guess, max_iterations=10_000, max_evaluations=lm.evaluations)
    assert lm.theta[3:] == pytest.approx(truth[3:], rel=1e-4)
    assert not sd.converged and sd.cost > 1e6 * lm.cost + 1e-8
    assert np.max(np.abs(sd.theta[3:] / truth[3:] - 1)) > 0.01
    assert sd.history[-1][1] < sd.history[0][1] / 5             # it does descend, slowly
    assert lm.history[-1][1] < 1e-12 and lm.history[0][1] == pytest.approx(sd.history[0][1], rel=1e-12)


def test_standard_errors_match_the_linear_least_squares_covariance():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 3))
    beta = np.array([1.0, -2.0, 0.5])
    y = X @ beta + rng.normal(0, 0.1, 200)
    b, res, *_ = np.linalg.lstsq(X, y, rcond=None)
    se = standard_errors(X, X @ b - y)
    # Monte Carlo spread of the estimate over fresh noise
    draws = np.array([np.linalg.lstsq(X, X @ beta + rng.normal(0, 0.1, 200), rcond=None)[0] for _ in range(400)])
    assert se == pytest.approx(draws.std(axis=0), rel=0.15)
