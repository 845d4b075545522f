"""Where the telemetry and control sockets may listen, and how their clients prove who they are.

Who can connect:

- by default (:func:`default_endpoint`) only this user: the sockets are ``ipc://`` files in this user's
  private folder (``$XDG_RUNTIME_DIR/hapticam``, else ``hapticam-UID`` in the temporary folder; mode 0700,
  refused when it exists with another owner, other permissions, or as a link:
  :func:`hapticam.devices.ipc.ensure_private_folder`);
- on an ``ipc://`` path given by name, whoever may enter its folders and open the file;
- on a loopback ``tcp://`` address given by name, without credentials, any local user (the session
  says so when it starts: :func:`prepare_bind`);
- beyond this machine, only with credentials.

Without authentication a socket binds only to this machine: loopback TCP (``127.0.0.0/8``,
``localhost``, ``[::1]``) or ``ipc://``. Beyond loopback it needs one of ZeroMQ's authenticated
mechanisms (RFC 23 ZMTP security, checked by a ZAP handler, RFC 27):

- a shared secret (ZeroMQ PLAIN, user ``hapticam``): the secret is read from a file that only its owner
  may read (never from the command line, where ``ps`` shows it). PLAIN does not encrypt: on an untrusted
  network use CURVE.
- CURVE (CurveZMQ, RFC 26: Curve25519 keys, encrypted and authenticated): the server's folder holds its
  secret certificate ``server.key_secret`` and the public certificates of the clients it admits in
  ``clients/``; a client's folder holds ``server.key`` (the server's public certificate) and its own
  ``client.key_secret``. :func:`make_curve_keys` writes a matching set into one folder.

A client without the right credentials gets no connection (the handshake fails; its request times out).
"""

from __future__ import annotations

import ipaddress
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import zmq

from hapticam.devices.ipc import open_to_local_users, prepare_ipc, private_endpoint
from hapticam.errors import ControlError, ParameterError, UsageError

PLAIN_USER = b"hapticam"
MIN_SECRET_BYTES = 16
MAX_SECRET_BYTES = 255                  # the longest password ZeroMQ PLAIN carries (RFC 24)


def default_endpoint(name: str) -> str:
    """The default endpoint ``name`` (``telemetry``, ``control``): ``ipc://`` in this user's private folder,
    which no other user can enter (the folder is made or checked when a socket binds or connects)."""
    return private_endpoint(name)


def is_loopback(address: str) -> bool:
    """True for ``ipc://`` and loopback ``tcp://`` endpoints (``localhost``, ``127.0.0.0/8``, ``[::1]``;
    an interface name or a host name is not)."""
    if address.startswith("ipc://"):
        return True
    if not address.startswith("tcp://"):
        return False
    host = address[len("tcp://"):].rpartition(":")[0]
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class AuthError(ParameterError, ControlError):
    """Unusable credentials: a :class:`~hapticam.errors.ControlError` whose ``parameter`` names the setting
    (``secret_file``, ``curve_dir``), which a command says as its flag."""


@dataclass(frozen=True)
class Auth:
    """Credentials: a shared ``secret`` (PLAIN) or a CURVE key folder ``curve_dir`` (module docstring)."""

    secret: bytes | None = None
    curve_dir: Path | None = None

    @classmethod
    def from_options(cls, secret_file: str | None, curve_dir: str | None) -> "Auth | None":
        """From a shared secret's file ``secret_file`` or a CURVE key folder ``curve_dir`` (at most one);
        ``None`` when neither. An unusable one raises :class:`AuthError` naming it."""
        if secret_file and curve_dir:
            raise AuthError("curve_dir", "give secret_file or curve_dir, not both")
        if secret_file:
            try:
                return cls(secret=read_secret(secret_file))
            except AuthError as exc:
                raise AuthError("secret_file", exc.problem) from None
        if curve_dir:
            folder = Path(curve_dir)
            if not folder.is_dir():
                raise AuthError("curve_dir", f"{folder}: not a folder")
            return cls(curve_dir=folder)
        return None

    @property
    def mechanism(self) -> str:
        return "CURVE" if self.curve_dir is not None else "PLAIN"


def read_secret(path: str | os.PathLike[str]) -> bytes:
    """The shared secret in ``path``: 16 to 255 bytes, in a file no one but its owner can read; otherwise
    :class:`AuthError` of ``path``."""
    p = Path(path)
    try:
        st = p.stat()
        data = p.read_bytes()[: MAX_SECRET_BYTES + 1]
    except OSError as exc:
        raise AuthError("path", f"{p}: cannot read ({exc.strerror or exc})") from None
    if st.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise AuthError("path", f"{p}: readable by others (mode {stat.S_IMODE(st.st_mode):o}); chmod 600 {p}")
    secret = data.strip()
    if not (MIN_SECRET_BYTES <= len(secret) <= MAX_SECRET_BYTES):
        raise AuthError("path", f"{p}: the secret must be {MIN_SECRET_BYTES} to {MAX_SECRET_BYTES} bytes, got "
                                f"{len(secret)}")
    return secret


