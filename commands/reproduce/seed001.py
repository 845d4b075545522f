"""Seed 001 reproduction for ``hapticam reproduce``: ``EXPERIMENTS["seed001-test-device"]`` (Figs. 3-4).

Seed 001 section 5: a 90 s, 1-4 Hz swept sine over the test device's 50 mm range at 4 kHz; samples grouped by
direction of travel and sorted by position; EWLS with forgetting factor 0.999 over position (Table 1,
eqs. 9-11) read at 1 mm (Fig. 3); then a 2 Hz sinusoid predicted by the model (Fig. 4). Here the same run
goes through hapticam's pipeline (:func:`~hapticam.identify.impedance.fit.identify_impedance`: the EWLS
profile on the 1 mm grid, then the segmented model section 6 proposes), on the device of
:mod:`.reproduce_seed001_device`, and is compared with the device's true parameters and true force
(:mod:`.reproduce_seed001_profile`). The quick run (test suite) sweeps 20 s on a 2 mm grid.

Reading the paper:

- "over a 50 mm range" is the peak-to-peak travel: amplitude 25 mm about 25 mm;
- eq. 9 writes the regressor as a row vector, Table 1 uses it as a column (``P phi``, ``phi' P phi``);
  Table 1(c) names ``e(i)`` the error of step ``i + 1``;
- eqs. 2-6 expand ``f`` about ``v_o = 0``, where Coulomb friction has no derivative; only eq. 8's split by
  direction makes the offsets ``F_o+- = F_spring(x) - k x +- Fc`` (``F_o+ - F_o- = 2 Fc``);
- the EWLS estimate at a position weighs the previous ``1 / (1 - lam) = 1000`` position-sorted samples, a
  window counted in samples: how many millimetres it spans depends on how densely the sweep visits each
  position. Within it ``x`` hardly varies, so ``k`` and ``F0`` are nearly collinear: at the start of
  travel, where the turnarounds pack thousands of samples into micrometres, Table 1 as printed winds up
  (its covariance along ``k`` grows far past that of one RMS sample) and the stiffness wanders; elsewhere
  the estimate trails the true stiffness (the sort is ascending) by a lag the window's moments predict.
  The pipeline bounds the covariance, which holds the start but, on sorted data, suspends forgetting in
  most steps: a longer lag, absorbed by m and b where k changes. Both are measured (rows "Table 1 as
  printed" and "pipeline, bounded P");
- Figs. 3 and 4 carry no numbers in the text: the constants below are what it states.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hapticam.identify.impedance.fit import identify_impedance, predict_force
from hapticam.identify.impedance.result import ImpedanceFit
from hapticam.identify.metrics import fit_report
from hapticam.identify.preprocess import prepare
from hapticam.commands.reproduce.papers import Experiment, ReproResult, Row
from hapticam.commands.reproduce.seed001_device import (FIG3_CONSTANT_END_M, SEC5_RATE_HZ, Seed001Device,
                                                        commanded_path, probe_capture)
from hapticam.commands.reproduce.seed001_profile import (DEPARTURE, END_MARGIN_M, predicted_lag_m, profile_numbers,
                                                         profiles, segment_numbers, sorted_samples,
                                                         true_leaves_first_range_m)

NAME = "seed001-test-device"
#: seed 001 section 5: the swept sine's length (s) and band (Hz)
SEC5_SWEEP_S, SEC5_BAND_HZ = 90.0, (1.0, 4.0)
#: seed 001 section 5: the forgetting factor, and Fig. 3's grid (m)
SEC5_FORGETTING, FIG3_GRID_M = 0.999, 1e-3
#: seed 001 section 5, Fig. 4: the validation sinusoid (Hz)
FIG4_VALIDATION_HZ = 2.0
#: seed 001 section 5 on Fig. 3: "The damping is estimated to be zero", without the dashpot (N s/m)
FIG3_DAMPING_NSPM = 0.0
#: the derivative filter's start-up at each end of a record (s), left out of the validation's metrics
EDGE_S = 0.1


@dataclass(frozen=True)
class Settings:
    """A run's sweep length (s), grid (m) and validation length (s)."""

    sweep_s: float
    grid_m: float
    validation_s: float


FULL = Settings(SEC5_SWEEP_S, FIG3_GRID_M, 5.0)
QUICK = Settings(20.0, 2e-3, 2.0)


