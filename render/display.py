"""What the display stage keeps of a model on a device, and what it gives up (:mod:`hapticam.render.display_stage`
renders it in the servo tick).

A model whose stiffest slope at the handle ``k`` exceeds what the device renders passively at the loop rate,
``K_p = 2 b / T`` (Colgate & Schenkel 1997; :meth:`DeviceSpec.max_stable_stiffness`), is displayed through a
virtual coupling ``k_c = DISPLAY_MARGIN K_p``: its floor is felt at the series stiffness ``k k_c / (k + k_c)``,
and travel under a force ``F`` runs ``F / k_c`` deeper than the model's. A model within ``K_p`` is rendered at
the handle as it is. :func:`plan_display` decides, :meth:`DisplayPlan.summary` says it in one line.

The passivity observer's credit is bounded by :func:`returnable_energy_J` (:mod:`hapticam.render.safety`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Callable

import numpy as np

from hapticam.devices.base import DeviceSpec
from hapticam.errors import UsageError
from hapticam.models.base import CompiledModel, Model
from hapticam.models.transients import EVENT_CODES
from hapticam.render.display_stage import COUPLING_FORCE_SHARE

#: model evaluations of a typical tick through the coupling: the bundled piano key's tick on its sub-steps took 93 us
#: through the display stage against 32 us at the handle (``hapticam bench render``), about three evaluations (with
#: its longer steps between impacts 24 us against 6.5 us: through the coupling its hammer chatters on the jack
#: after the release, a run of impacts on sub-steps)
TYPICAL_SOLVE_EVALUATIONS = 3
from hapticam.render.layout import C_DISP_K, C_PO_CAP, C_TR0, TR_EVENT_CODES, TR_FIELDS, TR_SLOT_SIZE

#: the coupling's stiffness as a share of the device's passive bound 2 b / T: the rest is margin for the
#: velocity filter's delay and the model's own damping in series
DISPLAY_MARGIN = 0.9
DISPLAY_MODES = ("auto", "off")
#: a press that measures a compiled model's stiffness or stored energy moves this slowly (m/s) ...
SWEEP_SPEED_MPS = 0.01
#: ... over this many points of the workspace
SWEEP_POINTS = 2001


@dataclass(frozen=True)
class DisplayPlan:
    """How a model is displayed on a device at a rate: ``coupling_Npm`` 0 renders it at the handle."""

    model_stiffness_Npm: float
    stiffness_source: str
    passive_limit_Npm: float
    coupling_Npm: float
    max_force_N: float
    rate_hz: float

    @property
    def displayed_Npm(self) -> float:
        """The stiffest slope the hand meets (N/m): the model's, or its series with the coupling."""
        k, kc = self.model_stiffness_Npm, self.coupling_Npm
        return k if kc <= 0.0 else k * kc / (k + kc)

    @property
    def coupling_force_N(self) -> float:
        """The most force the coupling gives (N); pressed harder, the handle sinks at this force."""
        return COUPLING_FORCE_SHARE * self.max_force_N

    @property
    def model_evaluations(self) -> int:
        """The times a typical tick evaluates the model (what a model's cost per tick is multiplied by):
        ``TYPICAL_SOLVE_EVALUATIONS`` through the coupling, once at the handle. The proxy solve may take up
        to ``MAX_SOLVE_EVALUATIONS`` in a tick; the loop's missed-deadline bound stops a run whose worst
        ticks cannot be kept."""
        return TYPICAL_SOLVE_EVALUATIONS if self.coupling_Npm > 0.0 else 1

    @property
    def travel_shift_m(self) -> float:
        """How much deeper than the model the handle sits at the coupling's largest force (m)."""
        return self.coupling_force_N / self.coupling_Npm if self.coupling_Npm > 0.0 else 0.0

    def summary(self) -> str:
        """One line: what the display keeps and what it gives up."""
        if self.coupling_Npm <= 0.0:
            return (f"rendered at the handle: stiffest {self.model_stiffness_Npm:.4g} N/m within the "
                    f"{self.passive_limit_Npm:.4g} N/m this device displays passively at {self.rate_hz:g} Hz")
        return (f"floor displayed at {self.displayed_Npm:.4g} N/m of {self.model_stiffness_Npm:.4g} "
                f"({self.stiffness_source}) through a {self.coupling_Npm:.4g} N/m virtual coupling: this device "
                f"displays {self.passive_limit_Npm:.4g} N/m passively at {self.rate_hz:g} Hz; travel under load "
                f"runs F / k_c deeper ({1e3 * self.travel_shift_m:.2f} mm at {self.coupling_force_N:.3g} N, "
                f"where the floor yields)")

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "displayed_Npm": self.displayed_Npm, "travel_shift_m": self.travel_shift_m,
                "coupling_force_N": self.coupling_force_N}


