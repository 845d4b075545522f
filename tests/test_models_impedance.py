"""Segmented impedance (seed 001 eq. 8): kernel vs a plain NumPy reference, direction hold, validation."""

from __future__ import annotations

import numpy as np
import pytest

from hapticam.errors import ModelValidationError
from hapticam.models.base import model_from_dict
from hapticam.models.impedance import ImpedanceTable, SegmentedImpedance, impedance_force, position_table
from hapticam.models.kernels import model_force


def random_table(rng: np.random.Generator, n_seg: int, linear: bool, where: str = "table") -> ImpedanceTable:
    bp = np.cumsum(rng.uniform(1e-4, 1e-3, n_seg + 1)) - 2e-3
    nv = n_seg + 1 if linear else n_seg
    return ImpedanceTable(bp, rng.normal(0.01, 0.02, nv), rng.normal(0.5, 1.0, nv), rng.normal(100, 200, nv),
                          rng.normal(0.3, 0.2, nv), where=where)


def reference_parameters(table: ImpedanceTable, x: float, interpolation: str) -> np.ndarray:
    """Plain reference: linear scan for the segment, explicit interpolation, the documented end rule."""
    bp = table.breakpoints_m
    vals = np.stack([table.m_kg, table.b_Nspm, table.k_Npm, table.f0_N])
    if interpolation == "constant":
        i = 0
        for j in range(bp.size - 1):
            if bp[j] <= x:
                i = j
        return vals[:, i]
    if x <= bp[0]:
        return vals[:, 0]
    if x >= bp[-1]:
        return vals[:, -1]
    j = max(i for i in range(bp.size - 1) if bp[i] <= x)
    w = (x - bp[j]) / (bp[j + 1] - bp[j])
    return (1 - w) * vals[:, j] + w * vals[:, j + 1]


def reference_force(model: SegmentedImpedance, direction: float, x: float, v: float, a: float) -> tuple[float, float]:
    db = model.dead_band_mps
    d = 1.0 if v > db else (-1.0 if v < -db else direction)
    table = model.press if d > 0 or model.release is None else model.release
    m, b, k, f0 = reference_parameters(table, x, model.interpolation)
    return m * a + b * v + k * x + f0, d


@pytest.mark.parametrize("interpolation", ["constant", "linear"])
@pytest.mark.parametrize("with_release", [False, True])
def test_kernel_matches_numpy_reference(interpolation: str, with_release: bool) -> None:
    rng = np.random.default_rng(11 + 2 * with_release + (interpolation == "linear"))
    for _ in range(8):
        n_seg = int(rng.integers(1, 40))
        linear = interpolation == "linear"
        press = random_table(rng, n_seg, linear, "press")
        release = random_table(rng, int(rng.integers(1, 40)), linear, "release") if with_release else None
        model = SegmentedImpedance(press, release, interpolation=interpolation,
                                   dead_band_mps=float(rng.uniform(0, 5e-3)))
        p = model.params_block()
        s = model.initial_state()
        lo, hi = model.x_range()
        direction = 1.0
        for _ in range(300):
            # include points outside the range and exactly on breakpoints
            if rng.random() < 0.1:
                x = float(rng.choice(press.breakpoints_m))
            else:
                x = float(rng.uniform(lo - 1e-3, hi + 1e-3))
            v = float(rng.normal(0, 5e-3))
            a = float(rng.normal(0, 2.0))
            want, direction = reference_force(model, direction, x, v, a)
            got = impedance_force(p, s, x, v, a, 1e-3)
            assert got == pytest.approx(want, rel=1e-12, abs=1e-12)
            assert s[0] == direction


@pytest.mark.parametrize("interpolation", ["constant", "linear"])
def test_parameters_at_is_vectorised_reference(interpolation: str) -> None:
    rng = np.random.default_rng(5)
    linear = interpolation == "linear"
    model = SegmentedImpedance(random_table(rng, 17, linear), random_table(rng, 9, linear),
                               interpolation=interpolation)
    x = rng.uniform(-3e-3, 2e-2, 500)
    for direction, table in ((1, model.press), (-1, model.release)):
        got = np.stack(model.parameters_at(x, direction))
        want = np.stack([reference_parameters(table, xi, interpolation) for xi in x], axis=1)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