def require_loopback(address: str, what: str, auth: Auth | None = None) -> None:
    """Refuse to bind beyond this machine without authentication (module docstring)."""
    if auth is None and not is_loopback(address):
        raise ControlError(f"{what}: {address} is not a loopback address; without authentication hapticam "
                           "binds only to 127.0.0.1, localhost, [::1] or ipc:// (give --auth-secret FILE or "
                           "--auth-curve DIR to listen beyond this machine)")


def prepare_bind(address: str, what: str, auth: Auth | None = None) -> str | None:
    """Before ``what`` (``telemetry``, ``control``) binds ``address``: refuse what :func:`require_loopback`
    refuses, make sure of the private folder of an ``ipc://`` endpoint in it and refuse one where another
    server listens (:func:`hapticam.devices.ipc.prepare_ipc`). Returns a warning to show the user
    when any local user can connect (``tcp://`` without credentials), else ``None``."""
    require_loopback(address, what, auth)
    try:
        prepare_ipc(address)
    except UsageError as exc:
        raise ControlError(f"{what}: {exc}") from None
    if auth is None and open_to_local_users(address):
        rights = ("read the live telemetry" if what == "telemetry" else
                  "drive the render (set parameters, load models, record, stop)")
        return (f"{what} on {address} has no authentication: any local user can connect and {rights}; "
                "without an address it listens where only you can connect, or give --auth-secret or --auth-curve")
    return None


def prepare_connect(address: str) -> None:
    """Before a client connects to ``address``: an ``ipc://`` endpoint in this user's private folder is used
    only if the folder is this user's alone (else someone else's server could be there)."""
    try:
        prepare_ipc(address, bind=False)
    except UsageError as exc:
        raise ControlError(str(exc)) from None


def _certificate(path: Path, secret: bool) -> tuple[bytes, bytes | None]:
    import zmq.auth

    try:
        public, private = zmq.auth.load_certificate(path)
    except (OSError, ValueError) as exc:
        raise ControlError(f"CURVE key {path}: cannot load ({exc})") from None
    if secret and private is None:
        raise ControlError(f"CURVE key {path}: holds no secret key")
    return public, private


class ServerSecurity:
    """The server side of :class:`Auth` for every socket of one session (one ZAP handler per context)."""

    def __init__(self, auth: Auth, context: zmq.Context | None = None) -> None:
        from zmq.auth.thread import ThreadAuthenticator

        self.auth = auth
        self.context = context or zmq.Context.instance()
        if auth.curve_dir is not None:
            self.keys = _certificate(auth.curve_dir / "server.key_secret", secret=True)
            clients = auth.curve_dir / "clients"
            if not clients.is_dir() or not any(clients.glob("*.key")):
                raise AuthError("curve_dir", f"{auth.curve_dir}: no admitted client keys in {clients}/*.key")
        self.authenticator: Any = ThreadAuthenticator(self.context)
        self.authenticator.start()
        if auth.curve_dir is not None:
            self.authenticator.configure_curve(domain="*", location=str(auth.curve_dir / "clients"))
        else:
            self.authenticator.configure_plain(domain="*", passwords={PLAIN_USER.decode(): auth.secret.decode(
                "latin-1")})

    def apply(self, socket: zmq.Socket) -> None:
        """Make ``socket`` (before it binds) require the credentials."""
        if self.auth.curve_dir is not None:
            socket.curve_publickey, socket.curve_secretkey = self.keys
            socket.curve_server = True
        else:
            socket.plain_server = True

    def close(self) -> None:
        self.authenticator.stop()


def secure_client(socket: zmq.Socket, auth: Auth | None) -> None:
    """Give a client ``socket`` (before it connects) the credentials of ``auth`` (no-op for ``None``)."""
    if auth is None:
        return
    if auth.curve_dir is not None:
        server_public, _ = _certificate(auth.curve_dir / "server.key", secret=False)
        socket.curve_publickey, socket.curve_secretkey = _certificate(auth.curve_dir / "client.key_secret",
                                                                      secret=True)
        socket.curve_serverkey = server_public
    else:
        socket.plain_username = PLAIN_USER
        socket.plain_password = auth.secret


def make_curve_keys(folder: str | os.PathLike[str]) -> Path:
    """Write a server and a client CURVE certificate into ``folder`` (and the client's public one into
    ``folder/clients``), usable as both sides' ``--auth-curve`` folder on one machine. Returns the folder."""
    import shutil

    import zmq.auth

    root = Path(folder)
    (root / "clients").mkdir(parents=True, exist_ok=True)
    zmq.auth.create_certificates(root, "server")
    zmq.auth.create_certificates(root, "client")
    shutil.copy(root / "client.key", root / "clients" / "client.key")
    for p in root.glob("*.key_secret"):
        os.chmod(p, 0o600)
    return root
