"""The hybrid key's own simulated key, coupled to the device's handle by a virtual spring-damper.

Rendering the key kinematically (the key *is* the handle) hands the handle every landing impulse of the
hammer, spread over one tick: at 1 kHz a 50 g handle is kicked hard enough to bounce the hammer on its
jack again (chatter, hundreds of lift-offs per second). With ``coupling_k_Npm`` set the hammer acts on
a simulated key (mass ``m_k``) which the handle pulls through a virtual coupling (Colgate, Stanley &
Brown 1995; Adams & Hannaford 1999); the key's springs and keybed act on the handle itself, as the
servo loop renders a model's stiffness at the handle and only its inertia through its proxy::

    F = k_r x + F_p + F_kb(x, v) + F_c                            the force the user applies (N, +x)
    F_c = k_c (x - x_k) + b_c (v_h - v_k) + F_0                    the coupling, felt at the handle
    m_k x_k'' = F_c + b_d (v_h - v_k) - R - F_s                    R: the hammer's reaction at the key

Preload. ``F_0`` is the hammer's static weight through the lever, ``(ds/dx) m_h g``, while the hammer
rests on the key (contact mode) and 0 while it flies: the key sits under the handle whether the hammer
rests on the jack or on the backcheck, and at let-off the preload and the hammer's reaction leave the
key together (a constant ``F_0 = r m_h g`` pushed the 30 g key ``F_0 / k_c`` = 0.49 mm ahead of the
handle at let-off and rang; the drop the handle feels is now the hammer's weight, as on the real key).
In a closing check (no rail) ``F_0`` is that check's lever at the handle times ``m_h g``
(:mod:`hapticam.models.hybrid_key.geometry`), so the key rests under the handle there as well.

Key damper. ``b_d`` (``HybridKey.key_damping_Nspm``) acts on the key's motion relative to the handle
and on the simulated key alone: the handle never feels it, so the device's budget (below) is spent on
``k_c`` and ``b_c`` only. It gives the key with the hammer resting on it (mass ``m_k + r^2 m_h``, 0.28 kg
on the example: ``b_c`` alone leaves it at damping ratio 0.045 and every landing rang for ~0.4 s) the
damping ratio ``KEY_DAMPING_RATIO`` = 1/sqrt(2). At a steady press ``v_h = v_k`` and it adds nothing to
the quasi-static force (a damper to ground would add ``b_d v``: 0.1 N at 5 mm/s, above the force JND).
A physical pad (the probe's tip bolted to a key, ``b_c >= sqrt(k_c m_k)``) gets none.

The handle is interpolated inside a tick along the quadratic through its last three samples (with
``b_d``; linearly without, as before), so the handle velocity the key feels is continuous at tick
boundaries up to a third difference, like the kinematic key's drive point: with the tick-mean
(staircase) velocity the damper made the key, and the hammer on it, follow a 1 kHz staircase.

Passivity. (1) Device side: the handle feels ``F_c`` only, a spring-damper evaluated on the sampled
handle, and the device renders it passively when Colgate & Schenkel's ``b > k_c T / 2 + b_c`` holds for
its physical damping ``b`` and period ``T`` (:func:`coupling_for_device` picks ``k_c`` a quarter of
``2 b / T``, as the servo loop's proxy does). (2) Environment side, the key on the coupling with a
linear load (the hammer resting: one body of mass ``m``): the impedance at the handle is
``Z(s) = m s (k_c + b_c s) / (m s^2 + (b_c + b_d) s + k_c)`` and
``Re Z(j w) = m w^2 (k_c b_d + b_c m w^2) / |k_c - m w^2 + j (b_c + b_d) w|^2 >= 0`` for every
``b_d >= 0``: positive real, dissipating at every frequency (``b_d`` adds the ``k_c b_d`` term). In
energy form, with the key's momentum ``p = m v_k - b_d e`` (``e = x_h - x_k``; ``p' = F_c - L``, ``L``
the load on the key) and ``S = p^2 / (2 m) + k_c e^2 / 2``::

    F_c v_h - L v_k - dS/dt = b_c e'^2 + (b_d / m) (k_c e^2 + b_c e e') - (b_d / m) L e

whose quadratic part is >= 0 when ``b_d b_c <= 4 k_c m`` (77 N s/m on the example, ``b_d`` = 22); the
last term is the load's force times the coupling's deflection, which the preload keeps at the
hammer's dynamic reaction only (the static weight is ``F_0``). So the damper is passive for the key
alone and with the hammer resting; across the hammer's impacts it is not covered by this storage
function, and the servo loop's energy monitor stays the guard. (3) The preload is a force between
handle and key, ``F_0 e'`` of power: constant while the hammer rests (a shift of the spring's rest
length, lossless), it switches only with the hammer's mode, at ``e`` close to 0 (the key under the
handle), so each switch exchanges at most ``F_0 |e|``. It is ``r m_h g`` whatever the drive point's slope
(the closing check's, 0 with the hammer on its rail): a preload that followed the key's position would
switch at every crossing of the rail's kink with the key behind the handle (4-26 uJ gained per cycle of
a key oscillating across it); where the static reaction differs, the key sits ``(F_0 - R) / k_c`` from
the handle instead (0.34 mm on the rail of the identified piano action: the hammer's weight comes on over
that much handle travel at the pickup).

Pad (``coupling_pad_alpha_spm``, ``P_PAD``). The key held as a probe's tip holds a real one
(:mod:`hapticam.render.verify.probe_tip`): the coupling is a one-sided linear Hunt-Crossley pad
``F = k_c delta (1 + alpha delta')``, ``delta = x_h - x_k``, clamped at 0 (it never pulls; Hunt & Crossley,
"Coefficient of restitution interpreted as damping in vibroimpact", 1975, with n = 1), and the key carries its
own forces, as a key under a tip does::

    m_k x_k'' = F_pad - k_r x_k - F_p - F_kb(x_k, v_k) - R - F_f tanh(v_k / v_eps) - k_b (x_k - x_b)^+

with no preload ``F_0``, no damper ``b_d`` and nothing at the handle but the pad (``F_f``, ``k_b``, ``x_b``:
the friction and let-off spring identified beside the key, ``HybridKey.held_key_forces``). The key rests on its
back rail at ``touch_m`` (a plastic stop). So the key leaves the pad when it outruns it (after the hammer's
landing in the backcheck, or when the hammer's weight leaves it at the release) and strikes it again, and it
rings on the pad at the touch: what a capture through a stiff tip holds. Passive: every force on the key is a
spring, a damper, friction or gravity through the lever, the pad is a Hunt-Crossley contact with alpha >= 0 and
the stop only removes energy.
"""

