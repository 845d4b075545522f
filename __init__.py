"""hapticam: the haptic camera.

Probe a real key or switch, identify a model of it (:mod:`hapticam.identify`), render the model on a
haptic device at 1 kHz (:mod:`hapticam.render`, :mod:`hapticam.devices`), and verify that the rendered
object feels like the real one (``hapticam verify``). Model types and model files live in
:mod:`hapticam.models`. All quantities are SI (m, N, s, kg).

The names below are the public API (``__all__``); each is loaded from its module on first use, so
``import hapticam`` loads neither numba nor scipy. Probe, identify and verify::

    capture = hapticam.probe("tactile-switch", "sweep", duration_s=30.0)
    fit = hapticam.identify_impedance(capture)
    result = hapticam.verify(fit.model, hapticam.probe("tactile-switch", "triangle", seed=1))

Verbs, by the command that does the same:

- ``hapticam probe``: :func:`probe` (a simulated target, by name from :func:`targets`) -> :class:`Capture`;
  captures on disk: :func:`load_capture`, :func:`save_capture` (``.csv``, ``.npz``)
- ``hapticam identify impedance``: :func:`identify_impedance` -> :class:`ImpedanceFit` (``fit.save(path)``)
- ``hapticam model``: :func:`load_model` -> (:class:`Model`, :class:`ModelDocument`), :func:`save_model`,
  :func:`example_names` (``example:NAME``), :func:`check_passivity`
- ``hapticam render``: :func:`render_model` on a device (:func:`available_devices`) ->
  :class:`SessionReport`; on the simulated device and clock, every tick: :func:`run_simulated` ->
  :class:`RenderResult`
- ``hapticam verify``: :func:`verify` -> :class:`VerifyResult`
- ``hapticam library build|nearest|compare``: :func:`build_library` -> :class:`BuildReport`,
  :func:`library_nearest`, :func:`library_compare`

Nouns: :class:`Capture`, :class:`Target`, :class:`Model`, :class:`ModelDocument`, :class:`ImpedanceFit`,
:class:`SessionReport`, :class:`RenderResult`, :class:`VerifyResult`, :class:`BuildReport`, and the
exceptions of :mod:`hapticam.errors`, all under :class:`HapticError`: :class:`UsageError`,
:class:`CaptureError`, :class:`ModelFileError`, :class:`ModelValidationError`,
:class:`IdentificationError`, :class:`DeviceError`, :class:`DependencyMissingError`,
:class:`RenderError`, :class:`SafetyFault`, :class:`ControlError`. The package's version:
``__version__``. How the layers fit together: ``docs/architecture.md``.
"""

import hashlib
import os
import sys

from hapticam._version import __version__
from hapticam.errors import (CaptureError, ControlError, DependencyMissingError, DeviceError, HapticError,
                             IdentificationError, ModelFileError, ModelValidationError, RenderError, SafetyFault,
                             UsageError)
from hapticam.lazy_exports import lazy_exports

#: public name -> the module that defines it; loaded on first use (PEP 562). A name here must not be a
#: subpackage's (``render``, ``identify``): importing the subpackage would bind its name over the export.
_EXPORTS = {
    "Capture": "hapticam.capture",
    "load_capture": "hapticam.capture_io",
    "save_capture": "hapticam.capture_io",
    "Target": "hapticam.world.physics",
    "targets": "hapticam.api",
    "probe": "hapticam.api",
    "ImpedanceFit": "hapticam.identify.impedance.result",
    "identify_impedance": "hapticam.identify.impedance.fit",
    "Model": "hapticam.models.base",
    "ModelDocument": "hapticam.models.files",
    "load_model": "hapticam.models.files",
    "save_model": "hapticam.models.files",
    "example_names": "hapticam.models.files",
    "check_passivity": "hapticam.models.passivity",
    "available_devices": "hapticam.devices.registry",
    "SessionReport": "hapticam.render.session",
    "render_model": "hapticam.api",
    "RenderResult": "hapticam.render.result",
    "run_simulated": "hapticam.render.loop",
    "VerifyResult": "hapticam.render.verify.compare",
    "verify": "hapticam.render.verify.compare",
    "BuildReport": "hapticam.library.build",
    "build_library": "hapticam.library.build",
    "library_nearest": "hapticam.api",
    "library_compare": "hapticam.api",
}

__all__ = ["__version__", "HapticError", "UsageError", "CaptureError", "ModelFileError", "ModelValidationError",
           "IdentificationError", "DeviceError", "DependencyMissingError", "RenderError", "SafetyFault",
           "ControlError", *_EXPORTS]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())

#: numba's on-disk cache lives in a folder named by a digest of this package's source
NUMBA_CACHE_PREFIX = "hapticam-src-"


def _source_digest(root: str | None = None) -> str:
    """A digest of every ``.py`` and ``.c`` file under ``root`` (default the package: about 6 ms)."""
    root = root or os.path.dirname(os.path.abspath(__file__))
    digest = hashlib.blake2b(digest_size=8)
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "__")) and d != "tests")
        for name in sorted(f for f in filenames if f.endswith((".py", ".c"))):
            path = os.path.join(dirpath, name)
            digest.update(os.path.relpath(path, root).encode())
            with open(path, "rb") as fh:
                digest.update(fh.read())
    return digest.hexdigest()


def _key_numba_cache() -> None:
    """Point numba's cache at ``BASE/hapticam-src-DIGEST`` (``BASE``: ``NUMBA_CACHE_DIR``, else
    ``~/.cache/hapticam``). numba invalidates a cached function only when its own file changes, not the
    modules it calls (a compiled ``model_force`` inlines every model kind's kernel), so after an upgrade or
    an edit a cache keyed by the source file alone could run old code; keyed by the whole package's source,
    a changed package compiles afresh. An unwritable folder makes numba fall back to its default."""
    base = os.environ.get("NUMBA_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "hapticam")
    if os.path.basename(os.path.normpath(base)).startswith(NUMBA_CACHE_PREFIX):
        return                                             # already keyed (a child process of ours)
    keyed = os.path.join(base, NUMBA_CACHE_PREFIX + _source_digest())
    if "numba" in sys.modules:                             # numba read its configuration at import
        sys.modules["numba"].config.CACHE_DIR = keyed
    os.environ["NUMBA_CACHE_DIR"] = keyed


_key_numba_cache()
