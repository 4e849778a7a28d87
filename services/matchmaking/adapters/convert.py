"""Conversion of ``mahjong.matchmaking.v1`` messages to and from the matchmaking domain.

Used by the matchmaking servicer, its CLI and its clients (the gateway's reports), so it lives
once here. Seats use the common convention (proto value = seat + 1).
"""

from __future__ import annotations

from collections.abc import Mapping

from mahjong.matchmaking.v1 import matchmaking_pb2 as pb

from infra.convert.common import seat_from_proto, seat_from_proto_optional, seat_to_proto
from services.matchmaking.domain.economy import ledger
from services.matchmaking.domain.integrity import scoring as integrity_scoring
from services.matchmaking.domain.integrity.facts import HandFacts
from services.matchmaking.domain.players.accounts import Player
from services.matchmaking.domain.queues import levels
from services.matchmaking.domain.queues import quick_match as queues
from services.matchmaking.domain.rooms import private as rooms
from services.matchmaking.domain.tournaments import listing
from services.matchmaking.domain.tournaments import purse as tournament_purse
from services.matchmaking.domain.tournaments import rounds as tournament_rounds
from services.matchmaking.domain.tournaments import standings as tournament_standings
from services.matchmaking.domain.tournaments import tournament as tournaments
from services.matchmaking.domain.tournaments.records import RoundProgress, RoundSummary, TableState
from shared.errors import InvalidArgument

_TICKET_STATES = {
    queues.WAITING: pb.TICKET_STATE_WAITING,
    queues.MATCHED: pb.TICKET_STATE_MATCHED,
    queues.ASSIGNED: pb.TICKET_STATE_ASSIGNED,
    queues.CANCELLED: pb.TICKET_STATE_CANCELLED,
}
_ROOM_STATES = {
    rooms.OPEN: pb.ROOM_STATE_OPEN,
    rooms.STARTING: pb.ROOM_STATE_STARTING,
    rooms.PLAYING: pb.ROOM_STATE_PLAYING,
    rooms.FINISHED: pb.ROOM_STATE_FINISHED,
    rooms.CLOSED: pb.ROOM_STATE_CLOSED,
}
_TOURNAMENT_STATES = {
    tournaments.REGISTERING: pb.TOURNAMENT_STATE_REGISTERING,
    tournaments.RUNNING: pb.TOURNAMENT_STATE_RUNNING,
    tournaments.FINISHED: pb.TOURNAMENT_STATE_FINISHED,
    tournaments.STALLED: pb.TOURNAMENT_STATE_STALLED,
}
_ENTRY_KINDS = {
    ledger.GRANT: pb.LEDGER_ENTRY_KIND_GRANT,
    ledger.HAND: pb.LEDGER_ENTRY_KIND_HAND,
    ledger.ESCAPE_PENALTY: pb.LEDGER_ENTRY_KIND_ESCAPE_PENALTY,
    ledger.HOUSE_SHARE: pb.LEDGER_ENTRY_KIND_HOUSE_SHARE,
    ledger.PURCHASE: pb.LEDGER_ENTRY_KIND_PURCHASE,
    ledger.OPERATOR_GRANT: pb.LEDGER_ENTRY_KIND_OPERATOR_GRANT,
    ledger.ENTRY_FEE: pb.LEDGER_ENTRY_KIND_ENTRY_FEE,
    ledger.REFUND: pb.LEDGER_ENTRY_KIND_REFUND,
    ledger.PRIZE: pb.LEDGER_ENTRY_KIND_PRIZE,
    ledger.ROOM_CARD_SPENT: pb.LEDGER_ENTRY_KIND_ROOM_CARD,
    ledger.DOUBLE_CARD_HELD: pb.LEDGER_ENTRY_KIND_DOUBLE_CARD,
    ledger.BOT_SIDE: pb.LEDGER_ENTRY_KIND_BOT_SIDE,
    ledger.ROOM_FEE: pb.LEDGER_ENTRY_KIND_ROOM_FEE,
}


def _ms(seconds: float | None) -> int:
    return 0 if seconds is None else round(seconds * 1000)


def level_to_proto(level: levels.Level, fee_units: int) -> pb.Level:
    """A level, with the room service fee its tables charge under ``fee_units``."""
    return pb.Level(
        rank=level.rank,
        name=level.name,
        english_name=level.english,
        min_silver=level.min_silver,
        base_chips=level.base_chips,
        fee_per_hand=levels.fee_for_stake(level.base_chips, fee_units),
        allowed_stakes=levels.allowed_stakes(level),
    )


