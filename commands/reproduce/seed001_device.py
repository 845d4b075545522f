"""Seed 001's test device and probe for the reproduction (:mod:`hapticam.commands.reproduce.seed001`).

The device is seed 001 section 4's test device as hapticam simulates it
(``hapticam.world.nonlinear_device.NonlinearTestDevice``: a mass on hardening springs with Coulomb
friction), set up as the paper's experiment: no dashpot (section 5: "A dashpot was not included") and the
first hardening spring engaging at 12 mm, where section 6 reads Fig. 3's stiffness leaving its first
constant range. identify does not import devices (docs/architecture.md), so :class:`Seed001Device`
restates the device's force law, and ``tests/test_reproduce_seed001.py`` holds it equal to the simulator's.

The probe follows the commanded path exactly (a stiff motor bolted to the carriage) and records position and
force with the simulated probe's sensors (``ProbeSpec``'s defaults); velocity and acceleration are left to
the identification pipeline, which differentiates the position.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hapticam.capture import Capture

#: seed 001 section 6 on Fig. 3: k and F0 "approximately constant over the range 0 <= x <= 12 mm" (m)
FIG3_CONSTANT_END_M = 0.012
#: seed 001 section 5: the travel, "a 50 mm range" (m, peak to peak), and the sample rate (Hz)
SEC5_RANGE_M, SEC5_RATE_HZ = 0.050, 4000.0
#: the simulated probe's sensors: force noise (N rms), bias (N) and step (N); encoder step (m)
FORCE_NOISE_N, FORCE_BIAS_N, FORCE_STEP_N, ENCODER_STEP_M = 2.0e-3, 5.0e-3, 0.5e-3, 0.1e-6


@dataclass(frozen=True)
class Seed001Device:
    """Seed 001 section 4's test device (SI units): ``F = m a + b v + F_spring(x) + Fc sign(v)`` with
    ``k(x) = k0 + sum k_i S((x - x_i) / w_i)``, ``S(u) = 3 u^2 - 2 u^3`` on [0, 1] (0 below, 1 above), and
    ``F_spring = F_pre + integral_0^x k``. ``springs``: (added stiffness N/m, engagement start m, width m)."""

    mass_kg: float = 0.25
    damping_Nspm: float = 0.0
    coulomb_N: float = 0.15
    preload_N: float = 2.0
    k0_Npm: float = 200.0
    springs: tuple[tuple[float, float, float], ...] = ((400.0, FIG3_CONSTANT_END_M, 0.004), (800.0, 0.035, 0.003))

    def stiffness(self, x_m: np.ndarray) -> np.ndarray:
        """``k(x)`` (N/m)."""
        x = np.asarray(x_m, dtype=np.float64)
        k = np.full_like(x, self.k0_Npm)
        for k_i, x_i, w_i in self.springs:
            u = np.clip((x - x_i) / w_i, 0.0, 1.0)
            k = k + k_i * u * u * (3.0 - 2.0 * u)
        return k

    def spring_force(self, x_m: np.ndarray) -> np.ndarray:
        """``F_spring(x)`` (N)."""
        x = np.asarray(x_m, dtype=np.float64)
        f = self.preload_N + self.k0_Npm * x
        for k_i, x_i, w_i in self.springs:
            u = (x - x_i) / w_i                          # integral of S: u^3 - u^4 / 2 on [0, 1], then u - 1/2
            f = f + k_i * w_i * np.where(u <= 0.0, 0.0, np.where(u >= 1.0, u - 0.5, u ** 3 * (1.0 - 0.5 * u)))
        return f

    def force(self, x_m: np.ndarray, v_mps: np.ndarray, a_mps2: np.ndarray) -> np.ndarray:
        """The force (N) the probe feels along a path: seed 001 eq. 8's truth."""
        return (self.mass_kg * a_mps2 + self.damping_Nspm * v_mps + self.spring_force(x_m)
                + self.coulomb_N * np.sign(v_mps))

    def offset(self, x_m: np.ndarray, direction: int) -> np.ndarray:
        """Seed 001 eq. 6's offset at each ``x`` (N): ``F_spring(x) - k(x) x + direction Fc``."""
        x = np.asarray(x_m, dtype=np.float64)
        return self.spring_force(x) - self.stiffness(x) * x + direction * self.coulomb_N

    def constant_ranges(self, lo_m: float, hi_m: float) -> list[tuple[float, float, float]]:
        """``(start m, end m, k N/m)`` of each range of ``[lo, hi]`` where the stiffness is constant."""
        edges = [lo_m] + [e for _k, x_i, w_i in self.springs for e in (x_i, x_i + w_i)] + [hi_m]
        return [(a, b, float(self.stiffness(np.array([0.5 * (a + b)]))[0]))
                for a, b in zip(edges[0::2], edges[1::2])]


def commanded_path(duration_s: float, f_start_hz: float, f_end_hz: float, rate_hz: float = SEC5_RATE_HZ
                   ) -> tuple[np.ndarray, ...]:
    """``(t s, x m, v m/s, a m/s^2)`` of ``x = A - A cos(phi)`` over the 50 mm range (``A`` = 25 mm), a
    linear chirp ``f(t) = f0 + (f1 - f0) t / T`` (a sinusoid when ``f0 = f1``)."""
    t = np.arange(int(round(duration_s * rate_hz))) / rate_hz
    amp = 0.5 * SEC5_RANGE_M
    rate = 2.0 * np.pi * (f_end_hz - f_start_hz) / duration_s
    phase = 2.0 * np.pi * f_start_hz * t + 0.5 * rate * t * t
    w = 2.0 * np.pi * f_start_hz + rate * t
    return t, amp - amp * np.cos(phase), amp * np.sin(phase) * w, amp * (np.cos(phase) * w * w + np.sin(phase) * rate)


def probe_capture(device: Seed001Device, path: tuple[np.ndarray, ...], seed: int, name: str
                  ) -> tuple[Capture, np.ndarray]:
    """The capture the probe records along ``path`` (encoder and force sensor quantised, force noise and
    bias) and the device's true force (N)."""
    t, x, v, a = path
    truth = device.force(x, v, a)
    noise = np.random.default_rng(seed).normal(0.0, FORCE_NOISE_N, t.size)
    f_meas = np.round((truth + FORCE_BIAS_N + noise) / FORCE_STEP_N) * FORCE_STEP_N
    x_meas = np.round(x / ENCODER_STEP_M) * ENCODER_STEP_M
    return Capture.from_arrays(t, x_meas, f_meas, name=name), truth
