"""The hybrid key's parameters as the fit sees them: names, transforms, bounds and the captures' preparation.

Every free parameter is fitted in a transformed coordinate (log for positive quantities, logit for a
restitution in (0, 1), newtons for the preload) so that steps are relative; :func:`to_model` maps a
parameter mapping to a valid :class:`~hapticam.models.hybrid_key.model.HybridKey`, projecting onto the model's
geometric constraints (repetition below let-off, check drop within ``r (x_l - x_r)`` or, with a hammer
rail (``hammer_rail`` 1.0 in the mapping), repetition at the jack pickup; string above the let-off and
backcheck heights) so every trial point of the solver can be simulated.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.signal import lfilter

from hapticam.identify.hybrid_key.static import smooth
from hapticam.models.base import Model
from hapticam.models.composite import Composite
from hapticam.models.contact import Contact
from hapticam.models.friction import Friction
from hapticam.models.hybrid_key.model import HybridKey

#: Every parameter the fit can free, in the order of the parameter vector (keys of ``to_model``'s mapping).
PARAMETERS = ("return_spring_Npm", "preload_N", "hammer_mass_kg", "lever_ratio", "key_mass_kg", "let_off_m",
              "check_drop_m", "repetition_m", "keybed_m", "keybed_k_Npm", "keybed_b_Nspm", "contact_k_Npm",
              "contact_b_Nspm", "string_height_m", "string_restitution", "jack_pickup_m")
#: Fixed, not identified: the Hunt-Crossley exponent (seed 000 eq. 26 keeps n fixed: k and b are what
#: contact onset and lift-off times identify) and gravity (known).
FIXED_DEFAULTS = {"contact_n": 1.5, "gravity_mps2": 9.81}
_LINEAR = {"preload_N": 0.1}           # fitted as value / scale
_LOGIT = {"string_restitution"}


def encode(name: str, value: float) -> float:
    """Transformed coordinate of a parameter value."""
    if name in _LINEAR:
        return value / _LINEAR[name]
    if name in _LOGIT:
        v = min(max(value, 1e-4), 1.0 - 1e-4)
        return math.log(v / (1.0 - v))
    return math.log(max(value, 1e-300))


def decode(name: str, z: float) -> float:
    """Parameter value of a transformed coordinate."""
    if name in _LINEAR:
        return z * _LINEAR[name]
    if name in _LOGIT:
        return 1.0 / (1.0 + math.exp(-z))
    return math.exp(min(z, 700.0))


def dvalue_dz(name: str, value: float) -> float:
    """d value / d z at ``value`` (to turn standard errors in z into standard errors in the value)."""
    if name in _LINEAR:
        return _LINEAR[name]
    if name in _LOGIT:
        return value * (1.0 - value)
    return value


def to_model(values: dict[str, float], coupling: tuple[float, float] | None = None) -> HybridKey:
    """A valid hybrid key from a parameter mapping (``PARAMETERS`` plus ``FIXED_DEFAULTS`` keys), projected
    onto the model's constraints; ``coupling``: ``(k_c, b_c)`` for rendering, or None."""
    v = dict(FIXED_DEFAULTS)
    v.update(values)
    r = v["lever_ratio"]
    x_l = v["let_off_m"]
    x_kb = max(v["keybed_m"], x_l * 1.0005)
    rail = bool(v.get("hammer_rail", 0.0))
    x_j = min(max(v.get("jack_pickup_m", 0.0), 0.0), 0.98 * x_l) if rail else 0.0
    x_r = x_j if rail else min(v["repetition_m"], 0.98 * x_l)     # with the rail the jack slips back at x_j
    d_c = v["check_drop_m"] if rail else min(v["check_drop_m"], 0.999 * r * (x_l - x_r))
    touch = v.get("touch_m", math.nan)
    touch = min(max(touch, 0.0), x_j) if (rail and math.isfinite(touch)) else None
    y_s = max(v["string_height_m"], r * x_l * 1.001, (r * x_kb - d_c) * 1.001)
    return HybridKey(key_mass_kg=max(v["key_mass_kg"], 0.0), return_spring_Npm=max(v["return_spring_Npm"], 0.0),
                     preload_N=v["preload_N"], hammer_mass_kg=v["hammer_mass_kg"], lever_ratio=r,
                     contact={"law": "hunt-crossley", "k_Npm": v["contact_k_Npm"], "b_Nspm": v["contact_b_Nspm"],
                              "n": v["contact_n"]},
                     gravity_mps2=v["gravity_mps2"], let_off_m=x_l, check_drop_m=d_c, repetition_m=x_r,
                     string_height_m=y_s, string_restitution=min(max(v["string_restitution"], 0.0), 1.0),
                     keybed_m=x_kb, keybed_k_Npm=max(v["keybed_k_Npm"], 0.0),
                     keybed_b_Nspm=max(v["keybed_b_Nspm"], 0.0),
                     coupling_k_Npm=None if coupling is None else coupling[0],
                     coupling_b_Nspm=0.0 if coupling is None else coupling[1], hammer_rail=rail, jack_pickup_m=x_j,
                     touch_m=touch)


