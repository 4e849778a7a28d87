"""Claims on a discard (吃 碰 杠 胡) and 抢杠 on an added kong (RULES §6): the window — ONE rules
call for every other seat's options, a prompt to each seat that has any — and its resolution
by priority once every prompted seat answered (一炮多响: every win stands; one rules call when
anyone claims, none when all pass). Seats that passed a win get a 漏胡 mark on the tile."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from services.gateway.domain.events.kinds import (
    CLAIM,
    ROB_KONG,
    MeldDeclared,
    MeldFact,
    WindowPadding,
)
from services.gateway.domain.hand.state import STEP_CLOSE_WINDOW, STEP_NONE, Pending
from shared.errors import FailedPrecondition
from shared.melds import Meld, MeldKind
from shared.table import (
    NUM_SEATS,
    Action,
    Chow,
    ClaimResolution,
    ExposedKong,
    LastAction,
    LastActionKind,
    Pass,
    Pong,
    action_name,
)

# Enum members as C statics: compiled, ``LastActionKind.DRAW`` and the like are class
# attribute lookups through the enum metaclass's __getattr__ hook on every use.
_LAST_ADDED_KONG: Final = LastActionKind.ADDED_KONG
_LAST_CHOW: Final = LastActionKind.CHOW
_LAST_PONG: Final = LastActionKind.PONG
_MELD_ADDED_KONG: Final = MeldKind.ADDED_KONG
_MELD_CHOW: Final = MeldKind.CHOW
_MELD_EXPOSED_KONG: Final = MeldKind.EXPOSED_KONG
_MELD_PONG: Final = MeldKind.PONG

# The events no viewer sees that a held window holds, prompted or not: a prompt and its answer
# for each of the three other seats (RULES §4 "Claim windows").
WINDOW_HIDDEN_EVENTS: Final = 2 * (NUM_SEATS - 1)

if TYPE_CHECKING:
    from services.gateway.domain.hand.engine import HandEngine


def open_window(h: HandEngine) -> None:
    """The window on the last discard (or added kong: 抢杠 only): prompt every other seat that
    may do anything with the tile; nobody: the hand goes on once the window's hold ran out (at
    once without one). A window somebody may answer is resolved once every prompted seat
    answered and the hold ran out, whichever is later (:meth:`HandEngine.after_hold`), so the
    time to the next draw or claim tells nobody whether anyone could claim (RULES §4)."""
    last = h.last
    seat, tile = last.seat, last.tile
    kind = ROB_KONG if last.kind is _LAST_ADDED_KONG else CLAIM
    options = h.rules.claim_options(h.snapshot())
    if kind == ROB_KONG:
        active = {s: o for s, o in options.items() if o.win is not None and s != seat}
    else:
        # o.any, inlined: a named tuple's property is a Python call, made for three seats on
        # every discard
        active = {
            s: o
            for s, o in options.items()
            if (o.win is not None or o.pong or o.exposed_kong or o.chows) and s != seat
        }
    h.start_hold()
    if not active:
        if h.window_until_ms:
            h.window = kind  # open, with nobody to answer it, until its hold runs out
            h.after_hold(STEP_CLOSE_WINDOW)
            return
        after_window(h, kind, seat)
        return
    h.window = kind
    h.claims = {}
    h.window_options = active
    ms = h.config.claim_ms
    h.pending = {s: Pending(s, kind, o, h.due(s, ms), tile, seat) for s, o in active.items()}
    h._step = STEP_NONE
    for s in sorted(h.pending, key=lambda x: (x - seat) % NUM_SEATS):
        p = h.pending[s]
        p.sequence = h.emit_prompt(p)
    if h.window == kind and h.pending:  # not answered at once (a bot chained in-process)
        h.start_hold()  # counted from the prompts sent: prompting does not shorten it


def close_window(h: HandEngine) -> None:
    """The hold of a window nobody could answer ran out: the hand goes on."""
    last = h.last
    pad_window(h, 0)
    after_window(h, ROB_KONG if last.kind is _LAST_ADDED_KONG else CLAIM, last.seat)


def pad_window(h: HandEngine, prompted: int) -> None:
    """Close a held window with fillers (``window_padding``, seen by nobody) up to
    :data:`WINDOW_HIDDEN_EVENTS`: each prompted seat's prompt and answer take a sequence number
    that no other viewer sees, so without them the gap in the numbers a viewer sees after a
    discard would count the seats that could claim it. A window without a hold (a table of
    bots) is not padded. Once per window: the hold is spent here, so a step run again after a
    failed service call does not pad twice."""
    if h.window_held_ms <= 0:
        return
    h.window_held_ms = 0
    for _ in range(WINDOW_HIDDEN_EVENTS - 2 * prompted):
        h.emit_event(WindowPadding(hand_id=h.hand_id, hand_number=h.number))


def after_window(h: HandEngine, kind: str, seat: int) -> None:
    """Nobody took the tile: the next seat draws, or the kong is completed."""
    h.window = None
    if kind == ROB_KONG:
        h.draw(seat, replacement=True)
    else:
        h.draw((seat + 1) % NUM_SEATS, replacement=False)


def resolve_window(h: HandEngine) -> None:
    """Every prompted seat answered: apply the claim that stands (or the wins)."""
    kind, claims, last = h.window, h.claims, h.last
    assert kind is not None and last.tile is not None
    tile, discarder = last.tile, last.seat
    if all(isinstance(a, Pass) for a in claims.values()):
        missed = tuple(s for s, o in h.window_options.items() if o.win is not None and s in claims)
        res = ClaimResolution(tile=tile, missed_wins=missed)
    else:
        res = h.rules.resolve_claims(h.snapshot(), dict(claims))
    pad_window(h, len(h.window_options))
    for s in res.missed_wins:
        h.seats[s].missed.add(tile)
        h.seats[s].changed()
    h.window, h.claims, h.window_options = None, {}, {}
    if res.winners:
        wins = [(s, res.win_options[s]) for s in res.winners]
        if kind == ROB_KONG:
            rob_kong(h, discarder, tile)
        h.finish_win(wins, discarder)
        return
    if res.taker is None or res.action is None:
        after_window(h, kind, discarder)
        return
    take(h, res.taker, res.action, discarder, tile)


def rob_kong(h: HandEngine, seat: int, tile: int) -> None:
    """抢杠: the added kong goes back to a pong; the tile is the robber's win tile."""
    s = h.seats[seat]
    for i, m in enumerate(s.melds):
        if m.kind is _MELD_ADDED_KONG and m.tiles[0] == tile:
            s.melds[i] = Meld(_MELD_PONG, (tile,) * 3, m.from_seat)
            break
    s.changed()
    h.robbed_tile = tile


