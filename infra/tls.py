"""Transport security: mutual TLS between the services, server TLS toward players, and who a
caller is.

Every workload (each service, and an operator) holds a certificate signed by the deployment's
CA whose URI SAN is its SPIFFE ID, ``spiffe://<trust domain>/<workload>`` (e.g.
``spiffe://mahjong.local/gateway``), and whose DNS SANs include the bare workload name, which
callers verify (``grpc.ssl_target_name_override``), so a replica is checked for *what* it is,
never for where it listens. A workload's files are a directory in cert-manager's Secret
layout, :data:`TLS_FILES`: ``tls.crt``, ``tls.key``, ``ca.crt``.

* :func:`server_credentials`: a port's credentials, mutual (a client certificate signed by the CA
  required) or server-only (the public ports players reach); re-read whenever the files change,
  so a rotated certificate serves every new connection without a restart;
* :func:`workload_channel`: a channel to another service presenting this workload's certificate
  and verifying the server's name; :class:`ReloadingChannel` makes a new channel when the files
  change, so a long-running caller never presents an expired certificate (and when the address
  file it was given, ``@PATH``, changes: :mod:`infra.addresses`);
* :func:`caller_workload`: the verified workload name of a call's peer ("" when it sent none).

Plaintext is only for tests of that path (``--insecure``); :mod:`devkit.dev_ca` makes the
throwaway CA that development and the tests run the same code on.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

from infra.addresses import AddressFile, is_address_file
from infra.tracing_grpc import traced

TLS_FILES = ("tls.crt", "tls.key", "ca.crt")
DEFAULT_TRUST_DOMAIN = "mahjong.local"
OPERATOR = "operator"  # the workload name of an operator's certificate (mahjong wall reveal, …)
SPIFFE_SCHEME = "spiffe://"
# How often a reloading channel or server looks at its files' modification times (a rotation is
# picked up within this long).
RELOAD_CHECK_SECONDS = 1.0


class TLSConfigError(ValueError):
    """Certificate files that are missing or unreadable; the message names the file and the flag."""


def spiffe_id(workload: str, trust_domain: str = DEFAULT_TRUST_DOMAIN) -> str:
    return f"{SPIFFE_SCHEME}{trust_domain}/{workload}"


def workload_of(spiffe: str, trust_domain: str = DEFAULT_TRUST_DOMAIN) -> str:
    """The workload a SPIFFE ID of ``trust_domain`` names ("" for any other ID)."""
    prefix = f"{SPIFFE_SCHEME}{trust_domain}/"
    if not spiffe.startswith(prefix):
        return ""
    name = spiffe[len(prefix) :]
    return name if name and "/" not in name else ""


@dataclass(frozen=True)
class TLSFiles:
    """A workload's certificate, key and trusted CA: a directory in cert-manager's layout."""

    directory: Path

    @property
    def paths(self) -> tuple[Path, Path, Path]:
        cert, key, ca = (self.directory / name for name in TLS_FILES)
        return cert, key, ca

    def check(self, flag: str = "--tls-dir") -> TLSFiles:
        for path in self.paths:
            if not path.is_file():
                raise TLSConfigError(
                    f"no {path.name} in {self.directory} (the TLS directory, {flag}): every port "
                    "serves TLS; `mahjong certs` makes a development CA and certificates under "
                    ".data/tls, and --insecure runs plaintext (only for tests of that path)"
                )
        return self

    def stamp(self) -> tuple[float, ...]:
        """What changes when the files are rotated (their modification times; 0 when missing)."""
        out = []
        for path in self.paths:
            try:
                out.append(path.stat().st_mtime)
            except OSError:
                out.append(0.0)
        return tuple(out)

    def read(self) -> tuple[bytes, bytes, bytes]:
        """(certificate chain, private key, CA bundle) as PEM bytes."""
        try:
            cert, key, ca = (path.read_bytes() for path in self.paths)
        except OSError as exc:
            raise TLSConfigError(f"cannot read {exc.filename}: {exc.strerror}") from None
        return cert, key, ca


class _Watched:
    """The files' contents, read again when their stamp changes (looked at most once a
    ``RELOAD_CHECK_SECONDS``); ``changed()`` says whether the last look found new files."""

    def __init__(self, files: TLSFiles) -> None:
        self.files = files
        self._lock = threading.Lock()
        self._stamp = files.stamp()
        self.pem = files.read()
        self._looked = time.monotonic()

    def refresh(self) -> bool:
        """Read the files again if they changed; whether they did (and were readable)."""
        now = time.monotonic()
        with self._lock:
            if now - self._looked < RELOAD_CHECK_SECONDS:
                return False
            self._looked = now
            stamp = self.files.stamp()
            if stamp == self._stamp:
                return False
            try:
                pem = self.files.read()
            except TLSConfigError:
                return False  # mid-rotation: keep the old files until the new ones are whole
            if not all(pem):
                return False
            self._stamp, self.pem = stamp, pem
            return True


def server_credentials(files: TLSFiles, *, mutual: bool) -> grpc.ServerCredentials:
    """A port's TLS: ``mutual`` asks every client for a certificate the CA signed (refused
    without one); otherwise the server alone proves itself. Read again on every new connection
    once the files changed."""
    watched = _Watched(files.check())

    def configuration() -> Any:
        cert, key, ca = watched.pem
        return grpc.ssl_server_certificate_configuration([(key, cert)], root_certificates=ca)

    initial = configuration()

    def fetch() -> Any:
        return configuration() if watched.refresh() else None

    return grpc.dynamic_ssl_server_credentials(initial, fetch, require_client_authentication=mutual)


def channel_credentials(files: TLSFiles | None, ca: bytes | None = None) -> grpc.ChannelCredentials:
    """A client's TLS: trust ``files``' CA (or ``ca``), and present ``files``' certificate."""
    if files is None:
        return grpc.ssl_channel_credentials(root_certificates=ca)
    cert, key, file_ca = files.check().read()
    return grpc.ssl_channel_credentials(
        root_certificates=ca or file_ca, private_key=key, certificate_chain=cert
    )


