"""The servo loop: arrays, model slots, real-time thread, simulated clock, results.

:class:`ServoLoop` owns the shared arrays (see :mod:`hapticam.render.layout`), installs models into two
preallocated parameter/state slots, and drives the compiled step either from a dedicated thread in real
time (:meth:`ServoLoop.start`) or on a simulated clock on the calling thread
(:meth:`ServoLoop.run_simulated`). Python threads never touch the loop except through the arrays: a
model swap fills the inactive slot and sets a pending-swap word that the next tick picks up.

:func:`run_simulated` is the one-call API for tests and verification::

    result = run_simulated(model, user=(t_s, x_m), rate_hz=1000)
    result.force_N        # per-tick force written to the device (N)

The simulator's physics are stepped by the nominal period in both clocks (the loop time of tick ``k`` is
``k T``), so a real-time run and a simulated-clock run of the same scenario give the same forces;
real-time lateness is measured and reported but does not feed the physics.
"""

from __future__ import annotations

import copy
import math
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from hapticam.devices.base import IO_SIZE, Device
from hapticam.devices.registry import open_device
from hapticam.world.users import User, make_user, position_user
from hapticam.errors import ControlError, ModelValidationError, RenderError, UsageError
from hapticam.models.base import CompiledModel, Model
from hapticam.models.edit import set_path
from hapticam.progress import compiling
from hapticam.render.clock import MISSED_DEADLINE_SHARE, deadline_bound, request_realtime
from hapticam.render.display import DISPLAY_MODES, DisplayPlan, install_display
from hapticam.render.gate import MODEL_COMPILE_S
from hapticam.render.layout import (CFG_SIZE, CTL_SIZE, C_ALPHA_MAX, C_DEV_B, C_DF_MAX, C_DT, C_F_MAX,
                                    C_MAX_TICKS, C_MISS_WEIGHT, C_MISS_WINDOW, C_OVERRUN_TICKS, C_PASSIVITY,
                                    C_PERIOD_NS, C_PO_VMIN,
                                    C_PROXY_B, C_PROXY_K, C_PROXY_M, C_PROXY_SUB, C_RAMP_S, C_SPIN_NS,
                                    C_STALE_TICKS, C_STOP_ON_NAN, C_VEL_BETA, C_WS_HI, C_WS_LO, EV_RAMP,
                                    HIST_BINS, K_PLEN0, K_RUNNING, K_SLEN0, K_SLOT, K_STOP, K_SWAP, K_TICK,
                                    RING_COLS, SBUF_ROWS, SRV_SIZE, SWAP_MODEL, SWAP_PARAMS)
from hapticam.render.result import RenderResult, TickReader, TickSnapshot
from hapticam.render.safety import SafetyConfig, log_event
from hapticam.render.scheduled import run_scheduled
from hapticam.render.servo import ServoKernels, servo_for, velocity_beta
from hapticam.render.stats import LoopStats, SafetyEvent, loop_stats, read_events

#: what a user without real-time priority is told once (by the command line, not by the loop)
REALTIME_HINT = ("the servo thread runs with normal priority ({scheduling}), so other programs can delay its "
                 "ticks. For real-time priority (SCHED_FIFO) run as a user allowed it: an rtprio limit in "
                 "/etc/security/limits.conf (e.g. '@realtime - rtprio 95' and add yourself to that group), or "
                 "'sudo setcap cap_sys_nice+ep' on the Python interpreter (CAP_SYS_NICE).")
MIN_RATE_HZ = 100.0
MAX_RATE_HZ = 10_000.0
#: a first run's compilation (s, one core) of the servo loop around the model kernels (those:
#: :data:`hapticam.render.gate.MODEL_COMPILE_S`): said while it runs (:mod:`hapticam.progress`)
SERVO_COMPILE_S = 10.0
#: A model whose inertia (N per m/s^2) is below this is rendered without a proxy.
MIN_PROXY_MASS_KG = 1e-6
#: ``proxy="auto"`` renders inertia only from this fraction of the device's own apparent mass up.
AUTO_PROXY_FRACTION = 0.25


