"""The capture's own probe in the ideal replay: a key held as the probe held the real one.

A probe presses a key through a tip: the simulated probe's (``hapticam.world.probe``) is a stiff pad on the
key front, one-sided (it leaves the key when the key outruns it), behind a position-servoed carriage. What the
capture holds of a key with a hammer is then the key on that pad: it rings on it at the touch (230 Hz for the
bare key, 100 Hz with the hammer on the jack), it leaves the pad and strikes it again when the hammer's weight
leaves the key (after a landing in the backcheck, at the release onto the rail), and the carriage's servo damps
that ringing. A rendering's key held by a device's virtual coupling (1000 N/m, damped, for a 1 kHz device) or
driven kinematically does none of this, and the impact criterion then compares the instrument's ringing with the
model's. So when a capture says what probe made it (``metadata["probe"]["tip"]``, with the carriage's mass and
servo gains beside it), the ideal replay holds the model's key the same way (:func:`held_by_tip`): the key a
body of its own on the tip's pad (the hybrid key's pad coupling, :mod:`hapticam.models.hybrid_key.coupling`),
and the handle the carriage: its mass, pulled by the probe's own servo (``K_p``, ``K_d``) along the reference
that servo followed in the capture (:func:`servo_reference`, rebuilt from the measured position and force by
the carriage's equation of motion). The carriage then answers the model's force as the real one answered the
key's, once: it recoils from each knock and its servo's damper takes energy from the key's rattle on the tip
(the simulated probe's rattle at the release dies within 50 ms; with five times the servo's bandwidth, or a carriage
ten times heavier, it runs on past 100 ms). A carriage that follows the captured positions does not answer
the model's force (the model's key then rattles on at the release), and a replica of the servo pulled along
the captured positions answers it a second time (they hold the carriage's response already). The replay
ticks fast enough to resolve the key ringing on the tip (:func:`held_rate_hz`): the carriage answers a tick
late. Measured on a hybrid key target held by such a tip (its capture made by the simulated probe, its exact
model replayed): plain fit 98.6 % with the landings within 2.5 ms; following the captured positions, 98.0 %;
through a replica pulled along them, 89.8 %, with three landings unmatched. This is the forward model of the
measurement (the instrument driven by its own input, the object's response simulated: Ljung, "System
Identification: Theory for the User", 1999, ch. 16, on validating a model by simulating it with the
experiment's own inputs).

A capture without a probe tip, or a model without a key to hold, is replayed as before (the stiff probe, the
model rendered at the handle). The model's event-based transients are left out of a held replay: they are fitted
to what the kinematic key lacked against the captures (the key's ringing on the tip), which the held key now
rings itself.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from hapticam.models.base import Model
from hapticam.render.loop import MAX_RATE_HZ


@dataclass(frozen=True)
class CaptureProbe:
    """The probe a capture names: its tip (a one-sided linear Hunt-Crossley pad ``k delta (1 + alpha
    delta')``) and its carriage (mass, servo stiffness and damping); SI units."""

    tip_k_Npm: float
    tip_alpha_spm: float
    carriage_mass_kg: float
    servo_k_Npm: float
    servo_b_Nspm: float
    #: the capture's encoder step (m): the carriage's position, read as the capture read it
    encoder_resolution_m: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _positive(value: Any) -> float | None:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) and v > 0.0 else None


#: Ticks of a held replay per period of the key ringing on the tip (``2 pi sqrt(m_k / k_tip)``): the carriage
#: answers the pad's force a tick late, and a delayed stiff coupling adds energy. Measured on a hybrid key target
#: verified with its exact model (tests/test_verify_probe_tip.py), plain fit: 94.0 % at 1 kHz (5 ticks a
#: period), 96.4 % at 4 kHz, 98.6 % at 10 kHz (48 ticks), the loop's highest rate.
HELD_TICKS_PER_PAD_PERIOD = 48.0


def held_rate_hz(probe: CaptureProbe, key_mass_kg: float, rate_hz: float) -> float:
    """The held replay's tick rate (Hz): at least ``rate_hz``, and ``HELD_TICKS_PER_PAD_PERIOD`` ticks a period
    of the key (``key_mass_kg``) ringing on the probe's tip, rounded up to a whole kHz, within the loop's
    highest rate."""
    period_s = 2.0 * math.pi * math.sqrt(key_mass_kg / probe.tip_k_Npm)
    wanted = 1000.0 * math.ceil(HELD_TICKS_PER_PAD_PERIOD / period_s / 1000.0)
    return max(rate_hz, min(wanted, MAX_RATE_HZ))


def servo_reference(probe: CaptureProbe, t_s: np.ndarray, x_m: np.ndarray, f_N: np.ndarray) -> np.ndarray:
    """The reference (m) along which a spring ``K_p`` and damper ``K_d`` pull the carriage with the force its
    servo exerted in the capture (module notes): the carriage's own motion ``m x'' = u - F`` gives the servo's
    force ``u = m x'' + F`` from the measured position ``x_m`` and force ``f_N`` at times ``t_s`` (s), and the
    reference's offset ``e = x_ref - x`` solves ``K_d e' + K_p e = u``, from the servo settled. With
    ``a = K_p / K_d`` and ``L`` the position low-passed by ``L' = a (x - L)``, ``e = e_F + (m / K_d) (x' -
    a (x - L))`` where ``K_d e_F' + K_p e_F = F``: no second derivative is taken. ``e_F`` holds each sample's
    force until the next, as a probe integrates; ``L`` takes the position as linear between samples; both are
    integrated exactly over each sample."""
    m, kp, kd = probe.carriage_mass_kg, probe.servo_k_Npm, probe.servo_b_Nspm
    a = kp / kd
    x = np.asarray(x_m, dtype=np.float64)
    dt = np.diff(t_s)
    decay = np.exp(-a * dt)
    slope = np.diff(x) / dt / a
    v = np.gradient(x, t_s)
    e_f, low = np.empty(x.size), np.empty(x.size)
    e_f[0], low[0] = f_N[0] / kp, x[0] - v[0] / a             # the servo settled at the first sample
    for i in range(x.size - 1):
        e_f[i + 1] = decay[i] * e_f[i] + (1.0 - decay[i]) * f_N[i] / kp
        low[i + 1] = x[i + 1] - slope[i] + (low[i] - x[i] + slope[i]) * decay[i]
    return x + e_f + (m / kd) * (v - a * (x - low))


def capture_probe(metadata: dict[str, Any]) -> CaptureProbe | None:
    """The probe ``metadata`` names (``probe``, a mapping or its JSON text: ``carriage_mass_kg``, ``kp_Npm``, ``kd_Nspm`` and ``tip``:
    ``{"law": "hunt-crossley", "k_Npm", "alpha_spm", "one_sided": true}``), or None when it names none or
    only part of one."""
    probe = metadata.get("probe") if isinstance(metadata, dict) else None
    if isinstance(probe, str):                  # a capture file's header keeps it as JSON text
        try:
            probe = json.loads(probe)
        except ValueError:
            return None
    tip = probe.get("tip") if isinstance(probe, dict) else None
    if not isinstance(tip, dict) or tip.get("law") != "hunt-crossley" or tip.get("one_sided") is not True:
        return None
    k, mass = _positive(tip.get("k_Npm")), _positive(probe.get("carriage_mass_kg"))
    kp, kd = _positive(probe.get("kp_Npm")), _positive(probe.get("kd_Nspm"))
    try:
        alpha = float(tip.get("alpha_spm", 0.0))
    except (TypeError, ValueError):
        return None
    if None in (k, mass, kp, kd) or not (math.isfinite(alpha) and alpha >= 0.0):
        return None
    resolution = probe.get("encoder_resolution_m", 0.0)
    resolution = float(resolution) if isinstance(resolution, (int, float)) and math.isfinite(resolution) \
        and resolution >= 0.0 else 0.0
    return CaptureProbe(k, alpha, mass, kp, kd, resolution)


def held_key(model: Model) -> Any:
    """The one hybrid key among ``model``'s components, which a held replay holds; None without exactly one."""
    from hapticam.models.hybrid_key.model import HybridKey

    keys = [m for m in model.components() if isinstance(m, HybridKey)]
    return keys[0] if len(keys) == 1 else None


def held_by_tip(model: Model, probe: CaptureProbe, tick_s: float) -> Model | None:
    """``model`` with its hybrid key held by the probe's tip (module notes), without transients; None when
    it has no hybrid key (nothing to hold: the replay renders it at the handle). The key's Coulomb friction,
    rendered at the handle over a width the device needs (``v_eps`` at least ``F_c dt / m`` for the handle's
    mass, and 1 mm/s), acts on the key over the width its own mass needs at the replay's tick ``tick_s`` (s):
    ``F_c tick_s / m_k``; a simulated key has no velocity noise to smooth."""
    from hapticam.models.composite import Composite

    parts = model.components() if isinstance(model, Composite) else [model]
    key = held_key(model)
    if key is None:
        return None
    friction, v_eps, bump_k, bump_x = key.held_key_forces
    rest = []
    for m in parts:
        data = m.to_dict() if m is not key else {}
        if m.kind == "friction" and data.get("law") == "coulomb-viscous" and friction == 0.0 \
                and not data.get("b_v_Nspm") and data.get("v_eps_mps", 0.0) > 0.0:
            friction = float(data["Fc_N"])                                     # the key's own friction
            v_eps = min(float(data["v_eps_mps"]), friction * tick_s / key.key_mass_kg)
        elif m.kind == "contact" and data.get("law") == "linear" and data.get("side") == 1 and bump_k == 0.0 \
                and not data.get("b_Nspm") and data.get("n", 1.0) == 1.0:
            bump_k, bump_x = float(data["k_Npm"]), float(data["x_c_m"])       # a spring on the key (let-off button)
        elif m is not key:
            rest.append(m)
    held = key.on_pad(probe.tip_k_Npm, probe.tip_alpha_spm, (friction, v_eps, bump_k, bump_x))
    return Composite([held] + rest) if rest else held


#: what the ``device`` section adds for a held replay
HELD_NOTE = ("ideal replay through the capture's own probe: the model's key held by the probe's tip (a one-sided "
             "pad), the handle the probe's carriage pulled by its servo along the reference it followed in the "
             "capture, an ideal device otherwise (no display coupling, no device limits); transients left out (the "
             "held key rings itself); --device NAME replays through a device as displayed")
