"""Grey-box identification of the pendulum's joint friction that works, and the naive baseline.

What can be identified
----------------------
With the normal force ``F_n`` constant (:data:`.paper.FN_N`), eq. 5 acts on the motion only through four
combinations per joint (:func:`.paper.combinations`)::

    c1 = F_n mu_d (N m),  c2 = F_n (mu_s - mu_d) (N m),  v_t (rad/s),  c4 = mu_v tanh(4 F_n / F_nt) (N m s/rad)

``mu_v`` and ``F_nt`` enter only as ``c4`` (and with ``F_nt << F_n`` the tanh is 1), so ``F_nt`` is fixed
at its nominal value and ``mu_v = c4 / tanh(4 F_n / F_nt)`` reported; ``mu_d``, ``mu_s`` follow from
``c1``, ``c2`` only because ``F_n`` is taken as known. Eight parameters are fitted.

Method (:func:`fit_greybox`): multiple-shooting output error. The record is cut into segments
(:data:`SEGMENT_S`); each is simulated from its own initial state by the compiled RK4 of :mod:`.furuta`
with its forward sensitivities by the segment's initial state and by the eight parameters
(:mod:`.shooting`: the exact derivative of the RK4 map near friction reversals, a midpoint-Jacobian step
elsewhere). The unknowns are the eight combinations (as logarithms, so they stay positive) and every
segment's initial state (started at the measured state); residuals are the
angles and, if given, the measured rates, each divided by its noise. The initial states are nuisance
parameters: a Levenberg-Marquardt iteration eliminates them by the Schur complement at each step (the
structure bundle adjustment exploits), so one step costs one simulation plus 8 x 8 algebra. A start comes
from equation error on the momentum balance (:func:`equation_error_guess`). On seed 003's 35 s record the
fit takes three simulations. Standard errors: ``cov = s^2 (B^T (I - P_A) B)^-1`` (the initial states
eliminated) with ``s^2`` the residual variance.

Why not a reduced problem (initial states fixed or projected out): the measured initial state's noise over
a 0.5 s segment swamps the Stribeck terms (fixed states bias every estimate; residual variance ~5x the
noise); projecting them out at the measured state drops derivative terms as large as the weak parameters'
own (variable projection's Kaufman Jacobian is exact only where the initial states are optimal). And
``scipy.optimize.least_squares`` (``solver="scipy"``: ``trf`` with ``lsmr`` on the sparse Jacobian of the
same sensitivities) reaches the same optimum (within 0.06 standard errors on seed 003's record) after ~20
simulations where this needs three: 15-40x slower here (``hapticam bench identify`` measures it).

The naive baseline (:func:`fit_naive`) is what seed 003 compares with: all ten parameters of eq. 5 by a
general-purpose optimiser (Nelder-Mead on their logarithms) on the simulation error of one simulation over
the whole record from the measured initial state.

References
----------
Wadi, Mukhopadhyay & Romdhane (seed 003), eqs. 5-10, 53, sec. IV-C.
Golub, G., Pereyra, V. (1973), SIAM J. Numer. Anal. 10(2), 413-432 (variable projection).
Kaufman, L. (1975), BIT 15, 49-57 (the projected Jacobian).
Bock, H. G., Plitt, K. J. (1984), IFAC Proc. 17(2), 1603-1608 (multiple shooting).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.optimize import minimize

from hapticam.errors import IdentificationError
from hapticam.identify.friction import paper
from hapticam.identify.friction.furuta import coefficients, simulate_kernel
from hapticam.identify.friction.shooting import NC, shooting_kernel, window_regressors

SEGMENT_S = 0.5  # multiple-shooting segment length (s) with measured rates
SEGMENT_S_ANGLES = 2.0  # ... with angles only: the rates at each segment's start are unknowns, longer segments
PILOT_STRIDE = 4  # with pilot=True, a fit on every 4th segment gives the full fit its start
MAX_LOG_STEP = 3.0  # largest change of a log-parameter in one step (a factor of 20)
CHI2_TOL = 0.1  # stop when Gauss-Newton predicts a cost decrease below this (noise units): within 0.3 SE
COMBO_NAMES = ("c1_0", "c2_0", "v_t0", "c4_0", "c1_1", "c2_1", "v_t1", "c4_1")
COMBO_UNITS = ("N m", "N m", "rad/s", "N m s/rad") * 2


@dataclass
class GreyBoxFit:
    """Result of :func:`fit_greybox`: the eight combinations (order :data:`COMBO_NAMES`, units
    :data:`COMBO_UNITS`), their standard errors, the ten parameters of eq. 5 with ``F_nt`` fixed, the
    fitted initial state of the record, cost, time and what was fixed."""

    combos: np.ndarray
    std_errors: np.ndarray
    params10: np.ndarray
    x0: np.ndarray
    cost: float
    sigma2: float
    time_s: float
    n_segments: int
    nfev: int
    x0_segments: np.ndarray = field(default_factory=lambda: np.empty((0, 4)))
    segment_starts: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    fixed: dict[str, float] = field(default_factory=dict)


class _Problem:
    """Multiple shooting over all parameters ``v = [theta (8), xi (4 per segment)]``: ``combos = scale
    exp(theta)``, segment initial states ``x0s = base + xi sigma``. An evaluation simulates every segment
    with its sensitivities and keeps each segment's 13 x 13 Gram matrix (:func:`.shooting.shooting_kernel`):
    the exact Gauss-Newton model of the full cost."""

    def __init__(self, meas: np.ndarray, weights: np.ndarray, base: np.ndarray, starts: np.ndarray, h: float,
                 scale: np.ndarray, xscale: np.ndarray, squared: bool) -> None:
        self.meas, self.weights, self.base, self.starts, self.h = meas, weights, base, starts, h
        self.scale, self.xscale, self.squared = scale, xscale, squared
        self.c = coefficients("lagrangian")
        self.nseg = starts.size - 1
        self.G = np.empty((self.nseg, 13, 13))
        self._none = np.empty(0)
        self._none2 = np.empty((0, NC))
        self.failed = False
        self.evaluations = 0

    def x0s(self, v: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(self.base + v[8:].reshape(-1, 4) * self.xscale)

    def evaluate(self, v: np.ndarray) -> None:
        self.evaluations += 1
        combos = self.scale * np.exp(v[:8])  # c = scale exp(theta): positive, dc/dtheta = c
        status = shooting_kernel(self.c, combos, self.squared, self.x0s(v), self.starts, self.h, self.meas,
                                 self.weights, self.xscale, self._none, self._none2, self.G)
        self.failed = status != 0

    def residuals_jacobian(self, v: np.ndarray) -> tuple[np.ndarray, Any]:
        """Weighted residuals and their sparse Jacobian by ``v`` (each row: the eight log-combinations and
        its segment's four initial-state unknowns), for :func:`scipy.optimize.least_squares`."""
        from scipy.sparse import csr_matrix

        self.evaluations += 1
        rows, m = self.meas.size, self.meas.shape[1]
        res, jac = np.empty(rows), np.empty((rows, NC))
        combos = self.scale * np.exp(v[:8])
        if shooting_kernel(self.c, combos, self.squared, self.x0s(v), self.starts, self.h, self.meas, self.weights,
                           self.xscale, res, jac, np.empty((0, 13, 13))) != 0:
            raise IdentificationError("grey-box: the model cannot be simulated at a trial point")
        seg = np.repeat(np.arange(self.nseg), np.diff(self.starts) * m)
        cols = np.concatenate([np.broadcast_to(np.arange(8), (rows, 8)), 8 + 4 * seg[:, None] + np.arange(4)], axis=1)
        data = np.concatenate([jac[:, 4:] * combos, jac[:, :4] * self.xscale], axis=1)  # d/dtheta = c d/dc
        J = csr_matrix((data.ravel(), cols.ravel(), np.arange(0, NC * rows + 1, NC)), shape=(rows, v.size))
        return res, J


def _scipy_least_squares(prob: _Problem, v: np.ndarray) -> tuple[np.ndarray, int, bool]:
    """The same problem by :func:`scipy.optimize.least_squares` (``trf``, ``lsmr`` on the sparse Jacobian of
    the same sensitivities): the peer :func:`_levenberg_marquardt` is measured against. Returns
    ``(v, iterations, converged)``; leaves the Gram matrices of the solution in ``prob``."""
    from scipy.optimize import least_squares

    cache: dict[bytes, tuple[np.ndarray, Any]] = {}

    def both(x: np.ndarray) -> tuple[np.ndarray, Any]:
        key = x.tobytes()
        if key not in cache:
            cache.clear()
            cache[key] = prob.residuals_jacobian(x)
        return cache[key]

    sol = least_squares(lambda x: both(x)[0], v, jac=lambda x: both(x)[1], method="trf", tr_solver="lsmr",
                        x_scale="jac", ftol=1e-12, xtol=1e-10, gtol=1e-10, max_nfev=200)
    prob.evaluate(sol.x)
    return sol.x, int(sol.nfev), bool(sol.status > 0 and not prob.failed)


def _normal_blocks(G: np.ndarray) -> tuple[np.ndarray, ...]:
    """Gauss-Newton blocks from the segments' Gram matrices of ``[A | B | r]``: per segment ``U = A^T A``
    (4x4), ``W = A^T B`` (4x8), ``ga = A^T r``; summed ``V = B^T B`` (8x8), ``gb = B^T r``; the cost ``|r|^2``."""
    return (G[:, :4, :4], G[:, :4, 4:12], G[:, :4, 12], G[:, 4:12, 4:12].sum(axis=0), G[:, 4:12, 12].sum(axis=0),
            float(G[:, 12, 12].sum()))


def _levenberg_marquardt(prob: "_Problem", v: np.ndarray, max_iter: int = 40,
                         chi2_tol: float = CHI2_TOL) -> tuple[np.ndarray, int, bool]:
    """Levenberg-Marquardt over all parameters with the segments' initial states eliminated by the Schur
    complement at every step (as in bundle adjustment: Triggs et al. 2000), Marquardt's diagonal scaling and
    Nielsen's damping update. One simulation per iteration. Stops, without simulating again, when the
    (nearly undamped) Gauss-Newton model predicts that the next step lowers the cost by less than
    ``chi2_tol`` (noise units): that predicted decrease is the squared distance to the model's optimum in
    standard errors, so every parameter is then within ``sqrt(chi2_tol)`` standard errors of it (usually
    far less: the distance spreads over all the unknowns); a damped step that predicts so little is taken
    again with less damping, without simulating, before it counts. Returns ``(v, iterations, converged)``:
    not converged when ``max_iter`` iterations ran out first."""
    prob.evaluate(v)
    if prob.failed:
        raise IdentificationError("grey-box: the model cannot be simulated from the initial guess")
    U, W, ga, V, gb, cost = _normal_blocks(prob.G)
    mu, nu, it, converged = 1e-5, 2.0, 0, False
    best_G = prob.G.copy()
    for it in range(1, max_iter + 1):
        da = np.einsum("saa->sa", U) * mu + 1e-12
        Ud = U + np.einsum("sa,ab->sab", da, np.eye(4))
        Ui = np.linalg.inv(Ud)
        S = V + np.diag(np.diag(V) * mu + 1e-12) - np.einsum("sab,sac,scd->bd", W, Ui, W)  # Schur complement
        rhs = -gb + np.einsum("sab,sac,sc->b", W, Ui, ga)
        dth = np.linalg.solve(S, rhs)
        dxi = -np.einsum("sab,sb->sa", Ui, ga + W @ dth)
        step = np.concatenate([dth, dxi.ravel()])
        g = np.concatenate([gb, ga.ravel()])
        # |r|^2 - |r + J step|^2 for (J^T J + mu D) step = -g:  -g.step + mu step^T D step  (Nielsen 1999)
        predicted = -(step @ g) + mu * (np.concatenate([np.diag(V), da.ravel() / mu]) * step) @ step
        trial = v + step
        if not (np.all(np.isfinite(step)) and np.max(np.abs(dth)) < MAX_LOG_STEP):
            mu, nu = mu * nu, nu * 2.0  # a step beyond any plausible change of the parameters: damp more
            continue
        if predicted < chi2_tol:
            if mu <= 1e-3:  # (nearly undamped) Gauss-Newton: the optimum is within sqrt(chi2_tol) standard errors
                converged = True
                break
            mu = max(mu / 10.0, 1e-3)  # a heavily damped step predicts little anywhere: ask Gauss-Newton again
            continue
        prob.evaluate(trial)
        new = _normal_blocks(prob.G) if not prob.failed else None
        gain = min((cost - new[5]) / max(predicted, 1e-300), 10.0) if new is not None else -1.0  # actual / predicted
        if gain > 0.0:
            v, (U, W, ga, V, gb, cost) = trial, new
            best_G = prob.G.copy()
            mu, nu = mu * max(1.0 / 3.0, 1.0 - (2.0 * gain - 1.0) ** 3), 2.0
        else:
            mu, nu = mu * nu, nu * 2.0
    prob.G = best_G
    return v, it, converged


def _validate(t_s: np.ndarray, q_meas: np.ndarray, w_meas: np.ndarray | None) -> tuple[np.ndarray, float]:
    t = np.asarray(t_s, dtype=np.float64)
    q = np.asarray(q_meas, dtype=np.float64)
    if t.ndim != 1 or t.size < 20 or q.shape != (t.size, 2):
        raise IdentificationError(f"grey-box: need t (n >= 20) and angles (n, 2); got {t.shape}, {q.shape}")
    dt = np.diff(t)
    if not (np.all(np.isfinite(t)) and np.all(np.isfinite(q)) and dt[0] > 0 and np.allclose(dt, dt[0], rtol=1e-6)):
        raise IdentificationError("grey-box: t must be finite and uniformly increasing, the angles finite")
    if w_meas is None:
        meas = q
    else:
        w = np.asarray(w_meas, dtype=np.float64)
        if w.shape != q.shape or not np.all(np.isfinite(w)):
            raise IdentificationError("grey-box: the measured rates must be finite, shaped like the angles")
        meas = np.column_stack([q, w])
    return np.ascontiguousarray(meas), float(dt[0])


def _rates(q: np.ndarray, h: float) -> np.ndarray:
    """Angular rates from angles by a 2nd-order Savitzky-Golay derivative over 51 samples (51 ms at
    seed 003's 1 kHz; no rates measured)."""
    from scipy.signal import savgol_filter

    win = min(51, (q.shape[0] // 2) * 2 - 1)
    return savgol_filter(q, win, 2, deriv=1, delta=h, axis=0)


def equation_error_guess(t_s: np.ndarray, q: np.ndarray, w: np.ndarray, window_s: float = 0.05,
                         vt_grid: np.ndarray | None = None) -> np.ndarray:
    """A start for :func:`fit_greybox` by equation error on the momentum balance, no accelerations needed.

    Lagrange's equations in momentum form, ``d/dt (H q') = dT/dq - G - f(q')`` (eqs. 2, 6), integrated
    over windows ``[a, b]`` give per joint ``integral f_j dt = -(p_j(b) - p_j(a)) + integral (dT/dq_j - G_j) dt``,
    linear in ``c1, c2, c4`` for a given ``v_t``: non-negative least squares on a grid of ``v_t`` per joint.
    Velocity noise blurs ``tanh(4 w / v_t)``, so this is a start, not an estimate.
    """
    from scipy.integrate import cumulative_trapezoid
    from scipy.optimize import nnls

    t = np.asarray(t_s, dtype=np.float64)
    c = coefficients("lagrangian")
    s1, k1 = np.sin(q[:, 1]), np.cos(q[:, 1])
    h11, h12 = c[0] + c[1] * s1 * s1, -c[2] * k1  # eq. 7 (+ m2 L1^2)
    p = np.column_stack([h11 * w[:, 0] + h12 * w[:, 1], h12 * w[:, 0] + c[3] * w[:, 1]])  # p = H q'
    dT1 = c[1] * s1 * k1 * w[:, 0] ** 2 + c[2] * s1 * w[:, 0] * w[:, 1]  # dT/dtheta1 (dT/dtheta0 = 0)
    g0 = c[4] * np.sin(q[:, 0]) - c[5] * s1 * np.cos(q[:, 0])  # eq. 9
    g1 = -c[6] * np.sin(q[:, 0]) * k1 + c[7] * s1
    rhs = np.column_stack([-g0, dT1 - g1])
    step = max(int(round(window_s / (t[1] - t[0]))), 2)
    idx = np.arange(0, t.size, step)

    def window(x: np.ndarray) -> np.ndarray:
        return np.diff(cumulative_trapezoid(x, t, initial=0.0, axis=0)[idx], axis=0)

    grid = np.geomspace(1e-3, 0.1, 21) if vt_grid is None else np.asarray(vt_grid, dtype=np.float64)
    out = np.empty(8)
    for j in range(2):
        y = -np.diff(p[idx, j]) + window(rhs[:, j])
        best = (np.inf, None, None)
        wj, A = np.ascontiguousarray(w[:, j], dtype=np.float64), np.empty((idx.size - 1, 3))
        for vt in grid:
            window_regressors(wj, float(t[1] - t[0]), idx, float(vt), A)  # tanh(4u), u/(u^2/4+3/4)^2, w
            sol, _ = nnls(A, y)  # c1, c2, c4 >= 0  (eq. 5)
            rn = float(np.linalg.norm(A @ sol - y))   # computed: some scipy releases return a wrong rnorm
            if rn < best[0]:
                best = (rn, vt, sol)
        _, vt, sol = best
        out[4 * j:4 * j + 4] = (max(sol[0], 1e-9), max(sol[1], 1e-3 * max(sol[0], 1e-9)), vt, max(sol[2], 1e-9))
    return out


def _smooth(x: np.ndarray, h: float) -> np.ndarray:
    """Each channel smoothed by a cubic Savitzky-Golay filter over 51 samples (51 ms at 1 kHz; a better
    start for the segments' initial states than single noisy samples; the fit moves them to their optimum
    anyway)."""
    from scipy.signal import savgol_filter

    win = min(51, (x.shape[0] // 2) * 2 - 1)
    return savgol_filter(x, win, 3, axis=0)


def fit_greybox(t_s: np.ndarray, q_meas: np.ndarray, w_meas: np.ndarray | None = None,
                guess: np.ndarray | None = None, sigma_q: float = paper.NOISE_ANGLE_RAD,
                sigma_w: float = paper.NOISE_RATE_RADPS, segment_s: float | None = None,
                squared: bool = True, pilot: bool | None = None, solver: str = "lm") -> GreyBoxFit:
    """Identify the eight friction combinations from measured angles (and rates) of the passive pendulum.

    ``guess`` is eight combinations (default: :func:`equation_error_guess` from the data). ``q_meas`` and
    ``w_meas`` (n, 2) rad, rad/s at uniform times ``t_s``; without rates the segments start from
    Savitzky-Golay rates and only the angles are fitted. ``sigma_q``, ``sigma_w``: the noise (weights).
    ``segment_s``: the shooting segments' length (default :data:`SEGMENT_S`, angles only
    :data:`SEGMENT_S_ANGLES`). ``pilot``: first fit every :data:`PILOT_STRIDE`-th segment (for a poor
    ``guess``; default: only with angles only, whose start from differentiated angles is poorer).
    ``solver``: ``"lm"`` (the Schur-complement Levenberg-Marquardt, default) or ``"scipy"``
    (:func:`scipy.optimize.least_squares` on the same problem and sensitivities, the peer it is measured
    against).
    """
    t0 = time.perf_counter()
    meas, h = _validate(t_s, q_meas, w_meas)
    n = meas.shape[0]
    states = meas if meas.shape[1] == 4 else np.column_stack([meas, _rates(meas, h)])
    smooth = _smooth(states, h)
    if guess is None:
        guess = equation_error_guess(t_s, smooth[:, :2], smooth[:, 2:])
    guess = np.asarray(guess, dtype=np.float64)
    if guess.shape != (8,) or not np.all(np.isfinite(guess)) or np.any(guess < 0) or np.any(guess[[2, 6]] <= 0):
        raise IdentificationError("grey-box: guess must be 8 finite combinations >= 0 with v_t > 0")
    if solver not in ("lm", "scipy"):
        raise IdentificationError(f"grey-box: solver must be 'lm' or 'scipy', got {solver!r}")
    if segment_s is None:
        segment_s = SEGMENT_S if w_meas is not None else SEGMENT_S_ANGLES
    for name, value in (("sigma_q", sigma_q), ("sigma_w", sigma_w), ("segment_s", segment_s)):
        if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
            raise IdentificationError(f"grey-box: {name} must be a positive number, got {value!r}")
    pilot = w_meas is None if pilot is None else pilot
    seg = max(int(round(segment_s / h)), 10)
    if n < seg:
        raise IdentificationError(f"grey-box: the record ({n} samples, {n * h:g} s) is shorter than one shooting "
                                  f"segment ({seg} samples, {seg * h:g} s): record longer or give a shorter segment_s")
    starts = np.append(np.arange(0, n - seg // 2, seg), n).astype(np.int64)
    x0s = np.ascontiguousarray(smooth[starts[:-1]])  # segment starts: locally smoothed states
    weights = np.array([1 / sigma_q, 1 / sigma_q, 1 / sigma_w, 1 / sigma_w][:meas.shape[1]])
    scale = np.maximum(np.abs(guess), 1e-12)
    xscale = np.array([sigma_q, sigma_q, sigma_w, sigma_w])  # initial-state unknowns in noise units
    theta, iterations, nfev = np.zeros(8), 0, 0
    for stride in ((PILOT_STRIDE, 1) if pilot else (1,)):  # a pilot fit on every PILOT_STRIDE-th segment
        sub = np.arange(0, starts.size - 1, stride)
        keep = np.concatenate([np.arange(starts[i], starts[i + 1]) for i in sub])
        st = np.concatenate([[0], np.cumsum(starts[sub + 1] - starts[sub])]).astype(np.int64)
        prob = _Problem(np.ascontiguousarray(meas[keep]), weights, np.ascontiguousarray(x0s[sub]), st, h, scale,
                        xscale, squared)
        solve = _levenberg_marquardt if solver == "lm" else _scipy_least_squares
        v, its, converged = solve(prob, np.concatenate([theta, np.zeros(4 * sub.size)]))
        theta, iterations, nfev = v[:8], iterations + its, nfev + prob.evaluations
    if not converged:
        raise IdentificationError(f"grey-box: the fit did not converge in {iterations} iterations ({nfev} "
                                  "simulations); start nearer (guess) or with a pilot fit (pilot=True)")
    U, W, _, V, _, rss = _normal_blocks(prob.G)
    info = V - np.einsum("sab,sac,scd->bd", W, np.linalg.inv(U), W)  # theta's information, initial states eliminated
    dof = max(meas.size - 8 - 4 * prob.nseg, 1)
    s2 = rss / dof
    combos = scale * np.exp(v[:8])
    cov = s2 * np.linalg.pinv(info)  # of theta = log(c / scale)
    se = combos * np.sqrt(np.maximum(np.diag(cov), 0.0))  # dc = c dtheta
    x0_segments = prob.x0s(v)
    return GreyBoxFit(combos=combos, std_errors=se, params10=paper.parameters_from_combinations(combos),
                      x0=x0_segments[0].copy(), cost=0.5 * rss, sigma2=s2,
                      time_s=time.perf_counter() - t0, n_segments=starts.size - 1, nfev=nfev,
                      x0_segments=x0_segments, segment_starts=starts,
                      fixed={"F_nt0": float(paper.TRUTH_FNT[0]), "F_nt1": float(paper.TRUTH_FNT[1]),
                             "F_n0_N": float(paper.FN_N[0]), "F_n1_N": float(paper.FN_N[1])})


@dataclass
class NaiveFit:
    """Result of :func:`fit_naive`: the ten parameters (order :data:`.paper.PARAM_NAMES`), cost, time."""

    params10: np.ndarray
    cost: float
    time_s: float
    nfev: int


def fit_naive(t_s: np.ndarray, q_meas: np.ndarray, x0: np.ndarray, guess10: np.ndarray | None = None,
              max_nfev: int = 2000, squared: bool = True) -> NaiveFit:
    """All ten parameters by Nelder-Mead (on their logarithms) on the simulation error of one simulation
    over the whole record from the measured initial state ``x0``: the baseline of seed 003 sec. IV-C."""
    t0 = time.perf_counter()
    meas, h = _validate(t_s, q_meas, None)
    guess10 = paper.TABLE3_GUESS if guess10 is None else np.asarray(guess10, dtype=np.float64)
    if guess10.shape != (10,) or np.any(~(guess10 > 0)):
        raise IdentificationError("naive fit: guess10 must be 10 positive parameters")
    c = coefficients("lagrangian")
    out = np.empty((meas.shape[0], 4))
    x0 = np.asarray(x0, dtype=np.float64)
    if x0.shape != (4,) or not np.all(np.isfinite(x0)):
        raise IdentificationError("naive fit: x0 must be the 4 finite initial states (rad, rad, rad/s, rad/s)")

    def cost(logz: np.ndarray) -> float:
        z = np.exp(logz)
        if simulate_kernel(c, paper.combinations(z), squared, x0, h, out) != 0:
            return 1e30
        d = out[:, :2] - meas
        return float(np.sum(d * d))  # simulation error (seed 003 sec. IV-C)

    sol = minimize(cost, np.log(guess10), method="Nelder-Mead",
                   options={"maxfev": max_nfev, "xatol": 1e-6, "fatol": 1e-12})
    return NaiveFit(params10=np.exp(sol.x), cost=float(sol.fun), time_s=time.perf_counter() - t0, nfev=sol.nfev)


def fit_percent(x_hat: np.ndarray, x_ref: np.ndarray) -> float:
    """Goodness of fit (%) of seed 003 eq. 53: ``100 (1 - sum (x_hat - x_ref)^2 / sum (x_ref - mean)^2)``."""
    x_ref = np.asarray(x_ref, dtype=np.float64)
    return float(100.0 * (1.0 - np.sum((np.asarray(x_hat) - x_ref) ** 2) / np.sum((x_ref - x_ref.mean()) ** 2)))


def normalised_time(time_s: float, duration_s: float, rate_hz: float) -> float:
    """Seed 003 eq. 54: computation time / (experiment time x sampling frequency) (s per sample)."""
    return time_s / (duration_s * rate_hz)
