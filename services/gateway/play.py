"""``mahjong play``: a person plays Shanghai Mahjong in a terminal through the real gateway.

By default it creates a table (CreateTable) with the person in one seat and three built-in
bots, or it joins a given table (``--table`` with ``--token``, or an open seat by JoinSeat).
Every prompt shows the table (each seat's flowers, melds, discards, 敲 flag; tiles left; the
timer), the person's tiles in mpsz with their Chinese names, and the legal options numbered:
answer with a number, a tile to discard (``5m``), ``h`` for the planning bot's hint, ``t`` to
redraw the table or ``q`` to leave. At the end of each hand the scoring breakdown is shown.

``--sign-in`` signs in to matchmaking first (the development issuer's ID token for ``--name``,
or ``--id-token``) and plays at a private room's table with three bots, for silver.

``--local`` starts a private stack (wall, rules, scoring, gateway on free ports; matchmaking and
a development issuer of its own too with ``--sign-in``) first.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import TextIO

import grpc
from mahjong.gateway.v1 import gateway_pb2

from infra.addresses import default_address
from services.gateway.bots import PlanningBot, SeatView, legal_actions, plan_summary
from services.gateway.client.convert import (
    CLAIM,
    OWN_TURN,
    ROB_KONG,
    TILE_SWAP,
    meld_from_view,
    options_from_prompt,
    view_from_proto,
)
from services.gateway.client.player import RemotePlayer, same_prompt
from services.gateway.client.tables import create_table
from shared.hand.hand_type import HandType
from shared.melds import Meld, MeldKind
from shared.ruleset import DEFAULT_RULESET
from shared.table import (
    Action,
    AddedKong,
    Chow,
    ClaimOptions,
    ConcealedKong,
    DeclareReady,
    Discard,
    ExposedKong,
    Pass,
    Pong,
    Win,
)
from shared.tiles import format_tile, name_zh, parse

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


# --- the person at the table ----------------------------------------------------------------------
class Quit(Exception):
    """The person asked to leave (``q`` or end of input)."""


class TerminalPlayer(RemotePlayer):
    """A :class:`RemotePlayer` whose decisions are a person's, asked on ``stdin``."""

    def __init__(self, *args, stdin: TextIO = sys.stdin, stdout: TextIO = sys.stdout, **kw):
        kw.setdefault("on_event", self._show_event)
        super().__init__(*args, **kw)
        self.stdin = stdin
        self.stdout = stdout
        self.hint_bot = PlanningBot()

    def say(self, text: str) -> None:
        self.stdout.write(text + "\n")
        self.stdout.flush()

    def _show_event(self, event: gateway_pb2.Event) -> None:
        me = self.seat if self.seat is not None else -1
        if event.WhichOneof("kind") == "hand_result":
            self.say(render_result(event.hand_result, me))
            return
        line = render_event(event, me)
        if line:
            self.say(line)

    def decide(self, prompt: gateway_pb2.Prompt) -> gateway_pb2.ActResponse | None:
        table = self.state()
        if not same_prompt(table, prompt):
            return None  # answered by the timer meanwhile; a newer prompt will come
        if self.seat is None and table.viewer:
            self.seat = table.viewer - 1
        view = view_from_proto(table, prompt)
        self.say(render_table(table))
        drawn = prompt.tile - 1 if prompt.kind == OWN_TURN and prompt.tile else None
        for line in hand_lines(view, drawn):
            self.say("  " + line)
        if view.melds:
            self.say("  your melds: " + " ".join(meld_text(m) for m in view.melds))
        if prompt.kind == TILE_SWAP:
            return self._ask_swap(view, prompt)
        options = options_from_prompt(prompt, view)
        tile = prompt.tile - 1 if prompt.tile else None
        actions = menu(options)
        shown = tile_text(tile) if tile is not None else ""
        title = {
            OWN_TURN: "your turn",
            CLAIM: f"seat {prompt.from_seat - 1} discarded {shown}",
            ROB_KONG: f"seat {prompt.from_seat - 1} adds a kong with {shown}: rob it?",
        }.get(prompt.kind, "decide")
        self.say(f">> {title} — {self._time_left(prompt)}")
        if self._on_auto_play(table):
            self.say("   托管: the bot answers for you; type r (resume) to play yourself again")
        for i, a in enumerate(actions, 1):
            self.say(f"  {i:>2}) {action_label(a, tile)}")
        while True:
            choice = self._ask(
                f"choose 1-{len(actions)} (or a tile, h hint, t table, r resume, q quit):"
            )
            if choice in ("r", "resume"):
                if self.resume():
                    now = self.state()  # the decision keeps its place, with a new deadline
                    if not (
                        now.HasField("prompt")
                        and now.prompt.kind == prompt.kind
                        and now.prompt.tile == prompt.tile
                    ):
                        self.say("the bot answered this one already; the next one is yours")
                        return None
                    prompt = now.prompt
                continue
            if choice == "h":
                hint = (
                    self.hint_bot.claim(view, options, tile)
                    if isinstance(options, ClaimOptions)
                    else self.hint_bot.own_turn(view, options)
                )
                self.say(f"hint: {action_label(hint, tile)}{plan_text(view)}")
                continue
            if choice == "t":
                self.say(render_table(self.state()))
                continue
            action = _parse_choice(choice, actions)
            if action is None:
                self.say(f"not an option: {choice!r}")
                continue
            resp = self.act(action)
            if resp is None:
                r = self.log.rejections[-1]
                self.say(f"refused ({r.code.name}): {r.message}")
            return resp

    def resume(self) -> bool:
        """End 托管 (auto-play): Act with ``resume``; what happened is said either way."""
        resp = self.act(gateway_pb2.Action(resume=gateway_pb2.Resume()))
        if resp is None:
            r = self.log.rejections[-1]
            self.say(f"refused ({r.code.name}): {r.message}")
            return False
        self.say("托管 off: you play again — " + self._time_left(self.state().prompt))
        return True

    def _on_auto_play(self, table: gateway_pb2.TableView) -> bool:
        me = table.viewer - 1
        return 0 <= me < len(table.seats) and table.seats[me].auto_play

    def _ask_swap(
        self, view: SeatView, prompt: gateway_pb2.Prompt
    ) -> gateway_pb2.ActResponse | None:
        count = prompt.options.swap_count
        while True:
            choice = self._ask(f"换牌: name {count} tiles to bury (e.g. 19m5p1z7z), h hint:")
            if choice == "h":
                hint = self.hint_bot.tile_swap(view, count)
                self.say("hint: " + tiles_text(hint))
                continue
            try:
                tiles = parse(choice)
            except ValueError as exc:
                self.say(str(exc))
                continue
            if len(tiles) != count:
                self.say(f"name exactly {count} tiles")
                continue
            return self.act(tuple(tiles))

    def _ask(self, question: str) -> str:
        self.say(question)
        line = self.stdin.readline()
        if not line:
            raise Quit("end of input")
        text = line.strip()
        if text in ("q", "quit", "exit"):
            raise Quit("quit")
        return text

    @staticmethod
    def _time_left(prompt: gateway_pb2.Prompt) -> str:
        if not prompt.deadline_unix_ms:
            return "no timer"
        left = (prompt.deadline_unix_ms - time.time() * 1000) / 1000
        return f"{max(0.0, left):.0f}s left"


