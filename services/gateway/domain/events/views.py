"""What each viewer may see of an event (information hiding), deny by default.

An event is stored once, complete, in the table's log; :func:`project` cuts it down for one
viewer: a seat (0-3) or a spectator (None). Every event kind states, in :data:`VIEW_RULES`,
what three viewers see of it: the **owner** (the seat the event is about, for kinds that have
one), **other seats**, and a **spectator**. Each is :data:`FULL`, :data:`NOTHING` or a
function returning the viewer's copy (or None). A kind without a rule fails the import, so no
new kind can reach a viewer by default.

What is secret: another seat's concealed tiles, what it drew (a live, replacement or 换牌 tile),
a concealed kong's face, the wall, and who may claim a discard or rob a kong (抢杠) — a prompt of
that kind, the ``timed_out`` of a missed one and anything an event marks ``private`` (the 托管 it
starts, see :meth:`TableSession._timeout`) go to their seat only, and so does a
``seat_changed``'s ``deadline_ms`` marked ``deadline_private`` (托管 resumed while a claim is
pending). An own turn is public, its timeout too, except ``in_a_row``, which counts missed
claims as well (others see 0). The log's record of actions (``action``), the hold of a
claim window (``hold_ms`` of a discard or an added kong) and a window's fillers
(``window_padding``) go to nobody.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from services.gateway.domain.events import kinds as K

# Prompt kinds whose very existence tells what a seat holds.
SECRET_PROMPT_KINDS = frozenset({K.CLAIM, K.ROB_KONG})

# (the event, the viewer: a seat or None) -> the viewer's copy, or None
Redaction = Callable[[K.TableEvent, int | None], K.TableEvent | None]


def FULL(ev: K.TableEvent, viewer: int | None) -> K.TableEvent:
    """The viewer sees the whole event."""
    return ev


def NOTHING(ev: K.TableEvent, viewer: int | None) -> None:
    """The viewer sees nothing of it."""
    return None


@dataclass(frozen=True)
class ViewRule:
    """What the event's own seat, the other seats and a spectator see of one kind."""

    owner: Redaction
    others: Redaction
    spectator: Redaction


PUBLIC = ViewRule(FULL, FULL, FULL)
OWNER_ONLY = ViewRule(FULL, NOTHING, NOTHING)
NOBODY = ViewRule(NOTHING, NOTHING, NOTHING)


def _everyone(redact: Redaction) -> ViewRule:
    return ViewRule(redact, redact, redact)


def _both(redact: Redaction, owner: Redaction = FULL) -> ViewRule:
    """A rule whose other seats and spectators see the same redacted copy."""
    return ViewRule(owner, redact, redact)


# --- redactions ------------------------------------------------------------------------------
def _deal_for(ev: K.TableEvent, viewer: int | None) -> K.TableEvent:
    """The deal has no single owner: each seat sees its own tiles, everyone how many."""
    assert isinstance(ev, K.TilesDealt)
    return ev.replace(
        hands=tuple(h if i == viewer else () for i, h in enumerate(ev.hands)),
        counts=tuple(map(len, ev.hands)),
    )


def _drawn_for_others(ev: K.TableEvent, viewer: int | None) -> K.TableEvent:
    assert isinstance(ev, K.TileDrawn)
    return ev.replace(tile=None)


def _flowers_for_others(ev: K.TableEvent, viewer: int | None) -> K.TableEvent:
    assert isinstance(ev, K.FlowersExposed)
    return ev.replace(replacements=(), replacement_count=len(ev.replacements))


def _swap_for_others(ev: K.TableEvent, viewer: int | None) -> K.TableEvent:
    assert isinstance(ev, K.TilesSwapped)
    return ev.replace(buried=(), taken=(), count=len(ev.buried))


def _discard_for_viewers(ev: K.TableEvent, viewer: int | None) -> K.TableEvent:
    """A discard without its claim window's hold: knowing when the window ends would tell
    that a draw coming later was held up by a seat deciding on a claim."""
    assert isinstance(ev, K.TileDiscarded)
    return ev.replace(hold_ms=0) if ev.hold_ms else ev


