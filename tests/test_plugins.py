"""Device adapters and model kinds from another distribution, found through its entry points.

The example distribution in ``tests/plugin_pkg`` declares the adapter ``light-sim`` (the simulator with a
2 N motor) and the kind ``tactile-bump`` (a preloaded spring with a Gaussian bump and a bottom-out wall).
It is never installed: each test writes its ``*.dist-info`` (``METADATA`` and the ``entry_points.txt`` its
``pyproject.toml`` declares) into a temporary folder and puts that folder and the package's on the path,
where ``importlib.metadata`` finds it as it finds an installed distribution.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest

from hapticam.capture import Capture
from hapticam.capture_io import save_capture
from hapticam.devices.base import Device
from hapticam.devices.registry import ADAPTERS, EMULATED_ADAPTERS, available_devices, device_class
from hapticam.errors import DependencyMissingError, DeviceError, ModelFileError, ModelValidationError
from hapticam.models.base import MODEL_KINDS, Model
from hapticam.models.contact import Contact
from hapticam.models.registry import BUILTIN_KINDS, ComposedKind, available_kinds, kind_class

PLUGIN_DIR = Path(__file__).resolve().parent / "plugin_pkg"
#: the tactile key the tests render: N, N/m, m
BUMP = {"preload_N": 0.3, "k_Npm": 200.0, "bump_N": 0.4, "bump_at_m": 0.0015, "bump_width_m": 0.00025,
        "travel_m": 0.0035, "bottom_k_Npm": 3000.0}
#: the peak force of the plugin's device (N)
LIGHT_MAX_FORCE_N = 2.0


def closed_form_N(p: dict[str, float], x_m: np.ndarray) -> np.ndarray:
    """The tactile key's force (N) at ``x_m`` (m): the curve over the travel (held at its end values before
    it, as the table holds them) plus the bottom-out wall beyond it."""
    x = np.clip(x_m, 0.0, p["travel_m"])
    curve = p["preload_N"] + p["k_Npm"] * x + p["bump_N"] * np.exp(-0.5 * ((x - p["bump_at_m"]) / p["bump_width_m"]) ** 2)
    return curve + p["bottom_k_Npm"] * np.maximum(np.asarray(x_m) - p["travel_m"], 0.0)


def write_dist(folder: Path, name: str, groups: dict[str, dict[str, str]], version: str = "0.1") -> None:
    """A distribution's metadata as an installer leaves it: ``NAME-VERSION.dist-info`` in ``folder``."""
    info = folder / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text("".join(
        f"[{group}]\n" + "".join(f"{key} = {value}\n" for key, value in entries.items()) + "\n"
        for group, entries in groups.items()))


def write_example_dist(folder: Path) -> None:
    """The example distribution's metadata, its entry points read from its ``pyproject.toml``."""
    project = tomllib.loads((PLUGIN_DIR / "pyproject.toml").read_text())["project"]
    write_dist(folder, project["name"], project["entry-points"], project["version"])


