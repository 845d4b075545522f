"""How the hybrid key's kernel steps a tick: the hammer's sub-step of its Hunt-Crossley contact, the coupled
key's sub-step through the hammer's impacts and its longer step between them, and what a tick costs in
sub-steps (:class:`KeyStepping`, a part of :class:`~hapticam.models.hybrid_key.model.HybridKey`). SI units.
"""

from __future__ import annotations

import math

from hapticam.models.hybrid_key.events import contact_admits_step
from hapticam.models.hybrid_key.layout import (DT_MAX_S, DT_MIN_S, MAX_KEY_STEP_S, MAX_KEY_SUBSTEP_S,
                                               MAX_SUBSTEP_S, SUBSTEP_OMEGA_H, SUBSTEP_REF_SPEED_MPS, key_steps,
                                               tick_substeps)


class KeyStepping:
    """The step sizes and the cost per tick of a hybrid key, from its masses, contact law, coupling and keybed
    (the attributes of :class:`~hapticam.models.hybrid_key.model.HybridKey`)."""

    @property
    def substep_s(self) -> float:
        """Longest hammer sub-step (s) of the Hunt-Crossley contact integration.

        ``MAX_SUBSTEP_S``, shortened so that omega h <= 0.5 and c h / m_h <= 0.5 at the largest
        penetration of a 10 m/s impact (stiffness n k rho^(n-1), damping c = b rho^n): RK4 then stays
        accurate for every realistic hammer speed. The largest penetration of an impact at speed V
        follows from m v dv/drho = -rho^n (k + b v) (seed 000 eq. 26)::

            rho_max^(n+1) = (n + 1) m_h (k / b^2) (z - ln(1 + z)),   z = b V / k

        (-> (n + 1) m_h V^2 / (2 k) as b -> 0). A tick longer than ``MAX_SUBSTEPS`` sub-steps uses
        ``MAX_SUBSTEPS`` longer ones (this bounds the cost per tick)."""
        if self.rigid:
            return MAX_SUBSTEP_S
        k, b, n = self.contact["k_Npm"], self.contact["b_Nspm"], self.contact["n"]
        m = self.hammer_mass_kg
        z = b * SUBSTEP_REF_SPEED_MPS / k
        if z < 1e-4:  # z - ln(1 + z) by its series, then times k / b^2, -> V^2 / (2 k) as b -> 0
            work = SUBSTEP_REF_SPEED_MPS ** 2 / (2.0 * k) * (1.0 - 2.0 * z / 3.0 + z * z / 2.0)
        else:
            work = k / (b * b) * (z - math.log1p(z))
        rho = ((n + 1.0) * m * work) ** (1.0 / (n + 1.0))  # largest penetration, from the energy balance
        stiffness = n * k * rho ** (n - 1.0)
        h = MAX_SUBSTEP_S
        if stiffness > 0.0:
            h = min(h, SUBSTEP_OMEGA_H / math.sqrt(stiffness / m))
        damping = b * rho ** n
        if damping > 0.0:
            h = min(h, SUBSTEP_OMEGA_H * m / damping)
        return float(max(h, 1e-9))

    @property
    def key_substep_s(self) -> float:
        """Sub-step (s) of the coupled key: ``MAX_KEY_SUBSTEP_S``, shortened so that the hammer contact
        reflected to the key through the lever (stiffness r^2 K on m_k, K the hammer's stiffest contact,
        ``substep_s``'s rule), the coupling and the keybed keep omega h <= 0.5 and c h / m_k <= 0.5
        (the key feels the hammer one sub-step late, so it needs the hammer's margin). The key's step through
        the hammer's impacts; between them it takes longer ones (``key_step_s``)."""
        m = max(self.key_mass_kg, 1e-9)
        h = min(MAX_KEY_SUBSTEP_S, self.substep_s / max(1.0, self.lever_ratio * math.sqrt(self.hammer_mass_kg / m)))
        return float(max(self._key_own_step_s(h), 1e-9))

    def _key_own_step_s(self, longest_s: float) -> float:
        """``longest_s`` (s), shortened so that the coupling and the keybed keep omega h <= 0.5 and the coupling's,
        the key damper's and the keybed's damping c h / m_k <= 0.5 on the key alone."""
        m = max(self.key_mass_kg, 1e-9)
        h = longest_s
        stiff = (self.coupling_k_Npm or 0.0) + self.keybed_k_Npm
        if stiff > 0.0:
            h = min(h, SUBSTEP_OMEGA_H / math.sqrt(stiff / m))
        damp = self.coupling_b_Nspm + self.key_damping_Nspm + self.keybed_b_Nspm
        if damp > 0.0:
            h = min(h, SUBSTEP_OMEGA_H * m / damp)
        return h

    @property
    def key_step_s(self) -> float:
        """Longest step (s) of the coupled key while the hammer's contact is not in an impact; 0: none (the key
        always takes ``key_substep_s``): on a contact law with n < 1, stiffest at a touch, and on a key held by a
        pad (``coupling_pad_alpha_spm``), whose own contact with the handle, friction and let-off spring strike
        and stick at the key's sub-steps.

        ``key_substep_s`` is sized for the hammer's contact at a 10 m/s impact; resting on the key (0.5 N on the
        example's felt: local stiffness 2.0e4 N/m) or flying clear of it, the contact allows far longer steps.
        The kernel takes up to ``q`` sub-steps as one step (``q`` sub-steps no longer than this:
        ``MAX_KEY_STEP_S``, or ``key_substep_s``'s rule for the key alone, the coupling and keybed at
        omega h <= 0.5 and their damping and the key damper's at c h / m_k <= 0.5) whenever the contact admits it
        over that step, the hammer then taking one RK4 step over it; otherwise it takes the sub-steps one by one,
        ``q`` of them before it asks again. The contact admits a step of h
        (:func:`~hapticam.models.hybrid_key.events.contact_admits_step`) when it cannot touch within it, or:

        - it is deep enough to stay stable and accurate: at the deepest penetration the step can reach,
          ``rho_h = rho + (v + A h / 2) h`` from the penetration ``rho``, its closing speed ``v`` (>= 0) and the
          approach acceleration without the contact force ``A = g + r |a_k|`` (the contact force only slows an
          approach), the local stiffness ``K = n rho_h^(n-1) (k + b (v + A h))`` and damping
          ``C = b rho_h^n`` keep::

              h sqrt(K (r^2 / m_k + 1 / m_h)) <= KEY_STEP_OMEGA_H = 1     h C (r^2 / m_k + 1 / m_h) <= 1
              h sqrt(K / m_h) <= SUBSTEP_OMEGA_H = 0.5                     h C / m_h <= 0.5

          (``r^2 / m_k + 1 / m_h``: the inverse of the key and hammer's reduced mass through the lever). The first
          pair is stability with a margin of 2: the key feels the contact one step late, which for the contact's
          mode is the symplectic Euler method, stable for omega h < 2 (at omega h = 1 the mode's frequency is 4 %
          off, (omega h)^2 / 24; on the resting example omega h = 0.52, a mode at 690 Hz, far above the
          coupling's 10 Hz). The second pair is ``substep_s``'s rule for the hammer's one RK4 step;
        - it is not in an impact: its elastic force ``F = k rho^n`` departs from the quasi-static force
          ``F_r = (g + r a_e) / (r^2 / m_k + 1 / m_h)`` that carries the hammer on the key (``a_e`` the key's
          acceleration without the hammer's reaction) by at most ``KEY_STEP_FORCE_SHARE`` = 2 % of itself over
          its oscillation, ``(F - F_r)^2 + K v^2 / (r^2 / m_k + 1 / m_h) <= (0.02 F)^2``: a landing, a lift-off
          and the contact's ringing after an impact take the sub-steps until it has settled;
        - the key cannot reach its keybed within the step (whose onset the key reads at a step's start).
        A landing the rule did not foresee (the handle's push can change within the step) takes the hammer's
        own sub-steps from the landing on.

        On the example the step is 121 us (the keybed's damping bound), 9 steps a 1 ms tick against 174 sub-steps;
        against the sub-steps, a press through the display stage lands within 0.04 ms and its force stays within
        1 % of its peak up to the hammer's chatter on the jack, whose event sequence a 1 nm change of the
        handle's samples changes as much (tests/test_hybrid_key_display_trace.py)."""
        held_by_pad = self.coupling_pad_alpha_spm is not None
        if self.coupling_k_Npm is None or held_by_pad or self.rigid or self.contact["n"] < 1.0:
            return 0.0
        return float(self._key_own_step_s(MAX_KEY_STEP_S))

    def resting_key_step_s(self, dt_s: float) -> float:
        """``key_step_s`` when the hammer resting on the key (penetration ``rest_penetration_m``, no closing
        speed, approach acceleration g) admits the step a tick of ``dt_s`` (s) takes (:func:`key_steps`), else
        0: then a resting tick takes the sub-steps, as an impact does."""
        step_s = self.key_step_s
        if step_s <= 0.0:
            return 0.0
        tick_s = min(max(float(dt_s), DT_MIN_S), DT_MAX_S)
        n, q = key_steps(tick_s, self.key_substep_s, step_s)
        k, b, n_law = self.contact["k_Npm"], self.contact["b_Nspm"], self.contact["n"]
        m_inv = self.lever_ratio ** 2 / self.key_mass_kg + 1.0 / self.hammer_mass_kg
        weight = self.hammer_mass_kg * self.gravity_mps2            # the resting contact's quasi-static force
        admitted = q > 1 and contact_admits_step(k, b, n_law, self.hammer_mass_kg, m_inv, self.rest_penetration_m,
                                                 0.0, self.gravity_mps2, weight, q * (tick_s / n))
        return step_s if admitted else 0.0

    def substeps_per_tick(self, dt_s: float) -> int:
        """Sub-steps of a tick of ``dt_s`` (s) inside an impact of the hammer, its costliest (:func:`tick_substeps`);
        1 for the rigid law, whose hammer moves with the key in closed form."""
        return 1 if self.rigid else tick_substeps(dt_s, self.substep_s, self.key_substep_s, self.coupling_k_Npm is not None)

    def resting_substeps_per_tick(self, dt_s: float) -> int:
        """Sub-steps of a tick of ``dt_s`` (s) with the hammer resting on the key (:func:`tick_substeps` with the
        steps the resting contact admits, ``resting_key_step_s``); 1 for the rigid law."""
        if self.rigid:
            return 1
        return tick_substeps(dt_s, self.substep_s, self.key_substep_s, self.coupling_k_Npm is not None,
                             self.resting_key_step_s(dt_s))