def _parse_choice(text: str, actions: Sequence[Action]) -> Action | None:
    if text.isdigit():
        i = int(text)
        return actions[i - 1] if 1 <= i <= len(actions) else None
    try:
        tiles = parse(text)
    except ValueError:
        return None
    if len(tiles) == 1:
        for a in actions:
            if isinstance(a, Discard) and a.tile == tiles[0]:
                return a
    return None


# --- the command ---------------------------------------------------------------------------------
def register_play(subparsers) -> None:
    """Add ``mahjong play`` (called by services/gateway/cli.py)."""
    p = subparsers.add_parser(
        "play",
        help="play Shanghai Mahjong in the terminal against three bots through the gateway",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--gateway-addr", default=None, help="the gateway (default: its loopback port)")
    p.add_argument("--local", action="store_true", help="start a private stack on free ports")
    p.add_argument("--table", default="", help="join this table instead of creating one")
    p.add_argument("--token", default="", help="seat token for --table (else JoinSeat)")
    p.add_argument("--name", default="you", help="your player id / display name")
    p.add_argument(
        "--seat",
        type=int,
        default=None,
        choices=range(4),
        help="your seat, 0-3 (default: 0 at a new table, your assigned or any open seat else)",
    )
    p.add_argument("--hands", type=int, default=0, help="hands to play (0: until you quit)")
    p.add_argument(
        "--rounds",
        type=int,
        default=0,
        help="rounds (圈) to play at a new table (0: no limit; a 逛花园 ruleset sets its own)",
    )
    p.add_argument(
        "--sign-in",
        action="store_true",
        help="sign in to matchmaking (the development issuer's ID token for --name, or "
        "--id-token) and play at a private room's table with three bots, for silver",
    )
    p.add_argument("--id-token", default="", help="the studio's ID token for --sign-in")
    p.add_argument(
        "--matchmaking-addr", default=None, help="matchmaking (default: its loopback port)"
    )
    p.add_argument("--stake", type=int, default=1, help="chips per point (底分)")
    p.add_argument("--ruleset", default=DEFAULT_RULESET)
    p.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="SECTION.OPTION=VALUE",
        help="ruleset override, e.g. timers.discard_seconds=60 (repeatable)",
    )
    p.set_defaults(func=run_play)