#: Width (m/s) of the sign of v in the fit's friction (the captures' Coulomb friction, less smoothed than
#: the rendered law's, whose width the device sets: :func:`friction_width`).
FIT_FRICTION_WIDTH_MPS = 0.5e-3


def extra_force(extra: dict[str, float], x_m: np.ndarray, v_mps: np.ndarray) -> np.ndarray:
    """Force (N) of what a key has beside the hybrid key (:func:`with_extras`) along a motion: Coulomb
    friction ``F_c tanh(v / v_w)`` and the let-off bump's spring ``k_b (x - x_b)+``."""
    f = extra.get("friction_N", 0.0) * np.tanh(v_mps / FIT_FRICTION_WIDTH_MPS)
    if extra.get("bump_k_Npm", 0.0) > 0.0:
        f = f + extra["bump_k_Npm"] * np.clip(x_m - extra["bump_x_m"], 0.0, None)
    return f


def friction_width(friction_N: float, handle_mass_kg: float, rate_hz: float) -> float:
    """The rendered Coulomb law's width v_eps (m/s): at least F_c dt / m for the device's handle mass, so a
    tick of friction does not reverse the handle (models/friction.py), and no less than 1 mm/s."""
    return max(friction_N / (rate_hz * handle_mass_kg), 1e-3)


def with_extras(key: HybridKey, extra: dict[str, float], v_eps_mps: float = 2e-3) -> Model:
    """The hybrid key with what the captures showed beside it: a ``friction`` component (coulomb-viscous,
    ``F_c``) and a one-sided linear ``contact`` for the let-off bump's spring; the key alone when neither."""
    parts: list[Model] = [key]
    if extra.get("friction_N", 0.0) > 0.0:          # the key's friction acts once the key is touched
        parts.append(Friction("coulomb-viscous", Fc_N=extra["friction_N"], v_eps_mps=v_eps_mps,
                              active_from_m=key.touch_m))
    if extra.get("bump_k_Npm", 0.0) > 0.0:
        parts.append(Contact("linear", x_c_m=extra["bump_x_m"], k_Npm=extra["bump_k_Npm"]))
    return key if len(parts) == 1 else Composite(parts)


def from_model(model: HybridKey) -> dict[str, float]:
    """The parameter mapping of a hybrid key (inverse of :func:`to_model`; absent positions become NaN)."""
    d = model.to_dict()
    c = d["contact"]
    nan = float("nan")
    return {"return_spring_Npm": d["return_spring_Npm"], "preload_N": d["preload_N"],
            "hammer_mass_kg": d["hammer_mass_kg"], "lever_ratio": d["lever_ratio"], "key_mass_kg": d["key_mass_kg"],
            "let_off_m": d["let_off_m"] or nan, "check_drop_m": d["check_drop_m"], "repetition_m": d["repetition_m"],
            "keybed_m": d["keybed_m"] or nan, "keybed_k_Npm": d["keybed_k_Npm"], "keybed_b_Nspm": d["keybed_b_Nspm"],
            "contact_k_Npm": c.get("k_Npm", nan), "contact_b_Nspm": c.get("b_Nspm", nan),
            "string_height_m": d["string_height_m"] or nan, "string_restitution": d["string_restitution"],
            "contact_n": c.get("n", nan), "gravity_mps2": d["gravity_mps2"],
            "hammer_rail": float(d.get("hammer_rail", False)), "jack_pickup_m": d.get("jack_pickup_m", 0.0),
            "touch_m": nan if d.get("touch_m") is None else d["touch_m"]}


