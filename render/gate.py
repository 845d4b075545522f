"""The gate where a model meets a device: is it safe to render here?

- Acceptance: what render refuses is :mod:`hapticam.models.acceptance`'s definition, shared with the
  model files and ``hapticam model validate``: a parameter outside its kind's physical range, or a model
  that can generate energy (:func:`hapticam.models.passivity.check_passivity`) unless the caller says
  ``allow_active`` (``--allow-active``); then every passivity issue is a warning.
- Stability: a stiffness above what the device renders passively at the loop rate, Colgate & Schenkel's
  ``K < 2 b / T`` for the device's physical damping ``b`` (:meth:`DeviceSpec.max_stable_stiffness`), is
  not refused: the loop's display stage shows it through a virtual coupling and says what it gives up
  (:mod:`hapticam.render.display`). A control request may not make a running model stiffer than both that
  bound and the model it replaces (:func:`control_check`).
- Cost: a model whose simulation takes more than ``TICK_BUDGET_SHARE`` of the servo period is refused
  before rendering (:func:`require_tick_budget`): it would miss deadline after deadline (a hybrid key with a
  light hammer on a stiff contact needs thousands of RK4 sub-steps a tick). A tick's cost is estimated as
  ``evaluations x max(N t_s, t_rest)``: ``N`` the integration sub-steps its components take in their costly
  state (:meth:`HybridKey.substeps_per_tick`: a tick inside the hammer's impact), ``t_s`` the time of one
  sub-step on this machine, measured on the bundled piano key resting on its jack and held to the sub-steps of an
  impact (a known ``N``; resting, a coupled key takes longer steps, :meth:`HybridKey.resting_substeps_per_tick`),
  ``t_rest`` the model's own kernel timed at rest, and ``evaluations`` the most the display stage's proxy solve
  makes in a tick.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass
from typing import Any, Callable

from hapticam.devices.base import DeviceSpec
from hapticam.errors import UsageError
from hapticam.models.base import CompiledModel, Model
from hapticam.models.acceptance import require_renderable
from hapticam.models.hybrid_key.layout import P_HKC
from hapticam.progress import compiling
from hapticam.render.display import model_stiffness, plan_display

#: the model's simulation may take at most this share of a servo period, the rest being the servo's own work
#: (velocity filter, safety layer, ring: a few us) and the device's I/O. The estimate is already the worst a
#: press reaches (every evaluation of the display's solve inside the hammer's impact); a model within it may
#: still miss deadlines on a busy machine, and the loop's missed-deadline bound stops that run
#: (:mod:`hapticam.render.clock`)
TICK_BUDGET_SHARE = 0.9
#: no processor does an RK4 step of the Hunt-Crossley law faster (s): four powers rho^n of tens of ns each. A
#: model over budget at this cost is refused without timing anything (measured: 140-220 ns on this project's
#: 2-core CI machine)
MIN_SUBSTEP_S = 40e-9
#: the sub-step cost is the fastest of this many batches of this many ticks of the calibration key (the
#: fastest: another program's preemption only ever adds time)
CALIBRATION_BATCHES = 5
CALIBRATION_TICKS = 10
CALIBRATION_MODEL = "example:piano-key"
#: the model's own kernel is timed at rest over this many ticks, or for this long (s) if that comes first
REST_TICKS = 16
REST_LIMIT_S = 0.1
_SUBSTEP_COST_S: list[float] = []
#: a first run's compilation (s, one core) of the model kernels: said while it runs (:mod:`hapticam.progress`)
MODEL_COMPILE_S = 20.0


def stiffnesses_Npm(model: Model, at_force_N: float | None = None) -> list[tuple[str, float]]:
    """Every stiffness the handle feels (keys ending in ``_Npm``, N/m) with its path.

    Two parameters named ``_Npm`` are not N/m on the handle: a coupled hybrid key's inner stiffnesses (its
    hammer's contact) act on its simulated key, so only the coupling (``coupling_k_Npm``) and the springs the
    kernel applies at the handle (``HybridKey.AT_THE_HANDLE``: keybed and return spring) reach it; and a
    Hunt-Crossley law ``F = k d^n`` (``law: hunt-crossley``, n > 1) holds k in N/m^n. With ``at_force_N`` (N, the device's
    peak force) such a k is given as its local stiffness where it reaches that force,
    ``dF/dd = n k d^(n-1) = n F / d_F`` with ``d_F = (F / k)^(1 / n)``: its largest over the forces the
    device can render. Without it, k is given as it is."""
    return model.handle_stiffnesses(at_force_N)


def check_for_device(model: Model, spec: DeviceSpec, rate_hz: float, *, allow_active: bool = False
                     ) -> list[str]:
    """Warnings for rendering ``model`` on a device with ``spec`` at ``rate_hz`` (its stiffness is the display
    stage's: :mod:`hapticam.render.display`). What render refuses is
    :func:`hapticam.models.acceptance.require_renderable`'s, the definition ``model validate`` and the model
    files share: a parameter outside its physical range raises
    :class:`~hapticam.errors.ModelValidationError`, a model that is not passive
    :class:`~hapticam.errors.UsageError` unless ``allow_active`` (then each issue is a warning); so does a
    model whose simulation cannot keep ``rate_hz`` through the display stage (:func:`require_tick_budget`)."""
    warnings = require_renderable(model, axis=spec.axis, allow_active=allow_active)
    require_tick_budget(model, rate_hz, evaluations=display_evaluations(model, spec, rate_hz))
    return warnings


def control_check(current: Callable[[], Model], spec: DeviceSpec, rate_hz: float, allow_active: bool = False
                  ) -> Callable[[Model], None]:
    """What control's model swaps and parameter changes must pass (raises :class:`UsageError`): no stiffer
    than both the device renders stably at ``rate_hz`` (Hz) and the current model (``current()``) already is
    (N/m), then what render asks (:func:`check_for_device`: physical ranges, passive unless ``allow_active``)."""
    def check(candidate: Any) -> None:
        limit = spec.max_stable_stiffness(rate_hz)        # this device's own limit first: the sharper reason
        stiffest = max((abs(k) for _, k in stiffnesses_Npm(candidate, spec.max_force_N)), default=0.0)
        before = max((abs(k) for _, k in stiffnesses_Npm(current(), spec.max_force_N)), default=0.0)
        if stiffest > max(limit, before):
            raise UsageError(f"a stiffness of {stiffest:.4g} N/m is beyond what this device renders stably "
                             f"({limit:.4g} N/m at {rate_hz:g} Hz); nothing changed")
        check_for_device(candidate, spec, rate_hz, allow_active=allow_active)
    return check


@dataclass(frozen=True)
class TickCost:
    """What one servo tick of a model costs at ``rate_hz`` (Hz): ``substeps`` integration sub-steps in its
    costly state of ``substep_s`` (s) each, its kernel timed at rest ``rest_s`` (s a tick), and up to
    ``evaluations`` model evaluations a tick; ``lower_bound``: ``substep_s`` is ``MIN_SUBSTEP_S``, not measured."""

    rate_hz: float
    substeps: int
    substep_s: float
    rest_s: float
    evaluations: int
    lower_bound: bool = False

    @property
    def estimate_s(self) -> float:
        """The tick's model work (s): ``evaluations x max(substeps x substep_s, rest_s)``."""
        return self.evaluations * max(self.substeps * self.substep_s, self.rest_s)

    @property
    def budget_s(self) -> float:
        """What a tick can give the model (s): ``TICK_BUDGET_SHARE`` of the period."""
        return TICK_BUDGET_SHARE / self.rate_hz

    def refusal(self, name: str | None = None) -> str | None:
        """One line saying why the model (its file ``name``, if given) cannot keep the rate, or None when it can."""
        if self.estimate_s <= self.budget_s:
            return None
        why = (f"{self.substeps} integration sub-steps of {self.substep_s * 1e9:.0f} ns"
               if self.substeps * self.substep_s >= self.rest_s else "its kernel timed at rest")
        if self.evaluations > 1:
            why += f", up to {self.evaluations} evaluations a tick through the display's coupling"
        hint = "; a heavier hammer or a softer contact needs fewer sub-steps" if self.substeps > 1 else ""
        whose = "the model's" if name is None else f"{name}: its"
        return (f"{whose} simulation needs {'at least' if self.lower_bound else 'about'} "
                f"{self.estimate_s * 1e6:.0f} us a tick at {self.rate_hz:g} Hz ({why}), more than the "
                f"{self.budget_s * 1e6:.0f} us ({TICK_BUDGET_SHARE:.0%} of the period) a servo tick can give it: "
                f"it cannot keep the rate{hint}")


def require_tick_budget(model: Model | CompiledModel, rate_hz: float, *, evaluations: int = 1,
                        name: str | None = None) -> TickCost:
    """The cost of ``model`` at ``rate_hz`` (Hz, :func:`tick_cost`); raises :class:`UsageError` (one line) when
    it exceeds the tick's budget."""
    cost = tick_cost(model, rate_hz, evaluations)
    reason = cost.refusal(name)
    if reason is not None:
        raise UsageError(reason)
    return cost


def tick_cost(model: Model | CompiledModel, rate_hz: float, evaluations: int = 1) -> TickCost:
    """Estimate a tick's cost (module docstring). A model over budget by its sub-steps at ``MIN_SUBSTEP_S``
    each is refused at that, without timing (nor compiling) anything."""
    dt = 1.0 / rate_hz
    parts = model.components() if isinstance(model, Model) else []
    substeps = sum(int(part.substeps_per_tick(dt)) for part in parts if hasattr(part, "substeps_per_tick"))
    floor = TickCost(float(rate_hz), substeps, MIN_SUBSTEP_S, 0.0, int(evaluations), lower_bound=True)
    if floor.refusal() is not None:
        return floor
    unit = substep_cost_s() if substeps else 0.0
    cost = TickCost(float(rate_hz), substeps, unit, 0.0, int(evaluations))
    if cost.refusal() is not None:
        return cost
    compiled = model.compile() if isinstance(model, Model) else model
    with compiling("the model kernels", MODEL_COMPILE_S):              # the kernels, on first use
        rest_s = _rest_tick_s(compiled, dt)
    return TickCost(float(rate_hz), substeps, unit, rest_s, int(evaluations))


def substep_cost_s() -> float:
    """The time (s) of one integration sub-step on this machine: the calibration key's fastest tick at rest
    (hammer on its jack, in contact) held to the sub-steps of an impact, over its
    :meth:`~HybridKey.substeps_per_tick`; measured once a process."""
    if not _SUBSTEP_COST_S:
        with compiling("the model kernels", MODEL_COMPILE_S):          # the kernels, on first use
            _SUBSTEP_COST_S.append(_calibrated_substep_s())
    return _SUBSTEP_COST_S[0]


def _calibrated_substep_s() -> float:
    """The calibration key's fastest tick at rest over its sub-steps a tick (s)."""
    from hapticam.models.files import load_model
    from hapticam.models.kernels import model_force

    key = load_model(CALIBRATION_MODEL)[0]
    compiled, dt = key.compile(), 1e-3
    compiled.component_blocks(0)[0][P_HKC] = 0.0       # no longer steps between impacts: an impact's sub-steps
    fastest = math.inf
    for _ in range(CALIBRATION_BATCHES):
        state = compiled.reset_state()
        model_force(compiled.params, state, 0.0, 0.0, 0.0, dt)           # the first tick places the hammer
        start = time.perf_counter()
        for _ in range(CALIBRATION_TICKS):
            model_force(compiled.params, state, 0.0, 0.0, 0.0, dt)
        fastest = min(fastest, (time.perf_counter() - start) / CALIBRATION_TICKS)
    return fastest / key.substeps_per_tick(dt)


def _rest_tick_s(compiled: CompiledModel, dt_s: float) -> float:
    """The median time (s) of the model's kernel over ticks of ``dt_s`` at rest at x = 0."""
    from hapticam.models.kernels import model_force

    state = compiled.reset_state()
    model_force(compiled.params, state, 0.0, 0.0, 0.0, dt_s)
    times: list[float] = []
    began = time.perf_counter()
    while len(times) < REST_TICKS and time.perf_counter() - began < REST_LIMIT_S:
        start = time.perf_counter()
        model_force(compiled.params, state, 0.0, 0.0, 0.0, dt_s)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def display_evaluations(model: Model | CompiledModel, spec: DeviceSpec, rate_hz: float, mode: str = "auto") -> int:
    """The most model evaluations a tick makes on ``spec`` at ``rate_hz`` (Hz): through the display's coupling,
    its proxy solve's (:mod:`hapticam.render.display`); 1 at the handle. A compiled model counts as at the
    handle (its stiffness is only known from a sweep of its kernel)."""
    stiffest = model_stiffness(model, spec) if isinstance(model, Model) else None
    return plan_display(stiffest, spec, rate_hz, mode).model_evaluations
