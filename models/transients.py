"""Event-based transients: the open-loop force pulse a model adds at an impact.

After Kuchenbecker, Fiene & Niemeyer, "Improving contact realism through event-based haptic feedback"
(2006): a model rendered through a device's servo loop gives a hard impact as a smooth thump, while the
real object gives a sharp force pulse a few milliseconds long. At an impact the model's kernel reports
(event code, impact speed ``v``), and the loop adds, from the impact on (``t >= 0``)::

    F(t) = gain_N_per_mps * v * exp(-t / decay_s) * sin(2 pi frequency_hz t)

clipped to the device's force and force-rate limits. A :class:`Transient` holds one such pulse per event
kind, with the standard deviations of its fit and the number of impacts it was fitted on; a model file
holds them as an optional top-level list ``transients`` (:mod:`hapticam.models.files`).

Event kinds and their codes (:data:`EVENT_CODES`): ``landing`` and ``string`` are the hybrid key's
``EV_LANDING`` (the hammer landing on its jack or in its backcheck) and ``EV_STRING`` (striking the
string); ``keybed`` and ``floor`` are the codes other kernels report for a key reaching its keybed and a
travel's hard floor.

:func:`pulse_energy_bound_J` bounds the energy one clipped pulse can put into a handle.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from hapticam.errors import ModelValidationError
from hapticam.models.hybrid_key.layout import EV_LANDING, EV_STRING
from hapticam.models.validation import as_float, excerpt

#: event kinds a transient may be attached to
TRANSIENT_EVENTS = ("landing", "string", "keybed", "floor")
#: event kind -> the event code a kernel reports for it (landing and string are the hybrid key's)
EVENT_CODES = {"landing": EV_LANDING, "string": EV_STRING, "keybed": 5, "floor": 6}
#: event code -> event kind
EVENT_NAMES = {code: name for name, code in EVENT_CODES.items()}

#: physical ranges: peak force per unit impact speed (N/(m/s)); a 10 m/s impact then stays within the
#: 1e5 N a model's force may never reach (:mod:`hapticam.models.ranges` caps forces at 1e4 N)
GAIN_RANGE = (0.0, 1e4)
#: oscillation frequency (Hz): from a slow wobble to above what any haptic device renders
FREQUENCY_RANGE_HZ = (1.0, 5000.0)
#: decay time constant (s): from 10 us to half a second
DECAY_RANGE_S = (1e-5, 0.5)

_REQUIRED = ("event", "gain_N_per_mps", "frequency_hz", "decay_s")
_OPTIONAL = ("gain_sd", "frequency_sd_hz", "decay_sd_s", "samples")


@dataclass(frozen=True)
class Transient:
    """One event kind's pulse: ``gain_N_per_mps`` (N per m/s of impact speed: the amplitude of the decaying
    sinusoid), ``frequency_hz`` (Hz), ``decay_s`` (s); one standard deviation of each (same units; None when
    unknown) and the number of impacts it was fitted on (``samples``, 0 for a hand-authored pulse)."""

    event: str
    gain_N_per_mps: float
    frequency_hz: float
    decay_s: float
    gain_sd: float | None = None
    frequency_sd_hz: float | None = None
    decay_sd_s: float | None = None
    samples: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.event, str) or self.event not in TRANSIENT_EVENTS:
            raise ModelValidationError(f"event: expected one of {', '.join(TRANSIENT_EVENTS)}, got "
                                       f"{excerpt(self.event)}")
        checks = (("gain_N_per_mps", GAIN_RANGE), ("frequency_hz", FREQUENCY_RANGE_HZ), ("decay_s", DECAY_RANGE_S))
        for name, (low, high) in checks:
            object.__setattr__(self, name, as_float(name, getattr(self, name), min_value=low, max_value=high))
        for name in ("gain_sd", "frequency_sd_hz", "decay_sd_s"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, as_float(name, value, min_value=0.0))
        samples = self.samples
        if isinstance(samples, bool) or not isinstance(samples, int) or samples < 0:
            raise ModelValidationError(f"samples: expected a whole number of impacts >= 0, got {excerpt(samples)}")

    @property
    def code(self) -> int:
        """The event code a kernel reports for this transient's event."""
        return EVENT_CODES[self.event]

    def amplitude_N(self, v_impact_mps: float) -> float:
        """Amplitude (N) of the decaying sinusoid at impact speed ``v_impact_mps`` (m/s; its magnitude)."""
        return self.gain_N_per_mps * abs(float(v_impact_mps))

    def force_N(self, t_s: float, v_impact_mps: float) -> float:
        """The pulse's force (N) ``t_s`` seconds after an impact at ``v_impact_mps`` (m/s), before clipping;
        0 before the impact."""
        if t_s < 0.0:
            return 0.0
        return (self.amplitude_N(v_impact_mps) * math.exp(-t_s / self.decay_s)
                * math.sin(2.0 * math.pi * self.frequency_hz * t_s))

    def impulse_Ns(self, v_impact_mps: float) -> float:
        """The unclipped pulse's net impulse (N s) at ``v_impact_mps`` (m/s): the integral of
        ``A exp(-t / tau) sin(w t)`` over t >= 0, ``A w tau^2 / (1 + (w tau)^2)``."""
        w, tau = 2.0 * math.pi * self.frequency_hz, self.decay_s
        return self.amplitude_N(v_impact_mps) * w * tau * tau / (1.0 + (w * tau) ** 2)

    def to_dict(self) -> dict[str, Any]:
        """The model file's mapping (SI units; standard deviations only when known)."""
        out: dict[str, Any] = {"event": self.event, "gain_N_per_mps": self.gain_N_per_mps,
                               "frequency_hz": self.frequency_hz, "decay_s": self.decay_s}
        for name in ("gain_sd", "frequency_sd_hz", "decay_sd_s"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        out["samples"] = self.samples
        return out

    @classmethod
    def from_dict(cls, data: Any) -> "Transient":
        """Build from :meth:`to_dict` output; a missing or unknown field, or a value outside its physical
        range, raises :class:`~hapticam.errors.ModelValidationError` naming the field."""
        if not isinstance(data, dict):
            raise ModelValidationError(f"expected a mapping with {', '.join(_REQUIRED)}, got {excerpt(data)}")
        missing = [k for k in _REQUIRED if k not in data]
        if missing:
            raise ModelValidationError(f"{missing[0]}: missing (a transient needs {', '.join(_REQUIRED)})")
        unknown = sorted(str(k) for k in data if k not in _REQUIRED + _OPTIONAL)
        if unknown:
            raise ModelValidationError(f"{excerpt(unknown[0], quoted=False)}: unknown field of a transient "
                                       f"(known: {', '.join(_REQUIRED + _OPTIONAL)})")
        return cls(**data)


def pulse_force_integral_bound_Ns(transient: Transient, v_impact_mps: float, max_force_N: float = math.inf,
                                  max_rate_N_per_s: float = math.inf, tick_s: float = 0.0) -> float:
    """An upper bound (N s) of the integral of ``|F|`` over the pulse as the device renders it (module
    formula), clipped to ``|F| <= max_force_N`` (N) and slew-limited to ``|dF/dt| <= max_rate_N_per_s``
    (N/s; a limiter that moves its output toward the pulse by at most that rate). ``inf``: no limit.

    Derivation, with ``A = gain |v_impact|``, ``tau = decay_s`` and ``P = min(A, max_force_N)``:

    - the pulse lies within its envelope, ``|F(t)| <= A exp(-t / tau)``, and clipping keeps it within
      ``c(t) = min(P, A exp(-t / tau))``, a non-increasing convex envelope;
    - a slew limiter never moves its output away from zero past its target, so its output exceeds ``c``
      only where ``c`` falls faster than the rate ``R``, and there it falls at ``R``: its magnitude stays
      below ``max(c(t), P - R (t - t1))`` with ``t1 = tau ln(A / P)`` the end of the clipped stretch;
    - integrating: ``int c dt = P t1 + P tau = P tau (1 + ln(A / P))``, and the ramp adds at most
      ``P^2 / (2 R)``.

    So ``int |F| dt <= P tau (1 + ln(A / P)) + P^2 / (2 R)``; without limits it is ``A tau``. A loop that
    holds each tick's force for ``tick_s`` (s) integrates a right-open staircase of samples of a
    non-increasing bound from the impact on, which exceeds its integral by at most the first step,
    ``P tick_s``: that is added."""
    amplitude = transient.amplitude_N(v_impact_mps)
    force_cap = _limit("max_force_N", max_force_N)
    rate = _limit("max_rate_N_per_s", max_rate_N_per_s)
    hold = as_float("tick_s", tick_s, min_value=0.0)
    peak = min(amplitude, force_cap)
    if peak <= 0.0:
        return 0.0
    envelope = peak * transient.decay_s * (1.0 + math.log(amplitude / peak))
    return envelope + (0.0 if math.isinf(rate) else peak * peak / (2.0 * rate)) + peak * hold


def _limit(name: str, value: Any) -> float:
    """A device limit: a positive number, or ``inf`` for none."""
    return math.inf if value == math.inf else as_float(name, value, min_value=0.0, strict_min=True)


def pulse_energy_bound_J(transient: Transient, v_impact_mps: float, max_force_N: float = math.inf,
                         max_rate_N_per_s: float = math.inf, handle_speed_mps: float | None = None,
                         tick_s: float = 0.0) -> float:
    """An upper bound (J) of the energy one rendered pulse can put into a handle moving no faster than
    ``handle_speed_mps`` (m/s; by default the impact speed ``v_impact_mps``, m/s) while it lasts.

    The pulse's power on the handle is ``F v <= |F| |v|``, so the work it does is at most the handle's
    largest speed times the integral of ``|F|``, bounded by :func:`pulse_force_integral_bound_Ns` for
    the clipping to ``max_force_N`` (N), the slew limit ``max_rate_N_per_s`` (N/s) and a loop holding each
    tick's force for ``tick_s`` (s; 0: continuous time)::

        E <= |v|max * (P tau (1 + ln(A / P)) + P^2 / (2 R) + P tick_s),   A = gain |v_impact|, P = min(A, F_max)

    (``A tau |v_impact|`` without limits). The bound holds whatever the phase of the handle's motion; it
    is reached only by a handle moving at its largest speed along the pulse's sign throughout."""
    speed = abs(float(v_impact_mps)) if handle_speed_mps is None else \
        as_float("handle_speed_mps", handle_speed_mps, min_value=0.0)
    return speed * pulse_force_integral_bound_Ns(transient, v_impact_mps, max_force_N, max_rate_N_per_s, tick_s)
