"""The terminal client's pieces: tile text, the numbered menu, choices, and what it prints."""

from __future__ import annotations

import argparse
import io

from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2

from mahjong_client.play import register, run_play
from mahjong_client.render import (
    action_label,
    hand_lines,
    menu,
    plan_text,
    render_event,
    render_result,
    render_table,
    tile_text,
)
from mahjong_client.terminal import parse_choice
from services.gateway.bots import SeatView
from shared.hand.hand_type import HandType
from shared.table import (
    Chow,
    ClaimOptions,
    DeclareReady,
    Discard,
    ExposedKong,
    OwnTurnOptions,
    Pass,
    Pong,
    Win,
    WinKind,
    WinOption,
)
from shared.tiles import parse, parse_counts


def t(text: str) -> int:
    return parse(text)[0]


def test_tiles_are_shown_in_mpsz_and_chinese():
    assert tile_text(t("5m")) == "5m五万"
    assert tile_text(t("1z")) == "1z东"
    assert tile_text(t("7z")) == "7z中"
    assert tile_text(t("8f")) == "8f菊"


def test_menu_lists_wins_then_ready_then_discards():
    opts = OwnTurnOptions(
        seat=0,
        discards=(t("1m"), t("5p")),
        ready_discards=(t("5p"),),
        wins=(WinOption(HandType.FULL_FLUSH, WinKind.SELF_DRAW, t("1m")),),
    )
    acts = menu(opts)
    assert acts == [Win(), DeclareReady(t("5p")), Discard(t("1m")), Discard(t("5p"))]
    labels = [action_label(a) for a in acts]
    assert labels[0].startswith("胡")
    assert "敲" in labels[1] and "5p五筒" in labels[1]
    assert labels[2] == "打 discard 1m一万"


def test_claim_menu_ends_with_pass():
    opts = ClaimOptions(seat=1, pong=True, exposed_kong=True, chows=(t("3s"),))
    acts = menu(opts)
    assert acts == [ExposedKong(), Pong(), Chow(t("3s")), Pass()]
    assert action_label(Chow(t("3s"))) == "吃 chow 3s三条 4s四条 5s五条"
    assert action_label(Pong(), t("5z")) == "碰 pong 5z白"


def test_choices_by_number_or_tile():
    acts = [Win(), Discard(t("1m")), Discard(t("5p"))]
    assert parse_choice("1", acts) == Win()
    assert parse_choice("3", acts) == Discard(t("5p"))
    assert parse_choice("5p", acts) == Discard(t("5p"))
    assert parse_choice("4", acts) is None
    assert parse_choice("0", acts) is None
    assert parse_choice("9p", acts) is None
    assert parse_choice("xyz", acts) is None


def test_hand_lines_put_the_drawn_tile_apart(qiaoma):
    view = SeatView(seat=0, ruleset=qiaoma, concealed=tuple(parse_counts("123m5z5p")))
    top, bottom = hand_lines(view, t("5p"))
    assert top.split() == ["1m", "2m", "3m", "5z", "|", "5p"]
    assert bottom.split() == ["一万", "二万", "三万", "白", "|", "五筒"]


def _table() -> gateway_pb2.TableView:
    seats = []
    for i in range(4):
        s = gateway_pb2.SeatView(
            seat=i + 1,
            display_name=f"p{i}",
            bot=i > 0,
            concealed_count=13,
            discards=[t("9s") + 1],
            flowers=[t("1f") + 1] if i == 2 else [],
            ready=i == 3,
        )
        if i == 1:
            s.melds.append(
                common_pb2.Meld(kind=common_pb2.MELD_KIND_CONCEALED_KONG)
            )  # hidden from the viewer
            s.melds.append(
                common_pb2.Meld(
                    kind=common_pb2.MELD_KIND_PONG, tiles=[t("5z") + 1] * 3, from_seat=1
                )
            )
        seats.append(s)
    return gateway_pb2.TableView(
        table_id="t1",
        viewer=1,
        seats=seats,
        hand=gateway_pb2.HandView(
            hand_number=3,
            dealer=2,
            dice=common_pb2.Dice(first=1, second=4),
            kaibao=True,
            tiles_left=60,
            deadline_unix_ms=1_000_015_000,
        ),
    )


