"""A model whose simulation cannot keep the servo rate is refused before rendering (render, verify, library
compare), and a real-time run that misses too many deadlines stops with zero force and says why."""

from __future__ import annotations

import time
from importlib import resources

import numpy as np
import pytest

from hapticam.cli import main
from hapticam.devices.base import IO_FORCE
from hapticam.devices.registry import open_device
from hapticam.world.users import make_user
from hapticam.models.files import load_model
from hapticam.models.kernels import model_flags, model_force
from hapticam.render.clock import spend_deadlines, start_deadlines
from hapticam.render.gate import (CALIBRATION_MODEL, check_for_device, display_evaluations, substep_cost_s,
                                  tick_cost)
from hapticam.render.layout import (CFG_SIZE, CTL_SIZE, C_MISS_WEIGHT, C_MISS_WINDOW, C_PERIOD_NS, EV_DEADLINES,
                                    HIST_BINS, K_FAULT, K_STOP)
from hapticam.render.loop import LoopConfig, ServoLoop
from hapticam.render.scheduled import TIM_SIZE, _account_timing

from conftest import SWITCH_DIR

CAPTURE = str(SWITCH_DIR / "Cherry-MX-Red.csv")
PIANO = (resources.files("hapticam.models") / "examples" / "piano-key.yaml").read_text()


def _piano_variant(tmp_path, name: str, hammer_kg: str, k: str, b: str) -> str:
    """The bundled piano key with another hammer mass (kg) and felt law ``k``, ``b``, written to a model file."""
    text = PIANO
    for old, new in (("hammer_mass_kg: 0.010", f"hammer_mass_kg: {hammer_kg}"), ("k_Npm: 5.0e+6", f"k_Npm: {k}"),
                     ("b_Nspm: 1.5e+7", f"b_Nspm: {b}")):
        assert text.count(old) == 1
        text = text.replace(old, new)
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return str(path)


@pytest.fixture
def costly(tmp_path) -> str:
    """A 0.1 g hammer on a stiff felt (within every parameter's range): 38,912 sub-steps a 1 ms tick."""
    return _piano_variant(tmp_path, "costly-key", "1.0e-4", "5.0e+11", "1.5e+12")


def _one_line_refusal(argv: list[str], capsys) -> str:
    began = time.perf_counter()
    assert main(argv) == 2
    took = time.perf_counter() - began
    out, err = capsys.readouterr()
    assert took < 5.0, f"refused after {took:.1f} s"
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    return out


def test_a_costly_model_passes_validation_but_render_refuses_it_before_rendering(costly, capsys) -> None:
    assert main(["model", "validate", costly]) == 0                  # every parameter within its range
    capsys.readouterr()
    out = _one_line_refusal(["render", costly, "--simulated-clock", "--duration", "0.5"], capsys)
    assert out == ""                                                  # no display line, no ticks


def test_library_compare_and_verify_refuse_it_quickly(costly, capsys) -> None:
    _one_line_refusal(["library", "compare", costly, "example:cherry-mx-red"], capsys)
    _one_line_refusal(["verify", costly, CAPTURE], capsys)


def test_a_switch_and_the_bundled_piano_key_are_admitted() -> None:
    spec = open_device("sim").spec
    for name in ("example:cherry-mx-red", "example:piano-key"):
        model = load_model(name)[0]
        check_for_device(model, spec, 1000.0)                         # raises when refused
        cost = tick_cost(model, 1000.0, evaluations=display_evaluations(model, spec, 1000.0))
        assert cost.estimate_s < cost.budget_s
    assert tick_cost(load_model("example:cherry-mx-red")[0], 1000.0).substeps == 0


def test_the_sub_step_count_predicts_the_measured_cost_of_a_key_resting_in_contact(tmp_path) -> None:
    """Reference: the kernel timed on a 1 mg hammer resting on a stiff felt (15,872 sub-steps a tick: its resting
    contact admits none of the key's longer steps), the fastest of ten ticks (another program's preemption only
    adds time); the calibration key stays in contact, as the count assumes."""
    key = load_model(CALIBRATION_MODEL)[0]
    compiled = key.compile()
    state = compiled.reset_state()
    for _ in range(20):
        model_force(compiled.params, state, 0.0, 0.0, 0.0, 1e-3)
        assert model_flags(compiled.params, state) & 1                # bit 0: the hammer on the key
    model = load_model(_piano_variant(tmp_path, "resting", "1.0e-6", "5.0e+8", "1.5e+9"))[0]
    fastest = _fastest_resting_tick_s(model.compile())
    assert model.resting_substeps_per_tick(1e-3) == model.substeps_per_tick(1e-3)   # its rest admits no longer step
    predicted = model.substeps_per_tick(1e-3) * substep_cost_s()
    assert 1 / 3 < predicted / fastest < 3, (predicted, fastest)


def _fastest_resting_tick_s(compiled) -> float:
    """The fastest of ten 1 ms ticks (s) of a compiled key resting at x = 0 (after its first)."""
    state = compiled.reset_state()
    model_force(compiled.params, state, 0.0, 0.0, 0.0, 1e-3)
    fastest = np.inf
    for _ in range(10):
        began = time.perf_counter()
        model_force(compiled.params, state, 0.0, 0.0, 0.0, 1e-3)
        fastest = min(fastest, time.perf_counter() - began)
        assert model_flags(compiled.params, state) & 1
    return fastest