@dataclass
class Prepared:
    """A capture ready for simulation: key position (m, zero-phase smoothed at ``POSITION_CUTOFF_HZ``),
    velocity (m/s) and acceleration (m/s^2, smoothed at ``ACCELERATION_CUTOFF_HZ``; the key's own, read
    through the probe's tip when its stiffness is known: :func:`key_behind_tip`), force (N), step (s),
    its role and the samples the residual uses. Position and velocity stay the probe's: they drive the
    simulated key, whose hammer the fit's other terms are read against, and the tip's compression (micrometres)
    moves the hammer's events by less than a sample; the acceleration is where the carriage's recoil biased the
    mass (:func:`prepare`)."""

    name: str
    role: str
    dt_s: float
    x_m: np.ndarray
    v_mps: np.ndarray
    a_mps2: np.ndarray
    f_N: np.ndarray
    use: np.ndarray
    noise_N: float

    def predict(self, model: HybridKey) -> np.ndarray:
        """The model's force (N) along this capture's key motion, from rest."""
        return model.simulate(self.x_m, self.dt_s, v_mps=self.v_mps, a_mps2=self.a_mps2).force_N


#: Smoothing before the kernel: the encoder's steps would be differentiated into drive-point velocity.
POSITION_CUTOFF_HZ = 3000.0
#: Smoothing of the key acceleration that multiplies the key mass.
ACCELERATION_CUTOFF_HZ = 300.0
#: Samples left out at the start (the kernel starts the hammer at rest on the key).
SKIP_S = 0.01


def key_behind_tip(x_m: np.ndarray, f_N: np.ndarray, dt_s: float, tip: tuple[float, float]) -> np.ndarray:
    """The key's position (m) behind a compliant probe tip: the probe's ``x_m`` less the tip's compression
    ``delta``, which the force ``f_N`` (N) on the tip gives through the tip's stiffness and damping ``tip``
    (N/m, N s/m): ``k delta + b delta' = f`` (implicit Euler at ``dt_s``), one-sided (a pull leaves it
    uncompressed). A one-sided Hunt-Crossley pad ``k delta (1 + alpha delta')`` is taken at ``b = 0``: its
    damping is on ``delta delta'``, second order in the micrometres of compression (the simulated piano
    key's mass through its pad, alpha 5 s/m: 61.35 g solving for alpha, 61.39 g with ``b = 0``)."""
    k, b = tip
    c = b / dt_s
    delta = lfilter([1.0 / (k + c)], [1.0, -c / (k + c)], np.maximum(f_N, 0.0))
    return x_m - delta


def prepare(name: str, role: str, t_s: np.ndarray, x_m: np.ndarray, f_N: np.ndarray,
            tip: tuple[float, float] | None = None) -> Prepared:
    """Prepare one capture (uniform sampling required; the rate is the capture's own). ``tip``: the probe
    tip's stiffness (N/m) and damping (N s/m) when known. The key's acceleration, which multiplies its mass,
    is then the key's own (:func:`key_behind_tip`): the key rings on the tip, and the probe's carriage
    recoils from that ringing against the force, which biases a mass read from the carriage's
    acceleration low (48 g for the simulated piano key's 60 g; 61 g through its tip)."""
    dt = float(np.median(np.diff(t_s)))
    f = np.asarray(f_N, float)
    x = np.ascontiguousarray(smooth(np.asarray(x_m, float), dt, POSITION_CUTOFF_HZ))
    key = np.asarray(x_m, float) if tip is None else key_behind_tip(np.asarray(x_m, float), f, dt, tip)
    xa = smooth(key, dt, ACCELERATION_CUTOFF_HZ)
    v = np.ascontiguousarray(np.gradient(x, dt))
    a = np.ascontiguousarray(np.gradient(np.gradient(xa, dt), dt))
    use = np.arange(int(round(SKIP_S / dt)), f.size)
    noise = float(1.4826 * np.median(np.abs(np.diff(f) - np.median(np.diff(f)))) / math.sqrt(2.0))
    return Prepared(name, role, dt, x, v, a, f, use, max(noise, 1e-4))


