"""Where the sockets listen by default, and who can connect there: ``render --telemetry --control``,
``monitor`` and ``device serve`` default to ``ipc://`` endpoints in a folder only the user can enter (made
with mode 0700; refused when it exists with another owner, other permissions, or as a link); a ``tcp://``
address is used only when named, and then the render says that any local user can connect."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

import pytest

from hapticam.cli import build_parser, main
from hapticam.devices.ipc import ensure_private_folder, private_folder
from hapticam.world.sim import SimulatedDevice
from hapticam.world.users import press
from hapticam.errors import ControlError, UsageError
from hapticam.models.files import load_model_only
from hapticam.render.endpoints import Auth, is_loopback
from hapticam.render.loop import LoopConfig
from hapticam.render.session import RenderSession
from hapticam.render.telemetry import TelemetryPublisher
from test_telemetry import free_address


@pytest.fixture
def temp_root(monkeypatch, tmp_path_factory):
    """A folder like /tmp (sticky, anyone may write) standing for the temporary folder; no XDG_RUNTIME_DIR."""
    tmp_path_factory.getbasetemp()                        # pytest's own folders stay where they were
    root = Path(tempfile.mkdtemp(prefix="hapticam-endpoints-", dir="/tmp"))
    os.chmod(root, 0o1777)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    yield root
    shutil.rmtree(root, ignore_errors=True)


def _session(**sockets) -> RenderSession:
    return RenderSession(load_model_only("example:linear-key"), SimulatedDevice(user=press(0.0037, 1.0).repeating()),
                         LoopConfig(realtime=False), **sockets)


def _ipc_folder(address: str) -> Path:
    assert address.startswith("ipc://"), address
    return Path(address[len("ipc://"):]).parent


def _private(folder: Path) -> bool:
    st = os.lstat(folder)
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and stat.S_IMODE(st.st_mode) == 0o700


def test_render_and_monitor_default_to_ipc_in_a_folder_only_the_user_can_enter(temp_root):
    args = build_parser().parse_args(["render", "example:linear-key", "--telemetry", "--control"])
    monitor_args = build_parser().parse_args(["monitor"])
    folder = _ipc_folder(args.telemetry)
    assert folder == _ipc_folder(args.control) == temp_root / f"hapticam-{os.geteuid()}"
    assert monitor_args.address == args.telemetry
    session = _session(telemetry=args.telemetry, control=args.control)      # binding makes the folder
    try:
        assert _private(folder)
        assert {p.name for p in folder.iterdir()} == {"telemetry", "control"}
        assert not any("any local user" in note for note in session.notes)
    finally:
        session._close_sockets()


def test_the_runtime_folder_is_used_when_it_is_the_users_alone(temp_root, monkeypatch):
    runtime = temp_root / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    assert private_folder() == runtime / "hapticam"
    os.chmod(runtime, 0o755)                              # others may enter it: not a private place
    assert private_folder() == temp_root / f"hapticam-{os.geteuid()}"


def test_device_serve_defaults_to_the_private_folder(temp_root, capsys):
    assert main(["device", "serve", "--duration", "0.3"]) == 0
    out = capsys.readouterr()
    endpoint = f"ipc://{temp_root / f'hapticam-{os.geteuid()}' / 'device'}"
    assert f"serving the simulated device on {endpoint}" in out.out
    assert _private(_ipc_folder(endpoint)) and "warning" not in out.err


def _make_wrong(kind: str, folder: Path, elsewhere: Path) -> None:
    if kind == "mode":
        folder.mkdir(mode=0o700)
        os.chmod(folder, 0o755)
    elif kind == "owner":
        if os.geteuid() != 0:
            pytest.skip("giving a folder to another user needs root")
        folder.mkdir(mode=0o700)
        os.chown(folder, 65534, 65534)
    elif kind == "symlink":
        elsewhere.mkdir(mode=0o700)                       # a good folder, but reached through a link
        folder.symlink_to(elsewhere)
    else:
        folder.write_text("")


@pytest.mark.parametrize("kind", ["mode", "owner", "symlink", "file"])
def test_a_private_folder_that_is_not_private_is_refused_everywhere(temp_root, kind, capsys):
    folder = temp_root / f"hapticam-{os.geteuid()}"
    _make_wrong(kind, folder, temp_root / "elsewhere")
    before = os.lstat(folder)
    with pytest.raises(UsageError, match=str(folder)):
        ensure_private_folder(folder)
    args = build_parser().parse_args(["render", "example:linear-key", "--telemetry", "--control"])
    with pytest.raises(ControlError, match=str(folder)):
        _session(telemetry=args.telemetry)
    with pytest.raises(ControlError, match=str(folder)):
        _session(control=args.control)
    for argv in (["monitor", "--duration", "0.1"], ["device", "serve", "--duration", "0.1"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and str(folder) in err and "Traceback" not in err
    after = os.lstat(folder)                              # left as it was: not followed, not changed
    assert (after.st_mode, after.st_uid, after.st_ino) == (before.st_mode, before.st_uid, before.st_ino)
    assert not (temp_root / "elsewhere").exists() or not any((temp_root / "elsewhere").iterdir())


def test_a_parent_others_can_rename_in_is_refused(temp_root):
    os.chmod(temp_root, 0o777)                            # writable by all, without the sticky bit
    with pytest.raises(UsageError, match="sticky"):
        ensure_private_folder(temp_root / "hapticam-x")
    assert not (temp_root / "hapticam-x").exists()


def test_a_second_server_on_the_same_ipc_endpoint_is_refused_not_silently_swapped_in(temp_root):
    address = build_parser().parse_args(["monitor"]).address
    first = TelemetryPublisher(address, 1000.0)
    try:
        with pytest.raises(ControlError, match="listening"):
            TelemetryPublisher(address, 1000.0)
    finally:
        first.close()


def test_tcp_is_used_only_when_named_and_then_the_render_says_any_local_user_can_connect(tmp_path):
    telemetry, control = free_address(), free_address()
    session = _session(telemetry=telemetry, control=control)
    try:
        warned = [note for note in session.notes if "any local user" in note]
        assert len(warned) == 2 and telemetry in warned[0] and control in warned[1]
    finally:
        session._close_sockets()
    secret = tmp_path / "secret"
    secret.write_bytes(b"s" * 32)
    secret.chmod(0o600)
    session = _session(control=free_address(), auth=Auth.from_options(str(secret), None))
    try:
        assert not any("any local user" in note for note in session.notes)
    finally:
        session._close_sockets()


@pytest.mark.parametrize("address,loopback", [("tcp://127.0.0.1:5556", True), ("tcp://[::1]:5556", True),
                                              ("tcp://localhost:5556", True), ("tcp://127.0.0.1.example.com:5556", False),
                                              ("tcp://0.0.0.0:5556", False), ("tcp://lo:5556", False)])
def test_only_loopback_addresses_count_as_loopback(address, loopback):
    assert is_loopback(address) is loopback


def test_a_secret_longer_than_zeromq_plain_carries_is_refused_with_one_line(tmp_path, capsys):
    secret = tmp_path / "secret"
    secret.write_bytes(b"s" * 300)                        # PLAIN carries at most 255 bytes (RFC 24)
    secret.chmod(0o600)
    assert main(["monitor", free_address(), "--auth-secret", str(secret), "--duration", "0.1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--auth-secret" in err and "Traceback" not in err
