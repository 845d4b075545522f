"""The simulated haptic probe: a position-controlled carriage with a force sensor (seed 001 section 3.1).

A real probe (seed 001 Fig. 1: a direct-drive linear motor with an encoder and an impedance head)
follows a commanded trajectory and records position and force. The simulated one has:

* a carriage of mass ``m_p`` driven by a PD position servo with acceleration feed-forward::

      u = m_p a_cmd + K_d (v_cmd - v) + K_p (x_cmd - x),   |u| <= F_max
      m_p x'' = u - F_target

  with ``K_p = m_p w_n^2`` and ``K_d = 2 zeta m_p w_n`` (``w_n = 2 pi bandwidth_hz``). Free of load it
  tracks a smooth command to within the discretisation of the loop (10 nm on a 4 mm, 4 Hz stroke);
  under a load ``F`` it lags by ``F / K_p`` at low frequency (the servo's stiffness; plus
  ``K_d dF/dt / K_p^2``), and a load changing at angular frequency ``w`` sees the dynamic stiffness
  ``|K_p - m_p w^2 + j w K_d|``. With the defaults (0.5 kg, 200 Hz, zeta 0.7) ``K_p = 7.9e5 N/m``:
  10 N of load costs 13 um of tracking error. The recorded position is the carriage's (its encoder),
  as on a real probe;
* the target coupled to the probe tip (bolted or in contact, as the target defines) and integrated
  with the carriage at a fine internal step (at least ``internal_rate_hz``, an integer number of
  steps per sample): each step the target computes every force from the state at the step's start,
  advances its bodies (:mod:`hapticam.world.physics`) and returns the force its coupling
  transmitted over the step; the carriage advances under the servo force minus that force (action
  and reaction, so momentum is exchanged exactly). The command between samples is the cubic Hermite
  interpolant of the sampled command positions and velocities;
* a linear encoder quantised to ``encoder_resolution_m`` and a force sensor reading
  ``round((F + bias + noise) / q) q`` with Gaussian noise (``force_noise_N`` standard deviation, drawn
  from a generator seeded by ``seed``) and quantisation step ``q = force_resolution_N``;
* samples at ``sample_rate_hz`` (4 kHz by default, as seed 001 section 5).

:func:`probe` returns a :class:`~hapticam.capture.Capture` of the measured ``t, x, F``;
:func:`simulate` returns everything (true carriage motion, true force, the target's observables) for
tests and figures.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numba import njit

from hapticam.world.excitations import Excitation
from hapticam.world.physics import N_OBS, Target
from hapticam.world.targets import target_step
from hapticam.errors import DeviceError, UsageError

if TYPE_CHECKING:
    from hapticam.capture import Capture

#: Most samples one probing may record (memory: about 90 bytes per sample).
MAX_SAMPLES = 10_000_000


@dataclass(frozen=True)
class ProbeSpec:
    """Settings of the simulated probe (SI units).

    Parameters
    ----------
    sample_rate_hz : float
        Rate of the recorded samples (Hz); seed 001 used 4 kHz.
    carriage_mass_kg : float
        Moving mass of carriage, sensor and tip (kg).
    bandwidth_hz, damping_ratio : float
        Natural frequency (Hz) and damping ratio of the PD position servo.
    force_limit_N : float
        Motor force saturation (N).
    force_noise_N, force_bias_N, force_resolution_N : float
        Force sensor noise standard deviation, constant bias and quantisation step (N).
    encoder_resolution_m : float
        Encoder quantisation step (m); 0 records the exact position.
    internal_rate_hz : float
        Lowest rate of the internal integration step (Hz).
    settle_s : float
        Time the probe holds the starting position before recording, so the target settles (s).
    """

    sample_rate_hz: float = 4000.0
    carriage_mass_kg: float = 0.5
    bandwidth_hz: float = 200.0
    damping_ratio: float = 0.7
    force_limit_N: float = 200.0
    force_noise_N: float = 2.0e-3
    force_bias_N: float = 5.0e-3
    force_resolution_N: float = 0.5e-3
    encoder_resolution_m: float = 0.1e-6
    internal_rate_hz: float = 40000.0
    settle_s: float = 0.2

    def __post_init__(self) -> None:
        for name in ("sample_rate_hz", "carriage_mass_kg", "bandwidth_hz", "damping_ratio", "force_limit_N",
                     "internal_rate_hz"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0.0):
                raise UsageError(f"probe {name}: must be a finite number > 0, got {value!r}")
        for name in ("force_noise_N", "force_resolution_N", "encoder_resolution_m", "settle_s"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0.0):
                raise UsageError(f"probe {name}: must be a finite number >= 0, got {value!r}")
        if not (isinstance(self.force_bias_N, (int, float)) and math.isfinite(self.force_bias_N)):
            raise UsageError(f"probe force_bias_N: must be finite, got {self.force_bias_N!r}")
        if self.sample_rate_hz > 1.0e6:
            raise UsageError(f"probe sample_rate_hz: at most 1 MHz, got {self.sample_rate_hz:g}")

    @property
    def kp_Npm(self) -> float:
        """Servo stiffness ``K_p = m_p w_n^2`` (N/m)."""
        return self.carriage_mass_kg * (2.0 * math.pi * self.bandwidth_hz) ** 2

    @property
    def kd_Nspm(self) -> float:
        """Servo damping ``K_d = 2 zeta m_p w_n`` (N s/m)."""
        return 2.0 * self.damping_ratio * self.carriage_mass_kg * 2.0 * math.pi * self.bandwidth_hz

    @property
    def substeps(self) -> int:
        """Internal steps per sample."""
        return max(1, math.ceil(self.internal_rate_hz / self.sample_rate_hz - 1e-9))

    @property
    def dt_s(self) -> float:
        """Internal step (s)."""
        return 1.0 / (self.sample_rate_hz * self.substeps)


@njit(cache=True, nogil=True)
def _servo_force(m, kp, kd, f_max, xc, vc, ac, xp, vp):
    u = m * ac + kd * (vc - vp) + kp * (xc - xp)      # u = m a_cmd + K_d (v_cmd - v) + K_p (x_cmd - x)
    if u > f_max:
        return f_max, 1
    if u < -f_max:
        return -f_max, 1
    return u, 0


@njit(cache=True, nogil=True)
def probe_loop(kind, p, state, cx, cv, ca, n_sub, dt, m, kp, kd, f_max, n_settle, out_x, out_v, out_f, out_obs):
    """Run the probe and target over the sampled command ``cx, cv, ca``; fill the true carriage position,
    velocity, target force and observables per sample. Returns ``(samples_done, saturated_steps)``;
    ``samples_done < len(out_x)`` when the simulation produced a non-finite value."""
    obs = np.zeros(out_obs.shape[1])
    xp = cx[0]
    vp = 0.0
    sat = 0
    for _ in range(n_settle):                          # hold the start while the target settles
        f = target_step(kind, p, state, xp, vp, dt, obs)
        u, s_ = _servo_force(m, kp, kd, f_max, cx[0], 0.0, 0.0, xp, vp)
        sat += s_
        vp += dt * (u - f) / m
        xp += dt * vp
    n = out_x.size
    h = dt * n_sub
    for k in range(n):
        x0, v0, a0 = cx[k], cv[k], ca[k]
        x1, v1, a1 = cx[k + 1], cv[k + 1], ca[k + 1]
        for j in range(n_sub):
            # the target advances from the state at the step's start and returns the force there
            f = target_step(kind, p, state, xp, vp, dt, obs)
            if j == 0:
                out_x[k] = xp
                out_v[k] = vp
                out_f[k] = f
                for i in range(out_obs.shape[1]):
                    out_obs[k, i] = obs[i]
                if not (math.isfinite(f) and math.isfinite(xp)):
                    return k, sat
                if k == n - 1:
                    break
            tau = j / n_sub
            t2 = tau * tau
            t3 = t2 * tau
            # cubic Hermite interpolation of the command between samples k and k+1
            xc = ((2.0 * t3 - 3.0 * t2 + 1.0) * x0 + (t3 - 2.0 * t2 + tau) * h * v0
                  + (-2.0 * t3 + 3.0 * t2) * x1 + (t3 - t2) * h * v1)
            vc = ((6.0 * t2 - 6.0 * tau) * (x0 - x1) / h + (3.0 * t2 - 4.0 * tau + 1.0) * v0
                  + (3.0 * t2 - 2.0 * tau) * v1)
            ac = a0 + tau * (a1 - a0)
            # semi-implicit Euler keeps x at whole steps and v at half steps: compare v with v_cmd(t - dt/2)
            u, s_ = _servo_force(m, kp, kd, f_max, xc, vc - 0.5 * dt * ac, ac, xp, vp)
            sat += s_
            vp += dt * (u - f) / m                     # m_p x'' = u - F_target
            xp += dt * vp
    return n, sat


@dataclass
class ProbeRun:
    """Everything one simulated probing produced (SI units; arrays of one entry per sample).

    ``x_m`` and ``force_N`` are the measured (quantised, noisy) signals a capture holds; ``x_true_m``,
    ``v_true_mps`` and ``force_true_N`` the carriage's true motion and the true force on the target;
    ``x_cmd_m`` the command; ``observables`` the target's internal signals (columns named by
    ``observable_names``).
    """

    t_s: np.ndarray
    x_m: np.ndarray
    force_N: np.ndarray
    x_cmd_m: np.ndarray
    x_true_m: np.ndarray
    v_true_mps: np.ndarray
    force_true_N: np.ndarray
    observables: np.ndarray
    observable_names: tuple[str, ...]
    metadata: dict[str, Any] = field(default_factory=dict)

    def observable(self, name: str) -> np.ndarray:
        """One observable channel by name."""
        try:
            return self.observables[:, self.observable_names.index(name)]
        except ValueError:
            raise KeyError(f"no observable {name!r}; have {self.observable_names}") from None

    def to_capture(self, name: str | None = None) -> "Capture":
        """The measured signals as a :class:`~hapticam.capture.Capture` (with this run's metadata)."""
        from hapticam.capture import Capture

        label = name or f"{self.metadata.get('target', {}).get('target', 'target')} " \
                        f"({self.metadata.get('excitation', {}).get('kind', 'excitation')})"
        return Capture.from_arrays(self.t_s, self.x_m, self.force_N, metadata=self.metadata, name=label)


def simulate(target: Target, excitation: Excitation, spec: ProbeSpec | None = None, *, seed: int = 0) -> ProbeRun:
    """Drive ``target`` along ``excitation`` with the simulated probe; return all signals.

    Raises :class:`UsageError` for bad settings and :class:`DeviceError` if the simulation diverges.
    """
    spec = spec or ProbeSpec()
    if not isinstance(target, Target):
        raise UsageError(f"not a target: {target!r}")
    rate = spec.sample_rate_hz
    n = int(math.floor(excitation.duration_s * rate + 1e-9)) + 1
    if n < 2:
        raise UsageError(f"excitation of {excitation.duration_s:g} s gives fewer than 2 samples at {rate:g} Hz")
    if n > MAX_SAMPLES:
        raise UsageError(f"{n} samples exceed the limit of {MAX_SAMPLES:,} (lower the rate or the duration)")
    t = np.arange(n + 1, dtype=np.float64) / rate          # one extra point: the last interval's end
    cx = np.ascontiguousarray(excitation.position(t), dtype=np.float64)
    cv = np.ascontiguousarray(excitation.velocity(t), dtype=np.float64)
    ca = np.ascontiguousarray(excitation.acceleration(t), dtype=np.float64)
    if not (np.all(np.isfinite(cx)) and np.all(np.isfinite(cv)) and np.all(np.isfinite(ca))):
        raise UsageError("the excitation produced non-finite commands")
    state = target.initial_state().copy()
    params = target.params_array()
    out_x = np.empty(n)
    out_v = np.empty(n)
    out_f = np.empty(n)
    out_obs = np.zeros((n, N_OBS))
    n_settle = int(round(spec.settle_s / spec.dt_s))
    started = time.perf_counter()
    done, saturated = probe_loop(target.kind_code, params, state, cx, cv, ca, spec.substeps, spec.dt_s,
                                 spec.carriage_mass_kg, spec.kp_Npm, spec.kd_Nspm, spec.force_limit_N, n_settle,
                                 out_x, out_v, out_f, out_obs)
    elapsed = time.perf_counter() - started
    if done < n:
        raise DeviceError(f"simulation of {target.name!r} diverged at t = {done / rate:.6f} s "
                          f"(non-finite force); reduce the excitation or raise internal_rate_hz")
    rng = np.random.default_rng(seed)
    f_meas = out_f + spec.force_bias_N + spec.force_noise_N * rng.standard_normal(n)
    if spec.force_resolution_N > 0.0:
        f_meas = np.round(f_meas / spec.force_resolution_N) * spec.force_resolution_N
    encoder = getattr(target, "encoder_observable", None)   # an encoder on the target's shaft (a knob)
    x_meas = (out_obs[:, target.observables.index(encoder)] if encoder else out_x).copy()
    if spec.encoder_resolution_m > 0.0:
        x_meas = np.round(x_meas / spec.encoder_resolution_m) * spec.encoder_resolution_m
    meta = {
        "source": "hapticam simulated probe",
        "target": target.to_dict(),
        "excitation": excitation.metadata(),
        "probe": {**asdict(spec), "kp_Npm": spec.kp_Npm, "kd_Nspm": spec.kd_Nspm, "substeps": spec.substeps,
                  "dt_s": spec.dt_s, **({"tip": tip} if (tip := target.probe_tip()) else {})},
        "seed": int(seed),
        "sample_rate_hz": rate,
        "axis": getattr(target, "axis", "linear"),
        "units": {"t": "s", "x": "m", "force": "N"} if getattr(target, "axis", "linear") == "linear"
        else {"t": "s", "x": "rad", "force": "N m"},
        "force_convention": "force the probe applies to the target along +x (pressing positive)",
        "saturated_steps": int(saturated),
        "compute_s": round(elapsed, 6),
    }
    return ProbeRun(t_s=t[:n], x_m=x_meas, force_N=f_meas, x_cmd_m=cx[:n], x_true_m=out_x, v_true_mps=out_v,
                    force_true_N=out_f, observables=out_obs, observable_names=tuple(target.observables),
                    metadata=meta)


def probe(target: Target, excitation: Excitation, sample_rate_hz: float = 4000.0, seed: int = 0,
          spec: ProbeSpec | None = None) -> "Capture":
    """Probe ``target`` along ``excitation`` and return the measured capture.

    Parameters
    ----------
    target : Target
        A simulated target (see :data:`hapticam.world.targets.TARGETS`).
    excitation : Excitation
        The commanded trajectory (:mod:`hapticam.world.excitations`).
    sample_rate_hz : float
        Sample rate (Hz); overrides ``spec.sample_rate_hz``.
    seed : int
        Seed of the sensor noise.
    spec : ProbeSpec, optional
        Servo and sensor settings (defaults: :class:`ProbeSpec`).

    Returns
    -------
    Capture
        ``t_s, x_m, f_N`` as measured, with the target, excitation and probe settings in its metadata.
    """
    from dataclasses import replace

    spec = replace(spec or ProbeSpec(), sample_rate_hz=sample_rate_hz)
    return simulate(target, excitation, spec, seed=seed).to_capture()
