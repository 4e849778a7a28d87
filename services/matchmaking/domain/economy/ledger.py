"""The ledger (账本): silver and items move only as transactions, and every balance is the sum of
its entries (RULES-items §1).

* An asset is ``silver`` (银子) or an item: ``room_card`` (房卡), ``double_card`` (加倍卡),
  ``match_card`` (比赛卡). A **transaction** is a reference (its idempotency key) and legs
  (:class:`Leg`: account, asset, amount, kind, note) that sum to zero per asset;
  :func:`transact` writes it once, as a whole, in one store transaction over the locked balance
  rows. The same reference with the same legs is a repeat (nothing written); with other legs it
  is refused (REF_REUSED). Nothing is edited in place.
* No account but the house (``house``) goes below zero, of any asset: the ledger refuses such a
  transaction as a whole (FAILED_PRECONDITION INSUFFICIENT_FUNDS naming the account, asset,
  balance and amount), and the SQL tables carry the same CHECK. A balance past 64 bits is
  refused (BALANCE_OVERFLOW). Escrow and hold accounts (``escrow/<tournament>``,
  ``hold/<table>/<hand>``) are accounts like any player's. Bots have no wallets: no leg may name
  a bot (``bot-…``); a bot seat's side of a hand is the house's (kind ``bot_side``).
* Every settled hand the gateway reports is one transaction keyed by its hand id, with its hand
  row (table, tag, the report as received): a repeated report (the gateway's outbox retries)
  writes nothing; the same hand id with other results is refused (HAND_ID_REUSED). A hand is
  never refused for a player's silver: a loser who cannot pay pays what they hold and the
  winners' gains shrink by as much (logged and counted) — a seat covers a hand at its start,
  so this is the net under silver spent during a hand, never a lost hand nor minted silver.
* The room service fee (房间服务费 / 台费, RULES.md §9a) a hand charges is booked in the hand's
  transaction as legs of their own kind (``room_fee``): each human seat's fee out of its wallet,
  their total into the house's; never folded into the seat's payment. A hand's transaction is
  thus "payments + fees + house = 0": the seats' payments, the seats' fees (negative) and the
  house's side (its escape share, the fees and the bot seats' side) sum to zero.
* The books are real tables on the SQL stores (:mod:`.books`, its repository, with one file per
  backend outside the domain);
  :func:`reconcile` checks that the balances are the entries' sums and every transaction sums
  to zero per asset.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import structlog

from services.matchmaking.domain import records
from services.matchmaking.domain.economy.books import (
    HOUSE,
    MAX_BALANCE,
    HandRow,
    TxRow,
    books_of,
)
from services.matchmaking.domain.integrity.facts import HandFacts, validate_facts
from services.matchmaking.domain.ports import Metrics, Records
from services.matchmaking.domain.tables.tags import tag_group
from shared.errors import FailedPrecondition, InvalidArgument

NO_FACTS = HandFacts()
__all__ = ["HOUSE", "MAX_BALANCE", "Entry", "HandReport", "Leg"]
log = structlog.get_logger("mahjong.matchmaking.ledger")

# Assets (RULES-items §1).
SILVER = "silver"
ROOM_CARD = "room_card"
DOUBLE_CARD = "double_card"
MATCH_CARD = "match_card"
ITEMS = (ROOM_CARD, DOUBLE_CARD, MATCH_CARD)
ASSETS = (SILVER, *ITEMS)

# Entry kinds.
GRANT = "grant"  # the welcome grant
HAND = "hand"
ESCAPE_PENALTY = "escape_penalty"
HOUSE_SHARE = "house_share"
PURCHASE = "purchase"
OPERATOR_GRANT = "operator_grant"
ENTRY_FEE = "entry_fee"
REFUND = "refund"
PRIZE = "prize"
ROOM_CARD_SPENT = "room_card"
DOUBLE_CARD_HELD = "double_card"
BOT_SIDE = "bot_side"
ROOM_FEE = "room_fee"  # 台费: a human seat's room service fee for a hand, and the house's take
KINDS = frozenset(
    {
        GRANT,
        HAND,
        ESCAPE_PENALTY,
        HOUSE_SHARE,
        PURCHASE,
        OPERATOR_GRANT,
        ENTRY_FEE,
        REFUND,
        PRIZE,
        ROOM_CARD_SPENT,
        DOUBLE_CARD_HELD,
        BOT_SIDE,
        ROOM_FEE,
    }
)
# The largest amount one leg moves (2^53 - 1, exact in every JSON reader): far above any
# settlement (scoring caps stakes at 10^12), and many legs still fit a 64-bit balance.
MAX_AMOUNT = 2**53 - 1
MAX_REF = 200
MAX_NOTE = 500
BOT_PREFIX = "bot-"


def is_bot(account: str) -> bool:
    """Whether an id is a bot's (quick-match, room and tournament bots all start ``bot-``)."""
    return account.startswith(BOT_PREFIX)


