"""Seed 003 reproduction for ``hapticam reproduce``: ``EXPERIMENTS["seed003-furuta"]`` (Table V in simulation).

The simulation experiment of sec. IV-A (Table III's truth, 35 s at 1 kHz from 0 / 120 deg, the paper's noise
as read in :mod:`.paper`) is identified three ways, side by side:

- the UAS observer as published (:mod:`.uas`), read out by the paper's rule; its output is the end point of
  eq. 23, which never looks at the data, so it is reported as what the paper's method returns, *not* as
  identified friction;
- hapticam's grey-box fit of the identifiable combinations (:func:`.greybox.fit_greybox`), the default;
- the naive baseline the paper compares with: all ten parameters by Nelder-Mead on the simulation error
  (:func:`.greybox.fit_naive`).

For each: the fit of eq. 53 per joint (a simulation with the method's parameters against the measured
angles), the computation time and its normalisation by eq. 54, and the parameters against Table III's truth.
The quick run (test suite) uses an 8 s record and a small Nelder-Mead budget.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hapticam.errors import IdentificationError
from hapticam.identify.friction import furuta, greybox, paper, uas
from hapticam.identify.friction.plot import angles_figure, estimates_figure
from hapticam.commands.reproduce.papers import Experiment, ReproResult, Row

RATE_HZ = 1.0 / paper.SIM_DT_S
QUICK_DURATION_S = 8.0
NAIVE_EVALS = 2000  # Nelder-Mead's default budget for ten parameters (200 per parameter)
QUICK_NAIVE_EVALS = 30
TIMING_REPEAT = 3  # the UAS observer and the grey-box fit are timed best of 3 (the naive baseline once)

UAS_NOT_IDENTIFIED = ("the UAS observer's parameters are the end points of eq. 23, z* = (gamma + lu zu + ll zl) / "
                      "(lu + ll), reached along exp(-(lu + ll) integral |e| dt) whatever the data: they are what "
                      "the paper's method returns, not identified friction (use the grey-box fit)")


@dataclass
class MethodRuns:
    """The three methods on one record: results, validation simulations (angles) and times (s)."""

    uas: uas.UASResult
    uas_z: np.ndarray
    uas_index: int
    uas_s: float
    grey: greybox.GreyBoxFit
    naive: greybox.NaiveFit
    simulated: dict[str, np.ndarray]


def _warm_up(t: np.ndarray, Xm: np.ndarray) -> None:
    """Compile (or load from the numba cache) every kernel outside the timings."""
    n = 1000
    uas.uas_observe(t[:n], Xm[:n, 2:], Xm[0, :2], paper.TABLE3_GUESS)
    try:                 # 1 s is too short to converge on: only the kernels are wanted here
        greybox.fit_greybox(t[:n], Xm[:n, :2], Xm[:n, 2:])
    except IdentificationError:
        pass
    furuta.simulate(paper.SIM_X0, paper.combinations(paper.TRUTH), duration_s=0.01)


def run_methods(t: np.ndarray, Xm: np.ndarray, naive_evals: int = NAIVE_EVALS) -> MethodRuns:
    """UAS (sec. IV-A read-out), grey-box and naive baseline on the measured record ``Xm`` (n, 4)."""
    _warm_up(t, Xm)
    duration = float(t[-1] - t[0])
    uas_s = math.inf
    for _ in range(TIMING_REPEAT):  # best of TIMING_REPEAT: the machine is shared
        t0 = time.perf_counter()
        res = uas.uas_observe(t, Xm[:, 2:], Xm[0, :2], paper.TABLE3_GUESS)  # from the noisy initial state (IV-A)
        uas_s = min(uas_s, time.perf_counter() - t0)
    z_uas, i_uas = uas.readout_simulation(res)
    grey = min((greybox.fit_greybox(t, Xm[:, :2], Xm[:, 2:]) for _ in range(TIMING_REPEAT)), key=lambda f: f.time_s)
    naive = greybox.fit_naive(t, Xm[:, :2], Xm[0], max_nfev=naive_evals)

    def sim(x0: np.ndarray, fr: np.ndarray) -> np.ndarray:
        return furuta.simulate(x0, fr, duration_s=duration)[1][:, :2]

    simulated = {"grey-box (hapticam)": sim(grey.x0, grey.combos),
                 "UAS read-out (eq. 23 end points)": sim(Xm[0], paper.combinations(z_uas)),
                 f"naive baseline ({naive.nfev} Nelder-Mead evaluations)":
                     sim(Xm[0], paper.combinations(naive.params10)),
                 "Table III's printed UAS estimate": sim(Xm[0], paper.combinations(paper.TABLE3_ESTIMATE))}
    return MethodRuns(res, z_uas, i_uas, uas_s, grey, naive, simulated)


def _pair(a: float, b: float, fmt: str = ".2f") -> str:
    return f"{a:{fmt}} / {b:{fmt}}"


def fit_rows(Xm: np.ndarray, runs: MethodRuns) -> list[Row]:
    """Table V's fit (eq. 53) per joint for every method and for the observer's own tracking."""
    sim = runs.simulated
    paper_uas = _pair(*paper.TABLE5_SIM["uas_fit_pct"])
    paper_opt = _pair(*paper.TABLE5_SIM["opt_fit_pct"])
    labels = list(sim)
    rows = []
    for label, ref in zip(labels, ("-", paper_uas + " (UAS)", paper_opt + " (optimisation)", paper_uas + " (UAS)")):
        fits = [greybox.fit_percent(sim[label][:, j], Xm[:, j]) for j in range(2)]
        rows.append((f"fit eq. 53 arm / pendulum: {label}", _pair(*fits), ref, "%"))
    track = [greybox.fit_percent(runs.uas.q_hat[:, j], Xm[:, j]) for j in range(2)]
    rows.append(("fit eq. 53 arm / pendulum: UAS observer's own q_hat (tracking, not a validation)",
                 _pair(*track), paper_uas + " (UAS)", "%"))
    return rows


def time_rows(duration_s: float, runs: MethodRuns) -> list[Row]:
    """Computation time and eq. 54's normalised time; the speed-up over the paper's UAS (3.43 s)."""
    n_paper = paper.SIM_DURATION_S * RATE_HZ
    rows = []
    for label, ours, theirs in (("UAS observer", runs.uas_s, paper.TABLE5_SIM["uas_time_s"]),
                                ("grey-box fit", runs.grey.time_s, paper.TABLE5_SIM["uas_time_s"]),
                                (f"naive baseline ({runs.naive.nfev} evaluations)", runs.naive.time_s,
                                 paper.TABLE5_SIM["opt_time_s"])):
        tag = "UAS" if theirs == paper.TABLE5_SIM["uas_time_s"] else "optimisation"
        rows.append((f"computation time: {label}", f"{ours:.3f}", f"{theirs:g} ({tag})", "s"))
        rows.append((f"normalised time eq. 54: {label}", f"{greybox.normalised_time(ours, duration_s, RATE_HZ):.3e}",
                     f"{theirs / n_paper:.3e} ({tag})", "s/sample"))
    for label, ours in (("UAS observer", runs.uas_s), ("grey-box fit", runs.grey.time_s)):
        rows.append((f"speed-up over the paper's UAS (3.43 s): {label}",
                     f"{paper.TABLE5_SIM['uas_time_s'] / ours:.0f}x", ">= 10x (required)", "-"))
    return rows


def parameter_rows(runs: MethodRuns) -> list[Row]:
    """The eight identifiable combinations (grey-box, +- 1 standard error) and the ten parameters of every
    method against Table III."""
    truth_c = paper.combinations(paper.TRUTH)
    g = runs.grey
    rows = []
    for name, unit, c, se, tc in zip(greybox.COMBO_NAMES, greybox.COMBO_UNITS, g.combos, g.std_errors, truth_c):
        rows.append((f"grey-box {name}", f"{c:.4g} +- {se:.2g} ({100 * (c / tc - 1):+.2f} %)", f"{tc:.4g} (truth)",
                     unit))
    fixed = {4, 9}  # F_nt: not identifiable, fixed at its nominal value
    for i, name in enumerate(paper.PARAM_NAMES):
        gb = "fixed" if i in fixed else f"{g.params10[i]:.4g}"
        ours = f"{gb} / {runs.uas_z[i]:.4g} / {runs.naive.params10[i]:.4g}"
        rows.append((f"{name}: grey-box / UAS read-out / naive", ours,
                     f"{paper.TRUTH[i]:.4g} (truth); UAS {paper.TABLE3_ESTIMATE[i]:.4g}", "-"))
    return rows


def eq23_rows(runs: MethodRuns) -> list[Row]:
    """Eq. 23's closed form in the run, Table IV as its end points, and what Table III's estimates imply."""
    res, i = runs.uas, runs.uas_index
    closed = uas.eq23_closed_form(paper.TABLE3_GUESS, res.S)
    span = np.abs(paper.TABLE3_GUESS - uas.eq23_end_point())
    dev = float(np.max(np.abs(res.z - closed) / span))
    end = uas.eq23_end_point()
    table4 = float(np.max(np.abs(end / paper.TABLE4_ESTIMATE - 1)))
    gamma = implied_gamma_table3()
    return [("eq. 23 closed form vs the observer's z (max, relative to z0 - z*)", f"{dev:.1e}", "-", "-"),
            ("eq. 23 end points (gamma 5.33e-3) vs Table IV: max difference", f"{100 * table4:.3f}", "Table IV",
             "%"),
            ("UAS read-out: time / S = integral |e| dt / exp(-51 S)",
             f"{res.t_s[i]:.3f} / {res.S[i]:.3f} / {math.exp(-51 * res.S[i]):.1e}",  # lu + ll = 51 (Table II)
             "-", "s / rad / -"),
            ("gamma that Table III's mu_v0 and theta_t0 estimates imply under eq. 23", f"{gamma:.4g}", ">= 0", "-")]


def implied_gamma_table3() -> float:
    """Eq. 23 moves ``mu_v0`` and ``theta_t0`` (same Table II bounds and confidences) along one exponential:
    ``z = z* + (z0 - z*) E`` with the same ``z*`` and ``E``. Table III's guesses and estimates of the two give
    two equations for ``(z*, E)``; ``gamma = (lu + ll) z* - lu zu - ll zl``. A negative value means no
    ``gamma >= 0`` produces those estimates."""
    a, b = 2, 3  # mu_v0, theta_t0 (z3, z4)
    g0, g1 = paper.TABLE3_GUESS[a], paper.TABLE3_GUESS[b]
    e0, e1 = paper.TABLE3_ESTIMATE[a], paper.TABLE3_ESTIMATE[b]
    decay = (e1 - e0) / (g1 - g0)  # E: the difference of the two decays by E exactly
    z_star = (e0 - g0 * decay) / (1.0 - decay)
    lu, ll = paper.TABLE2_LAMBDA_U[a], paper.TABLE2_LAMBDA_L[a]
    return float((lu + ll) * z_star - lu * paper.TABLE2_ZU[a] - ll * paper.TABLE2_ZL[a])


def _figures(out_dir: Path, t: np.ndarray, Xm: np.ndarray, runs: MethodRuns) -> list[Path]:
    truth_c = paper.combinations(paper.TRUTH)
    closed = uas.eq23_closed_form(paper.TABLE3_GUESS, runs.uas.S)
    return [angles_figure(t, Xm[:, :2], runs.simulated, out_dir / "seed003_angles.png"),
            estimates_figure(t, runs.uas.e_norm, runs.uas.z / paper.TRUTH, closed / paper.TRUTH, paper.PARAM_NAMES,
                             runs.grey.combos / truth_c, runs.grey.std_errors / truth_c, greybox.COMBO_NAMES,
                             out_dir / "seed003_estimates.png")]


NOTES = [
    UAS_NOT_IDENTIFIED,
    "choices the paper omits (identify/friction/paper.py): tilt phi = 45 deg; normal forces constant at the "
    "weight each joint carries ((m1 + m2) g, m2 g); gamma = 5.33e-3 (reproduces Table IV); k0 = 0.01; noise "
    "sigma = 0.1 read in degrees (0.1 deg on angles, 0.1 deg/s on rates); F_nt fixed at Table III's 0.01",
    "with constant normal force only F_n mu_d, F_n (mu_s - mu_d), v_t and mu_v tanh(4 F_n / F_nt) act on the "
    "motion: the grey-box fit identifies these eight; F_nt is fixed and mu_d, mu_s, mu_v follow through F_n",
    "model: eq. 7's H11 with m2 L1^2, Coriolis terms derived from H (eq. 8 as printed gains energy), friction "
    "-f(q') with the squared Stribeck term of Brown & McPhee (2016)",
    "times: the UAS observer and the grey-box fit best of 3 runs, the naive baseline one run, all after "
    "compilation (numba cache); the paper's on its machine (MATLAB)",
    "the grey-box validation simulation starts from its fitted initial state; the UAS and naive ones from the "
    "measured (noisy) initial state, as the paper feeds it",
    "Table III's printed UAS estimates are close to the truth, but eq. 23 with Table II cannot produce them: "
    "mu_v0 and theta_t0 share their bounds, so one exponential takes both, which needs a negative gamma",
]


def naive_note(Xm: np.ndarray, runs: MethodRuns) -> str:
    """What the naive baseline shows here: its fit, and how far its ten parameters are from the truth."""
    label = next(k for k in runs.simulated if k.startswith("naive"))
    fits = [greybox.fit_percent(runs.simulated[label][:, j], Xm[:, j]) for j in range(2)]
    worst = float(np.max(np.abs(np.log(runs.naive.params10 / paper.TRUTH))))
    return (f"naive baseline: fit {fits[0]:.2f} / {fits[1]:.2f} % after {runs.naive.nfev} evaluations with "
            f"parameters up to a factor {math.exp(worst):.3g} from the truth: on this (energy-consistent) model a "
            "general-purpose optimiser can match the angles while the ten parameters stay unidentified; the "
            "paper's 12.77 / 2.80 % for its optimiser is not what we see")


def run_seed003(out_dir: Path, quick: bool) -> ReproResult:
    """Table V in simulation (quick: an 8 s record and a small naive budget)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    duration = QUICK_DURATION_S if quick else paper.SIM_DURATION_S
    t, _, Xm = furuta.noisy_record(duration)
    runs = run_methods(t, Xm, QUICK_NAIVE_EVALS if quick else NAIVE_EVALS)
    rows = fit_rows(Xm, runs) + time_rows(duration, runs) + parameter_rows(runs) + eq23_rows(runs)
    notes = list(NOTES) + [naive_note(Xm, runs)]
    if quick:
        notes.append(f"quick run: {duration:g} s record, naive baseline limited to {QUICK_NAIVE_EVALS} evaluations")
    return ReproResult(rows, _figures(out_dir, t, Xm, runs), notes)


EXPERIMENTS: dict[str, Experiment] = {
    "seed003-furuta": Experiment("seed003-furuta",
                                 "Wadi et al.: tilted Furuta pendulum friction, UAS vs grey-box vs naive (Table V)",
                                 run_seed003),
}
