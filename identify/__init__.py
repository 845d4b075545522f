"""Identification: preprocessing, estimators (EWLS) and fitting pipelines that turn captures into models.

Captures themselves (:class:`~hapticam.capture.Capture`, :mod:`hapticam.capture_io`) live on the ground floor;
they are re-exported here for convenience.

- :mod:`~hapticam.identify.preprocess`: zero-phase derivatives, direction of travel, position sorting
- :mod:`~hapticam.identify.ewls`: :class:`EWLS` and :func:`ewls_fit` (seed 001 Table 1)
- :mod:`~hapticam.identify.segmentation`: optimal constant/linear segmentation
- :mod:`~hapticam.identify.impedance_fit`: :func:`identify_impedance` -> :class:`ImpedanceFit`
- :mod:`~hapticam.identify.metrics`: :func:`fit_percent` (seed 003 eq. 53), RMS and max error
"""

from hapticam.capture import Capture
from hapticam.capture_io import load_capture, save_capture
from hapticam.identify.ewls import EWLS, ewls_fit
from hapticam.identify.metrics import fit_percent, fit_report, max_error, rms_error

__all__ = ["Capture", "load_capture", "save_capture", "EWLS", "ewls_fit", "fit_percent", "fit_report",
           "max_error", "rms_error"]
