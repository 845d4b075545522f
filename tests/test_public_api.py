"""``import hapticam`` is the public API: the README's probe -> identify -> verify snippet runs as printed,
every name in ``__all__`` resolves, is typed and documented, and the verbs that stand for a command do
what the command does."""

from __future__ import annotations

import importlib
import inspect
import os
import pkgutil
import re
import subprocess
import sys
import tomllib
import warnings
from pathlib import Path

import numpy as np
import pytest

import hapticam

ROOT = Path(__file__).resolve().parent.parent

#: the README's snippet (section "Python"), run exactly as printed there
SNIPPET = '''\
import hapticam

capture = hapticam.probe("tactile-switch", "sweep", duration_s=30.0)  # the simulated probe, 4 kHz
fit = hapticam.identify_impedance(capture)                            # passive segmented impedance
fit.save("tactile.yaml")
model, document = hapticam.load_model("tactile.yaml")
held_out = hapticam.probe("tactile-switch", "triangle", seed=1)        # a slow press and release
result = hapticam.verify(model, held_out, model_name="tactile.yaml")
print(f"fit {result.fit_percent:.2f} %, passed: {result.passed}")
'''


@pytest.fixture(scope="module")
def snippet_run(tmp_path_factory):
    """The snippet's namespace and the folder it ran in (its model file is there)."""
    folder = tmp_path_factory.mktemp("snippet")
    namespace: dict = {}
    cwd = Path.cwd()
    try:
        os.chdir(folder)
        exec(compile(SNIPPET, "README snippet", "exec"), namespace)
    finally:
        os.chdir(cwd)
    return namespace, folder


def test_probe_identify_verify_in_under_ten_lines(snippet_run, capsys):
    namespace, folder = snippet_run
    assert len(SNIPPET.splitlines()) < 10
    result = namespace["result"]
    # verified against a press of the simulated switch itself, held out from the fit: the ground truth
    assert result.passed and result.fit_percent > 99.0, result.failures
    assert result.capture_name == namespace["held_out"].name
    assert (folder / "tactile.yaml").is_file() and namespace["document"].kind == "segmented-impedance"


def test_the_readme_shows_the_snippet_this_file_runs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", readme, flags=re.S)
    assert SNIPPET in blocks


def test_importing_hapticam_loads_no_numba_scipy_or_layer():
    layers = ["numba", "scipy", "hapticam.models", "hapticam.identify", "hapticam.devices", "hapticam.render",
              "hapticam.api"]
    code = f"import sys, hapticam; print(' '.join(m for m in {layers!r} if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == []


def _is_documented(value: object, name: str) -> bool:
    doc = inspect.getdoc(value) or ""
    return bool(doc.strip()) and not doc.startswith(f"{name}(")      # not a dataclass's generated signature


@pytest.mark.parametrize("name", hapticam.__all__)
def test_every_public_name_resolves_and_is_documented(name):
    value = getattr(hapticam, name)
    assert name in dir(hapticam)
    if name in hapticam._EXPORTS:
        assert value is getattr(importlib.import_module(hapticam._EXPORTS[name]), name)
    listed = re.search(rf"(?<![\w.]){re.escape(name)}\b", hapticam.__doc__)
    assert listed, f"{name} is not in the package docstring"
    if name == "__version__":
        assert re.fullmatch(r"\d+\.\d+(\.\d+)?\S*", value)
        return
    assert _is_documented(value, name), f"{name} has no docstring of its own"
    if inspect.isfunction(value):
        signature = inspect.signature(value)
        untyped = [p.name for p in signature.parameters.values() if p.annotation is inspect.Parameter.empty]
        assert untyped == [] and signature.return_annotation is not inspect.Signature.empty, name


def test_no_public_name_is_a_module_of_the_package():
    # importing hapticam.render binds the subpackage over an export named "render"
    modules = {m.name for m in pkgutil.iter_modules(hapticam.__path__)}
    assert modules & set(hapticam.__all__) == set()


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no_such_name"):
        getattr(hapticam, "no_such_name")


def test_the_type_marker_ships_with_the_package():
    assert (ROOT / "py.typed").is_file()
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert "py.typed" in data["hapticam"]


def test_probe_gives_the_capture_the_probe_command_writes(tmp_path):
    from hapticam.cli import main

    written = tmp_path / "press.npz"
    assert main(["probe", "tactile-switch", "--excitation", "triangle", "--seed", "3", "-o", str(written)]) == 0
    by_command = hapticam.load_capture(written)
    by_function = hapticam.probe("tactile-switch", "triangle", seed=3)
    assert by_function.n == by_command.n
    np.testing.assert_array_equal(by_function.x_m, by_command.x_m)
    np.testing.assert_array_equal(by_function.f_N, by_command.f_N)


