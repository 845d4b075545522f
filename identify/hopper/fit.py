"""Prediction-error identification of the hopper near its periodic orbit (seed 002 sec. 4.4-4.5, Figs. 2-3).

The unknowns are a point of the reduced smooth subsystem, written as a time ``t >= 0`` (s) and a point
``zeta = (y, y')`` of the Poincare section it is reached from (seed 002 eq. 5), optionally with parameters
among (m, k, b, a) (Fig. 3). The data are body heights ``eta_i`` (m) at ``t + i tau``, i = 1..N; the cost is the
average prediction error (seed 002 eq. 3)::

    eps(theta) = (1/N) sum_i (y(t + i tau; zeta, params) - eta_i)^2

Two minimisers:

- ``fit_lm`` (the default): Levenberg-Marquardt (scipy ``least_squares(method="lm")``) on growing windows of
  the data (the first two cycles, then longer, each warm-started from the last), so the long record's many
  local minima in the phase are avoided; forward-difference Jacobians of the compiled simulation.
- ``fit_steepest``: the paper's method, steepest descent with Armijo steps (alpha 0.1, beta 0.8; Bertsekas
  1999) and a forward-difference gradient (step 1e-6), on the whole record.

Standard errors come from the Jacobian at the estimate: ``cov = s^2 (J^T J)^-1`` with ``s^2 = SSR / (N - p)``.
Seed 002 says the noise has "variance 0.2"; its cost at the truth (4.0e-2) is what standard deviation 0.2 gives,
so the synthetic data here use standard deviation ``noise_m``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from scipy.optimize import least_squares

from hapticam.errors import IdentificationError
from hapticam.identify.hopper.model import HopperParams, flow_from_section, sample_heights

#: identifiable parameters of Fig. 3 (mu, l0, omega, g known; seed 002 Fig. 3 caption)
PARAMS = ("m", "k", "b", "a")
#: seed 002 sec. 4.5: samples at 20 Hz
TAU_S = 0.05


@dataclass
class HopperData:
    """Body heights ``y_m`` at ``t_s = t_start + tau i`` (i = 1..N), with the truth that generated them."""

    tau_s: float
    y_m: np.ndarray
    truth: np.ndarray                 # (t, y, y', then the fitted parameters)
    names: tuple[str, ...]
    params: HopperParams              # the true parameters (known ones are used as such by the fit)
    y_clean_m: np.ndarray
    noise_m: float


def theta_names(fit_params: bool) -> tuple[str, ...]:
    """Unknowns: ``t`` (s), ``y`` (m), ``yd`` (m/s), then m (kg), k (N/m), b (N s/m), a (m) when ``fit_params``."""
    return ("t", "y", "yd") + (PARAMS if fit_params else ())


def split(theta: np.ndarray, names: tuple[str, ...], base: HopperParams) -> tuple[float, np.ndarray, HopperParams]:
    """``(t, zeta, params)`` from an unknown vector."""
    values = dict(zip(names, theta))
    q = base.with_values(**{n: float(values[n]) for n in PARAMS if n in values})
    return float(theta[0]), np.array([theta[1], theta[2]]), q


def predict(theta: np.ndarray, names: tuple[str, ...], base: HopperParams, tau_s: float, n: int,
            h: float = 2e-3) -> np.ndarray:
    """Predicted heights (m) at ``t + tau i``, i = 1..n; the start time is held at >= -tau (the flow from the
    section runs forward only)."""
    t, zeta, q = split(theta, names, base)
    t = max(t, -0.999 * tau_s)
    return sample_heights(q, zeta, t + tau_s * np.arange(1, n + 1), h)


def synthetic(truth: np.ndarray, fit_params: bool, n: int, noise_m: float, seed: int = 0,
              base: HopperParams | None = None, tau_s: float = TAU_S) -> HopperData:
    """Heights simulated accurately (RK4 h = 1e-4 s, events located) from ``truth`` plus Gaussian noise of
    standard deviation ``noise_m``."""
    base = base or HopperParams()
    names = theta_names(fit_params)
    truth = np.asarray(truth, dtype=float)
    _, _, q = split(truth, names, base)
    clean = predict(truth, names, base, tau_s, n, h=1e-4)
    noisy = clean + np.random.default_rng(seed).normal(0.0, noise_m, n)
    return HopperData(tau_s, noisy, truth, names, q, clean, noise_m)


def cost(theta: np.ndarray, data: HopperData, base: HopperParams | None = None, h: float = 2e-3) -> float:
    """Average prediction error eps (m^2; seed 002 eq. 3)."""
    r = predict(theta, data.names, base or data.params, data.tau_s, data.y_m.size, h) - data.y_m
    return float(np.mean(r * r))


@dataclass
class HopperFit:
    """An estimate ``theta`` (names in ``names``), its cost (m^2), standard errors, and how the minimiser went."""

    method: str
    names: tuple[str, ...]
    theta: np.ndarray
    cost: float
    cost_start: float
    std_errors: np.ndarray
    iterations: int
    evaluations: int
    converged: bool
    history: list[tuple[int, float]] = field(default_factory=list)  # (evaluations so far, cost on the whole record)

    def as_dict(self) -> dict:
        return {"method": self.method, "theta": dict(zip(self.names, self.theta.tolist())),
                "std_errors": dict(zip(self.names, self.std_errors.tolist())), "cost": self.cost,
                "cost_start": self.cost_start, "iterations": self.iterations, "evaluations": self.evaluations,
                "converged": self.converged}


def standard_errors(jac: np.ndarray, resid: np.ndarray) -> np.ndarray:
    """sqrt(diag(s^2 (J^T J)^-1)), s^2 = SSR / (N - p): the parameters' standard errors from the Jacobian."""
    n, p = jac.shape
    s2 = float(resid @ resid) / max(n - p, 1)
    return np.sqrt(np.diag(np.linalg.pinv(jac.T @ jac)) * s2)