def test_render_table_shows_every_seat_and_the_timer():
    text = render_table(_table(), now_ms=1_000_000_000)
    assert "hand 3" in text and "开宝" in text and "tiles left 60" in text
    assert "seat 0 you" in text
    assert "暗杠[??]" in text and "碰[5z 5z 5z]" in text
    assert "1f春" in text
    assert "敲" in text
    assert "timer: 15s left" in text
    assert "[东] seat 1" in text  # the dealer sits East


def test_render_events_for_a_person():
    ev = gateway_pb2.Event(
        sequence=5,
        tile_discarded=gateway_pb2.TileDiscarded(seat=2, tile=t("5m") + 1, declared_ready=True),
    )
    assert render_event(ev, 0) == "seat 1 discards 5m五万 with 敲 (ready)"
    ev = gateway_pb2.Event(sequence=6, tile_drawn=gateway_pb2.TileDrawn(seat=1, tile=t("7s") + 1))
    assert render_event(ev, 0) == "you draw 7s七条"
    ev = gateway_pb2.Event(sequence=7, tile_drawn=gateway_pb2.TileDrawn(seat=2))
    assert render_event(ev, 0) is None  # another seat's draw is not news
    ev = gateway_pb2.Event(
        sequence=8,
        flowers_exposed=gateway_pb2.FlowersExposed(
            seat=1, flowers=[t("2f") + 1], replacements=[t("3m") + 1]
        ),
    )
    assert render_event(ev, 0) == "you expose flowers (补花) 2f夏, replaced by 3m三万"


def test_render_a_seat_gone_bankrupt():
    gone = gateway_pb2.SeatBankrupt(seat=3, player_id="p-7", bot_player_id="bot-t-s2", after_hand=4)
    ev = gateway_pb2.Event(sequence=9, seat_bankrupt=gone)
    assert render_event(ev, 0) == (
        "破产: seat 2 (p-7) went bankrupt after hand 4 (the silver left no longer covers a "
        "hand) and left the table; a bot plays seat 2 now"
    )
    assert render_event(ev, 2).startswith("破产: you went bankrupt after hand 4")


def test_render_result_shows_the_breakdown_and_payments():
    result = gateway_pb2.HandResult(
        outcome=gateway_pb2.HAND_OUTCOME_WIN,
        winners=[
            gateway_pb2.WinnerResult(
                seat=3,
                hand_type=common_pb2.HAND_TYPE_FULL_FLUSH,
                win_kind=common_pb2.WIN_KIND_DISCARD,
                win_tile=t("9m") + 1,
                from_seat=1,
                flowers=2,
                value=20,
            )
        ],
        payments=[-20, 0, 20, 0],
        house=0,
        breakdown=[gateway_pb2.BreakdownItem(seat=3, code="menqing", label="门清 ×2", amount=2)],
        revealed=[gateway_pb2.RevealedHand(seat=3, concealed=[t("1m") + 1, t("1m") + 1])],
        next_dealer=3,
    )
    text = render_result(result, 0)
    assert "winner seat 2: 清一色" in text
    assert "点炮" in text and "9m九万" in text and "value 20" in text
    assert "门清 ×2" in text
    assert "seat 0(you) -20" in text and "seat 2 +20" in text
    assert "1m一万 1m一万" in text
    assert "next dealer: seat 2" in text


def test_play_command_rejects_a_bad_option():
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["play", "--option", "timers.discard_seconds"])
    out = io.StringIO()
    assert run_play(args, stdin=io.StringIO(), stdout=out) == 2
    assert "SECTION.OPTION=VALUE" in out.getvalue()


def test_the_hint_names_the_planning_bots_plan(qiaoma):
    view = SeatView(seat=0, ruleset=qiaoma, concealed=tuple(parse_counts("123456789m11z22z")))
    assert plan_text(view) == " — plan 清/混一色万, waiting, 4 useful tiles unseen"
    view = SeatView(seat=0, ruleset=qiaoma, concealed=tuple(parse_counts("123456789m11z2z5p")))
    assert "1 from waiting" in plan_text(view)
