"""``hapticam monitor``: in a terminal one status line rewritten in place, piped one line per batch."""

from __future__ import annotations

import io
import threading
import time

import msgpack
import numpy as np
import zmq

from hapticam.render.layout import RING_COLS
from hapticam.render.telemetry import monitor, tick_batch
from terminal import Terminal
from test_telemetry import free_address

BATCHES = 40
EVENT_BATCH = 20
HEADER = "seq      tick0   n    t_s       x_mm     force_N   flags   late_max_us  events"


def _publish(address: str, ready: threading.Event) -> None:
    """Wait for a subscriber, then send ``BATCHES`` batches of 10 ticks 10 ms apart (one with an event)."""
    sock = zmq.Context.instance().socket(zmq.XPUB)
    sock.setsockopt(zmq.LINGER, 0)
    sock.bind(address)
    ready.set()
    try:
        if not sock.poll(10_000):
            return
        sock.recv()                                            # the subscription
        rows = np.zeros((10, RING_COLS))
        for seq in range(BATCHES):
            msg = tick_batch(seq, 10 * seq, rows, [], 1000.0, 0, 0)
            if seq == EVENT_BATCH:
                msg["events"] = [{"event": "saturation", "tick": 10 * seq, "t_s": 0.2, "value": 3.0}]
            sock.send(msgpack.packb(msg, use_bin_type=True))
            time.sleep(0.01)
    finally:
        sock.close()


def _watch(out: io.StringIO) -> dict[str, int]:
    address = free_address()
    ready = threading.Event()
    publisher = threading.Thread(target=_publish, args=(address, ready))
    publisher.start()
    ready.wait(10)
    try:
        return monitor(address, duration_s=30.0, batches=BATCHES, out=out)
    finally:
        publisher.join()


def test_piped_every_batch_is_a_line():
    out = io.StringIO()
    assert _watch(out)["batches"] == BATCHES
    lines = out.getvalue().splitlines()
    assert lines[0] == HEADER and len(lines) == BATCHES + 1 and "\r" not in out.getvalue()
    assert [int(line.split()[0]) for line in lines[1:]] == list(range(BATCHES))


def test_in_a_terminal_one_line_is_rewritten_and_a_batch_with_events_stands():
    out = Terminal()
    assert _watch(out)["batches"] == BATCHES
    text = out.getvalue()
    lines = text.split("\n")
    assert lines[0] == HEADER
    standing = [line.rsplit("\r", 1)[-1] for line in lines[1:-1]]
    assert len(standing) == 2 and lines[-1] == ""                      # the event's batch and the last one
    assert standing[0].split()[0] == str(EVENT_BATCH) and standing[0].endswith("saturation")
    assert standing[1].split()[0] == str(BATCHES - 1)
    assert text.count("\r") < BATCHES / 2                              # at most ten rewrites a second
