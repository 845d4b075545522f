"""Synthetic contact records with known truth, for tests, reproductions and benchmarks.

- :func:`persistent_excitation`: approach, contact, then a four-tone multisine about a mean
  penetration (damping identifiable).
- :func:`quasi_static_steps`: approach, contact, then stepwise load increments held for seconds (the
  thesis's STVF experiments, seed 004 sec. 3.2.1; damping not identifiable).
- :func:`series_hunt_crossley`: a probe tip of stiffness ``k_p`` pressing a Hunt-Crossley wall
  ``F = k d^n (1 + b' d')`` (a key's bottom-out seen through a compliant probe).
- :func:`quantize`: a 12-bit force sensor (dithered uniform quantiser over +- full scale).

All return the probe-side measurement (position ``x_m``, force ``f_N``) with the truth beside it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class SyntheticRecord:
    """A synthetic capture: times (s), probe position (m), velocity (m/s), measured force (N), the
    noise-free force (N), the wall position ``x_c_m`` and the true parameters."""

    t_s: np.ndarray
    x_m: np.ndarray
    v_mps: np.ndarray
    f_N: np.ndarray
    f_true_N: np.ndarray
    x_c_m: float
    truth: dict[str, float] = field(default_factory=dict)


def quantize(f_N: np.ndarray, full_scale_N: float, bits: int = 12, dither_lsb: float = 0.5,
             rng: np.random.Generator | None = None) -> np.ndarray:
    """A ``bits``-bit reading over ``+- full_scale_N`` with Gaussian analog noise of ``dither_lsb`` LSB."""
    lsb = 2.0 * full_scale_N / 2 ** bits  # one count (N)
    rng = np.random.default_rng(0) if rng is None else rng
    noisy = f_N + rng.normal(0.0, dither_lsb * lsb, f_N.shape)
    return np.clip(np.round(noisy / lsb) * lsb, -full_scale_N, full_scale_N - lsb)


def _smoothstep(u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``s = 3u^2 - 2u^3`` on [0, 1] (clamped) and ``ds/du``."""
    u = np.clip(u, 0.0, 1.0)
    return 3 * u ** 2 - 2 * u ** 3, 6 * u - 6 * u ** 2


def _record(t: np.ndarray, d: np.ndarray, dd: np.ndarray, k: float, b: float, x_c: float, noise: bool,
            full_scale_N: float, seed: int, extra: dict[str, float]) -> SyntheticRecord:
    f_true = np.where(d > 0, np.maximum(k * d + b * dd, 0.0), 0.0)  # F = k x + b x' in contact  (seed 004 eq. 2.1)
    f = quantize(f_true, full_scale_N, rng=np.random.default_rng(seed)) if noise else f_true.copy()
    truth = {"k_Npm": k, "b_Nspm": b, "full_scale_N": full_scale_N, "lsb_N": 2 * full_scale_N / 4096, **extra}
    return SyntheticRecord(t, x_c + d, dd, f, f_true, x_c, truth)


def persistent_excitation(k: float = 1e6, b: float = 200.0, fs_Hz: float = 5000.0, duration_s: float = 8.0,
                          noise: bool = True, full_scale_N: float = 300.0, seed: int = 0,
                          x_c_m: float = 2e-3) -> SyntheticRecord:
    """0.2 s free approach at 1e-4 m/s, 0.3 s ramp to 1.2e-4 m, then tones of 2.5e-5 m at 17, 43, 89, 137 Hz."""
    t = np.arange(int(round(duration_s * fs_Hz))) / fs_Hz
    t_on, t_ramp, d_mean, amp = 0.2, 0.3, 1.2e-4, 2.5e-5
    s, ds = _smoothstep((t - t_on) / t_ramp)
    d = np.where(t < t_on, -1e-4 * (t_on - t), d_mean * s)
    dd = np.where(t < t_on, 1e-4, d_mean * ds / t_ramp)
    env, denv = _smoothstep((t - t_on - t_ramp) / 0.5)
    rng = np.random.default_rng(seed + 1)
    for f_tone in (17.0, 43.0, 89.0, 137.0):
        w, ph = 2 * np.pi * f_tone, rng.uniform(0, 2 * np.pi)
        tone = amp * np.sin(w * t + ph)
        d = d + env * tone
        dd = dd + env * amp * w * np.cos(w * t + ph) + denv / 0.5 * tone
    return _record(t, d, dd, k, b, x_c_m, noise, full_scale_N, seed, {"fs_Hz": fs_Hz})