def player_to_proto(
    player: Player,
    assets: Mapping[str, int] | None = None,
    fee_units: int = levels.FEE_STAKE_UNITS,
) -> pb.Player:
    """A player with the ledger's balances of every asset (none: a bot or guest, no wallet)."""
    held = assets or {}
    silver = held.get(ledger.SILVER, 0)
    return pb.Player(
        player_id=player.player_id,
        display_name=player.display_name,
        bot=player.bot,
        silver=silver,
        level=level_to_proto(levels.level_for(silver), fee_units),
        room_cards=held.get(ledger.ROOM_CARD, 0),
        double_cards=held.get(ledger.DOUBLE_CARD, 0),
        match_cards=held.get(ledger.MATCH_CARD, 0),
        guest=player.guest,
    )


def session_to_proto(issued) -> pb.Session:
    """A sign-in's or refresh's session
    (:class:`~services.matchmaking.domain.players.sessions.Issued`)."""
    return pb.Session(
        session_token=issued.session_token,
        expires_at_unix_ms=issued.expires_ms,
        refresh_token=issued.refresh_token,
        refresh_expires_at_unix_ms=issued.refresh_expires_ms,
        session_id=issued.session_id,
        operator=issued.operator,
    )


def entry_to_proto(entry: ledger.Entry, table_id: str = "") -> pb.LedgerEntry:
    return pb.LedgerEntry(
        ref=entry.ref,
        kind=_ENTRY_KINDS.get(entry.kind, pb.LEDGER_ENTRY_KIND_UNSPECIFIED),
        amount=entry.amount,
        tag=entry.tag,
        recorded_at_unix_ms=_ms(entry.at),
        asset=_ASSETS.get(entry.asset, pb.ASSET_UNSPECIFIED),
        note=entry.note,
        table_id=table_id,
    )


def assignment_to_proto(a: queues.Assignment | None) -> pb.Assignment | None:
    if a is None:
        return None
    return pb.Assignment(
        gateway_address=a.gateway_address,
        table_id=a.table_id,
        seat=seat_to_proto(a.seat),
        seat_token=a.seat_token,
    )


def ticket_to_proto(t: queues.Ticket, waiting: int = 0) -> pb.Ticket:
    return pb.Ticket(
        ticket_id=t.ticket_id,
        ruleset=t.ruleset,
        stake=t.stake,
        state=_TICKET_STATES[t.state],
        assignment=assignment_to_proto(t.assignment),
        created_at_unix_ms=_ms(t.created_at),
        waiting_in_queue=waiting if t.state == queues.WAITING else 0,
        failure=t.failure,
    )


def room_to_proto(room: rooms.Room, viewer: str = "") -> pb.Room:
    return pb.Room(
        code=room.code,
        owner_player_id=room.owner,
        ruleset=room.ruleset,
        stake=room.stake or 0,
        max_hands=room.max_hands,
        state=_ROOM_STATES[room.state],
        members=[
            pb.RoomMember(
                player_id=m.player_id,
                display_name=m.display_name,
                bot=m.bot,
                accepted=m.accepted,
                ready=m.ready,
                seat=seat_to_proto(i),
                ready_deadline_unix_ms=_ms(m.ready_deadline),
            )
            for i, m in enumerate(room.members)
        ],
        assignment=assignment_to_proto(room.assignment_for(viewer) if viewer else None),
        ruleset_options=room.ruleset_options,
        fee_per_hand=room.fee_per_hand,
        failure=room.failure,
    )


def standing_to_proto(s: tournament_standings.Standing) -> pb.Standing:
    return pb.Standing(
        rank=s.rank, player_id=s.player_id, display_name=s.display_name, bot=s.bot, chips=s.chips
    )


def tournament_table_to_proto(x: TableState) -> pb.TournamentTable:
    return pb.TournamentTable(
        round=x.round,
        index=x.index,
        player_ids=x.seats,
        table_id=x.table_id,
        gateway_address=x.gateway_address,
        finished=x.finished,
        hands_played=x.hands_played,
    )


