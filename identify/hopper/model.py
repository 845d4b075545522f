"""The vertical hopper of seed 002 (sec. 3.3, Fig. 1), compiled, with its Poincare map at phase pi.

Two masses on a vertical line: the upper (body) mass ``mu`` at height ``y`` and the lower (foot) mass ``m`` at
``x >= 0``, joined by a spring of stiffness ``k`` and rest length ``l0`` whose actuator is driven by the clock
``sigma = pi + omega t`` (the Poincare section ``sigma = pi`` is at t = 0, seed 002 sec. 4.3). The foot has
viscous drag ``b`` in the air and lands plastically (its velocity is annihilated).

Modes: GROUND (foot on the floor; state ``(y, y')``, x = x' = 0) and AIR (state ``(y, y', x, x')``). With the
leg force ``L`` (N, positive when the spring pushes the masses apart)::

    AIR:     mu y'' = L - mu g,   m x'' = -L - b x' - m g          (seed 002 sec. 3.3, F|D_a)
    GROUND:  mu y'' = L - mu g                                      (seed 002 sec. 3.3, F|D_g)
    AIR -> GROUND when x falls through 0 (x' < 0): x' := 0          (G_a, R|G_a)
    GROUND -> AIR when m g + L falls through 0 (the leg pulls the foot up harder than its weight) (G_g, R|G_g)

The leg force. Seed 002 prints ``L = k (l0 - (y - x)) + a sin(sigma)`` (an actuator force of amplitude a). With
the paper's parameters (a = 2 N against k l0 = 20 N and weights of 2 N and 4 N) that hopper does not hop from the
paper's orbit: the foot lifts off at most a few millimetres or not at all (tests show it). The authors' code
(sburden/sim, hop.py) and every number the paper reports come from an actuator that changes the spring's rest
length, ``L = k (l0 + a sin(sigma) - (y - x))`` (a = 2 m, a force amplitude k a = 20 N), so that is the default
(``LENGTH_ACTUATOR``); the printed form is kept as ``FORCE_ACTUATOR`` to show it fails.

Two integrators, one interface:

- ``relaxed_euler``: forward Euler with step h and the domain relaxation of Burden et al. 2011a (seed 002
  Appendix A: h = 1e-2, eps = 1e-10): a step that would jump a guard by more than eps is halved until it lands
  in the strip ``-eps <= g < 0``, the reset is applied there and the step returns to h; the end state is
  interpolated linearly to the final time. This is how the paper's numbers were computed.
- ``rk4_events``: classical RK4 with step h, stopping on every sample time, events located on the RK4 partial
  step by Illinois regula falsi to round-off, so the sampled outputs are smooth in initial state and
  parameters between changes of the event sequence (finite-difference Jacobians are meaningful).

Parameters are a float64 block ``p`` (indices below); states a length-4 array ``(y, y', x, x')``.

References
----------
Burden, S., Ohlsson, H., Sastry, S. S. Parameter identification near periodic orbits of hybrid dynamical
systems (seed 002), sec. 3.3, 4.3, 4.5, Appendix A.
Burden, S., Gonzalez, H., Vasudevan, R., Bajcsy, R., Sastry, S. S. (2011). Numerical integration of hybrid
dynamical systems via domain relaxation. IEEE CDC.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from numba import njit

from hapticam.errors import IdentificationError

M, MU, K, B, L0, A, OMEGA, G, FORM = range(9)
N_PARAMS = 9
LENGTH_ACTUATOR, FORCE_ACTUATOR = 0.0, 1.0
GROUND, AIR = 0, 1
OK, NOT_FINITE, TOO_MANY_HALVINGS = 0, 1, 2
#: the Poincare section's clock phase (seed 002 sec. 4.3: Sigma = {sigma = pi})
SECTION_PHASE = np.pi
_STATUS = {NOT_FINITE: "the hopper's state became non-finite",
           TOO_MANY_HALVINGS: "relaxed Euler could not land a step in the guard strip"}


@dataclass(frozen=True)
class HopperParams:
    """Hopper parameters (SI): masses ``m``, ``mu`` (kg), spring ``k`` (N/m), foot drag ``b`` (N s/m), rest length
    ``l0`` (m), actuator amplitude ``a`` (m for the length actuator, N for the printed force actuator), clock
    ``omega`` (rad/s), gravity ``g`` (m/s^2). Defaults: seed 002 Fig. 1, (1, 2, 10, 5, 2, 2, 2 pi, 2)."""

    m: float = 1.0
    mu: float = 2.0
    k: float = 10.0
    b: float = 5.0
    l0: float = 2.0
    a: float = 2.0
    omega: float = 2.0 * np.pi
    g: float = 2.0
    actuator: str = "length"

    def __post_init__(self) -> None:
        for name in ("m", "mu", "k", "b", "l0", "a", "omega", "g"):
            v = getattr(self, name)
            if not np.isfinite(v) or v < 0 or (v == 0 and name in ("m", "mu", "k", "omega")):
                raise IdentificationError(f"hopper parameter {name} must be finite and positive, got {v}")
        if self.actuator not in ("length", "force"):
            raise IdentificationError(f"hopper actuator must be 'length' or 'force', got {self.actuator!r}")

    @property
    def period_s(self) -> float:
        """The clock's period 2 pi / omega (s)."""
        return 2.0 * np.pi / self.omega

    def block(self) -> np.ndarray:
        """The float64 parameter block the kernels read."""
        form = LENGTH_ACTUATOR if self.actuator == "length" else FORCE_ACTUATOR
        return np.array([self.m, self.mu, self.k, self.b, self.l0, self.a, self.omega, self.g, form])

    def with_values(self, **values: float) -> "HopperParams":
        """A copy with some parameters changed."""
        return replace(self, **values)


