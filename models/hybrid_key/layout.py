"""Layout of the hybrid key's compiled parameter and state blocks, its event codes, flags and limits
(the model itself: :mod:`hapticam.models.hybrid_key.model`).

Parameter block (``params_block()``, float64)::

    0 key mass m_k (kg)            1 return spring k_r (N/m)       2 preload F_p (N)
    3 hammer mass m_h (kg)         4 lever ratio r                 5 gravity g (m/s^2)
    6 law (0 Hunt-Crossley, 1 rigid)  7 k (N/m^n)  8 b (N s/m^(n+1))  9 n   10 restitution e
    11 let-off x_l (m; 1e30 if none)  12 string height y_s (m; 1e30 if none)  13 string restitution e_s
    14 keybed x_kb (m; 1e30 if none)  15 keybed k_kb (N/m)  16 keybed b_kb (N s/m)
    17 sub-step (s)   18 rest penetration (m; Hunt-Crossley)   19 capture speed (m/s)
    20 check drop d_c (m)   21 repetition point x_r (m; -1e30 if no let-off)
    22 handle-key coupling k_c (N/m; 0: the key is the handle)   23 coupling damping b_c (N s/m)
    24 key sub-step h_k (s; coupled key)   25 key damper b_d on the key's motion relative to the handle (N s/m)
    26 hammer rail (1/0)   27 jack pickup x_j (m)   28 key surface x_t (m; -1e30: touched everywhere)
    29 pad (1: the coupling is a one-sided pad holding the key)   30 the pad's Hunt-Crossley alpha (s/m)
    31-34 a held key's own friction F_c (N) and v_eps (m/s), and a one-sided spring k (N/m) from x_b (m)
    35 coupled key: longest step between the hammer's impacts (s; 0: every step is the sub-step 24)

State block (``initial_state()``, float64)::

    0 hammer height y (m)        1 hammer velocity y_dot (m/s)
    2 key position at the previous tick (m)     3 mean key velocity over the previous tick (m/s)
    4 mode (0 flight, 1 contact)    5 flags of the last tick (bit field below)
    6 escaped latch (0/1)           7 initialised (0 until the first tick places the hammer at rest)
    8-11 time since the last landing, lift-off, string hit, let-off (s; -1 never)
    12 relative speed of the last landing (m/s)   13 hammer speed at the last string hit (m/s)
    14 hammer reaction felt at the key over the last tick, (ds/dx) Fbar_c (N)
    15 number of numerical recoveries (state reset to rest after a non-finite or runaway value)
    16 length of the previous tick (s; 0 before the first)
    17 number of events in the last tick; 18-29 the first four: (code, time in tick (s), speed (m/s))
    30-33 coupled key: key position x_k (m), velocity (m/s), handle position at the last tick (m),
    hammer reaction of the last key sub-step (N); 34-47 the tick's events gathered over key sub-steps;
    48-49 the handle's mean velocity (m/s) and length (s) of the previous tick
    50 the handle's position at the key sub-step's end (m)   51 the key's mean acceleration over its last step (m/s^2)
"""

from __future__ import annotations

import math

from numba import njit


def _without_reference_counting() -> dict[str, bool]:
    """``{"_nrt": False}`` where this numba's CPU target takes the option, else nothing."""
    try:
        from numba.core.cpu import CPUTargetOptions
    except ImportError:
        return {}
    return {"_nrt": False} if hasattr(CPUTargetOptions, "_nrt") else {}


#: numba options of the hybrid key's compiled kernels. They allocate nothing, so they are compiled without numba's
#: reference counting (``_nrt``): with it every call that passes the parameter and state arrays increments and
#: decrements their counts (atomic operations), about half of a coupled key's tick, whose key sub-steps make some
#: ten such calls each. A kernel that allocated would fail to compile rather than allocate in the servo tick.
#: The small kernels every key sub-step calls (``key_substep``, ``gather_substep``, ``_hc_contact``, ``_tick_end``)
#: are compiled into their callers as well (``inline="always"``); the larger ones stay calls (compile time).
#: ``_nrt`` is an option numba's CPU target declares but does not document: where a numba lacks it, the kernels
#: compile as before (slower, same results).
KERNEL_JIT = {"cache": True, "nogil": True, "error_model": "numpy", **_without_reference_counting()}