@dataclass(frozen=True, slots=True)
class Leg:
    """One movement of a transaction: ``amount`` of ``asset`` into (+) or out of (-)
    ``account``."""

    account: str
    asset: str
    amount: int
    kind: str
    note: str = ""


@dataclass(frozen=True, slots=True)
class Entry:
    """A leg as written: with its transaction's reference, tag and time, and its number."""

    account: str
    ref: str  # the transaction's reference: a hand id, "welcome/<identity>", ...
    kind: str
    amount: int
    tag: str
    at: float
    asset: str = SILVER
    note: str = ""
    seq: int = 0


@dataclass(frozen=True, slots=True)
class HandReport:
    """A settled hand as the gateway reports it (RecordHand)."""

    hand_id: str
    table_id: str
    tag: str
    player_ids: tuple[str, ...]  # by seat, bots too
    payments: tuple[int, ...]  # chips by seat, + = received
    house: int = 0  # chips to the house (escape share)
    escaped_seat: int | None = None
    hand_number: int = 0  # the hand's number at its table: the key of its held 加倍卡
    doubled_seats: tuple[int, ...] = ()  # seats that played a 加倍卡 (their holds are consumed)
    # The room service fee (台费) each seat paid the house for the hand, by seat (>= 0; 0 at a
    # bot's seat); empty = none. Not part of ``payments``: payments + house = 0 as before.
    fees: tuple[int, ...] = ()
    # How the seats treated each other (wins off discards, claims, passed wins): the collusion
    # signals' input (:mod:`..integrity.facts`); empty for a gateway that reports none.
    facts: HandFacts = NO_FACTS


# --- transactions ----------------------------------------------------------------------------
def validate_legs(ref: str, legs: Sequence[Leg], tag: str = "") -> None:
    """InvalidArgument naming what is wrong: an empty or long reference, no legs, an unknown
    asset or kind, an empty account or a bot's, an amount past :data:`MAX_AMOUNT`, an asset
    whose legs do not sum to zero."""
    if not ref or len(ref) > MAX_REF:
        raise InvalidArgument(f"a transaction reference needs 1-{MAX_REF} characters", field="ref")
    if len(tag) > MAX_REF:
        raise InvalidArgument(f"tag has {len(tag)} characters; at most {MAX_REF}", field="tag")
    if not legs:
        raise InvalidArgument(f"transaction {ref} has no legs", field="legs")
    sums: dict[str, int] = {}
    for leg in legs:
        if leg.asset not in ASSETS:
            raise InvalidArgument(
                f"unknown asset {leg.asset!r}; assets are {', '.join(ASSETS)}", field="asset"
            )
        if leg.kind not in KINDS:
            raise InvalidArgument(f"unknown entry kind {leg.kind!r}", field="kind")
        if not leg.account or len(leg.account) > MAX_REF:
            raise InvalidArgument(f"an account needs 1-{MAX_REF} characters", field="account")
        if is_bot(leg.account):
            raise InvalidArgument(
                f"{leg.account} is a bot: bots have no wallets (the house takes their side)",
                reason="BOT_ACCOUNT",
                field="account",
            )
        if not isinstance(leg.amount, int) or abs(leg.amount) > MAX_AMOUNT:
            raise InvalidArgument(
                f"amount {leg.amount} of {leg.account} is past {MAX_AMOUNT}",
                reason="AMOUNT_TOO_LARGE",
                field="amount",
            )
        if len(leg.note) > MAX_NOTE:
            raise InvalidArgument(f"a note has more than {MAX_NOTE} characters", field="note")
        sums[leg.asset] = sums.get(leg.asset, 0) + leg.amount
    for asset, total in sums.items():
        if total:
            raise InvalidArgument(
                f"transaction {ref}: its {asset} legs sum to {total}, not 0",
                reason="UNBALANCED",
                field="legs",
            )