def run_play(
    args: argparse.Namespace, stdin: TextIO = sys.stdin, stdout: TextIO = sys.stdout
) -> int:
    options = {}
    for item in args.option:
        key, sep, value = item.partition("=")
        if not sep:
            stdout.write(f"--option {item!r}: expected SECTION.OPTION=VALUE\n")
            return 2
        options[key.strip()] = value.strip()
    stack = None
    if args.local:
        from services.gateway.client.stack import LocalStack

        if args.sign_in:
            from services.gateway.client.stack import SIGNED_IN_STACK

            stdout.write("starting a local stack (wall, rules, scoring, gateway, matchmaking)…\n")
            stack = LocalStack(SIGNED_IN_STACK).start()
            args.matchmaking_addr = stack.matchmaking
            if not args.id_token:  # the stack's own development issuer
                args.id_token = stack.issuer.issuer.id_token(args.name, args.name)
        else:
            stdout.write("starting a local stack (wall, rules, scoring, gateway)…\n")
            stack = LocalStack().start()
        address = stack.gateway
    else:
        address = args.gateway_addr or default_address("gateway")
    try:
        return _play(args, address, options, stdin, stdout)
    except grpc.RpcError as exc:
        code = exc.code()
        stdout.write(f"mahjong play: {code.name if code else 'error'}: {exc.details()}\n")
        if code == grpc.StatusCode.UNAVAILABLE:
            stdout.write(f"is a gateway running at {address}? (make run, or play --local)\n")
        return 1
    finally:
        if stack is not None:
            stack.stop()


def _play(args, address: str, options: dict, stdin: TextIO, stdout: TextIO) -> int:
    if args.table and args.token:
        player = TerminalPlayer(
            address,
            args.table,
            args.token,
            seat=args.seat,
            stdin=stdin,
            stdout=stdout,
            name=args.name,
        )
    elif args.sign_in:
        from services.gateway.client.signed_in import dev_id_token, room_with_bots

        seat = room_with_bots(
            args.matchmaking_addr or default_address("matchmaking"),
            args.id_token or dev_id_token(args.name),
            args.name,
            stake=args.stake,
            max_hands=args.hands,
            ruleset=args.ruleset,
            options=options,
        )
        stdout.write(
            f"signed in as {seat.player_id} ({seat.silver} silver); room {seat.room_code}, "
            f"table {seat.table_id}: you are seat {seat.seat}, three bots join you\n"
        )
        player = TerminalPlayer(
            seat.gateway_address,
            seat.table_id,
            seat.seat_token,
            seat=seat.seat,
            stdin=stdin,
            stdout=stdout,
            name=args.name,
        )
    elif args.table:
        player = TerminalPlayer.join(
            address,
            args.table,
            player_id=args.name,
            seat=args.seat,
            stdin=stdin,
            stdout=stdout,
            name=args.name,
        )
    else:
        me = args.seat if args.seat is not None else 0
        seats: list[str | None] = [None] * 4
        seats[me] = args.name
        table = create_table(
            address,
            seats,
            stake=args.stake,
            max_hands=args.hands,
            max_rounds=args.rounds,
            ruleset=args.ruleset,
            options=options,
        )
        stdout.write(f"table {table.table_id}: you are seat {me}, three bots join you\n")
        player = TerminalPlayer(
            address,
            table.table_id,
            table.seat_tokens[me],
            seat=me,
            stdin=stdin,
            stdout=stdout,
            name=args.name,
        )
    try:
        # A table created here ends by itself after --hands; on a joined table, stop after them.
        player.run(max_hands=args.hands or None if args.table else None)
    except Quit as why:
        player.say(f"leaving the table ({why})")
        try:
            penalty = player.leave()
            if penalty:
                player.say(f"escape penalty paid: {penalty} chips")
        except Exception as exc:  # the table may be gone already
            player.say(f"leave failed: {exc}")
    finally:
        player.close()
    hands = len(player.log.hand_results)
    player.say(f"played {hands} hand{'s' if hands != 1 else ''}; bye")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mahjong")
    register_play(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["play", *(argv if argv is not None else sys.argv[1:])])
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