# -- parameter block layout ---------------------------------------------------------------------------
P_MK, P_KR, P_FP, P_MH, P_R, P_G = 0, 1, 2, 3, 4, 5
P_LAW, P_K, P_B, P_N, P_E = 6, 7, 8, 9, 10
P_XL, P_YS, P_ES, P_XKB, P_KKB, P_BKB = 11, 12, 13, 14, 15, 16
P_H, P_DELTA0, P_VCAP, P_DC, P_XR = 17, 18, 19, 20, 21
P_KC, P_BC, P_HK = 22, 23, 24          # handle-key coupling k_c (N/m; 0: key driven directly), b_c, key sub-step (s)
P_BK = 25                              # coupled key's damper on its motion relative to the handle (N s/m)
P_RAIL, P_XJ = 26, 27                  # hammer rail (1/0) and jack pickup x_j (m): hybrid_key_geometry
P_TOUCH = 28                           # the key's surface (m; -ABSENT_M: touched everywhere)
P_PAD = 29                             # 1: the coupling is a one-sided pad holding the key (hybrid_key_coupling)
P_PAD_ALPHA = 30                       # the pad's Hunt-Crossley alpha (s/m): damping alpha k_c delta
# a key held by a pad carries the forces beside it that act on the key: Coulomb friction F_c tanh(v_k / v_eps)
# (N, m/s) and a one-sided spring k (x_k - x_b) past x_b (N/m, m; a jack toe on its let-off button)
P_PAD_FC, P_PAD_VEPS, P_PAD_BUMP_K, P_PAD_BUMP_X = 31, 32, 33, 34
#: a coupled key's longest step (s) while the hammer's contact is not in an impact (0: the fixed sub-step P_HK)
P_HKC = 35
PARAM_SIZE = 36

# -- state block layout -------------------------------------------------------------------------------
S_Y, S_W, S_XPREV, S_UPREV, S_MODE, S_FLAGS, S_ESCAPED, S_INIT = 0, 1, 2, 3, 4, 5, 6, 7
S_T_LAND, S_T_LIFT, S_T_STRING, S_T_LETOFF = 8, 9, 10, 11
S_LAND_SPEED, S_STRING_SPEED, S_REACTION, S_RECOVERIES = 12, 13, 14, 15
S_TPREV, S_EV_COUNT, S_EV0 = 16, 17, 18
MAX_LOGGED_EVENTS = 4
# coupled key (``coupling_k_Npm`` set): simulated key position and velocity, handle position at the
# previous tick, hammer reaction of the last key sub-step, and the tick's events gathered over sub-steps
S_XK, S_VK, S_XH, S_RK, S_FLAGS_ACC, S_CEV_COUNT = (S_EV0 + 3 * MAX_LOGGED_EVENTS + i for i in range(6))
S_CEV0 = S_CEV_COUNT + 1
# the handle's mean velocity (m/s) and length (s) of the previous tick (its quadratic interpolant)
S_UH, S_TH = S_CEV0 + 3 * MAX_LOGGED_EVENTS, S_CEV0 + 3 * MAX_LOGGED_EVENTS + 1
# the handle's position (m) at the key sub-step's end, where a simulated key's closing check is read
S_XC = S_TH + 1
# the coupled key's mean acceleration over its last step (m/s^2), which bounds the hammer's approach over the next
S_AK = S_XC + 1
STATE_SIZE = S_AK + 1

LAW_HUNT_CROSSLEY, LAW_RIGID = 0, 1
MODE_FLIGHT, MODE_CONTACT = 0, 1

# Event codes (state slots 18-29 and :meth:`HybridKey.simulate`).
EV_LANDING, EV_LIFTOFF, EV_STRING, EV_LETOFF = 1, 2, 3, 4
EVENT_NAMES = {EV_LANDING: "landing", EV_LIFTOFF: "lift-off", EV_STRING: "string", EV_LETOFF: "let-off"}

FLAG_CONTACT, FLAG_FLIGHT, FLAG_ESCAPED, FLAG_STRING = 1, 2, 4, 8
FLAG_IMPACT, FLAG_KEYBED, FLAG_LIFTOFF, FLAG_LETOFF = 16, 32, 64, 128

