"""The friction methods of ``identify friction --method``, in the ``friction`` family's signature
(:data:`hapticam.identify.estimators.FRICTION_METHODS`).

Each takes the captures (a linear axis: m, N; a rotary one: rad, N m), the law's name, and the
experiment's settings, and gives a :class:`FrictionEstimate`: the model, the law's fit and what the
experiment reports. ``ls`` is least squares with standard errors (:mod:`.product`, :mod:`.spin_down`,
:mod:`.press_speeds`); ``uas`` runs the observer of Wadi, Mukhopadhyay & Romdhane, "Identifying Friction
in a Nonlinear Chaotic System Using a Universal Adaptive Stabilizer", whose output is not identified
friction (:mod:`.product_uas`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from hapticam.capture import Capture
from hapticam.models.base import Model


@dataclass
class FrictionEstimate:
    """What a friction method gives: the ``model`` to write (a ``friction`` model, or the composite of a
    fitted spring and the friction), the law's ``fit`` (:class:`~.product.LawFit`), the experiment's
    ``detail`` for the summary, whether the levels are ``identified`` from the data (with standard errors)
    and their ``uncertainty`` (standard errors by parameter, SI units; ``None`` if not identified)."""

    model: Model
    fit: Any
    detail: dict[str, Any] = field(default_factory=dict)
    identified: bool = True
    uncertainty: dict[str, Any] | None = None

    def to_model(self) -> Model:
        """The model the method fitted (:attr:`model`)."""
        return self.model


def least_squares(captures: Sequence[Capture], law: str, *, experiment: str, axis: str,
                  inertia: float | None = None, added_inertia: Sequence[float] | None = None,
                  window_s: float | None = None) -> FrictionEstimate:
    """The law by least squares from spin-downs (``inertia``, kg m^2, given or identified from the
    ``added_inertia`` of each capture) or from presses at several speeds; ``window_s``: the differentiation
    window (s; default the experiment's)."""
    from hapticam.identify.friction.press_speeds import fit_press_speeds, press_summary
    from hapticam.identify.friction.spin_down import WINDOW_S, coast_summary, fit_spin_downs

    if experiment == "spin-down":
        fit, coasts = fit_spin_downs(captures, law, inertia=inertia, added_inertia=added_inertia, window_s=window_s)
        return FrictionEstimate(fit.to_model(), fit, {"coasts": coast_summary(fit, coasts)},
                                uncertainty=fit.uncertainty())
    pf = fit_press_speeds(captures, law, axis=axis, window_s=window_s or WINDOW_S)
    detail = press_summary(pf)
    if pf.knots is None and not pf.detents_per_rev:
        return FrictionEstimate(pf.to_model(), pf.law_fit, detail, uncertainty=pf.law_fit.uncertainty())
    if pf.knots is None:                   # a knob's detents: an angle table beside the friction
        uncertainty = {"friction": pf.law_fit.uncertainty(),
                       "detent_amplitude_Nm": pf.law_fit.detent_amplitude()[1]}
        return FrictionEstimate(pf.to_model(), pf.law_fit, detail, uncertainty=uncertainty)
    uncertainty = {"friction": pf.law_fit.uncertainty(), "spring_f_N": detail["spring_se_N"]}
    return FrictionEstimate(pf.to_model(), pf.law_fit, detail, uncertainty=uncertainty)


def uas_observer(captures: Sequence[Capture], law: str, *, experiment: str, axis: str,
                 inertia: float | None = None, added_inertia: Sequence[float] | None = None,
                 window_s: float | None = None) -> FrictionEstimate:
    """The UAS observer on the first capture's speed (:func:`~.product_uas.run_uas`); the other settings
    are not used. Its levels are not identified friction (the report's ``statement`` says why)."""
    from hapticam.identify.friction.product_uas import run_uas

    fit, report = run_uas(captures, law)
    return FrictionEstimate(fit.to_model(), fit, report, identified=False)
