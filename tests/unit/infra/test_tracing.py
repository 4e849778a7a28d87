"""infra.tracing and infra.tracing_grpc on real loopback servers of both models: a call and the
calls it makes are one trace (``traceparent`` in the metadata, both ways of writing a client),
each message of a stream is a span of its own linked to the stream's — for generator handlers
and for asyncio handlers that write with ``context.write`` (which the stock asyncio
instrumentation breaks on, opentelemetry-python-contrib #3066) — store operations are child
spans with their outcome, log lines and latency exemplars name the trace, and with tracing off
nothing is wrapped."""

from __future__ import annotations

import asyncio
import io
import json
import time
from dataclasses import dataclass

import grpc
import pytest
import structlog
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_ON, ParentBased
from opentelemetry.trace import StatusCode
from prometheus_client import REGISTRY
from prometheus_client.openmetrics.exposition import generate_latest

from infra import tracing, tracing_grpc
from infra.config import Config, ServiceSpec
from infra.interceptor import record_rpc
from infra.logs import configure_logging
from infra.server import start
from infra.store import AlreadyExists
from infra.store.memory import MemoryStore
from infra.tls import plaintext_channel

SERVICE = "test.v1.TraceProbe"
MESSAGES = 3


def _threaded_handlers(target: dict):
    log = structlog.get_logger("probe")

    def echo(request, context):
        log.info("echoed")
        return request

    def hop(request, context):  # a call that calls another service (this one)
        with plaintext_channel(target["address"]) as ch:
            return ch.unary_unary(f"/{SERVICE}/Echo")(request, timeout=5)

    def stream(request, context):
        for n in range(MESSAGES):
            yield bytes([n])

    return {
        "Echo": grpc.unary_unary_rpc_method_handler(echo),
        "Hop": grpc.unary_unary_rpc_method_handler(hop),
        "Stream": grpc.unary_stream_rpc_method_handler(stream),
    }


def _aio_handlers(target: dict):
    log = structlog.get_logger("probe")

    async def echo(request, context):
        log.info("echoed")
        return request

    async def hop(request, context):  # the gateway's forwarding kind of channel
        async with grpc.aio.insecure_channel(
            target["address"], interceptors=tracing_grpc.aio_interceptors()
        ) as ch:
            return await ch.unary_unary(f"/{SERVICE}/Echo")(request, timeout=5)

    async def stream(request, context):  # an async generator
        for n in range(MESSAGES):
            yield bytes([n])

    async def write(request, context):  # the gateway's Subscribe: context.write
        for n in range(MESSAGES):
            await context.write(bytes([n]))

    return {
        "Echo": grpc.unary_unary_rpc_method_handler(echo),
        "Hop": grpc.unary_unary_rpc_method_handler(hop),
        "Stream": grpc.unary_stream_rpc_method_handler(stream),
        "Write": grpc.unary_stream_rpc_method_handler(write),
    }


def _spec(model: str, target: dict) -> ServiceSpec:
    handlers = _threaded_handlers if model == "threads" else _aio_handlers

    def add(server, config):
        methods = handlers(target)
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, methods),))

    return ServiceSpec("probe", 0, 0, add, [SERVICE], server_models=(model,))


@pytest.fixture
def spans():
    exporter = InMemorySpanExporter()
    provider = TracerProvider(sampler=ALWAYS_ON)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.install(provider)
    yield exporter
    tracing.install(None)


@dataclass
class Probe:
    model: str
    address: str
    channel: grpc.Channel
    spans: InMemorySpanExporter


@pytest.fixture(params=["threads", "asyncio"])
def probe(request, spans):
    target: dict = {}
    running = start(_spec(request.param, target), Config(port=0, insecure=True))
    target["address"] = running.address
    channel = plaintext_channel(running.address)  # traced: tracing is on
    yield Probe(request.param, running.address, channel, spans)
    channel.close()
    running.stop(grace=0)


def _named(exporter, name: str, kind: trace.SpanKind | None = None):
    found = [s for s in exporter.get_finished_spans() if s.name == name]
    return [s for s in found if kind is None or s.kind == kind]


def _ended(exporter, name: str, count: int = 1, kind=trace.SpanKind.SERVER, timeout=5.0):
    """The spans of ``name`` (and ``kind``) once ``count`` ended (a server ends its span just
    after the client has its answer)."""
    deadline = time.monotonic() + timeout
    while len(_named(exporter, name, kind)) < count and time.monotonic() < deadline:
        time.sleep(0.01)
    return _named(exporter, name, kind)