@njit(cache=True)
def _leg(p: np.ndarray, t: float, y: float, x: float) -> float:
    """Leg force (N, + pushes the masses apart) at time t (s; sigma = pi + omega t)."""
    s = np.sin(SECTION_PHASE + p[OMEGA] * t)
    if p[FORM] == LENGTH_ACTUATOR:
        return p[K] * (p[L0] + p[A] * s - (y - x))     # actuator moves the rest length (sburden/sim hop.py)
    return p[K] * (p[L0] - (y - x)) + p[A] * s          # as printed (seed 002 sec. 3.3)


@njit(cache=True)
def _rhs(p: np.ndarray, mode: int, t: float, s: np.ndarray, ds: np.ndarray) -> None:
    """ds = F(t, s) in ``mode`` (seed 002 sec. 3.3); the foot's entries stay zero on the ground."""
    leg = _leg(p, t, s[0], s[2])
    ds[0] = s[1]
    ds[1] = (leg - p[MU] * p[G]) / p[MU]                                  # mu y'' = L - mu g
    if mode == AIR:
        ds[2] = s[3]
        ds[3] = (-leg - p[B] * s[3] - p[M] * p[G]) / p[M]                 # m x'' = -L - b x' - m g
    else:
        ds[2] = 0.0
        ds[3] = 0.0


@njit(cache=True)
def _guard(p: np.ndarray, mode: int, t: float, s: np.ndarray) -> float:
    """Guard function, > 0 inside the mode's domain: foot height in the air, m g + L on the ground (G_a, G_g)."""
    if mode == AIR:
        return s[2]
    return p[M] * p[G] + _leg(p, t, s[0], 0.0)


@njit(cache=True)
def _reset(p: np.ndarray, mode: int, t: float, s: np.ndarray) -> int:
    """Apply the reset in place and return the new mode (R|G_a, R|G_g). A landing whose leg already pulls the
    foot up harder than its weight stays in the air with the foot at rest on the floor."""
    s[2] = 0.0
    s[3] = 0.0                                                            # x' := 0 (plastic impact), x := 0
    if mode == AIR and p[M] * p[G] + _leg(p, t, s[0], 0.0) > 0.0:
        return GROUND
    return AIR