#: Capture roles by the probe's excitation kind (recorded in a simulated probe's capture metadata).
ROLE_OF_KIND = {"triangle": "slow", "step": "slow", "strokes": "stroke", "sine": "bounce", "sweep": "periodic",
                "multisine": "periodic"}
#: A capture of unknown kind whose middle half spans from ``TAP_SPAN_M[0]`` to ``TAP_SPAN_M[1]`` (m), held
#: beyond half its deepest travel, is a tap (:class:`~hapticam.world.key_tap.KeyTap`): the key held down
#: and rocked by micrometres (a sine of amplitude A spans 1.4 A there; a key held still, a few encoder steps).
TAP_SPAN_M = (0.5e-6, 20e-6)


def classify(t_s: np.ndarray, x_m: np.ndarray, let_off_m: float | None = None, kind: str | None = None) -> str:
    """Role of a capture: ``tap`` (the key held down and rocked by micrometres: of unknown kind, its middle
    half spanning ``TAP_SPAN_M`` beyond half its deepest travel), ``slow`` (a press and release below 30 mm/s),
    ``bounce`` (stays below the let-off point), ``stroke`` or ``periodic``; by the excitation ``kind`` when
    known, else by its motion (``periodic`` when longer than 4 s)."""
    x25, x75 = np.percentile(x_m, (25.0, 75.0))
    rocked = TAP_SPAN_M[0] <= x75 - x25 <= TAP_SPAN_M[1] and x25 > 0.5 * float(np.max(x_m)) > 0.0
    if kind == "tap" or (kind is None and rocked):
        return "tap"
    dt = float(np.median(np.diff(t_s)))
    v = np.gradient(smooth(np.asarray(x_m, float), dt, 50.0), dt)
    if np.percentile(np.abs(v), 99) < 0.03:
        return "slow"
    if let_off_m is not None and np.max(x_m) < let_off_m:
        return "bounce"
    role = ROLE_OF_KIND.get(kind or "")
    if role is not None and role != "slow":
        return "periodic" if role == "bounce" else role     # an oscillation through let-off
    return "periodic" if t_s[-1] - t_s[0] > 4.0 else "stroke"


def describe_roles() -> dict[str, Any]:
    """What each kind of capture identifies (printed by the CLI and written into the provenance)."""
    return {
        "slow": "slow press and release: return spring, preload, let-off point and the force drop (hammer weight "
                "through the lever), check drop (flight time), repetition point, lever ratio (escaped level), "
                "hammer mass, keybed position and stiffness; the hammer's bounces in the backcheck after let-off: "
                "contact damping b (Hunt-Crossley alpha = b / k)",
        "stroke": "strokes at graded speeds: hammer flight after let-off (lever ratio, hammer mass), key mass, "
                  "string height and restitution (when the hammer reaches it), keybed damping",
        "bounce": "key oscillation below let-off with the hammer bouncing on the jack: contact damping b "
                  "(Hunt-Crossley, k and n fixed) when no bounce in the backcheck gives it",
        "periodic": "long periodic excitation: every parameter together (prediction-error fit)",
        "tap": "the key held past let-off and rocked by micrometres on the probe's resting tip: the contact's "
               "stiffness k (the hammer's mode on its felt), by the key simulated on the tip"}
