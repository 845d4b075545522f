"""Verification: probe the rendered object the way the real one was probed, and compare forces.

The comparison mode on top of rendering, and the one part of :mod:`hapticam.render` that uses
:mod:`hapticam.identify` (preprocessing and fit metrics). The render core (servo loop, safety, telemetry,
recording, sessions) imports nothing from here.

- :mod:`~hapticam.render.verify.compare`: :func:`verify` -> :class:`VerifyResult` (replay a capture's
  probe trajectory on the rendered model, compare forces)
- :mod:`~hapticam.render.verify.features`: F-x curves and the key features a person feels, with verdicts
  against discrimination thresholds
- :mod:`~hapticam.render.verify.impacts`: impacts in a press and the criterion for presses with impacts
- :mod:`~hapticam.render.verify.report`: JSON and PNG reports
- :mod:`~hapticam.render.verify.cli`: ``hapticam verify``
"""

from hapticam.render.verify.compare import VerifyResult, is_quasi_static, verify

__all__ = ["VerifyResult", "is_quasi_static", "verify"]
