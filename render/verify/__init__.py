"""Verification: probe the rendered object the way the real one was probed, and compare forces.

The comparison mode on top of rendering, and the one part of :mod:`hapticam.render` that uses
:mod:`hapticam.identify` (preprocessing and fit metrics). The render core (servo loop, safety, telemetry,
recording, sessions) imports nothing from here.

- :mod:`~hapticam.render.verify.compare`: :func:`verify` -> :class:`VerifyResult` (replay a capture's
  probe trajectory on the rendered model, compare forces)
- :mod:`~hapticam.render.verify.features`: F-x curves and the key features a person feels, with verdicts
  against discrimination thresholds
- :mod:`~hapticam.render.verify.impacts`: impacts in a press and the criterion for presses with impacts
- :mod:`~hapticam.render.verify.impact_report`: what verify reports of the impacts, and their verdict
- :mod:`~hapticam.render.verify.repeats`: impact onsets judged within repeat presses of the key
- :mod:`~hapticam.render.verify.probe_tip`: a key held as the capture's probe held it (its tip, its servo)
- :mod:`~hapticam.render.verify.report`: JSON and PNG reports
- :mod:`~hapticam.commands.verify`: ``hapticam verify``
"""

from hapticam.lazy_exports import lazy_exports

#: public name -> the module that defines it; loaded on first use (PEP 562), so importing the
#: package does not load numba or scipy
_EXPORTS = {
    "VerifyResult": "hapticam.render.verify.compare",
    "is_quasi_static": "hapticam.render.verify.compare",
    "verify": "hapticam.render.verify.compare",
}

__all__ = list(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
