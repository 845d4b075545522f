"""The hybrid key's own simulated key, coupled to the device's handle by a virtual spring-damper.

Rendering the key kinematically (the key *is* the handle) hands the handle every landing impulse of the
hammer, spread over one tick: at 1 kHz a 50 g handle is kicked hard enough to bounce the hammer on its
jack again (chatter, hundreds of lift-offs per second). With ``coupling_k_Npm`` set the hammer acts on
a simulated key (mass ``m_k``) which the handle pulls through a virtual coupling (Colgate, Stanley &
Brown 1995; Adams & Hannaford 1999); the key's springs and keybed act on the handle itself, as the
servo loop renders a model's stiffness at the handle and only its inertia through its proxy::

    F = k_r x + F_p + F_kb(x, v) + F_c                           the force the user applies (N, +x)
    F_c = k_c (x - x_k) + b_c (v_h - v_k) + F_0,  F_0 = r m_h g   the coupling, preloaded by the hammer
    m_k x_k'' = F_c - R - F_s                                    R: the hammer's reaction at the key

The preload ``F_0`` (the hammer's weight through the lever) keeps the key under the handle while the
hammer rests on the jack, so let-off, repetition and the keybed are met where the handle is; the key
moves ahead of the handle by ``F_0 / k_c`` while the hammer is away. A stop ``F_s`` with the keybed's
stiffness and damping keeps the key from going deeper than ``max(x_kb, x)`` (so a fast stroke does not
carry the key, and the backcheck, past the keybed; the keybed's own force is the handle's). The hammer is advanced exactly as for
a kinematic key (``hybrid_key_kernel``), driven by the simulated key over sub-steps ``h_k`` no longer than
``MAX_KEY_SUBSTEP_S`` (shorter for stiff contacts: see ``HybridKey.key_substep_s``); the key feels the
hammer's reaction of the previous sub-step. The key's step is linearly implicit in the coupling and
the keybed (stiffness K, damping C acting on it)::

    v_k+ = v_k + h (F - h K v_k) / (m_k + h C + h^2 K),   x_k+ = x_k + h v_k+

(backward Euler linearised), which only adds numerical dissipation. The handle moves linearly between
the loop's samples, at the tick's mean velocity ``v_h``, so the coupling does not depend on the loop's
velocity filter and the sub-steps are the same at any tick rate: rendering at 1 kHz and simulating
offline at 10 kHz follow the same key and hammer up to the handle's interpolation.

Passivity: the coupling is a spring and a damper (``k_c, b_c >= 0``; its preload is the static
weight of the hammer, a constant force) and the rest is the mechanical system of
:mod:`hapticam.models.hybrid_key`; the device renders the coupling passively when Colgate & Schenkel's
``b > k_c T / 2 + b_c`` holds for its physical damping ``b`` and period ``T`` (:func:`coupling_for_device`
picks ``k_c`` a quarter of ``2 b / T``, as the servo loop's proxy does).
"""

from __future__ import annotations

import math

from numba import njit

from hapticam.models.hybrid_key_layout import (FLAG_IMPACT, FLAG_KEYBED, FLAG_LETOFF, FLAG_LIFTOFF, FLAG_STRING, MAX_LOGGED_EVENTS, P_BC,
                                               P_BKB, P_G, P_KC, P_KKB, P_MH, P_MK, P_R, P_XKB, S_CEV0,
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
def coupling_preload(p):
    """The coupling's preload F_0 = r m_h g (N): the hammer's static weight through the lever."""
    return p[P_R] * p[P_MH] * p[P_G]


@njit(cache=True, nogil=True, error_model="numpy")
def key_equilibrium(p, x_h, reaction):
    """Key position (m) at rest under the handle at ``x_h`` with the hammer's static reaction ``reaction``
    (N): k_c (x_h - x_k) + F_0 = reaction."""
    return x_h - (reaction - coupling_preload(p)) / p[P_KC]


@njit(cache=True, nogil=True, error_model="numpy")
def key_substep(p, s, x_h, v_h, h):
    """Advance the simulated key by ``h`` (s) with the handle at ``x_h`` (m, at the sub-step's end)
    moving at ``v_h`` (m/s), against the hammer reaction ``s[S_RK]`` of the previous sub-step.
    Returns the coupling force F_c at the sub-step's end (N)."""
    xk = s[S_XK]
    vk = s[S_VK]
    kc = p[P_KC]
    bc = p[P_BC]
    f0 = coupling_preload(p)
    # m_k x_k'' = k_c (x_h - x_k) + b_c (v_h - v_k) + F_0 - R  (module docstring)
    f = kc * (x_h - xk) + bc * (v_h - vk) + f0 - s[S_RK]
    stiff = kc
    damp = bc
    # the keybed stops the key where it stops the handle: no deeper than max(x_kb, x_h) (seed 004 eq. 2.1)
    stop, v_stop = (x_h, v_h) if x_h > p[P_XKB] else (p[P_XKB], 0.0)
    if xk > stop:
        f_kb = p[P_KKB] * (xk - stop) + p[P_BKB] * (vk - v_stop)
        if f_kb > 0.0:
            f -= f_kb
            stiff += p[P_KKB]
            damp += p[P_BKB]
    # linearly implicit Euler: v+ = v + h (F - h K v) / (m + h C + h^2 K)
    vk = vk + h * (f - h * stiff * vk) / (p[P_MK] + h * damp + h * h * stiff)
    xk = xk + h * vk
    s[S_XK] = xk
    s[S_VK] = vk
    return kc * (x_h - xk) + bc * (v_h - vk) + f0


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
def end_tick(s, on_keybed):
    """Put the tick's gathered events and flags where the kinematic key's tick leaves them (the keybed
    flag is the handle's: the keybed acts there)."""
    m = int(s[S_CEV_COUNT])
    for j in range(min(m, MAX_LOGGED_EVENTS)):
        for k in range(3):
            s[S_EV0 + 3 * j + k] = s[S_CEV0 + 3 * j + k]
    s[S_EV_COUNT] = m
    flags = (int(s[S_FLAGS]) | int(s[S_FLAGS_ACC])) & ~FLAG_KEYBED
    s[S_FLAGS] = float(flags | (FLAG_KEYBED if on_keybed else 0))
