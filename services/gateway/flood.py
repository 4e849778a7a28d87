"""Flood control of the client API: each seat token may make ``seat_calls_per_second`` calls
after a burst of ``seat_call_burst`` (:class:`infra.rate_limit.RateLimiter`), refused
RESOURCE_EXHAUSTED ``RATE_LIMITED`` past it — except the calls the server itself asked for.

A table moves as fast as its seats answer, so a client that answers every prompt at once (an AI
agent against bots) makes as many calls as the server sends prompts; counting those would refuse
its legal moves. Exempt from the seat's budget, on the replica that runs the table:

* **the answer to the seat's open prompt** — an ``Act`` with an action (not ``Resume``) from the
  seat's own token, whose ``last_sequence`` has seen the prompt the seat holds now (its own turn,
  a claim window, the tile swap): ``prompt.sequence <= last_sequence <= head``. One per prompt:
  the first such call of each prompt is free, a second for the same prompt is counted.
* **a GetTableState on arrival** — the first after the seat's ``JoinSeat`` or ``Subscribe`` (a
  join, a reconnect); one, not one per arrival held up.

Whatever else is counted as before: calls with no prompt open, a stale ``last_sequence`` (an
older prompt, already answered), a prompt of another seat (the token names the seat), a
spectator's or a forged token, an Act with no action, ``GetHint``, ``Leave``, streams. An
exempt call that is refused all the same (an illegal action, say) is charged afterwards
(:meth:`Admission.refused`). So a cheat gains at most one free call per prompt the server sent
and one per counted arrival, and each costs a lookup in memory: no lock, no store.

A call for a table another replica runs (forwarded there, :mod:`.forwarding`): this replica
holds no prompt state, so it counts the call as before while the token has budget here, and
past it an ``Act`` or ``GetTableState`` is not refused here but sent on to the owner, whose
flood control decides with the prompt in hand (the owner counts every forwarded call of the
token, so a flood sent through another replica is refused there). A call this replica refused
for a table nobody else runs (finished, unknown) is refused here.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass, field

from infra.interceptor import peer_address
from infra.rate_limit import RateLimiter
from services.gateway.domain.session import PLAYING
from services.gateway.domain.tokens import read_seat_token
from services.gateway.metrics import FLOOD_EXEMPT
from services.gateway.settings import GatewaySettings
from services.gateway.tables.live import LiveTable
from services.gateway.tables.registry import TableRegistry
from shared.errors import DomainError, ResourceExhausted, Unavailable

WHAT = "calls with this seat token"
# The calls that may be the server's own asking (an answer, a view on arrival): past the budget
# of a replica that does not run the table, they are sent on to the owner to decide.
MAY_BE_ASKED_FOR = frozenset({"Act", "GetTableState"})
_SEATS = (1, 2, 3, 4)  # common.v1.Seat SEAT_0 … SEAT_3 (0: unspecified)


@dataclass
class _Marks:
    """What a table's seats have used of their free calls: the prompt whose answer went free,
    and the seats whose arrival's GetTableState is still free."""

    answered: dict[int, int] = field(default_factory=dict)  # seat -> prompt sequence
    arrived: set[int] = field(default_factory=set)


@dataclass
class Admission:
    """A call admitted: ``deferred`` is the refusal of a call over this replica's budget for a
    table it does not run (the owner decides, :meth:`FloodControl.elsewhere_or_refuse`);
    ``free_key`` the budget a free call is charged to if it is refused all the same."""

    control: FloodControl | None = None
    free_key: str = ""
    deferred: ResourceExhausted | None = None

    def refused(self, exc: BaseException) -> None:
        """A free call was refused (not an outage, not NOT_OWNER): count it after all."""
        counted = isinstance(exc, DomainError) and not isinstance(exc, Unavailable)
        if counted and self.free_key and self.control is not None:
            self.control.limiter.wait_for(self.free_key)


ADMITTED = Admission()


class FloodControl:
    """The seat tokens' budgets of one replica, and the free calls of the tables it runs
    (``registry``)."""

    def __init__(self, settings: GatewaySettings, registry: TableRegistry) -> None:
        self.secret = settings.secret
        self.registry = registry
        self.limiter = RateLimiter(settings.seat_calls_per_second, settings.seat_call_burst)
        self._marks: weakref.WeakKeyDictionary[LiveTable, _Marks] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def admit(self, method: str, request, context) -> Admission:
        """Admit ``method``'s ``request`` or raise RESOURCE_EXHAUSTED ``RATE_LIMITED``.

        Each token counts on its own — a seat's, and each spectator's — so no caller can spend
        another's budget; a token whose signature does not verify for the table (forged,
        malformed, another table's) counts with every such token from its client address, so
        inventing tokens buys no budget either."""
        token = getattr(request, "seat_token", "")
        if not token or not self.limiter.enabled:
            return ADMITTED
        seat = None
        try:
            seat = read_seat_token(self.secret, token, request.table_id).seat
            key = token
        except DomainError:
            key = f"unverified@{peer_address(context.peer())[0]}"
        table = self.registry.get(request.table_id) if seat is not None else None
        if table is not None and table.owned:
            assert seat is not None
            if self._free(method, request, table, seat):
                return Admission(self, key)
        elif seat is not None and method in MAY_BE_ASKED_FOR:
            delay = self.limiter.wait_for(key)
            if delay > 0:  # the owner decides (it holds the prompt): refused only if none
                FLOOD_EXEMPT.labels("sent_on").inc()
                return Admission(self, deferred=self.limiter.refusal(delay, WHAT))
            return ADMITTED
        self.limiter.take(key, WHAT)
        if table is not None and table.owned and method == "Subscribe":
            assert seat is not None
            self.arrived(table, seat)
        return ADMITTED

    def _free(self, method: str, request, table: LiveTable, seat: int) -> bool:
        """Whether this call is one the server asked for and its free pass is unused (then
        used)."""
        claim = getattr(request, "seat", 0)
        if claim and (claim not in _SEATS or _SEATS.index(claim) != seat):
            return False  # another seat than the token's: refused, and counted
        if method == "GetTableState":
            with self._lock:
                marks = self._marks.get(table)
                if marks is None or seat not in marks.arrived:
                    return False
                marks.arrived.discard(seat)
            FLOOD_EXEMPT.labels("arrival").inc()
            return True
        if method != "Act" or request.action.WhichOneof("kind") in (None, "resume"):
            return False
        session = table.session
        hand = session.hand if session is not None and session.phase == PLAYING else None
        p = hand.pending.get(seat) if hand is not None else None
        if p is None or not p.sequence <= request.last_sequence <= table.head:
            return False  # nothing asked of this seat, or not seen yet, or an older prompt
        with self._lock:
            marks = self._marks.setdefault(table, _Marks())
            if marks.answered.get(seat) == p.sequence:
                return False  # this prompt's free answer is spent
            marks.answered[seat] = p.sequence
        FLOOD_EXEMPT.labels("answer").inc()
        return True

    def arrived(self, table: LiveTable, seat: int) -> None:
        """The seat joined or opened a stream at ``table``: its next GetTableState is free."""
        with self._lock:
            self._marks.setdefault(table, _Marks()).arrived.add(seat)

    def joined(self, table_id: str, seat: int | None) -> None:
        """A JoinSeat answered here gave ``seat`` at ``table_id`` (None: a spectator)."""
        table = self.registry.get(table_id)
        if seat is not None and table is not None and table.owned and self.limiter.enabled:
            self.arrived(table, seat)
