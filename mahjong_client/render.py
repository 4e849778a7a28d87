"""What the terminal client (``mahjong play``) prints: tiles in mpsz with their Chinese names,
melds, the numbered menu of legal options, the table, the events worth telling a person, the
scoring breakdown of a hand, and the planning bot's plan for a hint."""

from __future__ import annotations

import time
from collections.abc import Sequence

from mahjong.gateway.v1 import gateway_pb2

from mahjong_client.convert import meld_from_view
from services.gateway.bots import SeatView, legal_actions, plan_summary
from shared.hand.hand_type import HandType
from shared.melds import Meld, MeldKind
from shared.table import (
    Action,
    AddedKong,
    Chow,
    ConcealedKong,
    DeclareReady,
    Discard,
    ExposedKong,
    Pass,
    Pong,
    Win,
)
from shared.tiles import format_tile, name_zh

_MELD_ZH = {
    MeldKind.CHOW: "吃",
    MeldKind.PONG: "碰",
    MeldKind.EXPOSED_KONG: "明杠",
    MeldKind.ADDED_KONG: "加杠",
    MeldKind.CONCEALED_KONG: "暗杠",
}
_WIN_KIND_ZH = {1: "自摸 self-draw", 2: "点炮 on a discard", 3: "抢杠 robbing a kong", 4: "八花齐"}
_SEAT_WIND = "东南西北"


# --- tiles and melds, for people -----------------------------------------------------------------
def tile_text(k: int) -> str:
    """``5m五万``: mpsz and the Chinese name together."""
    return f"{format_tile(k)}{name_zh(k)}"


def tiles_text(kinds: Sequence[int]) -> str:
    return " ".join(tile_text(k) for k in kinds) if kinds else "-"


def meld_text(meld: Meld) -> str:
    if not meld.tiles:
        return "暗杠[??]"
    return f"{_MELD_ZH[meld.kind]}[{' '.join(format_tile(k) for k in meld.tiles)}]"


def _tiles(values: Sequence[int]) -> list[int]:
    return [v - 1 for v in values if v]


def hand_lines(view: SeatView, drawn: int | None) -> list[str]:
    """The person's concealed tiles: mpsz on one line, the Chinese names under them."""
    kinds = [k for k, n in enumerate(view.concealed) for _ in range(n)]
    if drawn is not None and drawn in kinds:
        kinds.remove(drawn)  # shown apart, at the right
    cells = [(format_tile(k), name_zh(k)) for k in kinds]
    if drawn is not None:
        cells.append(("|", "|"))
        cells.append((format_tile(drawn), name_zh(drawn)))
    top = " ".join(f"{a:^4}" for a, _ in cells)
    bottom = " ".join(_pad_zh(b, 4) for _, b in cells)
    return [top, bottom]


def _pad_zh(text: str, width: int) -> str:
    wide = sum(2 if ord(c) > 0x2E80 else 1 for c in text)
    left = (width - wide) // 2
    return " " * max(0, left) + text + " " * max(0, width - wide - left)


# --- the menu of legal options -------------------------------------------------------------------
def action_label(action: Action, tile: int | None = None) -> str:
    if isinstance(action, Win):
        return "胡 win" + (" (八花齐)" if action.eight_flowers else "")
    if isinstance(action, DeclareReady):
        return f"敲 declare ready, discarding {tile_text(action.discard)}"
    if isinstance(action, Discard):
        return f"打 discard {tile_text(action.tile)}"
    if isinstance(action, ConcealedKong):
        return f"暗杠 concealed kong {tile_text(action.tile)}"
    if isinstance(action, AddedKong):
        return f"加杠 added kong {tile_text(action.tile)}"
    if isinstance(action, ExposedKong):
        return "明杠 kong" + (f" {tile_text(tile)}" if tile is not None else "")
    if isinstance(action, Pong):
        return "碰 pong" + (f" {tile_text(tile)}" if tile is not None else "")
    if isinstance(action, Chow):
        return "吃 chow " + " ".join(tile_text(k) for k in action.tiles)
    if isinstance(action, Pass):
        return "过 pass"
    return repr(action)


_ORDER = (Win, DeclareReady, ConcealedKong, AddedKong, ExposedKong, Pong, Chow, Discard, Pass)


def menu(options) -> list[Action]:
    """The legal actions in the order shown: wins first, then 敲, kongs, claims, discards."""
    acts = legal_actions(options)
    return sorted(acts, key=lambda a: _ORDER.index(type(a)))


