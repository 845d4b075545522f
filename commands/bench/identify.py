"""``hapticam bench identify``: the EWLS core against its peers on seed 001's data size.

Seed 001 section 5 captures 90 s at 4 kHz: 360,000 samples of ``phi = [a v x 1]`` (eq. 9). On the same
data, in one run, this times

- hapticam's compiled EWLS recursion (seed 001 Table 1; :func:`hapticam.identify.impedance.ewls.ewls_kernel`, the
  core, and :func:`~hapticam.identify.impedance.ewls.ewls_fit`, the core plus scaling and checks),
- padasip's ``FilterRLS`` (the recursive least-squares filter a Python user would pick), and
- NumPy's batch least squares (``numpy.linalg.lstsq``), which gives only the final estimate,

and reports the times (best of ``repeat``) and the ratios. Absolute times drift on shared machines; the
ratios are the result.

It also times the whole impedance pipeline (:func:`hapticam.identify.impedance.fit.identify_impedance`,
passive constrained fit and hold-out check included) on each capture given (files or folders), beside the
same pipeline without the passivity constraints (``allow_active``), so the constrained fit's share shows
as a ratio. Given no captures it uses the repository's twelve real switch captures (a source checkout),
or, where they are not installed (a wheel), captures made from the bundled example models
(:func:`example_captures`); the results say which (``pipeline_captures``).

The peers (padasip, filterpy) are optional: one missing is left out of the timing, and the results name
the missing ones with one install hint (``peers_missing``, ``peers_hint``). Each part says what it is
doing on standard error while it runs (:mod:`hapticam.progress`, in a terminal only).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from hapticam.identify.impedance.ewls import ewls_fit, ewls_kernel
from hapticam.identify.timing import best_of as _best
from hapticam.progress import bar, step

#: the peers timed beside hapticam's estimators, and the one way to install them
PEERS = ("padasip", "filterpy")
PEERS_HINT = "pip install 'hapticam[bench]'"
#: a first run's compilation (s, one core) of each part's kernels, said while it runs
COMPILE_S = {"ewls": 2.0, "friction": 15.0, "hopper": 5.0, "contact": 2.0, "key": 20.0, "examples": 4.0,
             "pipeline": 8.0}


def missing_peers() -> list[str]:
    """The peers that are not installed."""
    return [name for name in PEERS if importlib.util.find_spec(name) is None]


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
    """Time the EWLS core, ``ewls_fit``, padasip's RLS and NumPy's batch solve on ``n`` samples, then the
    friction (seed 003) and hopper (seed 002) benches."""
    results: dict[str, Any] = {"samples": n, "forgetting": lam, "repeat": repeat, "peers_missing": missing_peers(),
                               "peers_hint": PEERS_HINT}
    with step(f"timing EWLS on {n:,} samples: the compiled core, ewls_fit and numpy lstsq", compiles="the EWLS core",
              about_s=COMPILE_S["ewls"]):
        phi, y, s, phis = _ewls_data(n)
        results.update(_time_ewls(phi, y, s, phis, lam, repeat))
    if padasip:
        results.update(_time_padasip(phis, y, s, lam, results["hapticam_ewls_core_s"]))
    from hapticam.commands.bench.friction import bench_friction

    with step("timing friction identification (seed 003): UAS, grey-box and a naive fit",
              compiles="the friction estimators", about_s=COMPILE_S["friction"]):
        results["friction"] = bench_friction(quick=n < 100_000, repeat=repeat)
    from hapticam.commands.bench.hopper import bench_hopper

    with step("timing the hopper's fit (seed 002, Fig. 3) against solve_ivp", compiles="the hopper's map",
              about_s=COMPILE_S["hopper"]):
        results["hopper"] = bench_hopper(quick=n < 100_000, repeat=repeat)
    return results


def _ewls_data(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(phi, y)`` of :func:`bench_data`, the regressors' RMS scale and the scaled regressors."""
    phi, y = bench_data(n)
    s = np.sqrt(np.mean(phi * phi, axis=0))
    return phi, y, s, np.ascontiguousarray(phi / s)


def _time_ewls(phi: np.ndarray, y: np.ndarray, s: np.ndarray, phis: np.ndarray, lam: float, repeat: int
               ) -> dict[str, Any]:
    n, p = phi.shape
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
    t_core, th_core = _best(core, repeat)
    t_fit, _ = _best(lambda: ewls_fit(phi, y, lam), repeat)
    t_batch, th_batch = _best(lambda: np.linalg.lstsq(phi, y, rcond=None)[0], repeat)
    return {"regressors": p, "hapticam_ewls_core_s": t_core, "hapticam_ewls_fit_s": t_fit, "numpy_lstsq_s": t_batch,
            "core_over_lstsq": t_core / t_batch,
            "max_rel_diff_lam1_vs_lstsq": float(np.max(np.abs(ewls_fit(phi, y, 1.0).theta - th_batch)
                                                       / np.abs(th_batch))),
            "theta_core": th_core.tolist()}


