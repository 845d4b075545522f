"""hapticam: the haptic camera.

Probe a real key or switch, identify a model of it (:mod:`hapticam.identify`), render the model on a
haptic device at 1 kHz (:mod:`hapticam.render`, :mod:`hapticam.devices`), and verify that the rendered
object feels like the real one (``hapticam verify``). Model types and model files live in
:mod:`hapticam.models`. All quantities are SI (m, N, s, kg).
"""

import hashlib
import os
import sys

from hapticam._version import __version__
from hapticam.errors import HapticError

__all__ = ["__version__", "HapticError"]

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