@dataclass(frozen=True)
class LoopConfig:
    """Loop settings.

    ``proxy``: ``"auto"`` renders a model's inertia through a virtual-coupling proxy when it is at least
    ``AUTO_PROXY_FRACTION`` of the device's own apparent mass (a lighter inertia is masked by the
    handle's, and the coupling's mode near ``sqrt(k_c / m)`` would distort the force more than the
    inertia adds; it is dropped, the kernel seeing ``a = 0``). Models with a ``hybrid-key`` component
    never get an automatic proxy: the key drives the hammer's stiff contact dynamics inside the kernel
    (reflected stiffness ~1e6 N/m through the lever), which an explicit proxy cannot follow; their key
    mass is dropped. ``"off"`` never renders inertia; a number forces that proxy mass (kg). ``display``:
    ``"auto"`` displays a model stiffer than the device renders passively through a virtual coupling
    (:mod:`hapticam.render.display`), ``"off"`` renders every model at the handle (an ideal device).
    ``spin_us``: how long before each deadline the loop stops sleeping and spins (at most 60 % of the period). Wake-up latency from
    ``clock_nanosleep`` on a virtual machine is tens of us typically and 100-300 us at its p99-p99.9,
    so the default spins 300 us: about 30 % of one core at 1 kHz, the whole core at 10 kHz (as
    CHAI3D's haptic thread, which never sleeps).
    ``missed_deadline_share``: a real-time run stops with zero force (fault ``missed-deadlines``) once its missed
    deadlines exceed this share of its periods by more than this share of ten seconds' periods
    (:mod:`hapticam.render.clock`); ``None``: no bound (a bench measuring stalls). The simulated clock has none.
    """

    rate_hz: float = 1000.0
    velocity_cutoff_hz: float = 200.0
    spin_us: float = 300.0
    ring_capacity: int = 1 << 16
    event_capacity: int = 4096
    param_capacity: int = 1 << 16
    state_capacity: int = 1024
    proxy: str | float = "auto"
    display: str = "auto"
    realtime: bool = True
    priority: int = 80
    missed_deadline_share: float | None = MISSED_DEADLINE_SHARE

    def checked(self) -> "LoopConfig":
        if not (MIN_RATE_HZ <= self.rate_hz <= MAX_RATE_HZ):
            raise UsageError(f"rate: must be between {MIN_RATE_HZ:g} and {MAX_RATE_HZ:g} Hz, got {self.rate_hz:g}")
        if self.ring_capacity < 16 or self.event_capacity < 16:
            raise UsageError("ring_capacity and event_capacity must be at least 16")
        # beta = 1 - exp(-2 pi f_c T) in (0, 1): a cut-off <= 0 makes the velocity filter diverge
        if not (isinstance(self.velocity_cutoff_hz, (int, float)) and math.isfinite(self.velocity_cutoff_hz)
                and self.velocity_cutoff_hz > 0.0):
            raise UsageError(f"velocity cut-off: must be a finite number of Hz > 0, got {self.velocity_cutoff_hz!r}")
        if self.display not in DISPLAY_MODES:
            raise UsageError(f"display: expected one of {', '.join(DISPLAY_MODES)}, got {self.display!r}")
        if not (isinstance(self.spin_us, (int, float)) and math.isfinite(self.spin_us) and self.spin_us >= 0.0):
            raise UsageError(f"spin: must be a finite number of us >= 0, got {self.spin_us!r}")
        share = self.missed_deadline_share
        if share is not None and not (isinstance(share, (int, float)) and 0.0 < share < 1.0):
            raise UsageError(f"missed-deadline share: must be a number between 0 and 1, got {share!r}")
        return self


