"""Identification: preprocessing, estimators (EWLS) and fitting pipelines that turn captures into models.

Captures themselves (:class:`~hapticam.capture.Capture`, :mod:`hapticam.capture_io`) live on the ground floor;
they are re-exported here for convenience.

- :mod:`~hapticam.identify.preprocess`: zero-phase derivatives, direction of travel, position sorting
- :mod:`~hapticam.identify.impedance.ewls`: :class:`EWLS` and :func:`ewls_fit` (seed 001 Table 1)
- :mod:`~hapticam.identify.impedance.segmentation`: optimal constant/linear segmentation
- :mod:`~hapticam.identify.impedance.fit`: :func:`identify_impedance` -> :class:`ImpedanceFit`
- :mod:`~hapticam.identify.metrics`: :func:`fit_percent` (seed 003 eq. 53), RMS and max error
"""

from hapticam.lazy_exports import lazy_exports

#: public name -> the module that defines it; loaded on first use (PEP 562), so importing the
#: package does not load numba or scipy
_EXPORTS = {
    "Capture": "hapticam.capture",
    "load_capture": "hapticam.capture_io",
    "save_capture": "hapticam.capture_io",
    "EWLS": "hapticam.identify.impedance.ewls",
    "ewls_fit": "hapticam.identify.impedance.ewls",
    "fit_percent": "hapticam.identify.metrics",
    "fit_report": "hapticam.identify.metrics",
    "max_error": "hapticam.identify.metrics",
    "rms_error": "hapticam.identify.metrics",
}

__all__ = list(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
