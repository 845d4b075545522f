"""Friction laws fitted by least squares to sliding data, with standard errors (``hapticam identify friction``).

Both product experiments reduce to one regression. Every sample of sliding at speed ``v`` gives::

    y = f(v; law) + X_extra beta                      (force or torque, N or N m)

where ``f`` is the friction law and ``X_extra`` holds what else acts (a spin-down's inertia times its
deceleration, a key's spring as a function of position, a constant sensor bias). Each law is linear in
all its parameters but one shape speed ``s``, so ``s`` is found by variable projection (a log grid, then
a bounded scalar search, each point solved by linear least squares) and the standard errors come from the
full Jacobian at the optimum: ``cov = sigma^2 (J^T J)^-1`` with ``sigma^2 = SSE / (n - p)``.

Laws and what a sliding experiment identifies (constant normal force)
---------------------------------------------------------------------
``coulomb-viscous``: ``f = Fc tanh(v / v_eps) + b v`` (models/friction.py); ``Fc``, ``b`` linear, ``v_eps``
searched. (Rendering needs ``v_eps >= Fc dt / m`` for the lightest mass the device presents; the render
side checks that, not the fit.)

``stribeck`` (Brown & McPhee 2016, seed 003 eq. 5 with its square)::

    f = Fn mu_d tanh(4 v / v_t) + Fn (mu_s - mu_d) (v / v_t) / ((v / v_t)^2 / 4 + 3 / 4)^2 + mu_v tanh(4 Fn / Fnt) v

With a constant normal force only ``Fn mu_d`` (Coulomb level), ``Fn (mu_s - mu_d)`` (the Stribeck term's
peak, reached at ``v = v_t``), ``v_t`` and ``mu_v tanh(4 Fn / Fnt)`` (viscous) are identifiable (seed 003
notes the same per joint). The model is written with ``F_n = 1`` and ``F_nt = F_n / 5``, where
``tanh(4 F_n / F_nt) = tanh(20) = 1`` to double precision, so ``mu_d``, ``mu_s - mu_d`` and ``mu_v`` carry the
three levels directly.

``lugre`` (Canudas de Wit et al. 1995): steady sliding follows
``(Fc + (Fs - Fc) exp(-(v / vs)^2)) sign(v) + sigma2 v``, which identifies ``Fc``, ``Fs``, ``vs``,
``sigma2``. The bristle stiffness ``sigma0`` and damping ``sigma1`` act only before sliding and are not
identifiable from it: ``sigma0`` is set so the bristles deflect by ``vs`` x 1 ms at ``Fs`` and ``sigma1 = 0``.

References
----------
Brown, P., McPhee, J. (2016), ASME J. Comput. Nonlinear Dynam. 11(5). seed 003 eq. 5.
Canudas de Wit, C., Olsson, H., Astrom, K. J., Lischinsky, P. (1995), IEEE Trans. Autom. Control 40(3).
Golub, G., Pereyra, V. (1973), "The differentiation of pseudo-inverses and nonlinear least squares
problems whose variables separate", SIAM J. Numer. Anal. 10(2) (variable projection).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from scipy.optimize import minimize_scalar

from hapticam.errors import IdentificationError
from hapticam.models.friction import Friction, stribeck_term

LAWS = ("coulomb-viscous", "stribeck", "lugre")
#: F_n and F_nt of a fitted stribeck law: tanh(4 F_n / F_nt) = tanh(20) = 1.0 in double precision
STRIBECK_FN = 1.0
STRIBECK_FNT = 0.2
#: LuGre bristle deflection at Fs (in units of vs x seconds): sigma0 = Fs / (vs * LUGRE_DEFLECTION_S)
LUGRE_DEFLECTION_S = 1e-3
_GRID_POINTS = 48


def _shape_derivative(u: np.ndarray) -> np.ndarray:
    """``s'(u)`` of the squared Stribeck shape ``s(u) = u / (u^2/4 + 3/4)^2`` (Brown & McPhee 2016)."""
    d = 0.25 * u * u + 0.75
    return (0.75 - 0.75 * u * u) / d ** 3  # s'(u) = (3/4 - 3u^2/4) / (u^2/4 + 3/4)^3 (models/friction.py)