def test_direction_is_held_inside_dead_band() -> None:
    bp = [0.0, 4e-3]
    press = ImpedanceTable(bp, [0.0], [0.0], [0.0], [1.0])
    release = ImpedanceTable(bp, [0.0], [0.0], [0.0], [-1.0])
    model = SegmentedImpedance(press, release, dead_band_mps=1e-3)
    p, s = model.params_block(), model.initial_state()
    # (v, expected force): starts pressing; in-band velocities of either sign keep the last direction
    steps = [(0.0, 1.0), (-0.9e-3, 1.0), (-1.1e-3, -1.0), (0.9e-3, -1.0), (0.0, -1.0), (1.0e-3, -1.0),
             (1.01e-3, 1.0), (-1e-3, 1.0)]
    for v, want in steps:
        assert impedance_force(p, s, 1e-3, v, 0.0, 1e-3) == want
    # a zero dead band switches on any nonzero velocity and holds only at v == 0
    model0 = SegmentedImpedance(press, release, dead_band_mps=0.0)
    p0, s0 = model0.params_block(), model0.initial_state()
    assert impedance_force(p0, s0, 1e-3, -1e-12, 0.0, 1e-3) == -1.0
    assert impedance_force(p0, s0, 1e-3, 0.0, 0.0, 1e-3) == -1.0


def test_outside_range_uses_end_segments() -> None:
    bp = [1e-3, 2e-3, 3e-3]
    const = SegmentedImpedance(ImpedanceTable(bp, [0.0, 0.0], [0.0, 0.0], [100.0, 300.0], [0.1, -0.2]))
    # below x_0: segment 0 (k = 100, F0 = 0.1) continues; above x_n: segment 1 (k = 300, F0 = -0.2)
    assert const.force(0.0) == pytest.approx(0.1)
    assert const.force(-1e-3) == pytest.approx(-0.1 + 0.1)
    assert const.force(5e-3) == pytest.approx(300 * 5e-3 - 0.2)
    assert const.force(3e-3) == pytest.approx(300 * 3e-3 - 0.2)  # the last breakpoint belongs to segment 1
    lin = SegmentedImpedance(ImpedanceTable(bp, [0.0] * 3, [0.0] * 3, [100.0, 200.0, 300.0], [0.1, 0.0, -0.2]),
                             interpolation="linear")
    assert lin.force(0.0) == pytest.approx(0.1)  # k(x0) x + F0(x0) at x = 0
    assert lin.force(6e-3) == pytest.approx(300 * 6e-3 - 0.2)
    assert lin.force(1.5e-3) == pytest.approx(150 * 1.5e-3 + 0.05)


def test_full_model_m_a_plus_b_v() -> None:
    bp = [0.0, 1e-3]
    model = SegmentedImpedance(ImpedanceTable(bp, [0.02], [3.0], [200.0], [0.4]), dead_band_mps=0.0)
    x, v, a = 0.5e-3, 0.05, 12.0
    assert model.force(x, v, a) == pytest.approx(0.02 * a + 3.0 * v + 200.0 * x + 0.4)


def test_position_table_is_playback() -> None:
    x = np.linspace(0, 4e-3, 41)
    f_press = 0.35 + 60 * x
    f_release = f_press - 0.05
    model = position_table(x, f_press, f_release)
    assert model.interpolation == "linear"
    for d in (1, -1):
        m, b, k, f0 = model.parameters_at(x, d)
        assert not m.any() and not b.any() and not k.any()
    xs = np.random.default_rng(1).uniform(0, 4e-3, 50)
    compiled = model.compile()
    s = compiled.reset_state()
    for xi in xs:
        assert model_force(compiled.params, s, xi, 0.1, 50.0, 1e-3) == pytest.approx(np.interp(xi, x, f_press))
        assert model_force(compiled.params, s, xi, -0.1, -50.0, 1e-3) == pytest.approx(np.interp(xi, x, f_release))
    single = position_table(x, f_press)
    assert single.release is None
    assert single.force(2e-3, -0.1) == pytest.approx(0.35 + 60 * 2e-3)


def test_round_trip_and_compile() -> None:
    rng = np.random.default_rng(3)
    model = SegmentedImpedance(random_table(rng, 5, True), random_table(rng, 7, True), interpolation="linear",
                               dead_band_mps=2e-3)
    again = model_from_dict("segmented-impedance", model.to_dict())
    assert again == model
    np.testing.assert_array_equal(again.params_block(), model.params_block())
    single = SegmentedImpedance(random_table(rng, 4, False))
    assert "release" not in single.to_dict()
    assert SegmentedImpedance.from_dict(single.to_dict()) == single