class ServoLoop:
    """One servo loop rendering ``model`` on ``device`` (any :class:`~hapticam.devices.base.Device` whose
    ``servo_binding()`` the loop compiles into its tick).

    Parameters
    ----------
    model : Model
        The model to render; swap it later with :meth:`load_model` or :meth:`set_parameter`.
    device : Device
        The device, open; its specification sets the safety limits. A device whose binding is
        ``simulated`` may also run on the simulated clock (:meth:`run_simulated`).
    config : LoopConfig
        Rate (Hz, 100-10,000), filter cut-off, buffer sizes, proxy policy, scheduling.
    safety : SafetyConfig
        Safety-layer settings (defaults from the device specification).
    kernels : ServoKernels, optional
        Compiled servo from :func:`~hapticam.render.servo.build_servo` for this device's binding;
        default: the model kernels (:func:`~hapticam.render.servo.servo_for`).
    """

    def __init__(self, model: Model | CompiledModel, device: Device, config: LoopConfig | None = None,
                 safety: SafetyConfig | None = None, kernels: ServoKernels | None = None) -> None:
        self.config = (config or LoopConfig()).checked()
        self.safety = safety or SafetyConfig()
        self.device = device
        binding = device.servo_binding()
        self.kernels = kernels or servo_for(binding)
        if (self.kernels.sense_fn, self.kernels.actuate_fn) != (binding.sense, binding.actuate):
            raise RenderError(f"the servo kernels were compiled for another device than {device.spec.name!r}")
        self.simulated = bool(binding.simulated)
        self.rate_hz = float(self.config.rate_hz)
        self.dt_s = 1.0 / self.rate_hz
        c = self.config
        self.io = np.zeros(IO_SIZE)
        self.cfg = np.zeros(CFG_SIZE)
        self.ctl = np.zeros(CTL_SIZE, dtype=np.int64)
        self.srv = np.zeros(SRV_SIZE)
        self.pbuf = np.zeros((2, c.param_capacity))
        self.sbuf = np.zeros((SBUF_ROWS, max(c.state_capacity, 1)))
        self.ring = np.zeros((c.ring_capacity, RING_COLS))
        self.events = np.zeros((c.event_capacity, 3))
        self.hist = np.zeros(HIST_BINS + 1, dtype=np.int64)
        self._ts = np.zeros(2, dtype=np.int64)
        for arr in (self.pbuf, self.sbuf, self.ring, self.events, self.hist):
            arr.fill(0)  # touch every page now, not as page faults inside the loop
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._thread_error: BaseException | None = None
        self.scheduling = "n/a"
        self.clock = "simulated"
        self.model: Model | CompiledModel = model
        self.display_plans: list[DisplayPlan | None] = [None, None]
        self._fill_cfg()
        with compiling("the model kernels", MODEL_COMPILE_S):       # on first use
            self._install(model, int(self.ctl[K_SLOT]))
        log_event(self.ctl, self.events, 0, EV_RAMP, 0.0)  # forces ramp in from t = 0

    # -- setup ------------------------------------------------------------------------------------------
    def _fill_cfg(self) -> None:
        s = self.safety.resolved(self.device.spec, self.rate_hz)
        cfg, c = self.cfg, self.config
        cfg[C_DT] = self.dt_s
        cfg[C_PERIOD_NS] = round(1e9 / self.rate_hz)
        cfg[C_SPIN_NS] = min(c.spin_us * 1e3, 0.6 * cfg[C_PERIOD_NS])
        cfg[C_MAX_TICKS] = -1
        cfg[C_F_MAX] = s["max_force_N"]
        cfg[C_DF_MAX] = s["max_force_rate_N_per_s"]
        cfg[C_RAMP_S] = s["ramp_s"]
        cfg[C_WS_LO] = s["workspace_lo_m"]
        cfg[C_WS_HI] = s["workspace_hi_m"]
        cfg[C_STALE_TICKS] = s["stale_ticks"]
        cfg[C_OVERRUN_TICKS] = s["overrun_ticks"]
        cfg[C_PASSIVITY] = s["passivity"]
        cfg[C_ALPHA_MAX] = s["alpha_max_N_s_per_m"]
        cfg[C_PO_VMIN] = s["po_vmin_mps"]
        cfg[C_STOP_ON_NAN] = s["stop_on_nan"]
        cfg[C_VEL_BETA] = velocity_beta(c.velocity_cutoff_hz, self.dt_s)
        cfg[C_DEV_B] = self.device.spec.damping_N_s_per_m
        if c.missed_deadline_share is not None:
            cfg[C_MISS_WINDOW], cfg[C_MISS_WEIGHT] = deadline_bound(self.rate_hz, c.missed_deadline_share)

    def _compiled(self, model: Model | CompiledModel) -> CompiledModel:
        compiled = model.compile() if isinstance(model, Model) else model
        if compiled.params.size > self.pbuf.shape[1]:
            raise ControlError(f"model has {compiled.params.size} parameters; the loop holds at most "
                               f"{self.pbuf.shape[1]} (raise LoopConfig.param_capacity)")
        if compiled.state0.size > self.sbuf.shape[1]:
            raise ControlError(f"model has {compiled.state0.size} state entries; the loop holds at most "
                               f"{self.sbuf.shape[1]} (raise LoopConfig.state_capacity)")
        return compiled

    def _proxy_for(self, compiled: CompiledModel) -> tuple[float, float, float, int]:
        """Proxy mass, coupling stiffness and damping, sub-steps for a model (see servo docstring)."""
        proxy = self.config.proxy
        if proxy == "off":
            return 0.0, 0.0, 0.0, 1
        spec = self.device.spec
        if proxy == "auto":
            if "hybrid-key" in compiled.kinds:
                return 0.0, 0.0, 0.0, 1  # its stiff internal contact dynamics are driven by the key directly
            m = model_inertia(self.kernels, compiled)
            if m < AUTO_PROXY_FRACTION * spec.apparent_mass_kg:
                return 0.0, 0.0, 0.0, 1
        else:
            m = float(proxy)
        if not (m > MIN_PROXY_MASS_KG):
            return 0.0, 0.0, 0.0, 1
        kc = 0.25 * spec.max_stable_stiffness(self.rate_hz)       # a quarter of K < 2 b / T
        b_room = spec.damping_N_s_per_m - kc * self.dt_s / 2.0     # b > k_c T / 2 + b_c
        bc = min(b_room, 2.0 * math.sqrt(kc * m))                 # critical damping if the device allows
        omega = math.sqrt(kc / m)                                  # the proxy's coupling mode
        n_sub = max(1, math.ceil(omega * self.dt_s / 0.5))          # h omega < 0.5 (margin 4 on 2)
        return m, kc, bc, min(n_sub, 64)

    @property
    def display(self) -> DisplayPlan:
        """How the active model is displayed (:mod:`hapticam.render.display`)."""
        return self.display_plans[int(self.ctl[K_SLOT])]

    def _install(self, model: Model | CompiledModel, slot: int) -> CompiledModel:
        compiled = self._compiled(model)
        self.display_plans[slot] = install_display(self.cfg, slot, model, compiled, self.device.spec, self.rate_hz,
                                                   self.config.display, self.kernels.force_fn)
        m, kc, bc, n_sub = self._proxy_for(compiled)
        self.pbuf[slot, :] = 0.0
        self.pbuf[slot, :compiled.params.size] = compiled.params
        self.sbuf[slot, :] = 0.0
        self.sbuf[slot, :compiled.state0.size] = compiled.state0
        self.ctl[K_PLEN0 + slot] = compiled.params.size
        self.ctl[K_SLEN0 + slot] = compiled.state0.size
        self.cfg[C_PROXY_M + slot] = m
        self.cfg[C_PROXY_K + slot] = kc
        self.cfg[C_PROXY_B + slot] = bc
        self.cfg[C_PROXY_SUB + slot] = n_sub
        return compiled

    # -- model swap ---------------------------------------------------------------------------------------
    def load_model(self, model: Model | CompiledModel, timeout_s: float = 2.0) -> None:
        """Swap in ``model`` at the next tick boundary, with ramp-in (state starts fresh)."""
        self._swap(model, SWAP_MODEL, timeout_s)

    def set_parameter(self, path: str, value: Any, timeout_s: float = 2.0,
                      check: Callable[[Model], None] | None = None) -> Model:
        """Set one parameter of the current model (``path`` into ``to_dict()``, dots and list indices,
        e.g. ``"stiffness_N_per_m"`` or ``"components.1.k"``), validated; the model's state carries over
        when its layout is unchanged. Returns the new model."""
        if not isinstance(self.model, Model):
            raise ControlError("set_param needs a model object, not a compiled model")
        try:
            data = set_path(copy.deepcopy(self.model.to_dict()), path, value)
        except ModelValidationError as exc:
            raise ControlError(f"set_param: {exc}") from exc
        model = type(self.model).from_dict(data)      # validated like a model file
        if check is not None:
            check(model)                              # e.g. against the device: raises, nothing applied
        old = self.model.compile()
        new = model.compile()
        same = old.params.size == new.params.size and old.state0.size == new.state0.size
        self._swap(model, SWAP_PARAMS if same else SWAP_MODEL, timeout_s)
        return model

    def _swap(self, model: Model | CompiledModel, mode: int, timeout_s: float) -> None:
        with self._lock:
            deadline = time.monotonic() + timeout_s
            while self.ctl[K_SWAP] != 0:
                if not self.running:
                    break
                if time.monotonic() > deadline:
                    raise ControlError("the loop did not pick up the previous model swap")
                time.sleep(self.dt_s)
            slot = 1 - int(self.ctl[K_SLOT])
            self._install(model, slot)
            self.model = model
            self.ctl[K_SWAP] = mode

    # -- running ------------------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        """True while the real-time thread is alive."""
        return self._thread is not None and not self._done.is_set()

    @property
    def ticks(self) -> int:
        """Ticks completed so far."""
        return int(self.ctl[K_TICK])

    def request_stop(self) -> None:
        """Ask the loop to stop at the next tick (safe from any thread)."""
        self.ctl[K_STOP] = 1

    def run_simulated(self, duration_s: float | None = None, n_ticks: int | None = None,
                      on_ticks: Callable[[int, np.ndarray], None] | None = None) -> RenderResult:
        """Run on the simulated clock on this thread for ``duration_s`` (or ``n_ticks``); return all ticks.

        ``on_ticks(first_tick, rows)`` is called with each chunk of new rows (recording, telemetry)."""
        if n_ticks is None:
            if duration_s is None:
                raise UsageError("run_simulated needs duration_s or n_ticks")
            n_ticks = int(round(duration_s * self.rate_hz))
        if not self.simulated:
            raise RenderError(f"{self.device.spec.name}: a hardware device runs in real time only "
                              "(no simulated clock)")
        self.clock = "simulated"
        dstate = self.device.servo_binding().state
        reader = TickReader(self)
        chunk = max(1, self.ring.shape[0] // 2)
        parts = []
        remaining = n_ticks
        while remaining > 0 and self.ctl[K_STOP] == 0:
            with compiling("the servo loop", SERVO_COMPILE_S):     # on the first call
                ran = self.kernels.run_sim(min(chunk, remaining), self.io, self.cfg, self.ctl, self.srv,
                                           self.pbuf, self.sbuf, self.ring, self.events, dstate)
            remaining -= ran
            first, rows = reader.read()
            parts.append(rows)
            if on_ticks is not None and rows.size:
                on_ticks(first, rows)
            if ran == 0:
                break
        rows = np.concatenate(parts) if parts else np.zeros((0, RING_COLS))
        return RenderResult.from_rows(rows, self.stats(), self.all_events(), reader.lost)

    def finish_simulated(self) -> None:
        """Stop a simulated-clock run: zero force and the stop event, as the real-time loop does."""
        self.request_stop()
        self.kernels.run_sim(0, self.io, self.cfg, self.ctl, self.srv, self.pbuf, self.sbuf, self.ring,
                             self.events, self.device.servo_binding().state)

    def start(self, duration_s: float | None = None, startup_timeout_s: float = 120.0) -> None:
        """Start the real-time loop thread (``duration_s``: stop by itself after that long)."""
        if self.running:
            raise RenderError("the loop is already running")
        self.clock = "real-time"
        self.cfg[C_MAX_TICKS] = -1 if duration_s is None else self.ticks + int(round(duration_s * self.rate_hz))
        self._started = threading.Event()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._thread_main, name="hapticam-servo", daemon=True)
        with compiling("the servo loop", SERVO_COMPILE_S):         # in the servo thread, on first use
            self._thread.start()
            if not self._started.wait(startup_timeout_s):
                raise RenderError("the servo thread did not start")
            while self.ctl[K_RUNNING] == 0 and self._thread.is_alive():
                time.sleep(1e-3)  # compiling on first use; the first deadline is set after

    def _thread_main(self) -> None:
        # An externally clocked device (a haptic arm's vendor scheduler) calls the compiled tick itself;
        # this thread then only registers and watches it (hapticam.render.scheduled).
        external = bool(getattr(self.device, "external_clock", False))
        if external:
            self.scheduling = "the device's own scheduler"
        elif self.config.realtime:
            self.scheduling = request_realtime(self.config.priority)   # reported in stats(); see REALTIME_HINT
        else:
            self.scheduling = "SCHED_OTHER: not requested"
        self._started.set()
        dstate = self.device.servo_binding().state
        try:
            if external:
                run_scheduled(self)
            else:
                self.kernels.run_timed(self.io, self.cfg, self.ctl, self.srv, self.pbuf, self.sbuf, self.ring,
                                       self.events, self.hist, dstate, self._ts)
        except BaseException as exc:  # a compile error must not leave the caller waiting
            self._thread_error = exc
            self.ctl[K_STOP] = 1
            self.ctl[K_RUNNING] = 0
        finally:
            self._done.set()

    def wait(self, timeout_s: float | None = None) -> bool:
        """Wait for the real-time thread to end; True if it has."""
        if self._thread is None:
            return True
        # an Event, not Thread.join: a KeyboardInterrupt inside join() can leave the thread looking
        # finished while it still runs (CPython gh-90882)
        if not self._done.wait(timeout_s):
            return False
        self._thread.join()
        return True

    def stop(self, timeout_s: float = 5.0) -> LoopStats:
        """Stop the loop (zero force) and return its statistics; re-raise a thread error as RenderError."""
        self.request_stop()
        if self._thread is not None and not self.wait(timeout_s):
            raise RenderError("the servo thread did not stop")
        if self._thread_error is not None:
            raise RenderError(f"servo thread failed: {self._thread_error}") from self._thread_error
        return self.stats()

    def callback_table(self) -> np.ndarray:
        """The int64 table the C callback (``ServoKernels.make_callback()``) takes as its argument:
        addresses and sizes of the loop's arrays (``CB_*`` order in :mod:`hapticam.render.servo`).
        The loop object must outlive every call that uses the table."""
        from hapticam.render import servo as sv

        tab = np.zeros(sv.CB_TABLE_SIZE, dtype=np.int64)
        for idx, arr in ((sv.CB_IO, self.io), (sv.CB_CFG, self.cfg), (sv.CB_CTL, self.ctl), (sv.CB_SRV, self.srv),
                         (sv.CB_PBUF, self.pbuf), (sv.CB_SBUF, self.sbuf), (sv.CB_RING, self.ring),
                         (sv.CB_EVENTS, self.events)):
            if not arr.flags.c_contiguous:
                raise RenderError("loop arrays must be C-contiguous for the callback")
            tab[idx] = arr.ctypes.data
        tab[sv.CB_PCAP] = self.pbuf.shape[1]
        tab[sv.CB_SCAP] = self.sbuf.shape[1]
        tab[sv.CB_RING_N] = self.ring.shape[0]
        tab[sv.CB_EV_N] = self.events.shape[0]
        tab[sv.CB_IO_N] = self.io.size
        tab[sv.CB_CFG_N] = self.cfg.size
        tab[sv.CB_CTL_N] = self.ctl.size
        tab[sv.CB_SRV_N] = self.srv.size
        self.clock = "callback"
        return tab

    # -- reports ------------------------------------------------------------------------------------------
    def snapshot(self) -> TickSnapshot | None:
        """The last completed tick by name (``None`` before the first tick); safe from any thread."""
        k = int(self.ctl[K_TICK])
        if k == 0:
            return None
        return TickSnapshot.from_row(k - 1, self.ring[(k - 1) % self.ring.shape[0]].copy())

    def stats(self) -> LoopStats:
        """Statistics so far (timing only for real-time runs)."""
        plan = self.display
        display = {**plan.to_dict(), "summary": plan.summary()} if plan is not None else None
        return loop_stats(self.ctl, self.hist, self.rate_hz, self.clock, self.scheduling, self.srv, display)

    def all_events(self) -> list[SafetyEvent]:
        """Every event still in the event ring."""
        return read_events(self.ctl, self.events)[0]


