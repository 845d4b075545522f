"""Seed 002 reproductions for ``hapticam reproduce``: the hopper's periodic orbit and its identification.

``seed002-hopper-orbit``: the fixed point of the Poincare map at sigma = pi and its eigenvalues, with the
paper's integrator (forward Euler h = 0.01 s with domain relaxation, Appendix A) and accurately (RK4 with
events located, checked against solve_ivp); the printed leg force, which does not hop from that orbit.

``seed002-hopper-fit``: Fig. 2 (the initial condition from 40 samples at 20 Hz, noise standard deviation
0.2 m) and Fig. 3 (initial condition and (m, k, b, a) from 400 samples, i.e. 20 cycles; the paper does not
say how many) by Levenberg-Marquardt on growing windows and by the paper's steepest descent with Armijo steps,
with the parameters' standard errors; the paper's initial conditions and guesses in its (sigma, y, y')
coordinates are converted to (t, zeta) (:func:`.hopper_fit.from_paper_coordinates`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hapticam.errors import IdentificationError
from hapticam.identify.hopper.model import (
    ACCURATE, PAPER_EULER, HopperParams, Integrator, fixed_point, poincare_map, rk4_events, section_state)
from hapticam.identify.hopper.fit import (
    PARAMS, HopperData, HopperFit, cost, fit_lm, fit_steepest, paper_problem, state_at, synthetic)
from hapticam.identify.hopper.plot import fit_figure, orbit_figure
from hapticam.commands.reproduce.papers import Experiment, ReproResult

Row = tuple[str, str, str, str]
PAPER = HopperParams()
UNITS = {"m": "kg", "k": "N/m", "b": "N s/m", "a": "m"}


def _eig(orbit) -> str:
    lam = orbit.eigenvalues[np.argmax(orbit.eigenvalues.imag)]
    return f"{lam.real:.4f} +- {lam.imag:.4f}j"


def _printed_rows() -> list[Row]:
    """The printed force actuator from the paper's fixed point: events over 20 periods, the next section."""
    printed = PAPER.with_values(actuator="force")
    zeta = np.array([1.952, 1.908])
    counts = []
    for q in (PAPER, printed):
        out, s, ev = np.empty((1, 4)), np.empty(4), np.empty(256)
        counts.append(rk4_events(q.block(), 0, section_state(zeta), 0.0, np.array([20 * q.period_s]), 1e-3, out,
                                 s, ev)[2] // 2)
    try:
        poincare_map(printed, zeta)
        back = "foot down"
    except IdentificationError:
        back = "foot in the air"
    return [("hops in 20 periods from (1.952, 1.908): rest-length / printed force actuator",
             f"{counts[0]} / {counts[1]}", "20 (a period-1 orbit)", "-"),
            ("printed force actuator at the next section", back, "foot down (on the orbit)", "")]


def run_orbit(out_dir: Path, quick: bool) -> ReproResult:
    """Fixed point both ways, the solve_ivp check, Euler's convergence, the printed form's failure."""
    from scipy.optimize import root

    from hapticam.identify.hopper.ivp import poincare_map_ivp

    relaxed, accurate = fixed_point(PAPER, PAPER_EULER), fixed_point(PAPER, ACCURATE)
    fine = fixed_point(PAPER, Integrator("relaxed", 1e-3))
    ivp = root(lambda q: poincare_map_ivp(PAPER, q, rtol=1e-11) - q, accurate.zeta + 0.01, options={"xtol": 1e-12}).x
    rows: list[Row] = [
        ("fixed point (y, y'), relaxed Euler h = 0.01 s", f"({relaxed.zeta[0]:.4f}, {relaxed.zeta[1]:.4f})",
         "(1.95, 1.91)", "m, m/s"),
        ("eigenvalues of DP, relaxed Euler h = 0.01 s", _eig(relaxed), "-0.27 +- 0.73j", "-"),
        ("fixed point (y, y'), accurate (RK4, events located)", f"({accurate.zeta[0]:.4f}, {accurate.zeta[1]:.4f})",
         "- (Euler's above)", "m, m/s"),
        ("eigenvalues of DP, accurate", _eig(accurate), "-", "-"),
        ("|eigenvalues|, accurate", f"{abs(accurate.eigenvalues[0]):.4f}", "~0.78 (from -0.27 +- 0.73j)", "-"),
        ("fixed point, solve_ivp DOP853 rtol 1e-11 minus accurate", f"{np.max(np.abs(ivp - accurate.zeta)):.1e}",
         "-", "m"),
        ("fixed point, relaxed Euler h = 0.001 s", f"({fine.zeta[0]:.4f}, {fine.zeta[1]:.4f})", "-", "m, m/s"),
    ]
    rows += _printed_rows()
    figures = [orbit_figure(PAPER, accurate, relaxed, np.array([1.8, 1.6]), out_dir / "seed002_hopper_orbit.png")]
    notes = ["the paper's (1.95, 1.91) and -0.27 +- 0.73j are forward Euler's at h = 0.01 s; the error shrinks in "
             "proportion to h and the accurate orbit is (1.9650, 1.8757) with -0.2490 +- 0.6993j",
             "leg force L = k (l0 + a sin(sigma) - (y - x)) (the actuator moves the rest length, as the authors' code); "
             "the printed k (l0 - (y - x)) + a sin(sigma) does not keep the orbit"]
    return ReproResult(rows, figures, notes)


def _z(theta: np.ndarray, names: tuple[str, ...]) -> str:
    sigma, y, yd = state_at(theta, names, PAPER.with_values(**dict(zip(PARAMS, theta[3:]))))
    sigma = np.pi + (sigma - np.pi) % (2 * np.pi)             # the clock phase in [pi, 3 pi), as the paper's
    return f"({sigma:.2f}, {y:.2f}, {yd:.2f})"


def _fit_rows(label: str, data: HopperData, guess: np.ndarray, lm: HopperFit, sd: HopperFit,
              paper: dict[str, str]) -> list[Row]:
    names = data.names
    rows: list[Row] = [
        (f"{label}: true z = (sigma, y, y')", _z(data.truth, names), paper["z"], "rad, m, m/s"),
        (f"{label}: initial guess z0", _z(guess, names), paper["z0"], "rad, m, m/s"),
        (f"{label}: estimate z* (LM)", _z(lm.theta, names), paper["z*"], "rad, m, m/s"),
        (f"{label}: eps(z0)", f"{lm.cost_start:.3g}", paper["e0"], "m^2"),
        (f"{label}: eps(z*) LM / steepest descent", f"{lm.cost:.4g} / {sd.cost:.4g}", paper["e*"], "m^2"),
        (f"{label}: eps(truth)", f"{cost(data.truth, data):.4g}", paper["et"], "m^2"),
        (f"{label}: evaluations LM / steepest descent (converged?)",
         f"{lm.evaluations} / {sd.evaluations} ({'yes' if sd.converged else 'no'})", "-", "-"),
    ]
    for i, name in enumerate(names[3:], start=3):
        rows.append((f"{label}: {name} (LM +- standard error; steepest descent)",
                     f"{lm.theta[i]:.3f} +- {lm.std_errors[i]:.3f}; {sd.theta[i]:.3f}", paper[name],
                     UNITS[name]))
    return rows


def run_fit(out_dir: Path, quick: bool) -> ReproResult:
    """Figs. 2 and 3 with the paper's noise; the full run adds Fig. 3 noise-free and at 0.02 m."""
    figures, rows, notes = [], [], []
    truth, guess = paper_problem(False)
    data = synthetic(truth, False, 40, 0.2, seed=1)
    lm = fit_lm(data, guess)
    sd = fit_steepest(data, guess, max_iterations=40 if quick else 300)
    rows += _fit_rows("Fig. 2", data, guess, lm, sd, {"z": "(4.7, 1.6, 1.0)", "z0": "(8.0, 1.5, 1.1)",
                                                       "z*": "(4.6, 1.6, 1.1)", "e0": "3.0e-1", "e*": "3.9e-2",
                                                       "et": "4.0e-2"})
    figures.append(fit_figure(data, guess, [lm, sd], out_dir / "seed002_fig2.png",
                              "Fig. 2: initial condition from 40 noisy heights (20 Hz)"))
    truth, guess = paper_problem(True)
    n = 120 if quick else 400
    data = synthetic(truth, True, n, 0.2, seed=1)
    lm = fit_lm(data, guess)
    sd = fit_steepest(data, guess, max_iterations=100_000, max_evaluations=lm.evaluations)
    paper = {"z": "(4.7, 1.6, 1.0)", "z0": "(8.0, 1.5, 1.1)", "z*": "(4.8, 1.6, 1.2)", "e0": "3.9e-1",
             "e*": "4.19e-2", "et": "4.22e-2", "m": "0.95 (truth 1)", "k": "10.1 (truth 10)", "b": "5.2 (truth 5)",
             "a": "2.0 (truth 2)"}
    rows += _fit_rows(f"Fig. 3 (N = {n})", data, guess, lm, sd, paper)
    figures.append(fit_figure(data, guess, [lm, sd], out_dir / "seed002_fig3.png",
                              f"Fig. 3: initial condition and (m, k, b, a) from {n} noisy heights"))
    if not quick:
        for noise in (0.0, 0.02):
            fit = fit_lm(synthetic(truth, True, 400, noise, seed=1), guess)
            err = np.abs(fit.theta[3:] / truth[3:] - 1)
            rows.append((f"Fig. 3 noise {noise:g} m, N = 400: |relative error| of m, k, b, a",
                         " / ".join(f"{e:.1e}" for e in err), "-", "-"))
    notes += ["noise: the paper's 'variance 0.2' gives its cost at the truth (4.0e-2) only as standard deviation "
              "0.2 m, which is what is used",
              "steepest descent (Armijo, alpha 0.1, beta 0.8, forward-difference gradient) is given the same number "
              "of simulations LM used; on Fig. 3 it is still far from the minimum there",
              "the estimate may come out as (t + T, P^-1(zeta)), the same trajectory one period later; z* is "
              "reported with sigma in [pi, 3 pi)"]
    return ReproResult(rows, figures, notes)


EXPERIMENTS: dict[str, Experiment] = {
    "seed002-hopper-orbit": Experiment("seed002-hopper-orbit",
                                       "Burden et al.: the hopper's fixed point and eigenvalues, relaxed Euler and "
                                       "accurate", run_orbit),
    "seed002-hopper-fit": Experiment("seed002-hopper-fit",
                                     "Burden et al. Figs. 2-3: prediction-error identification, LM and steepest "
                                     "descent", run_fit),
}
