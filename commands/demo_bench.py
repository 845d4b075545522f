"""``hapticam bench cli``: how long the command line takes to start and finish, per command, beside Python.

Each command runs as a user runs it, in a process of its own (``python -m hapticam ...`` with this
interpreter), ``repeat`` times in interleaved rounds after one untimed round (which also warms numba's
cache, so a first run's compilation is not timed); the median wall time, CPU time (user + system) and
peak resident memory of each are reported beside two peers measured in the same rounds,
``python -c pass`` (the interpreter alone) and ``python -c "import numpy"`` (the floor of any numerical
command), with the ratios to both. Times and memory come from the command's own resource usage (``os.wait4``
in a small launcher process; Windows has none, and gets wall times only).

The commands need no file from outside the package: the capture is written first by ``hapticam probe``
into a temporary folder (or is the one ``--capture`` names) and the model is a bundled example.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from hapticam import NUMBA_CACHE_PREFIX, __version__
from hapticam.errors import HapticError, UsageError
from hapticam.fileio import check_output_file, report_json

#: the bundled model ``verify`` and ``model show`` are timed on
MODEL = "example:gateron-brown"
#: the probe capture written when no ``--capture`` is given: a tactile switch pressed and released slowly
#: (4 s triangle at 1 kHz, 4000 samples; the real captures in tests/data hold 1000 to 4000)
PROBE_ARGS = ("probe", "tactile-switch", "--excitation", "triangle", "--duration", "4", "--rate", "1000")
#: the longest one run of a command may take (s) before it is stopped and the bench refused
RUN_TIMEOUT_S = 600.0
MAX_REPEAT = 100
PEERS = {"python": "python -c pass", "numpy": "python -c 'import numpy'"}


def register(sub: argparse._SubParsersAction, bench: argparse._SubParsersAction) -> None:
    """Add ``bench cli`` (``sub`` unused)."""
    b = bench.add_parser(
        "cli", help="command-line start-up: wall time and peak memory per command beside python and numpy",
        description="Run each command (--version, --help, identify impedance on a capture, verify, model show, "
                    "...) in a process of its own, REPEAT times after one untimed round that warms numba's cache, "
                    "beside 'python -c pass' and 'python -c \"import numpy\"' in the same rounds; report the "
                    "median wall time, CPU time and peak memory of each and the ratios to both peers.")
    b.add_argument("--repeat", type=int, default=5, metavar="N", help="timed runs of each command (default 5)")
    b.add_argument("--capture", metavar="FILE", default=None,
                   help="the capture identify and verify run on (default: one 'hapticam probe' writes first)")
    b.add_argument("--json", action="store_true", help="print the results as one JSON object (nothing else on stdout)")
    b.add_argument("--json-file", metavar="FILE", help="also write the results as JSON to FILE")
    b.set_defaults(func=_cmd_bench)


def _cmd_bench(args: argparse.Namespace) -> int:
    if not 1 <= args.repeat <= MAX_REPEAT:
        raise UsageError(f"--repeat must be from 1 to {MAX_REPEAT}, got {args.repeat}")
    if args.capture is not None and not Path(args.capture).is_file():
        raise UsageError(f"--capture {args.capture}: no such file")
    check_output_file("--json-file", args.json_file)
    progress = (lambda msg: print(msg, file=sys.stderr, flush=True))   # noqa: E731
    results = run_bench(repeat=args.repeat, capture=args.capture, progress=progress)
    report_json(results, args.json, args.json_file, format_table)
    return 0


def hapticam_argv(*words: str) -> list[str]:
    """The command line that runs ``hapticam WORDS...`` with this interpreter and this installation."""
    return [sys.executable, "-m", "hapticam", *words]


def child_env() -> dict[str, str]:
    """The environment a user's own command starts in: this one, with numba's cache folder given back as
    the base folder ``import hapticam`` keys by the source digest, so each command keys it again itself."""
    env = dict(os.environ)
    cache = os.path.normpath(env.get("NUMBA_CACHE_DIR", "") or ".")
    if os.path.basename(cache).startswith(NUMBA_CACHE_PREFIX):
        env["NUMBA_CACHE_DIR"] = os.path.dirname(cache)
    return env


def commands(capture: str, model_out: str) -> list[tuple[str, list[str], tuple[int, ...]]]:
    """``(name, argv, exit codes that count as done)`` of every row, the peers first."""
    py = sys.executable
    return [
        (PEERS["python"], [py, "-c", "pass"], (0,)),
        (PEERS["numpy"], [py, "-c", "import numpy"], (0,)),
        ("hapticam --version", hapticam_argv("--version"), (0,)),
        ("hapticam --help", hapticam_argv("--help"), (0,)),
        ("hapticam identify impedance --help", hapticam_argv("identify", "impedance", "--help"), (0,)),
        ("hapticam identify impedance CAPTURE -o MODEL",
         hapticam_argv("identify", "impedance", capture, "-o", model_out, "--quiet"), (0,)),
        (f"hapticam verify {MODEL} CAPTURE", hapticam_argv("verify", MODEL, capture), (0, 1)),   # 1: FAIL verdict
        (f"hapticam model show {MODEL}", hapticam_argv("model", "show", MODEL), (0,)),
        ("hapticam probe --list", hapticam_argv("probe", "--list"), (0,)),
        ("hapticam devices", hapticam_argv("devices"), (0,)),
    ]


#: Runs ``sys.argv[1:]`` in a child of its own and prints its wall time (s), CPU time (s), peak RSS (the
#: platform's ``ru_maxrss`` unit) and exit code. It is itself a small interpreter: a child's peak RSS counts
#: the memory of the process it was forked from, so forking each command from this bench would floor every
#: figure at the bench's own.
_LAUNCHER = """
import os, sys, time
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    try:
        os.execv(sys.argv[1], sys.argv[1:])
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
print(time.perf_counter() - start, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, os.waitstatus_to_exitcode(status))
"""


def run_once(argv: list[str], env: dict[str, str]) -> dict[str, Any]:
    """Run ``argv`` once, output discarded: ``wall_s``, ``cpu_s`` (user + system) and ``peak_rss_MiB`` of
    that process alone (None where there is no ``fork`` and ``wait4``: Windows), and ``exit_code``."""
    if not (hasattr(os, "fork") and hasattr(os, "wait4")):
        start = time.perf_counter()
        code = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              env=env, timeout=RUN_TIMEOUT_S).returncode
        return {"wall_s": time.perf_counter() - start, "cpu_s": None, "peak_rss_MiB": None, "exit_code": code}
    proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", _LAUNCHER, *argv], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, env=env, text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)                   # the launcher and the command it runs
        proc.communicate()
        raise HapticError(f"bench cli: '{' '.join(argv[1:])}' ran longer than {RUN_TIMEOUT_S:g} s") from None
    if proc.returncode != 0 or len(out.split()) != 4:
        raise HapticError(f"bench cli: could not time '{' '.join(argv[1:])}' (launcher exit {proc.returncode})")
    wall, cpu, rss, code = out.split()
    scale = 1.0 if sys.platform == "darwin" else 1024.0           # ru_maxrss: bytes on macOS, KiB elsewhere
    return {"wall_s": float(wall), "cpu_s": float(cpu), "peak_rss_MiB": float(rss) * scale / 2 ** 20,
            "exit_code": int(code)}


def _run_checked(name: str, argv: list[str], env: dict[str, str], done: tuple[int, ...] = (0,)) -> None:
    """Run ``argv`` untimed; refuse the bench, with the last line it wrote, if it exits other than ``done``."""
    try:
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env,
                              timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise HapticError(f"bench cli: '{name}' ran longer than {RUN_TIMEOUT_S:g} s") from None
    if proc.returncode not in done:
        last = (proc.stderr.strip().splitlines() or ["(nothing on stderr)"])[-1]
        raise HapticError(f"bench cli: '{name}' exited with {proc.returncode}: {last}")


def _probe_capture(folder: Path, env: dict[str, str], progress: Any) -> str:
    """Write the bench's capture with ``hapticam probe`` into ``folder``; return its path."""
    path = folder / "capture.csv"
    name = f"hapticam {' '.join(PROBE_ARGS)} -o {path}"
    progress(f"bench cli: {name}")
    _run_checked(name, hapticam_argv(*PROBE_ARGS, "-o", str(path)), env)
    return str(path)


