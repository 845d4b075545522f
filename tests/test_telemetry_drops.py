"""Telemetry drops are counted exactly: against a subscriber that reads nothing, every batch is either
sent (and reaches the subscriber when it finally reads) or counted as dropped."""

from __future__ import annotations

import socket
import time

import numpy as np
import zmq

from hapticam.render.layout import RING_COLS
from hapticam.render.telemetry import TelemetryPublisher


def test_drop_count_is_exact_for_a_subscriber_that_reads_nothing():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        addr = f"tcp://127.0.0.1:{s.getsockname()[1]}"
    pub = TelemetryPublisher(addr, 1000.0, hwm=4)
    ctx = zmq.Context.instance()
    sub = ctx.socket(zmq.SUB)
    sub.setsockopt(zmq.RCVHWM, 4)
    sub.setsockopt(zmq.SUBSCRIBE, b"")
    sub.connect(addr)
    time.sleep(0.3)                                     # the subscription reaches the publisher
    rows = np.zeros((100, RING_COLS))
    n = 5000
    for i in range(n):
        pub(i * 100, rows, [])
    assert pub.sent + pub.dropped == n and pub.dropped > 0 and pub.sent > 0
    received = 0
    sub.setsockopt(zmq.RCVTIMEO, 1000)
    try:
        while True:
            sub.recv()
            received += 1
    except zmq.Again:
        pass
    assert received == pub.sent                          # nothing vanished between the counts
    sub.close()
    pub.close()