def test_million_breakpoints_binary_search() -> None:
    n = 1_000_000
    bp = np.linspace(0.0, 4e-3, n)
    f0 = np.sin(np.arange(n - 1) * 1e-3)
    zeros = np.zeros(n - 1)
    model = SegmentedImpedance(ImpedanceTable(bp, zeros, zeros, zeros, f0))
    p, s = model.params_block(), model.initial_state()
    for x in np.random.default_rng(2).uniform(0, 4e-3, 200):
        i = min(int(np.searchsorted(bp, x, side="right")) - 1, n - 2)
        assert impedance_force(p, s, x, 0.0, 0.0, 1e-3) == f0[i]
    with pytest.raises(ModelValidationError, match=r"press\.breakpoints_m: 1000001 entries exceed"):
        ImpedanceTable.from_dict({"breakpoints_m": np.arange(n + 1.0), "m_kg": [0.0], "b_Nspm": [0.0],
                                  "k_Npm": [0.0], "f0_N": [0.0]}, "press")


def _table_dict(**overrides):
    d = {"breakpoints_m": [0.0, 1e-3, 2e-3], "m_kg": [0.0, 0.0], "b_Nspm": [0.0, 0.0], "k_Npm": [1.0, 2.0],
         "f0_N": [0.1, 0.2]}
    d.update(overrides)
    return d


@pytest.mark.parametrize("table, interpolation, match", [
    (_table_dict(breakpoints_m=[0.0, float("nan"), 2e-3]), "constant", r"press\.breakpoints_m\[1\]: must be finite"),
    (_table_dict(breakpoints_m=[0.0, 2e-3, 1e-3]), "constant", r"press\.breakpoints_m\[2\]: breakpoints must be strictly"),
    (_table_dict(breakpoints_m=[0.0, 1e-3, 1e-3]), "constant", r"press\.breakpoints_m\[2\]: breakpoints must be strictly"),
    (_table_dict(breakpoints_m=[0.0]), "constant", r"press\.breakpoints_m: needs at least 2"),
    (_table_dict(k_Npm=[1.0, float("inf")]), "constant", r"press\.k_Npm\[1\]: must be finite"),
    (_table_dict(f0_N=[0.1, 0.2, 0.3, 0.4]), "constant", r"press\.f0_N: expected 2 entries"),
    (_table_dict(b_Nspm=[0.0, 0.0, 0.0]), "constant", r"press: m_kg, b_Nspm, k_Npm, f0_N must have the same length"),
    (_table_dict(), "linear", r"press\.m_kg: linear interpolation needs 3 entries"),
    (_table_dict(m_kg="heavy"), "constant", r"press\.m_kg: expected a list of numbers"),
    (_table_dict(extra=1), "constant", r"press: unknown field 'extra'"),
    ({"breakpoints_m": [0.0, 1.0]}, "constant", r"press: missing field"),
])
def test_validation_names_the_field(table, interpolation, match) -> None:
    with pytest.raises(ModelValidationError, match=match):
        SegmentedImpedance.from_dict({"interpolation": interpolation, "press": table})


def test_model_level_validation() -> None:
    good = _table_dict()
    with pytest.raises(ModelValidationError, match="interpolation: expected one of"):
        SegmentedImpedance.from_dict({"interpolation": "cubic", "press": good})
    with pytest.raises(ModelValidationError, match="dead_band_mps: must be >= 0"):
        SegmentedImpedance.from_dict({"interpolation": "constant", "press": good, "dead_band_mps": -1e-3})
    with pytest.raises(ModelValidationError, match="dead_band_mps: must be finite"):
        SegmentedImpedance.from_dict({"interpolation": "constant", "press": good, "dead_band_mps": float("nan")})
    with pytest.raises(ModelValidationError, match=r"release\.k_Npm: expected 2 entries"):
        SegmentedImpedance.from_dict({"interpolation": "constant", "press": good,
                                      "release": _table_dict(k_Npm=[1.0])})
    with pytest.raises(ModelValidationError, match="segmented-impedance: unknown field 'pres'"):
        SegmentedImpedance.from_dict({"interpolation": "constant", "press": good, "pres": good})
    with pytest.raises(ModelValidationError, match="press: expected an ImpedanceTable"):
        SegmentedImpedance(good)  # type: ignore[arg-type]
    with pytest.raises(ModelValidationError, match=r"f_release_N: expected 3 entries"):
        position_table([0, 1e-3, 2e-3], [0, 1, 2], [0, 1])
    with pytest.raises(ModelValidationError, match=r"x_m\[1\]: breakpoints must be strictly"):
        position_table([0, 0, 2e-3], [0, 1, 2])