def name_override(server_name: str) -> tuple[tuple[str, Any], ...]:
    """The channel option that verifies the server as ``server_name`` (a DNS SAN of its
    certificate) whatever address it is reached at."""
    return (("grpc.ssl_target_name_override", server_name),) if server_name else ()


def _reloading(kind: str) -> Callable[..., Any]:
    """A ``grpc.Channel`` method of ``kind`` for :class:`ReloadingChannel`: a stub's callable
    that binds to the channel of the moment on every call."""

    def make(self, method, request_serializer=None, response_deserializer=None, *args: Any, **kw):
        # grpc's interceptors pass a fourth argument positionally (_registered_method)
        kwargs = dict(
            request_serializer=request_serializer, response_deserializer=response_deserializer, **kw
        )
        if args:
            kwargs["_registered_method"] = args[0]
        return _ReloadingCallable(self, kind, method, kwargs)

    make.__name__ = kind
    return make


class AddressUnknown(grpc.RpcError, grpc.Call):
    """A call on a channel whose address file (``@PATH``) names no address: not written yet, or
    empty (none up now). UNAVAILABLE, as for a server that is not up, so callers retry it as
    they would that."""

    def __init__(self, path: Path) -> None:
        super().__init__(f"no address: the address file {path} names none (yet)")
        self._details = str(self)

    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.UNAVAILABLE

    def details(self) -> str:
        return self._details

    def initial_metadata(self):
        return ()

    def trailing_metadata(self):
        return ()

    def is_active(self) -> bool:
        return False

    def time_remaining(self):
        return None

    def cancel(self) -> bool:
        return False

    def add_callback(self, callback) -> bool:
        return False


# What makes a ReloadingChannel's underlying channel: (target, credentials or None) -> channel.
MakeChannel = Callable[[str, "grpc.ChannelCredentials | None"], grpc.Channel]


