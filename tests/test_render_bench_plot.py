"""bench render --plot: lateness tails kept per loop and drawn; the tails agree with the percentiles."""

from __future__ import annotations

import json

import numpy as np

from hapticam.cli import main
from hapticam.commands.bench.render_plot import TAIL_EXCEED, tail_from_histogram, tail_from_samples
from hapticam.render.layout import HIST_BIN_NS
from hapticam.render.stats import hist_percentile_us


def test_tails_agree_with_the_histogram_percentiles_and_the_samples():
    rng = np.random.default_rng(0)
    lateness_ns = rng.exponential(2000.0, 200_000).astype(np.int64)
    hist = np.bincount(np.minimum(lateness_ns // HIST_BIN_NS, 200_000), minlength=200_001)
    tail = tail_from_histogram(hist)
    for e, us in zip(tail["exceed"], tail["lateness_us"]):
        assert us == hist_percentile_us(hist, 1.0 - e)
    # the histogram's tail is the upper edge of the bin holding the samples' inverted-CDF quantile
    q = np.quantile(lateness_ns, 1.0 - TAIL_EXCEED, method="inverted_cdf")
    np.testing.assert_allclose(tail["lateness_us"], (q // HIST_BIN_NS + 1) * HIST_BIN_NS * 1e-3, rtol=0, atol=1e-9)
    direct = tail_from_samples(lateness_ns)
    # an exponential tail: P(L > l) = exp(-l / 2 us)
    np.testing.assert_allclose(direct["lateness_us"][:30], -2.0 * np.log(TAIL_EXCEED[:30]), rtol=0.05)


def test_bench_render_plot_writes_a_png_and_keeps_the_tails(tmp_path, capsys):
    png = tmp_path / "lateness.png"
    assert main(["bench", "render", "--seconds", "0.3", "--plot", str(png), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out["plot"] == str(png)
    for loop in ("hapticam", "python"):
        us = np.asarray(out[loop]["idle"]["tail"]["lateness_us"])
        assert us.size == TAIL_EXCEED.size and np.all(np.diff(us) >= 0)   # later as fewer ticks exceed
    assert main(["bench", "render", "--plot", str(tmp_path / "missing" / "x.png")]) == 2
    assert main(["bench", "render", "--device", "zmq", "--plot", str(png)]) == 2
