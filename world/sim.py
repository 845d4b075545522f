"""A simulated single-axis haptic device: handle, motor, encoder, and a user at the handle.

Physics (integrated with ``n_sub`` semi-implicit Euler sub-steps per servo tick, force held constant over
the tick as a zero-order hold, as a real amplifier holds the last command)::

    f_m' = (clip(F, +-F_max) - f_m) / tau          motor bandwidth: first-order lag, tau = 1 / (2 pi f_bw)
    m_h x'' = f_user - f_m - b x'                  handle mass m_h, physical damping b
    x_sensed = q round((x + n) / q)                encoder quantum q, Gaussian sensor noise n (seeded)

``F`` is the model force along +x (the force the object exerts back is ``-F`` on the handle). Because
the force is sampled and held, a virtual wall stiffer than Colgate & Schenkel's passivity bound
``K < 2 b / T`` gains energy at each contact, exactly as on hardware: the simulator shows the
instability a badly tuned model would show on a real device.

On a rotary axis (``SimParams.axis = "rotary"``, ``--device sim:rotary``: :data:`ROTARY_PARAMS`, a
direct-drive knob) the same equations hold in rad, N m, N m s/rad and kg m^2: ``x`` is the knob's angle,
``m_h`` its inertia, ``F`` the model's torque; the fields keep their linear names.

Everything per tick is compiled (``sim_sense``/``sim_advance``), so the servo loop steps the simulator from
its nogil thread or on a simulated clock. :class:`SimulatedDevice` wraps the arrays in the
:class:`~hapticam.devices.base.Device` interface.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit

from hapticam.devices.base import (DEVICE_AXES, IO_AUX0, IO_AUX1, IO_FORCE, IO_HAS_V, IO_SEQ, IO_SIZE, IO_T, IO_V, IO_X,
                                   STATUS_OK, Device, DeviceSpec, DeviceState, ServoBinding)
from hapticam.world.users import MODE_FORCE, User, position_user
from hapticam.errors import DeviceError, UsageError

# Layout of the simulator's float64 state array.
D_M = 0           # handle mass (kg)
D_B = 1           # physical damping (N s/m)
D_FMAX = 2        # motor force limit (N)
D_TAU = 3         # motor time constant (s)
D_RES = 4         # encoder quantum (m)
D_NOISE = 5       # sensor noise standard deviation (m)
D_SUB_DT = 6      # physics sub-step (s), upper bound
D_X = 7           # true handle position (m)
D_V = 8           # true handle velocity (m/s)
D_FM = 9          # motor force after the lag (N)
D_T = 10          # simulated time (s)
D_SEQ = 11        # sample counter
D_XS = 12         # last sensed position (m)
D_TS = 13         # time stamp of the last fresh sample (s)
D_STALE_FROM = 14  # sensor freezes from this time (s) ...
D_STALE_UNTIL = 15  # ... until this time (fault injection)
D_MODE = 16       # user mode (0 position, 1 force)
D_KU = 17         # user stiffness (N/m)
D_BU = 18         # user damping (N s/m)
D_FU = 19         # last user force on the handle (N)
D_TAB_T0 = 20     # user table start time (s)
D_TAB_DT = 21     # user table step (s)
D_FCMD = 22       # last commanded force after the motor limit (N)
D_TAB_PERIOD = 23  # user trajectory repeats with this period (s); 0: plays once
D_WU = 24         # work the user did on the handle since the start (J): sum of f_u v h over the sub-steps
D_SIZE = 25


@dataclass(frozen=True)
class SimParams:
    """Physical parameters of the simulated device (SI).

    The defaults describe a light single-axis key-rendering device: 50 g handle, 2 N s/m damping (so
    ``K_max = 2 b / T = 4000 N/m`` at 1 kHz), 8 N motor with 1 kHz bandwidth, 1 um encoder, 0.3 um noise.
    ``stale_s`` freezes the sensor over a time window (fault injection for the watchdog).
    ``axis`` is ``linear`` (m, N) or ``rotary``: then every field holds the rotary unit under its linear name
    (``handle_mass_kg`` kg m^2, ``damping_N_s_per_m`` N m s/rad, ``max_force_N`` N m, ``resolution_m``,
    ``noise_m`` and ``workspace_m`` rad; :data:`ROTARY_PARAMS`).
    """

    handle_mass_kg: float = 0.05
    damping_N_s_per_m: float = 2.0
    max_force_N: float = 8.0
    max_force_rate_N_per_s: float = 8000.0
    motor_bandwidth_hz: float = 1000.0
    resolution_m: float = 1e-6
    noise_m: float = 0.3e-6
    workspace_m: tuple[float, float] = (-0.02, 0.03)
    substep_s: float = 25e-6
    stale_s: tuple[float, float] | None = None
    axis: str = "linear"

    def __post_init__(self) -> None:
        """Every parameter finite and physical (a zero mass or a NaN would break the simulation)."""
        positive = ("handle_mass_kg", "damping_N_s_per_m", "max_force_N", "max_force_rate_N_per_s", "substep_s")
        nonnegative = ("motor_bandwidth_hz", "resolution_m", "noise_m")
        for name in positive + nonnegative:
            v = getattr(self, name)
            ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            if not ok or (v <= 0 if name in positive else v < 0):
                raise UsageError(f"simulated device {name}: must be a finite number "
                                 f"{'> 0' if name in positive else '>= 0'}, got {v!r}")
        lo, hi = self.workspace_m
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise UsageError(f"simulated device workspace_m: must be finite with low < high, got {self.workspace_m!r}")
        if self.axis not in DEVICE_AXES:
            raise UsageError(f"simulated device axis: one of {', '.join(DEVICE_AXES)}, got {self.axis!r}")

    def spec(self) -> DeviceSpec:
        """The :class:`DeviceSpec` of this simulated device (``K_max = 2 b / T`` at T = 1 ms)."""
        return DeviceSpec(name="sim" if self.axis == "linear" else f"sim:{self.axis}", max_force_N=self.max_force_N,
                          max_force_rate_N_per_s=self.max_force_rate_N_per_s,
                          max_stiffness_N_per_m=2.0 * self.damping_N_s_per_m / 1e-3,  # K < 2b/T (Colgate & Schenkel)
                          workspace_m=tuple(self.workspace_m), resolution_m=self.resolution_m,
                          damping_N_s_per_m=self.damping_N_s_per_m, provides_velocity=False,
                          apparent_mass_kg=self.handle_mass_kg, axis=self.axis)


#: the simulated rotary device (``--device sim:rotary``): a knob on a direct-drive motor (a gimbal brushless
#: motor, as in open-source haptic knobs): 2e-5 kg m^2 of rotor and knob, 2e-3 N m s/rad of bearing and eddy
#: damping (``K_max = 2 b / T = 4 N m/rad`` at 1 kHz), 0.2 N m peak torque with 1 kHz bandwidth, a 14-bit
#: encoder (2 pi / 16384 rad) without noise, and ten turns either way
ROTARY_PARAMS = SimParams(handle_mass_kg=2e-5, damping_N_s_per_m=2e-3, max_force_N=0.2, max_force_rate_N_per_s=200.0,
                          motor_bandwidth_hz=1000.0, resolution_m=2.0 * math.pi / 16384, noise_m=0.0,
                          workspace_m=(-20.0 * math.pi, 20.0 * math.pi), axis="rotary")
#: the hand turning the simulated knob (render's scripted user on ``sim:rotary``): a grip of this torsional
#: stiffness (N m/rad) and damping (N m s/rad), turning at this speed (rad/s) this far (rad) either way of 0
#: (within the +-1 rad a model file's angle table may span)
HAND_GRIP_NM_PER_RAD = 2.0
HAND_GRIP_NMS_PER_RAD = 0.02
HAND_TURN_RADPS = 2.0 * math.pi
HAND_TURN_RAD = 0.9


def turning_hand(duration_s: float = 1.0, turn_rad: float = HAND_TURN_RAD, speed_radps: float = HAND_TURN_RADPS
                 ) -> User:
    """A hand turning a knob from 0 to ``+turn_rad``, to ``-turn_rad`` and back (rad) at ``speed_radps``
    (rad/s), again and again for ``duration_s`` (s), through its grip (:data:`HAND_GRIP_NM_PER_RAD`,
    :data:`HAND_GRIP_NMS_PER_RAD`): a triangle wave of angle with its corners rounded over 20 ms."""
    leg_s = turn_rad / speed_radps                          # 0 to +turn_rad: a quarter of the period
    t = np.arange(0.0, max(duration_s, 4.0 * leg_s) + 1e-3, 1e-3)
    phase = (t / leg_s) % 4.0
    angle = turn_rad * np.where(phase < 1.0, phase, np.where(phase < 3.0, 2.0 - phase, phase - 4.0))
    window = np.hanning(21)
    smooth = np.convolve(np.pad(angle, 10, mode="edge"), window / window.sum(), mode="valid")
    return position_user(t, smooth, stiffness_N_per_m=HAND_GRIP_NM_PER_RAD, damping_N_s_per_m=HAND_GRIP_NMS_PER_RAD,
                         name="turning hand")


# -- compiled simulator ------------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def rand_u01(rng):
    """Uniform [0, 1) from a splitmix64 generator whose state is ``rng[0]`` (uint64, Steele et al. 2014)."""
    rng[0] += np.uint64(0x9E3779B97F4A7C15)
    z = rng[0]
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return float(z >> np.uint64(11)) * (1.0 / 9007199254740992.0)  # 53-bit mantissa / 2^53


@njit(cache=True, nogil=True)
def rand_normal(rng):
    """Standard normal deviate by Box-Muller: sqrt(-2 ln u1) cos(2 pi u2)."""
    u1 = 1.0 - rand_u01(rng)
    u2 = rand_u01(rng)
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)


@njit(cache=True, nogil=True)
def user_reference(dev, utab, t):
    """Reference value and rate of the user's trajectory at time ``t`` (linear interpolation on the
    uniform grid; held with zero rate past the end)."""
    n = utab.shape[0]
    period = dev[D_TAB_PERIOD]
    if period > 0.0 and t > dev[D_TAB_T0]:
        t = dev[D_TAB_T0] + (t - dev[D_TAB_T0]) % period  # periodic user: t mod period
    s = (t - dev[D_TAB_T0]) / dev[D_TAB_DT]
    if s <= 0.0:
        return utab[0, 0], utab[0, 1] if s == 0.0 else 0.0
    if s >= n - 1:
        return utab[n - 1, 0], 0.0
    i = int(s)
    w = s - i
    return utab[i, 0] + w * (utab[i + 1, 0] - utab[i, 0]), utab[i, 1] + w * (utab[i + 1, 1] - utab[i, 1])


@njit(cache=True, nogil=True)
def sim_sense(dev, rng, io):
    """Device read: fill the I/O block with the sensed position, sample counter and time stamp.

    Inside the fault-injection window the sensor freezes (counter and position unchanged)."""
    t = dev[D_T]
    if not (t >= dev[D_STALE_FROM] and t < dev[D_STALE_UNTIL]):
        x = dev[D_X]
        if dev[D_NOISE] > 0.0:
            x += dev[D_NOISE] * rand_normal(rng)
        q = dev[D_RES]
        if q > 0.0:
            x = q * math.floor(x / q + 0.5)  # encoder quantisation: x_s = q round(x / q)
        dev[D_XS] = x
        dev[D_SEQ] += 1.0
        dev[D_TS] = t
    io[IO_X] = dev[D_XS]
    io[IO_V] = 0.0
    io[IO_HAS_V] = 0.0
    io[IO_SEQ] = dev[D_SEQ]
    io[IO_T] = dev[D_TS]
    io[IO_AUX0] = dev[D_X]
    io[IO_AUX1] = dev[D_FU]


@njit(cache=True, nogil=True)
def sim_advance(dev, utab, force, dt):
    """Device write + physics: hold ``force`` (N, model force along +x) for ``dt`` seconds."""
    fmax = dev[D_FMAX]
    f = min(max(force, -fmax), fmax) if force == force else 0.0
    dev[D_FCMD] = f
    n = max(1, int(math.ceil(dt / dev[D_SUB_DT] - 1e-9)))
    h = dt / n
    tau = dev[D_TAU]
    lag = 1.0 - math.exp(-h / tau) if tau > 0.0 else 1.0  # exact first-order response to a held input
    m = dev[D_M]
    b = dev[D_B]
    t_start = dev[D_T]
    x = dev[D_X]
    v = dev[D_V]
    fm = dev[D_FM]
    fu = 0.0
    for j in range(n):
        t = t_start + j * h
        fm += (f - fm) * lag                                   # f_m' = (F - f_m) / tau
        ref, rate = user_reference(dev, utab, t)
        if dev[D_MODE] == MODE_FORCE:
            fu = ref
        else:
            fu = dev[D_KU] * (ref - x) + dev[D_BU] * (rate - v)  # f_u = k_u (x_ref - x) + b_u (v_ref - v)
        a = (fu - fm - b * v) / m                              # m_h x'' = f_u - f_m - b x'
        v_before = v
        v += a * h                                             # semi-implicit Euler
        x += v * h
        dev[D_WU] += fu * 0.5 * (v_before + v) * h             # the user's work over the sub-step
    dev[D_X] = x
    dev[D_V] = v
    dev[D_FM] = fm
    dev[D_FU] = fu
    dev[D_T] = t_start + dt


@njit(cache=True, nogil=True)
def sim_binding_sense(state, io):
    """The servo binding's ``sense``: ``state`` is ``(dev, utab, rng)``."""
    sim_sense(state[0], state[2], io)
    return STATUS_OK