def quasi_static_steps(k: float = 1e6, b: float = 200.0, fs_Hz: float = 1000.0, levels: int = 5,
                       step_m: float = 2e-5, ramp_s: float = 2.0, hold_s: float = 2.0, noise: bool = True,
                       full_scale_N: float = 300.0, seed: int = 0, x_c_m: float = 2e-3) -> SyntheticRecord:
    """0.5 s approach at 2e-5 m/s, then ``levels`` smooth steps of ``step_m`` over ``ramp_s`` held ``hold_s``."""
    t_on = 0.5
    duration = t_on + levels * (ramp_s + hold_s)
    t = np.arange(int(round(duration * fs_Hz))) / fs_Hz
    d = np.where(t < t_on, -2e-5 * (t_on - t), 0.0)
    dd = np.where(t < t_on, 2e-5, 0.0)
    for i in range(levels):
        s, ds = _smoothstep((t - t_on - i * (ramp_s + hold_s)) / ramp_s)
        d = d + np.where(t >= t_on, step_m * s, 0.0)
        dd = dd + np.where(t >= t_on, step_m * ds / ramp_s, 0.0)
    return _record(t, d, dd, k, b, x_c_m, noise, full_scale_N, seed, {"fs_Hz": fs_Hz})


def series_hunt_crossley(k: float = 2.2e8, n: float = 1.5, b_prime: float = 0.5, k_probe: float = 2e5,
                         d_max_m: float = 2e-5, fs_Hz: float = 1000.0, press_s: float = 1.0, noise: bool = True,
                         full_scale_N: float = 50.0, seed: int = 0, x_c_m: float = 3.5e-3) -> SyntheticRecord:
    """A probe with tip stiffness ``k_probe`` presses a Hunt-Crossley wall and releases.

    The wall penetration ``d(t)`` rises smoothly to ``d_max_m`` over ``press_s`` and returns; the wall force
    is ``F = k d^n (1 + b' d')`` (seed 000 eq. 26 as ``hapticam.models.contact``: ``b = k b'``); the massless
    tip spring carries it, so the probe's own position is ``x = x_c + d + F / k_probe`` (springs in
    series, seed 004 sec. 3.5). ``x_m`` is that position; ``v_mps`` its rate.
    """
    dt = 1.0 / fs_Hz
    t = np.arange(int(round((0.3 + 2 * press_s + 0.3) * fs_Hz))) * dt
    u = np.clip((t - 0.3) / press_s, 0.0, 2.0)
    up, dup = _smoothstep(u)
    down, ddown = _smoothstep(u - 1.0)
    d = d_max_m * (up - down) - np.where(t < 0.3, 5e-6 * (0.3 - t) / 0.3, 0.0)
    dd = d_max_m * (dup - ddown) / press_s + np.where(t < 0.3, 5e-6 / 0.3, 0.0)
    dpos = np.maximum(d, 0.0)
    f_true = np.maximum(k * dpos ** n * (1.0 + b_prime * dd), 0.0)  # F = k d^n (1 + b' d')
    fdot = np.gradient(f_true, dt)
    x = x_c_m + d + f_true / k_probe  # probe position: wall penetration + tip spring deflection
    v = dd + fdot / k_probe
    f = quantize(f_true, full_scale_N, rng=np.random.default_rng(seed)) if noise else f_true.copy()
    truth = {"k": k, "n": n, "b_prime_spm": b_prime, "k_probe_Npm": k_probe, "lsb_N": 2 * full_scale_N / 4096}
    return SyntheticRecord(t, x, v, f, f_true, x_c_m, truth)