def _digest(legs: Sequence[Leg], tag: str) -> str:
    return records.dump({"tag": tag, "legs": [asdict(leg) for leg in legs]}).decode()


def _entries(ref: str, legs: Sequence[Leg], tag: str, at: float) -> list[Entry]:
    return [
        Entry(leg.account, ref, leg.kind, leg.amount, tag, at, leg.asset, leg.note, seq)
        for seq, leg in enumerate(legs)
    ]


def transact(store: Records, ref: str, legs: Sequence[Leg], now: float, tag: str = "") -> bool:
    """Write a transaction once: True when new, False for a repeat of ``ref`` with the same legs
    (nothing written). FailedPrecondition REF_REUSED for ``ref`` with other legs,
    INSUFFICIENT_FUNDS / BALANCE_OVERFLOW (nothing written); InvalidArgument for malformed legs
    (:func:`validate_legs`)."""
    legs = tuple(legs)
    validate_legs(ref, legs, tag)
    digest = _digest(legs, tag)
    stored = books_of(store).transact(
        TxRow(ref, tag, digest, now), _entries(ref, legs, tag, now), None
    )
    if stored is None:
        return True
    if stored != digest:
        raise FailedPrecondition(
            f"transaction {ref} was already written with other legs",
            reason="REF_REUSED",
            ref=ref,
        )
    return False


def welcome_grant(
    store: Records, player_id: str, identity_key: str, silver: int, room_cards: int, now: float
) -> bool:
    """The welcome grant (RULES-items §4: ``starting_silver``, ``free_room_cards``) from the
    house, once per identity: idempotent by ``identity_key`` (e.g. "issuer|subject"), whatever
    replica asks and whichever player id it names the second time (the first one's grant stands:
    True only when this call made it)."""
    if not identity_key:
        raise InvalidArgument("the identity key of a welcome grant is empty", field="identity")
    legs = [Leg(player_id, SILVER, silver, GRANT), Leg(HOUSE, SILVER, -silver, GRANT)]
    if room_cards:
        legs += [Leg(player_id, ROOM_CARD, room_cards, GRANT)]
        legs += [Leg(HOUSE, ROOM_CARD, -room_cards, GRANT)]
    ref = f"welcome/{identity_key}"
    try:
        return transact(store, ref, legs, now)
    except FailedPrecondition as exc:
        if exc.reason == "REF_REUSED":  # granted before (to this or another player id)
            return False
        raise


def grant(store: Records, account: str, ref: str, amount: int, now: float, kind: str = GRANT):
    """A one-off silver grant from the house to ``account``; idempotent by (``ref``, account)."""
    legs = [Leg(account, SILVER, amount, kind), Leg(HOUSE, SILVER, -amount, kind)]
    return transact(store, f"{kind}/{ref}/{account}", legs, now)