def _time_padasip(phis: np.ndarray, y: np.ndarray, s: np.ndarray, lam: float, t_core: float) -> dict[str, Any]:
    try:
        import padasip as pa
    except ImportError:
        return {"padasip_s": None, "padasip_note": "padasip is not installed"}

    def peer() -> np.ndarray:
        filt = pa.filters.FilterRLS(n=phis.shape[1], mu=lam, eps=1e-6, w="zeros")
        _, _, w = filt.run(y, phis)
        return w[-1] / s

    with step(f"timing padasip's FilterRLS on the same {y.size:,} samples (pure Python, the slowest part)"):
        t_pa, th_pa = _best(peer, 1)
    return {"padasip_s": t_pa, "padasip_over_core": t_pa / t_core, "theta_padasip": th_pa.tolist()}


def run_identify_bench(n: int = 360_000, repeat: int = 3, captures: Any = None) -> dict[str, Any]:
    """Every part of ``hapticam bench identify``: :func:`run_bench`, the contact estimators (seed 004), the
    hybrid key, and the whole pipeline on ``captures`` (:func:`pipeline_captures`, chosen first: a path
    that is not there is refused before any timing)."""
    chosen, what = pipeline_captures(captures)
    results = run_bench(n, repeat)
    from hapticam.commands.bench.contact import bench_contact

    with step("timing the contact estimators (seed 004) against padasip and filterpy",
              compiles="the contact estimators", about_s=COMPILE_S["contact"]):
        results["contact"] = [_one_hint(row) for row in bench_contact(quick=n < 100_000, repeat=repeat)]
    from hapticam.commands.bench.hybrid_key import bench_key

    with step("timing the hybrid key's identification (piano key) against solve_ivp", compiles="the hybrid key",
              about_s=COMPILE_S["key"]):
        results["piano_key"] = bench_key(quick=n < 100_000, repeat=repeat)
    results["pipeline_captures"] = what
    if chosen:
        results["pipeline"] = run_pipeline_bench(chosen, repeat)
    else:
        results["pipeline_note"] = f"the whole pipeline was not timed: {results['pipeline_captures']}"
    return results


def _one_hint(row: dict[str, Any]) -> dict[str, Any]:
    """A peer's row without its own install hint (the results carry one for all: ``peers_hint``)."""
    if "note" in row and "not installed" in row["note"]:
        return {**row, "note": f"{row['name'].split()[0]} is not installed"}
    return row


#: the repository's real switch captures (present in a source checkout or an editable install)
DEFAULT_CAPTURES = Path(__file__).resolve().parents[2] / "tests" / "data" / "switch_curves"
CAPTURE_SUFFIXES = (".csv", ".txt", ".npz", ".ods")
#: the bundled example models whose captures stand in where the repository's are not installed
EXAMPLE_MODELS = ("cherry-mx-red", "gateron-brown", "kailh-box-jade")


def pipeline_captures(sources: Any = None) -> tuple[list[Any], str]:
    """What to time the whole pipeline on, and what that is: the capture files among ``sources`` (files,
    or folders whose captures are taken, not recursively); without ``sources``, the repository's real
    switch captures, or where they are not installed, :func:`example_captures`. An empty list when
    ``sources`` hold no capture (the description says so)."""
    if sources is not None:
        given = [sources] if isinstance(sources, (str, Path)) else list(sources)
        paths = _capture_files(Path(p) for p in given)
        where = ", ".join(str(p) for p in given) or "(none given)"
        if not paths:
            return [], f"no capture files ({', '.join(CAPTURE_SUFFIXES)}) in {where}"
        return paths, f"{len(paths)} capture file(s) from {where}"
    paths = _capture_files([DEFAULT_CAPTURES]) if DEFAULT_CAPTURES.is_dir() else []
    if paths:
        return paths, f"the repository's {len(paths)} real switch captures ({DEFAULT_CAPTURES})"
    with step("making captures from the bundled example models", compiles="the model kernels",
              about_s=COMPILE_S["examples"]):
        examples = example_captures()
    return examples, (f"{len(EXAMPLE_MODELS)} slow presses made from the bundled example models "
                                f"({', '.join(EXAMPLE_MODELS)}; the repository's real captures are not "
                                "installed here: pass --captures to time your own)")


def _capture_files(paths: Iterable[Path]) -> list[Path]:
    from hapticam.errors import UsageError

    found: list[Path] = []
    for p in paths:
        if p.is_dir():
            found += sorted(q for q in p.iterdir() if q.suffix.lower() in CAPTURE_SUFFIXES and q.is_file())
        elif p.is_file():
            found.append(p)
        else:
            raise UsageError(f"--captures {p}: no such capture file or folder")
    return found


