"""The operator's desk: find a player, suspend and lift, revoke a session, read the audit log —
and :meth:`OperatorDesk.act`, which every operator action (and every ledger grant) runs through,
so that each is appended to the audit log with its result, refused or done.

A part of :class:`~services.matchmaking.service.Matchmaking`, given the repositories it reads
and the calls it makes to other parts (the player's whereabouts, balances, ledger page). Only
the operator's certificate reaches these methods (the server's ``callers``); ``actor`` is that
certificate's workload, as the servicer read it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import structlog

from services.matchmaking.domain.clock import Clock
from services.matchmaking.domain.operations import audit, suspensions
from services.matchmaking.domain.operations.audit import AuditLog
from services.matchmaking.domain.operations.suspensions import Suspension, SuspensionRepository
from services.matchmaking.domain.players import accounts
from services.matchmaking.domain.players.accounts import Player
from services.matchmaking.domain.players.sessions import SessionRecord
from shared.audit import entry as audit_entry
from shared.errors import DomainError, InvalidArgument, NotFound

T = TypeVar("T")
log = structlog.get_logger("mahjong.matchmaking.operations")

MAX_ENTRIES = 100
DEFAULT_ENTRIES = 10
MAX_MATCHES = 20  # players answered for one display name


@dataclass(frozen=True, slots=True)
class Seat:
    table_id: str
    seat: int  # 0-3
    tag: str


@dataclass(frozen=True, slots=True)
class Dossier:
    """What the console shows of one player."""

    player: Player
    sessions: tuple[SessionRecord, ...]
    seats: tuple[Seat, ...]
    queued_ticket_id: str
    room_code: str
    balances: dict[str, int]
    last_entries: tuple[Any, ...]  # ledger entries, newest first
    suspension: Suspension | None


@dataclass(frozen=True, slots=True)
class Suspended:
    suspension: Suspension
    sessions_revoked: int
    table_ids: tuple[str, ...]
    not_told: tuple[str, ...] = ()  # tables whose gateway could not be told now


# Tells the gateway running a table that a player there is suspended (their seat to 托管,
# then a bot); raises when it could not.
TellGateway = Callable[[str, str], None]


class ConsoleRepository(SuspensionRepository, Protocol):
    """What the desk reads and writes of players and their sessions and seats."""

    def find_player(self, player_id: str) -> Player | None: ...

    def players_named(self, display_name: str, limit: int) -> list[Player]: ...

    def sessions(self, player_id: str) -> list[tuple[str, SessionRecord | None]]: ...

    def end_session(self, player_id: str, session_id: str) -> bool: ...

    def seats_of(self, player_id: str) -> list[tuple[str, int, str]]: ...


class OperatorDesk:
    def __init__(
        self,
        repo: ConsoleRepository,
        log_: AuditLog,
        clock: Clock,
        whereabouts: Callable[[str], tuple[str, str]],
        balances: Callable[[str], dict[str, int]],
        last_entries: Callable[[str, int], list[Any]],
        tell_gateway: TellGateway | None = None,
    ) -> None:
        """``tell_gateway``: None where no gateway runs the tables (tests of the domain)."""
        self.repo = repo
        self.audit = log_
        self.clock = clock
        self.whereabouts = whereabouts
        self.balances = balances
        self.last_entries = last_entries
        self.tell_gateway = tell_gateway

    def _now_ms(self) -> int:
        return int(self.clock() * 1000)

    # --- acting and recording --------------------------------------------------------------
    def act(
        self, actor: str, action: str, target: str, reason: str, fn: Callable[[], tuple[T, str]]
    ) -> T:
        """Run ``fn`` (answering its result and a line saying what it did) and append the
        action to the audit log with its outcome: ``OK`` or the refusal's code. A refusal is
        recorded too, then raised."""
        try:
            result, detail = fn()
        except DomainError as exc:
            self._record(actor, action, target, reason, exc.code, exc.message)
            raise
        self._record(actor, action, target, reason, audit.OK, detail)
        return result

    def _record(self, actor, action, target, reason, result, detail) -> None:
        entry = audit_entry(self._now_ms(), actor, action, target, reason, result, detail)
        seq = self.audit.append(entry)
        log.warning(
            "operator_action",
            audit_seq=seq,
            actor=entry.actor,
            action=action,
            target=entry.target,
            result=result,
        )

    def audit_page(self, after: int, limit: int):
        return audit.page(self.audit, after, limit)

    # --- finding players -------------------------------------------------------------------
    def find_players(self, player_id: str, display_name: str, entries: int) -> list[Dossier]:
        """By player id (NOT_FOUND when unknown) or by display name (exact, any case; none
        found is an empty answer): exactly one of the two."""
        if bool(player_id) == bool(display_name.strip()):
            raise InvalidArgument(
                "give exactly one of player_id and display_name", field="player_id"
            )
        if entries < 0 or entries > MAX_ENTRIES:
            raise InvalidArgument(
                f"ledger_entries {entries} is not in 0-{MAX_ENTRIES}", field="ledger_entries"
            )
        if player_id:
            found = [self._player(player_id)]
        else:
            name = accounts.validate_display_name(display_name)
            found = self.repo.players_named(name, MAX_MATCHES)
        return [self._dossier(p, entries or DEFAULT_ENTRIES) for p in found]

    def _player(self, player_id: str) -> Player:
        if len(player_id) > 128:
            raise InvalidArgument("player_id is too long", field="player_id")
        player = self.repo.find_player(player_id)
        if player is None:
            raise NotFound(f"no player {player_id!r}", player_id=player_id)
        return player

    def _dossier(self, player: Player, entries: int) -> Dossier:
        pid = player.player_id
        sessions = tuple(rec for _, rec in self.repo.sessions(pid) if rec is not None)
        has_wallet = not (player.bot or player.guest)
        ticket, room = self.whereabouts(pid) if not player.bot else ("", "")
        return Dossier(
            player,
            sessions,
            tuple(Seat(*s) for s in self.repo.seats_of(pid)),
            ticket,
            room,
            self.balances(pid) if has_wallet else {},
            tuple(self.last_entries(pid, entries)) if has_wallet else (),
            suspensions.current(self.repo, pid, self._now_ms()),
        )

    # --- suspensions and sessions ----------------------------------------------------------
    def suspend(self, actor: str, player_id: str, reason: str, until_ms: int) -> Suspended:
        def run() -> tuple[Suspended, str]:
            why = suspensions.check_reason(reason)
            now = self._now_ms()
            until = suspensions.check_until(until_ms, now)
            player = self._player(player_id)
            if player.bot:
                raise InvalidArgument(f"{player_id} is a bot", field="player_id")
            kept = Suspension(player_id, why, now, until, actor)
            self.repo.keep_suspension(kept)
            ended = self.end_sessions(player_id)
            tables = tuple(t for t, _, _ in self.repo.seats_of(player_id))
            not_told = tuple(t for t in tables if not self._told(t, player_id))
            done = Suspended(kept, ended, tables, not_told)
            until_text = "until lifted" if until == 0 else f"until {until}"
            return done, (
                f"suspended {until_text}; {ended} sessions ended; seated at {list(tables)}"
                + (f"; gateway not told for {list(not_told)}" if not_told else "")
            )

        return self.act(actor, "SuspendPlayer", player_id, reason, run)

    def _told(self, table_id: str, player_id: str) -> bool:
        """Whether the gateway running ``table_id`` took the suspension (the seat to 托管);
        a gateway down is said in the answer, never undoes the suspension."""
        if self.tell_gateway is None:
            return False
        try:
            self.tell_gateway(table_id, player_id)
        except DomainError as exc:
            log.warning("suspension_not_told", table=table_id, player=player_id, error=str(exc))
            return False
        return True

    def end_sessions(self, player_id: str) -> int:
        ids = [sid for sid, _ in self.repo.sessions(player_id)]
        return sum(int(self.repo.end_session(player_id, sid)) for sid in ids)

    def lift(self, actor: str, player_id: str, reason: str) -> bool:
        def run() -> tuple[bool, str]:
            suspensions.check_reason(reason)
            self._player(player_id)
            lifted = self.repo.lift_suspension(player_id)
            return lifted, "lifted" if lifted else "was not suspended"

        return self.act(actor, "LiftSuspension", player_id, reason, run)

    def revoke_session(self, actor: str, player_id: str, session_id: str, reason: str) -> bool:
        def run() -> tuple[bool, str]:
            suspensions.check_reason(reason)
            self._player(player_id)
            if not session_id or len(session_id) > 128 or "/" in session_id:
                raise InvalidArgument(f"session_id {session_id!r} is malformed", field="session_id")
            ended = self.repo.end_session(player_id, session_id)
            return ended, "session ended" if ended else "the session had already ended"

        return self.act(actor, "RevokeSession", f"{player_id}/{session_id}", reason, run)
