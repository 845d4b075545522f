"""``hapticam bench soak`` beside hostile peers (a subscription flood, malformed and oversized requests,
connections without valid credentials): the render carries out none of their requests, lets none of them
in, counts what it refused, and its resident memory stays within the soak's bound."""

from __future__ import annotations

from functools import partial

import hapticam.render.loop as loop
from hapticam.render.soak import RSS_GROWTH_LIMIT_PERCENT, format_soak, run_soak

CLIENTS = 2
MINUTES = 0.1          # 6 s of real time at 1 kHz


def test_a_short_soak_beside_hostile_peers_refuses_them_counts_it_and_keeps_its_memory(tmp_path, monkeypatch):
    # the loop runs its whole duration however busy the machine (no missed-deadline bound, as a bench
    # measuring stalls): what is tested here is what the peers get, not the machine's deadlines
    monkeypatch.setattr(loop, "LoopConfig", partial(loop.LoopConfig, missed_deadline_share=None))
    result = run_soak(MINUTES, clients=CLIENTS, out_dir=str(tmp_path), hostile=True)
    hostile = result["hostile"]
    assert hostile["peers"], "the hostile peers' process did not report"
    # the well-behaved clients were served and every tick recorded
    assert result["ticks"] == round(MINUTES * 60 * 1000) and result["recording_complete"]
    assert result["requests"]["ok_by_kind"].get("status", 0) > 0
    # none of the malformed requests was carried out: what the render answered ok is what the well-behaved
    # clients got ok, but for replies they did not wait for (timed out, or in flight at the end)
    served_ok = hostile["requests_received"] - hostile["requests_refused"]
    asked_ok = result["requests"]["ok"] + result["model_swaps"]["ok"]
    assert served_ok - asked_ok <= result["requests"]["timeouts"] + CLIENTS + 1
    # and they did reach it: it received more requests than the well-behaved clients sent
    asked = result["requests"]["sent"] + result["model_swaps"]["ok"] + result["model_swaps"]["refused"]
    assert hostile["requests_received"] - asked > 100 and hostile["malformed_requests_sent"] > 100
    # subscriptions to anything but every batch are refused and counted, and the publisher reopened
    assert 0 < hostile["subscriptions_refused"] <= hostile["subscriptions_sent"]
    assert hostile["publisher_reopened"] >= 1
    # connections without valid credentials fail their handshake: never let in, never answered
    peers = hostile["peers"]
    failed = sum(peers[f"unauthenticated_{k}_handshakes_failed"] for k in ("control", "telemetry"))
    assert failed > 0 and hostile["unauthenticated_let_in"] == hostile["unauthenticated_answered"] == 0
    # telemetry: the subscriber keeping up got no more batches than the publisher counted as sent
    assert result["subscriber_received"] <= result["telemetry_sent"]
    # resident memory, sampled every second from before the peers started to the end
    assert len(result["rss_samples"]) >= 4
    assert result["rss_growth_percent"] <= result["rss_peak_growth_percent"] <= RSS_GROWTH_LIMIT_PERCENT
    assert "hostile peers:" in format_soak(result)