# --- the table ---------------------------------------------------------------------------------
def render_table(table: gateway_pb2.TableView, now_ms: int | None = None) -> str:
    hand = table.hand
    me = table.viewer - 1
    dealer = hand.dealer - 1
    lines = [
        f"=== hand {hand.hand_number}{rounds_text(table)} · dealer {_seat_name(table, dealer)} "
        f"· dice {hand.dice.first}+{hand.dice.second}{' 开宝' if hand.kaibao else ''} · 荒番 "
        f"{hand.huangfan} · tiles left {hand.tiles_left}{wild_text(hand)} ==="
    ]
    for s in table.seats:
        i = s.seat - 1
        wind = _SEAT_WIND[(i - dealer) % 4] if dealer >= 0 else "?"
        tags = []
        if s.ready:
            tags.append("敲")
        if s.auto_play:
            tags.append("托管")
        if s.left:
            tags.append("left")
        who = "you" if i == me else (s.display_name or s.player_id or f"seat {i}")
        lines.append(
            f"[{wind}] seat {i} {who}{' (bot)' if s.bot else ''}"
            f"{' ' + ' '.join(tags) if tags else ''} · chips {s.chips:+d}"
            f"{garden_stack_text(s.garden_stack) if table.garden else ''} · "
            f"{s.concealed_count} in hand"
        )
        melds = [meld_text(meld_from_view(m)) for m in s.melds]
        lines.append(f"     flowers: {tiles_text(_tiles(s.flowers))}")
        lines.append(f"     melds:   {' '.join(melds) if melds else '-'}")
        lines.append(
            f"     discards: {' '.join(format_tile(k) for k in _tiles(s.discards)) or '-'}"
        )
    if hand.deadline_unix_ms:
        left = (hand.deadline_unix_ms - (now_ms or int(time.time() * 1000))) / 1000
        lines.append(f"timer: {max(0.0, left):.0f}s left")
    return "\n".join(lines)


def wild_text(hand: gateway_pb2.HandView) -> str:
    """`` · 百搭 8m八万 (7m七万 turned up)`` on a flipped-百搭 table (翻百搭), ``""`` otherwise."""
    if not hand.wild_kind:
        return ""
    shown = f" ({tile_text(hand.wild_indicator - 1)} turned up)" if hand.wild_indicator else ""
    return f" · 百搭 {tile_text(hand.wild_kind - 1)}{shown}"


def rounds_text(table: gateway_pb2.TableView) -> str:
    """`` · round 2 of 4 (1 played)`` on a table limited in rounds (圈; a 逛花园 table always
    is), ``""`` otherwise."""
    if not table.max_rounds:
        return ""
    if table.rounds_played >= table.max_rounds:
        return f" · rounds {table.rounds_played} of {table.max_rounds} played"
    return (
        f" · round {table.rounds_played + 1} of {table.max_rounds} ({table.rounds_played} played)"
    )


def garden_stack_text(stack: int) -> str:
    """A seat's 逛花园 (garden) chip stack: at 0 it pays nothing more and can only win back."""
    return f" · 逛花园 stack {stack}{' (empty: pays nothing more)' if stack <= 0 else ''}"


def _seat_name(table: gateway_pb2.TableView, seat: int) -> str:
    if not 0 <= seat < len(table.seats):
        return "?"
    if seat == table.viewer - 1:
        return f"seat {seat} (you)"
    s = table.seats[seat]
    return f"seat {seat} {s.display_name or s.player_id}"


