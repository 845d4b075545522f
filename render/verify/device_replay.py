"""The probe of :func:`hapticam.render.verify.compare.verify`, and its replay through a device as displayed.

The probe holds the handle through a spring-damper of ``PROBE_STIFFNESS_N_PER_M`` (1 N deflects it by 1 um,
the encoder's resolution), critically damped on the handle's mass, and drives it along the capture's
trajectory (:func:`probe_user`).

Without a device, verify's replay is ideal (``IDEAL_NOTE``). ``--device NAME`` (:func:`replay_on_device`)
replays the same probe through the device the hand would hold, as the render command displays a model on
it: the default simulated device (:class:`hapticam.world.sim.SimParams`: 8 N force limit, 2 N s/m
damping, 50 g handle; not sized to the capture), its safety limits, the display stage's coupling for a
model stiffer than the device renders passively (:mod:`hapticam.render.display`) and the model's
transients. ``sim`` runs on the simulated clock; ``phantom``, ``serial`` and ``zmq`` run their adapters in
real time on their emulators (:mod:`hapticam.render.emulated`), whose plant is the same simulated device, so
the replay takes the capture's replayed duration of wall time (at most ``MAX_REALTIME_REPLAY_S``).
:func:`device_section` reports what the hand receives: the device's spec, the display plan (the stiffness
displayed and what was given up), saturated ticks, the energy the device put into the hand, transients. A
replay the loop stopped before its end (a safety fault, a device that stopped answering) is an error, not a
comparison.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from hapticam.devices.base import DeviceSpec
from hapticam.world.sim import SimParams
from hapticam.world.users import User, position_user
from hapticam.errors import ParameterError, RenderError
from hapticam.models.base import Model
from hapticam.render.emulated import EMULATED_DEVICES, EMULATOR_RATE_HZ, Emulated, emulator_problem
from hapticam.render.loop import LoopConfig, ServoLoop, run_simulated
from hapticam.render.result import RenderResult
from hapticam.render.safety import SafetyConfig

PROBE_STIFFNESS_N_PER_M = 1.0e6
DEVICE_CHOICES = ("sim",) + EMULATED_DEVICES
#: a real-time replay on an emulated device takes its duration in wall time: longer ones are refused (s)
MAX_REALTIME_REPLAY_S = 20.0
#: how long past its duration a real-time replay may run before it counts as hung (s)
REALTIME_GRACE_S = 30.0
IDEAL_NOTE = ("ideal replay: a stiff position-controlled probe on an ideal device sized to the capture, the "
              "model rendered at the handle (no display coupling, no device limits); --device NAME replays "
              "through a device as displayed")


def check_device(name: str | None, rate_hz: float = EMULATOR_RATE_HZ, axis: str = "linear",
                 max_force_N: float | None = None) -> None:
    """Refuse, with one :class:`ParameterError` naming the parameter, a device ``verify`` cannot replay
    through: an unknown name, an emulated device this machine lacks the means to run, a rate its emulator
    does not run at (Hz), a rotary capture (the devices are linear: N, m), a force limit given (N: it sizes
    the ideal device)."""
    if name is None:
        return
    if name not in DEVICE_CHOICES:
        raise ParameterError("device", f"one of {', '.join(DEVICE_CHOICES)}, got {name!r}")
    if max_force_N is not None:
        raise ParameterError("max_force_N", f"sizes the ideal replay's device; {name} has its own force limit")
    problem = emulator_problem(name)
    if problem:
        raise ParameterError("device", f"{name} replays on its emulator: {problem}")
    if name in EMULATED_DEVICES and rate_hz != EMULATOR_RATE_HZ:
        raise ParameterError("rate_hz", f"{name}'s emulator runs at {EMULATOR_RATE_HZ:g} Hz, got {rate_hz:g} Hz")
    if axis != "linear":
        raise ParameterError("device", f"{name} is linear (N, m) and this capture is {axis}; verify it on the "
                             "ideal replay (no device)")


def probe_user(t_replay: np.ndarray, x_m: np.ndarray, handle_mass_kg: float, name: str) -> User:
    """The probe (module notes) holding the handle at ``x_m[0]`` from t = 0, then following ``x_m`` at the
    replay times ``t_replay`` (s); ``handle_mass_kg`` sets its critical damping."""
    damping = 2.0 * math.sqrt(PROBE_STIFFNESS_N_PER_M * handle_mass_kg)
    return position_user(np.concatenate([[0.0], t_replay]), np.concatenate([[x_m[0]], x_m]),
                         stiffness_N_per_m=PROBE_STIFFNESS_N_PER_M, damping_N_s_per_m=damping, name=name)


def replay_on_device(model: Model, name: str, t_replay: np.ndarray, x_m: np.ndarray, duration_s: float,
                     rate_hz: float, safety: SafetyConfig, seed: int, capture_name: str
                     ) -> tuple[RenderResult, DeviceSpec, dict[str, Any]]:
    """Replay the probe along ``x_m`` (m) at the replay times ``t_replay`` (s) for ``duration_s`` through the
    device ``name`` as displayed (module notes); return the result, the device's spec and its
    :func:`device_section`."""
    check_device(name, rate_hz)
    params = SimParams()
    user = probe_user(t_replay, x_m, params.handle_mass_kg, f"replay of {capture_name}")
    started = time.perf_counter()
    if name == "sim":
        _check_workspace(name, params.spec(), x_m)
        result = run_simulated(model, params, user, rate_hz=rate_hz, duration_s=duration_s, safety=safety,
                               config=LoopConfig(rate_hz=rate_hz, realtime=False, display="auto"), seed=seed)
        spec = params.spec()
    else:
        if duration_s > MAX_REALTIME_REPLAY_S:
            raise ParameterError("device", f"{name} replays in real time, and this replay would take "
                                 f"{duration_s:.3g} s, more than {MAX_REALTIME_REPLAY_S:g} s: verify a shorter "
                                 "capture on it, or replay on sim (simulated clock)")
        options = ({"origin_mm": (0.0, 0.0, 0.0), "resolution_m": params.resolution_m,
                    "apparent_mass_kg": params.handle_mass_kg} if name == "phantom" else {})
        with Emulated(name, user, params, **options) as device:
            _check_workspace(name, device.spec, x_m)
            config = LoopConfig(rate_hz=rate_hz, display="auto",       # a ring that holds every tick
                                ring_capacity=int(math.ceil(duration_s * rate_hz)) + 64)
            result = _realtime_run(model, device, duration_s, config, safety)
            spec = device.spec
    _check_complete(name, result, duration_s, rate_hz)
    return result, spec, device_section(name, spec, result, time.perf_counter() - started)


def _check_workspace(name: str, spec: DeviceSpec, x_m: np.ndarray) -> None:
    """The capture's travel (m) inside the device's workspace, or a :class:`ParameterError` of ``device``."""
    lo, hi = spec.workspace_m
    if not (lo <= float(np.min(x_m)) and float(np.max(x_m)) <= hi):
        raise ParameterError("device", f"{name}: the capture's travel {1e3 * float(np.min(x_m)):.3g} to "
                             f"{1e3 * float(np.max(x_m)):.3g} mm leaves the device's workspace "
                             f"{1e3 * lo:.3g} to {1e3 * hi:.3g} mm")


def _realtime_run(model: Model, device: Any, duration_s: float, config: LoopConfig,
                  safety: SafetyConfig) -> RenderResult:
    """``model`` on the open ``device`` in real time for ``duration_s`` (s), every tick kept in the ring."""
    loop = ServoLoop(model, device, config, safety)
    loop.start(duration_s)
    finished = loop.wait(duration_s + REALTIME_GRACE_S)
    stats = loop.stop()
    if not finished:
        stats.fault = stats.fault or "the loop did not finish in time"
    return RenderResult.from_rows(loop.ring[:loop.ticks].copy(), stats, loop.all_events())


def _check_complete(name: str, result: RenderResult, duration_s: float, rate_hz: float) -> None:
    """A replay the loop stopped before its end compares nothing: a :class:`RenderError` naming the fault."""
    expected = int(round(duration_s * rate_hz))
    if result.stats.fault or result.t_s.size < expected:
        raise RenderError(f"device {name}: the replay stopped after {result.t_s.size} of {expected} ticks "
                          f"({result.stats.fault or 'no fault logged'}); nothing to compare")


def device_section(name: str, spec: DeviceSpec, result: RenderResult, run_s: float) -> dict[str, Any]:
    """What the hand received through the device ``name`` (module notes); ``run_s``: the replay's wall time."""
    stats = result.stats
    display = dict(stats.display or {})
    return {"name": name, "clock": stats.clock, "spec": spec.to_dict(), "display": display,
            "displayed_stiffness_Npm": display.get("displayed_Npm"), "display_summary": display.get("summary"),
            "saturated_ticks": int(stats.interventions.get("saturation", 0)),
            "energy_out_J": float(stats.energy_out_J), "transients": int(stats.transients),
            "interventions": {k: v for k, v in stats.interventions.items() if v}, "fault": stats.fault,
            "ticks": int(stats.ticks), "missed_deadlines": int(stats.misses), "run_s": float(run_s)}


def ideal_section() -> dict[str, Any]:
    """The ``device`` section of an ideal replay."""
    return {"name": None, "note": IDEAL_NOTE}
