"""The hostile peers of ``hapticam bench soak`` (on by default; ``--no-hostile`` leaves them out).

They run in a process of their own, so that the resident memory the soak samples is the render's alone,
and attack its telemetry and control sockets (``ipc://`` in a folder only this user can enter, a shared
secret required: :mod:`hapticam.render.endpoints`) beside the well-behaved clients:

- a telemetry subscriber that subscribes to every batch and never reads, and floods subscriptions:
  ``FLOOD_BURST`` topics every ``FLOOD_PERIOD_S`` (10,000 a second), each of the longest the publisher takes
  (one byte short of :data:`~hapticam.render.telemetry.MAX_SUBSCRIBER_MESSAGE_BYTES`, with the subscribe
  byte), and every ``OVERSIZED_PERIOD_S`` one longer, which drops it; its socket is opened
  afresh every ``FLOOD_SOCKET_S`` (ZeroMQ keeps a subscriber's topics on its own side too);
- a control client with the secret that sends ``GARBAGE_RATE_HZ`` malformed requests a second (bytes
  that are not msgpack, a list, an unknown command, a request larger than
  :data:`~hapticam.render.control.MAX_REQUEST_BYTES`, frames without a request envelope) and never reads
  a reply, and every ``OVERSIZED_PERIOD_S`` one message larger than the control socket takes
  (:data:`~hapticam.render.control.TRANSPORT_MAX_BYTES`, which drops it);
- clients without credentials, or with a wrong secret, ``UNAUTHENTICATED_RATE_HZ`` connections a second
  on each socket, each sending a ``stop`` (control) or subscribing (telemetry): every handshake should
  fail, so none is answered and none receives a batch.

:class:`HostilePeers` starts the process (the configuration, with the secret, on its standard input,
never on its command line) and stops it, returning what the peers counted. The render's own counts
(requests refused, subscriptions refused, the publisher's reopenings, batches dropped) are the soak's.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import threading
import time
from typing import Any

import msgpack
import zmq
from zmq.utils.monitor import recv_monitor_message

FLOOD_BURST = 200
FLOOD_PERIOD_S = 0.02
FLOOD_SOCKET_S = 2.0
GARBAGE_RATE_HZ = 1000.0
OVERSIZED_PERIOD_S = 5.0
UNAUTHENTICATED_RATE_HZ = 50.0
#: how long (s) the peers' process may take to start, and to stop and report
START_S = 60.0
STOP_S = 30.0


class HostilePeers:
    """The hostile peers' process (module notes) against ``telemetry`` and ``control``; ``secret``: the
    session's shared secret (bytes), which the subscription flood and the malformed requests carry."""

    def __init__(self, telemetry: str, control: str, secret: bytes) -> None:
        from hapticam.render.control import MAX_REQUEST_BYTES, TRANSPORT_MAX_BYTES
        from hapticam.render.telemetry import MAX_SUBSCRIBER_MESSAGE_BYTES

        self.config = {"telemetry": telemetry, "control": control, "secret": secret.decode("latin-1"),
                       "max_request_bytes": MAX_REQUEST_BYTES, "transport_max_bytes": TRANSPORT_MAX_BYTES,
                       "max_subscriber_message_bytes": MAX_SUBSCRIBER_MESSAGE_BYTES}
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        """Start the process (it imports and connects while the render starts)."""
        self.proc = subprocess.Popen([sys.executable, "-m", "hapticam.render.soak_hostile"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        self.proc.stdin.write(json.dumps(self.config) + "\n")
        self.proc.stdin.flush()

    def attack(self) -> None:
        """Wait until the process is ready (at most ``START_S``; one that is not is killed, and :meth:`stop`
        returns no counts) and let the peers loose."""
        if self.proc is None:
            return
        ready = threading.Thread(target=self.proc.stdout.readline, daemon=True)
        ready.start()
        ready.join(START_S)
        if ready.is_alive() or self.proc.poll() is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None
            return
        try:
            self.proc.stdin.write("go\n")
            self.proc.stdin.flush()
        except (OSError, ValueError):                   # stopped meanwhile (the session ended)
            pass

    def stop(self) -> dict[str, Any]:
        """Stop the peers and return their counts (empty when the process did not report within ``STOP_S``)."""
        if self.proc is None:
            return {}
        try:
            out, _ = self.proc.communicate("stop\n", timeout=STOP_S)
            return json.loads(out.strip().splitlines()[-1])
        except (subprocess.TimeoutExpired, ValueError, IndexError, OSError):
            return {}
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()


def _due(start: float, rate_hz: float) -> int:
    """How many messages at ``rate_hz`` are due since ``start`` (s, monotonic clock)."""
    return int((time.monotonic() - start) * rate_hz)


def _socket(ctx: zmq.Context, kind: int, secret: bytes | None, **options: int) -> zmq.Socket:
    sock = ctx.socket(kind)
    sock.setsockopt(zmq.LINGER, 0)
    for name, value in options.items():
        sock.setsockopt(getattr(zmq, name), value)
    if secret is not None:
        sock.plain_username, sock.plain_password = b"hapticam", secret
    return sock


def _flood_subscriptions(ctx: zmq.Context, config: dict[str, Any], secret: bytes, stop: threading.Event,
                         counts: dict[str, int]) -> None:
    """The subscriber that never reads and floods subscriptions (module notes)."""
    address = config["telemetry"]
    topic_bytes = config["max_subscriber_message_bytes"] - 1       # the longest taken, with the subscribe byte
    prefix = os.urandom(topic_bytes - 8)                 # distinct topics, a small trie on this side
    oversized = b"\x01" + os.urandom(2 * config["max_subscriber_message_bytes"])
    n, start, last_oversized = 0, time.monotonic(), -math.inf
    while not stop.is_set():
        sock = _socket(ctx, zmq.XSUB, secret, SNDHWM=10 * FLOOD_BURST, RCVHWM=10)
        sock.connect(address)
        sock.send(b"\x01")                               # every batch, never read
        opened = time.monotonic()
        while not stop.is_set() and time.monotonic() - opened < FLOOD_SOCKET_S:
            behind = _due(start, FLOOD_BURST / FLOOD_PERIOD_S) - n
            n += max(0, behind - 10 * FLOOD_BURST)       # paced; a stall of this thread is not made up at once
            for _ in range(min(behind, 10 * FLOOD_BURST)):
                n += 1
                try:
                    sock.send(b"\x01" + prefix + n.to_bytes(8, "little"), zmq.NOBLOCK)
                    counts["subscriptions_sent"] += 1
                except zmq.Again:
                    counts["subscriptions_not_taken"] += 1
            if time.monotonic() - last_oversized > OVERSIZED_PERIOD_S:
                last_oversized = time.monotonic()
                try:
                    sock.send(oversized, zmq.NOBLOCK)
                    counts["oversized_subscriptions"] += 1
                except zmq.Again:
                    pass
            time.sleep(FLOOD_PERIOD_S)
        sock.close()
        counts["subscriber_sockets"] += 1


def _garbage(rng_bytes: bytes, k: int, too_large: bytes) -> tuple[str, list[bytes]]:
    """The ``k``-th malformed request: (kind, frames); ``too_large``: a request larger than the server reads."""
    kind = ("not_msgpack", "list", "unknown_cmd", "too_large", "no_envelope")[k % 5]
    if kind == "not_msgpack":
        return kind, [b"", b"\xc1" + rng_bytes[k % 64:k % 64 + 1 + k % 63]]
    if kind == "list":
        return kind, [b"", msgpack.packb([k, "status"])]
    if kind == "unknown_cmd":
        return kind, [b"", msgpack.packb({"cmd": "format_disk", "k": k})]
    if kind == "too_large":
        return kind, [b"", too_large]
    return kind, [msgpack.packb({"cmd": "stop"})]        # no empty delimiter: not a request, never answered


def _flood_requests(ctx: zmq.Context, config: dict[str, Any], secret: bytes, stop: threading.Event,
                    counts: dict[str, int]) -> None:
    """The control client that sends malformed requests and never reads a reply (module notes)."""
    sock = _socket(ctx, zmq.DEALER, secret, SNDHWM=1000, RCVHWM=10)
    sock.connect(config["control"])
    noise = os.urandom(128)
    too_large = msgpack.packb({"cmd": "status", "pad": b"\x00" * (config["max_request_bytes"] + 1)})
    oversized = b"\x00" * (config["transport_max_bytes"] + 1)
    k, start, last_oversized = 0, time.monotonic(), -math.inf
    while not stop.is_set():
        behind = _due(start, GARBAGE_RATE_HZ) - k
        k += max(0, behind - int(GARBAGE_RATE_HZ / 10))     # paced; a stall is not made up at once
        for _ in range(min(behind, int(GARBAGE_RATE_HZ / 10))):
            kind, frames = _garbage(noise, k, too_large)
            k += 1
            try:
                sock.send_multipart(frames, zmq.NOBLOCK)
                counts[f"requests_{kind}"] += 1
            except zmq.Again:
                counts["requests_not_taken"] += 1
        if time.monotonic() - last_oversized > OVERSIZED_PERIOD_S:
            last_oversized = time.monotonic()
            try:
                sock.send_multipart([b"", oversized], zmq.NOBLOCK)
                counts["requests_oversized"] += 1
            except zmq.Again:
                pass
        time.sleep(0.01)
    sock.close()


def _unauthenticated(ctx: zmq.Context, address: str, control: bool, secret: bytes, stop: threading.Event,
                     counts: dict[str, int]) -> None:
    """Connections without credentials or with a wrong secret, in turn (module notes); counts the
    handshakes that failed, succeeded, and anything that came back."""
    key = "control" if control else "telemetry"
    wrong = bytes(reversed(secret)) + b"x"
    period_s = 1.0 / UNAUTHENTICATED_RATE_HZ
    k = 0
    while not stop.is_set():
        sock = _socket(ctx, zmq.REQ if control else zmq.SUB, None if k % 2 == 0 else wrong)
        k += 1
        monitor = sock.get_monitor_socket(zmq.EVENT_HANDSHAKE_SUCCEEDED | zmq.EVENT_HANDSHAKE_FAILED_AUTH
                                          | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL)
        sock.connect(address)
        counts[f"unauthenticated_{key}_attempts"] += 1
        try:
            if control:
                sock.send(msgpack.packb({"cmd": "stop"}), zmq.NOBLOCK)
            else:
                sock.setsockopt(zmq.SUBSCRIBE, b"")
        except zmq.Again:                                 # no connection (yet) to queue the request on
            pass
        if sock.poll(period_s * 1000):
            counts[f"unauthenticated_{key}_answered"] += 1
        while monitor.poll(0):
            event = recv_monitor_message(monitor)["event"]
            outcome = "handshakes_succeeded" if event == zmq.EVENT_HANDSHAKE_SUCCEEDED else "handshakes_failed"
            counts[f"unauthenticated_{key}_{outcome}"] += 1
        sock.disable_monitor()
        monitor.close()
        sock.close()


def main() -> None:
    """The peers' process: the configuration on the first line of standard input; says ``ready`` and waits
    for the next line to attack, attacks until the line after (or the end of the input), then prints the
    counts as one JSON line."""
    config = json.loads(sys.stdin.readline())
    secret = config["secret"].encode("latin-1")
    ctx = zmq.Context()
    stop = threading.Event()
    counts: dict[str, int] = _zero_counts()
    peers = [(_flood_subscriptions, (config, secret)), (_flood_requests, (config, secret)),
             (_unauthenticated, (config["control"], True, secret)),
             (_unauthenticated, (config["telemetry"], False, secret))]
    threads = [threading.Thread(target=f, args=(ctx, *args, stop, counts), daemon=True) for f, args in peers]
    print("ready", flush=True)
    if sys.stdin.readline():
        for th in threads:
            th.start()
        sys.stdin.readline()
    stop.set()
    for th in threads:
        if th.is_alive():
            th.join(10.0)
    print(json.dumps(counts), flush=True)
    ctx.destroy(linger=0)


def _zero_counts() -> dict[str, int]:
    names = ["subscriptions_sent", "subscriptions_not_taken", "oversized_subscriptions", "subscriber_sockets",
             "requests_not_taken", "requests_oversized",
             *(f"requests_{kind}" for kind in ("not_msgpack", "list", "unknown_cmd", "too_large", "no_envelope")),
             *(f"unauthenticated_{key}_{what}" for key in ("control", "telemetry")
               for what in ("attempts", "answered", "handshakes_failed", "handshakes_succeeded"))]
    return dict.fromkeys(names, 0)


def summary(peers: dict[str, Any]) -> dict[str, int]:
    """The peers' counts summed up: malformed requests sent (with an envelope, to be refused), subscriptions
    sent, connections without valid credentials tried, and those of them answered or let in."""
    if not peers:
        return {}
    enveloped = sum(peers[f"requests_{kind}"] for kind in ("not_msgpack", "list", "unknown_cmd", "too_large"))
    keys = ("control", "telemetry")
    return {"malformed_requests_sent": enveloped, "subscriptions_sent": peers["subscriptions_sent"],
            "unauthenticated_attempts": sum(peers[f"unauthenticated_{k}_attempts"] for k in keys),
            "unauthenticated_let_in": sum(peers[f"unauthenticated_{k}_handshakes_succeeded"] for k in keys),
            "unauthenticated_answered": sum(peers[f"unauthenticated_{k}_answered"] for k in keys)}


def render_counts(session: Any, peers: dict[str, Any] | None) -> dict[str, Any]:
    """What the render counted of the soak's requests and subscriptions (the well-behaved clients' among
    them) beside what the hostile ``peers`` counted (:func:`summary`; ``peers`` in full under ``peers``)."""
    control, publisher = session.control, session.publisher
    return {"requests_received": control.requests, "requests_refused": control.errors,
            "subscriptions_refused": publisher.refused_subscriptions, "publisher_reopened": publisher.resets,
            **summary(peers or {}), "peers": peers or {}}


def hostile_lines(h: dict[str, Any] | None) -> list[str]:
    """The soak report's lines on the hostile peers (none without them)."""
    if h is None:
        return []
    if not h["peers"]:
        return ["hostile peers: NO COUNTS (their process did not start or did not report)"]
    return [f"hostile peers: {h['malformed_requests_sent']} malformed requests sent "
            f"({h['peers']['requests_not_taken']} more not taken: the queue to the render full); the render "
            f"refused {h['requests_refused']} of the {h['requests_received']} requests it received (the "
            f"well-behaved clients' among them)",
            f"hostile peers: {h['subscriptions_sent']} subscriptions sent, {h['subscriptions_refused']} refused, "
            f"the publisher reopened {h['publisher_reopened']} times; {h['unauthenticated_attempts']} connections "
            f"without valid credentials, {h['unauthenticated_let_in']} let in, {h['unauthenticated_answered']} "
            f"answered"]


if __name__ == "__main__":
    main()
