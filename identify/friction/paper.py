"""Seed 003's tables, and every value the paper leaves out, stated once and used everywhere.

Values are copied as printed. Where the paper is silent, hapticam's choice is a named constant here with
its reason; every simulation, fit, test and reproduction imports it from this module.

Values the paper omits (hapticam's choices)
-------------------------------------------
``TILT_PHI_RAD``
    The tilt ``phi`` of eq. 9 is not given: 45 deg, which splits gravity evenly between the arm (restoring
    stiffness ``g sin(phi) (m1 l1 + m2 L1)`` ~ 0.35 N m/rad) and the pendulum (``m2 g l2 cos(phi)`` ~ 0.055
    N m/rad). Of 30, 45 and 60 deg it also gives the smallest worst-case Cramer-Rao bound on the eight
    friction combinations of the 35 s record (30 deg leaves the pendulum's Stribeck pair at 14-16 %).
``FN_N``
    The normal forces ``F_n0``, ``F_n1`` of eq. 5 ("a function of the system parameters as well as the
    state") are held constant at the weight each joint carries: the arm joint ``(m1 + m2) g``, the
    pendulum joint ``m2 g``. With ``F_n`` in N the friction torque ``F_n mu`` is in N m when ``mu`` is read
    as a coefficient times an effective friction radius (m); the tables' ``mu`` values are used as they
    stand. With ``F_n`` constant only ``F_n mu_d``, ``F_n (mu_s - mu_d)``, ``v_t`` and
    ``mu_v tanh(4 F_n / F_nt)`` act on the motion (see :mod:`.greybox`).
``GAMMA``
    The adaptation rate ``gamma`` of eq. 23 is not given: 5.33e-3, the value for which the end points of
    eq. 23 with Table II's bounds reproduce Table IV (see :func:`.uas.eq23_end_point`).
``K0``
    ``k(t0) = k0 > 0`` of eq. 20 is not given: 0.01.
``NOISE_ANGLE_RAD``, ``NOISE_RATE_RADPS``
    "v ~ N(0, sigma = 0.1)" without units: read in the paper's units (degrees; its initial conditions are
    in deg and deg/s): 0.1 deg on the angles and 0.1 deg/s on the angular velocities. Read in rad, 0.1 rad
    of noise on the reference angles alone would cap the fit of eq. 53 far below Table V's 98.97 % (the
    arm's angle varies by a few tenths of a radian about its mean).
``TRUTH_FNT``
    Table III's ``F_nt`` (0.01 N) is far below the normal forces above, so ``tanh(4 F_n / F_nt) = 1`` and
    ``mu_v`` is the viscous coefficient itself.

Printed slips (checked numerically in the tests)
------------------------------------------------
- eq. 5 drops the square of the Stribeck denominator (Brown & McPhee 2016 has it);
- eq. 7 (H11) omits ``m2 L1^2`` (5.97e-3 kg m^2, larger than ``j1z``);
- eq. 8's Coriolis/centrifugal terms are not those of eq. 7's inertia matrix (a friction-free simulation
  with them gains energy);
- eqs. 6 and 10 put friction on the right-hand side with the sign of the velocity, which would feed the
  motion; friction enters as ``Q = -f(q')``;
- eq. 3 multiplies the rotational energy by ``m_i`` (dimensionally wrong; eq. 7 does not).
"""

from __future__ import annotations

import math

import numpy as np

G_MPS2 = 9.81  # gravity (m/s^2); the paper's g

# -- Table I: the Furuta pendulum ------------------------------------------------------------------------
M1_KG, M2_KG = 0.370, 0.128
J1Z_KGM2 = 3.09e-3
J2X_KGM2, J2Y_KGM2, J2Z_KGM2 = 5.25e-3, 5.25e-3, 2.91e-6
L1_CG_M, L2_CG_M = 0.0620, 0.0620  # l1 = OG1, l2 = AG2
L1_M, L2_M = 0.216, 0.316  # L1 = OA, L2 = AB (total lengths)

# -- values the paper omits (module docstring) -------------------------------------------------------
TILT_PHI_RAD = math.radians(45.0)
FN_N = np.array([(M1_KG + M2_KG) * G_MPS2, M2_KG * G_MPS2])  # normal force in joint 0 (arm), 1 (pendulum)
GAMMA = 5.33e-3
K0 = 0.01
NOISE_ANGLE_RAD = math.radians(0.1)
NOISE_RATE_RADPS = math.radians(0.1)