@njit(cache=True, nogil=True)
def sim_binding_actuate(state, io, dt):
    """The servo binding's ``actuate``: hold ``io[IO_FORCE]`` for ``dt`` seconds of simulated physics."""
    sim_advance(state[0], state[1], io[IO_FORCE], dt)
    return STATUS_OK


# -- Python adapter -----------------------------------------------------------------------------------------
class SimulatedDevice(Device):
    """The simulated device behind the :class:`Device` interface.

    ``servo_binding()`` hands the compiled loop its sense/actuate pair over the state array, the user table
    and the random state;
    ``read()``/``write()``/``step()`` drive the same arrays from Python (tests, diagnostics).
    """

    def __init__(self, params: SimParams | None = None, user: User | None = None, seed: int = 0) -> None:
        super().__init__()
        self.params = params or SimParams()
        self.spec = self.params.spec()
        self.seed = int(seed)
        self.dev = np.zeros(D_SIZE)
        self.rng = np.zeros(1, dtype=np.uint64)
        self.utab = np.zeros((1, 2))
        self._io = np.zeros(IO_SIZE)
        self._force = 0.0
        self.user: User | None = None
        self.set_user(user)

    def set_user(self, user: User | None) -> None:
        """Put ``user`` at the handle (``None``: no user, the handle is free) and reset the device."""
        self.user = user
        self.utab = user.table() if user is not None else np.zeros((1, 2))
        self.reset()

    def reset(self) -> None:
        """Return to t = 0 with the handle at the user's start position, at rest, motor off."""
        p, d = self.params, self.dev
        d[:] = 0.0
        d[D_M] = p.handle_mass_kg
        d[D_B] = p.damping_N_s_per_m
        d[D_FMAX] = p.max_force_N
        d[D_TAU] = 1.0 / (2.0 * math.pi * p.motor_bandwidth_hz) if p.motor_bandwidth_hz > 0 else 0.0
        d[D_RES] = p.resolution_m
        d[D_NOISE] = p.noise_m
        d[D_SUB_DT] = p.substep_s
        d[D_STALE_FROM], d[D_STALE_UNTIL] = p.stale_s if p.stale_s is not None else (np.inf, np.inf)
        u = self.user
        if u is not None:
            d[D_MODE] = u.mode
            d[D_KU] = u.stiffness_N_per_m
            d[D_BU] = u.damping_N_s_per_m
            d[D_TAB_T0] = u.t0_s
            d[D_TAB_DT] = u.dt_s
            d[D_TAB_PERIOD] = u.period_s
            d[D_X] = u.x0_m
        else:
            d[D_MODE] = 0
            d[D_TAB_DT] = 1.0
        d[D_XS] = d[D_X]
        self.rng[0] = np.uint64(self.seed & 0xFFFFFFFFFFFFFFFF)
        self._force = 0.0

    @classmethod
    def from_options(cls, address: str, **options: Any) -> "SimulatedDevice":
        """``--device sim``: the default simulated device with the render's scripted user and noise seed.
        ``--device sim:rotary``: the simulated knob (:data:`ROTARY_PARAMS`, rad and N m) turned by
        :func:`turning_hand` (render's ``--user`` and ``--depth-mm`` move a key and do not apply to it)."""
        if address not in ("", "rotary"):
            raise DeviceError(f"device sim takes no address or 'rotary' (got {address!r})")
        if address == "rotary":
            return cls(ROTARY_PARAMS, turning_hand(), seed=int(options.get("seed", 0)))
        return cls(user=options.get("user"), seed=int(options.get("seed", 0)))

    @classmethod
    def axis_for(cls, address: str) -> str:
        """``rotary`` at ``--device sim:rotary``, else ``linear``."""
        return "rotary" if address == "rotary" else "linear"

    def session_notes(self) -> dict[str, Any]:
        """On a rotary axis, the note that the knob is turned by :func:`turning_hand`; else nothing."""
        if self.params.axis != "rotary" or self.user is None or self.user.name != "turning hand":
            return {}
        return {"notes": [f"the simulated knob is turned by a hand {HAND_TURN_RAD:.4g} rad either way at "
                          f"{HAND_TURN_RADPS:.4g} rad/s (--user and --depth-mm move a key)"]}

    def servo_binding(self) -> ServoBinding:
        """The compiled sense/actuate pair over ``(dev, utab, rng)``; the simulator runs on the loop's clock."""
        return ServoBinding(sim_binding_sense, sim_binding_actuate, (self.dev, self.utab, self.rng), True)

    def hold_user_at(self, x_m: float) -> None:
        """Make the scripted user hold the handle at ``x_m`` (m) from now on, through its spring and damper
        (every row of the user table; the interactive windows move the finger this way)."""
        self.utab[:, 0] = float(x_m)
        self.utab[:, 1] = 0.0

    @property
    def t_s(self) -> float:
        """Simulated time (s)."""
        return float(self.dev[D_T])

    @property
    def true_position_m(self) -> float:
        """True (unquantised, noise-free) handle position (m)."""
        return float(self.dev[D_X])

    def step(self, dt_s: float) -> None:
        """Advance the physics by ``dt_s`` holding the last written force."""
        sim_advance(self.dev, self.utab, self._force, float(dt_s))

    def _open(self) -> None:
        pass

    def _close(self) -> None:
        pass

    def _read(self) -> DeviceState:
        sim_sense(self.dev, self.rng, self._io)
        return DeviceState(t_s=float(self._io[IO_T]), x_m=float(self._io[IO_X]), v_mps=None)

    def _write(self, force_N: float) -> None:
        self._force = force_N
