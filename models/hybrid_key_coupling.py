"""The hybrid key's own simulated key, coupled to the device's handle by a virtual spring-damper.

Rendering the key kinematically (the key *is* the handle) hands the handle every landing impulse of the
hammer, spread over one tick: at 1 kHz a 50 g handle is kicked hard enough to bounce the hammer on its
jack again (chatter, hundreds of lift-offs per second). With ``coupling_k_Npm`` set the key is a body
of its own (mass ``m_k``) pulled by the handle through a virtual coupling (Colgate, Stanley & Brown
1995; Adams & Hannaford 1999)::

    F_c = k_c (x_h - x_k) + b_c (v_h - v_k)                     the force the user applies (N, +x)
    m_k x_k'' = F_c - k_r x_k - F_p - F_kb(x_k, v_k) - R          R: the hammer's reaction at the key

The hammer is advanced exactly as for a kinematic key (``hybrid_key_kernel``), driven by the simulated
key over sub-steps ``h_k`` no longer than ``MAX_KEY_SUBSTEP_S`` (shorter for stiff contacts: see
``HybridKey.key_substep_s``); the key feels the hammer's reaction of the previous sub-step. The key's
step is linearly implicit in its springs and dampers (coupling, return spring, keybed)::

    v_k+ = v_k + h (F(x_k, v_k) - h K v_k) / (m_k + h C + h^2 K),   x_k+ = x_k + h v_k+

(backward Euler linearised; K, C the stiffness and damping acting on the key), which only adds
numerical dissipation. The handle moves linearly between the loop's samples, at the tick's mean
velocity ``v_h``, so the kernel's result does not depend on the loop's velocity filter and the
sub-steps are the same at any tick rate: rendering at 1 kHz and simulating offline at 10 kHz follow
the same key and hammer up to the handle's interpolation.

Passivity: the coupling is a spring and a damper (``k_c, b_c >= 0``) and the rest of the key is the
mechanical system of :mod:`hapticam.models.hybrid_key`; the device renders the coupling passively when
Colgate & Schenkel's ``b > k_c T / 2 + b_c`` holds for its physical damping ``b`` and period ``T``
(:func:`coupling_for_device` picks ``k_c`` a quarter of ``2 b / T``, as the servo loop's proxy does).
"""

from __future__ import annotations

import math

from numba import njit

from hapticam.models.hybrid_key_layout import (FLAG_IMPACT, FLAG_LETOFF, FLAG_LIFTOFF, FLAG_STRING, MAX_LOGGED_EVENTS, P_BC,
                                               P_BKB, P_FP, P_KC, P_KKB, P_KR, P_MK, P_XKB, S_CEV0,
                                               S_CEV_COUNT, S_EV0, S_EV_COUNT, S_FLAGS, S_FLAGS_ACC, S_RK,
                                               S_VK, S_XK)

#: Flag bits that record an event during a tick (kept over the key's sub-steps); the others are states.
EVENT_FLAGS = FLAG_STRING | FLAG_IMPACT | FLAG_LIFTOFF | FLAG_LETOFF


def coupling_for_device(damping_N_s_per_m: float, rate_hz: float, key_mass_kg: float) -> tuple[float, float]:
    """Coupling stiffness (N/m) and damping (N s/m) a device with physical damping ``b`` renders passively
    at ``rate_hz``: ``k_c = (2 b / T) / 4`` and ``b_c = min(b - k_c T / 2, 2 sqrt(k_c m))`` (Colgate &
    Schenkel's ``b > k_c T / 2 + b_c``; critical damping of the mass ``m`` when the device allows it)."""
    period = 1.0 / rate_hz
    kc = 0.25 * 2.0 * damping_N_s_per_m / period          # a quarter of K < 2 b / T
    bc = min(damping_N_s_per_m - kc * period / 2.0, 2.0 * math.sqrt(kc * key_mass_kg))
    return float(kc), float(max(bc, 0.0))


@njit(cache=True, nogil=True, error_model="numpy")
def key_equilibrium(p, x_h, reaction):
    """Key position (m) at rest under the handle at ``x_h`` with the hammer's static reaction ``reaction``
    (N): k_c (x_h - x_k) = k_r x_k + F_p + reaction (the keybed is left out)."""
    return (p[P_KC] * x_h - p[P_FP] - reaction) / (p[P_KC] + p[P_KR])


@njit(cache=True, nogil=True, error_model="numpy")
def key_substep(p, s, x_h, v_h, h):
    """Advance the simulated key by ``h`` (s) with the handle at ``x_h`` (m, at the sub-step's end)
    moving at ``v_h`` (m/s), against the hammer reaction ``s[S_RK]`` of the previous sub-step.
    Returns the coupling force at the sub-step's end (N), the force the user applies."""
    xk = s[S_XK]
    vk = s[S_VK]
    kc = p[P_KC]
    bc = p[P_BC]
    # F = k_c (x_h - x_k) + b_c (v_h - v_k) - k_r x_k - F_p - F_kb - R  (module docstring)
    f = kc * (x_h - xk) + bc * (v_h - vk) - p[P_KR] * xk - p[P_FP] - s[S_RK]
    stiff = kc + p[P_KR]
    damp = bc
    if xk > p[P_XKB]:
        f_kb = p[P_KKB] * (xk - p[P_XKB]) + p[P_BKB] * vk  # keybed F_kb = k_kb (x - x_kb) + b_kb v (seed 004 eq. 2.1)
        if f_kb > 0.0:
            f -= f_kb
            stiff += p[P_KKB]
            damp += p[P_BKB]
    # linearly implicit Euler: v+ = v + h (F - h K v) / (m + h C + h^2 K)
    vk = vk + h * (f - h * stiff * vk) / (p[P_MK] + h * damp + h * h * stiff)
    xk = xk + h * vk
    s[S_XK] = xk
    s[S_VK] = vk
    return kc * (x_h - xk) + bc * (v_h - vk)


@njit(cache=True, nogil=True, error_model="numpy")
def begin_tick(s):
    """Clear the tick's gathered events and event flags."""
    s[S_CEV_COUNT] = 0.0
    s[S_FLAGS_ACC] = 0.0


@njit(cache=True, nogil=True, error_model="numpy")
def gather_substep(s, t_offset):
    """Keep the events and event flags of the sub-step just taken, its times shifted by ``t_offset`` (s)
    to times inside the tick."""
    n = min(int(s[S_EV_COUNT]), MAX_LOGGED_EVENTS)
    m = int(s[S_CEV_COUNT])
    for j in range(n):
        if m < MAX_LOGGED_EVENTS:
            src = S_EV0 + 3 * j
            dst = S_CEV0 + 3 * m
            s[dst] = s[src]
            s[dst + 1] = s[src + 1] + t_offset
            s[dst + 2] = s[src + 2]
        m += 1
    s[S_CEV_COUNT] = m
    s[S_FLAGS_ACC] = float(int(s[S_FLAGS_ACC]) | (int(s[S_FLAGS]) & EVENT_FLAGS))


@njit(cache=True, nogil=True, error_model="numpy")
def end_tick(s):
    """Put the tick's gathered events and flags where the kinematic key's tick leaves them."""
    m = int(s[S_CEV_COUNT])
    for j in range(min(m, MAX_LOGGED_EVENTS)):
        for k in range(3):
            s[S_EV0 + 3 * j + k] = s[S_CEV0 + 3 * j + k]
    s[S_EV_COUNT] = m
    s[S_FLAGS] = float(int(s[S_FLAGS]) | int(s[S_FLAGS_ACC]))