def _windows(n: int, tau_s: float, period_s: float) -> list[int]:
    """Growing windows: two cycles, then doubling, then everything (seed 002: two cycles identify the state)."""
    w = max(int(round(2 * period_s / tau_s)), 4)
    out = []
    while w < n:
        out.append(w)
        w *= 2
    return out + [n]


def _to_search(theta: np.ndarray, names: tuple[str, ...]) -> np.ndarray:
    """Search coordinates: (t, y, y') as they are, the positive parameters by their logarithms."""
    x = np.asarray(theta, dtype=float).copy()
    x[3:] = np.log(x[3:])
    return x


def _from_search(x: np.ndarray) -> np.ndarray:
    theta = x.copy()
    theta[3:] = np.exp(x[3:])
    return theta


def _phase_starts(safe: Callable, x: np.ndarray, n0: int, period_s: float, max_nfev: int,
                  starts: int) -> np.ndarray:
    """The best state fit on the first ``n0`` samples over start times t0 + j T / starts (mod T), parameters
    held: the phase is the one unknown LM cannot find from far (the cost is periodic in it)."""
    best, best_cost = x, np.inf
    for j in range(max(starts, 1)):
        start = x[:3].copy()
        start[0] = (x[0] + j * period_s / max(starts, 1)) % period_s

        def state_only(xs: np.ndarray) -> np.ndarray:
            return safe(np.concatenate([xs, x[3:]]), n0)

        sol = least_squares(state_only, start, method="lm", diff_step=1e-7, max_nfev=max_nfev, xtol=1e-12,
                            ftol=1e-12, x_scale="jac")      # given: scipy 1.16 changed lm's default scaling
        if sol.cost < best_cost:
            best, best_cost = np.concatenate([sol.x, x[3:]]), sol.cost
    return best


def fit_lm(data: HopperData, theta0: np.ndarray, base: HopperParams | None = None, h: float = 2e-3,
           max_nfev: int = 400, residuals: Callable | None = None, phase_starts: int = 8) -> HopperFit:
    """Levenberg-Marquardt on growing windows (the state first, from ``phase_starts`` start times spread over
    one period with the parameters held, on the first window), the parameters by their logarithms (they stay positive);
    ``residuals(theta, n)`` may replace the compiled prediction (the benchmark's peer passes its solve_ivp one).
    A trial point where the hopper cannot be simulated gets residuals of 1e3 m, so the step is refused."""
    base = base or data.params
    names = data.names
    if residuals is None:
        def residuals(theta: np.ndarray, n: int) -> np.ndarray:
            return predict(theta, names, base, data.tau_s, n, h) - data.y_m[:n]

    calls = 0

    def safe(x: np.ndarray, n: int) -> np.ndarray:
        nonlocal calls
        calls += 1
        try:
            r = residuals(_from_search(x), n)
        except (IdentificationError, OverflowError):
            return np.full(n, 1e3)
        return r if np.all(np.isfinite(r)) else np.full(n, 1e3)

    x = _to_search(theta0, names)
    cost_start = float(np.mean(safe(x, data.y_m.size) ** 2))
    history, windows, sol = [(1, cost_start)], 0, None
    sizes = _windows(data.y_m.size, data.tau_s, base.period_s)
    x = _phase_starts(safe, x, sizes[0], base.period_s, max_nfev, phase_starts)
    for n in sizes:
        sol = least_squares(lambda xx: safe(xx, n), x, method="lm", diff_step=1e-7, max_nfev=max_nfev,
                            xtol=1e-12, ftol=1e-12, x_scale="jac")
        x = sol.x
        windows += 1
        history.append((calls + 1, float(np.mean(safe(x, data.y_m.size) ** 2))))
    theta = _from_search(x)
    se = standard_errors(sol.jac, sol.fun)
    se[3:] *= theta[3:]                                       # d p = p d(log p)
    return HopperFit("levenberg-marquardt", names, theta, float(np.mean(sol.fun ** 2)), cost_start, se, windows,
                     calls, bool(sol.status > 0), history)


