"""One seam for model kinds: a kind states its passivity analysis, the stiffnesses a display of it presents at
the handle and the impacts its kernel reports on its :class:`~hapticam.models.base.Model` subclass, and
render's gate, ``model validate`` and ``verify`` read only that."""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np
import pytest

import hapticam.models.acceptance  # noqa: F401  (registers every kind the model files know)
from hapticam.world.sim import SimParams
from hapticam.errors import UsageError
from hapticam.models.acceptance import judge, require_renderable
from hapticam.models.base import MODEL_KINDS, Model, model_from_dict
from hapticam.models.composite import Composite, EndStops
from hapticam.models.contact import Contact
from hapticam.models.files import EXAMPLE_ALIASES, example_names, load_model_only
from hapticam.models.hybrid_key.model import EVENT_NAMES, FLAG_KEYBED, HybridKey
from hapticam.models.passivity import PassivityReport, check_passivity
from hapticam.models.ranges import stiffness
from hapticam.render.gate import check_for_device, stiffnesses_Npm

SPEC = SimParams().spec()      # the simulated device: 8 N peak, 4000 N/m rendered stably at 1 kHz


@pytest.fixture
def spring_kind() -> Iterator[type[Model]]:
    """A new kind, ``test-kind`` (a spring ``F = k x``), that declares no passivity analysis; unregistered after."""
    class Spring(Model):
        kind = "test-kind"
        kind_code = 99
        RANGES = {"k_Npm": stiffness()}

        def __init__(self, k_Npm: float) -> None:
            self.k_Npm = float(k_Npm)

        def to_dict(self) -> dict[str, Any]:
            return {"k_Npm": self.k_Npm}

        @classmethod
        def from_dict(cls, data: dict[str, Any]) -> "Spring":
            return cls(**data)

        def params_block(self) -> np.ndarray:
            return np.array([self.k_Npm])

        def initial_state(self) -> np.ndarray:
            return np.zeros(0)

    try:
        yield Spring
    finally:
        MODEL_KINDS.pop("test-kind", None)


def test_a_kind_that_declares_no_passivity_analysis_is_not_passive_and_render_refuses_it(spring_kind) -> None:
    spring = model_from_dict("test-kind", {"k_Npm": 100.0})   # registered by being defined: the files know it
    assert type(spring) is spring_kind
    report = spring.passivity()
    assert not report.passive and any("test-kind" in issue for issue in report.issues)
    assert not check_passivity(spring).passive
    # a passive component beside it does not make the sum passive
    assert not Composite([Contact("linear", 0.0, 100.0, 0.0), spring]).passivity().passive
    verdict = judge(spring)
    assert not verdict.passive and not verdict.renderable
    with pytest.raises(UsageError):
        require_renderable(spring)
    with pytest.raises(UsageError):
        check_for_device(spring, SPEC, 1000.0)
    warnings = require_renderable(spring, allow_active=True)
    assert any("test-kind" in warning for warning in warnings)
    assert any("test-kind" in warning for warning in check_for_device(spring, SPEC, 1000.0, allow_active=True))
    assert judge(spring, allow_active=True).renderable
    # the stiffnesses it asks of the display: its _Npm parameters as written, by default
    assert stiffnesses_Npm(spring, SPEC.max_force_N) == [("k_Npm", 100.0)]


def test_a_kind_that_declares_its_analysis_needs_nothing_else_to_be_rendered(spring_kind) -> None:
    class AnalysedSpring(spring_kind):  # type: ignore[misc,valid-type]
        def passivity(self) -> PassivityReport:
            return PassivityReport(passive=self.k_Npm >= 0.0, notes=["a spring stores, never generates"])

    AnalysedSpring.kind = "test-kind-analysed"              # set after the class exists: not registered
    spring = AnalysedSpring(100.0)
    assert judge(spring).renderable and require_renderable(spring) == []
    check_for_device(spring, SPEC, 1000.0)                  # render's gate takes it
    assert stiffnesses_Npm(spring, SPEC.max_force_N) == [("k_Npm", 100.0)]


def test_every_registered_kind_declares_its_passivity_analysis() -> None:
    assert {"segmented-impedance", "contact", "friction", "hybrid-key", "end-stops", "composite"} <= set(MODEL_KINDS)
    for name, cls in MODEL_KINDS.items():
        assert cls.passivity is not Model.passivity, f"{name} declares no passivity analysis"


