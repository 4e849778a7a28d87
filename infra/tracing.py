"""Tracing with OpenTelemetry: every RPC a span on both sides, the W3C ``traceparent`` carried in
gRPC metadata, store operations child spans, log lines and latency exemplars naming the trace.

Off unless an OTLP endpoint is configured (``--otlp-endpoint``, :mod:`infra.tracing_grpc`
installs the SDK): then :data:`_tracer` is None, no SDK tracer provider exists, and every hook
here is one global read and a return. On, sampling is parent-based: a call that arrives with a
sampled ``traceparent`` is recorded, a new trace is sampled at ``--trace-sample-ratio``.

The hooks the rest of the code calls:

* :func:`server_span` / :func:`end_server_span`: a call's SERVER span, its parent taken from
  the call's ``traceparent``, current while the handler runs (both server models,
  :mod:`infra.interceptor` and :mod:`infra.aio_server`); with the table, seat, hand and request
  ids of the request as attributes;
* :func:`message_span`: a short span for one message a stream sends, in a trace of its own,
  *linked* to the stream's span (a stream open for hours is not one span that never ends);
* :func:`trace_store`: a store backend's operations as child spans (``store.<op>``) with the
  namespace, the key and the outcome (``ok`` or the error's class);
* :func:`add_trace_ids`: the structlog processor that puts ``trace_id`` and ``span_id`` on
  every line logged under a span;
* :func:`exemplar`: the trace id of the sampled span in progress, for a histogram's exemplar
  (shown in the OpenMetrics exposition).

This module imports no gRPC (the store and the gateway's tables use it); the interceptors and
the SDK's set-up are :mod:`infra.tracing_grpc`'s.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Link, SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

# The tracer while tracing is on (None: off, every hook returns at once).
_tracer: trace.Tracer | None = None
_provider: Any = None  # the SDK's TracerProvider, for flush and shutdown

PROPAGATOR = TraceContextTextMapPropagator()
TRACEPARENT = "traceparent"
_EMPTY = otel_context.Context()

# Request fields that name what a call is about, as span attributes.
REQUEST_ATTRIBUTES = (
    ("table_id", "mahjong.table_id"),
    ("request_id", "mahjong.request_id"),
    ("hand_number", "mahjong.hand_number"),
    ("player_id", "mahjong.player_id"),
)


def install(provider: Any) -> None:
    """Trace with ``provider`` (an SDK TracerProvider; None turns tracing off)."""
    global _tracer, _provider
    _provider = provider
    _tracer = None if provider is None else provider.get_tracer("mahjong")


def enabled() -> bool:
    """Whether tracing is on in this process."""
    return _tracer is not None


def flush(timeout_ms: int = 5000) -> None:
    """Export the spans ended so far (at a server's stop)."""
    if _provider is not None:
        _provider.force_flush(timeout_ms)


# --- propagation ----------------------------------------------------------------------------
def _getter_of(metadata: Iterable[tuple[str, Any]]) -> dict[str, str]:
    return {k: v for k, v in metadata if k == TRACEPARENT or k == "tracestate"}


def parent_of(metadata: Iterable[tuple[str, Any]] | None) -> otel_context.Context:
    """The context a call's metadata carries (its ``traceparent``), empty without one."""
    carrier = _getter_of(metadata or ())
    return PROPAGATOR.extract(carrier, context=_EMPTY) if carrier else _EMPTY


def outgoing(span: trace.Span) -> list[tuple[str, str]]:
    """The metadata that carries ``span`` to the called service (``traceparent``)."""
    carrier: dict[str, str] = {}
    PROPAGATOR.inject(carrier, context=trace.set_span_in_context(span))
    return list(carrier.items())


# --- spans of calls -------------------------------------------------------------------------
class CallSpan:
    """A call's span and the context token that made it current (see :func:`server_span`)."""

    __slots__ = ("span", "token")

    def __init__(self, span: trace.Span, token: object) -> None:
        self.span, self.token = span, token


def request_attributes(span: trace.Span, request: Any) -> None:
    """The table, hand, seat and request ids of ``request`` (those it has) on ``span``."""
    fields = getattr(getattr(request, "DESCRIPTOR", None), "fields_by_name", None)
    if not fields or not span.is_recording():
        return
    for name, key in REQUEST_ATTRIBUTES:
        if name in fields:
            value = getattr(request, name)
            if value:
                span.set_attribute(key, value)
    if "seat" in fields and isinstance(request.seat, int):  # an enum's number
        span.set_attribute("mahjong.seat", request.seat)


def server_span(service: str, method: str, context: Any, request: Any = None) -> CallSpan | None:
    """The SERVER span of a call (None when tracing is off), its parent the ``traceparent`` in
    the metadata of ``context`` (a servicer context), the ids of ``request`` its attributes,
    made current until :func:`end_server_span`."""
    tracer = _tracer
    if tracer is None:
        return None
    span = tracer.start_span(
        f"{service}/{method}",
        context=parent_of(context.invocation_metadata()),
        kind=SpanKind.SERVER,
        attributes={"rpc.system": "grpc", "rpc.service": service, "rpc.method": method},
    )
    if request is not None:
        request_attributes(span, request)
    token = otel_context.attach(trace.set_span_in_context(span))
    return CallSpan(span, token)


def end_server_span(call: CallSpan | None, code: str) -> None:
    """End a call's span with its gRPC status code (an error status unless OK)."""
    if call is None:
        return
    otel_context.detach(call.token)
    end_span(call.span, code)


def end_span(span: trace.Span, code: str) -> None:
    if span.is_recording():
        span.set_attribute("rpc.grpc.status_code", code)
        if code != "OK":
            span.set_status(Status(StatusCode.ERROR, code))
    span.end()


def message_span(stream: trace.Span, name: str) -> trace.Span:
    """A short span for one message a stream sends: a trace of its own (sampled as a new
    trace), linked to the stream's span. The caller ends it."""
    assert _tracer is not None
    return _tracer.start_span(
        f"{name} message",
        context=_EMPTY,
        kind=SpanKind.PRODUCER,
        links=(Link(stream.get_span_context()),),
    )


def client_span(method: str) -> trace.Span:
    """The CLIENT span of an outgoing call, a child of the span in progress."""
    assert _tracer is not None
    service, _, name = method.strip("/").partition("/")
    return _tracer.start_span(
        method.strip("/"),
        kind=SpanKind.CLIENT,
        attributes={"rpc.system": "grpc", "rpc.service": service, "rpc.method": name},
    )


def annotate(**attributes: Any) -> None:
    """Set attributes (``mahjong.<name>``) on the span in progress, if one is recording."""
    if _tracer is None:
        return
    span = trace.get_current_span()
    if span.is_recording():
        for k, v in attributes.items():
            span.set_attribute(f"mahjong.{k}", v)


# --- the store ------------------------------------------------------------------------------
# The operations traced: those a call's work runs (clock_ms and the lease look-ups of the
# background renewals are not the call's story).
STORE_OPERATIONS = (
    "get",
    "create",
    "put",
    "update",
    "delete",
    "scan",
    "namespaces",
    "append",
    "append_many",
    "delete_log",
    "read_log",
    "acquire_lease",
    "renew_lease",
    "release_lease",
    "transaction",
)


def _store_traced(method: Callable[..., Any], backend: str, operation: str) -> Callable[..., Any]:
    name = f"store.{operation}"

    @functools.wraps(method)
    def run(self, *args: Any, **kwargs: Any) -> Any:
        tracer = _tracer
        if tracer is None:
            return method(self, *args, **kwargs)
        parent = trace.get_current_span()
        if not parent.is_recording():  # no call's trace to join (a renewal, an unsampled call)
            return method(self, *args, **kwargs)
        span = tracer.start_span(name, attributes={"db.system": backend, "db.operation": operation})
        if args and isinstance(args[0], str):
            span.set_attribute("mahjong.store.namespace", args[0])
            if len(args) > 1 and isinstance(args[1], str):
                span.set_attribute("mahjong.store.key", args[1])
        token = otel_context.attach(trace.set_span_in_context(span))
        outcome = "ok"
        try:
            return method(self, *args, **kwargs)
        except BaseException as exc:
            outcome = type(exc).__name__
            span.set_status(Status(StatusCode.ERROR, outcome))
            raise
        finally:
            otel_context.detach(token)
            span.set_attribute("mahjong.store.outcome", outcome)
            span.end()

    return run


def trace_store(cls: type, backend: str) -> type:
    """Wrap ``cls``'s store operations (those of :data:`STORE_OPERATIONS` it has) so each is a
    child span of the call in progress when tracing is on."""
    for name in STORE_OPERATIONS:
        method = getattr(cls, name, None)
        if method is not None:
            setattr(cls, name, _store_traced(method, backend, name))
    return cls


# --- logs and metrics -----------------------------------------------------------------------
def add_trace_ids(_logger: Any, _name: str, event: dict[str, Any]) -> dict[str, Any]:
    """structlog processor: ``trace_id`` and ``span_id`` of the span in progress (if any)."""
    if _tracer is None:
        return event
    ctx = trace.get_current_span().get_span_context()
    if ctx.is_valid:
        event["trace_id"] = format(ctx.trace_id, "032x")
        event["span_id"] = format(ctx.span_id, "016x")
    return event


def exemplar() -> dict[str, str] | None:
    """``{"trace_id": …}`` of the sampled span in progress, for a histogram observation."""
    if _tracer is None:
        return None
    ctx = trace.get_current_span().get_span_context()
    if not ctx.trace_flags.sampled:
        return None
    return {"trace_id": format(ctx.trace_id, "032x")}
