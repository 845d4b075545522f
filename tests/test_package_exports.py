"""Package-level names load their modules on first use: importing a package costs no numba or scipy."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

PACKAGES = ["hapticam.identify", "hapticam.models", "hapticam.render.verify"]


def _loaded_after_import(module: str, candidates: list[str]) -> list[str]:
    """Which of ``candidates`` a fresh interpreter has in ``sys.modules`` after ``import module``."""
    code = f"import sys, {module}; print(' '.join(m for m in {candidates!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.split()


@pytest.mark.parametrize("package", PACKAGES)
def test_importing_a_package_loads_neither_numba_nor_scipy(package):
    assert _loaded_after_import(package, ["numba", "scipy"]) == []


def test_preprocessing_does_not_load_scipy_signal():
    assert _loaded_after_import("hapticam.identify.preprocess", ["scipy.signal"]) == []


@pytest.mark.parametrize("package", PACKAGES)
def test_every_exported_name_is_the_defining_modules_object(package):
    pkg = importlib.import_module(package)
    assert pkg.__all__
    for name in pkg.__all__:
        value = getattr(pkg, name)
        defining = importlib.import_module(pkg._EXPORTS[name])
        assert value is getattr(defining, name), name
        assert name in dir(pkg)


def test_from_import_of_exported_names_and_submodules():
    from hapticam.identify import EWLS, Capture, load_capture
    from hapticam.identify.impedance.ewls import EWLS as EWLS_defined
    from hapticam.models import SegmentedImpedance
    from hapticam.models.hybrid_key import model as hybrid_key
    from hapticam.render.verify import verify

    assert EWLS is EWLS_defined
    assert Capture.__name__ == "Capture" and callable(load_capture) and callable(verify)
    assert SegmentedImpedance.__module__ == "hapticam.models.impedance"
    assert hybrid_key.__name__ == "hapticam.models.hybrid_key.model"


@pytest.mark.parametrize("package", PACKAGES)
def test_an_unknown_name_raises_attribute_error(package):
    pkg = importlib.import_module(package)
    with pytest.raises(AttributeError, match="no_such_name"):
        getattr(pkg, "no_such_name")