def _meld_for_owner(ev: K.TableEvent, viewer: int | None) -> K.TableEvent:
    """The seat's own meld, without its 抢杠 window's hold (as :func:`_discard_for_viewers`)."""
    assert isinstance(ev, K.MeldDeclared)
    return ev.replace(hold_ms=0) if ev.hold_ms else ev


def _meld_for_others(ev: K.TableEvent, viewer: int | None) -> K.TableEvent:
    assert isinstance(ev, K.MeldDeclared)
    ev = _meld_for_owner(ev, viewer)
    hidden = ev.meld.hidden()
    return ev if hidden is ev.meld else ev.replace(meld=hidden)


def _timeout_for_others(ev: K.TableEvent, viewer: int | None) -> K.TableEvent | None:
    assert isinstance(ev, K.TimedOut)
    if ev.kind in SECRET_PROMPT_KINDS:  # a missed claim tells the seat could claim
        return None
    return ev.replace(in_a_row=0)


def _seat_change_for_others(ev: K.TableEvent, viewer: int | None) -> K.TableEvent | None:
    assert isinstance(ev, K.SeatChanged)
    if ev.private:
        return None
    if ev.deadline_private:  # 托管 ended while a claim was pending: the deadline is the seat's
        return ev.replace(deadline_ms=0, deadline_private=False)
    return ev


def _halted_for_viewers(ev: K.TableEvent, viewer: int | None) -> K.TableEvent:
    """Its reason and message; the error itself is for the operator reading the log."""
    assert isinstance(ev, K.TableHalted)
    return ev.replace(error="")


# The rule of every kind. Kinds without a seat have no owner: their rule's ``owner`` is unused.
VIEW_RULES: dict[type[K.TableEvent], ViewRule] = {
    K.TableStarted: PUBLIC,
    K.HandStarted: PUBLIC,
    K.TilesDealt: _everyone(_deal_for),
    K.FlowersExposed: _both(_flowers_for_others),
    K.TileDrawn: _both(_drawn_for_others),
    K.TileDiscarded: _everyone(_discard_for_viewers),
    K.MeldDeclared: _both(_meld_for_others, owner=_meld_for_owner),
    K.ReadyDeclared: PUBLIC,
    K.Prompt: OWNER_ONLY,
    K.ActionTaken: NOBODY,
    K.WinDeclared: PUBLIC,
    K.HandResult: PUBLIC,  # the hands it reveals are shown to all by the rules (RULES §9)
    K.SeedRevealed: PUBLIC,  # only once the hand is over
    K.HandDrawn: PUBLIC,
    K.TableFinished: PUBLIC,
    K.SeatChanged: _both(_seat_change_for_others),
    K.TilesSwapped: _both(_swap_for_others),
    K.TimedOut: _both(_timeout_for_others),
    K.TableHalted: _everyone(_halted_for_viewers),
    K.WildFlipped: PUBLIC,  # turned face up for all
    K.DoubleCardPlayed: PUBLIC,  # 加倍卡: every seat and spectator sees who doubled
    K.SeatBankrupt: PUBLIC,  # 破产: every seat and spectator sees who went bankrupt
    K.NextHandReady: PUBLIC,  # Next: every seat and spectator sees who is ready
    K.WindowPadding: NOBODY,  # a claim window's filler: it only takes a number
}
_missing = set(K.EVENT_CLASSES) - set(VIEW_RULES)
if _missing:  # pragma: no cover - a kind added without its rule
    raise ImportError(
        f"event kinds without a view rule: {sorted(K.KIND_NAMES[c] for c in _missing)}"
    )


def owner_of(ev: K.TableEvent) -> int | None:
    """The seat an event is about (None for table-wide facts)."""
    return getattr(ev, "seat", None)


def project(ev: K.TableEvent, viewer: int | None) -> K.TableEvent | None:
    """``ev`` as ``viewer`` (a seat, or None for a spectator) may see it, or None."""
    rule = VIEW_RULES[type(ev)]
    if viewer is None:
        return rule.spectator(ev, None)
    return (rule.owner if owner_of(ev) == viewer else rule.others)(ev, viewer)
