"""What :func:`hapticam.identify.impedance.fit.identify_impedance` returns: per-direction fits and the
model with its provenance, uncertainty and summary."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hapticam.identify.preprocess import Prepared
from hapticam.identify.impedance.segmentation import Segmentation


# -- results ---------------------------------------------------------------------------------------------
@dataclass
class DirectionFit:
    """One direction's estimates.

    Attributes
    ----------
    name : str
        ``"press"`` or ``"release"``.
    samples : int
        Valid samples in this direction.
    segmentation : Segmentation
        The chosen partition (breakpoints, optimal RSS per segment count).
    theta, std : numpy.ndarray
        Parameters ``[m, b, k, F0]`` per table entry and their standard deviations (rows: segments for
        constant interpolation, breakpoints for linear); fixed terms have std 0.
    residual_rms_N : numpy.ndarray
        RMS residual per segment (N).
    segment_samples : numpy.ndarray
        Samples per segment.
    profile_x_m, profile_theta, profile_std : numpy.ndarray
        The EWLS profile on the grid (cell centres; seed 001 Fig. 3) and its standard deviation.
    tolerance_N : float
        The tolerance used for this direction.
    windup_steps : int
        EWLS steps in which the covariance bound suspended forgetting.
    """

    name: str
    samples: int
    segmentation: Segmentation
    theta: np.ndarray
    std: np.ndarray
    residual_rms_N: np.ndarray
    segment_samples: np.ndarray
    profile_x_m: np.ndarray
    profile_theta: np.ndarray
    profile_std: np.ndarray
    tolerance_N: float
    windup_steps: int


@dataclass
class ImpedanceFit:
    """Result of :func:`identify_impedance`.

    Attributes
    ----------
    model : SegmentedImpedance
        The identified model (also :meth:`to_model`, the method every fit result has).
    provenance, uncertainty : dict
        What :func:`hapticam.models.files.save_model` stores (:meth:`save`).
    summary : dict
        Plain-data summary (segments, parameter ranges, identifiable terms, fit metrics).
    identifiable : dict
        Term -> bool (``m, b, k, F0``).
    fixed : dict
        Term -> value (SI) for every term not estimated.
    directions : dict
        ``"press"``/``"release"`` -> :class:`DirectionFit`.
    prepared : Prepared
        The preprocessed capture.
    prediction_N : numpy.ndarray
        The model's force along the captured path (all samples).
    """

    model: Any
    provenance: dict[str, Any]
    uncertainty: dict[str, Any]
    summary: dict[str, Any]
    identifiable: dict[str, bool]
    fixed: dict[str, float]
    directions: dict[str, DirectionFit]
    prepared: Prepared
    prediction_N: np.ndarray
    notes: list[str] = field(default_factory=list)

    def to_model(self) -> Any:
        """The identified :class:`~hapticam.models.impedance.SegmentedImpedance` model."""
        return self.model

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write :meth:`to_model` to a model file (``.yaml`` or ``.msgpack``) with provenance and uncertainty;
        the provenance's passivity verdict is that of the model written (:func:`stamp_passivity`)."""
        from hapticam.models.files import save_model

        model = self.to_model()
        stamp_passivity(self.provenance, model)
        save_model(path, model, provenance=self.provenance, uncertainty=self.uncertainty)


def stamp_passivity(provenance: dict[str, Any], model: Any) -> Any:
    """Record in ``provenance["metrics"]`` what :func:`hapticam.models.passivity.check_passivity` says of
    ``model``: ``passive`` (bool), ``passivity_issues`` (each way it can generate energy) and
    ``passivity_check`` (what was checked); ``settings.passivity_constraints`` says whether the fit imposed
    them. Returns the report, so a summary can say the same."""
    from hapticam.models.passivity import check_passivity

    report = check_passivity(model)
    metrics = provenance.setdefault("metrics", {})
    metrics["passive"] = report.passive
    metrics["passivity_issues"] = list(report.issues)
    metrics["passivity_check"] = "check_passivity of the model written: m, b >= 0, releasing <= pressing force"
    return report