def plan_display(stiffest: tuple[str, float] | None, spec: DeviceSpec, rate_hz: float,
                 mode: str = "auto") -> DisplayPlan:
    """The display of a model whose stiffest slope at the handle is ``stiffest = (source, N/m)`` on ``spec`` at
    ``rate_hz`` (Hz). ``mode="off"`` renders every model at the handle (the ideal replay of ``verify``)."""
    if mode not in DISPLAY_MODES:
        raise UsageError(f"display: expected one of {', '.join(DISPLAY_MODES)}, got {mode!r}")
    source, k = stiffest if stiffest is not None else ("none", 0.0)
    limit = spec.max_stable_stiffness(rate_hz)
    kc = DISPLAY_MARGIN * limit if (mode == "auto" and abs(k) > limit and limit > 0.0) else 0.0
    return DisplayPlan(abs(float(k)), source, float(limit), float(kc), float(spec.max_force_N), float(rate_hz))


def model_stiffness(model: Model | CompiledModel, spec: DeviceSpec,
                    force_fn: Callable | None = None) -> tuple[str, float] | None:
    """The stiffest slope (source, N/m) ``model`` asks of the handle: the model's declared stiffnesses at the
    handle (:meth:`Model.handle_stiffnesses`, as :func:`hapticam.render.gate.stiffnesses_Npm`), or, for a
    compiled model, its force's steepest slope along a slow press and release over the workspace
    (``force_fn``: the compiled force kernel)."""
    if isinstance(model, Model):
        return max(model.handle_stiffnesses(spec.max_force_N), key=lambda item: abs(item[1]), default=None)
    if force_fn is None:
        return None
    x, forces = _sweep(model, spec, force_fn)
    slopes = [np.max(np.abs(np.diff(f) / np.diff(xs))) for xs, f in zip((x, x[::-1]), forces)]
    return ("force slope along a press", float(max(slopes)))


def returnable_energy_J(model: CompiledModel, spec: DeviceSpec, force_fn: Callable, plan: DisplayPlan) -> float:
    """The most energy (J) ``model`` displayed as ``plan`` can store and give back: the work of its force along
    a slow release from where a press reaches the display's largest force (or the workspace's end), plus the
    energy of the coupling's spring at that force. Bounds the passivity observer's credit."""
    f_lim = plan.coupling_force_N if plan.coupling_Npm > 0.0 else spec.max_force_N
    x, (f_press, f_release) = _sweep(model, spec, force_fn)
    deep = np.flatnonzero(np.abs(f_press) >= f_lim)
    end = int(deep[0]) if deep.size else x.size - 1
    back = np.clip(f_release[::-1][:end + 1], 0.0, f_lim)       # release forces from x[0] to x[end]
    returned = float(np.sum(0.5 * (back[1:] + back[:-1]) * np.diff(x[:end + 1])))
    spring = f_lim ** 2 / (2.0 * plan.coupling_Npm) if plan.coupling_Npm > 0.0 else 0.0
    return returned + spring


def install_display(cfg: np.ndarray, slot: int, model: Model | CompiledModel, compiled: CompiledModel,
                    spec: DeviceSpec, rate_hz: float, mode: str, force_fn: Callable) -> DisplayPlan:
    """Fill model slot ``slot``'s display stage in the loop's ``cfg`` (:mod:`hapticam.render.layout`): the
    coupling, the passivity observer's credit bound and the transients ``model`` carries; return the plan."""
    plan = plan_display(model_stiffness(model, spec, force_fn), spec, rate_hz, mode)
    cfg[C_DISP_K + slot] = plan.coupling_Npm
    cfg[C_PO_CAP + slot] = returnable_energy_J(compiled, spec, force_fn, plan)
    base = C_TR0 + TR_SLOT_SIZE * slot
    cfg[base:base + TR_SLOT_SIZE] = 0.0
    for transient in (model.transients if isinstance(model, Model) else ()):
        i = base + TR_FIELDS * TR_EVENT_CODES.index(EVENT_CODES[transient.event])
        cfg[i:i + TR_FIELDS] = (transient.gain_N_per_mps, 2.0 * math.pi * transient.frequency_hz, transient.decay_s)
    return plan


def _sweep(model: CompiledModel, spec: DeviceSpec, force_fn: Callable) -> tuple[np.ndarray, list[np.ndarray]]:
    """Forces (N) of a compiled model along a slow press over the workspace and the release back (state
    carried), clipped to the device's force limit; the positions (m) ascending."""
    lo, hi = spec.workspace_m
    x = np.linspace(lo, hi, SWEEP_POINTS)
    dt = (x[1] - x[0]) / SWEEP_SPEED_MPS
    state = model.reset_state()
    forces = []
    for xs, v in ((x, SWEEP_SPEED_MPS), (x[::-1], -SWEEP_SPEED_MPS)):
        f = np.array([force_fn(model.params, state, xi, v, 0.0, dt) for xi in xs])
        forces.append(np.clip(np.nan_to_num(f), -spec.max_force_N, spec.max_force_N))
    if not all(math.isfinite(float(f.sum())) for f in forces):
        raise UsageError("the model's force is not finite along a press")
    return x, forces