@pytest.fixture
def on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The example distribution on ``sys.path`` as if installed; after the test, none of it is left."""
    dists = tmp_path / "site"
    write_example_dist(dists)
    monkeypatch.syspath_prepend(str(PLUGIN_DIR))
    monkeypatch.syspath_prepend(str(dists))
    try:
        yield dists
    finally:
        for module in [m for m in sys.modules if m.startswith("hapticam_plugin")]:
            del sys.modules[module]
        for kind in [k for k, cls in MODEL_KINDS.items() if cls.__module__.startswith("hapticam_plugin")]:
            del MODEL_KINDS[kind]


def _model_file(folder: Path, parameters: dict[str, float], name: str = "bump.yaml") -> Path:
    path = folder / name
    path.write_text(json.dumps({"format": "hapticam-model", "schema_version": 1, "kind": "tactile-bump",
                                "parameters": parameters}))          # JSON is YAML
    return path


def _triangle_capture(parameters: dict[str, float], n: int = 701) -> Capture:
    """A quasi-static press to the end of travel and back (0.1 s a step) of the closed-form key."""
    x_down = np.linspace(0.0, parameters["travel_m"], n)
    x = np.concatenate([x_down, x_down[::-1][1:]])
    return Capture.from_arrays(0.1 * np.arange(x.size), x, closed_form_N(parameters, x), name="<tactile key>")


# -- discovery ------------------------------------------------------------------------------------------------
def test_plugins_are_listed_from_metadata_without_being_imported(on_path: Path) -> None:
    assert "light-sim" in available_devices() and set(ADAPTERS) <= set(available_devices())
    assert "tactile-bump" in available_kinds() and set(BUILTIN_KINDS) <= set(available_kinds())
    assert not [m for m in sys.modules if m.startswith("hapticam_plugin")]
    device = device_class("light-sim")
    assert issubclass(device, Device) and device.__module__ == "hapticam_plugin_example.devices"
    kind = kind_class("tactile-bump")
    assert issubclass(kind, ComposedKind) and kind.kind == "tactile-bump"


def test_each_built_in_kind_is_declared_once_and_each_leaf_kind_has_a_kernel_code() -> None:
    from hapticam.models.base import KERNEL_CODES

    classes = {name: kind_class(name) for name in BUILTIN_KINDS}
    assert all(cls.kind == name and MODEL_KINDS[name] is cls for name, cls in classes.items())
    assert {cls.kind_code for name, cls in classes.items() if name != "composite"} == KERNEL_CODES
    assert classes["composite"].kind_code not in KERNEL_CODES          # a composite lays out its leaves


def test_without_the_plugin_its_names_are_unknown() -> None:
    assert "light-sim" not in available_devices() and "tactile-bump" not in available_kinds()
    with pytest.raises(DeviceError, match="light-sim"):
        device_class("light-sim")
    with pytest.raises(ModelValidationError, match="tactile-bump"):
        kind_class("tactile-bump")


def test_the_plugin_kind_renders_as_built_in_kernels_and_matches_its_closed_form(on_path: Path, tmp_path: Path) -> None:
    from hapticam.models.acceptance import judge
    from hapticam.models.base import KERNEL_CODES
    from hapticam.models.files import load_model, save_model

    model, doc = load_model(_model_file(tmp_path, BUMP))
    assert doc.kind == "tactile-bump" and model.to_dict() == BUMP
    assert all(part.kind_code in KERNEL_CODES for part in model.components())
    xs = np.linspace(-0.001, 0.0045, 301)
    forces = np.array([model.force(x) for x in xs])
    # the table's linear interpolation errs by h^2/8 max|F''| = (8.75 um)^2 / 8 * 0.4 N / (0.25 mm)^2, 6e-5 N
    np.testing.assert_allclose(forces, closed_form_N(BUMP, xs), atol=1e-4)
    verdict = judge(model)
    assert verdict.passive and verdict.renderable                 # a static curve and a wall store, never generate
    save_model(tmp_path / "again.yaml", model)
    assert load_model(tmp_path / "again.yaml")[0] == model


def test_a_model_of_the_plugin_kind_without_its_bump_fails_verify_where_the_bump_is(on_path: Path, tmp_path: Path) -> None:
    from hapticam.models.files import load_model_only
    from hapticam.render.verify import verify

    flat = load_model_only(_model_file(tmp_path, {**BUMP, "bump_N": 0.0}))
    result = verify(flat, _triangle_capture(BUMP))
    assert not result.passed and "tactile bump" in result.features.noticeable


# -- refusals -------------------------------------------------------------------------------------------------
BROKEN = {"hapticam.devices": {"gone-device": "hapticam_plugin_nowhere.devices:Device",
                               "kind-as-device": "hapticam_plugin_example.models:TactileBump",
                               "raising-device": "hapticam_plugin_raises:Device",
                               "sim": "hapticam_plugin_nowhere.devices:Device"},
          "hapticam.models": {"gone-kind": "hapticam_plugin_nowhere.models:Kind",
                              "kernel-kind": "hapticam.models.contact:Contact",
                              "misnamed-kind": "hapticam_plugin_example.models:TactileBump",
                              "contact": "hapticam_plugin_nowhere.models:Kind"}}


def test_a_broken_plugin_is_refused_with_one_message_naming_it(on_path: Path) -> None:
    write_dist(on_path, "hapticam-plugin-broken", BROKEN)
    (on_path / "hapticam_plugin_raises.py").write_text("raise RuntimeError('bad plugin\\nsecond line')\n")
    cases = [(device_class, "gone-device", DependencyMissingError), (device_class, "kind-as-device", DeviceError),
             (device_class, "raising-device", DeviceError), (kind_class, "gone-kind", DependencyMissingError),
             (kind_class, "kernel-kind", ModelValidationError), (kind_class, "misnamed-kind", ModelValidationError)]
    for lookup, name, error in cases:
        with pytest.raises(error) as caught:
            lookup(name)
        message = str(caught.value)
        assert name in message and "hapticam-plugin-broken 0.1" in message and "\n" not in message, message
    assert "misnamed-kind" not in MODEL_KINDS and kind_class("tactile-bump").kind == "tactile-bump"
    assert kind_class("contact") is Contact                       # a built-in name is never a plugin's
    assert device_class("sim").__module__ == "hapticam.world.sim"


def test_hapticam_devices_lists_a_plugin_and_a_broken_one_with_its_reason(on_path: Path) -> None:
    from hapticam.commands.probe import device_drivers

    write_dist(on_path, "hapticam-plugin-broken", {"hapticam.devices": BROKEN["hapticam.devices"]})
    found = {d["name"]: d for d in device_drivers()}
    assert found["light-sim"]["present"] and found["light-sim"]["plugin"]
    assert "hapticam-plugin-example 0.1" in found["light-sim"]["detail"]
    assert not found["gone-device"]["present"] and "hapticam_plugin_nowhere" in found["gone-device"]["detail"]
    assert not found["sim"]["plugin"] and found["sim"]["adapter"] == ADAPTERS["sim"][0]


def test_a_model_file_of_a_broken_plugin_kind_is_refused_naming_the_file_and_the_plugin(on_path: Path,
                                                                                       tmp_path: Path) -> None:
    from hapticam.models.files import load_model

    write_dist(on_path, "hapticam-plugin-broken", {"hapticam.models": BROKEN["hapticam.models"]})
    path = tmp_path / "gone.yaml"
    path.write_text(json.dumps({"format": "hapticam-model", "schema_version": 1, "kind": "gone-kind",
                                "parameters": {}}))
    with pytest.raises(ModelFileError) as caught:
        load_model(path)
    assert "gone.yaml" in str(caught.value) and "hapticam-plugin-broken" in str(caught.value)


def test_a_composed_kind_with_a_part_that_has_no_built_in_kernel_is_refused() -> None:
    class Kernelless(Contact):
        kind_code = 0

    class Composed(ComposedKind):
        def parts(self) -> list[Model]:
            return [Contact("linear", 0.0, 100.0, 0.0), Kernelless("linear", 0.0, 100.0, 0.0)]

        def to_dict(self) -> dict:
            return {}

        @classmethod
        def from_dict(cls, data: dict) -> "Composed":
            return cls()

    Kernelless.kind, Composed.kind = "test-kernelless", "test-composed"     # named after definition: not registered

    with pytest.raises(ModelValidationError, match="test-kernelless"):
        Composed().compile()
    assert [part.kind_code for part in Composed()._composite().components()] == [Contact.kind_code, 0]


# -- declarations of an adapter -------------------------------------------------------------------------------
def test_the_device_base_declares_what_render_reads_and_the_adapters_override_it(on_path: Path, capsys) -> None:
    from hapticam.cli import main
    from hapticam.render.emulated import EMULATED_DEVICES

    assert (Device.external_clock, Device.renders_along_axis, Device.servo_silence_s) == (False, False, 0.2)
    assert Device.driver_status() == (True, "", "")
    phantom = device_class("phantom")
    assert phantom.external_clock and phantom.renders_along_axis
    assert set(EMULATED_ADAPTERS) == set(EMULATED_DEVICES) and set(EMULATED_ADAPTERS) <= set(ADAPTERS)
    assert main(["render", "example:linear-key", "--device", "light-sim", "--axis", "0,-1,0", "--simulated-clock"]) == 2
    assert "--axis" in capsys.readouterr().err


# -- the command line, in another interpreter -----------------------------------------------------------------
def _hapticam(argv: list[str], dists: Path, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(dists), str(PLUGIN_DIR)])}
    return subprocess.run([sys.executable, "-m", "hapticam", *argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


def test_render_on_the_plugin_device_and_verify_the_plugin_kind_from_the_command_line(tmp_path: Path) -> None:
    dists = tmp_path / "site"
    write_example_dist(dists)
    model = _model_file(tmp_path, BUMP)
    done = _hapticam(["render", str(model), "--device", "light-sim", "--simulated-clock", "--duration", "1",
                      "--display", "off", "--record", "rec.csv", "--json"], dists, tmp_path)
    assert done.returncode == 0, done.stderr
    stats = json.loads(done.stdout)["stats"]
    assert stats["fault"] is None and stats["interventions"]["saturation"] > 0
    lines = [line for line in (tmp_path / "rec.csv").read_text().splitlines() if not line.startswith("#")]
    columns = lines[0].split(",")
    rows = np.loadtxt(lines[1:], delimiter=",", ndmin=2)
    x, force, model_force = (rows[:, columns.index(c)] for c in ("x_m", "force_N", "force_cmd_N"))
    assert x.min() < BUMP["bump_at_m"] and x.max() > BUMP["travel_m"]      # over the bump and into the wall
    np.testing.assert_allclose(model_force, closed_form_N(BUMP, x), atol=1e-3)
    # the model asked more than the plugin device's motor gives, and got its 2 N (the simulator has 8 N)
    assert model_force.max() > LIGHT_MAX_FORCE_N and np.abs(force).max() == pytest.approx(LIGHT_MAX_FORCE_N)

    save_capture(tmp_path / "capture.csv", _triangle_capture(BUMP))
    done = _hapticam(["verify", str(model), "capture.csv", "--json"], dists, tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["passed"] and result["fit_percent"] > 99.0


# -- estimators ----------------------------------------------------------------------------------------------
#: the synthetic wall's stiffness (N/m) and damping (N s/m) (``synthetic.persistent_excitation``'s defaults)
WALL_K_NPM, WALL_B_NSPM = 1e6, 200.0


def _knocked_wall_record(knock_N: float = 150.0, knocks: int = 40) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The synthetic wall's record (s, m, N) with ``knocks`` force samples in contact knocked up by ``knock_N``."""
    from hapticam.identify.contact import synthetic

    rec = synthetic.persistent_excitation(k=WALL_K_NPM, b=WALL_B_NSPM, duration_s=2.0)
    f = rec.f_N.copy()
    in_contact = np.arange(int(0.3 * f.size), f.size)              # after the approach and ramp (0.5 s of 2 s)
    f[np.random.default_rng(5).choice(in_contact, knocks, replace=False)] += knock_N
    return rec.t_s, rec.x_m, f