# -- stiffnesses at the handle --------------------------------------------------------------------------------
#: what render's gate read from the bundled examples before the kinds stated it (the same at any peak force):
#: (count, stiffest by magnitude, softest, sum of all) in N/m
BUNDLED_STIFFNESSES = {
    "cherry-mx-red": (47, ("components[0].parameters.press.k_Npm[12]", 19124.70400064332),
                      ("components[0].parameters.press.k_Npm[3]", -244.75510499164577), 83947.41484368665),
    "gateron-brown": (35, ("components[0].parameters.press.k_Npm[12]", 23173.738722434508),
                      ("components[0].parameters.release.k_Npm[10]", -327.62315073684965), 79751.10461413025),
    "kailh-box-jade": (66, ("components[0].parameters.press.k_Npm[26]", 17705.7049691588),
                       ("components[0].parameters.press.k_Npm[16]", -2114.318000685909), 93515.32543006969),
    "piano-key": (3, ("keybed_k_Npm", 100000.0), ("return_spring_Npm", 10.0), 101010.0),
}


@pytest.mark.parametrize("name", sorted(BUNDLED_STIFFNESSES))
@pytest.mark.parametrize("at_force_N", [None, 8.0])
def test_the_bundled_examples_ask_the_stiffnesses_they_asked_before(name: str, at_force_N: float | None) -> None:
    model = load_model_only(f"example:{name}")
    found = stiffnesses_Npm(model, at_force_N)
    assert found == model.handle_stiffnesses(at_force_N)
    count, stiffest, softest, total = BUNDLED_STIFFNESSES[name]
    assert len(found) == count
    assert max(found, key=lambda item: abs(item[1])) == stiffest
    assert min(found, key=lambda item: item[1]) == softest
    assert sum(k for _, k in found) == pytest.approx(total, rel=1e-12)
    if name == "piano-key":        # coupled: the coupling and the springs at the handle, not the hammer's contact
        assert found == [("coupling_k_Npm", 1000.0), ("keybed_k_Npm", 1.0e5), ("return_spring_Npm", 10.0)]
    else:                          # the switches: every segment's k of both tables, then the end stops
        table = model.components()[0]
        ks = np.concatenate([table.press.k_Npm, table.release.k_Npm])
        np.testing.assert_array_equal([k for _, k in found], [*ks, 2000.0])


def test_every_bundled_example_has_its_stiffnesses_pinned() -> None:
    assert set(example_names()) - set(EXAMPLE_ALIASES) == set(BUNDLED_STIFFNESSES)


def test_a_hunt_crossley_contact_asks_its_local_stiffness_inside_a_composite_and_a_key() -> None:
    """``F = k d^n`` reaches F at d_F = (F / k)^(1/n), where its slope is n F / d_F (N/m)."""
    force = SPEC.max_force_N
    wall = Contact("hunt-crossley", 0.004, 1.0e6, 0.0, n=1.5)
    local = 1.5 * force / (force / 1.0e6) ** (1 / 1.5)
    found = Composite([EndStops(0.0, 0.01, 3000.0), wall]).handle_stiffnesses(force)
    assert found[0] == ("components[0].parameters.k_Npm", 3000.0)
    (path, k), = found[1:]
    assert path == "components[1].parameters.k_Npm (local, at 8 N)" and k == pytest.approx(local, rel=1e-12)
    # a key driven directly (no coupling): its hammer contact (5e6 N/m^1.5) is converted the same way
    parameters = load_model_only("example:piano-key").to_dict()
    del parameters["coupling_k_Npm"], parameters["coupling_b_Nspm"]
    direct = dict(HybridKey.from_dict(parameters).handle_stiffnesses(force))
    assert direct["contact.k_Npm (local, at 8 N)"] == pytest.approx(1.5 * force / (force / 5.0e6) ** (1 / 1.5))
    assert set(direct) == {"return_spring_Npm", "contact.k_Npm (local, at 8 N)", "keybed_k_Npm"}


# -- impacts ------------------------------------------------------------------------------------------------
def test_the_impacts_a_kind_declares_are_what_its_kernel_reports_and_validate_names_them() -> None:
    assert HybridKey.impact_events == ("landing", "string", "keybed")
    assert all(not cls.impact_events for name, cls in MODEL_KINDS.items() if name != "hybrid-key")
    piano = load_model_only("example:piano-key")
    # pressed at 0.2 m/s to 0.1 mm into the keybed: the hammer escapes, strikes the string, lands on the check
    dt, t = 1e-3, np.arange(0.0, 0.3, 1e-3)
    trace = piano.simulate(np.minimum(0.2 * t, 0.0101), dt)
    reported = {EVENT_NAMES[int(code)] for code in trace.event_code}
    assert {"landing", "string"} <= reported and trace.flags[-1] & FLAG_KEYBED
    assert judge(piano).to_dict()["impact_events"] == ["landing", "string", "keybed"]
    assert judge(load_model_only("example:cherry-mx-red")).impact_events == ()
