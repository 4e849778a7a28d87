"""Tracing's gRPC side (:mod:`infra.tracing` holds the spans): the SDK set up from a server's
settings, the client side that makes every outgoing call a CLIENT span carrying its
``traceparent`` (a thin wrapper of threaded channels, :class:`TracedChannel`, and interceptors
of asyncio ones), and what a stream handler's messages run in.

Written for this code base rather than taken from opentelemetry-instrumentation-grpc: its
asyncio server instrumentation wraps every server-streaming handler as an async generator, so a
handler that writes with ``context.write`` (the gateway's Subscribe) breaks
(opentelemetry-python-contrib #3066). Here the servers' own interceptors open the spans
(:mod:`infra.interceptor`, :mod:`infra.aio_server`), whichever style a handler has.

Nothing here runs when tracing is off: channels are left unwrapped (:func:`traced`,
:func:`aio_interceptors`) and handlers get the call's own context.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import grpc
import structlog

from infra import tracing

log = structlog.get_logger("mahjong.tracing")

# How often the batch processor sends what ended (the SDK's default is 5 s).
EXPORT_DELAY_MS = 1000


def configure(service: str, endpoint: str, ratio: float) -> bool:
    """Trace this process as ``service`` when ``endpoint`` (OTLP/gRPC, ``host:port`` or
    ``http(s)://host:port``) is set, sampling new traces at ``ratio`` (parent-based); nothing
    (no SDK loaded) without one. Once per process: a later call changes nothing."""
    if not endpoint or tracing.enabled():
        return tracing.enabled()
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.sdk.trace.sampling import ALWAYS_ON, ParentBased

    url = endpoint if "://" in endpoint else f"http://{endpoint}"
    provider = TracerProvider(
        resource=Resource.create({"service.name": service}),
        sampler=ParentBased(ALWAYS_ON),  # new traces are sampled at ``ratio`` by infra.tracing
    )
    exporter = OTLPSpanExporter(endpoint=url, insecure=url.startswith("http://"))
    provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=EXPORT_DELAY_MS))
    tracing.install(provider, root_ratio=ratio)
    log.info("tracing", endpoint=url, sample_ratio=ratio)
    return True


def shutdown() -> None:
    """Export what is left and stop (at the process's end)."""
    provider = tracing._provider
    tracing.install(None)
    if provider is not None:
        provider.shutdown()


# --- clients --------------------------------------------------------------------------------
def _with_parent(metadata: Any, span) -> list[tuple[str, Any]]:
    sent = [(k, v) for k, v in (metadata or ()) if k != tracing.TRACEPARENT]
    return [*sent, *tracing.outgoing(span)]


def _method_name(method: Any) -> str:
    return method.decode() if isinstance(method, bytes) else str(method)


class _TracedUnaryUnary:
    """A threaded channel's unary method, each call a CLIENT span sending its
    ``traceparent`` (a thin wrapper: grpc's own client interceptors cost several times more)."""

    __slots__ = ("_inner", "_name")

    def __init__(self, inner, method: Any) -> None:
        self._inner, self._name = inner, _method_name(method)

    def _call(self, how, request, timeout, metadata, kwargs):
        span = tracing.client_span(self._name)
        try:
            out = how(request, timeout=timeout, metadata=_with_parent(metadata, span), **kwargs)
        except grpc.RpcError as exc:
            tracing.end_span(span, _code(exc))
            raise
        except BaseException:
            tracing.end_span(span, "UNKNOWN")
            raise
        tracing.end_span(span, "OK")
        return out

    def __call__(self, request, timeout=None, metadata=None, **kwargs):
        return self._call(self._inner, request, timeout, metadata, kwargs)

    def with_call(self, request, timeout=None, metadata=None, **kwargs):
        return self._call(self._inner.with_call, request, timeout, metadata, kwargs)

    def future(self, request, timeout=None, metadata=None, **kwargs):
        span = tracing.client_span(self._name)
        md = _with_parent(metadata, span)
        try:
            future = self._inner.future(request, timeout=timeout, metadata=md, **kwargs)
        except BaseException:
            tracing.end_span(span, "UNKNOWN")
            raise
        future.add_done_callback(lambda f: tracing.end_span(span, _code(f)))
        return future


class _TracedUnaryStream:
    """A threaded channel's server-streaming method, each stream a CLIENT span ended with it."""

    __slots__ = ("_inner", "_name")

    def __init__(self, inner, method: Any) -> None:
        self._inner, self._name = inner, _method_name(method)

    def __call__(self, request, timeout=None, metadata=None, **kwargs):
        span = tracing.client_span(self._name)
        md = _with_parent(metadata, span)
        try:
            call = self._inner(request, timeout=timeout, metadata=md, **kwargs)
        except BaseException:
            tracing.end_span(span, "UNKNOWN")
            raise
        if not call.add_callback(lambda: tracing.end_span(span, _code(call))):
            tracing.end_span(span, _code(call))  # already over
        return call


def _code(call) -> str:
    try:
        code = call.code()
    except Exception:
        return "UNKNOWN"
    return code.name if isinstance(code, grpc.StatusCode) else "UNKNOWN"


class TracedChannel(grpc.Channel):
    """A threaded channel whose unary and server-streaming calls are traced (the methods this
    code base calls); anything else passes through."""

    def __init__(self, channel: grpc.Channel) -> None:
        self._channel = channel

    def unary_unary(self, method, *args, **kwargs):
        return _TracedUnaryUnary(self._channel.unary_unary(method, *args, **kwargs), method)

    def unary_stream(self, method, *args, **kwargs):
        return _TracedUnaryStream(self._channel.unary_stream(method, *args, **kwargs), method)

    def stream_unary(self, method, *args, **kwargs):
        return self._channel.stream_unary(method, *args, **kwargs)

    def stream_stream(self, method, *args, **kwargs):
        return self._channel.stream_stream(method, *args, **kwargs)

    def subscribe(self, callback, try_to_connect=False):
        self._channel.subscribe(callback, try_to_connect)

    def unsubscribe(self, callback):
        self._channel.unsubscribe(callback)

    def close(self):
        self._channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._channel.close()
        return False


def traced(channel: grpc.Channel) -> grpc.Channel:
    """``channel`` with its calls traced (:class:`TracedChannel`) when tracing is on; itself
    when off."""
    if not tracing.enabled():
        return channel
    return TracedChannel(channel)


class _AioClient:
    @staticmethod
    def _start(details):
        span = tracing.client_span(_method_name(details.method))
        out = grpc.aio.ClientCallDetails(
            details.method,
            details.timeout,
            grpc.aio.Metadata(*_with_parent(details.metadata, span)),
            details.credentials,
            details.wait_for_ready,
        )
        return span, out

    @staticmethod
    def _end_when_done(call, span) -> None:
        def done(_call) -> None:  # the code is a coroutine's answer: read it in a task
            task = asyncio.ensure_future(_end_aio(call, span))
            _ENDING.add(task)
            task.add_done_callback(_ENDING.discard)

        call.add_done_callback(done)

    async def _traced(self, continuation, client_call_details, request):
        """The call as a CLIENT span, ended when the call is done (or fails to start)."""
        span, details = self._start(client_call_details)
        try:
            call = await continuation(details, request)
        except BaseException:
            tracing.end_span(span, "UNKNOWN")
            raise
        self._end_when_done(call, span)
        return call


_ENDING: set[asyncio.Future] = set()  # the tasks ending spans (held until they ran)


async def _end_aio(call, span) -> None:
    try:
        code = await call.code()
        name = code.name if isinstance(code, grpc.StatusCode) else "UNKNOWN"
    except BaseException:
        name = "CANCELLED"
    tracing.end_span(span, name)


class AioUnaryTracing(_AioClient, grpc.aio.UnaryUnaryClientInterceptor):
    """An asyncio channel's unary calls as CLIENT spans (with ``traceparent``)."""

    async def intercept_unary_unary(self, continuation, client_call_details, request):
        return await self._traced(continuation, client_call_details, request)


class AioStreamTracing(_AioClient, grpc.aio.UnaryStreamClientInterceptor):
    """An asyncio channel's server streams as CLIENT spans (with ``traceparent``)."""

    async def intercept_unary_stream(self, continuation, client_call_details, request):
        return await self._traced(continuation, client_call_details, request)


def aio_interceptors() -> list[Any] | None:
    """The interceptors of an asyncio channel: tracing's when it is on, else None."""
    if not tracing.enabled():
        return None
    return [AioUnaryTracing(), AioStreamTracing()]


# --- server streams -------------------------------------------------------------------------
def sent_messages(messages: Iterator[Any], call: tracing.CallSpan, name: str) -> Iterator[Any]:
    """A threaded stream handler's messages, each sent under its :func:`tracing.message_span`."""
    for message in messages:
        span = tracing.message_span(call.span, name)
        try:
            yield message
        finally:
            span.end()


async def sent_messages_async(
    messages: AsyncIterator[Any], call: tracing.CallSpan, name: str
) -> AsyncIterator[Any]:
    """An async-generator stream handler's messages, each under its message span."""
    async for message in messages:
        span = tracing.message_span(call.span, name)
        try:
            yield message
        finally:
            span.end()


class WritingContext:
    """The servicer context a ``context.write`` stream handler is given while tracing is on:
    the call's own, each ``write`` a :func:`tracing.message_span` linked to the stream's span
    (the stock asyncio instrumentation cannot trace this style: contrib #3066)."""

    def __init__(self, context, call: tracing.CallSpan, name: str) -> None:
        self._context, self._call, self._name = context, call, name

    async def write(self, message) -> None:
        span = tracing.message_span(self._call.span, self._name)
        try:
            await self._context.write(message)
        finally:
            span.end()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._context, name)
