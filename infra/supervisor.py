"""Run services as real processes: ``mahjong run`` and the integration tests use this.

Each service is started as ``python -m services.cli serve NAME`` with its ports (``mahjong run``:
the defaults of infra.addresses; tests: 0 or ``auto``, ports the OS picks), its store and a
``--port-file`` in which it names the ports it bound (:mod:`infra.ports`); the supervisor reads
that, waits for grpc health SERVING of the service's own name there, and on SIGINT/SIGTERM stops
the children with SIGTERM, all at once (:func:`stop_all`), so each drains gracefully.

Every child gets ``MAHJONG_INTERNAL_TOKEN`` in its environment — the one already set in ours, else
a random token made once per supervising process (:func:`run_token`) — so the services started
together authenticate each other's internal calls (infra.server ``internal_methods``) and the
real stack never runs in the unauthenticated development mode.

Every child also gets its certificate (``MAHJONG_TLS_DIR``, ``<tls root>/<service>``) from the
development CA (:mod:`devkit.dev_ca`, made or renewed before the first start), so the stacks
started here run mutual TLS exactly as a deployment does; the supervisor checks health with the
operator's certificate. ``MAHJONG_INSECURE`` in the environment runs them plaintext instead
(tests of that path).
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from infra.addresses import DEFAULT_PORTS, INTERNAL_PORTS, SERVICE_ORDER, WEB_PORTS
from infra.ports import AUTO_PORT, ServedPorts, port_flag
from infra.tls import OPERATOR, TLSFiles, dial, env_insecure

# The development CA and its certificates (devkit.dev_ca), relative to the repository.
DEV_TLS_ROOT = Path(__file__).resolve().parent.parent / ".data" / "tls"

# The module a service process runs (``python -m ENTRY_MODULE serve NAME``): the ``mahjong``
# command, which finds the services (shared/ never imports them).
ENTRY_MODULE = "services.cli"


def operator_files(root: Path = DEV_TLS_ROOT) -> TLSFiles | None:
    """The development operator's certificate (None when plaintext: ``MAHJONG_INSECURE``)."""
    return None if env_insecure() else TLSFiles(root / OPERATOR)


def health_status(channel: grpc.Channel, service: str = "", timeout: float = 1.0) -> int:
    """The health status ``channel``'s server reports for ``service`` ("" = the server's)."""
    stub = health_pb2_grpc.HealthStub(channel)
    return stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=timeout).status


def wait_for_serving(
    address: str,
    timeout: float = 20.0,
    service: str = "",
    *,
    server: str = "",
    tls: TLSFiles | None = None,
) -> None:
    """Block until ``address`` answers health SERVING (for ``service``, "" = the server's);
    TimeoutError otherwise. With ``tls``, over TLS with that certificate, verifying the server as
    ``server``."""
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    with dial(address, server, tls) as channel:
        while time.monotonic() < deadline:
            try:
                if health_status(channel, service) == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.RpcError as exc:
                last = exc
            time.sleep(0.05)
    raise TimeoutError(f"{address} not SERVING after {timeout}s: {last}")


INTERNAL_TOKEN_ENV = "MAHJONG_INTERNAL_TOKEN"
_run_token: str | None = None
_run_token_lock = threading.Lock()


def run_token() -> str:
    """This process's internal token for the services it starts: ``MAHJONG_INTERNAL_TOKEN`` from
    the environment when set, else random, made once (every child shares it)."""
    global _run_token
    with _run_token_lock:
        if _run_token is None:
            _run_token = os.environ.get(INTERNAL_TOKEN_ENV) or secrets.token_urlsafe(32)
        return _run_token


class StartupError(RuntimeError):
    """A service process that exited before it answered SERVING (the message ends with its log)."""


def log_tail(path: Path | None, lines: int = 30) -> str:
    """The last ``lines`` lines of a log file ("" without one)."""
    if path is None or not path.exists():
        return ""
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