def test_a_call_and_the_call_it_makes_are_one_trace(probe):
    with tracing._tracer.start_as_current_span("player") as root:
        assert probe.channel.unary_unary(f"/{SERVICE}/Hop")(b"hi", timeout=5) == b"hi"
    spans = probe.spans
    (hop_server,) = _ended(spans, f"{SERVICE}/Hop")
    (echo_server,) = _ended(spans, f"{SERVICE}/Echo")
    (hop_client,) = _ended(spans, f"{SERVICE}/Hop", kind=trace.SpanKind.CLIENT)
    (echo_client,) = _ended(spans, f"{SERVICE}/Echo", kind=trace.SpanKind.CLIENT)
    chain = [hop_client, hop_server, echo_client, echo_server]
    assert {s.context.trace_id for s in chain} == {root.get_span_context().trace_id}
    assert hop_client.parent.span_id == root.get_span_context().span_id
    assert hop_server.parent.span_id == hop_client.context.span_id
    assert echo_client.parent.span_id == hop_server.context.span_id
    assert echo_server.parent.span_id == echo_client.context.span_id
    assert hop_server.attributes["rpc.grpc.status_code"] == "OK"
    assert echo_client.attributes["rpc.grpc.status_code"] == "OK"


@pytest.mark.parametrize("method", ["Stream", "Write"])
def test_each_message_of_a_stream_is_a_span_linked_to_the_stream(probe, method):
    if probe.model == "threads" and method == "Write":
        pytest.skip("context.write is the asyncio model's")
    got = list(probe.channel.unary_stream(f"/{SERVICE}/{method}")(b"", timeout=5))
    assert got == [bytes([n]) for n in range(MESSAGES)]
    (stream,) = _ended(probe.spans, f"{SERVICE}/{method}")
    assert stream.attributes["rpc.grpc.status_code"] == "OK"
    messages = _ended(probe.spans, f"{method} message", MESSAGES, kind=trace.SpanKind.PRODUCER)
    assert len(messages) == MESSAGES
    for m in messages:
        assert [link.context.span_id for link in m.links] == [stream.context.span_id]
        assert m.context.trace_id != stream.context.trace_id  # a trace of its own
        assert m.parent is None


def test_a_traceparent_in_the_metadata_is_the_server_span_parent(probe):
    parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    with grpc.insecure_channel(probe.address) as raw:  # no interceptor: the header by hand
        raw.unary_unary(f"/{SERVICE}/Echo")(b"x", metadata=[("traceparent", parent)], timeout=5)
    (echo,) = _ended(probe.spans, f"{SERVICE}/Echo")
    assert format(echo.context.trace_id, "032x") == "0af7651916cd43dd8448eb211c80319c"
    assert format(echo.parent.span_id, "016x") == "b7ad6b7169203331"
    assert echo.parent.is_remote


def test_an_asyncio_client_traces_unary_calls_and_streams(probe):
    async def calls():
        interceptors = tracing_grpc.aio_interceptors()
        async with grpc.aio.insecure_channel(probe.address, interceptors=interceptors) as ch:
            with tracing._tracer.start_as_current_span("client") as root:
                assert await ch.unary_unary(f"/{SERVICE}/Echo")(b"x", timeout=5) == b"x"
                got = [m async for m in ch.unary_stream(f"/{SERVICE}/Stream")(b"", timeout=5)]
            await asyncio.sleep(0.05)  # the client spans end in a task once the calls are done
            return root, got

    root, got = asyncio.run(calls())
    assert len(got) == MESSAGES
    for name in ("Echo", "Stream"):
        (client,) = _ended(probe.spans, f"{SERVICE}/{name}", kind=trace.SpanKind.CLIENT)
        (server,) = _ended(probe.spans, f"{SERVICE}/{name}")
        assert client.parent.span_id == root.get_span_context().span_id
        assert server.parent.span_id == client.context.span_id
        assert client.attributes["rpc.grpc.status_code"] == "OK"


def test_a_failed_call_is_an_error_span(probe):
    with pytest.raises(grpc.RpcError) as failed:
        probe.channel.unary_unary(f"/{SERVICE}/Nothing")(b"", timeout=5)
    assert failed.value.code() is grpc.StatusCode.UNIMPLEMENTED
    (client,) = _ended(probe.spans, f"{SERVICE}/Nothing", kind=trace.SpanKind.CLIENT)
    assert client.attributes["rpc.grpc.status_code"] == "UNIMPLEMENTED"
    assert client.status.status_code is StatusCode.ERROR


