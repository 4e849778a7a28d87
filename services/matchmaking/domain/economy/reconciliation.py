"""The reconciliation report (对账, RULES-items §4): the house's net per day, each player's net
against the house's bot seats that day, the alert when that passes ``house.bot_net_alert``
(10,000 silver), and whatever the books' check finds.

Bots have no wallets, so what a player wins from a bot is the house's loss. A hand report gives
net chips per seat, not who paid whom; a player's part of the bot seats' total is attributed
thus (:func:`from_bots`): when the humans together won ``H`` from the bots, ``H`` is shared among
the humans who won, in proportion to their winnings; when they lost, among those who lost, in
proportion to their losses; whole chips, the remainder to the first such seat. A farmer pumping
chips through bots (one human with three bots) gets exactly the bots' total.

Conservation (RULES.md §9a): over the day's hands, payments + fees + house = 0 — the seats'
payments, the room service fees (台费) the human seats paid (negative on their side) and the
house's take (escape shares and the fees) — exactly, in whole chips; a hand whose report breaks
it (or charges a fee to a bot's seat, or a negative one) is listed as a discrepancy.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import structlog

from services.matchmaking.domain.economy import ledger
from services.matchmaking.domain.economy.ledger import HOUSE, HandReport
from services.matchmaking.domain.ports import Metrics, Records
from shared.errors import InvalidArgument

MAX_LISTED = 100
log = structlog.get_logger("mahjong.matchmaking")


@dataclass(frozen=True, slots=True)
class HouseNet:
    player_id: str
    silver: int  # the player's net against the bot seats that day (+ = won from the house)
    alert: bool


@dataclass(frozen=True, slots=True)
class Reconciliation:
    day: str  # YYYY-MM-DD, UTC
    house_net: int  # every silver entry of the house that day
    players: tuple[HouseNet, ...]  # by |net|, largest first (at most 100)
    discrepancies: tuple[str, ...]
    hand_payments: int = 0  # the day's seats' payments (sum; + = received)
    room_fees: int = 0  # the day's room service fees, paid by human seats to the house
    house_take: int = 0  # the day's escape shares + room fees
    room_fees_booked: int = 0  # the house's room_fee entries that day (≤ room_fees: short fees)


def conservation(report: HandReport) -> str:
    """What is wrong with one hand's sums (payments + fees + house = 0, fees ≥ 0 and none on a
    bot's seat), or "" when it holds."""
    fees = list(report.fees) or [0] * len(report.payments)
    if any(f < 0 for f in fees):
        return f"hand {report.hand_id}: a negative room service fee {fees}"
    if any(f and ledger.is_bot(p) for p, f in zip(report.player_ids, fees, strict=False)):
        return f"hand {report.hand_id}: a room service fee charged to a bot's seat {fees}"
    seats = sum(report.payments) - sum(fees)  # what left (-) or reached (+) the seats
    house_side = report.house + sum(fees)  # the house's take: escape share and fees
    if seats + house_side:
        return (
            f"hand {report.hand_id}: payments {list(report.payments)} + fees {fees} + house "
            f"{report.house} do not sum to 0"
        )
    return ""


def day_bounds(day: str, now: float) -> tuple[str, float, float]:
    """The day (empty = today, UTC) and its [start, end) in Unix seconds; InvalidArgument for
    anything but YYYY-MM-DD."""
    if not day:
        day = dt.datetime.fromtimestamp(now, dt.UTC).date().isoformat()
    try:
        date = dt.date.fromisoformat(day)
    except ValueError:
        raise InvalidArgument(f"day {day!r} is not YYYY-MM-DD", field="day") from None
    if len(day) != 10:
        raise InvalidArgument(f"day {day!r} is not YYYY-MM-DD", field="day")
    start = dt.datetime.combine(date, dt.time(), dt.UTC).timestamp()
    return date.isoformat(), start, start + 86_400


def from_bots(report: HandReport) -> dict[str, int]:
    """Each human's part of what the bot seats of one hand paid (+) or took (-)."""
    seats = list(zip(report.player_ids, report.payments, strict=True))
    humans = [(p, x) for p, x in seats if not ledger.is_bot(p)]
    total = -sum(x for p, x in seats if ledger.is_bot(p))  # what the bots paid out
    sign = 1 if total > 0 else -1
    takers = [(p, x * sign) for p, x in humans if x * sign > 0]
    weight = sum(x for _, x in takers)
    if total == 0 or not takers:
        return {}
    parts = {p: abs(total) * x // weight for p, x in takers}
    parts[takers[0][0]] += abs(total) - sum(parts.values())
    return {p: sign * v for p, v in parts.items()}


def report_for(store: Records, day: str, now: float, alert_at: int) -> Reconciliation:
    """The day's report: the house's net, each player's net from bots (alerts past
    ``alert_at``), the books' discrepancies (:func:`ledger.reconcile`)."""
    day, start, end = day_bounds(day, now)
    nets: dict[str, int] = {}
    payments = fees = house = 0
    wrong: list[str] = []
    for report in ledger.hands_between(store, start, end):
        for pid, part in from_bots(report).items():
            nets[pid] = nets.get(pid, 0) + part
        payments += sum(report.payments)
        fees += sum(report.fees)
        house += report.house
        if problem := conservation(report):
            wrong.append(problem)
    booked = ledger.account_net(store, HOUSE, start, end, kind=ledger.ROOM_FEE)
    if booked > fees or booked < 0:  # short fees (破产) book less; never more than charged
        wrong.append(f"the house booked {booked} of room fees; the day's hands charged {fees}")
    ranked = sorted(nets.items(), key=lambda kv: (-abs(kv[1]), kv[0]))
    players = tuple(HouseNet(p, n, abs(n) > alert_at) for p, n in ranked[:MAX_LISTED] if n)
    return Reconciliation(
        day,
        ledger.account_net(store, HOUSE, start, end),
        players,
        (*ledger.reconcile(store), *wrong),
        payments,
        fees,
        house + fees,
        booked,
    )


def watch(store: Records, now: float, alert_at: int, metrics: Metrics) -> Reconciliation:
    """Today's report for the ticker: the gauges set, one warning line per player past the
    alert."""
    found = report_for(store, "", now, alert_at)
    alerts = [p for p in found.players if p.alert]
    bot_net_max = max((abs(p.silver) for p in found.players), default=0)
    metrics.books(found.house_net, bot_net_max, len(alerts))
    for p in alerts:
        log.warning(
            "bot_net_alert",
            player=p.player_id,
            day=found.day,
            net_from_bots=p.silver,
            alert_at=alert_at,
        )
    if found.discrepancies:
        log.error("ledger_discrepancies", day=found.day, found=list(found.discrepancies)[:10])
    return found
