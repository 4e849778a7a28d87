"""A tournament's purse in the ledger (RULES-items §3): entries held in escrow, refunds, the
start's spending and the prizes by final rank. Every movement is one ledger transaction with a
reference of its own, so a retry (a crash, another replica, a repeated finish) applies nothing
twice; no player balance goes below zero (the ledger refuses the transaction as a whole).

* The escrow account is ``escrow/tournament/<id>``.
* Entry (JoinTournament, AcceptInvite): ``entry_silver`` and ``entry_match_cards`` move from
  the player to escrow (kind ``entry_fee``), reference ``tournament/<id>/entry/<player>/<n>``
  kept on the entrant. Bots have no wallets and pay nothing.
* Refund (LeaveTournament before the start, CancelTournament): the entry back in full (kind
  ``refund``), reference ``<entry reference>/refund``; a cancelled or failed tournament's
  entries go back :data:`REFUND_BATCH` at a time (:func:`refund_batch`), its header counting
  how many are done, so a large roll never holds one call for long.
* Start: the match cards in escrow go to the house (kind ``entry_fee``); the silver stays as
  the prize pool.
* House prizes (AddTournamentPrize, operator only): house → escrow (kind ``prize``).
* Failure (the gateway refused a table: the tournament ends with ``failure``): every entry and
  house prize back (:func:`refund_failed`), no prizes.
* Finish: the pool shared by ``prize_percent`` (:func:`.consent.prize_split`) and
  each house prize paid from escrow to the player at its rank (kind ``prize``); a share of a
  bot's rank, or of a rank nobody holds, goes to the house, so the escrow ends empty. (A crash
  between an entry's transaction and the record of its entrant leaves that entry in escrow;
  ``reconcile`` and the escrow's entries show it.)
"""

from __future__ import annotations

from collections.abc import Sequence

from services.matchmaking.domain.economy import ledger
from services.matchmaking.domain.ports import Records
from services.matchmaking.domain.tournaments.consent import prize_split
from services.matchmaking.domain.tournaments.records import Entrant, HousePrize, Prize
from services.matchmaking.domain.tournaments.standings import Standing
from services.matchmaking.domain.tournaments.tournament import Tournament
from shared.errors import FailedPrecondition

SILVER, MATCH_CARD = ledger.SILVER, ledger.MATCH_CARD
REFUND_BATCH = 200  # entries refunded per call (a 10,000-entrant roll takes 50 ticks)


def escrow_account(tournament_id: str) -> str:
    return f"escrow/tournament/{tournament_id}"


def _entry_assets(t: Tournament) -> list[tuple[str, int]]:
    return [(a, n) for a, n in ((SILVER, t.entry_silver), (MATCH_CARD, t.entry_match_cards)) if n]


def has_entry(t: Tournament) -> bool:
    """Whether joining costs anything."""
    return bool(_entry_assets(t))


def pay_entry(store: Records, t: Tournament, player_id: str, ref: str, now: float) -> None:
    """Move the player's entry into escrow (FailedPrecondition ENTRY_NOT_COVERED when the
    player lacks it; nothing moves)."""
    escrow = escrow_account(t.tournament_id)
    legs = []
    for asset, amount in _entry_assets(t):
        legs += [
            ledger.Leg(player_id, asset, -amount, ledger.ENTRY_FEE, f"entry to {t.tournament_id}"),
            ledger.Leg(escrow, asset, amount, ledger.ENTRY_FEE, f"entry of {player_id}"),
        ]
    try:
        ledger.transact(store, ref, legs, now, _tag(t))
    except FailedPrecondition as exc:
        if exc.reason != "INSUFFICIENT_FUNDS":
            raise
        need = ", ".join(f"{n} {a}" for a, n in _entry_assets(t))
        raise FailedPrecondition(
            f"the entry to {t.tournament_id} is {need}; {player_id} {exc.message.split(';')[0]}",
            reason="ENTRY_NOT_COVERED",
            tournament_id=t.tournament_id,
        ) from None


def refund_entry(store: Records, t: Tournament, entrant: Entrant, now: float) -> bool:
    """Return an entrant's entry in full (once); False when it paid none or was refunded."""
    if not entrant.entry_ref:
        return False
    escrow = escrow_account(t.tournament_id)
    legs = []
    for asset, amount in _entry_assets(t):
        legs += [
            ledger.Leg(escrow, asset, -amount, ledger.REFUND, f"refund of {entrant.player_id}"),
            ledger.Leg(entrant.player_id, asset, amount, ledger.REFUND, t.tournament_id),
        ]
    return ledger.transact(store, f"{entrant.entry_ref}/refund", legs, now, _tag(t))


def refund_failed(store: Records, t: Tournament, entrant: Entrant, now: float) -> bool:
    """One entry of a tournament that ended after its start (``failure``: the gateway refused
    a table, or an operator ended it) back in full — the silver from escrow, the match cards
    from the house, which the start took (once: the refund's reference)."""
    if not entrant.entry_ref:
        return False
    escrow = escrow_account(t.tournament_id)
    legs = []
    for asset, amount in _entry_assets(t):
        source = ledger.HOUSE if asset == MATCH_CARD else escrow
        note = f"refund of {entrant.player_id}: {t.failure}"[:200]
        legs += [
            ledger.Leg(source, asset, -amount, ledger.REFUND, note),
            ledger.Leg(entrant.player_id, asset, amount, ledger.REFUND, t.tournament_id),
        ]
    return ledger.transact(store, f"{entrant.entry_ref}/refund", legs, now, _tag(t))


