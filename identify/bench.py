"""``hapticam bench identify``: the EWLS core against its peers on seed 001's data size.

Seed 001 section 5 captures 90 s at 4 kHz: 360,000 samples of ``phi = [a v x 1]`` (eq. 9). On the same
data, in one run, this times

- hapticam's compiled EWLS recursion (seed 001 Table 1; :func:`hapticam.identify.ewls.ewls_kernel`, the
  core, and :func:`~hapticam.identify.ewls.ewls_fit`, the core plus scaling and checks),
- padasip's ``FilterRLS`` (the recursive least-squares filter a Python user would pick), and
- NumPy's batch least squares (``numpy.linalg.lstsq``), which gives only the final estimate,

and reports the times (best of ``repeat``) and the ratios. Absolute times drift on shared machines; the
ratios are the result.

It also times the whole impedance pipeline (:func:`hapticam.identify.impedance_fit.identify_impedance`,
passive constrained fit and hold-out check included) on each capture of a folder (by default the
repository's twelve real switch captures), beside the same pipeline without the passivity constraints
(``allow_active``), so the constrained fit's share shows as a ratio.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from hapticam.identify.ewls import ewls_fit, ewls_kernel
from hapticam.identify.timing import best_of as _best


def bench_data(n: int = 360_000, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``(phi, y)``: a 1-4 Hz swept sine over 50 mm at 4 kHz through ``m a + b v + k x + F0`` plus noise."""
    rng = np.random.default_rng(seed)
    fs, seconds = 4000.0, n / 4000.0
    t = np.arange(n) / fs
    phase = 2 * np.pi * (t + 1.5 * t * t / seconds)  # 1 -> 4 Hz linear chirp
    w = 2 * np.pi * (1.0 + 3.0 * t / seconds)
    x = 0.025 - 0.025 * np.cos(phase)
    v = 0.025 * np.sin(phase) * w
    a = 0.025 * np.cos(phase) * w * w
    phi = np.column_stack([a, v, x, np.ones(n)])
    y = phi @ np.array([0.5, 8.0, 800.0, 1.0]) + rng.normal(0.0, 0.05, n)
    return phi, y


def run_bench(n: int = 360_000, repeat: int = 3, lam: float = 0.999, padasip: bool = True) -> dict[str, Any]:
    """Time the EWLS core, ``ewls_fit``, padasip's RLS and NumPy's batch solve on ``n`` samples."""
    phi, y = bench_data(n)
    p = phi.shape[1]
    s = np.sqrt(np.mean(phi * phi, axis=0))
    phis = np.ascontiguousarray(phi / s)
    theta_out = np.empty((n, p))
    pdiag = np.empty((n, p))
    err = np.empty(n)
    no_rec = np.zeros(0, dtype=np.int64)
    p_rec = np.empty((0, p, p))

    def core() -> np.ndarray:
        theta = np.zeros(p)
        P = np.eye(p) * 1e8
        ewls_kernel(phis, y, lam, theta, P, 1.0, theta_out, pdiag, err, no_rec, p_rec)
        return theta / s

    core()  # compile (or load from the numba cache) outside the timing
    ewls_fit(phi[:100], y[:100], lam)
    results: dict[str, Any] = {"samples": n, "regressors": p, "forgetting": lam, "repeat": repeat}
    t_core, th_core = _best(core, repeat)
    t_fit, _ = _best(lambda: ewls_fit(phi, y, lam), repeat)
    t_batch, th_batch = _best(lambda: np.linalg.lstsq(phi, y, rcond=None)[0], repeat)
    results["hapticam_ewls_core_s"] = t_core
    results["hapticam_ewls_fit_s"] = t_fit
    results["numpy_lstsq_s"] = t_batch
    results["core_over_lstsq"] = t_core / t_batch
    results["max_rel_diff_lam1_vs_lstsq"] = float(
        np.max(np.abs(ewls_fit(phi, y, 1.0).theta - th_batch) / np.abs(th_batch)))
    results["theta_core"] = th_core.tolist()
    if padasip:
        try:
            import padasip as pa
        except ImportError:
            results["padasip_s"] = None
            results["padasip_note"] = "padasip is not installed (pip install padasip)"
        else:
            def peer() -> np.ndarray:
                filt = pa.filters.FilterRLS(n=p, mu=lam, eps=1e-6, w="zeros")
                _, _, w = filt.run(y, phis)
                return w[-1] / s

            t_pa, th_pa = _best(peer, 1)
            results["padasip_s"] = t_pa
            results["padasip_over_core"] = t_pa / t_core
            results["theta_padasip"] = th_pa.tolist()
    from hapticam.identify.friction.bench import bench_friction

    results["friction"] = bench_friction(quick=n < 100_000, repeat=repeat)  # seed 003: UAS, grey-box, naive
    from hapticam.identify.hybrid.hopper_bench import bench_hopper

    results["hopper"] = bench_hopper(quick=n < 100_000, repeat=repeat)  # seed 002: Fig. 3 fit vs solve_ivp
    return results