# --- events --------------------------------------------------------------------------------------
def render_event(event: gateway_pb2.Event, me: int) -> str | None:
    """One line for an event worth telling a person, or None."""
    kind = event.WhichOneof("kind")
    ev = getattr(event, kind) if kind else None

    def who(seat_value: int, verb: str) -> str:
        if seat_value - 1 == me:
            return f"you {verb}"
        return f"seat {seat_value - 1} {verb + 'es' if verb.endswith('sh') else verb + 's'}"

    if kind == "hand_started":
        return (
            f"--- hand {ev.hand_number} starts: dealer seat {ev.dealer - 1}, dice "
            f"{ev.dice.first}+{ev.dice.second}{' (开宝)' if ev.kaibao else ''}, "
            f"荒番 {ev.huangfan}; wall commitment {ev.commitment[:16]}…"
        )
    if kind == "tiles_dealt":
        mine = [h for h in ev.hands if h.seat - 1 == me]
        if mine:
            return f"dealt to you: {tiles_text(sorted(_tiles(mine[0].tiles)))}"
        return None
    if kind == "flowers_exposed":
        line = f"{who(ev.seat, 'expose')} flowers (补花) {tiles_text(_tiles(ev.flowers))}"
        if ev.seat - 1 == me and ev.replacements:
            line += f", replaced by {tiles_text(_tiles(ev.replacements))}"
        return line
    if kind == "wild_flipped":
        return (
            f"翻百搭: {tile_text(ev.indicator - 1)} turned up — every "
            f"{tile_text(ev.wild - 1)} is 百搭 this hand"
        )
    if kind == "tile_drawn":
        if ev.seat - 1 == me and ev.tile:
            return f"you draw {tile_text(ev.tile - 1)}{' (replacement)' if ev.replacement else ''}"
        return None
    if kind == "tile_discarded":
        extra = " with 敲 (ready)" if ev.declared_ready else ""
        auto = " (auto)" if ev.auto else ""
        return f"{who(ev.seat, 'discard')} {tile_text(ev.tile - 1)}{extra}{auto}"
    if kind == "meld_declared":
        return f"{who(ev.seat, 'declare')} {meld_text(meld_from_view(ev.meld))}"
    if kind == "ready_declared":
        return f"{who(ev.seat, 'declare')} 敲 (ready)"
    if kind == "win_declared":
        on = tile_text(ev.tile - 1) if ev.tile else "-"
        return f"{who(ev.seat, 'win')} 胡: {_WIN_KIND_ZH.get(ev.win_kind, '')} on {on}"
    if kind == "hand_drawn":
        return "流局: the wall is empty, the hand is drawn (荒)"
    if kind == "timed_out":
        return f"{who(ev.seat, 'time')} out ({ev.in_a_row} in a row)"
    if kind == "seat_changed":
        name = "you" if ev.seat - 1 == me else f"seat {ev.seat - 1}"
        return f"{name}: {ev.reason.replace('_', ' ')}"
    if kind == "seat_bankrupt":
        name = "you" if ev.seat - 1 == me else f"seat {ev.seat - 1} ({ev.player_id})"
        return (
            f"破产: {name} went bankrupt after hand {ev.after_hand} (the silver left no longer "
            f"covers a hand) and left the table; a bot plays seat {ev.seat - 1} now"
        )
    if kind == "next_hand_ready":
        return f"{'you' if ev.seat - 1 == me else f'seat {ev.seat - 1}'}: ready for the next hand"
    if kind == "seed_revealed":
        return f"wall seed revealed: {ev.seed[:16]}… (its SHA-256 is the commitment)"
    if kind == "table_finished":
        chips = ", ".join(f"seat {i} {c:+d}" for i, c in enumerate(ev.chips))
        rounds = f", {ev.rounds_played} rounds" if ev.rounds_played else ""
        stacks = ", ".join(f"seat {i} {c}" for i, c in enumerate(ev.garden_stacks))
        return (
            f"=== table finished after {ev.hands_played} hands{rounds} ({ev.reason}): {chips}"
            f"{'; 逛花园 stacks: ' + stacks if stacks else ''} ==="
        )
    return None


def render_result(result: gateway_pb2.HandResult, me: int) -> str:
    """The settled hand: winners, the itemized breakdown, payments and revealed hands."""
    outcome = {1: "win", 2: "drawn (流局)", 3: "escape"}.get(result.outcome, "?")
    lines = [f"=== hand over: {outcome} ==="]
    for w in result.winners:
        hand = HandType(w.hand_type).name_zh if w.hand_type else "?"
        lines.append(
            f"winner seat {w.seat - 1}{' (you)' if w.seat - 1 == me else ''}: {hand} · "
            f"{_WIN_KIND_ZH.get(w.win_kind, '')} · win tile "
            f"{tile_text(w.win_tile - 1) if w.win_tile else '-'} · 花 {w.flowers} · value {w.value}"
        )
    if result.breakdown:
        lines.append("breakdown:")
        for b in result.breakdown:
            who = f"seat {b.seat - 1}: " if b.seat else ""
            lines.append(f"  {who}{b.label}  [{b.amount}]")
    pays = "  ".join(
        f"seat {i}{'(you)' if i == me else ''} {p:+d}" for i, p in enumerate(result.payments)
    )
    lines.append(f"payments: {pays}  house {result.house}")
    if result.garden_stacks:
        stacks = "  ".join(
            f"seat {i}{'(you)' if i == me else ''} {c}" for i, c in enumerate(result.garden_stacks)
        )
        lines.append(f"逛花园 stacks: {stacks}")
    for r in result.revealed:
        melds = " ".join(meld_text(meld_from_view(m)) for m in r.melds)
        lines.append(
            f"  seat {r.seat - 1}: {tiles_text(sorted(_tiles(r.concealed)))}"
            f"{'  ' + melds if melds else ''}"
        )
    if result.next_dealer:
        lines.append(f"next dealer: seat {result.next_dealer - 1}; 荒番 {result.next_huangfan}")
    return "\n".join(lines)


def plan_text(view: SeatView) -> str:
    """`` — plan 清/混一色万, 2 tiles from waiting, 12 useful tiles`` (the planning bot's view)."""
    summary = plan_summary(view)
    return f" — {summary}" if summary else ""