# -- sec. IV-A: the simulation experiment -----------------------------------------------------------------
SIM_DT_S = 1e-3  # RK4 at 1 kHz
SIM_DURATION_S = 35.0  # Table V
SIM_X0 = np.array([0.0, math.radians(120.0), 0.0, 0.0])  # theta0, theta1 (rad), theta0', theta1' (rad/s)
RECORD_SEED = 3  # the noise draw of the simulated record every comparison uses (hapticam's choice)
READOUT_SIM = 0.01  # |e| threshold of the simulation read-out (sec. IV-A)
READOUT_EXP = 0.05  # |e| threshold of the experiment read-out (sec. IV-B)

#: parameter order of eqs. 17-18: z1..z5 (arm), z6..z10 (pendulum)
PARAM_NAMES = ("mu_d0", "mu_s0", "mu_v0", "theta_t0", "F_nt0", "mu_d1", "mu_s1", "mu_v1", "theta_t1", "F_nt1")

# -- Table II: bounds and confidences of eq. 23 -----------------------------------------------------------
TABLE2_ZL = np.full(10, 2.22e-16)
TABLE2_ZU = np.array([0.0750, 0.0750, 0.0100, 0.0100, 0.1, 0.150, 0.151, 0.0100, 0.0100, 0.100])
TABLE2_LAMBDA_L = np.full(10, 50.0)
TABLE2_LAMBDA_U = np.full(10, 1.0)

# -- Table III: simulation (truth, initial guess, the UAS estimate) ---------------------------------------
TRUTH = np.array([5e-4, 6e-4, 2.5e-4, 5e-3, 10e-3, 6e-4, 7e-4, 2.5e-4, 5e-3, 10e-3])
TRUTH_FNT = TRUTH[[4, 9]]
TABLE3_GUESS = np.array([5.135e-3, 5.875e-3, 2.531e-3, 4.853e-2, 1.029e-1,
                         5.705e-3, 6.683e-3, 2.399e-3, 4.820e-2, 9.720e-2])
TABLE3_ESTIMATE = np.array([4.793e-4, 5.740e-4, 2.424e-4, 4.742e-3, 9.479e-3,
                            5.740e-4, 6.688e-4, 2.424e-4, 4.742e-3, 9.479e-3])

# -- Table IV: experiment (initial guess, the UAS estimate) -----------------------------------------------
TABLE4_GUESS = np.array([1.090e-2, 8.239e-3, 4.971e-3, 2.726e-3, 1.297e-2,
                         1.957e-2, 1.796e-2, 1.607e-2, 1.342e-2, 9.213e-3])
TABLE4_ESTIMATE = np.array([1.575e-3, 1.575e-3, 3.006e-4, 3.006e-4, 2.065e-3,
                            3.046e-3, 3.065e-3, 3.006e-4, 3.006e-4, 2.065e-3])

# -- Table V: computation time and fit (eq. 53) -----------------------------------------------------------
TABLE5_SIM = {"uas_time_s": 3.43, "uas_fit_pct": (98.97, 99.53), "opt_time_s": 4504.6, "opt_fit_pct": (12.77, 2.80)}
TABLE5_EXP = {"duration_s": 20.28, "uas_time_s": 19.49, "uas_fit_pct": (77.84, 91.99), "opt_time_s": 10373.7,
              "opt_fit_pct": (3.40, 24.11)}


def combinations(z: np.ndarray, fn_N: np.ndarray = FN_N) -> np.ndarray:
    """The four friction combinations per joint that act on the motion, from the ten parameters of eq. 5.

    Returns ``[c1, c2, v_t, c4]`` for joint 0 then joint 1: ``c1 = F_n mu_d`` (N m), ``c2 = F_n (mu_s -
    mu_d)`` (N m), ``v_t`` (rad/s), ``c4 = mu_v tanh(4 F_n / F_nt)`` (N m s/rad)  (seed 003 eq. 5).
    """
    z = np.asarray(z, dtype=np.float64)
    out = np.empty(8)
    for j in range(2):
        mu_d, mu_s, mu_v, v_t, f_nt = z[5 * j:5 * j + 5]
        out[4 * j:4 * j + 4] = (fn_N[j] * mu_d, fn_N[j] * (mu_s - mu_d), v_t,
                                mu_v * math.tanh(4.0 * fn_N[j] / f_nt))  # seed 003 eq. 5, term by term
    return out


def parameters_from_combinations(c: np.ndarray, f_nt: np.ndarray = TRUTH_FNT,
                                 fn_N: np.ndarray = FN_N) -> np.ndarray:
    """The ten parameters of eq. 5 from the combinations, with ``F_nt`` fixed (it cannot be identified)."""
    z = np.empty(10)
    for j in range(2):
        c1, c2, v_t, c4 = c[4 * j:4 * j + 4]
        z[5 * j:5 * j + 5] = (c1 / fn_N[j], (c1 + c2) / fn_N[j], c4 / math.tanh(4.0 * fn_N[j] / f_nt[j]), v_t,
                              f_nt[j])  # inverse of :func:`combinations`
    return z
