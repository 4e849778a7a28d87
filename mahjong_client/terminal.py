"""The person at the table: :class:`TerminalPlayer`, a :class:`RemotePlayer` whose decisions
are asked on ``stdin`` (a number from the menu, a tile to discard, ``h`` hint, ``t`` table,
``r`` resume from 托管, ``q`` quit) and whose events are told on ``stdout``
(:mod:`mahjong_client.render`). Each hand's result stays until the person presses Enter (Next:
``ReadyForNextHand``) or the table's pause between hands runs out (RULES §11)."""

from __future__ import annotations

import select
import sys
import time
from collections.abc import Sequence
from typing import TextIO

from mahjong.gateway.v1 import gateway_pb2

from mahjong_client.convert import (
    CLAIM,
    OWN_TURN,
    ROB_KONG,
    TILE_SWAP,
    options_from_prompt,
    view_from_proto,
)
from mahjong_client.player import RemotePlayer, same_prompt
from mahjong_client.render import (
    action_label,
    hand_lines,
    meld_text,
    menu,
    plan_text,
    render_event,
    render_result,
    render_table,
    tile_text,
    tiles_text,
)
from services.gateway.bots import PlanningBot, SeatView
from shared.table import Action, ClaimOptions, Discard
from shared.tiles import parse


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

    def after_result(self) -> None:
        """The hand's result stays (it was just printed) until the person presses Enter — Next
        — or the table's pause runs out (``next_hand_unix_ms``); nothing to wait for when the
        table deals or ends at once (a table without a pause, an escape's result mid-hand)."""
        table = self.state()
        if table.phase != gateway_pb2.TABLE_PHASE_BETWEEN_HANDS or not table.next_hand_unix_ms:
            return
        left = max(0.0, table.next_hand_unix_ms / 1000 - time.time())
        self.say(f">> Enter: next hand (dealt in {left:.0f}s at the latest; q quits)")
        line = self._line_within(left)
        if line is None:
            self.say("the pause ran out: the next hand is dealt")
            return
        if line.strip() in ("q", "quit", "exit"):
            raise Quit("quit")
        self.ready_for_next_hand()

    def _line_within(self, seconds: float) -> str | None:
        """A line of input typed within ``seconds`` (None: none came). Input that is not a
        terminal or pipe (a test's StringIO) is read at once; its end is a quit."""
        try:
            fd = self.stdin.fileno()
        except (OSError, ValueError):  # io.UnsupportedOperation: no descriptor to wait on
            fd = None
        if fd is not None and not select.select([fd], [], [], seconds)[0]:
            return None
        line = self.stdin.readline()
        if not line:
            raise Quit("end of input")
        return line

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
            action = parse_choice(choice, actions)
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


def parse_choice(text: str, actions: Sequence[Action]) -> Action | None:
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
