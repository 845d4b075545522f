"""Index constants of the arrays the compiled servo loop shares with Python threads.

The loop's whole state lives in a handful of preallocated NumPy arrays (numba treats these module
integers as compile-time constants):

- ``cfg``  float64 ``[CFG_SIZE]``: settings, written by Python before start.
- ``ctl``  int64 ``[CTL_SIZE]``: control words and counters (stop flag, tick counter, model slot and
  pending swap, fault code, deadline misses, per-event tick counts).
- ``srv``  float64 ``[SRV_SIZE]``: servo state carried between ticks (velocity filter, last force,
  ramp start, passivity energy, proxy state).
- ``ring`` float64 ``[N, RING_COLS]``: one row per tick, written at ``tick % N``; ``ctl[K_TICK]`` is the
  number of rows ever written, advanced after the row is complete, so readers copy rows below it.
- ``events`` float64 ``[M, 3]``: safety event log (tick, code, value), ``ctl[K_EV_HEAD]`` entries written.
- ``sbuf`` float64 ``[SBUF_ROWS, capacity]``: model state of slot 0 and 1, and a scratch row
  (``SCRATCH_ROW``) where the display stage tries the model on copies of the active state.
- ``hist`` int64 ``[HIST_BINS + 1]``: tick-start lateness histogram, ``HIST_BIN_NS`` wide bins.
"""

from __future__ import annotations

# -- cfg (float64) -----------------------------------------------------------------------------------
C_DT = 0             # servo period (s)
C_PERIOD_NS = 1      # servo period (ns)
C_SPIN_NS = 2        # spin this long before each deadline (ns)
C_MAX_TICKS = 3      # stop after this many ticks (< 0: run until stopped)
C_F_MAX = 4          # force saturation (N)
C_DF_MAX = 5         # force-rate limit (N/s)
C_RAMP_S = 6         # ramp-in time (s)
C_WS_LO = 7          # workspace lower bound (m)
C_WS_HI = 8          # workspace upper bound (m)
C_STALE_TICKS = 9    # watchdog: ticks without a fresh sample before zeroing force
C_OVERRUN_TICKS = 10  # watchdog: consecutive overrun ticks before zeroing force
C_PASSIVITY = 11     # 1: passivity observer/controller on
C_ALPHA_MAX = 12     # passivity controller damping bound (N s/m)
C_PO_VMIN = 13       # passivity controller: no damping below this speed (m/s)
C_VEL_BETA = 14      # velocity filter gain beta = 1 - exp(-2 pi f_c T)
C_PROXY_M = 15       # virtual-coupling proxy mass (kg) of model slot 0 (+1: slot 1); 0: no proxy
C_PROXY_K = 17       # coupling stiffness (N/m), per slot
C_PROXY_B = 19       # coupling damping (N s/m), per slot
C_PROXY_SUB = 21     # proxy sub-steps per tick, per slot
C_STOP_ON_NAN = 23   # 1: a non-finite model force stops the loop
C_DISP_K = 24        # display coupling stiffness (N/m) of slot 0 (+1: slot 1); 0: the model at the handle
C_DISP_KM = 26       # display: the model's stiffest slope (N/m), per slot: the proxy solve's first step
C_PO_CAP = 28        # passivity observer: most energy credit (J), per slot (energy bounding)
C_DEV_B = 30         # the device's own damping (N s/m): its losses are not energy the hand receives
C_TR0 = 32           # transients: C_TR0 + TR_SLOT_SIZE * slot + TR_FIELDS * i + (gain, omega, decay)
TR_EVENT_CODES = (1, 3, 5, 6)  # impact codes of the model kernels (hapticam.models.transients.EVENT_CODES)
TR_FIELDS = 3        # gain (N per m/s), angular frequency (rad/s), decay time (s); gain 0: none
TR_SLOT_SIZE = TR_FIELDS * len(TR_EVENT_CODES)
C_MISS_WINDOW = 56   # missed-deadline bound: the most credit held, one window's periods (0: no bound; clock.py)
C_MISS_WEIGHT = 57   # missed-deadline bound: periods of credit one missed deadline costs (1 / the share allowed)
CFG_SIZE = 64

# -- ctl (int64) -------------------------------------------------------------------------------------
K_STOP = 0           # set to 1 by any thread to stop the loop
K_TICK = 1           # ticks completed (= ring rows written)
K_SLOT = 2           # active model slot (0/1)
K_SWAP = 3           # pending swap: 0 none, SWAP_MODEL, SWAP_PARAMS
K_FAULT = 4          # event code of the fault that stopped the loop (0: none)
K_MISSES = 5         # deadlines missed (ticks that overran their period, plus skipped slots)
K_EV_HEAD = 6        # events written
K_STALE_RUN = 7      # consecutive ticks without fresh data
K_MISS_RUN = 8       # consecutive overrun ticks
K_RUNNING = 9        # 1 while the loop runs
K_LATE_MAX_NS = 10   # largest tick-start lateness (ns)
K_LATE_SUM_NS = 11   # sum of tick-start lateness (ns)
K_T_FIRST_NS = 12    # clock at the first tick (ns)
K_T_LAST_NS = 13     # clock at the last tick (ns)
K_SKIPPED = 14       # whole periods skipped after overruns
K_ACTIVE = 15        # bit mask of interventions active at the last tick
K_NEXT_DEADLINE = 16  # timed loop: next deadline (ns)
K_PLEN0 = 17         # parameter length of slot 0 (K_PLEN0 + 1: slot 1)
K_SLEN0 = 19         # state length of slot 0 (K_SLEN0 + 1: slot 1)
K_MISS_CREDIT = 21   # missed-deadline bound: credit left, in periods (< 0: the loop stops)
K_COUNT0 = 32        # K_COUNT0 + code: ticks during which event ``code`` acted
CTL_SIZE = 64