from __future__ import annotations

import math

from numba import njit

from hapticam.models.hybrid_key.events import contact_admits_step
from hapticam.models.hybrid_key.geometry import check_held, drive_at, drive_slope, lever_at
from hapticam.models.hybrid_key.layout import (FLAG_IMPACT, FLAG_KEYBED, FLAG_LETOFF, FLAG_LIFTOFF, FLAG_STRING,
                                               MAX_LOGGED_EVENTS, MODE_CONTACT, P_B, P_BC, P_BK, P_BKB, P_FP, P_G,
                                               P_K, P_KC, P_KKB, P_KR, P_MH, P_MK, P_N, P_PAD, P_PAD_ALPHA,
                                               P_PAD_BUMP_K, P_PAD_BUMP_X, P_PAD_FC, P_PAD_VEPS, P_R, P_TOUCH,
                                               P_XKB, S_AK, S_CEV0,
                                               S_CEV_COUNT, S_ESCAPED, S_EV0, S_EV_COUNT, S_FLAGS, S_FLAGS_ACC,
                                               S_MODE, S_RK, S_VK, S_W, S_XC, S_XK, S_Y)
from hapticam.models.hybrid_key.layout import KERNEL_JIT

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


@njit(**KERNEL_JIT)
def coupling_preload(p, s):
    """The coupling's preload F_0 (N): the hammer's static weight on the jack, r m_h g, while the hammer is
    in contact, whatever the drive point's slope (module notes, passivity (3)); 0 while it flies. A
    simulated key's escaped closing check: its lever at the handle times m_h g (hybrid_key_geometry)."""
    if p[P_PAD] > 0.0:
        return 0.0                                 # a pad holding the key: the key carries its own forces
    if p[P_BK] > 0.0 and s[S_MODE] != MODE_CONTACT:
        return 0.0                                 # a simulated key: nothing while the hammer flies
    if s[S_ESCAPED] != 0.0 and check_held(p):
        return drive_slope(p, s[S_XC], 1.0) * p[P_MH] * p[P_G]   # the check's lever where the handle is
    return p[P_R] * p[P_MH] * p[P_G]               # (a physical pad: always the constant r m_h g)


