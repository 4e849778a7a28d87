"""The event contract: every kind has its codec, a view rule and a proto converter; records
round-trip; records of version 1 written before the version field still read; newer ones are
refused by name."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings

from services.gateway.convert import events as convert
from services.gateway.domain.events import codec, views
from services.gateway.domain.events import kinds as K
from services.gateway.domain.events.log import LoggedEvent
from tests.unit.gateway.events.strategies import EVENTS, any_event


def test_every_kind_has_a_codec_a_view_rule_a_converter_and_a_generator():
    kinds = set(K.EVENT_CLASSES)
    assert set(codec.FIELD_CODECS) == kinds
    assert set(views.VIEW_RULES) == kinds
    assert set(convert.CONVERTERS) | {K.ActionTaken, K.WindowPadding} == kinds
    assert set(EVENTS) == kinds, "tests/unit/gateway/events/strategies.py misses a kind"
    assert len(K.KINDS) == len(kinds) and all(K.KINDS[K.KIND_NAMES[c]] is c for c in kinds)


@settings(max_examples=300, deadline=None)
@given(any_event)
def test_a_record_reads_back_as_the_same_event(ev):
    t, back = codec.decode(codec.encode(1234, ev))
    assert t == 1234 and back == ev and type(back) is type(ev)


@settings(max_examples=200, deadline=None)
@given(any_event)
def test_a_record_without_a_version_is_version_1(ev):
    record = json.loads(codec.encode(7, ev))
    assert record.pop("v") == 1
    assert codec.decode(json.dumps(record).encode()) == (7, ev)


def test_a_newer_version_or_an_unknown_kind_is_refused_by_name():
    with pytest.raises(codec.RecordError, match="version 2"):
        codec.decode(b'{"v": 2, "t": 1, "kind": "hand_drawn", "data": {"tiles_left": 3}}')
    with pytest.raises(codec.RecordError, match="'tile_juggled'"):
        codec.decode(b'{"t": 1, "kind": "tile_juggled", "data": {}}')
    with pytest.raises(codec.RecordError, match="malformed tile_drawn"):
        codec.decode(b'{"t": 1, "kind": "tile_drawn", "data": {"seat": 1}}')
    with pytest.raises(codec.RecordError):
        codec.decode(b"not json")


def test_records_written_before_the_contract_read_as_typed_events():
    """Records exactly as the gateway wrote them before this codec (no "v", the same fields)."""
    old = [
        b'{"t":1,"kind":"tile_drawn","data":{"hand_id":"h_1","hand_number":2,"seat":3,'
        b'"tile":"5p","replacement":false,"tiles_left":70}}',
        b'{"t":2,"kind":"meld_declared","data":{"hand_id":"h_1","hand_number":2,"seat":1,'
        b'"meld":{"kind":"pong","tiles":"777s","from":0,"claimed":"7s"}}}',
        b'{"t":3,"kind":"action","data":{"hand_id":"h_1","hand_number":2,"seat":1,'
        b'"action":{"type":"chow","low":"3m"},"auto":true}}',
        b'{"t":4,"kind":"seat_changed","data":{"seat":2,"player_id":"p2","bot":false,'
        b'"auto_play":false,"reason":"auto_play_off","private":true}}',
    ]
    drawn, meld, action, change = (codec.decode(r)[1] for r in old)
    assert drawn == K.TileDrawn(3, 13, False, 70, "h_1", 2)
    assert isinstance(meld, K.MeldDeclared) and meld.meld.claimed == 24 and meld.meld.from_seat == 0
    assert isinstance(action, K.ActionTaken) and action.action.low == 2 and action.auto
    assert isinstance(change, K.SeatChanged) and change.private and change.deadline_ms == 0


@settings(max_examples=300, deadline=None)
@given(any_event)
def test_every_viewers_copy_converts_to_the_proto_event(ev):
    for viewer in (None, 0, 1, 2, 3):
        seen = views.project(ev, viewer)
        if seen is None:
            continue
        e = convert.event_to_proto(LoggedEvent(9, 99, ev), seen)
        assert e.sequence == 9 and e.WhichOneof("kind") == K.KIND_NAMES[type(ev)]