def validation(device: Seed001Device, fit: ImpedanceFit, settings: Settings, seed: int) -> dict[str, object]:
    """Fig. 4: the model's force along a measured 2 Hz sinusoid (derivatives from the measured position, as
    in identification) against the measured and the true force, :data:`EDGE_S` from each end."""
    path = commanded_path(settings.validation_s, FIG4_VALIDATION_HZ, FIG4_VALIDATION_HZ)
    capture, truth = probe_capture(device, path, seed, "seed 001 validation, 2 Hz")
    prep = prepare(capture, dead_band_mps=0.0)
    predicted = predict_force(fit.model, prep.x, prep.v, prep.a, dt_s=1.0 / SEC5_RATE_HZ)
    inner = (capture.t_s >= EDGE_S) & (capture.t_s <= capture.t_s[-1] - EDGE_S)
    return {"t_s": capture.t_s, "measured_N": capture.f_N, "true_N": truth, "predicted_N": predicted,
            "vs_truth": fit_report(truth[inner], predicted[inner]),
            "vs_measured": fit_report(capture.f_N[inner], predicted[inner]),
            "max_with_edges_N": float(np.max(np.abs(predicted - truth)))}


def _both(fmt: str, press: float, release: float) -> str:
    return f"{press:{fmt}} / {release:{fmt}}"


def profile_rows(device: Seed001Device, nums: dict[str, dict[int, dict[str, float]]],
                 lag_predicted: dict[int, float]) -> list[Row]:
    """Fig. 3: Table 1 as printed, then the pipeline's bounded profile; two numbers are press / release."""
    rows: list[Row] = []
    leaves = 1e3 * true_leaves_first_range_m(device)
    inner = f"{1e3 * END_MARGIN_M:g} mm inside the travel"
    for key, label in (("table1", "Table 1 as printed"), ("pipeline", "pipeline, bounded P")):
        p, r = nums[key][1], nums[key][-1]
        rows += [(f"{label}: forgetting suspended", _both(".1f", p["bounded_pct"], r["bounded_pct"]), "-",
                  "% of steps"),
                 (f"{label}: max k error, settled cells", _both(".2f", p["k_error_pct"], r["k_error_pct"]),
                  "'closely matches' (Fig. 3)", "%"),
                 (f"{label}: lag behind k(x) at the springs", _both(".2f", 1e3 * p["lag_m"], 1e3 * r["lag_m"]), "-",
                  "mm"),
                 (f"{label}: max |b|, {inner}", _both(".3f", p["b_max"], r["b_max"]),
                  f"{FIG3_DAMPING_NSPM:g} (sec. 5, Fig. 3)", "N s/m"),
                 (f"{label}: m min to max, {inner} (truth 0.25)", f"{min(p['m_min'], r['m_min']):.3f} to "
                  f"{max(p['m_max'], r['m_max']):.3f}", "'tracks, with some variation' (Fig. 3)", "kg"),
                 (f"{label}: k leaves first range by {100 * DEPARTURE:g} % (truth {leaves:.2f})",
                  _both(".2f", 1e3 * p["k_leaves_m"], 1e3 * r["k_leaves_m"]),
                  f"{1e3 * FIG3_CONSTANT_END_M:g} (sec. 6, Fig. 3)", "mm"),
                 (f"{label}: k min to max over the first {1e3 * END_MARGIN_M:g} mm (truth 200)",
                  f"{min(p['k_start_min'], r['k_start_min']):.0f} to {max(p['k_start_max'], r['k_start_max']):.0f}",
                  "-", "N/m")]
    rows.insert(3, ("Table 1 as printed: lag predicted by the window's moments",
                    _both(".2f", 1e3 * lag_predicted[1], 1e3 * lag_predicted[-1]), "-", "mm"))
    return rows