#: the repository's real switch captures (present in a source checkout or an editable install)
DEFAULT_CAPTURES = Path(__file__).resolve().parent.parent / "tests" / "data" / "switch_curves"


def run_pipeline_bench(folder: Path | None = None, repeat: int = 3) -> list[dict[str, Any]]:
    """Seconds per capture of the whole impedance pipeline, passive (default) and unconstrained."""
    from hapticam.capture_io import load_capture
    from hapticam.identify.impedance_fit import identify_impedance

    paths = sorted(Path(folder or DEFAULT_CAPTURES).glob("*.csv"))
    rows = []
    for path in paths:
        capture = load_capture(path)
        identify_impedance(capture)                    # compile (or load from the numba cache) first
        t_passive, fit = _best(lambda: identify_impedance(capture), repeat)
        t_free, _ = _best(lambda: identify_impedance(capture, allow_active=True), repeat)
        rows.append({"capture": path.name, "samples": capture.n, "pipeline_s": t_passive,
                     "unconstrained_s": t_free, "ratio": t_passive / t_free,
                     "fit_percent": fit.summary["fit_percent"],
                     "holdout_fit_percent": fit.summary["holdout"]["fit_percent"]})
    return rows


def format_table(r: dict[str, Any]) -> str:
    """The results as a small text table."""
    rows = [("hapticam EWLS core (numba)", r["hapticam_ewls_core_s"], 1.0),
            ("hapticam ewls_fit (core + checks)", r["hapticam_ewls_fit_s"], r["hapticam_ewls_fit_s"] / r["hapticam_ewls_core_s"]),
            ("numpy lstsq (batch, final only)", r["numpy_lstsq_s"], r["numpy_lstsq_s"] / r["hapticam_ewls_core_s"])]
    if r.get("padasip_s") is not None:
        rows.append(("padasip FilterRLS", r["padasip_s"], r["padasip_over_core"]))
    lines = [f"EWLS on {r['samples']:,} samples x {r['regressors']} regressors, lambda {r['forgetting']}",
             f"{'method':<36}{'time s':>10}{'x core':>10}", "-" * 56]
    lines += [f"{name:<36}{t:>10.4f}{ratio:>10.2f}" for name, t, ratio in rows]
    if r.get("padasip_s") is None and "padasip_note" in r:
        lines.append(f"padasip: {r['padasip_note']}")
    lines.append(f"lambda = 1 vs lstsq: max relative difference {r['max_rel_diff_lam1_vs_lstsq']:.2e}")
    if r.get("contact"):
        from hapticam.identify.contact.bench import format_rows

        lines += ["", "recursive contact estimators (seed 004) against their peers, same data", format_rows(r["contact"])]
    if r.get("friction"):
        from hapticam.identify.friction.bench import format_rows as friction_rows

        lines += ["", friction_rows(r["friction"])]
    if r.get("hopper"):
        from hapticam.identify.hybrid.hopper_bench import format_rows as hopper_rows

        lines += ["", hopper_rows(r["hopper"])]
    if r.get("piano_key"):
        from hapticam.identify.hybrid.key_bench import format_key_rows

        lines += ["", format_key_rows(r["piano_key"])]
    pipe = r.get("pipeline") or []
    if pipe:
        lines += ["", f"{'whole pipeline per capture':<34}{'samples':>8}{'passive s':>11}{'free s':>9}"
                      f"{'ratio':>7}{'fit %':>8}{'held-out %':>11}", "-" * 88]
        lines += [f"{p['capture'][:33]:<34}{p['samples']:>8}{p['pipeline_s']:>11.3f}{p['unconstrained_s']:>9.3f}"
                  f"{p['ratio']:>7.2f}{p['fit_percent']:>8.2f}{p['holdout_fit_percent']:>11.2f}" for p in pipe]
        worst = max(p["pipeline_s"] for p in pipe)
        lines.append(f"slowest capture {worst:.3f} s")
    elif "pipeline_note" in r:
        lines.append(r["pipeline_note"])
    return "\n".join(lines)
