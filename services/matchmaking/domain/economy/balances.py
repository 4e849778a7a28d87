"""What one player may see of others' accounts (GetBalances): a bounded list of levels.

Levels (等级) are public — they decide who may sit at which stake — silver is private: a player
sees its own silver and only the level of anyone else. Only players are accounts here: a bot,
a guest (no ledger account) and the house are NOT_FOUND, like an id nobody has, so nobody learns
what the house or a bot seat holds. At most :data:`MAX_IDS` ids a call, each two store reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from services.matchmaking.domain.economy import ledger
from services.matchmaking.domain.players import accounts
from services.matchmaking.domain.players.repository import PlayerRepository
from services.matchmaking.domain.ports import Records
from services.matchmaking.domain.queues import levels
from shared.errors import InvalidArgument, NotFound

MAX_IDS = 100


@dataclass(frozen=True, slots=True)
class BalanceView:
    player_id: str
    level: levels.Level
    own: bool  # the viewer's own account: ``silver`` is set
    silver: int = 0  # the viewer's own only


def visible_balances(
    store: Records, players: PlayerRepository, viewer: str, player_ids: Sequence[str]
) -> list[BalanceView]:
    """The balances ``viewer`` may see of ``player_ids``, in request order (none named: the
    viewer's own)."""
    player_ids = list(player_ids) or [viewer]
    if len(player_ids) > MAX_IDS:
        raise InvalidArgument(
            f"player_ids has {len(player_ids)} ids; at most {MAX_IDS} a call",
            field="player_ids",
        )
    out = []
    for i, pid in enumerate(player_ids):
        if not pid or len(pid) > 64 or not pid.isprintable():
            raise InvalidArgument(
                f"player_ids[{i}] must be 1-64 printable characters", field="player_ids"
            )
        player = accounts.find_player(players, pid)
        if player is None or player.bot or player.guest:
            raise NotFound(f"no player {pid!r}", player_id=pid)
        silver = ledger.balance(store, pid)
        own = pid == viewer
        out.append(BalanceView(pid, levels.level_for(silver), own, silver if own else 0))
    return out