@pytest.mark.parametrize("call", [
    lambda: hapticam.probe("no-such-target"),
    lambda: hapticam.probe("knob", "sweep"),                       # a knob is spun down or turned
    lambda: hapticam.probe("tactile-switch", "spin-down"),
    lambda: hapticam.probe("tactile-switch", parameters={"no_such_parameter": 1.0}),
    lambda: hapticam.render_model("example:linear-key", realtime=False, duration_s=-1.0),
    lambda: hapticam.library_nearest(".", "example:linear-key", n=0),
], ids=["target", "knob-sweep", "switch-spin-down", "parameter", "duration", "nearest-n"])
def test_bad_arguments_are_one_usage_error(call):
    with pytest.raises(hapticam.UsageError):
        call()


def test_nearest_in_a_folder_without_a_library_is_a_usage_error(tmp_path):
    with pytest.raises(hapticam.UsageError, match="index.json"):
        hapticam.library_nearest(tmp_path, "example:linear-key")


def test_render_model_on_the_simulated_clock_is_the_servo_loop_tick_for_tick(snippet_run, tmp_path):
    _, folder = snippet_run
    model_file = folder / "tactile.yaml"
    with warnings.catch_warnings():
        warnings.simplefilter("error")                    # a passive model renders without a warning
        report = hapticam.render_model(model_file, realtime=False, duration_s=1.0, record=tmp_path / "r.csv")
    assert report.stats.ticks == 1000 and not report.stats.fault and report.recording[1] == 1000
    reference = hapticam.run_simulated(hapticam.load_model(model_file)[0], user="press", duration_s=1.0)
    recorded = hapticam.load_capture(tmp_path / "r.csv")
    np.testing.assert_allclose(recorded.x_m, reference.x_m, atol=1e-12)
    np.testing.assert_allclose(recorded.f_N, reference.force_N, atol=1e-9)
    assert np.abs(reference.force_N).max() > 0.1                  # the press reached the switch


def test_a_device_that_fails_to_close_ends_render_model_with_the_runs_statistics(monkeypatch):
    """The run ended; closing the device failed: the error says so and carries the whole run's report."""
    from hapticam.world.sim import SimulatedDevice
    from hapticam.render.session import StopFailed

    def failing_close(device):
        raise hapticam.DeviceError("sim: the amplifier did not answer DISABLE")
    monkeypatch.setattr(SimulatedDevice, "_close", failing_close)
    with pytest.raises(StopFailed) as failed:
        hapticam.render_model("example:linear-key", realtime=False, duration_s=0.5)
    assert "DISABLE" in str(failed.value)
    assert failed.value.report.stats.ticks == 500 and failed.value.report.events[-1].name == "stop"


@pytest.mark.parametrize("call, parameter, argv, flag", [
    (lambda: hapticam.render_model("example:linear-key", realtime=False, duration_s=-1.0), "duration_s",
     ["render", "example:linear-key", "--simulated-clock", "--duration", "-1"], "--duration"),
    (lambda: hapticam.render_model("example:linear-key", realtime=False, depth_m=1.0), "depth_m",
     ["render", "example:linear-key", "--simulated-clock", "--depth-mm", "1000"], "--depth-mm"),
    (lambda: hapticam.verify(hapticam.load_model("example:linear-key")[0],
                             hapticam.probe("tactile-switch", "triangle"), device="sim", max_force_N=2.0),
     "max_force_N", ["verify", "example:linear-key", "no-capture.csv", "--device", "sim", "--max-force", "2"],
     "--max-force"),
], ids=["render-duration", "render-depth", "verify-max-force"])
def test_a_bad_argument_names_the_parameter_and_the_command_its_flag(capsys, call, parameter, argv, flag):
    from hapticam.cli import main

    with pytest.raises(hapticam.errors.ParameterError) as bad:
        call()
    assert bad.value.parameter == parameter
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and flag in err[0] and parameter not in err[0]


def test_library_compare_notices_a_clicky_keys_bump_against_a_linear_key(tmp_path):
    files = {}
    for name in ("linear-key", "clicky-key"):
        model, document = hapticam.load_model(f"example:{name}")
        files[name] = tmp_path / f"{name}.yaml"
        hapticam.save_model(files[name], model, provenance=document.provenance)
    same = hapticam.library_compare(files["linear-key"], files["linear-key"])
    assert same["distance_jnd"] == 0.0 and same["noticeable"] == []
    clicky = hapticam.library_compare(files["clicky-key"], files["linear-key"])
    assert clicky["distance_jnd"] > 1.0
    assert clicky["features_a"]["bump_peak_N"] > 0.0 == clicky["features_b"]["bump_peak_N"]
    assert any(line.startswith("bump_peak_N: more") for line in clicky["noticeable"])