def test_a_log_line_under_a_span_carries_its_trace_and_span_ids(probe):
    out = io.StringIO()
    configure_logging("info", stream=out)
    try:
        probe.channel.unary_unary(f"/{SERVICE}/Echo")(b"x", timeout=5)
    finally:
        configure_logging("info")
    (echo,) = _ended(probe.spans, f"{SERVICE}/Echo")
    line = next(json.loads(x) for x in out.getvalue().splitlines() if '"echoed"' in x)
    assert line["trace_id"] == format(echo.context.trace_id, "032x")
    assert line["span_id"] == format(echo.context.span_id, "016x")


def test_store_operations_are_child_spans_with_their_outcome(spans):
    store = MemoryStore()
    store.put("tables", "t1", b"a")  # no call in progress: no span
    assert spans.get_finished_spans() == ()
    with tracing._tracer.start_as_current_span("act") as act:
        store.put("tables", "t1", b"b")
        with pytest.raises(AlreadyExists):
            store.create("tables", "t1", b"c")
    put, create = (s for s in spans.get_finished_spans() if s.name.startswith("store."))
    assert (put.name, create.name) == ("store.put", "store.create")
    assert put.parent.span_id == act.get_span_context().span_id
    assert put.attributes["mahjong.store.outcome"] == "ok"
    assert put.attributes["mahjong.store.key"] == "t1"
    assert create.attributes["mahjong.store.outcome"] == "AlreadyExists"
    assert create.status.status_code is StatusCode.ERROR


def test_latency_histograms_carry_the_trace_id_as_an_exemplar(spans):
    with tracing._tracer.start_as_current_span("call") as call:
        record_rpc("test.v1.Exemplar", "Seen", "OK", time.perf_counter())
    text = generate_latest(REGISTRY).decode()
    trace_id = format(call.get_span_context().trace_id, "032x")
    lines = [x for x in text.splitlines() if 'grpc_method="Seen"' in x and "_bucket" in x]
    assert any(f'trace_id="{trace_id}"' in x for x in lines), lines


@pytest.mark.parametrize("model", ["threads", "asyncio"])
def test_sampling_is_parent_based(spans, model):
    """As configure() sets it up: new traces kept at the ratio (0 here), a call of a kept trace
    kept, and a call of a trace not kept never recorded, nor the calls it makes."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(sampler=ParentBased(ALWAYS_ON))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.install(provider, root_ratio=0.0)
    target: dict = {}
    running = start(_spec(model, target), Config(port=0, insecure=True))
    target["address"] = running.address
    try:
        with grpc.insecure_channel(running.address) as raw:
            hop = raw.unary_unary(f"/{SERVICE}/Hop")
            hop(b"new trace: kept at 0", timeout=5)
            dropped = "00-1af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"
            hop(b"not kept by its caller", metadata=[("traceparent", dropped)], timeout=5)
            kept = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
            hop(b"kept by its caller", metadata=[("traceparent", kept)], timeout=5)
        recorded = _ended(exporter, f"{SERVICE}/Echo") + _ended(exporter, f"{SERVICE}/Hop")
        time.sleep(0.2)  # anything else would have ended by now
        assert {format(s.context.trace_id, "032x") for s in exporter.get_finished_spans()} == {
            "0af7651916cd43dd8448eb211c80319c"
        }
        assert len(recorded) == 2
    finally:
        running.stop(grace=0)


@pytest.mark.parametrize(
    "value",
    [
        "garbage",
        "00-00000000000000000000000000000000-b7ad6b7169203331-01",  # an invalid trace id
        "00-0af7651916cd43dd8448eb211c80319c-zzzzzzzzzzzzzzzz-01",
        "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",  # a version never used
        "00-" + "a" * 5000,
    ],
)
def test_a_forged_traceparent_starts_a_new_trace_and_harms_nothing(probe, value):
    with grpc.insecure_channel(probe.address) as raw:
        got = raw.unary_unary(f"/{SERVICE}/Echo")(
            b"x", metadata=[("traceparent", value)], timeout=5
        )
    assert got == b"x"
    (echo,) = _ended(probe.spans, f"{SERVICE}/Echo")
    assert echo.parent is None  # a trace of its own


def test_off_nothing_is_wrapped_and_no_line_names_a_trace():
    tracing.install(None)
    channel = grpc.insecure_channel("127.0.0.1:1")
    try:
        assert tracing_grpc.traced(channel) is channel
        assert tracing_grpc.aio_interceptors() is None
        assert tracing.server_span("s", "m", None) is None
        assert tracing.exemplar() is None
        assert tracing.add_trace_ids(None, "info", {"event": "x"}) == {"event": "x"}
        assert tracing_grpc.configure("probe", "", 1.0) is False
    finally:
        channel.close()
