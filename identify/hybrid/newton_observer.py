"""Newton observers (Moraal and Grizzle; seed 000 section 4.1, eqs. 15-24) for discrete-time systems.

The system is ``x_{k+1} = F(x_k, u_k)``, ``y_k = h(x_k, u_k)`` (seed 000 eqs. 15-16; eq. 15 is printed
``F(u_k, u_k)``). Parameters are estimated as states with no dynamics (``alpha_{k+1} = alpha_k``), so the
identifiability of a parameter is the observability of the augmented system. The observer works on the
N-lifted system (eqs. 17-21): with ``zeta`` the state at the start of a window of the N latest measurements,

    H(zeta) = [h(zeta); h(F(zeta)); ...; h(F^{N-1}(zeta))]      (eq. 21, printed garbled)
    Theta(zeta) = zeta + [dH/dzeta]^+ (Y - H(zeta))            (eq. 22; ^+ the pseudo-inverse when
                                                               N p > n, over-determined)
    zeta_{k+1} = Theta^d(F(zeta_k, u))                           (eq. 23)
    x_hat_k = F^{N-1}(zeta_k)                                    (eq. 24)

Two safeguards beyond the paper make it usable from far (its convergence theorem is quasi-local): the
Newton step is halved until the window's residual does not grow (or the model cannot be evaluated there,
e.g. a ball that would stick to its paddle), and the unknowns are scaled (``scale``) before the
pseudo-inverse so that seconds, metres per second and N/m^1.5 compare.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from hapticam.errors import HapticError, IdentificationError

#: step(z, u) -> (z_next, dz_next/dz); measure(z, u) -> (y, dy/dz)
StepFn = Callable[[np.ndarray, Any], tuple[np.ndarray, np.ndarray]]
MeasureFn = Callable[[np.ndarray, Any], tuple[np.ndarray, np.ndarray]]


def lifted_map(step: StepFn, measure: MeasureFn, zeta: np.ndarray, inputs: Sequence) -> tuple[np.ndarray, np.ndarray]:
    """``H(zeta)`` and ``dH/dzeta`` over a window (seed 000 eq. 21), by the chain rule through F's Jacobians."""
    z = np.asarray(zeta, dtype=float)
    dz = np.eye(z.size)  # d z_j / d zeta
    outputs, jacobians = [], []
    for j, u in enumerate(inputs):
        y, dy = measure(z, u)
        outputs.append(np.atleast_1d(y))
        jacobians.append(np.atleast_2d(dy) @ dz)
        if j + 1 < len(inputs):
            z, dstep = step(z, u)
            dz = dstep @ dz  # chain rule: d F^j / d zeta
    return np.concatenate(outputs), np.vstack(jacobians)


def newton_step(step: StepFn, measure: MeasureFn, zeta: np.ndarray, Y: np.ndarray, inputs: Sequence,
                scale: np.ndarray, max_halvings: int = 12) -> tuple[np.ndarray, float]:
    """One application of Theta (seed 000 eq. 22) with a halved step while the residual would grow.

    Returns the new zeta and the root-mean-square residual of the window there (units of y).
    """
    H, J = lifted_map(step, measure, zeta, inputs)
    r = Y - H
    cost = float(np.sqrt(np.mean(r**2)))
    delta = scale * np.linalg.lstsq(J * scale, r, rcond=None)[0]  # [dH/dzeta]^+ (Y - H)  (eq. 22)
    frac = 1.0
    for _ in range(max_halvings):
        trial = zeta + frac * delta
        try:
            H_trial, _ = lifted_map(step, measure, trial, inputs)
        except HapticError:
            frac *= 0.5  # the model cannot be evaluated there (e.g. a sticking contact): shorten the step
            continue
        trial_cost = float(np.sqrt(np.mean((Y - H_trial) ** 2)))
        if trial_cost <= cost * (1.0 + 1e-9):
            return trial, trial_cost
        frac *= 0.5
    return zeta, cost


@dataclass
class NewtonObserver:
    """The quasi-local exponential observer of seed 000 eqs. 23-24 on the N-lifted system.

    ``update(y_k, u_k)`` takes the next measurement and returns the current state estimate ``x_hat_k``
    (None until N measurements have arrived). ``z0`` is the guess of the state at the first measurement;
    ``iterations`` is d of eq. 23; ``scale`` the typical size of each unknown.
    """

    step: StepFn
    measure: MeasureFn
    n_lift: int
    z0: np.ndarray
    iterations: int = 1
    scale: np.ndarray | None = None
    history: list[np.ndarray] = field(default_factory=list)
    residuals: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.n_lift < 1 or self.iterations < 1:
            raise IdentificationError("Newton observer: the window N and the iterations d must be at least 1")
        self.zeta = np.asarray(self.z0, dtype=float).copy()
        self.scale = np.ones_like(self.zeta) if self.scale is None else np.asarray(self.scale, dtype=float)
        self._Y: list[np.ndarray] = []
        self._U: list[Any] = []

    def update(self, y: np.ndarray | float, u: Any = None) -> np.ndarray | None:
        """Take measurement ``y_k`` (with input ``u_k``); return ``x_hat_k`` (seed 000 eq. 24) once N are in."""
        self._Y.append(np.atleast_1d(np.asarray(y, dtype=float)))
        self._U.append(u)
        if len(self._Y) > self.n_lift:
            self.zeta, _ = self.step(self.zeta, self._U[0])  # zeta <- F(zeta, u) (eq. 23): the window slides
            self._Y.pop(0)
            self._U.pop(0)
        if len(self._Y) < self.n_lift:
            return None
        Y = np.concatenate(self._Y)
        cost = float("nan")
        for _ in range(self.iterations):  # Theta^d (eq. 23)
            self.zeta, cost = newton_step(self.step, self.measure, self.zeta, Y, self._U, self.scale)
        x_hat = self.zeta
        for u in self._U[:-1]:
            x_hat, _ = self.step(x_hat, u)  # x_hat_k = F^{N-1}(zeta)  (eq. 24)
        self.history.append(x_hat)
        self.residuals.append(cost)
        return x_hat


def observe(step: StepFn, measure: MeasureFn, Y: Sequence, U: Sequence, z0: np.ndarray, n_lift: int, *,
            iterations: int = 1, scale: np.ndarray | None = None) -> np.ndarray:
    """Run a :class:`NewtonObserver` over measurements ``Y`` and inputs ``U``; rows are ``x_hat_k`` for
    k = N-1, N, ... (the functional form of the class)."""
    obs = NewtonObserver(step, measure, n_lift, z0, iterations, scale)
    for y, u in zip(Y, U):
        obs.update(y, u)
    return np.array(obs.history)