_ROUND_KINDS = {tournaments.SWISS: pb.ROUND_KIND_SWISS, tournaments.FINAL: pb.ROUND_KIND_FINAL}


def round_to_proto(r: RoundSummary, progress: RoundProgress | None) -> pb.TournamentRound:
    """A round's progress: the counts of the current round from its record (``progress``); a
    round whose tables were all created (``started_ms``) or all settled (``finished_ms``) has
    all of them."""
    started = r.tables if r.started_ms else progress.count("created") if progress else 0
    finished = r.tables if r.finished_ms else progress.count("settled") if progress else 0
    return pb.TournamentRound(
        round=r.round,
        kind=_ROUND_KINDS[r.kind],
        tables=r.tables,
        tables_started=started,
        tables_finished=finished,
        seated_at_unix_ms=r.seated_ms,
        started_at_unix_ms=r.started_ms,
        deadline_unix_ms=r.deadline_ms,
        finished_at_unix_ms=r.finished_ms,
        advanced_at_unix_ms=r.advanced_ms,
    )


def tournament_summary_to_proto(s: listing.TournamentSummary) -> pb.TournamentSummary:
    return pb.TournamentSummary(
        tournament_id=s.tournament_id,
        name=s.name,
        state=_TOURNAMENT_STATES[s.state],
        entrant_count=s.entrant_count,
        created_at_unix_ms=s.created_ms,
        started_at_unix_ms=s.started_ms,
        rounds=s.rounds,
        current_round=s.current_round,
        ruleset=s.ruleset,
        stake=s.stake,
        entry_silver=s.entry_silver,
        entry_match_cards=s.entry_match_cards,
    )


def tournament_to_proto(
    t: tournaments.Tournament,
    lists: tournament_rounds.TournamentLists | None,
    progress: RoundProgress | None = None,
) -> pb.Tournament:
    """``lists``: the entrants' and tables' lists of a small tournament (None: too large to
    travel in one message, ``lists_paged``); ``progress``: the current round's counts."""
    out = pb.Tournament(
        tournament_id=t.tournament_id,
        name=t.name,
        creator_player_id=t.creator,
        ruleset=t.ruleset,
        stake=t.stake,
        rounds=t.rounds,
        hands_per_round=t.hands_per_round,
        state=_TOURNAMENT_STATES[t.state],
        current_round=t.current_round,
        ruleset_options=t.ruleset_options,
        failure=t.failure,
        entry_silver=t.entry_silver,
        entry_match_cards=t.entry_match_cards,
        prize_percent=t.prize_percent,
        prize_pool=tournament_purse.held_in_escrow(t)[ledger.SILVER],
        invited_player_ids=t.invited,
        prizes=[
            pb.Prize(rank=p.rank, player_id=p.player_id, assets=assets_to_proto(p.assets))
            for p in t.prizes
        ],
        house_prizes=[
            pb.AssetAmount(asset=asset_to_proto(h.asset), amount=h.amount) for h in t.house_prizes
        ],
        cancelled=t.cancelled,
        entrant_count=len(t.entrants),
        lists_paged=lists is None,
        cut_to=t.cut_to,
        final_rounds=t.final_rounds,
        round_seconds=t.round_seconds,
        round_progress=[
            round_to_proto(r, progress if progress and progress.round == r.round else None)
            for r in t.round_summaries
        ],
        stall_reason=t.stall_reason,
        retry_at_unix_ms=t.retry_at_ms,
    )
    if lists is not None:
        out.entrants.extend(
            pb.Entrant(player_id=e.player_id, display_name=e.display_name, bot=e.bot)
            for e in t.entrants
        )
        out.tables.extend(tournament_table_to_proto(x) for x in lists.tables)
        out.standings.extend(
            pb.RoundStandings(round=i + 1, standings=[standing_to_proto(s) for s in r])
            for i, r in enumerate(lists.standings)
        )
        out.final_ranking.extend(standing_to_proto(s) for s in lists.final_ranking)
    return out


# 加倍卡, 比赛卡, 房卡 and silver: ledger asset names <-> the proto's Asset
_ASSETS = {
    ledger.SILVER: pb.ASSET_SILVER,
    ledger.ROOM_CARD: pb.ASSET_ROOM_CARD,
    ledger.DOUBLE_CARD: pb.ASSET_DOUBLE_CARD,
    ledger.MATCH_CARD: pb.ASSET_MATCH_CARD,
}
_ASSETS_BACK = {v: k for k, v in _ASSETS.items()}