@njit(cache=True)
def _rk4(p: np.ndarray, mode: int, t: float, s: np.ndarray, h: float, out: np.ndarray,
         k1: np.ndarray, k2: np.ndarray, k3: np.ndarray, k4: np.ndarray, tmp: np.ndarray) -> None:
    """One classical RK4 step of length h from (t, s) into ``out``."""
    _rhs(p, mode, t, s, k1)
    for i in range(4):
        tmp[i] = s[i] + 0.5 * h * k1[i]
    _rhs(p, mode, t + 0.5 * h, tmp, k2)
    for i in range(4):
        tmp[i] = s[i] + 0.5 * h * k2[i]
    _rhs(p, mode, t + 0.5 * h, tmp, k3)
    for i in range(4):
        tmp[i] = s[i] + h * k3[i]
    _rhs(p, mode, t + h, tmp, k4)
    for i in range(4):
        out[i] = s[i] + h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i])


@njit(cache=True)
def _locate(p: np.ndarray, mode: int, t: float, s: np.ndarray, h: float, g0: float, g1: float, out: np.ndarray,
            k1: np.ndarray, k2: np.ndarray, k3: np.ndarray, k4: np.ndarray, tmp: np.ndarray) -> float:
    """The partial step theta in (0, h] where the guard of RK4(s, theta) reaches 0 (Illinois regula falsi);
    ``out`` holds RK4(s, theta)."""
    lo, hi, glo, ghi = 0.0, h, g0, g1
    side = 0
    theta = h
    for _ in range(200):
        theta = (lo * ghi - hi * glo) / (ghi - glo)
        if not (lo < theta < hi):
            theta = 0.5 * (lo + hi)
        _rk4(p, mode, t, s, theta, out, k1, k2, k3, k4, tmp)
        gm = _guard(p, mode, t + theta, out)
        if gm > 0.0:
            lo, glo = theta, gm
            if side == -1:
                ghi *= 0.5
            side = -1
        else:
            hi, ghi = theta, gm
            if side == 1:
                glo *= 0.5
            side = 1
        if hi - lo <= 4e-16 * max(1.0, abs(t)) or gm == 0.0:
            break
    _rk4(p, mode, t, s, hi, out, k1, k2, k3, k4, tmp)
    return hi


@njit(cache=True)
def rk4_events(p: np.ndarray, mode: int, s0: np.ndarray, t0: float, t_out: np.ndarray, h: float,
               s_out: np.ndarray, s_end: np.ndarray, events: np.ndarray) -> tuple:
    """Integrate from (t0, s0, mode) to ``t_out[-1]`` (ascending, >= t0), writing the state at each ``t_out`` into
    the rows of ``s_out`` (n x 4) and the final state into ``s_end``; event times go into ``events`` while it has room.
    Returns ``(status, final mode, number of events)``."""
    s = s0.copy()
    s1 = np.empty(4)
    k1, k2, k3, k4, tmp = np.empty(4), np.empty(4), np.empty(4), np.empty(4), np.empty(4)
    t = t0
    n_ev = 0
    j = 0
    while j < t_out.size and t_out[j] <= t:
        s_out[j, :] = s
        j += 1
    g = _guard(p, mode, t, s)
    while j < t_out.size:
        dt = min(h, t_out[j] - t)
        _rk4(p, mode, t, s, dt, s1, k1, k2, k3, k4, tmp)
        g1 = _guard(p, mode, t + dt, s1)
        if not np.isfinite(s1[0] + s1[1] + s1[2] + s1[3]):
            return NOT_FINITE, mode, n_ev
        if g > 0.0 and g1 <= 0.0:
            dt = _locate(p, mode, t, s, dt, g, g1, s1, k1, k2, k3, k4, tmp)
            t = t + dt
            s[:] = s1
            mode = _reset(p, mode, t, s)
            if n_ev < events.size:
                events[n_ev] = t
            n_ev += 1
            g = _guard(p, mode, t, s)
        else:
            t = t + dt
            s[:] = s1
            g = g1
        while j < t_out.size and t_out[j] <= t:
            s_out[j, :] = s
            j += 1
    s_end[:] = s
    return OK, mode, n_ev


