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
import random
from collections.abc import Callable, Iterable
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import (
    Link,
    NonRecordingSpan,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
    TraceFlags,
)
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


_root_ratio: float | None = None  # the share of new traces kept, when known (a fast path)


def install(provider: Any, root_ratio: float | None = None) -> None:
    """Trace with ``provider`` (an SDK TracerProvider whose sampler is parent-based; None turns
    tracing off). ``root_ratio``: the share of new traces kept, decided here (the provider's
    sampler then keeps every root it is given: ``ParentBased(ALWAYS_ON)``), so that a new
    trace not kept costs no SDK span; None: the provider's sampler decides each."""
    global _tracer, _provider, _root_ratio
    _provider = provider
    _root_ratio = root_ratio
    _tracer = None if provider is None else provider.get_tracer("mahjong")


def enabled() -> bool:
    """Whether tracing is on in this process."""
    return _tracer is not None


def flush(timeout_ms: int = 5000) -> None:
    """Export the spans ended so far (at a server's stop)."""
    if _provider is not None:
        _provider.force_flush(timeout_ms)


# --- propagation ----------------------------------------------------------------------------
_INVALID = trace.INVALID_SPAN_CONTEXT
_UNSAMPLED = TraceFlags(TraceFlags.DEFAULT)


def _parse(value: str) -> SpanContext | None:
    """A W3C ``traceparent`` of version 00 (the one in use), read without a regular
    expression; None when it is anything else (the propagator reads it then)."""
    if len(value) != 55 or value[:3] != "00-" or value[35] != "-" or value[52] != "-":
        return None
    try:
        trace_id, span_id, flags = int(value[3:35], 16), int(value[36:52], 16), int(value[53:], 16)
    except ValueError:
        return None
    if not trace_id or not span_id:
        return _INVALID
    return SpanContext(trace_id, span_id, is_remote=True, trace_flags=TraceFlags(flags & 1))


def remote_parent(metadata: Iterable[tuple[str, Any]] | None) -> SpanContext:
    """The span context a call's metadata carries (its ``traceparent``), invalid without one."""
    carrier = {k: v for k, v in metadata or () if k == TRACEPARENT or k == "tracestate"}
    value = carrier.get(TRACEPARENT)
    if value is None:
        return _INVALID
    if len(carrier) == 1 and isinstance(value, str):
        parsed = _parse(value)
        if parsed is not None:
            return parsed
    ctx = PROPAGATOR.extract(carrier, context=_EMPTY)
    return trace.get_current_span(ctx).get_span_context()


def parent_of(metadata: Iterable[tuple[str, Any]] | None) -> otel_context.Context:
    """The context a call's metadata carries (its ``traceparent``), empty without one."""
    parent = remote_parent(metadata)
    if not parent.is_valid:
        return _EMPTY
    return trace.set_span_in_context(NonRecordingSpan(parent), _EMPTY)


def outgoing(span: trace.Span) -> list[tuple[str, str]]:
    """The metadata that carries ``span`` to the called service (``traceparent``)."""
    ctx = span.get_span_context()
    if not ctx.is_valid:
        return []
    value = f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-{int(ctx.trace_flags) & 1:02x}"
    out = [(TRACEPARENT, value)]
    if ctx.trace_state:
        out.append(("tracestate", ctx.trace_state.to_header()))
    return out


def _start(
    name: str,
    parent: SpanContext,
    kind: SpanKind,
    attributes: dict[str, Any] | None = None,
    links: tuple[Link, ...] = (),
) -> trace.Span:
    """A span under ``parent`` (invalid: a new trace). What is not kept costs no SDK span: the
    child of a trace not sampled goes on in its parent's context (the sampler is parent-based:
    it would drop it too), and a new trace is kept at the ratio when it is known."""
    assert _tracer is not None
    if parent.is_valid:
        if not parent.trace_flags.sampled:
            return NonRecordingSpan(parent)
        context = trace.set_span_in_context(NonRecordingSpan(parent), _EMPTY)
    else:
        ratio = _root_ratio
        if ratio is not None and random.random() >= ratio:
            return NonRecordingSpan(
                SpanContext(random.getrandbits(128), random.getrandbits(64), False, _UNSAMPLED)
            )
        context = _EMPTY
    return _tracer.start_span(name, context=context, kind=kind, attributes=attributes, links=links)


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
    span = _start(
        f"{service}/{method}",
        remote_parent(context.invocation_metadata()),
        SpanKind.SERVER,
        {"rpc.system": "grpc", "rpc.service": service, "rpc.method": method},
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
    return _start(
        f"{name} message", _INVALID, SpanKind.PRODUCER, links=(Link(stream.get_span_context()),)
    )


def client_span(method: str) -> trace.Span:
    """The CLIENT span of an outgoing call, a child of the span in progress."""
    service, _, name = method.strip("/").partition("/")
    return _start(
        method.strip("/"),
        trace.get_current_span().get_span_context(),
        SpanKind.CLIENT,
        {"rpc.system": "grpc", "rpc.service": service, "rpc.method": name},
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


def trace_store(cls: type, backend: str, operations: Iterable[str]) -> type:
    """Wrap ``cls``'s store ``operations`` (those it has; :data:`infra.store.metrics.TRACED`)
    so each is a child span of the call in progress when tracing is on."""
    for name in operations:
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
