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
and the handle the carriage: its mass, moving as the capture measured it (:func:`carriage_follower`). The
capture's positions are the carriage's own motion, its response to the object's force included; a replica of
the carriage's servo pulled along them responds to the model's force a second time, and takes energy from
every landing of a hammer in its backcheck. Measured on a hybrid key target held by such a tip (its capture
made by the simulated probe, its exact model replayed): following the measured motion, the plain fit is
98.0 % and the landings fall within 2 ms of the captured ones; through a replica of the servo, 89.8 %, with
three landings unmatched and the bump's position felt different. This is the forward model of the
measurement (the instrument's motion as measured, the object's response simulated: Ljung, "System
Identification: Theory for the User", 1999, ch. 16, on validating a model by simulating it with the
experiment's own measured inputs).

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

from hapticam.models.base import Model


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


#: The carriage follows the captured positions as a stiff, critically damped spring whose natural frequency
#: times the simulator's physics sub-step is this, and at most ``FOLLOWER_OMEGA_STEP_MAX``: semi-implicit
#: Euler keeps a critically damped oscillator stable up to omega h = 2 (sqrt(2) - 1) = 0.83.
FOLLOWER_OMEGA_STEP = 0.3
FOLLOWER_OMEGA_STEP_MAX = 0.6


def carriage_follower(probe: CaptureProbe, substep_s: float) -> tuple[float, float]:
    """Stiffness (N/m) and damping (N s/m) with which the replay's handle, of the carriage's mass, follows the
    captured positions (module notes): critically damped at ``FOLLOWER_OMEGA_STEP / substep_s`` (rad/s, for the
    simulator's physics sub-step in s), ten times as stiff as the probe's own servo if that is stiffer, but
    never past ``FOLLOWER_OMEGA_STEP_MAX / substep_s``."""
    m = probe.carriage_mass_kg
    omega = FOLLOWER_OMEGA_STEP / substep_s
    stiffness = min(max(m * omega * omega, 10.0 * probe.servo_k_Npm), m * (FOLLOWER_OMEGA_STEP_MAX / substep_s) ** 2)
    return stiffness, 2.0 * math.sqrt(stiffness * m)


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


def held_by_tip(model: Model, probe: CaptureProbe) -> Model | None:
    """``model`` with its hybrid key held by the probe's tip (module notes), without transients; None when
    it has no hybrid key (nothing to hold: the replay renders it at the handle)."""
    from hapticam.models.composite import Composite
    from hapticam.models.hybrid_key.model import HybridKey

    parts = model.components() if isinstance(model, Composite) else [model]
    keys = [m for m in parts if isinstance(m, HybridKey)]
    if len(keys) != 1:
        return None
    friction, v_eps, bump_k, bump_x = keys[0].held_key_forces
    rest = []
    for m in parts:
        data = m.to_dict() if m is not keys[0] else {}
        if m.kind == "friction" and data.get("law") == "coulomb-viscous" and friction == 0.0 \
                and not data.get("b_v_Nspm") and data.get("v_eps_mps", 0.0) > 0.0:
            friction, v_eps = float(data["Fc_N"]), float(data["v_eps_mps"])      # the key's own friction
        elif m.kind == "contact" and data.get("law") == "linear" and data.get("side") == 1 and bump_k == 0.0 \
                and not data.get("b_Nspm") and data.get("n", 1.0) == 1.0:
            bump_k, bump_x = float(data["k_Npm"]), float(data["x_c_m"])       # a spring on the key (let-off button)
        elif m is not keys[0]:
            rest.append(m)
    data = keys[0].to_dict()
    data.update(coupling_k_Npm=probe.tip_k_Npm, coupling_b_Nspm=0.0, coupling_pad_alpha_spm=probe.tip_alpha_spm)
    key = HybridKey.from_dict(data)
    key.held_key_forces = (friction, v_eps, bump_k, bump_x)
    return Composite([key] + rest) if rest else key


#: what the ``device`` section adds for a held replay
HELD_NOTE = ("ideal replay through the capture's own probe: the model's key held by the probe's tip (a one-sided "
             "pad), the handle the probe's carriage moving as the capture measured it, an ideal device otherwise (no display coupling, no "
             "device limits); transients left out (the held key rings itself); --device NAME replays through a "
             "device as displayed")
