"""Friction laws that are safe to render at 1 kHz (none chatters at v = 0).

Four laws, one class (:class:`Friction`) and one kernel (:func:`friction_force`) that dispatches on the
law code stored in the parameter block. The force is the force the probe applies along +x, so friction
opposes motion: ``F`` has the sign of ``v``.

``coulomb-viscous`` (``Fc_N``, ``b_v_Nspm``, ``v_eps_mps``)
    ``F = Fc tanh(v / v_eps) + b_v v``. The sign of v is smoothed by ``tanh`` over ``v_eps``, which acts
    like a damper of ``Fc / v_eps`` N s/m near v = 0. A damper evaluated once per tick on a mass ``m``
    does not overshoot (no sign flip of v) while ``(Fc / v_eps + b_v) dt / m < 1``, so choose
    ``v_eps >= Fc dt / m`` for the lightest mass the device presents (default 5 mm/s).
``stribeck`` (``mu_d``, ``mu_s``, ``mu_v_Nspm``, ``v_t_mps``, ``F_nt_N``, ``F_n_N``)
    The smooth 5-parameter law of Brown & McPhee (2016), which seed 003 eq. 5 quotes, with the
    normal force ``F_n`` a parameter::

        F = F_n mu_d tanh(4 v / v_t) + F_n (mu_s - mu_d) (v / v_t) / ((v / v_t)^2 / 4 + 3 / 4)^2
            + mu_v v tanh(4 F_n / F_nt)

    Seed 003 eq. 5 prints the Stribeck denominator without its square. Only the squared form has the
    property that makes its parameters physical: the Stribeck term ``s(u) = u / (u^2/4 + 3/4)^2``
    (``u = v / v_t``) has ``s'(u) = (3/4 - 3 u^2 / 4) / (u^2/4 + 3/4)^3``, zero at ``u = 1`` where
    ``s = 1``: the term peaks at ``v = v_t`` with value ``F_n (mu_s - mu_d)``. The printed form peaks at
    ``v = sqrt(3) v_t`` with value ``(2 / sqrt(3)) F_n (mu_s - mu_d)``.
    The law is smooth through v = 0 with slope ``F_n (4 mu_d + (16/9) (mu_s - mu_d)) / v_t + mu_v tanh(4 F_n /
    F_nt)``; the same no-overshoot rule as above applies to that slope.
    Model files that name ``stribeck`` keep loading unchanged (same name, fields and validation) and now
    render this corrected law. Before the correction hapticam rendered the printed form; for the same
    parameters the Stribeck term changes by the factor ``1 / (u^2/4 + 3/4)``: 4/3 near ``v = 0``, 1 at
    ``v = v_t``, below 1 beyond (the printed shape remains as :func:`stribeck_term` with ``squared=False``).
``karnopp`` (``Fc_N``, ``Fs_N``, ``b_v_Nspm``, ``dv_mps``, ``k_stick_Npm``, ``b_stick_Nspm``)
    Sliding (``|v| >= dv``): ``F = Fc sign(v) + b_v v`` (the sign is well defined there). When the
    velocity falls into the stick band ``|v| < dv`` the element sticks: Karnopp's "force that holds the
    mass, up to Fs" is rendered as a stiff but bounded spring to a stick anchor kept in the state,
    ``F = k_stick (x - x_a) + (b_stick + b_v) v``, its spring part saturated at ``Fs`` by dragging the
    anchor (an elasto-plastic element with no sign function). The anchor is placed so the spring
    continues the sliding force ``Fc sign(v)`` (no force step on sticking). It breaks away to sliding only
    when the spring is saturated at ``Fs`` and ``|v| >= dv`` in the same direction, so velocity noise
    around the band edge cannot toggle it, and the stick spring never flips sign with v: no chatter.
    The spring is stable on a mass ``m`` at tick ``dt`` while ``k_stick < 4 m / dt^2`` (default 2000 N/m;
    keep it well below); ``b_stick`` damps the stuck mass (state: anchor, mode, initialised flag).
``lugre`` (``sigma0_Npm``, ``sigma1_Nspm``, ``sigma2_Nspm``, ``Fc_N``, ``Fs_N``, ``vs_mps``)
    Canudas de Wit et al. (1995)::

        dz/dt = v - |v| z / g(v),   g(v) = (Fc + (Fs - Fc) exp(-(v / vs)^2)) / sigma0
        F = sigma0 z + sigma1 dz/dt + sigma2 v

    The bristle state z is advanced by the exact solution of its ODE for v constant over the tick,
    ``z' = z_ss + (z - z_ss) exp(-|v| dt / g(v))`` with ``z_ss = g(v) sign(v)``: unconditionally stable at
    any dt and |z| never exceeds ``Fs / sigma0``. ``dz/dt`` is the tick average ``(z' - z) / dt``. At
    constant velocity F tends to the steady-state (Stribeck) curve
    ``(Fc + (Fs - Fc) exp(-(v/vs)^2)) sign(v) + sigma2 v``.

References
----------
Brown, P., McPhee, J. (2016), "A continuous velocity-based friction model for dynamics and control with
physically meaningful parameters", ASME J. Comput. Nonlinear Dynam. 11(5) (the squared Stribeck term).
seed 003: Wadi, Mukhopadhyay & Romdhane, eq. 5 (quotes that law with the square dropped).
Karnopp, D. (1985), "Computer simulation of stick-slip friction in mechanical dynamic systems", ASME
J. Dyn. Sys. Meas. Control 107, 100-103.
Canudas de Wit, C., Olsson, H., Astrom, K. J., Lischinsky, P. (1995), "A new model for control of
systems with friction", IEEE Trans. Autom. Control 40(3), 419-425.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit

from hapticam.errors import ModelValidationError
from hapticam.models.base import KIND_FRICTION, Model
from hapticam.models.passivity import PassivityReport
from hapticam.models.ranges import FORCE_N, Range, damping, length, ratio, stiffness, velocity
from hapticam.models.validation import as_choice, as_float, excerpt

LAW_COULOMB = 0
LAW_STRIBECK = 1
LAW_KARNOPP = 2
LAW_LUGRE = 3
#: Added to the law's code when the block ends with ``active_from_m`` (the friction acts only from there on).
GATED = 16

#: law -> (code, ordered parameter fields, defaults of the optional ones, state length)
LAWS: dict[str, tuple[int, tuple[str, ...], dict[str, float], int]] = {
    "coulomb-viscous": (LAW_COULOMB, ("Fc_N", "b_v_Nspm", "v_eps_mps"), {"b_v_Nspm": 0.0, "v_eps_mps": 5e-3}, 0),
    "stribeck": (LAW_STRIBECK, ("mu_d", "mu_s", "mu_v_Nspm", "v_t_mps", "F_nt_N", "F_n_N"), {"mu_v_Nspm": 0.0}, 0),
    "karnopp": (LAW_KARNOPP, ("Fc_N", "Fs_N", "b_v_Nspm", "dv_mps", "k_stick_Npm", "b_stick_Nspm"),
                {"b_v_Nspm": 0.0, "dv_mps": 1e-3, "k_stick_Npm": 2000.0, "b_stick_Nspm": 5.0}, 3),
    "lugre": (LAW_LUGRE, ("sigma0_Npm", "sigma1_Nspm", "sigma2_Nspm", "Fc_N", "Fs_N", "vs_mps"),
              {"sigma2_Nspm": 0.0}, 1),
}


def stribeck_term(u: Any, squared: bool = True) -> np.ndarray:
    """The Stribeck shape ``u / (u^2/4 + 3/4)^2`` (Brown & McPhee 2016) of ``u = v / v_t``; with
    ``squared=False`` the printed seed 003 eq. 5 shape ``u / (u^2/4 + 3/4)``. Dimensionless."""
    u = np.asarray(u, dtype=np.float64)
    d = 0.25 * u * u + 0.75  # u^2/4 + 3/4  (seed 003 eq. 5)
    return u / (d * d) if squared else u / d  # squared: Brown & McPhee (2016); unsquared: as printed


# fields that must be > 0 (the rest must be >= 0)
_POSITIVE = {"v_eps_mps", "v_t_mps", "F_nt_N", "dv_mps", "k_stick_Npm", "sigma0_Npm", "vs_mps"}


class Friction(Model):
    """A friction element; ``law`` selects one of the laws in the module docstring.

    Parameters
    ----------
    law : {"coulomb-viscous", "stribeck", "karnopp", "lugre"}
    active_from_m : float, optional
        Position (m) from which the friction acts, 0 below it (a key's friction once the key is touched:
        ``hybrid-key``'s ``touch_m``); everywhere when absent.
    **params : float
        The law's parameters (SI, names carry units; see :data:`LAWS` for the fields and defaults).
        All must be finite and non-negative; velocities, stiffnesses and the transition force positive;
        ``Fs_N >= Fc_N`` for Karnopp and LuGre.
    """

    kind = "friction"
    kind_code = KIND_FRICTION
    #: physical ranges of every law's parameters (:mod:`hapticam.models.ranges`)
    RANGES = {**{name: Range(0.0, FORCE_N, "N", "a hand pushes under 1 kN; 1e4 N is a tonne-force")
                 for name in ("Fc_N", "Fs_N", "F_n_N", "F_nt_N")},
              **{name: damping()
                 for name in ("b_v_Nspm", "mu_v_Nspm", "b_stick_Nspm", "sigma1_Nspm", "sigma2_Nspm")},
              **{name: velocity() for name in ("v_eps_mps", "v_t_mps", "dv_mps", "vs_mps")},
              **{name: stiffness() for name in ("k_stick_Npm", "sigma0_Npm")},
              **{name: ratio(0.0, 10.0, "rubber on glass is about 2") for name in ("mu_d", "mu_s")},
              "active_from_m": length()}

    def __init__(self, law: str, active_from_m: float | None = None, **params: Any) -> None:
        self.law = as_choice("law", law, tuple(LAWS))
        self.active_from_m = None if active_from_m is None else as_float("active_from_m", active_from_m)
        code, fields, defaults, _ = LAWS[self.law]
        unknown = sorted(set(params) - set(fields))
        if unknown:
            name = excerpt(unknown[0], quoted=False)
            raise ModelValidationError(f"{name}: not a parameter of the {self.law} friction law "
                                       f"(expected {', '.join(fields)})")
        values: dict[str, float] = {}
        for name in fields:
            if name not in params and name not in defaults:
                raise ModelValidationError(f"{name}: missing (required by the {self.law} friction law)")
            raw = params.get(name, defaults.get(name))
            values[name] = as_float(name, raw, min_value=0.0, strict_min=name in _POSITIVE)
        if "Fs_N" in values and values["Fs_N"] < values["Fc_N"]:
            raise ModelValidationError(f"Fs_N: static friction must be >= Fc_N ({values['Fc_N']:g}), "
                                       f"got {values['Fs_N']:g}")
        self._code = code
        self._values = values

    @property
    def parameters(self) -> dict[str, float]:
        """The law's parameters (a copy)."""
        return dict(self._values)

    def __getitem__(self, name: str) -> float:
        return self._values[name]

    def steady_state_force(self, v_mps: Any) -> np.ndarray:
        """Force (N) during steady sliding at constant velocity ``v_mps`` (NumPy, vectorised).

        Memoryless laws return their curve; Karnopp its sliding law outside the stick band (its band
        force depends on the anchor and is reported as 0 there); LuGre the steady-state (Stribeck)
        curve ``(Fc + (Fs - Fc) exp(-(v/vs)^2)) sign(v) + sigma2 v``.
        """
        v = np.asarray(v_mps, dtype=np.float64)
        p = self._values
        if self.law == "coulomb-viscous":
            return p["Fc_N"] * np.tanh(v / p["v_eps_mps"]) + p["b_v_Nspm"] * v
        if self.law == "stribeck":
            u = v / p["v_t_mps"]
            shape = stribeck_term(u)  # Brown & McPhee (2016): seed 003 eq. 5 with its square
            return (p["F_n_N"] * p["mu_d"] * np.tanh(4.0 * u) + p["F_n_N"] * (p["mu_s"] - p["mu_d"]) * shape
                    + p["mu_v_Nspm"] * v * np.tanh(4.0 * p["F_n_N"] / p["F_nt_N"]))
        if self.law == "karnopp":
            sliding = p["Fc_N"] * np.sign(v) + p["b_v_Nspm"] * v
            return np.where(np.abs(v) >= p["dv_mps"], sliding, 0.0)
        g = p["Fc_N"] + (p["Fs_N"] - p["Fc_N"]) * np.exp(-(v / p["vs_mps"]) ** 2)
        return g * np.sign(v) + p["sigma2_Nspm"] * v

    def passivity(self) -> PassivityReport:
        """Coulomb-viscous: ``F v >= 0`` for all v. Stribeck: ``F(v) v >= 0`` checked over ``|v| <= 50 v_t``
        (an issue where it fails). Karnopp: sliding and the saturating stick spring dissipate; each entry into
        the stick band stores at most ``Fc^2 / (2 k_stick)`` J that the spring may return. LuGre: against the
        sufficient condition ``sigma2 >= sigma1 (Fs - Fc) / Fc`` (storage ``sigma0 z^2 / 2``: the bristle term
        dissipates ``sigma0 |v| z^2 / g(v) >= 0``, the sigma1 term can return at most
        ``sigma1 v^2 (Fs / Fc - 1)``); below it a note, not an issue."""
        report = PassivityReport(passive=True)
        p = self.parameters
        if self.law == "coulomb-viscous":
            report.notes.append("coulomb-viscous friction: F v >= 0 for all v (passive by construction)")
        elif self.law == "stribeck":
            v = np.linspace(-50.0, 50.0, 20001) * p["v_t_mps"]
            bad = self.steady_state_force(v) * v < -1e-12
            if bad.any():
                vb = np.abs(v[bad])
                report.issues.append(f"stribeck friction opposes dissipation (F v < 0) for |v| in "
                                     f"{vb.min():.4g}..{vb.max():.4g} m/s (mu_s much below mu_d)")
            else:
                report.notes.append("stribeck friction: F(v) v >= 0 checked over |v| <= 50 v_t (passive)")
        elif self.law == "karnopp":
            e = p["Fc_N"] ** 2 / (2.0 * p["k_stick_Npm"])  # energy of the anchor spring at Fc
            report.notes.append(f"karnopp friction: sliding and the saturating stick spring dissipate; each entry "
                                f"into the stick band stores at most Fc^2/(2 k_stick) = {e:.3g} J that the spring "
                                "may return")
        else:
            s1, s2, fc, fs = p["sigma1_Nspm"], p["sigma2_Nspm"], p["Fc_N"], p["Fs_N"]
            if s1 == 0.0 or fs == fc:
                report.notes.append("lugre friction: passive (sigma1 = 0 or Fs = Fc)")
            elif fc > 0.0 and s2 >= s1 * (fs - fc) / fc:
                report.notes.append("lugre friction: passive (sigma2 >= sigma1 (Fs - Fc) / Fc)")
            else:
                need = s1 * (fs - fc) / fc if fc > 0.0 else float("inf")
                report.notes.append(f"lugre friction: passivity not guaranteed: sigma2 = {s2:g} N s/m is below "
                                    f"sigma1 (Fs - Fc) / Fc = {need:g} N s/m (sufficient condition)")
        report.passive = not report.issues
        return report

    def to_dict(self) -> dict[str, Any]:
        return {"law": self.law, **self._values,
                **({} if self.active_from_m is None else {"active_from_m": self.active_from_m})}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Friction":
        if not isinstance(data, dict):
            raise ModelValidationError(f"friction: expected a mapping, got {type(data).__name__}")
        if "law" not in data:
            raise ModelValidationError("friction: missing field 'law'")
        rest = {k: v for k, v in data.items() if k != "law"}
        bad = [k for k in rest if not isinstance(k, str)]
        if bad:
            raise ModelValidationError(f"friction: unknown field {excerpt(bad[0])}")
        return cls(data["law"], **rest)

    def params_block(self) -> np.ndarray:
        _, fields, _, _ = LAWS[self.law]
        if self.active_from_m is None:
            return np.array([float(self._code), *(self._values[f] for f in fields)])
        return np.array([float(self._code + GATED), *(self._values[f] for f in fields), self.active_from_m])

    def initial_state(self) -> np.ndarray:
        """Karnopp: ``[anchor x (m), mode (0 stick, +/-1 sliding), initialised]``; LuGre: ``[z (m)]``."""
        return np.zeros(LAWS[self.law][3])


# -- kernels -----------------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def _karnopp(p, s, x, v):
    fc = p[1]
    fs = p[2]
    b_v = p[3]
    dv = p[4]
    ks = p[5]
    bs = p[6]
    if s[2] == 0.0:  # first call: anchor at the current position, stuck
        s[0] = x
        s[1] = 0.0
        s[2] = 1.0
    if s[1] != 0.0:  # sliding: F = Fc sign(v) + b_v v  (Karnopp 1985, outside the stick band)
        if abs(v) >= dv:
            sg = 1.0 if v > 0.0 else -1.0
            s[1] = sg
            return fc * sg + b_v * v
        s[0] = x - s[1] * fc / ks  # entering the band: the spring continues the sliding force Fc sign(v)
        s[1] = 0.0
    e = ks * (x - s[0])  # stick: anchor spring, saturated at Fs by dragging the anchor (elasto-plastic)
    if e >= fs:
        s[0] = x - fs / ks
        e = fs
        if v >= dv:  # break away: saturated and moving out of the band the same way
            s[1] = 1.0
            return fc + b_v * v
    elif e <= -fs:
        s[0] = x + fs / ks
        e = -fs
        if v <= -dv:
            s[1] = -1.0
            return -fc + b_v * v
    return e + (bs + b_v) * v


@njit(cache=True, nogil=True)
def _lugre(p, s, v, dt):
    sigma0 = p[1]
    sigma1 = p[2]
    sigma2 = p[3]
    fc = p[4]
    fs = p[5]
    vs = p[6]
    z = s[0]
    r = v / vs
    g = (fc + (fs - fc) * math.exp(-r * r)) / sigma0  # g(v) = (Fc + (Fs - Fc) e^{-(v/vs)^2}) / sigma0
    z_new = z
    if v != 0.0 and g > 0.0:
        z_ss = g if v > 0.0 else -g  # steady state of dz/dt = v - |v| z / g
        z_new = z_ss + (z - z_ss) * math.exp(-abs(v) * dt / g)  # exact for v constant over the tick
    elif v != 0.0:
        z_new = 0.0  # Fc = Fs = 0: no bristle force
    z_dot = (z_new - z) / dt if dt > 0.0 else 0.0  # tick average of dz/dt
    s[0] = z_new
    return sigma0 * z_new + sigma1 * z_dot + sigma2 * v  # F = sigma0 z + sigma1 dz/dt + sigma2 v


@njit(cache=True, nogil=True)
def friction_force(p, s, x, v, a, dt):
    """Friction force (N) the probe applies along +x for a :class:`Friction` block ``p``.

    ``x`` (m), ``v`` (m/s), ``dt`` (s); Karnopp and LuGre advance their state ``s`` in place. With
    ``active_from_m`` the force is 0 (and the state held) for ``x`` below it.
    """
    law = int(p[0])
    if law >= GATED:
        if x < p[p.size - 1]:
            return 0.0              # before ``active_from_m`` (e.g. above a key's surface): no friction
        law -= GATED
    if law == LAW_COULOMB:
        return p[1] * math.tanh(v / p[3]) + p[2] * v  # F = Fc tanh(v / v_eps) + b_v v
    if law == LAW_STRIBECK:
        u = v / p[4]
        fn = p[6]
        d = 0.25 * u * u + 0.75  # (v/v_t)^2 / 4 + 3/4
        d = d * d  # squared denominator (Brown & McPhee 2016); seed 003 eq. 5 drops the square
        return (fn * p[1] * math.tanh(4.0 * u) + fn * (p[2] - p[1]) * u / d
                + p[3] * v * math.tanh(4.0 * fn / p[5]))  # seed 003 eq. 5 with Brown & McPhee's square
    if law == LAW_KARNOPP:
        return _karnopp(p, s, x, v)
    if law == LAW_LUGRE:
        return _lugre(p, s, v, dt)
    return np.nan
