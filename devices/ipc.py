"""Private local endpoints: this user's folder for ``ipc://`` sockets, made and checked so that no other local
user can connect or plant a socket, and the checks before binding or connecting to an endpoint.

Used by ``hapticam device serve`` and by the render core's control and telemetry endpoints
(:mod:`hapticam.render.endpoints`).
"""

from __future__ import annotations

import os
import socket
import stat
import tempfile
from pathlib import Path

from hapticam.errors import UsageError

#: the longest ipc:// path (bytes): a Unix socket's address holds 108 bytes with its terminating NUL (Linux)
IPC_PATH_MAX_BYTES = 107


def private_folder() -> Path:
    """This user's folder for ipc:// endpoints (not created here: :func:`ensure_private_folder`):
    ``$XDG_RUNTIME_DIR/hapticam`` when XDG_RUNTIME_DIR is a folder this user owns that no one else may enter,
    else ``hapticam-UID`` in the temporary folder."""
    uid = os.geteuid()
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(runtime):
        try:
            st = os.stat(runtime)
        except OSError:
            st = None
        if st is not None and stat.S_ISDIR(st.st_mode) and st.st_uid == uid and not st.st_mode & 0o077:
            return Path(runtime) / "hapticam"
    return Path(tempfile.gettempdir()) / f"hapticam-{uid}"


def private_endpoint(name: str) -> str:
    """``ipc://`` endpoint ``name`` in :func:`private_folder` (only this user can connect)."""
    return f"ipc://{private_folder() / name}"


def ensure_private_folder(folder: Path) -> Path:
    """Create ``folder`` with mode 0700, or accept an existing one only if it is a folder (not a link) this
    user owns that no one else may enter, in a parent no one else can rename it in; :class:`UsageError`
    otherwise (someone else could then connect, or have put their own socket there)."""
    uid = os.geteuid()
    try:
        parent = os.stat(folder.parent)
    except OSError as exc:
        raise UsageError(f"cannot use {folder.parent} for the private folder: {exc.strerror or exc}") from None
    if (parent.st_mode & 0o022 and not parent.st_mode & stat.S_ISVTX) or parent.st_uid not in (0, uid):
        raise UsageError(f"{folder.parent}: writable by others without the sticky bit, or owned by another "
                         "user; cannot keep a private folder in it (set XDG_RUNTIME_DIR or TMPDIR)")
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise UsageError(f"cannot create the private folder {folder}: {exc.strerror or exc}") from None
    st = os.lstat(folder)
    problem = ("is a symbolic link" if stat.S_ISLNK(st.st_mode) else "is not a folder" if not stat.S_ISDIR(st.st_mode)
               else f"belongs to uid {st.st_uid}, not to you (uid {uid})" if st.st_uid != uid
               else f"has mode {stat.S_IMODE(st.st_mode):o}: others may enter it" if st.st_mode & 0o077 else None)
    if problem is not None:
        raise UsageError(f"private folder {folder} {problem}; refusing to use it (remove it, or chmod 700 a "
                         "folder of your own)")
    return folder


def open_to_local_users(address: str) -> bool:
    """True for an endpoint any local user can connect to without credentials: ``tcp://`` and Linux's
    abstract ``ipc://@NAME`` (a path ``ipc://`` admits whoever may open its file and enter its folders)."""
    return address.startswith(("tcp://", "ipc://@"))


def prepare_ipc(address: str, bind: bool = True) -> None:
    """Before binding (``bind``) or connecting to an ``ipc://`` endpoint: make sure of :func:`private_folder`
    when the endpoint is in it, and before binding refuse a path too long or where a server already listens
    (ZeroMQ would silently take its place). Other endpoints pass unchanged."""
    if not address.startswith("ipc://") or address.startswith("ipc://@"):
        return
    path = address[len("ipc://"):]
    if os.path.dirname(os.path.abspath(path)) == os.path.abspath(private_folder()):
        ensure_private_folder(private_folder())
    if not bind:
        return
    if len(os.fsencode(path)) > IPC_PATH_MAX_BYTES:
        raise UsageError(f"{address}: an ipc:// path is at most {IPC_PATH_MAX_BYTES} bytes long")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(path)
        except OSError:
            return                                       # nothing listens there (absent, or a stale file)
    raise UsageError(f"{address}: another server is listening there; choose another address")
