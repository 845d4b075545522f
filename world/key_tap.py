"""A key held down past let-off and tapped by micrometres: the excitation that shows the hammer's felt.

With the key held past let-off the hammer rests in its backcheck on the felt's static compression (some
10 um under its weight); the key rests on the probe's tip. A swept sine of a few micrometres about that
depth rocks the key on the tip, and the hammer on its felt, without lifting it off: the force then carries
the key's ringing on the tip coupled to the hammer's mode on the felt, whose frequency the felt's stiffness
sets (a Hunt-Crossley felt ``k delta^n`` stiffens as ``n k delta^(n-1)`` about its compression). That is the
contact stiffness a landing's sub-millisecond spike does not resolve through the tip
(:mod:`hapticam.identify.hybrid_key.tap`). The amplitude has to slide the key past its friction (the pad's
force amplitude, ``pad k x A``, above the key's Coulomb friction: 0.2 N at 2 um on a 1e5 N/m pad against the
simulated piano action's 0.1 N; at 1 um the tap does not tell k there) and keep the hammer on its felt (the
hammer moves ``r A`` against a compression of ``(m_h g / k)^(2/3)``, 10 um for 7 g on 2e6 N/m^1.5: a
frictionless key tapped at 2 um lifts it off such a felt, and the response turns to bouncing).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hapticam.errors import UsageError
from hapticam.world.excitation_parts import FromParts, raised_cosine


@dataclass(frozen=True)
class KeyTap(FromParts):
    """From ``lo_m`` down to ``depth_m`` by a raised cosine over ``press_s``, held ``settle_s``, a linear
    swept sine ``amplitude_m sin(phi)`` from ``f_start_hz`` to ``f_end_hz`` over ``sweep_s`` (faded in and
    out over ``taper_s``), held ``settle_s`` again, back up over ``press_s``, at rest ``rest_s``. SI units."""

    lo_m: float = 0.0
    depth_m: float = 0.0097
    amplitude_m: float = 2e-6
    f_start_hz: float = 30.0
    f_end_hz: float = 600.0
    sweep_s: float = 4.0
    press_s: float = 0.5
    settle_s: float = 0.5
    taper_s: float = 0.1
    rest_s: float = 0.2

    def __post_init__(self) -> None:
        values = (self.lo_m, self.depth_m, self.amplitude_m, self.f_start_hz, self.f_end_hz, self.sweep_s,
                  self.press_s, self.settle_s, self.taper_s, self.rest_s)
        if not all(np.isfinite(values)) or min(values[2:]) <= 0.0 or 2.0 * self.taper_s > self.sweep_s:
            raise UsageError("tap: finite positions, amplitude, band and times > 0, tapers within the sweep")

    @property
    def duration_s(self) -> float:
        """Total length (s)."""
        return 2.0 * (self.press_s + self.settle_s) + self.sweep_s + self.rest_s

    def _parts(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        d, p = self.depth_m - self.lo_m, self.press_s
        down, dv, da = raised_cosine(t / p)
        up_start = p + 2.0 * self.settle_s + self.sweep_s
        up, uv, ua = raised_cosine((t - up_start) / p)
        x = self.lo_m + d * (down - up)
        v = d * (dv - uv) / p
        a = d * (da - ua) / p ** 2
        s = t - (p + self.settle_s)                                   # time into the sweep
        inside = (s > 0.0) & (s < self.sweep_s)
        rate = (self.f_end_hz - self.f_start_hz) / self.sweep_s
        phi = 2.0 * np.pi * (self.f_start_hz * s + 0.5 * rate * s * s)
        w1 = 2.0 * np.pi * (self.f_start_hz + rate * s)                # phi'
        w2 = 2.0 * np.pi * rate                                          # phi''
        fade_in, fi1, fi2 = raised_cosine(s / self.taper_s)
        fade_out, fo1, fo2 = raised_cosine((self.sweep_s - s) / self.taper_s)
        w = fade_in * fade_out
        w_1 = (fi1 * fade_out - fade_in * fo1) / self.taper_s
        w_2 = (fi2 * fade_out - 2.0 * fi1 * fo1 + fade_in * fo2) / self.taper_s ** 2
        sin, cos = np.sin(phi), np.cos(phi)
        A = np.where(inside, self.amplitude_m, 0.0)
        x = x + A * w * sin
        v = v + A * (w_1 * sin + w * w1 * cos)
        a = a + A * (w_2 * sin + 2.0 * w_1 * w1 * cos + w * (w2 * cos - w1 * w1 * sin))
        return x, v, a

    def metadata(self) -> dict:
        """Parameters recorded in the capture."""
        return {"kind": "tap", "lo_m": self.lo_m, "depth_m": self.depth_m, "amplitude_m": self.amplitude_m,
                "f_start_hz": self.f_start_hz, "f_end_hz": self.f_end_hz, "sweep_s": self.sweep_s,
                "press_s": self.press_s, "settle_s": self.settle_s, "taper_s": self.taper_s, "rest_s": self.rest_s,
                "duration_s": self.duration_s}