@njit(**KERNEL_JIT)
def key_equilibrium(p, s, x_h, reaction):
    """Key position (m) at rest under the handle at ``x_h`` with the hammer's static reaction ``reaction``
    (N): k_c (x_h - x_k) + F_0 = reaction."""
    return x_h - (reaction - coupling_preload(p, s)) / p[P_KC]


@njit(**KERNEL_JIT)
def pad_rest(p):
    """Where a key held by a pad rests on its back rail (m, handle's axis): its surface ``touch_m``, or 0."""
    return p[P_TOUCH] if p[P_TOUCH] >= 0.0 else 0.0


@njit(**KERNEL_JIT)
def pad_force(p, x_h, v_h, xk, vk):
    """The pad's force on the key (N, >= 0) and its local stiffness and damping: one-sided linear
    Hunt-Crossley ``k_c delta (1 + alpha delta')``, ``delta = x_h - x_k`` (never pulling)."""
    d = x_h - xk
    if d <= 0.0:
        return 0.0, 0.0, 0.0
    kc = p[P_KC]
    damp = p[P_PAD_ALPHA] * kc * d
    f = kc * d + damp * (v_h - vk)
    if f <= 0.0:
        return 0.0, 0.0, 0.0
    return f, kc, damp


@njit(**KERNEL_JIT)
def pad_substep(p, s, x_h, v_h, h):
    """A key held by a one-sided pad (module notes, "Pad"): advance it by ``h`` (s) with the handle at ``x_h``
    (m, at the sub-step's end) moving at ``v_h`` (m/s), against its own forces and the hammer reaction
    ``s[S_RK]``; returns the pad's force at the sub-step's end (N)."""
    xk = s[S_XK]
    vk = s[S_VK]
    fp, stiff, damp = pad_force(p, x_h, v_h, xk, vk)
    # m_k x_k'' = F_pad - k_r x_k - F_p - F_kb(x_k, v_k) - R
    f = fp - p[P_KR] * xk - p[P_FP] - s[S_RK]
    stiff += p[P_KR]
    if xk > p[P_XKB]:
        f_kb = p[P_KKB] * (xk - p[P_XKB]) + p[P_BKB] * vk
        if f_kb > 0.0:
            f -= f_kb
            stiff += p[P_KKB]
            damp += p[P_BKB]
    if xk > p[P_PAD_BUMP_X]:                       # a one-sided spring beside the key (let-off button)
        f -= p[P_PAD_BUMP_K] * (xk - p[P_PAD_BUMP_X])
        stiff += p[P_PAD_BUMP_K]
    if p[P_PAD_FC] > 0.0:                          # the key's friction, F_c tanh(v / v_eps): its slope implicit
        u = vk / p[P_PAD_VEPS]
        th = math.tanh(u)
        f -= p[P_PAD_FC] * th
        damp += p[P_PAD_FC] / p[P_PAD_VEPS] * (1.0 - th * th)
    vk = vk + h * (f - h * stiff * vk) / (p[P_MK] + h * damp + h * h * stiff)
    xk = xk + h * vk
    rest = pad_rest(p)
    if xk < rest:                                  # the back rail: a plastic stop
        xk = rest
        vk = max(vk, 0.0)
    s[S_XK] = xk
    s[S_VK] = vk
    return pad_force(p, x_h, v_h, xk, vk)[0]


