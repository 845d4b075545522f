"""``hapticam device serve``: serve the simulated device over ZeroMQ for ``render --device zmq:ADDRESS``.

::

    hapticam device serve [ADDRESS] [--user press|sine|sweep|finger] [--depth-mm D] [--seed N]
                          [--duration S] [--allow-network] [--json]

SIGTERM and Ctrl-C stop serving with zero force and print the request counts. Who can connect: by default
only this user (``ipc://`` in this user's private folder, :func:`hapticam.devices.ipc.private_folder`, which also holds the
default endpoints of ``render`` and ``monitor``); on a loopback ``tcp://`` address given by name, any local
user (a warning says so); another interface needs ``--allow-network`` (the protocol has no authentication;
serve on a trusted network only). Messages are bounded (``SERVE_MAX_MESSAGE_BYTES`` of
:mod:`hapticam.devices.remote_server`). Network delay erodes passivity: a render through ``--device zmq:``
keeps the passivity observer and controller on (:attr:`hapticam.devices.base.DeviceSpec.passivity_required`).
"""

from __future__ import annotations

import argparse
import json
import math
import signal
import sys
import threading

from hapticam.commands.probe import seed_arg
from hapticam.devices.ipc import open_to_local_users, prepare_ipc, private_endpoint
from hapticam.errors import UsageError, parameters_as_flags

#: the longest --duration (s), as render and monitor take: a timer past about 9e9 s overflows
MAX_DURATION_S = 1e9
def register(sub: argparse._SubParsersAction, bench: argparse._SubParsersAction) -> None:
    """Add ``device serve`` (``bench`` unused)."""
    d = sub.add_parser("device", help="serve a device to other processes or machines",
                       description="Serve a device over ZeroMQ (render it elsewhere with --device zmq:ADDRESS).")
    dsub = d.add_subparsers(dest="device_command", metavar="COMMAND", required=True)
    s = dsub.add_parser("serve", help="serve the simulated device on an address (default: only you can connect)",
                        description="Serve the simulated device (with its scripted user) on ADDRESS until "
                                    "Ctrl-C or --duration; a render connects with --device zmq:ADDRESS.")
    s.add_argument("address", nargs="?", default=None,
                   help=f"bind address (default {private_endpoint('device')}: only you can connect); a loopback "
                        "tcp://127.0.0.1:PORT lets any local user on this machine command forces")
    s.add_argument("--user", default="press", choices=("press", "sine", "sweep", "finger"),
                   help="simulated user at the handle (default press)")
    s.add_argument("--depth-mm", type=float, default=4.0, help="travel of the simulated user (mm, default 4)")
    s.add_argument("--seed", type=seed_arg, default=0, help="simulator noise seed (default 0)")
    s.add_argument("--duration", type=float, default=None, help="stop after this many seconds (default: Ctrl-C)")
    s.add_argument("--allow-network", action="store_true",
                   help="allow a bind address beyond loopback (no authentication: trusted networks only)")
    s.add_argument("--json", action="store_true", help="print the request counts as one JSON object at the end")
    s.set_defaults(func=_cmd_serve)


def _cmd_serve(args: argparse.Namespace) -> int:
    from hapticam.devices.remote_server import check_bind_address, serve_device
    from hapticam.world.sim import SimulatedDevice
    from hapticam.world.users import make_user

    if args.duration is not None and not (math.isfinite(args.duration) and 0 < args.duration <= MAX_DURATION_S):
        raise UsageError(f"--duration must be a positive number of seconds of at most {MAX_DURATION_S:g}, "
                         f"got {args.duration:g}")
    address = private_endpoint("device") if args.address is None else args.address
    check_bind_address(address, args.allow_network)
    prepare_ipc(address)
    if open_to_local_users(address):
        print(f"warning: {address} has no authentication: any local user (and with --allow-network anyone who "
              "can reach it) can connect and command forces; the default ipc:// address admits only you",
              file=sys.stderr)
    with parameters_as_flags({"depth_m": "--depth-mm"}):
        user = make_user(args.user, 1.0 if args.user in ("press", "sine") else 4.0, args.depth_mm * 1e-3).repeating()
    stop = threading.Event()
    timer = threading.Timer(args.duration, stop.set) if args.duration is not None else None
    info = sys.stderr if args.json else sys.stdout

    def ready(endpoint: str) -> None:
        print(f"serving the simulated device on {endpoint} (render with --device zmq:{endpoint}); "
              "Ctrl-C to stop", file=info, flush=True)
        if timer is not None:
            timer.start()

    previous = signal.signal(signal.SIGTERM, lambda signum, frame: stop.set())   # SIGTERM ends as Ctrl-C does
    with SimulatedDevice(user=user, seed=args.seed) as device:
        try:
            stats = serve_device(device, address, stop=stop, on_ready=ready, allow_network=args.allow_network)
        finally:
            if timer is not None:
                timer.cancel()
            signal.signal(signal.SIGTERM, previous)
    counts = {k: v for k, v in vars(stats).items() if not k.startswith("_")}
    if args.json:
        print(json.dumps(counts))
    else:
        print(", ".join(f"{k}: {v}" for k, v in counts.items()))
    return 0
