"""The players' repository (玩家): the records of who a player is and the sessions that prove it,
declared here, implemented over the store by
:class:`services.matchmaking.storage.player_records.PlayerRecords`.

The records it keeps (their encodings are the domain's: compact JSON of the dataclasses):

* ``mm_players/<player id>`` — a :class:`~.accounts.Player`.
* ``mm_identities/<identity key>`` — ``{issuer, subject, player_id}``: an identity's one player,
  created once whoever races (:meth:`PlayerRepository.claim_identity`).
* ``mm_config/session_key`` — the deployment's session-signing key (PEM), created once.
* ``mm_sessions/<player id>/<session id>`` — a :class:`~.sessions.SessionRecord`.

Where a player waits has its own small repository, :class:`PresenceRepository`
(``mm_presence/<player id>``: a :class:`~.presence.Presence`, or empty once released), which the
queues' and the rooms' repositories extend: joining either claims the player's presence.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from services.matchmaking.domain.players.accounts import Player
    from services.matchmaking.domain.players.presence import Presence
    from services.matchmaking.domain.players.sessions import SessionRecord

R = TypeVar("R")


class PlayerRepository(Protocol):
    """Players, identities, the session key and sessions. ``update_*`` are atomic
    read-modify-writes whose ``fn`` may run more than once (keep it pure): it gets the record
    (None when absent) and returns (the new record or None to leave it, result)."""

    # --- players ---------------------------------------------------------------------------
    def find_player(self, player_id: str) -> Player | None: ...

    def add_player(self, player: Player) -> None:
        """Store a new player; the store's ``AlreadyExists`` when its id is taken."""

    def add_player_once(self, player: Player) -> bool:
        """Store ``player`` unless its id is taken (one value stays whoever races); whether
        this call wrote it."""

    def update_player(
        self, player_id: str, fn: Callable[[Player | None], tuple[Player | None, R]]
    ) -> R: ...

    # --- identities ------------------------------------------------------------------------
    def identity_player(self, key: str) -> str | None:
        """The player id the identity ``key`` maps to, None when it maps to none yet."""

    def claim_identity(self, key: str, issuer: str, subject: str, player_id: str) -> str:
        """Map the identity to ``player_id`` unless it maps to a player already: the player id
        it maps to after the call (this one or the race winner's)."""

    # --- the session-signing key -----------------------------------------------------------
    def session_key_pem(self) -> bytes | None: ...

    def keep_session_key_pem(self, pem: bytes) -> bytes:
        """Keep ``pem`` unless a key is kept already: the key kept after the call."""

    # --- sessions --------------------------------------------------------------------------
    def has_session(self, player_id: str, session_id: str) -> bool: ...

    def session(self, player_id: str, session_id: str) -> SessionRecord | None: ...

    def add_session(self, rec: SessionRecord) -> None: ...

    def sessions(self, player_id: str) -> Sequence[tuple[str, SessionRecord | None]]:
        """The player's sessions as (session id, record; None when unreadable)."""

    def update_session(
        self,
        player_id: str,
        session_id: str,
        fn: Callable[[SessionRecord | None], tuple[SessionRecord | None, R]],
    ) -> R: ...

    def end_session(self, player_id: str, session_id: str) -> bool:
        """Delete the session; whether it existed."""


class PresenceRepository(Protocol):
    """The one ticket or room that holds each player. A released presence is written empty,
    never deleted, so its version only rises (an old release never clears a newer claim)."""

    def presence(self, player_id: str) -> Presence | None:
        """What holds the player; None when nothing does (no record, or a released one)."""

    def take_presence(self, mine: Presence, expected: Presence | None) -> Presence | None:
        """Atomically make ``mine`` the player's presence when it is free or still exactly
        ``expected``: None when it did, else the presence that holds the player (unchanged)."""

    def free_presence(self, player_id: str, kind: str, ref: str) -> bool:
        """Atomically release the player when ``kind``/``ref`` still holds it; whether it
        did."""