@dataclass
class ServiceProcess:
    """One service running as a child process.

    It listens on ``port`` and (a service players call too, infra.addresses.INTERNAL_PORTS)
    ``internal_port``, each 0 for a port the OS picks, and serves /metrics on ``metrics_port``
    (0: none; :data:`infra.ports.AUTO_PORT`: a port the OS picks). Where it really listens is
    :attr:`served`, read from the port file it writes once every port is bound
    (``--port-file``, :class:`infra.ports.ServedPorts`): :meth:`wait_ready` reads it, then
    waits until the service answers health SERVING for its own name there. No port is picked up
    front, so nothing else can take one between the pick and the bind."""

    name: str
    port: int = 0
    metrics_port: int = 0
    store_url: str = "memory://"
    extra_args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    log_path: Path | None = None
    proc: subprocess.Popen | None = None
    internal_token: str = ""  # "" = run_token(); MAHJONG_INTERNAL_TOKEN in ``env`` wins
    # The mutual-TLS port of a service players call too (INTERNAL_PORTS; 0 = a port the OS picks).
    internal_port: int = 0
    # The development CA's directory: the child's certificate is ``tls_root/<name>``.
    tls_root: Path = DEV_TLS_ROOT
    # A command the service runs under, e.g. ``["taskset", "-c", "0"]`` (the benchmarks pin
    # the gateway to one core).
    prefix: list[str] = field(default_factory=list)
    # Where it listens, from its port file (None until wait_ready read it).
    served: ServedPorts | None = field(default=None, init=False)
    _port_file: Path | None = field(default=None, init=False, repr=False)
    _port_dir: str | None = field(default=None, init=False, repr=False)

    def child_env(self) -> dict[str, str]:
        """The child's environment: ours, the internal token and the store URL, then ``env``.
        The URL goes in the environment, never on the command line (``ps`` shows that, and a
        PostgreSQL URL may hold a password)."""
        token = self.internal_token or run_token()
        store = {f"MAHJONG_{self.name.upper()}_STORE_URL": self.store_url}
        tls = {"MAHJONG_TLS_DIR": str(self.tls_root / self.name)}
        return {**os.environ, INTERNAL_TOKEN_ENV: token, **tls, **store, **self.env}

    @property
    def ports(self) -> ServedPorts:
        """Where it listens (after :meth:`wait_ready`)."""
        if self.served is None:
            raise RuntimeError(f"{self.name}: its ports are known once wait_ready() returned")
        return self.served

    @property
    def address(self) -> str:
        """Its main gRPC port (where players call a service they call)."""
        return self.ports.address

    @property
    def internal_address(self) -> str:
        """Where the other services call it: its mutual-TLS port, or its only port."""
        return self.ports.internal_address

    @property
    def plaintext(self) -> bool:
        return env_insecure(self.child_env())

    def _new_port_file(self) -> Path:
        """A path for the child's port file, with nothing there yet: beside its log, or in a
        directory of its own."""
        if self.log_path is not None:
            path = self.log_path.with_name(f"{self.log_path.stem}.ports.json")
        else:
            self._port_dir = self._port_dir or tempfile.mkdtemp(prefix=f"mahjong-{self.name}-")
            path = Path(self._port_dir) / "ports.json"
        path.unlink(missing_ok=True)  # a restart's: never read the ports of the last run
        return path

    def start(self) -> ServiceProcess:
        internal: list[str] = []
        if self.name in INTERNAL_PORTS:
            internal = ["--internal-port", str(self.internal_port)]
        if not self.plaintext:
            from devkit import dev_ca

            dev_ca.ensure(SERVICE_ORDER, self.tls_root)
        self.served = None
        self._port_file = self._new_port_file()
        cmd = [
            *self.prefix,
            sys.executable,
            "-m",
            ENTRY_MODULE,
            "serve",
            self.name,
            "--port",
            str(self.port),
            "--metrics-port",
            port_flag(self.metrics_port),
            "--port-file",
            str(self._port_file),
            *internal,
            *self.extra_args,
        ]
        out = open(self.log_path, "ab") if self.log_path else None  # noqa: SIM115
        self.proc = subprocess.Popen(
            cmd,
            env=self.child_env(),
            stdout=out or None,
            stderr=out or None,
            cwd=Path(__file__).resolve().parent.parent,
        )
        return self

    def _exited(self) -> StartupError | None:
        if self.proc is None or self.proc.poll() is None:
            return None
        tail = log_tail(self.log_path)
        return StartupError(
            f"{self.name} exited with {self.proc.returncode} at start-up"
            + (f"; its log ends:\n{tail}" if tail else "")
        )

    def wait_ready(self, timeout: float = 30.0) -> ServiceProcess:
        """Wait until it wrote its port file and answers health SERVING there for its own
        service name (not only the server's ""): a StartupError as soon as it exits, a
        TimeoutError (with its log's end) after ``timeout`` seconds."""
        if self.proc is None or self._port_file is None:
            raise RuntimeError(f"{self.name} was not started")
        deadline = time.monotonic() + timeout
        last: object = "no port file yet"
        channel: grpc.Channel | None = None
        try:
            while True:
                exited = self._exited()
                if exited is not None:
                    raise exited
                if self.served is None:
                    self.served = ServedPorts.read(self._port_file)
                    if self.served is not None and self.served.service != self.name:
                        raise StartupError(
                            f"{self._port_file} is the port file of {self.served.service}"
                        )
                if self.served is not None:
                    if channel is None:
                        channel = dial(self.address, self.name, self._operator())
                    try:
                        if self._serving(channel):
                            return self
                        last = "not SERVING yet"
                    except grpc.RpcError as exc:
                        last = exc
                if time.monotonic() >= deadline:
                    tail = log_tail(self.log_path)
                    raise TimeoutError(
                        f"{self.name} not SERVING after {timeout}s: {last}"
                        + (f"; its log ends:\n{tail}" if tail else "")
                    )
                time.sleep(0.05)
        finally:
            if channel is not None:
                channel.close()

    def _operator(self) -> TLSFiles | None:
        return None if self.plaintext else TLSFiles(self.tls_root / OPERATOR)

    def _serving(self, channel: grpc.Channel) -> bool:
        """Whether every service the port file names (its full names) answers SERVING."""
        names = self.ports.services or ("",)
        serving = health_pb2.HealthCheckResponse.SERVING
        return all(health_status(channel, name) == serving for name in names)

    def terminate(self) -> None:
        """SIGTERM, without waiting: the process drains and stops gracefully (``stop`` waits
        for it; a second SIGTERM changes nothing)."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)

    def stop(self, timeout: float = 15.0) -> int | None:
        try:
            if not self.proc or self.proc.poll() is not None:
                return self.proc.returncode if self.proc else None
            self.proc.send_signal(signal.SIGTERM)
            try:
                return self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                return self.proc.wait()
        finally:
            if self._port_dir is not None:
                shutil.rmtree(self._port_dir, ignore_errors=True)
                self._port_dir = None


def stop_all(procs: Iterable[ServiceProcess], timeout: float = 15.0) -> list[int | None]:
    """Stop the processes together: SIGTERM to each (in the order given: callers before the
    services they call), then wait for each. Each drains (``--drain-seconds``) and gives its
    calls in flight their grace at the same time as the others, where one after the other the
    drains add up (5 services: over 5 s at the default 1 s drain). Their exit codes, in order."""
    procs = list(procs)
    for p in procs:
        p.terminate()
    return [p.stop(timeout) for p in procs]


def addr_flags(procs: dict[str, ServiceProcess]) -> list[str]:
    """``--wall-addr 127.0.0.1:P …`` for every started service, for the ones that call others
    (each service's internal port where it has one)."""
    flags: list[str] = []
    for name, p in procs.items():
        flags += [f"--{name}-addr", p.internal_address]
    return flags


# Pages of the local stack that may call a web port from another origin: the Vite dev server
# (npm run dev in web/); the page the port serves itself needs no CORS.
LOCAL_WEB_ORIGINS = ("http://127.0.0.1:5173", "http://localhost:5173")


def page_origins(port: int) -> tuple[str, ...]:
    """The origins of the web table served on loopback ``port`` (the gateway's web port, over
    HTTP or with ``--web-tls-dir`` HTTPS): the page calls matchmaking's web port and the
    development issuer from there."""
    return tuple(
        f"{scheme}://{host}:{port}"
        for scheme in ("http", "https")
        for host in ("127.0.0.1", "localhost")
    )


# What `mahjong run` lets call its web ports and its development issuer: the Vite dev server
# and the page the gateway serves.
RUN_WEB_ORIGINS = (*LOCAL_WEB_ORIGINS, *page_origins(WEB_PORTS["gateway"]))


def web_flags(port: int = AUTO_PORT, origins: Iterable[str] = LOCAL_WEB_ORIGINS) -> list[str]:
    """The flags that open a service's web port (Connect, gRPC-Web, the web table) locally, on
    ``port`` (by default one the OS picks: :attr:`ServiceProcess.served` names it), callable
    from pages of ``origins``."""
    return ["--web-port", port_flag(port), "--web-cors-origins", ",".join(origins)]


def run_all(
    available: dict[str, object],
    store_url: str | None = None,
    only: list[str] | None = None,
    extra_args: dict[str, list[str]] | None = None,
) -> int:
    """``mahjong run``: every service of ``available`` (name -> its server module, which names
    the services it ``CALLS``) on its default port until Ctrl-C / SIGTERM; ``extra_args``: more
    flags of a service (matchmaking's issuers)."""
    names = [n for n in SERVICE_ORDER if n in available and (not only or n in only)]
    Path(".data").mkdir(exist_ok=True)
    if not env_insecure():
        from devkit import dev_ca

        dev_ca.ensure(names, DEV_TLS_ROOT)
        print(
            f"TLS: development CA {DEV_TLS_ROOT / 'ca.crt'} (operator: {DEV_TLS_ROOT / OPERATOR})"
        )
    procs: dict[str, ServiceProcess] = {}
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    try:
        for name in names:
            port, mport = DEFAULT_PORTS[name]
            url = store_url or f"sqlite:///.data/{name}.db"
            wants = getattr(available[name], "CALLS", ())
            extra = [
                f
                for dep in wants
                if dep in procs
                for f in (f"--{dep}-addr", procs[dep].internal_address)
            ]
            if name in WEB_PORTS:
                extra += web_flags(WEB_PORTS[name], RUN_WEB_ORIGINS)
            extra += (extra_args or {}).get(name, [])
            extra.append("--reflection")  # for grpcurl; production leaves it off
            procs[name] = ServiceProcess(
                name,
                port,
                mport,
                url,
                extra,
                internal_token=run_token(),
                internal_port=INTERNAL_PORTS.get(name, 0),
            ).start()
            served = procs[name].wait_ready().ports
            internal = f"   internal {served.host}:{served.internal}" if served.internal else ""
            print(
                f"{name:<12} grpc {served.address}{internal}   "
                f"metrics http://{served.host}:{served.metrics}/metrics",
                flush=True,
            )
            if served.web:
                what = "the web table" if name == "gateway" else "Connect and gRPC-Web"
                print(f"{'':<12} web  http://{served.host}:{served.web}/ ({what})", flush=True)
        print("all services SERVING; Ctrl-C stops them", flush=True)
        while not stop.is_set():
            for name, p in procs.items():
                if p.proc and p.proc.poll() is not None:
                    print(f"{name} exited with {p.proc.returncode}; stopping", file=sys.stderr)
                    return 1
            stop.wait(0.5)
        return 0
    finally:
        stop_all(reversed(list(procs.values())))
