"""Benchmark of the hopper's identification (seed 002 Fig. 3) against the fit a Python user would write.

``bench_hopper(quick)`` times, in one run:

- one simulation of the hopper over the record (heights at 20 Hz through every lift-off and landing): the
  compiled RK4 with located events (:func:`.hopper.sample_heights`, h = 2 ms) against ``solve_ivp`` (DOP853,
  rtol 1e-10, atol 1e-12, terminal events, restarted at each reset; :mod:`.hopper_ivp`);
- the fixed point of the Poincare map with its Jacobian (scipy ``root`` and central differences on both);
- the Fig. 3 identification (initial condition and (m, k, b, a), noise 0.2 m; Fig. 2's initial condition alone
  in the quick run): the same Levenberg-Marquardt on
  growing windows with forward-difference Jacobians (:func:`.hopper_fit.fit_lm`), once on the compiled
  simulation and once on solve_ivp's, so only the simulation differs.

Each row gives both times (ours: best of ``repeat``; the slow peer: one run), the ratio peer / ours and how far
the two answers are apart. Absolute times drift on a shared machine; the ratios are the result.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from hapticam.identify.hopper.model import ACCURATE, HopperParams, sample_heights
from hapticam.identify.hopper.fit import fit_lm, paper_problem, split, synthetic
from hapticam.identify.hopper.ivp import poincare_map_ivp, simulate_ivp
from hapticam.identify.timing import best_of as _best

PEER_TOL = {"rtol": 1e-10, "atol": 1e-12}


def _simulation_row(n: int, repeat: int) -> dict:
    q, (truth, _) = HopperParams(), paper_problem(True)
    t = truth[0] + 0.05 * np.arange(1, n + 1)
    zeta = truth[1:3]
    ours_s, y = _best(lambda: sample_heights(q, zeta, t, h=2e-3), repeat)
    peer_s, (y_ivp, _, _) = _best(lambda: simulate_ivp(q, zeta, t, **PEER_TOL), 1)
    return {"name": f"one simulation, {n} heights at 20 Hz", "ours_s": ours_s, "peer_s": peer_s,
            "ratio": peer_s / ours_s, "difference": f"{np.max(np.abs(y - y_ivp)):.1e} m"}


def _orbit_row(repeat: int) -> dict:
    """The same procedure on both maps: scipy ``root`` from (2, 2), then central differences (d = 1e-5)."""
    from scipy.optimize import root

    from hapticam.identify.hopper.model import poincare_map

    q = HopperParams()

    def solve(pmap: Callable[[np.ndarray], np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        z = root(lambda x: pmap(x) - x, [2.0, 2.0], options={"xtol": 1e-12}).x
        d = 1e-5
        J = np.column_stack([(pmap(z + e) - pmap(z - e)) / (2 * d) for e in (np.array([d, 0.0]), np.array([0.0, d]))])
        return z, np.sort_complex(np.linalg.eigvals(J))

    ours_s, (z0, lam0) = _best(lambda: solve(lambda x: poincare_map(q, x, ACCURATE)), repeat)
    peer_s, (z1, lam1) = _best(lambda: solve(lambda x: poincare_map_ivp(q, x, **PEER_TOL)), 1)
    diff = max(np.max(np.abs(z1 - z0)), np.max(np.abs(lam1 - lam0)))
    return {"name": "fixed point and eigenvalues of DP", "ours_s": ours_s, "peer_s": peer_s,
            "ratio": peer_s / ours_s, "difference": f"{diff:.1e}"}


def _fit_row(n: int, repeat: int, fit_params: bool) -> dict:
    truth, guess = paper_problem(fit_params)
    data = synthetic(truth, fit_params, n, 0.2, seed=1)

    def ivp_residuals(theta: np.ndarray, m: int) -> np.ndarray:
        t, zeta, q = split(theta, data.names, data.params)
        t = max(t, -0.999 * data.tau_s)
        y, _, _ = simulate_ivp(q, zeta, t + data.tau_s * np.arange(1, m + 1), **PEER_TOL)
        return y - data.y_m[:m]

    starts = 8 if fit_params else 1           # the quick run starts from the paper's phase only
    ours_s, ours = _best(lambda: fit_lm(data, guess, phase_starts=starts), repeat)
    peer_s, peer = _best(lambda: fit_lm(data, guess, residuals=ivp_residuals, phase_starts=starts), 1)
    rel = np.max(np.abs(peer.theta - ours.theta) / np.maximum(np.abs(ours.theta), 1e-3))
    return {"name": f"Fig. {3 if fit_params else 2} identification (LM, N = {n})", "ours_s": ours_s,
            "peer_s": peer_s, "ratio": peer_s / ours_s, "difference": f"{rel:.1e} rel. (estimates)",
            "evaluations": [ours.evaluations, peer.evaluations], "cost": [ours.cost, peer.cost],
            "theta": ours.theta.tolist(), "std_errors": ours.std_errors.tolist()}


def bench_hopper(quick: bool = False, repeat: int = 3) -> list[dict]:
    """Rows ``{name, ours_s, peer_s, ratio (peer / ours), difference}``. The full run identifies Fig. 3 (the state
    and (m, k, b, a) from 400 heights); quick, Fig. 2 (the state from 40 heights)."""
    n = 40 if quick else 400
    sample_heights(HopperParams(), np.array([1.9, 1.9]), np.array([0.05, 0.1]))  # compile outside the timing
    return [_simulation_row(n, repeat), _orbit_row(repeat), _fit_row(n, repeat, not quick)]


def format_rows(rows: list[dict]) -> str:
    """The benchmark as a text table."""
    lines = ["hopper (seed 002): compiled RK4 with located events vs solve_ivp with events, same algorithms",
             f"{'task':<42}{'ours s':>10}{'solve_ivp s':>13}{'ratio':>9}  difference", "-" * 100]
    for r in rows:
        lines.append(f"{r['name']:<42}{r['ours_s']:>10.4f}{r['peer_s']:>13.3f}{r['ratio']:>9.1f}  {r['difference']}")
    return "\n".join(lines)