class ReloadingChannel(grpc.Channel):
    """A ``grpc.Channel`` made anew (and the old one closed after its calls' grace) when what it
    is made of changes: the certificate of this workload it presents (``files``, re-read on
    rotation), or where the server is (``address`` ``@PATH``: an address file,
    :class:`infra.addresses.AddressFile`, looked at on every call). Stubs made on it keep
    working across either. ``make(target, credentials)`` builds the underlying channel
    (``credentials`` None without ``files``). Until an address file is written, calls fail
    UNAVAILABLE (:class:`AddressUnknown`)."""

    def __init__(self, address: str, make: MakeChannel, files: TLSFiles | None = None) -> None:
        self._watched = _Watched(files.check()) if files is not None else None
        self._address = AddressFile.of(address)
        self._target = address if self._address is None else self._address.address
        self._make = make
        self._lock = threading.Lock()
        self._channel = self._build() if self._target else None
        self._generation = 0
        self._retired: list[tuple[float, grpc.Channel]] = []
        self._closed = False

    def _credentials(self) -> grpc.ChannelCredentials | None:
        if self._watched is None:
            return None
        cert, key, ca = self._watched.pem
        return grpc.ssl_channel_credentials(
            root_certificates=ca, private_key=key, certificate_chain=cert
        )

    def _build(self) -> grpc.Channel:
        return self._make(self._target, self._credentials())

    def current(self) -> tuple[int, grpc.Channel]:
        """The channel of the moment (and its generation), made anew first if the certificate
        or the address changed."""
        if self._closed:
            raise ValueError("Cannot invoke RPC on closed channel!")  # as grpc's own say
        renew = self._watched is not None and self._watched.refresh()
        if self._address is not None and self._address.refresh():
            renew = True
        if renew:
            with self._lock:
                if self._address is not None:
                    self._target = self._address.address
                if self._channel is not None:
                    self._retired.append((time.monotonic(), self._channel))
                self._channel = self._build() if self._target else None
                self._generation += 1
        self._close_retired()
        channel = self._channel
        if channel is None:
            raise AddressUnknown(self._address.path if self._address else Path())
        return self._generation, channel

    def _close_retired(self, grace: float = 60.0) -> None:
        if not self._retired:
            return
        now = time.monotonic()
        with self._lock:
            old = [c for t, c in self._retired if now - t >= grace]
            self._retired = [(t, c) for t, c in self._retired if now - t < grace]
        for c in old:
            c.close()

    unary_unary = _reloading("unary_unary")
    unary_stream = _reloading("unary_stream")
    stream_unary = _reloading("stream_unary")
    stream_stream = _reloading("stream_stream")

    def subscribe(self, callback, try_to_connect=False):
        self.current()[1].subscribe(callback, try_to_connect)

    def unsubscribe(self, callback):
        if self._channel is not None:
            self._channel.unsubscribe(callback)

    def close(self):
        with self._lock:
            channels = [self._channel, *(c for _, c in self._retired)]
            self._channel, self._retired, self._closed = None, [], True
        for c in channels:
            if c is not None:
                c.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


class _ReloadingCallable:
    """A stub's method on a :class:`ReloadingChannel`: bound to the channel of the moment."""

    def __init__(self, owner: ReloadingChannel, kind: str, method: str, kwargs: dict) -> None:
        self._owner, self._kind, self._method, self._kwargs = owner, kind, method, kwargs
        self._bound: tuple[int, Any] | None = None
        self._method_bytes = method.encode() if isinstance(method, str) else method

    @property
    def _method_name(self) -> bytes:
        return self._method_bytes

    def _callable(self) -> Any:
        generation, channel = self._owner.current()
        bound = self._bound
        if bound is None or bound[0] != generation:
            bound = (generation, getattr(channel, self._kind)(self._method, **self._kwargs))
            self._bound = bound
        return bound[1]

    def __getattr__(self, name: str) -> Any:  # with_call, future, …
        return getattr(self._callable(), name)

    def __call__(self, *args, **kwargs):
        return self._callable()(*args, **kwargs)


def workload_channel(
    address: str,
    files: TLSFiles,
    server_workload: str,
    options: Sequence[tuple[str, Any]] = (),
) -> ReloadingChannel:
    """A channel to ``server_workload`` at ``address`` (or the address file ``@PATH`` names),
    presenting ``files``' certificate (mutual TLS) and reloading it on rotation."""
    opts = [*options, *name_override(server_workload)]
    return ReloadingChannel(
        address,
        lambda target, creds: traced(grpc.secure_channel(target, creds, options=opts)),
        files,
    )


PeerAuth = Mapping[str, Sequence[Any]]


def peer_auth(context) -> PeerAuth | None:
    """What the transport verified of the call's peer (``context.auth_context()``), read once per
    call; None for a context without a transport (a test double)."""
    try:
        return context.auth_context() or {}
    except Exception:
        return None


def workload_in(auth: PeerAuth | None, trust_domain: str = DEFAULT_TRUST_DOMAIN) -> str:
    """The workload name in the peer's verified certificate ("" for a peer that presented none:
    a player on a public port, or plaintext)."""
    for value in (auth or {}).get("peer_spiffe_id", ()):
        text = value.decode() if isinstance(value, bytes) else str(value)
        name = workload_of(text, trust_domain)
        if name:
            return name
    return ""


def caller_workload(context, trust_domain: str = DEFAULT_TRUST_DOMAIN) -> str:
    """The workload name in the verified certificate of the call's peer (:func:`workload_in`)."""
    return workload_in(peer_auth(context), trust_domain)


