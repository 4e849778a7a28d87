"""The players' repositories over the service's store
(:mod:`services.matchmaking.domain.players.repository`): the namespaces, keys and encodings of
players, identities, the session key and sessions (:class:`PlayerRecords`), and of presence
(:class:`PresenceRecords`, which the queues' and rooms' records extend)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import TypeVar

from services.matchmaking.domain import records
from services.matchmaking.domain.players.accounts import Player
from services.matchmaking.domain.players.presence import Presence
from services.matchmaking.domain.players.sessions import SessionRecord
from services.matchmaking.domain.ports import Records
from services.matchmaking.storage.writes import create_once

R = TypeVar("R")

PLAYERS = "mm_players"
IDENTITIES = "mm_identities"
CONFIG = "mm_config"
SESSION_KEY = "session_key"
SESSIONS = "mm_sessions"
PRESENCE = "mm_presence"
_FREE = b""  # a released presence


def _player(raw: bytes | None) -> Player | None:
    data = records.load(raw)
    return Player.from_record(data) if data else None


def _player_json(player: Player) -> bytes:
    return records.dump(asdict(player))


def _session_key(player_id: str, session_id: str) -> str:
    return f"{player_id}/{session_id}"


class PlayerRecords:
    """Players, identities, the session key and sessions in ``store``."""

    def __init__(self, store: Records) -> None:
        self.store = store

    # --- players ---------------------------------------------------------------------------
    def find_player(self, player_id: str) -> Player | None:
        rec = self.store.get(PLAYERS, player_id)
        return _player(rec.value) if rec else None

    def add_player(self, player: Player) -> None:
        self.store.create(PLAYERS, player.player_id, _player_json(player))

    def add_player_once(self, player: Player) -> bool:
        _, created = create_once(self.store, PLAYERS, player.player_id, _player_json(player))
        return created

    def update_player(
        self, player_id: str, fn: Callable[[Player | None], tuple[Player | None, R]]
    ) -> R:
        def apply(raw: bytes | None) -> tuple[bytes | None, R]:
            new, result = fn(_player(raw))
            return (None if new is None else _player_json(new)), result

        return self.store.update(PLAYERS, player_id, apply)

    # --- identities ------------------------------------------------------------------------
    def identity_player(self, key: str) -> str | None:
        rec = self.store.get(IDENTITIES, key)
        return None if rec is None else records.load(rec.value)["player_id"]

    def claim_identity(self, key: str, issuer: str, subject: str, player_id: str) -> str:
        claim = {"issuer": issuer, "subject": subject, "player_id": player_id}
        raw, _ = create_once(self.store, IDENTITIES, key, records.dump(claim))
        return records.load(raw)["player_id"]

    # --- the session-signing key -----------------------------------------------------------
    def session_key_pem(self) -> bytes | None:
        rec = self.store.get(CONFIG, SESSION_KEY)
        return None if rec is None else rec.value

    def keep_session_key_pem(self, pem: bytes) -> bytes:
        stored, _ = create_once(self.store, CONFIG, SESSION_KEY, pem)
        return stored

    # --- sessions --------------------------------------------------------------------------
    def has_session(self, player_id: str, session_id: str) -> bool:
        return self.store.get(SESSIONS, _session_key(player_id, session_id)) is not None

    def session(self, player_id: str, session_id: str) -> SessionRecord | None:
        rec = self.store.get(SESSIONS, _session_key(player_id, session_id))
        return SessionRecord.load(rec.value if rec else None)

    def add_session(self, rec: SessionRecord) -> None:
        self.store.create(SESSIONS, _session_key(rec.player_id, rec.session_id), rec.dump())

    def sessions(self, player_id: str) -> list[tuple[str, SessionRecord | None]]:
        prefix = player_id + "/"
        return [
            (key[len(prefix) :], SessionRecord.load(r.value))
            for key, r in self.store.scan(SESSIONS, prefix)
        ]

    def update_session(
        self,
        player_id: str,
        session_id: str,
        fn: Callable[[SessionRecord | None], tuple[SessionRecord | None, R]],
    ) -> R:
        def apply(raw: bytes | None) -> tuple[bytes | None, R]:
            new, result = fn(SessionRecord.load(raw))
            return (None if new is None else new.dump()), result

        return self.store.update(SESSIONS, _session_key(player_id, session_id), apply)

    def end_session(self, player_id: str, session_id: str) -> bool:
        return self.store.delete(SESSIONS, _session_key(player_id, session_id))


class PresenceRecords:
    """Presence in ``store``: ``mm_presence/<player id>``, a Presence as JSON or empty once
    released (compare-and-set on the exact bytes)."""

    def __init__(self, store: Records) -> None:
        self.store = store

    def presence(self, player_id: str) -> Presence | None:
        rec = self.store.get(PRESENCE, player_id)
        return Presence.from_json(rec.value) if rec and rec.value != _FREE else None

    def take_presence(self, mine: Presence, expected: Presence | None) -> Presence | None:
        new = mine.to_json()
        seen = _FREE if expected is None else expected.to_json()

        def fn(raw: bytes | None) -> tuple[bytes | None, bytes | None]:
            if raw is None or raw in (_FREE, seen):
                return new, None
            return None, raw

        raw = self.store.update(PRESENCE, mine.player_id, fn)
        return None if raw is None else Presence.from_json(raw)

    def free_presence(self, player_id: str, kind: str, ref: str) -> bool:
        def fn(raw: bytes | None) -> tuple[bytes | None, bool]:
            if raw is None or raw == _FREE:
                return None, False
            held = Presence.from_json(raw)
            if (held.kind, held.ref) != (kind, ref):
                return None, False
            return _FREE, True

        return self.store.update(PRESENCE, player_id, fn)
