"""What makes a model acceptable: one definition, applied by the model files, ``hapticam model validate``
and render's gate (:mod:`hapticam.render.gate`) alike.

Three levels, each needing the one before:

1. **valid**: the file is a model file and every parameter lies within the physical range its kind
   declares (:meth:`hapticam.models.base.Model.check_ranges`, run by every loader; a negative mass or
   damping only on a model marked active). A model that is not valid is never loaded, so never rendered.
2. **passive**: its kind's own analysis (:meth:`hapticam.models.base.Model.passivity`) finds no way for it
   to generate energy (a kind that declares no analysis is not passive).
3. **renderable**: ``hapticam render`` takes it: valid and passive unless told ``--allow-active`` (then
   each passivity issue is a warning), on a device of its axis kind (:func:`axis_refusal`: a key's model,
   m and N, on a linear device; a knob's, rad and N m, on a rotary one such as ``--device sim:rotary``). A
   stiffness above what a device renders stably at its rate (``K < 2 b / T``) is a warning of render's gate
   on that device, never a refusal, so renderability depends on the device only through its axis kind.

The verdict also names the impacts the model's kernels report (each kind's ``impact_events``).

Every kind the model files can name is registered (:data:`~hapticam.models.base.MODEL_KINDS`) when its
module is imported; this module, which the model files import, imports them all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import hapticam.models.composite  # noqa: F401  (the model kinds: importing a module registers its kinds)
import hapticam.models.contact  # noqa: F401
import hapticam.models.friction  # noqa: F401
import hapticam.models.hybrid_key.model  # noqa: F401
import hapticam.models.impedance  # noqa: F401
from hapticam.errors import UsageError
from hapticam.models.base import Model
from hapticam.models.ranges import on_axis
from hapticam.models.passivity import PassivityReport

#: the axis kind of a model file without ``axis`` and of a device that does not say (m, N)
DEFAULT_AXIS = "linear"


@dataclass
class Acceptance:
    """The verdict on a valid model (:func:`judge`).

    ``refusals``: why ``hapticam render`` would refuse it (none: renderable); ``warnings``: what render
    would warn about on any device (the passivity issues it was told to accept with ``--allow-active``);
    ``impact_events``: the impacts its kernels report (:func:`impact_events`).
    """

    kind: str
    components: int
    axis: str
    marked_active: bool
    passivity: PassivityReport
    allow_active: bool = False
    impact_events: tuple[str, ...] = ()
    refusals: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def passive(self) -> bool:
        return self.passivity.passive

    @property
    def renderable(self) -> bool:
        return not self.refusals

    def to_dict(self) -> dict[str, Any]:
        """Plain data, as ``model validate --json`` prints it."""
        return {"valid": True, "kind": self.kind, "components": self.components, "axis": self.axis,
                "marked_active": self.marked_active, "passive": self.passive,
                "passivity_issues": list(self.passivity.issues), "allow_active": self.allow_active,
                "renderable": self.renderable, "refusals": list(self.refusals), "warnings": list(self.warnings),
                "impact_events": list(self.impact_events)}


def axis_refusal(axis: str, device_axis: str = DEFAULT_AXIS) -> str | None:
    """Why a model on ``axis`` is not rendered on a device whose handle moves on ``device_axis`` (None when
    the two agree: a model's numbers are read in its device's units, m and N or rad and N m)."""
    if axis == device_axis:
        return None
    if axis == "rotary":
        return ("a rotary model (rad, N m); this device renders a linear axis (m, N), so it is not rendered here "
                "(render it on a rotary device, --device sim:rotary; hapticam verify compares it with a rotary "
                "capture)")
    return (f"a {axis} model (m, N); this device renders a rotary axis (rad, N m), so it is not rendered here "
            "(render it on a linear device, such as --device sim)")


def passivity_refusal(report: PassivityReport, marked_active: bool) -> str:
    """Render's refusal of a model that is not passive, naming ``--allow-active``."""
    origin = (" (it is marked active: fitted without the passivity constraints; re-identify it without "
              "--allow-active for a passive fit)" if marked_active else "")
    return ("the model is not passive (" + "; ".join(report.issues[:3]) + f"){origin}: it could push energy "
            "into the user's hand; pass --allow-active to render it anyway")


def marked_active(model: Model) -> bool:
    """True if any component is marked active (may hold negative mass or damping)."""
    return any(part.active for part in model.components())


def impact_events(model: Model) -> tuple[str, ...]:
    """The impacts the kernels of ``model``'s components report (each kind's ``impact_events``), each once."""
    return tuple(dict.fromkeys(event for part in model.components() for event in part.impact_events))


def judge(model: Model, *, axis: str = DEFAULT_AXIS, allow_active: bool = False) -> Acceptance:
    """Check ``model``'s ranges (raises :class:`~hapticam.errors.ModelValidationError` if it is not valid)
    and say whether it is passive (its kind's :meth:`~hapticam.models.base.Model.passivity`) and whether
    render takes it (with ``--allow-active`` if ``allow_active``)."""
    with on_axis(axis):
        model.check_ranges()
    report = model.passivity()
    verdict = Acceptance(kind=model.kind, components=len(model.components()), axis=axis,
                         marked_active=marked_active(model), passivity=report, allow_active=allow_active,
                         impact_events=impact_events(model))
    if not report.passive:
        if allow_active:
            verdict.warnings.extend(f"not passive: {issue}" for issue in report.issues)
        else:
            verdict.refusals.append(passivity_refusal(report, verdict.marked_active))
    return verdict


def require_renderable(model: Model, *, axis: str = DEFAULT_AXIS, allow_active: bool = False) -> list[str]:
    """Render's refusal: raise :class:`~hapticam.errors.UsageError` with the first reason render refuses
    ``model`` on a device's ``axis`` (a range error raises :class:`~hapticam.errors.ModelValidationError`);
    return the warnings."""
    verdict = judge(model, axis=axis, allow_active=allow_active)
    if verdict.refusals:
        raise UsageError(verdict.refusals[0])
    return verdict.warnings