def run_bench(repeat: int = 5, capture: str | None = None, progress: Any = lambda msg: None) -> dict[str, Any]:
    """Time every command of :func:`commands` ``repeat`` times in interleaved rounds; the rows with their
    medians and the ratios to both peers (see the module's notes)."""
    env = child_env()
    with tempfile.TemporaryDirectory(prefix="hapticam-bench-cli-") as tmp:
        folder = Path(tmp)
        capture_path = capture or _probe_capture(folder, env, progress)
        rows = commands(capture_path, str(folder / "model.yaml"))
        for name, argv, done in rows:                    # untimed: numba's cache is warm after it
            progress(f"bench cli: first run of {name}")
            _run_checked(name, argv, env, done)
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name, _, _ in rows}
        for i in range(repeat):
            progress(f"bench cli: round {i + 1} of {repeat}")
            for name, argv, _ in rows:
                runs[name].append(run_once(argv, env))
    out = [_row(name, argv, runs[name]) for name, argv, _ in rows]
    _add_ratios(out)
    return {"repeat": repeat, "hapticam_version": __version__, "python": sys.executable,
            "python_version": sys.version.split()[0], "platform": sys.platform,
            "capture": capture or "written by: hapticam " + " ".join(PROBE_ARGS), "model": MODEL,
            "peers": dict(PEERS), "rows": out}


