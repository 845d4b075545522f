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
"""

from __future__ import annotations

from typing import Any, Callable

from hapticam.devices.base import DeviceSpec
from hapticam.errors import UsageError
from hapticam.models.base import Model
from hapticam.models.acceptance import require_renderable


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
    :class:`~hapticam.errors.UsageError` unless ``allow_active`` (then each issue is a warning)."""
    warnings = require_renderable(model, allow_active=allow_active)
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