def _gradient(f: Callable[[np.ndarray], float], x: np.ndarray, fx: float, d: float) -> np.ndarray:
    g = np.empty_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = d
        g[i] = (f(x + e) - fx) / d                              # forward difference (seed 002 sec. 4.5)
    return g


def fit_steepest(data: HopperData, theta0: np.ndarray, base: HopperParams | None = None, h: float = 2e-3,
                 max_iterations: int = 100, grad_tol: float = 1e-4, alpha: float = 0.1, beta: float = 0.8,
                 max_evaluations: int | None = None) -> HopperFit:
    """Steepest descent with Armijo steps beta^j (seed 002 sec. 4.5; Bertsekas 1999): accept the first j with
    eps(x) - eps(x - beta^j g) >= alpha beta^j |g|^2; stop when |g| < ``grad_tol`` (converged) or out of budget."""
    base = base or data.params
    evals = 0

    def f(x: np.ndarray) -> float:
        nonlocal evals
        evals += 1
        try:
            return cost(x, data, base, h)
        except IdentificationError:
            return np.inf

    x = np.asarray(theta0, dtype=float).copy()
    fx = f(x)
    start, history, converged, it = fx, [(1, fx)], False, 0
    budget = max_evaluations or np.inf
    for it in range(1, max_iterations + 1):
        g = _gradient(f, x, fx, 1e-6)
        if np.linalg.norm(g) < grad_tol:
            converged = True
            break
        for j in range(1, 101):
            step = beta ** j
            fn = f(x - step * g)
            if np.isfinite(fn) and fx - fn >= alpha * step * float(g @ g):     # Armijo rule
                x, fx = x - step * g, fn
                break
        history.append((evals, fx))
        if evals >= budget:
            break
    return HopperFit("steepest-descent-armijo", data.names, x, fx, start, np.full(x.size, np.nan), it, evals,
                     converged, history)


def state_at(theta: np.ndarray, names: tuple[str, ...], base: HopperParams) -> np.ndarray:
    """The paper's coordinates ``z = (sigma rad, y m, y' m/s)`` of the unknowns: the clock phase and the body
    state at the start time t, flowing from zeta (seed 002 sec. 4.5)."""
    t, zeta, q = split(theta, names, base)
    _, s = flow_from_section(q, zeta, max(t, 0.0))
    return np.array([np.pi + q.omega * t, s[0], s[1]])


def from_paper_coordinates(sigma: float, y: float, yd: float, params: HopperParams) -> np.ndarray:
    """``(t, zeta)`` whose flow reaches the body state ``(y m, y' m/s)`` at clock phase ``sigma`` (rad; t =
    (sigma - pi) / omega, seed 002 Figs. 2-3 give initial conditions this way), by least squares on zeta."""
    t = (sigma - np.pi) / params.omega
    if t < 0:
        raise IdentificationError(f"clock phase {sigma} rad is before the section (pi)")

    def miss(zeta: np.ndarray) -> np.ndarray:
        try:
            return flow_from_section(params, zeta, t)[1][:2] - (y, yd)
        except IdentificationError:
            return np.full(2, 1e3)

    sol = least_squares(miss, np.array([1.9, 1.9]), xtol=1e-14, ftol=1e-14)
    if np.max(np.abs(sol.fun)) > 1e-8:
        raise IdentificationError(f"no section point reaches (y, y') = ({y}, {yd}) at phase {sigma} rad")
    return np.array([t, sol.x[0], sol.x[1]])


#: seed 002 Figs. 2-3: the true initial condition z = (sigma, y, y') and parameters (m, k, b, a), and the guesses
PAPER_TRUE_Z, PAPER_TRUE_PARAMS = (4.7, 1.6, 1.0), (1.0, 10.0, 5.0, 2.0)
PAPER_GUESS_Z, PAPER_GUESS_PARAMS = (8.0, 1.5, 1.1), (0.97, 11.2, 5.3, 2.3)


def paper_problem(fit_params: bool, base: HopperParams | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(truth, guess)`` unknown vectors of seed 002 Fig. 2 (``fit_params`` False) or Fig. 3 (True), each
    initial condition converted from the paper's (sigma, y, y') by :func:`from_paper_coordinates`."""
    base = base or HopperParams()
    if not fit_params:
        return (from_paper_coordinates(*PAPER_TRUE_Z, base), from_paper_coordinates(*PAPER_GUESS_Z, base))
    out = []
    for z, values in ((PAPER_TRUE_Z, PAPER_TRUE_PARAMS), (PAPER_GUESS_Z, PAPER_GUESS_PARAMS)):
        q = base.with_values(**dict(zip(PARAMS, values)))
        out.append(np.concatenate([from_paper_coordinates(*z, q), values]))
    return out[0], out[1]
