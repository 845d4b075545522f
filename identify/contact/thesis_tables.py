"""Numbers printed in seed 004 (Agar's thesis) that its arithmetic can be checked against.

Values are copied as printed (three significant figures in most tables). Known slips of the text:

- Table C-2's footnote gives the aluminium law as ``F = 2.01e8 d^2.27``; Table 3-5 and the displacements
  of Table C-2 itself need ``n = 1.27``.
- The tables use ``k_SMT = 3.46e6`` N/m while the two SMT experiments gave 3.3e6 and 3.6e6 N/m (sec. 3.3.2),
  whose mean is 3.45e6 N/m; the rounding is the thesis's.
- Table 3-7's 300 N entries for the prism (6.48e6) and the cube (9.12e6) are the experiment #2 values of
  Tables C-6 and C-7 (experiment #1: 6.47e6 and 9.10e6).
- The error columns of Tables 3-8/3-9 print ``|eq. 3.5|`` (e.g. 14.85 % where ``k_calc > k_payload``).
"""

from __future__ import annotations

K_SMT_NPM = 3.46e6  # Tables 3-8, 3-9
K_SMT_EXPERIMENTS_NPM = (3.3e6, 3.6e6)  # sec. 3.3.2

#: Table 3-8 (aluminium half-sphere, experiment #1): load (N), k_SMT+payload, k_calc, k_payload, |error| %
TABLE_3_8 = ((50, 1.99e6, 4.69e6, 7.99e6, 41.30), (100, 2.53e6, 9.39e6, 9.20e6, 2.06),
             (150, 2.57e6, 9.97e6, 1.00e7, 0.44), (200, 2.70e6, 1.22e7, 1.06e7, 14.85),
             (250, 2.78e6, 1.40e7, 1.11e7, 25.98), (300, 2.80e6, 1.46e7, 1.16e7, 26.41))
#: Table 3-9 (plastic half-sphere, experiment #1), same columns
TABLE_3_9 = ((50, 1.39e6, 2.33e6, 3.17e6, 26.47), (100, 1.66e6, 3.17e6, 3.67e6, 13.54),
             (150, 1.75e6, 3.52e6, 4.00e6, 11.94), (200, 1.86e6, 4.01e6, 4.25e6, 5.68),
             (250, 1.94e6, 4.39e6, 4.47e6, 1.61), (300, 1.96e6, 4.50e6, 4.64e6, 2.98))

#: Table 3-5: n and k (N/m^n) of F = k d^n from the Instron tests
TABLE_3_5 = {"aluminium half-sphere": (1.27, 2.01e8), "plastic half-sphere": (1.28, 7.00e7),
             "plastic cone": (1.32, 4.98e7), "plastic pyramid": (1.26, 1.57e7),
             "plastic prism": (1.42, 4.34e8), "plastic cube": (1.34, 3.08e8)}
#: Appendix C, experiment #1: average loads (N) at the six load levels (Tables C-2 to C-7)
LOADS_C = {"aluminium half-sphere": (52.00, 100.80, 149.80, 198.79, 247.89, 297.00),
           "plastic half-sphere": (50.40, 97.82, 144.77, 192.71, 240.48, 287.45),
           "plastic cone": (50.84, 98.59, 146.43, 194.49, 242.44, 290.47),
           "plastic pyramid": (51.02, 98.78, 146.48, 194.16, 242.79, 290.90),
           "plastic prism": (50.83, 98.61, 146.35, 194.19, 241.95, 290.23),
           "plastic cube": (50.07, 97.28, 145.24, 192.99, 241.87, 288.40)}
#: Table 3-7: secant stiffness (N/m) at the six load levels
TABLE_3_7 = {"aluminium half-sphere": (7.99e6, 9.20e6, 1.00e7, 1.06e7, 1.11e7, 1.16e7),
             "plastic half-sphere": (3.17e6, 3.67e6, 4.00e6, 4.25e6, 4.47e6, 4.64e6),
             "plastic cone": (1.76e6, 2.06e6, 2.27e6, 2.43e6, 2.57e6, 2.68e6),
             "plastic pyramid": (1.16e6, 1.33e6, 1.44e6, 1.52e6, 1.60e6, 1.66e6),
             "plastic prism": (3.87e6, 4.70e6, 5.29e6, 5.75e6, 6.13e6, 6.48e6),
             "plastic cube": (5.83e6, 6.90e6, 7.64e6, 8.22e6, 8.70e6, 9.12e6)}

#: Hertz inputs (sec. 3.4.2, footnote 3): radius (m), steel half-space (E Pa, nu), specimens (E Pa, nu)
HERTZ_RADIUS_M = 0.0287
HERTZ_HALF_SPACE = (200e9, 0.29)
HERTZ_SPECIMENS = {"aluminium": ((70e9, 0.33), 1.3e10), "plastic": ((2.75e9, 0.3), 7.0e8)}

#: sec. 5.2.1 and Table 5-2: inputs (k N/m, b N s/m, mu) and the unmodified-geometry errors (%)
GRAVITY_DROP_INPUTS = (1e5, 38.37, 0.10)
GRAVITY_DROP_ERRORS_PCT = (0.01, 2.16, 2.80)
ACU_MASS_KG, ACU_ZETA = 9.2, 0.02

#: sec. 3.6.2: position accuracy (m), force resolution (N), displacement (m) and load (N) for eq. 3.5
HARDWARE_ERROR = (0.2e-3, 0.5, 0.4e-3, 400.0, 0.5)
#: sec. 3.6.1: ILS stiffness error (%) for initial guesses 1e10, 1e11, 1e12 N/m (truth ~1e6 N/m)
ILS_GUESS_ERRORS_PCT = {1e10: 0.5, 1e11: 4.5, 1e12: 45.0}