def test_a_plugin_estimator_is_offered_and_fits_the_contact_it_is_asked_to(on_path: Path) -> None:
    from hapticam.identify.contact.fit import ESTIMATORS, fit_contact
    from hapticam.identify.estimators import CONTACT_ESTIMATORS

    assert CONTACT_ESTIMATORS.names() == (*ESTIMATORS, "huber")
    assert not [m for m in sys.modules if m.startswith("hapticam_plugin")]       # listed, not imported
    t, x, f = _knocked_wall_record()
    robust = fit_contact(t, x, f, estimator="huber")
    assert robust.estimator == "huber" and robust.results["huber"].iterations > 1
    assert robust.k_Npm == pytest.approx(WALL_K_NPM, rel=1e-2) and robust.b_Nspm == pytest.approx(WALL_B_NSPM, rel=1e-2)
    pulled = fit_contact(t, x, f, estimator="gls")                  # least squares is pulled by the knocks
    assert abs(pulled.b_Nspm - WALL_B_NSPM) > 2.0 * abs(robust.b_Nspm - WALL_B_NSPM)


def test_an_estimator_plugin_that_names_no_function_is_refused_naming_it(on_path: Path) -> None:
    from hapticam.errors import IdentificationError
    from hapticam.identify.estimators import CONTACT_ESTIMATORS

    write_dist(on_path, "hapticam-plugin-broken", {"hapticam.estimators": {
        "contact.constant": "hapticam_plugin_example.estimators:HUBER_C", "contact.gls": "nowhere:gls"}})
    with pytest.raises(IdentificationError) as caught:
        CONTACT_ESTIMATORS.get("constant")
    assert "constant" in str(caught.value) and "hapticam-plugin-broken 0.1" in str(caught.value)
    assert CONTACT_ESTIMATORS.get("gls").__module__ == "hapticam.identify.contact.estimators"   # built in wins


def test_identify_contact_runs_the_plugin_estimator_from_the_command_line(tmp_path: Path) -> None:
    dists = tmp_path / "site"
    write_example_dist(dists)
    # a capture's reader marks knocks as spikes and leaves them out, so the command line gets a clean wall
    save_capture(tmp_path / "wall.npz", Capture.from_arrays(*_knocked_wall_record(knocks=0), name="<wall>"))
    done = _hapticam(["identify", "contact", "wall.npz", "--estimator", "huber", "-o", "wall.yaml", "--json"],
                     dists, tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["estimator"] == "huber" and result["k_Npm"] == pytest.approx(WALL_K_NPM, rel=1e-2)
    assert result["b_Nspm"] == pytest.approx(WALL_B_NSPM, rel=1e-2)
