"""hapticam: the haptic camera.

Probe a real key or switch, identify a model of it (:mod:`hapticam.identify`), render the model on a
haptic device at 1 kHz (:mod:`hapticam.render`, :mod:`hapticam.devices`), and verify that the rendered
object feels like the real one (``hapticam verify``). Model types and model files live in
:mod:`hapticam.models`. All quantities are SI (m, N, s, kg).
"""

from hapticam._version import __version__
from hapticam.errors import HapticError

__all__ = ["__version__", "HapticError"]