def asset_to_proto(asset: str) -> int:
    return _ASSETS[asset]


def asset_from_proto(value: int, field: str = "asset") -> str:
    """A set Asset as the ledger's name; InvalidArgument for UNSPECIFIED or unknown."""
    try:
        return _ASSETS_BACK[value]
    except KeyError:
        raise InvalidArgument(f"{field} {value} is no asset (1-4)", field=field) from None


def assets_to_proto(assets) -> list[pb.AssetAmount]:
    return [pb.AssetAmount(asset=asset_to_proto(a), amount=n) for a, n in assets]


def hand_report_from_proto(req: pb.RecordHandRequest) -> ledger.HandReport:
    return ledger.HandReport(
        hand_id=req.hand_id,
        table_id=req.table_id,
        tag=req.tag,
        player_ids=tuple(req.player_ids),
        payments=tuple(req.payments),
        house=req.house,
        escaped_seat=seat_from_proto_optional(req.escaped_seat, "escaped_seat"),
        hand_number=req.hand_number,
        doubled_seats=tuple(
            seat_from_proto(x, f"doubled_seats[{i}]") for i, x in enumerate(req.doubled_seats)
        ),
        fees=tuple(req.fees),
        facts=facts_from_proto(req.facts) if req.HasField("facts") else HandFacts(),
    )


def _pairs_from_proto(pairs, name: str) -> tuple[tuple[int, int], ...]:
    return tuple(
        (
            seat_from_proto(p.seat, f"facts.{name}[{i}].seat"),
            seat_from_proto(p.from_seat, f"facts.{name}[{i}].from_seat"),
        )
        for i, p in enumerate(pairs)
    )


def facts_from_proto(m: pb.HandFacts) -> HandFacts:
    """A hand's facts as sent (checked by :func:`ledger.validate_report`)."""
    return HandFacts(
        m.version,
        _pairs_from_proto(m.discard_wins, "discard_wins"),
        _pairs_from_proto(m.claims, "claims"),
        _pairs_from_proto(m.passed_wins, "passed_wins"),
        _pairs_from_proto(m.chows, "chows"),
    )


def facts_to_proto(facts: HandFacts) -> pb.HandFacts:
    def pairs(xs):
        return [pb.SeatPair(seat=seat_to_proto(a), from_seat=seat_to_proto(b)) for a, b in xs]

    return pb.HandFacts(
        version=facts.version,
        discard_wins=pairs(facts.discard_wins),
        claims=pairs(facts.claims),
        passed_wins=pairs(facts.passed_wins),
        chows=pairs(facts.chows),
    )


def hand_report_to_proto(report: ledger.HandReport) -> pb.RecordHandRequest:
    return pb.RecordHandRequest(
        hand_id=report.hand_id,
        table_id=report.table_id,
        tag=report.tag,
        player_ids=report.player_ids,
        payments=report.payments,
        house=report.house,
        escaped_seat=seat_to_proto(report.escaped_seat),
        hand_number=report.hand_number,
        doubled_seats=[seat_to_proto(x) for x in report.doubled_seats],
        fees=report.fees,
        facts=None if report.facts.empty else facts_to_proto(report.facts),
    )


_SIGNALS = {
    integrity_scoring.WINS: pb.COLLUSION_SIGNAL_WINS_OFF_DISCARD,
    integrity_scoring.CLAIMS: pb.COLLUSION_SIGNAL_CLAIMS,
    integrity_scoring.PASSED: pb.COLLUSION_SIGNAL_PASSED_WINS,
    integrity_scoring.QUEUED: pb.COLLUSION_SIGNAL_QUEUED_TOGETHER,
    integrity_scoring.CHOWS: pb.COLLUSION_SIGNAL_CHOWS,
}


def suspicious_pair_to_proto(s: integrity_scoring.PairScore) -> pb.SuspiciousPair:
    return pb.SuspiciousPair(
        player_id=s.a,
        partner_id=s.b,
        hands_together=s.hands,
        score=s.score,
        suspicious=s.suspicious,
        evidence=[
            pb.PairEvidence(
                signal=_SIGNALS[e.signal], observed=e.observed, expected=e.expected, z=e.z
            )
            for e in s.evidence
        ],
    )