@njit(cache=True)
def relaxed_euler(p: np.ndarray, mode: int, s0: np.ndarray, t0: float, tf: float, h0: float, eps: float,
                  s_end: np.ndarray) -> tuple:
    """Forward Euler with domain relaxation (Burden et al. 2011a; seed 002 Appendix A) from t0 to tf; the last
    state is interpolated linearly to tf. Returns ``(status, final mode)``; ``s_end`` gets the state."""
    s = s0.copy()
    ds = np.empty(4)
    s1 = np.empty(4)
    t = t0
    h = h0
    t_prev, s_prev = t, s.copy()
    while t <= tf:
        _rhs(p, mode, t, s, ds)
        halvings = 0
        while True:
            for i in range(4):
                s1[i] = s[i] + h * ds[i]                       # Euler step
            g = _guard(p, mode, t + h, s1)
            if g >= -eps:
                break
            h *= 0.5                                           # jumped over the strip: halve the step
            halvings += 1
            if halvings > 50:
                return TOO_MANY_HALVINGS, mode
        if not np.isfinite(s1[0] + s1[1] + s1[2] + s1[3]):
            return NOT_FINITE, mode
        t_prev, s_prev[:] = t, s
        t = t + h
        s[:] = s1
        if g < 0.0:                                            # on the strip: spend eps + g there, then reset
            t_prev, s_prev[:] = t, s
            t = t + (eps + g)
            mode = _reset(p, mode, t, s)
            h = h0
    w = (tf - t_prev) / (t - t_prev) if t > t_prev else 1.0
    for i in range(4):
        s_end[i] = (1.0 - w) * s_prev[i] + w * s[i]
    return OK, mode


def _check(status: int) -> None:
    if status != OK:
        raise IdentificationError(_STATUS[status])


def section_state(zeta: np.ndarray) -> np.ndarray:
    """The full state ``(y, y', x, x')`` of a point ``zeta = (y, y')`` of the section (foot on the floor)."""
    return np.array([zeta[0], zeta[1], 0.0, 0.0], dtype=float)


@dataclass(frozen=True)
class Integrator:
    """``method`` 'accurate' (RK4 with event location, step ``h`` s) or 'relaxed' (seed 002 Appendix A's relaxed
    Euler, step ``h`` s, relaxation ``eps``)."""

    method: str = "accurate"
    h: float = 1e-3
    eps: float = 1e-10

    def __post_init__(self) -> None:
        if self.method not in ("accurate", "relaxed"):
            raise IdentificationError(f"integrator must be 'accurate' or 'relaxed', got {self.method!r}")
        if not (0 < self.h <= 0.05):
            raise IdentificationError(f"integrator step must be in (0, 0.05] s, got {self.h}")


#: seed 002 Appendix A: forward Euler, h = 1e-2, relaxation 1e-10
PAPER_EULER = Integrator("relaxed", 1e-2, 1e-10)
ACCURATE = Integrator("accurate", 1e-3)


def flow_from_section(params: HopperParams, zeta: np.ndarray, t_end: float,
                      integ: Integrator = ACCURATE) -> tuple[int, np.ndarray]:
    """Flow from ``zeta`` on the section (t = 0, ground) for ``t_end`` s: ``(mode, state (y, y', x, x'))``."""
    p, s0, s_end = params.block(), section_state(zeta), np.empty(4)
    if integ.method == "relaxed":
        status, mode = relaxed_euler(p, GROUND, s0, 0.0, float(t_end), integ.h, integ.eps, s_end)
    else:
        out = np.empty((1, 4))
        status, mode, _ = rk4_events(p, GROUND, s0, 0.0, np.array([float(t_end)]), integ.h, out, s_end, np.empty(0))
    _check(status)
    return int(mode), s_end