# --- hands -----------------------------------------------------------------------------------
def validate_report(report: HandReport) -> None:
    """InvalidArgument naming the first malformed field; payments + house must sum to zero."""
    if not report.hand_id:
        raise InvalidArgument("hand_id is empty", field="hand_id")
    if len(report.hand_id) > MAX_REF:
        raise InvalidArgument(f"hand_id has more than {MAX_REF} characters", field="hand_id")
    if not report.table_id:
        raise InvalidArgument("table_id is empty", field="table_id")
    if len(report.player_ids) != 4:
        raise InvalidArgument(
            f"player_ids has {len(report.player_ids)} entries; a table has 4 seats",
            field="player_ids",
        )
    if any(not p for p in report.player_ids):
        raise InvalidArgument("a player id is empty", field="player_ids")
    if len(set(report.player_ids)) != 4:
        raise InvalidArgument("player_ids repeat a player", field="player_ids")
    if HOUSE in report.player_ids:
        raise InvalidArgument(f"{HOUSE!r} is not a player", field="player_ids")
    if len(report.payments) != 4:
        raise InvalidArgument(
            f"payments has {len(report.payments)} entries; one per seat (4)", field="payments"
        )
    if report.house < 0:
        raise InvalidArgument(f"house {report.house} is negative", field="house")
    if report.house > MAX_AMOUNT:
        raise InvalidArgument(f"house {report.house} exceeds {MAX_AMOUNT}", field="house")
    if any(abs(p) > MAX_AMOUNT for p in report.payments):
        raise InvalidArgument(
            f"payments {list(report.payments)} exceed {MAX_AMOUNT} chips", field="payments"
        )
    total = sum(report.payments) + report.house
    if total != 0:
        raise InvalidArgument(
            f"payments {list(report.payments)} plus house {report.house} sum to {total}, not 0",
            field="payments",
        )
    if report.escaped_seat is not None and not 0 <= report.escaped_seat <= 3:
        raise InvalidArgument(f"escaped seat {report.escaped_seat} out of range 0-3")
    if report.hand_number < 0:
        raise InvalidArgument(f"hand_number {report.hand_number} is negative", field="hand_number")
    doubled = report.doubled_seats
    if any(not 0 <= s <= 3 for s in doubled) or len(set(doubled)) != len(doubled):
        raise InvalidArgument(
            f"doubled_seats {list(doubled)} must be distinct seats 0-3", field="doubled_seats"
        )
    validate_fees(report)
    validate_facts(report.facts)


def validate_fees(report: HandReport) -> None:
    """InvalidArgument for fees that are not one non-negative amount per seat, or that charge a
    bot's seat (bots have no wallets: a bot seat pays no fee)."""
    fees = report.fees
    if not fees:
        return
    if len(fees) != 4:
        raise InvalidArgument(f"fees has {len(fees)} entries; one per seat (4)", field="fees")
    if any(not isinstance(f, int) or f < 0 or f > MAX_AMOUNT for f in fees):
        raise InvalidArgument(
            f"fees {list(fees)} must each be 0-{MAX_AMOUNT} (a seat pays the house)",
            reason="FEE_NEGATIVE" if any(f < 0 for f in fees) else "AMOUNT_TOO_LARGE",
            field="fees",
        )
    for seat, (pid, fee) in enumerate(zip(report.player_ids, fees, strict=True)):
        if fee and is_bot(pid):
            raise InvalidArgument(
                f"fees charge seat {seat}, a bot ({pid}): bots pay no room service fee",
                reason="FEE_ON_BOT",
                field="fees",
            )


def hand_legs(report: HandReport) -> list[Leg]:
    """The legs of one settled hand: one per seat (a bot seat's on the house, kind
    ``bot_side``, its note naming the seat and the bot), the house's share, and each human
    seat's room service fee (kind ``room_fee``) with the house's side of it."""
    out = []
    for seat, (pid, amount) in enumerate(zip(report.player_ids, report.payments, strict=True)):
        if is_bot(pid):
            out.append(Leg(HOUSE, SILVER, amount, BOT_SIDE, f"seat {seat} {pid}"))
        else:
            kind = ESCAPE_PENALTY if seat == report.escaped_seat else HAND
            out.append(Leg(pid, SILVER, amount, kind))
    if report.house:
        out.append(Leg(HOUSE, SILVER, report.house, HOUSE_SHARE))
    for seat, (pid, fee) in enumerate(zip(report.player_ids, report.fees, strict=False)):
        if fee:
            out.append(Leg(pid, SILVER, -fee, ROOM_FEE, f"台费 seat {seat}"))
            out.append(Leg(HOUSE, SILVER, fee, ROOM_FEE, f"台费 seat {seat} {pid}"))
    return out


SHORTFALL_ATTEMPTS = 4  # balances re-read and the hand retried this often before refusing