def law_columns(law: str, v: np.ndarray, s: float) -> tuple[np.ndarray, np.ndarray]:
    """Regressors of ``law``'s linear parameters at shape speed ``s`` and their derivatives in ``log s``.

    Columns: coulomb-viscous ``[tanh(v/s), v]``; stribeck ``[tanh(4 v/s), shape(v/s), v]``; lugre
    ``[sign v, exp(-(v/s)^2) sign v, v]``. Returns ``(X, dX/dlog s)``, both ``(n, 3)`` or ``(n, 2)``.
    """
    u = v / s
    if law == "coulomb-viscous":
        th = np.tanh(u)                                   # f = Fc tanh(v / v_eps) + b v
        return np.column_stack([th, v]), np.column_stack([-(1.0 - th * th) * u, np.zeros_like(v)])
    if law == "stribeck":
        th = np.tanh(4.0 * u)                             # seed 003 eq. 5 with the square (Brown & McPhee 2016)
        cols = np.column_stack([th, stribeck_term(u), v])
        d = np.column_stack([-(1.0 - th * th) * 4.0 * u, -_shape_derivative(u) * u, np.zeros_like(v)])
        return cols, d
    if law == "lugre":
        sg = np.sign(v)
        e = np.exp(-u * u)                                # steady state (Canudas de Wit et al. 1995)
        return np.column_stack([sg, e * sg, v]), np.column_stack([np.zeros_like(v), 2.0 * u * u * e * sg,
                                                                  np.zeros_like(v)])
    raise IdentificationError(f"unknown friction law {law!r}; choose one of {', '.join(LAWS)}")


@dataclass
class LawFit:
    """A friction law fitted to sliding data (SI units of the axis: N or N m, m/s or rad/s).

    ``levels``: ``coulomb`` (Fc or Fn mu_d), ``stribeck_peak`` (Fn (mu_s - mu_d), Fs - Fc; 0 for
    coulomb-viscous), ``viscous`` (b, mu_v, sigma2), ``shape_speed`` (v_eps, v_t, vs); ``se`` the same keys;
    ``extra`` and ``extra_se`` the nuisance coefficients by name.
    """

    law: str
    levels: dict[str, float]
    se: dict[str, float]
    extra: dict[str, float] = field(default_factory=dict)
    extra_se: dict[str, float] = field(default_factory=dict)
    rms: float = 0.0
    fit_percent: float = 0.0
    samples: int = 0
    speed_range: tuple[float, float] = (0.0, 0.0)
    notes: list[str] = field(default_factory=list)
    detents_per_rev: int = 0

    def detent_amplitude(self) -> tuple[float, float]:
        """Amplitude ``A`` (N m) of the detents' fundamental ``A sin(N theta + phase)`` and its standard error
        (0, 0 when no detents were fitted)."""
        if not self.detents_per_rev:
            return 0.0, 0.0
        s, c = self.extra["detent_sin"], self.extra["detent_cos"]
        amp = math.hypot(s, c)
        se = math.hypot(s * self.extra_se["detent_sin"], c * self.extra_se["detent_cos"]) / amp if amp else 0.0
        return amp, se                                   # first order in the (nearly orthogonal) sin and cos terms

    def to_model(self) -> Friction:
        """The fitted law as a :class:`~hapticam.models.friction.Friction` model."""
        c, p, b, s = (self.levels[k] for k in ("coulomb", "stribeck_peak", "viscous", "shape_speed"))
        if self.law == "coulomb-viscous":
            return Friction("coulomb-viscous", Fc_N=c, b_v_Nspm=b, v_eps_mps=s)
        if self.law == "stribeck":
            return Friction("stribeck", mu_d=c / STRIBECK_FN, mu_s=(c + p) / STRIBECK_FN, mu_v_Nspm=b,
                            v_t_mps=s, F_nt_N=STRIBECK_FNT, F_n_N=STRIBECK_FN)
        fs = c + p
        return Friction("lugre", sigma0_Npm=max(fs, 1e-12) / (s * LUGRE_DEFLECTION_S), sigma1_Nspm=0.0,
                        sigma2_Nspm=b, Fc_N=c, Fs_N=fs, vs_mps=s)

    def uncertainty(self) -> dict[str, float | None]:
        """Standard errors laid out as the model's parameters (None where a parameter was fixed)."""
        se = self.se
        if self.law == "coulomb-viscous":
            return {"Fc_N": se["coulomb"], "b_v_Nspm": se["viscous"], "v_eps_mps": se["shape_speed"]}
        if self.law == "stribeck":
            return {"mu_d": se["coulomb"], "mu_s": se["static"], "mu_v_Nspm": se["viscous"],
                    "v_t_mps": se["shape_speed"], "F_nt_N": None, "F_n_N": None}
        return {"sigma0_Npm": None, "sigma1_Nspm": None, "sigma2_Nspm": se["viscous"], "Fc_N": se["coulomb"],
                "Fs_N": se["static"], "vs_mps": se["shape_speed"]}