#: Stand-in for an absent let-off, string or keybed position in the parameter block.
ABSENT_M = 1e30
#: Longest hammer sub-step (s); stiff Hunt-Crossley contacts get shorter ones (see ``substep_s``).
MAX_SUBSTEP_S = 5e-5
#: Most hammer sub-steps per tick (bounds the cost; a longer tick gets longer sub-steps).
MAX_SUBSTEPS = 96
#: Sub-step rule for Hunt-Crossley: omega h <= 0.5 at the penetration of a 10 m/s impact.
SUBSTEP_OMEGA_H = 0.5
SUBSTEP_REF_SPEED_MPS = 10.0
#: A rigid landing whose rebound speed would be below this is plastic (m/s).
CAPTURE_SPEED_MPS = 1e-3
#: Input clamps (finite inputs beyond any device are clamped, so the kernel never overflows).
X_LIMIT_M, V_LIMIT_MPS, A_LIMIT_MPS2 = 10.0, 1e4, 1e7
#: Tick length bounds (s): a positive dt outside them is integrated as the nearest bound.
DT_MIN_S, DT_MAX_S = 1e-7, 1.0
#: Hammer state bounds; beyond them (or on a non-finite value) the hammer is reset to rest.
Y_LIMIT_M, W_LIMIT_MPS, F_LIMIT_N = 1e4, 1e4, 1e9
MAX_EXTRA_ITERATIONS = 64
#: Longest sub-step of the coupled key (s), and most key sub-steps per tick.
MAX_KEY_SUBSTEP_S = 2e-5
MAX_KEY_SUBSTEPS = 512
#: Longest step of the coupled key between the hammer's impacts (s), and its rule: omega h <= KEY_STEP_OMEGA_H for
#: the hammer's contact felt by the key one step late (``HybridKey.key_step_s``).
MAX_KEY_STEP_S = 2.5e-4
KEY_STEP_OMEGA_H = 1.0
#: ... taken while the hammer's contact is not in an impact: its force oscillates about its quasi-static value by at
#: most this share of itself (``contact_admits_step``)
KEY_STEP_FORCE_SHARE = 0.02
#: Damping ratio of the coupled key with the hammer resting on it, (b_c + b_d) / (2 sqrt(k_c (m_k + r^2 m_h))):
#: 1/sqrt(2), its free oscillation overshoots by exp(-pi zeta / sqrt(1 - zeta^2)) = exp(-pi) = 4.3 %.
KEY_DAMPING_RATIO = 0.7071067811865476
#: Documented tick-rate tolerance (s) of event times between dt = 1 ms and 0.1 ms (see the module docstring).
TICK_RATE_TOLERANCE_S = 2e-4


@njit(**KERNEL_JIT)
def key_steps(tick_s: float, key_substep_s: float, key_step_s: float) -> tuple[int, int]:
    """A coupled key's tick of ``tick_s`` (s) as :mod:`hapticam.models.hybrid_key.kernel` divides it: ``n``
    sub-steps of ``tick_s / n`` (``n = ceil(tick_s / key_substep_s)``, at most ``MAX_KEY_SUBSTEPS``), taken
    ``q`` at a time as one step while the hammer's contact is not in an impact (``q`` the most whose length stays
    within ``key_step_s``; 1 without such steps). Returns ``(n, q)``."""
    n = max(1, min(math.ceil(tick_s / key_substep_s - 1e-9), MAX_KEY_SUBSTEPS))
    return n, max(1, min(int(key_step_s / (tick_s / n)), n))


def tick_substeps(dt_s: float, substep_s: float, key_substep_s: float, coupled: bool, key_step_s: float = 0.0) -> int:
    """Integration sub-steps of one tick of ``dt_s`` (s) with the hammer in Hunt-Crossley contact, its costly
    state (a flight is a closed-form parabola), as :mod:`hapticam.models.hybrid_key.kernel` takes them:
    ``ceil(dt / substep_s)`` RK4 steps (at most ``MAX_SUBSTEPS``); on a coupled key ``ceil(dt / key_substep_s)``
    key sub-steps (at most ``MAX_KEY_SUBSTEPS``), each counted once with the hammer's RK4 steps inside it, the
    count of a tick inside an impact. With ``key_step_s`` > 0, the longer steps a resting contact admits
    (:func:`key_steps`), the count of a tick with the hammer resting on the key: each step counted once with
    the hammer's single RK4 step over it. A measure of the tick's cost (render's tick budget,
    :mod:`hapticam.render.gate`)."""
    def steps(length_s: float, step_s: float, most: int) -> int:
        return max(1, min(math.ceil(length_s / step_s - 1e-9), most))
    tick_s = min(max(float(dt_s), DT_MIN_S), DT_MAX_S)
    if not coupled:
        return steps(tick_s, substep_s, MAX_SUBSTEPS)
    n_key, per_step = key_steps(tick_s, key_substep_s, key_step_s)
    if per_step > 1:
        return 2 * math.ceil(n_key / per_step)
    return n_key * (1 + steps(max(tick_s / n_key, DT_MIN_S), substep_s, MAX_SUBSTEPS))