def refund_batch(store: Records, t: Tournament, now: float) -> int:
    """Refund the next :data:`REFUND_BATCH` paid entries of a cancelled or failed tournament
    (from ``t.purse_done`` on); returns how many are done in all. A failed one's match cards
    went to the house at the start, so they come back from there."""
    paid = paid_entrants(t)
    end = min(t.purse_done + REFUND_BATCH, len(paid))
    if t.failure:
        spend_at_start(store, t, now)  # done at the start already (once): the cards are the house's
    for entrant in paid[t.purse_done : end]:
        if t.failure:
            refund_failed(store, t, entrant, now)
        else:
            refund_entry(store, t, entrant, now)
    return end


def settled(t: Tournament) -> bool:
    """Whether a finished tournament's refunds are all done (prizes are one transaction)."""
    return not (t.failure or t.cancelled) or t.purse_done >= len(paid_entrants(t))


def paid_entrants(t: Tournament) -> list[Entrant]:
    return [e for e in t.entrants if e.entry_ref]


def spend_at_start(store: Records, t: Tournament, now: float) -> bool:
    """The match cards of every paid entry go to the house (once)."""
    cards = t.entry_match_cards * len(paid_entrants(t))
    if not cards:
        return False
    legs = [
        ledger.Leg(escrow_account(t.tournament_id), MATCH_CARD, -cards, ledger.ENTRY_FEE, "start"),
        ledger.Leg(ledger.HOUSE, MATCH_CARD, cards, ledger.ENTRY_FEE, t.tournament_id),
    ]
    return ledger.transact(store, f"tournament/{t.tournament_id}/start", legs, now, _tag(t))


def fund_house_prize(store: Records, t: Tournament, prize: HousePrize, reason: str, now: float):
    """The house funds an operator's prize into escrow (once per ``prize.ref``)."""
    note = f"rank {prize.rank}: {reason}"
    legs = [
        ledger.Leg(ledger.HOUSE, prize.asset, -prize.amount, ledger.PRIZE, note),
        ledger.Leg(escrow_account(t.tournament_id), prize.asset, prize.amount, ledger.PRIZE, note),
    ]
    return ledger.transact(store, prize.ref, legs, now, _tag(t))


def prizes_by_rank(t: Tournament, ranking: Sequence[Standing]) -> list[Prize]:
    """What each rank receives: its share of the silver pool and the house prizes of its rank
    (ranks beyond the ranking are not listed: their prizes return to the house)."""
    pool = t.entry_silver * len(paid_entrants(t))
    shares = prize_split(pool, t.prize_percent, len(ranking))
    out = []
    for s in ranking:
        assets: dict[str, int] = {}
        if s.rank <= len(shares) and shares[s.rank - 1]:
            assets[SILVER] = shares[s.rank - 1]
        for h in t.house_prizes:
            if h.rank == s.rank:
                assets[h.asset] = assets.get(h.asset, 0) + h.amount
        if assets:
            out.append(Prize(s.rank, s.player_id, tuple(sorted(assets.items()))))
    return out


def pay_prizes(
    store: Records, t: Tournament, ranking: Sequence[Standing], bots: set[str], now: float
) -> list[Prize]:
    """Pay every prize from escrow (a bot's to the house) and sweep what is left to the house,
    in one transaction (once: its reference is the tournament's)."""
    prizes = prizes_by_rank(t, ranking)
    escrow = escrow_account(t.tournament_id)
    left = held_in_escrow(t)  # from the record, so a retry computes the same legs
    legs = []
    for p in prizes:
        to = ledger.HOUSE if p.player_id in bots else p.player_id
        for asset, amount in p.assets:
            note = f"rank {p.rank} of {t.tournament_id}"
            legs += [
                ledger.Leg(escrow, asset, -amount, ledger.PRIZE, note),
                ledger.Leg(to, asset, amount, ledger.PRIZE, note),
            ]
            left[asset] = left.get(asset, 0) - amount
    for asset, amount in left.items():
        if amount > 0:  # the prizes of ranks nobody holds: to the house
            legs += [
                ledger.Leg(escrow, asset, -amount, ledger.PRIZE, "closing the escrow"),
                ledger.Leg(ledger.HOUSE, asset, amount, ledger.PRIZE, t.tournament_id),
            ]
    if legs:
        ledger.transact(store, f"tournament/{t.tournament_id}/prizes", legs, now, _tag(t))
    return prizes


def held_in_escrow(t: Tournament) -> dict[str, int]:
    """What the escrow holds after the start, by the record: the silver pool and the house
    prizes (the match cards went to the house at the start)."""
    out = {SILVER: t.entry_silver * len(paid_entrants(t))}
    for h in t.house_prizes:
        out[h.asset] = out.get(h.asset, 0) + h.amount
    return out


def return_house_prizes(store: Records, t: Tournament, now: float) -> bool:
    """A cancelled tournament's house prizes go back to the house (once)."""
    escrow = escrow_account(t.tournament_id)
    totals: dict[str, int] = {}
    for h in t.house_prizes:
        totals[h.asset] = totals.get(h.asset, 0) + h.amount
    legs = []
    for asset, amount in sorted(totals.items()):
        legs += [
            ledger.Leg(escrow, asset, -amount, ledger.REFUND, "cancelled"),
            ledger.Leg(ledger.HOUSE, asset, amount, ledger.REFUND, t.tournament_id),
        ]
    if not legs:
        return False
    return ledger.transact(store, f"tournament/{t.tournament_id}/cancel", legs, now, _tag(t))


def _tag(t: Tournament) -> str:
    return f"tournament/{t.tournament_id}"