def _solve(law: str, v: np.ndarray, y: np.ndarray, extra: np.ndarray, s: float) -> tuple[np.ndarray, float]:
    cols, _ = law_columns(law, v, s)
    x = np.hstack([cols, extra])
    coef, *_ = np.linalg.lstsq(x, y, rcond=None)
    r = y - x @ coef
    return coef, float(r @ r)


def _projected_sse(law: str, v: np.ndarray, y_r: np.ndarray, q: np.ndarray, s: float) -> float:
    """Residual sum of squares at shape speed ``s`` with the extra columns (orthonormal basis ``q``) projected
    out: ``min || (I - Q Q^T)(y - X_law c) ||^2`` (Golub & Pereyra 1973), a small least-squares problem."""
    cols, _ = law_columns(law, v, s)
    x_r = cols - q @ (q.T @ cols)
    coef, *_ = np.linalg.lstsq(x_r, y_r, rcond=None)
    r = y_r - x_r @ coef
    return float(r @ r)


def _shape_search(law: str, v: np.ndarray, y: np.ndarray, extra: np.ndarray, lo: float, hi: float) -> float:
    """Variable projection over ``log s`` in ``[lo, hi]``: grid, then a bounded scalar search."""
    q = np.linalg.qr(extra, mode="reduced")[0] if extra.shape[1] else np.zeros((v.size, 0))
    y_r = y - q @ (q.T @ y)
    grid = np.geomspace(lo, hi, _GRID_POINTS)
    sse = np.array([_projected_sse(law, v, y_r, q, s) for s in grid])
    k = int(np.argmin(sse))
    a, b = math.log(grid[max(k - 1, 0)]), math.log(grid[min(k + 1, grid.size - 1)])
    if b <= a:
        return float(grid[k])
    res = minimize_scalar(lambda ls: _projected_sse(law, v, y_r, q, math.exp(ls)), bounds=(a, b), method="bounded",
                          options={"xatol": 1e-6})
    return float(math.exp(res.x)) if res.fun <= sse[k] else float(grid[k])