def test_the_piano_key_resting_takes_its_longer_steps_and_an_impact_its_sub_steps() -> None:
    """The bundled key resting on its jack takes 9 key steps of 121 us a 1 ms tick, each with one RK4 step of the
    hammer (18 counted), against 174 sub-steps of 5.7 us through an impact (348); the same key held to its sub-steps
    (``P_HKC`` 0) costs within a factor of 3 of what the counts say, the fastest of ten ticks each (a reference the
    counts do not set; the resting tick's own work, the handle's interpolation and the events, is a larger share of
    it)."""
    from hapticam.models.hybrid_key.layout import P_HKC

    key = load_model("example:piano-key")[0]
    assert (key.resting_substeps_per_tick(1e-3), key.substeps_per_tick(1e-3)) == (18, 348)
    assert tick_cost(key, 1000.0).substeps == 348                          # the gate budgets an impact's tick
    compiled = key.compile()
    resting = _fastest_resting_tick_s(compiled)
    compiled.component_blocks(0)[0][P_HKC] = 0.0                          # the key's block: sub-steps only
    sub_steps = _fastest_resting_tick_s(compiled)
    assert 348 / 18 / 3 < sub_steps / resting < 348 / 18 * 3, (sub_steps, resting)


def _bound(window: int = 1000, weight: int = 20) -> tuple[np.ndarray, np.ndarray]:
    cfg, ctl = np.zeros(CFG_SIZE), np.zeros(CTL_SIZE, dtype=np.int64)
    cfg[C_MISS_WINDOW], cfg[C_MISS_WEIGHT] = window, weight
    start_deadlines(cfg, ctl)
    return cfg, ctl


def _first_trip(missed: np.ndarray) -> int | None:
    cfg, ctl = _bound()
    for i, m in enumerate(missed):
        if spend_deadlines(cfg, ctl, 1, int(m)):
            return i
    return None


def _most_in_any_window(missed: np.ndarray, window: int = 1000) -> int:
    counts = np.convolve(missed, np.ones(window, dtype=int), mode="full")     # every run of `window` periods
    return int(counts.max())


def test_the_bound_against_sliding_one_second_windows_at_1khz() -> None:
    rng = np.random.default_rng(0)
    spread = np.zeros(20_000, dtype=int)
    spread[::20] = 1                                                   # every 20th deadline: 5 % exactly
    clumped = np.zeros(20_000, dtype=int)
    for start in range(0, 20_000, 1000):
        clumped[start + 950:start + 1000] = 1                          # 50 at the end of each second
    assert _most_in_any_window(spread) <= 50 and _first_trip(spread) is None
    assert _most_in_any_window(clumped) <= 50 and _first_trip(clumped) is None
    for _ in range(20):                                                # more than 10 % in some window: stops
        missed = (rng.random(5000) < 0.03).astype(int)
        at = int(rng.integers(0, 4000))
        missed[at:at + 1000] |= (rng.random(1000) < 0.12).astype(int)
        assert _most_in_any_window(missed) > 100
        trip = _first_trip(missed)
        assert trip is not None and trip < at + 1000
    assert _first_trip(np.ones(100, dtype=int)) == 52                  # every deadline missed: the 53rd stops


def test_the_external_scheduler_path_stops_on_the_same_bound() -> None:
    cfg, ctl = _bound()
    cfg[C_PERIOD_NS] = 1_000_000
    hist, tim = np.zeros(HIST_BINS + 1, dtype=np.int64), np.zeros(TIM_SIZE, dtype=np.int64)
    t = 0
    for call in range(20):                                             # called every 10 ms: 9 periods lost each
        _account_timing(t, cfg, ctl, hist, tim)
        if ctl[K_STOP]:
            break
        t += 10_000_000
    assert ctl[K_STOP] == 1 and ctl[K_FAULT] == EV_DEADLINES
    assert call == 6                                                   # credit 1000 - 180 - 5 x 170 < 0


def test_a_real_time_run_that_misses_its_deadlines_stops_with_zero_force_and_says_why() -> None:
    """A 1 us period (beyond LoopConfig's range, set in the loop's cfg) no machine holds: every tick misses."""
    model = load_model("example:cherry-mx-red")[0]
    loop = ServoLoop(model, open_device("sim", user=make_user("press", 5.0)), LoopConfig(rate_hz=1000.0))
    loop.cfg[C_PERIOD_NS] = 1000
    loop.start(duration_s=5.0)                                         # 5000 ticks
    assert loop.wait(30.0)
    stats = loop.stop()
    assert stats.fault == "missed-deadlines" and loop.io[IO_FORCE] == 0.0
    assert stats.ticks < 1000 and stats.misses > 50                    # stopped by the bound, not the duration
    stop = [e for e in loop.all_events() if e.name == "stop"]
    assert stop and stop[-1].value == EV_DEADLINES
    assert f"FAULT: missed-deadlines: {stats.misses} of" in stats.summary()


def test_the_simulated_clock_has_no_deadlines() -> None:
    model = load_model("example:cherry-mx-red")[0]
    loop = ServoLoop(model, open_device("sim", user=make_user("press", 0.5)), LoopConfig(rate_hz=1000.0))
    loop.cfg[C_PERIOD_NS] = 1000
    result = loop.run_simulated(0.5)
    assert result.stats.fault is None and result.stats.ticks == 500
