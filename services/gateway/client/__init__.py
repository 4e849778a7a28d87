"""A Python client of the gateway's gRPC API (``mahjong.gateway.v1.GatewayService``).

* :class:`RemotePlayer` plays one seat: JoinSeat (or a token from CreateTable), Subscribe with
  resume from the last sequence number after a reconnect, and Act on each prompt with a bot
  policy (:mod:`services.gateway.bots`), request ids and sequence numbers handled.
* :func:`create_table` asks a gateway for a table (CreateTable) with player and bot seats.
* :mod:`.convert` turns prompts and views into the bots' domain types and actions into protos.

Example — a table with one remote planning bot against three built-in bots::

    table = create_table(address, seats=["alice", None, None, None], max_hands=1)
    player = RemotePlayer(address, table.table_id, table.seat_tokens[0], seat=0)
    log = player.run()
"""

from services.gateway.client.player import PlayerLog, Policy, Rejection, RemotePlayer
from services.gateway.client.tables import create_table

__all__ = ["PlayerLog", "Policy", "Rejection", "RemotePlayer", "create_table"]