def fit_law(law: str, v: Any, y: Any, extra: Any = None, extra_names: tuple[str, ...] = (), *,
            shape_bounds: tuple[float, float] | None = None) -> LawFit:
    """Fit ``y = f(v; law) + extra @ beta`` by variable projection; standard errors from the Jacobian.

    Parameters
    ----------
    law : {"coulomb-viscous", "stribeck", "lugre"}
    v, y : array_like
        Sliding speed (m/s or rad/s, samples near rest already removed) and force or torque (N or N m).
    extra : array_like, optional
        ``(n, k)`` nuisance regressors named by ``extra_names`` (inertia, spring basis, bias).
    shape_bounds : (float, float), optional
        Search range of the shape speed; default from the data's speeds.
    """
    if law not in LAWS:
        raise IdentificationError(f"unknown friction law {law!r}; choose one of {', '.join(LAWS)}")
    v = np.asarray(v, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    ex = np.zeros((v.size, 0)) if extra is None else np.asarray(extra, dtype=np.float64).reshape(v.size, -1)
    n_lin = 2 if law == "coulomb-viscous" else 3
    p = n_lin + ex.shape[1] + 1
    if v.size < 3 * p or not (np.all(np.isfinite(v)) and np.all(np.isfinite(y)) and np.all(np.isfinite(ex))):
        raise IdentificationError(f"friction fit: {v.size} finite sliding samples are too few for {p} parameters")
    speed = np.abs(v)
    lo_v, hi_v = float(np.percentile(speed, 1)), float(speed.max())
    if not hi_v > 0.0:
        raise IdentificationError("friction fit: the data never slide")
    if shape_bounds is None:
        floor = 0.2 * max(lo_v, 1e-6)
        shape_bounds = (floor, max(floor * 1.01, 0.5 * hi_v))
    s = _shape_search(law, v, y, ex, *shape_bounds)
    coef, sse = _solve(law, v, y, ex, s)
    cols, dcols = law_columns(law, v, s)
    jac = np.hstack([cols, ex, (dcols @ coef[:n_lin])[:, None]])     # d y_hat / d(linear, extra, log s)
    dof = max(v.size - p, 1)
    sigma2 = sse / dof
    cov = sigma2 * np.linalg.pinv(jac.T @ jac)                       # cov = sigma^2 (J^T J)^-1
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    fit = _to_fit(law, coef, se, cov, s, n_lin, ex.shape[1], extra_names)
    sst = float(np.sum((y - y.mean()) ** 2))
    fit.rms = math.sqrt(sse / v.size)
    fit.fit_percent = 100.0 * (1.0 - sse / sst) if sst > 0 else 100.0  # seed 003 eq. 53
    fit.samples = int(v.size)
    fit.speed_range = (lo_v, hi_v)
    _edge_notes(fit, s, shape_bounds)
    if law == "stribeck":
        fit.notes.append("with a constant normal force only F_n mu_d, F_n (mu_s - mu_d), v_t and mu_v tanh(4 F_n / F_nt) "
                         "are identifiable: written with F_n = 1 and F_nt = F_n / 5 (tanh(20) = 1)")
    elif law == "lugre":
        fit.notes.append(f"steady sliding does not identify LuGre's bristles: sigma0 set so they deflect vs x "
                         f"{LUGRE_DEFLECTION_S * 1e3:g} ms at Fs, sigma1 = 0")
    return fit


def _to_fit(law: str, coef: np.ndarray, se: np.ndarray, cov: np.ndarray, s: float, n_lin: int, n_extra: int,
            extra_names: tuple[str, ...]) -> LawFit:
    """Levels and standard errors from the solution (static level = coulomb + peak, its variance summed)."""
    if law == "coulomb-viscous":
        levels = {"coulomb": coef[0], "stribeck_peak": 0.0, "viscous": coef[1]}
        errs = {"coulomb": se[0], "stribeck_peak": 0.0, "viscous": se[1], "static": se[0]}
    else:
        levels = {"coulomb": coef[0], "stribeck_peak": coef[1], "viscous": coef[2]}
        var_static = cov[0, 0] + cov[1, 1] + 2.0 * cov[0, 1]       # var(a + b) = var a + var b + 2 cov(a, b)
        errs = {"coulomb": se[0], "stribeck_peak": se[1], "viscous": se[2],
                "static": math.sqrt(max(var_static, 0.0))}
    levels["shape_speed"] = s
    errs["shape_speed"] = s * se[-1]                                  # d s = s d(log s)
    names = extra_names or tuple(f"extra{i}" for i in range(n_extra))
    fit = LawFit(law, {k: float(v) for k, v in levels.items()}, {k: float(v) for k, v in errs.items()},
                 {n: float(coef[n_lin + i]) for i, n in enumerate(names)},
                 {n: float(se[n_lin + i]) for i, n in enumerate(names)})
    for key in ("coulomb", "stribeck_peak", "viscous"):
        if fit.levels[key] < 0.0:
            fit.notes.append(f"{key} level fitted negative ({fit.levels[key]:.3g} +- {fit.se[key]:.2g}); "
                             "written as 0 (a passive law has none)")
            fit.levels[key] = 0.0
    return fit


def _edge_notes(fit: LawFit, s: float, bounds: tuple[float, float]) -> None:
    name = {"coulomb-viscous": "v_eps", "stribeck": "v_t", "lugre": "vs"}[fit.law]
    if s <= bounds[0] * 1.02:
        fit.notes.append(f"{name} at the low end of its search range ({bounds[0]:.3g}): the data do not resolve "
                         "it (the law is sharper than the slowest sliding shows)")
    elif s >= bounds[1] * 0.98:
        fit.notes.append(f"{name} at the high end of its search range ({bounds[1]:.3g}): not identified")
    fit.notes.append("standard errors assume independent residuals; neighbouring samples are correlated, so "
                     "treat them as lower bounds")


#: per-sample gain of a detent column with ``N`` periods per radian (the derivative filter's, see spin_down.py)
DetentGain = Callable[[float], np.ndarray]


def detent_columns(theta: np.ndarray, residual: np.ndarray, *, max_per_rev: int = 200, min_share: float = 0.05,
                   gain: DetentGain | None = None) -> tuple[np.ndarray, int] | None:
    """Columns ``sin(N theta), cos(N theta), sin(2 N theta), cos(2 N theta)`` of a knob's detents, or None.

    ``N`` (detents per revolution, 4 to ``max_per_rev``, at least two detents inside the data's angle range)
    is the peak of the residual's Lomb-Scargle periodogram over angle (Lomb 1976; Scargle 1982), which
    needs no uniform sampling in angle (turns go back and forth). The columns are kept when they explain
    at least ``min_share`` of the residual's sum of squares. ``gain(N)``, when given, scales each sample of
    the ``N``-per-radian columns (and ``gain(2 N)`` the second harmonic's): the response of a filter the
    data went through, so the fitted coefficients are the detents' own.
    """
    from scipy.signal import lombscargle

    span = float(theta.max() - theta.min())
    counts = np.arange(4, max_per_rev + 1, dtype=np.float64)
    counts = counts[2.0 * 2.0 * math.pi / counts <= span]                 # two periods inside the range
    if counts.size == 0:
        return None
    power = lombscargle(theta, residual - residual.mean(), counts)         # angular frequency N per radian
    n_best = int(counts[int(np.argmax(power))])
    cols = np.column_stack([np.sin(n_best * theta), np.cos(n_best * theta), np.sin(2 * n_best * theta),
                            np.cos(2 * n_best * theta)])
    if gain is not None:
        g1, g2 = gain(float(n_best)), gain(2.0 * n_best)
        cols *= np.column_stack([g1, g1, g2, g2])
    coef, *_ = np.linalg.lstsq(cols, residual - residual.mean(), rcond=None)
    left = residual - residual.mean() - cols @ coef
    total = float(np.sum((residual - residual.mean()) ** 2))
    if total <= 0.0 or 1.0 - float(left @ left) / total < min_share:
        return None
    return cols, n_best


def fit_law_rotary(law: str, v: np.ndarray, y: np.ndarray, theta: np.ndarray, extra: Any = None,
                   extra_names: tuple[str, ...] = (), *, gain: DetentGain | None = None) -> tuple[LawFit, int]:
    """:func:`fit_law`, then again with a knob's detent columns (:func:`detent_columns`, scaled by ``gain``)
    if its residual shows detents. Returns the fit and the detents per revolution (0: none found)."""
    ex = np.zeros((v.size, 0)) if extra is None else np.asarray(extra, dtype=np.float64).reshape(v.size, -1)
    first = fit_law(law, v, y, ex, extra_names)
    model = first.to_model()
    resid = y - model.steady_state_force(v) - ex @ np.array([first.extra[n] for n in extra_names] or np.zeros(0))
    found = detent_columns(theta, resid, gain=gain)
    if found is None:
        return first, 0
    cols, n_det = found
    fit = fit_law(law, v, y, np.hstack([ex, cols]), (*extra_names, "detent_sin", "detent_cos", "detent_sin2",
                                                      "detent_cos2"))
    fit.detents_per_rev = n_det
    amp, se = fit.detent_amplitude()
    fit.notes.insert(0, f"detents: {n_det} per revolution, amplitude {amp:.3g} +- {se:.2g} (fitted beside the "
                        "friction; a press fit writes them as an angle table beside it)")
    return fit, n_det
