"""Table events in tests as the log's JSON records hold them: a record's ``(kind, data)``
decoded, cut down for a viewer, or converted to the proto Event through the gateway's own
code (events.codec, events.views, convert.events)."""

from __future__ import annotations

from typing import Any

from services.gateway.convert.events import event_to_proto, options_to_proto
from services.gateway.domain.events import codec
from services.gateway.domain.events.log import LoggedEvent
from services.gateway.domain.events.views import project


def project_json(kind: str, data: dict[str, Any], viewer: int | None) -> dict[str, Any] | None:
    """What ``viewer`` sees of the record ``(kind, data)``, as JSON (None: nothing)."""
    seen = project(codec.from_json(kind, data), viewer)
    return None if seen is None else codec.to_json(seen)


def event_proto(seq: int, t: int, kind: str, data: dict[str, Any], viewer: int | None = None):
    """The proto Event ``viewer`` receives for the record ``(kind, data)`` (None: a viewer
    that sees everything, i.e. the event as stored)."""
    ev = codec.from_json(kind, data)
    seen = ev if viewer is None else project(ev, viewer)
    assert seen is not None
    return event_to_proto(LoggedEvent(seq, t, ev), seen)


def options_proto(options: dict[str, Any]):
    """A prompt's options record as the proto Options."""
    return options_to_proto(codec.options_from_json(options))


def json_recorder(events: list[tuple[str, dict[str, Any]]]):
    """An ``emit`` for a session or engine that keeps each event as its record's
    ``(kind, data)`` in ``events``; returns the event's number (from 1)."""

    def emit(ev) -> int:
        events.append((ev.KIND, codec.to_json(ev)))
        return len(events)

    return emit


def log_recorder(log: list[LoggedEvent]):
    """An ``emit`` that appends to ``log`` as a table's log keeps it (time 0)."""

    def emit(ev) -> int:
        log.append(LoggedEvent(len(log) + 1, 0, ev))
        return len(log)

    return emit


def records_log(events: list[tuple[str, dict[str, Any]]]) -> list[LoggedEvent]:
    """``(kind, data)`` records read back as a table's log (numbered from 1, time 0)."""
    return [LoggedEvent(i + 1, 0, codec.from_json(k, d)) for i, (k, d) in enumerate(events)]


def json_log_recorder(log: list[tuple[int, int, str, dict[str, Any]]]):
    """An ``emit`` that keeps a table's log as ``(sequence, 0, kind, data)`` records."""

    def emit(ev) -> int:
        log.append((len(log) + 1, 0, ev.KIND, codec.to_json(ev)))
        return len(log)

    return emit


def log_from_json(log: list[tuple[int, int, str, dict[str, Any]]]) -> list[LoggedEvent]:
    """``(sequence, time, kind, data)`` records read back as a table's log."""
    return [LoggedEvent(q, t, codec.from_json(k, d)) for q, t, k, d in log]


def json_log(log: list[LoggedEvent]) -> list[tuple[int, int, str, dict[str, Any]]]:
    """A typed log as ``(sequence, time, kind, data)``, each event's data as its record
    holds it: for tests that read events as the log's JSON."""
    return [(e.seq, e.t, e.event.KIND, codec.to_json(e.event)) for e in log]