def example_captures(seed: int = 0) -> list[Any]:
    """A slow press and release (0 to 4.2 mm and back at 0.5 mm/s, sampled at 100 Hz: 1680 samples) on each
    of :data:`EXAMPLE_MODELS`, its force predicted by the renderer's kernel plus 2 mN of Gaussian noise."""
    from hapticam.capture import Capture
    from hapticam.identify.impedance.fit import predict_force
    from hapticam.models.files import load_model_only

    rng = np.random.default_rng(seed)
    dt = 0.01
    x = np.concatenate([np.linspace(0.0, 4.2e-3, 840), np.linspace(4.2e-3, 0.0, 840)])
    t = np.arange(x.size) * dt
    v = np.gradient(x, dt)
    out = []
    for name in EXAMPLE_MODELS:
        f = predict_force(load_model_only(f"example:{name}"), x, v, np.zeros_like(x), dt)
        out.append(Capture.from_arrays(t, x, f + rng.normal(0.0, 2e-3, x.size), name=f"example-{name}",
                                       metadata={"source": f"example:{name}, a slow press and release, force "
                                                           "predicted by the model"}))
    return out


def run_pipeline_bench(folder: Any = None, repeat: int = 3) -> list[dict[str, Any]]:
    """Seconds per capture of the whole impedance pipeline, passive (default) and unconstrained, on
    ``folder``: a folder or file, a list of capture files or captures, or None (:func:`pipeline_captures`)."""
    from hapticam.capture_io import load_capture
    from hapticam.identify.impedance.fit import identify_impedance
    from hapticam.progress import compiling

    items = folder if isinstance(folder, list) else pipeline_captures(folder)[0]
    rows = []
    with bar(len(items), desc="timing the whole pipeline", unit="capture") as progress:
        for item in items:
            capture = load_capture(item) if isinstance(item, (str, Path)) else item
            with compiling("the estimators", COMPILE_S["pipeline"]):
                identify_impedance(capture)            # compile (or load from the numba cache) first
            t_passive, fit = _best(lambda: identify_impedance(capture), repeat)
            t_free, _ = _best(lambda: identify_impedance(capture, allow_active=True), repeat)
            rows.append({"capture": Path(item).name if isinstance(item, (str, Path)) else capture.name,
                         "samples": capture.n, "pipeline_s": t_passive, "unconstrained_s": t_free,
                         "ratio": t_passive / t_free, "fit_percent": fit.summary["fit_percent"],
                         "holdout_fit_percent": fit.summary["holdout"]["fit_percent"]})
            progress.update(1)
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
        lines.append(f"{'padasip FilterRLS':<36}{r['padasip_note'].split(' (')[0]}")
    lines.append(f"lambda = 1 vs lstsq: max relative difference {r['max_rel_diff_lam1_vs_lstsq']:.2e}")
    if r.get("contact"):
        from hapticam.commands.bench.contact import format_rows

        lines += ["", "recursive contact estimators (seed 004) against their peers, same data",
                  format_rows([_one_hint(row) for row in r["contact"]])]
    if r.get("friction"):
        from hapticam.commands.bench.friction import format_rows as friction_rows

        lines += ["", friction_rows(r["friction"])]
    if r.get("hopper"):
        from hapticam.commands.bench.hopper import format_rows as hopper_rows

        lines += ["", hopper_rows(r["hopper"])]
    if r.get("piano_key"):
        from hapticam.commands.bench.hybrid_key import format_key_rows

        lines += ["", format_key_rows(r["piano_key"])]
    lines += _pipeline_lines(r)
    if r.get("peers_missing"):
        lines += ["", f"not installed, so not timed: {', '.join(r['peers_missing'])} "
                      f"(to time them too: {r.get('peers_hint', PEERS_HINT)})"]
    return "\n".join(lines)


def _pipeline_lines(r: dict[str, Any]) -> list[str]:
    pipe = r.get("pipeline") or []
    if not pipe:
        return [r["pipeline_note"]] if "pipeline_note" in r else []
    lines = ["", f"{'whole pipeline per capture':<34}{'samples':>8}{'passive s':>11}{'free s':>9}"
                 f"{'ratio':>7}{'fit %':>8}{'held-out %':>11}", "-" * 88]
    lines += [f"{p['capture'][:33]:<34}{p['samples']:>8}{p['pipeline_s']:>11.3f}{p['unconstrained_s']:>9.3f}"
              f"{p['ratio']:>7.2f}{p['fit_percent']:>8.2f}{p['holdout_fit_percent']:>11.2f}" for p in pipe]
    lines.append(f"slowest capture {max(p['pipeline_s'] for p in pipe):.3f} s")
    if "pipeline_captures" in r:
        lines.append(f"captures: {r['pipeline_captures']}")
    return lines