def _median(values: list[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return statistics.median(kept) if kept else None


def _row(name: str, argv: list[str], runs: list[dict[str, Any]]) -> dict[str, Any]:
    return {"name": name, "peer": name in PEERS.values(), "argv": argv[1:],
            "wall_s": _median([r["wall_s"] for r in runs]), "cpu_s": _median([r["cpu_s"] for r in runs]),
            "peak_rss_MiB": _median([r["peak_rss_MiB"] for r in runs]),
            "wall_s_runs": [r["wall_s"] for r in runs], "exit_codes": sorted({r["exit_code"] for r in runs})}


def _add_ratios(rows: list[dict[str, Any]]) -> None:
    """Each row's median wall time over each peer's (``wall_over_python``, ``wall_over_numpy``) and its peak
    memory over numpy's (``rss_over_numpy``; None without memory figures)."""
    by_name = {r["name"]: r for r in rows}
    python, numpy = by_name[PEERS["python"]], by_name[PEERS["numpy"]]
    for r in rows:
        r["wall_over_python"] = r["wall_s"] / python["wall_s"]
        r["wall_over_numpy"] = r["wall_s"] / numpy["wall_s"]
        r["rss_over_numpy"] = (None if r["peak_rss_MiB"] is None or not numpy["peak_rss_MiB"]
                               else r["peak_rss_MiB"] / numpy["peak_rss_MiB"])


def format_table(r: dict[str, Any]) -> str:
    """The rows as a text table: medians of ``repeat`` runs and the ratios to the peers."""
    def num(value: float | None, fmt: str) -> str:
        return "-" if value is None else format(value, fmt)

    lines = [f"command-line start-up: median of {r['repeat']} run(s) each, after one untimed run; Python "
             f"{r['python_version']}, hapticam {r['hapticam_version']}",
             f"capture: {r['capture']}",
             f"{'command':<52}{'wall s':>8}{'cpu s':>8}{'RSS MiB':>9}{'x python':>10}{'x numpy':>9}{'RSS x numpy':>13}",
             "-" * 109]
    for row in r["rows"]:
        lines.append(f"{row['name'][:51]:<52}{row['wall_s']:>8.3f}{num(row['cpu_s'], '8.3f'):>8}"
                     f"{num(row['peak_rss_MiB'], '9.1f'):>9}{row['wall_over_python']:>10.2f}"
                     f"{row['wall_over_numpy']:>9.2f}{num(row['rss_over_numpy'], '13.2f'):>13}")
    return "\n".join(lines)
