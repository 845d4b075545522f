"""``--method uas``: seed 003's observer run on a product capture, and what its output is (and is not).

The UAS observer (:mod:`hapticam.identify.friction.uas`, seed 003 eqs. 16-23) is built around the tilted
Furuta pendulum; a knob's measured speed drives its first joint (the second held at rest). Its ten
parameters obey eq. 23, ``z' = (gamma + lu (zu - z) + ll (zl - z)) |e|``, which does not contain the
friction or any measured force: every parameter moves along the same exponential in ``S = integral |e| dt``
toward the fixed point ``z* = (gamma + lu zu + ll zl) / (lu + ll)`` set by Table II's bounds and gamma.
What it reports is therefore how far along that exponential the run went, not identified friction; the
report says so and gives the distance of the read-out from ``z*``.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from hapticam.capture import Capture
from hapticam.errors import HapticError
from hapticam.identify.friction.product import LawFit
from hapticam.identify.friction.spin_down import derivatives

NOT_IDENTIFIED = ("--method uas: seed 003's UAS observer; its adaptation law (eq. 23) never uses the data's "
                  "friction, so these parameters are the end points of eq. 23 set by Table II's bounds and gamma, "
                  "NOT identified friction (use --method ls)")


def run_uas(captures: Sequence[Capture], law: str) -> tuple[LawFit, dict[str, Any]]:
    """Run the observer on the first capture's speed; return its arm-joint read-out as a law and a report."""
    from hapticam.identify.friction import paper
    from hapticam.identify.friction.uas import eq23_end_point, readout_experiment, uas_observe

    cap = captures[0]
    w, _ = derivatives(cap.t_s, cap.x_m)
    w_meas = np.column_stack([w, np.zeros_like(w)])          # the knob as the arm joint, the pendulum at rest
    z0 = 0.5 * (np.asarray(paper.TABLE2_ZL) + np.asarray(paper.TABLE2_ZU))   # mid-range of Table II's bounds
    t = cap.t_s[0] + np.arange(w.size) * cap.dt_s             # uniform times, as the observer requires
    report: dict[str, Any] = {"method": "uas", "identified": False, "statement": NOT_IDENTIFIED}
    z_star = eq23_end_point()
    try:
        res = uas_observe(t, w_meas, np.array([cap.x_m[0], 0.0]), z0)
        z, (i0, i1) = readout_experiment(res, w_meas)
        report["readout_samples"] = [int(i0), int(i1)]
        report["S_final"] = float(res.S[-1])
    except HapticError as exc:
        z = z_star
        report["observer"] = f"{exc}; reporting eq. 23's end point z*, where the parameters go whatever the data"
    report["parameters"] = dict(zip(paper.PARAM_NAMES, map(float, z)))
    report["eq23_end_point"] = dict(zip(paper.PARAM_NAMES, map(float, z_star)))
    report["relative_distance_from_end_point"] = float(np.max(np.abs(z - z_star) / np.abs(z_star)))
    fn = float(paper.FN_N[0])
    mu_d, mu_s, mu_v, theta_t, f_nt = (float(v) for v in z[:5])
    levels = {"coulomb": fn * mu_d, "stribeck_peak": max(fn * (mu_s - mu_d), 0.0),
              "viscous": mu_v * float(np.tanh(4.0 * fn / f_nt)), "shape_speed": theta_t}   # seed 003 eq. 5 levels
    nan = float("nan")
    fit = LawFit(law, levels, {k: nan for k in ("coulomb", "stribeck_peak", "viscous", "shape_speed", "static")},
                 notes=[NOT_IDENTIFIED, f"the read-out is within {100 * report['relative_distance_from_end_point']:.3g} % "
                                        "of eq. 23's end point z* (every parameter)"])
    if "observer" in report:
        fit.notes.append(report["observer"])
    return fit, report