SWAP_MODEL = 1       # new parameters and state, ramp-in
SWAP_PARAMS = 2      # new parameters, state carried over (set-parameter)

# -- srv (float64) -----------------------------------------------------------------------------------
S_X_PREV = 0         # previous sensed position (m)
S_V = 1              # filtered velocity (m/s)
S_F_PREV = 2         # previous output force (N)
S_RAMP_T0 = 3        # ramp-in start time (s)
S_ENERGY = 4         # passivity observer energy (J)
S_XP = 5             # proxy position (m)
S_VP = 6             # proxy velocity (m/s)
S_HAVE_PREV = 7      # 1 after the first tick
S_LAST_SEQ = 8       # device sample counter seen last tick
S_ALPHA = 9          # last passivity-controller damping (N s/m)
S_ZEROED = 10        # 1 if the watchdog zeroed the force last tick
S_DXP = 11           # display proxy position (m): where the model is evaluated
S_DF = 12            # display coupling force of the last tick (N)
S_EOUT = 13          # energy the device put into the hand, -sum F_out(n-1) dx (J)
S_TR_A = 14          # transient pulse: peak (N; 0: none running)
S_TR_T = 15          # transient pulse: time since its impact at this tick's end (s)
S_TR_W = 16          # transient pulse: angular frequency (rad/s)
S_TR_TAU = 17        # transient pulse: decay time (s)
S_TR_LAST = 18       # transient pulse: force added last tick (N)
S_DSLOPE = 19        # display: the model's local slope at the proxy over the last tick (N/m)
SRV_SIZE = 32

SBUF_ROWS = 3
SCRATCH_ROW = 2

# -- ring columns ------------------------------------------------------------------------------------
R_T = 0              # tick time (s, loop clock: tick index * period)
R_X = 1              # sensed position (m)
R_V = 2              # velocity used (m/s)
R_FCMD = 3           # model force before safety (N)
R_F = 4              # force written to the device (N)
R_FLAGS = 5          # model flags (bits 0-7) | safety bits (1 << (8 + code))
R_LATE = 6           # tick-start lateness (us; 0 on the simulated clock)
R_AUX0 = 7           # device diagnostic 0 (simulator: true position, m)
R_AUX1 = 8           # device diagnostic 1 (simulator: user force on the handle, N)
R_DIAG0 = 9          # model diagnostic 0 (hapticam.models.kernels.model_diag; e.g. hybrid key: hammer position)
R_DIAG1 = 10         # model diagnostic 1
RING_COLS = 11
RING_NAMES = ("t_s", "x_m", "v_mps", "force_cmd_N", "force_N", "flags", "lateness_us", "aux0", "aux1",
              "model_diag0", "model_diag1")

# -- lateness histogram ------------------------------------------------------------------------------
HIST_BIN_NS = 100
HIST_BINS = 200_000  # 100 ns bins up to 20 ms; the last entry counts everything later

# -- events --------------------------------------------------------------------------------------------
EV_NAN = 1           # model force not finite: zero force, loop stopped
EV_SATURATION = 2    # force clipped to the device maximum
EV_RATE = 3          # force-rate limit acted
EV_STALE = 4         # watchdog: device data stale, force zeroed
EV_OVERRUN = 5       # watchdog: repeated overruns, force zeroed
EV_WORKSPACE = 6     # handle outside the workspace, force zeroed
EV_PASSIVITY = 7     # passivity controller added damping
EV_RAMP = 8          # ramp-in (re)started
EV_SWAP = 9          # model swapped at a tick boundary
EV_SET_PARAM = 10    # parameters replaced, state kept
EV_STOP = 11         # loop stopped (value: fault code or 0)
EV_DEVICE_ERROR = 12  # the device reported a recoverable fault (value: its code): force zeroed this tick
EV_DEVICE_FAULT = 13  # the device reported a fatal fault (value: its code): zero force, loop stopped
EV_TRANSIENT = 14    # an impact started a transient pulse (value: its peak, N)
EV_DEADLINES = 15    # more deadlines missed than the loop's bound allows: zero force, loop stopped (a fault)
N_EVENTS = 16
EVENT_NAMES = {EV_NAN: "nan", EV_SATURATION: "saturation", EV_RATE: "rate-limit", EV_STALE: "stale-device",
               EV_OVERRUN: "overrun", EV_WORKSPACE: "workspace", EV_PASSIVITY: "passivity",
               EV_RAMP: "ramp-in", EV_SWAP: "model-swap", EV_SET_PARAM: "set-param", EV_STOP: "stop",
               EV_DEVICE_ERROR: "device-error", EV_DEVICE_FAULT: "device-fault",
               EV_TRANSIENT: "transient", EV_DEADLINES: "missed-deadlines"}
SAFETY_FLAG_SHIFT = 8
#: Events that are interventions of the safety layer (counted per tick in K_COUNT0 + code).
INTERVENTIONS = (EV_NAN, EV_SATURATION, EV_RATE, EV_STALE, EV_OVERRUN, EV_WORKSPACE, EV_PASSIVITY,
                 EV_DEVICE_ERROR, EV_DEVICE_FAULT)
