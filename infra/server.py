"""The server bootstrap every service uses.

A service describes itself with a :class:`ServiceSpec` (its name, default ports, the function
that adds its servicers, its own flags) and calls :func:`serve`. The bootstrap provides:

* configuration from flags, then environment (``MAHJONG_<SERVICE>_<FLAG>``, then
  ``MAHJONG_<FLAG>``), then defaults;
* gRPC health (``grpc.health.v1``) and server reflection;
* structlog JSON logs with the RPC, peer and request context bound on every line;
* Prometheus metrics per RPC (count by status code, latency histogram), open server streams
  beside their limit and the container's cgroup limits (:mod:`infra.process_limits`) on an
  HTTP port;
* domain errors (:mod:`shared.errors`) mapped to status codes with google.rpc details, and any
  other exception answered INTERNAL and logged, never crashing the process;
* graceful shutdown on SIGTERM/SIGINT: health NOT_SERVING, a drain period, then a grace period
  for calls in flight;
* ports the OS picks (``--port 0``, ``--metrics-port auto`` …: :mod:`infra.ports`), bound before
  the service is built so it sees the real ones, and named in ``--port-file`` once every port is
  bound and the server answers, for the supervisor that started it;
* transport security (:mod:`infra.tls`): every port serves TLS from ``--tls-dir``. A service
  that only other services call (wall, rules, scoring) has one mutual-TLS port; one that players
  call too (matchmaking, the gateway) serves them on ``--port`` with server TLS and the
  deployment's services on ``--internal-port`` with mutual TLS. ``--health-port`` is a plaintext
  port that answers grpc health alone (kubelet's probes speak no TLS). ``--insecure`` serves
  plaintext, for tests of that path only;
* authorization by the caller's workload identity (the SPIFFE ID in its certificate): each
  method in ``ServiceSpec.callers`` answers only the workloads named there, anything else is
  PERMISSION_DENIED naming the caller and the method (UNAUTHENTICATED without a certificate).
  Internal methods (``ServiceSpec.internal_methods``) also need the internal token when one is
  configured (``--internal-token``, a second factor, sent as ``x-mahjong-internal-token``).
  A handler asks whether its caller is one of the deployment's services with
  :func:`from_internal_caller`.
"""

from __future__ import annotations

import signal
import threading
import time
from concurrent import futures

import grpc
import structlog
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from infra import tracing, tracing_grpc
from infra.binding import (
    BindError,
    bind,
    bound_config,
    keepalive_options,
    log_serving,
    reflected,
    resource_hook,
    serve_metrics,
    served_ports,
)
from infra.config import Config, ServiceSpec, parse_config
from infra.gc_tuning import settle_after_start_up
from infra.interceptor import ServerInterceptor, serving_of, stream_limit
from infra.logs import configure_logging, logging_configured

log = structlog.get_logger("mahjong.server")


class RunningServer:
    """A started service: its bound port, health servicer and a graceful ``stop``."""

    def __init__(self, spec: ServiceSpec, config: Config) -> None:
        self.spec = spec
        self.config = config
        names = list(spec.service_names)
        self.server = grpc.server(
            futures.ThreadPoolExecutor(
                max_workers=config.max_workers, thread_name_prefix=spec.name
            ),
            interceptors=[
                ServerInterceptor(
                    stream_limit(config.max_workers),
                    internal=[(s, m) for s in names for m in spec.internal_methods],
                    serving=serving_of(config),
                    callers=spec.callers,
                )
            ],
            options=[("grpc.so_reuseport", 0), *keepalive_options(config)],
        )
        self.health = health.HealthServicer(experimental_non_blocking=True)
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        # Bound first, so the service is given the ports it got (its replica id, the address
        # it advertises).
        self.ports = bind(self.server, spec, config)
        self.port = self.ports.port
        self.config = config = bound_config(config, self.ports)
        try:
            self.resource = spec.add_to_server(self.server, config)
            if config.reflection:
                reflection.enable_server_reflection(reflected(spec, config), self.server)
            self.metrics_port = serve_metrics(spec, config)
        except BaseException:
            self.server.stop(0)
            raise
        self._names = names
        self._stopped = threading.Event()

    @property
    def address(self) -> str:
        return f"{self.config.host}:{self.port}"

    @property
    def internal_address(self) -> str:
        """Where the deployment's services call it (the main port when it has no other)."""
        return f"{self.config.host}:{self.ports.internal_port or self.port}"

    def start(self) -> RunningServer:
        self.server.start()
        for name in ["", *self._names]:
            self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        log_serving(self.spec, self.config, self.ports, self.metrics_port, "threads")
        return self

    def stop(self, grace: float | None = None, drain: float = 0.0) -> None:
        """Health NOT_SERVING, wait ``drain`` seconds so balancers notice, then stop accepting
        calls and give those in flight ``grace`` seconds."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        self.health.enter_graceful_shutdown()
        resource_hook(self.resource, "before_stop")
        if drain > 0:
            time.sleep(drain)
        self.server.stop(self.config.grace_seconds if grace is None else grace).wait()
        resource_hook(self.resource, "close")
        tracing.flush()
        log.info("stopped", service=self.spec.name)

    def wait(self) -> None:
        self.server.wait_for_termination()


def start(spec: ServiceSpec, config: Config | None = None) -> RunningServer:
    """Build and start a server (tests use this with port 0 and ``memory://``)."""
    config = config or Config()
    if not logging_configured():
        configure_logging(config.log_level)
    tracing_grpc.configure(spec.name, config.otlp_endpoint, config.trace_sample_ratio)
    model = config.server_model or spec.server_models[0]
    if model not in spec.server_models:
        raise ValueError(f"{spec.name} has no {model!r} server model")
    if model == "asyncio":
        from infra.aio_server import AsyncRunningServer

        return AsyncRunningServer(spec, config).start()  # type: ignore[return-value]
    return RunningServer(spec, config).start()


SIGNAL_POLL_SECONDS = 0.2  # how soon the main thread sees a signal another thread received


def serve(spec: ServiceSpec, argv: list[str] | None = None) -> None:
    """Entry point of ``mahjong serve <name>``: run until SIGTERM or SIGINT, then shut down
    gracefully."""
    config = parse_config(spec, argv)
    configure_logging(config.log_level)
    try:
        running = start(spec, config)
    except BindError as exc:
        raise SystemExit(f"mahjong serve {spec.name}: {exc}") from None
    done = threading.Event()

    def on_signal(signum, _frame):
        log.info("shutdown_requested", signal=signal.Signals(signum).name)
        done.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    # Started: what start-up built stays, so the collector stops walking it (infra.gc_tuning).
    settle_after_start_up()
    if config.port_file:  # serving, and a SIGTERM from now on stops it gracefully
        served_ports(running).write(config.port_file)
    # The kernel may deliver a signal to any of the process's threads (gRPC's among them); the
    # main thread runs the Python handler only when it wakes, and a wait without a timeout
    # never wakes it: a SIGTERM could sit unhandled until something else did. Wake it often.
    while not done.wait(SIGNAL_POLL_SECONDS):
        pass
    running.stop(drain=config.drain_seconds)