def caller_subject(context) -> str:
    """Who a call comes from, for an audit log: the SPIFFE ID of the peer's verified
    certificate and its subject's common name (``spiffe://mahjong.local/operator CN=alice``);
    "" without a certificate."""
    auth = peer_auth(context) or {}

    def texts(key: str) -> list[str]:
        return [v.decode() if isinstance(v, bytes) else str(v) for v in auth.get(key, ())]

    return " ".join(texts("peer_spiffe_id") + [f"CN={cn}" for cn in texts("x509_common_name")])


def is_plaintext(auth: PeerAuth | None) -> bool:
    """Whether the call came over a port without TLS (the health port, or --insecure)."""
    kinds = (auth or {}).get("transport_security_type", ())
    return b"ssl" not in kinds and "ssl" not in kinds


def default_tls_dir(workload: str) -> str:
    """Where a workload's files are when no flag names them: ``MAHJONG_TLS_DIR``, else the
    development CA's directory for it (``.data/tls/<workload>``, made by ``mahjong certs``)."""
    return os.environ.get("MAHJONG_TLS_DIR") or str(Path(".data") / "tls" / workload)


def dial(
    address: str,
    server_workload: str,
    files: TLSFiles | None,
    options: Sequence[tuple[str, Any]] = (),
) -> grpc.Channel:
    """A channel from this workload to ``server_workload`` at ``address`` (or the address file
    ``@PATH`` names): mutual TLS with ``files`` (:func:`workload_channel`), plaintext when there
    are none (``--insecure``)."""
    if files is None:
        return plaintext_channel(address, options)
    return workload_channel(address, files, server_workload, options)


def plaintext_channel(address: str, options: Sequence[tuple[str, Any]] = ()) -> grpc.Channel:
    """A plaintext channel to ``address``, or to the address in the address file ``@PATH``."""
    opts = list(options)
    if not is_address_file(address):
        return traced(grpc.insecure_channel(address, options=opts))
    return ReloadingChannel(
        address, lambda target, _: traced(grpc.insecure_channel(target, options=opts))
    )


def env_insecure(env: Mapping[str, str] | None = None) -> bool:
    """Whether ``MAHJONG_INSECURE`` (in ``env``, default the process's) asks for plaintext."""
    raw = (os.environ if env is None else env).get("MAHJONG_INSECURE", "")
    return raw.strip().lower() in ("1", "true", "yes", "on")


# Where a player's client finds the CA that signed the gateway's certificate when nothing says:
# the development CA that `make run` and `mahjong certs` make.
DEV_CA_FILE = Path(".data") / "tls" / "ca.crt"


def player_credentials(ca_file: str = "") -> grpc.ChannelCredentials | None:
    """A player's TLS toward a gateway's public port: trust ``ca_file``, else ``MAHJONG_TLS_CA``,
    else the development CA (``.data/tls/ca.crt``); a server whose certificate a public CA
    signed needs ``MAHJONG_TLS_CA=system`` (the system's roots). None (plaintext) with
    ``MAHJONG_INSECURE``."""
    if env_insecure():
        return None
    path = ca_file or os.environ.get("MAHJONG_TLS_CA", "") or str(DEV_CA_FILE)
    if path == "system":
        return grpc.ssl_channel_credentials()
    try:
        return grpc.ssl_channel_credentials(root_certificates=Path(path).read_bytes())
    except OSError as exc:
        raise TLSConfigError(
            f"cannot read the CA file {path} ({exc.strerror}): set MAHJONG_TLS_CA to the CA that "
            "signed the gateway's certificate (`make run` makes .data/tls/ca.crt)"
        ) from None


def client_channel(
    target: str, options: Sequence[tuple[str, Any]] = (), ca_file: str = ""
) -> grpc.Channel:
    """A player's channel to a gateway's public port (:func:`player_credentials`) at ``target``,
    or at the address in the address file ``@PATH``."""
    creds = player_credentials(ca_file)
    if creds is None:
        return plaintext_channel(target, options)
    opts = list(options)
    if not is_address_file(target):
        return traced(grpc.secure_channel(target, creds, options=opts))
    return ReloadingChannel(
        target, lambda t, _: traced(grpc.secure_channel(t, creds, options=opts))
    )


def operator_tls_dir() -> str:
    """An operator command's certificate: ``MAHJONG_OPERATOR_TLS_DIR``, else the development
    operator's (``.data/tls/operator``)."""
    return os.environ.get("MAHJONG_OPERATOR_TLS_DIR") or str(Path(".data") / "tls" / OPERATOR)