def model_inertia(kernels: ServoKernels, compiled: CompiledModel, x_m: float = 0.0) -> float:
    """The model's inertia at ``x_m``: ``F(x, 0, 1) - F(x, 0, 0)`` (kg), on copies of the state."""
    f1 = kernels.force_fn(compiled.params, compiled.reset_state(), x_m, 0.0, 1.0, 1e-3)
    f0 = kernels.force_fn(compiled.params, compiled.reset_state(), x_m, 0.0, 0.0, 1e-3)
    m = float(f1 - f0)
    return m if math.isfinite(m) else 0.0


#: the most ticks one simulated-clock run may ask for (one hour at 1 kHz): :func:`run_simulated` holds every
#: tick in memory (a :class:`~hapticam.render.result.RenderResult`, 88 bytes a tick)
MAX_SIMULATED_TICKS = 3_600_000


def run_simulated(model: Model | CompiledModel, device: Device | Any = None,
                  user: User | str | tuple[np.ndarray, np.ndarray] | None = "press", rate_hz: float = 1000.0,
                  duration_s: float | None = None, *, safety: SafetyConfig | None = None,
                  config: LoopConfig | None = None, seed: int = 0, kernels: ServoKernels | None = None
                  ) -> RenderResult:
    """Render ``model`` on a simulated device on a simulated clock and return every tick.

    ``device`` is a device with a simulated binding (its user is replaced by ``user``), or the
    parameters of the registered ``"sim"`` adapter (:class:`hapticam.world.sim.SimParams`; ``None``:
    its defaults). ``user`` is a :class:`~hapticam.world.users.User`, one of ``"press"``, ``"sine"``,
    ``"sweep"``, ``"finger"``, or a position trajectory ``(t_s, x_m)`` the handle is driven along
    (interpolated linearly, through the stiff scripted-user spring). ``duration_s`` defaults to the
    user's duration.
    """
    if isinstance(user, tuple):
        user = position_user(user[0], user[1])
    elif isinstance(user, str):
        user = make_user(user, duration_s or 1.0)
    if isinstance(device, Device):
        device.set_user(user)
        dev = device
    else:
        dev = open_device("sim", params=device, user=user, seed=seed)
    if duration_s is None:
        duration_s = user.duration_s if user is not None else 1.0
    cfg = config or LoopConfig()
    if cfg.rate_hz != rate_hz:
        cfg = LoopConfig(**{**cfg.__dict__, "rate_hz": float(rate_hz)})
    loop = ServoLoop(model, dev, cfg, safety, kernels)
    return loop.run_simulated(duration_s)