def poincare_map(params: HopperParams, zeta: np.ndarray, integ: Integrator = ACCURATE) -> np.ndarray:
    """P(zeta): the section point one clock period later (seed 002 sec. 4.3); the foot must be down again."""
    mode, s = flow_from_section(params, zeta, params.period_s, integ)
    if mode != GROUND:
        raise IdentificationError(f"from (y, y') = ({zeta[0]:.4f} m, {zeta[1]:.4f} m/s) the foot is in the air at the next "
                                  "section: no Poincare map there")
    return s[:2].copy()


@dataclass(frozen=True)
class PeriodicOrbit:
    """A fixed point ``zeta = (y m, y' m/s)`` of the Poincare map, its Jacobian DP and DP's eigenvalues."""

    zeta: np.ndarray
    jacobian: np.ndarray
    eigenvalues: np.ndarray
    integrator: Integrator


def map_jacobian(params: HopperParams, zeta: np.ndarray, integ: Integrator = ACCURATE,
                 d: float = 1e-6) -> np.ndarray:
    """DP(zeta) by finite differences: central for the accurate map, forward with d = 1e-6 for the relaxed one
    (as the authors' code did; the relaxed map is only piecewise smooth at the 1e-10 level)."""
    P0 = poincare_map(params, zeta, integ)
    J = np.empty((2, 2))
    for i in range(2):
        e = np.zeros(2)
        e[i] = d
        if integ.method == "relaxed":
            J[:, i] = (poincare_map(params, zeta + e, integ) - P0) / d
        else:
            J[:, i] = (poincare_map(params, zeta + e, integ) - poincare_map(params, zeta - e, integ)) / (2 * d)
    return J


def fixed_point(params: HopperParams, integ: Integrator = ACCURATE, guess: tuple[float, float] = (2.0, 2.0),
                iterations: int = 20) -> PeriodicOrbit:
    """Iterate P from ``guess`` (the orbit is stable), then solve P(zeta) = zeta (scipy ``root``)."""
    from scipy.optimize import root

    z = np.asarray(guess, dtype=float)
    for _ in range(iterations):
        z = poincare_map(params, z, integ)
    sol = root(lambda q: poincare_map(params, q, integ) - q, z, method="hybr", options={"xtol": 1e-13})
    resid = np.max(np.abs(poincare_map(params, sol.x, integ) - sol.x))
    if resid > 1e-8:
        raise IdentificationError(f"no fixed point of the Poincare map found near {guess} (|P(z) - z| = {resid:.2e})")
    J = map_jacobian(params, sol.x, integ)
    return PeriodicOrbit(sol.x, J, np.linalg.eigvals(J), integ)


def sample_states(params: HopperParams, zeta: np.ndarray, t_samples: np.ndarray, h: float = 1e-3) -> np.ndarray:
    """States ``(y m, y' m/s, x m, x' m/s)`` at ``t_samples`` (s, ascending, >= 0) flowing from ``zeta`` on the
    section at t = 0 (accurate integration)."""
    t_samples = np.ascontiguousarray(t_samples, dtype=float)
    out, s_end = np.empty((t_samples.size, 4)), np.empty(4)
    status, _, _ = rk4_events(params.block(), GROUND, section_state(zeta), 0.0, t_samples, h, out, s_end,
                              np.empty(0))
    _check(status)
    return out


def sample_heights(params: HopperParams, zeta: np.ndarray, t_samples: np.ndarray, h: float = 1e-3) -> np.ndarray:
    """Body height y (m) at ``t_samples`` (s, ascending, >= 0) flowing from ``zeta`` on the section at t = 0."""
    return sample_states(params, zeta, t_samples, h)[:, 0].copy()