@njit(inline="always", **KERNEL_JIT)
def key_substep(p, s, x_h, v_h, h):
    """Advance the simulated key by ``h`` (s) with the handle at ``x_h`` (m, at the sub-step's end)
    moving at ``v_h`` (m/s), against the hammer reaction ``s[S_RK]`` of the previous sub-step.
    Returns the coupling force F_c at the sub-step's end (N)."""
    if p[P_PAD] > 0.0:
        return pad_substep(p, s, x_h, v_h, h)
    xk = s[S_XK]
    vk = s[S_VK]
    kc = p[P_KC]
    bc = p[P_BC]
    f0 = coupling_preload(p, s)
    # m_k x_k'' = k_c (x_h - x_k) + b_c (v_h - v_k) + F_0 - R + F_d  (module docstring)
    f = kc * (x_h - xk) + bc * (v_h - vk) + f0 - s[S_RK]
    stiff = kc
    damp = bc
    # the key's own damper on its motion relative to the handle, on the key alone: F_d = b_d (v_h - v_k)
    f += p[P_BK] * (v_h - vk)
    damp += p[P_BK]
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


@njit(**KERNEL_JIT)
def key_step_admitted(p, s, h):
    """Whether the coupled key may take one step of ``h`` (s) from its state and the hammer's in ``s``
    (:func:`~hapticam.models.hybrid_key.events.contact_admits_step`, the rule of ``HybridKey.key_step_s``): the
    hammer's penetration of the drive point and its closing speed, the drive point's velocity taken at the larger
    lever of the key's position now and one step on (a jack picking the hammer up from its rail, a rail taking it
    from a falling key); an approach acceleration ``g + r |a_k|`` (``a_k`` the key's over its last step); the
    quasi-static contact force ``(g + l a_e) / (l^2 / m_k + 1 / m_h)`` (``l`` the lever, ``a_e = a_k + R / m_k``
    the key's acceleration without the hammer's reaction ``R``, the reaction after that step: a phase-dependent
    estimate, which the sub-step trace bears out, where the reaction before the step let the hammer's chatter on
    the jack run on at the longer steps). Not admitted either: a step in which the key may reach its keybed (the
    keybed's onset is read at a step's start)."""
    xk = s[S_XK]
    vk = s[S_VK]
    a_k = s[S_AK]
    if xk <= p[P_XKB] < xk + max(vk, 0.0) * h + 0.5 * abs(a_k) * h * h:
        return False
    escaped = s[S_ESCAPED]
    lever = lever_at(p, s, xk, escaped)
    closing = max(lever * vk, lever_at(p, s, xk + vk * h, escaped) * vk) - s[S_W]
    r = p[P_R]
    m_inv = lever * lever / p[P_MK] + 1.0 / p[P_MH]
    resting = (p[P_G] + lever * (a_k + s[S_RK] / p[P_MK])) / m_inv
    approach = p[P_G] + r * abs(a_k)
    return contact_admits_step(p[P_K], p[P_B], p[P_N], p[P_MH], r * r / p[P_MK] + 1.0 / p[P_MH],
                               drive_at(p, s, xk, escaped) - s[S_Y], closing, approach, resting, h)


@njit(**KERNEL_JIT)
def begin_tick(s):
    """Clear the tick's gathered events and event flags."""
    s[S_CEV_COUNT] = 0.0
    s[S_FLAGS_ACC] = 0.0


@njit(inline="always", **KERNEL_JIT)
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


@njit(**KERNEL_JIT)
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