def _cut_to_what_losers_hold(
    store: Records, report: HandReport, legs: list[Leg]
) -> tuple[list[Leg], int]:
    """The hand's legs with each player's silver loss cut to what the player holds, and the
    winners' gains cut by the same total, in proportion (whole chips, the remainder from the
    largest gain): a player who cannot pay pays what they have (破产), a settled hand is never
    lost, nobody goes below zero and nothing is minted. A seat covers a hand at its start
    (RULES-items §4), so this is the net under silver that left a seat during a hand. A player's
    legs are paid in order: the hand's payment, then the room service fee (the other players
    before the house). With the silver the winners' gains were cut by."""
    out = list(legs)
    short = 0
    left: dict[str, int] = {}  # what each loser still holds after its earlier legs
    for i, leg in enumerate(out):
        if leg.asset != SILVER or leg.amount >= 0 or leg.account == HOUSE:
            continue
        if leg.account not in left:
            left[leg.account] = max(balance(store, leg.account), 0)
        held = left[leg.account]
        left[leg.account] = max(held + leg.amount, 0)
        if held < -leg.amount:
            cut = -leg.amount - held
            note = f"paid {held} of {-leg.amount}: silver ran short (破产)"
            out[i] = Leg(leg.account, SILVER, -held, leg.kind, note)
            log.warning("hand_shortfall", hand=report.hand_id, account=leg.account, short=cut)
            house = out[i + 1] if leg.kind == ROOM_FEE and i + 1 < len(out) else None
            if house is not None and house.account == HOUSE and house.kind == ROOM_FEE:
                out[i + 1] = Leg(HOUSE, SILVER, held, ROOM_FEE, f"{house.note}: {note}")
                continue  # a fee paid short is the house's loss alone
            short += cut
    gains = [
        (i, leg)
        for i, leg in enumerate(out)
        if leg.asset == SILVER and leg.amount > 0 and leg.kind != ROOM_FEE
    ]
    total = sum(leg.amount for _, leg in gains)
    if not short or not total:
        return out, 0  # nothing cut
    cuts = {i: leg.amount * short // total for i, leg in gains}
    rest = short - sum(cuts.values())
    for i, _ in sorted(gains, key=lambda g: -g[1].amount)[:rest]:
        cuts[i] += 1
    for i, leg in gains:
        note = f"gain cut by {cuts[i]}: a loser's silver ran short (破产)"
        out[i] = Leg(leg.account, SILVER, leg.amount - cuts[i], leg.kind, note)
    return out, short


def entries_for(report: HandReport, at: float) -> list[Entry]:
    """The ledger entries of one settled hand."""
    return _entries(report.hand_id, hand_legs(report), report.tag, at)


def _report_dict(report: HandReport) -> dict:
    d = asdict(report)
    d["player_ids"], d["payments"] = list(report.player_ids), list(report.payments)
    # a hand without 加倍卡 keeps the body it had before those fields (a repeat still matches)
    if not report.doubled_seats:
        del d["doubled_seats"]
    else:
        d["doubled_seats"] = list(report.doubled_seats)
    if not report.hand_number:
        del d["hand_number"]
    if not any(report.fees):  # a hand without a fee keeps the body it had before the fee
        del d["fees"]
    else:
        d["fees"] = list(report.fees)
    # a hand without facts (an older gateway's) keeps its body too
    if report.facts.empty:
        del d["facts"]
    else:
        d["facts"] = report.facts.to_dict()
    return d


def _report_of(body: str) -> HandReport:
    data = records.load(body.encode())
    data.pop("recorded_at", None)
    data["player_ids"], data["payments"] = tuple(data["player_ids"]), tuple(data["payments"])
    data["doubled_seats"] = tuple(data.get("doubled_seats", ()))
    data["fees"] = tuple(data.get("fees", ()))
    data["facts"] = HandFacts.from_dict(data.get("facts"))
    return HandReport(**data)


def record_hand(
    store: Records,
    report: HandReport,
    now: float,
    extra_legs: Sequence[Leg] = (),
    metrics: Metrics | None = None,
) -> bool:
    """Record a settled hand once. True when new, False for a repeat (which changes nothing).
    ``extra_legs`` are written in the hand's transaction (the 加倍卡 holds it consumes).

    A repeat of a hand id with different content is FailedPrecondition HAND_ID_REUSED; a hand
    that would take a player below zero is applied cut to what the losers hold
    (:func:`_cut_to_what_losers_hold`).
    """
    validate_report(report)
    body = records.dump(_report_dict(report)).decode()
    row = HandRow(report.hand_id, report.table_id, report.tag, tag_group(report.tag), body, now)
    legs = [*hand_legs(report), *extra_legs]
    validate_legs(report.hand_id, legs, report.tag)
    tx = TxRow(report.hand_id, report.tag, body, now)
    for attempt in range(SHORTFALL_ATTEMPTS + 1):
        try:
            stored = books_of(store).transact(
                tx, _entries(report.hand_id, legs, report.tag, now), row
            )
            break
        except FailedPrecondition as exc:
            if exc.reason != "INSUFFICIENT_FUNDS" or attempt == SHORTFALL_ATTEMPTS:
                raise
            legs, short = _cut_to_what_losers_hold(store, report, legs)
            if short and metrics is not None:
                metrics.silver_short(short)
    if stored is None:
        return True
    if stored != body:
        raise FailedPrecondition(
            f"hand {report.hand_id} was already recorded with other results",
            reason="HAND_ID_REUSED",
            hand_id=report.hand_id,
        )
    return False


# --- reading ---------------------------------------------------------------------------------
def entries(store: Records, account: str) -> list[Entry]:
    """An account's entries, oldest first."""
    return books_of(store).entries(account)


def check_asset(asset: str) -> None:
    if asset not in ASSETS:
        raise InvalidArgument(f"unknown asset {asset!r}", field="asset")


def balance(store: Records, account: str, asset: str = SILVER) -> int:
    """The account's balance of ``asset``: the sum of its entries, kept beside them."""
    check_asset(asset)
    return books_of(store).balance(account, asset)


def balances(store: Records, account: str) -> dict[str, int]:
    """The account's balance of every asset (0 for those it never held), in :data:`ASSETS`
    order."""
    held = books_of(store).balances(account)
    return {asset: held.get(asset, 0) for asset in ASSETS}


def has_account(store: Records, account: str) -> bool:
    """Whether the ledger ever wrote an entry to ``account``."""
    return books_of(store).has_account(account)


def has_hand(store: Records, hand_id: str) -> bool:
    return books_of(store).has_hand(hand_id)


def hands_of_table(store: Records, table_id: str) -> int:
    """How many settled hands of a table are recorded."""
    return books_of(store).hands_of_table(table_id)


def hand_reports(store: Records, group: str, tag_prefix: str = "") -> list[HandReport]:
    """Every recorded hand whose tag is in ``group`` (e.g. "tournament/T") and starts with
    ``tag_prefix`` (e.g. one round's "tournament/T/round/2/table/"), by hand id."""
    return [_report_of(row.report) for row in books_of(store).hand_rows(group, tag_prefix)]


def hands_between(store: Records, start: float, end: float) -> list[HandReport]:
    """The hands recorded in [start, end), in time order."""
    return [_report_of(row.report) for row in books_of(store).hands_between(start, end)]


def account_net(
    store: Records,
    account: str,
    start: float,
    end: float,
    asset: str = SILVER,
    kind: str | None = None,
) -> int:
    """What ``account``'s entries of ``asset`` (of one ``kind``, or all) written in [start, end)
    add up to."""
    return books_of(store).account_net(account, asset, start, end, kind)


def chips_by_player(store: Records, group: str, tag_prefix: str = "") -> dict[str, int]:
    """Net chips per player (bots included, by their seats) over the hands of a tag group
    (those whose tag starts with ``tag_prefix``)."""
    totals: dict[str, int] = {}
    for report in hand_reports(store, group, tag_prefix):
        for pid, amount in zip(report.player_ids, report.payments, strict=True):
            totals[pid] = totals.get(pid, 0) + amount
    return totals


def totals(store: Records, accounts: Sequence[str]) -> int:
    return sum(balance(store, a) for a in accounts)


def reconcile(store: Records) -> list[str]:
    """Every discrepancy in the books (a balance that is not its entries' sum, a transaction
    that does not sum to zero per asset, a hand without entries); empty when they agree."""
    return books_of(store).reconcile()