def take(h: HandEngine, taker: int, action: Action, discarder: int, tile: int) -> None:
    """The claim that stands: the taker melds the tile and goes on (a kong draws first)."""
    s = h.seats[taker]
    pile = h.seats[discarder]
    assert pile.discards[-1] == tile  # the claim window follows the discard at once
    pile.last_discard_claimed()
    if isinstance(action, Pong):
        s.counts[tile] -= 2
        meld = Meld(_MELD_PONG, (tile,) * 3, discarder)
    elif isinstance(action, ExposedKong):
        s.counts[tile] -= 3
        meld = Meld(_MELD_EXPOSED_KONG, (tile,) * 4, discarder)
    elif isinstance(action, Chow):
        for k in action.tiles:
            if k != tile:
                s.counts[k] -= 1
        meld = Meld(_MELD_CHOW, action.tiles, discarder)
    else:
        raise FailedPrecondition(f"rules resolved to {action_name(action)}, not a claim")
    s.melds.append(meld)
    s.missed.clear()  # 动牌
    s.changed()
    h.claim_counts[taker][discarder] += 1
    h._claim_counts_tuple = tuple(map(tuple, h.claim_counts))
    h.claims_made.append((taker, discarder, h.seats[discarder].ready))
    h.first_go_around = False
    h.emit_event(
        MeldDeclared(
            seat=taker,
            meld=MeldFact.of(meld, tile),
            hand_id=h.hand_id,
            hand_number=h.number,
        )
    )
    if isinstance(action, ExposedKong):
        h.draw(taker, replacement=True)
        return
    h.turn = taker
    kind = _LAST_PONG if isinstance(action, Pong) else _LAST_CHOW
    h.last = LastAction(kind, taker, tile)
    h.drawn.pop(taker, None)
    h.replacement_draw = False
    h.prompt_own_turn(taker)