def model_rows(device: Seed001Device, seg: dict[int, dict[str, object]], check: dict[str, object]) -> list[Row]:
    """The segmented model (sec. 6) against the truth, and Fig. 4's validation."""
    bps = [", ".join(f"{1e3 * x:.3g}" for x in seg[d]["breakpoints_m"][1:-1]) for d in (1, -1)]
    truth, meas = check["vs_truth"], check["vs_measured"]
    changes = ", ".join(f"{1e3 * x_i:.3g}-{1e3 * (x_i + w_i):.3g}" for _k, x_i, w_i in device.springs)
    edges = f"{EDGE_S:g} s from the ends"
    return [
        (f"segments: breakpoints (k changes over {changes})", " / ".join(bps), "- (proposed in sec. 6)", "mm"),
        ("segments: max k error in constant ranges", _both(".2f", seg[1]["k_error_pct"], seg[-1]["k_error_pct"]),
         "-", "%"),
        ("segments: m min to max (truth 0.25)", f"{min(seg[1]['m'][0], seg[-1]['m'][0]):.3f} to "
         f"{max(seg[1]['m'][1], seg[-1]['m'][1]):.3f}", "-", "kg"),
        ("segments: max b", f"{max(seg[1]['b'][1], seg[-1]['b'][1]):.3f}", f"{FIG3_DAMPING_NSPM:g} (sec. 5)", "N s/m"),
        (f"segments: F0+ - F0- at the start (truth 2 Fc = {2 * device.coulomb_N:g})",
         f"{seg[1]['f0_first_N'] - seg[-1]['f0_first_N']:.3f}", "friction (eq. 6)", "N"),
        (f"2 Hz validation, {edges}: fit eq. 53 vs true / measured force",
         _both(".4f", truth["fit_percent"], meas["fit_percent"]), "'closely predicts' (Fig. 4)", "%"),
        (f"2 Hz validation, {edges}: RMS error vs true / measured", _both(".4f", truth["rms_N"], meas["rms_N"]),
         "-", "N"),
        (f"2 Hz validation: max error vs true force, {edges} / whole record",
         _both(".3f", truth["max_N"], check["max_with_edges_N"]), "-", "N"),
    ]


def run(out_dir: Path, quick: bool) -> ReproResult:
    """Identify the device from the swept sine, validate on the 2 Hz sinusoid, write the two figures."""
    from hapticam.commands.reproduce.seed001_plot import parameters_figure, validation_figure

    settings, device, lam = (QUICK if quick else FULL), Seed001Device(), SEC5_FORGETTING
    capture, _truth = probe_capture(device, commanded_path(settings.sweep_s, *SEC5_BAND_HZ), 0,
                                    "seed 001 swept sine, 1-4 Hz")
    start = time.perf_counter()
    fit = identify_impedance(capture, forgetting=lam, grid_m=settings.grid_m)
    seconds = time.perf_counter() - start
    profs = {d: profiles(fit, d, lam) for d in (1, -1)}
    xs = {d: sorted_samples(fit, d)[0] for d in (1, -1)}
    nums = {key: {d: profile_numbers(device, profs[d][key], xs[d], lam) for d in (1, -1)}
            for key in ("table1", "pipeline")}
    check = validation(device, fit, settings, 1)
    rows = [("swept sine: length, band, range, rate", f"{settings.sweep_s:g} s, 1-4 Hz, 50 mm, 4 kHz",
             "90 s, 1-4 Hz, 50 mm, 4 kHz (sec. 5)", "-"),
            ("forgetting factor / grid", f"{lam:g} / {1e3 * settings.grid_m:g}",
             f"{SEC5_FORGETTING:g} / {1e3 * FIG3_GRID_M:g} (sec. 5, Fig. 3)", "- / mm")]
    rows += profile_rows(device, nums, {d: predicted_lag_m(device, xs[d], lam) for d in (1, -1)})
    rows += model_rows(device, {d: segment_numbers(device, fit, d) for d in (1, -1)}, check)
    rows.append(("identification time (shared machine)", f"{seconds:.1f}", "-", "s"))
    figures = [parameters_figure(device, fit, profs, out_dir / "seed001_parameters.png"),
               validation_figure(check, out_dir / "seed001_validation.png")]
    notes = [f"identification: {n}" for n in fit.notes]
    if quick:
        notes.append(f"quick run: {settings.sweep_s:g} s sweep on a {1e3 * settings.grid_m:g} mm grid")
    return ReproResult(rows, figures, notes)


EXPERIMENTS = {NAME: Experiment(NAME, "Colton & Hollerbach: EWLS over position and segmented impedance of the "
                                      "nonlinear test device (Figs. 3-4)", run)}
