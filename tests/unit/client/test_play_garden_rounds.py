"""`mahjong play` shows what a 逛花园 table and a table limited in rounds are about: each seat's
chip stack (SeatView.garden_stack), the stacks after a hand and at the end, and rounds played of
the limit; the Python client creates such tables (create_table(max_rounds=...))."""

from __future__ import annotations

import argparse

from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2

from mahjong_client import tables as client_tables
from mahjong_client.play import register
from mahjong_client.render import render_event, render_result, render_table


def _table(**fields) -> gateway_pb2.TableView:
    seats = [
        gateway_pb2.SeatView(seat=i + 1, display_name=f"p{i}", bot=i > 0, chips=(-40, 10, 30, 0)[i])
        for i in range(4)
    ]
    return gateway_pb2.TableView(
        table_id="t1",
        viewer=1,
        seats=seats,
        hand=gateway_pb2.HandView(hand_number=5, dealer=1, tiles_left=80),
        **fields,
    )


def test_a_garden_table_shows_each_seats_stack_and_the_rounds():
    table = _table(garden=True, max_rounds=2, rounds_played=1)
    for s, stack in zip(table.seats, (60, 110, 130, 0), strict=True):
        s.garden_stack = stack
    text = render_table(table)
    assert "round 2 of 2 (1 played)" in text.splitlines()[0]
    seat_lines = [line for line in text.splitlines() if line.startswith("[")]
    assert "逛花园 stack 60" in seat_lines[0] and "逛花园 stack 110" in seat_lines[1]
    assert "逛花园 stack 0 (empty: pays nothing more)" in seat_lines[3]


def test_a_plain_table_shows_neither_stacks_nor_rounds():
    text = render_table(_table())
    assert "逛花园" not in text and "round" not in text


def test_a_rounds_limit_without_garden_shows_the_rounds_only():
    text = render_table(_table(max_rounds=4, rounds_played=0))
    assert "round 1 of 4 (0 played)" in text and "逛花园" not in text
    finished = _table(max_rounds=4, rounds_played=4)
    assert "rounds 4 of 4 played" in render_table(finished)


def test_hand_results_and_the_end_show_the_garden_stacks():
    result = gateway_pb2.HandResult(
        outcome=1, payments=[-20, 20, 0, 0], garden_stacks=[80, 120, 100, 100]
    )
    assert "逛花园 stacks: seat 0(you) 80  seat 1 120  seat 2 100  seat 3 100" in render_result(
        result, 0
    )
    assert "逛花园" not in render_result(gateway_pb2.HandResult(outcome=2, payments=[0] * 4), 0)
    ev = gateway_pb2.Event(
        sequence=99,
        table_finished=gateway_pb2.TableFinished(
            hands_played=9,
            chips=[-100, 50, 30, 20],
            reason="max_rounds",
            rounds_played=2,
            garden_stacks=[0, 150, 130, 120],
        ),
    )
    line = render_event(ev, 0)
    assert "after 9 hands, 2 rounds (max_rounds)" in line
    assert "逛花园 stacks: seat 0 0, seat 1 150, seat 2 130, seat 3 120" in line


class _Capture:
    """A channel that records the CreateTable request instead of sending it."""

    def __init__(self) -> None:
        self.requests: list = []

    def unary_unary(self, method, request_serializer=None, response_deserializer=None, **_):
        def call(request, timeout=None, metadata=None):
            self.requests.append(request)
            return gateway_pb2.CreateTableResponse(table_id="t1", seat_tokens=["tok", "", "", ""])

        return call

    def unary_stream(self, *a, **k):
        return None

    stream_unary = stream_stream = unary_stream


def test_the_client_creates_a_table_limited_in_rounds():
    channel = _Capture()
    client_tables.create_table(channel, ["me", None, None, None], max_rounds=2)
    (req,) = channel.requests
    assert req.max_rounds == 2 and req.max_hands == 0
    assert req.first_dealer == common_pb2.SEAT_UNSPECIFIED


def test_play_takes_a_rounds_limit():
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command"))
    assert parser.parse_args(["play", "--rounds", "2"]).rounds == 2
    assert parser.parse_args(["play"]).rounds == 0
